//! The quote of every built MPP pairing, from the MPP vector files' own B2 documents: the chosen challenge's request
//! says what is paid (`amount` of `currency` to `recipient`, for Stripe the `networkId` profile), on the network MPP
//! names for it (for card and Stripe, which name none, `mpp:<method>`), under its intent, valid before its `expires`;
//! where the build hands the signer a request (the XRPL charge's Payment), the request carries the same; and a
//! hand-edited choice is refused by the quote with the refusal the build gives, never a panic.

use libtest_mimic::Failed;
use serde_json::{Value, json};
use terms::pairing::Chosen;
use terms::{atr_hash, built_ids};

use super::mpp_no_proof::{b64u_json, decoded, expires_unix, try_decoded};
use super::quote::{Case, no_panic};
use crate::support::{hex, vectors};
use crate::{Outcome, eq};

/// The MPP vector files, by name.
fn files() -> Vec<String> {
    let dir = format!("{}/tests/vectors", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("mpp-") && n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// Every B2 document of an MPP vector file whose pairing is built, with the ATR it advertises (the bytes of a check
/// row of any MPP file that hash to it), the row's account and inputs, and its time (else the vectors' shared clock).
pub(crate) fn cases() -> Vec<Case> {
    let files: Vec<(String, Value)> = files().into_iter().map(|n| (n.clone(), vectors(&n))).collect();
    let atrs: Vec<Vec<u8>> = files
        .iter()
        .flat_map(|(_, f)| f["buyer"]["rows"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["input"]["check"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["bytesHex"].as_str().map(hex))
        .collect();
    let mut out = Vec::new();
    for (name, file) in &files {
        for row in file["buyer"]["rows"].as_array().into_iter().flatten().filter(|r| r["name"] == "B2") {
            let id = row["pairing"].as_str().unwrap_or_default();
            let Some(id) = built_ids().into_iter().find(|b| *b == id) else { continue };
            // The pairings whose build is the payment (card, Stripe, NEAR Intents) and the XRPL charge, whose build
            // hands the signer a Payment that carries the quote ([`SIGNED`]); the EVM and Tempo charges and the
            // Tempo subscription, whose build signs, have their quotes checked in tests/mpp_evm.rs, tests/mpp_tempo.rs
            // and tests/mpp_subscription_tempo.rs.
            if id.starts_with("mpp/charge/evm/")
                || id.starts_with("mpp/charge/usdc/")
                || id.starts_with("mpp/charge/tempo/")
                // The Lightning charge hands the node an invoice to pay: its quote is checked in tests/lightning_mpp.rs.
                || id == "mpp/charge/lightning"
                || id.starts_with("mpp/session/")
                || id == "mpp/subscription/tempo"
                // The Solana charge signs a message: its quote and inputs are checked in tests/mpp_solana.rs.
                || id == "mpp/charge/solana"
                // The Stellar charge signs an authorization entry: its quote is checked in conformance/mpp_stellar.rs.
                || id == "mpp/charge/stellar"
            {
                continue;
            }
            let pairing = terms::pairing(id).unwrap();
            let input = &row["input"];
            let Ok(read) = pairing.read(&input["doc"]) else { continue };
            let Some(atr) = atrs.iter().find(|a| atr_hash(a) == read.h) else { continue };
            out.push(Case {
                label: format!("{name}:/buyer/B2::{id}"),
                pairing,
                doc: input["doc"].clone(),
                account: input["account"].as_str().unwrap().to_owned(),
                now: input["now"].as_u64().unwrap_or_else(super::mpp_no_proof::now),
                inputs: input["inputs"].as_object().cloned().unwrap_or_default(),
                atr: atr.clone(),
            });
        }
    }
    out
}

/// A JSON member as text.
fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

pub(crate) fn quote_says_the_challenge(case: &Case) -> Outcome {
    let chosen = case.chosen()?;
    let quote = case.pairing.quote(&chosen).map_err(|r| r.code())?;
    let c = &chosen.build_input["challenge"];
    let r = decoded(&c["request"]);
    eq("amount", quote.amount.to_string(), text(&r["amount"]))?;
    eq("asset", &quote.asset, &text(&r["currency"]))?;
    let payee = r.get("recipient").unwrap_or(&r["methodDetails"]["networkId"]);
    eq("payee", &quote.payee, &text(payee))?;
    let network = match terms::mpp::network(c) {
        Ok(n) => n,
        Err(r) if r.code() == "mpp/network-unnamed" => format!("mpp:{}", text(&c["method"])),
        Err(r) => return Err(r.code().into()),
    };
    eq("network", &quote.network, &network)?;
    eq("scheme", &quote.scheme, &text(&c["intent"]))?;
    eq("valid before", quote.valid_before, c.get("expires").map(|_| expires_unix(c)))?;
    eq("valid after", quote.valid_after, None)?;
    eq("deposit", quote.deposit, None)?;
    if let Some((_, places)) = SIGNED.iter().find(|(id, _)| *id == case.pairing.id()) {
        // The build hands the signer a transaction: it carries what the quote says.
        let unsigned = case.pairing.build(&chosen, &case.atr, &case.h()).map_err(|r| r.code())?;
        let request = json!({"request": unsigned.request().map_err(|r| r.code())?});
        let quoted = serde_json::to_value(&quote).unwrap();
        for (member, place) in *places {
            let at = request.pointer(place).ok_or_else(|| format!("nothing at {place}"))?;
            eq(&format!("{member} at {place}"), text(at), text(&quoted[member]))?;
        }
        return Ok(());
    }
    // The build is the payment: it hands the signer nothing, and the quote is what the buyer pays by its own means.
    let built = case.pairing.build(&chosen, &case.atr, &case.h()).map(drop);
    eq("build", built.map_err(|r| r.is_nothing_to_sign()), Err(true))
}

/// The charges quoted here whose build hands the signer a request, and where that request carries the quote's
/// members (the request's `amount` in drops of XRP, its `recipient`).
const SIGNED: &[(&str, &[(&str, &str)])] =
    &[("mpp/charge/xrpl", &[("amount", "/request/txJson/Amount"), ("payee", "/request/txJson/Destination")])];

/// Values no member of a choice or a challenge holds as written.
fn odd_values() -> Vec<Value> {
    vec![Value::Null, json!(true), json!(0), json!(-1), json!(1.5), json!(""), json!("x"), json!([]), json!({})]
}

/// The choice with its challenge edited.
fn with_challenge(chosen: &Chosen, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Chosen {
    let mut c = chosen.clone();
    if let Some(challenge) = c.build_input.get_mut("challenge").and_then(Value::as_object_mut) {
        edit(challenge);
    }
    c
}

/// Every edit of the case's choice, named: each member of the choice and of its challenge removed or given odd
/// values, the request's amount and carrier edited, and another challenge's id.
fn edits(chosen: &Chosen) -> Vec<(String, Chosen)> {
    let mut out = Vec::new();
    for key in chosen.build_input.keys() {
        let mut c = chosen.clone();
        c.build_input.shift_remove(key);
        out.push((format!("without {key}"), c));
        for v in odd_values() {
            let mut c = chosen.clone();
            c.build_input.insert(key.clone(), v.clone());
            out.push((format!("{key} = {v}"), c));
        }
    }
    let challenge = chosen.build_input["challenge"].as_object().cloned().unwrap_or_default();
    for member in challenge.keys() {
        let m = member.clone();
        out.push((format!("challenge without {member}"), with_challenge(chosen, |c| drop(c.shift_remove(&m)))));
        for v in odd_values() {
            let m = member.clone();
            let name = format!("challenge.{member} = {v}");
            out.push((name, with_challenge(chosen, |c| drop(c.insert(m, v)))));
        }
    }
    let request = decoded(&challenge["request"]);
    let edits: Vec<(&str, Value)> = vec![
        ("amount", json!("1.5")),
        ("amount", json!(4999)),
        ("amount", json!(format!("1{}", "0".repeat(80)))),
        ("externalId", json!(7)),
        ("externalId", json!("order_12345")),
        ("methodDetails", json!("x")),
    ];
    for (member, v) in edits {
        let mut r = request.clone();
        r[member] = v.clone();
        let raw = json!(b64u_json(&r));
        out.push((
            format!("request.{member} = {v}"),
            with_challenge(chosen, |c| drop(c.insert("request".into(), raw))),
        ));
    }
    let id = challenge.get("id").and_then(Value::as_str).unwrap_or_default();
    let other = terms::mpp::challenge_id(&atr_hash(b"abd"), 0).unwrap();
    if id != other {
        out.push(("another H's id".into(), with_challenge(chosen, |c| drop(c.insert("id".into(), json!(other))))));
    }
    out
}

/// Whether only the quote reads what the edit broke: the request's `amount`, which the build (that builds nothing)
/// never reads.
fn amount_unreadable(edited: &Chosen) -> bool {
    let c = &edited.build_input["challenge"];
    let amount = c.get("request").and_then(try_decoded).map(|r| r["amount"].clone());
    amount.is_some_and(|a| {
        !a.as_str().is_some_and(|a| !a.is_empty() && a.len() <= 78 && a.bytes().all(|b| b.is_ascii_digit()))
    })
}

pub(crate) fn malformed_choices_are_refused_alike(case: &Case) -> Outcome {
    let chosen = case.chosen()?;
    let (atr, h) = (case.atr.clone(), case.h());
    let mut refused = 0;
    for (what, edited) in edits(&chosen) {
        let quoted =
            no_panic(&format!("quote, {what}"), || case.pairing.quote(&edited).map(drop).map_err(|r| r.code()))?;
        let built = no_panic(&format!("build, {what}"), || match case.pairing.build(&edited, &atr, &h) {
            Err(r) if r.is_nothing_to_sign() => Ok(()),
            Err(r) => Err(r.code()),
            Ok(_) if SIGNED.iter().any(|(id, _)| *id == case.pairing.id()) => Ok(()),
            Ok(_) => Err("built something to sign".to_owned()),
        })?;
        if built.is_ok() && quoted.is_err() && amount_unreadable(&edited) {
            eq(&format!("quote, {what}"), quoted, Err("mpp/request-malformed".to_owned()))?;
            continue;
        }
        refused += usize::from(quoted.is_err());
        eq(&format!("quote and build, {what}"), quoted, built)?;
    }
    if refused == 0 {
        return Err(Failed::from("no edit was refused"));
    }
    Ok(())
}
