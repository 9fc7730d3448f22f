//! The issue's bad input for `x402/upto/solana`, from `x402-upto-solana.json`'s own values: the memo doubled, in the
//! wrong instruction or of another H; the deposit to another token account or mint; a blockhash or fee payer the
//! buyer did not give; a message that does not decode or has trailing bytes; a signature of the wrong length; and
//! the channel's own inputs (salt, open slot, time) out of their range. Each code is the reference's (checked by
//! running integraledger-terms 0.4.0 on the same input).

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::Answer;
use terms::pairing::{ChooseContext, Chosen};
use terms::rail::solana::channel::{ChannelCall, Open, Parties, channel_address, channel_instruction};
use terms::rail::solana::{Instruction, Version, associated_token_address, compile, decode, program, signed_wire};

use super::x402_upto_solana::{b64, bound_code, built, choice, chosen, document, file, key, message, option};
use super::x402_upto_solana::{pairing, presented};
use crate::{Outcome, b64_encode, eq};

/// EU3's opening with `memos` in place of its one memo, compiled and wrapped as a wire with a stand-in signature.
fn wire_with(v: &Value, memos: Vec<Instruction>) -> Value {
    let f = &v["fixed"];
    let parties = Parties {
        payer: key(&f["payer"]),
        fee_payer: key(&f["feePayer"]),
        mint: key(&f["mint"]),
        token_program: key(&f["tokenProgram"]),
    };
    let o = &f["option"];
    let open = Open {
        channel: key(&v["EU1"]["channelPda"]),
        signer: key(&f["receiverAuthorizer"]),
        salt: f["nonce"].as_str().unwrap().parse().unwrap(),
        deposit: o["amount"].as_str().unwrap().parse().unwrap(),
        grace_period: 3600,
        open_slot: f["openSlot"].as_str().unwrap().parse().unwrap(),
        recipient: key(&o["payTo"]),
    };
    let mut ixs = vec![
        program::set_compute_unit_limit(200_000),
        program::set_compute_unit_price(1),
        ChannelCall::Open(open).instruction(&parties).unwrap(),
    ];
    ixs.extend(memos);
    let m = compile(Version::V0, &parties.fee_payer, &key(&f["blockhash"]), &ixs).unwrap();
    json!(b64_encode(&signed_wire(&m, &parties.payer, &[7; 64]).unwrap()))
}

fn bound(v: &Value, wire: &Value) -> Result<String, String> {
    bound_code(&presented(&option(v), wire))
}

fn memos() -> Outcome {
    let v = file();
    let l = v["fixed"]["L"].as_str().unwrap();
    let want_h = Ok(v["fixed"]["H"].as_str().unwrap().to_owned());
    eq("one memo", bound(&v, &wire_with(&v, vec![program::memo(l)])), want_h)?;
    eq("two memos", bound(&v, &wire_with(&v, vec![program::memo(l), program::memo(l)])), Err("svm/memo-count".into()))?;
    let v4 = Instruction { program: program::MEMO_V4, accounts: vec![], data: l.as_bytes().to_vec() };
    eq("a v3 and a v4 memo", bound(&v, &wire_with(&v, vec![program::memo(l), v4])), Err("svm/memo-count".into()))?;
    let elsewhere = Instruction { program: program::COMPUTE_BUDGET, accounts: vec![], data: l.as_bytes().to_vec() };
    eq("memo in the wrong instruction", bound(&v, &wire_with(&v, vec![elsewhere])), Err("svm/memo-count".into()))?;
    let other = format!("lcp:sha256:0x{}", "11".repeat(32));
    eq("another H", bound(&v, &wire_with(&v, vec![program::memo(&other)])), Err("svm/carrier-mismatch".into()))?;
    let bytes = Instruction { program: program::MEMO_V3, accounts: vec![], data: vec![0xff, 0xfe] };
    eq("not UTF-8", bound(&v, &wire_with(&v, vec![bytes])), Err("svm/memo-not-utf8".into()))?;
    // The build refuses an option whose memo names another H, and one with no memo.
    for memo in [json!(other), Value::Null] {
        let mut c = choice(&v);
        let mut o = option(&v);
        if memo.is_null() {
            o["extra"].as_object_mut().unwrap().remove("memo");
        } else {
            o["extra"]["memo"] = memo;
        }
        c.insert("required".into(), document(&v, &o));
        c.insert("accepted".into(), o);
        eq("build, another memo", message(&v, &chosen(c)).map(drop), Err("svm/carrier-mismatch".into()))?;
    }
    Ok(())
}

