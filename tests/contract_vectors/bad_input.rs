//! Bad input, each refused with its exact `ContractError`: the issue's list (a signature that is not `ed25519:` and
//! the base64url of 64 bytes, a kid not listed, a key used after its retirement, a member added after signing,
//! repeated members) and the key list's own faults (an `alg` other than `ed25519`, a key of 31 or 33 bytes, a kid
//! listed twice, dates and signing times that are not RFC 3339). The documents start from the vectors' valid
//! receipt and are signed here with `sign_object`.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Map, Value, json};
use terms::contract::{ContractError, KeyList, Receipt, parse_signature, public_key_of, read, read_keys, sign_object};

use super::load::{self, keys};

const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn valid_receipt() -> Map<String, Value> {
    let row = load::rows_of("receipt.json").into_iter().find(|r| r.name == "receipt/valid").unwrap();
    load::object(&row.text)
}

/// The object with `kid` and, for the receipt's signing time `time`, `at`, signed by `seed`.
fn signed(mut doc: Map<String, Value>, kid: &str, at: Option<&str>, seed: &[u8; 32]) -> Map<String, Value> {
    doc.insert("kid".into(), kid.into());
    if let Some(at) = at {
        doc.insert("time".into(), at.into());
    }
    doc.remove("signature");
    let signature = sign_object(&doc, seed).unwrap();
    doc.insert("signature".into(), signature.into());
    doc
}

fn check_text(text: &str, keys: &KeyList) -> Result<(), ContractError> {
    read::<Receipt>(text.as_bytes())?.verify(keys)
}

fn check(doc: &Map<String, Value>, keys: &KeyList) -> Result<(), ContractError> {
    check_text(&serde_json::to_string(doc).unwrap(), keys)
}

fn key_list(entries: Value) -> Result<KeyList, ContractError> {
    read_keys(json!({ "contract": "1.0", "keys": entries }).to_string().as_bytes())
}

fn entry(kid: &str, key: &str, from: &str, until: Option<&str>) -> Value {
    let mut e = json!({ "kid": kid, "alg": "ed25519", "key": key, "from": from });
    if let Some(until) = until {
        e["until"] = until.into();
    }
    e
}

fn is_key_list_malformed(r: &Result<impl std::fmt::Debug, ContractError>) -> bool {
    matches!(r, Err(ContractError::Malformed { document: "key list", .. }))
}

#[test]
fn a_signature_that_is_not_ed25519_base64url_of_64_bytes_is_signature_malformed() {
    let keys = keys();
    let seller = keys.list("seller");
    let doc = valid_receipt();
    assert_eq!(check(&doc, seller), Ok(()));
    let signature = load::text(&doc["signature"]).to_owned();
    let bytes = parse_signature(&signature).unwrap().to_bytes();
    let b64 = URL_SAFE_NO_PAD.encode(bytes);
    assert_eq!(format!("ed25519:{b64}"), signature);
    // 64 bytes are 86 characters, the last one carrying two bits and four that a canonical encoding leaves zero.
    let last = ALPHABET.find(b64.chars().last().unwrap()).unwrap();
    assert_eq!(last & 0b1111, 0);
    let non_canonical = &ALPHABET[last | 0b1000..=(last | 0b1000)];
    let bad = [
        format!("Ed25519:{b64}"),
        format!("ed25519 {b64}"),
        format!("ed25519{b64}"),
        format!("ed25519: {b64}"),
        format!("ed25519:{b64}\n"),
        b64.clone(),
        format!("ed25519:{}", STANDARD.encode(bytes)),
        format!("ed25519:{b64}="),
        format!("ed25519:{}", URL_SAFE_NO_PAD.encode(&bytes[..63])),
        format!("ed25519:{}", URL_SAFE_NO_PAD.encode([&bytes[..], &[0]].concat())),
        format!("ed25519:{}{non_canonical}", &b64[..85]),
        format!("ed25519:{}", hex::encode(bytes)),
        "ed25519:".to_owned(),
        String::new(),
    ];
    for text in bad {
        assert_eq!(parse_signature(&text).map(drop), Err(ContractError::SignatureMalformed), "{text:?}");
        let mut d = doc.clone();
        d.insert("signature".into(), text.clone().into());
        assert_eq!(check(&d, seller), Err(ContractError::SignatureMalformed), "{text:?}");
    }
    // A signature that is not a string is not a receipt.
    let mut d = doc;
    d.insert("signature".into(), json!(64));
    assert!(matches!(check(&d, seller), Err(ContractError::Malformed { document: "receipt", .. })));
}

