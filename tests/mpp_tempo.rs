//! `mpp/charge/tempo/memo`, from `tests/vectors/mpp-charge-tempo-memo.json`'s own data: the buyer rows (B2, the
//! plant; B6, check over the file's payment), `plant`, MV7's memos and calldata as the build writes them, `splits`'
//! calls and refusals through the pairing, and the bad input of issue 16 for this pairing. Every key of the file is
//! run here or listed by name (in [`every_key_is_run_or_listed`]) with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use serde_json::{Map, Value, json};
use support::rows::{request_of, row, unix_of};
use support::{CountingSigner, Reply, ScriptedFetch, paused, vectors};
use terms::pairing::{ChooseContext, Chosen};
use terms::rail::tempo::transaction::TempoTransaction;
use terms::{FixedClock, Options, Pairing, SigningRequest, TransactOutcome, atr_hash};

const FILE: &str = "mpp-charge-tempo-memo.json";
const MEMO: &str = "mpp/charge/tempo/memo";

/// The bytes of `0x` hex.
fn hex(text: &str) -> Vec<u8> {
    support::hex(text.strip_prefix("0x").unwrap_or(text))
}

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(MEMO).unwrap()
}

/// B6's presented credential.
fn presented(f: &Value) -> Value {
    row(f, "B6")["input"]["presented"].clone()
}

/// The bound over a credential: H as hex, or the refusal's code.
fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn b64_json(v: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(terms::json::canonical(v).unwrap())
}

/// The credential with its challenge's request replaced by `request`, as a seller writes it.
fn with_request(mut credential: Value, request: &Value) -> Value {
    credential["challenge"]["request"] = json!(b64_json(request));
    credential
}

/// The credential with its signed wire replaced.
fn with_wire(mut credential: Value, wire: &[u8]) -> Value {
    credential["payload"]["signature"] = json!(format!("0x{}", alloy_primitives::hex::encode(wire)));
    credential
}

/// B6's signed transaction, read.
fn b6_tx(f: &Value) -> TempoTransaction {
    TempoTransaction::decode(&hex(presented(f)["payload"]["signature"].as_str().unwrap())).unwrap()
}

/// B6's wire with the memo word of its one call replaced.
fn with_memo(f: &Value, memo: &[u8; 32]) -> Value {
    let mut tx = b6_tx(f);
    let mut input = tx.calls[0].input.to_vec();
    input[68..100].copy_from_slice(memo);
    tx.calls[0].input = input.into();
    with_wire(presented(f), &tx.encode())
}

/// The choice of B2's document (or another challenge list) for B2's account with `inputs`, at B2's `now`.
fn choose(doc: &Value, inputs: &Value) -> Result<Chosen, String> {
    let f = file();
    let i = &row(&f, "B2")["input"];
    let p = pairing();
    let read = p.read(doc).map_err(|r| r.code())?;
    let inputs: Map<String, Value> = inputs.as_object().cloned().unwrap_or_default();
    let ctx = ChooseContext {
        account: i["account"].as_str().unwrap(),
        inputs: &inputs,
        now: i["now"].as_u64().unwrap(),
        reference: "ref",
        doc,
    };
    terms::pairing::check_inputs(p, &inputs).map_err(|r| r.code())?;
    p.choose(&read, &ctx).map_err(|r| r.code())
}

/// The request the pairing builds for B2's document with H of `abc` (the ATR B2 advertises), or the refusal's code.
fn built(doc: &Value, inputs: &Value) -> Result<Map<String, Value>, String> {
    built_from(&choose(doc, inputs)?)
}

/// The request the pairing builds for B2's choice whose challenge has been given `request` after confirm (a
/// hand-edited choice: the build holds it to the filter again), or the refusal's code.
fn built_with_request(request: &Value) -> Result<Map<String, Value>, String> {
    let f = file();
    let mut chosen = choose(&b2_doc(&f), &json!({})).unwrap();
    chosen.build_input["challenge"]["request"] = json!(b64_json(request));
    built_from(&chosen)
}

