//! A pending settlement (the x402 SDKs' `settlement_pending`: broadcast, not final, with its transaction hash) is a
//! payment made with its outcome unknown, on SQLite and on PostgreSQL: the answer (a 200 or a 402) is `query-first`,
//! charge `unknown`; the journal keeps the hash and the purchase `unknown`, `query-first`; a later `send` of the
//! purchase re-sends the identical payment (the seller answers it from its pending store) and signs nothing; and a
//! pending settlement that names no transaction, a hash of another network, another network, or success besides is
//! `operator-review`, never a reason to sign again.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;
mod support;

#[macro_use]
#[path = "backends/mod.rs"]
mod backends;

use std::sync::{Arc, Mutex};

use backends::Place;
use base64::Engine as _;
use serde_json::{Value, json};
use support::CountingSigner;
use terms::client::{Client, Incoming, Outcome, Outgoing, Reply, Settlement, Transport, TransportError};
use terms::safety::journal::{ExecutionState, PaymentState, ResponseState, RetryState, Stage};
use terms::safety::recovery::{Action, Charge};
use terms::{Body, BoxFuture, Fetch, FetchError, OneAccount, Request, Response};

on_both_backends!(
    a_200_with_a_pending_settlement_is_paid_unknown_and_keeps_the_hash,
    a_402_with_a_pending_settlement_is_paid_unknown_and_keeps_the_hash,
    pending_then_success_on_the_resend_settles_the_same_payment,
    a_pending_settlement_the_client_cannot_hold_to_the_payment_is_operator_review,
);

const URL: &str = "http://127.0.0.1:9/report";
/// The settlement transaction the seller broadcast (an EIP-155 transaction hash).
const TX: &str = "0x5e771e5e771e5e771e5e771e5e771e5e771e5e771e5e771e5e771e5e771e5e77";
const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A seller with a pending store: a request without payment is a 402 with the offer; the first time it sees a
/// payment it answers `first` (status and `PAYMENT-RESPONSE`); the same payment again is answered from the store
/// (a 200 settled with the same transaction) when `settles`, else `first` again; any other payment is a 402
/// refusing it (a seller never takes two payments for one purchase).
#[derive(Debug, Clone)]
struct PendingSeller {
    first: (u16, Value),
    settles: bool,
    payments: Arc<Mutex<Vec<String>>>,
}

impl PendingSeller {
    fn new(status: u16, response: Value, settles: bool) -> Self {
        Self { first: (status, response), settles, payments: Arc::default() }
    }

    fn payments(&self) -> Vec<String> {
        self.payments.lock().unwrap().clone()
    }

    fn answer(&self, request: &Outgoing) -> Incoming {
        let offer = seller::offer("127.0.0.1:9".parse().unwrap(), "/report").to_string();
        let Some(payment) = request.get("payment-signature") else {
            return incoming(402, "PAYMENT-REQUIRED", b64(&offer), "{}");
        };
        let mut payments = self.payments.lock().unwrap();
        let seen = payments.first().cloned();
        payments.push(payment.to_owned());
        let response = |status, value: &Value| incoming(status, "PAYMENT-RESPONSE", b64(&value.to_string()), "report");
        match seen {
            None => response(self.first.0, &self.first.1),
            Some(first) if first == payment && self.settles => response(200, &settled()),
            Some(first) if first == payment => response(self.first.0, &self.first.1),
            Some(_) => response(402, &json!({"success": false, "errorReason": "duplicate_payment"})),
        }
    }
}

fn incoming(status: u16, name: &str, value: String, body: &str) -> Incoming {
    Incoming { status, headers: vec![(name.to_owned(), value)], body: bytes::Bytes::copy_from_slice(body.as_bytes()) }
}

impl Transport for PendingSeller {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        let answer = self.answer(request);
        Box::pin(async move { Ok(answer) })
    }
}

/// Serves the seller's ATR to the gate.
struct Terms;

impl Fetch for Terms {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async { Ok(Response::new(200, vec![], Body::from_bytes(seller::ATR))) })
    }
}

