//! `x402/auth-capture/eip155/eip3009`: an authorization to the commerce-payments escrow, whose `PaymentInfo.salt`
//! carries H (or, when the option binds a receiver authorizer or a policy, a commitment to H, with H as the
//! payload's `saltNonce`). The payer signs an EIP-3009 `ReceiveWithAuthorization` to the escrow's collector whose
//! nonce is the escrow's payment hash with payer zero, so the signed nonce commits to the salt. The build and bound
//! here are shared with [`auth_capture_permit2`](super::auth_capture_permit2), which signs a Permit2 transfer instead.

use super::family::FamilyPairing;
use alloy_primitives::U256;
use serde_json::{Map, Value, json};

use super::family::{self, Kind, Signed, UINT48_LIMIT, choice_of, is_signature, presented_as, strings, text};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::rail::evm::eip3009::{Eip3009Token, eip3009_message, eip3009_typed_data};
use crate::rail::evm::escrow::Terms;
use crate::rail::evm::permit2::{self, Transfer};
use crate::rail::evm::{Eip712Parts, is_address_text, uint256_of};
use crate::refusal::{Reason, Refusal};
use crate::signer::TypedData;

/// The pairing id.
pub const ID: &str = Kind::AuthCaptureEip3009.id();
/// The pairing.
pub static PAIRING: FamilyPairing<Signed> = FamilyPairing::new(Kind::AuthCaptureEip3009, true, build, bound);

/// Builds the `ReceiveWithAuthorization` to the escrow's ERC-3009 collector from a choice
/// `{required, accepted, from, now}`: validBefore (the payment's preApprovalExpiry) now + maxTimeoutSeconds, nonce
/// the escrow's payment hash with payer zero over the salt for H.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::AuthCaptureEip3009, choice, h)
}

/// Reads H back: the salt (or, for a bound option, the `saltNonce` the salt commits to), once the signed nonce is
/// the escrow's payment hash with payer zero over that salt and the signed expiry.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    bound_for(Kind::AuthCaptureEip3009, presented)
}

/// The auth-capture build, for either collector.
pub(super) fn build_for(kind: Kind, choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let c = choice_of(kind, choice)?;
    let terms = c.escrow.as_ref().ok_or_else(malformed)?;
    let salt = terms.salt_for(h);
    let nonce = terms.signature_nonce(&salt, c.deadline).ok_or_else(malformed)?;
    let mut payload = Map::new();
    if kind == Kind::AuthCaptureEip3009 {
        let collector = terms.deployment.eip3009_collector;
        let value = c.amount;
        let name = c.extra("name").and_then(Value::as_str).ok_or_else(malformed)?;
        let version = c.extra("version").and_then(Value::as_str).ok_or_else(malformed)?;
        let token = Eip3009Token { name, version, chain_id: c.chain_id, address: c.text("asset") };
        let message =
            |value: String| eip3009_message(c.payer, collector, value, c.deadline.to_string(), nonce.to_hex());
        let typed_data = eip3009_typed_data("ReceiveWithAuthorization", token, message(value.to_string()));
        let authorization = Value::Object(message(c.text("amount").to_owned()));
        payload.insert("authorization".into(), authorization);
        insert_salts(&mut payload, terms, &salt, h);
        return Ok(Signed::new(typed_data, &c, payload));
    }
    let collector = terms.deployment.permit2_collector;
    let nonce = U256::from_be_bytes(*nonce.as_bytes());
    let transfer = Transfer {
        chain_id: c.chain_id,
        token: c.text("asset"),
        amount: c.amount,
        spender: collector,
        nonce,
        deadline: c.deadline,
    };
    let typed_data = permit2::typed_data(&transfer, None);
    let authorization = json!({
        "permitted": {"token": c.text("asset"), "amount": c.text("amount")},
        "from": c.payer,
        "spender": collector,
        "nonce": nonce.to_string(),
        "deadline": c.deadline.to_string(),
    });
    payload.insert("permit2Authorization".into(), authorization);
    insert_salts(&mut payload, terms, &salt, h);
    Ok(Signed::new(typed_data, &c, payload))
}

