//! `mpp/charge/evm/authorization`: the payer signs an EIP-3009 `TransferWithAuthorization` whose nonce is the
//! challenge hash, keccak256 of the JSON array `[id, realm]`, and the id carries H; the seller's server submits it.

use super::{Charge, chain_of, eip3009_charge, signed_nonce};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::credential::echoed_for;
use crate::mpp::methods::EVM_CHARGE;
use crate::mpp::pieces::Piece;
use crate::pairing::{Chosen, InputSpec, InputType, Unsigned};
use crate::rail::evm::charge::challenge_hash;
use crate::refusal::{Reason, Refusal};

/// The pairing id.
pub(crate) const ID: &str = "mpp/charge/evm/authorization";

/// The token's EIP-712 domain, which the challenge does not name.
pub(crate) const TOKEN_DOMAIN: InputSpec = InputSpec::required(
    "tokenDomain",
    InputType::Object,
    "The token's EIP-712 domain {name, version}, e.g. USDC's {name: USDC, version: 2}.",
);

/// The pairing.
pub(crate) static PAIRING: Charge = Charge::new(Piece::evm(ID, &EVM_CHARGE, &[TOKEN_DOMAIN]), true, build, bound);

/// The EIP-3009 authorization of the request's amount to its recipient, valid until `expires`, its nonce the
/// challenge hash of the challenge whose id carries H.
fn build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let chain = chain_of(held.checked.details())?;
    let nonce = challenge_hash(held.checked.text("id"), held.checked.text("realm"));
    eip3009_charge(held, chain, &nonce)
}

/// H from the echoed challenge, once the signed nonce is its challenge hash (`mpp/nonce-not-challenge-hash`).
fn bound(piece: &Piece, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let e = echoed_for(presented, piece.pairing, &EVM_CHARGE)?;
    let nonce = signed_nonce(&e, chain_of(e.checked.details())?)?;
    if nonce != challenge_hash(e.checked.text("id"), e.checked.text("realm")) {
        return Err(Refusal::mpp(Reason::NonceNotChallengeHash));
    }
    Ok(e.h)
}
