//! What MPP's sessions (`mpp/session/evm`, `mpp/session/tempo`, `mpp/session/solana`) share once a channel is held
//! (the reference's `_session_within.py`): a payment's payload read within MPP's bounds, the choice of the within
//! challenge for the hold, its legal context and the cumulative amount; and, for the EVM-chain sessions, the one
//! EIP-712 voucher request whose answer completes the within or close credential. Each session names what differs ([`SessionWithin`]): its id and method, how a
//! challenge names a channel, and how the voucher is built from the held opening.

use std::borrow::Cow;

#[cfg(feature = "evm")]
use alloy_primitives::B256;
use ruint::aliases::U512;
use serde_json::{Map, Value};

use crate::decimal;
use crate::decline::{DeclineCode, Declined};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::MAX_CREDENTIAL_BYTES;
use crate::mpp::challenge::{Method, checked_for, shape, snapshot};
use crate::mpp::credential::Credential;
use crate::mpp::legal::from_lcp_string;
use crate::mpp::pieces::on_network;
use crate::mpp::values::{B64Json, json_within};
use crate::pairing::{Batch, Quote, WithinArgs, WithinPlan};
#[cfg(feature = "evm")]
use crate::rail::evm::session::voucher_payload;
use crate::refusal::{Reason, Refusal};
#[cfg(feature = "evm")]
use crate::signer::SigningRequest;

/// The most challenges a within document is read for: MPP's cap.
const MAX_CHALLENGES: usize = crate::mpp::MAX_CHALLENGES;
/// The longest signature or signed value an answer may be: 8 KiB.
pub(crate) const MAX_SIGNATURE: usize = 8192;
/// The shortest voucher signature, one byte: an opening's first answer is measured with it, as the reference does.
pub(crate) const SHORTEST_SIGNATURE: &str = "0x00";

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// A payment's payload, once the payment is within MPP's bounds (64 KiB, 16 levels: every credential is measured
/// before it is read) and an object with an object `payload`; `mpp/credential-malformed` otherwise.
pub(crate) fn payload_of(payment: &Value) -> Result<&Value, Refusal> {
    if !json_within(payment, MAX_CREDENTIAL_BYTES) {
        return Err(malformed());
    }
    payment.as_object().and_then(|p| p.member("payload")).filter(|p| p.is_object()).ok_or_else(malformed)
}

