//! `x402-batch-settlement.json`: the x402 batch-settlement pairings. The EVM rows (EB*) and Cloudflare's (EC1) run
//! from the rows' own data, the Solana rows (ES*) in `batch_settlement_solana.rs`; the seller-side keys are listed
//! with the reason they do not run.

use alloy_sol_types::SolStruct;
use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::LocalSigner;
use terms::pairing::{Batch, ChannelKind, ChannelRef, Chosen, Refund, Unsigned};
use terms::x402::channel::WithinOffer;
use terms::x402::cloudflare;
use terms::x402::evm::batch_settlement as evm;
use terms::x402_pairings;
use terms::{AtrHash, FixedClock, Options, Pairing, SigningRequest, TypedData, atr_hash, check, finish};

use crate::support::{CountingSigner, Reply, hex, vectors};
use crate::{Outcome, eq, expect_decline, ignored, transact_serving};

const FILE: &str = "x402-batch-settlement.json";

fn file() -> Value {
    vectors(FILE)
}

fn fixed_h(file: &Value, name: &str) -> AtrHash {
    AtrHash::parse(file["fixed"][name].as_str().unwrap()).unwrap()
}

fn text(v: &Value) -> String {
    v.as_str().unwrap().to_owned()
}

/// The eip155 buyer rows' document with `accepts` holding just this option.
fn doc_with(file: &Value, option: &Value) -> Value {
    let mut doc = buyer_row(file, "B2", evm::ID)["input"]["doc"].clone();
    doc["accepts"] = json!([option]);
    doc
}

/// The build input the EVM rows sign: the fixed payer, payer authorizer, deposit, auth salt and time.
fn choice(file: &Value, option: &Value) -> Map<String, Value> {
    let e = &file["fixed"]["evm"];
    json!({
        "required": doc_with(file, option),
        "accepted": option,
        "from": e["payer"],
        "now": e["now"],
        "payerAuthorizer": e["payerAuthorizer"],
        "deposit": e["deposit"],
        "authSalt": e["authSalt"],
    })
    .as_object()
    .unwrap()
    .clone()
}

fn opening(file: &Value, option: &Value) -> evm::Opening {
    evm::build(&choice(file, option), &fixed_h(file, "H")).unwrap()
}

fn typed(request: &SigningRequest) -> &TypedData {
    match request {
        SigningRequest::Eip712 { typed_data } => typed_data,
        other => panic!("not eip712: {other:?}"),
    }
}

fn digest_of(request: &SigningRequest) -> String {
    typed(request).signing_hash().unwrap().to_string()
}

fn signs(key: &Value, request: &SigningRequest) -> String {
    let digest = typed(request).signing_hash().unwrap();
    LocalSigner::from_hex(key.as_str().unwrap(), 1).unwrap().sign_digest(&digest.0).unwrap()
}

fn recovers(signature: &Value, request: &SigningRequest) -> String {
    let raw = hex(&signature.as_str().unwrap()[2..]);
    let sig = alloy_primitives::Signature::from_raw(&raw).unwrap();
    sig.recover_address_from_prehash(&typed(request).signing_hash().unwrap()).unwrap().to_checksum(None)
}

fn buyer_row<'a>(file: &'a Value, name: &str, pairing: &str) -> &'a Value {
    file["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name && r["pairing"] == pairing).unwrap()
}

fn code<T: std::fmt::Debug>(got: Result<T, terms::Refusal>) -> Option<String> {
    got.err().map(|r| r.code())
}

/// A later payment built the way `within` builds it, from a held configuration.
fn in_channel(file: &Value, config: &Value, max: &str, refund: Option<Refund>, signature: &str) -> Value {
    let option = &file["fixed"]["evm"]["option"];
    let offer = WithinOffer {
        required: doc_with(file, option),
        accepted: option.clone(),
        channel_config: config.clone(),
        max_claimable: decimal_parse(max).unwrap(),
        refund,
    };
    terms::x402::evm::batch_channel::build_within(&offer, &fixed_h(file, "H"))
        .unwrap()
        .complete(&[signature.to_owned()], None)
        .unwrap()
}

