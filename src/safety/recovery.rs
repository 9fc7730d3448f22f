//! Typed recovery: what an agent may do next after any outcome (a decline, an HTTP answer, a transport failure, a
//! settlement response), as one machine-readable [`Recovery`], beside the quota and spend of an [`Outcome`].
//!
//! The mapping is pure: no I/O, no clock, no panic on anything a seller sends. It is the map of
//! `safety.md` §2, made total:
//!
//! | Outcome | Action | Charge |
//! | --- | --- | --- |
//! | a decline before signing, a policy refusal, `journal/unavailable`, all without `moved` | `do-not-retry` | `no` |
//! | `signer-failed`, `signed-not-bound`, `agreement-failed` without `moved` | `do-not-retry` | `no` |
//! | `agreement-pending` without `moved` | `query-first` | `unknown` |
//! | `journal/in-flight` without `moved` | `query-first` | `unknown` |
//! | `journal/state-unknown` or an unknown `journal/` reason | `operator-review` | `unknown` |
//! | `journal-failed` with `moved` | `operator-review` | `unknown` |
//! | any other decline with `moved` | `query-first` | `unknown` |
//! | HTTP 2xx but 202 | none: success | |
//! | HTTP 202 | `query-first` | `yes` after paying, else `no` |
//! | HTTP 402 before paying | `retry-after-payment` | `no` |
//! | HTTP 402 after paying (the seller refused the payment) | `do-not-retry` | `no` |
//! | HTTP 429 or 403 with the three quota headers, remaining 0 and a numeric reset | `retry-after-quota-reset` | * |
//! | HTTP 429 otherwise | `operator-review` | * |
//! | HTTP 401 or 403 with `error="invalid_token"` (or `expired_token`) | `refresh-credential` | * |
//! | HTTP 401 or 403 with `error="insufficient_scope"` | `do-not-retry` | * |
//! | HTTP 400, 404, 405, 409, 410, 413, 415, 422 | `do-not-retry` | * |
//! | HTTP 5xx after paying | `resend-same-payment` | `unknown` |
//! | HTTP 5xx before paying | `do-not-retry` | `no` |
//! | any other HTTP status | `operator-review` | * |
//! | a transport failure after paying | `resend-same-payment` | `unknown` |
//! | a transport failure before paying | `do-not-retry` | `no` |
//! | settlement `success: true` | none: success | |
//! | settlement `success: false`, payment invalid (`invalid_*`, `insufficient_funds`, …) | `do-not-retry` | `no` |
//! | settlement `success: false`, `settlement_pending` with its `transaction` (broadcast, not final) | `query-first` | `unknown` |
//! | settlement `success: false`, any other reason or none | `query-first` | `unknown` |
//! | settlement `settlement_pending` with no `transaction`, or with `success: true` | `operator-review` | `unknown` |
//! | a settlement response that is not an object with a boolean `success` | `operator-review` | `unknown` |
//!
//! `*`: `no` when no payment was sent with the request, else `unknown`. Only the seller's own word (a 402 refusing the
//! payment, a settlement response saying it was invalid) makes a payment that was sent `no`; everything else leaves
//! it `unknown`, so the journal keeps the signed bytes and a retry re-sends them rather than signing anew.
//!
//! `charge` is what the outcome tells of a charge for the purchase, and `no` is a promise: `safety.md` §4 allows a
//! new signature for a purchase only when its record says `not-paid` with no charge, so `no` is written only where
//! nothing of the purchase can have moved. That is why the table's `Charged?` column is the usual case of an action,
//! not a rule: `query-first` after a 202 is `yes`, after a decline with `moved` `unknown`.

mod envelope;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decline::{DeclineCode, Declined};
use crate::refusal::Reason;

pub use envelope::{Outcome, Quota, QuotaField, SpendEnvelope};

