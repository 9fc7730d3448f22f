//! The channel side of `mpp/session/evm`: what a session payment does in its channel, the channel it names, and a
//! later voucher (or the close's final voucher) built from the hold, through the same [`Channel`] seam as x402 batch
//! settlement. A voucher signs the channel id, which the opening bound to H, and carries no H of its own, so every
//! later payment is `mpp/not-bound-within`, which the gate's channel steps accept. Every value a voucher signs but
//! its amount comes from the held opening.

use std::borrow::Cow;

use alloy_primitives::B256;
use ruint::aliases::{U256, U512};
use serde_json::{Map, Value};

use super::session::{ID, INTENT, MAX_SIGNATURE, SessionEvm, is_hex_bytes, with_opening};
use crate::decimal;
use crate::decline::{DeclineCode, Declined};
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::mpp::MAX_CREDENTIAL_BYTES;
use crate::mpp::challenge::{checked_for, shape, snapshot};
use crate::mpp::credential::{Credential, echoed_for};
use crate::mpp::legal::from_lcp_string;
use crate::mpp::methods::EVM_SESSION;
use crate::mpp::pieces::on_network;
use crate::mpp::values::{B64Json, json_within};
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, Quote, WithinArgs, WithinPlan};
use crate::rail::evm::session::voucher_typed_data;
use crate::rail::evm::session::{SessionKind, SessionParams, channel_of, kind_of, named_channel, voucher_payload};
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// The most challenges a within document is read for: MPP's cap.
const MAX_CHALLENGES: usize = crate::mpp::MAX_CHALLENGES;

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// A payment's payload, once the payment is within MPP's bounds (64 KiB, 16 levels: every credential is measured
/// before it is read) and an object with an object `payload`; `mpp/credential-malformed` otherwise.
fn payload_of(payment: &Value) -> Result<&Value, Refusal> {
    if !json_within(payment, MAX_CREDENTIAL_BYTES) {
        return Err(malformed());
    }
    payment.as_object().and_then(|p| p.member("payload")).filter(|p| p.is_object()).ok_or_else(malformed)
}

/// The chain and escrow a session challenge names, read without the opening's checks (the seller issues a within
/// challenge with its own id and the channel named): an object with a string `request` (`mpp/credential-malformed`),
/// of intent `session` and method `evm` (`mpp/not-this-pairing`), whose request decodes and whose `methodDetails`,
/// where present, is an object (`mpp/request-malformed`), then [`SessionParams::of`]'s checks. `f` reads the details.
fn with_params<R>(challenge: Option<&Value>, f: impl FnOnce(SessionParams<'_>, &Object) -> R) -> Result<R, Refusal> {
    let c = challenge.and_then(Value::as_object).ok_or_else(malformed)?;
    let request = c.member("request").and_then(Value::as_str).ok_or_else(malformed)?;
    let text = |k: &str| c.member(k).and_then(Value::as_str);
    if text("intent") != Some("session") || text("method") != Some("evm") {
        return Err(Refusal::mpp(Reason::NotThisPairing));
    }
    let request = B64Json::new(request).object().ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let empty = Map::new();
    let details = match request.member("methodDetails") {
        None => &empty,
        Some(Value::Object(d)) => d,
        Some(_) => return Err(Refusal::mpp(Reason::RequestMalformed)),
    };
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
        plan_within(args)
    }
}

/// What a challenge of the within document says of a channel.
enum Names {
    /// Not a session challenge of this pairing, or one whose channel or terms cannot be read: passed over.
    Other,
    /// A session challenge that names no channel.
    NoChannel,
    /// A session challenge naming a channel: the network and the channel id, lower-case.
    Channel(String, String),
}

fn names(c: &Value) -> Names {
    let read = with_params(Some(c), |params, details| match named_channel(details) {
        Ok(None) => Names::NoChannel,
        Ok(Some(channel)) => Names::Channel(params.network(), channel.to_string()),
        Err(_) => Names::Other,
    });
    read.unwrap_or(Names::Other)
}

fn declined(code: DeclineCode, detail: impl Into<String>) -> Declined {
    Declined::new(code, detail)
}

fn unreadable(reason: Reason) -> Declined {
    declined(DeclineCode::OfferUnreadable, Refusal::mpp(reason).code())
}

/// The hash a challenge's `opaque` names as its legal context: `None` where it has no `opaque` or no `legalContext`
/// in it; an `opaque` that is not a flat map of strings is `mpp/opaque-malformed`, a `legalContext` that is not
/// `lcp:sha256:` and a hash `mpp/legal-context-malformed`.
fn legal_context(c: &Value) -> Result<Option<AtrHash>, Declined> {
    let Some(opaque) = c.member("opaque") else { return Ok(None) };
    let map = opaque.as_str().and_then(|o| B64Json::new(o).string_map()).ok_or(unreadable(Reason::OpaqueMalformed))?;
    let Some(named) = map.member("legalContext") else { return Ok(None) };
    named.as_str().and_then(from_lcp_string).map(Some).ok_or(unreadable(Reason::LegalContextMalformed))
}

