//! The journal's writes, each run inside one `BEGIN IMMEDIATE` transaction by its caller: on any `Err` the
//! transaction is rolled back and nothing is recorded.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::read::window;
use super::{Fail, int, now};
use crate::gate::{Answered, Begun, Claim, Ended, Intent};
use crate::hash::{AtrHash, atr_hash};
use crate::refusal::Reason;
use crate::safety::journal::{PaymentState, Stage};

/// What `begin` reads of an earlier attempt of the purchase that is not closed.
#[derive(Debug)]
struct Prior {
    attempt: String,
    stage: Stage,
    payment_state: PaymentState,
    moving: bool,
    payment: Option<String>,
    created_at: i64,
}

/// Reads the purchase's attempts that are not closed and decides; where the purchase may be paid, checks every
/// claim and records the intent with its reservations.
pub(super) fn begin(conn: &Connection, intent: &Intent<'_>, lease: u64) -> Result<Begun, Fail> {
    let at = int(intent.at, "the intent's time")?;
    if let Some(begun) = before(conn, &open(conn, intent)?, at, lease)? {
        return Ok(begun);
    }
    // Every claim against its window, counting what this intent's earlier claims add to the same budget.
    for (i, claim) in intent.claims.iter().enumerate() {
        let held = window(conn, &claim.budget, &claim.scope, &claim.asset, claim.window, intent.at)?;
        let earlier = intent.claims.iter().take(i).filter(|c| same_budget(c, claim));
        let total = earlier.fold(held.total(), |sum, c| sum.and_then(|s| s.checked_add(c.amount)));
        if total.and_then(|t| t.checked_add(claim.amount)).is_none_or(|t| t > claim.limit) {
            return Ok(Begun::OverBudget(claim.clone()));
        }
    }
    let exists: Option<i64> = conn
        .query_row("SELECT 1 FROM attempts WHERE attempt = ?1", params![intent.attempt], |r| r.get(0))
        .optional()?;
    if exists.is_some() {
        return Err(Fail::Refused(format!("attempt {} is already in the journal", intent.attempt)));
    }
    let text = |value: Result<String, serde_json::Error>| value.map_err(|e| Fail::Refused(e.to_string()));
    let purchase = intent.purchase.map(|p| text(serde_json::to_string(p))).transpose()?;
    conn.execute(
        "INSERT INTO attempts (attempt, key, role, pairing, account, h, payee, purchase, chosen, quote, stage, \
         payment_state, execution, response, retry, moving, payment, answer, decline, cause, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'intent', 'not-paid', 'not-started', NULL, 'safe', 0, \
         NULL, NULL, NULL, NULL, ?11, ?11)",
        params![
            intent.attempt,
            intent.key,
            intent.role.as_str(),
            intent.pairing,
            intent.account,
            intent.h.to_hex(),
            intent.quote.payee,
            purchase,
            text(serde_json::to_string(intent.chosen))?,
            text(serde_json::to_string(intent.quote))?,
            at,
        ],
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO reservations (attempt, budget, scope, asset, window_seconds, amount, at, state) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'reserved')",
    )?;
    for claim in intent.claims {
        // The window is kept for reading back; one past what SQLite stores is kept as the most it does.
        let seconds = i64::try_from(claim.window).unwrap_or(i64::MAX);
        insert.execute(params![
            intent.attempt,
            claim.budget,
            claim.scope,
            claim.asset,
            seconds,
            claim.amount.to_string(),
            at
        ])?;
    }
    Ok(Begun::Fresh)
}

fn same_budget(a: &Claim, b: &Claim) -> bool {
    a.budget == b.budget && a.scope == b.scope && a.asset == b.asset
}

