//! `x402/exact/eip155/permit2`: H is the nonce of a Permit2 witness transfer the payer signs for the x402 exact
//! proxy, so Permit2's nonce bitmap records it when the payment settles. The build and bound here are shared with
//! [`upto_permit2`](super::upto_permit2), which differs in its proxy, its witness and the nonce's written form.

use super::family::FamilyPairing;
use alloy_primitives::U256;
use serde_json::{Map, Value, json};

use super::family::{self, Kind, Signed, choice_of, is_signature, presented_as, strings, text};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::rail::evm::object;
use crate::rail::evm::permit2::{self, EXACT_PERMIT2_PROXY, Transfer, UPTO_PERMIT2_PROXY, Witness};
use crate::refusal::{Reason, Refusal};
use crate::signer::TypedField;

/// The pairing id.
pub const ID: &str = Kind::ExactPermit2.id();
/// The pairing.
pub static PAIRING: FamilyPairing<Signed> = FamilyPairing::new(Kind::ExactPermit2, true, build, bound);

/// Builds the Permit2 witness transfer whose nonce is H, from a choice `{required, accepted, from, now}`: the
/// option's amount of its asset, spender the exact proxy, deadline now + maxTimeoutSeconds, witness
/// `{to: payTo, validAfter: 0}`.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::ExactPermit2, choice, h)
}

/// Reads H back: the Permit2 nonce, once the spender is the exact proxy.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    bound_for(Kind::ExactPermit2, presented)
}

const fn proxy_of(kind: Kind) -> &'static str {
    if matches!(kind, Kind::UptoPermit2) { UPTO_PERMIT2_PROXY } else { EXACT_PERMIT2_PROXY }
}

/// The Permit2 build of the exact and upto schemes.
pub(super) fn build_for(kind: Kind, choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    let c = choice_of(kind, choice)?;
    let upto = matches!(kind, Kind::UptoPermit2);
    let spender = proxy_of(kind);
    let field = TypedField::new;
    let witness = if upto {
        let facilitator = c.extra("facilitatorAddress").cloned().unwrap_or(Value::Null);
        Witness {
            fields: vec![field("to", "address"), field("facilitator", "address"), field("validAfter", "uint256")],
            value: object(json!({"to": c.text("payTo"), "facilitator": facilitator, "validAfter": "0"})),
        }
    } else {
        Witness {
            fields: vec![field("to", "address"), field("validAfter", "uint256")],
            value: object(json!({"to": c.text("payTo"), "validAfter": "0"})),
        }
    };
    let nonce = U256::from_be_bytes(*h.as_bytes());
    let transfer = Transfer {
        chain_id: c.chain_id,
        token: c.text("asset"),
        amount: c.amount,
        spender,
        nonce,
        deadline: c.deadline,
    };
    let typed_data = permit2::typed_data(&transfer, Some(&witness));
    let written_nonce = if upto { h.to_hex() } else { nonce.to_string() };
    let authorization = json!({
        "permitted": {"token": c.text("asset"), "amount": c.text("amount")},
        "from": c.payer,
        "spender": spender,
        "nonce": written_nonce,
        "deadline": c.deadline.to_string(),
        "witness": witness.value,
    });
    let mut payload = Map::new();
    payload.insert("permit2Authorization".into(), authorization);
    Ok(Signed::new(typed_data, &c, payload))
}

/// The Permit2 bound of the exact and upto schemes: H from the authorization's nonce (decimal or `0x` and 64 hex
/// digits), once the spender is the scheme's proxy. As in the reference, the permitted token and amount and the
/// witness are not compared with the option: the payee's facilitator settles what was signed, and H is what binds.
pub(super) fn bound_for(kind: Kind, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let (_, payload) = presented_as(kind, presented)?;
    if !is_signature(payload.member("signature"), 1) {
        return Err(Refusal::x402(Reason::SignatureMalformed));
    }
    let a = strings(payload.member("permit2Authorization"), &["from", "spender", "nonce", "deadline"]);
    let permitted = a.and_then(|a| strings(a.member("permitted"), &["token", "amount"]));
    let witness = a.and_then(|a| strings(a.member("witness"), &["to"]));
    let (Some(a), Some(_), Some(witness)) = (a, permitted, witness) else {
        return Err(Refusal::x402(Reason::PayloadMalformed));
    };
    if !text(a, "spender").eq_ignore_ascii_case(proxy_of(kind)) {
        return Err(Refusal::x402(Reason::SpenderNotProxy));
    }
    if matches!(kind, Kind::UptoPermit2) && !family::all_strings(witness, &["facilitator"]) {
        return Err(Refusal::x402(Reason::PayloadMalformed));
    }
    family::nonce_as_hash(text(a, "nonce")).ok_or(Refusal::x402(Reason::NonceMalformed))
}
