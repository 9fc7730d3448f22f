//! The channel side of `mpp/session/evm`: what a session payment does in its channel, the channel it names, and a
//! later voucher (or the close's final voucher) built from the hold, through the same [`Channel`] seam as x402 batch
//! settlement. A voucher signs the channel id, which the opening bound to H, and carries no H of its own, so every
//! later payment is `mpp/not-bound-within`, which the gate's channel steps accept. Every value a voucher signs but
//! its amount comes from the held opening; the steps every MPP session on an EVM chain shares are
//! [`crate::mpp::session_within`]'s.

use ruint::aliases::{U256, U512};
use serde_json::Value;

use super::session::{ID, INTENT, SessionEvm, with_opening};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::mpp::challenge::details_of;
use crate::mpp::credential::echoed_for;
use crate::mpp::methods::EVM_SESSION;
use crate::mpp::session_within::{
    InChannel, Names, SessionWithin, payload_of, plan_within, session_request, within_echo,
};
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, Quote, WithinArgs, WithinPlan};
use crate::rail::evm::session::voucher_typed_data;
use crate::rail::evm::session::{SessionKind, SessionParams, channel_of, kind_of, named_channel};
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// What the EVM session gives the shared within steps.
static WITHIN: SessionWithin = SessionWithin { id: ID, method: &EVM_SESSION, names, build: build_within };

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// The chain and escrow a session challenge names, read without the opening's checks (the seller issues a within
/// challenge with its own id and the channel named): an object with a string `request` (`mpp/credential-malformed`),
/// of intent `session` and method `evm` (`mpp/not-this-pairing`), whose request decodes and whose `methodDetails`,
/// where present, is an object (`mpp/request-malformed`), then [`SessionParams::of`]'s checks. `f` reads the details.
fn with_params<R>(challenge: Option<&Value>, f: impl FnOnce(SessionParams<'_>, &Object) -> R) -> Result<R, Refusal> {
    let request = session_request(challenge, "evm")?;
    let details = details_of(&request);
    let params = SessionParams::of(details).map_err(Refusal::mpp)?;
    Ok(f(params, details))
}

impl Channel for SessionEvm {
    /// `open`, or a `voucher` carrying an opening `deposit`, opens; a `voucher` or `topUp` is within; `close` closes.
    /// Any other action is `mpp/session-action`.
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        let kind = kind_of(payload_of(payment)?).map_err(Refusal::mpp)?;
        Ok(match kind {
            SessionKind::Open => ChannelKind::Open,
            SessionKind::Within => ChannelKind::Within,
            SessionKind::Close => ChannelKind::Close,
        })
    }

    /// The challenge's network, `eip155:<chainId>`, and the payload's `channelId`, lower-case. An opening is held as
    /// bound holds it first ([`echoed_for`]): its echoed challenge carries H and offers the session.
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        if self.kind(payment, landed)? == ChannelKind::Open {
            echoed_for(payment, ID, &EVM_SESSION)?;
        }
        let network = with_params(payment.member("challenge"), |params, _| params.network())?;
        let channel = channel_of(payload_of(payment)?).map_err(Refusal::mpp)?;
        Ok(ChannelRef { network, channel: channel.to_string() })
    }

    /// Never: a voucher signs the channel id, which the opening bound to H (`mpp/not-bound-within`).
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        payload_of(payment)?;
        Err(Refusal::mpp(Reason::NotBoundWithin))
    }

    /// `"0"` for every opening, as the reference gives it: its signed maximum is read from an x402 voucher's
    /// `maxClaimableAmount`, which no session opening carries. Every opening this pairing builds signs a first voucher
    /// of cumulative amount 0, so the two agree on them.
    fn signed_max(&self, _opening: &Value) -> String {
        "0".to_owned()
    }

    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        plan_within(args, &WITHIN)
    }
}

fn names(c: &Value) -> Names {
    let read = with_params(Some(c), |params, details| match named_channel(details) {
        Ok(None) => Names::NoChannel,
        Ok(Some(channel)) => Names::Channel(params.network(), channel.to_string()),
        Err(_) => Names::Other,
    });
    read.unwrap_or(Names::Other)
}

/// The voucher on the channel the held opening opened, checked in the reference's order (its `within_checks`): the
/// within challenge's snapshot, of MPP's shape with a string id and within MPP's bounds as the least credential
/// echoing it (`mpp/credential-malformed`), and its chain and escrow ([`with_params`]); the cumulative amount below
/// 2^128 (`mpp/input-malformed`); and the held opening, read back to `h` ([`with_opening`]; another H is
/// `mpp/id-not-ours`). The voucher's channel id, escrow and chain are the opening's; its quote is the cumulative
/// amount of the opening's token to its payee on the held network.
fn build_within(
    challenge: &Value,
    opening: &Value,
    h: &AtrHash,
    cumulative: U512,
    close: bool,
    network: &str,
) -> Result<(Box<dyn Batch>, Quote), Refusal> {
    let echo = within_echo(challenge)?;
    with_params(Some(&echo), |_, _| ())?;
    let cumulative = u128::try_from(cumulative).map_err(|_| Refusal::mpp(Reason::InputMalformed))?;
    let read = with_opening(opening, |opened_h, opened| {
        let c = &opened.channel;
        let typed = voucher_typed_data(c.chain_id, &c.escrow, &opened.id, cumulative);
        let quote =
            Quote::new(U256::from(cumulative), c.token.text(), c.payee.text(), network.to_owned(), INTENT.to_owned());
        (*opened_h, opened.id, typed, quote)
    })?;
    let (opened_h, channel, typed, quote) = read;
    if opened_h != *h {
        return Err(Refusal::mpp(Reason::IdNotOurs));
    }
    let requests = vec![SigningRequest::Eip712 { typed_data: typed }];
    Ok((Box::new(InChannel { requests, challenge: echo, channel, cumulative, close, descriptor: None }), quote))
}
