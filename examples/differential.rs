//! The crate's side of the differential test against the Python reference (`scripts/differential.sh`): reads cases
//! as JSON lines on stdin, runs each through `confirm`, `finish`, `check` and `transact`, and writes one JSON line of
//! outcomes per case on stdout, in the form `scripts/differential/peer.py` writes the reference's. The clock is
//! fixed and the payment ids come from a per-case counter, so both sides write the same bytes.
//!
//! With nothing on stdin it does nothing and exits 0 (CI runs every example with `</dev/null`). The line
//! `{"builtIds": true}` is answered with the pairings this build implements.
//!
//! Case form (written by `scripts/differential/generate.py`): `{id, seq, pairing, now, doc, account, inputs?, routes,
//! finish: [{answers, bytesHex?, as?}], checks: [{bytesHex, presented, landed?}], transact?: {account, key, edit,
//! erc7710, approve, approveEdit?, agreementSigner?}}`. Beside each check, the pairing's own `bound` of the presented
//! payment is written (the hash, or the refusal code `check` hides). A route answers a URL: `unpaid` for a request
//! without `PAYMENT-SIGNATURE`, `paid` for one with it; a reply is `{status, headers, body}` or `{error: true}`. An
//! answer is a JSON value as given, or `{"$sign": {key, edit}}`: the request signed with the key, then edited.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::{
    AgreementPayment, Answer, Declined, Finish, FixedClock, Ids, Options, Pairing, Signer, SignerError, SigningRequest,
    TransactOutcome, check, check_landed, confirm, finish, transact,
};
use terms::{Body, Fetch, FetchError, Request, Response};

/// Payment ids `r<seq>x<n>`, 32 characters, n counting from 1 within one case: the peer runner patches the
/// reference's `_ref` with the same sequence.
struct SeqIds {
    seq: u64,
    n: AtomicU64,
}

impl Ids for SeqIds {
    fn next_id(&self) -> String {
        let n = self.n.fetch_add(1, Ordering::Relaxed) + 1;
        format!("r{:010}x{n:020}", self.seq)
    }
}

/// The routes of one case, and the `PAYMENT-SIGNATURE` values sent to them.
#[derive(Clone)]
struct Routes {
    routes: Arc<Map<String, Value>>,
    paid: Arc<Mutex<Vec<String>>>,
}

fn body_of(spec: &Value) -> Vec<u8> {
    if let Some(hex) = spec.get("hex").and_then(Value::as_str) {
        return hex::decode(hex).unwrap_or_default();
    }
    if let Some([byte, count]) = spec.get("fill").and_then(Value::as_array).map(Vec::as_slice) {
        let byte = byte.as_str().and_then(|b| hex::decode(b).ok()).unwrap_or_default();
        return byte.repeat(usize::try_from(count.as_u64().unwrap_or(0)).unwrap_or(0));
    }
    Vec::new()
}

