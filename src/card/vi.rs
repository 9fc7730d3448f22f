//! Mastercard Verifiable Intent: H rides in the merchant's `checkout_jwt`, whose digest the checkout mandate names as
//! `checkout_hash`. Immediate mode: the user's L2 layer references the mandate; nothing is verified. Autonomous mode:
//! the agent's L3b layer references it, L3b is bound to L2 by `sd_hash` and signed under the key L2's open checkout
//! mandate delegates, and L2 is bound to L1 by `sd_hash` and signed under L1's `cnf.jwk` (ES256 on `p256`). L1's
//! issuer signature is not verified, as the reference does not verify it.

use serde_json::{Map, Value};

use super::card;
use crate::hash::AtrHash;
use crate::jose::es256::{self, Es256Error};
use crate::jose::sd_jwt::{self, Bounds, SdJwt, SdJwtError};
use crate::jose::{decode_json_segment, disclosure_digest, jws_segments};
use crate::json::{Member, Object, js_length};
use crate::refusal::{Reason, Refusal};

/// The longest Verifiable Intent layer read, in UTF-16 code units.
const MAX_VI_LAYER: usize = 65_536;
/// The longest `checkout_jwt` read.
const MAX_CHECKOUT_JWT: usize = 16_384;
/// The most disclosures a layer may carry.
const MAX_VI_DISCLOSURES: usize = 32;
const CHECKOUT_VCT: &str = "mandate.checkout.1";
const PAYMENT_VCT: &str = "mandate.payment.1";
const OPEN_CHECKOUT_VCT: &str = "mandate.checkout.open.1";
const BOUNDS: Bounds = Bounds { max_length: MAX_VI_LAYER, max_disclosures: MAX_VI_DISCLOSURES };

/// The card codes of the SD-JWT reader's reasons.
fn sd_jwt_refusal(e: SdJwtError) -> Refusal {
    card(match e {
        SdJwtError::Malformed | SdJwtError::SdAlgUnsupported => Reason::ViMalformed,
        SdJwtError::Unreferenced => Reason::ViDisclosureUnreferenced,
        SdJwtError::TooLarge => Reason::TooLarge,
    })
}

fn es256_refusal(e: Es256Error) -> Refusal {
    card(match e {
        Es256Error::KeyMalformed => Reason::ViKeyMalformed,
        Es256Error::SignatureInvalid => Reason::ViSignatureInvalid,
    })
}

/// The payload of a `checkout_jwt` with a `legalContext`: a string of at most 16384 UTF-16 code units
/// (`card/too-large`), three canonical base64url segments whose second decodes to a JSON object within the nesting cap
/// (`card/vi-malformed`, `card/too-large`), with a `legalContext` member (`card/no-legal-context`). The header is not
/// read, as the reference does not read it.
pub(super) fn checkout_payload(doc: &Value) -> Result<Object, Refusal> {
    let doc = doc.as_str().ok_or(card(Reason::ViMalformed))?;
    if js_length(doc) > MAX_CHECKOUT_JWT {
        return Err(card(Reason::TooLarge));
    }
    let [_, payload, _] = jws_segments(doc).ok_or(card(Reason::ViMalformed))?;
    let payload = decode_json_segment(payload);
    if !payload.is_object() {
        return Err(card(Reason::ViMalformed));
    }
    // Text within the nesting cap holds a value within it; a payload past the cap is too large.
    let payload = payload.into_object().ok_or(card(Reason::TooLarge))?;
    if !payload.contains_key("legalContext") {
        return Err(card(Reason::NoLegalContext));
    }
    Ok(payload)
}

/// H and the link of a `checkout_jwt`.
pub(super) fn read_checkout(doc: &Value) -> Result<(AtrHash, String), Refusal> {
    super::legal_context_of(&checkout_payload(doc)?)
}

