//! `x402-exact-solana.json`: every buyer-side key run from the file's own data (the build's message, the default
//! compute budget, bound on V2, V3 and the carrier spelling, the agreed refusals the buyer gives, the B rows), the
//! seller-side keys listed as not run, and `transact` end to end with the local ed25519 signer.

use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::pairing::Chosen;
use terms::rail::solana::{Key, Transaction, decode, signed_wire};
use terms::{AtrHash, FixedClock, Options, Pairing, SolanaKey, TransactOutcome, check, transact};

use crate::support::{Reply, ScriptedFetch, hex, paused, vectors};
use crate::{Outcome, b64_encode, pairing_buyer_row};

const FILE: &str = "x402-exact-solana.json";

pub(super) fn file() -> Value {
    vectors(FILE)
}

pub(super) fn pairing() -> &'static dyn Pairing {
    terms::pairing("x402/exact/solana").unwrap()
}

fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    if got == want { Ok(()) } else { Err(Failed::from(format!("{what}: got {got:?}, want {want:?}"))) }
}

pub(super) fn h(v: &Value) -> AtrHash {
    AtrHash::parse(v["fixed"]["H"].as_str().unwrap()).unwrap()
}

fn b64(text: &Value) -> Vec<u8> {
    base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.as_str().unwrap()).unwrap()
}

/// The option the seller advertises: the fixed option with `extra.memo` = L, as V2's `accepted` holds it.
pub(super) fn option(v: &Value) -> Value {
    let mut o = v["fixed"]["option"].clone();
    o["extra"]["memo"] = v["fixed"]["L"].clone();
    o
}

/// The document of the B rows, with `accepts` holding `option`.
pub(super) fn document(v: &Value, option: &Value) -> Value {
    let mut doc = v["buyer"]["rows"][0]["input"]["doc"].clone();
    doc["accepts"] = json!([option]);
    doc
}

/// The build's choice from the fixed values, with the compute budget when `budget`.
pub(super) fn choice(v: &Value, budget: bool) -> Map<String, Value> {
    let f = &v["fixed"];
    let o = option(v);
    let mut c = json!({
        "required": document(v, &o),
        "accepted": o,
        "payer": f["payer"],
        "decimals": f["decimals"],
        "tokenProgram": f["tokenProgram"],
        "recentBlockhash": f["blockhash"],
    });
    if budget {
        c["computeUnitLimit"] = f["computeUnitLimit"].clone();
        c["computeUnitPrice"] = f["computeUnitPrice"].clone();
    }
    c.as_object().unwrap().clone()
}

pub(super) fn chosen(build_input: Map<String, Value>) -> Chosen {
    Chosen { pairing: "x402/exact/solana".into(), build_input, reference: "ref-1".into(), agreement: None }
}

/// The message the pairing's build asks the payer to sign, as a transaction with empty signature slots.
pub(super) fn built(v: &Value, c: &Chosen) -> Result<Transaction, String> {
    let unsigned = pairing().build(c, b"abc", &h(v)).map_err(|r| r.code())?;
    let request = unsigned.request().map_err(|r| r.code())?.unwrap().to_json();
    eq("kind", request["kind"].as_str(), Some("solana-message")).map_err(|e| format!("{e:?}"))?;
    let message = hex(request["message"].as_str().unwrap().trim_start_matches("0x"));
    let payer = Key::parse(v["fixed"]["payer"].as_str().unwrap()).unwrap();
    decode(&signed_wire(&message, &payer, &[0; 64]).map_err(|r| r.code())?).map_err(|r| r.code())
}

/// The instructions as the file writes them: program, accounts with their roles, data as hex.
pub(super) fn decompile(tx: &Transaction) -> Vec<Value> {
    let n = tx.keys.len();
    let required = usize::from(tx.required_signatures);
    let writable = |i: usize| {
        if i < required {
            i < required - usize::from(tx.readonly_signed)
        } else {
            i < n - usize::from(tx.readonly_unsigned)
        }
    };
    let account = |i: &u8| {
        let i = usize::from(*i);
        json!({"address": tx.keys[i].to_base58(), "signer": i < required, "writable": writable(i)})
    };
    let ix = |ix: &terms::rail::solana::CompiledInstruction| {
        json!({
            "program": tx.program_of(ix).unwrap().to_base58(),
            "accounts": ix.accounts.iter().map(account).collect::<Vec<_>>(),
            "data": hex::encode(&ix.data),
        })
    };
    tx.instructions.iter().map(ix).collect()
}

