//! The approval queue on PostgreSQL (ours): its own table, `terms_approvals`
//! ([`approvals`](crate::safety::journal::approvals) has its columns), created where it is missing when the journal
//! connects, outside the journal's migrations (`terms_schema` does not list it). Each write is one transaction: an
//! `ask` takes an advisory lock on the purchase and row-locks its newest approval, a decision row-locks the
//! approval, so a person's decision and an agent's send never overwrite each other.

use std::time::Duration;

use deadpool_postgres::{GenericClient, Object, Transaction};
use sha2::{Digest, Sha256};
use tokio_postgres::Row;

use super::{Doing, Fail, PostgresJournal, bounded};
use crate::gate::approvals::{Step, decided, decided_at, step, taken};
use crate::gate::{Approval, ApprovalError, ApprovalQueue, ApprovalState, Asked, Asking, Decision, JournalError};
use crate::safety::journal::approvals::{COLUMNS, NewRow, Raw, approval_columns, at};
use crate::safety::journal::rules::int;
use crate::signer::BoxFuture;

/// The table and its indexes.
const TABLE: &str = concat!(
    "CREATE TABLE IF NOT EXISTS terms_approvals (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,",
    approval_columns!("BYTEA", "BIGINT"),
    ");
CREATE INDEX IF NOT EXISTS terms_approvals_by_key ON terms_approvals (key, seq);
CREATE INDEX IF NOT EXISTS terms_approvals_by_state ON terms_approvals (state, seq);
"
);

/// The advisory lock two processes creating the table take turns on: `termappr` in ASCII.
const CREATE_LOCK: i64 = 0x7465_726d_6170_7072;

/// Whether the table is there, read from the catalog under this statement's snapshot.
async fn exists(client: &impl GenericClient) -> Result<bool, Fail> {
    Ok(client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n \
             ON n.oid = c.relnamespace WHERE c.relname = 'terms_approvals' AND n.nspname = ANY (current_schemas(false)))",
            &[],
        )
        .await?
        .get(0))
}

/// Creates the table where it is missing (nothing to do, and no right to create tables needed, where it is there).
pub(super) async fn create(client: &mut Object) -> Result<(), Fail> {
    if exists(&*client).await? {
        return Ok(());
    }
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CREATE_LOCK]).await?;
    if !exists(&tx).await? {
        tx.batch_execute(TABLE).await?;
    }
    tx.commit().await?;
    Ok(())
}

fn raw(row: &Row) -> Result<Raw, Fail> {
    Ok(Raw {
        id: row.try_get(0)?,
        key: row.try_get(1)?,
        state: row.try_get(2)?,
        pairing: row.try_get(3)?,
        account: row.try_get(4)?,
        h: row.try_get(5)?,
        quote: row.try_get(6)?,
        purchase: row.try_get(7)?,
        link: row.try_get(8)?,
        bytes: row.try_get(9)?,
        rule: row.try_get(10)?,
        agent: row.try_get(11)?,
        binding: row.try_get(12)?,
        created_at: row.try_get(13)?,
        expires_at: row.try_get(14)?,
        decided_at: row.try_get(15)?,
        attempt: row.try_get(16)?,
    })
}

fn read(row: &Row) -> Result<(Approval, String), Fail> {
    raw(row)?.read().map_err(Fail::Refused)
}

/// The newest approval of the purchase `key` (or the approval `id`), row-locked.
async fn one(tx: &Transaction<'_>, filter: &str, value: &str) -> Result<Option<(Approval, String)>, Fail> {
    let sql = format!("SELECT {COLUMNS} FROM terms_approvals WHERE {filter} = $1 ORDER BY seq DESC LIMIT 1 FOR UPDATE");
    tx.query_opt(&sql, &[&value]).await?.as_ref().map(read).transpose()
}

/// The advisory lock of a purchase's approvals: the first 8 bytes of SHA-256 over a label and the key.
fn lock_key(key: &str) -> i64 {
    let digest = Sha256::new().chain_update(b"terms-approvals\0").chain_update(key.as_bytes()).finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
    i64::from_be_bytes(first)
}