/// What the agent may do next: the recoveries of `safety.md` §2, written in kebab-case (`do-not-retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Action {
    /// A 402 before any payment was sent: pay, then retry with the same idempotency key.
    RetryAfterPayment,
    /// The seller's quota is exhausted and its reset is visible: retry after the reset.
    RetryAfterQuotaReset,
    /// An expired token or credential: retry after refreshing it and a fresh policy check.
    RefreshCredential,
    /// Never retry automatically: validation failures, declines before signing, policy refusals.
    DoNotRetry,
    /// The payment was sent and its state is unknown: re-send exactly the signed payment, never sign a new one.
    ResendSamePayment,
    /// Ask for the job, the receipt or the record before anything else.
    QueryFirst,
    /// Anything the map does not know: stop automation, a person decides.
    OperatorReview,
}

impl Action {
    /// Every action, in the order of `safety.md`'s table.
    pub const ALL: [Self; 7] = [
        Self::RetryAfterPayment,
        Self::RetryAfterQuotaReset,
        Self::RefreshCredential,
        Self::DoNotRetry,
        Self::ResendSamePayment,
        Self::QueryFirst,
        Self::OperatorReview,
    ];

    /// The action as written, e.g. `resend-same-payment`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RetryAfterPayment => "retry-after-payment",
            Self::RetryAfterQuotaReset => "retry-after-quota-reset",
            Self::RefreshCredential => "refresh-credential",
            Self::DoNotRetry => "do-not-retry",
            Self::ResendSamePayment => "resend-same-payment",
            Self::QueryFirst => "query-first",
            Self::OperatorReview => "operator-review",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the buyer was charged for the purchase, as far as the outcome tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Charge {
    /// Nothing of the purchase can have moved: a new payment for it may be signed.
    No,
    /// The payment was taken (the seller accepted it).
    Yes,
    /// Money may have moved: keep the signed payment, never sign a new one in its place.
    Unknown,
}

impl Charge {
    /// The charge as written, e.g. `unknown`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::No => "no",
            Self::Yes => "yes",
            Self::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Charge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the agent may do next, and whether it was charged. Serialized as
/// `{"action": "do-not-retry", "no_charge": true, "charge": "no"}`; `no_charge` is always `charge == no` (it is
/// derived, never set, and a JSON value where they disagree does not deserialize).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Wire")]
pub struct Recovery {
    action: Action,
    no_charge: bool,
    charge: Charge,
}

/// A recovery as read from JSON, checked before it becomes one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    action: Action,
    no_charge: bool,
    charge: Charge,
}

impl TryFrom<Wire> for Recovery {
    type Error = &'static str;

    fn try_from(wire: Wire) -> Result<Self, Self::Error> {
        let recovery = Self::new(wire.action, wire.charge);
        if recovery.no_charge == wire.no_charge {
            Ok(recovery)
        } else {
            Err("no_charge must be true exactly when charge is \"no\"")
        }
    }
}

impl Recovery {
    /// A recovery: `no_charge` is derived from `charge`.
    pub const fn new(action: Action, charge: Charge) -> Self {
        Self { action, no_charge: matches!(charge, Charge::No), charge }
    }

    /// What the agent may do next.
    pub const fn action(&self) -> Action {
        self.action
    }

    /// Whether the buyer was charged, as far as the outcome tells.
    pub const fn charge(&self) -> Charge {
        self.charge
    }

    /// Whether nothing of the purchase can have moved (`charge` is [`Charge::No`]).
    pub const fn no_charge(&self) -> bool {
        self.no_charge
    }