/// `0x` and an even number of hex digits, `low` to `high` bytes: a signature or a signed value as an answer gives it.
pub(crate) fn is_hex_bytes(text: &str, low: usize, high: usize) -> bool {
    let Some(digits) = text.strip_prefix("0x") else { return false };
    digits.len() % 2 == 0
        && digits.len() <= 2 * high
        && digits.len() / 2 >= low
        && digits.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The decoded request of a session challenge on `method`, read without the opening's checks (the seller issues a
/// within challenge with its own id and the channel named): an object with a string `request`
/// (`mpp/credential-malformed`), of intent `session` and method `method` (`mpp/not-this-pairing`), whose request
/// decodes and whose `methodDetails`, where present, is an object (`mpp/request-malformed`).
pub(crate) fn session_request(challenge: Option<&Value>, method: &str) -> Result<Map<String, Value>, Refusal> {
    let c = challenge.and_then(Value::as_object).ok_or_else(malformed)?;
    let request = c.member("request").and_then(Value::as_str).ok_or_else(malformed)?;
    let text = |k: &str| c.member(k).and_then(Value::as_str);
    if text("intent") != Some("session") || text("method") != Some(method) {
        return Err(Refusal::mpp(Reason::NotThisPairing));
    }
    let request = B64Json::new(request).object().ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    if request.member("methodDetails").is_some_and(|d| !d.is_object()) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    Ok(std::sync::Arc::unwrap_or_clone(request))
}

/// What a challenge of the within document says of a channel.
pub(crate) enum Names {
    /// Not a session challenge of this pairing, or one whose channel or terms cannot be read: passed over.
    Other,
    /// A session challenge that names no channel.
    NoChannel,
    /// A session challenge naming a channel: the network and the channel id, lower-case.
    Channel(String, String),
}

/// The voucher a session builds from its held opening: the within challenge (its snapshot, already of MPP's shape),
/// the held opening, the held H, the cumulative amount, whether it closes, and the held network; the batch and its
/// quote, or the refusal.
pub(crate) type BuildWithin =
    fn(&Value, &Value, &AtrHash, U512, bool, &str) -> Result<(Box<dyn Batch>, Quote), Refusal>;

/// What one session pairing gives the shared within steps.
pub(crate) struct SessionWithin {
    /// The pairing id.
    pub(crate) id: &'static str,
    /// The intent and method of its challenges, and their filter.
    pub(crate) method: &'static Method,
    /// What a challenge of the within document says of a channel.
    pub(crate) names: fn(&Value) -> Names,
    /// The voucher from the held opening.
    pub(crate) build: BuildWithin,
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

/// The within challenge's snapshot, as the credential echoes it: of MPP's shape with a string id, and within MPP's
/// bounds as the least credential echoing it (`mpp/credential-malformed`).
pub(crate) fn within_echo(challenge: &Value) -> Result<Value, Refusal> {
    let echo = snapshot(challenge).into_owned();
    if !shape(&echo).is_some_and(|c| c.member("id").is_some_and(Value::is_string)) {
        return Err(malformed());
    }
    Credential::new(Cow::Borrowed(&echo), None, Value::Object(Map::new()))?;
    Ok(echo)
}

/// One voucher, or the close's final voucher, in the held session (the reference's `_session_within`):
/// 1. a partial refund is not built here (`pairing-not-supported`, `mpp/within-action-not-built`);
/// 2. the challenge is the first of at most 32 that either names no channel, offers the session and pays on the held
///    network, or names a channel of the session on the held network; a channel other than the held one is declined
///    `no-payable-option` (before anything is built or signed); none is `no-payable-option`, `mpp/no-payable-option`;
/// 3. a legal context the challenge's `opaque` names must be the held H (`hash-mismatch`);
/// 4. the voucher's cumulative amount is the recorded charge plus the request's `amount` (a decimal, else
///    `offer-unreadable`, `mpp/request-malformed`); the close's is the recorded charge;
/// 5. the voucher is built from the held opening (the session's [`SessionWithin::build`]; its refusal is
///    `offer-unreadable`).
pub(crate) fn plan_within(args: &WithinArgs<'_>, session: &SessionWithin) -> Result<WithinPlan, Declined> {
    let hold = args.hold;
    if args.refund.is_some_and(|r| r.amount.is_some()) {
        return Err(declined(DeclineCode::PairingNotSupported, Refusal::mpp(Reason::WithinActionNotBuilt).code()));
    }
    let close = args.refund.is_some();
    let list = args.doc.as_array().map_or(&[][..], |l| l.get(..MAX_CHALLENGES).unwrap_or(l));
    let mut chosen = None;
    for c in list.iter().filter(|c| c.is_object()) {
        match (session.names)(c) {
            Names::Other => {}
            Names::NoChannel => {
                if checked_for(c, session.id, session.method).is_ok() && on_network(c, &hold.network) {
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
    let (batch, quote) = (session.build)(challenge, &hold.opening, args.h, cumulative, close, &hold.network)
        .map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
    Ok(WithinPlan { batch, cumulative: decimal::format(cumulative), precheck: true, quote: Some(quote) })
}

/// A later voucher, or the close's final voucher, in a channel opened under H: one EIP-712 request.
#[cfg(feature = "evm")]
#[derive(Debug, Clone)]
pub(crate) struct InChannel {
    /// The one voucher request.
    pub(crate) requests: Vec<SigningRequest>,
    /// The within challenge, as the credential echoes it.
    pub(crate) challenge: Value,
    /// The held channel.
    pub(crate) channel: B256,
    /// The cumulative amount the voucher signs.
    pub(crate) cumulative: u128,
    /// Whether it is the close's final voucher.
    pub(crate) close: bool,
    /// The opening's descriptor, which a Tempo v2 voucher's credential carries after its signature.
    pub(crate) descriptor: Option<Value>,
}

#[cfg(feature = "evm")]
impl Batch for InChannel {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The credential `{challenge, payload: {action, channelId, cumulativeAmount, signature[, descriptor]}}` for the
    /// one signature, 1 to 8192 bytes of `0x` hex; `mpp/credential-malformed` for any other answer, or a credential
    /// over MPP's bounds. MPP has no payment id: `reference` is not written.
    fn complete(&self, answers: &[String], _reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(malformed()) };
        if !is_hex_bytes(signature, 1, MAX_SIGNATURE) {
            return Err(malformed());
        }
        let mut payload = voucher_payload(self.close, &self.channel, self.cumulative, signature);
        if let Some(d) = &self.descriptor {
            payload.insert("descriptor".into(), d.clone());
        }
        Ok(Credential::new(Cow::Borrowed(&self.challenge), None, Value::Object(payload))?.to_value())
    }
}
