//! `x402/exact/eip155/erc7710-salt`, the salt level: through MetaMask's reference DelegationManager, H is the salt
//! of the permission context's leaf delegation, which the delegator signs and the manager's `RedeemedDelegation`
//! event records, so the payment is itself a public proof. It pays the same `erc7710` option, with the same
//! request, as the unsigned level.

use super::family::FamilyPairing;
use serde_json::Value;

use super::erc7710::{DelegationRequest, presented};
use super::family::Kind;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::rail::evm::delegation::{decode_permission_context, is_reference_manager};
use crate::refusal::{Reason, Refusal};

/// The pairing id.
pub const ID: &str = Kind::Erc7710Salt.id();
/// The pairing.
pub static PAIRING: FamilyPairing<DelegationRequest> = FamilyPairing::new(Kind::Erc7710Salt, true, build, bound);

/// The delegation request, as the unsigned level builds it.
pub fn build(choice: &serde_json::Map<String, Value>, h: &AtrHash) -> Result<DelegationRequest, Refusal> {
    super::erc7710::build(choice, h)
}

/// Reads H back: the salt of the permission context's leaf (first) delegation, once the manager is the reference
/// DelegationManager on the option's chain. Neither the caveats nor the signatures are read.
pub fn bound(presented_payment: &dyn Member) -> Result<AtrHash, Refusal> {
    let (p, payload) = presented(Kind::Erc7710Salt, presented_payment)?;
    let network = p.member("accepted").and_then(|a| a.member("network")).unwrap_or(&Value::Null);
    if !is_reference_manager(payload.member("delegationManager").unwrap_or(&Value::Null), network) {
        return Err(Refusal::x402(Reason::ManagerNotReference));
    }
    let context = payload.member("permissionContext").and_then(Value::as_str).unwrap_or_default();
    let delegations =
        decode_permission_context(context).map_err(|_| Refusal::x402(Reason::PermissionContextMalformed))?;
    let leaf = delegations.first().ok_or(Refusal::x402(Reason::DelegationEmpty))?;
    Ok(AtrHash::from_bytes(leaf.salt.to_be_bytes()))
}
