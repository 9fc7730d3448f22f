//! `x402-exact-stellar.json`: every buyer-side key run from the file's own data (V1's muxed address, V2's and V3v2's
//! build, preimage, signature and signed envelope, bound on V3, V3v2 and V4, V4build's refusals, the agreed refusals
//! the buyer gives, the B rows), the seller-side keys listed as not run, and `transact` end to end with the local
//! Stellar key.

use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::pairing::Chosen;
use terms::rail::stellar::{Strkey, muxed_id, read_signed_transfer, signing_for};
use terms::{AtrHash, FixedClock, Options, Pairing, StellarKey, TransactOutcome, check, transact};

use crate::support::{Reply, ScriptedFetch, paused, vectors};
use crate::{Outcome, pairing_buyer_row};

const FILE: &str = "x402-exact-stellar.json";

pub(super) fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing("x402/exact/stellar").unwrap()
}

pub(super) fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    if got == want { Ok(()) } else { Err(Failed::from(format!("{what}: got {got:?}, want {want:?}"))) }
}

pub(super) fn h(v: &Value) -> AtrHash {
    AtrHash::parse(v["fixed"]["H"].as_str().unwrap()).unwrap()
}

pub(super) fn b64(text: &Value) -> Vec<u8> {
    base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.as_str().unwrap()).unwrap()
}

/// The B rows' document (its `accepts` V3's `accepted`, the muxed `payTo`).
fn document(v: &Value) -> Value {
    v["buyer"]["rows"][0]["input"]["doc"].clone()
}

/// The build's choice: the document, V3's option, the fixed payer, and a simulated envelope and ledger.
fn choice(v: &Value, simulated: &Value, ledger: &Value) -> Chosen {
    let c = json!({
        "required": document(v),
        "accepted": v["V3"]["accepted"],
        "payer": v["fixed"]["payer"],
        "simulatedXdr": simulated,
        "currentLedger": ledger,
    });
    Chosen {
        pairing: "x402/exact/stellar".into(),
        build_input: c.as_object().unwrap().clone(),
        reference: "r".into(),
        agreement: None,
    }
}

/// The payment the file's rows present: V3's option and extensions around an envelope.
fn presented(accepted: &Value, extensions: &Value, envelope: &Value) -> Value {
    json!({"x402Version": 2, "accepted": accepted, "payload": {"transaction": envelope}, "extensions": extensions})
}

