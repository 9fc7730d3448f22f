//! What every x402 pairing shares: reading the v2 `PAYMENT-REQUIRED` document and its legal context, the options a
//! pairing's filter serves, checking the chosen option is one the document offers, the payment for it, and the
//! payment-identifier extension.

/// The `Pairing` impl the x402 pairings of Solana, Stellar and XRPL share, written once: each module's own `ID`,
/// `filter`, `choose`, `INPUTS`, `quote`, `build` and `bound`, and the registry's fact on whether the payment is a
/// public proof. Items after the type (a channel's `channel`) join the impl.
#[cfg(any(feature = "solana", feature = "stellar", feature = "xrpl"))]
macro_rules! x402_pairing {
    ($pairing:ty $(, $($more:tt)*)?) => {
        impl Pairing for $pairing {
            fn id(&self) -> &'static str {
                ID
            }

            fn public_proof(&self) -> bool {
                crate::registry::entry(ID).is_some_and(|e| e.public_proof)
            }

            fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
                read_with(doc, filter)
            }

            fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
                choose(read, ctx)
            }

            fn inputs(&self) -> &'static [InputSpec] {
                INPUTS
            }

            fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
                quote(&chosen.build_input)
            }

            fn keep_document(&self, chosen: &mut Chosen, doc: std::borrow::Cow<'_, Value>) {
                keep_document(chosen, doc);
            }

            fn build<'a>(
                &'a self,
                chosen: &'a Chosen,
                _atr: &'a [u8],
                h: &AtrHash,
            ) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
                Ok(Box::new(build(&chosen.build_input, h)?))
            }

            fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
                bound(presented)
            }

            $($($more)*)?
        }
    };
}

pub mod batch;
pub mod channel;
pub mod cloudflare;
#[cfg(feature = "evm")]
pub mod evm;
#[cfg(feature = "lightning")]
pub mod lightning;
#[cfg(feature = "solana")]
pub mod solana;
#[cfg(feature = "stellar")]
pub mod stellar;
#[cfg(feature = "xrpl")]
pub mod xrpl;

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::codec::b64_decode;
use crate::hash::AtrHash;
use crate::json::{Member, Object, exact_object, is_offered, js_length, safe_int};
pub(crate) use crate::legal_context::legal_context_info;
use crate::legal_context::{either_spelling, hash_with_non_https_link};
use crate::link::{MAX_LINK_CHARS, is_agreement_url, link_reason};
use crate::pairing::{Advertised, Chosen, Completed, Completion, Offer};
use crate::payment::Payment;
use crate::refusal::{Reason, Refusal};

/// The extension that carries H and the link.
pub(crate) const LEGAL_CONTEXT: &str = "legalContext";
/// The most `accepts` entries a document may hold.
pub const MAX_OPTIONS: usize = 32;
/// The longest `PAYMENT-REQUIRED` header the gate decodes, in characters.
pub const MAX_HEADER_CHARS: usize = 65_536;
/// The member of an x402 choice that holds the `PAYMENT-REQUIRED` document.
pub(crate) const DOCUMENT: &str = "required";
/// The idempotency extension the client writes its payment id into.
pub(crate) const PAYMENT_IDENTIFIER: &str = "payment-identifier";

const AGREEMENT_URL: &str = "legalContextAgreementUrl";
const AGREEMENT_URL_SNAKE: &str = "legal_context_agreement_url";

pub use crate::select::timeout_seconds;
pub(crate) use crate::select::{Filter, Served, amount_of};

/// The filter for the options `pairs` accepts: those `payable` also accepts are served, the rest refused
/// `x402/option-malformed`.
pub(crate) fn served_if(pairs: bool, payable: impl FnOnce() -> bool) -> Served {
    crate::select::served_if("x402", pairs, payable)
}

/// Whether the document (or a payment's members) is an object with `x402Version` 2.
pub(crate) fn is_v2(doc: &(impl Member + ?Sized)) -> bool {
    doc.member("x402Version").and_then(safe_int) == Some(2)
}

