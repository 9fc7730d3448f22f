#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The journal on real files and a real server: on SQLite bad files, locks, a full and a read-only journal; on both
//! backends (SQLite and PostgreSQL, each test twice) leases, re-sends, budgets, and eight processes racing for one
//! budget; on PostgreSQL bad connection strings, schemas, rights, a dropped connection and a server restart.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use ruint::aliases::U256;
use serde_json::{Map, Value, json};
use terms::safety::journal::{
    HistoryFilter, JournalConfig, PaymentState, ReservationState, ResponseState, RetryState, SqliteJournal, Stage,
    Store,
};
use terms::safety::{Answered, Begun, Claim, Ended, Intent, SpendJournal};
use terms::{AtrHash, Chosen, DeclineCode, Declined, Moved, Quote, Reason, atr_hash};

// Each journal and budget test below runs on SQLite and on PostgreSQL.
#[macro_use]
#[path = "backends/mod.rs"]
mod backends;

// Eight processes racing for one budget, and the time of a payment's writes.
#[path = "journal/processes.rs"]
mod processes;

// Every state each end and answer names.
#[path = "journal/states.rs"]
mod states;

// One nonce per payer: a second purchase under one H, through a pairing whose nonce is H.
#[path = "journal/nonces.rs"]
mod nonces;

// Running totals per budget and bucket: windows across bucket edges, a clock going back, 2^256 - 1 twice, a total
// that disagrees with its rows (issue 46).
#[path = "journal/totals.rs"]
mod totals;

// A journal of schema version 2 migrated (and a migration killed midway); 32 connections at one budget (issue 46).
#[path = "journal/migration.rs"]
mod migration;

// SQLite alone: eight processes creating one file, a file stamped by another application, a write the disk refuses.
#[path = "journal/sqlite.rs"]
mod sqlite;

// PostgreSQL alone: bad connection strings, schemas, rights, a dropped connection, a server restart.
#[path = "journal/postgres.rs"]
mod postgres;

use backends::Place;

on_both_backends!(
    an_in_flight_attempt_blocks_until_its_lease_lapses_and_then_may_not_sign,
    a_moving_attempt_cut_short_blocks_with_state_unknown_past_any_lease,
    a_resend_returns_exactly_the_payment_signed_whatever_the_answer,
    budgets_release_what_was_not_paid_and_commit_what_settled,
    two_budgets_of_two_assets_never_mix,
    a_budget_window_rolls,
    amounts_near_two_to_the_256_sum_without_wrapping,
    history_filters_by_time_payee_and_state_newest_first,
    a_recorded_payment_stays_unknown_and_a_late_move_blocks_a_newer_attempt,
);

const ATR: &[u8] = b"# Terms of service\nThe seller's terms, version 1.\n";

/// What an intent borrows.
struct Fx {
    chosen: Chosen,
    quote: Quote,
    h: AtrHash,
    account: String,
}

fn fx() -> Fx {
    Fx {
        chosen: Chosen {
            pairing: "x402/exact/eip3009".into(),
            build_input: Map::from_iter([("option".to_string(), json!({"amount": "1"}))]),
            reference: "ref-0123456789abcdef0123456789ab".into(),
            agreement: None,
        },
        quote: Quote::new(U256::from(1), "0xAsset", "0xPayee", "eip155:8453", "exact"),
        h: atr_hash(ATR),
        account: "eip155:8453:0xBuyer".into(),
    }
}

fn intent<'a>(fx: &'a Fx, key: &'a str, attempt: &'a str, claims: &'a [Claim], at: u64) -> Intent<'a> {
    Intent::new(key, attempt, &fx.account, &fx.h, &fx.chosen, &fx.quote, at).with_claims(claims)
}

fn claim(budget: &str, asset: &str, window: u64, limit: U256, amount: U256) -> Claim {
    Claim::new(budget, "", asset, window, limit, amount)
}

fn day(limit: u64, amount: u64) -> Vec<Claim> {
    vec![claim("day", "eip155:8453/0xAsset", 86_400, U256::from(limit), U256::from(amount))]
}

/// What `begin` answered, as text to compare.
fn kind(begun: &Begun) -> String {
    match begun {
        Begun::Fresh => "fresh".into(),
        Begun::Resend { attempt, .. } => format!("resend {attempt}"),
        Begun::OverBudget(claim) => format!("over {}", claim.budget),
        Begun::Blocked(reason, _) => format!("blocked {reason}"),
        _ => "other".into(),
    }
}

