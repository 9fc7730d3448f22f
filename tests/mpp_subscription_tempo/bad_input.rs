//! The bad input of issue 16 for `mpp/subscription/tempo`: each refusal's code is the peer's (integraledger-terms
//! 0.4.0) on the same credential or choice, quoted beside it (the root signature is read by neither), and where the
//! peer binds, so does the crate.

use super::*;

#[test]
fn a_key_authorization_with_another_witness_is_not_bound() {
    // The peer: tempo/witness-not-bound for H′ (plant2) and for H with its last byte changed.
    let f = file();
    let mut a = sub1(&f);
    a.witness.0[31] ^= 1;
    assert_eq!(bound_of(&presenting(&f, &a)), Err("tempo/witness-not-bound".into()));
    // No witness: the authorization's six items (the peer: tempo/no-witness), or an empty seventh.
    let unsigned = a.encode().unwrap();
    let items = rlp_items(&unsigned[..]);
    let signature = hex(&payer_key(&f).sign_digest(&[7; 32]).unwrap());
    let six = rlp_list(&items[..6].concat());
    assert_eq!(
        bound_of(&with_signed(presented(&f), &rlp_list(&[six, rlp_bytes(&signature)].concat()))),
        Err("tempo/no-witness".into())
    );
    let empty = rlp_list(&[items[..6].concat(), rlp_bytes(&[])].concat());
    assert_eq!(
        bound_of(&with_signed(presented(&f), &rlp_list(&[empty, rlp_bytes(&signature)].concat()))),
        Err("tempo/no-witness".into())
    );
}

#[test]
fn a_key_authorization_with_another_expiry_still_binds_as_in_the_reference() {
    // The peer's bound reads the witness, the key id, the key type and the chain, not the expiry, the limits or the
    // calls: expiry + 1 gives H (its channel 0x0ec13a74…fe75fe11), as do a limit of 1 or 2^256 - 1 and another
    // recipient. The chain enforces what was signed; the build writes the challenge's own values (sub1_…).
    let f = file();
    let want = Ok(atr_hash(b"abc").to_hex());
    let mut a = sub1(&f);
    a.expiry += 1;
    let later = presenting(&f, &a);
    assert_eq!(bound_of(&later), want);
    assert!(ref_of(&later).unwrap().1.starts_with("0x0ec13a74"));
    let mut a = sub1(&f);
    a.limits[0].limit = U256::MAX;
    assert_eq!(bound_of(&presenting(&f, &a)), want);
    let mut a = sub1(&f);
    a.allowed_calls[0].selector_rules[0].recipients = vec![f["fixed"]["payer"].as_str().unwrap().parse().unwrap()];
    assert_eq!(bound_of(&presenting(&f, &a)), want);
    // The challenge's subscriptionExpires moved instead (the peer: H).
    let mut request = request_of(&presented(&f)["challenge"]);
    request["subscriptionExpires"] = json!("2027-01-01T00:00:00Z");
    assert_eq!(bound_of(&with_request(presented(&f), &request)), want);
    // What the build signs is the challenge's: the edited challenge's expiry, in the authorization and the quote.
    let chosen = chosen_with_request(&request);
    assert_eq!(request_built(&chosen).unwrap()["authorization"]["expiry"], json!(1_798_761_600_u64));
    assert_eq!(pairing().quote(&chosen).unwrap().valid_before, Some(1_798_761_600));
}

#[test]
fn a_key_authorization_for_another_key_key_type_or_chain_is_not_authorized() {
    // The peer: tempo/key-not-authorized for each, in bound and channel_ref alike.
    let f = file();
    let mut cases = Vec::new();
    let mut a = sub1(&f);
    a.key_id = f["fixed"]["payer"].as_str().unwrap().parse().unwrap();
    cases.push(("another key id", presenting(&f, &a)));
    let mut a = sub1(&f);
    a.key_type = 1;
    cases.push(("another key type", presenting(&f, &a)));
    let mut a = sub1(&f);
    a.chain_id = 4217;
    cases.push(("another chain id", presenting(&f, &a)));
    let mut request = request_of(&presented(&f)["challenge"]);
    request["methodDetails"]["chainId"] = json!(4217);
    cases.push(("a challenge on another chain", with_request(presented(&f), &request)));
    let mut request = request_of(&presented(&f)["challenge"]);
    request["methodDetails"]["accessKey"]["keyType"] = json!("p256");
    cases.push(("a challenge issuing a P256 key", with_request(presented(&f), &request)));
    for (what, credential) in cases {
        assert_eq!(bound_of(&credential), Err("tempo/key-not-authorized".into()), "{what}");
        assert_eq!(ref_of(&credential), Err("tempo/key-not-authorized".into()), "{what}");
    }
    // The key id compares in any case (the challenge writes it checksummed, the authorization as bytes).
    let mut request = request_of(&presented(&f)["challenge"]);
    let key = request["methodDetails"]["accessKey"]["accessKeyAddress"].as_str().unwrap().to_lowercase();
    request["methodDetails"]["accessKey"]["accessKeyAddress"] = json!(key);
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Ok(atr_hash(b"abc").to_hex()));
}