/// The attempts of the purchase (its key and role) that are not closed, newest first: those in flight and those
/// whose payment is not `not-paid`. Every other attempt of it is `not-paid` and weighs nothing.
fn open(conn: &Connection, intent: &Intent<'_>) -> Result<Vec<Prior>, Fail> {
    let mut statement = conn.prepare_cached(
        "SELECT attempt, stage, payment_state, moving, payment, created_at FROM attempts \
         WHERE key = ?1 AND role = ?2 AND (stage = 'intent' OR payment_state != 'not-paid') ORDER BY rowid DESC",
    )?;
    let rows = statement
        .query_map(params![intent.key, intent.role.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter()
        .map(|(attempt, stage, payment_state, moving, payment, created_at)| {
            let bad = || Fail::Refused(format!("the journal's record of attempt {attempt} is unreadable"));
            let stage = Stage::parse(&stage).ok_or_else(bad)?;
            let payment_state = PaymentState::parse(&payment_state).ok_or_else(bad)?;
            Ok(Prior { attempt, stage, payment_state, moving, payment, created_at })
        })
        .collect()
}

/// What the open attempts of the purchase say before a new one may begin: `Some` to answer with it, `None` to go
/// on (nothing is outstanding; attempts whose lease lapsed are marked so on the way).
fn before(conn: &Connection, open: &[Prior], at: i64, lease: u64) -> Result<Option<Begun>, Fail> {
    // A signed payment that may have moved, or settled: only it may be sent again.
    let signed = open.iter().filter(|p| p.payment_state != PaymentState::NotPaid);
    if let Some((attempt, payment)) = signed.into_iter().find_map(|p| Some((&p.attempt, p.payment.as_deref()?))) {
        let payment: Value = serde_json::from_str(payment)
            .map_err(|_| Fail::Refused(format!("the signed payment of attempt {attempt} is unreadable")))?;
        return Ok(Some(Begun::Resend { attempt: attempt.clone(), payment: Box::new(payment) }));
    }
    // Money may have moved (or did), and nothing signed was recorded to re-send.
    for prior in open {
        let attempt = &prior.attempt;
        if prior.stage == Stage::Intent && prior.moving {
            return Ok(Some(Begun::Blocked(
                Reason::StateUnknown,
                format!(
                    "attempt {attempt} for this purchase was handing its payment to a signer that moves money itself \
                     and never came back: the money may have moved and nothing signed was recorded to re-send; a \
                     person must look"
                ),
            )));
        }
        if prior.payment_state != PaymentState::NotPaid {
            return Ok(Some(Begun::Blocked(
                Reason::StateUnknown,
                format!(
                    "attempt {attempt} for this purchase is {}: money moved or may have, and nothing signed was \
                     recorded to re-send: ask the seller first",
                    prior.payment_state
                ),
            )));
        }
    }
    // In flight: blocks until its lease lapses, then is not-paid.
    let lease = i64::try_from(lease).unwrap_or(i64::MAX);
    for prior in open.iter().filter(|p| p.stage == Stage::Intent) {
        let until = prior.created_at.saturating_add(lease);
        if until > at {
            let attempt = &prior.attempt;
            return Ok(Some(Begun::Blocked(
                Reason::InFlight,
                format!("attempt {attempt} for this purchase is being signed (its lease runs until {until})"),
            )));
        }
    }
    for prior in open.iter().filter(|p| p.stage == Stage::Intent) {
        lapse(conn, &prior.attempt, at, prior.created_at.saturating_add(lease))?;
    }
    Ok(None)
}

/// An in-flight attempt whose lease lapsed with nothing signed: `not-paid`, its reservations released.
fn lapse(conn: &Connection, attempt: &str, at: i64, until: i64) -> Result<(), Fail> {
    let cause = format!("its lease lapsed at {until} with nothing signed; a later attempt took the purchase");
    conn.execute(
        "UPDATE attempts SET stage = 'lapsed', payment_state = 'not-paid', retry = 'safe', cause = ?2, \
         updated_at = ?3 WHERE attempt = ?1",
        params![attempt, cause, at],
    )?;
    set_reservations(conn, attempt, "released", &["reserved"])
}

/// Before a signer that moves money itself is called.
pub(super) fn moving(conn: &Connection, attempt: &str) -> Result<(), Fail> {
    let (stage, _) = current(conn, attempt)?;
    in_flight(attempt, stage, "marked as moving money")?;
    conn.execute("UPDATE attempts SET moving = 1, updated_at = ?2 WHERE attempt = ?1", params![attempt, now()])?;
    Ok(())
}

/// After signing: the ATR bytes (once per hash, and only bytes of the attempt's H) and the payment.
pub(super) fn signed(conn: &Connection, attempt: &str, bytes: &[u8], payment: &Value) -> Result<(), Fail> {
    let (stage, _) = current(conn, attempt)?;
    in_flight(attempt, stage, "given a signed payment")?;
    let h: String = conn.query_row("SELECT h FROM attempts WHERE attempt = ?1", params![attempt], |r| r.get(0))?;
    let got = atr_hash(bytes);
    if AtrHash::parse(&h) != Some(got) {
        return Err(Fail::Refused(format!(
            "the ATR bytes given for attempt {attempt} hash to {got}, not to its H {h}: the payment is not recorded"
        )));
    }
    let payment = serde_json::to_string(payment).map_err(|e| Fail::Refused(e.to_string()))?;
    conn.execute("INSERT OR IGNORE INTO atr (h, bytes) VALUES (?1, ?2)", params![got.to_hex(), bytes])?;
    conn.execute(
        "UPDATE attempts SET stage = 'signed', payment = ?2, payment_state = 'unknown', retry = 'forbidden', \
         updated_at = ?3 WHERE attempt = ?1",
        params![attempt, payment, now()],
    )?;
    Ok(())
}

/// The attempt ended inside the gate.
pub(super) fn ended(conn: &Connection, attempt: &str, ended: Ended<'_>) -> Result<(), Fail> {
    let (stage, state) = current(conn, attempt)?;
    // Handed back for approval: nothing was signed, and there is no decline to keep.
    let (decline, moved) = match ended {
        Ended::NotPaid(d) => (Some(d), false),
        Ended::Moved(d) => (Some(d), true),
        Ended::HandedBack => (None, false),
    };
    let decline = decline.map(serde_json::to_string).transpose().map_err(|e| Fail::Refused(e.to_string()))?;
    if state == PaymentState::Settled || stage == Stage::Answered {
        return Err(Fail::Refused(format!("attempt {attempt} was answered already: its end is not recorded")));
    }
    if moved {
        // Money may have moved: the payment is unknown, and its reservations count again if they were released.
        conn.execute(
            "UPDATE attempts SET stage = 'ended', payment_state = 'unknown', retry = 'query-first', decline = ?2, \
             updated_at = ?3 WHERE attempt = ?1",
            params![attempt, decline, now()],
        )?;
        return set_reservations(conn, attempt, "reserved", &["released"]);
    }
    if stage == Stage::Signed {
        // Its signed payment was recorded and may have been handed out again since (`Begun::Resend`): it stays
        // unknown; only an answer from the seller says it was not paid.
        let cause = "declined without moving money after its payment was recorded: the payment may have been re-sent \
                     since, so it stays unknown";
        conn.execute(
            "UPDATE attempts SET stage = 'ended', decline = ?2, cause = ?3, updated_at = ?4 WHERE attempt = ?1",
            params![attempt, decline, cause, now()],
        )?;
        return Ok(());
    }
    if stage == Stage::Ended {
        return Err(Fail::Refused(format!("attempt {attempt} ended already")));
    }
    conn.execute(
        "UPDATE attempts SET stage = 'ended', payment_state = 'not-paid', retry = 'safe', decline = ?2, \
         updated_at = ?3 WHERE attempt = ?1",
        params![attempt, decline, now()],
    )?;
    set_reservations(conn, attempt, "released", &["reserved"])
}

/// What the seller answered to the attempt's payment.
pub(super) fn answered(conn: &Connection, attempt: &str, answered: Answered<'_>) -> Result<(), Fail> {
    let (_, state) = current(conn, attempt)?;
    if state == PaymentState::NotPaid {
        return Err(Fail::Refused(format!(
            "attempt {attempt} sent no payment (it is not-paid): its answer is not recorded"
        )));
    }
    let json = |v: &Value| serde_json::to_string(v).map_err(|e| Fail::Refused(e.to_string()));
    match answered {
        Answered::Settled(v) => {
            conn.execute(
                "UPDATE attempts SET stage = 'answered', payment_state = 'settled', response = 'received', \
                 retry = 'forbidden', answer = ?2, updated_at = ?3 WHERE attempt = ?1",
                params![attempt, json(v)?, now()],
            )?;
            set_reservations(conn, attempt, "committed", &["reserved", "released"])
        }
        Answered::Queued(v) => {
            conn.execute(
                "UPDATE attempts SET stage = 'answered', payment_state = 'settled', execution = 'queued', \
                 response = 'received', retry = 'query-first', answer = ?2, updated_at = ?3 WHERE attempt = ?1",
                params![attempt, json(v)?, now()],
            )?;
            set_reservations(conn, attempt, "committed", &["reserved", "released"])
        }
        Answered::NotPaid(_) if state == PaymentState::Settled => Err(Fail::Refused(format!(
            "attempt {attempt} settled: a later answer of no charge is not taken; a person must look"
        ))),
        Answered::NotPaid(v) => {
            conn.execute(
                "UPDATE attempts SET stage = 'answered', payment_state = 'not-paid', response = 'received', \
                 retry = 'safe', answer = ?2, updated_at = ?3 WHERE attempt = ?1",
                params![attempt, json(v)?, now()],
            )?;
            set_reservations(conn, attempt, "released", &["reserved"])
        }
        Answered::Unknown(why) => {
            // A settled payment stays settled; an unknown one stays unknown, and may only be re-sent.
            conn.execute(
                "UPDATE attempts SET stage = 'answered', response = 'lost', retry = 'forbidden', cause = ?2, \
                 updated_at = ?3 WHERE attempt = ?1",
                params![attempt, why, now()],
            )?;
            Ok(())
        }
    }
}

/// The attempt's stage and payment state; an attempt the journal does not hold is refused.
fn current(conn: &Connection, attempt: &str) -> Result<(Stage, PaymentState), Fail> {
    let row: Option<(String, String)> = conn
        .query_row("SELECT stage, payment_state FROM attempts WHERE attempt = ?1", params![attempt], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((stage, state)) = row else {
        return Err(Fail::Refused(format!("attempt {attempt} is not in the journal")));
    };
    let bad = || Fail::Refused(format!("the journal's record of attempt {attempt} is unreadable"));
    Ok((Stage::parse(&stage).ok_or_else(bad)?, PaymentState::parse(&state).ok_or_else(bad)?))
}

/// Refuses an attempt that is no longer in flight: a late process never records (or returns) a payment for it.
fn in_flight(attempt: &str, stage: Stage, what: &str) -> Result<(), Fail> {
    match stage {
        Stage::Intent => Ok(()),
        Stage::Lapsed => Err(Fail::Refused(format!(
            "attempt {attempt} cannot be {what}: its lease lapsed and another attempt may pay for the purchase; what \
             it signed must not be sent"
        ))),
        other => Err(Fail::Refused(format!("attempt {attempt} cannot be {what}: it is {other}, no longer in flight"))),
    }
}

/// Moves the attempt's reservations in any of the states `from` to `to`.
fn set_reservations(conn: &Connection, attempt: &str, to: &str, from: &[&str]) -> Result<(), Fail> {
    let mut statement = conn.prepare_cached("UPDATE reservations SET state = ?2 WHERE attempt = ?1 AND state = ?3")?;
    for state in from {
        statement.execute(params![attempt, to, state])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ruint::aliases::U256;

    use super::*;

    #[test]
    fn claims_of_one_budget_are_the_same_budget_only_with_the_same_scope_and_asset() {
        let c =
            |budget: &str, scope: &str, asset: &str| Claim::new(budget, scope, asset, 60, U256::from(9), U256::from(1));
        assert!(same_budget(&c("day", "", "a"), &c("day", "", "a")));
        assert!(!same_budget(&c("day", "", "a"), &c("day", "", "b")));
        assert!(!same_budget(&c("day", "", "a"), &c("day", "p", "a")));
        assert!(!same_budget(&c("day", "", "a"), &c("hour", "", "a")));
    }
}
