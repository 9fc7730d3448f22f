//! Reading the journal back on PostgreSQL: each read one REPEATABLE READ, read-only transaction (one snapshot).
//! How a row reads as a record is the backends' shared [`rules`](crate::safety::journal::rules); this is the SQL.

use deadpool_postgres::{Object, Transaction};
use tokio_postgres::IsolationLevel;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::Fail;
use super::write::window;
use crate::hash::AtrHash;
use crate::safety::journal::history::{self, Param};
use crate::safety::journal::rules::{self, COLUMNS, Held, Raw, RawReservation};
use crate::safety::journal::{HistoryFilter, Record};

/// One read the [`Store`](crate::safety::journal::Store) asks for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op<'a> {
    Record(&'a str),
    Attempts(&'a str),
    History(&'a HistoryFilter),
    Window {
        budget: &'a str,
        scope: &'a str,
        asset: &'a str,
        window: u64,
        now: u64,
    },
    Atr(&'a AtrHash),
    /// What `begin` would answer for the intent, under the lease.
    Look(&'a crate::gate::Intent<'a>, crate::safety::journal::JournalConfig),
}

/// What a read found.
#[derive(Debug)]
pub(super) enum Out {
    Records(Vec<Record>),
    Held(Held),
    Atr(Option<Vec<u8>>),
    Begun(crate::gate::Begun),
}

impl Out {
    /// The records, where the read was of records.
    pub(super) fn records(self) -> Option<Vec<Record>> {
        match self {
            Self::Records(records) => Some(records),
            _ => None,
        }
    }
}

pub(super) async fn run(client: &mut Object, op: &Op<'_>) -> Result<Out, Fail> {
    let tx = client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start().await?;
    let out = match *op {
        Op::Record(key) => {
            let sql = format!(
                "SELECT {COLUMNS} FROM terms_attempts WHERE key = $1 AND role = 'payment' ORDER BY seq DESC LIMIT 1"
            );
            Out::Records(complete(&tx, tx.query(&tx.prepare_cached(&sql).await?, &[&key]).await?).await?)
        }
        Op::Attempts(key) => {
            let sql = format!("SELECT {COLUMNS} FROM terms_attempts WHERE key = $1 ORDER BY seq");
            Out::Records(complete(&tx, tx.query(&tx.prepare_cached(&sql).await?, &[&key]).await?).await?)
        }
        Op::History(filter) => {
            let (sql, params) =
                history::query(filter, COLUMNS, "terms_attempts", "seq", |n| format!("${n}")).map_err(Fail::Refused)?;
            let params: Vec<Box<dyn ToSql + Sync + Send>> = params
                .into_iter()
                .map(|p| -> Box<dyn ToSql + Sync + Send> {
                    match p {
                        Param::Int(n) => Box::new(n),
                        Param::Text(t) => Box::new(t),
                    }
                })
                .collect();
            let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
            let rows = tx.query(&tx.prepare_cached(&sql).await?, &params).await?;
            Out::Records(complete(&tx, rows).await?)
        }
        Op::Window { budget, scope, asset, window: seconds, now } => {
            Out::Held(window(&tx, budget, scope, asset, seconds, now).await?)
        }
        Op::Atr(h) => {
            let row = tx.query_opt("SELECT bytes FROM terms_atr WHERE h = $1", &[&h.to_hex()]).await?;
            Out::Atr(row.map(|r| r.get(0)))
        }
        Op::Look(intent, config) => Out::Begun(super::write::look(&tx, intent, config).await?),
    };
    tx.commit().await?;
    Ok(out)
}

fn raw(r: &Row) -> Raw {
    Raw {
        text: [r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6)],
        purchase: r.get(7),
        chosen: r.get(8),
        quote: r.get(9),
        states: [r.get(10), r.get(11), r.get(12), r.get(14)],
        response: r.get(13),
        moving: r.get(15),
        payment: r.get(16),
        answer: r.get(17),
        decline: r.get(18),
        cause: r.get(19),
        times: [r.get(20), r.get(21)],
        prepared: r.get(22),
    }
}

/// Stored rows read into records, each with its reservations.
async fn complete(tx: &Transaction<'_>, rows: Vec<Row>) -> Result<Vec<Record>, Fail> {
    let statement = tx
        .prepare_cached(
            "SELECT budget, scope, asset, window_seconds, amount, at, state FROM terms_reservations \
             WHERE attempt = $1 ORDER BY seq",
        )
        .await?;
    let mut records = Vec::with_capacity(rows.len());
    for row in &rows {
        let row = raw(row);
        let reservations: Vec<RawReservation> = tx
            .query(&statement, &[&row.attempt()])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6)))
            .collect();
        records.push(rules::record(row, reservations).map_err(Fail::Refused)?);
    }
    Ok(records)
}
