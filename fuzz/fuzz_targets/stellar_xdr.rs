//! The Stellar rail's XDR read: `terms::rail::stellar::decode_envelope` and `decode_scval` on the input's bytes, and
//! the text path (`read_signed_transfer`, `signing_for`) on its base64.
//!
//! Asserts: nothing panics and nothing overflows the stack; the text path decides as the bytes path does (an envelope
//! the bytes path refuses is `stellar/tx-malformed` or `stellar/tx-too-large` by text); a refusal is one of the
//! rail's codes; and where an envelope can be signed, the envelope its signature completes decodes again, and reads
//! back the same payment with the expiration the signing set and the signature written in the payer's entry.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::rail::stellar::{MAX_XDR, decode_envelope, decode_scval, read_signed_transfer, signing_for};

const CODES: [&str; 5] = [
    "stellar/tx-malformed",
    "stellar/tx-too-large",
    "stellar/not-one-transfer",
    "stellar/no-address-auth",
    "stellar/network-malformed",
];

fuzz_target!(|data: &[u8]| {
    let _ = decode_scval(data);
    let decoded = decode_envelope(data);
    let text = Value::String(base64::Engine::encode(&base64::engine::general_purpose::STANDARD, data));
    let network = Some("stellar:testnet");
    let read = read_signed_transfer(Some(&text), network, false);
    let too_large = text.as_str().is_some_and(|t| t.len() > MAX_XDR);
    match (&decoded, &read) {
        (Err(r), Err(t)) => {
            assert_eq!(r.code(), "stellar/tx-malformed");
            let want = if too_large { "stellar/tx-too-large" } else { "stellar/tx-malformed" };
            assert_eq!(t.code(), want);
        }
        (Err(_), Ok(_)) => panic!("the text path read what the bytes path refused"),
        (Ok(_), Err(t)) => assert!(CODES.contains(&t.code().as_str()), "{}", t.code()),
        (Ok(_), Ok(_)) => assert!(!too_large),
    }
    let landed = read_signed_transfer(Some(&text), network, true);
    if let (Ok((a, _)), Ok((b, _))) = (&read, &landed) {
        assert_eq!(a, b, "one entry of the payer: landed or not, the same");
    }
    let Ok(signing) = signing_for(Some(&text), network, 1000, false) else { return };
    let Ok((before, agrees)) = &read else { panic!("signed what the read refused") };
    assert_eq!(&signing.payment, before);
    assert_eq!(signing.agrees, *agrees);
    let Ok(written) = signing.written(&[7; 64]) else { return };
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &written).expect("base64");
    if written.len() <= MAX_XDR {
        decode_envelope(&bytes).expect("the signed envelope decodes");
        let (after, again) = read_signed_transfer(Some(&Value::String(written)), network, false).expect("read back");
        assert_eq!(again, *agrees);
        assert_eq!(
            (&after.asset, &after.source, &after.to, after.amount),
            (&before.asset, &before.source, &before.to, before.amount)
        );
        assert_eq!(after.auth.as_ref().map(|a| a.expiration), Some(1000));
    }
});
