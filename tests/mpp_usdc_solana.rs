//! `mpp/charge/usdc/solana`, from `tests/vectors/mpp-charge-usdc-solana.json`'s own data: the buyer rows (B2, the
//! plant; B6, check over the file's payment), V2, the profile refusals as the echoed challenge's filter gives them,
//! the credentials of another type than `transaction`, the build from the profile's details, and the bad input of
//! issue 14 for this pairing (each code the reference's, integraledger-terms 0.4.0). The file's pattern is
//! `mpp/charge/solana`'s: the wire checks it shares are run in tests/mpp_solana.rs. Every key of the file is run here
//! or listed by name (in [`every_key_is_run_or_listed`]) with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use support::rows::{b64u_json, request_of, row};
use support::vectors;
use terms::pairing::{ChooseContext, Chosen, Completion};
use terms::rail::solana::decode;
use terms::{Answer, Pairing, SigningRequest, atr_hash};

const FILE: &str = "mpp-charge-usdc-solana.json";
const ID: &str = "mpp/charge/usdc/solana";

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

/// The buyer's clock: one second before the file's `expiresUnix` (the crate's choose skips an expired challenge; the
/// reference's reads no time, and the B2 row names none).
fn now() -> u64 {
    file()["fixed"]["expiresUnix"].as_u64().unwrap() - 1
}

/// B6's presented credential: V2's wire under the placed usdc challenge.
fn presented(f: &Value) -> Value {
    row(f, "B6")["input"]["presented"].clone()
}

/// The placed challenge B6 echoes.
fn placed(f: &Value) -> Value {
    presented(f)["challenge"].clone()
}

fn with_request(mut challenge: Value, request: &Value) -> Value {
    challenge["request"] = json!(b64u_json(request));
    challenge
}

fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

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

fn built(challenge: &Value, inputs: &Value) -> Result<Vec<u8>, String> {
    let chosen = choose(&json!([challenge]), inputs)?;
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).map_err(|r| r.code())?;
    match unsigned.request().unwrap().unwrap() {
        SigningRequest::SolanaMessage(fields) => Ok(support::hex(&fields["message"].as_str().unwrap()[2..])),
        other => panic!("not a solana-message request: {other:?}"),
    }
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    let f = file();
    let r = row(&f, "B2");
    assert_eq!(r["pairing"], ID);
    let link = terms::mpp::read(&r["input"]["doc"]).unwrap().link;
    assert_eq!(link, f["fixed"]["link"].as_str().unwrap());
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
fn v2_is_bound_to_h_and_the_challenge_is_the_files() {
    let f = file();
    let (fixed, c) = (&f["fixed"], placed(&f));
    assert_eq!(c["id"], fixed["MV1"]);
    assert_eq!(c["method"], "usdc");
    let mut want = fixed["request"].clone();
    want["externalId"] = fixed["L"].clone();
    assert_eq!(request_of(&c), want);
    assert_eq!(bound_of(&presented(&f)), Ok(f["V2"]["expectBound"].as_str().unwrap().to_owned()));
}

/// The build reads the profile's details: the same message as the Solana charge's on the same request, and its
/// signed wire (with V2's payer signature) is V2's payment, bound to H.
#[test]
fn the_build_reads_methoddetails_solana() {
    let f = file();
    let inputs = &row(&f, "B2")["input"]["inputs"];
    let message = built(&placed(&f), inputs).unwrap();
    let v2_wire = base64::engine::general_purpose::STANDARD
        .decode(presented(&f)["payload"]["transaction"].as_str().unwrap())
        .unwrap();
    let v2 = decode(&v2_wire).unwrap();
    let ours =
        decode(&terms::rail::solana::signed_wire(&message, &v2.signers()[1], &v2.signatures[1]).unwrap()).unwrap();
    assert_eq!(ours.blockhash, v2.blockhash);
    assert_eq!(ours.signers(), v2.signers());
    let mut keys = ours.keys;
    let mut theirs = v2.keys.clone();
    keys.sort();
    theirs.sort();
    assert_eq!(keys, theirs);
    let chosen = choose(&json!([placed(&f)]), inputs).unwrap();
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).unwrap();
    let signature = format!("0x{}", hex::encode(v2.signatures[1]));
    let done = unsigned.complete(&[Answer::from(Value::String(signature))], &chosen).unwrap();
    let Completion::Payment { payment, .. } = done else { panic!("a payment") };
    let payment = payment.to_value();
    assert_eq!(payment["payload"]["type"], "transaction");
    assert_eq!(payment["challenge"], placed(&f));
    assert_eq!(bound_of(&payment), Ok(f["V2"]["expectBound"].as_str().unwrap().to_owned()));
    // The quote: the request's amount of the mint, on the profile's network, until expires.
    let q = pairing().quote(&chosen).unwrap();
    let r = &f["fixed"]["request"];
    assert_eq!(q.amount.to_string(), r["amount"].as_str().unwrap());
    assert_eq!(q.asset, r["currency"].as_str().unwrap());
    assert_eq!(q.payee, r["recipient"].as_str().unwrap());
    assert_eq!(q.network, f["V2"]["expectReference"]["network"].as_str().unwrap());
    assert_eq!(q.valid_before, f["fixed"]["expiresUnix"].as_u64());
    // A request in `sol` is a System transfer under this profile too, as the reference builds it.
    let mut request = request_of(&placed(&f));
    request["currency"] = json!("sol");
    let message = built(&with_request(placed(&f), &request), inputs).unwrap();
    let tx = decode(&terms::rail::solana::signed_wire(&message, &v2.signers()[1], &v2.signatures[1]).unwrap()).unwrap();
    assert_eq!(tx.program_of(&tx.instructions[2]), Some(&terms::rail::solana::program::SYSTEM));
}

