//! The choice (`Chosen::build_input`) of `mpp/charge/solana`, `mpp/charge/usdc/solana` and `mpp/charge/nearintents`
//! (and of MPP Lightning's charge and session) is the reference's member for member: over each file's B2 challenge
//! (and the same challenge with its request leaving out what the buyer then supplies), with every input the pairing
//! names given, the choice holds the challenge, the payer's address where the pairing keeps one, and the inputs the
//! request leaves to the buyer, in the reference's order; no `now` (no build of these reads a clock) and no input the request already names.
//!
//! The expected members are the reference's (integraledger-terms 0.4.0): its piece's `choose` over the same document,
//! account and inputs, e.g. `{challenge, payer, computeUnitLimit, computeUnitPrice}` for the Solana B2 row.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};
use support::rows::{request_of, row, unix_of};
use support::vectors;
use terms::pairing::ChooseContext;

/// Every input the Solana charges name, and one they do not.
fn every_input() -> Value {
    json!({
        "decimals": 6, "tokenProgram": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "recentBlockhash": "EZ3rST5dvHmbanh75jc4PuLfV96vp9fEYBVeNk4cX4hy", "computeUnitLimit": 20000,
        "computeUnitPrice": "1", "clientId": "x",
    })
}

/// The file's B2 challenge with its request edited, as a seller writes it.
fn b2_challenge(file: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let f = vectors(file);
    let mut c = row(&f, "B2")["input"]["doc"][0].clone();
    let mut request = request_of(&c);
    edit(&mut request);
    c["request"] = json!(URL_SAFE_NO_PAD.encode(terms::json::canonical(&request).unwrap()));
    c
}

/// The pairing's choice over `[challenge]` for the file's B2 account, with `inputs`, one second before it expires.
fn choice(file: &str, id: &str, challenge: &Value, inputs: &Value) -> Map<String, Value> {
    let f = vectors(file);
    let account = row(&f, "B2")["input"]["account"].as_str().unwrap().to_owned();
    let p = terms::pairing(id).unwrap();
    let doc = json!([challenge]);
    let read = p.read(&doc).unwrap();
    let inputs = inputs.as_object().cloned().unwrap_or_default();
    terms::pairing::check_inputs(p, &inputs).unwrap();
    let now = unix_of(challenge["expires"].as_str().unwrap()) - 1;
    let ctx = ChooseContext { account: &account, inputs: &inputs, now, reference: "ref", doc: &doc };
    p.choose(&read, &ctx).unwrap().build_input
}

/// The reference's choice: the challenge, `payer` (the B2 account's address) where given, then `kept` of `inputs`.
fn expected(file: &str, challenge: &Value, payer: bool, inputs: &Value, kept: &[&str]) -> Map<String, Value> {
    let mut want = Map::new();
    want.insert("challenge".into(), challenge.clone());
    if payer {
        let f = vectors(file);
        let account = row(&f, "B2")["input"]["account"].as_str().unwrap().to_owned();
        want.insert("payer".into(), json!(account.rsplit(':').next().unwrap()));
    }
    for k in kept {
        want.insert((*k).into(), inputs[*k].clone());
    }
    want
}

/// The same members, in the reference's order, with the same values.
fn assert_choice(got: &Map<String, Value>, want: &Map<String, Value>, case: &str) {
    let (names, wanted): (Vec<&String>, Vec<&String>) = (got.keys().collect(), want.keys().collect());
    assert_eq!(names, wanted, "{case}: the members, in the reference's order");
    assert_eq!(got, want, "{case}");
}

fn without(path: &[&str], names: &[&str]) -> impl FnOnce(&mut Value) {
    let (path, names): (Vec<String>, Vec<String>) =
        (path.iter().map(|s| (*s).to_owned()).collect(), names.iter().map(|s| (*s).to_owned()).collect());
    move |request| {
        let at = path.iter().fold(request, |v, k| &mut v[k.as_str()]).as_object_mut().unwrap();
        for n in &names {
            at.shift_remove(n);
        }
    }
}

#[test]
fn a_solana_charges_choice_is_the_references() {
    let (file, id) = ("mpp-charge-solana.json", "mpp/charge/solana");
    let f = vectors(file);
    let row_inputs = row(&f, "B2")["input"]["inputs"].clone();
    let all = every_input();
    let as_row = b2_challenge(file, |_| {});
    let limits = ["computeUnitLimit", "computeUnitPrice"];
    // B2 as the file writes it: the request names decimals, tokenProgram and recentBlockhash.
    for inputs in [&row_inputs, &all] {
        let want = expected(file, &as_row, true, inputs, &limits);
        assert_choice(&choice(file, id, &as_row, inputs), &want, "B2");
    }
    // The request without recentBlockhash: the buyer's is kept.
    let kept = ["recentBlockhash", "computeUnitLimit", "computeUnitPrice"];
    let c = b2_challenge(file, without(&["methodDetails"], &["recentBlockhash"]));
    assert_choice(&choice(file, id, &c, &all), &expected(file, &c, true, &all, &kept), "no recentBlockhash");
    // Native sol without any of the three: the mint's decimals and program are not the buyer's to give.
    let c = b2_challenge(file, |r| {
        r["currency"] = json!("sol");
        without(&["methodDetails"], &["recentBlockhash", "decimals", "tokenProgram"])(r);
    });
    assert_choice(&choice(file, id, &c, &all), &expected(file, &c, true, &all, &kept), "sol");
}

