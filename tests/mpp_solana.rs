//! `mpp/charge/solana`, from `tests/vectors/mpp-charge-solana.json`'s own data: the buyer rows (B2, the plant; B6,
//! check over the file's payment), the placed challenge, the build (V1's message, the default compute budget), V2,
//! the refusals, the split memo, the plant, the signature credential's landed read, and the bad input of issue 14 for
//! this pairing, each code the reference's (integraledger-terms 0.4.0, run on the same input). Every key of the file
//! is run here or listed by name (in [`every_key_is_run_or_listed`]) with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use support::rows::{b64u_json, request_of, row, unix_of};
use support::solana::instructions_of;
use support::vectors;
use terms::pairing::{ChooseContext, Chosen};
use terms::rail::solana::{Instruction, Key, Transaction, Version, compile, decode, program, signed_wire};
use terms::{Pairing, SigningRequest, atr_hash};

const FILE: &str = "mpp-charge-solana.json";
const ID: &str = "mpp/charge/solana";

/// The buyer's clock: one second before the file's `expires`. The reference's Solana charge reads no time (the B2
/// row names none); the crate's choose skips a challenge that has expired (a house rule, compare.py's "an MPP
/// challenge that has expired"), so the rows run at a time the challenge is live.
fn now() -> u64 {
    unix_of(file()["fixed"]["expires"].as_str().unwrap()) - 1
}

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

fn b64(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap()
}

