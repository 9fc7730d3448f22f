//! The filters of `charge` and `session` on `xrpl`: what the builds read of the request, in the forms they build
//! with, as the reference's `_mpp_checks.xrpl_charge_pairings` and `xrpl_session_pairings` check them.

use serde_json::Value;

use crate::json::{Member, Object, safe_int};
use crate::mpp::challenge::{Method, Parts};
use crate::mpp::network::xrpl_network;
use crate::mpp::values::has;
use crate::rail::xrpl::account_id;
use crate::refusal::{Reason, Refusal};

/// The XRPL charge: `charge` on `xrpl`.
pub(crate) static XRPL_CHARGE: Method = Method { intent: "charge", method: "xrpl", offers: xrpl_charge };
/// The XRPL session: `session` on `xrpl`.
pub(crate) static XRPL_SESSION: Method = Method { intent: "session", method: "xrpl", offers: xrpl_session };

/// A classic address's form: `r` and 24 to 34 characters of the XRPL alphabet (the checksum is not read here).
pub(crate) fn is_classic(text: &str) -> bool {
    text.starts_with('r')
        && (25..=35).contains(&text.len())
        && text
            .bytes()
            .all(|b| matches!(b, b'1'..=b'9' | b'A'..=b'H' | b'J'..=b'N' | b'P'..=b'Z' | b'a'..=b'k' | b'm'..=b'z'))
}

fn is_address(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(is_classic)
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `XRP`; an issued currency `{currency, issuer}` (exactly those members: a code of three characters of rippled's
/// set, not `XRP`, or 40 hex digits, and an issuer of an address's form); or an MPT `{mpt_issuance_id}` (48 hex
/// digits).
fn is_currency(value: Option<&Value>) -> bool {
    let Some(value) = value else { return false };
    if value.as_str() == Some("XRP") {
        return true;
    }
    let Some(o) = value.as_object() else { return false };
    if o.len() == 2 && o.contains_key("currency") && o.contains_key("issuer") {
        let code = o.get("currency").and_then(Value::as_str).is_some_and(|c| {
            (c.len() == 3
                && c != "XRP"
                && c.bytes().all(|b| b.is_ascii_alphanumeric() || b"?!@#$%^&*<>(){}[]|".contains(&b)))
                || is_hex(c, 40)
        });
        return code && is_address(o.get("issuer"));
    }
    o.len() == 1 && o.get("mpt_issuance_id").and_then(Value::as_str).is_some_and(|m| is_hex(m, 48))
}

/// An amount as the charge writes it: 1 to 40 integer digits without a leading zero, then optionally a point and 1
/// to 40 digits, not zero.
fn is_amount(text: &str) -> bool {
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let int_ok = (1..=40).contains(&int.len()) && digits(int) && (int == "0" || !int.starts_with('0'));
    let frac_ok = frac.is_none_or(|f| (1..=40).contains(&f.len()) && digits(f));
    int_ok && frac_ok && text.bytes().any(|b| matches!(b, b'1'..=b'9'))
}

/// A positive u64 in decimal.
fn is_u64_positive(text: &str) -> bool {
    (1..=78).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_digit())
        && text.parse::<u64>().is_ok_and(|n| n > 0)
}

/// A JSON number that is an integer from 0 to 2^32 - 1 (`7.0` is 7).
pub(crate) fn is_u32(value: Option<&Value>) -> bool {
    value.and_then(safe_int).is_some_and(|n| u32::try_from(n).is_ok())
}

/// `methodDetails.invoiceId` absent or 64 hex digits.
pub(crate) fn invoice_id_ok(d: &Object) -> bool {
    d.member("invoiceId").is_none_or(|i| i.as_str().is_some_and(|i| is_hex(i, 64)))
}

/// `charge` on `xrpl`: the network (`xrpl/network-missing`, `xrpl/network-malformed`); a recipient of an address's
/// form, a currency ([`is_currency`]), a positive amount (whole drops below 2^64 for XRP), an `invoiceId` absent or
/// 64 hex digits and the tags absent or u32 (`mpp/request-malformed`); no `memos`, which the build does not write
/// (`xrpl/memos-not-carried`).
fn xrpl_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    xrpl_network(d)?;
    let malformed = || Err(Refusal::mpp(Reason::RequestMalformed));
    let currency = r.member("currency");
    let amount = r.member("amount").and_then(Value::as_str);
    let amount_ok =
        amount.is_some_and(|a| is_amount(a) && (currency.and_then(Value::as_str) != Some("XRP") || is_u64_positive(a)));
    if !is_address(r.member("recipient")) || !is_currency(currency) || !amount_ok || !invoice_id_ok(d) {
        return malformed();
    }
    if ["destinationTag", "sourceTag"].iter().any(|k| has(d, k) && !is_u32(d.member(k))) {
        return malformed();
    }
    if has(d, "memos") {
        return Err(Refusal::new("xrpl", Reason::MemosNotCarried));
    }
    Ok(vec![super::CHARGE])
}

/// Drops as the claim signs them: a u64 in decimal, without a sign, point or leading zero.
pub(crate) fn is_drops(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|a| {
        (1..=20).contains(&a.len())
            && (a == "0" || !a.starts_with('0'))
            && a.bytes().all(|b| b.is_ascii_digit())
            && a.parse::<u64>().is_ok()
    })
}

/// `session` on `xrpl`, in the reference's order: no channel named yet (the request's `channelId` where present and
/// not null, else `methodDetails.channelId`, absent or empty; `mpp/channel-named`); the network
/// (`xrpl/network-missing`, `xrpl/network-malformed`); `currency` absent or `XRP` (`xrpl/currency-not-xrp`); a
/// classic recipient whose checksum holds and an amount in drops ([`is_drops`]; `mpp/request-malformed`).
fn xrpl_session(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let named = match r.member("channelId").filter(|c| !c.is_null()) {
        Some(c) => c.as_str() != Some(""),
        None => has(d, "channelId") && d.member("channelId").and_then(Value::as_str) != Some(""),
    };
    if named {
        return Err(Refusal::mpp(Reason::ChannelNamed));
    }
    xrpl_network(d)?;
    if has(r, "currency") && r.member("currency").and_then(Value::as_str) != Some("XRP") {
        return Err(Refusal::new("xrpl", Reason::CurrencyNotXrp));
    }
    let recipient = r.member("recipient").and_then(Value::as_str);
    if !recipient.is_some_and(|a| is_classic(a) && account_id(a).is_some()) || !is_drops(r.member("amount")) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    Ok(vec![super::session::ID])
}
