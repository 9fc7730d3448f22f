//! The journal's writes on PostgreSQL, each one transaction (READ COMMITTED, with locks where two processes could
//! race: transaction advisory locks on the purchase and on each budget, row locks on the attempts): on any `Err` the transaction is rolled back and nothing is recorded. What each write decides is the
//! backends' shared [`rules`](crate::safety::journal::rules); this is the SQL and the locks.

use deadpool_postgres::{Object, Transaction};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::Fail;
use crate::gate::{Answered, Begun, Claim, Ended, Intent, Prepared};
use crate::safety::journal::JournalConfig;
use crate::safety::journal::rules::{self, Change, Held, Next, PRIOR_COLUMNS, Prior, PriorPayment, int, now};
use crate::safety::journal::{PaymentState, ReservationState, Stage};

/// One write the gate asks for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op<'a> {
    Begin(&'a Intent<'a>),
    Moving(&'a str),
    Stepped(&'a str, &'a Prepared),
    Signed(&'a str, &'a [u8], &'a Value),
    Ended(&'a str, Ended<'a>),
    Answered(&'a str, Answered<'a>),
}

/// What a write that is done answers.
#[derive(Debug)]
pub(super) enum Done {
    /// `begin`'s answer.
    Begun(Begun),
    /// Any other write.
    Written,
}

/// A failure of the commit itself: if it was the connection's, the commit may have gone through.
#[derive(Debug)]
pub(super) struct Commit(pub(super) Fail);

/// Runs the write in one transaction. `Err` is a failure before the commit was sent (nothing recorded); `Ok(Err)`
/// a failure of the commit.
pub(super) async fn run(client: &mut Object, op: &Op<'_>, config: JournalConfig) -> Result<Result<Done, Commit>, Fail> {
    let tx = client.transaction().await?;
    let done = match *op {
        Op::Begin(intent) => Done::Begun(begin(&tx, intent, config).await?),
        Op::Moving(attempt) => {
            let (stage, _, _) = current(&tx, attempt).await?;
            apply(&tx, attempt, &rules::moving(attempt, stage).map_err(Fail::Refused)?, now()).await?;
            Done::Written
        }
        Op::Stepped(attempt, prepared) => {
            let (stage, _, _) = current(&tx, attempt).await?;
            apply(&tx, attempt, &rules::stepped(attempt, stage, prepared).map_err(Fail::Refused)?, now()).await?;
            Done::Written
        }
        Op::Signed(attempt, bytes, payment) => {
            let (stage, _, h) = current(&tx, attempt).await?;
            let (got, change) = rules::signed(attempt, stage, &h, bytes, payment).map_err(Fail::Refused)?;
            exec(
                &tx,
                "INSERT INTO terms_atr (h, bytes) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&got.to_hex(), &bytes],
            )
            .await?;
            apply(&tx, attempt, &change, now()).await?;
            Done::Written
        }
        Op::Ended(attempt, ended) => {
            let (stage, state, _) = current(&tx, attempt).await?;
            apply(&tx, attempt, &rules::ended(attempt, stage, state, ended).map_err(Fail::Refused)?, now()).await?;
            Done::Written
        }
        Op::Answered(attempt, answered) => {
            let (_, state, _) = current(&tx, attempt).await?;
            apply(&tx, attempt, &rules::answered(attempt, state, answered).map_err(Fail::Refused)?, now()).await?;
            Done::Written
        }
    };
    Ok(tx.commit().await.map(|()| done).map_err(|e| Commit(e.into())))
}

/// After a commit whose answer was lost: whether the write is in the journal as it was asked (`Some`, done) or not
/// (`None`, to run again). A `begin` is there when its attempt is; the others when the row holds what they wrote.
pub(super) async fn applied(client: &Object, op: &Op<'_>) -> Result<Option<Done>, Fail> {
    let attempt = match *op {
        Op::Begin(intent) => intent.attempt,
        Op::Moving(a) | Op::Stepped(a, _) | Op::Signed(a, ..) | Op::Ended(a, _) | Op::Answered(a, _) => a,
    };
    let row = client
        .query_opt(
            "SELECT stage, moving, payment, answer, decline, cause, prepared FROM terms_attempts WHERE attempt = $1",
            &[&attempt],
        )
        .await?;
    let Some(row) = row else { return Ok(None) };
    let stage: String = row.get(0);
    let text = |i: usize| row.get::<_, Option<String>>(i);
    let there = match *op {
        Op::Begin(_) => return Ok(Some(Done::Begun(Begun::Fresh))),
        Op::Moving(_) => row.get::<_, bool>(1),
        Op::Stepped(_, prepared) => text(6) == json(prepared),
        Op::Signed(_, _, payment) => text(2) == json(payment),
        Op::Ended(_, ended) => {
            let decline = match ended {
                Ended::NotPaid(d) | Ended::Moved(d) => json(d),
                _ => None,
            };
            stage == Stage::Ended.as_str() && (decline.is_none() || text(4) == decline)
        }
        Op::Answered(_, answered) => {
            let (column, value) = match answered {
                Answered::Settled(v)
                | Answered::Completed(v)
                | Answered::Queued(v)
                | Answered::NotPaid(v)
                | Answered::Pending(v) => (3, json(v)),
                Answered::Unknown(why) => (5, Some(why.to_owned())),
            };
            stage == Stage::Answered.as_str() && text(column) == value
        }
    };
    Ok(there.then_some(Done::Written))
}

/// The advisory lock of a purchase or a budget: the first 8 bytes of SHA-256 over its names, each length-prefixed.
/// A transaction's advisory lock is held until it ends and, unlike a row lock, writes nothing: a `begin` that
/// reserves nothing commits without a flush. Two names that meet on one key only take turns where they need not.
fn lock_key(names: &[&str]) -> i64 {
    let mut hash = Sha256::new();
    for name in names {
        hash.update(u64::try_from(name.len()).unwrap_or(u64::MAX).to_be_bytes());
        hash.update(name.as_bytes());
    }
    let digest = hash.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    i64::from_be_bytes(first)
}

/// A statement's parameters.
type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// Runs a statement, prepared once per connection (one round trip each time after the first).
async fn exec(tx: &Transaction<'_>, sql: &str, params: Params<'_>) -> Result<u64, Fail> {
    let statement = tx.prepare_cached(sql).await?;
    Ok(tx.execute(&statement, params).await?)
}

/// Runs a query, prepared once per connection.
async fn rows(tx: &Transaction<'_>, sql: &str, params: Params<'_>) -> Result<Vec<Row>, Fail> {
    let statement = tx.prepare_cached(sql).await?;
    Ok(tx.query(&statement, params).await?)
}

/// What the journal writes of a value as JSON text.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> Option<String> {
    serde_json::to_string(value).ok()
}