#[test]
fn an_amount_or_a_limit_past_2_256_is_refused() {
    let f = file();
    let two_256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    let mut request = request_of(&presented(&f)["challenge"]);
    request["amount"] = json!(two_256);
    // The peer: bound and channel_ref mpp/request-malformed; its choose passes the challenge over
    // (mpp/no-payable-option); a choice edited after confirm builds mpp/request-malformed.
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Err("mpp/request-malformed".into()));
    assert_eq!(ref_of(&with_request(presented(&f), &request)), Err("mpp/request-malformed".into()));
    let mut doc = b2_doc(&f);
    doc[0]["request"] = json!(b64_json(&request));
    assert_eq!(choose(&doc).unwrap_err(), "mpp/no-payable-option");
    assert_eq!(request_built(&chosen_with_request(&request)).unwrap_err(), "mpp/request-malformed");
    assert_eq!(pairing().quote(&chosen_with_request(&request)).unwrap_err().code(), "mpp/request-malformed");
    // 2^256 - 1 is an amount (the peer: H), and the build writes it as a decimal string (see the module's note).
    request["amount"] = json!(U256::MAX.to_string());
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Ok(atr_hash(b"abc").to_hex()));
    let limit = &request_built(&chosen_with_request(&request)).unwrap()["authorization"]["limits"][0]["limit"];
    assert_eq!(limit, &json!(U256::MAX.to_string()));
    // A period past 2^64 seconds (the peer: mpp/request-malformed).
    let mut request = request_of(&presented(&f)["challenge"]);
    request["periodUnit"] = json!("week");
    request["periodCount"] = json!("30500568904944");
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Err("mpp/request-malformed".into()));
    // A signed authorization whose limit is 33 bytes, 2^256 (the peer: tempo/key-authorization-malformed).
    let unsigned = sub1(&f).encode().unwrap();
    let mut items = rlp_items(&unsigned[..]);
    let limit = rlp_items(&rlp_items(&items[4])[0]);
    let over = [&[1][..], &[0; 32]].concat();
    items[4] = rlp_list(&rlp_list(&[limit[0].clone(), rlp_bytes(&over), limit[2].clone()].concat()));
    let signature = hex(&payer_key(&f).sign_digest(&[7; 32]).unwrap());
    let signed = rlp_list(&[rlp_list(&items.concat()), rlp_bytes(&signature)].concat());
    assert_eq!(bound_of(&with_signed(presented(&f), &signed)), Err("tempo/key-authorization-malformed".into()));
}

#[test]
fn a_payload_not_of_its_form_is_refused() {
    // The peer, for each: bound / channel_ref.
    let f = file();
    let mut p = presented(&f);
    p["payload"]["type"] = json!("transaction");
    assert_eq!((bound_of(&p), ref_of(&p)), (Err("mpp/not-an-opening".into()), Err("mpp/session-action".into())));
    for sig in [json!(7), json!("0xc0"), json!("f8d7"), json!("0x"), json!(format!("0x{}", "00".repeat(8193)))] {
        let mut p = presented(&f);
        p["payload"]["signature"] = sig.clone();
        let bad = "tempo/key-authorization-malformed".to_owned();
        assert_eq!((bound_of(&p), ref_of(&p)), (Err(bad.clone()), Err(bad)), "{sig}");
    }
    // A signed authorization with a byte after it, or wrapped in one list more.
    let signed = hex(presented(&f)["payload"]["signature"].as_str().unwrap());
    let trailing = [&signed[..], &[0][..]].concat();
    assert_eq!(bound_of(&with_signed(presented(&f), &trailing)), Err("tempo/key-authorization-malformed".into()));
    assert_eq!(
        bound_of(&with_signed(presented(&f), &rlp_list(&signed))),
        Err("tempo/key-authorization-malformed".into())
    );
    // A dotted id, the form every other MPP challenge takes (the peer: mpp/id-not-ours).
    let mut p = presented(&f);
    p["challenge"]["id"] = json!(format!("{}.0", p["challenge"]["id"].as_str().unwrap()));
    assert_eq!(bound_of(&p), Err("mpp/id-not-ours".into()));
}

