//! The card pairings (the reference's `bindings/card.py` and `pieces/card.py`). In none of them does the card charge
//! carry H anywhere public, so each is paid after an agreement payment:
//!
//! - `card/visa-tap`: the agent's RFC 9421 signer adds an `lcp-hash` field holding H and lists it among the covered
//!   components of its `agent-payer-auth` signature; the seller's recognition verifies that signature.
//! - `card/mastercard-vi/immediate`: H rides in the merchant's `checkout_jwt`, whose digest the user's L2 mandate
//!   signs as `checkout_hash`.
//! - `card/mastercard-vi/autonomous`: as Immediate, in the agent's L3b checkout mandate, signed under the key the
//!   user's L2 delegates, L2 signed under L1's key: the two ES256 signatures are verified.
//! - `card/seller-reference`: the plain card checkout; nothing the buyer signs carries H, and the gate confirms only.
//!
//! The build input is the seller's document itself (the shown JSON for TAP and the plain checkout, the
//! `checkout_jwt` for Verifiable Intent), held in the choice as `{doc}`. No amount is named by any of them: the
//! processor charges the card. A quote says so ([`Quote::amount_known`]).

mod sfv;
mod tap;
#[cfg(test)]
mod tests;
mod vi;

use serde_json::{Map, Value};

use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::{Member, js_length};
use crate::link::{MAX_LINK_CHARS, is_agreement_url, is_https_link};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Offer, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// `card/visa-tap`'s id.
pub const VISA_TAP: &str = "card/visa-tap";
/// `card/mastercard-vi/immediate`'s id.
pub const VI_IMMEDIATE: &str = "card/mastercard-vi/immediate";
/// `card/mastercard-vi/autonomous`'s id.
pub const VI_AUTONOMOUS: &str = "card/mastercard-vi/autonomous";
/// `card/seller-reference`'s id.
pub const SELLER_REFERENCE: &str = "card/seller-reference";

/// `card/visa-tap`.
pub static VISA_TAP_PAIRING: Card = Card { kind: Kind::VisaTap };
/// `card/mastercard-vi/immediate`.
pub static VI_IMMEDIATE_PAIRING: Card = Card { kind: Kind::ViImmediate };
/// `card/mastercard-vi/autonomous`.
pub static VI_AUTONOMOUS_PAIRING: Card = Card { kind: Kind::ViAutonomous };
/// `card/seller-reference`.
pub static SELLER_REFERENCE_PAIRING: Card = Card { kind: Kind::SellerReference };

/// The network a card quote names: `card:` and the scheme (`card:visa-tap`, `card:mastercard-vi`,
/// `card:seller-reference`), so a spend policy lists card payments as it lists a chain (as `mpp:card` for MPP's).
fn card_network(scheme: &str) -> String {
    format!("card:{scheme}")
}

const fn card(reason: Reason) -> Refusal {
    Refusal::new("card", reason)
}

/// The legal context's H and link, from an object's `legalContext`: type `sha256`, a 32-byte hash, one https link
/// (in either spelling) of at most 2048 UTF-16 code units. Every other form, a link of another scheme included, is
/// `card/legal-context-malformed` (the card read has no `link-not-https`).
fn legal_context_of(o: &Map<String, Value>) -> Result<(AtrHash, String), Refusal> {
    let malformed = card(Reason::LegalContextMalformed);
    let lc = o.member("legalContext").and_then(Value::as_object).ok_or(malformed.clone())?;
    if lc.member("type").and_then(Value::as_str) != Some("sha256") {
        return Err(malformed);
    }
    let h = lc.member("value").and_then(Value::as_str).and_then(AtrHash::parse).ok_or(malformed.clone())?;
    let link = either_spelling(lc, "legalContextUrl", "legal_context_url").ok_or(malformed.clone())?;
    let link = link.and_then(Value::as_str).filter(|l| is_https_link(l)).ok_or(malformed.clone())?;
    if js_length(link) > MAX_LINK_CHARS {
        return Err(malformed);
    }
    Ok((h, link.to_owned()))
}

