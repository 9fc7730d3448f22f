//! `terms::client` against the stand-in seller on a real loopback socket (`examples/support/seller.rs`, which checks
//! the EIP-3009 signature and that the nonce is H), and its bad input against an in-memory transport: one call pays
//! a 402 end to end, a sent payment is only ever re-sent byte for byte, a 402 after paying is a settlement failure,
//! and nothing is signed for an offer the client cannot read or terms that do not hash to H.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use seller::Seller;
use serde_json::json;
use terms::client::{Client, ClientError, Incoming, Outcome, Outgoing, Settlement, Transport, TransportError};
use terms::http::LoopbackFetch;
use terms::safety::journal::{ExecutionState, PaymentState, ResponseState, RetryState, SqliteJournal, Store};
use terms::safety::recovery::{Action, Charge};
use terms::{
    Answer, Body, BoxFuture, DeclineCode, EvmKey, Fetch, FetchError, Request, Response, Signer, SignerError,
    SigningRequest, Wallet,
};

/// The local key, counting what it signs.
#[derive(Debug, Clone)]
struct Counting {
    key: EvmKey,
    signed: Arc<AtomicUsize>,
}

impl Counting {
    fn new() -> Self {
        Self { key: EvmKey::from_hex(seller::KEY).unwrap(), signed: Arc::default() }
    }
    fn count(&self) -> usize {
        self.signed.load(Ordering::SeqCst)
    }
}

struct CountingSigner(Arc<dyn Signer>, Arc<AtomicUsize>);

impl Signer for CountingSigner {
    fn account(&self) -> &str {
        self.0.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.sign(request)
    }
}

impl Wallet for Counting {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        let inner = self.key.on(network)?;
        Some(Arc::new(CountingSigner(inner, self.signed.clone())))
    }
}

const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

struct World {
    seller: Seller,
    wallet: Counting,
    journal: Arc<SqliteJournal>,
    client: Client,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let seller = Seller::start().await;
    let wallet = Counting::new();
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap());
    let fetch = LoopbackFetch::new().unwrap().route(seller::HOST, seller.addr).unwrap();
    let client = Client::builder(wallet.clone())
        .journal(journal.clone())
        .fetch(fetch)
        .backoff(Duration::from_millis(10))
        .build()
        .unwrap();
    World { seller, wallet, journal, client, _dir: dir }
}

fn get(w: &World, path: &str) -> Outgoing {
    Outgoing::new("GET", w.seller.url(path))
}

fn reply(outcome: &Outcome) -> &terms::client::Reply {
    outcome.reply().unwrap_or_else(|| panic!("no answer: {outcome:?}"))
}

#[tokio::test]
async fn a_402_is_paid_end_to_end_and_the_settlement_read() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/report")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..], format!("the report for {PAYER}").as_bytes());
    assert!(r.is_success() && r.recovery.is_none(), "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.sends, paid.resent), ("x402/exact/eip155/eip3009", 1, false));
    assert_eq!(paid.h.to_hex(), seller::h());
    assert_eq!(paid.header.0, "PAYMENT-SIGNATURE");
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{paid:?}") };
    assert!(s.success);
    assert_eq!(s.payer.as_deref(), Some(PAYER));
    assert_eq!((s.network.as_deref(), s.amount.as_deref()), (Some(seller::NETWORK), Some(seller::AMOUNT)));
    assert_eq!(s.transaction.as_deref(), Some("0x5e771e"));
    assert_eq!(r.states.payment, PaymentState::Settled);
    assert_eq!(r.states.execution, ExecutionState::Completed);
    assert_eq!((r.states.response, r.states.retry), (Some(ResponseState::Received), RetryState::Forbidden));
    // One signature, one ATR fetch, one paid request carrying the purchase's key, which the journal holds settled.
    assert_eq!(w.wallet.count(), 1);
    assert_eq!(w.seller.hits(&format!("/atr/{}", seller::h())), 1);
    assert_eq!(w.seller.paid("/report"), 1);
    assert_eq!(w.seller.seen.lock().unwrap().keys, vec![paid.key.clone()]);
    let record = w.journal.record(&paid.key).await.unwrap().unwrap();
    assert_eq!(record.payment_state, PaymentState::Settled);
    assert_eq!(record.answer.unwrap()["settlement"]["payer"], PAYER);
}

