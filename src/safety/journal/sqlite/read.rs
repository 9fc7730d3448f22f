//! Reading the journal back: records with their reservations, budget windows, ATR bytes.

use ruint::aliases::U256;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::{Fail, int};
use crate::gate::Role;
use crate::hash::AtrHash;
use crate::safety::journal::{
    ExecutionState, HistoryFilter, PaymentState, Record, Reservation, ReservationState, ResponseState, RetryState,
    Stage,
};

/// Every column of `attempts`, in the order [`raw`] reads them.
const COLUMNS: &str = "attempt, key, role, pairing, account, h, payee, purchase, chosen, quote, stage, payment_state, \
                       execution, response, retry, moving, payment, answer, decline, cause, created_at, updated_at";

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
    let sql = format!(
        "SELECT {COLUMNS} FROM attempts WHERE (?1 IS NULL OR created_at >= ?1) AND (?2 IS NULL OR created_at < ?2) \
         AND (?3 IS NULL OR payee = ?3) AND (?4 IS NULL OR payment_state = ?4) \
         ORDER BY created_at DESC, rowid DESC LIMIT ?5"
    );
    let since = filter.since.map(|t| int(t, "the history's start")).transpose()?;
    let until = filter.until.map(|t| int(t, "the history's end")).transpose()?;
    let state = filter.state.map(PaymentState::as_str);
    let limit = filter.limit.map_or(-1, i64::from);
    let rows = conn
        .prepare(&sql)?
        .query_map(params![since, until, filter.payee, state, limit], raw)?
        .collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(|row| complete(conn, row)).collect()
}

/// The ATR bytes kept for a hash.
pub(super) fn atr(conn: &Connection, h: &AtrHash) -> Result<Option<Vec<u8>>, Fail> {
    Ok(conn.query_row("SELECT bytes FROM atr WHERE h = ?1", params![h.to_hex()], |r| r.get(0)).optional()?)
}

/// What a budget window holds, each sum `None` where it would pass 2^256 - 1.
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    /// Settled payments' reservations.
    pub(super) committed: Option<U256>,
    /// Reservations of payments whose outcome is not known.
    pub(super) reserved: Option<U256>,
}

impl Held {
    /// Both together, `None` past 2^256 - 1.
    pub(super) fn total(self) -> Option<U256> {
        self.committed?.checked_add(self.reserved?)
    }
}

/// The window `(now - window, now]` of a budget (and every reservation dated after `now`): what it holds, by
/// state. Released reservations do not count.
pub(super) fn window(
    conn: &Connection,
    budget: &str,
    scope: &str,
    asset: &str,
    window: u64,
    now: u64,
) -> Result<Held, Fail> {
    let after = i64::try_from(i128::from(now) - i128::from(window)).unwrap_or(i64::MIN);
    let mut statement = conn.prepare_cached(
        "SELECT amount, state FROM reservations WHERE budget = ?1 AND scope = ?2 AND asset = ?3 AND at > ?4 \
         AND state != 'released'",
    )?;
    let mut rows = statement.query(params![budget, scope, asset, after])?;
    let mut held = Held { committed: Some(U256::ZERO), reserved: Some(U256::ZERO) };
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        let state: String = row.get(1)?;
        let amount = crate::pairing::parse_atomic(&text)
            .ok_or_else(|| Fail::Refused(format!("a reservation of budget {budget} holds an unreadable amount")))?;
        let sum = match ReservationState::parse(&state) {
            Some(ReservationState::Committed) => &mut held.committed,
            _ => &mut held.reserved,
        };
        *sum = sum.and_then(|s| s.checked_add(amount));
    }
    Ok(held)
}

/// One row of `attempts` as stored, before its text is read.
#[derive(Debug)]
struct Raw {
    text: [String; 7],
    purchase: Option<String>,
    chosen: String,
    quote: String,
    states: [String; 4],
    response: Option<String>,
    moving: bool,
    payment: Option<String>,
    answer: Option<String>,
    decline: Option<String>,
    cause: Option<String>,
    times: [i64; 2],
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
    })
}

/// A stored row read into a record, with its reservations.
fn complete(conn: &Connection, row: Raw) -> Result<Record, Fail> {
    let [attempt, key, role, pairing, account, h, payee] = row.text;
    let [stage, payment_state, execution, retry] = row.states;
    let [created_at, updated_at] = row.times;
    let bad = |column: &str| Fail::Refused(format!("the journal's {column} of attempt {attempt} is unreadable"));
    let json = |column: &str, text: &str| serde_json::from_str::<Value>(text).map_err(|_| bad(column));
    let optional = |column: &str, text: Option<String>| text.map(|t| json(column, &t)).transpose();
    let time = |value: i64| u64::try_from(value).map_err(|_| bad("time"));
    let record = Record {
        role: read_role(&role).ok_or_else(|| bad("role"))?,
        h: AtrHash::parse(&h).ok_or_else(|| bad("h"))?,
        purchase: optional("purchase", row.purchase)?,
        chosen: json("chosen", &row.chosen)?,
        quote: json("quote", &row.quote)?,
        stage: Stage::parse(&stage).ok_or_else(|| bad("stage"))?,
        payment_state: PaymentState::parse(&payment_state).ok_or_else(|| bad("payment state"))?,
        execution: ExecutionState::parse(&execution).ok_or_else(|| bad("execution state"))?,
        response: row.response.map(|t| ResponseState::parse(&t).ok_or_else(|| bad("response state"))).transpose()?,
        retry: RetryState::parse(&retry).ok_or_else(|| bad("retry state"))?,
        moving: row.moving,
        payment: optional("payment", row.payment)?,
        answer: optional("answer", row.answer)?,
        decline: optional("decline", row.decline)?,
        cause: row.cause,
        created_at: time(created_at)?,
        updated_at: time(updated_at)?,
        reservations: reservations(conn, &attempt)?,
        attempt,
        key,
        pairing,
        account,
        payee,
    };
    Ok(record)
}

fn reservations(conn: &Connection, attempt: &str) -> Result<Vec<Reservation>, Fail> {
    let mut statement = conn.prepare_cached(
        "SELECT budget, scope, asset, window_seconds, amount, at, state FROM reservations WHERE attempt = ?1 \
         ORDER BY rowid",
    )?;
    let rows = statement
        .query_map(params![attempt], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let bad = || Fail::Refused(format!("a reservation of attempt {attempt} is unreadable"));
    rows.into_iter()
        .map(|(budget, scope, asset, window, amount, at, state)| {
            Ok(Reservation {
                budget,
                scope,
                asset,
                window: u64::try_from(window).map_err(|_| bad())?,
                amount: crate::pairing::parse_atomic(&amount).ok_or_else(bad)?,
                at: u64::try_from(at).map_err(|_| bad())?,
                state: ReservationState::parse(&state).ok_or_else(bad)?,
            })
        })
        .collect()
}

/// A role as records write it.
pub(super) fn read_role(text: &str) -> Option<Role> {
    [Role::Payment, Role::Agreement, Role::Voucher].into_iter().find(|role| role.as_str() == text)
}
