//! The agreement URL's answers: `terms::agree` for buyer.json's ATR A against an in-memory fetch whose answers
//! (status, headers, body, transport errors, silence, stalls) come from the input, on paused tokio time so every
//! deadline, Retry-After wait and window passes instantly and is measured exactly. It covers the unpaid GET (a 402
//! and its PAYMENT-REQUIRED, a 200 receipt, a 202), the approval handed back, and the paid loop (202 with
//! Retry-After, 5xx, silence, the receipt).
//!
//! Input: one mode byte, then answers split on 0xFF, each in [`terms_fuzz::Reply::from_fuzz`]'s form. Mode bit 0:
//! start with buyer.json's approved agreement payment (else ask first and, when the URL hands one back for
//! approval, approve it unchanged and call again, on the same script); bit 1: the caller's token is cancelled
//! before the call. Past the script, every request fails as a transport error.
//!
//! Asserts: the signer is called at most once over the whole approve-and-pay sequence, and never without an
//! approval; every paid request re-sends the same payment; nothing is fetched or signed after a cancellation; every
//! request asks for the identity coding; a receipt names H; an approval names H, the URL, and an option its 402
//! offers that an x402 pairing reads H from; a decline carrying what moved comes only after the signature was
//! sent; and no call outlasts its bound (10 s unpaid; the approved option's window when paid).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::json::is_offered;
use terms::x402_pairings;
use terms::{
    Agreement, AgreementPayment, CancellationToken, DeclineCode, Declined, Options, agree, atr_hash, hash_equals,
};
use terms_fuzz::{FuzzFetch, Reply, approved_agreement, buyer, buyer_atr, buyer_signer, parts, paused};

/// The window the exchange may take for an approved option: its maxTimeoutSeconds plus 180 s.
fn window(option: &Value) -> Option<Duration> {
    let t = terms::x402::timeout_seconds(option.get("maxTimeoutSeconds")?)?;
    Some(Duration::from_secs(t.saturating_add(180)))
}

/// The longest window a fuzz input may make the target wait through. The gate follows the seller's
/// maxTimeoutSeconds (as the reference does), so an approval of a longer one is not paid here: each second of
/// virtual time is one more loop of the target, and a year of it would be reported as a hang of the harness.
const MAX_FUZZ_WINDOW: Duration = Duration::from_secs(3600 + 180);

/// 65 bytes in `0x` hex, v = 27: what an EIP-712 signer answers.
const FORM_OF_A_SIGNATURE: &str = concat!(
    "0x1111111111111111111111111111111111111111111111111111111111111111",
    "22222222222222222222222222222222222222222222222222222222222222221b"
);

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let replies: Vec<Reply> =
        if rest.is_empty() { Vec::new() } else { parts(rest).into_iter().map(Reply::from_fuzz).collect() };
    let fetch = FuzzFetch::new(replies, Reply::Reject);
    // A signature of the answer's form, not computed: nothing on the buyer's side verifies the agreement payment's
    // signature (the seller does), and an ECDSA signature under the sanitizer was a fifth of each execution.
    let signer = buyer_signer().answering(Value::String(FORM_OF_A_SIGNATURE.to_owned()));
    let atr = buyer_atr();
    let h = atr_hash(&atr);
    let url = buyer()["agreement"]["url"].as_str().unwrap().to_owned();
    let cancel = CancellationToken::new();
    if mode & 2 != 0 {
        cancel.cancel();
    }
    let base = Options::new().clock(terms::FixedClock(buyer()["now"].as_u64().unwrap())).cancel(cancel.clone());
    let rt = paused();

    let pay = |approved: AgreementPayment| {
        let bound = window(&approved.option);
        let options = base.clone().approved(approved);
        let start = tokio::time::Instant::now();
        let got = rt.block_on(agree(&atr, &url, &signer, &fetch, &options));
        let elapsed = start.elapsed();
        if let Some(bound) = bound {
            assert!(elapsed <= bound, "the paid exchange took {elapsed:?}, past its window {bound:?}");
        }
        got
    };

    let got = if mode & 1 != 0 {
        pay(approved_agreement())
    } else {
        let start = tokio::time::Instant::now();
        let first = rt.block_on(agree(&atr, &url, &signer, &fetch, &base));
        assert!(start.elapsed() <= Duration::from_secs(10), "the unpaid GET took {:?}", start.elapsed());
        assert_eq!(signer.count(), 0, "signed without an approval");
        assert!(fetch.count() <= 1, "the unpaid exchange asked {} times", fetch.count());
        assert!(fetch.asked().iter().all(|a| a.header("payment-signature").is_none()), "paid without an approval");
        match first {
            Ok(Agreement::ToApprove(t)) => {
                assert_eq!(t.h, h);
                assert_eq!(t.bytes, atr);
                to_approve(&t.approve, &url, &h);
                match window(&t.approve.option) {
                    Some(w) if w <= MAX_FUZZ_WINDOW => pay(t.approve),
                    _ => return,
                }
            }
            other => other,
        }
    };

    let asked = fetch.asked();
    assert!(signer.count() <= 1, "the agreement payment was signed {} times", signer.count());
    assert!(asked.iter().all(|a| a.url == url), "asked another URL");
    assert!(
        asked.iter().all(|a| a.header("accept-encoding") == Some("identity")),
        "a request without Accept-Encoding: identity"
    );
    let paid: Vec<&str> = asked.iter().filter_map(|a| a.header("payment-signature")).collect();
    assert!(paid.windows(2).all(|w| w[0] == w[1]), "a paid request carried another payment");
    if signer.count() == 0 {
        assert!(paid.is_empty(), "sent a payment nobody signed");
    }
    if cancel.is_cancelled() {
        assert!(asked.is_empty() && signer.count() == 0, "acted after the caller's signal");
        assert!(matches!(&got, Err(d) if d.code == DeclineCode::AgreementFailed), "{got:?}");
    }
    match &got {
        Ok(Agreement::Agreed { receipt }) => {
            assert!(hash_equals(&receipt.atr_hash, &h.to_hex()), "a receipt for another hash: {receipt:?}");
            assert!(receipt.agreed);
        }
        Ok(Agreement::ToApprove(t)) => panic!("an approval handed back for an approved payment: {t:?}"),
        Err(Declined { moved: Some(moved), .. }) => {
            assert_eq!(signer.count(), 1, "moved without a signature");
            assert!(!paid.is_empty(), "moved before the payment was sent");
            assert_eq!(moved.h, h);
            assert_eq!(moved.bytes, atr);
        }
        Err(_) => {}
    }
});

/// What an approval must be: for this URL and H, an option its 402 offers, read by an x402 pairing as carrying H.
fn to_approve(approve: &AgreementPayment, url: &str, h: &terms::AtrHash) {
    assert_eq!(approve.url, url);
    let accepts = approve.required["accepts"].as_array().expect("the 402 offers options");
    assert!(is_offered(accepts, &approve.option), "an option the 402 does not offer");
    let mut only = approve.required.clone();
    only["accepts"] = Value::Array(vec![approve.option.clone()]);
    let reads_h = x402_pairings().any(|p| p.public_proof() && p.read(&only).is_ok_and(|r| r.h == *h));
    assert!(reads_h, "no public-proof pairing reads H from the approved option");
}