/// Locks the purchase, reads its attempts that are not closed and decides; where it may be paid, locks each budget
/// it claims (in one order), checks every claim and records the intent with its reservations.
async fn begin(tx: &Transaction<'_>, intent: &Intent<'_>, config: JournalConfig) -> Result<Begun, Fail> {
    let lease = config.lease_seconds;
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    let role = intent.role.as_str();
    // The purchase, locked until the transaction ends: two begins of one purchase take turns.
    exec(tx, "SELECT pg_advisory_xact_lock($1)", &[&lock_key(&["purchase", intent.key, role])]).await?;
    // `FOR UPDATE`: an attempt of the purchase being signed right now is read as it is once that write committed.
    match rules::before(&priors(tx, intent, true).await?, at, lease, intent.purchase).map_err(Fail::Refused)? {
        Next::Answer(begun) => return Ok(begun),
        Next::Go(lapsed) => {
            for (attempt, change) in &lapsed {
                apply(tx, attempt, change, at).await?;
            }
        }
    }
    if let Some(blocked) = rules::nonce_used(intent, nonce_user(tx, intent, config).await?) {
        return Ok(blocked);
    }
    // Each budget it claims, locked in one order: from here until the commit no other begin reserves from it.
    let mut budgets: Vec<i64> =
        intent.claims.iter().map(|c| lock_key(&["budget", &c.budget, &c.scope, &c.asset])).collect();
    budgets.sort_unstable();
    budgets.dedup();
    for key in budgets {
        exec(tx, "SELECT pg_advisory_xact_lock($1)", &[&key]).await?;
    }
    let mut held = Vec::with_capacity(intent.claims.len());
    for claim in intent.claims {
        held.push(window(tx, &claim.budget, &claim.scope, &claim.asset, claim.window, intent.at).await?);
    }
    if let Some(claim) = rules::over_budget(intent.claims, &held) {
        return Ok(Begun::OverBudget(claim.clone()));
    }
    let json = rules::intent_json(intent).map_err(Fail::Refused)?;
    if let Some(to_sign) = &intent.to_sign {
        exec(
            tx,
            "INSERT INTO terms_atr (h, bytes) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            &[&intent.h.to_hex(), &to_sign.bytes],
        )
        .await?;
    }
    // The attempt and its reservations in one statement (one round trip under the budgets' locks), the
    // reservations in the claims' order. A window past what a BIGINT holds is kept as the most it does.
    let column = |f: fn(&Claim) -> String| intent.claims.iter().map(f).collect::<Vec<_>>();
    let (budgets, scopes, assets) =
        (column(|c| c.budget.clone()), column(|c| c.scope.clone()), column(|c| c.asset.clone()));
    let amounts = column(|c| c.amount.to_string());
    let windows: Vec<i64> = intent.claims.iter().map(|c| i64::try_from(c.window).unwrap_or(i64::MAX)).collect();
    let inserted = exec(
        tx,
        "WITH attempt AS (INSERT INTO terms_attempts (attempt, key, role, pairing, account, h, payee, purchase, \
         chosen, quote, stage, payment_state, execution, response, retry, moving, payment, answer, decline, cause, \
         created_at, updated_at, prepared) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'intent', 'not-paid', \
         'not-started', NULL, 'safe', false, NULL, NULL, NULL, NULL, $11, $11, $17) RETURNING attempt) \
         INSERT INTO terms_reservations (attempt, budget, scope, asset, window_seconds, amount, at, state) \
         SELECT attempt.attempt, c.budget, c.scope, c.asset, c.window_seconds, c.amount, $11, 'reserved' \
         FROM attempt, unnest($12::TEXT[], $13::TEXT[], $14::TEXT[], $15::BIGINT[], $16::TEXT[]) WITH ORDINALITY \
         AS c (budget, scope, asset, window_seconds, amount, n) ORDER BY c.n",
        &[
            &intent.attempt,
            &intent.key,
            &role,
            &intent.pairing,
            &intent.account,
            &intent.h.to_hex(),
            &intent.quote.payee,
            &json.purchase,
            &json.chosen,
            &json.quote,
            &at,
            &budgets,
            &scopes,
            &assets,
            &windows,
            &amounts,
            &json.prepared,
        ],
    )
    .await;
    match inserted {
        Err(Fail::Sql(e)) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
            return Err(Fail::Refused(format!("attempt {} is already in the journal", intent.attempt)));
        }
        other => other?,
    };
    Ok(Begun::Fresh)
}

