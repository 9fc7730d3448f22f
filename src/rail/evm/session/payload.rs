//! A session credential's payload, as draft-evm-session-00 writes it: what the payment does in its channel (its
//! `action`), the channel it names (`channelId`), the amount its voucher signs (`cumulativeAmount`), and the
//! opening's read-back of H: the salt is H, and the channel id, with the opening's nonce or witness, commits to it.

use alloy_primitives::{B256, U256};
use serde_json::{Map, Value};

use super::channel::{EvmAddress, SessionChannel};
use super::landed::{OpenCall, TransferIdentity, TransferLog};
use super::terms::{Funding, SessionTerms};
use crate::decimal;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::rail::evm::uint256_of;
use crate::refusal::Reason;

/// What a session payment does in its channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    /// `open`, or a `voucher` carrying an opening `deposit`: opens the channel.
    Open,
    /// A `voucher`, or a `topUp`: a later payment in the channel.
    Within,
    /// `close`: the final voucher.
    Close,
}

fn object_of(payload: &Value) -> Result<&Map<String, Value>, Reason> {
    payload.as_object().ok_or(Reason::CredentialMalformed)
}

/// The opening deposit a voucher carries, where it carries one: its `deposit`, an object whose action is `open`.
fn deposit_opening(payload: &Map<String, Value>) -> Option<&Map<String, Value>> {
    payload.member("deposit").and_then(Value::as_object).filter(|d| d.member("action") == Some(&"open".into()))
}

/// What the payment does: `open` opens; a `voucher` opens when its `deposit` is an object whose action is `open`,
/// and is a later payment otherwise; `topUp` is a later payment; `close` closes. A payload that is not an object is
/// [`Reason::CredentialMalformed`]; any other action (`settle` among them) is [`Reason::SessionAction`].
pub fn kind_of(payload: &Value) -> Result<SessionKind, Reason> {
    let p = object_of(payload)?;
    match p.member("action").and_then(Value::as_str) {
        Some("open") => Ok(SessionKind::Open),
        Some("voucher") if deposit_opening(p).is_some() => Ok(SessionKind::Open),
        Some("voucher" | "topUp") => Ok(SessionKind::Within),
        Some("close") => Ok(SessionKind::Close),
        _ => Err(Reason::SessionAction),
    }
}

/// The channel the payment names, its `channelId` (written `0x` and lower-case hex by `B256`'s `Display`); one that is
/// not `0x` and 64 hex digits is [`Reason::CredentialMalformed`].
pub fn channel_of(payload: &Value) -> Result<B256, Reason> {
    let named = payload.member("channelId").and_then(Value::as_str).and_then(AtrHash::parse);
    named.map(|h| B256::from(*h.as_bytes())).ok_or(Reason::CredentialMalformed)
}

/// The cumulative amount the payment's voucher signs, `cumulativeAmount`, where it is a decimal of up to 78 digits;
/// else `"0"`. On an opening it is where a hold's signed maximum starts.
pub fn signed_max(payload: &Value) -> &str {
    payload.member("cumulativeAmount").and_then(Value::as_str).filter(|s| decimal::is_decimal(s)).unwrap_or("0")
}

/// H as a later payment commits to it: never. A voucher signs the channel id, which the opening bound to H, and
/// carries no H of its own, so every payment is [`Reason::NotBoundWithin`], which the gate's channel steps accept.
pub fn bound_within(_payload: &Value) -> Result<AtrHash, Reason> {
    Err(Reason::NotBoundWithin)
}

/// What funded an opening, as its credential carries it.
#[derive(Debug, Clone, PartialEq)]
pub enum Funded<'s> {
    /// A `hash` opening: the hash of the transaction the payer broadcast.
    Hash(&'s str),
    /// An `authorization` or `permit2` opening: the signed authorization
    /// ([`SessionChannel::receive_authorization`], [`SessionChannel::permit2_authorization`]) and its signature.
    Signed {
        /// [`Funding::Authorization`] or [`Funding::Permit2`].
        funding: Funding,
        /// The authorization as signed.
        authorization: Map<String, Value>,
        /// Its signature.
        signature: &'s str,
    },
}

