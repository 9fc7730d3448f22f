//! `x402/upto/eip155/permit2`: H is the nonce of a Permit2 witness transfer of at most the option's amount, signed
//! for the x402 upto proxy with the option's facilitator in the witness; the facilitator settles up to that amount.
//! The nonce is written `0x` and 64 hex digits in the payload.

use serde_json::{Map, Value};

use super::exact_permit2::{bound_for, build_for};
use super::family::{self, Kind, Signed};
use crate::hash::AtrHash;
use crate::pairing::{Advertised, ChooseContext, Chosen, Pairing, Unsigned};
use crate::refusal::Refusal;
use crate::x402::read_with;

/// The pairing id.
pub const ID: &str = "x402/upto/eip155/permit2";
/// The pairing.
pub static PAIRING: UptoPermit2 = UptoPermit2;

/// The pairing `x402/upto/eip155/permit2`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UptoPermit2;

impl Pairing for UptoPermit2 {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, family::filter_of(Kind::UptoPermit2))
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        family::choose(Kind::UptoPermit2, read, ctx)
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(build(&chosen.choice, h)?))
    }

    fn bound(&self, presented: &Value, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        bound(presented)
    }
}

/// Builds the Permit2 witness transfer whose nonce is H, from a choice `{required, accepted, from, now}`: at most
/// the option's amount, spender the upto proxy, deadline now + maxTimeoutSeconds, witness
/// `{to: payTo, facilitator: extra.facilitatorAddress, validAfter: 0}`.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Signed, Refusal> {
    build_for(Kind::UptoPermit2, choice, h)
}

/// Reads H back: the Permit2 nonce, once the spender is the upto proxy and the witness names a facilitator.
pub fn bound(presented: &Value) -> Result<AtrHash, Refusal> {
    bound_for(Kind::UptoPermit2, presented)
}
