#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! `x402/exact/xrpl` from x402-exact-xrpl.json's own data: the B2 and B6 buyer rows through the gate, V4's MPP blob
//! under x402, the plant, the multi-signed rows; a build with the local key from entropy 01x16 that signs V2's blob
//! byte for byte; and the bad input of issue 43 (another InvoiceID, destination, amount, fee, sequence or last
//! ledger; a blob past the caps; a signature of the wrong length). Every key of the file is run here or in
//! `tests/xrpl_rail.rs`, or listed by name with the reason ([`every_key_is_run_or_listed`]).

mod support;

use serde_json::{Map, Value, json};
use terms::pairing::ChooseContext;
use terms::{AtrHash, Signer as _, XrplKey, atr_hash, check, pairing};

fn file(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
}

#[test]
fn b6_reads_h_back_and_the_planted_atr_is_not_bound() {
    let v = file("x402-exact-xrpl.json");
    let b6 = row(&v, "B6");
    let p = pairing(b6["pairing"].as_str().unwrap()).unwrap();
    let presented = &b6["input"]["presented"];
    let checks = b6["input"]["check"].as_array().unwrap();
    let expects = b6["expect"].as_array().unwrap();
    for (c, e) in checks.iter().zip(expects) {
        let bytes = hex::decode(c["bytesHex"].as_str().unwrap()).unwrap();
        match check(&bytes, presented, p) {
            Ok(checked) => assert_eq!(checked.h.to_hex(), e["h"].as_str().unwrap()),
            Err(d) => assert_eq!(d.code.as_str(), e["decline"].as_str().unwrap()),
        }
    }
}

fn presented_with(v: &Value, blob: &Value) -> Value {
    let mut p = row(v, "B6")["input"]["presented"].clone();
    p["payload"]["signedTxBlob"] = blob.clone();
    p
}

#[test]
fn other_blobs_under_the_option_are_refused_with_the_files_codes() {
    let v = file("x402-exact-xrpl.json");
    let p = pairing("x402/exact/xrpl").unwrap();
    let bound = |presented: &Value| p.bound(presented, None).map_err(|r| r.code());
    assert_eq!(bound(&presented_with(&v, &v["V4"]["v3UnderX402"]["blob"])), Err("xrpl/carrier-mismatch".into()));
    assert_eq!(bound(&presented_with(&v, &v["plant"]["blob"])), Err(v["plant"]["expect"].as_str().unwrap().into()));
    for r in v["multisigned"]["rows"].as_array().unwrap() {
        assert_eq!(bound(&presented_with(&v, &r["blob"])), Err(r["expect"].as_str().unwrap().into()));
    }
    for r in file("decoder-caps.json")["xrpl"]["rows"].as_array().unwrap().iter().filter(|r| r["accept"] == false) {
        assert_eq!(bound(&presented_with(&v, &r["blob"])), Err("xrpl/blob-malformed".into()), "{}", r["name"]);
    }
}

/// The B2 document, the account and the inputs, chosen and built under `atr`; the request and the payment.
fn choose(v: &Value) -> (terms::Chosen, Value) {
    let b2 = row(v, "B2");
    let p = pairing("x402/exact/xrpl").unwrap();
    let doc = b2["input"]["doc"].clone();
    let read = p.read(&doc).unwrap();
    let inputs: Map<String, Value> = b2["input"]["inputs"].as_object().unwrap().clone();
    let ctx = ChooseContext {
        account: b2["input"]["account"].as_str().unwrap(),
        inputs: &inputs,
        now: 1_790_000_000,
        reference: "r0000000000000000000000000000000",
        doc: &doc,
    };
    let mut chosen = p.choose(&read, &ctx).unwrap();
    p.keep_document(&mut chosen, std::borrow::Cow::Owned(doc.clone()));
    (chosen, doc)
}

fn key() -> XrplKey {
    XrplKey::ed25519_from_entropy_hex(&"01".repeat(16)).unwrap()
}

async fn sign(request: &terms::SigningRequest) -> String {
    let signer = key().on_network("xrpl:1").unwrap();
    signer.sign(request).await.unwrap().as_str().unwrap().to_owned()
}

fn h() -> AtrHash {
    atr_hash(b"abc")
}

