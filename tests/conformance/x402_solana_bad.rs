//! The issue's bad input for `x402/exact/solana`, from `x402-exact-solana.json`'s own values: the memo doubled, in
//! the wrong instruction or of another H; a transfer to another token account or mint; a blockhash or fee payer the
//! buyer did not give; a signature of the wrong length.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::Answer;
use terms::pairing::{ChooseContext, Chosen};
use terms::rail::solana::program::{self, TransferChecked};
use terms::rail::solana::{Instruction, Key, Transaction, Version, associated_token_address, compile, signed_wire};

use super::x402_solana::{built, choice, chosen, file, h, option, pairing, presented};
use crate::{Outcome, b64_encode, eq};

fn key(v: &Value) -> Key {
    Key::parse(v.as_str().unwrap()).unwrap()
}

/// V1's instructions with `memos` in place of its one memo, compiled and wrapped as a wire with empty slots.
fn wire_with(v: &Value, transfer_to: Option<Key>, memos: Vec<Instruction>) -> Value {
    let f = &v["fixed"];
    let (payer, mint, token) = (key(&f["payer"]), key(&f["mint"]), key(&f["tokenProgram"]));
    let transfer = TransferChecked {
        token_program: token,
        source: associated_token_address(&payer, &token, &mint).unwrap(),
        mint,
        destination: transfer_to.unwrap_or_else(|| associated_token_address(&key(&f["payTo"]), &token, &mint).unwrap()),
        authority: payer,
        amount: 1000,
        decimals: 6,
    };
    let mut ixs =
        vec![program::set_compute_unit_limit(20_000), program::set_compute_unit_price(1), transfer.instruction()];
    ixs.extend(memos);
    let message = compile(Version::V0, &key(&f["feePayer"]), &key(&f["blockhash"]), &ixs).unwrap();
    json!(b64_encode(&signed_wire(&message, &payer, &[7; 64]).unwrap()))
}

fn bound(v: &Value, wire: &Value) -> Result<String, String> {
    pairing().bound(&presented(&option(v), wire), None).map(|h| h.to_hex()).map_err(|r| r.code())
}

fn memos() -> Outcome {
    let v = file();
    let l = v["fixed"]["L"].as_str().unwrap();
    let want_h = Ok(v["fixed"]["H"].as_str().unwrap().to_owned());
    eq("one memo", bound(&v, &wire_with(&v, None, vec![program::memo(l)])), want_h)?;
    let two = vec![program::memo(l), program::memo(l)];
    eq("two memos", bound(&v, &wire_with(&v, None, two)), Err("svm/memo-count".into()))?;
    let v4 = Instruction { program: program::MEMO_V4, accounts: vec![], data: l.as_bytes().to_vec() };
    eq(
        "a v3 and a v4 memo",
        bound(&v, &wire_with(&v, None, vec![program::memo(l), v4])),
        Err("svm/memo-count".into()),
    )?;
    // L carried in another program's instruction: the message has no Memo instruction.
    let elsewhere = Instruction { program: program::COMPUTE_BUDGET, accounts: vec![], data: l.as_bytes().to_vec() };
    eq(
        "memo in the wrong instruction",
        bound(&v, &wire_with(&v, None, vec![elsewhere])),
        Err("svm/memo-count".into()),
    )?;
    eq("no memo", bound(&v, &wire_with(&v, None, vec![])), Err("svm/memo-count".into()))?;
    let other = format!("lcp:sha256:0x{}", "11".repeat(32));
    eq("another H", bound(&v, &wire_with(&v, None, vec![program::memo(&other)])), Err("svm/carrier-mismatch".into()))?;
    let bytes = Instruction { program: program::MEMO_V3, accounts: vec![], data: vec![0xff, 0xfe] };
    eq("not UTF-8", bound(&v, &wire_with(&v, None, vec![bytes])), Err("svm/memo-not-utf8".into()))?;
    // The build refuses an option whose memo names another H, and one with no memo.
    for memo in [json!(other), Value::Null] {
        let mut c = choice(&v, true);
        let mut o = option(&v);
        if memo.is_null() {
            o["extra"].as_object_mut().unwrap().remove("memo");
        } else {
            o["extra"]["memo"] = memo;
        }
        c.insert("required".into(), super::x402_solana::document(&v, &o));
        c.insert("accepted".into(), o);
        eq("build, another memo", built(&v, &chosen(c)).map(drop), Err("svm/carrier-mismatch".into()))?;
    }
    Ok(())
}

fn transfer_of(tx: &Transaction) -> TransferChecked {
    let t = &tx.instructions[2];
    TransferChecked::read(*tx.program_of(t).unwrap(), &t.accounts, &t.data, &tx.keys).unwrap()
}