fn payment() -> Value {
    json!({"x402Version": 2, "payload": {"signature": "0xabc", "authorization": {"value": "1", "nonce": "0x01"}},
           "z": 1.5e-7, "a": [1, "two", null, true], "big": 18446744073709551615u64, "ü": "ünïcode"})
}

fn declined() -> Declined {
    Declined::new(DeclineCode::SignerFailed, "the signer did not sign")
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn short(lease: u64, busy_ms: u64) -> JournalConfig {
    JournalConfig { lease_seconds: lease, busy_timeout: Duration::from_millis(busy_ms), ..JournalConfig::default() }
}

#[test]
fn a_file_that_is_not_a_database_is_refused_by_name() {
    let d = dir();
    for (name, garbage) in [("long", vec![b'x'; 8192]), ("short", b"not sqlite".to_vec())] {
        let path = d.path().join(name);
        std::fs::write(&path, &garbage).unwrap();
        let e = SqliteJournal::open(&path).unwrap_err();
        assert_eq!(e.0, format!("the journal file {} is not a SQLite database", path.display()), "{name}");
        // Nothing was written to it.
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
    }
    let e = SqliteJournal::open(d.path().join("no/such/dir/j.db")).unwrap_err();
    assert!(e.0.contains("cannot be opened"), "{e}");
}

#[test]
fn a_database_of_something_else_or_of_a_newer_schema_is_refused() {
    let d = dir();
    let other = d.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    let e = SqliteJournal::open(&other).unwrap_err();
    assert!(e.0.ends_with("cannot be used: it is a SQLite database of something else, not a journal"), "{e}");

    let newer = d.path().join("newer.db");
    drop(SqliteJournal::open(&newer).unwrap());
    rusqlite::Connection::open(&newer).unwrap().pragma_update(None, "user_version", 4).unwrap();
    let e = SqliteJournal::open(&newer).unwrap_err();
    assert!(e.0.contains("schema version 4, and this build reads version 3"), "{e}");

    // A journal opens again, as many times as asked, and prints its file and settings.
    let j = d.path().join("j.db");
    let printed = format!("{:?}", SqliteJournal::open(&j).unwrap());
    assert!(printed.starts_with(&format!("SqliteJournal {{ path: {j:?}, config: JournalConfig")), "{printed}");
    drop(SqliteJournal::open(&j).unwrap());
    drop(SqliteJournal::open_read_only(&j).unwrap());
}

#[tokio::test]
async fn a_journal_locked_by_another_process_refuses_the_write_and_records_nothing() {
    let d = dir();
    let path = d.path().join("j.db");
    let journal = SqliteJournal::open_with(&path, short(300, 100)).unwrap();
    let (locked, wait) = mpsc::channel();
    let (release, until) = mpsc::channel::<()>();
    let holder = {
        let path = path.clone();
        std::thread::spawn(move || {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
            locked.send(()).unwrap();
            until.recv().unwrap();
            conn.execute_batch("COMMIT").unwrap();
        })
    };
    wait.recv().unwrap();
    let f = fx();
    let claims = day(10, 1);
    let started = Instant::now();
    let e = journal.begin(&intent(&f, "k", "a1", &claims, 1000)).await.unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(90));
    assert_eq!(
        e.0,
        format!(
            "the journal file {} is locked by another process (it was not free within 100 ms): nothing was recorded",
            path.display()
        )
    );
    // Readers do not wait for the writer (WAL).
    assert!(journal.record("k").await.unwrap().is_none());
    release.send(()).unwrap();
    holder.join().unwrap();
    assert!(journal.record("k").await.unwrap().is_none());
    let use_ = journal.budget("day", "", "eip155:8453/0xAsset", 86_400, U256::from(10), 1000).await.unwrap();
    assert_eq!(use_.reserved, U256::ZERO);
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &claims, 1000)).await.unwrap()), "fresh");
}

