//! The agreement exchange, and the ATR fetch, against real HTTP/1.1 servers on loopback, through the real
//! `HttpFetch` (plain HTTP: the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to
//! `http://127.0.0.1:<port>/...`). The main payment's pairing is `x402/exact/eip155/eip3009` stubbed to carry no
//! public proof and to name the agreement URL, as buyer.json's BA rows do.
//!
//! Every case asserts the exchange's promises: the signer is called at most once for the agreement, the main
//! payment is never signed without a receipt, and once the agreement payment is sent nothing is lost: the decline
//! carries it as `moved`, and its base64 JSON is byte for byte the `PAYMENT-SIGNATURE` the server received, every
//! time. Waits run on tokio's paused clock with the servers in the same current-thread runtime (see
//! `support/net.rs` for why that is exact and reliable); times are the runtime's virtual seconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::time::Duration;

use serde_json::json;
use support::net::{Act, Net, Payload, Server};
use support::world::{
    AGREEMENT_PEAK, API_HOST, ATR_PEAK, Atr, NOT_IDENTITY, NOT_RECORDED, REAL, TOO_LARGE_RECEIPT, UNREACHED, World,
    accepted, advertising, challenge, gzip, json_body, mib_body, millis, padded_receipt, receipt, required_text,
    too_large_atr,
};
use support::{Buyer, CountingSigner, Measured, link_of, paused};
use terms::BoxFuture;
use terms::{
    Answer, CancellationToken, DeclineCode, MAX_ATR_BYTES, Signer, SignerError, SigningRequest, TransactOutcome,
};
use tokio::time::Instant;

const ENDED_BEFORE: &str = "The caller's signal ended the agreement exchange before the payment was sent.";
const ENDED_AFTER: &str = "The caller's signal ended the exchange after the agreement payment was sent.";
const UNREADABLE_402: &str = "The agreement URL answered 402 without a readable PAYMENT-REQUIRED.";

/// Signs as the counting signer, then ends the exchange: the payment is signed and never sent.
struct CancelOnSign {
    inner: CountingSigner,
    token: CancellationToken,
}

impl Signer for CancelOnSign {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let answer = self.inner.sign(request).await;
            self.token.cancel();
            answer
        })
    }
}

/// Runs `body` on a fresh current-thread runtime with paused time.
fn on_paused<T>(body: impl std::future::Future<Output = T>) -> T {
    paused().block_on(body)
}

// ---------------------------------------------------------------------------------------------------------------
// Transport faults after the payment is sent: each is read as no answer, and the same payment is sent again.

#[test]
fn connection_reset_mid_poll_then_receipt() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let mid = Act::ResetMidBody { status: 200, headers: vec![], declared: r.len(), sent: r[..20].to_vec() };
    let mut w = m.block_on(World::new(vec![challenge(&b), Act::Reset, mid, receipt(&b)], false));
    let (got, cost) = m.measure(w.pay());
    w.assert_agreed(&got, 3);
    assert_eq!(millis(&w.paid_at()), vec![0, 2000, 4000]);
    assert_eq!((w.atr.count(), w.api.count(), w.api.overruns()), (2, 4, 0));
    assert_eq!(w.net.handed_to(API_HOST), vec![0, 0, 20, r.len()]);
    cost.assert_time(Duration::from_secs(4), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

#[test]
fn connection_reset_on_every_poll_ends_pending_with_the_payment() {
    let m = Measured::new();
    let b = Buyer::load();
    let mut w = m.block_on(World::new(vec![challenge(&b), Act::Reset], true));
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
    let want: Vec<u64> = (0..120).map(|i| i * 2000).collect();
    assert_eq!(millis(&w.paid_at()), want);
    assert_eq!((w.atr.count(), w.api.count(), w.api.connections()), (2, 121, 121));
    cost.assert_time(Duration::from_secs(240), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

#[test]
fn unpaid_request_never_answered() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::Never], false).await;
        let start = Instant::now();
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREACHED, 0);
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        assert_eq!(w.api.count(), 1);
    });
}

/// The paid request's deadline is min(60, 120) + 70 = 130 s, then 2 s, then the rest of the 240 s window.
#[test]
fn paid_request_never_answered() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::Never], true).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 2);
        assert_eq!(millis(&w.paid_at()), vec![0, 132_000]);
        assert_eq!(w.elapsed(), Duration::from_secs(240));
    });
}