fn bound_code(p: &Value) -> Result<String, String> {
    pairing().bound(p, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn key(v: &Value) -> StellarKey {
    StellarKey::from_seed_hex(v["fixed"]["payerSeed"].as_str().unwrap()).unwrap()
}

/// The preimage the build hands the signer, and the payment its signature (by the payer's key) completes.
fn built(v: &Value, c: &Chosen) -> Result<(Vec<u8>, [u8; 64], Value), Failed> {
    let unsigned = pairing().build(c, b"abc", &h(v)).map_err(|r| r.code())?;
    let request = unsigned.request().map_err(|r| r.code())?.unwrap().to_json();
    eq("kind", request["kind"].as_str(), Some("stellar-auth"))?;
    let preimage = hex::decode(request["preimage"].as_str().unwrap().trim_start_matches("0x")).unwrap();
    let signature = key(v).sign_preimage(&preimage);
    let answer = terms::Answer::new(Value::String(format!("0x{}", hex::encode(signature))));
    let completed = unsigned.complete(&[answer], c).map_err(|r| r.code())?;
    Ok((preimage, signature, completed.payment_value().unwrap()))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

fn v1() -> Outcome {
    let v = file();
    let v1 = &v["V1"];
    eq("muxed id", muxed_id(&h(&v)).to_string(), v1["muxedId"].as_str().unwrap().to_owned())?;
    eq("muxed id hex", format!("{:016x}", muxed_id(&h(&v))), v1["muxedIdHex"].as_str().unwrap().to_owned())?;
    let Some(Strkey::Account(seller)) = Strkey::parse(v["fixed"]["seller"].as_str().unwrap()) else {
        return Err("seller".into());
    };
    let m = Strkey::Muxed { key: seller, id: muxed_id(&h(&v)) }.to_text();
    eq("M", m.as_str(), v1["M"].as_str().unwrap())?;
    eq("M length", m.len() as u64, v1["Mlength"].as_u64().unwrap())?;
    // The `to` ScVal rides in the simulated envelope's operation and entry, and the read gives it back as M.
    let to = b64(&v1["toScValXdr"]);
    let simulated = b64(&v["V2"]["simulatedXdr"]);
    eq("to in the envelope", simulated.windows(to.len()).filter(|w| *w == to.as_slice()).count(), 2)?;
    let (p, _) =
        read_signed_transfer(Some(&v["V3"]["envelope"]), Some("stellar:testnet"), false).map_err(|r| r.code())?;
    eq("to", p.to.as_str(), v1["M"].as_str().unwrap())
}

fn v2() -> Outcome {
    let v = file();
    let v2 = &v["V2"];
    let (preimage, signature, payment) = built(&v, &choice(&v, &v2["simulatedXdr"], &v2["currentLedger"]))?;
    eq("preimage length", preimage.len() as u64, v2["expectPreimageLength"].as_u64().unwrap())?;
    eq("network id prefix", hex::encode(&preimage[4..8]), v2["networkIdPrefix"].as_str().unwrap().to_owned())?;
    eq("preimage sha256", sha256_hex(&preimage), v2["expectPreimageSha256"].as_str().unwrap().to_owned())?;
    let sig = hex::encode(signature);
    eq("signature prefix", &sig[..16], v2["expectSignaturePrefix"].as_str().unwrap())?;
    eq("signature suffix", &sig[sig.len() - 8..], v2["expectSignatureSuffix"].as_str().unwrap())?;
    eq("envelope", &payment["payload"]["transaction"], &v2["expectEnvelope"])?;
    let (p, _) =
        read_signed_transfer(Some(&v2["expectEnvelope"]), Some("stellar:testnet"), false).map_err(|r| r.code())?;
    eq("expiration", u64::from(p.auth.unwrap().expiration), v2["expectExpiration"].as_u64().unwrap())
}

/// A reference's buyer-readable members against the read of its envelope.
fn reference(envelope: &Value, want: &Value) -> Outcome {
    let network = want["network"].as_str();
    let (p, agrees) = read_signed_transfer(Some(envelope), network, false).map_err(|r| r.code())?;
    let auth = p.auth.clone().unwrap();
    eq("agrees", agrees, true)?;
    eq("authDigest", format!("0x{}", hex::encode(auth.preimage_sha256)), want["authDigest"].as_str().unwrap().into())?;
    eq("asset", p.asset.as_str(), want["asset"].as_str().unwrap())?;
    eq("toBase", p.to_base.as_str(), want["toBase"].as_str().unwrap())?;
    eq("toId", p.to_id.map(|i| i.to_string()), want["toId"].as_str().map(str::to_owned))?;
    eq("expiration", u64::from(auth.expiration), want["expiration"].as_u64().unwrap())
}

fn v3() -> Outcome {
    let v = file();
    let v3 = &v["V3"];
    eq("length", b64(&v3["envelope"]).len() as u64, v3["envelopeLength"].as_u64().unwrap())?;
    let p = presented(&v3["accepted"], &v3["extensions"], &v3["envelope"]);
    eq("bound", bound_code(&p), Ok(v3["expectBound"].as_str().unwrap().into()))?;
    reference(&v3["envelope"], &v3["expectReference"])
}

fn v3v2() -> Outcome {
    let v = file();
    let r = &v["V3v2"];
    let (preimage, signature, payment) = built(&v, &choice(&v, &r["simulatedXdr"], &r["currentLedger"]))?;
    eq("preimage length", preimage.len() as u64, r["expectPreimageLength"].as_u64().unwrap())?;
    eq("preimage sha256", sha256_hex(&preimage), r["expectPreimageSha256"].as_str().unwrap().to_owned())?;
    eq("signature", hex::encode(signature), r["expectSignature"].as_str().unwrap().to_owned())?;
    eq("envelope", &payment["payload"]["transaction"], &r["envelope"])?;
    eq("envelope length", b64(&r["envelope"]).len() as u64, r["envelopeLength"].as_u64().unwrap())?;
    let p = presented(&v["V3"]["accepted"], &v["V3"]["extensions"], &r["envelope"]);
    eq("bound", bound_code(&p), Ok(r["expectBound"].as_str().unwrap().into()))?;
    reference(&r["envelope"], &r["expectReference"])
}

fn v4() -> Outcome {
    let v = file();
    let mut ran = 0;
    for row in v["V4"].as_array().unwrap() {
        let Some(envelope) = row.get("envelope") else { continue };
        let p = presented(&row["accepted"], &row["extensions"], envelope);
        eq(row["case"].as_str().unwrap(), bound_code(&p), Err(row["expect"].as_str().unwrap().into()))?;
        ran += 1;
    }
    eq("rows run", ran, v["V4"].as_array().unwrap().len() - 1)
}

fn v4build() -> Outcome {
    let v = file();
    let b = &v["V4build"];
    for row in b["rows"].as_array().unwrap() {
        let got = pairing().build(&choice(&v, &row["simulatedXdr"], &b["currentLedger"]), b"abc", &h(&v)).map(|_| ());
        eq(row["case"].as_str().unwrap(), got.map_err(|r| r.code()), Err(row["expect"].as_str().unwrap().into()))?;
    }
    Ok(())
}

/// The agreed refusals the buyer gives, each from the file's own payment changed in the one way its row names.
fn agreed_refusals() -> Outcome {
    let v = file();
    let v3 = &v["V3"];
    let good = presented(&v3["accepted"], &v3["extensions"], &v3["envelope"]);
    let with = |path: &[&str], value: Value| {
        let mut p = good.clone();
        let mut at = &mut p;
        for k in &path[..path.len() - 1] {
            at = &mut at[*k];
        }
        at[path[path.len() - 1]] = value;
        p
    };
    let mut rows = 0;
    for row in v["agreedRefusals"]["rows"].as_array().unwrap() {
        let want = row["expect"].as_str().unwrap();
        let cases: Vec<Value> = match want {
            // The codec is built in: no Stellar function lacks it.
            "stellar/peer-missing" | "stellar/event-malformed" => continue,
            "stellar/tx-malformed" => {
                // A signature that is not 64 bytes (the base64 faults are V4's rows).
                let s = signing_for(Some(&v["V2"]["simulatedXdr"]), Some("stellar:testnet"), 1000, false)
                    .map_err(|r| r.code())?;
                eq("63-byte signature", s.written(&[7; 63]).map_err(|r| r.code()), Err(want.into()))?;
                eq("65-byte signature", s.written(&[7; 65]).map_err(|r| r.code()), Err(want.into()))?;
                rows += 1;
                continue;
            }
            "stellar/tx-too-large" => vec![with(&["payload", "transaction"], json!("A".repeat(8196)))],
            "stellar/no-address-auth" | "stellar/not-one-transfer" | "stellar/carrier-mismatch" => {
                // V4's and V4build's rows run these; the rail's unit tests make the rest.
                rows += 1;
                continue;
            }
            "stellar/asset-mismatch" | "stellar/amount-mismatch" | "stellar/payer-mismatch" => {
                rows += 1;
                continue;
            }
            "x402/option-malformed" => vec![
                with(&["accepted", "amount"], json!("170141183460469231731687303715884105728")),
                with(&["accepted", "amount"], json!("0")),
                with(&["accepted", "maxTimeoutSeconds"], json!(0)),
                with(&["accepted", "maxTimeoutSeconds"], json!(21_474_836_476_u64)),
            ],
            "x402/option-not-this-pairing" => vec![
                with(&["accepted", "scheme"], json!("upto")),
                with(&["accepted", "extra", "areFeesSponsored"], json!(false)),
                with(
                    &["accepted", "payTo"],
                    json!("MDFJHLAXAUMHA4OWPOB4P7YO72AQR2HMIUYFOXLXE2DZGM633K7HZOTYC27Y6AOP5LJQA"),
                ),
            ],
            "x402/no-legal-context" => vec![with(&["extensions"], json!({}))],
            other => return Err(format!("unhandled agreed refusal {other}").into()),
        };
        for p in cases {
            eq(row["case"].as_str().unwrap(), bound_code(&p), Err(want.into()))?;
        }
        rows += 1;
    }
    eq("rows", rows, v["agreedRefusals"]["rows"].as_array().unwrap().len() - 2)
}

/// `transact` end to end: B2's document, the link serving the ATR, the payer's local Stellar key: the payment is
/// V2's signed envelope, and `check` reads H back from it.
fn transact_with_stellar_key() -> Outcome {
    let v = file();
    let row = &v["buyer"]["rows"][0]["input"];
    let signer = key(&v).on_network("stellar:testnet").unwrap();
    eq("account", terms::Signer::account(&signer), row["account"].as_str().unwrap())?;
    let fetch = ScriptedFetch::new().script(v["fixed"]["link"].as_str().unwrap(), vec![Reply::ok(b"abc".to_vec())]);
    let options = Options::new().clock(FixedClock(1_790_000_000)).inputs(row["inputs"].as_object().unwrap().clone());
    let got = paused().block_on(transact(&row["doc"], pairing(), &signer, &fetch, &options)).map_err(|d| d.detail)?;
    let TransactOutcome::Signed(signed) = got else { return Err(format!("not signed: {got:?}").into()) };
    let payment = signed.signed.as_ref().unwrap().to_value();
    eq("accepted", &payment["accepted"], &row["doc"]["accepts"][0])?;
    eq("envelope", &payment["payload"]["transaction"], &v["V2"]["expectEnvelope"])?;
    let checked = check(b"abc", &payment, pairing()).map_err(|d| d.detail)?;
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
            "about" | "fixed" => {}
            "V1" => all.push(test(v1)),
            "V2" => all.push(test(v2)),
            "V3" => {
                all.push(test(v3));
                all.push(not_run("V3.expectReference.fromLedger", "seller side: the settlement reference"));
            }
            "V3v2" => {
                all.push(test(v3v2));
                all.push(not_run("V3v2.expectStatus", "seller side: settlement status"));
            }
            "V4" => {
                all.push(test(v4));
                all.push(not_run("V4.advertiseOption", "seller side: advertise"));
            }
            "V4build" => all.push(test(v4build)),
            "agreedRefusals" => {
                all.push(test(agreed_refusals));
                all.push(not_run("agreedRefusals.peer-missing/event-malformed", "no peer to miss; seller side"));
            }
            "buyer" => {
                for row in v["buyer"]["rows"].as_array().unwrap().clone() {
                    let name = format!("{label}::{}", row["name"].as_str().unwrap());
                    all.push(Trial::test(name, move || pairing_buyer_row(&row)));
                }
            }
            "V5" | "plant" | "events" => all.push(not_run(key, "seller side: status, recovery and events")),
            other => {
                let other = other.to_owned();
                all.push(Trial::test(label, move || Err(format!("key {other} is neither run nor listed").into())));
            }
        }
    }
    all.push(Trial::test(format!("{FILE}::transact with StellarKey"), transact_with_stellar_key));
    all
}

/// buyer.json's BS rows: each case's inputs through `transact` on the row's document, serving the ATR; the decline
/// and its detail, the signer's calls and the kind of the request it was handed.
pub fn buyer_bs(row: &Value) -> Outcome {
    let input = &row["input"];
    let pairing = terms::pairing(input["pairing"].as_str().unwrap()).map_err(|d| d.detail)?;
    for case in input["cases"].as_array().unwrap() {
        let what = case["case"].as_str().unwrap();
        let signer = crate::support::CountingSigner::new(
            "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
            input["account"].as_str().unwrap(),
        );
        let doc = &input["doc"];
        let served = crate::support::hex(input["servesHex"].as_str().unwrap());
        let link = match doc.pointer("/extensions/legalContext/info/legalContextUrl").and_then(Value::as_str) {
            Some(l) => l.to_owned(),
            None => mpp_link(doc),
        };
        let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(served)]);
        let now = input["now"].as_u64().unwrap_or(1_790_000_000);
        let options =
            Options::new().clock(FixedClock(now)).inputs(case["inputs"].as_object().cloned().unwrap_or_default());
        let got = paused().block_on(transact(doc, pairing, &signer, &fetch, &options));
        let expect = &case["expect"];
        if let Some(decline) = expect.get("decline") {
            let d = got.as_ref().err().ok_or_else(|| format!("{what}: signed, want {decline}"))?;
            eq(what, serde_json::to_value(d.code).unwrap(), decline.clone())?;
            eq(what, d.detail.as_str(), expect["detail"].as_str().unwrap())?;
        }
        eq(&format!("{what}: sign calls"), signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
        if let Some(kind) = expect.get("signRequestKind") {
            eq(&format!("{what}: kind"), signer.calls()[0].kind(), kind.as_str().unwrap())?;
        }
    }
    Ok(())
}

/// The link of an MPP challenge list: its first challenge's opaque `legalContextUrl`.
fn mpp_link(doc: &Value) -> String {
    let opaque = doc[0]["opaque"].as_str().unwrap();
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, opaque).unwrap();
    let o: Map<String, Value> = serde_json::from_slice(&bytes).unwrap();
    o["legalContextUrl"].as_str().unwrap().to_owned()
}
