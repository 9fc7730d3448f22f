//! The JWS and SD-JWT reader, driven from `tests/vectors/sd-jwt.json`'s own rows, and its bad input.

use serde_json::{Value, json};

use super::sd_jwt::{self, Bounds, SdJwtError};
use super::*;

fn file() -> Value {
    serde_json::from_str(include_str!("../../tests/vectors/sd-jwt.json")).unwrap()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}

/// The `vct` of each mandate the resolved `delegate_payload` holds, or `Value::Null` when it has none.
fn delegate_vcts(read: &sd_jwt::SdJwt<'_>) -> Value {
    match read.resolved.get("delegate_payload") {
        Some(Value::Array(items)) => items.iter().map(|m| m["vct"].clone()).collect(),
        _ => Value::Null,
    }
}

fn checkout_mandate(read: &sd_jwt::SdJwt<'_>) -> Option<Value> {
    let items = read.resolved.get("delegate_payload")?.as_array()?;
    items.iter().find(|m| m["vct"] == "mandate.checkout.1").cloned()
}

#[test]
fn c4_disclosure_digests_are_rfc_9901s() {
    let f = file();
    let rows = f["C4"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(disclosure_digest(text(&row["disclosure"])), text(&row["expectDigest"]));
    }
}

#[test]
fn fixed_checkout_hash_and_printed_digests() {
    let f = file();
    let fixed = &f["fixed"];
    assert_eq!(disclosure_digest(text(&fixed["CJ"])), text(&fixed["CH"]));
    // Every text the file holds, and every part of every presentation, by digest.
    let mut presentations: Vec<&str> = vec![text(&f["C6"]["presentation"]), text(&f["C6plant"]["presentation"])];
    presentations.extend(f["C7"].as_array().unwrap().iter().map(|r| text(&r["presentation"])));
    let mut digests: Vec<String> = vec![disclosure_digest(text(&fixed["CJ"]))];
    for p in &presentations {
        digests.push(disclosure_digest(p));
        digests.extend(p.split('~').map(disclosure_digest));
    }
    let payloads: Vec<String> = presentations
        .iter()
        .map(|p| {
            let [_, payload, _] = jws_segments(p.split('~').next().unwrap()).unwrap();
            String::from_utf8(crate::codec::b64u_decode(payload).unwrap()).unwrap()
        })
        .collect();
    let printed = fixed["printedDigests"].as_object().unwrap();
    assert_eq!(printed["CH"], fixed["CH"]);
    for (name, digest) in printed {
        let digest = text(digest);
        // A digest the file prints is the digest of a text it holds, or (D(dpo), the disclosure C7's first row
        // leaves out) one a signed payload lists without its disclosure.
        assert!(
            digests.iter().any(|d| d == digest) || payloads.iter().any(|p| p.contains(digest)),
            "{name}: {digest} is neither a digest of the file's texts nor referenced by a payload"
        );
    }
}

#[test]
fn c6_resolves_the_referenced_mandates() {
    let f = file();
    let row = &f["C6"];
    let read = sd_jwt::read(text(&row["presentation"]), Bounds::default()).unwrap();
    assert_eq!(delegate_vcts(&read), row["expectDelegatePayloadVcts"]);
    assert_eq!(checkout_mandate(&read).as_ref(), Some(&row["expectCheckoutMandate"]));
    assert_eq!(read.disclosures.len(), 2);
    assert_eq!(read.key_binding, None);
    assert!(!read.resolved.contains_key("_sd") && !read.resolved.contains_key("_sd_alg"));
    assert_eq!(read.payload["_sd_alg"], "sha-256");
}

#[test]
fn c6plant_is_refused_as_its_row_says() {
    let f = file();
    let row = &f["C6plant"];
    let expect = match text(&row["expect"]) {
        "malformed" => SdJwtError::Malformed,
        "sd-alg-unsupported" => SdJwtError::SdAlgUnsupported,
        "unreferenced" => SdJwtError::Unreferenced,
        "too-large" => SdJwtError::TooLarge,
        other => panic!("no reason {other}"),
    };
    assert_eq!(sd_jwt::read(text(&row["presentation"]), Bounds::default()), Err(expect));
    // The planted disclosure carries E, which the reader never hands back.
    let e = text(&row["E"]).trim_start_matches("0x");
    let planted = text(&row["presentation"]).split('~').any(|d| {
        let Segment::Value(v) = decode_json_segment(d) else { return false };
        let Some(jwt) = v.as_array().and_then(|a| a.last()).and_then(|m| m.get("checkout_jwt")).and_then(Value::as_str)
        else {
            return false;
        };
        let [_, payload, _] = jws_segments(jwt).unwrap();
        decode_json_segment(payload).into_object().unwrap()["legalContext"]["value"].as_str().unwrap().contains(e)
    });
    assert!(planted, "the plant carries E");
}

