//! `mpp-charge-stellar.json`: every buyer-side key run from the file's own data (the challenge id and muxed
//! recipient, bound on V3 and the plant, the refusals and agreed refusals the buyer gives, the B rows), the
//! seller-side keys listed as not run, and `transact` end to end with the local Stellar key, whose credential carries
//! `x402-exact-stellar.json`'s V3 envelope.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::rail::stellar::{Strkey, muxed_id};
use terms::{AtrHash, FixedClock, Options, Pairing, StellarKey, TransactOutcome, check, transact};

use super::x402_stellar::{eq, h};
use crate::support::{Reply, ScriptedFetch, paused, vectors};
use crate::{Outcome, pairing_buyer_row};

const FILE: &str = "mpp-charge-stellar.json";

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing("mpp/charge/stellar").unwrap()
}

fn credential(challenge: &Value, payload: Value) -> Value {
    json!({"challenge": challenge, "payload": payload})
}

fn bound_code(p: &Value, landed: Option<&Value>) -> Result<String, String> {
    pairing().bound(p, landed).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn b64u_json(text: &str) -> Value {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, text).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn b64u(value: &Value) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, serde_json::to_vec(value).unwrap())
}

/// The fixed values the buyer reads: the challenge id of H at position 0, the muxed recipient the placed challenge
/// carries (the seller's account and H's first 8 bytes), which the read offers to the pairing.
fn fixed() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    eq("id", terms::mpp::challenge_id(&h(&v), 0).unwrap(), f["MV1"].as_str().unwrap().to_owned())?;
    let placed = &v["place"]["expect"];
    let request = b64u_json(placed["request"].as_str().unwrap());
    eq("recipient", &request["recipient"], &f["muxed"])?;
    let Some(Strkey::Muxed { id, .. }) = Strkey::parse(f["muxed"].as_str().unwrap()) else { return Err("M".into()) };
    eq("muxed id", id, muxed_id(&h(&v)))?;
    let base = Strkey::parse(f["request"]["recipient"].as_str().unwrap());
    eq("base", Strkey::parse(f["muxed"].as_str().unwrap()).and_then(|m| m.base()), base)?;
    let list = json!([placed]);
    let read = pairing().read(&list).map_err(|r| r.code())?;
    eq("H read", read.h.to_hex(), f["H"].as_str().unwrap().to_owned())
}

fn v3() -> Outcome {
    let v = file();
    let c = credential(&v["place"]["expect"], json!({"type": "transaction", "transaction": v["V3"]["envelope"]}));
    eq("bound", bound_code(&c, None), Ok(v["V3"]["expectBound"].as_str().unwrap().into()))?;
    // The hash credential reads the landed envelope beside it (feePayer false: true forbids push mode).
    let mut challenge = v["place"]["expect"].clone();
    let mut request = b64u_json(challenge["request"].as_str().unwrap());
    request["methodDetails"]["feePayer"] = json!(false);
    challenge["request"] = json!(b64u(&request));
    let hash = json!({"type": "hash", "hash": "a1b2c3d4e5f6789012345678901234567890123456789012345678901234abcd"});
    let landed = json!({"transaction": v["V3"]["envelope"]});
    eq(
        "hash, landed",
        bound_code(&credential(&challenge, hash.clone()), Some(&landed)),
        Ok(v["V3"]["expectBound"].as_str().unwrap().into()),
    )?;
    eq(
        "hash under feePayer",
        bound_code(&credential(&v["place"]["expect"], hash), Some(&landed)),
        Err("mpp/credential-type".into()),
    )
}

fn plant() -> Outcome {
    let v = file();
    let c = credential(&v["place"]["expect"], json!({"type": "transaction", "transaction": v["plant"]["envelope"]}));
    eq("plant", bound_code(&c, None), Err(v["plant"]["expect"].as_str().unwrap().into()))
}