#[test]
fn an_answer_not_of_its_form_is_malformed() {
    // The peer's complete: a root signature of 1 to 8192 bytes of 0x hex, else mpp/credential-malformed; one whose
    // signed authorization passes 8192 bytes is tempo/key-authorization-malformed.
    let f = file();
    let chosen = choose(&b2_doc(&f)).unwrap();
    for answer in [json!("0x"), json!("0x1"), json!("bb"), json!(7), json!(format!("0x{}", "11".repeat(8193)))] {
        assert_eq!(completed(&chosen, answer.clone()), Err("mpp/credential-malformed".into()), "{answer}");
    }
    assert_eq!(
        completed(&chosen, json!(format!("0x{}", "11".repeat(8100)))),
        Err("tempo/key-authorization-malformed".into())
    );
    assert!(completed(&chosen, json!(format!("0x{}", "11".repeat(8000)))).is_ok());
}

#[test]
fn the_agreed_row_of_the_core_file_for_a_malformed_period_or_expiry() {
    // mpp-challenge.json's agreedRefusals row, run with its pairing (tests/mpp_challenge.rs lists it so).
    let core = vectors("mpp-challenge.json");
    let case = "a subscription challenge whose subscriptionExpires, periodUnit or periodCount is malformed";
    let row = core["agreedRefusals"]["rows"].as_array().unwrap().iter().find(|r| r["case"] == case).unwrap();
    let want = Err(row["expect"].as_str().unwrap().to_owned());
    let f = file();
    for (member, value) in [
        ("subscriptionExpires", json!("2026-12-20")),
        ("subscriptionExpires", json!("2026-02-30T00:00:00Z")),
        ("periodUnit", json!("month")),
        ("periodUnit", json!(null)),
        ("periodCount", json!("0")),
        ("periodCount", json!(30)),
        ("periodCount", json!("10000000000000000")),
    ] {
        let mut request = request_of(&presented(&f)["challenge"]);
        request[member] = value.clone();
        assert_eq!(bound_of(&with_request(presented(&f), &request)), want, "{member} = {value}");
        assert_eq!(request_built(&chosen_with_request(&request)), want.clone().map(|_: String| Map::new()), "{member}");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// A little RLP, for authorizations the rail's writer will not write.

fn rlp_header(base: u8, len: usize) -> Vec<u8> {
    if len <= 55 {
        return vec![base + len as u8];
    }
    let size: Vec<u8> = len.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
    [vec![base + 55 + size.len() as u8], size].concat()
}

fn rlp_bytes(b: &[u8]) -> Vec<u8> {
    if b.len() == 1 && b[0] < 0x80 {
        return b.to_vec();
    }
    [rlp_header(0x80, b.len()), b.to_vec()].concat()
}

fn rlp_list(payload: &[u8]) -> Vec<u8> {
    [rlp_header(0xc0, payload.len()), payload.to_vec()].concat()
}

/// The items of an RLP list, each as its own encoding.
fn rlp_items(list: &[u8]) -> Vec<Vec<u8>> {
    let (offset, len) = match list[0] {
        b @ 0xc0..=0xf7 => (1, usize::from(b - 0xc0)),
        b => {
            let n = usize::from(b - 0xf7);
            (1 + n, list[1..=n].iter().fold(0, |l, d| l * 256 + usize::from(*d)))
        }
    };
    let mut body = &list[offset..offset + len];
    let mut out = Vec::new();
    while !body.is_empty() {
        let (head, len) = match body[0] {
            0..=0x7f => (0, 0),
            b @ 0x80..=0xb7 => (1, usize::from(b - 0x80)),
            b @ 0xb8..=0xbf => {
                let n = usize::from(b - 0xb7);
                (1 + n, body[1..=n].iter().fold(0, |l, d| l * 256 + usize::from(*d)))
            }
            b @ 0xc0..=0xf7 => (1, usize::from(b - 0xc0)),
            b => {
                let n = usize::from(b - 0xf7);
                (1 + n, body[1..=n].iter().fold(0, |l, d| l * 256 + usize::from(*d)))
            }
        };
        let whole = if head == 0 { 1 } else { head + len };
        out.push(body[..whole].to_vec());
        body = &body[whole..];
    }
    out
}
