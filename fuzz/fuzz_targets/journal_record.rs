//! The journal's record reader (`terms::safety::journal::fuzzing::read_record`, the one function SQLite's and
//! PostgreSQL's rows are read by): a database is input the buyer does not control once it has been copied, restored,
//! edited by hand or written by another version, and a record read wrongly is a payment remembered wrongly.
//!
//! Input: one mode byte (bit 0: money may be moving), then the columns split on 0xFF in the row's order (attempt,
//! key, role, pairing, account, h, payee, purchase, chosen, quote, stage, payment state, execution, retry, response,
//! payment, answer, decline, cause, created, updated), then reservations, seven columns each (budget, scope, asset,
//! window, amount, at, state). An optional column that is empty or missing is absent; an integer column is its
//! text, or else its first eight bytes little-endian.
//!
//! Asserts, for a row that reads: every state, the role and each time are the column as stored (read exactly, never
//! by a default); H written out reads back as itself; each reservation's window, time and state are its columns; and
//! the record written as JSON (the CLI's `--json` and the MCP history) reads back as the same record. A row that
//! does not read is refused with a sentence naming its attempt.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terms::AtrHash;
use terms::safety::journal::Record;
use terms::safety::journal::fuzzing::{Columns, ReservationColumns, read_record};
use terms_fuzz::{parts, text};

fn int(part: &[u8]) -> i64 {
    text(part).parse().unwrap_or_else(|_| {
        let mut bytes = [0u8; 8];
        for (b, p) in bytes.iter_mut().zip(part) {
            *b = *p;
        }
        i64::from_le_bytes(bytes)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let all = parts(rest);
    let column = |i: usize| all.get(i).map(|p| text(p)).unwrap_or_default();
    let optional = |i: usize| Some(column(i)).filter(|t| !t.is_empty());
    let row = Columns {
        text: std::array::from_fn(column),
        purchase: optional(7),
        chosen: column(8),
        quote: column(9),
        states: std::array::from_fn(|i| column(10 + i)),
        response: optional(14),
        moving: mode & 1 != 0,
        payment: optional(15),
        answer: optional(16),
        decline: optional(17),
        cause: optional(18),
        times: [all.get(19).map_or(0, |p| int(p)), all.get(20).map_or(0, |p| int(p))],
        prepared: (mode & 2 != 0).then(|| column(8)),
    };
    let reservations: Vec<ReservationColumns> = all
        .get(21..)
        .unwrap_or_default()
        .chunks(7)
        .map(|r| {
            let c = |i: usize| r.get(i).map(|p| text(p)).unwrap_or_default();
            (c(0), c(1), c(2), r.get(3).map_or(0, |p| int(p)), c(4), r.get(5).map_or(0, |p| int(p)), c(6))
        })
        .collect();
    let attempt = row.text[0].clone();
    let stored = row.clone();
    let kept = reservations.clone();
    match read_record(row, reservations) {
        Ok(record) => check(&record, &stored, &kept),
        Err(message) => assert!(message.contains(&format!("attempt {attempt} ")), "{message:?}"),
    }
});

fn check(record: &Record, row: &Columns, reservations: &[ReservationColumns]) {
    assert_eq!(record.role.as_str(), row.text[2]);
    assert_eq!(AtrHash::parse(&record.h.to_hex()), Some(record.h));
    assert_eq!(record.stage.as_str(), row.states[0]);
    assert_eq!(record.payment_state.as_str(), row.states[1]);
    assert_eq!(record.execution.as_str(), row.states[2]);
    assert_eq!(record.retry.as_str(), row.states[3]);
    assert_eq!(record.response.map(|r| r.as_str()), row.response.as_deref());
    assert_eq!(record.moving, row.moving);
    assert_eq!((record.created_at, record.updated_at), (row.times[0] as u64, row.times[1] as u64));
    assert!(row.times.iter().all(|t| *t >= 0), "a negative time read: {:?}", row.times);
    assert_eq!(record.reservations.len(), reservations.len());
    for (got, stored) in record.reservations.iter().zip(reservations) {
        assert_eq!((got.window as i64, got.at as i64, got.state.as_str()), (stored.3, stored.5, stored.6.as_str()));
    }
    let json = serde_json::to_value(record).expect("a record writes as JSON");
    let again: Record = serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(&again, record, "the record changed through its JSON");
}