/// The one value a member written in two spellings holds: `None` when both are present and differ. A `null` member
/// counts as absent for the value, as present for the comparison.
fn either_spelling<'a>(o: &'a Map<String, Value>, camel: &str, snake: &str) -> Option<Option<&'a Value>> {
    let (c, s) = (o.get(camel), o.get(snake));
    if c.is_some() && s.is_some() && c != s {
        return None;
    }
    Some(c.filter(|v| !v.is_null()).or(s.filter(|v| !v.is_null())))
}

/// The agreement URL the legal context names, in either spelling; `card/legal-context-malformed` when the spellings
/// differ or the value is not an https link of at most 2048 UTF-16 code units.
fn agreement_of(o: &Map<String, Value>) -> Result<Option<String>, Refusal> {
    let Some(lc) = o.member("legalContext").and_then(Value::as_object) else { return Ok(None) };
    if !lc.contains_key("legalContextAgreementUrl") && !lc.contains_key("legal_context_agreement_url") {
        return Ok(None);
    }
    let url = either_spelling(lc, "legalContextAgreementUrl", "legal_context_agreement_url")
        .flatten()
        .and_then(Value::as_str);
    match url {
        Some(u) if is_agreement_url(u) => Ok(Some(u.to_owned())),
        _ => Err(card(Reason::LegalContextMalformed)),
    }
}

/// H, the link and the agreement URL of an object that carries a `legalContext`.
fn advertised<'a>(o: &Map<String, Value>, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
    let (h, link) = legal_context_of(o)?;
    let agreement = agreement_of(o)?;
    Ok(Advertised { h, link, offer: Offer::Json(doc), agreement })
}

/// The read of the JSON the seller showed (TAP, the plain checkout): an object with a `legalContext`
/// (`card/no-legal-context` otherwise).
fn read_shown(doc: &Value) -> Result<Advertised<'_>, Refusal> {
    match doc.as_object() {
        Some(o) if o.contains_key("legalContext") => advertised(o, doc),
        _ => Err(card(Reason::NoLegalContext)),
    }
}

/// The read of a Verifiable Intent checkout: the `checkout_jwt`'s payload carries the legal context.
fn read_checkout_shown(doc: &Value) -> Result<Advertised<'_>, Refusal> {
    let payload = vi::checkout_payload(doc)?;
    advertised(&payload, doc)
}

/// Which card pairing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    VisaTap,
    ViImmediate,
    ViAutonomous,
    SellerReference,
}

/// A card pairing.
#[derive(Debug, Clone, Copy)]
pub struct Card {
    kind: Kind,
}

impl Card {
    /// The seller's document the choice holds (`card/choice-malformed` without one).
    fn doc<'a>(&self, chosen: &'a Chosen) -> Result<&'a Value, Refusal> {
        chosen.build_input.member("doc").ok_or(card(Reason::ChoiceMalformed))
    }
}

/// Whether a presented payment is a JSON object (a payment held member by member is one).
fn is_object(presented: &dyn Member) -> bool {
    presented.as_value().is_none_or(Value::is_object)
}

