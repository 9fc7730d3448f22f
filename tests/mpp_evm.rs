//! MPP's six EVM charge pairings, from their vector files' own data (`mpp-charge-evm-{authorization,permit2,
//! transaction,hash}.json`, `mpp-charge-usdc-{evm,gateway}.json`): every buyer row (B2, B6) through the gate, the
//! build and bound keys through the pairings, and the bad input of issue 11 for these pairings. Every key of each
//! file is run here or listed by name as not run, with the reason.
//!
//! Superseded rows (trust the peer, integraledger-terms 0.4.0): the `evm` method's challenge hash is keccak256 of
//! the JSON array `[id, realm]`; the authorization and Permit2 files were written when it was keccak256 of id and
//! realm concatenated. So their B6 payments do not bind (the peer's bound refuses them, `mpp/nonce-not-challenge-hash`
//! and `mpp/witness-not-challenge-hash`: check declines `signed-not-bound` for both ATRs, where the files expect H
//! for the first), and MV5's `expectNonce`, `expectDigest`, `expectSignature`, MV6's and MV6b's `expectDigest` and
//! `expectSignature`, and the Permit2 `plant.challengeHashOfPosition1` are checked against the peer's values in
//! `tests/mpp_evm_rail/peer.json` instead.
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

#[path = "mpp_evm/calls.rs"]
mod calls;
#[path = "mpp_evm/eip712.rs"]
mod eip712;
#[path = "mpp_evm/gateway.rs"]
mod gateway;

use base64::Engine as _;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Map, Value, json};
use support::{CountingSigner, Reply, ScriptedFetch, hex, paused, vectors};
use terms::pairing::{ChooseContext, Chosen};
use terms::{AtrHash, DeclineCode, Declined, Finish, FixedClock, Options, Pairing, atr_hash, check, finish};

pub type Outcome = Result<(), Failed>;

pub fn fail(m: impl Into<String>) -> Failed {
    Failed::from(m.into())
}

pub fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    if got == want { Ok(()) } else { Err(fail(format!("{what}: got {got:?}, want {want:?}"))) }
}

pub const ABC: &[u8] = b"abc";

pub fn h() -> AtrHash {
    atr_hash(ABC)
}

pub fn pairing(id: &str) -> &'static dyn Pairing {
    terms::pairing(id).unwrap()
}

pub fn b64(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text.as_bytes())
}

pub fn peer() -> Value {
    vectors("../mpp_evm_rail/peer.json")
}

/// A vector file's B2 row.
pub fn row<'a>(file: &'a Value, name: &str) -> &'a Value {
    file["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
}

/// The challenge the file's B2 row advertises H in.
pub fn challenge(file: &Value) -> Value {
    row(file, "B2")["input"]["doc"][0].clone()
}

/// The challenge with its request replaced by the base64url of `request`.
pub fn with_request(c: &Value, request: &str) -> Value {
    let mut c = c.clone();
    c["request"] = json!(b64(request));
    c
}

/// The pairing's choice of `doc`, as the gate's confirm makes it, for `account` with `inputs` at `now`.
pub fn choose(id: &str, doc: &Value, account: &str, inputs: &Value, now: u64) -> Result<Chosen, String> {
    let p = pairing(id);
    let read = p.read(doc).map_err(|r| r.code())?;
    let inputs: Map<String, Value> = inputs.as_object().cloned().unwrap_or_default();
    let ctx = ChooseContext { account, inputs: &inputs, now, reference: "ref", doc };
    terms::pairing::check_inputs(p, &inputs).map_err(|r| r.code())?;
    p.choose(&read, &ctx).map_err(|r| r.code())
}

/// The time a file's B2 row builds at: its `now`, else the file's, else a minute before the files' `expires`
/// (the Gateway file names none).
pub fn now_of(file: &Value) -> u64 {
    let i = &row(file, "B2")["input"];
    i["now"].as_u64().or_else(|| file["fixed"]["now"].as_u64()).unwrap_or(1_790_000_000)
}

/// The B2 row's choice of its own document.
pub fn b2_choice(file: &Value) -> Chosen {
    let r = row(file, "B2");
    let i = &r["input"];
    let inputs = i.get("inputs").cloned().unwrap_or(json!({}));
    choose(r["pairing"].as_str().unwrap(), &i["doc"], i["account"].as_str().unwrap(), &inputs, now_of(file)).unwrap()
}

/// The signing request the pairing builds for the choice with H of `abc`.
pub fn request_of(id: &str, chosen: &Chosen) -> terms::SigningRequest {
    pairing(id).build(chosen, ABC, &h()).map_err(|r| r.code()).unwrap().request().unwrap().unwrap()
}

/// finish over `abc` with the answers: the credential, or the decline.
pub fn finished(id: &str, chosen: &Chosen, answers: &[terms::Answer]) -> Result<Value, Declined> {
    match finish(ABC, chosen, answers, pairing(id))? {
        Finish::Finished(done) => Ok(done.signed.to_value()),
        Finish::Next(n) => panic!("unexpected next {n:?}"),
    }
}