/// The opening moves the deposit from the payer's associated token account of the option's mint to the channel's;
/// another mint or payee in the option moves the channel and its accounts with it.
fn deposit_accounts() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    let token = key(&f["tokenProgram"]);
    for (member, other) in [("none", Value::Null), ("payTo", f["payer"].clone()), ("asset", f["payTo"].clone())] {
        let mut c = choice(&v);
        let mut o = option(&v);
        if member != "none" {
            o[member] = other.clone();
        }
        c.insert("required".into(), document(&v, &o));
        c.insert("accepted".into(), o.clone());
        let tx = built(&v, &chosen(c))?;
        let (mint, pay_to) = (key(&o["asset"]), key(&o["payTo"]));
        let channel = channel_address(
            &key(&f["payer"]),
            &key(&f["feePayer"]),
            &mint,
            &key(&f["receiverAuthorizer"]),
            7,
            341_000_000,
        )
        .unwrap();
        eq(&format!("{member}: channel"), channel_instruction(&tx).unwrap().channel, channel)?;
        let ix = &tx.instructions[2];
        let at = |i: usize| tx.keys[usize::from(ix.accounts[i])];
        eq(&format!("{member}: mint"), at(3), mint)?;
        eq(
            &format!("{member}: payer's account"),
            at(6),
            associated_token_address(&key(&f["payer"]), &token, &mint).unwrap(),
        )?;
        eq(&format!("{member}: channel's account"), at(7), associated_token_address(&channel, &token, &mint).unwrap())?;
        eq(&format!("{member}: recipient"), &ix.data[33..65], &pay_to.as_bytes()[..])?;
    }
    Ok(())
}

fn choose(v: &Value, doc_option: &Value, inputs: &Value) -> Result<Chosen, String> {
    let doc = document(v, doc_option);
    let read = pairing().read(&doc).map_err(|r| r.code())?;
    let account = v["buyer"]["rows"][0]["input"]["account"].as_str().unwrap();
    let inputs = inputs.as_object().unwrap();
    let now = v["fixed"]["now"].as_u64().unwrap();
    let ctx = ChooseContext { account, inputs, now, reference: "r", doc: &doc };
    let mut c = pairing().choose(&read, &ctx).map_err(|r| r.code())?;
    pairing().keep_document(&mut c, std::borrow::Cow::Owned(doc.clone()));
    Ok(c)
}

fn inputs(v: &Value) -> Value {
    v["buyer"]["rows"][0]["input"]["inputs"].clone()
}

/// The message's blockhash is the buyer's and its fee payer the option's; a blockhash absent or not a key, and a
/// fee payer not a key, are refused.
fn blockhash_and_fee_payer() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    let tx = built(&v, &choose(&v, &option(&v), &inputs(&v))?)?;
    eq("blockhash", tx.blockhash, key(&f["blockhash"]))?;
    eq("fee payer", tx.keys[0], key(&f["feePayer"]))?;
    let mut other = inputs(&v);
    other["recentBlockhash"] = f["payTo"].clone();
    eq("another blockhash", built(&v, &choose(&v, &option(&v), &other)?)?.blockhash, key(&f["payTo"]))?;
    let mut none = inputs(&v);
    none.as_object_mut().unwrap().remove("recentBlockhash");
    eq("no blockhash", choose(&v, &option(&v), &none).map(drop), Err("x402/input-missing".into()))?;
    let mut bad = inputs(&v);
    bad["recentBlockhash"] = json!("not-a-key");
    eq("not a key", built(&v, &choose(&v, &option(&v), &bad)?).map(drop), Err("svm/input-malformed".into()))?;
    let mut fee_payer = option(&v);
    fee_payer["extra"]["feePayer"] = json!("not-a-key");
    eq("a fee payer not a key", choose(&v, &fee_payer, &inputs(&v)).map(drop), Err("x402/no-payable-option".into()))
}

