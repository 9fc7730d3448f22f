//! The gate core against bad input, on `x402/exact/eip155/eip3009`: every malformed document, option, link, header,
//! body or signer answer ends in a `Declined` with the reference's code and detail, and nothing is signed before the
//! comparison. Each test asserts the decline code, the detail, the signer calls and the fetches. The expected
//! outcomes are those of the peer (`integraledger-terms` 0.4.0), run on the same cases; where the task's brief
//! expected otherwise, the test says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use support::{Buyer, CountingSigner, Reply, ScriptedFetch, Stub, link_of, message_of, paused};
use terms::json::to_js_string;
use terms::x402::evm::eip3009;
use terms::x402::{HeaderError, decode_payment_required};
use terms::{
    AtrHash, DeclineCode, Declined, Finish, Finished, MAX_ATR_BYTES, Pairing, TransactOutcome, Transacted, atr_hash,
    check, confirm, finish, transact,
};

const STATUS_SENTENCE: &str = "The link answered status";
const CODING: &str = "The link served a content coding other than identity.";
const UNFETCHABLE: &str = "The ATR could not be fetched from the link.";
const TOO_LARGE: &str = "The ATR is larger than 1048576 bytes.";
const NOT_READ: &str = "The pairing does not read the hash of the compared bytes from the payment.";

fn eip3009() -> &'static dyn Pairing {
    terms::pairing(eip3009::ID).expect("built")
}

/// The pairing as built, except for the link its read returns (so the gate's own link rule is reached).
fn link_stub(link: &str) -> Stub {
    Stub { link: Some(link.into()), ..Stub::of(eip3009()) }
}

/// One transact: its result, the signer and fetch it used, and the virtual time it took.
struct Run {
    got: Result<TransactOutcome, Declined>,
    signer: CountingSigner,
    fetch: ScriptedFetch,
    elapsed: Duration,
}

impl Run {
    fn fetches(&self) -> usize {
        self.fetch.asked().len()
    }

    /// The decline, with its code, detail, signer calls and fetches as given; never a `moved` (nothing here moves).
    fn declined(&self, code: DeclineCode, detail: &str, signs: usize, fetches: usize) -> &Declined {
        let Err(d) = &self.got else { panic!("expected {code}, got {:?}", self.got) };
        assert_eq!((d.code, d.detail.as_str()), (code, detail), "decline");
        assert_eq!(self.signer.count(), signs, "signer calls");
        assert_eq!(self.fetches(), fetches, "fetches");
        assert!(d.moved.is_none(), "moved: {:?}", d.moved);
        d
    }

    /// The payment, signed once after one fetch.
    fn signed(&self) -> &Transacted {
        let Ok(TransactOutcome::Signed(t)) = &self.got else { panic!("expected a payment, got {:?}", self.got) };
        assert_eq!(self.signer.count(), 1, "signer calls");
        assert_eq!(self.fetches(), 1, "fetches");
        t
    }
}

/// transact over `doc` with `pairing`, the document's link answering `replies`.
fn run_with(doc: &Value, pairing: &dyn Pairing, link: &str, replies: Vec<Reply>, signer: CountingSigner) -> Run {
    let b = Buyer::load();
    let fetch = ScriptedFetch::new().script(link, replies);
    let (got, elapsed) = paused().block_on(async {
        let start = tokio::time::Instant::now();
        let got = transact(doc, pairing, &signer, &fetch, &b.options()).await;
        (got, start.elapsed())
    });
    Run { got, signer, fetch, elapsed }
}

/// transact over `doc`, D's link answering `replies` (a document that names no link is never fetched).
fn run(doc: &Value, replies: Vec<Reply>) -> Run {
    let b = Buyer::load();
    run_with(doc, eip3009(), &link_of(&b.doc()), replies, b.signer())
}

fn serving_a(doc: &Value) -> Run {
    run(doc, vec![Reply::ok(Buyer::load().a())])
}

fn with_info(key: &str, value: Value) -> Value {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["legalContext"]["info"][key] = value;
    doc
}

fn with_option(key: &str, value: Value) -> Value {
    let mut doc = Buyer::load().doc();
    doc["accepts"][0][key] = value;
    doc
}