#[test]
fn a_kid_not_listed_is_key_unknown() {
    let keys = keys();
    let seller = keys.list("seller");
    let doc = signed(valid_receipt(), "seller-7", None, &[7; 32]);
    assert_eq!(check(&doc, seller), Err(ContractError::KeyUnknown("seller-7".into())));
    // The verifier's key, under the seller's list.
    let doc = signed(valid_receipt(), "verifier-2026", None, &keys.seed("verifier-2026"));
    assert_eq!(check(&doc, seller), Err(ContractError::KeyUnknown("verifier-2026".into())));
    assert_eq!(check(&doc, keys.list("verifier")), Ok(()));
}

#[test]
fn a_key_used_at_or_after_its_retirement_is_key_not_valid() {
    let keys = keys();
    let seller = keys.list("seller");
    let until = seller.key("seller-2025").unwrap().until.clone().unwrap();
    let seed = keys.seed("seller-2025");
    let at = |time: &str| check(&signed(valid_receipt(), "seller-2025", Some(time), &seed), seller);
    let not_valid = |time: &str| Err(ContractError::KeyNotValid { kid: "seller-2025".into(), at: time.into() });
    assert_eq!(until, "2026-01-01T00:00:00Z");
    for time in [until.as_str(), "2026-03-01T12:00:00Z", "2026-01-01T01:00:00+01:00", "2026-01-01T00:00:00.000000001Z"]
    {
        assert_eq!(at(time), not_valid(time), "{time}");
    }
    for time in ["2025-12-31T23:59:59Z", "2026-01-01T00:59:59+01:00", "2025-12-31T23:59:59.999999999Z"] {
        assert_eq!(at(time), Ok(()), "{time}");
    }
}

#[test]
fn key_dates_with_fractions_of_a_second_are_compared_to_the_nanosecond() {
    let secret = [42u8; 32];
    let list = key_list(json!([entry(
        "frac",
        &public_key_of(&secret),
        "2026-01-01T00:00:00.500Z",
        Some("2026-01-01T00:00:10.5Z")
    )]))
    .unwrap();
    let at = |time: &str| check(&signed(valid_receipt(), "frac", Some(time), &secret), &list);
    let not_valid = |time: &str| Err(ContractError::KeyNotValid { kid: "frac".into(), at: time.into() });
    for time in
        ["2026-01-01T00:00:00.2Z", "2026-01-01T00:00:00.499999999Z", "2026-01-01T00:00:10.5Z", "2026-01-01T00:00:11Z"]
    {
        assert_eq!(at(time), not_valid(time), "{time}");
    }
    for time in
        ["2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.50000Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:10.4Z"]
    {
        assert_eq!(at(time), Ok(()), "{time}");
    }
}

#[test]
fn a_member_added_or_changed_after_signing_is_signature_invalid() {
    let keys = keys();
    let seller = keys.list("seller");
    let doc = valid_receipt();
    let mut added = doc.clone();
    added.insert("refund".into(), "none".into());
    assert_eq!(check(&added, seller), Err(ContractError::SignatureInvalid));
    let mut listed = doc.clone();
    listed["upstream"].as_array_mut().unwrap().push("https://upstream.example/receipts/r_78".into());
    assert_eq!(check(&listed, seller), Err(ContractError::SignatureInvalid));
    let mut removed = doc.clone();
    removed.remove("grade").unwrap();
    assert_eq!(check(&removed, seller), Err(ContractError::SignatureInvalid));
    let mut changed = doc;
    changed.insert("paid".into(), "0.0020".into());
    assert_eq!(check(&changed, seller), Err(ContractError::SignatureInvalid));
}

