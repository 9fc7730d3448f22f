//! A session request's terms, as draft-evm-session-00 writes them: the chain and the escrow (`methodDetails.chainId`,
//! `methodDetails.escrowContract`), the token and the payee (`currency`, `recipient`), the opening types the seller
//! takes (`methodDetails.credentialTypes`) and the Permit2 deployment (`methodDetails.permit2Contract`). Read from the
//! decoded request and its `methodDetails`; the request's encoding is the protocol's.

use alloy_primitives::B256;
use serde_json::{Map, Value};

use super::channel::{EvmAddress, SessionChannel};
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::rail::evm::permit2::PERMIT2;
use crate::refusal::Reason;

/// How an opening funds the channel: the credential's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Funding {
    /// `hash`: the payer broadcast the `approve` and `open` calls itself; the credential names the transaction.
    Hash,
    /// `authorization`: an EIP-3009 `ReceiveWithAuthorization` of the deposit to the escrow, whose nonce commits to
    /// the channel and its salt; the seller's server submits it.
    Authorization,
    /// `permit2`: a Permit2 witness transfer of the deposit to the escrow, whose witness carries the salt; the
    /// seller's server submits it.
    Permit2,
}

impl Funding {
    /// The type as the credential writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hash => "hash",
            Self::Authorization => "authorization",
            Self::Permit2 => "permit2",
        }
    }

    /// The type a credential's `type` names; `None` for any other text.
    pub fn of(text: &str) -> Option<Self> {
        [Self::Hash, Self::Authorization, Self::Permit2].into_iter().find(|f| f.as_str() == text)
    }

    /// Whether the payer broadcasts the opening (a `hash` opening), rather than the seller's server.
    pub const fn payer_broadcasts(self) -> bool {
        matches!(self, Self::Hash)
    }
}

/// What a session request offers a new channel: its terms, once the request is one the pairing takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionTerms<'a> {
    /// `methodDetails.chainId`.
    pub chain_id: u64,
    /// `methodDetails.escrowContract`.
    pub escrow: EvmAddress<'a>,
    /// The request's `currency`: the token.
    pub token: EvmAddress<'a>,
    /// The request's `recipient`: the payee.
    pub payee: EvmAddress<'a>,
    /// `methodDetails.permit2Contract`, else the canonical Permit2: the verifying contract of a Permit2 opening.
    pub permit2: EvmAddress<'a>,
    /// The opening types offered, in the request's order without repeats (`["hash"]` where it lists none).
    funding: Vec<Funding>,
}

/// A member that is a positive safe integer.
fn positive_int(value: Option<&Value>) -> Option<u64> {
    value.and_then(safe_int).and_then(|n| u64::try_from(n).ok()).filter(|n| *n > 0)
}

impl<'a> SessionTerms<'a> {
    /// The terms of a session request, or the reason the pairing does not take it, checked in the reference's
    /// order: a request naming a channel to resume (`methodDetails.channelId` or `sessionSnapshot`, whatever their
    /// value) opens none ([`Reason::ChannelNamed`]); the escrow is an address ([`Reason::EscrowMalformed`]); the chain
    /// id a positive safe integer ([`Reason::ChainIdRequired`]); `currency` and `recipient` addresses
    /// ([`Reason::RequestMalformed`]); `credentialTypes`, where present, a non-empty list of `hash`,
    /// `authorization` and `permit2` ([`Reason::CredentialTypes`]); and where it lists `permit2`, a present
    /// `permit2Contract` an address ([`Reason::RequestMalformed`]). `details` is the request's `methodDetails`
    /// (empty where it has none).
    pub fn offered(request: &'a Map<String, Value>, details: &'a Map<String, Value>) -> Result<Self, Reason> {
        if details.contains_key("channelId") || details.contains_key("sessionSnapshot") {
            return Err(Reason::ChannelNamed);
        }
        let escrow = details.member("escrowContract").and_then(EvmAddress::of).ok_or(Reason::EscrowMalformed)?;
        let chain_id = positive_int(details.member("chainId")).ok_or(Reason::ChainIdRequired)?;
        let address = |key: &str| request.member(key).and_then(EvmAddress::of).ok_or(Reason::RequestMalformed);
        let (token, payee) = (address("currency")?, address("recipient")?);
        let funding = match details.member("credentialTypes") {
            None => vec![Funding::Hash],
            Some(listed) => {
                let listed = listed.as_array().filter(|l| !l.is_empty()).ok_or(Reason::CredentialTypes)?;
                let mut funding = Vec::with_capacity(3);
                for item in listed {
                    let f = item.as_str().and_then(Funding::of).ok_or(Reason::CredentialTypes)?;
                    if !funding.contains(&f) {
                        funding.push(f);
                    }
                }
                funding
            }
        };
        let permit2 = match details.member("permit2Contract") {
            Some(named) if funding.contains(&Funding::Permit2) => {
                EvmAddress::of(named).ok_or(Reason::RequestMalformed)?
            }
            _ => EvmAddress::parse(PERMIT2).ok_or(Reason::RequestMalformed)?,
        };
        Ok(Self { chain_id, escrow, token, payee, permit2, funding })
    }

