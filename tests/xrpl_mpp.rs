//! `mpp/charge/xrpl`, from `tests/vectors/mpp-charge-xrpl.json`'s own data: the buyer rows (B2, the plant, through
//! `transact`; B6, check over the file's payment), the placed challenge built and signed by the local key from
//! entropy 01x16 into V3's blob byte for byte, V3, V4 and the plant's blobs at bound, the refusals and the agreed
//! refusals the buyer meets, the multi-signed rows, and the bad input of issue 43 for this pairing. Every key of the
//! file is run here or listed by name with the reason ([`every_key_is_run_or_listed`]).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use serde_json::{Map, Value, json};
use support::rows::{b64u_json, request_of, row, unix_of};
use support::vectors;
use terms::pairing::{ChooseContext, Chosen};
use terms::{Pairing, Signer as _, XrplKey, atr_hash};

const FILE: &str = "mpp-charge-xrpl.json";
const ID: &str = "mpp/charge/xrpl";

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

/// One second before the file's `expires`: the crate's choose skips an expired challenge.
fn now() -> u64 {
    unix_of(file()["fixed"]["expires"].as_str().unwrap()) - 1
}

fn key() -> XrplKey {
    XrplKey::ed25519_from_entropy_hex(&"01".repeat(16)).unwrap()
}

/// The placed challenge (`place.expect`): id MV1, opaque MV3, and the request with `invoiceId` H.
fn placed(f: &Value) -> Value {
    f["place"]["expect"].clone()
}

fn with_request(mut challenge: Value, request: &Value) -> Value {
    challenge["request"] = json!(b64u_json(request));
    challenge
}

fn credential(challenge: &Value, payload: Value) -> Value {
    json!({"challenge": challenge, "payload": payload})
}

fn tx_credential(f: &Value, blob: &Value) -> Value {
    credential(&placed(f), json!({"type": "transaction", "blob": blob}))
}

fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// B2's account and the `build` row's inputs, over a challenge list.
fn choose(doc: &Value) -> Result<Chosen, String> {
    let f = file();
    let i = &row(&f, "B2")["input"];
    let p = pairing();
    let read = p.read(doc).map_err(|r| r.code())?;
    let inputs: Map<String, Value> =
        ["fee", "sequence", "lastLedgerSequence"].iter().map(|k| ((*k).to_owned(), f["build"][*k].clone())).collect();
    terms::pairing::check_inputs(p, &inputs).map_err(|r| r.code())?;
    let ctx =
        ChooseContext { account: i["account"].as_str().unwrap(), inputs: &inputs, now: now(), reference: "ref", doc };
    p.choose(&read, &ctx).map_err(|r| r.code())
}

/// The `txJson` the pairing builds for a challenge with H of `abc`, or the refusal's code.
fn built(challenge: &Value) -> Result<Map<String, Value>, String> {
    let chosen = choose(&json!([challenge]))?;
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).map_err(|r| r.code())?;
    let request = unsigned.request().unwrap().unwrap();
    assert_eq!(request.kind(), "xrpl-tx");
    Ok(request.fields().unwrap()["txJson"].as_object().unwrap().clone())
}

/// The build over the placed challenge's choice with its challenge replaced by `challenge` (a choice edited after
/// choose, which the build holds to the filter again).
fn built_over(challenge: &Value) -> Result<(), String> {
    let mut chosen = choose(&json!([placed(&file())])).unwrap();
    chosen.build_input.insert("challenge".into(), challenge.clone());
    pairing().build(&chosen, b"abc", &atr_hash(b"abc")).map(|_| ()).map_err(|r| r.code())
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    let f = file();
    let r = row(&f, "B2");
    assert_eq!(r["pairing"], ID);
    let link = terms::mpp::read(&r["input"]["doc"]).unwrap().link;
    let mut r = r.clone();
    r["input"]["now"] = json!(now());
    support::plant_declines_before_the_signer(&f, &r, &link, pairing());
}

#[test]
fn b6_check_over_the_files_payment() {
    let f = file();
    let r = row(&f, "B6");
    assert_eq!(r["pairing"], ID);
    assert_eq!(r["input"]["presented"]["payload"]["blob"], f["V3"]["blob"]);
    support::b6_checks(r, pairing());
}

