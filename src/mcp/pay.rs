//! `atr_pay`: the client that pays a 402 end to end ([`crate::client`]) as one tool, with the host's wallet, spend
//! policy and journal. The URL an agent names is held to the rule the server's fetch of terms obeys (https only, no
//! address that is not public, a name resolved once and every address vetted), on the first send and on every
//! re-send, since an agent's URL comes from whatever it read.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::BuyerOptions;
use super::schema::{Field, Invalid, Kind, field, optional};
use super::tools::{Args, Fail, declined_json, to_json};
use crate::client::{Client, ClientError, Incoming, Outcome, Outgoing, PublicTransport, Transport, TransportError};
use crate::codec::{b64_decode, b64_encode};
use crate::gate::AgreementPayment;
use crate::http::check_link;
use crate::signer::BoxFuture;

/// The largest request body `atr_pay` sends and the most of an answer's body it returns: 1 MiB.
pub const MAX_PAY_BODY: usize = 1024 * 1024;

const URL_REFUSED: &str = "url-refused";
const BODY_TOO_LARGE: &str = "body-too-large";
const REQUEST_FAILED: &str = "request-failed";

pub(crate) const PAY: [Field; 6] = [
    field(
        "url",
        Kind::Text,
        "The resource's absolute https URL. A host that is, or resolves to, a loopback, private, link-local or other \
         non-public address is refused before any connection (url-refused).",
    ),
    optional("method", Kind::Method, "The HTTP method (default GET)."),
    optional(
        "headers",
        Kind::Headers,
        "Request headers, name to value. An `Idempotency-Key` given here names the purchase; absent, one is derived \
         from the method, URL, body and payer, so the same call made again is the same purchase.",
    ),
    optional("body", Kind::Text, "The request body as UTF-8 text, at most 1 MiB."),
    optional("bodyBase64", Kind::Base64, "The request body as base64, at most 1 MiB once decoded; not with `body`."),
    optional(
        "approved",
        Kind::Approved,
        "The agreement payment you approved: `approve` exactly as a call returned it, for a seller whose payment is \
         paid after an agreement.",
    ),
];

pub(crate) const DESCRIPTION: &str = "Sends an HTTP request and, on a 402, pays it with this host's wallet: the \
     spend policy is checked first, the terms (ATR) are fetched once and compared with the offer's hash, the payment \
     carries it, every step is journaled, and the paid request is re-sent unchanged at most 3 times after a timeout \
     or a 5xx. Returns `response` (status, headers, body, at most 1 MiB), `receipt`, `paid`, `states` and \
     `recovery` (what to do next; null on success). A decline means nothing was paid. The same call again is the \
     same purchase (see `headers`): re-sent, never signed twice. \
     Above the host policy's approval threshold it returns `pending-approval` with the approval's id and quote, \
     nothing signed: a person decides outside this server, and the same call made after approval pays once.";

/// The host's transport, shared: the client takes one by value.
struct Shared(Arc<dyn Transport>);

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Transport for Shared {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        self.0.send(request)
    }
}

fn decline(code: &str, detail: &str, cause: Option<String>) -> Fail {
    let mut d = Map::new();
    d.insert("code".into(), Value::String(code.to_owned()));
    d.insert("detail".into(), Value::String(detail.to_owned()));
    if let Some(c) = cause {
        d.insert("cause".into(), Value::String(c));
    }
    Fail::Result(json!({"outcome": "refused", "decline": d}))
}

fn bad(argument: &str, reason: impl Into<String>) -> Fail {
    Fail::Invalid(Invalid { argument: argument.to_owned(), reason: reason.into() })
}

/// Whether a transport error is the public-address rule refusing a connection (a name that resolves to an address
/// that is not public).
fn not_public(why: &str) -> bool {
    why.contains("ENOTPUBLIC")
}