#[tokio::test]
async fn a_request_the_seller_does_not_charge_for_is_answered_unpaid() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/free")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!((r.status, r.paid.is_none(), r.recovery), (200, true, None));
    assert_eq!(r.states.payment, PaymentState::NotPaid);
    assert_eq!(w.wallet.count(), 0);
}

#[tokio::test]
async fn a_202_keeps_the_job_id_and_execution_queued() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/job")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 202);
    let paid = r.paid.as_ref().unwrap();
    assert_eq!(paid.job.as_deref(), Some("job-1"));
    assert_eq!(r.states.execution, ExecutionState::Queued);
    assert_eq!(r.states.payment, PaymentState::Settled);
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::QueryFirst, Charge::Yes));
    let record = w.journal.record(&paid.key).await.unwrap().unwrap();
    assert_eq!((record.execution, record.retry), (ExecutionState::Queued, RetryState::QueryFirst));
    assert_eq!(record.answer.unwrap()["job"], "job-1");
}

#[tokio::test]
async fn a_402_answering_the_payment_is_a_settlement_failure_with_its_reason_never_signed_again() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/refuse")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 402);
    let paid = r.paid.as_ref().unwrap();
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{paid:?}") };
    assert_eq!((s.success, s.error_reason.as_deref()), (false, Some("insufficient_funds")));
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::DoNotRetry, Charge::No));
    assert_eq!(r.states.payment, PaymentState::NotPaid);
    assert_eq!((w.wallet.count(), w.seller.paid("/refuse"), paid.sends), (1, 1, 1));
    let record = w.journal.record(&paid.key).await.unwrap().unwrap();
    assert_eq!(record.payment_state, PaymentState::NotPaid);
}

#[tokio::test]
async fn a_seller_that_answers_402_to_every_payment_gets_one_and_a_second_call_resends_it() {
    let w = world().await;
    let first = w.client.send(get(&w, "/always402")).await.unwrap();
    let r = reply(&first);
    assert_eq!(r.status, 402);
    let paid = r.paid.as_ref().unwrap();
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{paid:?}") };
    assert_eq!(s.error_reason.as_deref(), Some("unexpected_settle_error"));
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::QueryFirst, Charge::Unknown));
    assert_eq!((w.wallet.count(), w.seller.paid("/always402")), (1, 1));
    // The purchase's state is unknown: the next call re-sends the journal's bytes, and signs nothing.
    let second = w.client.send(get(&w, "/always402")).await.unwrap();
    let again = reply(&second).paid.as_ref().unwrap();
    assert!(again.resent);
    assert_eq!((w.wallet.count(), w.seller.paid("/always402")), (1, 2));
    let payments = w.seller.payments();
    assert_eq!(payments[0], payments[1]);
}

#[tokio::test]
async fn a_5xx_after_payment_resends_the_same_payment_after_retry_after() {
    let w = world().await;
    let started = std::time::Instant::now();
    let outcome = w.client.send(get(&w, "/flaky")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 200, "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.sends, paid.waited), (2, Duration::from_secs(1)));
    assert!(started.elapsed() >= Duration::from_secs(1));
    let payments = w.seller.payments();
    assert_eq!(payments.len(), 2);
    assert_eq!(payments[0], payments[1], "the re-send is the same payment");
    assert_eq!(w.wallet.count(), 1);
}

#[tokio::test]
async fn a_connection_dropped_after_payment_resends_it_and_gets_the_cached_answer() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/drop")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 200, "{outcome:?}");
    assert_eq!(&r.body[..], format!("the report for {PAYER}").as_bytes());
    let paid = r.paid.as_ref().unwrap();
    assert_eq!(paid.sends, 2);
    let payments = w.seller.payments();
    assert_eq!(payments[0], payments[1]);
    // The seller settled once: the second answer is the one it kept for the payment-identifier.
    assert_eq!(w.seller.seen.lock().unwrap().nonces.len(), 1);
    assert_eq!(w.wallet.count(), 1);
}