/// The attempts of the intent's purchase (its key and role) that are not closed, newest first; `lock`: their rows
/// locked until the transaction ends (a write), or not (a read-only `look`).
pub(super) async fn priors(tx: &Transaction<'_>, intent: &Intent<'_>, lock: bool) -> Result<Vec<Prior>, Fail> {
    let sql = format!(
        "SELECT {PRIOR_COLUMNS} FROM terms_attempts AS a LEFT JOIN terms_atr AS t ON t.h = a.h \
         WHERE a.key = $1 AND a.role = $2 AND (a.stage = 'intent' OR a.payment_state != 'not-paid') \
         ORDER BY a.seq DESC{}",
        if lock { " FOR UPDATE OF a" } else { "" }
    );
    let found = rows(tx, &sql, &[&intent.key, &intent.role.as_str()]).await?;
    Ok(found
        .iter()
        .map(|r| Prior {
            attempt: r.get(0),
            stage: r.get(1),
            payment_state: r.get(2),
            moving: r.get(3),
            payment: r.get(4),
            created_at: r.get(5),
            prepared: r.get(6),
            resume: PriorPayment {
                pairing: r.get(7),
                account: r.get(8),
                h: r.get(9),
                chosen: r.get(10),
                bytes: r.get(11),
                purchase: r.get(12),
            },
            declined: r.get(13),
        })
        .collect())
}

/// What `begin` would answer now, in a read-only transaction: nothing locked, nothing written.
pub(super) async fn look(tx: &Transaction<'_>, intent: &Intent<'_>, config: JournalConfig) -> Result<Begun, Fail> {
    let lease = config.lease_seconds;
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    if let Next::Answer(begun) =
        rules::before(&priors(tx, intent, false).await?, at, lease, intent.purchase).map_err(Fail::Refused)?
    {
        return Ok(begun);
    }
    if let Some(blocked) = rules::nonce_used(intent, nonce_user(tx, intent, config).await?) {
        return Ok(blocked);
    }
    let mut held = Vec::with_capacity(intent.claims.len());
    for claim in intent.claims {
        held.push(window(tx, &claim.budget, &claim.scope, &claim.asset, claim.window, intent.at).await?);
    }
    Ok(rules::over_budget(intent.claims, &held).cloned().map_or(Begun::Fresh, Begun::OverBudget))
}