/// The request the arguments describe: method, URL, headers (each a valid header), body.
fn outgoing(args: &Args<'_>) -> Result<Outgoing, Fail> {
    let method = args.0.get("method").and_then(Value::as_str).unwrap_or("GET");
    let mut request = Outgoing::new(method, args.text("url"));
    if let Some(headers) = args.0.get("headers").and_then(Value::as_object) {
        for (name, value) in headers {
            let Some(value) = value.as_str() else {
                return Err(bad(&format!("headers.{name}"), "is not a string"));
            };
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(bad(&format!("headers.{name}"), "is not a header name"));
            }
            if reqwest::header::HeaderValue::from_str(value).is_err() {
                return Err(bad(&format!("headers.{name}"), "is not a header value"));
            }
            request = request.header(name.as_str(), value);
        }
    }
    let body = match (args.0.get("body").and_then(Value::as_str), args.0.get("bodyBase64").and_then(Value::as_str)) {
        (Some(_), Some(_)) => return Err(bad("", "give `body` or `bodyBase64`, not both")),
        (Some(text), None) => Bytes::copy_from_slice(text.as_bytes()),
        (None, Some(b64)) => Bytes::from(b64_decode(b64).ok_or_else(|| bad("bodyBase64", "is not base64"))?),
        (None, None) => Bytes::new(),
    };
    Ok(request.body(body))
}

/// An answer's body as the tool returns it: UTF-8 text where it is, else base64; cut at [`MAX_PAY_BODY`].
fn body_json(body: &[u8]) -> Value {
    let kept = body.get(..MAX_PAY_BODY).unwrap_or(body);
    let (encoding, text) = match std::str::from_utf8(kept) {
        Ok(t) => ("utf8", t.to_owned()),
        // A cut inside a character is still text: keep what is whole.
        Err(e) if kept.len() < body.len() && e.error_len().is_none() => {
            let whole = kept.get(..e.valid_up_to()).unwrap_or_default();
            ("utf8", String::from_utf8_lossy(whole).into_owned())
        }
        Err(_) => ("base64", b64_encode(kept)),
    };
    json!({
        "encoding": encoding,
        "text": text,
        "size": body.len(),
        "truncated": kept.len() < body.len(),
    })
}

fn headers_json(headers: &[(String, String)]) -> Value {
    Value::Array(headers.iter().map(|(n, v)| json!([n, v])).collect())
}

/// The transport the tool sends on: the host's, or the public-only default built once per server.
fn transport(options: &BuyerOptions) -> Result<Arc<dyn Transport>, Fail> {
    if let Some(t) = options.pay_transport.get() {
        return Ok(t.clone());
    }
    let built =
        PublicTransport::new().map_err(|e| decline(REQUEST_FAILED, "The request cannot be sent.", Some(e.0)))?;
    let _ = options.pay_transport.set(Arc::new(built));
    options.pay_transport.get().cloned().ok_or_else(|| decline(REQUEST_FAILED, "The request cannot be sent.", None))
}

pub(crate) async fn atr_pay(options: &BuyerOptions, args: &Args<'_>, cancel: CancellationToken) -> Result<Value, Fail> {
    let Some(signer) = options.signer.clone() else { return Err(bad("", "no signer")) };
    let request = outgoing(args)?;
    // The rule of the server's fetch, before anything is sent: https, and no literal address that is not public.
    // A name is vetted by the transport's resolver when it connects, on every send.
    if let Err(e) = check_link(&request.url) {
        return Err(decline(URL_REFUSED, "The URL is not an https URL of a public address.", Some(e.to_string())));
    }
    if request.body.len() > MAX_PAY_BODY {
        let cause = format!("{} bytes, at most {MAX_PAY_BODY}", request.body.len());
        return Err(decline(BODY_TOO_LARGE, "The request body is larger than 1 MiB.", Some(cause)));
    }
    let mut gate = options.gate.clone().cancel(cancel);
    if let Some(payer) = &options.agreement_signer {
        gate = gate.agreement_signer(payer.clone());
    }
    if let Some(approved) =
        args.0.get("approved").and_then(|v| serde_json::from_value::<AgreementPayment>(v.clone()).ok())
    {
        gate = gate.approved(approved);
    }
    let client = Client::for_signer(signer)
        .options(gate.clone())
        .fetch(options.fetch.clone())
        .transport(Shared(transport(options)?))
        .max_body(MAX_PAY_BODY)
        .build()
        .map_err(|e| decline(REQUEST_FAILED, "The request cannot be sent.", Some(e.to_string())))?;
    match client.send_with(request, &gate).await {
        Ok(outcome) => outcome_json(outcome),
        Err(ClientError::BodyTooLarge { size, limit }) => Err(decline(
            BODY_TOO_LARGE,
            "The request body is larger than 1 MiB.",
            Some(format!("{size} bytes, at most {limit}")),
        )),
        Err(ClientError::Transport(why)) if not_public(&why) => {
            Err(decline(URL_REFUSED, "The URL's host resolves to an address that is not public.", Some(why)))
        }
        Err(e) => {
            Err(decline(REQUEST_FAILED, "The seller could not be reached; nothing was paid.", Some(e.to_string())))
        }
    }
}