/// `salt`, and for a bound option `saltNonce` (H) after it.
fn insert_salts(payload: &mut Map<String, Value>, terms: &Terms, salt: &AtrHash, h: &AtrHash) {
    payload.insert("salt".into(), Value::String(salt.to_hex()));
    if terms.bound {
        payload.insert("saltNonce".into(), Value::String(h.to_hex()));
    }
}

/// `0x` and 64 hex digits, read as a 32-byte value.
fn salt_of(value: Option<&Value>) -> Option<AtrHash> {
    AtrHash::parse(value?.as_str()?)
}

/// The auth-capture bound, for either collector: H (the salt when unbound, the `saltNonce` when bound, whose
/// commitment must be the salt), once the signed nonce is the signature nonce rebuilt with payer zero. Under an
/// option that binds neither a receiver authorizer nor a policy, a payload carrying a `saltNonce` is a binding
/// option's payment, whose H is not its salt: `x402/salt-not-bound`.
pub(super) fn bound_for(kind: Kind, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let (p, payload) = presented_as(kind, presented)?;
    if !is_signature(payload.member("signature"), 1) {
        return Err(Refusal::x402(Reason::SignatureMalformed));
    }
    let accepted = p.member("accepted").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    let terms = Terms::of(accepted)?;
    let salt = salt_of(payload.member("salt")).ok_or(Refusal::x402(Reason::SaltMalformed))?;
    let mut h = salt;
    if terms.bound {
        let salt_nonce = salt_of(payload.member("saltNonce")).ok_or(Refusal::x402(Reason::SaltMalformed))?;
        if terms.salt_for(&salt_nonce) != salt {
            return Err(Refusal::x402(Reason::SaltNotBound));
        }
        h = salt_nonce;
    } else if payload.contains_key("saltNonce") {
        return Err(Refusal::x402(Reason::SaltNotBound));
    }
    let payload_malformed = || Refusal::x402(Reason::PayloadMalformed);
    let (payer, signed, expiry) = if kind == Kind::AuthCaptureEip3009 {
        let keys = ["from", "to", "value", "validAfter", "validBefore", "nonce"];
        let a = strings(payload.member("authorization"), &keys).ok_or_else(payload_malformed)?;
        (text(a, "from"), AtrHash::parse(text(a, "nonce")), a.member("validBefore").and_then(uint256_of))
    } else {
        let keys = ["from", "spender", "nonce", "deadline"];
        let a = strings(payload.member("permit2Authorization"), &keys).ok_or_else(payload_malformed)?;
        (text(a, "from"), family::nonce_as_hash(text(a, "nonce")), a.member("deadline").and_then(uint256_of))
    };
    let expiry = expiry.filter(|e| *e < U256::from(UINT48_LIMIT)).map(|e| e.saturating_to::<u64>());
    let (true, Some(expiry)) = (is_address_text(payer), expiry) else {
        return Err(payload_malformed());
    };
    let signed = signed.ok_or(Refusal::x402(Reason::NonceNotPayment))?;
    match terms.signature_nonce(&salt, expiry) {
        Some(nonce) if nonce == signed => Ok(h),
        _ => Err(Refusal::x402(Reason::NonceNotPayment)),
    }
}

/// The EIP-712 parts of an auth-capture payment's typed data (`ReceiveWithAuthorization`, or Permit2's
/// `PermitTransferFrom`), computed from `sol!` static structs rather than from the JSON types.
pub fn eip712_parts(typed: &TypedData) -> Option<Eip712Parts> {
    if typed.primary_type != "ReceiveWithAuthorization" {
        return permit2::eip712_parts(typed);
    }
    crate::rail::evm::eip3009::eip712_parts(typed)
}