#[tokio::test]
async fn the_build_signed_by_the_local_key_is_v2_and_reads_h_back() {
    let v = file("x402-exact-xrpl.json");
    let (chosen, _) = choose(&v);
    let p = pairing("x402/exact/xrpl").unwrap();
    let quote = p.quote(&chosen).unwrap();
    assert_eq!(quote.amount.to_string(), v["fixed"]["option"]["amount"].as_str().unwrap());
    assert_eq!(quote.payee, v["fixed"]["destination"].as_str().unwrap());
    let unsigned = p.build(&chosen, b"abc", &h()).unwrap();
    let request = unsigned.request().unwrap().unwrap();
    assert_eq!(request.kind(), "xrpl-tx");
    assert_eq!(request.fields().unwrap()["txJson"], {
        let mut tx = v["V2"]["expectTxJson"].clone();
        tx["InvoiceID"] = v["V1"]["x402InvoiceId"].clone();
        tx
    });
    let blob = sign(&request).await;
    assert_eq!(blob, v["V2"]["blob"].as_str().unwrap());
    let completion = unsigned.complete(&[terms::Answer::new(json!(blob))], &chosen).unwrap();
    let payment = completion.payment_value().unwrap();
    assert_eq!(p.bound(&payment, None).unwrap(), h());
    assert_eq!(payment["payload"]["signedTxBlob"], v["V2"]["blob"]);
}

#[tokio::test]
async fn a_signed_blob_that_is_not_the_build_is_refused_before_it_is_returned() {
    let v = file("x402-exact-xrpl.json");
    let (chosen, _) = choose(&v);
    let p = pairing("x402/exact/xrpl").unwrap();
    let unsigned = p.build(&chosen, b"abc", &h()).unwrap();
    let request = unsigned.request().unwrap().unwrap();
    let tx = request.fields().unwrap()["txJson"].as_object().unwrap().clone();
    let complete =
        |blob: String| unsigned.complete(&[terms::Answer::new(json!(blob))], &chosen).map(|_| ()).map_err(|r| r.code());
    let signed = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let mut t = tx.clone();
        edit(&mut t);
        hex::encode_upper(key().sign_tx(&t).unwrap())
    };
    let other = "08B1F8BA199231AB7BEF24E5E3AFC3DB0BE5B75095CCCB6EEF0EC077F9F20AC1";
    type Edit = Box<dyn Fn(&mut Map<String, Value>)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("InvoiceID of another H", Box::new(move |t| drop(t.insert("InvoiceID".into(), json!(other))))),
        (
            "another destination",
            Box::new(|t| drop(t.insert("Destination".into(), json!("rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q")))),
        ),
        ("another amount", Box::new(|t| drop(t.insert("Amount".into(), json!("1000001"))))),
        ("another fee", Box::new(|t| drop(t.insert("Fee".into(), json!("5000"))))),
        ("another sequence", Box::new(|t| drop(t.insert("Sequence".into(), json!(8))))),
        ("another last ledger", Box::new(|t| drop(t.insert("LastLedgerSequence".into(), json!(100_000))))),
        ("a memo added", Box::new(|t| drop(t.insert("Memos".into(), json!([{"Memo": {"MemoData": "00"}}]))))),
    ];
    for (case, edit) in &cases {
        assert_eq!(complete(signed(edit.as_ref())), Err("xrpl/tx-mismatch".into()), "{case}");
    }
    // A NetworkID that xrpl:1 does not take.
    let with_network = signed(&|t| drop(t.insert("NetworkID".into(), json!(1))));
    assert_eq!(complete(with_network), Err("xrpl/network-mismatch".into()));
    // A signature of the wrong length: the signed blob with a 63-byte TxnSignature.
    let blob = v["V2"]["blob"].as_str().unwrap();
    let mut tx_short = terms::rail::xrpl::Tx::from_json(&tx).unwrap();
    let k = key();
    tx_short.set_blob(terms::rail::xrpl::fields::SIGNING_PUB_KEY, k.public_key());
    tx_short.set_blob(terms::rail::xrpl::fields::TXN_SIGNATURE, &[0x11; 63]);
    assert_eq!(complete(hex::encode_upper(tx_short.encode())), Err("xrpl/signature-malformed".into()));
    // Not hex, past the caps, multi-signed.
    assert_eq!(complete("0x12".into()), Err("xrpl/blob-malformed".into()));
    let deep = file("decoder-caps.json")["xrpl"]["rows"][1]["blob"].as_str().unwrap().to_owned();
    assert_eq!(complete(deep), Err("xrpl/blob-malformed".into()));
    let multi = v["multisigned"]["rows"][0]["blob"].as_str().unwrap().to_owned();
    assert_eq!(complete(multi), Err("xrpl/multisigned".into()));
    // The V2 blob itself completes.
    assert_eq!(complete(blob.to_owned()), Ok(()));
}

