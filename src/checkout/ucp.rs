//! The Universal Commerce Protocol's checkout and booking: H and the link ride as the checkout's one `links[]` entry
//! of type `legal_context` (H in its `title`, in LCP's string form), the agreement URL as the one entry of type
//! `legal_context_agreement`. Under the AP2 Mandates extension (`ucp/checkout/ap2-mandate`,
//! `ucp/booking/ap2-mandate`) the checkout goes unchanged to the buyer's mandate issuer, and H is read back from the
//! checkout JWT the mandate commits to (AP2's check, [`super::ap2`]); without it (`ucp/checkout/unsigned`,
//! `ucp/booking/unsigned`) the buyer signs nothing and the gate confirms only.

use serde_json::{Map, Value};

use super::ap2::{checkout_binding, checkout_jwt_of};
use super::{MIB, agreement_fault, checkout_quote, chosen, from_lcp_string, json_size, longer_than, named_buyer};
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::link::{is_agreement_url, is_https_link, is_other_scheme_link};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Offer, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// `ucp/checkout/ap2-mandate`'s id.
pub(crate) const CHECKOUT_AP2: &str = "ucp/checkout/ap2-mandate";
/// `ucp/checkout/unsigned`'s id.
pub(crate) const CHECKOUT_UNSIGNED: &str = "ucp/checkout/unsigned";
/// `ucp/booking/ap2-mandate`'s id.
pub(crate) const BOOKING_AP2: &str = "ucp/booking/ap2-mandate";
/// `ucp/booking/unsigned`'s id.
pub(crate) const BOOKING_UNSIGNED: &str = "ucp/booking/unsigned";
/// `ucp/checkout/ap2-mandate`.
pub(crate) static CHECKOUT_AP2_PAIRING: Ucp = Ucp { booking: false, mandate: true };
/// `ucp/checkout/unsigned`.
pub(crate) static CHECKOUT_UNSIGNED_PAIRING: Ucp = Ucp { booking: false, mandate: false };
/// `ucp/booking/ap2-mandate`.
pub(crate) static BOOKING_AP2_PAIRING: Ucp = Ucp { booking: true, mandate: true };
/// `ucp/booking/unsigned`.
pub(crate) static BOOKING_UNSIGNED_PAIRING: Ucp = Ucp { booking: true, mandate: false };

const LINK_TYPE: &str = "legal_context";
const AGREEMENT_LINK_TYPE: &str = "legal_context_agreement";
const MAX_LINKS: usize = 64;
const MAX_ID: usize = 256;
const MAX_LINK: usize = super::MAX_LINK;
/// The network a UCP quote names: the business's payment handler charges off chain.
const NETWORK: &str = "ucp";

const fn ucp(reason: Reason) -> Refusal {
    Refusal::new("ucp", reason)
}

/// The entries of the checkout's `links` of a type.
fn entries_of<'a>(links: &'a [Value], kind: &str) -> Vec<&'a Value> {
    links.iter().filter(|e| e.is_object() && e.member("type").and_then(Value::as_str) == Some(kind)).collect()
}

/// H and the link of a checkout's one `legal_context` link: `ucp/no-legal-context` without one,
/// `ucp/legal-context-conflict` with two, `ucp/legal-context-malformed` for a `title` that is not H in LCP's form or a
/// `url` that is not an https link (`ucp/link-not-https` for another scheme), `ucp/too-large` over 64 links or a link
/// over 2048 characters.
fn legal_context_link(c: &dyn Member) -> Result<(AtrHash, String), Refusal> {
    if c.as_value().is_some_and(|v| !v.is_object()) {
        return Err(ucp(Reason::CheckoutMalformed));
    }
    let links = match c.member("links") {
        None => return Err(ucp(Reason::NoLegalContext)),
        Some(Value::Array(links)) if links.len() > MAX_LINKS => return Err(ucp(Reason::TooLarge)),
        Some(Value::Array(links)) => links,
        Some(_) => return Err(ucp(Reason::CheckoutMalformed)),
    };
    let entry = match entries_of(links, LINK_TYPE).as_slice() {
        [] => return Err(ucp(Reason::NoLegalContext)),
        [one] => *one,
        _ => return Err(ucp(Reason::LegalContextConflict)),
    };
    let h = entry.member("title").and_then(Value::as_str).and_then(from_lcp_string);
    let h = h.ok_or(ucp(Reason::LegalContextMalformed))?;
    let url = entry.member("url").and_then(Value::as_str);
    let Some(url) = url.filter(|u| is_https_link(u)) else {
        let reason =
            if url.is_some_and(is_other_scheme_link) { Reason::LinkNotHttps } else { Reason::LegalContextMalformed };
        return Err(ucp(reason));
    };
    if longer_than(url, MAX_LINK) {
        return Err(ucp(Reason::TooLarge));
    }
    Ok((h, url.to_owned()))
}

/// The url of the checkout's one `legal_context_agreement` link; `None` when it has none.
fn agreement_link(c: &Object) -> Result<Option<String>, Refusal> {
    let Some(Value::Array(links)) = c.member("links") else { return Ok(None) };
    let entry = match entries_of(links, AGREEMENT_LINK_TYPE).as_slice() {
        [] => return Ok(None),
        [one] => *one,
        _ => return Err(ucp(Reason::LegalContextConflict)),
    };
    match entry.member("url") {
        Some(Value::String(u)) if is_agreement_url(u) => Ok(Some(u.clone())),
        url => Err(ucp(agreement_fault(url))),
    }
}

