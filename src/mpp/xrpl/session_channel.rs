//! The channel side of `mpp/session/xrpl`: what a session payment does in its channel, the channel it names, and a
//! later claim (or the close's final claim) built from the hold through the shared within steps
//! ([`crate::mpp::session_within`]). A claim signs the channel id and a cumulative amount of drops (`CLM\0`): it
//! carries no H of its own (`mpp/not-bound-within`, which the gate accepts), the channel being the one whose opening
//! carried H in its memo.
//!
//! Beyond the reference: a claim above the drops the opening deposits is refused before the signer is asked
//! (`xrpl/claim-above-deposit`, ours): the ledger would not pay it.

use std::borrow::Cow;

use ruint::aliases::{U256, U512};
use serde_json::{Map, Value};

use super::filter::{XRPL_SESSION, is_drops};
use super::session::{ID, SessionXrpl, opening};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::challenge::details_of;
use crate::mpp::credential::{Credential, credential_shape};
use crate::mpp::network::xrpl_network;
use crate::mpp::session_within::{Names, SessionWithin, payload_of, plan_within, session_request, within_echo};
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, Quote, WithinArgs, WithinPlan};
use crate::rail::xrpl::{claim_bytes, is_blob_hex, xrpl};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Fields, SigningRequest};

/// What the XRPL session gives the shared within steps.
static WITHIN: SessionWithin = SessionWithin { id: ID, method: &XRPL_SESSION, names, build: build_within };

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// 64 hex digits, either case.
fn is_hash256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A payment's kind by its action (draft-xrpl-session-00): `open`, `close`, and `voucher` within; any other action
/// is `mpp/session-action`.
fn kind_of(payment: &Value) -> Result<ChannelKind, Refusal> {
    match payload_of(payment)?.member("action").and_then(Value::as_str) {
        Some("open") => Ok(ChannelKind::Open),
        Some("close") => Ok(ChannelKind::Close),
        Some("voucher") => Ok(ChannelKind::Within),
        _ => Err(Refusal::mpp(Reason::SessionAction)),
    }
}

impl Channel for SessionXrpl {
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        kind_of(payment)
    }

    /// On an open, the network and the channel id derived from its signed blob as bound reads it ([`opening`]); on a
    /// voucher or close, the payload's `channelId` (64 hex digits, else `mpp/credential-malformed`) in upper case,
    /// on the network its echoed challenge names, read without the opening's checks.
    fn channel_ref(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        if kind_of(payment)? == ChannelKind::Open {
            let o = opening(payment)?;
            let channel = hex::encode_upper(o.channel()?);
            return Ok(ChannelRef { network: o.network, channel });
        }
        credential_shape(payment)?;
        let request = session_request(payment.member("challenge"), "xrpl")?;
        let network = xrpl_network(details_of(&request))?;
        let channel = payload_of(payment)?.member("channelId").and_then(Value::as_str).filter(|c| is_hash256(c));
        Ok(ChannelRef { network, channel: channel.ok_or_else(malformed)?.to_uppercase() })
    }

    /// A claim signs the channel id and an amount, no value holding H (`mpp/not-bound-within`).
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        payload_of(payment)?;
        Err(Refusal::mpp(Reason::NotBoundWithin))
    }

    /// The opening's first claim: the payload's `amount` where it is drops, else `"0"`.
    fn signed_max(&self, opening: &Value) -> String {
        let amount = opening.member("payload").and_then(|p| p.member("amount"));
        if is_drops(amount) { amount.and_then(Value::as_str).unwrap_or("0").to_owned() } else { "0".to_owned() }
    }

    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        plan_within(args, &WITHIN)
    }
}

