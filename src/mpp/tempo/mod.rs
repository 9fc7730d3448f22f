//! MPP's Tempo charge (the reference's `bindings/mpp_charge_tempo.py`): on the `tempo` method, the payer's 0x76
//! transaction whose `transferWithMemo` carries the attribution memo of the challenge ([`crate::mpp::attribution_memo`],
//! whose nonce is keccak-256 of the challenge id, which carries H). `mpp/charge/tempo/memo` ([`memo`]) answers the
//! signed transaction, which the seller's server broadcasts; `mpp/charge/tempo/push` ([`push`]) the same calls,
//! which the signer broadcasts, H read from the landed receipt's `TransferWithMemo` log. `mpp/subscription/tempo`
//! ([`subscription`]) answers a key authorization whose witness is H, signed by the payer's root key.
//!
//! The filter of `charge` on `tempo` is written here, beside its build, on the Tempo rail ([`crate::rail::tempo`]).
//! The session `mpp/session/tempo` ([`session`]) opens a channel on a Tempo session escrow with a signed transaction
//! whose `open` call is salted with H, and pays within it by vouchers.

pub(crate) mod memo;
pub(crate) mod push;
pub(crate) mod session;
mod session_channel;
pub(crate) mod subscription;

use alloy_primitives::{Address, B256, U256};
use serde_json::Value;

use super::challenge::{Method, Parts};
use super::values::{decimal_of, has, is_address, positive_int};
use crate::json::{Member, Object};
use crate::mpp::network::TEMPO_DEFAULT_CHAIN;
use crate::rail::tempo::tip20::{MAX_SPLITS, Split};
use crate::refusal::{Reason, Refusal};

/// The Tempo charge: `charge` on `tempo`.
pub(crate) static TEMPO_CHARGE: Method = Method { intent: "charge", method: "tempo", offers: tempo_charge };

fn refuse(reason: Reason) -> Result<Vec<&'static str>, Refusal> {
    Err(Refusal::mpp(reason))
}

/// `charge` on `tempo`: `currency` and `recipient` addresses, `amount` a decimal below 2^256, and `chainId` a
/// positive safe integer where present (`mpp/request-malformed`); an amount of zero offers nothing; a `memo` of the
/// seller's is `mpp/carrier-taken`; `supportedModes` (absent: both) a list of `pull` and `push`
/// (`mpp/request-malformed`), `feePayer: true` leaving out push, nothing left `mpp/modes-pull-only`; then the
/// [`splits`], whose sum must leave the primary recipient something (`mpp/input-malformed`).
fn tempo_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let amount = decimal_of(r.member("amount"));
    let Some(amount) = amount.filter(|_| is_address(r.member("currency")) && is_address(r.member("recipient"))) else {
        return refuse(Reason::RequestMalformed);
    };
    if has(d, "chainId") && positive_int(d.member("chainId")).is_none() {
        return refuse(Reason::RequestMalformed);
    }
    if amount.is_zero() {
        return Ok(Vec::new());
    }
    if has(d, "memo") {
        return refuse(Reason::CarrierTaken);
    }
    let (mut pull, mut push) = (true, true);
    if has(d, "supportedModes") {
        let Some(modes) = d.member("supportedModes").and_then(Value::as_array) else {
            return refuse(Reason::RequestMalformed);
        };
        if !modes.iter().all(|m| matches!(m.as_str(), Some("pull" | "push"))) {
            return refuse(Reason::RequestMalformed);
        }
        pull = modes.iter().any(|m| m.as_str() == Some("pull"));
        push = modes.iter().any(|m| m.as_str() == Some("push"));
    }
    if d.member("feePayer") == Some(&Value::Bool(true)) {
        push = false;
    }
    let mut out = Vec::with_capacity(2);
    if pull {
        out.push(memo::MEMO);
    }
    if push {
        out.push(push::PUSH);
    }
    if out.is_empty() {
        return refuse(Reason::ModesPullOnly);
    }
    let sum = splits(d)?.iter().flatten().try_fold(U256::ZERO, |s, x| s.checked_add(x.amount));
    if sum.is_none_or(|s| amount <= s) {
        return refuse(Reason::InputMalformed);
    }
    Ok(out)
}

/// A Tempo charge's `methodDetails.splits`: absent (`None`), or 1 to 10 entries, each an address `recipient`, a
/// decimal `amount` above zero and below 2^256 and, where present, a `memo` of `0x` and 64 hex digits
/// (`mpp/splits-malformed` otherwise).
pub(crate) fn splits(d: &Object) -> Result<Option<Vec<Split>>, Refusal> {
    if !has(d, "splits") {
        return Ok(None);
    }
    let malformed = || Refusal::mpp(Reason::SplitsMalformed);
    let list = d.member("splits").and_then(Value::as_array).filter(|s| (1..=MAX_SPLITS).contains(&s.len()));
    let list = list.ok_or_else(malformed)?;
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        let s = s.as_object().ok_or_else(malformed)?;
        let recipient = address_in(s.member("recipient")).ok_or_else(malformed)?;
        let amount = decimal_of(s.member("amount")).filter(|a| !a.is_zero()).ok_or_else(malformed)?;
        let memo = match s.member("memo") {
            None if !has(s, "memo") => None,
            m => Some(bytes32_in(m).ok_or_else(malformed)?),
        };
        out.push(Split { recipient, amount, memo });
    }
    Ok(Some(out))
}

/// An address of a request (`0x` and 40 hex digits, either case).
pub(crate) fn address_in(value: Option<&Value>) -> Option<Address> {
    let text = value?.as_str()?;
    if !super::values::is_address_str(text) {
        return None;
    }
    text.parse().ok()
}

/// `0x` and 64 hex digits, either case.
fn bytes32_in(value: Option<&Value>) -> Option<B256> {
    let digits = value?.as_str()?.strip_prefix("0x")?;
    if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    digits.parse().ok()
}

/// The chain a Tempo charge pays on: `chainId` (the filter has read it as a positive safe integer where present), or
/// Tempo's default.
pub(crate) fn chain_of(details: &Object) -> u64 {
    positive_int(details.member("chainId")).unwrap_or(TEMPO_DEFAULT_CHAIN)
}