#[tokio::test]
async fn a_full_journal_refuses_the_write_and_records_nothing() {
    let d = dir();
    let path = d.path().join("j.db");
    let config = JournalConfig { max_bytes: Some(96 * 1024), ..JournalConfig::default() };
    let journal = SqliteJournal::open_with(&path, config).unwrap();
    let small = fx();
    let claims = day(1000, 1);
    assert_eq!(kind(&journal.begin(&intent(&small, "k0", "a0", &claims, 1000)).await.unwrap()), "fresh");
    let mut big = fx();
    big.chosen.build_input.insert("pad".into(), Value::String("x".repeat(200 * 1024)));
    let e = journal.begin(&intent(&big, "k1", "a1", &claims, 1000)).await.unwrap_err();
    assert_eq!(e.0, format!("the journal file {} is full: nothing was recorded", path.display()));
    assert!(journal.record("k1").await.unwrap().is_none());
    assert_eq!(journal.history(&HistoryFilter::new()).await.unwrap().len(), 1);
    let use_ = journal.budget("day", "", "eip155:8453/0xAsset", 86_400, U256::from(1000), 1000).await.unwrap();
    assert_eq!(use_.reserved, U256::from(1));
    // What fits still goes in.
    assert_eq!(kind(&journal.begin(&intent(&small, "k2", "a2", &claims, 1000)).await.unwrap()), "fresh");
}

#[tokio::test]
async fn a_read_only_journal_refuses_every_write_and_reads_back() {
    let d = dir();
    let path = d.path().join("j.db");
    let f = fx();
    let claims = day(10, 1);
    {
        let journal = SqliteJournal::open(&path).unwrap();
        journal.begin(&intent(&f, "k", "a1", &claims, 1000)).await.unwrap();
        journal.signed("a1", ATR, &payment()).await.unwrap();
    }
    let journal = SqliteJournal::open_read_only(&path).unwrap();
    let e = journal.begin(&intent(&f, "k2", "a2", &claims, 1000)).await.unwrap_err();
    assert_eq!(e.0, format!("the journal file {} is read-only: nothing was recorded", path.display()));
    assert!(journal.answered("a1", Answered::Settled(&json!({"success": true}))).await.is_err());
    let record = journal.record("k").await.unwrap().unwrap();
    assert_eq!((record.payment_state, record.stage), (PaymentState::Unknown, Stage::Signed));
    assert!(journal.record("k2").await.unwrap().is_none());
    assert!(SqliteJournal::open_read_only(d.path().join("absent.db")).is_err());
}

async fn an_in_flight_attempt_blocks_until_its_lease_lapses_and_then_may_not_sign(place: Place) {
    let journal = place.open(short(60, 1000)).await;
    let f = fx();
    let claims = day(1, 1);
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &claims, 100)).await.unwrap()), "fresh");
    let Begun::Blocked(reason, why) = journal.begin(&intent(&f, "k", "a2", &claims, 159)).await.unwrap() else {
        panic!("not blocked")
    };
    assert_eq!(reason, Reason::InFlight);
    assert!(why.contains("a1") && why.contains("160"), "{why}");
    // At 160 the lease of a1 (100 + 60) has lapsed: a1 is not-paid, its reservation given back, a2 takes the budget.
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a2", &claims, 160)).await.unwrap()), "fresh");
    let e = journal.signed("a1", ATR, &payment()).await.unwrap_err();
    assert!(e.0.contains("its lease lapsed") && e.0.ends_with("nothing was recorded"), "{e}");
    assert!(journal.moving("a1").await.is_err());
    journal.signed("a2", ATR, &payment()).await.unwrap();
    let attempts = journal.attempts("k").await.unwrap();
    assert_eq!(attempts.len(), 2);
    let (a1, a2) = (&attempts[0], &attempts[1]);
    assert_eq!((a1.attempt.as_str(), a1.stage, a1.payment_state), ("a1", Stage::Lapsed, PaymentState::NotPaid));
    assert_eq!((a1.retry, a1.payment.is_none()), (RetryState::Safe, true));
    let cause = a1.cause.as_deref().unwrap_or_default();
    assert!(cause.starts_with("its lease lapsed at 160 with nothing signed"), "{cause}");
    assert_eq!(a1.reservations[0].state, ReservationState::Released);
    assert_eq!((a2.stage, a2.payment_state, a2.retry), (Stage::Signed, PaymentState::Unknown, RetryState::Forbidden));
    assert_eq!(a2.reservations[0].state, ReservationState::Reserved);
    assert_eq!(journal.record("k").await.unwrap().unwrap().attempt, "a2");
}