/// Another purchase of the intent's payer paid through its pairing under its H ([`rules::nonce_used`]).
async fn nonce_user(tx: &Transaction<'_>, intent: &Intent<'_>, config: JournalConfig) -> Result<Option<String>, Fail> {
    if !config.one_nonce_per_payer || !rules::nonce_of_h(intent) {
        return Ok(None);
    }
    // The payer's H, locked until the transaction ends: two purchases under one H take turns here.
    let h = intent.h.to_hex();
    exec(tx, "SELECT pg_advisory_xact_lock($1)", &[&lock_key(&["nonce", intent.account, &h])]).await?;
    let row = tx
        .query_opt(
            "SELECT key FROM terms_attempts WHERE account = $1 AND pairing = $2 AND h = $3 AND key <> $4 \
             AND role = 'payment' AND payment_state <> 'not-paid' LIMIT 1",
            &[&intent.account, &intent.pairing, &h, &intent.key],
        )
        .await?;
    Ok(row.map(|r| r.get(0)))
}

/// The window `(now - window, now]` of a budget (and every reservation dated after `now`): what it holds.
/// The server sums each state's amounts exactly (`numeric`), and the sums are read as the rules read amounts.
pub(super) async fn window(
    tx: &Transaction<'_>,
    budget: &str,
    scope: &str,
    asset: &str,
    window: u64,
    now: u64,
) -> Result<Held, Fail> {
    let rows = rows(
        tx,
        "SELECT (sum(amount::numeric) FILTER (WHERE state = 'committed'))::text, \
         (sum(amount::numeric) FILTER (WHERE state = 'reserved'))::text FROM terms_reservations \
         WHERE budget = $1 AND scope = $2 AND asset = $3 AND at > $4",
        &[&budget, &scope, &asset, &rules::window_start(window, now)],
    )
    .await?;
    let mut held = Held::default();
    for row in &rows {
        // A state with nothing in the window sums to NULL.
        for (column, state) in [(0, ReservationState::Committed), (1, ReservationState::Reserved)] {
            if let Some(sum) = row.get::<_, Option<&str>>(column) {
                held.add(budget, sum, state.as_str()).map_err(Fail::Refused)?;
            }
        }
    }
    Ok(held)
}

/// The attempt's stage, payment state and H, its row locked until the transaction ends; an attempt the journal
/// does not hold is refused.
async fn current(tx: &Transaction<'_>, attempt: &str) -> Result<(Stage, PaymentState, String), Fail> {
    let row = rows(tx, "SELECT stage, payment_state, h FROM terms_attempts WHERE attempt = $1 FOR UPDATE", &[&attempt])
        .await?
        .into_iter()
        .next();
    let h = row.as_ref().map(|r| r.get::<_, String>(2)).unwrap_or_default();
    let (stage, state) = rules::current(attempt, row.map(|r| (r.get(0), r.get(1)))).map_err(Fail::Refused)?;
    Ok((stage, state, h))
}

/// Writes a change to the attempt's row and moves its reservations.
async fn apply(tx: &Transaction<'_>, attempt: &str, change: &Change, at: i64) -> Result<(), Fail> {
    exec(
        tx,
        "UPDATE terms_attempts SET stage = coalesce($2, stage), payment_state = coalesce($3, payment_state), \
             retry = coalesce($4, retry), response = coalesce($5, response), moving = moving OR $6, \
             payment = coalesce($7, payment), answer = coalesce($8, answer), decline = coalesce($9, decline), \
             cause = coalesce($10, cause), updated_at = $11, execution = coalesce($12, execution), \
             prepared = coalesce($13, prepared) WHERE attempt = $1",
        &[
            &attempt,
            &change.stage.map(Stage::as_str),
            &change.payment_state.map(PaymentState::as_str),
            &change.retry.map(|s| s.as_str()),
            &change.response.map(|s| s.as_str()),
            &change.moving,
            &change.payment,
            &change.answer,
            &change.decline,
            &change.cause,
            &at,
            &change.execution.map(|s| s.as_str()),
            &change.prepared,
        ],
    )
    .await?;
    if let Some((to, from)) = change.reservations {
        let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        exec(
            tx,
            "UPDATE terms_reservations SET state = $2 WHERE attempt = $1 AND state = ANY($3)",
            &[&attempt, &to.as_str(), &from],
        )
        .await?;
    }
    Ok(())
}