    /// The opening types offered, in the request's order.
    pub fn funding(&self) -> &[Funding] {
        &self.funding
    }

    /// The opening type a build uses: the buyer's `credentialType` where given, else the first offered; one the
    /// request does not offer is [`Reason::CredentialTypes`].
    pub fn choose(&self, asked: Option<Funding>) -> Result<Funding, Reason> {
        let chosen = asked.or_else(|| self.funding.first().copied()).ok_or(Reason::CredentialTypes)?;
        if self.funding.contains(&chosen) { Ok(chosen) } else { Err(Reason::CredentialTypes) }
    }

    /// The CAIP-2 network, `eip155:<chainId>`.
    pub fn network(&self) -> String {
        format!("eip155:{}", self.chain_id)
    }

    /// The channel these terms give a payer opening it under `salt` with `authorized_signer` (zero: the payer).
    pub fn channel(
        &self,
        payer: EvmAddress<'a>,
        salt: AtrHash,
        authorized_signer: EvmAddress<'a>,
    ) -> SessionChannel<'a> {
        SessionChannel {
            payer,
            payee: self.payee,
            token: self.token,
            salt,
            authorized_signer,
            escrow: self.escrow,
            chain_id: self.chain_id,
        }
    }
}

/// What every session challenge names, the opening's and each later one the seller issues in the channel: the chain
/// and the escrow, read without the opening's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionParams<'a> {
    /// `methodDetails.chainId`.
    pub chain_id: u64,
    /// `methodDetails.escrowContract`.
    pub escrow: EvmAddress<'a>,
}

impl<'a> SessionParams<'a> {
    /// The chain id, a positive safe integer ([`Reason::ChainIdRequired`]), then the escrow, an address
    /// ([`Reason::EscrowMalformed`]), of a challenge's `methodDetails` (empty where it has none).
    pub fn of(details: &'a Map<String, Value>) -> Result<Self, Reason> {
        let chain_id = positive_int(details.member("chainId")).ok_or(Reason::ChainIdRequired)?;
        let escrow = details.member("escrowContract").and_then(EvmAddress::of).ok_or(Reason::EscrowMalformed)?;
        Ok(Self { chain_id, escrow })
    }

    /// The CAIP-2 network, `eip155:<chainId>`.
    pub fn network(&self) -> String {
        format!("eip155:{}", self.chain_id)
    }
}

/// The channel a challenge names for the buyer to resume, `methodDetails.channelId`: `None` where it names none, and
/// [`Reason::RequestMalformed`] where it is not `0x` and 64 hex digits. A seller's later challenge in a channel names
/// it; the gate pays it only in the held channel.
pub fn named_channel(details: &Map<String, Value>) -> Result<Option<B256>, Reason> {
    let Some(named) = details.member("channelId") else { return Ok(None) };
    let hash = named.as_str().and_then(AtrHash::parse).ok_or(Reason::RequestMalformed)?;
    Ok(Some(B256::from(*hash.as_bytes())))
}