async fn a_moving_attempt_cut_short_blocks_with_state_unknown_past_any_lease(place: Place) {
    let journal = place.open(short(60, 1000)).await;
    let f = fx();
    let claims = day(5, 1);
    journal.begin(&intent(&f, "k", "a1", &claims, 100)).await.unwrap();
    journal.moving("a1").await.unwrap();
    for at in [101, 1_000_000] {
        let Begun::Blocked(reason, why) = journal.begin(&intent(&f, "k", "a2", &claims, at)).await.unwrap() else {
            panic!("not blocked")
        };
        assert_eq!(reason, Reason::StateUnknown);
        assert!(why.contains("a person must look"), "{why}");
    }
    let r = journal.record("k").await.unwrap().unwrap();
    assert!(r.moving && r.stage == Stage::Intent);
    // It still counts against its budget.
    let use_ = journal.budget("day", "", "eip155:8453/0xAsset", 86_400, U256::from(5), 200).await.unwrap();
    assert_eq!(use_.reserved, U256::from(1));
    // Once it signs (it came back after all), its payment is what is re-sent.
    journal.signed("a1", ATR, &payment()).await.unwrap();
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a2", &claims, 200)).await.unwrap()), "resend a1");
}

async fn a_resend_returns_exactly_the_payment_signed_whatever_the_answer(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let claims = day(5, 1);
    journal.begin(&intent(&f, "k", "a1", &claims, 100)).await.unwrap();
    // Bytes of another H are refused, and the attempt is still in flight.
    let e = journal.signed("a1", b"other terms", &payment()).await.unwrap_err();
    assert!(e.0.contains("not to its H"), "{e}");
    assert_eq!(journal.record("k").await.unwrap().unwrap().stage, Stage::Intent);
    journal.signed("a1", ATR, &payment()).await.unwrap();
    assert!(journal.signed("a1", ATR, &payment()).await.is_err(), "signed twice");
    assert_eq!(journal.atr(&f.h).await.unwrap().as_deref(), Some(ATR));
    assert_eq!(journal.atr(&atr_hash(b"x")).await.unwrap(), None);
    let answers = [
        Answered::Unknown("a timeout after 30 s"),
        Answered::Settled(&json!({"success": true, "transaction": "0x01"})),
        Answered::Unknown("a reset"),
    ];
    for (i, answer) in answers.into_iter().enumerate() {
        let Begun::Resend { attempt, payment: sent } =
            journal.begin(&intent(&f, "k", &format!("b{i}"), &claims, 200)).await.unwrap()
        else {
            panic!("no resend")
        };
        assert_eq!((attempt.as_str(), &*sent), ("a1", &payment()));
        assert_eq!(serde_json::to_string(&*sent).unwrap(), serde_json::to_string(&payment()).unwrap());
        journal.answered("a1", answer).await.unwrap();
    }
    let r = journal.record("k").await.unwrap().unwrap();
    // Settled stays settled; the last answer was lost.
    assert_eq!(
        (r.payment_state, r.response, r.retry),
        (PaymentState::Settled, Some(ResponseState::Lost), RetryState::Forbidden)
    );
    assert_eq!(r.answer, Some(json!({"success": true, "transaction": "0x01"})));
    assert_eq!(r.cause.as_deref(), Some("a reset"));
    assert_eq!(journal.attempts("k").await.unwrap().len(), 1, "no resend recorded a new attempt");
    // A settled payment does not take a later no-charge answer.
    assert!(journal.answered("a1", Answered::NotPaid(&json!({}))).await.is_err());
}

