//! The journal's writes on PostgreSQL, each one transaction (READ COMMITTED, with locks where two processes could
//! race: transaction advisory locks on the purchase and on each budget, row locks on the attempts): on any `Err` the transaction is rolled back and nothing is recorded. What each write decides is the
//! backends' shared [`rules`](crate::safety::journal::rules); this is the SQL and the locks.

use deadpool_postgres::{GenericClient, Object, Transaction};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

use super::Fail;
use crate::gate::{Answered, Begun, Claim, Ended, Intent, Prepared};
use crate::safety::journal::JournalConfig;
use crate::safety::journal::buckets;
use crate::safety::journal::rules::{self, Change, Held, Next, PRIOR_COLUMNS, Prior, PriorPayment, int, now};
use crate::safety::journal::{BudgetFault, PaymentState, ReservationState, Stage};

/// One write the gate asks for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op<'a> {
    Begin(&'a Intent<'a>),
    Moving(&'a str),
    Stepped(&'a str, &'a Prepared),
    Signed(&'a str, &'a [u8], &'a Value),
    Ended(&'a str, Ended<'a>),
    Answered(&'a str, Answered<'a>),
    /// `terms journal check`, repairing or not.
    Check(bool),
}

/// What a write that is done answers.
#[derive(Debug)]
pub(super) enum Done {
    /// `begin`'s answer.
    Begun(Begun),
    /// Any other write.
    Written,
    /// The budgets a check found disagreeing with their rows.
    Checked(Vec<BudgetFault>),
}

/// A failure of the commit itself: if it was the connection's, the commit may have gone through.
#[derive(Debug)]
pub(super) struct Commit(pub(super) Fail);

/// Runs the write in one transaction. `Err` is a failure before the commit was sent (nothing recorded); `Ok(Err)`
/// a failure of the commit.
pub(super) async fn run(client: &mut Object, op: &Op<'_>, config: JournalConfig) -> Result<Result<Done, Commit>, Fail> {
    if let Op::Begin(intent) = *op {
        // A new purchase (no open attempt) is one statement, its own transaction: one round trip and one commit.
        // A connection lost while it ran leaves its commit unknown.
        match reserve(&*client, intent, config, false).await {
            Ok(Some(begun)) => return Ok(Ok(Done::Begun(begun))),
            Ok(None) => {}
            Err(fail) if fail.is_connection() => return Ok(Err(Commit(fail))),
            Err(fail) => return Err(fail),
        }
    }
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
        Op::Check(repair) => Done::Checked(check(&tx, repair).await?),
    };
    Ok(tx.commit().await.map(|()| done).map_err(|e| Commit(e.into())))
}