/// The hash and link in a document's `extensions.legalContext`.
pub(crate) fn legal_context_of(extensions: Option<&Value>) -> Result<(AtrHash, String), Refusal> {
    let Some(lc) = extensions.and_then(Value::as_object).and_then(|e| e.get(LEGAL_CONTEXT)) else {
        return Err(Refusal::x402(Reason::NoLegalContext));
    };
    let info = lc.as_object().and_then(|l| l.member("info")).unwrap_or(&Value::Null);
    let Some((h, link)) = legal_context_info(info) else {
        return Err(Refusal::x402(if hash_with_non_https_link(info) {
            Reason::LinkNotHttps
        } else {
            Reason::LegalContextMalformed
        }));
    };
    if js_length(&link) > MAX_LINK_CHARS {
        return Err(Refusal::x402(Reason::LegalContextMalformed));
    }
    Ok((h, link))
}

/// The agreement URL a legal context's `info` names: `Ok(None)` when it names none; `Err(fault)` when the two
/// spellings differ or the value is not an agreement URL.
pub(crate) fn agreement_in(info: Option<&Value>) -> Result<Option<String>, Reason> {
    let Some(info) = info.and_then(Value::as_object) else { return Ok(None) };
    if !info.contains_key(AGREEMENT_URL) && !info.contains_key(AGREEMENT_URL_SNAKE) {
        return Ok(None);
    }
    let url = either_spelling(info, AGREEMENT_URL, AGREEMENT_URL_SNAKE).map_err(|()| Reason::LegalContextMalformed)?;
    match url.and_then(Value::as_str) {
        Some(u) if is_agreement_url(u) => Ok(Some(u.to_owned())),
        Some(u) => Err(link_reason(u)),
        None => Err(Reason::LegalContextMalformed),
    }
}

/// The read every x402 pairing shares: H, the link, the agreement URL when the legal context names one, and the
/// options the filter serves, in document order.
pub(crate) fn read_with(doc: &Value, filter: Filter) -> Result<Advertised<'_>, Refusal> {
    let Some(map) = doc.as_object().filter(|_| is_v2(doc)) else {
        return Err(Refusal::x402(Reason::NotV2));
    };
    let accepts = match map.member("accepts") {
        Some(Value::Array(a)) if a.len() <= MAX_OPTIONS => a,
        _ => return Err(Refusal::x402(Reason::OptionMalformed)),
    };
    let extensions = map.member("extensions");
    let (h, link) = legal_context_of(extensions)?;
    let info = extensions
        .and_then(Value::as_object)
        .and_then(|e| e.get(LEGAL_CONTEXT))
        .and_then(Value::as_object)
        .and_then(|lc| lc.member("info"));
    let agreement = agreement_in(info).map_err(Refusal::x402)?;
    let options: Vec<&Value> =
        accepts.iter().filter(|o| o.as_object().is_some_and(|m| filter(m) == Served::Yes)).collect();
    if options.is_empty() {
        return Err(Refusal::x402(Reason::NoPayableOption));
    }
    Ok(Advertised { h, link, offer: Offer::X402 { required: doc, options }, agreement })
}

/// The checks a build makes on the buyer's choice before anything pairing-specific: the document is x402 v2 with at
/// most 32 options, the chosen option is one it offers (structurally or by RFC 8785 form), and the filter serves it.
pub(crate) fn check_chosen<'a>(
    required: Option<&'a Value>,
    accepted: Option<&'a Value>,
    filter: Filter,
) -> Result<(&'a Object, &'a Object), Refusal> {
    let Some(req) = required.filter(|r| is_v2(*r)).and_then(Value::as_object) else {
        return Err(Refusal::x402(Reason::NotV2));
    };
    let accepts = match req.member("accepts") {
        Some(Value::Array(a)) if a.len() <= MAX_OPTIONS => a,
        _ => return Err(Refusal::x402(Reason::OptionMalformed)),
    };
    let accepted = accepted.unwrap_or(&Value::Null);
    if !is_offered(accepts, accepted) {
        return Err(Refusal::x402(Reason::OptionNotInDocument));
    }
    let Some(acc) = accepted.as_object() else {
        return Err(Refusal::x402(Reason::OptionNotThisPairing));
    };
    match filter(acc) {
        Served::Yes => Ok((req, acc)),
        Served::Refused(r) => Err(r),
        Served::NotMine => Err(Refusal::x402(Reason::OptionNotThisPairing)),
    }
}