/// The checkout mandate over the `checkout_jwt`, whose legal context must carry `h`: `{checkoutMandate: {vct,
/// checkout_jwt, checkout_hash}, transactionId}`, `checkout_hash` and `transactionId` both the JWT's digest.
pub(super) fn build(doc: &Value, h: &AtrHash) -> Result<Map<String, Value>, Refusal> {
    let (advertised, _) = read_checkout(doc)?;
    if advertised != *h {
        return Err(card(Reason::ViLegalContextConflict));
    }
    let jwt = doc.as_str().unwrap_or_default();
    let digest = disclosure_digest(jwt);
    let mut mandate = Map::with_capacity(3);
    mandate.insert("vct".into(), Value::String(CHECKOUT_VCT.into()));
    mandate.insert("checkout_jwt".into(), Value::String(jwt.into()));
    mandate.insert("checkout_hash".into(), Value::String(digest.clone()));
    let mut out = Map::with_capacity(2);
    out.insert("checkoutMandate".into(), Value::Object(mandate));
    out.insert("transactionId".into(), Value::String(digest));
    Ok(out)
}

/// A layer's length, `card/too-large` past the bound; `card/vi-malformed` when it is not a string.
fn layer_text(value: Option<&Value>) -> Result<&str, Refusal> {
    let text = value.and_then(Value::as_str).ok_or(card(Reason::ViMalformed))?;
    if js_length(text) > MAX_VI_LAYER {
        return Err(card(Reason::TooLarge));
    }
    Ok(text)
}

/// One L2 or L3 layer: a JWS, one or more disclosures and an empty last part, read through the SD-JWT reader, with
/// header `alg` ES256 (so `none` is refused) and the given `typ` (`card/vi-typ`), `_sd_alg` sha-256 and a
/// `delegate_payload` array of `{"...": digest}` entries (`card/vi-malformed`).
fn read_layer<'a>(value: Option<&'a Value>, typ: &str) -> Result<SdJwt<'a>, Refusal> {
    let text = layer_text(value)?;
    let parts = text.split('~').count();
    if parts < 3 || !text.ends_with('~') {
        return Err(card(Reason::ViMalformed));
    }
    if parts - 2 > MAX_VI_DISCLOSURES {
        return Err(card(Reason::TooLarge));
    }
    let layer = sd_jwt::read(text, BOUNDS).map_err(sd_jwt_refusal)?;
    let header = |k: &str| layer.header.member(k).and_then(Value::as_str);
    if header("alg") != Some("ES256") || header("typ") != Some(typ) {
        return Err(card(Reason::ViTyp));
    }
    let delegated = layer.payload.member("delegate_payload").and_then(Value::as_array);
    let Some(delegated) =
        delegated.filter(|_| layer.payload.member("_sd_alg").and_then(Value::as_str) == Some("sha-256"))
    else {
        return Err(card(Reason::ViMalformed));
    };
    let reference =
        |d: &Value| d.as_object().is_some_and(|o| o.len() == 1 && o.get("...").is_some_and(Value::is_string));
    if !delegated.iter().all(reference) {
        return Err(card(Reason::ViMalformed));
    }
    Ok(layer)
}

/// The mandate objects a layer's `delegate_payload` resolves to: only disclosures its signed payload references.
fn mandates<'l>(layer: &'l SdJwt<'_>) -> Vec<&'l Object> {
    let resolved = layer.resolved.member("delegate_payload").and_then(Value::as_array);
    resolved.map(|r| r.iter().filter_map(Value::as_object).collect()).unwrap_or_default()
}

fn vct(mandate: &Object) -> Option<&str> {
    mandate.member("vct").and_then(Value::as_str)
}

