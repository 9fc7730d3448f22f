//! `ack/payment-request`: the Agent Commerce Kit's 402 body, whose seller-signed Payment Request token names H as its
//! `id` in LCP's string form, with the link (and the agreement URL) in the body's `legalContext`. ACK defines no
//! payer signature, so the gate confirms only: the build refuses `ack/no-signed-place`. The token's signature is not
//! verified, and the body's unsigned `paymentRequest` copy is never read.

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::{
    agreement_in, chosen, from_lcp_string, json_size, legal_context_info, longer_than, named_buyer, safe_uint,
};
use crate::decimal::is_decimal;
use crate::hash::AtrHash;
use crate::jose::{decode_json_segment, jws_segments};
use crate::json::{Member, Object};
use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Offer, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};

/// The pairing id.
pub(crate) const ID: &str = "ack/payment-request";
/// The pairing.
pub(crate) static PAIRING: Ack = Ack;

const MAX_BODY_BYTES: usize = 65_536;
const MAX_TOKEN: usize = 16_384;
const MAX_OPTIONS: usize = 16;
const MAX_LINK: usize = super::MAX_LINK;

const fn ack(reason: Reason) -> Refusal {
    Refusal::new("ack", reason)
}

/// The JSON object a compact JWS's payload segment holds (canonical base64url, UTF-8, JSON within the nesting cap);
/// `None` for any other token. The signature is not checked.
pub(super) fn token_payload(token: Option<&Value>) -> Option<Object> {
    let token = token?.as_str().filter(|t| !longer_than(t, MAX_TOKEN))?;
    let [_, payload, _] = jws_segments(token)?;
    decode_json_segment(payload).into_object()
}

/// An ACK Payment Request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ack;

impl Pairing for Ack {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        false
    }

    /// H from the signed token's `id`, which the body's `legalContext` must match; the link and agreement URL from
    /// `legalContext`; the token's payment options (at most 16).
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let body = doc.as_object().ok_or(ack(Reason::TokenMalformed))?;
        if json_size(doc).is_none_or(|size| size > MAX_BODY_BYTES) {
            return Err(ack(Reason::TooLarge));
        }
        let token = body.member("paymentRequestToken");
        if token.and_then(Value::as_str).is_some_and(|t| longer_than(t, MAX_TOKEN)) {
            return Err(ack(Reason::TooLarge));
        }
        let payload = token_payload(token).ok_or(ack(Reason::TokenMalformed))?;
        let signed = payload.member("id").and_then(Value::as_str).and_then(from_lcp_string);
        let signed = signed.ok_or(ack(Reason::IdNotLcp))?;
        let lc = body.get("legalContext").ok_or(ack(Reason::NoLegalContext))?;
        let (h, link) = legal_context_info(lc).ok_or(ack(Reason::LegalContextMalformed))?;
        if longer_than(&link, MAX_LINK) {
            return Err(ack(Reason::LegalContextMalformed));
        }
        if signed != h {
            return Err(ack(Reason::LegalContextConflict));
        }
        let agreement = agreement_in(lc).map_err(|_| ack(Reason::LegalContextMalformed))?;
        match payload.member("paymentOptions") {
            Some(Value::Array(options)) if options.len() > MAX_OPTIONS => Err(ack(Reason::TooLarge)),
            Some(Value::Array(_)) => Ok(Advertised { h: signed, link, offer: Offer::Json(doc), agreement }),
            _ => Err(ack(Reason::TokenMalformed)),
        }
    }

    /// The first of the signed token's payment options, in order, whose `network` is the account's CAIP-2 network
    /// (`ack/no-payable-option` when none is, or the account is not CAIP-10): `{option}`.
    fn choose(&self, _read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let account = named_buyer("ack", ctx)?;
        let payload = ctx.doc.member("paymentRequestToken");
        let payload = token_payload(payload).ok_or(ack(Reason::NoPayableOption))?;
        let options = payload.member("paymentOptions").and_then(Value::as_array).ok_or(ack(Reason::NoPayableOption))?;
        let network = Some(account.network.as_str());
        let option = options.iter().find(|o| o.is_object() && o.member("network").and_then(Value::as_str) == network);
        let option = option.ok_or(ack(Reason::NoPayableOption))?;
        let mut members = Map::with_capacity(1);
        members.insert("option".into(), option.clone());
        Ok(chosen(ID, members, ctx))
    }

    /// None.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    /// The option's `amount` (a decimal string or a non-negative safe integer, in the currency's atomic units; an
    /// unknown amount for any other form) of its `currency` to its `recipient`, on its `network`, under
    /// `payment-request`. A choice without its option is `ack/choice-malformed`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let option = chosen.build_input.member("option").and_then(Value::as_object);
        let option = option.ok_or(ack(Reason::ChoiceMalformed))?;
        let text = |key: &str| option.member(key).and_then(Value::as_str).unwrap_or_default();
        let amount = match option.member("amount") {
            Some(Value::String(s)) if is_decimal(s) => s.parse::<U256>().ok(),
            Some(n) => safe_uint(n).map(U256::from),
            None => None,
        };
        let (asset, payee, network) = (text("currency"), text("recipient"), text("network"));
        Ok(match amount {
            Some(amount) => Quote::new(amount, asset, payee, network, "payment-request"),
            None => Quote::unknown_amount(asset, payee, network, "payment-request"),
        })
    }

    /// ACK defines no payer signature: `ack/no-signed-place`, and the gate hands the signer nothing.
    fn build<'a>(
        &'a self,
        _chosen: &'a Chosen,
        _atr: &'a [u8],
        _h: &AtrHash,
    ) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Err(ack(Reason::NoSignedPlace))
    }

    /// `ack/no-signed-place`, whatever is presented.
    fn bound(&self, _presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        Err(ack(Reason::NoSignedPlace))
    }
}