/// maxTimeoutSeconds 60: requests at 0, 2, ..., 238, pending at 240; the same bytes every time.
#[test]
fn endless_202() {
    let m = Measured::new();
    let b = Buyer::load();
    let mut w = m.block_on(World::new(vec![challenge(&b), accepted("2")], true));
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
    let want: Vec<u64> = (0..120).map(|i| i * 2000).collect();
    assert_eq!(millis(&w.paid_at()), want);
    assert_eq!((w.atr.count(), w.api.count()), (2, 121));
    cost.assert_time(Duration::from_secs(240), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// Retry-After is 1 to 9 ASCII digits, at least 1; anything else waits 2 s.
#[test]
fn retry_after_values() {
    on_paused(async {
        let b = Buyer::load();
        let acts = vec![
            challenge(&b),
            accepted("0"),
            accepted("-1"),
            accepted("1.5"),
            accepted("Wed, 21 Oct 2015 07:28:00 GMT"),
            accepted("1234567890"),
            receipt(&b),
        ];
        let mut w = World::new(acts, false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 6);
        let at = millis(&w.paid_at());
        let waits: Vec<u64> = at.windows(2).map(|p| p[1] - p[0]).collect();
        assert_eq!(waits, vec![1000, 2000, 2000, 2000, 2000]);
    });
}

#[test]
fn server_error_storm_then_receipt() {
    let m = Measured::new();
    let b = Buyer::load();
    let acts = vec![
        challenge(&b),
        Act::status(500),
        Act::status(502),
        Act::status(503).header("Retry-After", "30"),
        Act::status(504),
        Act::status(599),
        receipt(&b),
    ];
    let mut w = m.block_on(World::new(acts, false));
    let (got, cost) = m.measure(w.pay());
    w.assert_agreed(&got, 6);
    assert_eq!(millis(&w.paid_at()), vec![0, 2000, 4000, 6000, 8000, 10_000]);
    assert_eq!((w.atr.count(), w.api.count(), w.api.overruns()), (2, 7, 0));
    cost.assert_time(Duration::from_secs(10), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

#[test]
fn server_error_storm_to_the_end_of_the_window() {
    for status in [500, 502, 503, 504] {
        let m = Measured::new();
        let b = Buyer::load();
        let mut w = m.block_on(World::new(vec![challenge(&b), Act::status(status)], true));
        let (got, cost) = m.measure(w.pay());
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
        let want: Vec<u64> = (0..120).map(|i| i * 2000).collect();
        assert_eq!(millis(&w.paid_at()), want);
        assert_eq!((w.atr.count(), w.api.count()), (2, 121));
        cost.assert_time(Duration::from_secs(240), REAL);
        cost.assert_peak_under(AGREEMENT_PEAK);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Answers to the payment that end the exchange: every one keeps the payment.

#[test]
fn oversize_receipt_declared_by_content_length() {
    on_paused(async {
        let b = Buyer::load();
        let big = Act::ok(padded_receipt(&b, 65_537));
        let mut w = World::new(vec![challenge(&b), big], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    });
}

/// The declared length alone declines it: the server sends no body byte, and the decline comes at once rather
/// than at the paid request's 130 s deadline.
#[test]
fn oversize_receipt_declared_and_never_sent() {
    on_paused(async {
        let b = Buyer::load();
        let big = Act::Stall { status: 200, headers: vec![], declared: 65_537, sent: vec![] };
        let mut w = World::new(vec![challenge(&b), big], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
        assert_eq!(w.elapsed(), Duration::ZERO);
    });
}

#[test]
fn oversize_receipt_streamed_without_length() {
    let m = Measured::new();
    let b = Buyer::load();
    let body = padded_receipt(&b, 65_537);
    let chunks = body.chunks(4096).map(<[u8]>::to_vec).collect();
    let big = Act::ok(vec![]).body(Payload::Chunked(chunks));
    let mut w = m.block_on(World::new(vec![challenge(&b), big], false));
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    let handed = w.net.handed_to(API_HOST);
    assert_eq!(handed.len(), 2);
    assert!(handed[1] > 65_536 && handed[1] - w.net.last().last_chunk() <= 65_536, "handed {handed:?}");
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

#[test]
fn receipt_of_exactly_64_kib_streamed_is_read() {
    let m = Measured::new();
    let b = Buyer::load();
    let body = padded_receipt(&b, 65_536);
    let chunks = body.chunks(4096).map(<[u8]>::to_vec).collect();
    let mut w = m.block_on(World::new(vec![challenge(&b), Act::ok(vec![]).body(Payload::Chunked(chunks))], false));
    let (got, cost) = m.measure(w.pay());
    w.assert_agreed(&got, 1);
    assert_eq!(w.net.handed_to(API_HOST), vec![0, 65_536]);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

#[test]
fn receipt_for_another_h() {
    on_paused(async {
        let b = Buyer::load();
        let other = Act::ok(json_body(&b.agreement("receiptOtherHash")));
        let mut w = World::new(vec![challenge(&b), other], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, "The agreement receipt names another ATR hash.", 1);
    });
}

#[test]
fn receipt_agreed_as_a_string() {
    on_paused(async {
        let b = Buyer::load();
        let mut r = b.agreement("receipt");
        r["agreed"] = json!("true");
        let mut w = World::new(vec![challenge(&b), Act::ok(json_body(&r))], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, "The agreement receipt is not a recorded agreement.", 1);
    });
}

/// A 3xx to the payment is a status like any other; the Location, a second server, is never asked.
#[test]
fn redirect_on_the_paid_request() {
    for status in [301, 302, 303, 307, 308] {
        let m = Measured::new();
        let b = Buyer::load();
        let net = Net::new();
        let elsewhere = m.block_on(Server::start(&net, vec![receipt(&b)]));
        let location = format!("{}/agreement", elsewhere.origin());
        let acts = vec![challenge(&b), Act::status(status).header("Location", &location)];
        let mut w = m.block_on(World::with(acts, false, |_, f| f.route("elsewhere.example", &elsewhere)));
        let (got, cost) = m.measure(w.pay());
        let detail = format!("The agreement URL answered status {status} to the payment.");
        w.assert_kept(&got, DeclineCode::AgreementFailed, &detail, 1);
        assert_eq!((w.atr.count(), w.api.count(), elsewhere.connections()), (2, 2, 0));
        assert!(w.fetch.asked().iter().all(|u| !u.contains("elsewhere")));
        cost.assert_time(Duration::ZERO, REAL);
        cost.assert_peak_under(AGREEMENT_PEAK);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The unpaid request's faults: nothing is signed.

#[test]
fn gzip_402() {
    on_paused(async {
        let b = Buyer::load();
        let act = Act::Answer {
            status: 402,
            headers: vec![
                ("PAYMENT-REQUIRED".into(), b64_encode(required_text(&b).as_bytes())),
                ("Content-Encoding".into(), "gzip".into()),
            ],
            body: Payload::Sized(gzip(required_text(&b).as_bytes())),
        };
        let w = World::new(vec![act], false).await;
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(
            &got,
            DeclineCode::AgreementFailed,
            "The agreement URL served a content coding other than identity.",
            0,
        );
    });
}

fn unreadable_challenge(header: String) {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::status(402).header("PAYMENT-REQUIRED", &header)], false).await;
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREADABLE_402, 0);
        assert_eq!(w.api.count(), 1);
    });
}

#[test]
fn payment_required_without_its_padding() {
    let canonical = b64_encode(required_text(&Buyer::load()).as_bytes());
    assert!(canonical.ends_with("=="), "the fixture's base64 is padded");
    unreadable_challenge(canonical.trim_end_matches('=').to_owned());
}

#[test]
fn payment_required_with_nonzero_trailing_bits() {
    let canonical = b64_encode(required_text(&Buyer::load()).as_bytes());
    let (head, tail) = canonical.split_at(canonical.len() - 3);
    assert_eq!(tail, "Q==", "the fixture's base64 ends as expected");
    // 'R' differs from 'Q' only in a bit the padding discards.
    let altered = format!("{head}R==");
    assert_eq!(b64_decode(&altered), None);
    unreadable_challenge(altered);
}

#[test]
fn payment_required_of_a_list() {
    unreadable_challenge(b64_encode(b"[1,2]"));
}

#[test]
fn payment_required_of_a_string() {
    unreadable_challenge(b64_encode(br#""x402""#));
}

/// The agreement URL answers 402 with the fixture's challenge changed by `change`: the exchange declines with `code`
/// and `detail` before anything is signed.
fn challenge_declined(change: impl FnOnce(&mut serde_json::Value), code: DeclineCode, detail: &str) {
    on_paused(async {
        let b = Buyer::load();
        let mut required = b.agreement("required");
        change(&mut required);
        let text = serde_json::to_string(&required).unwrap();
        let act = Act::status(402).header("PAYMENT-REQUIRED", &b64_encode(text.as_bytes()));
        let w = World::new(vec![act], false).await;
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(&got, code, detail, 0);
    });
}

/// A challenge whose `accepts` is no list of options (not a list, no object in it, more than 32 entries) is declined
/// `offer-unreadable` with the first refusal of the x402 reads of the whole challenge that is not
/// `x402/no-payable-option` (its version before its options), else with that code, as the reference's `_select`
/// gives each case.
#[test]
fn challenge_without_a_list_of_options() {
    let unreadable = DeclineCode::OfferUnreadable;
    challenge_declined(|r| r["accepts"] = json!("x"), unreadable, "x402/option-malformed");
    challenge_declined(|r| (r["accepts"], r["x402Version"]) = (json!("x"), json!(1)), unreadable, "x402/not-v2");
    challenge_declined(|r| r["accepts"] = json!([]), unreadable, "x402/no-payable-option");
    challenge_declined(|r| r["accepts"] = json!([1]), unreadable, "x402/no-payable-option");
    let option = Buyer::load().agreement("required")["accepts"][0].clone();
    challenge_declined(|r| r["accepts"] = json!(vec![option; 33]), unreadable, "x402/option-malformed");
}

/// Each option read alone: a refusal other than `x402/no-payable-option` (here the challenge's version) makes the
/// decline `offer-unreadable` with it; options that no pairing serves make it `no-payable-option`.
#[test]
fn challenge_whose_options_are_unread() {
    challenge_declined(|r| r["x402Version"] = json!(1), DeclineCode::OfferUnreadable, "x402/not-v2");
    challenge_declined(
        |r| r["accepts"][0]["scheme"] = json!("nope"),
        DeclineCode::NoPayableOption,
        "x402/no-payable-option",
    );
}

/// One amount changed in the approved option: declined before anything is signed or sent; the agreement URL is
/// not asked again (through `transact` the ATR is fetched again, as every call compares it; through `agree`
/// nothing at all is fetched).
#[test]
fn approved_option_with_another_amount() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let mut t = w.to_approve().await;
        t.approve.option["amount"] = json!("2");
        let got = w.transact_with(&w.signer, &b.options().approved(t.approve.clone())).await;
        w.assert_unsent(&got, DeclineCode::OfferUnreadable, "x402/option-not-in-document", 0);
        assert_eq!(w.api.count(), 1);
        assert_eq!(w.atr.count(), 2);

        let direct = terms::agree(&b.a(), &w.url, &w.signer, &w.fetch, &b.options().approved(t.approve)).await;
        let Err(d) = direct else { panic!("{direct:?}") };
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, "x402/option-not-in-document"));
        assert_eq!((w.api.count(), w.atr.count(), w.signer.count()), (1, 2, 0));
    });
}

/// An approval whose option or payment request is not a JSON object is not an agreement payment: `agree` declines
/// `no-payable-option` with `x402/input-malformed` before anything is fetched or signed, as the reference's
/// `_is_agreement_payment` refuses it.
#[test]
fn approval_that_is_no_agreement_payment() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let t = w.to_approve().await;
        let (mut no_option, mut no_request) = (t.approve.clone(), t.approve);
        no_option.option = json!("x");
        no_request.required = json!([1]);
        for approve in [no_option, no_request] {
            let got = terms::agree(&b.a(), &w.url, &w.signer, &w.fetch, &b.options().approved(approve)).await;
            let Err(d) = got else { panic!("{got:?}") };
            assert_eq!((d.code, d.detail.as_str()), (DeclineCode::NoPayableOption, "x402/input-malformed"));
        }
        assert_eq!((w.api.count(), w.atr.count(), w.signer.count()), (1, 1, 0));
    });
}

/// An approval whose challenge has a fault of its own (version 1) and whose option is not among its `accepts`: the
/// challenge's fault is found first (`x402/not-v2`), as the reference checks the challenge whole before it looks
/// the approved option up; nothing is signed or fetched from the agreement URL again.
#[test]
fn approved_challenge_fault_before_the_option() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let mut t = w.to_approve().await;
        t.approve.required["x402Version"] = json!(1);
        t.approve.option["amount"] = json!("2");
        let got = w.transact_with(&w.signer, &b.options().approved(t.approve)).await;
        w.assert_unsent(&got, DeclineCode::OfferUnreadable, "x402/not-v2", 0);
        assert_eq!(w.api.count(), 1);
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Cancellation at each stage.

#[test]
fn cancelled_before_the_unpaid_request() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b)], false).await;
        let token = CancellationToken::new();
        token.cancel();
        let got = w.transact_with(&w.signer, &b.options().cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 0);
        assert_eq!(w.api.count(), 0);
        assert_eq!(w.atr.count(), 1, "the ATR is compared before the exchange starts");
    });
}

