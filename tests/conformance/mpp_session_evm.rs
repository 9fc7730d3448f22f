//! `mpp-session-evm.json`: the session `mpp/session/evm`, run through the pairing from the file's own data. The
//! buyer rows (B2, B6) run through the gate; ES1 to ES6, ES8 and plant3 run through the pairing's build, bound and
//! channel members (the rail's own run of them is in `src/rail/evm/session/tests.rs`); `pattern` against the
//! registry row. ES7 and ES9 are the seller's settlement read of an opening, listed as not run here.

use alloy_primitives::{B256, U256};
use base64::Engine as _;
use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::pairing::{ChannelKind, ChooseContext, Completion};
use terms::rail::evm::session::{EvmAddress, SessionTerms};
use terms::{
    AtrHash, CountingIds, FixedClock, LocalSigner, Options, Pairing, SigningRequest, TransactOutcome, TypedData,
    atr_hash, check, open_channel, transact, within,
};

use crate::support::{CountingSigner, Reply, ScriptedFetch, hex, paused, vectors};
use crate::{Outcome, eq, expect_decline, ignored};

const FILE: &str = "mpp-session-evm.json";
const ID: &str = "mpp/session/evm";

fn file() -> Value {
    vectors(FILE)
}

fn text(v: &Value) -> String {
    v.as_str().unwrap().to_owned()
}

fn fixed_h(file: &Value, name: &str) -> AtrHash {
    AtrHash::parse(file["fixed"][name].as_str().unwrap()).unwrap()
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

fn buyer_row<'a>(file: &'a Value, name: &str) -> &'a Value {
    file["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
}