/// After a commit whose answer was lost: whether the write is in the journal as it was asked (`Some`, done) or not
/// (`None`, to run again). A `begin` is there when its attempt is; the others when the row holds what they wrote.
pub(super) async fn applied(client: &Object, op: &Op<'_>) -> Result<Option<Done>, Fail> {
    let attempt = match *op {
        Op::Begin(intent) => intent.attempt,
        Op::Moving(a) | Op::Stepped(a, _) | Op::Signed(a, ..) | Op::Ended(a, _) | Op::Answered(a, _) => a,
        // A check changes only its marks: running it again is the same.
        Op::Check(_) => return Ok(None),
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
        Op::Check(_) => return Ok(None),
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

/// The advisory locks of the budgets an intent claims, in the one order every begin takes them in.
fn budget_locks(intent: &Intent<'_>) -> Vec<i64> {
    let mut locks: Vec<i64> =
        intent.claims.iter().map(|c| lock_key(&["budget", &c.budget, &c.scope, &c.asset])).collect();
    locks.sort_unstable();
    locks.dedup();
    locks
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

/// A begin whose purchase has open attempts, in the transaction `run` opened: locks the purchase, reads its open
/// attempts (row-locked) and decides; where it may be paid, writes the lapses and then reserves as the fast path
/// does ([`reserve`], told the attempts were read).
async fn begin(tx: &Transaction<'_>, intent: &Intent<'_>, config: JournalConfig) -> Result<Begun, Fail> {
    let lease = config.lease_seconds;
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    // The purchase, locked until the transaction ends: two begins of one purchase take turns.
    exec(tx, "SELECT pg_advisory_xact_lock($1)", &[&lock_key(&["purchase", intent.key, intent.role.as_str()])]).await?;
    // `FOR UPDATE`: an attempt of the purchase being signed right now is read as it is once that write committed.
    match rules::before(&priors(tx, intent, true).await?, at, lease, intent.purchase).map_err(Fail::Refused)? {
        Next::Answer(begun) => return Ok(begun),
        Next::Go(lapsed) => {
            // The budgets it claims, locked before a lapse moves their running totals: a lapse moving them first
            // would hold their rows while it waits for a budget's lock, and a begin holding that lock waits for those
            // rows, a circle the server breaks only after its deadlock_timeout. `terms_begin` takes the same locks
            // again (a session's advisory locks are reentrant).
            if !lapsed.is_empty() {
                let locks = budget_locks(intent);
                exec(tx, "SELECT pg_advisory_xact_lock(k) FROM unnest($1::BIGINT[]) AS k", &[&locks]).await?;
            }
            for (attempt, change) in &lapsed {
                apply(tx, attempt, change, at).await?;
            }
        }
    }
    reserve(tx, intent, config, true)
        .await?
        .ok_or_else(|| Fail::Refused("the journal's begin found open attempts it had been told were read".into()))
}

/// `terms_begin` in one statement (one round trip once prepared): the purchase locked; `None` (nothing written)
/// where it has open attempts and `open_checked` is false; else the payer's nonce checked, each budget locked (in one
/// order, so two begins never wait on each other in a circle) and its window read from its running totals, and,
/// where every claim fits, the intent, its reservations and their totals written. Outside a transaction the
/// statement is its own, committed when it answers.
pub(super) async fn reserve<C: GenericClient>(
    client: &C,
    intent: &Intent<'_>,
    config: JournalConfig,
    open_checked: bool,
) -> Result<Option<Begun>, Fail> {
    let at = int(intent.at, "the intent's time").map_err(Fail::Refused)?;
    let role = intent.role.as_str();
    let json = rules::intent_json(intent).map_err(Fail::Refused)?;
    let column = |f: fn(&Claim) -> String| intent.claims.iter().map(f).collect::<Vec<_>>();
    let (budgets, scopes, assets) =
        (column(|c| c.budget.clone()), column(|c| c.scope.clone()), column(|c| c.asset.clone()));
    let (amounts, limits) = (column(|c| c.amount.to_string()), column(|c| c.limit.to_string()));
    // A window past what a BIGINT holds is kept as the most it does.
    let windows: Vec<i64> = intent.claims.iter().map(|c| i64::try_from(c.window).unwrap_or(i64::MAX)).collect();
    let starts: Vec<i64> = intent.claims.iter().map(|c| rules::window_start(c.window, intent.at)).collect();
    let locks = budget_locks(intent);
    let h = intent.h.to_hex();
    // The payer's H, locked where one nonce per payer is asked: two purchases under one H take turns there.
    let nonce =
        (config.one_nonce_per_payer && rules::nonce_of_h(intent)).then(|| lock_key(&["nonce", intent.account, &h]));
    let bytes = intent.to_sign.as_ref().map(|t| t.bytes);
    let statement = client
        .prepare_cached(
            "SELECT outcome, detail FROM terms_begin($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
             $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)",
        )
        .await?;
    let params: Params<'_> = &[
        &intent.attempt,
        &intent.key,
        &role,
        &intent.pairing,
        &intent.account,
        &h,
        &intent.quote.payee,
        &json.purchase,
        &json.chosen,
        &json.quote,
        &at,
        &json.prepared,
        &bytes,
        &budgets,
        &scopes,
        &assets,
        &windows,
        &amounts,
        &limits,
        &starts,
        &locks,
        &lock_key(&["purchase", intent.key, role]),
        &nonce,
        &open_checked,
    ];
    let row = match client.query_one(&statement, params).await {
        Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
            return Err(Fail::Refused(format!("attempt {} is already in the journal", intent.attempt)));
        }
        other => other?,
    };
    let detail: Option<String> = row.get(1);
    let unexpected = || Fail::Refused(format!("the journal's begin answered {:?}", row.get::<_, &str>(0)));
    Ok(Some(match row.get::<_, &str>(0) {
        "open" => return Ok(None),
        "fresh" => Begun::Fresh,
        "nonce" => rules::nonce_used(intent, detail).ok_or_else(unexpected)?,
        "over" => {
            let i = detail.and_then(|d| d.parse::<usize>().ok()).and_then(|i| i.checked_sub(1));
            Begun::OverBudget(i.and_then(|i| intent.claims.get(i)).ok_or_else(unexpected)?.clone())
        }
        "fault" => return Err(Fail::Refused(buckets::faulted(&detail.unwrap_or_default()))),
        _ => return Err(unexpected()),
    }))
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

/// Another purchase of the intent's payer paid through its pairing under its H ([`rules::nonce_used`]), as `look`
/// reads it (`terms_begin` reads the same, under the payer's lock).
async fn nonce_user(tx: &Transaction<'_>, intent: &Intent<'_>, config: JournalConfig) -> Result<Option<String>, Fail> {
    if !config.one_nonce_per_payer || !rules::nonce_of_h(intent) {
        return Ok(None);
    }
    let found = rows(
        tx,
        "SELECT key FROM terms_nonce_user($1, $2, $3, $4)",
        &[&intent.account, &intent.pairing, &intent.h.to_hex(), &intent.key],
    )
    .await?;
    Ok(found.first().map(|r| r.get(0)))
}

/// The window `(now - window, now]` of a budget (and every reservation dated after `now`): what it holds, from its
/// running totals (`terms_window`: a bounded number of bucket rows), summed exactly (`NUMERIC`) and read as the rules
/// read amounts. A budget `terms journal check` found wrong is refused.
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
        "SELECT EXISTS (SELECT 1 FROM terms_budget_faults WHERE budget = $1 AND scope = $2 AND asset = $3), \
         w.committed::TEXT, w.reserved::TEXT FROM terms_window($1, $2, $3, $4) AS w",
        &[&budget, &scope, &asset, &rules::window_start(window, now)],
    )
    .await?;
    let mut held = Held::default();
    for row in &rows {
        if row.get::<_, bool>(0) {
            return Err(Fail::Refused(buckets::faulted(budget)));
        }
        for (column, state) in [(1, ReservationState::Committed), (2, ReservationState::Reserved)] {
            held.add(budget, row.get::<_, &str>(column), state.as_str()).map_err(Fail::Refused)?;
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
        // The reservations and their budgets' running totals, moved together; a total that is missing, or would
        // go below zero (the table's check), disagrees with its rows.
        let moved = rows(tx, "SELECT terms_move($1, $2, $3)", &[&attempt, &to.as_str(), &from]).await;
        let whole = match moved {
            Err(Fail::Sql(e)) if e.code() == Some(&SqlState::CHECK_VIOLATION) => false,
            other => other?.first().is_some_and(|r| r.get::<_, bool>(0)),
        };
        if !whole {
            return Err(Fail::Refused(format!(
                "the running totals of a budget attempt {attempt} reserved from disagree with its reservations: \
                 its reservations are not moved (run `terms journal check`)"
            )));
        }
    }
    Ok(())
}

