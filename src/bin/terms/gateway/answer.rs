//! What the gateway answers: the seller's response with the `Terms-*` receipt headers, or the client's outcome as
//! JSON where the seller's answer is not the caller's to read (a refusal, a payment waiting for a person, a payment
//! sent and never answered), or the gateway's own refusal. Every header and code here is ours.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::{Value, json};
use terms::client::{Outcome, Sent};

use super::request::hop_by_hop;

/// What the caller is told to do with a payment waiting for a person.
const PENDING_NEXT: &str = "Nothing was signed. A person approves this payment by its id (`terms approve ID`, or \
     `terms deny ID`); then send this same request again through the gateway (the same method, URL, body and \
     Idempotency-Key) and it is paid, once.";

/// The gateway's own refusal: `status`, `{"error": {"code", "detail"}}`, and `Terms-Error: <code>`.
pub(super) fn refuse(status: u16, code: &str, detail: &str) -> Response<Full<Bytes>> {
    let body = json!({"error": {"code": code, "detail": detail}});
    let mut response = json_response(status, &body);
    set(&mut response, "terms-error", code);
    response
}

/// The client's outcome as the caller's answer.
pub(super) fn outcome(outcome: Outcome) -> Response<Full<Bytes>> {
    let tag = serde_json::to_value(&outcome)
        .ok()
        .and_then(|v| v.get("outcome").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "unknown".into());
    let mut response = match &outcome {
        Outcome::Answered(reply) => {
            let mut response = Response::new(Full::new(reply.body.clone()));
            // The seller's `Connection` header names its own hop-by-hop headers.
            let mut connection = hyper::HeaderMap::new();
            for value in reply.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("connection")) {
                if let Ok(v) = HeaderValue::from_str(&value.1) {
                    connection.append(hyper::header::CONNECTION, v);
                }
            }
            *response.status_mut() = status(reply.status);
            for (name, value) in &reply.headers {
                let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) else {
                    continue;
                };
                // The length is the body's; the `Terms-*` headers are the gateway's alone (never the seller's).
                if n == hyper::header::CONTENT_LENGTH || n.as_str().starts_with("terms-") {
                    continue;
                }
                if !hop_by_hop(n.as_str(), &connection) {
                    response.headers_mut().append(n, v);
                }
            }
            response
        }
        Outcome::Lost(_) => json_response(504, &shown(&outcome)),
        Outcome::Refused(r) => {
            let mut response = json_response(402, &shown(&outcome));
            set(&mut response, "terms-decline", &r.declined.code.to_string());
            response
        }
        Outcome::PendingApproval(p) => {
            let mut approval = serde_json::to_value(&p.pending_approval).unwrap_or(Value::Null);
            if let Some(map) = approval.as_object_mut() {
                map.remove("bytes");
            }
            let body = json!({"outcome": tag, "approval": approval, "next": PENDING_NEXT});
            let mut response = json_response(402, &body);
            set(&mut response, "terms-approval", &p.pending_approval.id);
            response
        }
        _ => json_response(402, &shown(&outcome)),
    };
    set(&mut response, "terms-outcome", &tag);
    if let Some(paid) = outcome.paid() {
        receipt(&mut response, paid);
    }
    if let Some(r) = outcome.recovery() {
        set(&mut response, "terms-recovery", &r.to_string());
    }
    response
}

/// The outcome as JSON, without the terms' raw bytes.
fn shown(outcome: &Outcome) -> Value {
    let mut value = serde_json::to_value(outcome).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("bytes");
    }
    value
}

/// The receipt headers of a payment sent: the purchase key, the pairing, H, the payer, the sends, whether it was a
/// re-send of the journal's payment, and the journal's attempt.
fn receipt(response: &mut Response<Full<Bytes>>, paid: &Sent) {
    set(response, "terms-purchase", &paid.key);
    set(response, "terms-pairing", &paid.pairing);
    set(response, "terms-atr-hash", &paid.h.to_string());
    set(response, "terms-payer", &paid.account);
    set(response, "terms-sends", &paid.sends.to_string());
    set(response, "terms-resent", if paid.resent { "true" } else { "false" });
    if let Some(attempt) = &paid.attempt {
        set(response, "terms-attempt", attempt);
    }
    if let Some(job) = &paid.job {
        set(response, "terms-job", job);
    }
}

/// Sets a header, its value cut to visible ASCII (a value that is not is dropped, never an error).
fn set(response: &mut Response<Full<Bytes>>, name: &'static str, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        response.headers_mut().insert(HeaderName::from_static(name), v);
    }
}

fn json_response(code: u16, body: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{body}\n"))));
    *response.status_mut() = status(code);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn status(code: u16) -> hyper::StatusCode {
    hyper::StatusCode::from_u16(code).unwrap_or(hyper::StatusCode::BAD_GATEWAY)
}