#[tokio::test]
async fn the_same_idempotency_key_with_another_body_is_409_and_nothing_is_signed_for_it() {
    let w = world().await;
    let post = |body: &'static str| get(&w, "/report").header("Idempotency-Key", "order-7").body(body);
    let mut first = post("a");
    first.method = "POST".into();
    let outcome = w.client.send(first).await.unwrap();
    let paid = reply(&outcome).paid.as_ref().unwrap();
    assert_eq!(paid.key, "order-7");
    assert_eq!(w.seller.seen.lock().unwrap().keys, vec!["order-7".to_owned()]);
    let mut second = post("b");
    second.method = "POST".into();
    let outcome = w.client.send(second).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 409);
    let recovery = r.recovery.unwrap();
    assert_eq!(recovery.action(), Action::DoNotRetry);
    assert_eq!(w.wallet.count(), 1);
}

#[tokio::test]
async fn a_seller_that_swaps_its_atr_is_hash_mismatch_and_nothing_is_signed_or_sent() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/swap")).await.unwrap();
    let Outcome::Refused(refused) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(refused.declined.code, DeclineCode::HashMismatch);
    assert_eq!((refused.recovery.action(), refused.recovery.charge()), (Action::DoNotRetry, Charge::No));
    assert_eq!((w.wallet.count(), w.seller.paid("/swap")), (0, 0));
}

#[tokio::test]
async fn a_redirect_answering_the_paid_request_is_not_followed() {
    let w = world().await;
    let outcome = w.client.send(get(&w, "/redirect")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 302);
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::OperatorReview, Charge::Unknown));
    assert_eq!(w.seller.hits("/elsewhere"), 0, "the payment never went to the redirect's target");
    assert_eq!(r.states.payment, PaymentState::Unknown);
}

#[tokio::test]
async fn an_mpp_402_is_paid_with_authorization_payment_and_the_receipt_read() {
    let w = world().await;
    // The evm charge's token domain is the buyer's input (the challenge does not name it).
    let inputs = json!({"tokenDomain": {"name": "USDC", "version": "2"}});
    let options = w.client.options().clone().inputs(inputs.as_object().cloned().unwrap());
    let outcome = w.client.send_with(get(&w, "/mpp"), &options).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 200, "{outcome:?}");
    assert_eq!(&r.body[..], format!("the report for {PAYER}").as_bytes());
    assert!(r.is_success(), "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.sends), ("mpp/charge/evm/authorization", 1));
    assert_eq!(paid.h.to_hex(), seller::h());
    assert_eq!(paid.header.0, "Authorization");
    assert!(paid.header.1.starts_with("Payment "), "{}", paid.header.1);
    // The first challenge in the offer's order that the key pays: chain 1's, at position 0.
    let credential = terms::mpp::decode_credential(&paid.header.1).unwrap();
    let h = terms::atr_hash(seller::ATR);
    assert_eq!(credential["challenge"]["id"], terms::mpp::challenge_id(&h, 0).unwrap());
    assert_eq!(paid.account, format!("eip155:{}:{PAYER}", seller::MPP_CHAINS[0]));
    // The receipt, read: its reference is the signed nonce, the challenge hash.
    let Some(Settlement::Mpp { receipt }) = &paid.settlement else { panic!("{paid:?}") };
    assert_eq!((receipt["status"].as_str(), receipt["method"].as_str()), (Some("success"), Some("evm")));
    let nonce = format!(
        "0x{}",
        hex::encode(terms::mpp::challenge_hash(credential["challenge"]["id"].as_str().unwrap(), seller::REALM))
    );
    assert_eq!(receipt["reference"], nonce);
    assert_eq!(w.seller.seen.lock().unwrap().nonces, vec![nonce]);
    assert_eq!(r.states.payment, PaymentState::Settled);
    assert_eq!(r.states.execution, ExecutionState::Completed);
    assert_eq!((w.wallet.count(), w.seller.paid("/mpp")), (1, 1));
    assert_eq!(w.seller.seen.lock().unwrap().keys, vec![paid.key.clone()]);
    let record = w.journal.record(&paid.key).await.unwrap().unwrap();
    assert_eq!(record.payment_state, PaymentState::Settled);
    assert_eq!(record.answer.unwrap()["settlement"]["receipt"]["reference"], receipt["reference"]);
}

