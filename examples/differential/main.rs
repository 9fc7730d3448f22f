//! The crate's side of the differential test against the Python reference (`scripts/differential.sh`): reads cases
//! as JSON lines on stdin, runs each through `confirm`, `finish`, `check` and `transact`, and writes one JSON line of
//! outcomes per case on stdout, in the form `scripts/differential/peer.py` writes the reference's. The clock is
//! fixed and the payment ids come from a per-case counter, so both sides write the same bytes.
//!
//! With nothing on stdin it does nothing and exits 0 (CI runs every example with `</dev/null`). The line
//! `{"builtIds": true}` is answered with the pairings this build implements.
//!
//! Case form (written by `scripts/differential/generate.py` and `mpp.py`): `{id, seq, pairing, now, doc, account, inputs?, routes,
//! finish: [{answers, bytesHex?, as?}], checks: [{bytesHex, presented, landed?}], transact?: {account, key, edit,
//! erc7710, approve, approveEdit?, agreementSigner?}}`. Beside each check, the pairing's own `bound` of the presented
//! payment is written (the hash, or the refusal code `check` hides). A route answers a URL: `unpaid` for a request
//! without `PAYMENT-SIGNATURE`, `paid` for one with it; a reply is `{status, headers, body}` or `{error: true}`. An
//! answer is a JSON value as given, or a spec computed against the request it answers (`answers.rs`): `$sign`, `$tx`,
//! `$gateway`, `$tempo`, `$pushed`. A later answer of a finish call answers the request the answers before it lead to (a payment signed in
//! steps, such as the MPP session's funding and voucher).
//!
//! An MPP case's document is a JSON challenge list, or `headers`: `WWW-Authenticate` values, which the crate reads with
//! `terms::mpp::decode_challenges` (its list, or its refusal, is written beside the outcomes). A confirmed MPP choice
//! writes the challenge chosen; a finished MPP credential its `Authorization: Payment` value, which
//! `terms::mpp::decode_credential` must read back to the credential.
//!
//! Every confirmed case writes its whole [`terms::pairing::Chosen`] (`confirmed.chosen`, compact JSON); a case that
//! carries a `chosen` (`scripts/differential/cross.py`: the reference's) is finished from that `Chosen` instead of
//! ours: the cross-language round trip.

mod answers;
mod routes;
mod tempo;

use std::io::{BufRead, Write};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use terms::{
    AgreementPayment, Answer, Declined, Finish, FixedClock, Options, Pairing, Payment, SigningRequest, TransactOutcome,
    check, check_landed, confirm, finish, transact,
};

use answers::{Wallet, answer_of, local};
use routes::{Routes, SeqIds};

/// The object with one more member.
fn with(mut object: Value, key: &str, value: Value) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert(key.to_owned(), value);
    }
    object
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn declined(d: &Declined) -> Value {
    let moved = d.moved.as_ref().map(|m| json!({"signed": compact(&m.signed), "h": m.h.to_hex()}));
    json!({"declined": {"code": d.code.as_str(), "detail": d.detail, "moved": moved}})
}

fn request_json(request: Option<&SigningRequest>) -> Value {
    request.map_or(Value::Null, SigningRequest::to_json)
}

/// The pairing's own read of a presented payment, which `check` turns into a fixed sentence: the hash, or the
/// refusal code.
fn bound_of(pairing: &dyn Pairing, presented: &Value) -> Value {
    match pairing.bound(presented, None) {
        Ok(h) => json!({ "h": h.to_hex() }),
        Err(r) => json!({ "refused": r.code() }),
    }
}

fn pairing_of(id: &str) -> Option<&'static dyn Pairing> {
    terms::pairing(id).ok()
}

fn options(case: &Value) -> Options {
    let seq = case.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let now = case.get("now").and_then(Value::as_u64).unwrap_or(0);
    let inputs = case.get("inputs").and_then(Value::as_object).cloned().unwrap_or_default();
    Options::new().clock(FixedClock(now)).ids(SeqIds { seq, n: AtomicU64::new(0) }).inputs(inputs)
}

fn bytes_of(hex: Option<&Value>) -> Option<Vec<u8>> {
    hex.and_then(Value::as_str).and_then(|h| hex::decode(h).ok())
}

/// An MPP credential's `Authorization: Payment` value, once `terms::mpp::decode_credential` reads it back to the
/// credential itself (`"does not read back"` otherwise: a difference the comparer shows).
fn authorization(signed: &Payment) -> Value {
    let Some(value) = signed.authorization() else { return Value::Null };
    match terms::mpp::decode_credential(&value) {
        Ok(back) if compact(&back) == compact(&signed.to_value()) => Value::String(value),
        _ => json!("does not read back"),
    }
}

