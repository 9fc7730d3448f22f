//! `acp/checkout/delegated` and `acp/checkout/undelegated`: the Agentic Commerce Protocol checkout session whose `id`
//! is H, with the link (and the agreement URL) in `metadata.legal_context`. Where the seller's handler requires
//! `delegate_payment`, the agent's allowance names the session as `checkout_session_id`, built here from the buyer's
//! own values; otherwise the buyer signs nothing and the gate confirms only.

use ruint::aliases::U256;
use serde_json::{Map, Value, json};

use super::{
    MIB, agreement_in, checkout_quote, chosen, hash_with_non_https_link, json_size, legal_context_info, longer_than,
    named_buyer, safe_uint,
};
use crate::hash::AtrHash;
use crate::json::{Member, canonical};
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Offer, Pairing, Quote, Unsigned,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// `acp/checkout/delegated`'s id.
pub(crate) const DELEGATED: &str = "acp/checkout/delegated";
/// `acp/checkout/undelegated`'s id.
pub(crate) const UNDELEGATED: &str = "acp/checkout/undelegated";
/// `acp/checkout/delegated`.
pub(crate) static DELEGATED_PAIRING: Acp = Acp { delegated: true };
/// `acp/checkout/undelegated`.
pub(crate) static UNDELEGATED_PAIRING: Acp = Acp { delegated: false };

/// The network an ACP quote names: the seller's payment service provider charges off chain.
const NETWORK: &str = "acp";
const HASH_LENGTH: usize = 66;
const MAX_LINK: usize = super::MAX_LINK;
const MAX_MERCHANT_ID: usize = 256;
const MAX_EXPIRES_AT: usize = 64;
const ALLOWANCE_MEMBERS: [&str; 6] =
    ["reason", "max_amount", "currency", "checkout_session_id", "merchant_id", "expires_at"];

/// The allowance values the buyer gives.
static INPUTS: [InputSpec; 4] = [
    InputSpec::required("max_amount", InputType::Integer, "the most the seller may charge, in minor units"),
    InputSpec::required("currency", InputType::String, "the allowance's currency, ISO 4217 in lower case (usd)")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("merchant_id", InputType::String, "the merchant the allowance is for")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("expires_at", InputType::String, "when the allowance ends, an RFC 3339 date-time")
        .with_format(InputFormat::NonEmpty),
];

const fn acp(reason: Reason) -> Refusal {
    Refusal::new("acp", reason)
}

/// The session's read: H from `id` (any case), the link and agreement URL from `metadata.legal_context`, whose hash
/// must be the same.
fn read(doc: &Value) -> Result<Advertised<'_>, Refusal> {
    let session = doc.as_object().ok_or(acp(Reason::SessionMalformed))?;
    if json_size(doc).is_none_or(|size| size > MIB) {
        return Err(acp(Reason::TooLarge));
    }
    let id = session.member("id");
    if id.and_then(Value::as_str).is_some_and(|id| longer_than(id, HASH_LENGTH)) {
        return Err(acp(Reason::TooLarge));
    }
    let h = id.and_then(Value::as_str).and_then(AtrHash::parse).ok_or(acp(Reason::IdNotHash))?;
    let lc = match session.member("metadata") {
        Some(Value::Object(metadata)) => metadata.get("legal_context").ok_or(acp(Reason::NoLegalContext))?,
        _ => return Err(acp(Reason::NoLegalContext)),
    };
    let Some((value, link)) = legal_context_info(lc) else {
        let reason = if hash_with_non_https_link(lc) { Reason::LinkNotHttps } else { Reason::LegalContextMalformed };
        return Err(acp(reason));
    };
    // The vector file's row "read of a legal_context link over 2048 characters" expects legal-context-malformed; the
    // reference (0.4.0) answers acp/too-large for it, and the reference decides.
    if longer_than(&link, MAX_LINK) {
        return Err(acp(Reason::TooLarge));
    }
    if value != h {
        return Err(acp(Reason::LegalContextConflict));
    }
    let agreement = agreement_in(lc).map_err(acp)?;
    Ok(Advertised { h, link, offer: Offer::Json(doc), agreement })
}