fn eb(key: &str) -> Outcome {
    let file = file();
    let e = &file["fixed"]["evm"];
    let row = &file[key];
    let option = &e["option"];
    let built = opening(&file, option);
    match key {
        "EB1" => {
            let parts = evm::channel_id_parts(84_532, &e["config"]).map_err(|r| r.to_string())?;
            ensure!(e["chainId"] == 84_532, "chain id changed");
            eq("channel id", parts.channel_id.to_string(), text(&row["channelId"]))?;
            eq("domain separator", parts.domain_separator.to_string(), text(&row["domainSeparator"]))?;
            eq("struct hash", parts.struct_hash.to_string(), text(&row["structHash"]))?;
            eq("config type", evm::ChannelConfig::eip712_encode_type().to_string(), text(&e["channelConfigType"]))?;
            eq("on Base", evm::channel_id(8453, &e["config"]), Ok(text(&row["onBase8453"])))?;
            let mut other = e["config"].clone();
            other["salt"] = file["fixed"]["Hprime"].clone();
            eq("with H'", evm::channel_id(84_532, &other), Ok(text(&row["withHprime"])))?;
            eq("the opening's channel", built.channel_id(), row["channelId"].as_str().unwrap())
        }
        "EB2" => {
            let voucher = &built.requests()[1];
            let channel = text(&file["EB1"]["channelId"]);
            let max: u128 = row["maxClaimableAmount"].as_str().unwrap().parse().unwrap();
            let SigningRequest::Eip712 { typed_data } = voucher else { return Err("kind".into()) };
            eq("voucher", typed_data, &evm::voucher_typed_data(84_532, &channel, max))?;
            eq("message amount", typed_data.message["maxClaimableAmount"].clone(), row["maxClaimableAmount"].clone())?;
            eq("digest", digest_of(voucher), text(&row["digest"]))?;
            eq("signature", signs(&e["payerAuthorizerKey"], voucher), text(&row["signature"]))?;
            eq("recovers", recovers(&row["signature"], voucher), text(&e["payerAuthorizer"]))
        }
        "EB3" => {
            let deposit = &built.requests()[0];
            let channel = text(&file["EB1"]["channelId"]);
            eq("nonce", evm::deposit_nonce(&channel, e["authSalt"].as_str().unwrap()), Ok(text(&row["depositNonce"])))?;
            let message = &typed(deposit).message;
            eq("message nonce", message["nonce"].clone(), row["depositNonce"].clone())?;
            eq("validBefore", message["validBefore"].clone(), e["validBefore"].clone())?;
            eq("value", message["value"].clone(), e["deposit"].clone())?;
            eq("to", message["to"].as_str().unwrap(), evm::ERC3009_DEPOSIT_COLLECTOR)?;
            eq("digest", digest_of(deposit), text(&row["digest"]))?;
            eq("signature", signs(&e["payerKey"], deposit), text(&row["signature"]))?;
            eq("recovers", recovers(&row["signature"], deposit), text(&e["payer"]))
        }
        "EB4" => {
            let mut permit2 = option.clone();
            permit2["extra"]["assetTransferMethod"] = json!("permit2");
            let built = opening(&file, &permit2);
            let deposit = &built.requests()[0];
            let message = &typed(deposit).message;
            eq("nonce", message["nonce"].clone(), row["nonce"].clone())?;
            eq("deadline", message["deadline"].clone(), row["deadline"].clone())?;
            eq("witness", message["witness"]["channelId"].clone(), file["EB1"]["channelId"].clone())?;
            eq("digest", digest_of(deposit), text(&row["digest"]))
        }
        "EB6" => eb6(&file, row),
        other => Err(format!("unhandled key {other}").into()),
    }
}