fn b64_text(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn key(v: &Value) -> Key {
    Key::parse(v.as_str().unwrap()).unwrap()
}

/// The placed challenge (`place.expect`): id MV1, opaque MV3, and the request with `externalId` L.
fn placed(f: &Value) -> Value {
    f["place"]["expect"].clone()
}

/// The placed challenge with its request replaced, as a seller writes it.
fn with_request(mut challenge: Value, request: &Value) -> Value {
    challenge["request"] = json!(b64u_json(request));
    challenge
}

/// A credential echoing `challenge` with `payload`.
fn credential(challenge: &Value, payload: Value) -> Value {
    json!({"challenge": challenge, "payload": payload})
}

/// A `transaction` credential over the placed challenge holding `wire`.
fn tx_credential(f: &Value, wire: &[u8]) -> Value {
    credential(&placed(f), json!({"type": "transaction", "transaction": b64_text(wire)}))
}

fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The account and inputs of B2, over a challenge list.
fn choose(doc: &Value, inputs: &Value) -> Result<Chosen, String> {
    let f = file();
    let i = &row(&f, "B2")["input"];
    let p = pairing();
    let read = p.read(doc).map_err(|r| r.code())?;
    let inputs: Map<String, Value> = inputs.as_object().cloned().unwrap_or_default();
    terms::pairing::check_inputs(p, &inputs).map_err(|r| r.code())?;
    let ctx =
        ChooseContext { account: i["account"].as_str().unwrap(), inputs: &inputs, now: now(), reference: "ref", doc };
    p.choose(&read, &ctx).map_err(|r| r.code())
}

/// The message the pairing builds for a challenge with H of `abc`, or the refusal's code.
fn built(challenge: &Value, inputs: &Value) -> Result<Vec<u8>, String> {
    let chosen = choose(&json!([challenge]), inputs)?;
    built_from(&chosen)
}

fn built_from(chosen: &Chosen) -> Result<Vec<u8>, String> {
    let unsigned = pairing().build(chosen, b"abc", &atr_hash(b"abc")).map_err(|r| r.code())?;
    match unsigned.request().unwrap().unwrap() {
        SigningRequest::SolanaMessage(fields) => Ok(support::hex(&fields["message"].as_str().unwrap()[2..])),
        other => panic!("not a solana-message request: {other:?}"),
    }
}

/// A message's instructions with their accounts resolved: (program, account keys, data).
fn resolved(tx: &Transaction) -> Vec<(Key, Vec<Key>, Vec<u8>)> {
    tx.instructions
        .iter()
        .map(|ix| {
            let accounts = ix.accounts.iter().map(|i| tx.keys[usize::from(*i)]).collect();
            (*tx.program_of(ix).unwrap(), accounts, ix.data.clone())
        })
        .collect()
}

/// A message's wire with every signature slot empty.
fn unsigned_wire(message: &[u8]) -> Vec<u8> {
    let tx = decode(&signed_wire(message, &decode_signers(message)[0], &[0u8; 64]).unwrap()).unwrap();
    signed_wire(&tx.message, &tx.signers()[0], &[0u8; 64]).unwrap()
}

fn decode_signers(message: &[u8]) -> Vec<Key> {
    // The fee payer is the first key after the header (and the version byte of a v0 message).
    let at = if message[0] & 0x80 != 0 { 5 } else { 4 };
    vec![Key(message[at..at + 32].try_into().unwrap())]
}

/// V2's message recompiled with `edit` applied to its resolved instructions, under its fee payer and blockhash, as
/// an unsigned wire.
fn v2_edited(f: &Value, edit: impl FnOnce(&mut Vec<Instruction>)) -> Vec<u8> {
    let tx = decode(&b64(&f["V2"]["wireBase64"])).unwrap();
    let mut instructions = instructions_of(&tx);
    edit(&mut instructions);
    let message = compile(Version::V0, &tx.keys[0], &tx.blockhash, &instructions).unwrap();
    unsigned_wire(&message)
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
    support::b6_checks(r, pairing());
}

#[test]
fn the_placed_challenge_carries_h_and_its_request_the_lcp_string() {
    let f = file();
    let (fixed, c) = (&f["fixed"], placed(&f));
    let h = terms::AtrHash::parse(fixed["H"].as_str().unwrap()).unwrap();
    assert_eq!(terms::mpp::challenge_id(&h, 0).unwrap(), fixed["MV1"].as_str().unwrap());
    assert_eq!(c["id"], fixed["MV1"]);
    assert_eq!(c["opaque"], fixed["MV3opaque"]);
    let mut want = fixed["request"].clone();
    want["externalId"] = fixed["L"].clone();
    assert_eq!(request_of(&c), want);
    let doc = json!([c]);
    let read = terms::mpp::read(&doc).unwrap();
    assert_eq!(read.h, h);
    assert_eq!(read.link, fixed["link"].as_str().unwrap());
    // The unplaced challenge's request is the fixed one, without externalId: no build pays it.
    assert_eq!(request_of(&f["challenge"]), fixed["request"]);
}

#[test]
fn build_writes_v1s_message_and_v2_is_its_signed_wire() {
    let f = file();
    let b = &f["build"];
    let inputs = json!({"computeUnitLimit": b["computeUnitLimit"], "computeUnitPrice": b["computeUnitPrice"]});
    let message = built(&placed(&f), &inputs).unwrap();
    let ours = decode(&unsigned_wire(&message)).unwrap();
    let v2 = decode(&b64(&f["V2"]["wireBase64"])).unwrap();
    // The same instructions, fee payer and blockhash as V2's (x402-exact-solana.json's V1). The account order within
    // the message is @solana/kit's, as the reference writes it (see tests/solana_rail.rs).
    assert_eq!(resolved(&ours), resolved(&v2));
    assert_eq!(ours.keys[0], key(&f["fixed"]["feePayer"]));
    assert_eq!(ours.blockhash, v2.blockhash);
    assert_eq!(ours.signers(), v2.signers());
    // Its signed wire, with V2's payer signature, is bound to H.
    let signature = format!("0x{}", hex::encode(v2.signatures[1]));
    let chosen = choose(&json!([placed(&f)]), &inputs).unwrap();
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).unwrap();
    let done = unsigned.complete(&[terms::Answer::from(Value::String(signature))], &chosen).unwrap();
    let terms::pairing::Completion::Payment { payment, .. } = done else { panic!("a payment") };
    let presented = payment.to_value();
    assert_eq!(presented["payload"]["type"], "transaction");
    assert_eq!(bound_of(&presented), Ok(f["V2"]["expectBound"].as_str().unwrap().to_owned()));
    assert_eq!(presented["challenge"], placed(&f));
}