fn built_from(chosen: &Chosen) -> Result<Map<String, Value>, String> {
    let unsigned = pairing().build(chosen, b"abc", &atr_hash(b"abc")).map_err(|r| r.code())?;
    match unsigned.request().unwrap().unwrap() {
        SigningRequest::TempoCall(fields) | SigningRequest::TempoCalls(fields) => Ok(fields),
        other => panic!("not a tempo request: {other:?}"),
    }
}

fn b2_doc(f: &Value) -> Value {
    row(f, "B2")["input"]["doc"].clone()
}

/// B2's document with its challenge's request replaced.
fn doc_with_request(f: &Value, request: &Value) -> Value {
    let mut doc = b2_doc(f);
    doc[0]["request"] = json!(b64_json(request));
    doc
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    let f = file();
    let r = row(&f, "B2");
    assert_eq!(r["pairing"], MEMO);
    let link = terms::mpp::read(&r["input"]["doc"]).unwrap().link;
    support::plant_declines_before_the_signer(&f, r, &link, pairing());
}

#[test]
fn b6_check_over_the_files_payment() {
    let f = file();
    let r = row(&f, "B6");
    assert_eq!(r["pairing"], MEMO);
    support::b6_checks(r, pairing());
}

#[test]
fn plant_a_memo_for_the_challenge_at_position_1_is_not_bound() {
    let f = file();
    let memo: [u8; 32] = hex(f["MV7"]["expectMemoPosition1"].as_str().unwrap()).try_into().unwrap();
    let planted = with_memo(&f, &memo);
    assert_eq!(f["plant"]["expect"]["refused"], true);
    assert_eq!(bound_of(&planted), Err(f["plant"]["expect"]["code"].as_str().unwrap().to_owned()));
}

#[test]
fn mv7_the_memos_and_calldata_the_build_writes() {
    let f = file();
    let mv7 = &f["MV7"];
    let c = &b2_doc(&f)[0];
    let (realm, id) = (c["realm"].as_str().unwrap(), c["id"].as_str().unwrap());
    let memo = |id: &str| alloy_primitives::hex::encode_prefixed(terms::mpp::attribution_memo(realm, id, None));
    assert_eq!(memo(id), mv7["expectMemo"].as_str().unwrap());
    let position1 = format!("{}1", id.strip_suffix('0').unwrap());
    assert_eq!(memo(&position1), mv7["expectMemoPosition1"].as_str().unwrap());
    let fields = built(&b2_doc(&f), &json!({})).unwrap();
    assert_eq!(fields["call"]["data"], mv7["expectCalldata"]);
    assert_eq!(fields["call"]["data"].as_str().unwrap()[..10], *mv7["expectSelector"].as_str().unwrap());
    assert_eq!(fields["call"]["to"], f["fixed"]["pathUSD"]);
    assert_eq!(fields["chainId"], request_of(c)["methodDetails"]["chainId"]);
    assert_eq!(fields["broadcast"], false);
    // validBefore is the challenge's expires, in Unix seconds.
    let expires = unix_of(c["expires"].as_str().unwrap());
    assert_eq!(fields["validBefore"], json!(expires));
}

/// The token's address is handed to the signer as the challenge wrote it: the reference's `call.to`, and each split
/// call's, is the request's `currency` text, its EIP-55 checksum case kept (a wallet shows it to a person), where the
/// crate once wrote it in lower case. The token is mpp-challenge.json's checksummed R_E currency in B2's challenge;
/// the reference (integraledger-terms 0.4.0) hands `"to": "0x036CbD53842c5426634e7929541eC2318f3dCF7e"` for the one
/// call and for every call of the `splits` row's request. Bound still compares the token's bytes, whatever the case.
#[test]
fn a_checksummed_token_keeps_its_case_in_the_request() {
    let f = file();
    let token = checksummed_token();
    let mut request = request_of(&b2_doc(&f)[0]);
    request["currency"] = json!(token);
    let fields = built(&doc_with_request(&f, &request), &json!({})).unwrap();
    assert_eq!(fields["call"]["to"], json!(token));
    let mut split: Value = serde_json::from_str(f["splits"]["request"].as_str().unwrap()).unwrap();
    split["currency"] = json!(token);
    let fields = built(&doc_with_request(&f, &split), &json!({})).unwrap();
    let calls = fields["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|c| c["to"] == json!(token)), "{calls:?}");
    // Bound reads the token as bytes: B6's wire, whose call is to pathUSD, still binds when the challenge writes
    // pathUSD's address in upper case.
    let mut request = request_of(&presented(&f)["challenge"]);
    request["currency"] = json!(request["currency"].as_str().unwrap().to_uppercase().replacen("0X", "0x", 1));
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Ok(atr_hash(b"abc").to_hex()));
}