/// The x402 SDKs' pending outcome, as their resource server writes it.
fn pending() -> Value {
    json!({"success": false, "errorReason": "settlement_pending", "errorMessage": "settlement_pending",
        "payer": PAYER, "network": seller::NETWORK, "transaction": TX})
}

fn settled() -> Value {
    json!({"success": true, "payer": PAYER, "network": seller::NETWORK, "transaction": TX, "amount": seller::AMOUNT})
}

struct World {
    seller: PendingSeller,
    signer: CountingSigner,
    journal: Arc<dyn backends::Journal>,
    client: Client,
}

async fn world(place: &Place, seller: PendingSeller) -> World {
    let journal = place.journal().await;
    let signer = CountingSigner::new(seller::KEY, &format!("{}:{PAYER}", seller::NETWORK));
    let client = Client::builder(OneAccount(Arc::new(signer.clone())))
        .transport(seller.clone())
        .fetch(Terms)
        .journal(journal.clone())
        .build()
        .unwrap();
    World { seller, signer, journal, client }
}

fn reply(outcome: &Outcome) -> &Reply {
    outcome.reply().unwrap_or_else(|| panic!("no answer: {outcome:?}"))
}

/// One `send` of the purchase: its reply, after checking it is paid with the outcome unknown (`query-first`).
async fn pending_send(w: &World, status: u16) -> Reply {
    let outcome = w.client.send(Outgoing::new("GET", URL).header("Idempotency-Key", "order-1")).await.unwrap();
    let r = reply(&outcome).clone();
    assert_eq!(r.status, status);
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::QueryFirst, Charge::Unknown), "{outcome:?}");
    assert!(!r.is_success());
    assert_eq!((r.states.payment, r.states.retry), (PaymentState::Unknown, RetryState::QueryFirst));
    assert_eq!(r.states.response, Some(ResponseState::Received));
    let paid = r.paid.as_ref().unwrap();
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{paid:?}") };
    assert!(s.is_pending() && !s.success);
    assert_eq!(s.transaction.as_deref(), Some(TX));
    r
}

/// The journal's record of the purchase: paid, unknown, asked after first, the transaction hash kept in its answer.
async fn recorded_pending(w: &World, key: &str, status: u16) {
    let record = w.journal.record(key).await.unwrap().unwrap();
    assert_eq!(
        (record.stage, record.payment_state, record.retry),
        (Stage::Answered, PaymentState::Unknown, RetryState::QueryFirst)
    );
    assert_eq!(record.response, Some(ResponseState::Received));
    let answer = record.answer.unwrap();
    assert_eq!(
        (answer["status"].as_u64(), answer["settlement"]["transaction"].as_str()),
        (Some(u64::from(status)), Some(TX))
    );
    assert_eq!(answer["settlement"]["errorReason"], "settlement_pending");
    // The reservation still counts: money may have moved.
    assert!(record.reservations.iter().all(|r| r.state == terms::safety::journal::ReservationState::Reserved));
}

async fn a_200_with_a_pending_settlement_is_paid_unknown_and_keeps_the_hash(place: Place) {
    let w = world(&place, PendingSeller::new(200, pending(), false)).await;
    let r = pending_send(&w, 200).await;
    // The seller answered with the work while the settlement is pending.
    assert_eq!(r.states.execution, ExecutionState::Completed);
    assert_eq!(&r.body[..], b"report");
    let paid = r.paid.as_ref().unwrap();
    recorded_pending(&w, &paid.key, 200).await;
    // Another send of the purchase re-sends the identical payment and signs nothing.
    let again = pending_send(&w, 200).await;
    assert!(again.paid.as_ref().unwrap().resent);
    assert_eq!(w.signer.count(), 1);
    let payments = w.seller.payments();
    assert_eq!((payments.len(), &payments[0]), (2, &payments[1]));
    recorded_pending(&w, &paid.key, 200).await;
}

