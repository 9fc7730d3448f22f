//! The channel side of `mpp/session/solana`: what a session payment does in its channel, the channel it names, H as
//! an operator's `use` credential carries it, and a later voucher (or the close's final voucher) built from the hold
//! through the shared within steps ([`crate::mpp::session_within`]). A client voucher signs the channel voucher message
//! (channel, cumulative amount, no expiry) as `ed25519-raw` for the opening's authorized signer: it carries no H of its
//! own (`mpp/not-bound-within`, which the gate accepts), the channel being the one the opening salted with H.

use ruint::aliases::{U256, U512};
use serde_json::{Map, Value};

use super::session::{ID, SOLANA_SESSION, SessionSolana, key_of, opening, operator_mode, svm};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::mpp::challenge::details_of;
use crate::mpp::credential::{Credential, credential_shape, echoed_for};
use crate::mpp::network::solana_network;
use crate::mpp::session_within::{Names, SessionWithin, payload_of, plan_within, session_request, within_echo};
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, Quote, WithinArgs, WithinPlan};
use crate::rail::solana::Key;
use crate::rail::solana::channel::voucher_message;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Fields, SigningRequest};

/// What the Solana session gives the shared within steps.
static WITHIN: SessionWithin = SessionWithin { id: ID, method: &SOLANA_SESSION, names, build: build_within };

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// The `methodDetails` of a payment's echoed session challenge, read without the opening's checks (the seller issues
/// a within challenge with its own id and the channel named): the credential's shape first ([`credential_shape`]),
/// then [`session_request`]'s checks.
fn echoed_details(payment: &Value) -> Result<Object, Refusal> {
    credential_shape(payment)?;
    let request = session_request(payment.member("challenge"), "solana")?;
    Ok(details_of(&request).clone())
}

/// A payment's kind by its action, read against its echoed challenge's `voucherSigner` (client when absent), as
/// draft-solana-session-00 has it: `open` opens; `topUp` is within, and so is a `voucher` under a client voucher
/// signer and a `use` under an operator one (either the other way is `mpp/session-action`); a `close` carries
/// `voucher` and no `authentication` under a client voucher signer, `authentication` and no `voucher` under an
/// operator (else `mpp/credential-malformed`). Any other action is `mpp/session-action`.
fn kind_of(payment: &Value) -> Result<ChannelKind, Refusal> {
    let payload = payload_of(payment)?;
    let action = payload.member("action").and_then(Value::as_str);
    let kind = match action {
        Some("open") => return Ok(ChannelKind::Open),
        Some("close") => ChannelKind::Close,
        Some("voucher" | "topUp" | "use") => ChannelKind::Within,
        _ => return Err(Refusal::mpp(Reason::SessionAction)),
    };
    if action == Some("topUp") {
        return Ok(kind);
    }
    let operator = operator_mode(&echoed_details(payment)?);
    if action == Some("close") {
        let (voucher, authenticated) =
            (payload.member("voucher").is_some(), payload.member("authentication").is_some());
        return if voucher != operator && authenticated == operator { Ok(kind) } else { Err(malformed()) };
    }
    if operator == (action == Some("use")) { Ok(kind) } else { Err(Refusal::mpp(Reason::SessionAction)) }
}

impl Channel for SessionSolana {
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        kind_of(payment)
    }

    /// The challenge's network and the payload's `channelId`, re-encoded from its 32 bytes (`mpp/credential-malformed`
    /// where it is not a key). An opening's challenge is held as bound holds it ([`echoed_for`]); a later payment's is
    /// read without the opening's checks.
    fn channel_ref(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        let details = if kind_of(payment)? == ChannelKind::Open {
            echoed_for(payment, ID, &SOLANA_SESSION)?.checked.details().clone()
        } else {
            echoed_details(payment)?
        };
        let network = solana_network(&details, true)?;
        let channel = key_of(payload_of(payment)?.member("channelId")).ok_or_else(malformed)?;
        Ok(ChannelRef { network, channel: channel.to_base58() })
    }

    /// A `use` credential (operator mode) echoing the opening challenge, whose bearer proof names that challenge's id,
    /// gives its H (`svm/proof-not-challenge` otherwise); a voucher or top-up signs no value holding H
    /// (`mpp/not-bound-within`).
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        credential_shape(payment)?;
        kind_of(payment)?;
        if payload_of(payment)?.member("action").and_then(Value::as_str) != Some("use") {
            return Err(Refusal::mpp(Reason::NotBoundWithin));
        }
        let e = echoed_for(payment, ID, &SOLANA_SESSION)?;
        let id = payment.member("challenge").and_then(|c| c.member("id"));
        let auth = e.payload.member("authentication").filter(|a| a.is_object());
        if auth.is_none_or(|a| a.member("challengeId") != id) {
            return Err(svm(Reason::ProofNotChallenge));
        }
        Ok(e.h)
    }

    /// `"0"`: an opening signs no voucher.
    fn signed_max(&self, _opening: &Value) -> String {
        "0".to_owned()
    }

    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        plan_within(args, &WITHIN)
    }
}