/// A checksummed (mixed-case EIP-55) token address: mpp-challenge.json's R_E currency.
fn checksummed_token() -> String {
    let r_e: Value = serde_json::from_str(vectors("mpp-challenge.json")["fixed"]["R_E"].as_str().unwrap()).unwrap();
    let token = r_e["currency"].as_str().unwrap().to_owned();
    assert!(token.bytes().any(|b| b.is_ascii_uppercase()) && token.bytes().any(|b| b.is_ascii_lowercase()));
    token
}

#[test]
fn transact_completes_with_the_files_wire_and_bound_reads_h() {
    let f = file();
    let i = &row(&f, "B2")["input"];
    let doc = b2_doc(&f);
    let link = terms::mpp::read(&doc).unwrap().link;
    let wire = presented(&f)["payload"]["signature"].clone();
    let signer =
        CountingSigner::new(f["fixed"]["payerKey"].as_str().unwrap(), i["account"].as_str().unwrap()).answering(wire);
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(&b"abc"[..])]);
    let options = Options::new().clock(FixedClock(i["now"].as_u64().unwrap()));
    let got = paused().block_on(terms::transact(&doc, pairing(), &signer, &fetch, &options)).unwrap();
    let TransactOutcome::Signed(s) = got else { panic!("not signed: {got:?}") };
    let signed = s.signed.unwrap().to_value();
    assert_eq!(signed["payload"], presented(&f)["payload"]);
    assert_eq!(signed["source"], presented(&f)["source"]);
    assert_eq!(bound_of(&signed), Ok(atr_hash(b"abc").to_hex()));
    assert_eq!(signer.calls()[0].kind(), "tempo-call");
}

#[test]
fn splits_are_the_calls_of_the_request() {
    let f = file();
    let s = &f["splits"];
    let request: Value = serde_json::from_str(s["request"].as_str().unwrap()).unwrap();
    let fields = built(&doc_with_request(&f, &request), &json!({})).unwrap();
    let calls = fields["calls"].as_array().unwrap();
    let want = s["expectCalls"].as_array().unwrap();
    assert_eq!(calls.len(), want.len());
    for (got, want) in calls.iter().zip(want) {
        assert_eq!(got["to"], want["to"]);
        assert_eq!(got["data"], want["data"]);
    }
    let primary = &calls[0]["data"].as_str().unwrap()[74..138];
    let primary = alloy_primitives::U256::from_str_radix(primary, 16).unwrap();
    assert_eq!(primary.to_string(), s["expectPrimaryAmount"].as_str().unwrap());
}

