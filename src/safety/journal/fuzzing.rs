//! The journal's record reader on stored columns, for the fuzz crate (feature `fuzzing`): what SQLite and PostgreSQL
//! hand back is read by one function, and a database file is input the buyer does not control (copied, restored,
//! edited by hand, written by another version). Not a stable API: no user calls it.

use super::Record;
use super::rules::{Raw, record};

/// One attempt's row as a database stores it, column by column.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    /// Attempt, key, role, pairing, account, h, payee.
    pub text: [String; 7],
    /// The purchase (JSON), if any.
    pub purchase: Option<String>,
    /// The choice (JSON).
    pub chosen: String,
    /// The quote (JSON).
    pub quote: String,
    /// Stage, payment state, execution, retry.
    pub states: [String; 4],
    /// The response state, if any.
    pub response: Option<String>,
    /// Whether money may be moving.
    pub moving: bool,
    /// The payment (JSON), if any.
    pub payment: Option<String>,
    /// The signer's answer (JSON), if any.
    pub answer: Option<String>,
    /// The decline (JSON), if any.
    pub decline: Option<String>,
    /// The cause, if any.
    pub cause: Option<String>,
    /// Created and updated, Unix seconds as stored.
    pub times: [i64; 2],
    /// What the wallet was asked (JSON text), if recorded.
    pub prepared: Option<String>,
}

/// A reservation's row as stored: budget, scope, asset, window, amount, at, state.
pub type ReservationColumns = (String, String, String, i64, String, i64, String);

/// The record the journal reads from these columns, or the sentence it refuses them with.
pub fn read_record(row: Columns, reservations: Vec<ReservationColumns>) -> Result<Record, String> {
    let raw = Raw {
        text: row.text,
        purchase: row.purchase,
        chosen: row.chosen,
        quote: row.quote,
        states: row.states,
        response: row.response,
        moving: row.moving,
        payment: row.payment,
        answer: row.answer,
        decline: row.decline,
        cause: row.cause,
        times: row.times,
        prepared: row.prepared,
    };
    record(raw, reservations)
}