#[tokio::test]
async fn an_mpp_credential_the_seller_refuses_is_a_402_answer_never_signed_again() {
    // Without the buyer's token domain the gate declines before signing: nothing is sent.
    let w = world().await;
    let outcome = w.client.send(get(&w, "/mpp")).await.unwrap();
    let Outcome::Refused(refused) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(refused.pairing.as_deref(), Some("mpp/charge/evm/authorization"));
    assert_eq!((w.wallet.count(), w.seller.paid("/mpp")), (0, 0));
    // With another token domain the signature recovers to someone else: the seller answers 402, the client reads it
    // as the payment's answer and does not sign again.
    let inputs = json!({"tokenDomain": {"name": "USD Coin", "version": "2"}});
    let options = w.client.options().clone().inputs(inputs.as_object().cloned().unwrap());
    let outcome = w.client.send_with(get(&w, "/mpp"), &options).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 402, "{outcome:?}");
    assert!(String::from_utf8_lossy(&r.body).contains("the signature is not the payer's"), "{outcome:?}");
    assert!(r.paid.as_ref().unwrap().settlement.is_none());
    assert_ne!(r.states.payment, PaymentState::Settled);
    assert_eq!((w.wallet.count(), w.seller.paid("/mpp")), (1, 1));
}

// ---- bad input, against an in-memory transport ----

/// Answers each send from a script (the last answer repeated), and records what it was sent.
#[derive(Debug, Default, Clone)]
struct Scripted {
    script: Arc<Mutex<VecDeque<Step>>>,
    sent: Arc<Mutex<Vec<Outgoing>>>,
}

#[derive(Debug, Clone)]
enum Step {
    Answer(Incoming),
    Fail,
    Hang,
}

fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Step {
    Step::Answer(Incoming {
        status,
        headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
        body: bytes::Bytes::copy_from_slice(body.as_bytes()),
    })
}

impl Scripted {
    fn new(steps: Vec<Step>) -> Self {
        Self { script: Arc::new(Mutex::new(steps.into())), sent: Arc::default() }
    }
    fn sent(&self) -> Vec<Outgoing> {
        self.sent.lock().unwrap().clone()
    }
}

impl Transport for Scripted {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        self.sent.lock().unwrap().push(request.clone());
        let step = {
            let mut script = self.script.lock().unwrap();
            if script.len() > 1 { script.pop_front() } else { script.front().cloned() }
        };
        Box::pin(async move {
            match step {
                Some(Step::Answer(a)) => Ok(a),
                Some(Step::Fail) | None => Err(TransportError("connection reset".into())),
                Some(Step::Hang) => std::future::pending().await,
            }
        })
    }
}

/// Serves the seller's ATR to the gate.
struct Terms;

impl Fetch for Terms {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async { Ok(Response::new(200, vec![], Body::from_bytes(seller::ATR))) })
    }
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn offer_header() -> String {
    b64(&seller::offer("127.0.0.1:9".parse().unwrap(), "/report").to_string())
}

fn scripted(steps: Vec<Step>) -> (Scripted, Counting, Client) {
    let transport = Scripted::new(steps);
    let wallet = Counting::new();
    let client = Client::builder(wallet.clone()).transport(transport.clone()).fetch(Terms).build().unwrap();
    (transport, wallet, client)
}

async fn refused_with(steps: Vec<Step>) -> (terms::Declined, Counting) {
    let (_, wallet, client) = scripted(steps);
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let Outcome::Refused(r) = outcome else { panic!("{outcome:?}") };
    assert_eq!((r.recovery.action(), r.recovery.charge()), (Action::DoNotRetry, Charge::No));
    (r.declined, wallet)
}

#[tokio::test]
async fn an_offer_that_is_not_base64_not_json_v1_or_absent_declines_and_signs_nothing() {
    let v1 = r#"{"x402Version":1,"accepts":[{"scheme":"exact","network":"base-sepolia"}]}"#;
    let cases = [
        (answer(402, &[("PAYMENT-REQUIRED", "%%% not base64")], ""), "x402/header-malformed"),
        (answer(402, &[("PAYMENT-REQUIRED", &b64("{not json"))], ""), "x402/header-malformed"),
        (answer(402, &[("PAYMENT-REQUIRED", &b64(v1))], ""), "x402/not-v2"),
        (answer(402, &[], v1), "x402/not-v2"),
        (answer(402, &[("X-PAYMENT-RESPONSE", "e30=")], "{}"), "x402/not-v2"),
        (answer(402, &[], "pay up"), "client/no-offer"),
    ];
    for (step, detail) in cases {
        let (declined, wallet) = refused_with(vec![step]).await;
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::OfferUnreadable, detail));
        assert_eq!(wallet.count(), 0);
    }
}

