//! `x402/upto/eip155/permit2`: H is the nonce of a Permit2 witness transfer of at most the option's amount, signed
//! for the x402 upto proxy with the option's facilitator in the witness; the facilitator settles up to that amount.
//! The nonce is written `0x` and 64 hex digits in the payload.

use super::family::FamilyPairing;
use serde_json::{Map, Value};

use super::exact_permit2::{bound_for, build_for};
use super::family::{Kind, Signed};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::refusal::Refusal;

/// The pairing id.
pub const ID: &str = Kind::UptoPermit2.id();
/// The pairing.
pub static PAIRING: FamilyPairing<Signed> = FamilyPairing::new(Kind::UptoPermit2, true, build, bound);

/// Builds the Permit2 witness transfer whose nonce is H, from a choice `{required, accepted, from, now}`: at most
/// the option's amount, spender the upto proxy, deadline now + maxTimeoutSeconds, witness
/// `{to: payTo, facilitator: extra.facilitatorAddress, validAfter: 0}`.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::UptoPermit2, choice, h)
}

/// Reads H back: the Permit2 nonce, once the spender is the upto proxy and the witness names a facilitator.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    bound_for(Kind::UptoPermit2, presented)
}