#[test]
fn a_usdc_solana_charges_choice_is_the_references() {
    let (file, id) = ("mpp-charge-usdc-solana.json", "mpp/charge/usdc/solana");
    let f = vectors(file);
    let row_inputs = row(&f, "B2")["input"]["inputs"].clone();
    let all = every_input();
    let as_row = b2_challenge(file, |_| {});
    for inputs in [&row_inputs, &all] {
        let want = expected(file, &as_row, true, inputs, &["computeUnitLimit", "computeUnitPrice"]);
        assert_choice(&choice(file, id, &as_row, inputs), &want, "B2");
    }
    let kept = ["recentBlockhash", "computeUnitLimit", "computeUnitPrice"];
    let c = b2_challenge(file, without(&["methodDetails", "solana"], &["recentBlockhash"]));
    assert_choice(&choice(file, id, &c, &all), &expected(file, &c, true, &all, &kept), "no recentBlockhash");
    let kept = ["decimals", "tokenProgram", "recentBlockhash", "computeUnitLimit", "computeUnitPrice"];
    let c = b2_challenge(file, without(&["methodDetails", "solana"], &["recentBlockhash", "decimals", "tokenProgram"]));
    assert_choice(&choice(file, id, &c, &all), &expected(file, &c, true, &all, &kept), "none of the three");
}

#[test]
fn a_near_intents_charges_choice_is_the_references() {
    let file = "mpp-charge-nearintents.json";
    let c = b2_challenge(file, |_| {});
    let got = choice(file, "mpp/charge/nearintents", &c, &every_input());
    assert_choice(&got, &expected(file, &c, false, &json!({}), &[]), "B2");
}

/// MPP Lightning's charge and session keep the challenge and the session's `returnInvoice`, no `now`: the
/// reference's `LnMppPiece.choose` writes `{challenge, **given}` (its Lightning rail takes no clock).
#[test]
fn the_lightning_pieces_choice_is_the_references() {
    let file = "mpp-charge-lightning.json";
    let c = b2_challenge(file, |_| {});
    let got = choice(file, "mpp/charge/lightning", &c, &json!({}));
    assert_choice(&got, &expected(file, &c, false, &json!({}), &[]), "charge B2");
    let file = "mpp-session-lightning.json";
    let f = vectors(file);
    let inputs = row(&f, "B2")["input"]["inputs"].clone();
    let c = b2_challenge(file, |_| {});
    let got = choice(file, "mpp/session/lightning", &c, &inputs);
    assert_choice(&got, &expected(file, &c, false, &inputs, &["returnInvoice"]), "session B2");
}

/// `mpp/session/tempo` keeps every input the reference's session piece keeps: `{challenge, from, now, deposit,
/// authorizedSigner, credentialType, tokenDomain}` (`MppSessionPiece.choose`: the charge's members, then the optional
/// inputs present), though a Tempo opening reads neither of the last two.
#[test]
fn the_tempo_sessions_choice_keeps_the_references_inputs() {
    let (file, id) = ("mpp-session-tempo.json", "mpp/session/tempo");
    let f = vectors(file);
    let i = &row(&f, "B2")["input"];
    let mut inputs = i["inputs"].clone();
    inputs["authorizedSigner"] = json!("0x209693Bc6afc0C5328bA36FaF03C514EF312287C");
    inputs["credentialType"] = json!("hash");
    inputs["tokenDomain"] = json!({"name": "USD", "version": "1"});
    let p = terms::pairing(id).unwrap();
    let read = p.read(&i["doc"]).unwrap();
    let given = inputs.as_object().cloned().unwrap();
    terms::pairing::check_inputs(p, &given).unwrap();
    let account = i["account"].as_str().unwrap();
    let now = i["now"].as_u64().unwrap();
    let ctx = ChooseContext { account, inputs: &given, now, reference: "ref", doc: &i["doc"] };
    let got = p.choose(&read, &ctx).unwrap().build_input;
    let mut want = Map::new();
    want.insert("challenge".into(), i["doc"][0].clone());
    want.insert("from".into(), json!(account.rsplit(':').next().unwrap()));
    want.insert("now".into(), json!(now));
    for k in ["deposit", "authorizedSigner", "credentialType", "tokenDomain"] {
        want.insert(k.into(), inputs[k].clone());
    }
    assert_choice(&got, &want, "B2 with every input");
}