/// What a challenge names for the buyer to resume (the reference's `session_resume`): the request's `channelId`, 64
/// hex digits, upper case, on its network; absent or empty names none; a challenge of another method, or whose
/// channel or network cannot be read, is passed over.
fn names(c: &Value) -> Names {
    let Ok(request) = session_request(Some(c), "xrpl") else { return Names::Other };
    let named = match request.member("channelId") {
        None => return Names::NoChannel,
        Some(Value::String(s)) if s.is_empty() => return Names::NoChannel,
        Some(named) => named.as_str().filter(|n| is_hash256(n)),
    };
    match (named, xrpl_network(details_of(&request))) {
        (Some(channel), Ok(network)) => Names::Channel(network, channel.to_uppercase()),
        _ => Names::Other,
    }
}

/// The claim on the channel the held opening created, in the reference's order (its `within_checks` and
/// `build_within`): the within challenge's snapshot ([`within_echo`]) of `session` on `xrpl` with its network; the
/// cumulative amount below 2^64 (`mpp/input-malformed`); the held opening read back to `h` ([`opening`]; another H is
/// `mpp/id-not-ours`) and its channel (`xrpl/not-channel-create`); ours: the amount at most the opening's deposit
/// (`xrpl/claim-above-deposit`). One `xrpl-claim` request `{channelId, drops, bytes}`.
fn build_within(
    challenge: &Value,
    held_opening: &Value,
    h: &AtrHash,
    cumulative: U512,
    close: bool,
    network: &str,
) -> Result<(Box<dyn Batch>, Quote), Refusal> {
    let echo = within_echo(challenge)?;
    let within = session_request(Some(&echo), "xrpl")?;
    xrpl_network(details_of(&within))?;
    let drops = u64::try_from(cumulative).map_err(|_| Refusal::mpp(Reason::InputMalformed))?;
    let o = opening(held_opening)?;
    if o.echoed.h != *h {
        return Err(Refusal::mpp(Reason::IdNotOurs));
    }
    let channel = o.channel()?;
    if o.deposit().is_none_or(|deposit| drops > deposit) {
        return Err(xrpl(Reason::ClaimAboveDeposit));
    }
    let channel_hex = hex::encode_upper(channel);
    let mut fields = Fields::new();
    fields.insert("channelId".into(), channel_hex.clone().into());
    fields.insert("drops".into(), drops.into());
    fields.insert("bytes".into(), crate::codec::to_hex(&claim_bytes(&channel, drops)).into());
    let request = o.echoed.checked.request();
    let recipient = request.member("recipient").and_then(Value::as_str).unwrap_or_default().to_owned();
    let intent = o.echoed.checked.text("intent");
    let quote = Quote::new(U256::from(drops), "XRP", recipient, network.to_owned(), intent);
    let batch = Claim {
        requests: vec![SigningRequest::XrplClaim(fields)],
        challenge: echo,
        channel: channel_hex,
        drops,
        close,
    };
    Ok((Box::new(batch), quote))
}

/// A later claim, or the close's final claim: one `xrpl-claim` request.
#[derive(Debug, Clone)]
struct Claim {
    requests: Vec<SigningRequest>,
    /// The within challenge, as the credential echoes it.
    challenge: Value,
    /// The channel id, upper-case hex.
    channel: String,
    drops: u64,
    close: bool,
}

impl Batch for Claim {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The credential `{challenge, payload: {action, channelId, amount, signature}}` for the one signature, hex
    /// digits without `0x`; `mpp/credential-malformed` for any other answer, or a credential over MPP's bounds. MPP
    /// has no payment id: `reference` is not written.
    fn complete(&self, answers: &[String], _reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(malformed()) };
        if !is_blob_hex(signature) {
            return Err(malformed());
        }
        let mut payload = Map::with_capacity(4);
        payload.insert("action".into(), (if self.close { "close" } else { "voucher" }).into());
        payload.insert("channelId".into(), self.channel.clone().into());
        payload.insert("amount".into(), self.drops.to_string().into());
        payload.insert("signature".into(), signature.clone().into());
        Ok(Credential::new(Cow::Borrowed(&self.challenge), None, Value::Object(payload))?.to_value())
    }
}