async fn budgets_release_what_was_not_paid_and_commit_what_settled(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let claims = day(3, 1);
    let asset = "eip155:8453/0xAsset";
    // Settled: committed.
    journal.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap();
    journal.signed("a1", ATR, &payment()).await.unwrap();
    journal.answered("a1", Answered::Settled(&json!({"success": true}))).await.unwrap();
    // Ended not paid: released, and the purchase may be signed for again.
    journal.begin(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap();
    journal.ended("a2", Ended::NotPaid(&declined())).await.unwrap();
    let r = journal.record("k2").await.unwrap().unwrap();
    assert_eq!(
        (r.payment_state, r.retry, r.reservations[0].state),
        (PaymentState::NotPaid, RetryState::Safe, ReservationState::Released)
    );
    assert_eq!(r.decline.as_ref().unwrap()["code"], "signer-failed");
    // Answered with no charge: released.
    journal.begin(&intent(&f, "k3", "a3", &claims, 100)).await.unwrap();
    journal.signed("a3", ATR, &payment()).await.unwrap();
    journal
        .answered("a3", Answered::NotPaid(&json!({"success": false, "errorReason": "insufficient_funds"})))
        .await
        .unwrap();
    assert!(journal.answered("a2", Answered::Settled(&json!({}))).await.is_err(), "a2 sent nothing");
    let use_ = journal.budget("day", "", asset, 86_400, U256::from(3), 100).await.unwrap();
    assert_eq!((use_.spent, use_.reserved, use_.remaining), (U256::from(1), U256::ZERO, U256::from(2)));
    // Ended after money may have moved: unknown, the reservation kept, the purchase blocked until asked.
    journal.begin(&intent(&f, "k4", "a4", &claims, 100)).await.unwrap();
    let moved = declined().with_moved(Some(Moved { signed: json!({"tx": "0x02"}), bytes: ATR.to_vec(), h: f.h }));
    journal.ended("a4", Ended::Moved(&moved)).await.unwrap();
    let r = journal.record("k4").await.unwrap().unwrap();
    assert_eq!(
        (r.payment_state, r.retry, r.reservations[0].state),
        (PaymentState::Unknown, RetryState::QueryFirst, ReservationState::Reserved)
    );
    assert_eq!(r.decline.as_ref().unwrap()["moved"]["signed"], json!({"tx": "0x02"}));
    let Begun::Blocked(reason, _) = journal.begin(&intent(&f, "k4", "a5", &claims, 100)).await.unwrap() else {
        panic!("not blocked")
    };
    assert_eq!(reason, Reason::StateUnknown);
    // k2 and k3 may be paid again: one more fits (1 spent, 1 reserved), the next does not.
    assert_eq!(kind(&journal.begin(&intent(&f, "k2", "a6", &claims, 100)).await.unwrap()), "fresh");
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a7", &claims, 100)).await.unwrap()), "over day");
    assert_eq!(journal.attempts("k3").await.unwrap().len(), 1, "over budget records nothing");
    let use_ = journal.budget("day", "", asset, 86_400, U256::from(3), 100).await.unwrap();
    assert_eq!((use_.spent, use_.reserved, use_.remaining), (U256::from(1), U256::from(2), U256::ZERO));
}

async fn two_budgets_of_two_assets_never_mix(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let a = vec![claim("usdc-day", "eip155:8453/0xA", 86_400, U256::from(2), U256::from(1))];
    let b = vec![claim("eurc-day", "eip155:8453/0xB", 86_400, U256::from(2), U256::from(1))];
    // The same budget name over another asset is another budget too.
    let a_named_b = vec![claim("usdc-day", "eip155:8453/0xB", 86_400, U256::from(2), U256::from(1))];
    for i in 0..2 {
        assert_eq!(
            kind(&journal.begin(&intent(&f, &format!("a{i}"), &format!("a{i}"), &a, 10)).await.unwrap()),
            "fresh"
        );
    }
    assert_eq!(kind(&journal.begin(&intent(&f, "a2", "a2", &a, 10)).await.unwrap()), "over usdc-day");
    for i in 0..2 {
        assert_eq!(
            kind(&journal.begin(&intent(&f, &format!("b{i}"), &format!("b{i}"), &b, 10)).await.unwrap()),
            "fresh"
        );
        assert_eq!(
            kind(&journal.begin(&intent(&f, &format!("c{i}"), &format!("c{i}"), &a_named_b, 10)).await.unwrap()),
            "fresh"
        );
    }
    assert_eq!(kind(&journal.begin(&intent(&f, "b2", "b2", &b, 10)).await.unwrap()), "over eurc-day");
    // Two claims on one payment: both must fit, and nothing is reserved when one does not.
    let both = [b[0].clone(), claim("total", "eip155:8453/0xB", 86_400, U256::from(9), U256::from(1))];
    assert_eq!(kind(&journal.begin(&intent(&f, "d", "d", &both, 10)).await.unwrap()), "over eurc-day");
    let total = journal.budget("total", "", "eip155:8453/0xB", 86_400, U256::from(9), 10).await.unwrap();
    assert_eq!(total.reserved, U256::ZERO);
    // Two claims on the same budget count together.
    let twice = vec![claim("x", "eip155:8453/0xA", 60, U256::from(3), U256::from(2)); 2];
    assert_eq!(kind(&journal.begin(&intent(&f, "e", "e", &twice, 10)).await.unwrap()), "over x");
}

async fn a_budget_window_rolls(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let claims = vec![claim("hour", "eip155:8453/0xAsset", 100, U256::from(1), U256::from(1))];
    journal.begin(&intent(&f, "k1", "a1", &claims, 1000)).await.unwrap();
    journal.signed("a1", ATR, &payment()).await.unwrap();
    journal.answered("a1", Answered::Settled(&json!({}))).await.unwrap();
    // (at - 100, at]: at 1099 the payment at 1000 counts, at 1100 it has left the window.
    assert_eq!(kind(&journal.begin(&intent(&f, "k2", "a2", &claims, 1099)).await.unwrap()), "over hour");
    let use_ = journal.budget("hour", "", "eip155:8453/0xAsset", 100, U256::from(1), 1099).await.unwrap();
    assert_eq!((use_.spent, use_.remaining), (U256::from(1), U256::ZERO));
    assert_eq!(kind(&journal.begin(&intent(&f, "k2", "a2", &claims, 1100)).await.unwrap()), "fresh");
    // A reservation dated after `at` (a clock ahead) counts: a payment at 1050 sees a2 (at 1100).
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &claims, 1050)).await.unwrap()), "over hour");
    // A window longer than the clock's time counts everything.
    let long = vec![claim("all", "eip155:8453/0xAsset", u64::MAX, U256::from(1), U256::from(1))];
    journal.begin(&intent(&f, "k4", "a4", &long, 5)).await.unwrap();
    assert_eq!(kind(&journal.begin(&intent(&f, "k5", "a5", &long, 5)).await.unwrap()), "over all");
}