#[test]
fn cancelled_during_the_unpaid_request() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::Never], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(1).await;
            cancel.cancel();
        });
        let start = Instant::now();
        let got = w.transact_with(&w.signer, &b.options().cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 0);
        assert_eq!(start.elapsed(), Duration::ZERO, "waited for the deadline");
        assert_eq!(w.api.count(), 1);
    });
}

#[test]
fn cancelled_after_signing_before_sending() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let t = w.to_approve().await;
        let token = CancellationToken::new();
        let signer = CancelOnSign { inner: w.signer.clone(), token: token.clone() };
        let got = w.transact_with(&signer, &b.options().approved(t.approve).cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 1);
        assert_eq!(w.api.count(), 1, "the payment was sent");
    });
}

#[test]
fn cancelled_during_a_paid_request() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::Never], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(2).await;
            cancel.cancel();
        });
        let got = w.pay_with(|o| o.cancel(token)).await;
        w.assert_kept(&got, DeclineCode::AgreementPending, ENDED_AFTER, 1);
        assert_eq!(w.elapsed(), Duration::ZERO);
    });
}

#[test]
fn cancelled_during_a_retry_after_wait() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), accepted("30"), receipt(&b)], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(2).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
            cancel.cancel();
        });
        let got = w.pay_with(|o| o.cancel(token)).await;
        w.assert_kept(&got, DeclineCode::AgreementPending, ENDED_AFTER, 1);
        assert_eq!(w.elapsed(), Duration::from_secs(5));
        assert_eq!(w.api.count(), 2, "asked again after the signal");
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The whole exchange once, as a control: 402, approval, 202, receipt.