/// Days in a month of the proleptic Gregorian calendar.
const fn days_in(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the date (Howard Hinnant's `days_from_civil`).
const fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An RFC 3339 date-time (`full-date "T" full-time`, either case of `T` and `Z`, each field in its range, a leap
/// second allowed) as Unix seconds, the fraction dropped; `None` for any other text.
fn rfc3339_seconds(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = b.get(from..from + n)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    let shape = sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":");
    if !shape || !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if sep(at, b".") {
        let fraction = b.get(at + 1..).map_or(0, |rest| rest.iter().take_while(|d| d.is_ascii_digit()).count());
        if fraction == 0 {
            return None;
        }
        at += 1 + fraction;
    }
    let offset = match b.get(at..) {
        Some(b"Z" | b"z") => 0,
        Some([sign @ (b'+' | b'-'), ..]) if b.len() == at + 6 && sep(at + 3, b":") => {
            let (oh, om) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let minutes = oh * 60 + om;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return None,
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset * 60)
}

/// The allowance values of a choice, held to ACP's forms: the buyer's values as the build writes them.
struct Allowance<'a> {
    max_amount: u64,
    currency: &'a str,
    merchant_id: &'a str,
    expires_at: &'a str,
}

impl<'a> Allowance<'a> {
    /// The values of the choice: `acp/too-large` for a `merchant_id` over 256 or an `expires_at` over 64 UTF-16 code
    /// units, `acp/choice-malformed` for a `max_amount` that is not a non-negative safe integer, a currency that is
    /// not three lower-case letters, an empty `merchant_id` or an `expires_at` that is not an RFC 3339 date-time.
    fn of(choice: &'a Map<String, Value>) -> Result<Self, Refusal> {
        let text = |key: &str| choice.member(key).and_then(Value::as_str);
        let (merchant_id, expires_at) = (text("merchant_id"), text("expires_at"));
        if merchant_id.is_some_and(|m| longer_than(m, MAX_MERCHANT_ID))
            || expires_at.is_some_and(|e| longer_than(e, MAX_EXPIRES_AT))
        {
            return Err(acp(Reason::TooLarge));
        }
        let malformed = acp(Reason::ChoiceMalformed);
        let max_amount = choice.member("max_amount").and_then(safe_uint).ok_or(malformed.clone())?;
        let currency = text("currency")
            .filter(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_lowercase()))
            .ok_or(malformed.clone())?;
        let merchant_id = merchant_id.filter(|m| !m.is_empty()).ok_or(malformed.clone())?;
        let expires_at = expires_at.filter(|e| rfc3339_seconds(e).is_some()).ok_or(malformed)?;
        Ok(Self { max_amount, currency, merchant_id, expires_at })
    }

    /// The allowance, in ACP's member order, with `checkout_session_id` = H.
    fn with(&self, h: &AtrHash) -> Value {
        json!({
            "reason": "one_time",
            "max_amount": self.max_amount,
            "currency": self.currency,
            "checkout_session_id": h.to_hex(),
            "merchant_id": self.merchant_id,
            "expires_at": self.expires_at,
        })
    }
}

/// Whether the value is an allowance as ACP writes it: exactly its six members, `reason` `one_time`, a non-negative
/// safe integer `max_amount`, and strings for the rest.
fn is_allowance(a: Option<&Value>) -> bool {
    let Some(a) = a.and_then(Value::as_object) else { return false };
    let string = |key: &str| a.get(key).is_some_and(Value::is_string);
    a.len() == ALLOWANCE_MEMBERS.len()
        && ALLOWANCE_MEMBERS.iter().all(|k| a.contains_key(*k))
        && a.get("reason").and_then(Value::as_str) == Some("one_time")
        && a.get("max_amount").and_then(safe_uint).is_some()
        && ["currency", "checkout_session_id", "merchant_id", "expires_at"].into_iter().all(string)
}

/// An ACP checkout pairing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Acp {
    delegated: bool,
}

impl Acp {
    /// The session the choice holds (`acp/choice-malformed` without one).
    fn session(chosen: &Chosen) -> Result<&Map<String, Value>, Refusal> {
        chosen.build_input.member("session").and_then(Value::as_object).ok_or(acp(Reason::ChoiceMalformed))
    }
}

