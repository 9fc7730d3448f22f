//! `x402/auth-capture/eip155/permit2`: as [`auth_capture_eip3009`](super::auth_capture_eip3009), with a Permit2
//! `PermitTransferFrom` to the escrow's Permit2 collector whose nonce is the escrow's payment hash with payer zero.

use serde_json::{Map, Value};

use super::auth_capture_eip3009::{bound_for, build_for};
use super::family::{self, Kind, Signed};
use crate::hash::AtrHash;
use crate::pairing::{Advertised, ChooseContext, Chosen, Pairing, Unsigned};
use crate::refusal::Refusal;
use crate::x402::read_with;

/// The pairing id.
pub const ID: &str = "x402/auth-capture/eip155/permit2";
/// The pairing.
pub static PAIRING: AuthCapturePermit2 = AuthCapturePermit2;

/// The pairing `x402/auth-capture/eip155/permit2`.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuthCapturePermit2;

impl Pairing for AuthCapturePermit2 {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, family::filter_of(Kind::AuthCapturePermit2))
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        family::choose(Kind::AuthCapturePermit2, read, ctx)
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(build(&chosen.choice, h)?))
    }

    fn bound(&self, presented: &Value, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        bound(presented)
    }
}

/// Builds the Permit2 transfer of the option's amount to the escrow's Permit2 collector from a choice
/// `{required, accepted, from, now}`: deadline (the payment's preApprovalExpiry) now + maxTimeoutSeconds, nonce the
/// escrow's payment hash with payer zero over the salt for H, as a uint256.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::AuthCapturePermit2, choice, h)
}

/// Reads H back as [`auth_capture_eip3009::bound`](super::auth_capture_eip3009::bound) does, from the Permit2
/// authorization's nonce and deadline.
pub fn bound(presented: &Value) -> Result<AtrHash, Refusal> {
    bound_for(Kind::AuthCapturePermit2, presented)
}
