//! Reading the journal back: records with their reservations, budget windows, ATR bytes. How a row reads as a
//! record is the backends' shared [`rules`](crate::safety::journal::rules); this is the SQL.

use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};

use super::Fail;
use crate::hash::AtrHash;
use crate::safety::journal::history::{self, Param};
use crate::safety::journal::rules::{self, COLUMNS, Raw, RawReservation};
use crate::safety::journal::{HistoryFilter, Record};

/// The newest payment attempt of a purchase.
pub(super) fn record(conn: &Connection, key: &str) -> Result<Option<Record>, Fail> {
    let sql = format!("SELECT {COLUMNS} FROM attempts WHERE key = ?1 AND role = 'payment' ORDER BY rowid DESC LIMIT 1");
    let row = conn.query_row(&sql, params![key], raw).optional()?;
    row.map(|row| complete(conn, row)).transpose()
}

/// Every attempt of a purchase, oldest first.
pub(super) fn attempts(conn: &Connection, key: &str) -> Result<Vec<Record>, Fail> {
    let sql = format!("SELECT {COLUMNS} FROM attempts WHERE key = ?1 ORDER BY rowid");
    let rows = conn.prepare(&sql)?.query_map(params![key], raw)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|row| complete(conn, row)).collect()
}

/// The attempts a filter lets through, newest first.
pub(super) fn history(conn: &Connection, filter: &HistoryFilter) -> Result<Vec<Record>, Fail> {
    let (sql, params) =
        history::query(filter, COLUMNS, "attempts", "rowid", |n| format!("?{n}")).map_err(Fail::Refused)?;
    let params = params.iter().map(|p| match p {
        Param::Int(n) => rusqlite::types::Value::Integer(*n),
        Param::Text(t) => rusqlite::types::Value::Text(t.clone()),
    });
    let rows = conn.prepare(&sql)?.query_map(params_from_iter(params), raw)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|row| complete(conn, row)).collect()
}

/// The ATR bytes kept for a hash.
pub(super) fn atr(conn: &Connection, h: &AtrHash) -> Result<Option<Vec<u8>>, Fail> {
    Ok(conn.query_row("SELECT bytes FROM atr WHERE h = ?1", params![h.to_hex()], |r| r.get(0)).optional()?)
}

fn raw(r: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw {
        text: [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?],
        purchase: r.get(7)?,
        chosen: r.get(8)?,
        quote: r.get(9)?,
        states: [r.get(10)?, r.get(11)?, r.get(12)?, r.get(14)?],
        response: r.get(13)?,
        moving: r.get(15)?,
        payment: r.get(16)?,
        answer: r.get(17)?,
        decline: r.get(18)?,
        cause: r.get(19)?,
        times: [r.get(20)?, r.get(21)?],
        prepared: r.get(22)?,
    })
}

/// A stored row read into a record, with its reservations.
fn complete(conn: &Connection, row: Raw) -> Result<Record, Fail> {
    let mut statement = conn.prepare_cached(
        "SELECT budget, scope, asset, window_seconds, amount, at, state FROM reservations WHERE attempt = ?1 \
         ORDER BY rowid",
    )?;
    let reservations = statement
        .query_map(params![row.attempt()], |r| -> rusqlite::Result<RawReservation> {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    rules::record(row, reservations).map_err(Fail::Refused)
}
