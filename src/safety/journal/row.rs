//! How a stored attempt's row reads as a [`Record`], the same on every backend: its text columns read into the
//! states, JSON and times they hold, with its reservations.

use serde_json::Value;

use super::{ExecutionState, PaymentState, Record, Reservation, ReservationState, ResponseState, RetryState, Stage};
use crate::gate::Role;
use crate::hash::AtrHash;

/// One attempt's row as stored, before its text is read (columns in [`COLUMNS`] order).
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) text: [String; 7],
    pub(crate) purchase: Option<String>,
    pub(crate) chosen: String,
    pub(crate) quote: String,
    /// Stage, payment state, execution, retry.
    pub(crate) states: [String; 4],
    pub(crate) response: Option<String>,
    pub(crate) moving: bool,
    pub(crate) payment: Option<String>,
    pub(crate) answer: Option<String>,
    pub(crate) decline: Option<String>,
    pub(crate) cause: Option<String>,
    pub(crate) times: [i64; 2],
    pub(crate) prepared: Option<String>,
}

/// One reservation's row as stored: budget, scope, asset, window, amount, at, state.
pub(crate) type RawReservation = (String, String, String, i64, String, i64, String);

impl Raw {
    /// The attempt's id.
    pub(crate) fn attempt(&self) -> &str {
        let [attempt, ..] = &self.text;
        attempt
    }
}

/// A stored row read into a record, with its reservations (in the order they were made).
pub(crate) fn record(row: Raw, reservations: Vec<RawReservation>) -> Result<Record, String> {
    let [attempt, key, role, pairing, account, h, payee] = row.text;
    let [stage, payment_state, execution, retry] = row.states;
    let [created_at, updated_at] = row.times;
    let bad = |column: &str| format!("the journal's {column} of attempt {attempt} is unreadable");
    let json = |column: &str, text: &str| serde_json::from_str::<Value>(text).map_err(|_| bad(column));
    // A column holding the JSON text `null` (an answer of `null` recorded through the API) reads as absent, as the
    // record's own JSON writes both: otherwise one stored row would be two records, before and after its JSON.
    let optional = |column: &str, text: Option<String>| {
        text.map(|t| json(column, &t)).transpose().map(|v| v.filter(|v| !v.is_null()))
    };
    let time = |value: i64| u64::try_from(value).map_err(|_| bad("time"));
    let reservation = |(budget, scope, asset, window, amount, at, state): RawReservation| {
        let bad = || format!("a reservation of attempt {attempt} is unreadable");
        Ok(Reservation {
            budget,
            scope,
            asset,
            window: u64::try_from(window).map_err(|_| bad())?,
            amount: crate::pairing::parse_atomic(&amount).ok_or_else(bad)?,
            at: u64::try_from(at).map_err(|_| bad())?,
            state: ReservationState::parse(&state).ok_or_else(bad)?,
        })
    };
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
        prepared: optional("prepared", row.prepared)?,
        cause: row.cause,
        created_at: time(created_at)?,
        updated_at: time(updated_at)?,
        reservations: reservations.into_iter().map(reservation).collect::<Result<_, String>>()?,
        attempt,
        key,
        pairing,
        account,
        payee,
    };
    Ok(record)
}

/// A role as records write it.
fn read_role(text: &str) -> Option<Role> {
    [Role::Payment, Role::Agreement, Role::Voucher].into_iter().find(|role| role.as_str() == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored row of an attempt whose optional JSON columns hold these texts.
    fn row(stored: Option<&str>) -> Raw {
        let text = |t: &str| t.to_owned();
        Raw {
            text: ["attempt-1", "key-1", "payment", "x402/exact/eip155/eip3009", "eip155:1:0x1", "", "0x2"].map(text),
            purchase: stored.map(text),
            chosen: "{}".into(),
            quote: "{}".into(),
            states: ["answered", "settled", "not-started", "forbidden"].map(text),
            response: Some("received".into()),
            moving: false,
            payment: stored.map(text),
            answer: stored.map(text),
            decline: stored.map(text),
            cause: None,
            times: [1, 2],
            prepared: None,
        }
    }

    /// The fuzz target `journal_record`'s one finding (a row whose answer was the text `null` read as `Some(Null)`,
    /// and as `None` once written as JSON and read back): such a column reads as absent, and the record is the same
    /// after its JSON; a column of JSON other than `null` is kept as it is.
    #[test]
    fn a_stored_json_null_reads_as_absent_and_the_record_survives_its_json() {
        let mut raw = row(Some("null"));
        raw.text[5] = format!("0x{}", "ab".repeat(32));
        let read = record(raw, Vec::new()).unwrap();
        assert_eq!((&read.purchase, &read.payment, &read.answer, &read.decline), (&None, &None, &None, &None));
        let again: Record = serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
        assert_eq!(again, read);

        let mut raw = row(Some(r#"{"success":false}"#));
        raw.text[5] = format!("0x{}", "ab".repeat(32));
        let read = record(raw, Vec::new()).unwrap();
        assert_eq!(read.answer, Some(serde_json::json!({"success": false})));
        let again: Record = serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
        assert_eq!(again, read);
    }
}