fn b64u(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// B2's challenge placed for `h` instead: its id and its opaque carry `h`, its link is `h`'s.
fn doc_for(file: &Value, h: &AtrHash) -> Value {
    let mut c = buyer_row(file, "B2")["input"]["doc"][0].clone();
    c["id"] = json!(terms::mpp::challenge_id(h, 0).unwrap());
    let opaque = json!({
        "legalContext": format!("lcp:sha256:{h}"),
        "legalContextUrl": format!("https://atr.seller.example/{h}"),
    });
    c["opaque"] = json!(b64u(terms::json::canonical(&opaque).unwrap().as_bytes()));
    json!([c])
}

/// B2's inputs with another credential type.
fn inputs_with(file: &Value, funding: &str) -> Map<String, Value> {
    let mut inputs = buyer_row(file, "B2")["input"]["inputs"].as_object().unwrap().clone();
    inputs.insert("credentialType".into(), json!(funding));
    inputs
}

fn key(file: &Value) -> LocalSigner {
    LocalSigner::from_hex(file["fixed"]["payerKey"].as_str().unwrap(), 84_532).unwrap()
}

fn typed(request: &SigningRequest) -> &TypedData {
    match request {
        SigningRequest::Eip712 { typed_data } => typed_data,
        other => panic!("not eip712: {other:?}"),
    }
}

fn digest(request: &SigningRequest) -> B256 {
    typed(request).signing_hash().unwrap()
}

fn affix(value: &str, expected: &Value) -> Outcome {
    let (prefix, suffix) = (text(&expected["prefix"]), text(&expected["suffix"]));
    ensure!(value.starts_with(&prefix) && value.ends_with(&suffix), "{value} is not {prefix}…{suffix}");
    Ok(())
}

/// An opening built through the pairing: its two requests and its credential.
struct Built {
    first: SigningRequest,
    voucher: SigningRequest,
    credential: Value,
}

/// The opening the pairing builds for `doc` with `inputs` and the ATR `atr`: read, choose, build, the first answer
/// (the payer's signature, or for a `hash` opening the file's transaction hash), then the voucher signed by the payer.
fn build(file: &Value, doc: &Value, inputs: &Map<String, Value>, atr: &[u8]) -> Result<Built, String> {
    let p = pairing();
    let read = p.read(doc).map_err(|r| r.code())?;
    let (account, now) =
        (buyer_row(file, "B2")["input"]["account"].as_str().unwrap(), file["fixed"]["now"].as_u64().unwrap());
    let reference = "r".repeat(32);
    let ctx = ChooseContext { account, inputs, now, reference: &reference, doc };
    let chosen = p.choose(&read, &ctx).map_err(|r| r.code())?;
    let h = atr_hash(atr);
    let unsigned = p.build(&chosen, atr, &h).map_err(|r| r.code())?;
    let first = unsigned.request().map_err(|r| r.code())?.ok_or("no request")?;
    let key = key(file);
    let first_answer = match &first {
        SigningRequest::Eip712 { .. } => key.sign_digest(&digest(&first).0).unwrap(),
        _ => text(&file["ES9"]["hash"]),
    };
    let voucher = match unsigned.complete(&[first_answer.clone().into()], &chosen).map_err(|r| r.code())? {
        Completion::Next(next) => next,
        other => return Err(format!("not a next request: {other:?}")),
    };
    let voucher_sig = key.sign_digest(&digest(&voucher).0).unwrap();
    let done = unsigned.complete(&[first_answer.into(), voucher_sig.into()], &chosen).map_err(|r| r.code())?;
    let credential = done.payment_value().ok_or("no payment")?;
    Ok(Built { first, voucher, credential })
}

fn built(file: &Value, funding: &str) -> Built {
    let doc = buyer_row(file, "B2")["input"]["doc"].clone();
    build(file, &doc, &inputs_with(file, funding), b"abc").unwrap()
}

fn code<T: std::fmt::Debug>(got: Result<T, terms::Refusal>) -> Option<String> {
    got.err().map(|r| r.code())
}

/// B6's presented opening.
fn presented(file: &Value) -> Value {
    buyer_row(file, "B6")["input"]["presented"].clone()
}

/// The EIP-712 type string and type hash of a request's typed data, as alloy-dyn-abi encodes them.
fn type_of(request: &SigningRequest) -> (String, String) {
    let dynamic: alloy_dyn_abi::TypedData =
        serde_json::from_value(serde_json::to_value(typed(request)).unwrap()).unwrap();
    (dynamic.encode_type().unwrap(), dynamic.type_hash().unwrap().to_string())
}

fn es(key: &str) -> Outcome {
    let file = file();
    let row = &file[key];
    match key {
        "ES1" => {
            let b = built(&file, "authorization");
            eq("channel id", b.credential["payload"]["channelId"].clone(), row["expectChannelId"].clone())?;
            let h2 = fixed_h(&file, "H2");
            let preimage = file["fixed"]["H2Preimage"].as_str().unwrap().as_bytes().to_vec();
            eq("H2 preimage", atr_hash(&preimage), h2)?;
            let other = build(&file, &doc_for(&file, &h2), &inputs_with(&file, "authorization"), &preimage)?;
            affix(other.credential["payload"]["channelId"].as_str().unwrap(), &row["expectChannelIdH2"])
        }
        "ES2" => {
            let b = built(&file, "hash");
            let SigningRequest::EvmCalls(fields) = &b.first else { return Err("not evm-calls".into()) };
            eq("broadcast", fields["broadcast"].clone(), json!(true))?;
            eq("chain", fields["chainId"].clone(), file["fixed"]["chainId"].clone())?;
            let calls = fields["calls"].as_array().unwrap();
            eq("approve to the token", calls[0]["to"].clone(), file["fixed"]["usdc"].clone())?;
            eq("open to the escrow", calls[1]["to"].clone(), file["fixed"]["escrow"].clone())?;
            let data = hex(&calls[1]["data"].as_str().unwrap()[2..]);
            eq("open length", data.len() as u64, row["expectOpenLength"].as_u64().unwrap())?;
            eq("selector", format!("0x{}", ::hex::encode(&data[..4])), text(&row["expectOpenSelector"]))?;
            let deposit = U256::from_be_slice(&data[4 + 64..4 + 96]);
            eq("deposit", format!("{deposit:#x}"), text(&row["expectDeposit"]))?;
            let h = ::hex::encode(fixed_h(&file, "H").as_bytes());
            let occurrences = ::hex::encode(&data).matches(&h).count();
            eq("H occurrences", occurrences as u64, row["expectHOccurrences"].as_u64().unwrap())
        }
        "ES3" => eq(
            "nonce",
            typed(&built(&file, "authorization").first).message["nonce"].clone(),
            row["expectNonce"].clone(),
        ),
        "ES4" => {
            let b = built(&file, "authorization");
            let (signature, hash) = type_of(&b.first);
            eq("type", signature, text(&row["typeSignature"]))?;
            affix(&hash, &row["expectTypeHash"])?;
            eq("digest", digest(&b.first).to_string(), text(&row["expectDigest"]))?;
            let sig = b.credential["payload"]["signature"].as_str().unwrap().to_owned();
            affix(&sig, &row["expectSignature"])?;
            eq("B6's signature", json!(sig), presented(&file)["payload"]["signature"].clone())
        }
        "ES5" => {
            let b = built(&file, "authorization");
            eq("voucher amount", typed(&b.voucher).message["cumulativeAmount"].clone(), json!("0"))?;
            eq("voucher digest", digest(&b.voucher).to_string(), text(&row["expectVoucherDigest"]))
        }
        "ES6" => {
            let b = built(&file, "permit2");
            let (signature, hash) = type_of(&b.first);
            eq("type", signature, text(&row["typeSignature"]))?;
            affix(&hash, &row["expectTypeHash"])?;
            eq("nonce", typed(&b.first).message["nonce"].clone(), row["expectNonce"].clone())?;
            eq("digest", digest(&b.first).to_string(), text(&row["expectDigest"]))?;
            eq("bound", pairing().bound(&b.credential, None).map(|h| h.to_hex()), Ok(text(&file["fixed"]["H"])))
        }
        "ES8" => es8(&file, row),
        "plant3" => {
            let request: Map<String, Value> = serde_json::from_str(file["fixed"]["request"].as_str().unwrap()).unwrap();
            let details = request["methodDetails"].as_object().unwrap().clone();
            let terms = SessionTerms::offered(&request, &details).unwrap();
            let payer = EvmAddress::of(&file["fixed"]["payer"]).unwrap();
            let nonce = terms.channel(payer, fixed_h(&file, "H2"), EvmAddress::ZERO).authorization_nonce();
            affix(&nonce.to_string(), &row["expectNonceH2"])?;
            let mut p = presented(&file);
            p["payload"]["authorization"]["nonce"] = json!(nonce.to_string());
            eq("bound", code(pairing().bound(&p, None)), Some(text(&row["expect"]["code"])))
        }
        other => Err(format!("unhandled key {other}").into()),
    }
}

fn es8(file: &Value, row: &Value) -> Outcome {
    let p = pairing();
    let channel = p.channel().unwrap();
    let opened = presented(file);
    let h2 = fixed_h(file, "H2");

    let mut salted = opened.clone();
    salted["payload"]["salt"] = json!(h2.to_hex());
    eq("salt H2", code(p.bound(&salted, None)), Some(text(&row["expectSaltH2"]["code"])))?;
    let preimage = file["fixed"]["H2Preimage"].as_str().unwrap().as_bytes().to_vec();
    let other = build(file, &doc_for(file, &h2), &inputs_with(file, "authorization"), &preimage)?;
    let mut renamed = opened.clone();
    renamed["payload"]["channelId"] = other.credential["payload"]["channelId"].clone();
    eq("channel of H2", code(p.bound(&renamed, None)), Some(text(&row["expectChannelH2"]["code"])))?;

    let mut hashed = built(file, "hash").credential;
    eq("hash opening", p.bound(&hashed, None).map(|h| h.to_hex()), Ok(text(&file["fixed"]["H"])))?;
    hashed.as_object_mut().unwrap().remove("source");
    eq("no source", code(p.bound(&hashed, None)), Some(text(&row["expectNoSource"]["code"])))?;

    let kind = |payment: &Value| {
        channel.kind(payment, None).map(|k| match k {
            ChannelKind::Open => "open",
            ChannelKind::Within => "within",
            ChannelKind::Close => "close",
        })
    };
    eq("deposit kind", kind(&opened).map(str::to_owned), Ok(text(&row["expectDepositKind"])))?;
    // A later voucher, through the gate, from B6's hold and B2's challenge.
    let hold = open_channel(b"abc", &opened, p, None).map_err(|d| d.detail)?;
    let signer = CountingSigner::new(file["fixed"]["payerKey"].as_str().unwrap(), row_account(file));
    let doc = buyer_row(file, "B2")["input"]["doc"].clone();
    let voucher = paused()
        .block_on(within(&doc, &hold, p, &signer, None, &Options::new().ids(CountingIds::default())))
        .map_err(|d| d.detail)?
        .signed;
    eq("voucher kind", kind(&voucher).map(str::to_owned), Ok(text(&row["expectVoucherKind"])))?;
    eq("bound within", code(channel.bound_within(&voucher)), Some(text(&row["expectBoundWithin"]["code"])))?;

    // The opening's challenge naming a channel to resume opens none.
    let mut named = opened;
    let mut request: Value = serde_json::from_str(file["fixed"]["request"].as_str().unwrap()).unwrap();
    request["methodDetails"]["channelId"] = file["ES1"]["expectChannelId"].clone();
    named["challenge"]["request"] = json!(b64u(terms::json::canonical(&request).unwrap().as_bytes()));
    eq("channel named", code(p.bound(&named, None)), Some(text(&row["expectChannelNamed"]["code"])))
}

fn row_account(file: &Value) -> &str {
    buyer_row(file, "B2")["input"]["account"].as_str().unwrap()
}

fn buyer(name: &str) -> Outcome {
    let file = file();
    let row = buyer_row(&file, name);
    let input = &row["input"];
    let expect = &row["expect"];
    let p = pairing();
    match name {
        "B2" => {
            let served = hex(input["servesHex"].as_str().unwrap());
            eq("served hash", atr_hash(&served).to_hex(), text(&row["servedHash"]))?;
            eq(
                "advertised",
                p.read(&input["doc"]).map(|r| r.h.to_hex()).map_err(|r| r.code()),
                Ok(text(&row["advertised"])),
            )?;
            let signer = CountingSigner::new(file["fixed"]["payerKey"].as_str().unwrap(), row_account(&file));
            let (got, fetch) = transact_serving(&input["doc"], served, &signer, input);
            expect_decline(&got, &expect["decline"])?;
            eq("fetches", fetch.asked().len(), 1)?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())
        }
        "B6" => {
            for (case, want) in input["check"].as_array().unwrap().iter().zip(expect.as_array().unwrap()) {
                let got = check(&hex(case["bytesHex"].as_str().unwrap()), &input["presented"], p);
                match want.get("h") {
                    Some(h) => eq("h", got.map(|c| c.h.to_hex()).map_err(|d| d.detail), Ok(text(h)))?,
                    None => drop(expect_decline(&got, &want["decline"])?),
                }
            }
            // The payment the row holds is the one the gate builds from B2's document and inputs and the payer's key:
            // two signer calls, the authorization, then the voucher.
            let b2 = &buyer_row(&file, "B2")["input"];
            let abc = hex(input["check"][0]["bytesHex"].as_str().unwrap());
            let signer = CountingSigner::new(file["fixed"]["payerKey"].as_str().unwrap(), row_account(&file));
            let (got, _) = transact_serving(&b2["doc"], abc, &signer, b2);
            let signed = match got.map_err(|d| d.detail)? {
                TransactOutcome::Signed(t) => t.signed.map(|p| p.to_value()),
                other => return Err(format!("{other:?}").into()),
            };
            eq("transact", signed.as_ref(), Some(&input["presented"]))?;
            let written = signed.as_ref().map(|s| serde_json::to_string(s).unwrap());
            eq("byte for byte", written, Some(serde_json::to_string(&input["presented"]).unwrap()))?;
            eq("sign calls", signer.count(), 2)?;
            let primary: Vec<String> = signer.calls().iter().map(|r| typed(r).primary_type.clone()).collect();
            eq("requests", primary, vec!["ReceiveWithAuthorization".to_owned(), "Voucher".to_owned()])
        }
        other => Err(format!("unhandled buyer row {other}").into()),
    }
}