/// The refusal rows, each as the buyer meets it: the profile's (an evm details object beside, another type, no
/// network) in the filter bound holds the echoed challenge to; the occupied externalId in the build.
#[test]
fn the_refusal_rows() {
    let f = file();
    for r in f["refusals"]["rows"].as_array().unwrap() {
        let mut request = request_of(&placed(&f));
        if let Some(t) = r.get("type") {
            request["methodDetails"]["type"] = t.clone();
        }
        if let Some(extra) = r.get("extra").and_then(Value::as_object) {
            request["methodDetails"].as_object_mut().unwrap().extend(extra.clone());
        }
        if r.get("dropNetwork") == Some(&json!(true)) {
            request["methodDetails"]["solana"].as_object_mut().unwrap().remove("network");
        }
        if let Some(e) = r.get("externalId") {
            request["externalId"] = e.clone();
        }
        let mut credential = presented(&f);
        credential["challenge"] = with_request(placed(&f), &request);
        let code = r["expect"]["code"].as_str().unwrap();
        if code == "mpp/carrier-occupied" {
            // The seller's advertise refuses such a request; the buyer's build refuses to pay it, and bound finds its
            // memo is not the request's externalId.
            assert_eq!(built(&credential["challenge"], &json!({})), Err("svm/carrier-mismatch".into()));
            assert_eq!(bound_of(&credential), Err("svm/carrier-mismatch".into()));
        } else {
            assert_eq!(bound_of(&credential), Err(code.to_owned()), "{}", r["case"]);
        }
    }
}

/// The profile's checks are the `usdc` method's, whichever of its pairings holds the challenge: the EVM profile's
/// pairing refuses a Solana profile without a network as the reference's does (`svm/network-malformed`), and a
/// well-formed one as not its own.
#[test]
fn another_usdc_pairing_reads_the_profile_alike() {
    let f = file();
    let evm = terms::pairing("mpp/charge/usdc/evm").unwrap();
    assert_eq!(evm.bound(&presented(&f), None).unwrap_err().code(), "mpp/not-this-pairing");
    let mut request = request_of(&placed(&f));
    request["methodDetails"]["solana"].as_object_mut().unwrap().remove("network");
    let mut credential = presented(&f);
    credential["challenge"] = with_request(placed(&f), &request);
    assert_eq!(evm.bound(&credential, None).unwrap_err().code(), "svm/network-malformed");
}

#[test]
fn only_a_transaction_credential() {
    let f = file();
    for r in f["refusals"]["credentials"]["rows"].as_array().unwrap() {
        let mut credential = presented(&f);
        credential["payload"] = r["payload"].clone();
        assert_eq!(bound_of(&credential), Err(r["expect"]["code"].as_str().unwrap().to_owned()), "{}", r["case"]);
        // A landed read beside it changes nothing.
        let landed = json!({"transaction": presented(&f)["payload"]["transaction"]});
        let got = pairing().bound(&credential, Some(&landed)).map_err(|e| e.code());
        assert_eq!(got.err(), Some(r["expect"]["code"].as_str().unwrap().to_owned()));
    }
}

/// The bad input of issue 14 for this pairing: the wire checks are the Solana charge's (tests/mpp_solana.rs); here
/// the same memo faults through this pairing, and a signature of the wrong length.
#[test]
fn bad_input() {
    let f = file();
    let h2 = f["fixed"]["H"].as_str().unwrap().replace("ba78", "ba79");
    let mut request = request_of(&placed(&f));
    request["externalId"] = json!(format!("lcp:sha256:{h2}"));
    let mut credential = presented(&f);
    credential["challenge"] = with_request(placed(&f), &request);
    assert_eq!(bound_of(&credential), Err("svm/carrier-mismatch".into()));
    let mut trailing = presented(&f);
    let mut wire =
        base64::engine::general_purpose::STANDARD.decode(trailing["payload"]["transaction"].as_str().unwrap()).unwrap();
    wire.push(0);
    trailing["payload"]["transaction"] = json!(base64::engine::general_purpose::STANDARD.encode(&wire));
    assert_eq!(bound_of(&trailing), Err("svm/tx-malformed".into()));
    // A profile that asks for splits or a confidential transfer, which the build does not make.
    for (k, v) in [("splits", json!([])), ("confidential", json!(true))] {
        let mut request = request_of(&placed(&f));
        request["methodDetails"]["solana"][k] = v;
        let mut c = presented(&f);
        c["challenge"] = with_request(placed(&f), &request);
        assert_eq!(bound_of(&c), Err("svm/input-malformed".into()), "{k}");
    }
    let chosen = choose(&json!([placed(&f)]), &json!({})).unwrap();
    let unsigned = pairing().build(&chosen, b"abc", &atr_hash(b"abc")).unwrap();
    for answer in [format!("0x{}", "11".repeat(63)), format!("0x{}", "11".repeat(65))] {
        let got = unsigned.complete(&[Answer::from(Value::String(answer))], &chosen);
        assert_eq!(got.err().map(|r| r.code()), Some("mpp/credential-malformed".into()));
    }
}

#[test]
fn every_key_is_run_or_listed() {
    support::keys_run_or_listed(
        FILE,
        &["fixed", "V2", "refusals", "buyer"],
        &[
            ("about", "prose"),
            ("patternAs", "names mpp/charge/solana, whose file's wire checks tests/mpp_solana.rs runs"),
        ],
    );
    // Not run: V2.expectReference's digest, fee payer and blockhash are the verifier's reference of the payment;
    // fixed.agreementUrl names no agreement this pairing asks for (its payment is a public proof of H).
    support::member_not_run(FILE, "/V2/expectReference/digest");
    support::member_not_run(FILE, "/fixed/agreementUrl");
}
