//! Each end and answer moves a record to every state it names, not only the ones an earlier step happened to leave
//! right: an attempt that told the journal its signer moves money and then failed is not paid and safe to retry; an
//! end after the payment was recorded keeps why it stays unknown; an end after an answer is refused; a settlement
//! after an end where money may have moved forbids a retry, and so does no answer after it; a queued answer is
//! settled, queued, kept, its reservation committed, and asked after first; a pending one is unknown, kept with its
//! hash, its reservation counting, and asked after first.

use serde_json::json;
use terms::Moved;
use terms::safety::journal::{ExecutionState, JournalConfig, PaymentState, ReservationState, RetryState, Stage};
use terms::safety::{Answered, Ended, Role};

use super::backends::Place;
use super::{ATR, day, declined, fx, intent, payment};

on_both_backends!(each_end_and_answer_sets_every_state_it_names);

async fn each_end_and_answer_sets_every_state_it_names(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let claims = day(10, 1);
    let state = |r: &terms::safety::journal::Record| (r.stage, r.payment_state, r.retry);

    // Told it was moving (unknown, ask first), then ended with nothing moved: not paid, safe to try again.
    journal.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap();
    journal.moving("a1").await.unwrap();
    journal.ended("a1", Ended::NotPaid(&declined())).await.unwrap();
    let r = journal.record("k1").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Ended, PaymentState::NotPaid, RetryState::Safe));

    // Ended after its payment was recorded: it stays unknown, and says why. Writes after the intent carry the
    // system clock's time; the record reads back its role.
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    journal.begin(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap();
    journal.signed("a2", ATR, &payment()).await.unwrap();
    let r = journal.record("k2").await.unwrap().unwrap();
    assert_eq!((r.role, r.created_at), (Role::Payment, 100));
    assert!(r.updated_at >= before, "a write after the intent at {}, before {before}", r.updated_at);
    journal.ended("a2", Ended::NotPaid(&declined())).await.unwrap();
    let r = journal.record("k2").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Ended, PaymentState::Unknown, RetryState::Forbidden));
    let cause = r.cause.unwrap_or_default();
    assert!(cause.starts_with("declined without moving money after its payment was recorded"), "{cause}");

    // Answered with no charge, then ended: the answer stands, and the end is refused.
    journal.begin(&intent(&f, "k3", "a3", &claims, 100)).await.unwrap();
    journal.signed("a3", ATR, &payment()).await.unwrap();
    journal.answered("a3", Answered::NotPaid(&json!({"success": false}))).await.unwrap();
    let e = journal.ended("a3", Ended::NotPaid(&declined())).await.unwrap_err();
    assert!(e.0.contains("attempt a3 was answered already"), "{e}");
    let r = journal.record("k3").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Answered, PaymentState::NotPaid, RetryState::Safe));
    assert_eq!(r.answer, Some(json!({"success": false})));

    // Ended after money may have moved (unknown, ask first), then settled: never to be sent again.
    journal.begin(&intent(&f, "k4", "a4", &claims, 100)).await.unwrap();
    let moved = declined().with_moved(Some(Moved { signed: json!({"tx": "0x04"}), bytes: ATR.to_vec(), h: f.h }));
    journal.ended("a4", Ended::Moved(&moved)).await.unwrap();
    assert_eq!(state(&journal.record("k4").await.unwrap().unwrap()).2, RetryState::QueryFirst);
    journal.answered("a4", Answered::Settled(&json!({"success": true}))).await.unwrap();
    let r = journal.record("k4").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Answered, PaymentState::Settled, RetryState::Forbidden));

    // Queued (a 202 with a job id): settled, its execution queued, the job asked after before anything else.
    journal.begin(&intent(&f, "k5", "a5", &claims, 100)).await.unwrap();
    journal.signed("a5", ATR, &payment()).await.unwrap();
    journal.answered("a5", Answered::Queued(&json!({"jobId": "j-1"}))).await.unwrap();
    let r = journal.record("k5").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Answered, PaymentState::Settled, RetryState::QueryFirst));
    assert_eq!(r.execution, ExecutionState::Queued);
    assert_eq!((r.answer, r.reservations[0].state), (Some(json!({"jobId": "j-1"})), ReservationState::Committed));

    // Ended where money may have moved (ask first), then no answer came: unknown, and only to be re-sent.
    journal.begin(&intent(&f, "k6", "a6", &claims, 100)).await.unwrap();
    journal.ended("a6", Ended::Moved(&moved)).await.unwrap();
    journal.answered("a6", Answered::Unknown("a timeout after 30 s")).await.unwrap();
    let r = journal.record("k6").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Answered, PaymentState::Unknown, RetryState::Forbidden));
    assert_eq!(r.cause.as_deref(), Some("a timeout after 30 s"));

    // Pending (broadcast, not final): unknown, asked after first, the answer with its transaction hash kept and the
    // reservation still counting; a settled attempt does not take a later pending answer.
    let pending = json!({"success": false, "errorReason": "settlement_pending", "transaction": "0x07"});
    journal.begin(&intent(&f, "k7", "a7", &claims, 100)).await.unwrap();
    journal.signed("a7", ATR, &payment()).await.unwrap();
    journal.answered("a7", Answered::Pending(&pending)).await.unwrap();
    let r = journal.record("k7").await.unwrap().unwrap();
    assert_eq!(state(&r), (Stage::Answered, PaymentState::Unknown, RetryState::QueryFirst));
    assert_eq!((r.answer.as_ref(), r.reservations[0].state), (Some(&pending), ReservationState::Reserved));
    assert_eq!(r.response, Some(terms::safety::journal::ResponseState::Received));
    let e = journal.answered("a5", Answered::Pending(&pending)).await.unwrap_err();
    assert!(e.0.contains("attempt a5 settled"), "{e}");
    assert_eq!(state(&journal.record("k5").await.unwrap().unwrap()).1, PaymentState::Settled);
}

on_both_backends!(an_attempt_named_twice_is_refused_and_nothing_is_recorded);

/// An attempt's name is the journal's key for it: a second begin under a name it holds (for another purchase) is
/// refused, and neither the attempt nor its reservation is recorded twice.
async fn an_attempt_named_twice_is_refused_and_nothing_is_recorded(place: Place) {
    let journal = place.open(JournalConfig::default()).await;
    let f = fx();
    let claims = day(10, 1);
    journal.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap();
    let e = journal.begin(&intent(&f, "k2", "a1", &claims, 100)).await.unwrap_err();
    assert_eq!(e.0, "attempt a1 is already in the journal: nothing was recorded");
    assert!(journal.record("k2").await.unwrap().is_none());
    assert_eq!(journal.attempts("k1").await.unwrap().len(), 1);
    let used = journal.budget("day", "", "eip155:8453/0xAsset", 86_400, terms::U256::from(10), 100).await.unwrap();
    assert_eq!(used.reserved, terms::U256::from(1));
}