impl Pairing for Acp {
    fn id(&self) -> &'static str {
        if self.delegated { DELEGATED } else { UNDELEGATED }
    }

    fn public_proof(&self) -> bool {
        false
    }

    /// The session's `id` as H, and `metadata.legal_context`'s link and agreement URL, its hash the same.
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read(doc)
    }

    /// The session, for a buyer named by a CAIP-10 account (`acp/no-payable-option` otherwise): `{session}`, and for
    /// the delegated checkout the buyer's four allowance values beside it (`max_amount` a non-negative integer, else
    /// `acp/input-missing`).
    fn choose(&self, _read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        named_buyer("acp", ctx)?;
        let mut members = Map::with_capacity(5);
        members.insert("session".into(), ctx.doc.clone());
        if self.delegated {
            for spec in &INPUTS {
                let value = ctx.inputs.member(spec.name).filter(|v| spec.accepts(v));
                let value = value.filter(|v| spec.name != "max_amount" || safe_uint(v).is_some());
                members.insert(spec.name.into(), value.cloned().ok_or(acp(Reason::InputMissing))?);
            }
        }
        Ok(chosen(self.id(), members, ctx))
    }

    /// The delegated checkout: `max_amount`, `currency`, `merchant_id` and `expires_at`.
    fn inputs(&self) -> &'static [InputSpec] {
        if self.delegated { &INPUTS } else { &[] }
    }

    /// Delegated: the allowance's `max_amount` of its `currency` to its `merchant_id`, valid before its `expires_at`
    /// (the choice refused as the build refuses it). Undelegated: the session's total where it names one, else an
    /// unknown amount ([`Quote::unknown_amount`]), in the session's currency. On the `acp` network, under `delegated`
    /// or `undelegated`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let session = Self::session(chosen)?;
        if !self.delegated {
            return Ok(checkout_quote(session, NETWORK, "undelegated"));
        }
        let a = Allowance::of(&chosen.build_input)?;
        let before = rfc3339_seconds(a.expires_at).and_then(|s| u64::try_from(s).ok());
        Ok(Quote::new(U256::from(a.max_amount), a.currency, a.merchant_id, NETWORK, "delegated")
            .with_window(None, before))
    }

    /// Delegated: the allowance from the buyer's values with `checkout_session_id` = H, once H is the session's `id`
    /// (`acp/hash-not-session`), for the agent (`acp-allowance`). Undelegated: `acp/nothing-to-sign`.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        if !self.delegated {
            return Err(acp(Reason::NothingToSign));
        }
        let session_id = chosen.build_input.member("session").and_then(|s| s.member("id")).and_then(Value::as_str);
        if session_id.and_then(AtrHash::parse).as_ref() != Some(h) {
            return Err(acp(Reason::HashNotSession));
        }
        let allowance = Allowance::of(&chosen.build_input)?.with(h);
        let kept = canonical(&allowance).ok_or(acp(Reason::ChoiceMalformed))?;
        Ok(Box::new(Delegated { allowance, kept }))
    }

    /// Delegated: the allowance's `checkout_session_id` (`acp/allowance-malformed` for anything but ACP's six members,
    /// `acp/id-not-hash` for an id that is not a hash). Undelegated: `acp/not-buyer-signed`, whatever is presented.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        if !self.delegated {
            return Err(acp(Reason::NotBuyerSigned));
        }
        let allowance = presented.member("allowance");
        if !is_allowance(allowance) {
            return Err(acp(Reason::AllowanceMalformed));
        }
        let id = allowance.and_then(|a| a.member("checkout_session_id")).and_then(Value::as_str);
        id.and_then(AtrHash::parse).ok_or(acp(Reason::IdNotHash))
    }
}

/// The allowance built, and its canonical form the agent's answer must match.
struct Delegated {
    allowance: Value,
    kept: String,
}

impl Unsigned for Delegated {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("allowance".into(), self.allowance.clone());
        Ok(Some(SigningRequest::AcpAllowance(fields)))
    }

    /// The agent's `delegate_payment` request, as it answered it: an object (`acp/signature-malformed` otherwise)
    /// whose `allowance` is the one built, compared in canonical form (`acp/allowance-changed` otherwise).
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let answer = answers.first().map(Answer::as_json).filter(|a| a.is_object());
        let answer = answer.ok_or(acp(Reason::SignatureMalformed))?;
        let given = answer.member("allowance").and_then(canonical);
        if given.as_deref() != Some(self.kept.as_str()) {
            return Err(acp(Reason::AllowanceChanged));
        }
        Ok(Completion::Payment { payment: Box::new(answer.clone()), landed: None })
    }
}

#[cfg(test)]
mod tests {
    use super::rfc3339_seconds;

    #[test]
    fn an_rfc3339_date_time_is_its_unix_seconds() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_seconds("2026-09-21T14:23:20Z"), Some(1_790_000_600));
        assert_eq!(rfc3339_seconds("2026-09-21T16:23:20.5+02:00"), Some(1_790_000_600));
        assert_eq!(rfc3339_seconds("2024-02-29t00:00:00z"), Some(1_709_164_800));
        for bad in ["2026-02-30T00:00:00Z", "2026-09-21 14:23:20", "2026-09-21T24:00:00Z", "2026-09-21T14:23:20.Z"] {
            assert_eq!(rfc3339_seconds(bad), None, "{bad}");
        }
        assert_eq!(rfc3339_seconds("2026-09-21T14:23:20+24:00"), None);
        assert_eq!(rfc3339_seconds("2026-09-21T14:23:20"), None);
    }
}
