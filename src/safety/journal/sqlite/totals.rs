//! The SQLite journal's running totals per budget and bucket ([`buckets`](crate::safety::journal::buckets)): read
//! for a window, moved with the reservations they sum in the same transaction, filled by the migration, and checked
//! against the rows (`terms journal check`).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::Fail;
use crate::safety::journal::buckets::{self, BudgetFault, Key, LEVELS, Total};
use crate::safety::journal::rules::{self, Held};
use crate::safety::journal::{ReservationState, ReservationState as S};

/// The tables of version 3: the totals, the budgets `terms journal check` found disagreeing, and the indexes of the
/// history, the nonce lookup and the reservations' moves. The reservations' index by budget and time goes: no read
/// scans a window any more.
pub(super) const TO_V3: &str = "
CREATE TABLE budget_totals (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, level INTEGER NOT NULL, bucket INTEGER NOT NULL,
  committed BLOB NOT NULL, reserved BLOB NOT NULL,
  PRIMARY KEY (budget, scope, asset, level, bucket)
) WITHOUT ROWID;
CREATE TABLE budget_faults (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, buckets INTEGER NOT NULL, found_at INTEGER NOT NULL,
  PRIMARY KEY (budget, scope, asset)
) WITHOUT ROWID;
CREATE INDEX attempts_by_payee ON attempts (payee, created_at);
CREATE INDEX attempts_by_state ON attempts (payment_state, created_at);
CREATE INDEX attempts_by_nonce ON attempts (h, account, pairing);
DROP INDEX IF EXISTS reservations_by_budget;
";

/// The same two tables in the connection's temporary schema, for a journal of an older version opened read-only
/// (filled from its rows, the file unchanged).
pub(super) const TEMP: &str = "
CREATE TEMP TABLE budget_totals (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, level INTEGER NOT NULL, bucket INTEGER NOT NULL,
  committed BLOB NOT NULL, reserved BLOB NOT NULL,
  PRIMARY KEY (budget, scope, asset, level, bucket)
) WITHOUT ROWID;
CREATE TEMP TABLE budget_faults (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, buckets INTEGER NOT NULL, found_at INTEGER NOT NULL,
  PRIMARY KEY (budget, scope, asset)
) WITHOUT ROWID;
";

/// The refusal of a budget whose totals were found to disagree with its rows.
fn faulted(budget: &str) -> Fail {
    Fail::Refused(buckets::faulted(budget))
}

/// The totals of one level's buckets of a budget in a range (read through the table's primary key).
pub(super) const WINDOW: &str = "SELECT committed, reserved FROM budget_totals WHERE budget = ?1 AND scope = ?2 \
                                 AND asset = ?3 AND level = ?4 AND bucket >= ?5 AND bucket < ?6";

/// The window `(now - window, now]` of a budget (and every reservation dated after `now`): what it holds, by state,
/// from at most 63 buckets of each level below the top. A budget marked as disagreeing with its rows is refused.
pub(super) fn window(
    conn: &Connection,
    budget: &str,
    scope: &str,
    asset: &str,
    window: u64,
    now: u64,
) -> Result<Held, Fail> {
    let fault: Option<i64> = conn
        .prepare_cached("SELECT 1 FROM budget_faults WHERE budget = ?1 AND scope = ?2 AND asset = ?3")?
        .query_row(params![budget, scope, asset], |r| r.get(0))
        .optional()?;
    if fault.is_some() {
        return Err(faulted(budget));
    }
    let mut statement = conn.prepare_cached(WINDOW)?;
    let (mut committed, mut reserved) = (Some(Total::ZERO), Some(Total::ZERO));
    for (level, first, end) in buckets::cover(rules::window_start(window, now)) {
        if first >= end {
            continue;
        }
        let mut rows = statement.query(params![budget, scope, asset, level, first, end])?;
        while let Some(row) = rows.next()? {
            let c = total(row, 0, budget)?;
            let r = total(row, 1, budget)?;
            committed = committed.and_then(|s| s.checked_add(c));
            reserved = reserved.and_then(|s| s.checked_add(r));
        }
    }
    Ok(Held { committed: committed.and_then(buckets::narrow), reserved: reserved.and_then(buckets::narrow) })
}