#[test]
fn a_presented_blob_paying_another_destination_or_amount_is_refused() {
    let v = file("x402-exact-xrpl.json");
    let p = pairing("x402/exact/xrpl").unwrap();
    let mut tx = v["V2"]["expectTxJson"].as_object().unwrap().clone();
    tx.insert("InvoiceID".into(), v["V1"]["x402InvoiceId"].clone());
    for (k, val) in [("Destination", json!("rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q")), ("Amount", json!("999999"))] {
        let mut t = tx.clone();
        t.insert(k.into(), val);
        let blob = json!(hex::encode_upper(key().sign_tx(&t).unwrap()));
        assert_eq!(p.bound(&presented_with(&v, &blob), None).unwrap_err().code(), "xrpl/tx-mismatch", "{k}");
    }
}

#[test]
fn a_build_for_another_h_or_with_bad_inputs_is_refused() {
    let v = file("x402-exact-xrpl.json");
    let (chosen, _) = choose(&v);
    let p = pairing("x402/exact/xrpl").unwrap();
    let other = atr_hash(b"abd");
    assert_eq!(p.build(&chosen, b"abd", &other).map(|_| ()).unwrap_err().code(), "xrpl/carrier-mismatch");
    for (k, bad) in [
        ("fee", json!("012")),
        ("sequence", json!(-1)),
        ("lastLedgerSequence", json!(4_294_967_296_u64)),
        ("account", json!("r3sNTMefq5gsRumMYsNznnX6yzzxVH6dTD")),
    ] {
        let mut c = chosen.clone();
        c.build_input.insert(k.into(), bad);
        assert_eq!(p.build(&c, b"abc", &h()).map(|_| ()).unwrap_err().code(), "x402/option-malformed", "{k}");
    }
}

/// The B2 row's link: where its document's legal context points.
fn b2_link(v: &Value) -> String {
    row(v, "B2")["input"]["doc"]["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().to_owned()
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    let v = file("x402-exact-xrpl.json");
    let r = row(&v, "B2");
    assert_eq!(r["plant"], true);
    support::plant_declines_before_the_signer(&v, r, &b2_link(&v), pairing(r["pairing"].as_str().unwrap()).unwrap());
}

#[test]
fn b2_served_as_advertised_is_paid_by_transact_with_v2s_blob() {
    // The B2 row's document, account and inputs, with the link serving the ATR H names (B6's first check): the
    // local key from entropy 01x16 (the file's payer) signs, and the payment is the file's V2 payment.
    let v = file("x402-exact-xrpl.json");
    let r = row(&v, "B2");
    let i = &r["input"];
    let atr = support::hex(row(&v, "B6")["input"]["check"][0]["bytesHex"].as_str().unwrap());
    assert_eq!(atr_hash(&atr).to_hex(), r["advertised"].as_str().unwrap());
    let fetch = support::ScriptedFetch::new().script(&b2_link(&v), vec![support::Reply::ok(atr)]);
    let signer = key().on_network("xrpl:1").unwrap();
    assert_eq!(terms::Signer::account(&signer), i["account"].as_str().unwrap());
    let options = terms::Options::new().inputs(i["inputs"].as_object().unwrap().clone());
    let p = pairing(r["pairing"].as_str().unwrap()).unwrap();
    let got = support::paused().block_on(terms::transact(&i["doc"], p, &signer, &fetch, &options)).unwrap();
    let terms::TransactOutcome::Signed(t) = got else { panic!("not signed: {got:?}") };
    let payment = t.signed.unwrap().to_value();
    assert_eq!(payment["payload"]["signedTxBlob"], v["V2"]["blob"]);
    assert_eq!(payment["accepted"], v["V2"]["accepted"]);
    assert_eq!(t.h.to_hex(), v["V2"]["expectBound"].as_str().unwrap());
    // The payment the gate returned is B6's presented payment, which check binds to H.
    assert_eq!(payment["payload"], row(&v, "B6")["input"]["presented"]["payload"]);
    support::b6_checks(row(&v, "B6"), p);
}

#[test]
fn the_agreed_refusals_the_buyer_meets() {
    let v = file("x402-exact-xrpl.json");
    let p = pairing("x402/exact/xrpl").unwrap();
    let rows = v["agreedRefusals"]["rows"].as_array().unwrap();
    let code = |i: usize| rows[i]["expect"].as_str().unwrap().to_owned();
    let bound = |presented: &Value| p.bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code());
    // Row 1: not an even number of hex digits; bytes the codec cannot decode.
    let v3 = v["V3"]["blob"].as_str().unwrap();
    assert_eq!(bound(&presented_with(&v, &json!(&v3[1..]))), Err(code(1)));
    assert_eq!(bound(&presented_with(&v, &json!("FFFF"))), Err(code(1)));
    // Row 2: a blob that is not the canonical serialization (the strictEncoding rows).
    for s in v["strictEncoding"]["rows"].as_array().unwrap() {
        assert_eq!(bound(&presented_with(&v, &s["blob"])), Err(code(2)), "{}", s["case"]);
    }
    // Row 3: over 4096 hex characters: V2's blob with a memo of 2,100 bytes added, 4,300 digits in all.
    let mut tx = v["V2"]["expectTxJson"].as_object().unwrap().clone();
    tx.insert("Memos".into(), json!([{"Memo": {"MemoData": "AB".repeat(2100)}}]));
    let long = hex::encode_upper(key().sign_tx(&tx).unwrap());
    assert!(long.len() > 4096);
    assert_eq!(bound(&presented_with(&v, &json!(long))), Err(code(3)));
    // Row 5: a build with a malformed fee, sequence or last ledger (see a_build_for_another_h_or_with_bad_inputs).
    assert_eq!(code(5), "x402/option-malformed");
    // Row 6: a payment whose option fails the filter: fees sponsored.
    let mut presented = presented_with(&v, &v["V2"]["blob"]);
    presented["accepted"]["extra"]["areFeesSponsored"] = json!(true);
    assert_eq!(bound(&presented), Err(code(6)));
    // V2's payment itself reads H back.
    let presented =
        json!({"x402Version": 2, "accepted": v["V2"]["accepted"], "payload": {"signedTxBlob": v["V2"]["blob"]}});
    assert_eq!(bound(&presented), Ok(v["V2"]["expectBound"].as_str().unwrap().to_owned()));
}

