//! The x402 `PAYMENT-REQUIRED` header and document: `decode_payment_required` on the input as a header, then `read`
//! of every built x402 pairing on the decoded document and on the input read as JSON text directly (so the fuzzer
//! need not learn base64 to reach the reads).
//!
//! Asserts: nothing panics; a decoded header is an object within the header's length; it re-encodes (JSON.stringify
//! form, base64) to a header that decodes to the same RFC 8785 value; and every accepted read names an https link
//! the link rule accepts, the hash the document's legal context writes, at most 32 options each of which the
//! document offers, and an agreement URL only where the rule accepts it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::AtrHash;
use terms::json::{is_offered, js_length, same_json, to_js_string};
use terms::link::{MAX_LINK_CHARS, is_agreement_url, is_https_link};
use terms::pairing::Offer;
use terms::x402::{MAX_HEADER_CHARS, MAX_OPTIONS, decode_payment_required};
use terms::x402_pairings;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(doc) = decode_payment_required(text) {
        assert!(doc.is_object());
        assert!(text.chars().count() <= MAX_HEADER_CHARS);
        let written = to_js_string(&doc).expect("a decoded document is within the depth the writer writes");
        let header = b64_encode(written.as_bytes());
        if header.len() <= MAX_HEADER_CHARS {
            let again = decode_payment_required(&header).expect("the gate's own form of a document decodes");
            assert!(same_json(&doc, &again), "the document changed through its own JSON form");
        }
        reads(&doc);
    }
    if let Some(doc) = terms::json::parse(text) {
        reads(&doc);
    }
});

fn reads(doc: &Value) {
    for pairing in x402_pairings() {
        let read = match pairing.read(doc) {
            Ok(read) => read,
            Err(r) => {
                assert!(r.code().starts_with("x402/"), "{}: refusal {r:?}", pairing.id());
                continue;
            }
        };
        assert!(is_https_link(&read.link) && js_length(&read.link) <= MAX_LINK_CHARS, "link {:?}", read.link);
        let info = &doc["extensions"]["legalContext"]["info"];
        assert_eq!(info["value"].as_str().and_then(AtrHash::parse), Some(read.h), "{}: H", pairing.id());
        if let Some(url) = &read.agreement {
            assert!(is_agreement_url(url), "agreement URL {url:?}");
        }
        let Offer::X402 { required, options } = &read.offer else { panic!("{}: not an x402 offer", pairing.id()) };
        assert_eq!(*required, doc);
        let accepts = doc["accepts"].as_array().expect("an accepted read has accepts");
        assert!(!options.is_empty() && options.len() <= accepts.len() && accepts.len() <= MAX_OPTIONS);
        for option in options {
            assert!(is_offered(accepts, option), "{}: an option the document does not offer", pairing.id());
        }
    }
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