/// A presented payment's `accepted`, held to the filter the pairing's read applies, so bound reads no payment for an
/// option its own read would not offer.
pub(crate) fn accepted_by(accepted: Option<&Value>, filter: Filter) -> Result<&Map<String, Value>, Refusal> {
    let Some(acc) = accepted.and_then(Value::as_object) else {
        return Err(Refusal::x402(Reason::PayloadMalformed));
    };
    match filter(acc) {
        Served::Yes => Ok(acc),
        Served::Refused(r) => Err(r),
        Served::NotMine => Err(Refusal::x402(Reason::OptionNotThisPairing)),
    }
}

/// An x402 payment: `x402Version` 2, the challenge's `resource` and `extensions` echoed unchanged (omitted when
/// absent), the chosen `accepted` echoed exactly as the document wrote it, and the pairing's payload. The echoed
/// members are borrowed from the choice, so completing a payment copies only what the signer added; `extensions`
/// is copied only to write the payment id into it.
#[derive(Debug, Clone)]
pub(crate) struct X402Payment<'a> {
    version: Value,
    resource: Option<&'a Value>,
    accepted: &'a Value,
    payload: Value,
    extensions: Option<Cow<'a, Value>>,
}

impl<'a> X402Payment<'a> {
    /// The payment for the challenge `required` and its option `accepted`, with the id `reference` added to the
    /// echoed payment-identifier `info` where the challenge advertises that extension. The client may add to an
    /// extension's info but never overwrite it, so an info that is not an object or already holds an id makes the
    /// payment unwritable (`x402/payment-identifier-unwritable`).
    pub(crate) fn new(
        required: &'a Map<String, Value>,
        accepted: &'a Value,
        payload: Value,
        reference: Option<&str>,
    ) -> Result<Self, Refusal> {
        let extensions = echoed_extensions(required, reference)?;
        Ok(Self { version: Value::from(2), resource: required.member("resource"), accepted, payload, extensions })
    }

    /// [`X402Payment::new`] with the id of the chosen payment.
    pub(crate) fn for_chosen(
        required: &'a Map<String, Value>,
        accepted: &'a Value,
        payload: Value,
        chosen: &Chosen,
    ) -> Result<Self, Refusal> {
        Self::new(required, accepted, payload, Some(&chosen.reference))
    }

    fn entries(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        [
            ("x402Version", Some(&self.version)),
            ("resource", self.resource),
            ("accepted", Some(self.accepted)),
            ("payload", Some(&self.payload)),
            ("extensions", self.extensions.as_deref()),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
    }

    /// The payment as a JSON value.
    pub(crate) fn to_value(&self) -> Value {
        Value::Object(self.entries().map(|(k, v)| (k.to_owned(), v.clone())).collect())
    }

    /// The completion that hands this payment to the gate, for the pairing's bound to read its members in place.
    pub(crate) fn completion(self) -> Completion<'a> {
        Completion::Payment { payment: Box::new(self), landed: None }
    }
}

/// An x402 pairing's reading of H from a payment's members: the same function reads a payment just built and one
/// presented later.
pub type Read = fn(&dyn Member) -> Result<AtrHash, Refusal>;

/// [`Pairing::keep_document`](crate::Pairing::keep_document) for an x402 pairing: the `PAYMENT-REQUIRED` document
/// goes into the choice first, under `DOCUMENT`, where `choose` left it out and `build` reads it (moved where the
/// caller handed it over, copied where it was lent).
pub fn keep_document(chosen: &mut Chosen, doc: Cow<'_, Value>) {
    chosen.build_input.shift_insert(0, DOCUMENT.to_owned(), doc.into_owned());
}

impl Member for X402Payment<'_> {
    fn member(&self, key: &str) -> Option<&Value> {
        self.entries().find_map(|(k, v)| (k == key).then_some(v))
    }
}

impl Completed for X402Payment<'_> {
    fn write(&self) -> Payment {
        Payment::from_exact_text(exact_object(self.entries()))
    }

    fn to_value(&self) -> Value {
        X402Payment::to_value(self)
    }
}

