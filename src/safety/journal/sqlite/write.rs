//! The journal's writes, each run inside one `BEGIN IMMEDIATE` transaction by its caller: on any `Err` the
//! transaction is rolled back and nothing is recorded. What each write decides is the backends' shared
//! [`rules`](crate::safety::journal::rules); this is the SQL.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::Fail;
use super::totals::{self, window};
use crate::gate::{Answered, Begun, Ended, Intent, Prepared};
use crate::safety::journal::JournalConfig;
use crate::safety::journal::rules::{self, Change, Next, PRIOR_COLUMNS, Prior, PriorPayment, int, now};
use crate::safety::journal::{PaymentState, ReservationState, Stage};

/// Reads the purchase's attempts that are not closed and decides; where the purchase may be paid, checks every
/// claim and records the intent with its reservations.
pub(super) fn begin(conn: &Connection, intent: &Intent<'_>, config: JournalConfig) -> Result<Begun, Fail> {
    let lease = config.lease_seconds;
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    match rules::before(&open(conn, intent)?, at, lease, intent.purchase).map_err(Fail::Refused)? {
        Next::Answer(begun) => return Ok(begun),
        Next::Go(lapsed) => {
            for (attempt, change) in &lapsed {
                apply(conn, attempt, change, at)?;
            }
        }
    }
    if let Some(blocked) = rules::nonce_used(intent, nonce_user(conn, intent, config)?) {
        return Ok(blocked);
    }
    if let Some(claim) = over_budget(conn, intent)? {
        return Ok(Begun::OverBudget(claim));
    }
    let exists: Option<i64> = conn
        .query_row("SELECT 1 FROM attempts WHERE attempt = ?1", params![intent.attempt], |r| r.get(0))
        .optional()?;
    if exists.is_some() {
        return Err(Fail::Refused(format!("attempt {} is already in the journal", intent.attempt)));
    }
    let json = rules::intent_json(intent).map_err(Fail::Refused)?;
    if let Some(to_sign) = &intent.to_sign {
        conn.execute(
            "INSERT OR IGNORE INTO atr (h, bytes) VALUES (?1, ?2)",
            params![intent.h.to_hex(), to_sign.bytes],
        )?;
    }
    conn.execute(
        "INSERT INTO attempts (attempt, key, role, pairing, account, h, payee, purchase, chosen, quote, stage, \
         payment_state, execution, response, retry, moving, payment, answer, decline, cause, created_at, updated_at, \
         prepared) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'intent', 'not-paid', 'not-started', NULL, 'safe', \
         0, NULL, NULL, NULL, NULL, ?11, ?11, ?12)",
        params![
            intent.attempt,
            intent.key,
            intent.role.as_str(),
            intent.pairing,
            intent.account,
            intent.h.to_hex(),
            intent.quote.payee,
            json.purchase,
            json.chosen,
            json.quote,
            at,
            json.prepared,
        ],
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO reservations (attempt, budget, scope, asset, window_seconds, amount, at, state) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'reserved')",
    )?;
    for claim in intent.claims {
        // The window is kept for reading back; one past what SQLite stores is kept as the most it does.
        let seconds = i64::try_from(claim.window).unwrap_or(i64::MAX);
        let amount = claim.amount.to_string();
        insert.execute(params![intent.attempt, claim.budget, claim.scope, claim.asset, seconds, amount, at])?;
        let budget = (claim.budget.as_str(), claim.scope.as_str(), claim.asset.as_str());
        totals::shift(conn, budget, at, &amount, (None, ReservationState::Reserved))?;
    }
    Ok(Begun::Fresh)
}

/// What `begin` would answer now, read in one snapshot, writing nothing.
pub(super) fn look(conn: &Connection, intent: &Intent<'_>, config: JournalConfig) -> Result<Begun, Fail> {
    let lease = config.lease_seconds;
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    if let Next::Answer(begun) =
        rules::before(&open(conn, intent)?, at, lease, intent.purchase).map_err(Fail::Refused)?
    {
        return Ok(begun);
    }
    if let Some(blocked) = rules::nonce_used(intent, nonce_user(conn, intent, config)?) {
        return Ok(blocked);
    }
    Ok(over_budget(conn, intent)?.map_or(Begun::Fresh, Begun::OverBudget))
}

/// Another purchase of a payer (`?1`) through a pairing (`?2`) under an H (`?3`) than `?4` whose payment may have
/// moved (read through `attempts_by_nonce`).
pub(super) const NONCE_USER: &str = "SELECT key FROM attempts WHERE account = ?1 AND pairing = ?2 AND h = ?3 \
                                     AND key <> ?4 AND role = 'payment' AND payment_state <> 'not-paid' LIMIT 1";

/// Another purchase of the intent's payer paid through its pairing under its H ([`rules::nonce_used`]).
fn nonce_user(conn: &Connection, intent: &Intent<'_>, config: JournalConfig) -> Result<Option<String>, Fail> {
    if !config.one_nonce_per_payer || !rules::nonce_of_h(intent) {
        return Ok(None);
    }
    Ok(conn
        .prepare_cached(NONCE_USER)?
        .query_row(params![intent.account, intent.pairing, intent.h.to_hex(), intent.key], |r| r.get(0))
        .optional()?)
}

/// The first claim of the intent its budget has no room for.
fn over_budget(conn: &Connection, intent: &Intent<'_>) -> Result<Option<crate::gate::Claim>, Fail> {
    let held = intent
        .claims
        .iter()
        .map(|c| window(conn, &c.budget, &c.scope, &c.asset, c.window, intent.at))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rules::over_budget(intent.claims, &held).cloned())
}

