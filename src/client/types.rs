//! What the client returns: the seller's answer with what was paid for it, or why nothing was paid.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::decline::Declined;
use crate::gate::ToApprove;
use crate::hash::AtrHash;
use crate::safety::journal::{ExecutionState, PaymentState, ResponseState, RetryState};
use crate::safety::recovery::{Quota, Recovery};
use crate::transact::{ApproveSpend, PendingApproval};

/// One request as the client sends it, and re-sends it: its method, URL, headers and body, held as bytes so that a
/// re-send is the same request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The absolute URL.
    pub url: String,
    /// The headers, in order; a name may repeat.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Bytes,
}

impl Outgoing {
    /// A request of `method` to `url`, no headers, no body.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self { method: method.into(), url: url.into(), headers: Vec::new(), body: Bytes::new() }
    }

    /// With one more header.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// With this body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// The first value of a header, matched case-insensitively.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The same request with `name` set to `value` (any earlier value of it removed).
    pub(crate) fn with_set(&self, name: &str, value: &str) -> Self {
        let mut next = self.clone();
        next.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        next.headers.push((name.to_owned(), value.to_owned()));
        next
    }
}

/// A seller's answer as the transport read it: status, headers, and the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// The status code.
    pub status: u16,
    /// The headers as sent; a name may repeat.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl Incoming {
    /// A header's values joined with `", "`, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> =
            self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// Every value of a header, one per line, matched case-insensitively.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }
}

/// The four states of a purchase (`safety.md` §3), as the client knows them once the call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct States {
    /// Whether money moved.
    pub payment: PaymentState,
    /// What became of the work.
    pub execution: ExecutionState,
    /// Whether the answer to the payment arrived; `None` when no payment was sent.
    pub response: Option<ResponseState>,
    /// What the buyer may do next.
    pub retry: RetryState,
}

impl States {
    /// No payment was sent: nothing paid, nothing started, a fresh payment is safe.
    pub(crate) const NOT_PAID: Self = Self {
        payment: PaymentState::NotPaid,
        execution: ExecutionState::NotStarted,
        response: None,
        retry: RetryState::Safe,
    };
}

/// The x402 settlement response (`PAYMENT-RESPONSE`), decoded: every member the protocol names, and the whole
/// value as received.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SettlementResponse {
    /// Whether the facilitator settled the payment.
    pub success: bool,
    /// Why not, where it did not.
    #[serde(rename = "errorReason", skip_serializing_if = "Option::is_none")]
    pub error_reason: Option<String>,
    /// The payer the facilitator names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payer: Option<String>,
    /// The settlement transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<String>,
    /// The network it settled on (CAIP-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// The amount settled, in atomic units, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
    /// The response's extensions, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    /// The decoded JSON as received.
    pub raw: Value,
}

impl SettlementResponse {
    /// Whether the seller says the settlement is pending: broadcast, not yet final (`errorReason`
    /// `settlement_pending`, the x402 SDKs' non-terminal outcome, with the transaction's hash). The payment is then
    /// paid with its outcome unknown: the journal keeps the hash, and the purchase is only ever re-sent.
    pub fn is_pending(&self) -> bool {
        self.error_reason.as_deref().is_some_and(crate::safety::recovery::is_pending)
    }
}

/// What the seller said of the payment: the x402 settlement response or the MPP `Payment-Receipt`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Settlement {
    /// x402's `PAYMENT-RESPONSE`.
    X402(SettlementResponse),
    /// MPP's `Payment-Receipt`, as decoded JSON (its `status`, `method`, `timestamp`, `reference`, …).
    Mpp {
        /// The receipt's JSON.
        receipt: Value,
    },
}

/// The payment the client sent with a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Sent {
    /// The pairing that built it.
    pub pairing: String,
    /// The purchase's idempotency key, sent as `Idempotency-Key`.
    pub key: String,
    /// The journal's attempt, where a journal is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    /// The hash of the terms the payment carries.
    pub h: AtrHash,
    /// The payer (CAIP-10).
    pub account: String,
    /// The header the payment went in (`PAYMENT-SIGNATURE` or `Authorization`) and its value.
    pub header: (String, String),
    /// How many times the paid request was sent (1, and up to 3 re-sends of the same bytes).
    pub sends: u32,
    /// Whether the payment was the journal's, signed by an earlier call and re-sent as it was.
    pub resent: bool,
    /// How long the client waited between re-sends, in all (the seller's `Retry-After`, or the backoff).
    #[serde(with = "millis")]
    pub waited: std::time::Duration,
    /// What the seller said of the payment, where it said something readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settlement: Option<Settlement>,
    /// The job id of a 202 answer (`execution: queued`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// What the journal could not record of the answer, where it failed (the answer itself is still returned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_error: Option<String>,
}