    /// The recovery from a decline of the gate (or of `transact`).
    ///
    /// - A decline carrying `moved` (a signer that broadcasts may have moved money before the gate declined): the
    ///   gate has no payment it may present (what moved is not a payment bound to the terms), so the agent asks
    ///   whether money moved before anything else: `query-first`, charge `unknown`. A `journal-failed` decline with
    ///   `moved` is `operator-review` instead: the journal that should hold what moved could not.
    /// - `agreement-pending` without `moved`: the agreement URL says an agreement payment for these terms is already
    ///   settling. This call sent nothing, but the settling payment may be this buyer's from an earlier call, and a
    ///   new agreement payment could pay twice: `query-first` (ask the agreement URL for its receipt), `unknown`.
    /// - `journal/in-flight`: another attempt is paying the same purchase now. Whether it ends charged is not known
    ///   yet; the next step is to read that attempt's outcome (the purchase's record) before anything, and a later
    ///   call with the same key is safe (the journal answers with the bytes to re-send, or lets a fresh one sign).
    ///   The table has no "wait" action, and `query-first` is that step: `query-first`, `unknown`.
    /// - `journal/state-unknown`: a payment for the purchase may have moved and there is nothing to re-send; no
    ///   automation can settle that: `operator-review`, `unknown`. An unknown `journal/` reason is the same.
    /// - `journal/unavailable` without `moved`, `policy-refused`, and every other decline without `moved` (before
    ///   signing, or the signer's failure, or an agreement refused before its payment moved): nothing was sent:
    ///   `do-not-retry`, `no`.
    pub fn of_decline(declined: &Declined) -> Self {
        use Action::{DoNotRetry, OperatorReview, QueryFirst};
        let moved = declined.moved.is_some();
        match declined.code {
            DeclineCode::JournalFailed => match journal_reason(&declined.detail) {
                _ if moved => Self::new(OperatorReview, Charge::Unknown),
                // Nothing signed: the journal could not record it, or its nonce was one the payer had used.
                Some(Reason::Unavailable | Reason::NonceUsed) => Self::new(DoNotRetry, Charge::No),
                Some(Reason::InFlight) => Self::new(QueryFirst, Charge::Unknown),
                _ => Self::new(OperatorReview, Charge::Unknown),
            },
            _ if moved => Self::new(QueryFirst, Charge::Unknown),
            DeclineCode::AgreementPending => Self::new(QueryFirst, Charge::Unknown),
            // Exhaustive on purpose: a code added to `DeclineCode` must be placed here (the compiler asks).
            DeclineCode::PairingNotSupported
            | DeclineCode::OfferUnreadable
            | DeclineCode::NoPayableOption
            | DeclineCode::LinkNotHttps
            | DeclineCode::AtrUnfetchable
            | DeclineCode::AtrTooLarge
            | DeclineCode::HashMismatch
            | DeclineCode::SignerFailed
            | DeclineCode::SignedNotBound
            | DeclineCode::AgreementNotOffered
            | DeclineCode::AgreementFailed
            | DeclineCode::PolicyRefused => Self::new(DoNotRetry, Charge::No),
        }
    }

    /// The recovery from an HTTP answer of the seller, `payment_sent` when the request carried a payment; `None`
    /// for a success (a 2xx but 202). The quota read from the same headers is [`Quota::from_headers`], and
    /// [`Outcome::of_http`] puts both together.
    ///
    /// The charge is `no` whenever no payment was sent. After a payment it is `yes` for a 202, `no` for a 402 (the
    /// seller's refusal of the payment) and `unknown` otherwise. A 402 after paying is `do-not-retry`: paying again
    /// on every 402 is how an agent pays twice. A 5xx before paying is `do-not-retry`: nothing was paid and nothing
    /// is re-sent automatically; `no_charge` tells the caller it may start over.
    pub fn of_http(status: u16, headers: &[(String, String)], payment_sent: bool) -> Option<Self> {
        use Action::{DoNotRetry, OperatorReview, QueryFirst, RefreshCredential, ResendSamePayment};
        let charge = if !payment_sent {
            Charge::No
        } else if status == 202 {
            Charge::Yes
        } else if status == 402 {
            Charge::No
        } else {
            Charge::Unknown
        };
        let action = match status {
            202 => QueryFirst,
            200..=299 => return None,
            402 if payment_sent => DoNotRetry,
            402 => Action::RetryAfterPayment,
            403 | 429 if Quota::from_headers(headers).is_some_and(|q| q.is_exhausted()) => Action::RetryAfterQuotaReset,
            429 => OperatorReview,
            401 | 403 => match credential_error(headers) {
                Some(Credential::Expired) => RefreshCredential,
                Some(Credential::Scope) => DoNotRetry,
                None => OperatorReview,
            },
            400 | 404 | 405 | 409 | 410 | 413 | 415 | 422 => DoNotRetry,
            500..=599 if payment_sent => ResendSamePayment,
            500..=599 => DoNotRetry,
            _ => OperatorReview,
        };
        Some(Self::new(action, charge))
    }