/// One write or read of the queue.
#[derive(Debug, Clone, Copy)]
enum Op<'a> {
    Ask(&'a Asking<'a>),
    Decide(&'a str, Decision, u64),
    Pending(u64),
    One(&'a str, u64),
}

/// What it gave.
#[derive(Debug)]
enum Out {
    Asked(Asked),
    Decided(Result<Approval, ApprovalError>),
    List(Vec<Approval>),
    One(Option<Approval>),
}

async fn run(client: &mut Object, op: Op<'_>) -> Result<Out, Fail> {
    let tx = client.transaction().await?;
    let out = match op {
        Op::Ask(asking) => Out::Asked(ask(&tx, asking).await?),
        Op::Decide(id, decision, now) => Out::Decided(decide(&tx, id, decision, now).await?),
        Op::Pending(now) => {
            let t = int(now, "now").map_err(Fail::Refused)?;
            let sql = format!(
                "SELECT {COLUMNS} FROM terms_approvals WHERE state = 'pending' AND expires_at > $1 ORDER BY seq"
            );
            let rows = tx.query(&sql, &[&t]).await?;
            Out::List(rows.iter().map(|r| read(r).map(|(a, _)| at(a, now))).collect::<Result<_, _>>()?)
        }
        Op::One(id, now) => {
            let sql = format!("SELECT {COLUMNS} FROM terms_approvals WHERE id = $1");
            Out::One(tx.query_opt(&sql, &[&id]).await?.as_ref().map(read).transpose()?.map(|(a, _)| at(a, now)))
        }
    };
    tx.commit().await?;
    Ok(out)
}

async fn ask(tx: &Transaction<'_>, asking: &Asking<'_>) -> Result<Asked, Fail> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(asking.key)]).await?;
    match step(one(tx, "key", asking.key).await?, asking) {
        Step::Answer(asked) => Ok(asked),
        Step::Take(approval) => {
            tx.execute(
                "UPDATE terms_approvals SET state = 'used', attempt = $2 WHERE id = $1 AND state = 'approved'",
                &[&approval.id, &asking.attempt],
            )
            .await?;
            Ok(taken(approval, asking.attempt))
        }
        Step::Queue(retire) => {
            if let Some((id, state)) = retire {
                tx.execute("UPDATE terms_approvals SET state = $2 WHERE id = $1", &[&id, &state.as_str()]).await?;
            }
            let row = NewRow::of(asking).map_err(Fail::Refused)?;
            let h = asking.h.to_hex();
            tx.execute(
                &format!(
                    "INSERT INTO terms_approvals ({COLUMNS}) VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, \
                     $10, $11, $12, $13, $14, NULL, NULL)"
                ),
                &[
                    &asking.id,
                    &asking.key,
                    &asking.pairing,
                    &asking.account,
                    &h,
                    &row.quote,
                    &row.purchase,
                    &asking.link,
                    &asking.bytes,
                    &asking.rule,
                    &asking.agent,
                    &row.binding,
                    &row.created_at,
                    &row.expires_at,
                ],
            )
            .await?;
            Ok(Asked::Pending(Box::new(asking.approval())))
        }
    }
}

async fn decide(
    tx: &Transaction<'_>,
    id: &str,
    decision: Decision,
    now: u64,
) -> Result<Result<Approval, ApprovalError>, Fail> {
    let Some((approval, _)) = one(tx, "id", id).await? else {
        return Ok(Err(ApprovalError::NotFound(id.to_owned())));
    };
    let state = match decided(&approval, decision, now) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let t = int(now, "the decision's time").map_err(Fail::Refused)?;
    tx.execute("UPDATE terms_approvals SET state = $2, decided_at = $3 WHERE id = $1", &[&id, &state.as_str(), &t])
        .await?;
    Ok(Ok(decided_at(approval, state, now)))
}

impl PostgresJournal {
    /// Runs one queue operation, tried again on a new connection while the connection fails or a race rolls it
    /// back, until the busy timeout. A decision whose commit went unanswered is looked up: recorded as asked, it is
    /// done (an `ask` tried again finds what its first try wrote, so answers the same).
    async fn queue(&self, op: Op<'_>) -> Result<Out, JournalError> {
        let deadline = tokio::time::Instant::now() + self.config.busy_timeout;
        let mut pause = Duration::from_millis(20);
        let mut unsure = false;
        loop {
            let tried = async {
                let mut client = self.pool.get().await?;
                if let (true, Op::Decide(id, decision, now)) = (unsure, op)
                    && let Out::One(Some(a)) = run(&mut client, Op::One(id, now)).await?
                    && a.decided_at == Some(now)
                    && a.state == decided_state(decision)
                {
                    return Ok(Out::Decided(Ok(a)));
                }
                run(&mut client, op).await
            };
            let fail = match bounded(deadline, tried).await {
                Ok(Ok(out)) => return Ok(out),
                Ok(Err(fail)) | Err(fail) => fail,
            };
            unsure |= fail.is_connection();
            if !(fail.is_race() || fail.is_connection()) || tokio::time::Instant::now() >= deadline {
                return Err(self.write_error(fail, unsure));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }
}

fn decided_state(decision: Decision) -> ApprovalState {
    match decision {
        Decision::Approve => ApprovalState::Approved,
        Decision::Deny => ApprovalState::Denied,
    }
}

/// A queue operation's answer that is not the one asked for: a bug, said as the journal's failure.
fn misread(journal: &PostgresJournal) -> JournalError {
    journal.error(Doing::Read, Fail::Refused("the approval queue misread".into()))
}

impl ApprovalQueue for PostgresJournal {
    fn ask<'a>(&'a self, asking: &'a Asking<'a>) -> BoxFuture<'a, Result<Asked, JournalError>> {
        Box::pin(async move {
            match self.queue(Op::Ask(asking)).await? {
                Out::Asked(asked) => Ok(asked),
                _ => Err(misread(self)),
            }
        })
    }

    fn pending<'a>(&'a self, now: u64) -> BoxFuture<'a, Result<Vec<Approval>, JournalError>> {
        Box::pin(async move {
            match self.queue(Op::Pending(now)).await? {
                Out::List(list) => Ok(list),
                _ => Err(misread(self)),
            }
        })
    }

    fn approval<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, Result<Option<Approval>, JournalError>> {
        Box::pin(async move {
            match self.queue(Op::One(id, now)).await? {
                Out::One(one) => Ok(one),
                _ => Err(misread(self)),
            }
        })
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
        now: u64,
    ) -> BoxFuture<'a, Result<Approval, ApprovalError>> {
        Box::pin(async move {
            match self.queue(Op::Decide(id, decision, now)).await? {
                Out::Decided(decided) => decided,
                _ => Err(misread(self).into()),
            }
        })
    }
}
