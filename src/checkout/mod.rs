//! The agentic checkouts (the reference's `bindings/acp_checkout.py`, `ack_payment_request.py`,
//! `ap2_checkout_mandate.py`, `ucp.py` and their pieces). In none of them does the payment carry H anywhere public, so
//! each is paid after an agreement payment:
//!
//! - `acp/checkout/delegated`: the checkout session's `id` is H (the link beside it in `metadata.legal_context`), and
//!   the agent's `delegate_payment` allowance names it as `checkout_session_id` ([`acp`]).
//! - `acp/checkout/undelegated`: the session's `id` alone; the buyer signs nothing.
//! - `ack/payment-request`: the seller-signed Payment Request token's `id` is H in LCP's string form ([`ack`]); ACK
//!   defines no payer signature.
//! - `ap2/checkout-mandate`: H rides in the merchant's `checkout_jwt`, to which the buyer's closed Checkout Mandate
//!   commits through `checkout_hash` ([`ap2`]).
//! - `ucp/checkout/ap2-mandate`, `ucp/booking/ap2-mandate`: the checkout's `links[]` entry of type `legal_context`,
//!   and the AP2 mandate over it; `ucp/checkout/unsigned`, `ucp/booking/unsigned`: the link alone ([`ucp`]).
//!
//! Nothing here verifies a signature: the reference reads the JWS and SD-JWT segments without one.

mod ack;
mod acp;
mod ap2;
mod ucp;

pub(crate) use ack::{ID as ACK, PAIRING as ACK_PAIRING};
pub(crate) use acp::{DELEGATED as ACP_DELEGATED, DELEGATED_PAIRING as ACP_DELEGATED_PAIRING};
pub(crate) use acp::{UNDELEGATED as ACP_UNDELEGATED, UNDELEGATED_PAIRING as ACP_UNDELEGATED_PAIRING};
pub(crate) use ap2::{ID as AP2, PAIRING as AP2_PAIRING};
pub(crate) use ucp::{BOOKING_AP2, BOOKING_AP2_PAIRING, BOOKING_UNSIGNED, BOOKING_UNSIGNED_PAIRING};
pub(crate) use ucp::{CHECKOUT_AP2, CHECKOUT_AP2_PAIRING, CHECKOUT_UNSIGNED, CHECKOUT_UNSIGNED_PAIRING};

use ruint::aliases::U256;
use serde_json::{Map, Value};

use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::{self, Member, js_length, safe_int};
use crate::legal_context::either_spelling;
use crate::legal_context::{hash_with_non_https_link, legal_context_info};
use crate::link::{is_agreement_url, is_other_scheme_link};
use crate::pairing::{ChooseContext, Chosen, Quote};
use crate::refusal::{Reason, Refusal};

/// The most bytes a seller's document may take as JSON (1 MiB).
const MIB: usize = 1_048_576;
/// The longest link a legal context may name, in UTF-16 code units.
const MAX_LINK: usize = 2048;
/// The prefix of H in LCP's string form.
const LCP_PREFIX: &str = "lcp:sha256:";

/// The UTF-8 length of the value as JSON.stringify writes it; `None` past the crate's nesting cap, which every size
/// bound refuses (the reference measures such a value as infinitely large).
fn json_size(value: &Value) -> Option<usize> {
    json::to_js_string(value).map(|text| text.len())
}

/// H from `lcp:sha256:0x…` (64 hex digits in either case).
fn from_lcp_string(value: &str) -> Option<AtrHash> {
    value.strip_prefix(LCP_PREFIX).and_then(AtrHash::parse)
}

/// Why a value is not an agreement URL: `link-not-https` for a link of another scheme, else
/// `legal-context-malformed`.
fn agreement_fault(url: Option<&Value>) -> Reason {
    match url.and_then(Value::as_str) {
        Some(u) if is_other_scheme_link(u) => Reason::LinkNotHttps,
        _ => Reason::LegalContextMalformed,
    }
}

/// The agreement URL a legal context object names, in either spelling: `Ok(None)` when it names none; the fault when
/// the spellings differ or the value is not an agreement URL.
fn agreement_in(lc: &Value) -> Result<Option<String>, Reason> {
    let Some(lc) = lc.as_object() else { return Ok(None) };
    let (camel, snake) = ("legalContextAgreementUrl", "legal_context_agreement_url");
    if !lc.contains_key(camel) && !lc.contains_key(snake) {
        return Ok(None);
    }
    let url = either_spelling(lc, camel, snake).map_err(|()| Reason::LegalContextMalformed)?;
    match url.and_then(Value::as_str) {
        Some(u) if is_agreement_url(u) => Ok(Some(u.to_owned())),
        _ => Err(agreement_fault(url)),
    }
}

/// A JSON number holding a non-negative safe integer.
fn safe_uint(value: &Value) -> Option<u64> {
    safe_int(value).and_then(|n| u64::try_from(n).ok())
}

/// `<ns>/no-payable-option` unless the signer's account is CAIP-10.
fn named_buyer(ns: &'static str, ctx: &ChooseContext<'_>) -> Result<Account, Refusal> {
    Account::parse(ctx.account).ok_or(Refusal::new(ns, Reason::NoPayableOption))
}

/// A choice of `members` for the pairing `id`.
fn chosen(id: &str, members: Map<String, Value>, ctx: &ChooseContext<'_>) -> Chosen {
    Chosen { pairing: id.to_owned(), build_input: members, reference: ctx.reference.to_owned(), agreement: None }
}

/// The amount a checkout's `totals` names: the one entry of type `total`, a non-negative safe integer in the minor
/// unit of the checkout's currency (UCP and ACP write it so). `None` when the checkout names none or names it in
/// another form: the quote then says the amount is unknown.
fn total_of(checkout: &Map<String, Value>) -> Option<U256> {
    let totals = checkout.member("totals")?.as_array()?;
    let mut named = totals.iter().filter(|t| t.member("type").and_then(Value::as_str) == Some("total"));
    let total = named.next()?;
    if named.next().is_some() {
        return None;
    }
    total.member("amount").and_then(safe_uint).map(U256::from)
}

/// The quote of a checkout that names its total (or not) in its `currency`, on `network` under `scheme`; the payee
/// is the seller's own, which no checkout names.
fn checkout_quote(checkout: &Map<String, Value>, network: &str, scheme: &str) -> Quote {
    let currency = checkout.member("currency").and_then(Value::as_str).unwrap_or_default();
    match total_of(checkout) {
        Some(amount) => Quote::new(amount, currency, "", network, scheme),
        None => Quote::unknown_amount(currency, "", network, scheme),
    }
}

/// Whether the text's length in UTF-16 code units is over `max`.
fn longer_than(text: &str, max: usize) -> bool {
    js_length(text) > max
}