fn outcome_json(outcome: Outcome) -> Result<Value, Fail> {
    match outcome {
        Outcome::Answered(r) => {
            let receipt = r.paid.as_ref().and_then(|p| p.settlement.as_ref()).map_or(Value::Null, to_json);
            Ok(json!({
                "outcome": "answered",
                "response": {"status": r.status, "headers": headers_json(&r.headers), "body": body_json(&r.body)},
                "receipt": receipt,
                "paid": r.paid.as_ref().map_or(Value::Null, to_json),
                "states": to_json(&r.states),
                "recovery": r.recovery.as_ref().map_or(Value::Null, to_json),
                "quota": r.quota.as_ref().map_or(Value::Null, to_json),
            }))
        }
        // Sent and never answered: not a decline (money may have moved); `isError`, with what to do next.
        Outcome::Lost(l) => Err(Fail::Result(json!({
            "outcome": "lost",
            "cause": l.cause,
            "receipt": Value::Null,
            "paid": to_json(&l.paid),
            "states": to_json(&l.states),
            "recovery": to_json(&l.recovery),
        }))),
        Outcome::Refused(r) => {
            let mut out = match declined_json(&r.declined) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            // The decline's cause (a policy's rule and the amounts it compared, a link's fault): what to mend.
            if let (Some(cause), Some(Value::Object(d))) = (&r.declined.cause, out.get_mut("decline")) {
                d.insert("cause".into(), Value::String(cause.clone()));
            }
            out.insert("outcome".into(), json!("refused"));
            out.insert("status".into(), json!(r.status));
            out.insert("pairing".into(), r.pairing.map_or(Value::Null, Value::String));
            out.insert("recovery".into(), to_json(&r.recovery));
            Err(Fail::Result(Value::Object(out)))
        }
        Outcome::ToApprove(t) => Ok(
            json!({"outcome": "to-approve", "atrHash": t.h, "atr": super::tools::atr_json(&t.bytes), "approve": t.approve}),
        ),
        Outcome::ApproveSpend(a) => Ok(json!({
            "outcome": "approve-spend",
            "atrHash": a.approve_spend.h,
            "approveSpend": to_json(&a.approve_spend),
        })),
        Outcome::PendingApproval(p) => Ok(pending_json(&p.pending_approval)),
    }
}

/// What the agent reads of a payment waiting for a person: the approval's id, the quote, H and the terms, the rule
/// that asked and when it expires; never a way to approve it.
pub(crate) fn pending_json(approval: &crate::safety::Approval) -> Value {
    let mut shown = to_json(approval);
    if let Some(map) = shown.as_object_mut() {
        map.shift_remove("bytes");
    }
    json!({
        "outcome": "pending-approval",
        "atrHash": approval.h,
        "atr": super::tools::atr_json(&approval.bytes),
        "approval": shown,
        "next": PENDING_NEXT,
    })
}

/// What the agent is told to do with a payment waiting for a person.
const PENDING_NEXT: &str = "Nothing was signed. A person must approve this payment by its id, outside this \
     server (`terms approve ID`); no tool here approves it. Once approved, call atr_pay again with the same request \
     (the same method, URL, headers and body) and it is paid, once. A denied payment declines policy-refused \
     (policy/approval-denied).";

#[cfg(test)]
mod tests {
    use super::{MAX_PAY_BODY, body_json};

    #[test]
    fn a_body_is_text_where_it_is_utf8_and_cut_at_the_cap_on_a_character() {
        assert_eq!(body_json(b"ok")["encoding"], "utf8");
        assert_eq!(body_json(&[0xff, 0])["text"], "/wA=");
        // A cut inside a two-byte character keeps the whole ones before it, as text.
        let mut cut = vec![b'a'; MAX_PAY_BODY - 1];
        cut.extend_from_slice("é".as_bytes());
        let v = body_json(&cut);
        assert_eq!((v["encoding"].as_str(), v["truncated"].as_bool()), (Some("utf8"), Some(true)));
        assert_eq!(
            (v["text"].as_str().map(str::len), v["size"].as_u64()),
            (Some(MAX_PAY_BODY - 1), Some(MAX_PAY_BODY as u64 + 1))
        );
        // Bytes that are not UTF-8 before the cut are base64.
        cut[0] = 0xff;
        assert_eq!(body_json(&cut)["encoding"], "base64");
    }
}
