//! A hand-edited choice (a `Chosen` is plain data a caller may keep, send and change) is refused by the quote with
//! the refusal the build gives, and neither panics: every member of the choice removed or replaced with odd values,
//! and the chosen option's members edited alike in the option and in the document, so that the edit reaches the
//! pairing's own checks.

use libtest_mimic::Failed;
use serde_json::{Value, json};
use terms::pairing::Chosen;

use super::quote::{Case, no_panic};
use crate::Outcome;

const CLOUDFLARE: &str = "x402/batch-settlement/cloudflare";

/// Values no member of a choice holds as written.
fn odd_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(1e300),
        json!(u64::MAX),
        json!(9_007_199_254_740_993_u64),
        json!(""),
        json!("x"),
        json!(format!("0x{}", "0".repeat(40))),
        json!("9".repeat(100)),
        json!([]),
        json!({}),
    ]
}

/// Edits of the chosen option's members.
fn option_edits() -> Vec<(&'static str, Value)> {
    let mut edits = vec![
        ("amount", json!("0")),
        ("amount", json!("01")),
        ("amount", json!("-1")),
        ("amount", json!("1.5")),
        ("amount", json!(1000)),
        ("amount", json!(format!("1{}", "0".repeat(77)))),
        ("amount", json!(format!("1{}", "0".repeat(80)))),
        ("amount", json!("340282366920938463463374607431768211456")),
        ("maxTimeoutSeconds", json!(0)),
        ("maxTimeoutSeconds", json!(-60)),
        ("maxTimeoutSeconds", json!("60")),
        ("maxTimeoutSeconds", json!(9_007_199_254_740_991_u64)),
        ("maxTimeoutSeconds", json!(281_474_976_710_656_u64)),
        ("maxTimeoutSeconds", json!(1e20)),
        ("network", json!("eip155:0")),
        ("network", json!("eip155:")),
        ("network", json!("cloudflare:402")),
        ("payTo", json!("0x0")),
        ("payTo", json!(format!("0x{}", "0".repeat(40)))),
        ("asset", json!(format!("0x{}", "0".repeat(40)))),
        ("asset", json!("usd")),
        ("scheme", json!("exact")),
        ("scheme", json!("upto")),
        ("extra", Value::Null),
        ("extra", json!({})),
    ];
    edits.extend(odd_values().into_iter().map(|v| ("amount", v)));
    edits
}

/// The choice with the chosen option's `member` replaced (or removed, for `None`) in the option and in the document.
fn with_option_member(chosen: &Chosen, path: &[&str], value: Option<&Value>) -> Chosen {
    let mut c = chosen.clone();
    let original = c.build_input["accepted"].clone();
    let edit = |option: &mut Value| {
        let (last, parents) = path.split_last().unwrap();
        let mut at = option;
        for p in parents {
            at = &mut at[*p];
        }
        match (value, at.as_object_mut()) {
            (Some(v), Some(m)) => drop(m.insert((*last).to_owned(), v.clone())),
            (None, Some(m)) => drop(m.remove(*last)),
            _ => {}
        }
    };
    edit(c.build_input.get_mut("accepted").unwrap());
    if let Some(accepts) =
        c.build_input.get_mut("required").and_then(|r| r.get_mut("accepts")).and_then(Value::as_array_mut)
    {
        accepts.iter_mut().filter(|o| **o == original).for_each(edit);
    }
    c
}

/// Every edit of the case's choice, named.
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
    if chosen.build_input.contains_key("challenge") {
        out.extend(challenge_edits(chosen));
        return out;
    }
    for (member, v) in option_edits() {
        out.push((format!("accepted.{member} = {v}"), with_option_member(chosen, &[member], Some(&v))));
    }
    let option = chosen.build_input["accepted"].clone();
    for member in option.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        out.push((format!("accepted without {member}"), with_option_member(chosen, &[&member], None)));
    }
    for member in option["extra"].as_object().map(|e| e.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        for v in [None, Some(Value::Null), Some(json!("")), Some(json!(1))] {
            let name = format!("accepted.extra.{member} = {v:?}");
            out.push((name, with_option_member(chosen, &["extra", &member], v.as_ref())));
        }
    }
    // The time at the edges of the window's arithmetic: 2^53 − 1, and 2^48 (the escrow's uint48 expiry).
    for now in [json!(9_007_199_254_740_991_u64), json!(281_474_976_710_656_u64), json!(-1)] {
        let mut c = chosen.clone();
        c.build_input.insert("now".into(), now.clone());
        out.push((format!("now = {now}"), c));
    }
    out
}

