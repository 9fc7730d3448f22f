//! `x402-batch-settlement.json`'s Solana rows (ES*), its SVM agreed refusal and its two Solana buyer rows, for
//! `x402/batch-settlement/solana`, from the rows' own data.
//!
//! The file predates the reference's option form: integraledger-terms 0.4.0 requires `extra.receiverAuthorizer` and
//! writes x402's receiver-authorizer binding memo beside H's, so the file's option is not this pairing's and its
//! opening (ES2's wire, ES4 and B6's payment) carries one memo where the reference's carries two (NOTES.md lists B2
//! and B6). Where a row is superseded the test says so and checks what the reference gives (run on the same input);
//! the option the positive rows use is the file's with `extra.receiverAuthorizer` set to the file's fee payer (a
//! value of the test's choosing, which the channel does not derive from).

use libtest_mimic::Trial;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use terms::pairing::{ChannelKind, Chosen, Refund};
use terms::rail::solana::channel::{Open, PAYMENT_CHANNELS, channel_address, voucher_message};
use terms::rail::solana::{Key, decode, find_pda, is_on_curve};
use terms::x402::channel::WithinOffer;
use terms::x402::solana::{batch, batch_channel};
use terms::{AtrHash, FixedClock, Options, Pairing, SolanaKey, TransactOutcome, check, transact};

use crate::support::{Reply, ScriptedFetch, paused, vectors};
use crate::{Outcome, eq};

const FILE: &str = "x402-batch-settlement.json";

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(batch::ID).unwrap()
}

fn key(v: &Value) -> Key {
    Key::parse(v.as_str().unwrap()).unwrap()
}

fn svm(f: &Value) -> &Value {
    &f["fixed"]["svm"]
}

fn b64(text: &Value) -> Vec<u8> {
    base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.as_str().unwrap()).unwrap()
}

fn buyer_row<'a>(f: &'a Value, name: &str) -> &'a Value {
    f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name && r["pairing"] == batch::ID).unwrap()
}

/// The option in the reference's form: the file's, with `extra.receiverAuthorizer`.
fn with_authorizer(f: &Value, option: &Value) -> Value {
    let mut o = option.clone();
    o["extra"]["receiverAuthorizer"] = svm(f)["feePayer"].clone();
    o
}

/// B6's payment with the option in the reference's form.
fn presented(f: &Value) -> Value {
    let mut p = buyer_row(f, "B6")["input"]["presented"].clone();
    p["accepted"] = with_authorizer(f, &p["accepted"]);
    p
}

fn h(f: &Value) -> AtrHash {
    AtrHash::parse(f["fixed"]["H"].as_str().unwrap()).unwrap()
}

fn salt_of(f: &Value) -> u64 {
    svm(f)["salt"].as_str().unwrap().parse().unwrap()
}

fn slot_of(f: &Value) -> u64 {
    svm(f)["openSlot"].as_str().unwrap().parse().unwrap()
}

/// The channel of the file's configuration with `salt`.
fn channel(f: &Value, salt: u64) -> Key {
    let s = svm(f);
    channel_address(&key(&s["payer"]), &key(&s["feePayer"]), &key(&s["mint"]), &key(&s["payer"]), salt, slot_of(f))
        .unwrap()
}

fn es1() -> Outcome {
    let f = file();
    let es1 = &f["ES1"];
    let s = svm(&f);
    let (salt, slot) = (salt_of(&f).to_le_bytes(), slot_of(&f).to_le_bytes());
    let keys = [key(&s["payer"]), key(&s["feePayer"]), key(&s["mint"]), key(&s["config"]["payerAuthorizer"])];
    let mut seeds: Vec<&[u8]> = vec![b"channel"];
    seeds.extend(keys.iter().map(|k| &k.as_bytes()[..]));
    seeds.extend([&salt[..], &slot[..]]);
    let pda = find_pda(&seeds, &PAYMENT_CHANNELS).unwrap();
    eq("channel", pda.address, key(&es1["channelPda"]))?;
    eq("bump", u64::from(pda.bump), es1["bump"].as_u64().unwrap())?;
    eq("channel_address", channel(&f, salt_of(&f)), pda.address)?;
    eq("salt 43", channel(&f, salt_of(&f) + 1), key(&es1["salt43"]))?;
    let authority = find_pda(&[b"event_authority"], &PAYMENT_CHANNELS).unwrap();
    eq("event authority", authority.address, key(&es1["eventAuthority"]))?;
    eq("its bump", u64::from(authority.bump), es1["eventAuthorityBump"].as_u64().unwrap())?;
    // The curve check: the PDA is off the curve, the test key on it (as the reference's is_curve_key reads it), so a
    // configuration's payer authorizer may be the one and not the other.
    eq("pda on the curve", is_on_curve(pda.address.as_bytes()), false)?;
    eq("test key on the curve", is_on_curve(key(&es1["wrongCurveTest"]).as_bytes()), true)?;
    let mut p = presented(&f);
    p["payload"]["channelConfig"]["payerAuthorizer"] = es1["channelPda"].clone();
    eq("a PDA as payer authorizer", code(channel_ref(&p)), Some("x402/payload-malformed".into()))
}

