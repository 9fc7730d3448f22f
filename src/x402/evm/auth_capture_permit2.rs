//! `x402/auth-capture/eip155/permit2`: as [`auth_capture_eip3009`](super::auth_capture_eip3009), with a Permit2
//! `PermitTransferFrom` to the escrow's Permit2 collector whose nonce is the escrow's payment hash with payer zero.

use super::family::FamilyPairing;
use serde_json::{Map, Value};

use super::auth_capture_eip3009::{bound_for, build_for};
use super::family::{Kind, Signed};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::refusal::Refusal;

/// The pairing id.
pub const ID: &str = Kind::AuthCapturePermit2.id();
/// The pairing.
pub static PAIRING: FamilyPairing<Signed> = FamilyPairing::new(Kind::AuthCapturePermit2, true, build, bound);

/// Builds the Permit2 transfer of the option's amount to the escrow's Permit2 collector from a choice
/// `{required, accepted, from, now}`: deadline (the payment's preApprovalExpiry) now + maxTimeoutSeconds, nonce the
/// escrow's payment hash with payer zero over the salt for H, as a uint256.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::AuthCapturePermit2, choice, h)
}

/// Reads H back as [`auth_capture_eip3009::bound`](super::auth_capture_eip3009::bound) does, from the Permit2
/// authorization's nonce and deadline.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    bound_for(Kind::AuthCapturePermit2, presented)
}