mod millis {
    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u128(d.as_millis())
    }
}

/// The seller's last answer, with the payment sent for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    #[serde(skip)]
    pub headers: Vec<(String, String)>,
    /// The body.
    #[serde(skip)]
    pub body: Bytes,
    /// The payment sent, where the seller asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paid: Option<Sent>,
    /// What the agent may do next; `None` for a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// The four states.
    pub states: States,
    /// The seller's quota headers, as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
}

impl Reply {
    /// A header's values joined with `", "`, matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> =
            self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    /// Whether the call succeeded: a 2xx answer with nothing left to do.
    pub fn is_success(&self) -> bool {
        self.recovery.is_none() && (200..300).contains(&self.status)
    }
}

/// A payment that was sent and never answered (timeouts, resets, or 5xx answers on every send).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Lost {
    /// The payment sent.
    pub paid: Sent,
    /// Why no answer came, the last time.
    pub cause: String,
    /// `resend-same-payment`, charge `unknown`.
    pub recovery: Recovery,
    /// The four states: payment `unknown`, response `lost`, retry `forbidden`.
    pub states: States,
}

/// The gate (or the offer's reading) declined before anything was paid.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Refused {
    /// The decline, with the reference's code.
    pub declined: Declined,
    /// What the agent may do next.
    pub recovery: Recovery,
    /// The status of the answer that asked for the payment (402), where one came.
    pub status: u16,
    /// The pairing the client chose, where it chose one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
}

/// What one call of the client ends with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Outcome {
    /// The seller answered: without a payment where it asked for none, else after the payment was sent.
    Answered(Reply),
    /// The payment was sent and no answer came.
    Lost(Lost),
    /// Nothing was paid: the offer could not be read, no pairing pays it, the policy refused, or the gate declined.
    Refused(Refused),
    /// An agreement payment to approve first; nothing was signed.
    ToApprove(ToApprove),
    /// A payment above the policy's approval threshold; nothing was signed.
    ApproveSpend(ApproveSpend),
    /// A payment above the policy's approval threshold, queued for a person ([`ClientBuilder::approvals`]); nothing
    /// was signed. Once a person approves it, the same request sent again pays it (ours).
    ///
    /// [`ClientBuilder::approvals`]: super::ClientBuilder::approvals
    PendingApproval(PendingApproval),
}

impl Outcome {
    /// The recovery of the outcome: `None` for a success (and for the two approvals, which wait on a person).
    pub fn recovery(&self) -> Option<Recovery> {
        match self {
            Self::Answered(r) => r.recovery,
            Self::Lost(l) => Some(l.recovery),
            Self::Refused(r) => Some(r.recovery),
            Self::ToApprove(_) | Self::ApproveSpend(_) | Self::PendingApproval(_) => None,
        }
    }

    /// The answer, where the seller gave one.
    pub fn reply(&self) -> Option<&Reply> {
        match self {
            Self::Answered(r) => Some(r),
            _ => None,
        }
    }

    /// The payment sent, where one was.
    pub fn paid(&self) -> Option<&Sent> {
        match self {
            Self::Answered(r) => r.paid.as_ref(),
            Self::Lost(l) => Some(&l.paid),
            _ => None,
        }
    }
}

/// Why the client could not make the call at all: nothing was paid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request's body is larger than the client re-sends ([`ClientBuilder::max_body`](super::ClientBuilder::max_body)),
    /// or is a stream it cannot hold: it is not sent, since a paid re-send must be the same bytes.
    #[error("the request body ({size} bytes) is larger than the {limit} bytes the client holds to re-send")]
    BodyTooLarge {
        /// The body's size (0 for a stream of unknown size).
        size: usize,
        /// The client's limit.
        limit: usize,
    },
    /// The request is not one the client sends (its URL, a method or header that does not parse).
    #[error("the request cannot be sent: {0}")]
    Request(String),
    /// The request (without payment) got no answer: nothing was paid.
    #[error("the seller did not answer: {0}")]
    Transport(String),
}