#[tokio::test]
async fn an_offer_on_no_network_the_wallet_pays_is_no_payable_option() {
    let mut doc = seller::offer("127.0.0.1:9".parse().unwrap(), "/report");
    doc["accepts"][0]["network"] = json!("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    let (declined, wallet) = refused_with(vec![answer(402, &[("PAYMENT-REQUIRED", &b64(&doc.to_string()))], "")]).await;
    assert_eq!(declined.code, DeclineCode::NoPayableOption);
    assert!(declined.cause.unwrap().contains("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"));
    assert_eq!(wallet.count(), 0);
}

#[tokio::test]
async fn the_first_option_in_document_order_on_a_network_the_key_pays_is_chosen() {
    // An option on Solana first (no pairing of this wallet), then Base Sepolia, then Base: one key pays both EVM
    // chains, and the earlier one in the document is paid.
    let mut doc = seller::offer("127.0.0.1:9".parse().unwrap(), "/report");
    let base_sepolia = doc["accepts"][0].clone();
    let mut solana = base_sepolia.clone();
    solana["network"] = json!("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");
    let mut base = base_sepolia.clone();
    base["network"] = json!("eip155:8453");
    doc["accepts"] = json!([solana, base, base_sepolia]);
    let header = b64(&doc.to_string());
    let (transport, _, client) =
        scripted(vec![answer(402, &[("PAYMENT-REQUIRED", &header)], ""), answer(200, &[], "ok")]);
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let paid = reply(&outcome).paid.clone().unwrap();
    assert_eq!(paid.account, format!("eip155:8453:{PAYER}"));
    let sent = transport.sent();
    let payment = base64::engine::general_purpose::STANDARD.decode(sent[1].get("payment-signature").unwrap()).unwrap();
    let payment: serde_json::Value = serde_json::from_slice(&payment).unwrap();
    assert_eq!(payment["accepted"]["network"], "eip155:8453");
}

#[tokio::test]
async fn a_settlement_response_that_is_not_base64_or_names_another_network_or_payer_is_operator_review() {
    let other_payer = b64(r#"{"success":true,"payer":"0x0000000000000000000000000000000000000001"}"#);
    let other_network =
        b64(r#"{"success":true,"network":"eip155:1","payer":"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"}"#);
    for header in ["%%%", other_payer.as_str(), other_network.as_str()] {
        let (transport, wallet, client) = scripted(vec![
            answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""),
            answer(200, &[("PAYMENT-RESPONSE", header)], "the report"),
        ]);
        let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
        let r = reply(&outcome);
        let recovery = r.recovery.unwrap();
        assert_eq!((recovery.action(), recovery.charge()), (Action::OperatorReview, Charge::Unknown), "{header}");
        assert_eq!(r.states.payment, PaymentState::Unknown);
        assert!(r.paid.as_ref().unwrap().settlement.is_none());
        assert_eq!((wallet.count(), transport.sent().len()), (1, 2));
    }
}

#[tokio::test]
async fn a_body_too_large_to_resend_is_refused_before_anything_is_sent() {
    let (transport, wallet, _) = scripted(vec![answer(200, &[], "")]);
    let client = Client::builder(wallet.clone()).transport(transport.clone()).fetch(Terms).max_body(4).build().unwrap();
    let request = Outgoing::new("POST", "http://127.0.0.1:9/report").body("12345");
    let error = client.send(request).await.unwrap_err();
    assert_eq!(error, ClientError::BodyTooLarge { size: 5, limit: 4 });
    assert!(transport.sent().is_empty());
    assert_eq!(wallet.count(), 0);
}

#[tokio::test(start_paused = true)]
async fn each_resend_waits_the_sellers_retry_after_and_stops_after_three() {
    let busy = answer(503, &[("Retry-After", "2")], "busy");
    let (transport, wallet, client) =
        scripted(vec![answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""), busy.clone(), busy.clone(), busy]);
    let started = tokio::time::Instant::now();
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 503);
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.sends, paid.waited), (4, Duration::from_secs(6)));
    assert!(started.elapsed() >= Duration::from_secs(6));
    let recovery = r.recovery.unwrap();
    assert_eq!((recovery.action(), recovery.charge()), (Action::ResendSamePayment, Charge::Unknown));
    let sent = transport.sent();
    assert_eq!(sent.len(), 5);
    assert!(sent[2..].iter().all(|s| s == &sent[1]), "every re-send is the same request");
    assert_eq!(wallet.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_payment_that_times_out_every_time_is_lost_after_three_resends_with_the_backoff() {
    let (transport, wallet, client) =
        scripted(vec![answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""), Step::Hang]);
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let Outcome::Lost(lost) = &outcome else { panic!("{outcome:?}") };
    assert_eq!((lost.paid.sends, lost.paid.waited), (4, Duration::from_secs(1 + 2 + 4)));
    assert!(lost.cause.contains("no answer within 30000 ms"), "{}", lost.cause);
    assert_eq!((lost.recovery.action(), lost.recovery.charge()), (Action::ResendSamePayment, Charge::Unknown));
    assert_eq!((lost.states.payment, lost.states.response), (PaymentState::Unknown, Some(ResponseState::Lost)));
    assert_eq!((transport.sent().len(), wallet.count()), (5, 1));
}