/// Moves `amount` of a reservation dated `at` out of the total of state `from` and into that of `to` (a released
/// reservation counts in neither), in every level's bucket. A total that would go below zero disagrees with its
/// rows: refused, nothing written.
pub(super) fn shift(
    conn: &Connection,
    (budget, scope, asset): (&str, &str, &str),
    at: i64,
    amount: &str,
    (from, to): (Option<ReservationState>, ReservationState),
) -> Result<(), Fail> {
    let bad = || Fail::Refused(format!("a reservation of budget {budget} is unreadable"));
    let amount = buckets::widen(crate::pairing::parse_atomic(amount).ok_or_else(bad)?);
    let mut get = conn.prepare_cached(
        "SELECT committed, reserved FROM budget_totals WHERE budget = ?1 AND scope = ?2 AND asset = ?3 \
         AND level = ?4 AND bucket = ?5",
    )?;
    let mut put = conn.prepare_cached(
        "INSERT OR REPLACE INTO budget_totals (budget, scope, asset, level, bucket, committed, reserved) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for level in 0..LEVELS {
        let b = buckets::bucket(at, level);
        let mut rows = get.query(params![budget, scope, asset, level, b])?;
        let mut totals = match rows.next()? {
            Some(row) => [total(row, 0, budget)?, total(row, 1, budget)?],
            None => [Total::ZERO; 2],
        };
        let column = |state| match state {
            S::Committed => Some(0),
            S::Reserved => Some(1),
            S::Released => None,
        };
        if let Some(i) = from.and_then(column) {
            let t = totals.get_mut(i).ok_or_else(bad)?;
            *t = t.checked_sub(amount).ok_or_else(|| faulted(budget))?;
        }
        if let Some(i) = column(to) {
            let t = totals.get_mut(i).ok_or_else(bad)?;
            *t = t.checked_add(amount).ok_or_else(|| faulted(budget))?;
        }
        let [c, r] = totals;
        put.execute(params![budget, scope, asset, level, b, buckets::write(c), buckets::write(r)])?;
    }
    Ok(())
}

/// The total in column `i` of a row; anything but a blob of its width is unreadable (refused).
fn total(row: &rusqlite::Row<'_>, i: usize, budget: &str) -> Result<Total, Fail> {
    match row.get_ref(i)? {
        rusqlite::types::ValueRef::Blob(bytes) => buckets::read(bytes, budget).map_err(Fail::Refused),
        _ => Err(Fail::Refused(format!("a running total of budget {budget} is unreadable"))),
    }
}

/// Every reservation's row, for the totals (budget, scope, asset, time, amount, state).
fn rows(conn: &Connection) -> Result<BTreeMap<Key, (Total, Total)>, Fail> {
    let mut statement = conn.prepare("SELECT budget, scope, asset, at, amount, state FROM reservations")?;
    let rows = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    buckets::expected(rows).map_err(Fail::Refused)
}

/// Writes the totals the rows say (the migration, a repair): every row of `budget_totals` replaced.
pub(super) fn fill(conn: &Connection) -> Result<(), Fail> {
    let expected = rows(conn)?;
    conn.execute("DELETE FROM budget_totals", [])?;
    let mut put = conn.prepare(
        "INSERT INTO budget_totals (budget, scope, asset, level, bucket, committed, reserved) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for ((budget, scope, asset, level, bucket), (c, r)) in expected {
        put.execute(params![budget, scope, asset, level, bucket, buckets::write(c), buckets::write(r)])?;
    }
    Ok(())
}

/// Compares every stored total with what the rows say; the budgets that disagree are marked (and refused from then
/// on) and returned. `repair`: the totals are recomputed from the rows instead, and every mark cleared.
pub(super) fn check(conn: &Connection, repair: bool) -> Result<Vec<BudgetFault>, Fail> {
    let expected = rows(conn)?;
    let mut stored = BTreeMap::new();
    {
        let mut statement =
            conn.prepare("SELECT budget, scope, asset, level, bucket, committed, reserved FROM budget_totals")?;
        let mut found = statement.query([])?;
        while let Some(r) = found.next()? {
            let budget: String = r.get(0)?;
            // A total that cannot be read disagrees with any rows.
            let totals = (total(r, 5, &budget).unwrap_or(Total::MAX), total(r, 6, &budget).unwrap_or(Total::MAX));
            stored.insert((budget, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?), totals);
        }
    }
    let faults = buckets::compare(&expected, &stored);
    if repair {
        fill(conn)?;
        conn.execute("DELETE FROM budget_faults", [])?;
        return Ok(faults);
    }
    let mut mark = conn.prepare(
        "INSERT OR REPLACE INTO budget_faults (budget, scope, asset, buckets, found_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for f in &faults {
        mark.execute(params![f.budget, f.scope, f.asset, i64::try_from(f.buckets).unwrap_or(i64::MAX), rules::now()])?;
    }
    Ok(faults)
}