#[test]
fn without_a_compute_budget_the_build_writes_the_default() {
    let f = file();
    let message = built(&placed(&f), &json!({})).unwrap();
    let ours = decode(&unsigned_wire(&message)).unwrap();
    let want = f["defaultComputeBudget"]["instructions"].as_array().unwrap();
    for (got, want) in resolved(&ours).iter().zip(want) {
        assert_eq!(got.0, key(&want["program"]));
        assert!(got.1.is_empty() && want["accounts"].as_array().unwrap().is_empty());
        assert_eq!(hex::encode(&got.2), want["data"].as_str().unwrap());
    }
}

#[test]
fn v2_is_bound_to_h() {
    let f = file();
    let wire = b64(&f["V2"]["wireBase64"]);
    assert_eq!(bound_of(&tx_credential(&f, &wire)), Ok(f["V2"]["expectBound"].as_str().unwrap().to_owned()));
}

#[test]
fn the_refusals_are_the_files() {
    let f = file();
    for r in f["refusals"].as_array().unwrap() {
        let mut challenge = placed(&f);
        if let Some(external) = r.get("externalId") {
            let mut request = request_of(&challenge);
            request["externalId"] = external.clone();
            challenge = with_request(challenge, &request);
        }
        let payload = match (r.get("wireBase64"), r.get("payload")) {
            (Some(w), _) => json!({"type": "transaction", "transaction": w}),
            (None, Some(p)) => p.clone(),
            _ => panic!("a refusal row with no payment: {r}"),
        };
        assert_eq!(bound_of(&credential(&challenge, payload)), Err(r["expect"].as_str().unwrap().to_owned()), "{r}");
    }
}

#[test]
fn a_split_memo_beside_the_lcp_memo_is_not_read() {
    let f = file();
    let s = &f["split"];
    let wire = v2_edited(&f, |ixs| ixs.push(program::memo(s["splitMemo"].as_str().unwrap())));
    assert_eq!(bound_of(&tx_credential(&f, &wire)), Ok(s["expectBound"].as_str().unwrap().to_owned()));
}

#[test]
fn the_plant_two_lcp_memos_is_refused() {
    let f = file();
    let wire = b64(&f["plant"]["wireBase64"]);
    assert_eq!(bound_of(&tx_credential(&f, &wire)), Err(f["plant"]["expect"].as_str().unwrap().to_owned()));
}

#[test]
fn a_signature_credential_reads_the_landed_wire_beside_it() {
    let f = file();
    let p = &f["push"];
    let presented = credential(&placed(&f), json!({"type": "signature", "signature": p["txid"]}));
    let landed = json!({"transaction": p["landedWireBase64"]});
    let got = pairing().bound(&presented, Some(&landed)).map(|h| h.to_hex()).map_err(|r| r.code());
    assert_eq!(got, Ok(p["expectBound"].as_str().unwrap().to_owned()));
    // recover: the landed wire itself, presented as a transaction, reads back the same H.
    let wire = b64(&p["landedWireBase64"]);
    assert_eq!(bound_of(&tx_credential(&f, &wire)), Ok(f["recover"]["expect"].as_str().unwrap().to_owned()));
    // Without the read, the signature alone is not enough.
    assert_eq!(bound_of(&presented), Err("svm/read-first".into()));
}

/// A change to a request.
type Edit = Box<dyn Fn(&mut Value)>;