/// The challenge's `extensions` as a payment echoes them: borrowed, or copied with the id `reference` added to the
/// payment-identifier `info` where the challenge advertises that extension (`x402/payment-identifier-unwritable`
/// when that info is not an object or already holds an id).
pub(crate) fn echoed_extensions<'a>(
    required: &'a Map<String, Value>,
    reference: Option<&str>,
) -> Result<Option<Cow<'a, Value>>, Refusal> {
    let extensions = required.member("extensions");
    Ok(match (extensions, reference) {
        (Some(e), Some(id)) if e.member(PAYMENT_IDENTIFIER).is_some() => Some(Cow::Owned(with_payment_id(e, id)?)),
        (e, _) => e.map(Cow::Borrowed),
    })
}

/// A payment value with its `extensions` replaced by the challenge's as [`echoed_extensions`] writes them for the
/// chosen payment's id, for a pairing that builds its payment as a JSON value.
pub(crate) fn with_payment_identifier(mut signed: Value, chosen: &Chosen) -> Result<Value, Refusal> {
    let Some(required) = chosen.build_input.member(DOCUMENT).and_then(Value::as_object) else { return Ok(signed) };
    if let (Some(Cow::Owned(extensions)), Some(p)) =
        (echoed_extensions(required, Some(&chosen.reference))?, signed.as_object_mut())
    {
        p.insert("extensions".into(), extensions);
    }
    Ok(signed)
}

/// The extensions with `id` written into the payment-identifier extension's `info`.
fn with_payment_id(extensions: &Value, id: &str) -> Result<Value, Refusal> {
    let unwritable = || Refusal::x402(Reason::PaymentIdentifierUnwritable);
    let mut extensions = extensions.clone();
    let info = extensions
        .get_mut(PAYMENT_IDENTIFIER)
        .and_then(Value::as_object_mut)
        .and_then(|ext| ext.get_mut("info"))
        .and_then(Value::as_object_mut)
        .ok_or_else(unwritable)?;
    if info.contains_key("id") {
        return Err(unwritable());
    }
    info.insert("id".into(), Value::String(id.to_owned()));
    Ok(extensions)
}

/// The first option, in document order, on the account's network, and the document it is in. The buyer chooses
/// among options by removing the others from `accepts` first.
pub(crate) fn first_on_network<'a>(read: &Advertised<'a>, network: &str) -> Result<(&'a Value, &'a Value), Refusal> {
    let Offer::X402 { required, options } = &read.offer else {
        return Err(Refusal::x402(Reason::NoPayableOption));
    };
    crate::select::first_on_network(options, network)
        .map(|o| (*required, o))
        .ok_or(Refusal::x402(Reason::NoPayableOption))
}

/// Why a `PAYMENT-REQUIRED` header could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// Longer than [`MAX_HEADER_CHARS`].
    #[error("the header is longer than 65536 characters")]
    TooLong,
    /// Not canonical padded standard base64.
    #[error("the header is not canonical padded standard base64")]
    NotBase64,
    /// Not UTF-8 JSON nested at most 64 deep.
    #[error("the header is not UTF-8 JSON within 64 levels")]
    NotJson,
    /// JSON, but not an object.
    #[error("the header is not a JSON object")]
    NotObject,
}

/// Decodes a `PAYMENT-REQUIRED` header: padded standard base64 in canonical form, of UTF-8 JSON text nested at
/// most 64 deep, holding an object. A leading byte-order mark is kept as a character, so the JSON does not parse.
pub fn decode_payment_required(header: &str) -> Result<Value, HeaderError> {
    if header.chars().count() > MAX_HEADER_CHARS {
        return Err(HeaderError::TooLong);
    }
    let bytes = b64_decode(header).ok_or(HeaderError::NotBase64)?;
    let text = String::from_utf8(bytes).map_err(|_| HeaderError::NotJson)?;
    let value = crate::json::parse(&text).ok_or(HeaderError::NotJson)?;
    if value.is_object() { Ok(value) } else { Err(HeaderError::NotObject) }
}
