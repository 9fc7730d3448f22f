//! Issue 15's bad input for the card pairings, each case built from `card.json`'s own payments and its code the one
//! the reference (integraledger-terms 0.4.0) answers for the same case (each was run through the peer's
//! `bindings/card.py`): a `Signature-Input` that is not a structured field or omits the `lcp-hash` component; a JWS
//! with a bad segment count, non-base64url parts or an `alg` of `none`; an SD-JWT whose disclosure digest does not
//! match, that repeats a disclosure, or nests too deep. Also the card read's link rule, where the peer and a row of
//! the file's `agreedRefusals` part.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use support::vectors;
use terms::Pairing;

fn pairing(id: &str) -> &'static dyn Pairing {
    terms::pairing(id).unwrap()
}

fn bound(id: &str, presented: &Value) -> Result<String, String> {
    pairing(id).bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn refused(code: &str) -> Result<String, String> {
    Err(code.to_owned())
}

/// C2's TAP payment with the members given replaced.
fn tap(change: Value) -> Value {
    let f = vectors("card.json");
    let r = &f["C2"]["request"];
    let mut p = json!({"signatureInput": r["signatureInput"], "signature": r["signature"], "lcpHash": r["lcpHash"]});
    for (k, v) in change.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn signature_input() -> String {
    vectors("card.json")["C2"]["request"]["signatureInput"].as_str().unwrap().to_owned()
}

#[test]
fn a_signature_input_that_is_not_a_structured_field() {
    let si = signature_input();
    let h = vectors("card.json")["fixed"]["H"].as_str().unwrap().to_owned();
    assert_eq!(bound("card/visa-tap", &tap(json!({}))), Ok(h.clone()));
    let unterminated = si.trim_end_matches('"').to_owned();
    let cases = [
        (unterminated, "card/tap-signature-input-malformed"),
        (si.replace("created=1790000000", "created=1.5"), "card/tap-signature-input-malformed"),
        (si.replace("created=1790000000", "created=@1790000000"), "card/tap-signature-input-malformed"),
        (si.replace(r#"tag="agent-payer-auth""#, "tag=agent-payer-auth"), "card/tap-no-payer-signature"),
        ((0..17).map(|i| format!(r#"k{i}=("a")"#)).collect::<Vec<_>>().join(", "), "card/too-large"),
        ("x".repeat(8193), "card/too-large"),
    ];
    for (text, code) in cases {
        assert_eq!(bound("card/visa-tap", &tap(json!({"signatureInput": text}))), refused(code), "{text:.80}");
    }
    assert_eq!(bound("card/visa-tap", &json!([1])), refused("card/tap-signature-input-malformed"));
    assert_eq!(
        bound("card/visa-tap", &tap(json!({"signatureInput": 1}))),
        refused("card/tap-signature-input-malformed")
    );
    // The Signature field: a Dictionary of Byte Sequences, held to the base64 alphabet only (as the reference holds
    // it: `:a:` decodes to nothing, and is read).
    let signature = tap(json!({"signature": r#"sig1="x", sig2="y""#}));
    assert_eq!(bound("card/visa-tap", &signature), refused("card/tap-signature-malformed"));
    assert_eq!(bound("card/visa-tap", &tap(json!({"signature": "sig1=:a:, sig2=:a:"}))), Ok(h));
}

#[test]
fn a_signature_input_that_omits_the_lcp_hash_component() {
    let si = signature_input();
    let omitted = si.replace(r#" "lcp-hash""#, "");
    assert_eq!(bound("card/visa-tap", &tap(json!({"signatureInput": omitted}))), refused("card/tap-hash-not-covered"));
    let with_parameter = si.replace(r#""lcp-hash""#, r#""lcp-hash";sf"#);
    let got = bound("card/visa-tap", &tap(json!({"signatureInput": with_parameter})));
    assert_eq!(got, refused("card/tap-hash-not-covered"));
}

#[test]
fn the_lcp_hash_lines() {
    let h = vectors("card.json")["fixed"]["H"].as_str().unwrap().to_owned();
    let cases = [
        (json!("0x"), refused("card/tap-field-malformed")),
        (json!([]), refused("card/tap-field-missing")),
        (json!([1]), refused("card/tap-field-malformed")),
        (json!([" ".repeat(300)]), refused("card/too-large")),
        (json!([format!(" \t{h}\t ")]), Ok(h)),
        (json!(["0x1234"]), refused("card/tap-field-malformed")),
    ];
    for (lines, want) in cases {
        assert_eq!(bound("card/visa-tap", &tap(json!({"lcpHash": lines}))), want, "{lines}");
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn read(doc: &str) -> Result<String, String> {
    pairing("card/mastercard-vi/immediate").read(&json!(doc)).map(|a| a.h.to_hex()).map_err(|r| r.code())
}

#[test]
fn a_checkout_jws_with_a_bad_segment_count_or_non_base64url_parts() {
    let f = vectors("card.json");
    let cj = f["vi"]["CJ"].as_str().unwrap();
    let [h, p, s]: [&str; 3] = cj.split('.').collect::<Vec<_>>().try_into().unwrap();
    assert_eq!(read(cj), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
    let last_plus = format!("{h}.{p}.{}+", &s[..s.len() - 1]);
    for bad in [format!("{h}.{p}"), format!("{cj}.{s}"), last_plus, format!("{cj}="), format!("{h}.{p}.{s}~")] {
        assert_eq!(read(&bad), refused("card/vi-malformed"), "{bad:.40}");
    }
    assert_eq!(read(&format!("{h}.{p}.{}", "A".repeat(16_384))), refused("card/too-large"));
    assert_eq!(pairing("card/mastercard-vi/immediate").read(&json!(1)).unwrap_err().code(), "card/vi-malformed");
}

/// `alg: none`. The reference reads no header of a `checkout_jwt` (it is the merchant's, signed or not: the hash it
/// carries is bound by the user's signature over its digest), so one with `alg: none` reads as any other; a
/// Verifiable Intent layer's header must be ES256, so a layer with `alg: none` is `card/vi-typ`.
#[test]
fn a_jws_with_alg_none() {
    let f = vectors("card.json");
    let cj = f["vi"]["CJ"].as_str().unwrap();
    let payload = cj.split('.').nth(1).unwrap();
    let unsigned = format!("{}.{payload}.", b64(br#"{"alg":"none"}"#));
    assert_eq!(read(&unsigned), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
    let l2 = f["vi"]["L2i"].as_str().unwrap();
    let none = format!("{}{}", b64(br#"{"alg":"none","typ":"kb-sd-jwt"}"#), &l2[l2.find('.').unwrap()..]);
    assert_eq!(bound("card/mastercard-vi/immediate", &json!({"l2": none})), refused("card/vi-typ"));
}

/// L2i's parts, and L2i rebuilt from parts.
fn l2_parts() -> Vec<String> {
    vectors("card.json")["vi"]["L2i"].as_str().unwrap().split('~').map(str::to_owned).collect()
}

fn immediate(parts: &[String]) -> Result<String, String> {
    bound("card/mastercard-vi/immediate", &json!({"l2": parts.join("~")}))
}

#[test]
fn an_sd_jwt_whose_disclosure_digest_does_not_match() {
    let mut parts = l2_parts();
    assert_eq!(parts.len(), 4, "the JWS, two disclosures and the empty last part");
    let mut dc: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    dc[0] = json!(format!("{}x", dc[0].as_str().unwrap()));
    parts[1] = b64(dc.to_string().as_bytes());
    assert_eq!(immediate(&parts), refused("card/vi-disclosure-unreferenced"));
}

#[test]
fn an_sd_jwt_that_repeats_a_disclosure() {
    let mut parts = l2_parts();
    parts.insert(1, parts[1].clone());
    assert_eq!(immediate(&parts), refused("card/vi-malformed"));
}

#[test]
fn an_sd_jwt_that_nests_too_deep() {
    let mut parts = l2_parts();
    parts.insert(1, b64(format!(r#"["s",{}{}]"#, "[".repeat(70), "]".repeat(70)).as_bytes()));
    assert_eq!(immediate(&parts), refused("card/too-large"));
    let many: Vec<String> = std::iter::once(l2_parts()[0].clone())
        .chain(std::iter::repeat_n(l2_parts()[1].clone(), 33))
        .chain(std::iter::once(String::new()))
        .collect();
    assert_eq!(immediate(&many), refused("card/too-large"));
}

#[test]
fn an_sd_jwt_that_is_not_a_layer() {
    let parts = l2_parts();
    assert_eq!(immediate(&[parts[0].clone(), String::new()]), refused("card/vi-malformed"), "no disclosure");
    let kb = format!("{}a.b.c", parts.join("~"));
    assert_eq!(bound("card/mastercard-vi/immediate", &json!({"l2": kb})), refused("card/vi-malformed"));
    assert_eq!(bound("card/mastercard-vi/immediate", &json!("l2")), refused("card/vi-malformed"));
    assert_eq!(bound("card/mastercard-vi/autonomous", &json!({"l2": 1})), refused("card/vi-malformed"));
}

/// A shown legal context whose link is http: the card read refuses it as `card/legal-context-malformed`, as the peer
/// does (`bindings/_lcp.py`: "Card's, ACK's and AP2's reads refuse every link that is not https as
/// legal-context-malformed"). The file's `agreedRefusals` row 3 names `card/link-not-https` for this case, and C1's
/// `httpLink` row (the seller's advertise) too; the peer decides.
#[test]
fn an_http_link_is_a_malformed_legal_context() {
    let f = vectors("card.json");
    let mut doc = f["C2"]["build"]["doc"].clone();
    doc["legalContext"]["legalContextUrl"] = f["C1"]["httpLink"]["link"].clone();
    assert_eq!(pairing("card/visa-tap").read(&doc).unwrap_err().code(), "card/legal-context-malformed");
    assert_eq!(pairing("card/visa-tap").read(&json!({})).unwrap_err().code(), "card/no-legal-context");
    doc["legalContext"]["legalContextUrl"] = json!(format!("https://atr.seller.example/{}", "a".repeat(2048)));
    assert_eq!(pairing("card/seller-reference").read(&doc).unwrap_err().code(), "card/legal-context-malformed");
}

fn digest(text: &str) -> String {
    use sha2::Digest as _;
    b64(&sha2::Sha256::digest(text.as_bytes()))
}

/// A layer with its JWS payload edited (and its signature left as it was).
fn relayer(layer: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut parts: Vec<String> = layer.split('~').map(str::to_owned).collect();
    let segments: Vec<&str> = parts[0].split('.').collect();
    let mut payload: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(segments[1]).unwrap()).unwrap();
    edit(&mut payload);
    parts[0] = format!("{}.{}.{}", segments[0], b64(payload.to_string().as_bytes()), segments[2]);
    parts.join("~")
}

/// `agreedRefusals`: each row's case built from the file's own payments, and the row's code, or the peer's where they
/// part (row 3). Every construction was run through the peer, which answers each row's code.
#[test]
fn agreed_refusals_rows() {
    let f = vectors("card.json");
    let rows = f["agreedRefusals"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 21);
    let shown = &f["C2"]["build"]["doc"];
    let with_lc = |member: &str, value: Value| {
        let mut doc = shown.clone();
        doc["legalContext"][member] = value;
        doc
    };
    let read_of = |id: &str, doc: &Value| pairing(id).read(doc).map(|a| a.h.to_hex()).map_err(|r| r.code());
    let si = signature_input();
    let tap_si = |text: String| bound("card/visa-tap", &tap(json!({"signatureInput": text})));
    let cj = f["vi"]["CJ"].as_str().unwrap();
    let l2 = f["vi"]["L2i"].as_str().unwrap();
    let immediate_l2 = |layer: String| bound("card/mastercard-vi/immediate", &json!({"l2": layer}));
    let presented = &f["C7"]["bound"]["presented"];
    let autonomous = |change: Value| {
        let mut p = presented.clone();
        for (k, v) in change.as_object().unwrap() {
            p[k] = v.clone();
        }
        bound("card/mastercard-vi/autonomous", &p)
    };
    let long_link = json!(format!("https://atr.seller.example/{}", "x".repeat(2048)));
    for (i, row) in rows.iter().enumerate() {
        let want = refused(row["expect"].as_str().unwrap());
        let got = match i {
            0 | 4 => read_of("card/seller-reference", &with_lc("legalContextUrl", long_link.clone())),
            1 => read_of("card/visa-tap", &with_lc("value", json!("0x1234"))),
            2 => read_of("card/visa-tap", &json!({"legal": shown["legalContext"]})),
            3 => {
                // The peer refuses an http link in a card read as card/legal-context-malformed, not as this row's
                // card/link-not-https: the peer decides.
                assert_eq!(want, refused("card/link-not-https"));
                let got = read_of("card/visa-tap", &with_lc("legalContextUrl", f["C1"]["httpLink"]["link"].clone()));
                assert_eq!(got, refused("card/legal-context-malformed"), "row 3, as the peer answers");
                continue;
            }
            5 => read(cj.rsplit_once('.').unwrap().0),
            6 => read(&format!("{cj}{}", "A".repeat(16_384))),
            7 => bound("card/visa-tap", &json!("presented")),
            8 => tap_si(si.replace(r#""lcp-hash""#, &format!(r#"{} "lcp-hash""#, vec![r#""x""#; 32].join(" ")))),
            9 => tap_si(si.replace("created=1790000000", r#"created=%"x""#)),
            10 => tap_si(si.replace(r#"tag="agent-payer-auth""#, "tag=agent-payer-auth")),
            11 => bound("card/visa-tap", &tap(json!({"lcpHash": [1]}))),
            12 => bound("card/visa-tap", &tap(json!({"lcpHash": ["0".repeat(257)]}))),
            13 => immediate_l2(format!("{l2}{}", "A".repeat(65_536))),
            14 => immediate_l2(format!("{l2}x")),
            15 => immediate_l2(relayer(l2, |p| drop(p.as_object_mut().unwrap().shift_remove("_sd_alg")))),
            16 => {
                // A second checkout mandate, the first's disclosure with another salt, referenced too.
                let parts: Vec<&str> = l2.split('~').collect();
                let mut dc: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
                dc[0] = json!(format!("{}x", dc[0].as_str().unwrap()));
                let second = b64(dc.to_string().as_bytes());
                let layer = [&[parts[0], second.as_str()][..], &parts[1..]].concat().join("~");
                immediate_l2(relayer(&layer, |p| {
                    p["delegate_payload"].as_array_mut().unwrap().push(json!({"...": digest(&second)}));
                }))
            }
            17 => {
                let l3b = presented["l3b"].as_str().unwrap();
                let (jws, rest) = l3b.split_once('~').unwrap();
                let segments: Vec<&str> = jws.split('.').collect();
                let mut header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(segments[0]).unwrap()).unwrap();
                header.as_object_mut().unwrap().shift_remove("kid");
                let header = b64(header.to_string().as_bytes());
                autonomous(json!({"l3b": format!("{header}.{}.{}~{rest}", segments[1], segments[2])}))
            }
            18 => {
                // L2 with another mandate in place of the open checkout mandate, and L3b's sd_hash its digest: the
                // key is looked for before either signature is verified.
                let jws = presented["l2"].as_str().unwrap().split('~').next().unwrap();
                let other = b64(json!(["salt-other", {"vct": "mandate.other"}]).to_string().as_bytes());
                let l2x = relayer(&format!("{jws}~{other}~"), |p| {
                    p["delegate_payload"].as_array_mut().unwrap().push(json!({"...": digest(&other)}));
                });
                let l3b = relayer(presented["l3b"].as_str().unwrap(), |p| p["sd_hash"] = json!(digest(&l2x)));
                autonomous(json!({"l2": l2x, "l3b": l3b}))
            }
            19 => autonomous(json!({"l1": l2})),
            // An L2 signature that does not verify cannot be built from the file's data: L3b's sd_hash binds L2's
            // bytes, and L3b's own signature is checked first. The agent's flipped signature (C7) is the case the
            // file holds, with the same code.
            20 => bound("card/mastercard-vi/autonomous", &f["C7"]["flippedSignature"]["presented"]),
            _ => panic!("row {i} has no case"),
        };
        assert_eq!(got, want, "row {i}: {}", row["case"]);
    }
}
