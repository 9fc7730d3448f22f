//! The channel side of `mpp/session/tempo`: what a session payment does in its channel, the channel it names, H as a
//! v2 voucher's descriptor carries it, and a later voucher (or the close's final voucher) built from the hold through
//! the shared within steps ([`crate::mpp::session_within`]). A v1 voucher signs the channel id, which the opening bound
//! to H, and carries no H of its own (`mpp/not-bound-within`, which the gate accepts); a v2 voucher's credential
//! carries the opening's descriptor, whose salt is H.

use alloy_primitives::B256;
use ruint::aliases::{U256, U512};
use serde_json::Value;

use super::session::{ID, Params, SessionTempo, TEMPO_SESSION, descriptor_of, opened, params_of, tempo};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::credential::{credential_shape, echoed_for};
use crate::mpp::evm::session::INTENT;
use crate::mpp::session_within::{InChannel, Names, SessionWithin, payload_of, plan_within, within_echo};
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, Quote, WithinArgs, WithinPlan};
use crate::rail::evm::session::{EvmAddress, escrow_voucher_typed_data};
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// What the Tempo session gives the shared within steps.
static WITHIN: SessionWithin = SessionWithin { id: ID, method: &TEMPO_SESSION, names, build: build_within };

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// The payload's `channelId`, lower-case; one that is not `0x` and 64 hex digits is `mpp/credential-malformed`.
fn channel_of(payload: &Value) -> Result<B256, Refusal> {
    let named = payload.member("channelId").and_then(Value::as_str).and_then(AtrHash::parse);
    named.map(|h| B256::from(*h.as_bytes())).ok_or_else(malformed)
}

impl Channel for SessionTempo {
    /// `open` opens; a `voucher` or `topUp` is within; `close` closes. Any other action is `mpp/session-action`.
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        match payload_of(payment)?.member("action").and_then(Value::as_str) {
            Some("open") => Ok(ChannelKind::Open),
            Some("voucher" | "topUp") => Ok(ChannelKind::Within),
            Some("close") => Ok(ChannelKind::Close),
            _ => Err(Refusal::mpp(Reason::SessionAction)),
        }
    }

    /// The challenge's network, `eip155:<chainId>`, and the payload's `channelId`, lower-case. An opening is held as
    /// bound holds it first ([`echoed_for`]): its echoed challenge carries H and offers the session.
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        if self.kind(payment, landed)? == ChannelKind::Open {
            echoed_for(payment, ID, &TEMPO_SESSION)?;
        }
        let network = params_of(payment.member("challenge"))?.network();
        let channel = channel_of(payload_of(payment)?)?;
        Ok(ChannelRef { network, channel: channel.to_string() })
    }

    /// On a v2 challenge, the salt of the payload's descriptor, once it gives the payload's channel id with the
    /// challenge's escrow, chain and operator ([`descriptor_of`]); on v1, never (`mpp/not-bound-within`).
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        credential_shape(payment)?;
        let payload = payload_of(payment)?.as_object().ok_or_else(malformed)?;
        let p = params_of(payment.member("challenge"))?;
        if !p.v2 {
            return Err(Refusal::mpp(Reason::NotBoundWithin));
        }
        Ok(AtrHash::from_bytes(descriptor_of(payload, &p)?.salt.0))
    }

    /// `"0"` for every opening, as the reference gives it (see `mpp/session/evm`): every opening this pairing builds
    /// signs a first voucher of cumulative amount 0.
    fn signed_max(&self, _opening: &Value) -> String {
        "0".to_owned()
    }

    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        plan_within(args, &WITHIN)
    }
}

/// What a challenge names for the buyer to resume (the reference's `session_resume`): its `methodDetails.channelId`,
/// a 32-byte hash, on its network; a challenge whose terms or channel cannot be read is passed over.
fn names(c: &Value) -> Names {
    let Ok(p) = params_of(Some(c)) else { return Names::Other };
    match &p.channel {
        None => Names::NoChannel,
        Some(named) => match named.as_str().and_then(AtrHash::parse) {
            Some(channel) => Names::Channel(p.network(), channel.to_hex()),
            None => Names::Other,
        },
    }
}

/// The voucher on the channel the held opening opened, checked in the reference's order (its `within_checks` and
/// `_tempo_build_within`): the within challenge's snapshot ([`within_echo`]) and its [`Params`]; the cumulative amount
/// below the held escrow's limit, 2^96 on v2, 2^128 on v1 (`mpp/input-malformed`); the held opening, read back to
/// `h` ([`opened`]; another H is `mpp/id-not-ours`); then, under a v2 within challenge, the opening's channel and
/// descriptor must give the channel with its escrow, chain and operator ([`descriptor_of`], so also a v2 challenge
/// over a v1 opening: `tempo/descriptor-mismatch`), and a v1 challenge over a v2 opening is `mpp/not-bound-within`.
/// The voucher is the held escrow's: "TIP20 Channel Reserve" over `uint96` on v2 (its credential carrying the
/// opening's descriptor), "Tempo Stream Channel" over `uint128` on v1, with the opening's chain and escrow.
fn build_within(
    challenge: &Value,
    opening: &Value,
    h: &AtrHash,
    cumulative: U512,
    close: bool,
    network: &str,
) -> Result<(Box<dyn Batch>, Quote), Refusal> {
    let echo = within_echo(challenge)?;
    let within = params_of(Some(&echo))?;
    let held_params = params_of(opening.member("challenge"));
    let limit = held_params.as_ref().map_or(U512::from(1u8) << 128, Params::amount_limit);
    let cumulative = u128::try_from(cumulative)
        .ok()
        .filter(|c| U512::from(*c) < limit)
        .ok_or(Refusal::mpp(Reason::InputMalformed))?;
    let o = opened(opening)?;
    if o.echoed.h != *h {
        return Err(Refusal::mpp(Reason::IdNotOurs));
    }
    let p = &o.params;
    let descriptor = if p.v2 { o.echoed.payload.member("descriptor").cloned() } else { None };
    if within.v2 {
        let mut carried = serde_json::Map::with_capacity(2);
        carried.insert("channelId".into(), o.channel.to_string().into());
        if let Some(d) = &descriptor {
            carried.insert("descriptor".into(), d.clone());
        }
        descriptor_of(&carried, &within)?;
    } else if p.v2 {
        return Err(Refusal::mpp(Reason::NotBoundWithin));
    }
    let escrow = EvmAddress::parse(&p.escrow).ok_or(tempo(Reason::TxMalformed))?;
    let typed = escrow_voucher_typed_data(p.voucher_domain(), p.chain_id, &escrow, &o.channel, cumulative);
    let request = o.echoed.checked.request();
    let text = |k: &str| request.member(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let quote = Quote::new(U256::from(cumulative), text("currency"), text("recipient"), network.to_owned(), INTENT);
    let requests = vec![SigningRequest::Eip712 { typed_data: typed }];
    Ok((Box::new(InChannel { requests, challenge: echo, channel: o.channel, cumulative, close, descriptor }), quote))
}