/// The hash from a layer's one referenced `mandate.checkout.1`, its `checkout_hash` (and any referenced payment
/// mandate's `transaction_id`) the digest of its `checkout_jwt`.
fn checkout_hash(layer: &SdJwt<'_>) -> Result<AtrHash, Refusal> {
    let every = mandates(layer);
    let checkouts: Vec<&&Object> = every.iter().filter(|m| vct(m) == Some(CHECKOUT_VCT)).collect();
    let [mandate] = checkouts.as_slice() else { return Err(card(Reason::ViNoCheckoutMandate)) };
    let jwt = mandate.member("checkout_jwt").unwrap_or(&Value::Null);
    let (h, _) = read_checkout(jwt)?;
    let digest = disclosure_digest(jwt.as_str().unwrap_or_default());
    if mandate.member("checkout_hash").and_then(Value::as_str) != Some(digest.as_str()) {
        return Err(card(Reason::ViCheckoutHashMismatch));
    }
    for m in &every {
        if vct(m) == Some(PAYMENT_VCT) && m.member("transaction_id").and_then(Value::as_str) != Some(digest.as_str()) {
            return Err(card(Reason::ViTransactionIdMismatch));
        }
    }
    Ok(h)
}

/// Immediate mode: the hash in the checkout mandate the user's L2 references. No signature is verified.
pub(super) fn immediate_bound(l2: Option<&Value>) -> Result<AtrHash, Refusal> {
    checkout_hash(&read_layer(l2, "kb-sd-jwt")?)
}

/// The `x` and `y` of an EC P-256 public JWK in `cnf.jwk`.
fn jwk_of(cnf: Option<&Value>) -> Option<&Object> {
    let k = cnf.and_then(|c| c.member("jwk")).and_then(Value::as_object)?;
    let text = |m: &str| k.member(m).and_then(Value::as_str);
    (text("kty") == Some("EC") && text("crv") == Some("P-256") && text("x").is_some() && text("y").is_some())
        .then_some(k)
}

fn verify(jws: &str, jwk: &Object) -> Result<(), Refusal> {
    let text = |m: &str| jwk.member(m).and_then(Value::as_str).unwrap_or_default();
    es256::verify(jws, text("x"), text("y")).map_err(es256_refusal)
}

/// Autonomous mode: the hash in L3b's checkout mandate, L3b bound to L2 by `sd_hash` and signed under the key L2's
/// open checkout mandate delegates (its `kid` the L3b header's), L2 bound to L1 by `sd_hash` and signed under L1's
/// `cnf.jwk`.
pub(super) fn autonomous_bound(
    l1: Option<&Value>,
    l2: Option<&Value>,
    l3b: Option<&Value>,
) -> Result<AtrHash, Refusal> {
    let agent = read_layer(l3b, "kb-sd-jwt")?;
    let kid = agent.header.member("kid").and_then(Value::as_str).ok_or(card(Reason::ViTyp))?;
    let h = checkout_hash(&agent)?;

    let l2_text = layer_text(l2)?;
    if agent.payload.member("sd_hash").and_then(Value::as_str) != Some(disclosure_digest(l2_text).as_str()) {
        return Err(card(Reason::ViSdHashMismatch));
    }
    let user = read_layer(l2, "kb-sd-jwt+kb")?;
    let user_mandates = mandates(&user);
    let opened: Vec<&&Object> = user_mandates.iter().filter(|m| vct(m) == Some(OPEN_CHECKOUT_VCT)).collect();
    let agent_key = match opened.as_slice() {
        [one] => jwk_of(one.member("cnf")),
        _ => None,
    };
    let agent_key = agent_key.filter(|k| k.member("kid").is_some_and(Value::is_string));
    let agent_key = agent_key.ok_or(card(Reason::ViKeyMalformed))?;
    if agent_key.member("kid").and_then(Value::as_str) != Some(kid) {
        return Err(card(Reason::ViKidMismatch));
    }
    verify(agent.jwt, agent_key)?;

    let l1_text = layer_text(l1)?;
    if user.payload.member("sd_hash").and_then(Value::as_str) != Some(disclosure_digest(l1_text).as_str()) {
        return Err(card(Reason::ViSdHashMismatch));
    }
    let issued = sd_jwt::read(l1_text, BOUNDS).map_err(sd_jwt_refusal)?;
    let user_key = jwk_of(issued.payload.member("cnf")).ok_or(card(Reason::ViKeyMalformed))?;
    verify(user.jwt, user_key)?;
    Ok(h)
}
