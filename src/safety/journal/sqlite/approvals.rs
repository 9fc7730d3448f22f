//! The approval queue in the SQLite file (ours): its own table, `approvals`
//! ([`approvals`](crate::safety::journal::approvals) has its columns), created where it is missing when the file is
//! opened for writing; each write one `BEGIN IMMEDIATE` transaction, as the journal's are.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Fail, SqliteJournal};
use crate::gate::approvals::{Step, decided, decided_at, step, taken};
use crate::gate::{Approval, ApprovalError, ApprovalQueue, Asked, Asking, Decision, JournalError};
use crate::safety::journal::approvals::{COLUMNS, NewRow, Raw, approval_columns, at};
use crate::safety::journal::rules::int;
use crate::signer::BoxFuture;

/// The table and its indexes, where they are missing.
const TABLE: &str = concat!(
    "CREATE TABLE IF NOT EXISTS approvals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,",
    approval_columns!("BLOB", "INTEGER"),
    ");
CREATE INDEX IF NOT EXISTS approvals_by_key ON approvals (key, seq);
CREATE INDEX IF NOT EXISTS approvals_by_state ON approvals (state, seq);
"
);

/// Creates the queue's table where it is missing (a file opened for writing). Where it is there, this is one read,
/// which no other process's write lock blocks (WAL).
pub(super) fn create(conn: &mut Connection) -> Result<(), Fail> {
    if exists(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(TABLE)?;
    tx.commit()?;
    Ok(())
}

/// Whether the file has the table (a file opened read-only, written by a build without the queue, has none).
fn exists(conn: &Connection) -> Result<bool, Fail> {
    let n: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'approvals'", [], |r| {
            r.get(0)
        })?;
    Ok(n > 0)
}

fn raw(row: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw {
        id: row.get(0)?,
        key: row.get(1)?,
        state: row.get(2)?,
        pairing: row.get(3)?,
        account: row.get(4)?,
        h: row.get(5)?,
        quote: row.get(6)?,
        purchase: row.get(7)?,
        link: row.get(8)?,
        bytes: row.get(9)?,
        rule: row.get(10)?,
        agent: row.get(11)?,
        binding: row.get(12)?,
        created_at: row.get(13)?,
        expires_at: row.get(14)?,
        decided_at: row.get(15)?,
        attempt: row.get(16)?,
    })
}

fn one(conn: &Connection, filter: &str, value: &str) -> Result<Option<(Approval, String)>, Fail> {
    let sql = format!("SELECT {COLUMNS} FROM approvals WHERE {filter} = ?1 ORDER BY seq DESC LIMIT 1");
    let row = conn.query_row(&sql, params![value], raw).optional()?;
    row.map(|r| r.read().map_err(Fail::Refused)).transpose()
}

fn ask(conn: &Connection, asking: &Asking<'_>) -> Result<Asked, Fail> {
    match step(one(conn, "key", asking.key)?, asking) {
        Step::Answer(asked) => Ok(asked),
        Step::Take(approval) => {
            conn.execute(
                "UPDATE approvals SET state = 'used', attempt = ?2 WHERE id = ?1 AND state = 'approved'",
                params![approval.id, asking.attempt],
            )?;
            Ok(taken(approval, asking.attempt))
        }
        Step::Queue(retire) => {
            if let Some((id, state)) = retire {
                conn.execute("UPDATE approvals SET state = ?2 WHERE id = ?1", params![id, state.as_str()])?;
            }
            let row = NewRow::of(asking).map_err(Fail::Refused)?;
            conn.execute(
                &format!(
                    "INSERT INTO approvals ({COLUMNS}) VALUES (?1, ?2, 'pending', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                     ?11, ?12, ?13, ?14, NULL, NULL)"
                ),
                params![
                    asking.id,
                    asking.key,
                    asking.pairing,
                    asking.account,
                    asking.h.to_hex(),
                    row.quote,
                    row.purchase,
                    asking.link,
                    asking.bytes,
                    asking.rule,
                    asking.agent,
                    row.binding,
                    row.created_at,
                    row.expires_at,
                ],
            )?;
            Ok(Asked::Pending(Box::new(asking.approval())))
        }
    }
}

fn decide(conn: &Connection, id: &str, decision: Decision, now: u64) -> Result<Result<Approval, ApprovalError>, Fail> {
    let Some((approval, _)) = one(conn, "id", id)? else { return Ok(Err(ApprovalError::NotFound(id.to_owned()))) };
    let state = match decided(&approval, decision, now) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let t = int(now, "the decision's time").map_err(Fail::Refused)?;
    conn.execute("UPDATE approvals SET state = ?2, decided_at = ?3 WHERE id = ?1", params![id, state.as_str(), t])?;
    Ok(Ok(decided_at(approval, state, now)))
}

impl ApprovalQueue for SqliteJournal {
    fn ask<'a>(&'a self, asking: &'a Asking<'a>) -> BoxFuture<'a, Result<Asked, JournalError>> {
        Box::pin(async move { self.write(|tx| ask(tx, asking)) })
    }

    fn pending<'a>(&'a self, now: u64) -> BoxFuture<'a, Result<Vec<Approval>, JournalError>> {
        Box::pin(async move {
            self.read(|tx| {
                if !exists(tx)? {
                    return Ok(Vec::new());
                }
                let t = int(now, "now").map_err(Fail::Refused)?;
                let sql =
                    format!("SELECT {COLUMNS} FROM approvals WHERE state = 'pending' AND expires_at > ?1 ORDER BY seq");
                let rows = tx.prepare(&sql)?.query_map(params![t], raw)?.collect::<Result<Vec<_>, _>>()?;
                rows.into_iter().map(|r| r.read().map(|(a, _)| at(a, now)).map_err(Fail::Refused)).collect()
            })
        })
    }

    fn approval<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, Result<Option<Approval>, JournalError>> {
        Box::pin(async move {
            self.read(|tx| {
                if !exists(tx)? {
                    return Ok(None);
                }
                Ok(one(tx, "id", id)?.map(|(a, _)| at(a, now)))
            })
        })
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
        now: u64,
    ) -> BoxFuture<'a, Result<Approval, ApprovalError>> {
        Box::pin(async move { self.write(|tx| decide(tx, id, decision, now))? })
    }
}