fn refusals() -> Outcome {
    let v = file();
    let placed = &v["place"]["expect"];
    for row in v["refusals"].as_array().unwrap() {
        let want = row["expect"].as_str().unwrap();
        let c = match row.get("payload") {
            Some(payload) => credential(placed, payload.clone()),
            None => {
                // The echoed challenge names H2 in its id and opaque; the recipient still carries H's 8 bytes.
                let h = v["fixed"]["H"].as_str().unwrap().trim_start_matches("0x");
                let h2 = v["fixed"]["H2"].as_str().unwrap().trim_start_matches("0x");
                let mut challenge = placed.clone();
                challenge["id"] = json!(
                    terms::mpp::challenge_id(&AtrHash::parse(v["fixed"]["H2"].as_str().unwrap()).unwrap(), 0).unwrap()
                );
                let opaque = b64u_json(placed["opaque"].as_str().unwrap()).to_string().replace(h, h2);
                challenge["opaque"] = json!(b64u(&serde_json::from_str(&opaque).unwrap()));
                credential(&challenge, json!({"type": "transaction", "transaction": v["V3"]["envelope"]}))
            }
        };
        // The reference (integraledger-terms 0.4.0) refuses a hash credential under the placed challenge's
        // `feePayer: true` before it asks for the landed envelope: `mpp/credential-type`, not the row's read-first,
        // and the peer decides. Under `feePayer: false` the row's own refusal holds.
        if row.get("payload").is_some_and(|p| p["type"] == "hash") {
            eq("hash under feePayer true (the peer's code)", bound_code(&c, None), Err("mpp/credential-type".into()))?;
            let mut challenge = placed.clone();
            let mut request = b64u_json(placed["request"].as_str().unwrap());
            request["methodDetails"]["feePayer"] = json!(false);
            challenge["request"] = json!(b64u(&request));
            let c = credential(&challenge, row["payload"].clone());
            eq(row["case"].as_str().unwrap(), bound_code(&c, None), Err(want.into()))?;
            continue;
        }
        eq(row["case"].as_str().unwrap(), bound_code(&c, None), Err(want.into()))?;
    }
    Ok(())
}

/// The quote says the chosen challenge (the request's amount, currency and muxed recipient, on its network, valid
/// before its `expires`), and malformed choices are refused by the quote as by the build.
fn quote() -> Outcome {
    let v = file();
    let row = &v["buyer"]["rows"][0]["input"];
    let case = super::quote::Case {
        label: "mpp-charge-stellar.json B2".into(),
        pairing: pairing(),
        doc: row["doc"].clone(),
        account: row["account"].as_str().unwrap().to_owned(),
        now: row["now"].as_u64().unwrap(),
        inputs: row["inputs"].as_object().unwrap().clone(),
        atr: b"abc".to_vec(),
    };
    let chosen = case.chosen()?;
    let q = pairing().quote(&chosen).map_err(|r| r.code())?;
    let request = b64u_json(row["doc"][0]["request"].as_str().unwrap());
    eq("amount", q.amount.to_string(), request["amount"].as_str().unwrap().to_owned())?;
    eq("asset", q.asset.as_str(), request["currency"].as_str().unwrap())?;
    eq("payee", q.payee.as_str(), request["recipient"].as_str().unwrap())?;
    eq("network", q.network.as_str(), "stellar:testnet")?;
    eq("scheme", q.scheme.as_str(), "charge")?;
    eq("valid before", q.valid_before, Some(1_790_000_060))?;
    super::quote_malformed::malformed_choices_are_refused_alike(&case)
}

fn agreed_refusals() -> Outcome {
    let v = file();
    let placed = &v["place"]["expect"];
    let tx = json!({"type": "transaction", "transaction": v["V3"]["envelope"]});
    let with_request = |f: &dyn Fn(&mut Value)| {
        let mut challenge = placed.clone();
        let mut request = b64u_json(placed["request"].as_str().unwrap());
        f(&mut request);
        challenge["request"] = json!(b64u(&request));
        credential(&challenge, tx.clone())
    };
    let mut ran = 0;
    for row in v["agreedRefusals"]["rows"].as_array().unwrap() {
        let want = row["expect"].as_str().unwrap();
        let cases: Vec<Value> = match (want, row["case"].as_str().unwrap()) {
            ("stellar/option-malformed", c) if c.starts_with("pairingsOf") => vec![
                with_request(&|r| r["methodDetails"]["network"] = json!("stellar:futurenet")),
                with_request(&|r| r["currency"] = json!("GDFJHLAXAUMHA4OWPOB4P7YO72AQR2HMIUYFOXLXE2DZGM633K7HZDQP")),
                with_request(&|r| r["recipient"] = r["currency"].clone()),
                with_request(&|r| r["amount"] = json!("1e7")),
                with_request(&|r| r["amount"] = json!("170141183460469231731687303715884105728")),
            ],
            // A recipient whose checksum does not hold (its last character changed).
            ("stellar/option-malformed", _) => vec![with_request(&|r| {
                let m = r["recipient"].as_str().unwrap();
                r["recipient"] = json!(format!("{}A", &m[..m.len() - 1]));
            })],
            ("mpp/credential-type", _) => {
                vec![credential(placed, json!({"type": "signature", "transaction": v["V3"]["envelope"]}))]
            }
            // The seller's reader (fetchPresented): not the buyer's.
            _ => continue,
        };
        for c in cases {
            eq(row["case"].as_str().unwrap(), bound_code(&c, None), Err(want.into()))?;
        }
        ran += 1;
    }
    eq("rows run", ran, 3)
}