fn code<T>(r: Result<T, String>) -> Option<String> {
    r.err()
}

fn channel_ref(p: &Value) -> Result<String, String> {
    pairing().channel().unwrap().channel_ref(p, None).map(|r| r.channel).map_err(|r| r.code())
}

fn kind(p: &Value) -> Result<ChannelKind, String> {
    pairing().channel().unwrap().kind(p, None).map_err(|r| r.code())
}

fn bound(p: &Value) -> Result<String, String> {
    pairing().bound(p, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The opening's choice, as choose writes it, for the B2 document with the reference's option.
fn opening_choice(f: &Value) -> Chosen {
    let row = &buyer_row(f, "B2")["input"];
    let mut doc = row["doc"].clone();
    doc["accepts"][0] = with_authorizer(f, &doc["accepts"][0]);
    let mut c = Map::new();
    c.insert("required".into(), doc.clone());
    c.insert("accepted".into(), doc["accepts"][0].clone());
    c.insert("payer".into(), svm(f)["payer"].clone());
    c.insert("now".into(), json!(1_790_000_000u64));
    c.extend(row["inputs"].as_object().unwrap().clone());
    Chosen { pairing: batch::ID.into(), build_input: c, reference: "r".into(), agreement: None }
}

/// ES2: the open instruction's data; the opening's message, which is ES2's instructions (solders' account order, and
/// one memo: superseded) with x402's binding memo after H's.
fn es2() -> Outcome {
    let f = file();
    let es2 = &f["ES2"];
    let s = svm(&f);
    let open = Open {
        channel: channel(&f, salt_of(&f)),
        signer: key(&s["payer"]),
        salt: salt_of(&f),
        deposit: s["deposit"].as_str().unwrap().parse().unwrap(),
        grace_period: s["withdrawDelay"].as_u64().unwrap().try_into().unwrap(),
        open_slot: slot_of(&f),
        recipient: key(&s["payTo"]),
    };
    eq("open data", hex::encode(open.data()), es2["openInstructionData"].as_str().unwrap().into())?;
    let c = opening_choice(&f);
    let opening = batch::build(&c.build_input, &h(&f)).map_err(|r| r.code())?;
    let message = hex::decode(opening.requests()[0].to_json()["message"].as_str().unwrap().trim_start_matches("0x"));
    let ours = terms::rail::solana::signed_wire(&message.unwrap(), &key(&s["payer"]), &[0; 64]).unwrap();
    let ours = decode(&ours).unwrap();
    let theirs = decode(&b64(&es2["wireBase64"])).unwrap();
    eq("file's message length", theirs.message.len() as u64, es2["messageLength"].as_u64().unwrap())?;
    eq("file's digest", hex::encode(Sha256::digest(&theirs.message)), es2["messageSha256"].as_str().unwrap().into())?;
    let resolve = |tx: &terms::rail::solana::Transaction| -> Vec<Value> {
        tx.instructions
            .iter()
            .map(|ix| {
                let accounts: Vec<String> = ix.accounts.iter().map(|i| tx.keys[usize::from(*i)].to_base58()).collect();
                json!([tx.program_of(ix).unwrap().to_base58(), accounts, hex::encode(&ix.data)])
            })
            .collect()
    };
    let mut want = resolve(&theirs);
    let binding = format!(
        "{}{}",
        batch::BINDING_MEMO_PREFIX,
        with_authorizer(&f, &s["option"])["extra"]["receiverAuthorizer"].as_str().unwrap()
    );
    want.push(json!([want[3][0], Vec::<String>::new(), hex::encode(binding)]));
    eq("instructions", resolve(&ours), want)?;
    eq("fee payer", ours.keys[0], theirs.keys[0])?;
    eq("blockhash", ours.blockhash, theirs.blockhash)?;
    eq("channel", opening.channel(), channel(&f, salt_of(&f)))
}

/// ES3: the first voucher's message and the payer authorizer's signature of it.
fn es3() -> Outcome {
    let f = file();
    let es3 = &f["ES3"];
    let amount: u64 = svm(&f)["option"]["amount"].as_str().unwrap().parse().unwrap();
    let m = voucher_message(&channel(&f, salt_of(&f)), amount, 0);
    eq("message", hex::encode(m), es3["message"].as_str().unwrap().into())?;
    let c = opening_choice(&f);
    let opening = batch::build(&c.build_input, &h(&f)).map_err(|r| r.code())?;
    let request = opening.requests()[1].to_json();
    eq("request", request["message"].as_str().unwrap().trim_start_matches("0x").to_owned(), hex::encode(m))?;
    eq("signer", request["signer"].clone(), svm(&f)["payer"].clone())?;
    let key = SolanaKey::from_seed_hex(svm(&f)["payerSeed"].as_str().unwrap()).unwrap();
    let sig = hex::encode(key.sign_bytes(&m));
    eq("prefix", sig.starts_with(es3["signaturePrefix"].as_str().unwrap()), true)?;
    eq("suffix", sig.ends_with(es3["signatureSuffix"].as_str().unwrap()), true)
}

/// ES4: the file's opening (superseded: its option is not the reference's and its wire has one memo), its kinds and
/// channel with the reference's option, the top-up, the close, the nonce plant and the salt-43 voucher.
fn es4() -> Outcome {
    let f = file();
    let es4 = &f["ES4"];
    let as_filed = buyer_row(&f, "B6")["input"]["presented"].clone();
    eq("the file's opening", bound(&as_filed), Err("x402/option-not-this-pairing".into()))?;
    let p = presented(&f);
    eq("its one memo", bound(&p), Err("svm/memo-count".into()))?;
    eq("kind", kind(&p), Ok(ChannelKind::Open))?;
    eq("ref", channel_ref(&p), Ok(es4["expectRef"]["channel"].as_str().unwrap().into()))?;
    let mut top_up = p.clone();
    top_up["payload"]["deposit"]["transaction"] = es4["topUpWireBase64"].clone();
    eq("top-up kind", kind(&top_up), Ok(ChannelKind::Within))?;
    eq("top-up bound", bound(&top_up), Err("x402/not-an-opening".into()))?;
    let mut close = p.clone();
    close["payload"] = json!({"type": "refund", "channelConfig": es4["config"], "transaction": es4["closeWireBase64"]});
    eq("close kind", kind(&close), Ok(ChannelKind::Close))?;
    eq("close ref", channel_ref(&close), Ok(es4["expectRef"]["channel"].as_str().unwrap().into()))?;
    let within = pairing().channel().unwrap().bound_within(&close).map_err(|r| r.code());
    eq("bound within", within.map(|h| h.to_hex()), Err(es4["expectBoundWithin"].as_str().unwrap().into()))?;
    // plantNonce: the file expects memo-not-lcp; with no binding memo beside it the reference refuses the count first.
    let mut nonce = p.clone();
    nonce["payload"]["deposit"]["transaction"] = es4["plantNonce"]["wireBase64"].clone();
    eq("plantNonce (superseded)", bound(&nonce), Err("svm/memo-count".into()))?;
    let mut config = es4["config"].clone();
    config["salt"] = json!((salt_of(&f) + 1).to_string());
    let mut voucher = p;
    voucher["payload"] = json!({"type": "voucher", "channelConfig": config, "voucher": {
        "channelId": f["ES1"]["channelPda"], "maxClaimableAmount": "1000", "expiresAt": 0, "signature": "1".repeat(64)
    }});
    eq("plantSalt43", channel_ref(&voucher), Err(es4["plantSalt43"]["expect"].as_str().unwrap().into()))
}

/// An opening's wire with `memos` after the open of the channel with `salt`, the fee payer's, with stand-in
/// signatures.
fn opening_wire(f: &Value, salt: u64, memos: Vec<terms::rail::solana::Instruction>) -> Value {
    use terms::rail::solana::channel::{ChannelCall, Parties};
    use terms::rail::solana::{Version, compile, program, signed_wire};
    let s = svm(f);
    let parties = Parties {
        payer: key(&s["payer"]),
        fee_payer: key(&s["feePayer"]),
        mint: key(&s["mint"]),
        token_program: key(&s["tokenProgram"]),
    };
    let open = Open {
        channel: channel(f, salt),
        signer: key(&s["payer"]),
        salt,
        deposit: 100_000,
        grace_period: 3600,
        open_slot: slot_of(f),
        recipient: key(&s["payTo"]),
    };
    let mut ixs = vec![
        program::set_compute_unit_limit(200_000),
        program::set_compute_unit_price(1),
        ChannelCall::Open(open).instruction(&parties).unwrap(),
    ];
    ixs.extend(memos);
    let m = compile(Version::V0, &parties.fee_payer, &key(&s["blockhash"]), &ixs).unwrap();
    json!(crate::b64_encode(&signed_wire(&m, &parties.payer, &[7; 64]).unwrap()))
}

/// The issue's bad input for the channel: the memos doubled, missing or in the wrong instruction, the memo of
/// another H, a wire with trailing bytes, an open of another channel, a voucher for another channel, and an option
/// of another fee payer (the channel derives from it). Each code is the reference's, run on the same input.
fn bad_input() -> Outcome {
    use terms::rail::solana::{Instruction, program};
    let f = file();
    let l = f["fixed"]["L"].as_str().unwrap();
    let binding = format!("{}{}", batch::BINDING_MEMO_PREFIX, svm(&f)["feePayer"].as_str().unwrap());
    let with = |wire: Value| {
        let mut p = presented(&f);
        p["payload"]["deposit"]["transaction"] = wire;
        p
    };
    let salt = salt_of(&f);
    let memos = |list: &[&str]| list.iter().map(|m| program::memo(m)).collect::<Vec<_>>();
    eq("L and the binding", bound(&with(opening_wire(&f, salt, memos(&[l, &binding])))), Ok(h(&f).to_hex()))?;
    let count = Err("svm/memo-count".to_owned());
    eq("L alone", bound(&with(opening_wire(&f, salt, memos(&[l])))), count.clone())?;
    eq("L twice", bound(&with(opening_wire(&f, salt, memos(&[l, l, &binding])))), count.clone())?;
    eq("two bindings", bound(&with(opening_wire(&f, salt, memos(&[l, &binding, &binding])))), count.clone())?;
    let elsewhere = Instruction { program: program::COMPUTE_BUDGET, accounts: vec![], data: l.as_bytes().to_vec() };
    let mut wrong = vec![elsewhere];
    wrong.extend(memos(&[&binding]));
    eq("L in the wrong instruction", bound(&with(opening_wire(&f, salt, wrong))), count)?;
    let other = format!("lcp:sha256:0x{}", "11".repeat(32));
    let got = bound(&with(opening_wire(&f, salt, memos(&[&other, &binding]))));
    eq("another H", got, Err("svm/carrier-mismatch".into()))?;
    let mut trailing = b64(&opening_wire(&f, salt, memos(&[l, &binding])));
    trailing.push(0);
    eq("trailing bytes", bound(&with(json!(crate::b64_encode(&trailing)))), Err("svm/tx-malformed".into()))?;
    let mismatch = Err("svm/channel-id-mismatch".to_owned());
    eq(
        "an open of another channel",
        bound(&with(opening_wire(&f, salt + 1, memos(&[l, &binding])))),
        mismatch.clone(),
    )?;
    let mut voucher = with(opening_wire(&f, salt, memos(&[l, &binding])));
    voucher["payload"]["voucher"]["channelId"] = f["ES1"]["salt43"].clone();
    eq("a voucher for another channel", bound(&voucher), mismatch.clone())?;
    let mut fee_payer = with(opening_wire(&f, salt, memos(&[l, &binding])));
    fee_payer["accepted"]["extra"]["feePayer"] = svm(&f)["payTo"].clone();
    eq("another fee payer", bound(&fee_payer), mismatch)
}

fn offer(f: &Value, refund: Option<Refund>, max_claimable: u64) -> WithinOffer {
    let c = opening_choice(f);
    WithinOffer {
        required: c.build_input["required"].clone(),
        accepted: c.build_input["accepted"].clone(),
        channel_config: f["ES4"]["config"].clone(),
        max_claimable: max_claimable.to_string().parse().unwrap(),
        refund,
    }
}

/// ES6: a refund with an amount is refused; the full refund with no blockhash (the file's noBlockhash, superseded: the
/// reference's refund is the voucher alone until the seller answers that the receiver's binding is unavailable) signs
/// the voucher for the recorded charge.
fn es6() -> Outcome {
    let f = file();
    let es6 = &f["ES6"];
    let amount = Refund { amount: Some("5".into()) };
    let got = batch_channel::build_within(&offer(&f, Some(amount), 2000), &h(&f)).map(drop).map_err(|r| r.code());
    eq("refund with an amount", got, Err(es6["refundWithAmount"]["expect"].as_str().unwrap().into()))?;
    let within = batch_channel::build_within(&offer(&f, Some(Refund::close()), 2000), &h(&f)).map_err(|r| r.code())?;
    let requests = terms::pairing::Batch::requests(&within);
    eq("one request", requests.len(), 1)?;
    let want = voucher_message(&channel(&f, salt_of(&f)), 2000, 0);
    eq("voucher", requests[0].to_json()["message"].clone(), json!(format!("0x{}", hex::encode(want))))?;
    let paid = terms::pairing::Batch::complete(&within, &["1".repeat(64)], None).map_err(|r| r.code())?;
    eq("type", paid["payload"]["type"].clone(), json!("refund"))?;
    eq("no transaction", paid["payload"].get("transaction"), None)?;
    eq("kind", kind(&paid), Ok(ChannelKind::Close))
}

/// The SVM agreed refusal: a signature that is not 64 bytes of base58, or a build input out of range.
fn agreed_svm(want: &Value) -> Outcome {
    let f = file();
    let want = Err(want.as_str().unwrap().to_owned());
    let c = opening_choice(&f);
    let opening = batch::build(&c.build_input, &h(&f)).map_err(|r| r.code())?;
    let complete = |answers: Value| {
        terms::pairing::Unsigned::complete(&opening, &[terms::Answer::new(answers)], &c).map(drop).map_err(|r| r.code())
    };
    let good = "1".repeat(64);
    eq("64 bytes", complete(json!([good, good])), Ok(()))?;
    for bad in [json!([good, "1".repeat(63)]), json!([format!("0x{}", "00".repeat(64)), good]), json!([good, "0OIl"])] {
        eq(&format!("{bad}"), complete(bad.clone()), want.clone())?;
    }
    eq("one answer", complete(json!([good])), Err("x402/signature-malformed".into()))?;
    for (name, value) in [
        ("deposit", json!("0")),
        ("deposit", json!("18446744073709551616")),
        ("salt", json!("18446744073709551616")),
        ("openSlot", json!("9007199254740992")),
        ("payerAuthorizer", f["ES1"]["channelPda"].clone()),
        ("computeUnitLimit", json!(4_294_967_296u64)),
    ] {
        let mut c = opening_choice(&f);
        c.build_input.insert(name.into(), value.clone());
        let got = batch::build(&c.build_input, &h(&f)).map(drop).map_err(|r| r.code());
        eq(&format!("{name} = {value}"), got, want.clone())?;
    }
    Ok(())
}

/// The batch payload-malformed row on Solana: a channelConfig member missing or malformed.
pub(super) fn agreed_payload_malformed() -> Outcome {
    let f = file();
    for (member, value) in
        [("salt", Value::Null), ("salt", json!(42)), ("withdrawDelay", json!(0)), ("payer", json!("x"))]
    {
        let mut p = presented(&f);
        if value.is_null() {
            p["payload"]["channelConfig"].as_object_mut().unwrap().remove(member);
        } else {
            p["payload"]["channelConfig"][member] = value.clone();
        }
        eq(&format!("{member} {value}"), channel_ref(&p), Err("x402/payload-malformed".into()))?;
    }
    Ok(())
}

/// B2 and B6 (superseded, NOTES.md): the file's option is not the reference's, so the document offers nothing this
/// pairing pays and the payment is not bound; with the reference's option B2's plant is declined hash-mismatch before
/// the signer is called, and the opening transact builds is bound to H.
fn buyer(name: &str) -> Outcome {
    let f = file();
    let row = buyer_row(&f, name);
    let input = &row["input"];
    match name {
        "B2" => {
            let key = SolanaKey::from_seed_hex(svm(&f)["payerSeed"].as_str().unwrap()).unwrap();
            let signer = key.on_network(svm(&f)["option"]["network"].as_str().unwrap()).unwrap();
            let link = input["doc"]["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap();
            let served = hex::decode(input["servesHex"].as_str().unwrap()).unwrap();
            let options =
                Options::new().clock(FixedClock(1_790_000_000)).inputs(input["inputs"].as_object().unwrap().clone());
            let run = |doc: &Value, body: Vec<u8>| {
                let fetch = ScriptedFetch::new().script(link, vec![Reply::ok(body)]);
                paused().block_on(transact(doc, pairing(), &signer, &fetch, &options))
            };
            let got = run(&input["doc"], served.clone()).map(drop).map_err(|d| (d.code.as_str().to_owned(), d.detail));
            eq("as filed (superseded)", got, Err(("offer-unreadable".into(), "x402/no-payable-option".into())))?;
            let mut doc = input["doc"].clone();
            doc["accepts"][0] = with_authorizer(&f, &doc["accepts"][0]);
            let got = run(&doc, served).map(drop).map_err(|d| d.code.as_str().to_owned());
            eq("plant", got, Err(row["expect"]["decline"].as_str().unwrap().into()))?;
            let TransactOutcome::Signed(signed) = run(&doc, b"abc".to_vec()).map_err(|d| d.detail)? else {
                return Err("not signed".into());
            };
            let payment = signed.signed.unwrap().to_value();
            let checked = check(b"abc", &payment, pairing()).map_err(|d| d.detail)?;
            eq("H", checked.h, h(&f))?;
            eq("ref", channel_ref(&payment), Ok(f["ES1"]["channelPda"].as_str().unwrap().into()))?;
            let tx = decode(&b64(&payment["payload"]["deposit"]["transaction"])).unwrap();
            eq("payer's signature", tx.signatures[1], key.sign_bytes(&tx.message))
        }
        _ => {
            let as_filed = &input["presented"];
            for case in input["check"].as_array().unwrap() {
                let atr = hex::decode(case["bytesHex"].as_str().unwrap()).unwrap();
                let got = check(&atr, as_filed, pairing()).map(drop).map_err(|d| d.code.as_str().to_owned());
                eq("as filed (superseded)", got, Err("signed-not-bound".into()))?;
            }
            eq("why", bound(as_filed), Err("x402/option-not-this-pairing".into()))
        }
    }
}

/// The trials for the file's Solana keys, by key; `None` for a key that is not one.
pub(super) fn trial(key: &str, label: &str) -> Option<Vec<Trial>> {
    let test = |f: fn() -> Outcome| Trial::test(label.to_owned(), f);
    let ignored = |why: &str| crate::ignored(label, why);
    Some(match key {
        "ES1" => vec![test(es1)],
        "ES2" => vec![test(es2)],
        "ES3" => vec![test(es3)],
        "ES4" => vec![test(es4), Trial::test("x402/batch-settlement/solana::bad input", bad_input)],
        "ES5" => vec![ignored("seller side: status and recovery of a landed opening")],
        "ES6" => vec![
            test(es6),
            crate::ignored(
                &format!("{label}.withMemo/withoutMemo"),
                "the refund taken again after the receiver's binding is unavailable (request_close) is not built",
            ),
        ],
        "ES7" => vec![ignored("seller side: locating the opening")],
        _ => return None,
    })
}

/// The SVM agreed-refusal row's trial.
pub(super) fn agreed_trial(name: &str, want: Value) -> Trial {
    Trial::test(name.to_owned(), move || agreed_svm(&want))
}

/// A Solana buyer row's trial.
pub(super) fn buyer_trial(name: &str, row: &str) -> Trial {
    let row = row.to_owned();
    Trial::test(name.to_owned(), move || buyer(&row))
}