#[test]
fn the_placed_challenge_is_b2s_and_carries_h_as_the_invoice_id() {
    let f = file();
    assert_eq!(row(&f, "B2")["input"]["doc"][0], placed(&f));
    let request = request_of(&placed(&f));
    assert_eq!(request["methodDetails"]["invoiceId"], f["fixed"]["invoiceId"]);
    let mut unplaced = request;
    unplaced["methodDetails"].as_object_mut().unwrap().remove("invoiceId");
    assert_eq!(unplaced, f["fixed"]["request"]);
    assert_eq!(f["challenge"]["request"], json!(b64u_json(&f["fixed"]["request"])));
    assert_eq!(f["fixed"]["invoiceId"].as_str().unwrap(), hex::encode_upper(atr_hash(b"abc").as_bytes()));
}

#[tokio::test]
async fn build_gives_v3s_fields_and_the_local_key_signs_v3s_blob() {
    let f = file();
    let tx = built(&placed(&f)).unwrap();
    // V3's decoded fields other than SigningPubKey and TxnSignature: the built Payment written, then signed.
    let unsigned = terms::rail::xrpl::Tx::from_json(&tx).unwrap().encode();
    let v3 = terms::rail::xrpl::decode_blob(f["V3"]["blob"].as_str().unwrap()).unwrap();
    assert_eq!(terms::rail::xrpl::without_signature(&v3.fields()), unsigned);
    assert_eq!(tx["InvoiceID"], f["fixed"]["invoiceId"]);
    assert_eq!(tx["Account"], f["fixed"]["account"]);
    let chosen = choose(&json!([placed(&f)])).unwrap();
    let p = pairing();
    let unsigned = p.build(&chosen, b"abc", &atr_hash(b"abc")).unwrap();
    let request = unsigned.request().unwrap().unwrap();
    let signer = key().on_network(f["V3"]["expectReference"]["network"].as_str().unwrap()).unwrap();
    let answer = signer.sign(&request).await.unwrap();
    assert_eq!(answer.as_str().unwrap(), f["V3"]["blob"].as_str().unwrap());
    let completion = unsigned.complete(&[answer], &chosen).unwrap();
    let credential = completion.payment_value().unwrap();
    assert_eq!(credential, tx_credential(&f, &f["V3"]["blob"]));
    assert_eq!(bound_of(&credential), Ok(f["V3"]["expectBound"].as_str().unwrap().to_owned()));
    let quote = p.quote(&chosen).unwrap();
    assert_eq!(quote.amount.to_string(), f["fixed"]["request"]["amount"].as_str().unwrap());
    assert_eq!(quote.payee, f["fixed"]["request"]["recipient"].as_str().unwrap());
    assert_eq!(quote.network, f["V3"]["expectReference"]["network"].as_str().unwrap());
}

#[test]
fn v3_v4_and_the_plant_at_bound() {
    let f = file();
    assert_eq!(bound_of(&tx_credential(&f, &f["V3"]["blob"])), Ok(f["V3"]["expectBound"].as_str().unwrap().into()));
    assert_eq!(bound_of(&tx_credential(&f, &f["V4"]["blob"])), Err(f["V4"]["expect"].as_str().unwrap().into()));
    assert_eq!(bound_of(&tx_credential(&f, &f["plant"]["blob"])), Err(f["plant"]["expect"].as_str().unwrap().into()));
    for r in f["multisigned"]["rows"].as_array().unwrap() {
        assert_eq!(
            bound_of(&tx_credential(&f, &r["blob"])),
            Err(r["expect"].as_str().unwrap().into()),
            "{}",
            r["case"]
        );
    }
}

#[test]
fn the_refusals_are_the_files() {
    let f = file();
    let rows = f["refusals"].as_array().unwrap();
    // A hash credential with no landed read beside it; with V3's blob read beside it, H.
    let hash = credential(&placed(&f), rows[0]["payload"].clone());
    assert_eq!(bound_of(&hash), Err(rows[0]["expect"].as_str().unwrap().into()));
    let landed = json!({"blob": f["V3"]["blob"]});
    assert_eq!(pairing().bound(&hash, Some(&landed)).unwrap().to_hex(), f["V3"]["expectBound"].as_str().unwrap());
    // A request with memos.
    let mut r = request_of(&placed(&f));
    r["methodDetails"]["memos"] = json!([]);
    assert_eq!(built(&with_request(placed(&f), &r)), Err("mpp/no-payable-option".into()));
    assert_eq!(built_over(&with_request(placed(&f), &r)), Err(rows[1]["expect"].as_str().unwrap().into()));
    // No network.
    let mut r = request_of(&placed(&f));
    r["methodDetails"].as_object_mut().unwrap().remove("network");
    assert_eq!(built(&with_request(placed(&f), &r)), Err("mpp/no-payable-option".into()));
    assert_eq!(built_over(&with_request(placed(&f), &r)), Err(rows[2]["expect"].as_str().unwrap().into()));
    assert_eq!(
        terms::mpp::network(&with_request(placed(&f), &r)).unwrap_err().code(),
        rows[2]["expect"].as_str().unwrap()
    );
    let presented = tx_credential(&f, &f["V3"]["blob"]);
    let mut edited = presented;
    edited["challenge"] = with_request(placed(&f), &r);
    assert_eq!(bound_of(&edited), Err(rows[2]["expect"].as_str().unwrap().into()));
}

