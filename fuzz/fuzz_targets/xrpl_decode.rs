//! The XRPL binary decode (`terms::rail::xrpl`): `decode::decode` on the input's bytes, `decode_presented` on their
//! hex, and the three XRPL pairings' bound over a payment carrying that hex (`x402/exact/xrpl`'s option of
//! x402-exact-xrpl.json's V2, `mpp/charge/xrpl`'s B6 credential, `mpp/session/xrpl`'s XS2 opening), each with its
//! channel read for the session.
//!
//! Asserts: nothing panics; an accepted input nests at most 64 levels and holds at most 2,048 fields in all; it is
//! canonical, so the fields written back are the input byte for byte, and its unsigned form (no signing key or
//! signature) decodes again; a blob the rail refuses is refused by the pairing it is presented to (`x402/exact/xrpl`)
//! with an `xrpl/` or `mpp/` code; and a pairing that reads H back reads the fixture's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::rail::xrpl::{MAX_DEPTH, MAX_FIELDS, decode, decode_presented, without_signature};
use terms_fuzz::vector_file;

/// How deep the fields nest (a leaf is 1) and how many there are in all.
fn measure(fields: &[decode::Field<'_>]) -> (usize, usize) {
    let mut depth = 1;
    let mut count = fields.len();
    for f in fields {
        if let Some(children) = f.children() {
            let (d, c) = measure(children);
            depth = depth.max(d + 1);
            count += c;
        }
    }
    (depth, count)
}

/// The payments a blob is presented in, by pairing.
fn payments(blob: &str) -> impl Iterator<Item = (&'static str, Value)> + '_ {
    static FIXTURES: std::sync::OnceLock<[(&'static str, Value, &'static str); 3]> = std::sync::OnceLock::new();
    let fixtures = FIXTURES.get_or_init(|| {
        let x402 = vector_file("x402-exact-xrpl.json");
        let charge = vector_file("mpp-charge-xrpl.json");
        let session = vector_file("mpp-session-hedera-solana-xrpl.json");
        let row = |f: &Value, pairing: &str| {
            let rows = f["buyer"]["rows"].as_array().expect("rows");
            rows.iter().find(|r| r["name"] == "B6" && r["pairing"] == pairing).expect("B6")["input"]["presented"]
                .clone()
        };
        [
            ("x402/exact/xrpl", row(&x402, "x402/exact/xrpl"), "/payload/signedTxBlob"),
            ("mpp/charge/xrpl", row(&charge, "mpp/charge/xrpl"), "/payload/blob"),
            ("mpp/session/xrpl", row(&session, "mpp/session/xrpl"), "/payload/transaction"),
        ]
    });
    fixtures.iter().map(|(pairing, presented, at)| {
        let mut p = presented.clone();
        *p.pointer_mut(at).expect("the blob's member") = Value::String(blob.to_owned());
        (*pairing, p)
    })
}

fuzz_target!(|data: &[u8]| {
    let decoded = decode::decode(data);
    if let Ok(fields) = &decoded {
        let (depth, count) = measure(fields);
        assert!(depth <= MAX_DEPTH + 1 && count <= MAX_FIELDS, "depth {depth}, {count} fields");
        assert_eq!(decode::encode(fields), data, "an accepted blob is canonical");
        let stripped = without_signature(fields);
        assert!(stripped.len() <= data.len());
        assert!(decode::decode(&stripped).is_ok(), "the unsigned form decodes again");
    }
    let text = hex_upper(data);
    let rail = decode_presented(&text);
    // Every pairing reads a blob the rail takes; one the rail refuses is held to the first pairing only, which keeps
    // the many refused inputs cheap (the three read it through the same rail call).
    let take = if rail.is_ok() { 3 } else { 1 };
    for (pairing, presented) in payments(&text).take(take) {
        let p = terms::pairing(pairing).expect("built");
        let got = p.bound(&presented, None);
        if rail.is_err() {
            let code = got.as_ref().expect_err("a blob the rail refuses is refused").code();
            assert!(code.starts_with("xrpl/") || code.starts_with("mpp/"), "{pairing}: {code}");
        }
        if let Ok(h) = got {
            assert_eq!(h.to_hex(), "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        }
        if pairing == "mpp/session/xrpl"
            && let Some(c) = p.channel()
        {
            let _ = c.channel_ref(&presented, None);
            let _ = c.kind(&presented, None);
        }
    }
});

fn hex_upper(data: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(data.len() * 2);
    for b in data {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}