/// The agreed refusals the buyer meets: the filter's (through choose and bound), bound's, and the build's.
#[test]
fn the_agreed_refusals() {
    let f = file();
    let rows = f["agreedRefusals"]["rows"].as_array().unwrap();
    let code = |i: usize| rows[i]["expect"].as_str().unwrap().to_owned();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut request = request_of(&placed(&f));
        edit(&mut request);
        with_request(placed(&f), &request)
    };
    let v2 = b64(&f["V2"]["wireBase64"]);
    let bound_over = |c: &Value| bound_of(&credential(c, json!({"type": "transaction", "transaction": b64_text(&v2)})));
    // Row 0: a network MPP Solana does not define.
    assert_eq!(bound_over(&with(&|r| r["methodDetails"]["network"] = json!("testnet"))), Err(code(0)));
    // Row 1: each malformed request member.
    let long = "x".repeat(567);
    let edits: Vec<Edit> = vec![
        Box::new(|r| r["amount"] = json!("0")),
        Box::new(|r| r["amount"] = json!("18446744073709551616")),
        Box::new(|r| r["currency"] = json!("usdc")),
        Box::new(|r| r["recipient"] = json!("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")),
        Box::new(move |r| r["externalId"] = json!(long)),
        Box::new(|r| {
            r["methodDetails"].as_object_mut().unwrap().remove("feePayerKey");
        }),
    ];
    for edit in &edits {
        assert_eq!(bound_over(&with(edit.as_ref())), Err(code(1)));
    }
    // Rows 2 and 3: the refusals and plant rows run them on the file's wires; a memo that is no LCP string:
    let no_lcp = v2_edited(&f, |ixs| ixs[3] = program::memo("order_12345"));
    assert_eq!(bound_of(&tx_credential(&f, &no_lcp)), Err(code(2)));
    let two = b64(&f["plant"]["wireBase64"]);
    assert_eq!(bound_of(&tx_credential(&f, &two)), Err(code(3)));
    // Row 4: localnet has no CAIP-2 network: the quote (MPP's network read) refuses it.
    let localnet = with(&|r| r["methodDetails"]["network"] = json!("localnet"));
    let chosen = Chosen {
        pairing: ID.into(),
        build_input: json!({"challenge": localnet, "payer": f["fixed"]["payer"]}).as_object().unwrap().clone(),
        reference: "ref".into(),
        agreement: None,
    };
    assert_eq!(pairing().quote(&chosen).unwrap_err().code(), code(4));
    // Row 7: splits, a confidential transfer, no decimals or token program for a mint.
    for edit in [
        &(|r: &mut Value| r["methodDetails"]["splits"] = json!([])) as &dyn Fn(&mut Value),
        &|r| r["methodDetails"]["confidential"] = json!(true),
        &|r| r["methodDetails"]["tokenProgram"] = json!(f["fixed"]["payer"]),
        &|r| r["methodDetails"]["decimals"] = json!(256),
    ] {
        assert_eq!(bound_over(&with(edit)), Err(code(7)));
    }
    // Row 8: a payload of another type.
    assert_eq!(bound_of(&credential(&placed(&f), json!({"type": "hash", "hash": "0x00"}))), Err(code(8)));
}