fn eb6(file: &Value, row: &Value) -> Outcome {
    let pairing: &dyn Pairing = &evm::PAIRING;
    let channel = pairing.channel().unwrap();
    let opened = buyer_row(file, "B6", evm::ID)["input"]["presented"].clone();
    let kind = |k: &Value| serde_json::from_value::<String>(k.clone()).unwrap();
    let kind_of = |p: &Value| {
        channel.kind(p, None).map(|k| match k {
            ChannelKind::Open => "open",
            ChannelKind::Within => "within",
            ChannelKind::Close => "close",
        })
    };
    eq("opening kind", kind_of(&opened).map(str::to_owned), Ok(kind(&row["expectKindDeposit"])))?;
    eq("bound", pairing.bound(&opened, None).map(|h| h.to_hex()), Ok(text(&row["expectBound"])))?;
    let want: ChannelRef = serde_json::from_value(row["expectRef"].clone()).unwrap();
    eq("ref", channel.channel_ref(&opened, None), Ok(want))?;

    let config = &opened["payload"]["channelConfig"];
    let max = text(&file["EB2"]["maxClaimableAmount"]);
    let signature = text(&file["EB2"]["signature"]);
    let voucher = in_channel(file, config, &max, None, &signature);
    eq("voucher kind", kind_of(&voucher).map(str::to_owned), Ok(kind(&row["expectKindVoucher"])))?;
    eq("bound within", channel.bound_within(&voucher).map(|h| h.to_hex()), Ok(text(&row["expectBoundWithin"])))?;
    eq("voucher signature", voucher["payload"]["voucher"]["signature"].clone(), file["EB2"]["signature"].clone())?;
    let refund = in_channel(file, config, &max, Some(Refund::close()), &signature);
    eq("refund kind", kind_of(&refund).map(str::to_owned), Ok(kind(&row["expectKindRefund"])))?;
    let amount = text(&row["refundAmount"]);
    let partial = in_channel(file, config, &max, Some(Refund::partial(amount.clone())), &signature);
    eq("partial refund kind", kind_of(&partial).map(str::to_owned), Ok(kind(&row["expectKindPartialRefund"])))?;
    eq("partial refund amount", partial["payload"]["amount"].as_str(), Some(amount.as_str()))?;

    let plant = &row["plant"];
    let mut planted = voucher;
    planted["payload"]["channelConfig"]["salt"] = file["fixed"]["Hprime"].clone();
    eq("plant", code(channel.bound_within(&planted)), Some(text(&plant["expect"])))?;
    eq("plant ref", code(channel.channel_ref(&planted, None)), Some(text(&plant["expect"])))?;
    planted["payload"]["voucher"]["channelId"] = plant["matchedChannelId"].clone();
    eq(
        "plant with its own channel id",
        channel.bound_within(&planted).map(|h| h.to_hex()),
        Ok(text(&plant["expectBoundWithinMatched"])),
    )
}

fn ec1() -> Outcome {
    let file = file();
    let row = &file["EC1"];
    let payload = &row["payload"];
    let h = fixed_h(&file, "H");
    let required = json!({"x402Version": 2, "accepts": [payload["accepted"]], "extensions": payload["extensions"]});
    let choice = json!({"required": required, "accepted": payload["accepted"]}).as_object().unwrap().clone();
    let built = cloudflare::build(&choice, &h).map_err(|r| r.to_string())?;
    eq("payment", built.payment(), payload)?;
    eq("request", built.request(), Ok(None))?;
    eq("length", terms::json::to_js_string(payload).unwrap().len() as u64, row["payloadLength"].as_u64().unwrap())?;
    eq("bound", cloudflare::bound(payload).map(|h| h.to_hex()), Ok(text(&row["expectBound"])))?;
    let mut bare = payload.clone();
    bare.as_object_mut().unwrap().remove("extensions");
    eq("without extensions", code(cloudflare::bound(&bare)), Some(text(&row["withoutExtensions"])))?;
    let reads = x402_pairings().find(|p| p.read(&required).is_ok()).map(|p| p.id());
    eq("pairing", reads, row["expectPairing"].as_str())?;
    // Through the gate: the build is the payment, finished with no answers.
    let chosen =
        Chosen { pairing: cloudflare::ID.into(), build_input: choice, reference: "r".repeat(32), agreement: None };
    match finish(b"abc", &chosen, &[], &cloudflare::PAIRING) {
        Ok(terms::Finish::Finished(done)) => eq("finished", &done.signed.to_value(), payload),
        other => Err(format!("finish: {other:?}").into()),
    }
}