/// The placed request with one edit, at bound over V3's credential.
fn bound_with(f: &Value, edit: impl FnOnce(&mut Value)) -> Result<String, String> {
    let mut r = request_of(&placed(f));
    edit(&mut r);
    bound_of(&credential(&with_request(placed(f), &r), json!({"type": "transaction", "blob": f["V3"]["blob"]})))
}

#[test]
fn the_agreed_refusals_the_buyer_meets() {
    let f = file();
    let rows = f["agreedRefusals"]["rows"].as_array().unwrap();
    let code = |i: usize| Err::<String, String>(rows[i]["expect"].as_str().unwrap().to_owned());
    assert_eq!(bound_with(&f, |r| r["methodDetails"]["network"] = json!("localnet")), code(0));
    type Edit = fn(&mut Value);
    let malformed: [(&str, Edit); 9] = [
        ("recipient not classic", |r| r["recipient"] = json!("0x12")),
        ("currency neither", |r| r["currency"] = json!("xrp")),
        ("currency with an extra member", |r| {
            r["currency"] = json!({"currency": "USD", "issuer": "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyN", "x": 1});
        }),
        ("amount zero", |r| r["amount"] = json!("0")),
        ("amount not whole drops", |r| r["amount"] = json!("1.5")),
        ("amount past u64", |r| r["amount"] = json!("18446744073709551616")),
        ("invoiceId not 64 hex", |r| r["methodDetails"]["invoiceId"] = json!("BA78")),
        ("tag not u32", |r| r["methodDetails"]["destinationTag"] = json!(4_294_967_296_u64)),
        ("tag a string", |r| r["methodDetails"]["sourceTag"] = json!("7")),
    ];
    for (case, edit) in malformed {
        assert_eq!(bound_with(&f, edit), code(1), "{case}");
    }
    // Row 6: the request's invoiceId, but not the echoed challenge's H: a request naming H2 over a blob carrying H2.
    let h2 = f["fixed"]["H2"].as_str().unwrap();
    let mut tx = signed_fields(&f);
    tx.insert("InvoiceID".into(), json!(h2[2..].to_uppercase()));
    let blob = json!(hex::encode_upper(key().sign_tx(&tx).unwrap()));
    let mut r = request_of(&placed(&f));
    r["methodDetails"]["invoiceId"] = json!(h2[2..].to_uppercase());
    assert_eq!(
        bound_of(&credential(&with_request(placed(&f), &r), json!({"type": "transaction", "blob": blob}))),
        code(6)
    );
    // Row 7: the build with a malformed fee, sequence or last ledger.
    let chosen = choose(&json!([placed(&f)])).unwrap();
    for (k, bad) in [("fee", json!("012")), ("sequence", json!(-1)), ("lastLedgerSequence", json!(4_294_967_296_u64))] {
        let mut c = chosen.clone();
        c.build_input.insert(k.into(), bad);
        assert_eq!(
            pairing().build(&c, b"abc", &atr_hash(b"abc")).map(|_| String::new()).map_err(|r| r.code()),
            code(7),
            "{k}"
        );
    }
}

/// V3's Payment as `txJson` (the build's own, from the placed challenge).
fn signed_fields(f: &Value) -> Map<String, Value> {
    built(&placed(f)).unwrap()
}