#[test]
fn approved_payment_pending_then_recorded() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), accepted("2"), receipt(&b)], false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 2);
        assert_eq!(millis(&w.paid_at()), vec![0, 2000]);
        assert_eq!(w.atr.count(), 2);
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The ATR fetch through HttpFetch: the gate's rules hold on a real socket as they do in memory.

/// A 3xx is declined with its status; the Location, a second server counting connections, is never asked.
fn redirect_not_followed(status: u16) {
    let m = Measured::new();
    let b = Buyer::load();
    let net_for_second = Net::new();
    let second = m.block_on(Server::start(&net_for_second, vec![Act::ok(b.a())]));
    let location = format!("{}/terms", second.origin());
    let act = Act::status(status).header("Location", &location);
    let w = m.block_on(Atr::with(b.doc(), act, |_, f| f.route("elsewhere.example", &second)));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, &format!("The link answered status {status}."));
    assert_eq!(second.connections(), 0, "the redirect was followed");
    assert_eq!(w.fetch.asked(), vec![link_of(&b.doc())]);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

#[test]
fn atr_redirect_302_is_not_followed() {
    redirect_not_followed(302);
}

#[test]
fn atr_redirect_301_is_not_followed() {
    redirect_not_followed(301);
}

#[test]
fn atr_redirect_303_is_not_followed() {
    redirect_not_followed(303);
}