fn agreed(case: &str, want: &Value) -> Outcome {
    let file = file();
    let e = &file["fixed"]["evm"];
    let want = want.as_str().map(str::to_owned);
    let opened = buyer_row(&file, "B6", evm::ID)["input"]["presented"].clone();
    let pairing: &dyn Pairing = &evm::PAIRING;
    let channel = pairing.channel().unwrap();
    let mut got: Vec<Option<String>> = Vec::new();
    match case {
        "bound, reference or ref with a channelConfig member missing or malformed, or a deposit amount that is not decimal" =>
        {
            // reference is the seller's (not built); bound and ref run.
            for member in
                ["payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "token", "withdrawDelay", "salt"]
            {
                for value in [None, Some(json!("0x12")), Some(json!(true))] {
                    let mut p = opened.clone();
                    let config = p["payload"]["channelConfig"].as_object_mut().unwrap();
                    match value {
                        None => drop(config.remove(member)),
                        Some(v) => drop(config.insert(member.into(), v)),
                    }
                    got.push(code(pairing.bound(&p, None)));
                    got.push(code(channel.channel_ref(&p, None)));
                }
            }
            for amount in [json!("1e5"), json!("-1"), json!(100_000), json!("")] {
                let mut p = opened.clone();
                p["payload"]["deposit"]["amount"] = amount;
                got.push(code(pairing.bound(&p, None)));
            }
        }
        "batchChannelId or batchChannelCreated with a malformed config or data" => {
            // batchChannelCreated reads the seller's log (not built); batchChannelId runs.
            for member in ["payer", "token", "withdrawDelay", "salt"] {
                let mut config = e["config"].clone();
                config.as_object_mut().unwrap().remove(member);
                got.push(code(evm::channel_id(84_532, &config)));
                config[member] = json!("0x1234");
                got.push(code(evm::channel_id(84_532, &config)));
            }
            let mut config = e["config"].clone();
            config["withdrawDelay"] = json!(1u64 << 40);
            got.push(code(evm::channel_id(84_532, &config)));
        }
        "complete with a signature count other than the requests', or an EVM signature that is not 0x hex" => {
            let option = &e["option"];
            let built = opening(&file, option);
            let chosen = Chosen {
                pairing: evm::ID.into(),
                build_input: choice(&file, option),
                reference: "r".repeat(32),
                agreement: None,
            };
            let sig = text(&file["EB2"]["signature"]);
            for answer in
                [json!([sig]), json!([sig, sig, sig]), json!([sig, "0xzz"]), json!(["1234", sig]), json!([sig, "0x"])]
            {
                got.push(code(built.complete(&[answer.into()], &chosen)));
            }
            let config = &opened["payload"]["channelConfig"];
            let offer = WithinOffer {
                required: doc_with(&file, option),
                accepted: option.clone(),
                channel_config: config.clone(),
                max_claimable: decimal_parse("1000").unwrap(),
                refund: None,
            };
            let within = terms::x402::evm::batch_channel::build_within(&offer, &fixed_h(&file, "H")).unwrap();
            for answers in [vec![], vec![sig.clone(), sig], vec!["0xabc".to_owned()]] {
                got.push(code(within.complete(&answers, None)));
            }
        }
        "Cloudflare build when the challenge's legalContext hash is not h" => {
            let payload = &file["EC1"]["payload"];
            let required =
                json!({"x402Version": 2, "accepts": [payload["accepted"]], "extensions": payload["extensions"]});
            let choice = json!({"required": required, "accepted": payload["accepted"]}).as_object().unwrap().clone();
            got.push(code(cloudflare::build(&choice, &fixed_h(&file, "Hprime"))));
        }
        other => return Err(format!("unhandled agreed refusal: {other}").into()),
    }
    ensure!(!got.is_empty() && got.iter().all(|g| *g == want), "{case}: got {got:?}, want {want:?}");
    Ok(())
}

fn buyer(row: &Value) -> Outcome {
    let input = &row["input"];
    let expect = &row["expect"];
    let pairing = terms::pairing(row["pairing"].as_str().unwrap()).map_err(|d| d.detail)?;
    match row["name"].as_str().unwrap() {
        "B2" => {
            let served = hex(input["servesHex"].as_str().unwrap());
            eq("served hash", atr_hash(&served).to_hex(), text(&row["servedHash"]))?;
            let key = file()["fixed"]["evm"]["payerKey"].clone();
            let signer = CountingSigner::new(key.as_str().unwrap(), input["account"].as_str().unwrap());
            let inputs = input.get("inputs").and_then(Value::as_object).cloned().unwrap_or_default();
            let options = Options::new().clock(FixedClock(input["now"].as_u64().unwrap_or(0))).inputs(inputs);
            let (got, fetch) = transact_serving(&input["doc"], pairing, Reply::ok(served), &signer, &options);
            expect_decline(&got, &expect["decline"])?;
            eq("fetches", fetch.asked().len(), 1)?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())
        }
        "B6" => {
            for (case, want) in input["check"].as_array().unwrap().iter().zip(expect.as_array().unwrap()) {
                let got = check(&hex(case["bytesHex"].as_str().unwrap()), &input["presented"], pairing);
                match want.get("h") {
                    Some(h) => eq("h", got.map(|c| c.h.to_hex()).map_err(|d| d.detail), Ok(text(h)))?,
                    None => drop(expect_decline(&got, &want["decline"])?),
                }
            }
            if pairing.id() == evm::ID {
                // The payment the row holds is the one the gate builds and the two keys sign from the file's inputs.
                let b2 = buyer_row(&file(), "B2", evm::ID)["input"].clone();
                let e = file()["fixed"]["evm"].clone();
                let signer = CountingSigner::new(e["payerKey"].as_str().unwrap(), b2["account"].as_str().unwrap())
                    .with_voucher_key(e["payerAuthorizerKey"].as_str().unwrap());
                let options = Options::new()
                    .clock(FixedClock(b2["now"].as_u64().unwrap()))
                    .inputs(b2["inputs"].as_object().unwrap().clone());
                let abc = hex(input["check"][0]["bytesHex"].as_str().unwrap());
                let (got, _) = transact_serving(&b2["doc"], pairing, Reply::ok(abc), &signer, &options);
                let signed = match got.map_err(|d| d.detail)? {
                    terms::TransactOutcome::Signed(t) => t.signed.map(|p| p.to_value()),
                    other => return Err(format!("{other:?}").into()),
                };
                eq("transact", signed.as_ref(), Some(&input["presented"]))?;
                eq("sign calls", signer.count(), 1)?;
            }
            Ok(())
        }
        other => Err(format!("unhandled buyer row {other}").into()),
    }
}