    /// The recovery from a transport failure (a timeout, a reset, a refused connection) of a request that carried a
    /// payment (`payment_sent`) or not.
    ///
    /// After a payment: the seller may have settled it, so `resend-same-payment`, `unknown`. Before: nothing was
    /// sent and nothing was charged; the safety layer retries nothing by itself, and `no_charge` tells the caller a
    /// fresh request is safe: `do-not-retry`, `no`.
    pub const fn of_transport(payment_sent: bool) -> Self {
        if payment_sent {
            Self::new(Action::ResendSamePayment, Charge::Unknown)
        } else {
            Self::new(Action::DoNotRetry, Charge::No)
        }
    }

    /// The recovery from an x402 settlement response (`PAYMENT-RESPONSE`, decoded): `None` for `success: true`.
    ///
    /// `success: false` with an `errorReason` that says the payment itself was invalid (any `invalid_…` reason,
    /// `insufficient_funds`, `unsupported_scheme`, `unsupported_network`, `payment_expired`; case and `-`/`_`
    /// ignored) is `do-not-retry`, `no`: a payment that does not verify is never settled. Any other reason, or none
    /// (`unexpected_settle_error`, a timeout, a used nonce, which may be this very payment settled), is
    /// `query-first`, `unknown`. A value that is not an object with a boolean `success` is `operator-review`,
    /// `unknown`.
    ///
    /// `settlement_pending` (the x402 SDKs' outcome of a settlement broadcast and not yet final) is `query-first`,
    /// `unknown` with the transaction's hash (a non-empty `transaction`); with none, or beside `success: true`, the
    /// response contradicts itself: `operator-review`, `unknown`.
    pub fn of_settlement(response: &Value) -> Option<Self> {
        let success = response.as_object().and_then(|o| o.get("success")).and_then(Value::as_bool);
        let reason = response.get("errorReason").and_then(Value::as_str);
        if reason.is_some_and(is_pending) {
            let hash = response.get("transaction").and_then(Value::as_str).is_some_and(|t| !t.is_empty());
            return Some(match success {
                Some(false) if hash => Self::new(Action::QueryFirst, Charge::Unknown),
                _ => Self::new(Action::OperatorReview, Charge::Unknown),
            });
        }
        match success {
            Some(true) => None,
            Some(false) => Some(if reason.is_some_and(is_invalid_payment) {
                Self::new(Action::DoNotRetry, Charge::No)
            } else {
                Self::new(Action::QueryFirst, Charge::Unknown)
            }),
            None => Some(Self::new(Action::OperatorReview, Charge::Unknown)),
        }
    }
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (charged: {})", self.action, self.charge)
    }
}

/// The reason of a `journal/<reason>` detail, where it is one of the journal's.
fn journal_reason(detail: &str) -> Option<Reason> {
    let reason = detail.strip_prefix("journal/")?;
    [Reason::Unavailable, Reason::InFlight, Reason::StateUnknown, Reason::NonceUsed]
        .into_iter()
        .find(|r| r.as_str() == reason)
}

/// Settlement reasons that say the payment itself did not verify, beside every `invalid_…` one.
const INVALID_PAYMENT: [&str; 4] =
    ["insufficient_funds", "unsupported_scheme", "unsupported_network", "payment_expired"];