fn transaction(result: &Result<TransactOutcome, Declined>, mpp: bool) -> Value {
    match result {
        Err(d) => declined(d),
        Ok(TransactOutcome::Signed(t)) => {
            let mut out = json!({
                "signed": t.signed.as_ref().map(|p| compact(&p.to_value())),
                "h": t.h.to_hex(),
                "agreement": t.agreement.as_ref().map(|r| json!({
                    "atrHash": r.atr_hash, "agreed": r.agreed, "network": r.network, "transaction": r.transaction,
                })),
                "landed": t.landed.as_ref().map(compact),
            });
            if mpp {
                out = with(out, "authorization", t.signed.as_ref().map_or(Value::Null, authorization));
            }
            json!({ "signed": out })
        }
        Ok(TransactOutcome::ToApprove(t)) => json!({"toApprove": {
            "url": t.approve.url,
            "option": compact(&t.approve.option),
            "required": compact(&t.approve.required),
            "h": t.h.to_hex(),
        }}),
        Ok(_) => json!({"other": true}),
    }
}

/// The changes `scripts/differential/peer.py` makes the same way to the approved agreement payment before the
/// second call: the agent handing back something other than what it was given.
fn approve_edit(approve: &mut AgreementPayment, edit: &str) {
    let option = approve.option.as_object_mut();
    match (edit, option) {
        ("amount", Some(o)) => {
            o.insert("amount".into(), json!("2"));
        }
        ("drop-extra", Some(o)) => {
            o.shift_remove("extra");
        }
        ("other-network", Some(o)) => {
            o.insert("network".into(), json!("eip155:1"));
        }
        ("float-timeout", Some(o)) => {
            o.insert("maxTimeoutSeconds".into(), json!(60.0));
        }
        ("reorder", Some(o)) => {
            let reversed: Map<String, Value> = o.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
            *o = reversed;
        }
        ("url", _) => approve.url.push_str("/x"),
        ("no-accepts", _) => {
            if let Some(r) = approve.required.as_object_mut() {
                r.insert("accepts".into(), json!([]));
            }
        }
        ("version-1", _) => {
            if let Some(r) = approve.required.as_object_mut() {
                r.insert("x402Version".into(), json!(1));
            }
        }
        _ => {}
    }
}

async fn run_transact(case: &Value, pairing: &dyn Pairing, spec: &Value, fetch: &Routes) -> Value {
    let text = |k: &str| spec.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let wallet = Wallet {
        account: text("account"),
        key: local(&text("key")),
        edit: text("edit"),
        erc7710: spec.get("erc7710").cloned().unwrap_or(Value::Null),
        answers: spec.get("answers").and_then(Value::as_object).cloned().unwrap_or_default(),
    };
    let doc = case.get("doc").unwrap_or(&Value::Null);
    let mut opts = options(case);
    if let Some(other) = spec.get("agreementSigner") {
        let other_text = |k: &str| other.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let payer = Wallet {
            account: other_text("account"),
            key: local(&other_text("key")),
            edit: "none".into(),
            erc7710: Value::Null,
            answers: Map::new(),
        };
        opts = opts.agreement_signer(Arc::new(payer));
    }
    let mpp = pairing.id().starts_with("mpp/");
    let first = transact(doc, pairing, &wallet, fetch, &opts).await;
    let second = match (&first, spec.get("approve") == Some(&Value::Bool(true))) {
        (Ok(TransactOutcome::ToApprove(t)), true) => {
            let mut approve = t.approve.clone();
            approve_edit(&mut approve, spec.get("approveEdit").and_then(Value::as_str).unwrap_or("none"));
            Some(transaction(&transact(doc, pairing, &wallet, fetch, &opts.clone().approved(approve)).await, mpp))
        }
        _ => None,
    };
    let paid = fetch.paid.lock().map(|p| p.clone()).unwrap_or_default();
    json!({"first": transaction(&first, mpp), "second": second, "paid": paid})
}