fn v1() -> Outcome {
    let v = file();
    let v1 = &v["V1"];
    let tx = built(&v, &chosen(choice(&v, true)))?;
    eq("instructions", decompile(&tx), v1["instructions"].as_array().unwrap().clone())?;
    eq("length", tx.message.len() as u64, v1["messageLength"].as_u64().unwrap())?;
    eq("first byte", u64::from(tx.message[0]), v1["messageFirstByte"].as_u64().unwrap())?;
    eq("fee payer", tx.keys[0].to_base58(), v1["feePayer"].as_str().unwrap().into())?;
    eq("blockhash", tx.blockhash.to_base58(), v1["blockhash"].as_str().unwrap().into())?;
    eq("memo bytes", tx.instructions[3].data.len() as u64, v1["Lbytes"].as_u64().unwrap())?;
    // V1's messageSha256 and signature ends are of solders' account order (V2's wire); the reference builds
    // @solana/kit's, as this does (tests/solana_rail.rs shows the same keys in the two orders): the reference wins.
    let v2 = decode(&b64(&v["V2"]["wireBase64"])).unwrap();
    eq("the same message but the order", decompile(&v2), decompile(&tx))
}

fn default_compute_budget() -> Outcome {
    let v = file();
    let tx = built(&v, &chosen(choice(&v, false)))?;
    let want = v["defaultComputeBudget"]["instructions"].as_array().unwrap().clone();
    eq("compute budget", decompile(&tx)[..2].to_vec(), want)
}

pub(super) fn presented(accepted: &Value, wire: &Value) -> Value {
    json!({"x402Version": 2, "accepted": accepted, "payload": {"transaction": wire}})
}

