//! `x402/exact/eip155/erc7710`, the unsigned level: the payer answers an ERC-7710 delegation for the option, and
//! nothing the delegator signs is read, so the payment is no public proof of H. H is read back from the legal
//! context the payment echoes; the proof is the agreement payment made first. The build, and the presented payment's
//! checks, are shared with the salt level ([`erc7710_salt`](super::erc7710_salt)).

use super::family::FamilyPairing;
use serde_json::{Map, Value};

use super::family::{Kind, Presented, all_strings, choice_of, presented_as};
use crate::codec::is_hex;
use crate::hash::AtrHash;
use crate::json::{Member, js_length};
use crate::pairing::{Chosen, Completion, Unsigned};
use crate::rail::evm::delegation::MAX_CONTEXT_BYTES;
use crate::rail::evm::is_address;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};
use crate::x402::{LEGAL_CONTEXT, X402Payment, legal_context_info};

/// The pairing id.
pub const ID: &str = Kind::Erc7710.id();
/// The pairing.
pub static PAIRING: FamilyPairing<DelegationRequest> = FamilyPairing::new(Kind::Erc7710, false, build, bound);

/// The members of a delegation answer, in the order the payload carries them.
const DELEGATION: [&str; 3] = ["delegationManager", "permissionContext", "delegator"];

/// The unsigned ERC-7710 payment: the delegation request, and the payment a delegation answer completes.
#[derive(Debug, Clone)]
pub struct DelegationRequest {
    fields: Fields,
    required: Map<String, Value>,
    accepted: Value,
}

impl DelegationRequest {
    /// The request's members: `chainId`, `token`, `payTo`, `amount` (a decimal string) and `salt` (H).
    pub fn fields(&self) -> &Fields {
        &self.fields
    }
}

/// Builds the delegation request for a choice `{required, accepted, from, now}`: a delegation of the option's
/// amount of its asset to its payee, with salt H.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<DelegationRequest, Refusal> {
    let c = choice_of(Kind::Erc7710, choice)?;
    let mut fields = Map::new();
    fields.insert("chainId".into(), Value::from(c.chain_id));
    fields.insert("token".into(), Value::String(c.text("asset").to_owned()));
    fields.insert("payTo".into(), Value::String(c.text("payTo").to_owned()));
    fields.insert("amount".into(), Value::String(c.amount.to_string()));
    fields.insert("salt".into(), Value::String(h.to_hex()));
    Ok(DelegationRequest { fields, required: c.required.clone(), accepted: c.option.clone() })
}

impl Unsigned for DelegationRequest {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Erc7710(self.fields.clone())))
    }

    /// The payment for an answer `{delegationManager, permissionContext, delegator}` of strings: two addresses and
    /// `0x` hex of at most 32 KiB, carried as given.
    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::x402(Reason::SignatureMalformed);
        let [answer] = answers else { return Err(malformed()) };
        let answer = answer.as_json().as_object().ok_or_else(malformed)?;
        if !DELEGATION.iter().all(|k| answer.get(*k).is_some_and(Value::is_string)) {
            return Err(malformed());
        }
        let member = |k: &str| answer.get(k).cloned().unwrap_or(Value::Null);
        if !is_address(&member("delegationManager")) || !is_address(&member("delegator")) {
            return Err(Refusal::x402(Reason::PayloadMalformed));
        }
        let context = member("permissionContext");
        if !context.as_str().is_some_and(|c| c.len() <= 2 + 2 * MAX_CONTEXT_BYTES && is_hex(c)) {
            return Err(Refusal::x402(Reason::PermissionContextMalformed));
        }
        let payload: Map<String, Value> = DELEGATION.iter().map(|k| ((*k).to_owned(), member(k))).collect();
        let payment = X402Payment::for_chosen(&self.required, &self.accepted, Value::Object(payload), chosen)?;
        Ok(payment.completion())
    }
}

/// The presented payment and its ERC-7710 payload: `delegationManager` and `delegator` strings of at most 256
/// UTF-16 code units, and a `permissionContext` string of at most 2 + 2 × 32 KiB.
pub(crate) fn presented(kind: Kind, presented: &dyn Member) -> Result<Presented<'_>, Refusal> {
    let (p, payload) = presented_as(kind, presented)?;
    let context_ok = payload
        .member("permissionContext")
        .and_then(Value::as_str)
        .is_some_and(|c| js_length(c) <= 2 + 2 * MAX_CONTEXT_BYTES);
    if !all_strings(payload, &["delegationManager", "delegator"]) || !context_ok {
        return Err(Refusal::x402(Reason::PayloadMalformed));
    }
    Ok((p, payload))
}

/// Reads H back from the legal context the payment echoes (`extensions.legalContext.info`), once the payment is an
/// ERC-7710 payment of an option the read offers. Nothing the delegator signed carries H at this level.
pub fn bound(presented_payment: &dyn Member) -> Result<AtrHash, Refusal> {
    let (p, _) = presented(Kind::Erc7710, presented_payment)?;
    let info = p
        .member("extensions")
        .and_then(Value::as_object)
        .and_then(|e| e.get(LEGAL_CONTEXT))
        .and_then(Value::as_object)
        .and_then(|lc| lc.member("info"))
        .unwrap_or(&Value::Null);
    legal_context_info(info).map(|(h, _)| h).ok_or(Refusal::x402(Reason::NoLegalContext))
}