impl SessionChannel<'_> {
    /// The opening's payload, with the first voucher's signature (cumulative amount 0), its members in the
    /// reference's order: `action` `open`, `channelId`, `cumulativeAmount`, `authorizedSigner`, `salt`, `type`, then
    /// for `hash` the transaction `hash` and the voucher's `signature`, else the `authorization`, its `signature` and
    /// the `voucherSignature`. The signatures are written as given; their form is the caller's to check.
    pub fn opening_payload(&self, funded: Funded<'_>, voucher_signature: &str) -> Map<String, Value> {
        let mut p = Map::with_capacity(9);
        p.insert("action".into(), "open".into());
        p.insert("channelId".into(), self.id().to_string().into());
        p.insert("cumulativeAmount".into(), "0".into());
        p.insert("authorizedSigner".into(), self.authorized_signer.text().into());
        p.insert("salt".into(), self.salt.to_hex().into());
        match funded {
            Funded::Hash(transaction) => {
                p.insert("type".into(), Funding::Hash.as_str().into());
                p.insert("hash".into(), transaction.into());
                p.insert("signature".into(), voucher_signature.into());
            }
            Funded::Signed { funding, authorization, signature } => {
                p.insert("type".into(), funding.as_str().into());
                p.insert("authorization".into(), Value::Object(authorization));
                p.insert("signature".into(), signature.into());
                p.insert("voucherSignature".into(), voucher_signature.into());
            }
        }
        p
    }
}

/// A later payment's payload: `{action, channelId, cumulativeAmount, signature}`, the action `voucher`, or `close`
/// for the final voucher; the amount a decimal string.
pub fn voucher_payload(close: bool, channel_id: &B256, cumulative: u128, signature: &str) -> Map<String, Value> {
    let mut p = Map::with_capacity(4);
    p.insert("action".into(), if close { "close" } else { "voucher" }.into());
    p.insert("channelId".into(), channel_id.to_string().into());
    p.insert("cumulativeAmount".into(), cumulative.to_string().into());
    p.insert("signature".into(), signature.into());
    p
}

/// An opening whose salt is H and whose channel id commits to it: its funding, the channel, and the opening's members.
#[derive(Debug, Clone, PartialEq)]
pub struct Opened<'a> {
    /// How the opening funds the channel.
    pub funding: Funding,
    /// The channel it opens, salted with H.
    pub channel: SessionChannel<'a>,
    /// The channel's id, which the payload names.
    pub id: B256,
    /// The opening's members: the payload, or the voucher's opening `deposit`.
    opening: &'a Map<String, Value>,
}

impl Opened<'_> {
    /// The transaction a `hash` opening names (its `hash`), which the payer broadcast before the claim; `None` for
    /// any other opening, or a `hash` that is not `0x` and 64 hex digits.
    pub fn transaction(&self) -> Option<B256> {
        if self.funding != Funding::Hash {
            return None;
        }
        let hash = self.opening.member("hash").and_then(Value::as_str).and_then(AtrHash::parse)?;
        Some(B256::from(*hash.as_bytes()))
    }

    /// The open call a `hash` opening's transaction must be: to the escrow, salt H, giving this channel id. `None`
    /// for an opening the seller's server submits.
    pub fn open_call(&self) -> Option<OpenCall> {
        (self.funding == Funding::Hash).then(|| OpenCall {
            escrow: self.channel.escrow.bytes(),
            channel: self.id,
            h: self.channel.salt,
            chain_id: self.channel.chain_id,
        })
    }

    /// The token transfer the opening makes, as a settlement read finds it: from the payer to the escrow, and for an
    /// authorization or a Permit2 opening also of its signed amount (`authorization.value`,
    /// `authorization.permitted.amount`), which a uint256 decimal must give, else [`Reason::CredentialMalformed`]. A
    /// `hash` opening's amount is not read: the payer chose what the calls moved.
    pub fn transfer_log(&self) -> Result<TransferLog, Reason> {
        let (payer, escrow) = (self.channel.payer.bytes(), self.channel.escrow.bytes());
        let token = self.channel.token.bytes();
        let auth = self.opening.member("authorization");
        let value = match self.funding {
            Funding::Hash => {
                return Ok(TransferLog::new(token, TransferIdentity::FromTo, Some(payer), Some(escrow), None));
            }
            Funding::Authorization => auth.and_then(|a| a.member("value")),
            Funding::Permit2 => auth.and_then(|a| a.member("permitted")).and_then(|p| p.member("amount")),
        };
        let value: U256 = value.and_then(uint256_of).ok_or(Reason::CredentialMalformed)?;
        Ok(TransferLog::new(token, TransferIdentity::FromToValue, Some(payer), Some(escrow), Some(value)))
    }
}