/// A settlement reason as the map reads it: trimmed, lower case, `-` read as `_`.
fn normal(reason: &str) -> String {
    reason.trim().to_ascii_lowercase().replace('-', "_")
}

fn is_invalid_payment(reason: &str) -> bool {
    let reason = normal(reason);
    reason.starts_with("invalid_") || INVALID_PAYMENT.contains(&reason.as_str())
}

/// Whether a settlement reason is `settlement_pending`: broadcast, not yet final.
pub(crate) fn is_pending(reason: &str) -> bool {
    normal(reason) == "settlement_pending"
}

/// What a `WWW-Authenticate` error says of the credential.
enum Credential {
    /// `invalid_token` or `expired_token`: refresh it.
    Expired,
    /// `insufficient_scope`: a refresh gives the same credential.
    Scope,
}

/// The credential error named by any `WWW-Authenticate` header (RFC 6750 §3's `error` auth-param); an expiry wins
/// over a scope error.
fn credential_error(headers: &[(String, String)]) -> Option<Credential> {
    let errors: Vec<String> = headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("www-authenticate"))
        .flat_map(|(_, value)| auth_errors(value))
        .collect();
    if errors.iter().any(|e| e == "invalid_token" || e == "expired_token") {
        Some(Credential::Expired)
    } else if errors.iter().any(|e| e == "insufficient_scope") {
        Some(Credential::Scope)
    } else {
        None
    }
}

/// The values (lower-cased) of every `error` auth-param in a `WWW-Authenticate` value, read outside quoted strings,
/// so an `error=` inside an `error_description` is not one.
fn auth_errors(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    let mut boundary = true;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' {
            (_, at) = quoted(bytes, at.saturating_add(1));
            boundary = false;
        } else if matches!(byte, b' ' | b'\t' | b',') {
            at = at.saturating_add(1);
            boundary = true;
        } else if boundary && is_tchar(byte) {
            let start = at;
            at = skip(bytes, at, is_tchar);
            let after = skip(bytes, at, |b| b == b' ' || b == b'\t');
            let name = value.get(start..at).unwrap_or_default();
            if name.eq_ignore_ascii_case("error") && bytes.get(after) == Some(&b'=') {
                let from = skip(bytes, after.saturating_add(1), |b| b == b' ' || b == b'\t');
                let (text, end) = if bytes.get(from) == Some(&b'"') {
                    quoted(bytes, from.saturating_add(1))
                } else {
                    let end = skip(bytes, from, is_tchar);
                    (value.get(from..end).unwrap_or_default().to_owned(), end)
                };
                found.push(text.to_ascii_lowercase());
                at = end;
            }
            boundary = false;
        } else {
            at = at.saturating_add(1);
            boundary = false;
        }
    }
    found
}

/// The first index at or after `at` whose byte is not `keep`.
fn skip(bytes: &[u8], mut at: usize, keep: impl Fn(u8) -> bool) -> usize {
    while bytes.get(at).is_some_and(|&b| keep(b)) {
        at = at.saturating_add(1);
    }
    at
}

/// A quoted string's content from just after its opening quote (backslash escapes undone), and the index after its
/// closing quote (the end, where it has none).
fn quoted(bytes: &[u8], mut at: usize) -> (String, usize) {
    let mut text = Vec::new();
    while let Some(&byte) = bytes.get(at) {
        at = at.saturating_add(1);
        match byte {
            b'"' => break,
            b'\\' => {
                if let Some(&escaped) = bytes.get(at) {
                    text.push(escaped);
                    at = at.saturating_add(1);
                }
            }
            other => text.push(other),
        }
    }
    (String::from_utf8_lossy(&text).into_owned(), at)
}

/// RFC 9110's `tchar`.
const fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(byte, b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-')
        || matches!(byte, b'.' | b'^' | b'_' | b'`' | b'|' | b'~')
}

#[cfg(test)]
mod tests;
