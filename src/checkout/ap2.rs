//! `ap2/checkout-mandate`: H is the `legalContext` of the merchant-signed `checkout_jwt`'s payload, and the buyer's
//! closed Checkout Mandate (an SD-JWT of `vct` `mandate.checkout.1`) commits to that JWT through `checkout_hash`,
//! unpadded base64url of SHA-256 over its characters. The mandate is presented alone, or last in AP2's chain after
//! the open mandate (the two SD-JWTs joined by `~~`). Nothing here verifies a signature, a `cnf` delegation or a link
//! between hops. The mandate reader is UCP's too ([`checkout_binding`], [`checkout_jwt_of`]).

use serde_json::{Map, Value, json};

use super::{agreement_in, checkout_quote, chosen, legal_context_info, longer_than, named_buyer};
use crate::hash::AtrHash;
use crate::jose::sd_jwt::{self, Bounds, SdJwt, SdJwtError};
use crate::jose::{Segment, decode_json_segment, disclosure_digest, jws_segments};
use crate::json::{Member, Object};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Offer, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "ap2/checkout-mandate";
/// The pairing.
pub(crate) static PAIRING: Ap2 = Ap2;

/// The `vct` of the closed Checkout Mandate.
const CHECKOUT_VCT: &str = "mandate.checkout.1";
const MAX_HOPS: usize = 2;
const MAX_ID: usize = 256;
const MAX_LINK: usize = super::MAX_LINK;
/// The network an AP2 quote names: the seller's payment processor executes the mandate off chain.
const NETWORK: &str = "ap2";

const fn ap2(reason: Reason) -> Refusal {
    Refusal::new("ap2", reason)
}

/// The payload of a compact JWS as one JSON object: `ap2/jws-malformed` for a token that is not three canonical
/// base64url segments whose payload is a JSON object, `ap2/too-large` over 1 MiB or past the nesting cap. The
/// signature is never verified (nor the header read: an `alg` of `none` is not refused, as the reference does not).
pub(super) fn jws_payload(jwt: Option<&Value>) -> Result<Object, Refusal> {
    let jwt = jwt.and_then(Value::as_str).ok_or(ap2(Reason::JwsMalformed))?;
    if longer_than(jwt, super::MIB) {
        return Err(ap2(Reason::TooLarge));
    }
    let [_, payload, _] = jws_segments(jwt).ok_or(ap2(Reason::JwsMalformed))?;
    match decode_json_segment(payload) {
        Segment::Value(Value::Object(map)) => Ok(map),
        Segment::TooDeep { object: true } => Err(ap2(Reason::TooLarge)),
        _ => Err(ap2(Reason::JwsMalformed)),
    }
}

/// Unpadded base64url of SHA-256 over the JWT's characters: a Checkout Mandate's `checkout_hash`.
pub(super) fn checkout_hash_of(jwt: &str) -> String {
    disclosure_digest(jwt)
}

/// An SD-JWT reader's refusal, in AP2's codes.
const fn mandate_refusal(e: SdJwtError) -> Refusal {
    ap2(match e {
        SdJwtError::Malformed => Reason::MandateMalformed,
        SdJwtError::SdAlgUnsupported => Reason::SdAlgUnsupported,
        SdJwtError::Unreferenced => Reason::DisclosureUnreferenced,
        SdJwtError::TooLarge => Reason::TooLarge,
    })
}

/// The SD-JWT that holds the closed Checkout Mandate: the presentation itself, or the last of AP2's chain of at most
/// two hops joined by `~~` (each earlier hop an SD-JWT written without its trailing `~`, read too).
fn closed_hop(m: &str) -> Result<SdJwt<'_>, Refusal> {
    if longer_than(m, super::MIB) {
        return Err(ap2(Reason::TooLarge));
    }
    let hops: Vec<&str> = m.splitn(MAX_HOPS + 1, "~~").collect();
    let [earlier @ .., last] = hops.as_slice() else { return Err(ap2(Reason::MandateMalformed)) };
    if hops.len() > MAX_HOPS {
        return Err(ap2(Reason::MandateMalformed));
    }
    for hop in earlier {
        sd_jwt::read(&format!("{hop}~"), Bounds::default()).map_err(mandate_refusal)?;
    }
    sd_jwt::read(last, Bounds::default()).map_err(mandate_refusal)
}