/// What a challenge names for the buyer to resume (the reference's `session_resume`): its `methodDetails.channelId`,
/// a key, on its network; a challenge of another method, or whose channel or network cannot be read, is passed over.
fn names(c: &Value) -> Names {
    let Ok(request) = session_request(Some(c), "solana") else { return Names::Other };
    let d = details_of(&request);
    let Some(named) = d.member("channelId") else { return Names::NoChannel };
    match (key_of(Some(named)), solana_network(d, true)) {
        (Some(channel), Ok(network)) => Names::Channel(network, channel.to_base58()),
        _ => Names::Other,
    }
}

/// The largest cumulative amount, exclusive, a voucher signs: 2^64.
fn below_u64(cumulative: U512) -> Option<u64> {
    u64::try_from(cumulative).ok()
}

/// The voucher on the channel the held opening opened, checked in the reference's order (its `within_checks` and
/// `build_within`): the within challenge's snapshot ([`within_echo`]), of `session` on `solana` with its network
/// (`svm/network-undeclared` for localnet); the cumulative amount below 2^64 (`mpp/input-malformed`); the held
/// opening, read back to `h` ([`opening`]; another H is `mpp/id-not-ours`); then the voucher signer: a within
/// challenge naming `operator` over a client opening gives the code of the payment this would build
/// (`mpp/session-action` for a voucher, `mpp/credential-malformed` for a close), and an operator channel's vouchers
/// are the operator's, not built (`mpp/within-action-not-built`); the opening's authorized signer where its index is
/// in the keys (`svm/open-not-found`). One `ed25519-raw` request for that signer over the channel voucher message,
/// with no expiry.
fn build_within(
    challenge: &Value,
    held_opening: &Value,
    h: &AtrHash,
    cumulative: U512,
    close: bool,
    network: &str,
) -> Result<(Box<dyn Batch>, Quote), Refusal> {
    let echo = within_echo(challenge)?;
    let within = session_request(Some(&echo), "solana")?;
    let within = details_of(&within);
    solana_network(within, true)?;
    let cumulative = below_u64(cumulative).ok_or(Refusal::mpp(Reason::InputMalformed))?;
    let o = opening(held_opening)?;
    if o.echoed.h != *h {
        return Err(Refusal::mpp(Reason::IdNotOurs));
    }
    let operator = operator_mode(within);
    let operator_channel = operator_mode(o.echoed.checked.details());
    if operator && !operator_channel {
        return Err(if close { malformed() } else { Refusal::mpp(Reason::SessionAction) });
    }
    if operator || operator_channel {
        return Err(Refusal::mpp(Reason::WithinActionNotBuilt));
    }
    let signer = o.signer.ok_or(svm(Reason::OpenNotFound))?;
    let message = voucher_message(&o.channel, cumulative, 0);
    let mut fields = Fields::new();
    fields.insert("message".into(), crate::codec::to_hex(&message).into());
    fields.insert("signer".into(), signer.to_base58().into());
    let request = o.echoed.checked.request();
    let text = |k: &str| request.member(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let intent = o.echoed.checked.text("intent");
    let quote = Quote::new(U256::from(cumulative), text("currency"), text("recipient"), network.to_owned(), intent);
    let batch = Voucher {
        requests: vec![SigningRequest::Ed25519Raw(fields)],
        challenge: echo,
        channel: o.channel,
        signer,
        cumulative,
        close,
    };
    Ok((Box::new(batch), quote))
}

/// A later voucher, or the close's final voucher, in a channel opened under H: one `ed25519-raw` request.
#[derive(Debug, Clone)]
struct Voucher {
    requests: Vec<SigningRequest>,
    /// The within challenge, as the credential echoes it.
    challenge: Value,
    channel: Key,
    /// The opening's authorized signer.
    signer: Key,
    cumulative: u64,
    close: bool,
}

/// Base58 of 64 to 88 characters that decodes to 64 bytes: an Ed25519 signature.
fn is_base58_signature(text: &str) -> bool {
    let mut out = [0u8; 64];
    (64..=88).contains(&text.len()) && matches!(bs58::decode(text).onto(&mut out[..]), Ok(64))
}

impl Batch for Voucher {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The credential `{challenge, payload: {action, channelId, voucher: {voucher: {channelId, cumulativeAmount},
    /// signer, signature, signatureType: "ed25519"}}}` for the one signature, base58 of 64 bytes;
    /// `mpp/credential-malformed` for any other answer, or a credential over MPP's bounds. MPP has no payment id:
    /// `reference` is not written.
    fn complete(&self, answers: &[String], _reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(malformed()) };
        if !is_base58_signature(signature) {
            return Err(malformed());
        }
        let channel = self.channel.to_base58();
        let mut signed = Map::with_capacity(2);
        signed.insert("channelId".into(), channel.clone().into());
        signed.insert("cumulativeAmount".into(), self.cumulative.to_string().into());
        let mut voucher = Map::with_capacity(4);
        voucher.insert("voucher".into(), Value::Object(signed));
        voucher.insert("signer".into(), self.signer.to_base58().into());
        voucher.insert("signature".into(), signature.clone().into());
        voucher.insert("signatureType".into(), "ed25519".into());
        let mut payload = Map::with_capacity(3);
        payload.insert("action".into(), (if self.close { "close" } else { "voucher" }).into());
        payload.insert("channelId".into(), channel.into());
        payload.insert("voucher".into(), Value::Object(voucher));
        let challenge = std::borrow::Cow::Borrowed(&self.challenge);
        Ok(Credential::new(challenge, None, Value::Object(payload))?.to_value())
    }
}