async fn run_case(case: &Value) -> Value {
    let id = case.get("id").cloned().unwrap_or(Value::Null);
    let Some(pairing) = case.get("pairing").and_then(Value::as_str).and_then(pairing_of) else {
        return json!({"id": id, "error": "pairing not built"});
    };
    let routes = Routes {
        routes: Arc::new(case.get("routes").and_then(Value::as_object).cloned().unwrap_or_default()),
        paid: Arc::new(Mutex::new(Vec::new())),
    };
    let mpp = pairing.id().starts_with("mpp/");
    let mut headers = Value::Null;
    let read_case;
    let case = match case.get("headers").and_then(Value::as_array) {
        None => case,
        Some(values) => {
            // The case's document is what the crate reads from its WWW-Authenticate values, or their refusal.
            let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            match terms::mpp::decode_challenges(&values) {
                Err(e) => return json!({"id": id, "headers": {"refused": e.refusal().code()}}),
                Ok(list) => {
                    headers = json!({ "list": compact(&list) });
                    read_case = with(case.clone(), "doc", list);
                    &read_case
                }
            }
        }
    };
    let doc = case.get("doc").unwrap_or(&Value::Null);
    let account = case.get("account").and_then(Value::as_str).unwrap_or_default();
    let mut confirmed = confirm(doc, pairing, account, &routes, &options(case)).await;
    // The cross-language round trip: finish the `Chosen` the reference wrote for this case instead of our own.
    if let (Ok(c), Some(theirs)) = (&mut confirmed, case.get("chosen")) {
        match serde_json::from_value(theirs.clone()) {
            Ok(chosen) => c.chosen = chosen,
            Err(e) => return json!({"id": id, "chosen": format!("unreadable: {e}")}),
        }
    }
    let confirm_out = match &confirmed {
        Err(d) => declined(d),
        Ok(c) => {
            let mut out = json!({
                "request": request_json(c.request.as_ref()),
                "h": c.h.to_hex(),
                "agreement": c.chosen.agreement,
                "ref": c.chosen.reference,
                "chosen": serde_json::to_string(&c.chosen).unwrap_or_default(),
            });
            if mpp {
                out = with(
                    out,
                    "challenge",
                    json!(compact(c.chosen.build_input.get("challenge").unwrap_or(&Value::Null))),
                );
            }
            json!({ "confirmed": out })
        }
    };

    let mut finished: Option<Value> = None;
    let mut finishes = Vec::new();
    for spec in case.get("finish").and_then(Value::as_array).into_iter().flatten() {
        let Ok(c) = &confirmed else {
            finishes.push(Value::Null);
            continue;
        };
        let bytes = bytes_of(spec.get("bytesHex")).unwrap_or_else(|| c.bytes.clone());
        let as_pairing = spec.get("as").and_then(Value::as_str).and_then(pairing_of).unwrap_or(pairing);
        let mut answers: Vec<Answer> = Vec::new();
        for a in spec.get("answers").and_then(Value::as_array).into_iter().flatten() {
            // A later answer answers the request the answers before it lead to, or, where they lead to none, the
            // first request.
            let next = if answers.is_empty() {
                None
            } else {
                match finish(&bytes, &c.chosen, &answers, as_pairing) {
                    Ok(Finish::Next(n)) => Some(n.next),
                    _ => None,
                }
            };
            answers.push(Answer::new(answer_of(a, next.as_ref().or(c.request.as_ref()))));
        }
        let out = match finish(&bytes, &c.chosen, &answers, as_pairing) {
            Err(d) => declined(&d),
            Ok(Finish::Finished(f)) => {
                if finished.is_none() {
                    finished = Some(f.signed.to_value());
                }
                let landed = f.landed.as_ref().map(compact);
                let mut done = json!({"signed": compact(&f.signed.to_value()), "h": f.h.to_hex(), "landed": landed});
                if mpp {
                    done = with(done, "authorization", authorization(&f.signed));
                }
                json!({ "finished": done })
            }
            Ok(Finish::Next(n)) => json!({"next": {"request": n.next.to_json(), "h": n.h.to_hex()}}),
        };
        finishes.push(out);
    }

    let mut checks = Vec::new();
    for spec in case.get("checks").and_then(Value::as_array).into_iter().flatten() {
        let bytes = bytes_of(spec.get("bytesHex")).unwrap_or_default();
        let presented = match spec.get("presented") {
            Some(Value::String(s)) if s == "$signed" => finished.clone(),
            other => other.cloned(),
        };
        let Some(presented) = presented else {
            checks.push(Value::Null);
            continue;
        };
        let (result, bound) = match spec.get("landed") {
            Some(landed) => (check_landed(&bytes, &presented, Some(landed), pairing), Value::Null),
            None => (check(&bytes, &presented, pairing), bound_of(pairing, &presented)),
        };
        let checked = match result {
            Ok(c) => json!({"checked": c.h.to_hex()}),
            Err(d) => declined(&d),
        };
        checks.push(json!({"check": checked, "bound": bound}));
    }

    let transacted = match case.get("transact") {
        Some(spec) if spec.is_object() => {
            let fresh = Routes { routes: routes.routes.clone(), paid: Arc::new(Mutex::new(Vec::new())) };
            run_transact(case, pairing, spec, &fresh).await
        }
        _ => Value::Null,
    };
    let mut out =
        json!({"id": id, "confirm": confirm_out, "finish": finishes, "checks": checks, "transact": transacted});
    if !headers.is_null() {
        out = with(out, "headers", headers);
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let case: Value = serde_json::from_str(&line)?;
        if case.get("builtIds").is_some() {
            writeln!(out, "{}", json!({ "builtIds": terms::built_ids() }))?;
            continue;
        }
        let outcome = runtime.block_on(run_case(&case));
        writeln!(out, "{}", serde_json::to_string(&outcome)?)?;
    }
    out.flush()?;
    Ok(())
}