/// The channel's own inputs: a salt or open slot past u64 at choose, an open slot past 2^53 - 1 (the payment's JSON
/// number) or a time that is no non-negative integer at build, a salt that is no decimal string in the choice.
fn channel_inputs() -> Outcome {
    let v = file();
    let past = "18446744073709551616";
    for name in ["nonce", "openSlot"] {
        let mut i = inputs(&v);
        i[name] = json!(past);
        eq(&format!("{name} past u64"), choose(&v, &option(&v), &i).map(drop), Err("x402/input-missing".into()))?;
        i[name] = json!(7);
        eq(&format!("{name} a number"), choose(&v, &option(&v), &i).map(drop), Err("x402/input-missing".into()))?;
    }
    let mut i = inputs(&v);
    i.as_object_mut().unwrap().remove("nonce");
    let a = choose(&v, &option(&v), &i)?;
    let b = choose(&v, &option(&v), &i)?;
    let salt = |c: &Chosen| c.build_input["nonce"].as_str().unwrap().parse::<u64>().unwrap();
    assert_ne!(salt(&a), salt(&b), "a fresh salt for each choice");
    eq("a random salt builds", built(&v, &a).map(drop), Ok(()))?;
    let cases = [
        ("openSlot", json!("9007199254740992"), "svm/input-malformed"),
        ("openSlot", json!(341_000_000), "x402/choice-malformed"),
        ("nonce", json!(past), "svm/input-malformed"),
        ("nonce", json!("-1"), "x402/choice-malformed"),
        ("now", json!("1790000000"), "svm/input-malformed"),
        ("computeUnitLimit", json!(4_294_967_296u64), "svm/input-malformed"),
        ("computeUnitPrice", json!(past), "svm/input-malformed"),
        ("payer", json!("not-a-key"), "svm/input-malformed"),
    ];
    for (name, value, want) in cases {
        let mut c = choice(&v);
        c.insert(name.into(), value.clone());
        eq(&format!("{name} = {value}"), message(&v, &chosen(c)).map(drop), Err(want.into()))?;
    }
    Ok(())
}

/// Bytes that are not one transaction: not base64, empty, a wire cut short or with a byte after it, too long.
fn undecodable() -> Outcome {
    let v = file();
    let wire = b64(&v["EU3"]["wireBase64"]);
    let mut trailing = wire.clone();
    trailing.push(0);
    let cases = [
        (json!("not base64"), "svm/tx-malformed"),
        (json!(""), "svm/tx-malformed"),
        (json!(b64_encode(&wire[..wire.len() - 1])), "svm/tx-malformed"),
        (json!(b64_encode(&trailing)), "svm/tx-malformed"),
        (json!(b64_encode(&[0; 1233])), "svm/tx-too-large"),
        (json!(5), "svm/tx-malformed"),
    ];
    for (wire, want) in cases {
        eq(&format!("{wire:.40}"), bound(&v, &wire), Err(want.into()))?;
    }
    eq("decode trailing", decode(&trailing).map(drop).map_err(|r| r.code()), Err("svm/tx-malformed".into()))
}

fn signature_length() -> Outcome {
    let v = file();
    let c = chosen(choice(&v));
    let h = terms::AtrHash::parse(v["fixed"]["H"].as_str().unwrap()).unwrap();
    let unsigned = pairing().build(&c, b"abc", &h).map_err(|r| r.code())?;
    let good = format!("0x{}", "ab".repeat(64));
    eq("64 bytes", unsigned.complete(&[Answer::new(json!(good))], &c).map(drop).map_err(|r| r.code()), Ok(()))?;
    for answer in [
        json!(format!("0x{}", "ab".repeat(63))),
        json!(format!("0x{}", "ab".repeat(65))),
        json!("ab".repeat(64)),
        json!("0x"),
        json!(5),
    ] {
        let got = unsigned.complete(&[Answer::new(answer.clone())], &c).map(drop).map_err(|r| r.code());
        eq(&format!("{answer}"), got, Err("x402/signature-malformed".into()))?;
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("x402/upto/solana::bad input::memos", memos),
        Trial::test("x402/upto/solana::bad input::deposit accounts", deposit_accounts),
        Trial::test("x402/upto/solana::bad input::blockhash and fee payer", blockhash_and_fee_payer),
        Trial::test("x402/upto/solana::bad input::channel inputs", channel_inputs),
        Trial::test("x402/upto/solana::bad input::undecodable", undecodable),
        Trial::test("x402/upto/solana::bad input::signature length", signature_length),
    ]
}