/// D advertising the hash of `bytes`.
fn advertising(bytes: &[u8]) -> Value {
    with_info("value", json!(atr_hash(bytes).to_hex()))
}

fn nonce_of(payment: &Value) -> &str {
    payment["payload"]["authorization"]["nonce"].as_str().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `depth` nested arrays around a number: JSON nested `depth` levels deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| Value::Array(vec![inner]))
}

// ---------------------------------------------------------------------------------------------------------------
// Links.

#[test]
fn http_link_in_the_document_is_unreadable() {
    let doc = with_info("legalContextUrl", json!("http://atr.seller.example/terms"));
    serving_a(&doc).declined(DeclineCode::OfferUnreadable, "x402/link-not-https", 0, 0);
}

#[test]
fn http_link_from_the_pairing_is_link_not_https() {
    let link = "http://atr.seller.example/terms";
    let b = Buyer::load();
    let r = run_with(&b.doc(), &link_stub(link), link, vec![Reply::ok(b.a())], b.signer());
    r.declined(DeclineCode::LinkNotHttps, "x402/link-not-https", 0, 0);
}

#[test]
fn link_with_userinfo_in_the_document_is_unreadable() {
    let doc = with_info("legalContextUrl", json!("https://user:pass@atr.seller.example/terms"));
    serving_a(&doc).declined(DeclineCode::OfferUnreadable, "x402/legal-context-malformed", 0, 0);
}

