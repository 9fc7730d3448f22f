#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The Stellar rail against the vector files' own data: `decoder-caps.json`'s `scval` rows (the caps of one value
//! and of an envelope), strkeys in and out of their canonical form, and the envelope read's refusals of bytes that
//! are not one transaction: trailing bytes, a nesting past what the decoder takes on a small stack.

use base64::Engine as _;
use serde_json::{Value, json};
use terms::rail::stellar::{MAX_DEPTH, MAX_ELEMENTS, Strkey, decode_envelope, decode_scval, read_signed_transfer};

fn vectors(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap()
}

#[test]
fn the_scval_caps_take_what_decoder_caps_accepts_and_refuse_the_rest() {
    let caps = &vectors("decoder-caps.json")["scval"];
    assert_eq!(caps["maxDepth"].as_u64().unwrap(), MAX_DEPTH as u64);
    assert_eq!(caps["maxElements"].as_u64().unwrap(), MAX_ELEMENTS as u64);
    let rows = caps["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        let got = decode_scval(&b64(&row["xdr"])).map(drop).map_err(|r| r.code());
        let want = if row["accept"].as_bool().unwrap() { Ok(()) } else { Err("stellar/tx-malformed".to_owned()) };
        assert_eq!(got, want, "{}: {}", row["name"], row["case"]);
    }
    let envelopes = caps["envelopes"].as_array().unwrap();
    assert_eq!(envelopes.len(), 4);
    for row in envelopes {
        let got = decode_envelope(&b64(&row["xdr"])).map(drop).map_err(|r| r.code());
        let want = if row["accept"].as_bool().unwrap() { Ok(()) } else { Err("stellar/tx-malformed".to_owned()) };
        assert_eq!(got, want, "{}: {}", row["name"], row["case"]);
    }
}

/// An envelope the caps take still pays what its payer's entry signs: SE1's second entry (source-account credentials)
/// is not the payer's, and the read finds the payer's one.
#[test]
fn an_envelope_within_the_caps_reads_its_transfer() {
    let caps = &vectors("decoder-caps.json")["scval"];
    let se1 = &caps["envelopes"][0]["xdr"];
    let (p, agrees) = read_signed_transfer(Some(se1), Some("stellar:testnet"), false).unwrap();
    assert!(agrees);
    assert_eq!(p.amount, 10_000_000);
}

/// XDR of vectors nested `levels` deep around a void.
fn nested(levels: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..levels {
        out.extend_from_slice(&[0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 1]);
    }
    out.extend_from_slice(&[0, 0, 0, 1]);
    out
}

/// The stack the test gives the decoder: a quarter of a thread's default (2 MiB, Rust's and tokio's); a debug build
/// needs between 384 KiB and 512 KiB at the decoder's depth limit.
const STACK: usize = 512 * 1024;

/// The decoder refuses, on a 512 KiB stack, the deepest value an 8,192-character envelope could hold (about 512
/// levels), and every depth between the cap and it: its own depth limit stops its recursion before the stack does.
#[test]
fn nesting_past_the_cap_is_refused_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(|| {
            for levels in [MAX_DEPTH, MAX_DEPTH + 1, 100, 200, 511, 2000] {
                let got = decode_scval(&nested(levels)).map(drop).map_err(|r| r.code());
                let want = if levels <= MAX_DEPTH { Ok(()) } else { Err("stellar/tx-malformed".to_owned()) };
                assert_eq!(got, want, "{levels} levels");
            }
        })
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn an_envelope_with_bytes_after_it_is_refused() {
    let x = vectors("x402-exact-stellar.json");
    let mut bytes = b64(&x["V3"]["envelope"]);
    assert!(decode_envelope(&bytes).is_ok());
    bytes.extend_from_slice(&[0, 0, 0, 0]);
    assert_eq!(decode_envelope(&bytes).unwrap_err().code(), "stellar/tx-malformed");
    // Cut short, anywhere.
    let whole = b64(&x["V3"]["envelope"]);
    for cut in [0, 1, 4, 100, whole.len() - 1] {
        assert_eq!(decode_envelope(&whole[..cut]).unwrap_err().code(), "stellar/tx-malformed", "cut at {cut}");
    }
}

/// A bool of any word but 0 or 1 is not XDR, though `stellar-xdr` reads it (as false): the read refuses it.
#[test]
fn a_bool_of_another_word_is_refused() {
    assert!(decode_scval(&[0, 0, 0, 0, 0, 0, 0, 1]).is_ok());
    assert_eq!(decode_scval(&[0, 0, 0, 0, 0, 0, 0, 2]).unwrap_err().code(), "stellar/tx-malformed");
    // A symbol's non-zero padding.
    assert!(decode_scval(&[0, 0, 0, 15, 0, 0, 0, 1, b'a', 0, 0, 0]).is_ok());
    assert_eq!(decode_scval(&[0, 0, 0, 15, 0, 0, 0, 1, b'a', 0, 0, 1]).unwrap_err().code(), "stellar/tx-malformed");
}

#[test]
fn strkeys_are_read_in_their_canonical_form_only() {
    let x = vectors("x402-exact-stellar.json");
    let f = &x["fixed"];
    for (text, kind) in [(&f["seller"], "G"), (&f["asset"], "C"), (&x["V1"]["M"], "M")] {
        let text = text.as_str().unwrap();
        let key = Strkey::parse(text).unwrap();
        assert_eq!(key.to_text(), text);
        assert_eq!(&text[..1], kind);
        // A bad checksum: each of the last two characters changed.
        for at in [text.len() - 1, text.len() - 2] {
            let mut bad = text.as_bytes().to_vec();
            bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
            assert_eq!(Strkey::parse(std::str::from_utf8(&bad).unwrap()), None, "{text} changed at {at}");
        }
        // Lower case, a character short or over, padding.
        assert_eq!(Strkey::parse(&text.to_lowercase()), None);
        assert_eq!(Strkey::parse(&text[..text.len() - 1]), None);
        assert_eq!(Strkey::parse(&format!("{text}A")), None);
        assert_eq!(Strkey::parse(&format!("{text}=")), None);
    }
    // The muxed address's base is the seller's G.
    let m = Strkey::parse(x["V1"]["M"].as_str().unwrap()).unwrap();
    assert_eq!(m.base().unwrap().to_text(), f["seller"].as_str().unwrap());
    assert_eq!(m.muxed_id(), Some(x["V1"]["muxedId"].as_str().unwrap().parse().unwrap()));
}

#[test]
fn the_envelope_text_is_checked_before_it_is_decoded() {
    let x = vectors("x402-exact-stellar.json");
    let v3 = &x["V3"]["envelope"];
    let read = |t: &Value, n: &str| read_signed_transfer(Some(t), Some(n), false).map(drop).map_err(|r| r.code());
    assert_eq!(read(v3, "stellar:testnet"), Ok(()));
    assert_eq!(read(v3, "stellar:futurenet"), Err("stellar/network-malformed".into()));
    assert_eq!(read(&json!(""), "stellar:testnet"), Err("stellar/tx-malformed".into()));
    assert_eq!(read(&json!(7), "stellar:testnet"), Err("stellar/tx-malformed".into()));
    assert_eq!(read(&json!("A".repeat(8196)), "stellar:testnet"), Err("stellar/tx-too-large".into()));
    // 8,192 characters counted as JavaScript counts them: a character outside the BMP counts two.
    assert_eq!(read(&json!("😀".repeat(4097)), "stellar:testnet"), Err("stellar/tx-too-large".into()));
}