/// The checkout as the pairings read it: an object of at most 1 MiB as JSON, within the nesting cap, with an `id` of
/// 1 to 256 characters.
fn checkout_of(doc: &Value) -> Result<&Object, Refusal> {
    let c = doc.as_object().ok_or(ucp(Reason::CheckoutMalformed))?;
    if json_size(doc).is_none_or(|size| size > MIB) {
        return Err(ucp(Reason::TooLarge));
    }
    let id = c.member("id").and_then(Value::as_str).filter(|id| !id.is_empty());
    if longer_than(id.ok_or(ucp(Reason::CheckoutMalformed))?, MAX_ID) {
        return Err(ucp(Reason::TooLarge));
    }
    Ok(c)
}

/// Whether the checkout carries AP2's merchant authorization: a detached JWS (`header..signature`).
fn ap2_active(c: &Object) -> bool {
    let auth = c.member("ap2").and_then(|a| a.member("merchant_authorization")).and_then(Value::as_str);
    let b64u = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    auth.and_then(|a| a.split_once("..")).is_some_and(|(header, signature)| b64u(header) && b64u(signature))
}

/// H and the link of a checkout, which under AP2 must carry the merchant's authorization (`ucp/ap2-not-active`).
fn read_checkout(doc: &Value, mandate: bool) -> Result<(&Object, AtrHash, String), Refusal> {
    let c = checkout_of(doc)?;
    let (h, link) = legal_context_link(c)?;
    if mandate && !ap2_active(c) {
        return Err(ucp(Reason::Ap2NotActive));
    }
    Ok((c, h, link))
}

/// A UCP checkout or booking pairing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ucp {
    booking: bool,
    mandate: bool,
}

impl Ucp {
    /// The checkout the choice holds (`ucp/choice-malformed` without one).
    fn checkout(chosen: &Chosen) -> Result<&Value, Refusal> {
        chosen.build_input.member("checkout").ok_or(ucp(Reason::ChoiceMalformed))
    }
}

impl Pairing for Ucp {
    fn id(&self) -> &'static str {
        match (self.booking, self.mandate) {
            (false, true) => CHECKOUT_AP2,
            (false, false) => CHECKOUT_UNSIGNED,
            (true, true) => BOOKING_AP2,
            (true, false) => BOOKING_UNSIGNED,
        }
    }

    fn public_proof(&self) -> bool {
        false
    }

    /// The checkout's `legal_context` link, and its `legal_context_agreement` link's url as the agreement URL.
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let (c, h, link) = read_checkout(doc, self.mandate)?;
        let agreement = agreement_link(c)?;
        Ok(Advertised { h, link, offer: Offer::Json(doc), agreement })
    }

    /// The checkout, for a buyer named by a CAIP-10 account (`ucp/no-payable-option` otherwise): `{checkout}`.
    fn choose(&self, _read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        named_buyer("ucp", ctx)?;
        let mut members = Map::with_capacity(1);
        members.insert("checkout".into(), ctx.doc.clone());
        Ok(chosen(self.id(), members, ctx))
    }

    /// None.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    /// The checkout's total where it names one (its `totals` entry of type `total`, in minor units), else an unknown
    /// amount, in its `currency`, on the `ucp` network under `checkout` or `booking`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let c = Self::checkout(chosen)?.as_object().ok_or(ucp(Reason::CheckoutMalformed))?;
        Ok(checkout_quote(c, NETWORK, if self.booking { "booking" } else { "checkout" }))
    }

    /// Under AP2: the checkout unchanged, once its link carries H (`ucp/hash-not-in-checkout`), for the buyer's
    /// mandate issuer (`ucp-checkout`). Unsigned: `ucp/nothing-to-sign`.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        if !self.mandate {
            return Err(ucp(Reason::NothingToSign));
        }
        let checkout = Self::checkout(chosen).map_err(|_| ucp(Reason::CheckoutMalformed))?;
        let (_, advertised, _) = read_checkout(checkout, true)?;
        if advertised != *h {
            return Err(ucp(Reason::HashNotInCheckout));
        }
        Ok(Box::new(Issue { checkout }))
    }

    /// Under AP2: the hash in the checkout JWT the buyer's mandate commits to, after AP2's `checkout_hash` check.
    /// Unsigned: `ucp/not-buyer-signed`, whatever is presented.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        if !self.mandate {
            return Err(ucp(Reason::NotBuyerSigned));
        }
        let payload = Value::Object(checkout_binding(presented)?);
        legal_context_link(&payload).map(|(h, _)| h)
    }
}

/// The checkout for the buyer's mandate issuer.
struct Issue<'a> {
    checkout: &'a Value,
}

impl Unsigned for Issue<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("checkout".into(), self.checkout.clone());
        Ok(Some(SigningRequest::UcpCheckout(fields)))
    }

    /// The checkout mandate as issued (a non-empty string, `ucp/signature-malformed` otherwise), with the
    /// `checkout_jwt` it discloses: `{checkout_mandate, checkout_jwt}`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let mandate = answers.first().map(Answer::as_json).filter(|m| m.as_str().is_some_and(|s| !s.is_empty()));
        let mandate = mandate.ok_or(ucp(Reason::SignatureMalformed))?;
        let jwt = checkout_jwt_of(mandate)?;
        let payment = serde_json::json!({"checkout_mandate": mandate, "checkout_jwt": jwt});
        Ok(Completion::Payment { payment: Box::new(payment), landed: None })
    }
}