/// One voucher, or the close's final voucher, in the held session (the reference's `_session_within`):
/// 1. a partial refund is not built here (`pairing-not-supported`, `mpp/within-action-not-built`);
/// 2. the challenge is the first of at most 32 that either names no channel, offers the session and pays on the held
///    network, or names a channel of the session on the held network; a channel other than the held one is declined
///    `no-payable-option` (before anything is built or signed); none is `no-payable-option`, `mpp/no-payable-option`;
/// 3. a legal context the challenge's `opaque` names must be the held H (`hash-mismatch`);
/// 4. the voucher's cumulative amount is the recorded charge plus the request's `amount` (a decimal, else
///    `offer-unreadable`, `mpp/request-malformed`); the close's is the recorded charge;
/// 5. the voucher is built from the held opening ([`build_within`]; its refusal is `offer-unreadable`).
fn plan_within(args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
    let hold = args.hold;
    if args.refund.is_some_and(|r| r.amount.is_some()) {
        return Err(declined(DeclineCode::PairingNotSupported, Refusal::mpp(Reason::WithinActionNotBuilt).code()));
    }
    let close = args.refund.is_some();
    let list = args.doc.as_array().map_or(&[][..], |l| l.get(..MAX_CHALLENGES).unwrap_or(l));
    let mut chosen = None;
    for c in list.iter().filter(|c| c.is_object()) {
        match names(c) {
            Names::Other => {}
            Names::NoChannel => {
                if checked_for(c, ID, &EVM_SESSION).is_ok() && on_network(c, &hold.network) {
                    chosen = Some(c);
                    break;
                }
            }
            Names::Channel(network, channel) if network == hold.network => {
                if channel != hold.channel {
                    return Err(declined(
                        DeclineCode::NoPayableOption,
                        "The challenge names a channel this hold did not open.",
                    ));
                }
                chosen = Some(c);
                break;
            }
            Names::Channel(..) => {}
        }
    }
    let challenge =
        chosen.ok_or_else(|| declined(DeclineCode::NoPayableOption, Refusal::mpp(Reason::NoPayableOption).code()))?;
    if legal_context(challenge)?.is_some_and(|named| named != *args.h) {
        return Err(declined(
            DeclineCode::HashMismatch,
            "The challenge names another ATR's hash than the one this channel opened for.",
        ));
    }
    let request = challenge.member("request").and_then(Value::as_str).and_then(|r| B64Json::new(r).object());
    let amount = request
        .as_ref()
        .and_then(|r| r.member("amount"))
        .and_then(Value::as_str)
        .and_then(decimal::parse)
        .ok_or(unreadable(Reason::RequestMalformed))?;
    let charged = decimal::parse(&hold.charged)
        .ok_or_else(|| declined(DeclineCode::SignedNotBound, "The channel hold is malformed."))?;
    // Two amounts of at most 78 digits each sum below 2^512.
    let cumulative = if close { charged } else { charged.saturating_add(amount) };
    let (batch, quote) = build_within(challenge, &hold.opening, args.h, cumulative, close, &hold.network)
        .map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
    Ok(WithinPlan {
        batch: Box::new(batch),
        cumulative: decimal::format(cumulative),
        precheck: true,
        quote: Some(quote),
    })
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
) -> Result<(InChannel, Quote), Refusal> {
    let echo = snapshot(challenge).into_owned();
    if !shape(&echo).is_some_and(|c| c.member("id").is_some_and(Value::is_string)) {
        return Err(malformed());
    }
    Credential::new(Cow::Borrowed(&echo), None, Value::Object(Map::new()))?;
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
    Ok((InChannel { requests, challenge: echo, channel, cumulative, close }, quote))
}

/// A later voucher, or the close's final voucher, in a channel opened under H: one EIP-712 request.
#[derive(Debug, Clone)]
struct InChannel {
    requests: Vec<SigningRequest>,
    /// The within challenge, as the credential echoes it.
    challenge: Value,
    channel: B256,
    cumulative: u128,
    close: bool,
}

impl Batch for InChannel {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The credential `{challenge, payload: {action, channelId, cumulativeAmount, signature}}` for the one signature,
    /// 1 to 8192 bytes of `0x` hex; `mpp/credential-malformed` for any other answer, or a credential over MPP's
    /// bounds. MPP has no payment id: `reference` is not written.
    fn complete(&self, answers: &[String], _reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(malformed()) };
        if !is_hex_bytes(signature, 1, MAX_SIGNATURE) {
            return Err(malformed());
        }
        let payload = voucher_payload(self.close, &self.channel, self.cumulative, signature);
        Ok(Credential::new(Cow::Borrowed(&self.challenge), None, Value::Object(payload))?.to_value())
    }
}