/// The bad input of issue 14 for this pairing, each the reference's code for it.
#[test]
fn bad_input() {
    let f = file();
    let v2 = b64(&f["V2"]["wireBase64"]);
    let lcp = f["fixed"]["L"].as_str().unwrap();
    // Two Memo instructions holding the LCP string: svm/memo-count (the plant); the LCP string as the data of
    // another program than Memo (here the transfer's): no carrier.
    let wrong = v2_edited(&f, |ixs| {
        ixs.remove(3);
        ixs[2].data = lcp.as_bytes().to_vec();
    });
    assert_eq!(bound_of(&tx_credential(&f, &wrong)), Err("svm/no-carrier".into()));
    // A memo with another H, which the request's externalId does not name: svm/carrier-mismatch; and when the
    // externalId names it too, it is not the challenge's H.
    let h2 = format!("lcp:sha256:{}", f["fixed"]["H2"].as_str().unwrap());
    let other = v2_edited(&f, |ixs| ixs[3] = program::memo(&h2));
    assert_eq!(bound_of(&tx_credential(&f, &other)), Err("svm/carrier-mismatch".into()));
    let mut request = request_of(&placed(&f));
    request["externalId"] = json!(h2);
    let moved = credential(
        &with_request(placed(&f), &request),
        json!({"type": "transaction",
        "transaction": b64_text(&other)}),
    );
    assert_eq!(bound_of(&moved), Err("mpp/carrier-not-challenge".into()));
    // Bytes that do not decode, or with a byte after the message; a bundle past 8; a wire not base64.
    let mut trailing = v2.clone();
    trailing.push(0);
    assert_eq!(bound_of(&tx_credential(&f, &trailing)), Err("svm/tx-malformed".into()));
    assert_eq!(bound_of(&tx_credential(&f, &v2[..v2.len() - 3])), Err("svm/tx-malformed".into()));
    let nine = vec![json!(b64_text(&v2)); 9];
    let bundle = credential(&placed(&f), json!({"type": "bundle", "transactions": nine}));
    assert_eq!(bound_of(&bundle), Err("svm/tx-malformed".into()));
    let not_b64 = credential(&placed(&f), json!({"type": "transaction", "transaction": "not base64!"}));
    assert_eq!(bound_of(&not_b64), Err("svm/tx-malformed".into()));
    // A transfer to another token account or mint, a blockhash or fee payer the buyer did not give: bound reads the
    // memo alone, as the reference's does (the seller's server, which broadcasts, checks the transfer), so each is
    // still bound to H.
    let payer = key(&f["fixed"]["payer"]);
    for edit in
        [&(|ixs: &mut Vec<Instruction>| ixs[2].accounts[2].0 = payer) as &dyn Fn(&mut Vec<Instruction>), &|ixs| {
            ixs[2].accounts[1].0 = payer
        }]
    {
        let wire = v2_edited(&f, edit);
        assert_eq!(bound_of(&tx_credential(&f, &wire)), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
    }
    let tx = decode(&v2).unwrap();
    for (fee_payer, blockhash) in [(payer, tx.blockhash), (tx.keys[0], payer)] {
        let message = compile(Version::V0, &fee_payer, &blockhash, &instructions_of(&tx)).unwrap();
        let wire = unsigned_wire(&message);
        assert_eq!(bound_of(&tx_credential(&f, &wire)), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
    }
    // A signature of the wrong length, or not 0x hex: mpp/credential-malformed, the credential never written.
    let chosen = choose(&json!([placed(&f)]), &json!({})).unwrap();
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).unwrap();
    for answer in [format!("0x{}", "11".repeat(63)), format!("0x{}", "11".repeat(65)), "11".repeat(64)] {
        let got = unsigned.complete(&[terms::Answer::from(Value::String(answer))], &chosen);
        assert_eq!(got.err().map(|r| r.code()), Some("mpp/credential-malformed".into()));
    }
}

/// The build's own refusals: a request whose externalId is not this H's LCP string (the `occupied` request), a
/// missing input, and an account of another namespace.
#[test]
fn the_build_refuses_what_it_cannot_pay() {
    let f = file();
    let occupied = with_request(placed(&f), &f["occupied"]["request"]);
    assert_eq!(built(&occupied, &json!({})), Err("svm/carrier-mismatch".into()));
    // Without the request's blockhash and no buyer's one: mpp/input-missing; with the buyer's: its message.
    let mut request = request_of(&placed(&f));
    request["methodDetails"].as_object_mut().unwrap().remove("recentBlockhash");
    let bare = with_request(placed(&f), &request);
    assert_eq!(built(&bare, &json!({})), Err("mpp/input-missing".into()));
    let blockhash = f["fixed"]["request"]["methodDetails"]["recentBlockhash"].clone();
    let with_buyers = built(&bare, &json!({"recentBlockhash": blockhash})).unwrap();
    assert_eq!(with_buyers, built(&placed(&f), &json!({})).unwrap());
    // A computeUnitLimit past u32: svm/input-malformed at build.
    assert_eq!(built(&placed(&f), &json!({"computeUnitLimit": 4_294_967_296u64})), Err("svm/input-malformed".into()));
    // `sol`: a System transfer of the amount in lamports to the recipient.
    let mut request = request_of(&placed(&f));
    request["currency"] = json!("sol");
    let message = built(&with_request(placed(&f), &request), &json!({})).unwrap();
    let tx = decode(&unsigned_wire(&message)).unwrap();
    let transfer = &resolved(&tx)[2];
    assert_eq!(transfer.0, program::SYSTEM);
    assert_eq!(transfer.1, [key(&f["fixed"]["payer"]), key(&request["recipient"])]);
    let amount: u64 = request["amount"].as_str().unwrap().parse().unwrap();
    assert_eq!(transfer.2[4..], amount.to_le_bytes());
}

#[test]
fn the_choice_quotes_the_request() {
    let f = file();
    let chosen = choose(&json!([placed(&f)]), &json!({})).unwrap();
    let q = pairing().quote(&chosen).unwrap();
    let r = &f["fixed"]["request"];
    assert_eq!(q.amount.to_string(), r["amount"].as_str().unwrap());
    assert_eq!(q.asset, r["currency"].as_str().unwrap());
    assert_eq!(q.payee, r["recipient"].as_str().unwrap());
    assert_eq!(q.network, f["V2"]["expectReference"]["network"].as_str().unwrap());
    assert_eq!(q.scheme, "charge");
    assert_eq!(q.valid_before, Some(unix_of(f["fixed"]["expires"].as_str().unwrap())));
}

/// The buyer's inputs: each the request leaves out must be given in its form (`mpp/input-missing` otherwise, before
/// anything is built), and is ignored where the request names it, as the reference's choose reads them; the compute
/// budget, where given, is of its form.
#[test]
fn the_inputs_the_request_leaves_out() {
    let f = file();
    let d = &f["fixed"]["request"]["methodDetails"];
    let wrong = [Value::Null, json!(""), json!("x"), json!(-1), json!(1.5), json!([]), json!({})];
    for (name, right) in
        [("decimals", &d["decimals"]), ("tokenProgram", &d["tokenProgram"]), ("recentBlockhash", &d["recentBlockhash"])]
    {
        let mut request = request_of(&placed(&f));
        request["methodDetails"].as_object_mut().unwrap().remove(name);
        let bare = with_request(placed(&f), &request);
        assert_eq!(built(&bare, &json!({})), Err("mpp/input-missing".into()), "without {name}");
        for v in &wrong {
            // A string is no decimals, a number no token program or blockhash; a non-empty string that is no key
            // is taken, and the build refuses it.
            let taken = name != "decimals" && v.as_str().is_some_and(|s| !s.is_empty());
            let want = if taken { "svm/input-malformed" } else { "mpp/input-missing" };
            assert_eq!(built(&bare, &json!({name: v})), Err(want.into()), "{name} = {v}");
            assert!(built(&placed(&f), &json!({name: v})).is_ok(), "{name} = {v}, the request naming it");
        }
        assert_eq!(built(&bare, &json!({name: right})), built(&placed(&f), &json!({})), "{name} given");
    }
    for (name, v) in [
        ("computeUnitLimit", json!(-1)),
        ("computeUnitLimit", json!("1")),
        ("computeUnitPrice", json!(1)),
        ("computeUnitPrice", json!("1.5")),
        ("computeUnitPrice", Value::Null),
    ] {
        assert_eq!(built(&placed(&f), &json!({name: v})), Err("mpp/input-missing".into()), "{name} = {v}");
    }
    // An account of another namespace, or on another network, is not paid.
    let fixed = &f["fixed"];
    let p = pairing();
    let doc = json!([placed(&f)]);
    let read = p.read(&doc).unwrap();
    for account in [
        format!("eip155:84532:{}", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"),
        format!("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp:{}", fixed["payer"].as_str().unwrap()),
    ] {
        let inputs = Map::new();
        let ctx = ChooseContext { account: &account, inputs: &inputs, now: now(), reference: "ref", doc: &doc };
        assert_eq!(p.choose(&read, &ctx).unwrap_err().code(), "mpp/no-payable-option", "{account}");
    }
}

#[test]
fn every_key_is_run_or_listed() {
    support::keys_run_or_listed(
        FILE,
        &[
            "fixed",
            "challenge",
            "place",
            "occupied",
            "V2",
            "build",
            "defaultComputeBudget",
            "refusals",
            "split",
            "plant",
            "push",
            "recover",
            "agreedRefusals",
            "buyer",
        ],
        &[("about", "prose")],
    );
    // Not run: V2.expectReference's digest, fee payer and blockhash, and push.expectReferenceTransaction, are the
    // verifier's reference of a landed payment; occupied.expect is the seller's advertise (its buyer side, the build
    // refusing the request, is run); agreedRefusals rows 5 and 6 are the seller's fetchPresented.
    support::member_not_run(FILE, "/V2/expectReference/digest");
    support::member_not_run(FILE, "/push/expectReferenceTransaction");
    support::member_not_run(FILE, "/occupied/expect");
}