#[test]
fn splits_the_reference_refuses() {
    let f = file();
    let s = &f["splits"];
    let request: Value = serde_json::from_str(s["request"].as_str().unwrap()).unwrap();
    for r in s["agreedRefusals"]["rows"].as_array().unwrap() {
        let mut request = request.clone();
        request["methodDetails"]["splits"] = r["splits"].clone();
        // The reference's choose passes over a challenge its filter refuses (mpp/no-payable-option); the filter's
        // own code is what a build of a choice edited after confirm, and bound, give.
        let got = choose(&doc_with_request(&f, &request), &json!({}));
        assert_eq!(got.unwrap_err(), "mpp/no-payable-option", "{}", r["case"]);
        let got = built_with_request(&request);
        assert_eq!(got.unwrap_err(), r["expect"].as_str().unwrap(), "{}", r["case"]);
        let credential = with_request(presented(&f), &request);
        assert_eq!(bound_of(&credential), Err(r["expect"].as_str().unwrap().to_owned()), "{}", r["case"]);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Bad input (issue 16).

#[test]
fn a_memo_for_another_challenge_or_realm_is_not_bound() {
    let f = file();
    let c = &b2_doc(&f)[0];
    let realm = c["realm"].as_str().unwrap();
    let other_realm = f["fixed"]["otherRealm"].as_str().unwrap();
    let other_id = terms::mpp::attribution_memo(realm, "another.0", None);
    assert_eq!(bound_of(&with_memo(&f, &other_id)), Err("tempo/memo-not-bound".into()));
    let other = terms::mpp::attribution_memo(other_realm, c["id"].as_str().unwrap(), None);
    assert_eq!(bound_of(&with_memo(&f, &other)), Err("tempo/memo-not-bound".into()));
    // The credential's challenge moved to another realm: the wire's memo names the file's.
    let mut moved = presented(&f);
    moved["challenge"]["realm"] = json!(other_realm);
    assert_eq!(bound_of(&moved), Err("tempo/memo-not-bound".into()));
}

#[test]
fn a_memo_naming_another_client_id_still_binds_as_in_the_reference() {
    // The reference's check reads the tag, version, realm and challenge id of the memo, not its client id.
    let f = file();
    let c = &b2_doc(&f)[0];
    let (realm, id) = (c["realm"].as_str().unwrap(), c["id"].as_str().unwrap());
    let theirs = terms::mpp::attribution_memo(realm, id, Some("another-client"));
    assert_eq!(bound_of(&with_memo(&f, &theirs)), Ok(atr_hash(b"abc").to_hex()));
    // The build writes the buyer's client id into the memo.
    let fields = built(&b2_doc(&f), &json!({"clientId": "agent-7"})).unwrap();
    let ours = alloy_primitives::hex::encode(terms::mpp::attribution_memo(realm, id, Some("agent-7")));
    assert!(fields["call"]["data"].as_str().unwrap().ends_with(&ours));
    // A client id that is not a non-empty string, as the reference's inputs check gives it.
    for bad in [json!(7), json!(""), json!(null)] {
        assert_eq!(built(&b2_doc(&f), &json!({"clientId": bad})).unwrap_err(), "mpp/input-missing", "{bad}");
    }
}

#[test]
fn a_split_list_whose_sum_is_the_amount_or_more_is_refused() {
    let f = file();
    let mut request = request_of(&b2_doc(&f)[0]);
    let recipient = "0xA1B2C3D4E5F6A1B2C3D4E5F6A1B2C3D4E5F6A1B2";
    for amounts in [
        vec!["600000", "400000"],
        vec!["999999", "2"],
        vec!["1", "115792089237316195423570985008687907853269984665640564039457584007913129639935"],
    ] {
        let splits: Vec<Value> = amounts.iter().map(|a| json!({"amount": a, "recipient": recipient})).collect();
        request["methodDetails"]["splits"] = json!(splits);
        assert_eq!(built_with_request(&request).unwrap_err(), "mpp/input-malformed");
    }
    request["amount"] = json!("115792089237316195423570985008687907853269984665640564039457584007913129639936");
    request["methodDetails"].as_object_mut().unwrap().remove("splits");
    assert_eq!(built_with_request(&request).unwrap_err(), "mpp/request-malformed");
}

#[test]
fn a_transaction_for_another_chain_or_token_is_refused() {
    let f = file();
    let mut tx = b6_tx(&f);
    tx.chain_id = 4217;
    assert_eq!(bound_of(&with_wire(presented(&f), &tx.encode())), Err("tempo/tx-malformed".into()));
    // The challenge names another chain than the wire's.
    let mut request = request_of(&presented(&f)["challenge"]);
    request["methodDetails"]["chainId"] = json!(4217);
    assert_eq!(bound_of(&with_request(presented(&f), &request)), Err("tempo/tx-malformed".into()));
    // The call is to another token than the request's currency.
    let mut tx = b6_tx(&f);
    tx.calls[0].to = Some(f["fixed"]["recipient"].as_str().unwrap().parse().unwrap());
    assert_eq!(bound_of(&with_wire(presented(&f), &tx.encode())), Err("tempo/memo-not-bound".into()));
    // Two calls carrying the memo.
    let mut tx = b6_tx(&f);
    tx.calls.push(tx.calls[0].clone());
    assert_eq!(bound_of(&with_wire(presented(&f), &tx.encode())), Err("tempo/ambiguous".into()));
}

#[test]
fn another_fee_token_or_recipient_is_not_read_by_bound_as_in_the_reference() {
    // The reference's bound reads the chain and the memo call's token and memo only: a fee token or a recipient the
    // build did not write still binds (the build hands the signer the recipient; what it signs is its own).
    let f = file();
    let other: alloy_primitives::Address = f["fixed"]["recipient"].as_str().unwrap().parse().unwrap();
    let mut tx = b6_tx(&f);
    tx.fee_token = Some(other);
    assert_eq!(bound_of(&with_wire(presented(&f), &tx.encode())), Ok(atr_hash(b"abc").to_hex()));
    let mut tx = b6_tx(&f);
    let mut input = tx.calls[0].input.to_vec();
    input[16..36].copy_from_slice(
        f["fixed"]["pathUSD"].as_str().unwrap().parse::<alloy_primitives::Address>().unwrap().as_slice(),
    );
    tx.calls[0].input = input.into();
    assert_eq!(bound_of(&with_wire(presented(&f), &tx.encode())), Ok(atr_hash(b"abc").to_hex()));
}

#[test]
fn a_payload_not_of_its_form_is_refused() {
    let f = file();
    let mut p = presented(&f);
    p["payload"]["type"] = json!("hash");
    assert_eq!(bound_of(&p), Err("mpp/credential-type".into()));
    for (sig, code) in [
        (json!("0x761"), "mpp/credential-malformed"),
        (json!("76f8"), "mpp/credential-malformed"),
        (json!(7), "mpp/credential-malformed"),
        (json!("0x"), "tempo/tx-malformed"),
        (json!("0x02f8"), "tempo/tx-malformed"),
    ] {
        let mut p = presented(&f);
        p["payload"]["signature"] = sig.clone();
        assert_eq!(bound_of(&p), Err(code.into()), "{sig}");
    }
    let mut p = presented(&f);
    // Over 64 KiB, the credential is over the credential bound before the wire is read, as the reference has it.
    p["payload"]["signature"] = json!(format!("0x{}", "76".repeat(65_537)));
    assert_eq!(bound_of(&p), Err("mpp/credential-malformed".into()));
}

#[test]
fn the_choice_quotes_the_request() {
    let f = file();
    let chosen = choose(&b2_doc(&f), &json!({})).unwrap();
    let q = pairing().quote(&chosen).unwrap();
    let request = request_of(&b2_doc(&f)[0]);
    let q = serde_json::to_value(&q).unwrap();
    assert_eq!(q["amount"], request["amount"]);
    assert_eq!(q["asset"], request["currency"]);
    assert_eq!(q["payee"], request["recipient"]);
    assert_eq!(q["network"], json!(format!("eip155:{}", request["methodDetails"]["chainId"])));
    let names: Vec<&str> = pairing().inputs().iter().map(|i| i.name).collect();
    assert_eq!(names, ["clientId"]);
}

#[test]
fn every_key_is_run_or_listed() {
    let run = ["fixed", "MV7", "plant", "splits", "buyer"];
    let listed = [
        ("about", "prose"),
        ("pattern", "the pattern's description, no buyer value"),
        ("MV8", "status on receipts: what a verifier reads, not the buyer"),
    ];
    for key in file().as_object().unwrap().keys() {
        assert!(
            run.contains(&key.as_str()) || listed.iter().any(|(k, _)| k == key),
            "key {key} neither run nor listed"
        );
    }
    // MV7's expectMismatch and expectMalformed are the core's checkAttribution (a call whose memo mismatches is not
    // counted: plant); its wire, length, SHA-256 and reference digest are the rail's (tests/tempo_rail.rs).
}