/// `transact` end to end: B2's challenge list, the link serving the ATR, the payer's local Stellar key: the
/// credential carries V3's envelope (the all-zeros source, the entry expiring at ledger 988 + 60 s / 5).
fn transact_with_stellar_key() -> Outcome {
    let v = file();
    let x = vectors("x402-exact-stellar.json");
    let row = &v["buyer"]["rows"][0]["input"];
    let key = StellarKey::from_seed_hex(x["fixed"]["payerSeed"].as_str().unwrap()).unwrap();
    let signer = key.on_network("stellar:testnet").unwrap();
    let fetch = ScriptedFetch::new().script(v["fixed"]["link"].as_str().unwrap(), vec![Reply::ok(b"abc".to_vec())]);
    let options = Options::new()
        .clock(FixedClock(row["now"].as_u64().unwrap()))
        .inputs(row["inputs"].as_object().unwrap().clone());
    let got = paused().block_on(transact(&row["doc"], pairing(), &signer, &fetch, &options)).map_err(|d| d.detail)?;
    let TransactOutcome::Signed(signed) = got else { return Err(format!("not signed: {got:?}").into()) };
    let credential = signed.signed.as_ref().unwrap().to_value();
    eq("challenge", &credential["challenge"], &row["doc"][0])?;
    eq("envelope", &credential["payload"]["transaction"], &v["V3"]["envelope"])?;
    let checked = check(b"abc", &credential, pairing()).map_err(|d| d.detail)?;
    eq("H", checked.h.to_hex(), v["fixed"]["H"].as_str().unwrap().into())
}

fn not_run(label: &str, why: &str) -> Trial {
    Trial::test(format!("{FILE}::{label} (not run: {why})"), || Ok(())).with_ignored_flag(true)
}

pub fn trials() -> Vec<Trial> {
    let v = file();
    let mut all = Vec::new();
    for key in v.as_object().unwrap().keys() {
        let label = format!("{FILE}::{key}");
        let test = |f: fn() -> Outcome| Trial::test(label.clone(), f);
        match key.as_str() {
            "about" => {}
            "fixed" => {
                all.push(test(fixed));
                all.push(not_run("fixed.MV3opaque", "seller side: the placed opaque"));
            }
            "V3" => all.push(test(v3)),
            "plant" => all.push(test(plant)),
            "refusals" => all.push(test(refusals)),
            "agreedRefusals" => {
                all.push(test(agreed_refusals));
                all.push(not_run("agreedRefusals.fetchPresented", "seller side: the reader of a landed transaction"));
            }
            "buyer" => {
                for row in v["buyer"]["rows"].as_array().unwrap().clone() {
                    let name = format!("{label}::{}", row["name"].as_str().unwrap());
                    all.push(Trial::test(name, move || pairing_buyer_row(&row)));
                }
            }
            "challenge" | "place" | "issuedDigest" | "occupied" => {
                all.push(not_run(key, "seller side: the issued challenge, its placement and digest"));
            }
            other => {
                let other = other.to_owned();
                all.push(Trial::test(label, move || Err(format!("key {other} is neither run nor listed").into())));
            }
        }
    }
    all.push(Trial::test(format!("{FILE}::transact with StellarKey"), transact_with_stellar_key));
    all.push(Trial::test(format!("{FILE}::quote"), quote));
    all
}