#[test]
fn c7_rows_resolve() {
    let f = file();
    let rows = f["C7"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        let read = sd_jwt::read(text(&row["presentation"]), Bounds::default()).unwrap();
        assert_eq!(delegate_vcts(&read), row["expectDelegatePayloadVcts"], "{}", row["case"]);
        if let Some(mandate) = row.get("expectCheckoutMandate") {
            assert_eq!(checkout_mandate(&read).as_ref(), Some(mandate), "{}", row["case"]);
        }
        assert_eq!(read.header["alg"], "ES256");
    }
}

fn b64u_json(value: &Value) -> String {
    b64u_encode(value.to_string().as_bytes())
}

/// A presentation of `payload` under an ES256 header, with a stand-in signature and the disclosures given.
fn presentation(payload: &Value, disclosures: &[String]) -> String {
    let jwt = format!("{}.{}.c2ln", b64u_json(&json!({"alg": "ES256"})), b64u_json(payload));
    let mut out = jwt;
    for d in disclosures {
        out.push('~');
        out.push_str(d);
    }
    out.push('~');
    out
}

#[test]
fn jws_segments_refuse_a_bad_count_and_non_base64url() {
    let good = format!("{}.{}.c2ln", b64u_json(&json!({"alg": "ES256"})), b64u_json(&json!({})));
    assert!(jws_segments(&good).is_some());
    let [h, p, s] = jws_segments(&good).unwrap();
    assert_eq!(jws_segments(&format!("{h}.{p}")), None, "two segments");
    assert_eq!(jws_segments(&format!("{h}.{p}.{s}.{s}")), None, "four segments");
    assert_eq!(jws_segments(&format!("{h}.{p}.{s}=")), None, "padding");
    assert_eq!(jws_segments(&format!("{h}+.{p}.{s}")), None, "the standard alphabet");
    assert_eq!(jws_segments(&format!("{h}.{p}.c2lu")), Some([h, p, "c2lu"]));
    assert_eq!(jws_segments(&format!("{h}.{p}.c2lv")), Some([h, p, "c2lv"]));
    assert_eq!(jws_segments(&format!("{h}.{p}.c2m")), None, "a bit past the last byte");
    assert_eq!(decode_json_segment("bm90IGpzb24"), Segment::Unparsed, "not JSON");
    assert_eq!(decode_json_segment("_w"), Segment::Unparsed, "not UTF-8");
}

#[test]
fn segments_past_the_cap_are_too_deep_not_unparsed() {
    let deep_array = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert_eq!(decode_json_segment(&b64u_encode(deep_array.as_bytes())), Segment::TooDeep { object: false });
    let deep_object = format!("{{\"a\":{}{}}}", "[".repeat(64), "]".repeat(64));
    assert_eq!(decode_json_segment(&b64u_encode(deep_object.as_bytes())), Segment::TooDeep { object: true });
    let broken = format!("{}{}", "[".repeat(65), "]".repeat(64));
    assert_eq!(decode_json_segment(&b64u_encode(broken.as_bytes())), Segment::Unparsed);
    let at_cap = format!("{}{}", "[".repeat(64), "]".repeat(64));
    assert!(matches!(decode_json_segment(&b64u_encode(at_cap.as_bytes())), Segment::Value(_)));
    for text in ["[1, -0.5e+3, \"a\\u00e9\\n\", true, null, {\"k\": false}]", " {} "] {
        assert!(is_json_text(text), "{text}");
    }
    for text in ["[01]", "[1.]", "[\"\\x\"]", "{\"a\" 1}", "[1,]", "[1] x", "tru", "{1: 2}", "[}"] {
        assert!(!is_json_text(text), "{text}");
    }
}

