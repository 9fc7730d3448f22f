//! The buyer's inputs through the gate's `confirm`, driven by each built pairing's own specs (`Pairing::inputs`) and
//! its vector row: every rule of every spec declines `no-payable-option` with `<namespace>/input-missing` before
//! anything is fetched, what the specs take gets past the choice, a member no spec names is ignored, and an input the option stands in
//! for is ignored where the option has it.

use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::pairing::{InputFormat, InputType, namespace};
use terms::{DeclineCode, InputSpec, confirm};

use super::quote::{Case, cases};
use crate::support::{Reply, ScriptedFetch, paused};
use crate::{Outcome, eq};

pub fn trials() -> Vec<Trial> {
    let mut all = Vec::new();
    let mut cases = cases();
    cases.extend(super::quote_mpp::cases());
    for id in terms::built_ids() {
        let pairing = terms::pairing(id).unwrap();
        // The first vector document each pairing confirms, with the row's own inputs.
        let Some(case) = cases.iter().find(|c| c.pairing.id() == id).cloned() else { continue };
        let other = case.clone();
        all.push(Trial::test(format!("inputs::{id}::every spec's rules decline"), move || every_rule_declines(&case)));
        all.push(Trial::test(format!("inputs::{id}::an unpayable account is declined before its inputs"), move || {
            unpayable_first(&other)
        }));
        let count = pairing.inputs().len();
        all.push(Trial::test(format!("inputs::{id}::{count} inputs, named once each"), move || {
            let names: Vec<&str> = pairing.inputs().iter().map(|s| s.name).collect();
            let mut distinct = names.clone();
            distinct.sort_unstable();
            distinct.dedup();
            eq("distinct names", distinct.len(), names.len())
        }));
    }
    all
}

/// A value of another JSON type than the spec's.
fn other_type(ty: InputType) -> Value {
    match ty {
        InputType::String => json!(1),
        _ => json!("1"),
    }
}

/// Values of the spec's type that its form refuses.
fn other_forms(format: InputFormat) -> Vec<Value> {
    match format {
        InputFormat::Hex(bytes) => vec![
            json!(format!("0x{}", "a".repeat(2 * bytes - 1))),
            json!(format!("0x{}", "a".repeat(2 * bytes + 2))),
            json!(format!("0x{}g", "a".repeat(2 * bytes - 1))),
            json!("a".repeat(2 * bytes + 2)),
            json!("0x01"),
        ],
        InputFormat::Decimal => vec![json!(""), json!("1.5"), json!("-1"), json!(" 1"), json!("9".repeat(79))],
        InputFormat::NonEmpty => vec![json!("")],
        _ => vec![],
    }
}

/// What the gate says of the case with these inputs: `Ok` once confirmed, else the decline's code and detail, and
/// whether anything was fetched.
fn confirmed_with(case: &Case, doc: &Value, inputs: Map<String, Value>) -> (Result<(), (DeclineCode, String)>, usize) {
    let link = case.pairing.read(doc).map(|r| r.link).unwrap_or_default();
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(case.atr.clone())]);
    let options = Case { inputs, ..case.clone() }.options();
    let got = paused().block_on(confirm(doc, case.pairing, &case.account, &fetch, &options));
    (got.map(drop).map_err(|d| (d.code, d.detail)), fetch.asked().len())
}

fn declines(case: &Case, doc: &Value, inputs: Map<String, Value>, what: &str) -> Outcome {
    let missing = format!("{}/input-missing", namespace(case.pairing.id()));
    let (got, fetched) = confirmed_with(case, doc, inputs);
    eq(what, got, Err((DeclineCode::NoPayableOption, missing)))?;
    eq(&format!("{what}: fetches"), fetched, 0)
}

/// The optional inputs a build needs for the option the row's other inputs choose: without one, the build refuses
/// (`offer-unreadable`, `<namespace>/input-malformed`), after the choice and the fetch. An MPP EVM session opening by
/// authorization is signed under the token's EIP-712 domain, which no other funding reads.
const NEEDED_BY_THE_BUILD: [(&str, &str); 1] = [("mpp/session/evm", "tokenDomain")];

/// The gate gets past the choice: it fetches the ATR once, and confirms (or, for a pairing that is no public proof
/// and a document that names no agreement, declines `agreement-not-offered`, which comes after the fetch; or, without
/// an optional input the build needs, declines as [`NEEDED_BY_THE_BUILD`] says).
fn takes(case: &Case, doc: &Value, inputs: Map<String, Value>, what: &str) -> Outcome {
    let needed = NEEDED_BY_THE_BUILD
        .iter()
        .any(|(id, name)| *id == case.pairing.id() && !inputs.contains_key(*name) && case.inputs.contains_key(*name));
    let (got, fetched) = confirmed_with(case, doc, inputs);
    eq(&format!("{what}: fetches"), fetched, 1)?;
    match got {
        Err((DeclineCode::AgreementNotOffered, _)) if !case.pairing.public_proof() => Ok(()),
        got if needed => {
            let malformed = format!("{}/input-malformed", namespace(case.pairing.id()));
            eq(what, got, Err((DeclineCode::OfferUnreadable, malformed)))
        }
        got => eq(what, got, Ok(())),
    }
}