async fn amounts_near_two_to_the_256_sum_without_wrapping(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let asset = "eip155:8453/0xAsset";
    let near = vec![claim("big", asset, 600, U256::MAX, U256::MAX - U256::from(1))];
    let two = vec![claim("big", asset, 600, U256::MAX, U256::from(2))];
    let one = vec![claim("big", asset, 600, U256::MAX, U256::from(1))];
    assert_eq!(kind(&journal.begin(&intent(&f, "k1", "a1", &near, 10)).await.unwrap()), "fresh");
    // MAX - 1 + 2 passes 2^256 - 1: over budget, not a wrapped small sum.
    assert_eq!(kind(&journal.begin(&intent(&f, "k2", "a2", &two, 10)).await.unwrap()), "over big");
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &one, 10)).await.unwrap()), "fresh");
    let use_ = journal.budget("big", "", asset, 600, U256::MAX, 10).await.unwrap();
    assert_eq!((use_.reserved, use_.remaining), (U256::MAX, U256::ZERO));
    let r = journal.record("k1").await.unwrap().unwrap();
    assert_eq!(r.reservations[0].amount, U256::MAX - U256::from(1));
    // Two more of MAX each: the stored sum is past 2^256 - 1, and every later claim is over budget.
    let max = vec![claim("wide", asset, 600, U256::MAX, U256::MAX)];
    assert_eq!(kind(&journal.begin(&intent(&f, "k4", "a4", &max, 10)).await.unwrap()), "fresh");
    let zero = vec![claim("wide", asset, 600, U256::MAX, U256::ZERO)];
    assert_eq!(kind(&journal.begin(&intent(&f, "k5", "a5", &zero, 10)).await.unwrap()), "fresh");
    assert_eq!(kind(&journal.begin(&intent(&f, "k6", "a6", &one.clone(), 10)).await.unwrap()), "over big");
    // A single amount above its limit never fits.
    let alone = vec![claim("small", asset, 600, U256::from(5), U256::from(6))];
    assert_eq!(kind(&journal.begin(&intent(&f, "k7", "a7", &alone, 10)).await.unwrap()), "over small");
}