#[test]
fn sd_jwt_refuses_a_changed_repeated_or_too_deep_disclosure() {
    let named = b64u_json(&json!(["salt", "given_name", "Ada"]));
    let element = b64u_json(&json!(["salt2", "FR"]));
    let payload = json!({"_sd_alg": "sha-256", "_sd": [disclosure_digest(&named)],
        "nationalities": [{"...": disclosure_digest(&element)}]});
    let both = presentation(&payload, &[named.clone(), element.clone()]);
    let read = sd_jwt::read(&both, Bounds::default()).unwrap();
    assert_eq!(Value::Object(read.resolved), json!({"nationalities": ["FR"], "given_name": "Ada"}));

    // A disclosure whose digest matches no reference: the digest the payload lists is of other bytes.
    let changed = b64u_json(&json!(["salt", "given_name", "Eve"]));
    let read = |p: &Value, d: &[String]| sd_jwt::read(&presentation(p, d), Bounds::default()).map(|_| ());
    assert_eq!(read(&payload, &[changed, element.clone()]), Err(SdJwtError::Unreferenced));
    // The same disclosure twice.
    assert_eq!(read(&payload, &[named.clone(), named.clone(), element.clone()]), Err(SdJwtError::Malformed));
    // One digest referenced twice.
    let twice = json!({"_sd": [disclosure_digest(&named)], "a": {"_sd": [disclosure_digest(&named)]}});
    assert_eq!(read(&twice, std::slice::from_ref(&named)), Err(SdJwtError::Malformed));
    // An element disclosure where a member is listed, and the other way round.
    let wrong = json!({"_sd": [disclosure_digest(&element)], "x": [{"...": disclosure_digest(&named)}]});
    assert_eq!(read(&wrong, &[named, element]), Err(SdJwtError::Malformed));
    // Another hash algorithm.
    assert_eq!(read(&json!({"_sd_alg": "sha-512"}), &[]), Err(SdJwtError::SdAlgUnsupported));

    // Disclosures nested 17 deep: past the resolution cap.
    let mut chain: Vec<String> = Vec::new();
    let mut inner = json!("leaf");
    for i in 0..17 {
        let d = b64u_json(&json!([format!("s{i}"), "n", inner]));
        inner = json!({"_sd": [disclosure_digest(&d)]});
        chain.push(d);
    }
    assert_eq!(read(&inner, &chain), Err(SdJwtError::TooLarge));
    assert_eq!(read(&inner, chain.get(1..).unwrap()), Ok(()), "16 deep, the innermost not disclosed: ignored");
    // A resolved payload nested past 64 levels.
    let mut deep = json!("leaf");
    for _ in 0..63 {
        deep = json!([deep]);
    }
    let wrapper = b64u_json(&json!(["s", "deep", deep]));
    let payload = json!({"a": {"_sd": [disclosure_digest(&wrapper)]}});
    assert_eq!(read(&payload, std::slice::from_ref(&wrapper)), Err(SdJwtError::TooLarge));
}

#[test]
fn sd_jwt_refuses_what_is_not_a_presentation() {
    let payload = json!({"a": 1});
    let good = presentation(&payload, &[]);
    let read = |t: &str| sd_jwt::read(t, Bounds::default()).map(|_| ());
    assert_eq!(read(&good), Ok(()));
    assert_eq!(read(good.trim_end_matches('~')), Err(SdJwtError::Malformed), "no tilde");
    assert_eq!(read(&format!("{good}kb")), Err(SdJwtError::Malformed), "a last part that is not a JWT");
    assert_eq!(read(&format!("{good}a.b.c")), Ok(()), "a key-binding JWT");
    assert_eq!(read(&good.replacen('.', "..", 1)), Err(SdJwtError::Malformed), "four segments");
    assert_eq!(read(&format!("{good} ")), Err(SdJwtError::Malformed), "a space");
    assert_eq!(read(&good.replacen('~', "~~", 1)), Err(SdJwtError::Malformed), "an empty disclosure");
    let small = Bounds { max_length: good.len() - 1, max_disclosures: 0 };
    assert_eq!(sd_jwt::read(&good, small).map(|_| ()), Err(SdJwtError::TooLarge));
    let one = b64u_json(&json!(["s", 1]));
    let two = presentation(&json!({"x": [{"...": disclosure_digest(&one)}]}), &[one]);
    let bounds = Bounds { max_length: 1 << 20, max_disclosures: 0 };
    assert_eq!(sd_jwt::read(&two, bounds).map(|_| ()), Err(SdJwtError::TooLarge));
    let array_payload = format!("{}.{}.c2ln~", b64u_json(&json!({})), b64u_json(&json!([])));
    assert_eq!(read(&array_payload), Err(SdJwtError::Malformed), "a payload that is not an object");
}

#[cfg(feature = "card")]
#[test]
fn es256_verifies_l2_under_l1s_key() {
    use super::es256::{Es256Error, verify};
    let f = file();
    let rows = f["C7"].as_array().unwrap();
    let layer = |i: usize| sd_jwt::read(text(&rows[i]["presentation"]), Bounds::default()).unwrap();
    // C7's third row is L1, whose cnf.jwk is the user's key; its first row is L2, which the user signs.
    let (l1, l2) = (layer(2), layer(0));
    let jwk = &l1.payload["cnf"]["jwk"];
    let (x, y) = (text(&jwk["x"]), text(&jwk["y"]));
    assert_eq!(verify(l2.jwt, x, y), Ok(()));
    let (signed, signature) = l2.jwt.rsplit_once('.').unwrap();
    let mut flipped = crate::codec::b64u_decode(signature).unwrap();
    flipped[10] ^= 1;
    let flipped = format!("{signed}.{}", b64u_encode(&flipped));
    assert_eq!(verify(&flipped, x, y), Err(Es256Error::SignatureInvalid));
    assert_eq!(verify(signed, x, y), Err(Es256Error::SignatureInvalid), "no signature segment");
    assert_eq!(verify(l2.jwt, y, x), Err(Es256Error::KeyMalformed), "not a point of P-256");
    assert_eq!(verify(l2.jwt, &x[1..], y), Err(Es256Error::KeyMalformed), "31 bytes");
    assert_eq!(verify(l1.jwt, x, y), Err(Es256Error::SignatureInvalid), "L1 is the issuer's");
}
