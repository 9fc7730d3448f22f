//! The envelope beside a recovery: the seller's quota headers as received, and the spend the policy read.

use ruint::aliases::U256;
use serde::Serialize;

use super::Recovery;

/// The quota headers' names, as sellers send them (matched case-insensitively).
const LIMIT: &str = "x-quota-limit";
const REMAINING: &str = "x-quota-remaining";
const RESET: &str = "x-quota-reset";

/// One quota header as received: its raw text (repeated lines joined with `", "`, as HTTP joins them) and the
/// number it reads as, where it is plain ASCII digits (whitespace around them ignored) below 2^64. A negative, a
/// fraction, a date or a number too large keeps its text and reads as no number. Serialized as
/// `{"raw": "100", "number": 100}`, `number` left out where there is none.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct QuotaField {
    raw: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    number: Option<u64>,
}

impl QuotaField {
    /// A field of this raw text, its number read from it.
    pub fn new(raw: impl Into<String>) -> Self {
        let raw = raw.into();
        let digits = raw.trim_matches(|c| c == ' ' || c == '\t');
        let number = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse::<u64>().ok())
            .flatten();
        Self { raw, number }
    }

    /// The text as received.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The number it reads as, where it reads as one.
    pub const fn number(&self) -> Option<u64> {
        self.number
    }
}

/// The seller's quota as its headers say it (`X-Quota-Limit`, `X-Quota-Remaining`, `X-Quota-Reset`), each as
/// received. What `X-Quota-Reset` counts (seconds from now, or a Unix time) is the seller's; it is kept, never
/// interpreted. Absent headers are left out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Quota {
    /// `X-Quota-Limit`: what the quota window holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<QuotaField>,
    /// `X-Quota-Remaining`: what is left of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<QuotaField>,
    /// `X-Quota-Reset`: when it resets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<QuotaField>,
}

impl Quota {
    /// The quota of a response's headers (names matched case-insensitively, a name that repeats joined with
    /// `", "`); `None` when none of the three is there.
    pub fn from_headers(headers: &[(String, String)]) -> Option<Self> {
        let quota =
            Self { limit: field(headers, LIMIT), remaining: field(headers, REMAINING), reset: field(headers, RESET) };
        (quota.limit.is_some() || quota.remaining.is_some() || quota.reset.is_some()).then_some(quota)
    }

    /// Whether the quota is exhausted with its reset visible: all three headers present, the remaining reading as
    /// 0 and the reset as a number. A quota answer short of that is one the recovery map does not know.
    pub fn is_exhausted(&self) -> bool {
        self.limit.is_some()
            && self.remaining.as_ref().and_then(QuotaField::number) == Some(0)
            && self.reset.as_ref().and_then(QuotaField::number).is_some()
    }
}

fn field(headers: &[(String, String)], name: &str) -> Option<QuotaField> {
    let mut values = headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    let mut raw = values.next()?.to_owned();
    for value in values {
        raw.push_str(", ");
        raw.push_str(value);
    }
    Some(QuotaField::new(raw))
}

/// The spend of a payment, from the policy: the per-payment cap, the amount required and the budget remaining after
/// this payment, each in the asset's atomic units as a decimal string. `remaining_after` is the remaining budget
/// less the amount required, at least zero; `over_budget` says the amount is more than the budget held.
/// Serialized as `{"cap": "1000", "required": "250", "remaining_after": "750", "over_budget": false}`, absent
/// amounts left out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct SpendEnvelope {
    #[serde(skip_serializing_if = "Option::is_none")]
    cap: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    required: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining_after: Option<String>,
    over_budget: bool,
}

impl SpendEnvelope {
    /// The spend of a payment of `required` under a per-payment `cap`, with `remaining` left of the budget before
    /// it. `remaining_after` is known only when both `remaining` and `required` are.
    pub fn new(cap: Option<U256>, required: Option<U256>, remaining: Option<U256>) -> Self {
        let after = remaining.zip(required).map(|(held, needed)| (held.saturating_sub(needed), needed > held));
        Self {
            cap: cap.map(|v| v.to_string()),
            required: required.map(|v| v.to_string()),
            remaining_after: after.map(|(left, _)| left.to_string()),
            over_budget: after.is_some_and(|(_, over)| over),
        }
    }

    /// The per-payment cap for the asset, where the policy has one.
    pub fn cap(&self) -> Option<&str> {
        self.cap.as_deref()
    }

    /// The amount the payment requires.
    pub fn required(&self) -> Option<&str> {
        self.required.as_deref()
    }

    /// The budget left after this payment, at least zero.
    pub fn remaining_after(&self) -> Option<&str> {
        self.remaining_after.as_deref()
    }

    /// Whether the payment requires more than the budget held (`remaining_after` is then zero, not negative).
    pub const fn over_budget(&self) -> bool {
        self.over_budget
    }
}

/// One outcome for an agent: the recovery, the seller's quota where its headers said one, and the payment's spend
/// where the policy read one. Serialized as `{"recovery": {…}, "quota": {…}, "spend": {…}}`, absent parts left
/// out.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// What the agent may do next.
    pub recovery: Recovery,
    /// The seller's quota headers, as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<Quota>,
    /// The payment's spend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spend: Option<SpendEnvelope>,
}

impl Outcome {
    /// An outcome of this recovery alone.
    pub const fn new(recovery: Recovery) -> Self {
        Self { recovery, quota: None, spend: None }
    }

    /// The outcome of an HTTP answer ([`Recovery::of_http`]) with the quota its headers carry; `None` for a
    /// success.
    pub fn of_http(status: u16, headers: &[(String, String)], payment_sent: bool) -> Option<Self> {
        let recovery = Recovery::of_http(status, headers, payment_sent)?;
        Some(Self { recovery, quota: Quota::from_headers(headers), spend: None })
    }

    /// The same outcome with the seller's quota.
    #[must_use]
    pub fn with_quota(mut self, quota: Option<Quota>) -> Self {
        self.quota = quota;
        self
    }

    /// The same outcome with the payment's spend.
    #[must_use]
    pub fn with_spend(mut self, spend: Option<SpendEnvelope>) -> Self {
        self.spend = spend;
        self
    }
}