#[test]
fn atr_redirect_307_is_not_followed() {
    redirect_not_followed(307);
}

#[test]
fn atr_redirect_308_is_not_followed() {
    redirect_not_followed(308);
}

/// Runs the plain pairing's `transact` against `act` (set up unmeasured), measured.
fn atr_measured(doc: serde_json::Value, act: Act) -> (Atr, Result<TransactOutcome, terms::Declined>, support::Cost) {
    let m = Measured::new();
    let w = m.block_on(Atr::new(doc, act));
    let (got, cost) = m.measure(w.transact());
    (w, got, cost)
}

#[test]
fn atr_gzip_body() {
    let b = Buyer::load();
    let (w, got, cost) = atr_measured(b.doc(), Act::ok(gzip(&b.a())).header("Content-Encoding", "gzip"));
    w.declined(&got, DeclineCode::AtrUnfetchable, NOT_IDENTITY);
    assert_eq!(w.handed(), 0, "read a gzip body");
    cost.assert_time(Duration::ZERO, REAL);
}

#[test]
fn atr_deadline_mid_body() {
    let b = Buyer::load();
    let a = b.a();
    let act = Act::Stall { status: 200, headers: vec![], declared: a.len(), sent: a[..a.len() / 2].to_vec() };
    let (w, got, cost) = atr_measured(b.doc(), act);
    w.declined(&got, DeclineCode::AtrUnfetchable, "The ATR could not be fetched from the link.");
    assert_eq!(w.handed(), a.len() / 2);
    cost.assert_time(Duration::from_secs(10), REAL);
}