/// The attempts of the purchase (its key and role) that are not closed, newest first: those in flight and those
/// whose payment is not `not-paid`. Every other attempt of it is `not-paid` and weighs nothing.
fn open(conn: &Connection, intent: &Intent<'_>) -> Result<Vec<Prior>, Fail> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {PRIOR_COLUMNS} FROM attempts AS a LEFT JOIN atr AS t ON t.h = a.h \
         WHERE a.key = ?1 AND a.role = ?2 AND (a.stage = 'intent' OR a.payment_state != 'not-paid') \
         ORDER BY a.rowid DESC"
    ))?;
    let rows = statement.query_map(params![intent.key, intent.role.as_str()], |r| {
        Ok(Prior {
            attempt: r.get(0)?,
            stage: r.get(1)?,
            payment_state: r.get(2)?,
            moving: r.get(3)?,
            payment: r.get(4)?,
            created_at: r.get(5)?,
            prepared: r.get(6)?,
            resume: PriorPayment {
                pairing: r.get(7)?,
                account: r.get(8)?,
                h: r.get(9)?,
                chosen: r.get(10)?,
                bytes: r.get(11)?,
                purchase: r.get(12)?,
            },
            declined: r.get(13)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Before the next step of a payment signed in steps is asked.
pub(super) fn stepped(conn: &Connection, attempt: &str, prepared: &Prepared) -> Result<(), Fail> {
    let (stage, _) = current(conn, attempt)?;
    apply(conn, attempt, &rules::stepped(attempt, stage, prepared).map_err(Fail::Refused)?, now())
}

/// Before a signer that moves money itself is called.
pub(super) fn moving(conn: &Connection, attempt: &str) -> Result<(), Fail> {
    let (stage, _) = current(conn, attempt)?;
    apply(conn, attempt, &rules::moving(attempt, stage).map_err(Fail::Refused)?, now())
}

/// After signing: the ATR bytes (once per hash, and only bytes of the attempt's H) and the payment.
pub(super) fn signed(conn: &Connection, attempt: &str, bytes: &[u8], payment: &Value) -> Result<(), Fail> {
    let (stage, _) = current(conn, attempt)?;
    let h: String = conn.query_row("SELECT h FROM attempts WHERE attempt = ?1", params![attempt], |r| r.get(0))?;
    let (got, change) = rules::signed(attempt, stage, &h, bytes, payment).map_err(Fail::Refused)?;
    conn.execute("INSERT OR IGNORE INTO atr (h, bytes) VALUES (?1, ?2)", params![got.to_hex(), bytes])?;
    apply(conn, attempt, &change, now())
}

/// The attempt ended inside the gate.
pub(super) fn ended(conn: &Connection, attempt: &str, ended: Ended<'_>) -> Result<(), Fail> {
    let (stage, state) = current(conn, attempt)?;
    apply(conn, attempt, &rules::ended(attempt, stage, state, ended).map_err(Fail::Refused)?, now())
}

/// What the seller answered to the attempt's payment.
pub(super) fn answered(conn: &Connection, attempt: &str, answered: Answered<'_>) -> Result<(), Fail> {
    let (_, state) = current(conn, attempt)?;
    apply(conn, attempt, &rules::answered(attempt, state, answered).map_err(Fail::Refused)?, now())
}

/// The attempt's stage and payment state; an attempt the journal does not hold is refused.
fn current(conn: &Connection, attempt: &str) -> Result<(Stage, PaymentState), Fail> {
    let row = conn
        .query_row("SELECT stage, payment_state FROM attempts WHERE attempt = ?1", params![attempt], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    rules::current(attempt, row).map_err(Fail::Refused)
}

/// Writes a change to the attempt's row and moves its reservations.
fn apply(conn: &Connection, attempt: &str, change: &Change, at: i64) -> Result<(), Fail> {
    conn.prepare_cached(
        "UPDATE attempts SET stage = coalesce(?2, stage), payment_state = coalesce(?3, payment_state), \
         retry = coalesce(?4, retry), response = coalesce(?5, response), moving = max(moving, ?6), \
         payment = coalesce(?7, payment), answer = coalesce(?8, answer), decline = coalesce(?9, decline), \
         cause = coalesce(?10, cause), updated_at = ?11, execution = coalesce(?12, execution), \
         prepared = coalesce(?13, prepared) WHERE attempt = ?1",
    )?
    .execute(params![
        attempt,
        change.stage.map(Stage::as_str),
        change.payment_state.map(PaymentState::as_str),
        change.retry.map(|s| s.as_str()),
        change.response.map(|s| s.as_str()),
        change.moving,
        change.payment,
        change.answer,
        change.decline,
        change.cause,
        at,
        change.execution.map(|s| s.as_str()),
        change.prepared,
    ])?;
    if let Some((to, from)) = change.reservations {
        // Each reservation that moves, moved in its budget's running totals too.
        let mut moving = conn.prepare_cached(
            "SELECT rowid, budget, scope, asset, at, amount FROM reservations WHERE attempt = ?1 AND state = ?2",
        )?;
        let mut statement = conn.prepare_cached("UPDATE reservations SET state = ?2 WHERE rowid = ?1")?;
        for &state in from {
            let moved = moving
                .query_map(params![attempt, state.as_str()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
                })?
                .collect::<Result<Vec<(i64, String, String, String, i64, String)>, _>>()?;
            for (rowid, budget, scope, asset, at, amount) in moved {
                statement.execute(params![rowid, to.as_str()])?;
                totals::shift(conn, (&budget, &scope, &asset), at, &amount, (Some(state), to))?;
            }
        }
    }
    Ok(())
}