/// An MPP choice's edits: each member of the chosen challenge removed or replaced with odd values, and its request
/// replaced with the base64url of odd requests (the challenge's id and opaque still carrying H).
fn challenge_edits(chosen: &Chosen) -> Vec<(String, Chosen)> {
    use base64::Engine as _;
    let mut out = Vec::new();
    let challenge = chosen.build_input["challenge"].clone();
    let with_challenge = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut c = chosen.clone();
        edit(c.build_input.get_mut("challenge").and_then(Value::as_object_mut).unwrap());
        c
    };
    for member in challenge.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        out.push((format!("challenge without {member}"), with_challenge(&|c| drop(c.shift_remove(&member)))));
        for v in odd_values() {
            let name = format!("challenge.{member} = {v}");
            out.push((name, with_challenge(&|c| drop(c.insert(member.clone(), v.clone())))));
        }
    }
    let encode = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let raw = challenge["request"].as_str().unwrap_or_default();
    let request: Value = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(raw)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let mut requests: Vec<(String, Value)> = Vec::new();
    for member in request.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
        let mut r = request.clone();
        r.as_object_mut().unwrap().shift_remove(&member);
        requests.push((format!("request without {member}"), r));
        for v in odd_values() {
            let mut r = request.clone();
            r[&member] = v.clone();
            requests.push((format!("request.{member} = {v}"), r));
        }
    }
    for member in
        request["methodDetails"].as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
    {
        for v in [None, Some(Value::Null), Some(json!("")), Some(json!(1)), Some(json!(["permit2"]))] {
            let mut r = request.clone();
            let details = r["methodDetails"].as_object_mut().unwrap();
            match &v {
                None => drop(details.shift_remove(&member)),
                Some(v) => drop(details.insert(member.clone(), v.clone())),
            }
            requests.push((format!("request.methodDetails.{member} = {v:?}"), r));
        }
    }
    for (name, r) in requests {
        let encoded = json!(encode(&r));
        out.push((name, with_challenge(&|c| drop(c.insert("request".into(), encoded.clone())))));
    }
    out
}

/// Whether the edit is the one the quote refuses and the build takes: a Cloudflare amount of 2^256 or more, which
/// the build copies as written and no quote can hold.
fn unquotable_cloudflare_amount(case: &Case, chosen: &Chosen, built: &Result<(), String>) -> bool {
    case.pairing.id() == CLOUDFLARE
        && built.is_ok()
        && chosen.build_input["accepted"]["amount"].as_str().is_some_and(|a| a.len() > 78)
}

pub(crate) fn malformed_choices_are_refused_alike(case: &Case) -> Outcome {
    let chosen = case.chosen()?;
    let (atr, h) = (case.atr.clone(), case.h());
    let mut refused = 0;
    for (what, edited) in edits(&chosen) {
        let quoted = no_panic(&format!("quote, {what}"), || case.pairing.quote(&edited).map_err(|r| r.code()))?;
        let built = no_panic(&format!("build, {what}"), || {
            let unsigned = case.pairing.build(&edited, &atr, &h).map_err(|r| r.code())?;
            unsigned.request().map(drop).map_err(|r| r.code())
        })?;
        if unquotable_cloudflare_amount(case, &edited, &built) {
            crate::eq(&format!("quote, {what}"), quoted.map(drop), Err("x402/option-malformed".to_owned()))?;
            continue;
        }
        refused += usize::from(quoted.is_err());
        crate::eq(&format!("quote and build, {what}"), quoted.map(drop), built)?;
    }
    if refused == 0 {
        return Err(Failed::from("no edit was refused"));
    }
    Ok(())
}