/// transact over a B2 input's document, its inputs and time, the link serving `served`.
fn transact_serving(
    doc: &Value,
    served: Vec<u8>,
    signer: &CountingSigner,
    input: &Value,
) -> (Result<TransactOutcome, terms::Declined>, ScriptedFetch) {
    let link = pairing().read(doc).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(served)]);
    let inputs = input["inputs"].as_object().cloned().unwrap_or_default();
    let options = Options::new().clock(FixedClock(input["now"].as_u64().unwrap())).inputs(inputs);
    let got = paused().block_on(transact(doc, pairing(), signer, &fetch, &options));
    (got, fetch)
}

fn pattern() -> Outcome {
    let file = file();
    let row = &file["pattern"];
    let entry = terms::entry(ID).unwrap();
    eq("public proof", entry.public_proof, row["publicProof"].as_bool().unwrap())?;
    eq("pairing's public proof", pairing().public_proof(), row["publicProof"].as_bool().unwrap())?;
    eq("a channel", (entry.channel, pairing().channel().is_some()), (true, true))?;
    // The buyer signs: the opening's first request goes to the signer.
    eq("buyer signs", row["buyerSigns"].as_bool(), Some(true))?;
    eq("signed requests", built(&file, "authorization").credential["payload"]["voucherSignature"].is_string(), true)
}

/// Every key and row of the file: run, or listed with the reason it is not.
pub fn trials() -> Vec<Trial> {
    let file = file();
    let mut trials = Vec::new();
    for key in file.as_object().unwrap().keys() {
        let label = format!("{FILE}::{key}");
        match key.as_str() {
            "about" | "fixed" => {}
            "ES1" | "ES2" | "ES3" | "ES4" | "ES5" | "ES6" | "ES8" | "plant3" => {
                let key = key.clone();
                trials.push(Trial::test(label, move || es(&key)));
            }
            "ES7" => {
                trials.push(ignored(&label, "seller side: the settlement read's transfer digest (run at the rail)"))
            }
            "ES9" => trials.push(ignored(&label, "seller side: the hash opening's settlement read (run at the rail)")),
            "pattern" => trials.push(Trial::test(label, pattern)),
            "buyer" => {
                for r in file[key]["rows"].as_array().unwrap() {
                    let name = r["name"].as_str().unwrap().to_owned();
                    trials.push(Trial::test(format!("{label}::{name} ({ID})"), move || buyer(&name)));
                }
            }
            other => {
                let other = other.to_owned();
                trials.push(Trial::test(label, move || Err(format!("key {other} is neither run nor listed").into())));
            }
        }
    }
    trials
}