async fn a_402_with_a_pending_settlement_is_paid_unknown_and_keeps_the_hash(place: Place) {
    let w = world(&place, PendingSeller::new(402, pending(), false)).await;
    let r = pending_send(&w, 402).await;
    assert_eq!(r.states.execution, ExecutionState::NotStarted);
    let key = r.paid.as_ref().unwrap().key.clone();
    recorded_pending(&w, &key, 402).await;
    for _ in 0..2 {
        let again = pending_send(&w, 402).await;
        assert!(again.paid.as_ref().unwrap().resent);
    }
    assert_eq!((w.signer.count(), w.journal.attempts(&key).await.unwrap().len()), (1, 1));
    let payments = w.seller.payments();
    assert!(payments.len() == 3 && payments.iter().all(|p| *p == payments[0]), "{payments:?}");
}

async fn pending_then_success_on_the_resend_settles_the_same_payment(place: Place) {
    let w = world(&place, PendingSeller::new(402, pending(), true)).await;
    let key = pending_send(&w, 402).await.paid.unwrap().key;
    let outcome = w.client.send(Outgoing::new("GET", URL).header("Idempotency-Key", "order-1")).await.unwrap();
    let r = reply(&outcome);
    assert!(r.is_success(), "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert!(paid.resent && paid.key == key);
    assert_eq!((r.states.payment, r.states.execution), (PaymentState::Settled, ExecutionState::Completed));
    assert_eq!(w.signer.count(), 1);
    let payments = w.seller.payments();
    assert_eq!((payments.len(), &payments[0]), (2, &payments[1]));
    let record = w.journal.record(&key).await.unwrap().unwrap();
    assert_eq!((record.payment_state, record.retry), (PaymentState::Settled, RetryState::Forbidden));
    assert_eq!(record.answer.unwrap()["settlement"]["transaction"], TX);
    assert!(record.reservations.iter().all(|r| r.state == terms::safety::journal::ReservationState::Committed));
}

async fn a_pending_settlement_the_client_cannot_hold_to_the_payment_is_operator_review(place: Place) {
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut v = pending();
        edit(&mut v);
        v
    };
    let solana_signature = "5".repeat(88);
    let cases = [
        ("no transaction", with(&|v| drop(v.as_object_mut().unwrap().remove("transaction")))),
        ("an empty transaction", with(&|v| v["transaction"] = json!(""))),
        ("a transaction that is not text", with(&|v| v["transaction"] = json!(5))),
        ("a hash of another network", with(&|v| v["transaction"] = json!(solana_signature))),
        ("a hash cut short", with(&|v| v["transaction"] = json!(&TX[..64]))),
        ("another network", with(&|v| v["network"] = json!("eip155:8453"))),
        ("another payer", with(&|v| v["payer"] = json!("0x0000000000000000000000000000000000000001"))),
        ("success and pending at once", with(&|v| v["success"] = json!(true))),
    ];
    for (status, (case, response)) in [200, 402].into_iter().flat_map(|s| cases.iter().map(move |c| (s, c))) {
        let w = world(&place.fresh().await, PendingSeller::new(status, response.clone(), true)).await;
        let outcome = w.client.send(Outgoing::new("GET", URL)).await.unwrap();
        let r = reply(&outcome);
        let recovery = r.recovery.unwrap();
        assert_eq!((recovery.action(), recovery.charge()), (Action::OperatorReview, Charge::Unknown), "{case}");
        assert_eq!((r.states.payment, r.states.retry), (PaymentState::Unknown, RetryState::Forbidden), "{case}");
        let paid = r.paid.as_ref().unwrap();
        assert!(paid.settlement.is_none(), "{case}");
        let record = w.journal.record(&paid.key).await.unwrap().unwrap();
        assert_eq!(record.payment_state, PaymentState::Unknown, "{case}");
        assert!(record.cause.unwrap_or_default().contains("PAYMENT-RESPONSE"), "{case}");
        // Never signed again: the next send re-sends what was signed.
        let again = w.client.send(Outgoing::new("GET", URL)).await.unwrap();
        assert!(reply(&again).paid.as_ref().unwrap().resent, "{case}");
        assert_eq!(w.signer.count(), 1, "{case}");
    }
}