#[test]
fn a_member_twice_is_duplicate_member_at_any_depth_with_its_exact_name() {
    let keys = keys();
    let seller = keys.list("seller");
    let mut doc = valid_receipt();
    doc.insert("meta".into(), json!({ "a": 1, "list": [{ "b": 1 }], "x at line 1 column 2": 0 }));
    let doc = signed(doc, "seller-2026", None, &keys.seed("seller-2026"));
    let text = serde_json::to_string(&doc).unwrap();
    assert_eq!(check_text(&text, seller), Ok(()));
    let cases = [
        (text.replacen('{', r#"{"kid":"seller-2026","#, 1), "kid"),
        (text.replacen('{', r#"{"\u006bid":"seller-2026","#, 1), "kid"),
        (text.replacen(r#""meta":{"#, r#""meta":{"a":2,"#, 1), "a"),
        (text.replacen(r#""list":[{"#, r#""list":[{"b":1,"#, 1), "b"),
        (text.replacen(r#""meta":{"#, r#""meta":{"x at line 1 column 2":1,"#, 1), "x at line 1 column 2"),
        (format!("{},\"signature\":\"ed25519:\"}}", &text[..text.len() - 1]), "signature"),
    ];
    for (text, name) in cases {
        assert_eq!(check_text(&text, seller), Err(ContractError::DuplicateMember(name.into())), "{text}");
    }
    let list = keys.list_texts["seller"].replacen(r#""alg""#, r#""alg": "ed25519", "alg""#, 1);
    assert_eq!(read_keys(list.as_bytes()), Err(ContractError::DuplicateMember("alg".into())));
}

#[test]
fn a_key_whose_alg_is_not_ed25519_is_malformed_and_the_list_s_other_keys_still_verify() {
    let keys = keys();
    let seller = keys.list("seller");
    let mut listed: Value = serde_json::to_value(&seller.keys).unwrap();
    for alg in ["ES256", "Ed25519", "ed448", ""] {
        listed[1]["alg"] = alg.into();
        let list = key_list(listed.clone()).unwrap();
        let current = signed(valid_receipt(), "seller-2026", None, &keys.seed("seller-2026"));
        assert!(is_key_list_malformed(&check(&current, &list)), "{alg}");
        let old = signed(valid_receipt(), "seller-2025", Some("2025-06-01T00:00:00Z"), &keys.seed("seller-2025"));
        assert_eq!(check(&old, &list), Ok(()), "{alg}");
    }
}

#[test]
fn a_key_of_31_or_33_bytes_or_not_base64url_is_malformed() {
    let keys = keys();
    let seed = keys.seed("seller-2026");
    let public = URL_SAFE_NO_PAD.decode(public_key_of(&seed)).unwrap();
    assert_eq!(public.len(), 32);
    let doc = signed(valid_receipt(), "k", None, &seed);
    let whole = URL_SAFE_NO_PAD.encode(&public);
    assert_eq!(check(&doc, &key_list(json!([entry("k", &whole, "2026-01-01T00:00:00Z", None)])).unwrap()), Ok(()));
    for key in [
        URL_SAFE_NO_PAD.encode(&public[..31]),
        URL_SAFE_NO_PAD.encode([&public[..], &[0]].concat()),
        STANDARD.encode(&public),
        format!("{whole}="),
        hex::encode(&public),
        String::new(),
    ] {
        let list = key_list(json!([entry("k", &key, "2026-01-01T00:00:00Z", None)])).unwrap();
        assert!(is_key_list_malformed(&check(&doc, &list)), "{key}: {:?}", check(&doc, &list));
    }
}

#[test]
fn a_key_list_with_a_kid_twice_is_malformed() {
    let keys = keys();
    let seller = &keys.list("seller").keys;
    let other = public_key_of(&keys.seed("seller-9"));
    let twice = json!([seller[0], seller[1], entry("seller-2026", &other, "2026-01-01T00:00:00Z", None)]);
    assert!(is_key_list_malformed(&key_list(twice)));
    // The same entry twice too: which of two entries a kid names is never a question.
    assert!(is_key_list_malformed(&key_list(json!([seller[0], seller[1], seller[1]]))));
    assert_eq!(key_list(json!([seller[0], seller[1]])).as_ref(), Ok(keys.list("seller")));
}

#[test]
fn a_signing_time_or_a_key_date_that_is_not_rfc3339_is_time_malformed() {
    let keys = keys();
    let seller = keys.list("seller");
    let seed = keys.seed("seller-2026");
    for time in ["2026-03-01 12:00:00Z", "2026-03-01T12:00:00", "2026-02-30T12:00:00Z", "2026-03-01", "", "yesterday"] {
        let doc = signed(valid_receipt(), "seller-2026", Some(time), &seed);
        assert_eq!(check(&doc, seller), Err(ContractError::Time(time.into())), "{time}");
    }
    let public = public_key_of(&seed);
    let doc = signed(valid_receipt(), "k", None, &seed);
    for (from, until) in [("2026-01-01", None), ("2026-01-01T00:00:00Z", Some("2027-01-01T00:00:60Z"))] {
        let list = key_list(json!([entry("k", &public, from, until)])).unwrap();
        let bad = until.unwrap_or(from);
        assert_eq!(check(&doc, &list), Err(ContractError::Time(bad.into())), "{from} {until:?}");
    }
}

#[test]
fn a_small_order_key_verifies_nothing() {
    // The identity point as a key, and R = the identity, s = 0: a signature that holds for every message under the
    // non-strict equation. `verify_strict` refuses the key.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let list =
        key_list(json!([entry("weak", &URL_SAFE_NO_PAD.encode(identity), "2025-01-01T00:00:00Z", None)])).unwrap();
    let mut doc = valid_receipt();
    doc.insert("kid".into(), "weak".into());
    let forged = [&identity[..], &[0u8; 32][..]].concat();
    doc.insert("signature".into(), format!("ed25519:{}", URL_SAFE_NO_PAD.encode(forged)).into());
    assert_eq!(check(&doc, &list), Err(ContractError::SignatureInvalid));
}