/// Every key and row of the file: run, or listed with the reason it is not.
pub fn trials() -> Vec<Trial> {
    let file = file();
    let mut trials = Vec::new();
    for key in file.as_object().unwrap().keys() {
        let label = format!("{FILE}::{key}");
        match key.as_str() {
            "about" | "fixed" => {}
            "EB1" | "EB2" | "EB3" | "EB4" | "EB6" => {
                let key = key.clone();
                trials.push(Trial::test(label, move || eb(&key)));
            }
            "EB5" => trials.push(ignored(&label, "seller side: the ChannelCreated log recover reads")),
            "EB7" => trials.push(ignored(&label, "seller side: settlement status from a receipt")),
            "EB8" => trials.push(ignored(&label, "seller side: recovering H from a ChannelCreated log")),
            #[cfg(feature = "solana")]
            k if k.starts_with("ES") => {
                trials.extend(super::batch_settlement_solana::trial(k, &label).unwrap_or_else(|| {
                    vec![Trial::test(label.clone(), || Err("a Solana key neither run nor listed".into()))]
                }))
            }
            #[cfg(not(feature = "solana"))]
            k if k.starts_with("ES") => trials.push(ignored(&label, "a build without the Solana rail")),
            "EC1" => trials.push(Trial::test(label, ec1)),
            "agreedRefusals" => {
                for row in file[key]["rows"].as_array().unwrap().clone() {
                    let case = row["case"].as_str().unwrap().to_owned();
                    let name = format!("{label}::{case}");
                    #[cfg(feature = "solana")]
                    if case.starts_with("bound, reference or ref") {
                        let name = format!("{name} (x402/batch-settlement/solana)");
                        trials.push(Trial::test(name, super::batch_settlement_solana::agreed_payload_malformed));
                    }
                    if case.starts_with("recover ") {
                        trials.push(ignored(&name, "seller side: recover"));
                    } else if case.starts_with("SVM ") {
                        #[cfg(feature = "solana")]
                        trials.push(super::batch_settlement_solana::agreed_trial(&name, row["expect"].clone()));
                        #[cfg(not(feature = "solana"))]
                        trials.push(ignored(&name, "a build without the Solana rail"));
                    } else {
                        trials.push(Trial::test(name, move || agreed(&case, &row["expect"])));
                    }
                }
            }
            "buyer" => {
                for row in file[key]["rows"].as_array().unwrap().clone() {
                    let name =
                        format!("{label}::{} ({})", row["name"].as_str().unwrap(), row["pairing"].as_str().unwrap());
                    if row["pairing"] == "x402/batch-settlement/solana" {
                        // NOTES.md: both Solana rows are superseded by the peer (the option's extra changed).
                        #[cfg(feature = "solana")]
                        trials.push(super::batch_settlement_solana::buyer_trial(&name, row["name"].as_str().unwrap()));
                        #[cfg(not(feature = "solana"))]
                        trials.push(ignored(&name, "a build without the Solana rail"));
                    } else {
                        trials.push(Trial::test(name, move || buyer(&row)));
                    }
                }
                if let Some(none) = file[key].get("noSignedPayment") {
                    trials.push(ignored(&format!("{label}::noSignedPayment {none}"), "no B6 row"));
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

/// A decimal string of at most 78 digits, as the gate reads amounts.
fn decimal_parse(text: &str) -> Option<ruint::aliases::U512> {
    (!text.is_empty() && text.len() <= 78 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| ruint::aliases::U512::from_str_radix(text, 10).ok())
        .flatten()
}