/// The build pays the payee's associated token account of the option's mint, and nothing else; another payee or
/// mint in the option moves the transfer with it. A wire whose transfer goes elsewhere still carries H (the
/// reference's bound reads the memo only; the seller's facilitator checks the transfer before it co-signs).
fn transfer() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    let tx = built(&v, &chosen(choice(&v, true)))?;
    let t = transfer_of(&tx);
    eq("destination", t.destination.to_base58(), v["V1"]["destinationAta"].as_str().unwrap().into())?;
    eq("source", t.source.to_base58(), v["V1"]["sourceAta"].as_str().unwrap().into())?;
    eq("mint", t.mint, key(&f["mint"]))?;
    eq("amount", t.amount.to_string(), f["amount"].as_str().unwrap().into())?;
    for (member, other) in [("payTo", f["feePayer"].clone()), ("asset", f["payTo"].clone())] {
        let mut c = choice(&v, true);
        let mut o = option(&v);
        o[member] = other.clone();
        c.insert("required".into(), super::x402_solana::document(&v, &o));
        c.insert("accepted".into(), o.clone());
        let t = transfer_of(&built(&v, &chosen(c))?);
        let (owner, mint) = (key(&o["payTo"]), key(&o["asset"]));
        let want = associated_token_address(&owner, &key(&f["tokenProgram"]), &mint).unwrap();
        eq(&format!("{member}: destination"), t.destination, want)?;
        eq(&format!("{member}: mint"), t.mint, mint)?;
    }
    let elsewhere = wire_with(&v, Some(key(&f["payTo"])), vec![program::memo(f["L"].as_str().unwrap())]);
    eq("bound, transfer elsewhere", bound(&v, &elsewhere), Ok(f["H"].as_str().unwrap().into()))
}

fn choose(v: &Value, doc_option: &Value, inputs: &Value) -> Result<Chosen, String> {
    let doc = super::x402_solana::document(v, doc_option);
    let read = pairing().read(&doc).map_err(|r| r.code())?;
    let account = v["buyer"]["rows"][0]["input"]["account"].as_str().unwrap();
    let inputs = inputs.as_object().unwrap();
    let ctx = ChooseContext { account, inputs, now: 0, reference: "r", doc: &doc };
    let mut c = pairing().choose(&read, &ctx).map_err(|r| r.code())?;
    pairing().keep_document(&mut c, std::borrow::Cow::Owned(doc.clone()));
    Ok(c)
}

/// The message's blockhash is the buyer's (or the option's `extra.recentBlockhash`, the reference's rule), its fee
/// payer the option's; none other is written, and a blockhash that is absent or not a key is refused.
fn blockhash_and_fee_payer() -> Outcome {
    let v = file();
    let f = &v["fixed"];
    let inputs = v["buyer"]["rows"][0]["input"]["inputs"].clone();
    let tx = built(&v, &choose(&v, &option(&v), &inputs)?)?;
    eq("blockhash", tx.blockhash, key(&f["blockhash"]))?;
    eq("fee payer", tx.keys[0], key(&f["feePayer"]))?;
    let mut offered = option(&v);
    offered["extra"]["recentBlockhash"] = f["payTo"].clone();
    let tx = built(&v, &choose(&v, &offered, &inputs)?)?;
    eq("offered blockhash", tx.blockhash, key(&f["payTo"]))?;
    let mut no_blockhash = inputs.clone();
    no_blockhash.as_object_mut().unwrap().remove("recentBlockhash");
    eq("no blockhash", choose(&v, &option(&v), &no_blockhash).map(drop), Err("x402/input-missing".into()))?;
    let mut bad = inputs.clone();
    bad["recentBlockhash"] = json!("not-a-key");
    eq(
        "a blockhash not a key",
        built(&v, &choose(&v, &option(&v), &bad)?).map(drop),
        Err("svm/input-malformed".into()),
    )?;
    let mut fee_payer = option(&v);
    fee_payer["extra"]["feePayer"] = json!("not-a-key");
    eq("a fee payer not a key", choose(&v, &fee_payer, &inputs).map(drop), Err("x402/no-payable-option".into()))?;
    fee_payer["extra"].as_object_mut().unwrap().remove("feePayer");
    eq("no fee payer", choose(&v, &fee_payer, &inputs).map(drop), Err("x402/no-payable-option".into()))
}

fn signature_length() -> Outcome {
    let v = file();
    let c = chosen(choice(&v, true));
    let unsigned = pairing().build(&c, b"abc", &h(&v)).map_err(|r| r.code())?;
    let good = format!("0x{}", "ab".repeat(64));
    eq("64 bytes", unsigned.complete(&[Answer::new(json!(good))], &c).map(drop).map_err(|r| r.code()), Ok(()))?;
    let bad = [
        json!(format!("0x{}", "ab".repeat(63))),
        json!(format!("0x{}", "ab".repeat(65))),
        json!(format!("0x{}", "ab".repeat(32))),
        json!("1".repeat(64)),
        json!("ab".repeat(64)),
        json!("0x"),
        json!(5),
    ];
    for answer in bad {
        let got = unsigned.complete(&[Answer::new(answer.clone())], &c).map(drop).map_err(|r| r.code());
        eq(&format!("{answer}"), got, Err("x402/signature-malformed".into()))?;
    }
    let two = [Answer::new(json!(good)), Answer::new(json!(good))];
    eq(
        "two answers",
        unsigned.complete(&two, &c).map(drop).map_err(|r| r.code()),
        Err("x402/signature-malformed".into()),
    )
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("x402/exact/solana::bad input::memos", memos),
        Trial::test("x402/exact/solana::bad input::transfer", transfer),
        Trial::test("x402/exact/solana::bad input::blockhash and fee payer", blockhash_and_fee_payer),
        Trial::test("x402/exact/solana::bad input::signature length", signature_length),
    ]
}