/// What a closed Checkout Mandate commits to: its `checkout_hash`, and its `checkout_jwt` where disclosed.
pub(super) struct MandateContent {
    checkout_hash: String,
    checkout_jwt: Option<String>,
}

/// The one resolved object of `vct` `mandate.checkout.1` in the mandate's last SD-JWT (`ap2/no-checkout-mandate`
/// without one, `ap2/mandate-ambiguous` with more), with a `checkout_hash` of 43 base64url characters and a string
/// `checkout_jwt` where it has one (`ap2/mandate-malformed` otherwise).
pub(super) fn read_mandate(m: Option<&Value>) -> Result<MandateContent, Refusal> {
    let m = m.and_then(Value::as_str).ok_or(ap2(Reason::MandateMalformed))?;
    let sd = closed_hop(m)?;
    let mut found: Vec<&Object> = Vec::new();
    // The resolved payload is within the nesting cap (the reader refuses it otherwise), so the walk is bounded.
    if sd.resolved.get("vct").and_then(Value::as_str) == Some(CHECKOUT_VCT) {
        found.push(&sd.resolved);
    }
    let mut stack: Vec<&Value> = sd.resolved.values().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                if map.get("vct").and_then(Value::as_str) == Some(CHECKOUT_VCT) {
                    found.push(map);
                }
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    let mandate = match found.as_slice() {
        [] => return Err(ap2(Reason::NoCheckoutMandate)),
        [one] => *one,
        _ => return Err(ap2(Reason::MandateAmbiguous)),
    };
    let malformed = ap2(Reason::MandateMalformed);
    let hash = mandate.get("checkout_hash").and_then(Value::as_str);
    let hash = hash.filter(|h| h.len() == 43 && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    let checkout_hash = hash.ok_or(malformed.clone())?.to_owned();
    let checkout_jwt = match mandate.get("checkout_jwt") {
        None => None,
        Some(Value::String(jwt)) => Some(jwt.clone()),
        Some(_) => return Err(malformed),
    };
    Ok(MandateContent { checkout_hash, checkout_jwt })
}

/// AP2's merchant check of a presented `{checkout_mandate, checkout_jwt}`: the mandate's `checkout_hash` is the
/// presented JWT's (`ap2/checkout-not-latest`), and a disclosed `checkout_jwt` is that JWT
/// (`ap2/checkout-hash-mismatch`). The JWT's payload.
pub(super) fn checkout_binding(presented: &dyn Member) -> Result<Object, Refusal> {
    if presented.as_value().is_some_and(|v| !v.is_object()) {
        return Err(ap2(Reason::MandateMalformed));
    }
    let mandate = read_mandate(presented.member("checkout_mandate"))?;
    let jwt = presented.member("checkout_jwt").and_then(Value::as_str).ok_or(ap2(Reason::JwsMalformed))?;
    if longer_than(jwt, super::MIB) {
        return Err(ap2(Reason::TooLarge));
    }
    if checkout_hash_of(jwt) != mandate.checkout_hash {
        return Err(ap2(Reason::CheckoutNotLatest));
    }
    if mandate.checkout_jwt.as_deref().is_some_and(|disclosed| disclosed != jwt) {
        return Err(ap2(Reason::CheckoutHashMismatch));
    }
    jws_payload(presented.member("checkout_jwt"))
}

/// The `checkout_jwt` a mandate discloses (`ap2/mandate-malformed` when it discloses none).
pub(super) fn checkout_jwt_of(m: &Value) -> Result<String, Refusal> {
    read_mandate(Some(m))?.checkout_jwt.ok_or(ap2(Reason::MandateMalformed))
}

/// H and the link of the checkout JWT's `legalContext`, and its payload: an `id` of 1 to 256 characters
/// (`ap2/checkout-id-missing`, `ap2/too-large`), a `legalContext` (`ap2/no-legal-context`) that decodes
/// (`ap2/legal-context-malformed`) to a link of at most 2048 characters (`ap2/too-large`).
fn read_checkout(jwt: Option<&Value>) -> Result<(AtrHash, String, Object), Refusal> {
    let payload = jws_payload(jwt)?;
    let id = payload.member("id").and_then(Value::as_str).filter(|id| !id.is_empty());
    if longer_than(id.ok_or(ap2(Reason::CheckoutIdMissing))?, MAX_ID) {
        return Err(ap2(Reason::TooLarge));
    }
    let lc = payload.get("legalContext").ok_or(ap2(Reason::NoLegalContext))?;
    let (h, link) = legal_context_info(lc).ok_or(ap2(Reason::LegalContextMalformed))?;
    if longer_than(&link, MAX_LINK) {
        return Err(ap2(Reason::TooLarge));
    }
    Ok((h, link, payload))
}

/// The AP2 Checkout Mandate pairing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ap2;

impl Pairing for Ap2 {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        false
    }

    /// The seller's document is the `checkout_jwt` itself (a JSON string): H, the link and the agreement URL from its
    /// payload's `legalContext`.
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let (h, link, payload) = read_checkout(Some(doc))?;
        let lc = payload.get("legalContext").unwrap_or(&Value::Null);
        let agreement = agreement_in(lc).map_err(|_| ap2(Reason::LegalContextMalformed))?;
        Ok(Advertised { h, link, offer: Offer::Json(doc), agreement })
    }

    /// The offer the read gives, for a buyer named by a CAIP-10 account (`ap2/no-payable-option` otherwise), as the
    /// reference writes it: `{checkoutJwt, payload, checkout}` (the JWT, its decoded payload and the payload's `id`).
    /// The build reads only `checkoutJwt`, again; the other two are the reference's record of what was chosen.
    fn choose(&self, _read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        named_buyer("ap2", ctx)?;
        let (_, _, payload) = read_checkout(Some(ctx.doc))?;
        let checkout = payload.get("id").cloned().ok_or(ap2(Reason::CheckoutIdMissing))?;
        let mut members = Map::with_capacity(3);
        members.insert("checkoutJwt".into(), ctx.doc.clone());
        members.insert("payload".into(), Value::Object(payload));
        members.insert("checkout".into(), checkout);
        Ok(chosen(ID, members, ctx))
    }

    /// None.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    /// The checkout JWT payload's total where it names one (its `totals` entry of type `total`), else an unknown
    /// amount, in its `currency`, on the `ap2` network under `checkout-mandate`; a JWT the build refuses is refused.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let (_, _, payload) = read_checkout(chosen.build_input.member("checkoutJwt"))?;
        Ok(checkout_quote(&payload, NETWORK, "checkout-mandate"))
    }

    /// The closed Checkout Mandate's claims over the `checkout_jwt`, whose legal context must carry H
    /// (`ap2/hash-not-in-checkout`): `{vct, checkout_jwt, checkout_hash}` for the buyer's mandate signer
    /// (`ap2-checkout-mandate`).
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let given = chosen.build_input.member("checkoutJwt");
        let (advertised, _, _) = read_checkout(given)?;
        if advertised != *h {
            return Err(ap2(Reason::HashNotInCheckout));
        }
        // read_checkout read it as a string.
        let jwt = given.and_then(Value::as_str).ok_or(ap2(Reason::JwsMalformed))?.to_owned();
        let content = json!({"vct": CHECKOUT_VCT, "checkout_jwt": jwt, "checkout_hash": checkout_hash_of(&jwt)});
        Ok(Box::new(Mandate { content, jwt }))
    }

    /// The hash in the checkout the closed mandate commits to ([`checkout_binding`]), from its `legalContext`.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let payload = checkout_binding(presented)?;
        let lc = payload.get("legalContext").ok_or(ap2(Reason::NoLegalContext))?;
        let (h, link) = legal_context_info(lc).ok_or(ap2(Reason::LegalContextMalformed))?;
        if longer_than(&link, MAX_LINK) {
            return Err(ap2(Reason::TooLarge));
        }
        Ok(h)
    }
}

/// The mandate's claims, and the JWT the payment presents beside the mandate.
struct Mandate {
    content: Value,
    jwt: String,
}

impl Unsigned for Mandate {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("content".into(), self.content.clone());
        Ok(Some(SigningRequest::Ap2CheckoutMandate(fields)))
    }

    /// The mandate as issued (a non-empty string, `ap2/signature-malformed` otherwise), presented beside the
    /// checkout JWT: `{checkout_mandate, checkout_jwt}`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let mandate = answers.first().and_then(Answer::as_str).filter(|m| !m.is_empty());
        let mandate = mandate.ok_or(ap2(Reason::SignatureMalformed))?;
        let payment = json!({"checkout_mandate": mandate, "checkout_jwt": self.jwt});
        Ok(Completion::Payment { payment: Box::new(payment), landed: None })
    }
}