/// The bound of a pairing over a presented credential: H as hex, or the refusal's code.
pub fn bound_of(id: &str, presented: &Value) -> Result<String, String> {
    pairing(id).bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The code a file's `{refused, code}` names.
pub fn code_of(v: &Value) -> String {
    assert_eq!(v["refused"], true);
    v["code"].as_str().unwrap().to_owned()
}

pub fn decline_of<T: std::fmt::Debug>(got: Result<T, Declined>, want: DeclineCode) -> Result<Declined, Failed> {
    match got {
        Ok(v) => Err(fail(format!("expected {want:?}, got {v:?}"))),
        Err(d) if d.code == want => Ok(d),
        Err(d) => Err(fail(format!("expected {want:?}, got {:?} ({})", d.code, d.detail))),
    }
}

/// A file's buyer row through the gate. B2: the plant, hash-mismatch before the signer. B6: check over the file's
/// payment, with the peer's verdict where the row is superseded.
pub fn buyer_row(file: &'static str, name: &str) -> Outcome {
    let f = vectors(file);
    let r = row(&f, name);
    let input = &r["input"];
    let p = pairing(r["pairing"].as_str().unwrap());
    match name {
        "B2" => {
            let served = hex(input["servesHex"].as_str().unwrap());
            eq("served hash", atr_hash(&served).to_hex(), r["servedHash"].as_str().unwrap().to_owned())?;
            let doc = &input["doc"];
            let link = terms::mpp::read(doc).unwrap().link;
            let key = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
            let signer = CountingSigner::new(key, input["account"].as_str().unwrap());
            let mut options = Options::new().clock(FixedClock(now_of(&f)));
            if let Some(i) = input.get("inputs") {
                options = options.inputs(i.as_object().unwrap().clone());
            }
            let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(served)]);
            let got = paused().block_on(terms::transact(doc, p, &signer, &fetch, &options));
            decline_of(got, DeclineCode::HashMismatch)?;
            eq("sign calls", signer.count() as u64, r["expect"]["signCalls"].as_u64().unwrap())
        }
        "B6" => {
            let superseded = matches!(file, "mpp-charge-evm-authorization.json" | "mpp-charge-evm-permit2.json");
            for (case, want) in input["check"].as_array().unwrap().iter().zip(r["expect"].as_array().unwrap()) {
                let got = check(&hex(case["bytesHex"].as_str().unwrap()), &input["presented"], p);
                match want.get("h") {
                    Some(h) if !superseded => {
                        eq("h", got.map(|c| c.h.to_hex()).map_err(|d| d.detail), Ok(h.as_str().unwrap().into()))?
                    }
                    _ => drop(decline_of(got, DeclineCode::SignedNotBound)?),
                }
            }
            Ok(())
        }
        other => Err(fail(format!("unhandled row {other}"))),
    }
}

fn ignored(name: &str, why: &str) -> Trial {
    Trial::test(format!("{name} (not run: {why})"), || Ok(())).with_ignored_flag(true)
}

pub type Run = fn(&str) -> Outcome;

/// One file's trials: each buyer row, each key run, each key listed, any other key a failure.
pub fn trials_of(all: &mut Vec<Trial>, name: &'static str, run: Run, keys_run: &[&str], listed: &[(&str, &str)]) {
    let file = vectors(name);
    for (key, value) in file.as_object().unwrap() {
        let label = format!("{name}::{key}");
        match key.as_str() {
            "about" | "fixed" => {}
            "pattern" => all.push(ignored(&label, "the pattern's description, no buyer value")),
            "buyer" => {
                for r in value["rows"].as_array().unwrap() {
                    let row_name = r["name"].as_str().unwrap().to_owned();
                    all.push(Trial::test(format!("{label}::{row_name}"), move || buyer_row(name, &row_name)));
                }
                if let Some(none) = value.get("noSignedPayment") {
                    all.push(ignored(&format!("{label}::noSignedPayment"), &format!("no B6 row: {none}")));
                }
            }
            k if keys_run.contains(&k) => {
                let k = k.to_owned();
                all.push(Trial::test(label, move || run(&k)));
            }
            k => match listed.iter().find(|(l, _)| *l == k) {
                Some((_, why)) => all.push(ignored(&label, why)),
                None => {
                    let k = k.to_owned();
                    all.push(Trial::test(label, move || Err(fail(format!("key {k} is neither run nor listed")))));
                }
            },
        }
        for (sub, why) in listed.iter().filter(|(l, _)| l.starts_with(&format!("{key}."))) {
            all.push(ignored(&format!("{name}::{sub}"), why));
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut all = Vec::new();
    eip712::trials(&mut all);
    calls::trials(&mut all);
    gateway::trials(&mut all);
    for file in [
        "mpp-charge-evm-authorization.json",
        "mpp-charge-evm-permit2.json",
        "mpp-charge-evm-transaction.json",
        "mpp-charge-evm-hash.json",
        "mpp-charge-usdc-evm.json",
    ] {
        all.push(Trial::test(format!("{file}::quote of B2's challenge"), move || quote_of(file)));
    }
    libtest_mimic::run(&args, all).exit();
}

/// The quote of a file's B2 choice: the request's amount of its currency to its recipient, on the challenge's chain,
/// under its intent, valid before its `expires`.
fn quote_of(file: &'static str) -> Outcome {
    let f = vectors(file);
    let chosen = b2_choice(&f);
    let q = pairing(&chosen.pairing).quote(&chosen).map_err(|r| fail(r.code()))?;
    let raw =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(challenge(&f)["request"].as_str().unwrap()).unwrap();
    let r: Value = serde_json::from_slice(&raw).unwrap();
    eq("amount", q.amount.to_string(), r["amount"].as_str().unwrap().to_owned())?;
    eq("asset", q.asset.as_str(), r["currency"].as_str().unwrap())?;
    eq("payee", q.payee.as_str(), r["recipient"].as_str().unwrap())?;
    eq("network", q.network.as_str(), "eip155:84532")?;
    eq("scheme", q.scheme.as_str(), "charge")?;
    eq("valid before", q.valid_before, Some(1_790_000_060))
}