#[tokio::test(start_paused = true)]
async fn a_reset_then_an_answer_is_one_resend_and_a_retry_after_past_the_cap_ends_the_resends() {
    let (transport, _, client) =
        scripted(vec![answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""), Step::Fail, answer(200, &[], "ok")]);
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    assert_eq!(reply(&outcome).paid.as_ref().unwrap().sends, 2);
    assert_eq!(transport.sent().len(), 3);

    let (transport, _, client) = scripted(vec![
        answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""),
        answer(503, &[("Retry-After", "3600")], ""),
    ]);
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!((r.paid.as_ref().unwrap().sends, r.paid.as_ref().unwrap().waited), (1, Duration::ZERO));
    assert_eq!(r.recovery.unwrap().action(), Action::ResendSamePayment);
    assert_eq!(transport.sent().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn an_http_date_retry_after_is_waited_against_the_gates_clock() {
    // The gate's clock stands at 2026-12-01 16:42:44 GMT; the seller asks for a re-send at 16:42:49 (5 s on), then
    // at a date already past (no wait), then answers.
    const NOW: u64 = 1_796_143_364;
    let transport = Scripted::new(vec![
        answer(402, &[("PAYMENT-REQUIRED", &offer_header())], ""),
        answer(503, &[("Retry-After", "Tue, 01 Dec 2026 16:42:49 GMT")], "busy"),
        answer(503, &[("Retry-After", "Tuesday, 01-Dec-26 16:00:00 GMT")], "busy"),
        answer(200, &[], "ok"),
    ]);
    let wallet = Counting::new();
    let client = Client::builder(wallet.clone())
        .options(terms::Options::new().clock(terms::FixedClock(NOW)))
        .transport(transport.clone())
        .fetch(Terms)
        .backoff(Duration::from_secs(100))
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let outcome = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap();
    let r = reply(&outcome);
    assert_eq!(r.status, 200, "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    // 5 s, then 0 s: neither is the 100 s backoff, so both dates were read.
    assert_eq!((paid.sends, paid.waited), (3, Duration::from_secs(5)));
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_secs(5) && elapsed < Duration::from_secs(100), "{elapsed:?}");
    let sent = transport.sent();
    assert_eq!(sent.len(), 4);
    assert!(sent[2..].iter().all(|s| s == &sent[1]), "every re-send is the same request");
    assert_eq!(wallet.count(), 1);
}

#[tokio::test]
async fn the_unpaid_request_failing_is_a_transport_error_with_nothing_paid() {
    let (_, wallet, client) = scripted(vec![Step::Fail]);
    let error = client.send(Outgoing::new("GET", "http://127.0.0.1:9/report")).await.unwrap_err();
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
    assert_eq!(wallet.count(), 0);
}