/// Compares every budget's running totals with its rows, writers held off meanwhile: the budgets that disagree are
/// marked (refused from then on) and returned; `repair` recomputes every total from the rows and clears the marks.
async fn check(tx: &Transaction<'_>, repair: bool) -> Result<Vec<BudgetFault>, Fail> {
    tx.batch_execute("LOCK TABLE terms_reservations, terms_budget_totals IN SHARE ROW EXCLUSIVE MODE").await?;
    let faults: Vec<BudgetFault> = rows(tx, super::totals::DIFFER, &[])
        .await?
        .iter()
        .map(|r| BudgetFault {
            budget: r.get(0),
            scope: r.get(1),
            asset: r.get(2),
            buckets: u64::try_from(r.get::<_, i64>(3)).unwrap_or(0),
        })
        .collect();
    if repair {
        tx.batch_execute("DELETE FROM terms_budget_totals").await?;
        tx.batch_execute(super::totals::FILL).await?;
        tx.batch_execute("DELETE FROM terms_budget_faults").await?;
        return Ok(faults);
    }
    for f in &faults {
        let buckets = i64::try_from(f.buckets).unwrap_or(i64::MAX);
        exec(
            tx,
            "INSERT INTO terms_budget_faults (budget, scope, asset, buckets, found_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (budget, scope, asset) DO UPDATE SET buckets = excluded.buckets, found_at = excluded.found_at",
            &[&f.budget, &f.scope, &f.asset, &buckets, &now()],
        )
        .await?;
    }
    Ok(faults)
}
