//! `mpp/charge/tempo/push`: the request of [`super::memo`], but the signer broadcasts the transaction and answers
//! `{hash, landed?}`: the transaction's hash, and where it has read it, the landed receipt. H is read from the
//! receipt's `TransferWithMemo` log, whose memo topic is the challenge's attribution memo, so bound needs the landed
//! read beside the payment; the payment sent is the credential `{type: "hash", hash}` without it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::memo::{CLIENT_ID, TempoCharge, charge_request};
use super::{TEMPO_CHARGE, address_in};
use crate::codec::hex_bytes;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::credential::{Credential, echoed_for};
use crate::mpp::memo::check_attribution;
use crate::mpp::pieces::Piece;
use crate::pairing::{Chosen, Completion, Unsigned};
use crate::rail::tempo::tip20::TRANSFER_WITH_MEMO_TOPIC;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// The push pairing's id.
pub(crate) const PUSH: &str = "mpp/charge/tempo/push";

/// The push pairing.
pub(crate) static PAIRING: TempoCharge =
    TempoCharge { piece: Piece::evm(PUSH, &TEMPO_CHARGE, &[CLIENT_ID]), push: true };

/// A refusal in the `tempo` namespace.
const fn tempo(reason: Reason) -> Refusal {
    Refusal::new("tempo", reason)
}

/// The memo charge's request with `broadcast: true`, completed by [`Pushed`].
pub(super) fn build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let built = charge_request(piece, chosen, h, true)?;
    Ok(Box::new(Pushed { request: built.request, echo: built.echo, source: built.source }))
}

/// The broadcast request and what its credential echoes.
#[derive(Debug)]
struct Pushed<'a> {
    request: SigningRequest,
    echo: Cow<'a, Value>,
    source: String,
}

impl Unsigned for Pushed<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The answer is an object whose `hash` is `0x` and 64 hex digits, and whose `landed`, where present, is an
    /// object of a string `transaction`, a list `logs` and a `blockNumber` of 1 to 78 decimal digits in a string
    /// (`mpp/credential-malformed` otherwise, as the reference's piece). The credential carries the hash as the
    /// signer wrote it; the landed read goes beside it, `blockNumber` without leading zeros. An answer without
    /// `landed` completes the credential, which bound then refuses (`tempo/read-first`): the gate declines with what
    /// moved.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::mpp(Reason::CredentialMalformed);
        let answer = answers.first().and_then(|a| a.as_json().as_object()).ok_or_else(malformed)?;
        let hash = answer.get("hash").and_then(Value::as_str).filter(|h| is_hash(h)).ok_or_else(malformed)?;
        let landed = match answer.get("landed") {
            None | Some(Value::Null) => None,
            Some(l) => Some(landed_read(l).ok_or_else(malformed)?),
        };
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), "hash".into());
        payload.insert("hash".into(), hash.into());
        let credential = Credential::new(Cow::Borrowed(&*self.echo), Some(self.source.clone()), payload.into())?;
        Ok(Completion::Payment { payment: Box::new(credential), landed })
    }
}

/// `0x` and 64 hex digits, either case.
fn is_hash(text: &str) -> bool {
    text.strip_prefix("0x").is_some_and(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The landed read of a signer's `landed`: `{transaction, blockNumber, logs}`, or `None` where it is not of that form.
fn landed_read(landed: &Value) -> Option<Value> {
    let l = landed.as_object()?;
    let transaction = l.get("transaction").and_then(Value::as_str)?;
    let logs = l.get("logs").filter(|v| v.is_array())?;
    let block = l.get("blockNumber").and_then(Value::as_str)?;
    if !(1..=78).contains(&block.len()) || !block.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let block = block.trim_start_matches('0');
    let mut read = Map::with_capacity(3);
    read.insert("transaction".into(), transaction.into());
    read.insert("blockNumber".into(), if block.is_empty() { "0" } else { block }.into());
    read.insert("logs".into(), logs.clone());
    Some(read.into())
}

/// H, once the credential's payload is `{type: "hash"}` (`mpp/credential-type`) and the landed read beside it (never
/// a `landed` member of the credential's own) holds a list `logs` (`tempo/read-first` otherwise) with exactly one
/// log from `currency` of four topics, the first `TransferWithMemo`'s and the fourth this challenge's attribution
/// memo (`tempo/memo-not-bound` for none, `tempo/ambiguous` for several). The log's sender, recipient and amount are
/// not compared, as in the reference.
pub(super) fn bound(presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
    let e = echoed_for(presented, PUSH, &TEMPO_CHARGE)?;
    if e.payload.member("type").and_then(Value::as_str) != Some("hash") {
        return Err(Refusal::mpp(Reason::CredentialType));
    }
    let logs = landed.and_then(Value::as_object).and_then(|l| l.get("logs")).and_then(Value::as_array);
    let logs = logs.ok_or(tempo(Reason::ReadFirst))?;
    let currency = address_in(e.checked.request().member("currency")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let (realm, id) = (e.checked.text("realm"), e.checked.text("id"));
    let found = logs
        .iter()
        .filter(|log| {
            let topics = log.get("topics").and_then(Value::as_array).filter(|t| t.len() == 4);
            let Some(topics) = topics else { return false };
            same_bytes(log.get("address"), currency.as_slice())
                && same_bytes(topics.first(), TRANSFER_WITH_MEMO_TOPIC.as_slice())
                && topics.get(3).and_then(Value::as_str).is_some_and(|m| check_attribution(m, realm, id).is_ok())
        })
        .count();
    match found {
        0 => Err(tempo(Reason::MemoNotBound)),
        1 => Ok(e.h),
        _ => Err(tempo(Reason::Ambiguous)),
    }
}

/// Whether `value` is `0x` hex of exactly `bytes`, either case.
fn same_bytes(value: Option<&Value>, bytes: &[u8]) -> bool {
    value.and_then(Value::as_str).and_then(hex_bytes).is_some_and(|b| b == bytes)
}