#[test]
fn bad_input() {
    let f = file();
    let chosen = choose(&json!([placed(&f)])).unwrap();
    let p = pairing();
    let h = atr_hash(b"abc");
    // A build for another H: the challenge's id does not carry it.
    assert_eq!(p.build(&chosen, b"abd", &atr_hash(b"abd")).map(|_| ()).unwrap_err().code(), "mpp/id-not-ours");
    // A request whose invoiceId is another H's.
    let mut r = request_of(&placed(&f));
    r["methodDetails"]["invoiceId"] = json!(f["fixed"]["H2"].as_str().unwrap()[2..].to_uppercase());
    assert_eq!(built(&with_request(placed(&f), &r)), Err("xrpl/carrier-mismatch".into()));
    // An account with a bad checksum.
    let mut c = chosen.clone();
    c.build_input.insert("account".into(), json!("r3sNTMefq5gsRumMYsNznnX6yzzxVH6dTD"));
    assert_eq!(p.build(&c, b"abc", &h).map(|_| ()).unwrap_err().code(), "mpp/input-malformed");
    // Signed blobs that are not the build: refused at complete, before the credential is returned.
    let unsigned = p.build(&chosen, b"abc", &h).unwrap();
    let tx = signed_fields(&f);
    let complete =
        |blob: String| unsigned.complete(&[terms::Answer::new(json!(blob))], &chosen).map(|_| ()).map_err(|r| r.code());
    let signed = |k: &str, v: Value| {
        let mut t = tx.clone();
        t.insert(k.into(), v);
        hex::encode_upper(key().sign_tx(&t).unwrap())
    };
    for (k, v) in [
        ("InvoiceID", json!(f["fixed"]["H2"].as_str().unwrap()[2..].to_uppercase())),
        ("Destination", json!("rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q")),
        ("Amount", json!("1000001")),
        ("Fee", json!("5000")),
        ("Sequence", json!(8)),
        ("LastLedgerSequence", json!(100_000)),
    ] {
        assert_eq!(complete(signed(k, v)), Err("xrpl/tx-mismatch".into()), "{k}");
    }
    assert_eq!(complete(signed("NetworkID", json!(1))), Err("xrpl/network-mismatch".into()));
    let mut short = terms::rail::xrpl::Tx::from_json(&tx).unwrap();
    short.set_blob(terms::rail::xrpl::fields::SIGNING_PUB_KEY, key().public_key());
    short.set_blob(terms::rail::xrpl::fields::TXN_SIGNATURE, &[0x11; 63]);
    assert_eq!(complete(hex::encode_upper(short.encode())), Err("xrpl/signature-malformed".into()));
    let deep = vectors("decoder-caps.json")["xrpl"]["rows"][1]["blob"].as_str().unwrap().to_owned();
    assert_eq!(complete(deep.clone()), Err("xrpl/blob-malformed".into()));
    assert_eq!(bound_of(&tx_credential(&f, &json!(deep))), Err("xrpl/blob-malformed".into()));
    assert_eq!(complete(f["multisigned"]["rows"][0]["blob"].as_str().unwrap().into()), Err("xrpl/multisigned".into()));
    assert_eq!(complete(f["V3"]["blob"].as_str().unwrap().into()), Ok(()));
    // A credential of another type, or a transaction credential without its blob.
    assert_eq!(bound_of(&credential(&placed(&f), json!({"type": "signature"}))), Err("mpp/credential-type".into()));
    assert_eq!(bound_of(&credential(&placed(&f), json!({"type": "transaction"}))), Err("xrpl/blob-malformed".into()));
}

#[test]
fn an_issued_currency_builds_with_send_max_and_is_quoted_without_an_amount() {
    let f = file();
    let mut r = request_of(&placed(&f));
    let usd = json!({"currency": "USD", "issuer": "rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q"});
    r["currency"] = usd;
    r["amount"] = json!("1.5");
    let tx = built(&with_request(placed(&f), &r)).unwrap();
    let amount = json!({"currency": "USD", "issuer": "rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q", "value": "1.5"});
    assert_eq!(tx["Amount"], amount);
    assert_eq!(tx["SendMax"], amount);
    let chosen = choose(&json!([with_request(placed(&f), &r)])).unwrap();
    let quote = pairing().quote(&chosen).unwrap();
    assert_eq!(quote.asset, "USD.rPPdduC9MRTrXZP1J7MQyEKKEYiFigWZ6Q");
}

#[test]
fn every_key_is_run_or_listed() {
    support::keys_run_or_listed(
        FILE,
        &[
            "fixed",
            "challenge",
            "place",
            "V3",
            "V4",
            "plant",
            "build",
            "refusals",
            "agreedRefusals",
            "buyer",
            "multisigned",
        ],
        &[("about", "prose"), ("occupied", "the seller's advertise on a request whose invoiceId is taken")],
    );
    // Not run: V3.expectReference's transaction hash is the verifier's reference (the rail's hash is run in
    // tests/xrpl_rail.rs on the same blob); agreedRefusals rows 2 to 5 are the seller's fetchPresented.
    support::member_not_run(FILE, "/V3/expectReference/transaction");
    support::member_not_run(FILE, "/agreedRefusals/rows/5/result");
}