/// Declined at the first chunk past the cap: handed more than 1 MiB, all but the last chunk within it.
fn assert_stopped_past_the_cap(w: &Atr) {
    let (handed, last) = (w.handed(), w.net.last().last_chunk());
    assert!(handed > MAX_ATR_BYTES && handed - last <= MAX_ATR_BYTES, "handed {handed}, last chunk {last}");
}

#[test]
fn atr_one_mib_and_one_byte_chunked() {
    let body = mib_body(MAX_ATR_BYTES + 1);
    let act = Act::ok(vec![]).body(Payload::Chunked(body.chunks(65_536).map(<[u8]>::to_vec).collect()));
    let (w, got, cost) = atr_measured(advertising(&body), act);
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    assert_stopped_past_the_cap(&w);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

#[test]
fn atr_one_mib_and_one_byte_until_close() {
    let body = mib_body(MAX_ATR_BYTES + 1);
    let (w, got, cost) = atr_measured(advertising(&body), Act::ok(vec![]).body(Payload::UntilClose(body)));
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    assert_stopped_past_the_cap(&w);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Declined on the header: not a byte read.
#[test]
fn atr_one_mib_and_one_byte_by_content_length() {
    let body = mib_body(MAX_ATR_BYTES + 1);
    let (w, got, cost) = atr_measured(advertising(&body), Act::ok(body));
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    assert_eq!(w.handed(), 0);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Declared and never sent: declined on the header at once, not at the 10 s deadline.
#[test]
fn atr_one_mib_and_one_byte_declared_and_never_sent() {
    let body = mib_body(MAX_ATR_BYTES + 1);
    let act = Act::Stall { status: 200, headers: vec![], declared: body.len(), sent: vec![] };
    let (w, got, cost) = atr_measured(advertising(&body), act);
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    assert_eq!(w.handed(), 0);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// A gzip body that never arrives is declined on its header at once.
#[test]
fn atr_gzip_body_is_not_read() {
    let b = Buyer::load();
    let act =
        Act::Stall { status: 200, headers: vec![], declared: 100, sent: vec![] }.header("Content-Encoding", "gzip");
    let (w, got, cost) = atr_measured(b.doc(), act);
    w.declined(&got, DeclineCode::AtrUnfetchable, NOT_IDENTITY);
    assert_eq!(w.handed(), 0);
    cost.assert_time(Duration::ZERO, REAL);
}

#[test]
fn atr_exactly_one_mib_chunked_is_paid() {
    let body = mib_body(MAX_ATR_BYTES);
    let act = Act::ok(vec![]).body(Payload::Chunked(body.chunks(65_536).map(<[u8]>::to_vec).collect()));
    let (w, got, cost) = atr_measured(advertising(&body), act);
    w.paid_for(&got, &body);
    assert_eq!(w.handed(), MAX_ATR_BYTES);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The bytes of canonical padded standard base64; `None` for anything else.
fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()?;
    (b64_encode(&bytes) == text).then_some(bytes)
}
