//! The signed agent contract's reader and signature check (`terms::contract`): a seller's offer card, quote,
//! payment challenge and receipt, an agent's mandate presentation, a verifier's attestation and a signer's key list
//! are all outside input, fetched from addresses the seller names.
//!
//! Input: a selector byte (which document kind) and the document's bytes.
//!
//! Asserts, for every input: a refusal has a `contract/<reason>` code; a document that reads writes back (as
//! JSON) into a text that reads as the same document, so the reader and the writer agree on every member, unknown
//! ones included; its signing bytes are RFC 8785 text that reads back as the same JSON as the document without its
//! `signature` (numbers by value) and is its own RFC 8785 form; and
//! its signature check under a fixed key list answers (any answer) without a panic, and refuses a document re-signed
//! by a key that list does not hold.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::contract::{
    Attestation, Challenge, ContractError, Document, KeyList, OfferCard, Presentation, Quote, Receipt, public_key_of,
    read, read_keys, sign_object, signing_bytes,
};
use terms::json::{canonical, same_json};

fn code_of(e: &ContractError) {
    assert!(e.code().starts_with("contract/") && e.code().len() > 9, "{e:?}");
    assert!(!e.to_string().is_empty());
}

/// The list every document is checked against: one key, from a fixed seed, valid from 2020 on.
fn keys() -> &'static KeyList {
    static KEYS: OnceLock<KeyList> = OnceLock::new();
    KEYS.get_or_init(|| {
        let list = format!(
            r#"{{"contract":"1.0","keys":[{{"kid":"k1","alg":"ed25519","key":"{}","from":"2020-01-01T00:00:00Z"}}]}}"#,
            public_key_of(&[1u8; 32])
        );
        read_keys(list.as_bytes()).expect("the fixed key list reads")
    })
}

fn check<T: Document + PartialEq + std::fmt::Debug>(bytes: &[u8]) {
    let signed = match read::<T>(bytes) {
        Ok(s) => s,
        Err(e) => return code_of(&e),
    };
    // Written back and read again: the same document.
    let text = serde_json::to_vec(signed.doc()).expect("a document read writes as JSON");
    let again = read::<T>(&text).unwrap_or_else(|e| panic!("{} written back does not read: {e}", T::NAME));
    assert_eq!(again.doc(), signed.doc(), "{} changed through its JSON", T::NAME);
    // The signing bytes are the object without its signature, in a form that reads back as it.
    let bytes = signing_bytes(signed.object()).expect("an object read is within the depth cap");
    let mut unsigned = signed.object().clone();
    unsigned.remove("signature");
    // Read back, they are the same JSON as the object (a number compared by value: `0e-07` is written `0`), and
    // their own RFC 8785 form: the signed bytes are a fixed point, so signer and verifier cannot disagree on them.
    let back: Value = serde_json::from_slice(&bytes).expect("signing bytes are JSON");
    assert!(same_json(&back, &Value::Object(unsigned.clone())), "{} signing bytes read back differently", T::NAME);
    assert_eq!(
        canonical(&back).map(String::into_bytes),
        Some(bytes.clone()),
        "{} signing bytes are not canonical",
        T::NAME
    );
    if let Err(e) = signed.verify(keys()) {
        code_of(&e);
    }
    // Re-signed by a key the list does not hold: never accepted.
    let signature = sign_object(&unsigned, &[7u8; 32]).expect("signable");
    unsigned.insert("signature".into(), Value::String(signature));
    let resigned = serde_json::to_vec(&unsigned).expect("JSON");
    if let Ok(s) = read::<T>(&resigned) {
        assert!(s.verify(keys()).is_err(), "{} signed by a stranger verified", T::NAME);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else { return };
    match which % 7 {
        0 => check::<OfferCard>(bytes),
        1 => check::<Quote>(bytes),
        2 => check::<Presentation>(bytes),
        3 => check::<Challenge>(bytes),
        4 => check::<Receipt>(bytes),
        5 => check::<Attestation>(bytes),
        _ => {
            if let Err(e) = read_keys(bytes) {
                code_of(&e);
            }
        }
    }
});