impl Fetch for Routes {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let paid = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("payment-signature"));
        if let Some((_, value)) = paid
            && let Ok(mut sent) = self.paid.lock()
        {
            sent.push((*value).to_owned());
        }
        let reply = self.routes.get(request.url).and_then(|r| r.get(if paid.is_some() { "paid" } else { "unpaid" }));
        let answer = match reply {
            Some(reply) if reply.get("error") != Some(&Value::Bool(true)) => {
                let status = reply.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
                let headers = reply
                    .get("headers")
                    .and_then(Value::as_array)
                    .map(|hs| {
                        hs.iter()
                            .filter_map(|h| {
                                let pair = h.as_array()?;
                                Some((pair.first()?.as_str()?.to_owned(), pair.get(1)?.as_str()?.to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let body = body_of(reply.get("body").unwrap_or(&Value::Null));
                match status {
                    Some(status) => Ok(Response::new(status, headers, Body::from_bytes(body))),
                    None => Err(FetchError::new("no status")),
                }
            }
            _ => Err(FetchError::new("no route")),
        };
        Box::pin(async move { answer })
    }
}

/// The keys a case signs with, each answering EIP-712 requests (and batches of them) as `LocalSigner` does.
fn local(key: &str) -> Option<LocalSigner> {
    LocalSigner::from_hex(key, 1).ok()
}

/// The answer a `$sign` spec gives for a request: the key's signature, then the edit.
fn signed_answer(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let key = spec.get("key").and_then(Value::as_str)?;
    let edit = spec.get("edit").and_then(Value::as_str).unwrap_or("none");
    let signer = local(key)?;
    let request = request?;
    let answer = sign_local(&signer, request)?;
    Some(edited(answer, edit))
}

fn sign_local(signer: &LocalSigner, request: &SigningRequest) -> Option<Value> {
    match request {
        SigningRequest::Eip712 { typed_data } => {
            let digest = typed_data.signing_hash()?;
            signer.sign_digest(&digest.0).ok().map(Value::String)
        }
        SigningRequest::Batch { requests } => {
            requests.iter().map(|r| sign_local(signer, r)).collect::<Option<Vec<_>>>().map(Value::Array)
        }
        _ => None,
    }
}

/// The edits `scripts/differential/peer.py` makes the same way: on a signature string, or on a batch's list.
fn edited(answer: Value, edit: &str) -> Value {
    match answer {
        Value::String(s) => edit_signature(&s, edit),
        Value::Array(list) => edit_list(list, edit),
        other => other,
    }
}

fn edit_signature(s: &str, edit: &str) -> Value {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    let text = match edit {
        "upper" => format!("0x{}", hex.to_uppercase()),
        "prefix-0X" => format!("0X{hex}"),
        "no-prefix" => hex.to_owned(),
        "drop-byte" => format!("0x{}", hex.get(..hex.len().saturating_sub(2)).unwrap_or("")),
        "extra-byte" => format!("0x{hex}00"),
        "odd" => format!("0x{}", hex.get(..hex.len().saturating_sub(1)).unwrap_or("")),
        "v-low" => {
            let v = hex.get(hex.len().saturating_sub(2)..).and_then(|v| u8::from_str_radix(v, 16).ok()).unwrap_or(0);
            format!("0x{}{:02x}", hex.get(..hex.len().saturating_sub(2)).unwrap_or(""), v.wrapping_sub(27))
        }
        "flip-r" => {
            let first = hex.get(..2).and_then(|b| u8::from_str_radix(b, 16).ok()).unwrap_or(0);
            format!("0x{:02x}{}", first ^ 0xff, hex.get(2..).unwrap_or(""))
        }
        "pad-8192" => format!("0x{hex}{}", "00".repeat(8192usize.saturating_sub(hex.len() / 2))),
        "pad-8193" => format!("0x{hex}{}", "00".repeat(8193usize.saturating_sub(hex.len() / 2))),
        "space" => format!(" {s}"),
        "as-list" => return json!([s]),
        "as-object" => return json!({ "signature": s }),
        _ => s.to_owned(),
    };
    Value::String(text)
}

fn edit_list(mut list: Vec<Value>, edit: &str) -> Value {
    match edit {
        "swap" => list.reverse(),
        "drop-last" => {
            list.pop();
        }
        "extra" => {
            if let Some(first) = list.first().cloned() {
                list.push(first);
            }
        }
        "first-upper" => {
            if let Some(Value::String(first)) = list.first_mut() {
                *first = format!("0x{}", first.trim_start_matches("0x").to_uppercase());
            }
        }
        "first-drop-byte" => {
            if let Some(Value::String(first)) = list.first_mut() {
                first.truncate(first.len().saturating_sub(2));
            }
        }
        "nested" => {
            if let Some(first) = list.first_mut() {
                *first = json!([first.clone()]);
            }
        }
        "as-string" => return list.into_iter().next().unwrap_or(Value::Null),
        "second" => return list.into_iter().nth(1).unwrap_or(Value::Null),
        _ => {}
    }
    Value::Array(list)
}

/// An answer spec: `{"$sign": {...}}` is computed against the request, anything else is the answer as given.
fn answer_of(spec: &Value, request: Option<&SigningRequest>) -> Value {
    match spec.as_object().and_then(|o| o.get("$sign").filter(|_| o.len() == 1)) {
        Some(sign) => signed_answer(sign, request).unwrap_or(Value::Null),
        None => spec.clone(),
    }
}

/// The case's wallet for `transact`: its account as given, EIP-712 (and batch) requests signed with its key and
/// then edited, ERC-7710 requests answered with the case's delegation, anything else refused.
struct Wallet {
    account: String,
    key: Option<LocalSigner>,
    edit: String,
    erc7710: Value,
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = match request {
            SigningRequest::Erc7710(_) if !self.erc7710.is_null() => Ok(self.erc7710.clone()),
            _ => self
                .key
                .as_ref()
                .and_then(|k| sign_local(k, request))
                .map(|a| edited(a, &self.edit))
                .ok_or_else(|| SignerError::new("the wallet does not sign this request")),
        };
        Box::pin(async move { answer.map(Answer::new) })
    }
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

fn transaction(result: &Result<TransactOutcome, Declined>) -> Value {
    match result {
        Err(d) => declined(d),
        Ok(TransactOutcome::Signed(t)) => json!({"signed": {
            "signed": t.signed.as_ref().map(|p| compact(&p.to_value())),
            "h": t.h.to_hex(),
            "agreement": t.agreement.as_ref().map(|r| json!({
                "atrHash": r.atr_hash, "agreed": r.agreed, "network": r.network, "transaction": r.transaction,
            })),
            "landed": t.landed.as_ref().map(compact),
        }}),
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
        };
        opts = opts.agreement_signer(Arc::new(payer));
    }
    let first = transact(doc, pairing, &wallet, fetch, &opts).await;
    let second = match (&first, spec.get("approve") == Some(&Value::Bool(true))) {
        (Ok(TransactOutcome::ToApprove(t)), true) => {
            let mut approve = t.approve.clone();
            approve_edit(&mut approve, spec.get("approveEdit").and_then(Value::as_str).unwrap_or("none"));
            Some(transaction(&transact(doc, pairing, &wallet, fetch, &opts.clone().approved(approve)).await))
        }
        _ => None,
    };
    let paid = fetch.paid.lock().map(|p| p.clone()).unwrap_or_default();
    json!({"first": transaction(&first), "second": second, "paid": paid})
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
    let doc = case.get("doc").unwrap_or(&Value::Null);
    let account = case.get("account").and_then(Value::as_str).unwrap_or_default();
    let confirmed = confirm(doc, pairing, account, &routes, &options(case)).await;
    let confirm_out = match &confirmed {
        Err(d) => declined(d),
        Ok(c) => json!({"confirmed": {
            "request": request_json(c.request.as_ref()),
            "h": c.h.to_hex(),
            "agreement": c.chosen.agreement,
            "ref": c.chosen.reference,
        }}),
    };

    let mut finished: Option<Value> = None;
    let mut finishes = Vec::new();
    for spec in case.get("finish").and_then(Value::as_array).into_iter().flatten() {
        let Ok(c) = &confirmed else {
            finishes.push(Value::Null);
            continue;
        };
        let answers: Vec<Answer> = spec
            .get("answers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| Answer::new(answer_of(a, c.request.as_ref())))
            .collect();
        let bytes = bytes_of(spec.get("bytesHex")).unwrap_or_else(|| c.bytes.clone());
        let as_pairing = spec.get("as").and_then(Value::as_str).and_then(pairing_of).unwrap_or(pairing);
        let out = match finish(&bytes, &c.chosen, &answers, as_pairing) {
            Err(d) => declined(&d),
            Ok(Finish::Finished(f)) => {
                if finished.is_none() {
                    finished = Some(f.signed.to_value());
                }
                let landed = f.landed.as_ref().map(compact);
                json!({"finished": {"signed": compact(&f.signed.to_value()), "h": f.h.to_hex(), "landed": landed}})
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
    json!({"id": id, "confirm": confirm_out, "finish": finishes, "checks": checks, "transact": transacted})
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