impl Pairing for Card {
    fn id(&self) -> &'static str {
        match self.kind {
            Kind::VisaTap => VISA_TAP,
            Kind::ViImmediate => VI_IMMEDIATE,
            Kind::ViAutonomous => VI_AUTONOMOUS,
            Kind::SellerReference => SELLER_REFERENCE,
        }
    }

    fn public_proof(&self) -> bool {
        false
    }

    /// TAP and the plain checkout: the shown JSON's `legalContext`. Verifiable Intent: the `checkout_jwt`'s payload's.
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        match self.kind {
            Kind::VisaTap | Kind::SellerReference => read_shown(doc),
            Kind::ViImmediate | Kind::ViAutonomous => read_checkout_shown(doc),
        }
    }

    /// The seller's document, for a buyer named by a CAIP-10 account (`card/no-payable-option` otherwise): the choice
    /// is `{doc}`.
    fn choose(&self, _read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        if Account::parse(ctx.account).is_none() {
            return Err(card(Reason::NoPayableOption));
        }
        let mut choice = Map::with_capacity(1);
        choice.insert("doc".into(), ctx.doc.clone());
        Ok(Chosen { pairing: self.id().into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
    }

    /// None.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    /// No card checkout names an amount, an asset or a payee: the quote is of an unknown amount
    /// ([`Quote::unknown_amount`]) on the network `card:<scheme>`, under the pairing's scheme (`visa-tap`,
    /// `mastercard-vi`, `seller-reference`). A choice without its document, or a Verifiable Intent one whose
    /// `checkout_jwt` the read refuses, is refused as the build refuses it.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let doc = self.doc(chosen)?;
        let scheme = match self.kind {
            Kind::VisaTap => "visa-tap",
            Kind::ViImmediate | Kind::ViAutonomous => {
                vi::read_checkout(doc)?;
                "mastercard-vi"
            }
            Kind::SellerReference => "seller-reference",
        };
        Ok(Quote::unknown_amount("", "", card_network(scheme), scheme))
    }

    /// TAP: the field `{field: "lcp-hash", value: H, component: "lcp-hash"}` for the agent's signer (`tap-field`).
    /// Verifiable Intent: the checkout mandate over the `checkout_jwt`, whose legal context must carry H
    /// (`card/vi-legal-context-conflict`), for the wallet (L2) or the agent (L3b) to sign (`vi-checkout-mandate`).
    /// The plain checkout: `card/no-signed-place`, and the gate hands the signer nothing.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let doc = self.doc(chosen)?;
        let request = match self.kind {
            Kind::VisaTap => SigningRequest::TapField(tap::build(h)),
            Kind::ViImmediate | Kind::ViAutonomous => SigningRequest::ViCheckoutMandate(vi::build(doc, h)?),
            Kind::SellerReference => return Err(card(Reason::NoSignedPlace)),
        };
        Ok(Box::new(Signed { kind: self.kind, request }))
    }

    /// TAP: the one `lcp-hash` line every `agent-payer-auth` signature covers. Immediate: the hash in the checkout
    /// mandate the user's L2 references. Autonomous: the same in L3b, with both ES256 signatures verified. The plain
    /// checkout: `card/no-signed-place`, whatever is presented.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        match self.kind {
            Kind::VisaTap => tap::bound(presented),
            Kind::ViImmediate if !is_object(presented) => Err(card(Reason::ViMalformed)),
            Kind::ViImmediate => vi::immediate_bound(presented.member("l2")),
            Kind::ViAutonomous if !is_object(presented) => Err(card(Reason::ViMalformed)),
            Kind::ViAutonomous => {
                vi::autonomous_bound(presented.member("l1"), presented.member("l2"), presented.member("l3b"))
            }
            Kind::SellerReference => Err(card(Reason::NoSignedPlace)),
        }
    }
}

/// A card payment's request, and how the signer's answer completes it.
#[derive(Debug)]
struct Signed {
    kind: Kind,
    request: SigningRequest,
}

/// The named members of the signer's answer, each a non-empty string.
fn strings<'a>(answer: &'a Value, keys: &[&str]) -> Option<Vec<&'a str>> {
    keys.iter().map(|k| answer.member(k).and_then(Value::as_str).filter(|s| !s.is_empty())).collect()
}

impl Unsigned for Signed {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// TAP: `{signatureInput, signature, lcpHash}`, the two strings non-empty and `lcpHash` every `lcp-hash` line
    /// sent, in order. Immediate: `{l2}`. Autonomous: `{l1, l2, l3b}`. Any other answer is `card/signature-malformed`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || card(Reason::SignatureMalformed);
        let answer = answers.first().map(Answer::as_json).ok_or_else(malformed)?;
        let keys: &[&str] = match self.kind {
            Kind::VisaTap => &["signatureInput", "signature"],
            Kind::ViImmediate => &["l2"],
            Kind::ViAutonomous | Kind::SellerReference => &["l1", "l2", "l3b"],
        };
        let values = strings(answer, keys).ok_or_else(malformed)?;
        let mut payment: Map<String, Value> =
            keys.iter().zip(values).map(|(k, v)| ((*k).to_owned(), Value::String(v.to_owned()))).collect();
        if self.kind == Kind::VisaTap {
            let lines = answer.member("lcpHash").filter(|l| l.is_array()).ok_or_else(malformed)?;
            payment.insert("lcpHash".into(), lines.clone());
        }
        Ok(Completion::Payment { payment: Box::new(Value::Object(payment)), landed: None })
    }
}