fn bound_code(p: &Value) -> Result<String, String> {
    pairing().bound(p, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn v2() -> Outcome {
    let v = file();
    let v2 = &v["V2"];
    eq("wire length", b64(&v2["wireBase64"]).len() as u64, v2["wireLength"].as_u64().unwrap())?;
    let p = presented(&v2["accepted"], &v2["wireBase64"]);
    eq("bound", bound_code(&p), Ok(v2["expectBound"].as_str().unwrap().into()))
}

fn v3() -> Outcome {
    let v = file();
    let mut run = 0;
    for row in v["V3"].as_array().unwrap().iter().filter(|r| r.get("wireBase64").is_some()) {
        let p = presented(&row["accepted"], &row["wireBase64"]);
        eq(row["case"].as_str().unwrap(), bound_code(&p), Err(row["expect"].as_str().unwrap().into()))?;
        run += 1;
    }
    eq("rows run", run, 3)
}

fn carrier_spelling() -> Outcome {
    let v = file();
    let b = &v["carrierSpelling"]["bound"];
    eq("bound", bound_code(&presented(&b["accepted"], &b["wireBase64"])), Err(b["expect"].as_str().unwrap().into()))
}

/// The agreed refusals a buyer's build or bound gives, each made from the file's own values; the reader's
/// (recover's) are the seller's.
fn agreed_refusals() -> Outcome {
    let v = file();
    let rows = v["agreedRefusals"]["rows"].as_array().unwrap();
    let v2 = &v["V2"];
    let mut run = 0;
    for row in rows {
        let want = row["expect"].as_str().unwrap();
        let got: Vec<Result<String, String>> = match want {
            "svm/memo-count" => vec![bound_code(&presented(&v["V3"][1]["accepted"], &v["V3"][1]["wireBase64"]))],
            "svm/input-malformed" => ["tokenProgram", "payer", "recentBlockhash", "decimals", "computeUnitLimit"]
                .iter()
                .map(|k| {
                    let mut c = choice(&v, true);
                    c.insert(
                        (*k).into(),
                        match *k {
                            "decimals" => json!(256),
                            "tokenProgram" => v["fixed"]["mint"].clone(),
                            _ => json!("0OIl"),
                        },
                    );
                    built(&v, &chosen(c)).map(|_| String::new())
                })
                .collect(),
            "x402/option-malformed" => {
                let mut c = choice(&v, true);
                let mut o = option(&v);
                o["amount"] = json!("18446744073709551616");
                c.insert("required".into(), document(&v, &o));
                c.insert("accepted".into(), o);
                vec![built(&v, &chosen(c)).map(|_| String::new())]
            }
            "svm/tx-malformed" => ["not base64", "", "AAAA"]
                .iter()
                .map(|w| bound_code(&presented(&v2["accepted"], &json!(w))))
                .chain([{
                    let mut wire = b64(&v2["wireBase64"]);
                    wire.push(0);
                    bound_code(&presented(&v2["accepted"], &json!(b64_encode(&wire))))
                }])
                .collect(),
            "svm/tx-too-large" => vec![bound_code(&presented(&v2["accepted"], &json!(b64_encode(&[0; 1233]))))],
            "x402/option-not-this-pairing" => {
                let mut accepted = v2["accepted"].clone();
                accepted["scheme"] = json!("upto");
                vec![bound_code(&presented(&accepted, &v2["wireBase64"]))]
            }
            _ => continue,
        };
        run += 1;
        if !got.iter().all(|g| *g == Err(want.to_owned())) {
            return Err(format!("{}: got {got:?}, want {want}", row["case"]).into());
        }
    }
    eq("rows run", run, 6)
}

/// `transact` end to end: the B rows' document, the link serving the ATR, the payer's local ed25519 key.
fn transact_with_solana_key() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    let row = &v["buyer"]["rows"][0]["input"];
    let doc = &row["doc"];
    let key = SolanaKey::from_seed_hex(f["payerSeed"].as_str().unwrap()).unwrap();
    let signer = key.on_network(f["option"]["network"].as_str().unwrap()).unwrap();
    eq("account", terms::Signer::account(&signer), row["account"].as_str().unwrap())?;
    let fetch = ScriptedFetch::new().script(f["link"].as_str().unwrap(), vec![Reply::ok(b"abc".to_vec())]);
    let options = Options::new().clock(FixedClock(1_700_000_000)).inputs(row["inputs"].as_object().unwrap().clone());
    let got = paused().block_on(transact(doc, pairing(), &signer, &fetch, &options)).map_err(|d| d.detail)?;
    let TransactOutcome::Signed(signed) = got else { return Err(format!("not signed: {got:?}").into()) };
    let payment = signed.signed.as_ref().unwrap().to_value();
    eq("accepted", &payment["accepted"], &doc["accepts"][0])?;
    let tx = decode(&b64(&payment["payload"]["transaction"])).unwrap();
    eq("fee payer's slot", tx.signatures[0], [0; 64])?;
    eq("payer's signature", tx.signatures[1], key.sign_bytes(&tx.message))?;
    let checked = check(b"abc", &payment, pairing()).map_err(|d| d.detail)?;
    eq("H", checked.h.to_hex(), f["H"].as_str().unwrap().into())?;
    // The default compute budget and the buyer's blockhash, under the option's fee payer.
    eq("blockhash", tx.blockhash.to_base58(), f["blockhash"].as_str().unwrap().into())?;
    eq("fee payer", tx.keys[0].to_base58(), f["feePayer"].as_str().unwrap().into())?;
    eq("budget", decompile(&tx)[..2].to_vec(), v["defaultComputeBudget"]["instructions"].as_array().unwrap().clone())
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
            "about" | "fixed" => {}
            "V1" => all.push(test(v1)),
            "defaultComputeBudget" => all.push(test(default_compute_budget)),
            "V2" => {
                all.push(test(v2));
                all.push(not_run("V2.expectReference", "seller side: the settlement reference"));
            }
            "V3" => {
                all.push(test(v3));
                all.push(not_run("V3.advertise", "seller side: advertise"));
            }
            "carrierSpelling" => {
                all.push(test(carrier_spelling));
                all.push(not_run("carrierSpelling.recover/locate", "seller side: recovery"));
            }
            "agreedRefusals" => all.push(test(agreed_refusals)),
            "buyer" => {
                for row in v["buyer"]["rows"].as_array().unwrap().clone() {
                    let name = format!("{label}::{}", row["name"].as_str().unwrap());
                    all.push(Trial::test(name, move || pairing_buyer_row(&row)));
                }
            }
            "V4" | "V5" | "plant" | "durableNonce" => all.push(not_run(key, "seller side: status and recovery")),
            other => {
                let other = other.to_owned();
                all.push(Trial::test(label, move || Err(format!("key {other} is neither run nor listed").into())));
            }
        }
    }
    all.push(Trial::test(format!("{FILE}::transact with SolanaKey"), transact_with_solana_key));
    all.extend(super::x402_solana_bad::trials());
    all
}