/// Reads an opening back to H, as the seller verifies it, in the reference's order:
/// 1. the payload is an opening: `open`, or a `voucher` with an opening `deposit` ([`Reason::NotAnOpening`]);
/// 2. its `type` is `hash`, `authorization` or `permit2` ([`Reason::CredentialType`]);
/// 3. its `salt` is `0x` and 64 hex digits ([`Reason::CredentialMalformed`]), and is `h`
///    ([`Reason::SaltNotThisHash`]); `h` is the hash the challenge's id carries;
/// 4. its `authorizedSigner` is absent or `null` (the zero address: the payer signs), or an address
///    ([`Reason::CredentialMalformed`]);
/// 5. the payer: for `hash`, the address of the credential's `source` (`did:pkh:eip155:<chain>:<address>`), which the
///    caller reads and passes as `source` ([`Reason::SourceRequired`] without one); otherwise the authorization's
///    `from`, an address ([`Reason::CredentialMalformed`]);
/// 6. the payload's `channelId` is the id of the channel the terms give that payer, `h` and the signer
///    ([`Reason::ChannelNotBound`]);
/// 7. an authorization's `nonce` is [`SessionChannel::authorization_nonce`] ([`Reason::NonceNotChannel`]); a Permit2
///    transfer's `witness.salt` is `h` ([`Reason::SaltNotThisHash`]).
///
/// A voucher's opening `deposit` holds the opening's members; its `channelId` is the voucher's own.
pub fn bound_opening<'a>(
    terms: &SessionTerms<'a>,
    h: &AtrHash,
    payload: &'a Value,
    source: Option<EvmAddress<'a>>,
) -> Result<Opened<'a>, Reason> {
    let p = object_of(payload)?;
    let opening = match p.member("action").and_then(Value::as_str) {
        Some("open") => p,
        Some("voucher") => deposit_opening(p).ok_or(Reason::NotAnOpening)?,
        _ => return Err(Reason::NotAnOpening),
    };
    let funding = opening.member("type").and_then(Value::as_str).and_then(Funding::of).ok_or(Reason::CredentialType)?;
    let salt = opening.member("salt").and_then(Value::as_str).and_then(AtrHash::parse);
    if salt.ok_or(Reason::CredentialMalformed)? != *h {
        return Err(Reason::SaltNotThisHash);
    }
    let signer = match opening.member("authorizedSigner") {
        None | Some(Value::Null) => EvmAddress::ZERO,
        Some(named) => EvmAddress::of(named).ok_or(Reason::CredentialMalformed)?,
    };
    let auth = opening.member("authorization").filter(|a| a.is_object());
    let payer = match funding {
        Funding::Hash => source.ok_or(Reason::SourceRequired)?,
        _ => auth.and_then(|a| a.member("from")).and_then(EvmAddress::of).ok_or(Reason::CredentialMalformed)?,
    };
    let channel = terms.channel(payer, *h, signer);
    let id = channel.id();
    if channel_of(payload).ok() != Some(id) {
        return Err(Reason::ChannelNotBound);
    }
    match funding {
        Funding::Hash => {}
        Funding::Authorization => {
            let nonce = auth.and_then(|a| a.member("nonce")).and_then(Value::as_str).and_then(AtrHash::parse);
            if nonce.map(|n| B256::from(*n.as_bytes())) != Some(channel.authorization_nonce()) {
                return Err(Reason::NonceNotChannel);
            }
        }
        Funding::Permit2 => {
            let salt = auth.and_then(|a| a.member("witness")).and_then(|w| w.member("salt"));
            if salt.and_then(Value::as_str).and_then(AtrHash::parse) != Some(*h) {
                return Err(Reason::SaltNotThisHash);
            }
        }
    }
    Ok(Opened { funding, channel, id, opening })
}