#[test]
fn link_with_userinfo_from_the_pairing_is_link_not_https() {
    let link = "https://user@atr.seller.example/terms";
    let b = Buyer::load();
    let r = run_with(&b.doc(), &link_stub(link), link, vec![Reply::ok(b.a())], b.signer());
    r.declined(DeclineCode::LinkNotHttps, "x402/legal-context-malformed", 0, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// Redirects: a 3xx is declined with its status; its Location is never fetched.

fn redirect(status: u16) {
    let b = Buyer::load();
    let elsewhere = "https://elsewhere.example/terms";
    let reply = Reply::status(status).with_header("Location", elsewhere).with_body(b.a());
    let r = run(&b.doc(), vec![reply]);
    r.declined(DeclineCode::AtrUnfetchable, &format!("{STATUS_SENTENCE} {status}."), 0, 1);
    assert!(r.fetch.asked_of(elsewhere).is_empty(), "followed the redirect");
}

#[test]
fn redirect_302_with_location() {
    redirect(302);
}

#[test]
fn redirect_301() {
    redirect(301);
}

#[test]
fn redirect_307() {
    redirect(307);
}

#[test]
fn redirect_308() {
    redirect(308);
}

// ---------------------------------------------------------------------------------------------------------------
// Content codings: declined with the body unread.

#[test]
fn gzip_body() {
    let b = Buyer::load();
    let r = run(&b.doc(), vec![Reply::ok(gzip(&b.a())).with_header("Content-Encoding", "gzip")]);
    r.declined(DeclineCode::AtrUnfetchable, CODING, 0, 1);
    assert_eq!(r.fetch.cancelled_bodies(), 1, "the body was read");
}

/// Declined on the header: a gzip body that never arrives is not waited for.
#[test]
fn gzip_body_is_not_read() {
    let b = Buyer::load();
    let reply = Reply::Stall { status: 200, headers: vec![("Content-Encoding".into(), "gzip".into())], chunks: vec![] };
    let r = run(&b.doc(), vec![reply]);
    r.declined(DeclineCode::AtrUnfetchable, CODING, 0, 1);
    assert_eq!(r.elapsed, Duration::ZERO);
}

#[test]
fn identity_then_gzip_in_one_header() {
    let b = Buyer::load();
    let r = run(&b.doc(), vec![Reply::ok(gzip(&b.a())).with_header("Content-Encoding", "identity, gzip")]);
    r.declined(DeclineCode::AtrUnfetchable, CODING, 0, 1);
    assert_eq!(r.fetch.cancelled_bodies(), 1, "the body was read");
}

#[test]
fn identity_then_gzip_on_two_header_lines() {
    let b = Buyer::load();
    let reply =
        Reply::ok(gzip(&b.a())).with_header("Content-Encoding", "identity").with_header("content-encoding", "gzip");
    let r = run(&b.doc(), vec![reply]);
    r.declined(DeclineCode::AtrUnfetchable, CODING, 0, 1);
}

// ---------------------------------------------------------------------------------------------------------------
// The 1 MiB cap: exactly 1 MiB is the ATR; one byte more is declined, by the declared length and by the stream.

fn mib_body() -> Vec<u8> {
    let mut body = vec![b' '; MAX_ATR_BYTES];
    body[0] = b'{';
    body[MAX_ATR_BYTES - 1] = b'}';
    body
}

fn assert_paid_for(r: &Run, bytes: &[u8]) {
    let t = r.signed();
    let h = atr_hash(bytes);
    assert_eq!(t.h, h);
    assert_eq!(t.bytes.len(), bytes.len());
    assert_eq!(nonce_of(&t.signed.as_ref().unwrap().to_value()), h.to_hex());
    assert_eq!(message_of(&r.signer.calls()[0])["nonce"], json!(h.to_hex()));
}

#[test]
fn exactly_one_mib_by_content_length_is_paid() {
    let body = mib_body();
    let reply = Reply::ok(body.clone()).with_header("Content-Length", &MAX_ATR_BYTES.to_string());
    let r = run(&advertising(&body), vec![reply]);
    assert_paid_for(&r, &body);
}

#[test]
fn exactly_one_mib_streamed_is_paid() {
    let body = mib_body();
    let chunks: Vec<Bytes> = body.chunks(65_536).map(Bytes::copy_from_slice).collect();
    let r = run(&advertising(&body), vec![Reply::ok(Bytes::new()).with_chunks(chunks)]);
    assert_paid_for(&r, &body);
}

#[test]
fn exactly_one_mib_advertising_another_hash_reaches_the_comparison() {
    let body = mib_body();
    let reply = Reply::ok(body).with_header("Content-Length", &MAX_ATR_BYTES.to_string());
    let r = run(&Buyer::load().doc(), vec![reply]);
    r.declined(DeclineCode::HashMismatch, "The bytes the link served do not hash to the advertised ATR hash.", 0, 1);
}

/// The declared length alone declines it: the body never arrives (it stalls), and the decline comes at once, not
/// at the deadline.
#[test]
fn one_mib_and_one_byte_by_content_length() {
    let mut body = mib_body();
    body.push(b' ');
    let declared = (MAX_ATR_BYTES + 1).to_string();
    let reply = Reply::Stall { status: 200, headers: vec![("Content-Length".into(), declared)], chunks: vec![] };
    let r = run(&advertising(&body), vec![reply]);
    r.declined(DeclineCode::AtrTooLarge, TOO_LARGE, 0, 1);
    assert_eq!(r.elapsed, Duration::ZERO, "the body was read");
    assert_eq!(r.fetch.cancelled_bodies(), 1);
}

#[test]
fn one_mib_and_one_byte_streamed() {
    let mut body = mib_body();
    body.push(b' ');
    let chunks: Vec<Bytes> = body.chunks(65_536).map(Bytes::copy_from_slice).collect();
    assert_eq!(chunks.len(), 17);
    let r = run(&advertising(&body), vec![Reply::ok(Bytes::new()).with_chunks(chunks)]);
    r.declined(DeclineCode::AtrTooLarge, TOO_LARGE, 0, 1);
    assert_eq!(r.fetch.cancelled_bodies(), 1, "the stream was not cancelled");
}

// ---------------------------------------------------------------------------------------------------------------
// The deadline: one 10 s deadline over headers and body.

#[test]
fn deadline_expires_mid_body() {
    let b = Buyer::load();
    let a = b.a();
    let reply = Reply::Stall {
        status: 200,
        headers: vec![("Content-Length".into(), a.len().to_string())],
        chunks: vec![Bytes::copy_from_slice(&a[..a.len() / 2])],
    };
    let r = run(&b.doc(), vec![reply]);
    r.declined(DeclineCode::AtrUnfetchable, UNFETCHABLE, 0, 1);
    assert_eq!(r.elapsed, Duration::from_secs(10));
    assert_eq!(r.fetch.cancelled_bodies(), 1);
}

// ---------------------------------------------------------------------------------------------------------------
// The advertised H and the account.

#[test]
fn upper_case_advertised_h_is_paid_with_a_lower_case_nonce() {
    let b = Buyer::load();
    let h = atr_hash(&b.a()).to_hex();
    let upper = format!("0x{}", h[2..].to_uppercase());
    assert_ne!(upper, h);
    let r = serving_a(&with_info("value", json!(upper)));
    let t = r.signed();
    assert_eq!(nonce_of(&t.signed.as_ref().unwrap().to_value()), h);
    assert_eq!(message_of(&r.signer.calls()[0])["nonce"], json!(h));
}

#[test]
fn account_on_another_chain() {
    let b = Buyer::load();
    let address = b.account().rsplit(':').next().unwrap().to_owned();
    let signer = CountingSigner::new(b.v["payerKey"].as_str().unwrap(), &format!("eip155:1:{address}"));
    let doc = b.doc();
    let r = run_with(&doc, eip3009(), &link_of(&doc), vec![Reply::ok(b.a())], signer);
    r.declined(DeclineCode::NoPayableOption, "x402/no-payable-option", 0, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// maxTimeoutSeconds: a JSON number with an integral value of at least 1. An option without one is not served, so a
// document with no other option serves none.

fn unserved_timeout(value: Value) {
    serving_a(&with_option("maxTimeoutSeconds", value)).declined(
        DeclineCode::OfferUnreadable,
        "x402/no-payable-option",
        0,
        0,
    );
}

#[test]
fn max_timeout_zero() {
    unserved_timeout(json!(0));
}

#[test]
fn max_timeout_fractional() {
    unserved_timeout(json!(60.5));
}

#[test]
fn max_timeout_string() {
    unserved_timeout(json!("60"));
}

#[test]
fn max_timeout_boolean() {
    unserved_timeout(json!(true));
}

#[test]
fn max_timeout_sixty_point_zero_is_sixty() {
    let b = Buyer::load();
    let r = serving_a(&with_option("maxTimeoutSeconds", json!(60.0)));
    let t = r.signed();
    let valid_before = (b.now() + 60).to_string();
    assert_eq!(t.signed.as_ref().unwrap().to_value()["payload"]["authorization"]["validBefore"], json!(valid_before));
    assert_eq!(message_of(&r.signer.calls()[0])["validBefore"], json!(valid_before));
}

// ---------------------------------------------------------------------------------------------------------------
// The number of options.

fn options(n: usize) -> Value {
    let mut doc = Buyer::load().doc();
    let one = doc["accepts"][0].clone();
    doc["accepts"] = Value::Array(vec![one; n]);
    doc
}

#[test]
fn thirty_three_options() {
    serving_a(&options(33)).declined(DeclineCode::OfferUnreadable, "x402/option-malformed", 0, 0);
}

#[test]
fn thirty_two_options_are_read() {
    serving_a(&options(32)).signed();
}

// ---------------------------------------------------------------------------------------------------------------
// Nesting.

#[test]
fn payment_required_header_nested_65_deep_is_refused() {
    let mut doc = Buyer::load().doc();
    // The document is one level; 64 arrays inside it make 65.
    doc["deep"] = nested(64);
    // The JSON.stringify writer refuses to write it, as the peer's does; the seller's text is written plainly.
    assert_eq!(to_js_string(&doc), None);
    let header = b64_encode(serde_json::to_string(&doc).unwrap().as_bytes());
    assert_eq!(decode_payment_required(&header), Err(HeaderError::NotJson));
    doc["deep"] = nested(63);
    let header = b64_encode(to_js_string(&doc).unwrap().as_bytes());
    assert_eq!(decode_payment_required(&header).unwrap(), doc);
}

/// A document handed over as a value is not text: the peer reads it at any depth (its read, choose and build never
/// serialise the members they echo), so a deep member the payment merely echoes is signed. Run through the peer:
/// 65 levels inside the chosen option's `extra`, inside `extensions`, and 200 levels inside `extensions`, each
/// give a signed payment after one fetch and one signer call.
fn deep_document_is_paid(doc: Value) {
    let r = serving_a(&doc);
    let t = r.signed();
    assert_eq!(nonce_of(&t.signed.as_ref().unwrap().to_value()), atr_hash(&Buyer::load().a()).to_hex());
}

#[test]
fn document_value_nested_65_deep_in_the_chosen_option() {
    let mut doc = Buyer::load().doc();
    // The option, its extra, then 63 arrays: the option alone is 65 levels deep (the document 67).
    doc["accepts"][0]["extra"]["deep"] = nested(63);
    assert!(!terms::json::within_depth(&doc["accepts"][0], 64));
    assert!(terms::json::within_depth(&doc["accepts"][0]["extra"]["deep"][0], 64));
    deep_document_is_paid(doc);
}

#[test]
fn document_value_nested_65_deep_in_extensions() {
    let mut doc = Buyer::load().doc();
    // The document, extensions, then 63 arrays: 65 levels.
    doc["extensions"]["deep"] = nested(63);
    assert!(!terms::json::within_depth(&doc, 64));
    deep_document_is_paid(doc);
}

#[test]
fn document_value_nested_200_deep_in_extensions() {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["deep"] = nested(200);
    deep_document_is_paid(doc);
}

// ---------------------------------------------------------------------------------------------------------------
// The signer's answer: the signer is called once, after the comparison; a failure or an answer that does not
// complete the payment is declined, and nothing here moves money, so no decline carries `moved`.

#[test]
fn signer_that_fails() {
    let b = Buyer::load();
    let doc = b.doc();
    let r = run_with(&doc, eip3009(), &link_of(&doc), vec![Reply::ok(b.a())], b.signer().rejecting());
    r.declined(DeclineCode::SignerFailed, "The signer did not sign.", 1, 1);
}

fn answered(answer: Value) -> Run {
    let b = Buyer::load();
    let doc = b.doc();
    let r = run_with(&doc, eip3009(), &link_of(&doc), vec![Reply::ok(b.a())], b.signer().answering(answer));
    r.declined(DeclineCode::SignedNotBound, "x402/signature-malformed", 1, 1);
    r
}

#[test]
fn signer_answers_a_number() {
    answered(json!(5));
}

#[test]
fn signer_answers_a_short_signature() {
    // 64 bytes: one short of an ECDSA signature.
    answered(json!(format!("0x{}", "11".repeat(64))));
}

#[test]
fn signer_answers_an_object() {
    answered(json!({ "signature": format!("0x{}", "11".repeat(65)) }));
}

#[test]
fn signer_answers_a_list() {
    answered(json!([format!("0x{}", "11".repeat(65))]));
}

// ---------------------------------------------------------------------------------------------------------------
// finish and check, given what the caller holds.

/// What a caller holds after confirming D over A and signing: finish and check run on it and must neither fetch
/// nor sign (the one fetch and the one signer call are the setup's).
struct Held {
    c: terms::Confirmed,
    answer: terms::Answer,
    signer: CountingSigner,
    fetch: ScriptedFetch,
}

impl Held {
    fn new() -> Self {
        let b = Buyer::load();
        let fetch = ScriptedFetch::new().script(&link_of(&b.doc()), vec![Reply::ok(b.a())]);
        let signer = b.signer();
        let (c, answer) = paused().block_on(async {
            let c = confirm(&b.doc(), eip3009(), &b.account(), &fetch, &b.options()).await.unwrap();
            let answer = terms::Signer::sign(&signer, c.request.as_ref().unwrap()).await.unwrap();
            (c, answer)
        });
        let held = Self { c, answer, signer, fetch };
        held.untouched();
        held
    }

    /// Still the setup's one fetch and one signer call.
    fn untouched(&self) {
        assert_eq!(self.fetch.asked().len(), 1, "fetches");
        assert_eq!(self.signer.count(), 1, "signer calls");
    }

    fn declined<T: std::fmt::Debug>(&self, got: Result<T, Declined>, code: DeclineCode, detail: &str) {
        let d = got.expect_err("a decline");
        assert_eq!((d.code, d.detail.as_str()), (code, detail), "decline");
        assert!(d.moved.is_none(), "moved: {:?}", d.moved);
        self.untouched();
    }

    /// The payment for A.
    fn payment(&self) -> Value {
        finished(finish(&self.c.bytes, &self.c.chosen, std::slice::from_ref(&self.answer), eip3009())).signed.to_value()
    }
}

fn finished(f: Result<Finish, Declined>) -> Finished {
    match f {
        Ok(Finish::Finished(done)) => done,
        other => panic!("expected a payment, got {other:?}"),
    }
}

#[test]
fn finish_with_another_pairings_chosen() {
    let held = Held::new();
    let mut other = held.c.chosen.clone();
    other.pairing = "x402/exact/eip155/permit2".into();
    held.declined(
        finish(&held.c.bytes, &other, std::slice::from_ref(&held.answer), eip3009()),
        DeclineCode::PairingNotSupported,
        "The chosen payment is not for the pairing x402/exact/eip155/eip3009.",
    );
}

#[test]
fn finish_with_bytes_over_one_mib() {
    let held = Held::new();
    let answers = std::slice::from_ref(&held.answer);
    held.declined(
        finish(&vec![b' '; MAX_ATR_BYTES + 1], &held.c.chosen, answers, eip3009()),
        DeclineCode::AtrTooLarge,
        TOO_LARGE,
    );
    // The bound is the size alone: exactly 1 MiB is built from (and here the nonce is its hash).
    let mib = mib_body();
    let done = finished(finish(&mib, &held.c.chosen, answers, eip3009()));
    assert_eq!(nonce_of(&done.signed.to_value()), atr_hash(&mib).to_hex());
    held.untouched();
}

/// The brief expected `signed-not-bound` here; the peer (0.4.0) returns a payment, and so does this crate, because
/// `finish` recomputes H from the bytes it is given and builds with it: the payment carries H(C), never the
/// confirmed H(A), and `bound` reads H(C) back. Neither implementation verifies the signature, so the signature,
/// made over the typed data whose nonce is H(A), does not recover to the payer over the payment's own typed data:
/// the payment is for C and no facilitator can settle it. `check` against the confirmed bytes declines it.
#[test]
fn finish_with_other_bytes_than_confirmed_builds_for_those_bytes() {
    let b = Buyer::load();
    let held = Held::new();
    let (c, answer) = (&held.c, &held.answer);
    let h_c = atr_hash(&b.c());
    assert_ne!(h_c, c.h);
    let done = finished(finish(&b.c(), &c.chosen, std::slice::from_ref(answer), eip3009()));
    assert_eq!(done.h, h_c);
    let signed = done.signed.to_value();
    assert_eq!(nonce_of(&signed), h_c.to_hex());
    assert_eq!(signed["payload"]["signature"].as_str(), answer.as_str());
    held.declined(check(&b.a(), &signed, eip3009()), DeclineCode::SignedNotBound, NOT_READ);

    // The signature recovers to the payer over A's typed data and to someone else over C's.
    let payer: alloy_primitives::Address = b.account().rsplit(':').next().unwrap().parse().unwrap();
    let sig = alloy_primitives::Signature::from_raw(&support::hex(&answer.as_str().unwrap()[2..])).unwrap();
    let digest = |h: &AtrHash| {
        let built = eip3009::build(&c.chosen.build_input, h).unwrap();
        built.typed_data().signing_hash().unwrap()
    };
    assert_eq!(sig.recover_address_from_prehash(&digest(&c.h)).unwrap(), payer);
    assert_ne!(sig.recover_address_from_prehash(&digest(&h_c)).unwrap(), payer);
}

#[test]
fn check_with_a_payment_whose_nonce_is_another_h() {
    let b = Buyer::load();
    let held = Held::new();
    let mut payment = held.payment();
    payment["payload"]["authorization"]["nonce"] = b.v["hashC"].clone();
    held.declined(check(&b.a(), &payment, eip3009()), DeclineCode::SignedNotBound, NOT_READ);
    // The nonce is what is read: the same payment checks against C.
    assert_eq!(check(&b.c(), &payment, eip3009()).unwrap().h, atr_hash(&b.c()));
}

// ---------------------------------------------------------------------------------------------------------------
// A refusal is a value the gate makes, never a JSON shape: a seller's member or a signer's answer shaped
// `{"refused": true, "code": ...}` is read as the data it is. The code chosen is `x402/nothing-to-sign`, the one a
// gate that took the shape for a refusal would turn into "nothing to sign" and a payment-less success.

fn refusal_shaped() -> Value {
    json!({ "refused": true, "code": "x402/nothing-to-sign" })
}

#[test]
fn refusal_shaped_document() {
    serving_a(&refusal_shaped()).declined(DeclineCode::OfferUnreadable, "x402/not-v2", 0, 0);
}

#[test]
fn refusal_shaped_legal_context() {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["legalContext"] = refusal_shaped();
    serving_a(&doc).declined(DeclineCode::OfferUnreadable, "x402/legal-context-malformed", 0, 0);
}

#[test]
fn refusal_shaped_legal_context_info() {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["legalContext"]["info"] = refusal_shaped();
    serving_a(&doc).declined(DeclineCode::OfferUnreadable, "x402/legal-context-malformed", 0, 0);
}

#[test]
fn refusal_shaped_option_extra() {
    serving_a(&with_option("extra", refusal_shaped())).declined(
        DeclineCode::OfferUnreadable,
        "x402/no-payable-option",
        0,
        0,
    );
}

#[test]
fn refusal_shaped_option_beside_a_payable_one_is_skipped() {
    let mut doc = Buyer::load().doc();
    doc["accepts"].as_array_mut().unwrap().insert(0, refusal_shaped());
    let r = serving_a(&doc);
    let t = r.signed();
    assert_eq!(t.signed.as_ref().unwrap().to_value()["accepted"], Buyer::load().doc()["accepts"][0]);
}

#[test]
fn refusal_shaped_signer_answer() {
    let r = answered(refusal_shaped());
    assert_eq!(r.signer.answers(), vec![refusal_shaped()]);
}

#[test]
fn refusal_shaped_answer_to_finish() {
    let held = Held::new();
    held.declined(
        finish(&held.c.bytes, &held.c.chosen, &[refusal_shaped().into()], eip3009()),
        DeclineCode::SignedNotBound,
        "x402/signature-malformed",
    );
}

#[test]
fn refusal_shaped_payment_to_check() {
    let held = Held::new();
    held.declined(check(&held.c.bytes, &refusal_shaped(), eip3009()), DeclineCode::SignedNotBound, NOT_READ);
}

#[test]
fn payment_with_a_refused_member_to_check() {
    let held = Held::new();
    let mut payment = held.payment();
    assert_eq!(check(&held.c.bytes, &payment, eip3009()).unwrap().h, held.c.h);
    payment["refused"] = json!(true);
    payment["code"] = json!("x402/nothing-to-sign");
    held.declined(check(&held.c.bytes, &payment, eip3009()), DeclineCode::SignedNotBound, NOT_READ);
}

/// A document handed over (`Value`) is moved into the choice; one lent (`&Value`) is copied. Either way the gate
/// confirms the same payment, and the choice holds the document whole, first, as `required`.
#[test]
fn a_document_handed_over_confirms_what_a_lent_one_does() {
    let b = Buyer::load();
    let fetch = ScriptedFetch::new().script(&link_of(&b.doc()), vec![Reply::ok(b.a()), Reply::ok(b.a())]);
    let (lent, owned) = paused().block_on(async {
        let doc = b.doc();
        let lent = confirm(&doc, eip3009(), &b.account(), &fetch, &b.options()).await.unwrap();
        let owned = confirm(doc, eip3009(), &b.account(), &fetch, &b.options()).await.unwrap();
        (lent, owned)
    });
    assert_eq!(lent, owned);
    assert_eq!(owned.chosen.build_input.keys().next().map(String::as_str), Some("required"));
    assert_eq!(owned.chosen.build_input["required"], b.doc());
    assert_eq!(fetch.asked().len(), 2, "one fetch each");
}

/// Where a pairing's completed payment panics.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fails {
    /// Read, as the read-back does.
    Reading,
    /// Written out as text, after the read-back.
    Writing,
    /// Nowhere: the control.
    Nowhere,
}

/// A pairing whose completed payment panics where `fails` says, and whose bound reads `h`.
#[derive(Debug)]
struct Panicking {
    h: terms::AtrHash,
    fails: Fails,
}

struct PanickingBuilt(Fails);

impl terms::json::Member for PanickingBuilt {
    fn member(&self, _key: &str) -> Option<&Value> {
        assert!(self.0 != Fails::Reading, "a pairing bug while reading");
        None
    }
}

impl terms::pairing::Completed for PanickingBuilt {
    fn write(&self) -> terms::Payment {
        assert!(self.0 != Fails::Writing, "a pairing bug while writing");
        terms::Payment::from_value(&json!({}))
    }
    fn to_value(&self) -> Value {
        assert!(self.0 != Fails::Reading, "a pairing bug while reading");
        json!({})
    }
}

struct PanickingUnsigned(Fails);

impl terms::pairing::Unsigned for PanickingUnsigned {
    fn request(&self) -> Result<Option<terms::SigningRequest>, terms::Refusal> {
        Ok(None)
    }
    fn complete(
        &self,
        _answers: &[terms::Answer],
        _chosen: &terms::Chosen,
    ) -> Result<terms::pairing::Completion<'_>, terms::Refusal> {
        Ok(terms::pairing::Completion::Payment { payment: Box::new(PanickingBuilt(self.0)), landed: None })
    }
}

impl Pairing for Panicking {
    fn id(&self) -> &'static str {
        eip3009::ID
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<terms::pairing::Advertised<'a>, terms::Refusal> {
        eip3009().read(doc)
    }
    fn choose(
        &self,
        read: &terms::pairing::Advertised<'_>,
        ctx: &terms::pairing::ChooseContext<'_>,
    ) -> Result<terms::Chosen, terms::Refusal> {
        eip3009().choose(read, ctx)
    }
    fn inputs(&self) -> &'static [terms::InputSpec] {
        eip3009().inputs()
    }
    fn quote(&self, chosen: &terms::Chosen) -> Result<terms::Quote, terms::Refusal> {
        eip3009().quote(chosen)
    }
    fn build<'a>(
        &'a self,
        _chosen: &'a terms::Chosen,
        _atr: &'a [u8],
        _h: &terms::AtrHash,
    ) -> Result<Box<dyn terms::pairing::Unsigned + 'a>, terms::Refusal> {
        Ok(Box::new(PanickingUnsigned(self.fails)))
    }
    fn bound(
        &self,
        presented: &dyn terms::json::Member,
        _landed: Option<&Value>,
    ) -> Result<terms::AtrHash, terms::Refusal> {
        // It reads the payment, as a pairing's bound does, and finds `h` there.
        let _ = presented.member("payload");
        Ok(self.h)
    }
}

/// A panic inside a pairing's completed payment, while the gate reads H back from it or writes it out, is a
/// decline: the process goes on and no payment is returned.
#[test]
fn a_completed_payment_that_panics_is_declined() {
    let held = Held::new();
    let h = atr_hash(&held.c.bytes);
    let reading = Panicking { h, fails: Fails::Reading };
    held.declined(finish(&held.c.bytes, &held.c.chosen, &[], &reading), DeclineCode::SignedNotBound, NOT_READ);
    let writing = Panicking { h, fails: Fails::Writing };
    held.declined(
        finish(&held.c.bytes, &held.c.chosen, &[], &writing),
        DeclineCode::SignedNotBound,
        "The signer's answer did not complete the payment.",
    );
    // The same pairing without the bug returns its payment.
    let sound = Panicking { h, fails: Fails::Nowhere };
    let done = finished(finish(&held.c.bytes, &held.c.chosen, &[], &sound));
    assert_eq!((done.signed.as_str(), done.h), ("{}", h));
    held.untouched();
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