async fn history_filters_by_time_payee_and_state_newest_first(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let mut f = fx();
    let claims = day(100, 1);
    for (i, at) in [10u64, 20, 30, 40].into_iter().enumerate() {
        if i == 3 {
            f.quote = Quote::new(U256::from(1), "0xAsset", "0xOther", "eip155:8453", "exact");
        }
        let (key, attempt) = (format!("k{i}"), format!("a{i}"));
        journal.begin(&intent(&f, &key, &attempt, &claims, at)).await.unwrap();
        if i % 2 == 0 {
            journal.signed(&attempt, ATR, &payment()).await.unwrap();
            journal.answered(&attempt, Answered::Settled(&json!({}))).await.unwrap();
        }
    }
    let names =
        |records: Vec<terms::safety::journal::Record>| records.into_iter().map(|r| r.attempt).collect::<Vec<_>>();
    assert_eq!(names(journal.history(&HistoryFilter::new()).await.unwrap()), ["a3", "a2", "a1", "a0"]);
    assert_eq!(names(journal.history(&HistoryFilter::new().limit(2)).await.unwrap()), ["a3", "a2"]);
    assert_eq!(names(journal.history(&HistoryFilter::new().since(20).until(40)).await.unwrap()), ["a2", "a1"]);
    assert_eq!(names(journal.history(&HistoryFilter::new().payee("0xOther")).await.unwrap()), ["a3"]);
    let settled = HistoryFilter::new().state(PaymentState::Settled);
    assert_eq!(names(journal.history(&settled).await.unwrap()), ["a2", "a0"]);
    let r = journal.record("k0").await.unwrap().unwrap();
    assert_eq!(r.chosen, serde_json::to_value(&f.chosen).unwrap());
    assert_eq!(r.quote["payee"], "0xPayee");
    assert_eq!((r.created_at, r.h, r.account.as_str()), (10, f.h, "eip155:8453:0xBuyer"));
    assert_eq!(journal.record("nobody").await.unwrap(), None);
}

async fn a_recorded_payment_stays_unknown_and_a_late_move_blocks_a_newer_attempt(place: Place) {
    let journal = place.open(short(60, 1000)).await;
    let f = fx();
    let claims = day(5, 1);
    // Declined with nothing moved after its payment was recorded: the payment may have been re-sent, so it stays.
    journal.begin(&intent(&f, "k", "a1", &claims, 100)).await.unwrap();
    journal.signed("a1", ATR, &payment()).await.unwrap();
    journal.ended("a1", Ended::NotPaid(&declined())).await.unwrap();
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a2", &claims, 100)).await.unwrap()), "resend a1");
    let r = journal.record("k").await.unwrap().unwrap();
    assert_eq!((r.payment_state, r.retry, r.stage), (PaymentState::Unknown, RetryState::Forbidden, Stage::Ended));
    assert!(journal.ended("a1", Ended::NotPaid(&declined())).await.is_err(), "ended twice");
    assert!(journal.ended("nobody", Ended::NotPaid(&declined())).await.unwrap_err().0.contains("not in the journal"));

    // b1 lapses, b2 takes the purchase and ends not paid; then b1 reports that money moved after all.
    journal.begin(&intent(&f, "m", "b1", &claims, 100)).await.unwrap();
    assert!(journal.answered("b1", Answered::Settled(&json!({}))).await.is_err(), "b1 sent nothing");
    journal.begin(&intent(&f, "m", "b2", &claims, 200)).await.unwrap();
    journal.ended("b2", Ended::NotPaid(&declined())).await.unwrap();
    let moved = declined().with_moved(Some(Moved { signed: json!({"tx": "0x03"}), bytes: ATR.to_vec(), h: f.h }));
    journal.ended("b1", Ended::Moved(&moved)).await.unwrap();
    let Begun::Blocked(reason, why) = journal.begin(&intent(&f, "m", "b3", &claims, 300)).await.unwrap() else {
        panic!("not blocked")
    };
    assert_eq!(reason, Reason::StateUnknown);
    assert!(why.contains("b1") && why.contains("ask the seller first"), "{why}");
    let b1 = &journal.attempts("m").await.unwrap()[0];
    assert_eq!((b1.payment_state, b1.reservations[0].state), (PaymentState::Unknown, ReservationState::Reserved));
    // Its seller then says it settled: still nothing to re-send, and the purchase is paid.
    journal.answered("b1", Answered::Settled(&json!({"success": true}))).await.unwrap();
    let Begun::Blocked(reason, _) = journal.begin(&intent(&f, "m", "b3", &claims, 300)).await.unwrap() else {
        panic!("not blocked")
    };
    assert_eq!(reason, Reason::StateUnknown);
}