#[test]
fn every_key_is_run_or_listed() {
    support::keys_run_or_listed(
        "x402-exact-xrpl.json",
        &["fixed", "V1", "V2", "V3", "V4", "plant", "agreedRefusals", "strictEncoding", "buyer", "multisigned"],
        &[
            ("about", "prose"),
            ("V5", "the verifier's reference of a landed payment (ledger reads), a seller's and verifier's step"),
            ("V6", "the verifier's status read by the transaction hash, a seller's and verifier's step"),
        ],
    );
    // Not run: V4's x402Row and V2's expectReference are the verifier's reference of a landed payment; agreedRefusals
    // rows 0 (the reference without its codec) and 4 (the verifier's recover) are not the buyer's.
    support::member_not_run("x402-exact-xrpl.json", "/V4/x402Row");
    support::member_not_run("x402-exact-xrpl.json", "/V2/expectReference/lastLedgerSequence");
    support::member_not_run("x402-exact-xrpl.json", "/agreedRefusals/rows/4");
}

/// A secp256k1 XRPL key against the Python reference's curve code (no vector row holds one):
/// `tests/xrpl/secp256k1.json`, written by `scripts/differential/xrpl_keys.py`, gives for each secret the
/// compressed key, the address, the claim signature of XS3's bytes and V2's Payment signed, byte for byte.
#[test]
fn secp256k1_keys_sign_as_the_reference_derives_and_signs() {
    let path = format!("{}/tests/xrpl/secp256k1.json", env!("CARGO_MANIFEST_DIR"));
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = file("x402-exact-xrpl.json");
    let claim = hex::decode(file("mpp-session-hedera-solana-xrpl.json")["XS3"]["expect"].as_str().unwrap()).unwrap();
    let mut tx = v["V2"]["expectTxJson"].as_object().unwrap().clone();
    tx.insert("InvoiceID".into(), v["V1"]["x402InvoiceId"].clone());
    let rows = rows["rows"].as_array().unwrap();
    assert!(rows.len() >= 4);
    for r in rows {
        let k = XrplKey::secp256k1_from_secret_hex(r["secret"].as_str().unwrap()).unwrap();
        assert_eq!(hex::encode_upper(k.public_key()), r["publicKey"].as_str().unwrap());
        assert_eq!(k.address(), r["address"].as_str().unwrap());
        assert_eq!(hex::encode_upper(k.sign_bytes(&claim).unwrap()), r["claimSignature"].as_str().unwrap());
        let signed = hex::encode_upper(k.sign_tx(&tx).unwrap());
        assert_eq!(signed, r["signedV2"].as_str().unwrap());
        // The signed blob decodes and reads H back under V2's option.
        let p = pairing("x402/exact/xrpl").unwrap();
        assert_eq!(p.bound(&presented_with(&v, &json!(signed)), None).unwrap(), h());
    }
}