fn with(inputs: &Map<String, Value>, name: &str, value: Option<Value>) -> Map<String, Value> {
    let mut inputs = inputs.clone();
    match value {
        Some(v) => drop(inputs.insert(name.to_owned(), v)),
        None => drop(inputs.shift_remove(name)),
    }
    inputs
}

/// The case's document with the option naming the member an input stands in for, with the input's own value.
fn offering(case: &Case, spec: &InputSpec, member: &str) -> Result<Value, Failed> {
    let mut doc = case.doc.clone();
    let value = case.inputs.get(spec.name).cloned().ok_or("the row gives no value for an offered input")?;
    let mut at = &mut doc["accepts"][0];
    let (last, parents) = member.split('.').collect::<Vec<_>>().split_last().map(|(l, p)| (*l, p.to_vec())).unwrap();
    for p in parents {
        at = &mut at[p];
    }
    at[last] = value;
    Ok(doc)
}

/// Whether the option the row's document offers makes an optional input required: an XRPL x402 option transfers by
/// sequence or by ticket (`extra.assetTransferMethod`), and the choice, as the reference's piece
/// (`pieces/x402_exact_xrpl.py`'s inputs), refuses `x402/input-missing` without the one it names, before the fetch.
fn required_by_the_option(case: &Case, name: &str) -> bool {
    let ticket = case.doc["accepts"][0]["extra"]["assetTransferMethod"] == "ticketSequence";
    case.pairing.id() == "x402/exact/xrpl" && name == if ticket { "ticketSequence" } else { "sequence" }
}

fn every_rule_declines(case: &Case) -> Outcome {
    let (doc, inputs) = (&case.doc, &case.inputs);
    takes(case, doc, inputs.clone(), "the row's inputs")?;
    takes(case, doc, with(inputs, "noInputNamesThis", Some(json!({"any": [1]}))), "an unknown member")?;
    for spec in case.pairing.inputs() {
        let name = spec.name;
        let mut wrong = vec![Value::Null, other_type(spec.ty)];
        wrong.extend(other_forms(spec.format));
        for v in &wrong {
            declines(case, doc, with(inputs, name, Some(v.clone())), &format!("{name} = {v}"))?;
        }
        match (spec.required, spec.offered) {
            (true, _) => declines(case, doc, with(inputs, name, None), &format!("without {name}"))?,
            (false, _) if required_by_the_option(case, name) => {
                declines(case, doc, with(inputs, name, None), &format!("without {name}"))?;
            }
            (false, _) => takes(case, doc, with(inputs, name, None), &format!("without {name}"))?,
        }
        if let Some(member) = spec.offered {
            // The option has it: the input is ignored, absent or malformed.
            let offered = offering(case, spec, member)?;
            takes(case, &offered, with(inputs, name, None), &format!("without {name}, the option having {member}"))?;
            for v in &wrong {
                let what = format!("{name} = {v}, the option having {member}");
                takes(case, &offered, with(inputs, name, Some(v.clone())), &what)?;
            }
        }
    }
    Ok(())
}

/// The pairings whose choice reads no account (MPP card and Stripe: the buyer signs nothing, on no network).
const ANY_ACCOUNT: [&str; 3] = ["mpp/charge/card", "mpp/charge/stripe", "mpp/subscription/stripe"];

/// An account on a network the offer names no option on, with every input malformed: the choice finds no option
/// before the inputs are read, as the reference's does, so the decline is `no-payable-option` itself.
fn unpayable_first(case: &Case) -> Outcome {
    let mut parts = case.account.splitn(3, ':');
    let (Some(ns), Some(_), Some(address)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("the row's account is not CAIP-10".into());
    };
    let elsewhere = Case { account: format!("{ns}:999999:{address}"), ..case.clone() };
    let mut inputs = Map::new();
    for spec in case.pairing.inputs() {
        inputs.insert(spec.name.to_owned(), other_type(spec.ty));
    }
    let (got, fetched) = confirmed_with(&elsewhere, &case.doc, inputs);
    if ANY_ACCOUNT.contains(&case.pairing.id()) {
        // Nothing is signed, so the account is never read: the other account gets past the choice as the row's does.
        eq("fetches", fetched, 1)?;
        return eq("decline", got.map_err(|(code, _)| code), Err(DeclineCode::AgreementNotOffered));
    }
    let unpayable = format!("{}/no-payable-option", namespace(case.pairing.id()));
    eq("decline", got, Err((DeclineCode::NoPayableOption, unpayable)))?;
    eq("fetches", fetched, 0)
}
