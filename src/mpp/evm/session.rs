//! `mpp/session/evm` (draft-evm-session-00, MPP's `session` on `evm`): a payment channel on the session escrow whose
//! salt is H. The opening is signed in two steps: the funding of the deposit (the `approve` and `open` calls the
//! signer broadcasts, an EIP-3009 `ReceiveWithAuthorization` whose nonce commits to the channel and its salt, or a
//! Permit2 witness transfer whose witness carries the salt), then the first voucher, of cumulative amount 0, over the
//! channel id that commits to H. Every later payment in the channel is a voucher built from the hold
//! ([`Channel`](crate::pairing::Channel), in `session_channel.rs`), so one comparison of the ATR, at the opening,
//! covers the whole channel.
//!
//! The chain's facts are the rail's (`crate::rail::evm::session`); this file reads the challenge and the buyer's
//! inputs, builds the two requests and the credential, and reads H back from an opening.
//!
//! Where the crate differs from the reference (integraledger-terms 0.4.0), each by choice:
//! - the requests' EIP-712 messages write their integers as decimal strings (the reference hands JSON integers, which
//!   a JSON reader holds as doubles past 2^53: a Permit2 nonce is a uint256), and the voucher's `types` list
//!   `EIP712Domain` (the reference's leaves it out); the EIP-712 digests, and so the signatures and the credentials,
//!   are the same;
//! - a `did:pkh` source naming another chain than the challenge's is refused ([`with_opening`]); the reference reads
//!   no chain from it.

use std::borrow::Cow;

use ruint::aliases::{U256, U512};
use serde_json::{Map, Value};

use crate::decimal;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::credential::{Credential, did_pkh, did_pkh_address, echoed_for};
use crate::mpp::methods::EVM_SESSION;
use crate::mpp::pieces::{Held, Piece};
use crate::mpp::session_within::{MAX_SIGNATURE, SHORTEST_SIGNATURE, is_hex_bytes};
use crate::pairing::{
    Advertised, Channel, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::evm::session::{
    Call, EvmAddress, Funded, Funding, Opened, SessionChannel, SessionTerms, TokenDomain, bound_opening,
    voucher_typed_data,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/session/evm";
/// The pairing.
pub(crate) static PAIRING: SessionEvm = SessionEvm;

/// The intent a quote names.
pub(crate) const INTENT: &str = "session";

const DEPOSIT: InputSpec = InputSpec::required(
    "deposit",
    InputType::String,
    "What the opening locks in the channel, in the token's atomic units (above 0, below 2^128).",
)
.with_format(InputFormat::Decimal);
pub(crate) const AUTHORIZED_SIGNER: InputSpec = InputSpec::optional(
    "authorizedSigner",
    InputType::String,
    "The address whose key signs the channel's vouchers; absent: the payer's.",
)
.with_format(InputFormat::Hex(20));
pub(crate) const CREDENTIAL_TYPE: InputSpec = InputSpec::optional(
    "credentialType",
    InputType::String,
    "How the opening funds the deposit: hash, authorization or permit2; absent: the challenge's first.",
);
pub(crate) const TOKEN_DOMAIN: InputSpec = InputSpec::optional(
    "tokenDomain",
    InputType::Object,
    "The token's EIP-712 domain, {name, version}, which an authorization opening is signed under.",
);

/// The buyer's inputs an opening takes.
pub(crate) const INPUTS: [InputSpec; 4] = [DEPOSIT, AUTHORIZED_SIGNER, CREDENTIAL_TYPE, TOKEN_DOMAIN];

static PIECE: Piece = Piece::evm(ID, &EVM_SESSION, &INPUTS);

fn refused(reason: Reason) -> Refusal {
    Refusal::mpp(reason)
}

fn malformed() -> Refusal {
    refused(Reason::CredentialMalformed)
}

/// The pairing `mpp/session/evm`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionEvm;

/// The choice's `deposit` as the reference revives it before the build: absent is `None` (the build refuses it as
/// `mpp/input-malformed`); present, it is a decimal string of 1 to 78 digits, else `mpp/choice-malformed`.
pub(crate) fn deposit_form(chosen: &Chosen) -> Result<Option<U512>, Refusal> {
    match chosen.build_input.member(DEPOSIT.name) {
        None => Ok(None),
        Some(d) => d.as_str().and_then(decimal::parse).map(Some).ok_or(refused(Reason::ChoiceMalformed)),
    }
}

/// The choice's `authorizedSigner`: absent or `null` for the payer's own key (the zero address), else an address
/// (`mpp/input-malformed`).
pub(crate) fn authorized_signer<'h>(held: &'h Held<'_>) -> Result<EvmAddress<'h>, Refusal> {
    match held.input(AUTHORIZED_SIGNER.name) {
        None | Some(Value::Null) => Ok(EvmAddress::ZERO),
        Some(named) => EvmAddress::of(named).ok_or(refused(Reason::InputMalformed)),
    }
}

/// What an opening signs, read once from the held choice: what the quote reports and the build builds. Only H, the
/// channel's salt, is not in it.
struct OpeningChoice<'h> {
    terms: SessionTerms<'h>,
    payer: EvmAddress<'h>,
    signer: EvmAddress<'h>,
    deposit: u128,
    funding: Funding,
    /// The challenge's `expires`, Unix seconds: the authorization's `validBefore`, the Permit2 `deadline`.
    deadline: u64,
    /// The token's EIP-712 domain, for an authorization opening.
    token: Option<TokenDomain<'h>>,
}

/// The opening a held choice asks for, checked in the reference's order: the payer's address (`mpp/input-malformed`);
/// the deposit, above 0 and below 2^128 (`mpp/input-malformed`); the authorized signer, absent or `null` for the
/// payer's own key, else an address (`mpp/input-malformed`); the funding, the buyer's `credentialType` where given,
/// else the first the challenge offers, which must be offered (`mpp/credential-types`); the challenge's `expires`
/// (`mpp/expires-required`); and for an authorization the token's domain, a non-empty `name` and `version`
/// (`mpp/input-malformed`).
fn opening_choice<'h>(held: &'h Held<'_>, deposit: Option<U512>) -> Result<OpeningChoice<'h>, Refusal> {
    let input_malformed = || refused(Reason::InputMalformed);
    let payer = held.payer().and_then(EvmAddress::parse).ok_or_else(input_malformed)?;
    let deposit = deposit.and_then(|d| u128::try_from(d).ok()).filter(|d| *d > 0).ok_or_else(input_malformed)?;
    let signer = authorized_signer(held)?;
    let terms = SessionTerms::offered(held.checked.request(), held.checked.details()).map_err(refused)?;
    let asked = match held.input(CREDENTIAL_TYPE.name) {
        None | Some(Value::Null) => None,
        Some(t) => Some(t.as_str().and_then(Funding::of).ok_or(refused(Reason::CredentialTypes))?),
    };
    let funding = terms.choose(asked).map_err(refused)?;
    let deadline = u64::try_from(held.checked.expires_required()?).map_err(|_| refused(Reason::ExpiresRequired))?;
    let token = match funding {
        Funding::Authorization => {
            let domain = held.input(TOKEN_DOMAIN.name).and_then(Value::as_object);
            let text = |k: &str| domain.and_then(|d| d.member(k)).and_then(Value::as_str).filter(|s| !s.is_empty());
            match (text("name"), text("version")) {
                (Some(name), Some(version)) => Some(TokenDomain { name, version }),
                _ => return Err(input_malformed()),
            }
        }
        Funding::Hash | Funding::Permit2 => None,
    };
    Ok(OpeningChoice { terms, payer, signer, deposit, funding, deadline, token })
}

impl Pairing for SessionEvm {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    /// The first challenge offering the session on the account's chain, with the buyer's deposit and, where given,
    /// its authorized signer, credential type and token domain. A credential type other than `hash`,
    /// `authorization` or `permit2` is `mpp/input-missing`, as the reference refuses a malformed optional input.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let chosen = PIECE.choose(read, ctx)?;
        let credential_type = chosen.build_input.member(CREDENTIAL_TYPE.name);
        if credential_type.is_some_and(|t| t.as_str().and_then(Funding::of).is_none()) {
            return Err(refused(Reason::InputMissing));
        }
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &INPUTS
    }

    /// What the opening pays: its first voucher claims 0 of the request's `currency` to its `recipient`, on the
    /// challenge's chain, and the channel locks the deposit. An authorization is valid from 0 until the challenge's
    /// `expires`, a Permit2 transfer until then; a `hash` opening's calls name no time.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let deposit = deposit_form(chosen)?;
        let held = PIECE.held(chosen)?;
        let c = opening_choice(&held, deposit)?;
        let (valid_after, valid_before) = match c.funding {
            Funding::Authorization => (Some(0), Some(c.deadline)),
            Funding::Permit2 => (None, Some(c.deadline)),
            Funding::Hash => (None, None),
        };
        let quote = Quote::new(U256::ZERO, c.terms.token.text(), c.terms.payee.text(), c.terms.network(), INTENT);
        Ok(quote.with_deposit(U256::from(c.deposit)).with_window(valid_after, valid_before))
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let deposit = deposit_form(chosen)?;
        let held = PIECE.offer(chosen, h)?;
        let parts = OpeningParts::of(&opening_choice(&held, deposit)?, *h)?;
        Ok(Box::new(Opening { parts, echo: held.echo }))
    }

    /// H, once the echoed challenge offers the session and the opening reads back to it ([`with_opening`]).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        with_opening(presented, |h, _| *h)
    }

    /// A `hash` opening's first request, the calls the signer broadcasts: the money moves before the credential is
    /// read back.
    fn moves(&self, first: &SigningRequest) -> bool {
        matches!(first, SigningRequest::EvmCalls(_)) && first.broadcasts()
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// Reads an opening back to H and hands it to `f`: the echoed challenge held for the session ([`echoed_for`]: the
/// credential's shape, H from the challenge's id and opaque, the session's filter), the request's terms, and the
/// rail's read-back ([`bound_opening`]). The payer of a `hash` opening is the address of the credential's `source`,
/// `did:pkh:eip155:<chain>:<address>` on the challenge's chain; a `source` naming another chain gives no payer
/// (`mpp/source-required`), and beside any other opening it is `mpp/credential-malformed`.
pub(super) fn with_opening<R>(
    presented: &dyn Member,
    f: impl FnOnce(&AtrHash, &Opened<'_>) -> R,
) -> Result<R, Refusal> {
    let e = echoed_for(presented, ID, &EVM_SESSION)?;
    let terms = SessionTerms::offered(e.checked.request(), e.checked.details()).map_err(refused)?;
    let payload = presented.member("payload").ok_or_else(malformed)?;
    let pkh = e.source.and_then(did_pkh_address);
    let other_chain = pkh.as_ref().is_some_and(|(chain, _)| *chain != terms.chain_id);
    let source = pkh.as_ref().filter(|_| !other_chain).and_then(|(_, address)| EvmAddress::parse(address));
    let opened = bound_opening(&terms, &e.h, payload, source).map_err(refused)?;
    if other_chain {
        return Err(malformed());
    }
    Ok(f(&e.h, &opened))
}

/// A channel as the opening names it, owned: each address as written, the salt and the chain.
#[derive(Debug, Clone)]
struct OwnedChannel {
    payer: String,
    payee: String,
    token: String,
    signer: String,
    escrow: String,
    salt: AtrHash,
    chain_id: u64,
}

impl OwnedChannel {
    fn of(ch: &SessionChannel<'_>) -> Self {
        Self {
            payer: ch.payer.text().to_owned(),
            payee: ch.payee.text().to_owned(),
            token: ch.token.text().to_owned(),
            signer: ch.authorized_signer.text().to_owned(),
            escrow: ch.escrow.text().to_owned(),
            salt: ch.salt,
            chain_id: ch.chain_id,
        }
    }

    /// The channel again, its addresses read from the texts [`OwnedChannel::of`] kept (which parse).
    fn channel(&self) -> Option<SessionChannel<'_>> {
        Some(SessionChannel {
            payer: EvmAddress::parse(&self.payer)?,
            payee: EvmAddress::parse(&self.payee)?,
            token: EvmAddress::parse(&self.token)?,
            salt: self.salt,
            authorized_signer: EvmAddress::parse(&self.signer)?,
            escrow: EvmAddress::parse(&self.escrow)?,
            chain_id: self.chain_id,
        })
    }
}

/// What an opening built with H signs and writes, owned.
#[derive(Debug, Clone)]
struct OpeningParts {
    funding: Funding,
    /// Step 1: the funding.
    first: SigningRequest,
    /// Step 2: the first voucher, cumulative 0, over the channel id.
    voucher: SigningRequest,
    /// The authorization an `authorization` or `permit2` opening carries, as signed.
    authorization: Option<Map<String, Value>>,
    channel: OwnedChannel,
    /// `did:pkh:eip155:<chain>:<payer>`.
    source: String,
}

fn eip712(typed_data: crate::signer::TypedData) -> SigningRequest {
    SigningRequest::Eip712 { typed_data }
}

impl OpeningParts {
    /// The two requests of the opening of `c`'s channel salted with `h`. Step 1 by funding: `hash`, an `evm-calls`
    /// request of the token's `approve` and the escrow's `open` for the signer to broadcast; `authorization`, the
    /// EIP-3009 typed data; `permit2`, the Permit2 witness transfer's. Step 2: the voucher of cumulative amount 0.
    fn of(c: &OpeningChoice<'_>, h: AtrHash) -> Result<Self, Refusal> {
        let ch = c.terms.channel(c.payer, h, c.signer);
        let (first, authorization) = match c.funding {
            Funding::Hash => {
                let mut fields = Fields::new();
                fields.insert("chainId".into(), Value::from(c.terms.chain_id));
                let calls = ch.hash_opening_calls(c.deposit).iter().map(Call::to_json).collect();
                fields.insert("calls".into(), Value::Array(calls));
                fields.insert("broadcast".into(), Value::Bool(true));
                (SigningRequest::EvmCalls(fields), None)
            }
            Funding::Authorization => {
                let token = c.token.ok_or(refused(Reason::InputMalformed))?;
                let typed = ch.receive_typed_data(token, c.deposit, c.deadline);
                (eip712(typed), Some(ch.receive_authorization(c.deposit, c.deadline)))
            }
            Funding::Permit2 => {
                let typed = ch.permit2_typed_data(c.deposit, c.deadline, &c.terms.permit2);
                (eip712(typed), Some(ch.permit2_authorization(c.deposit, c.deadline)))
            }
        };
        let voucher = eip712(voucher_typed_data(c.terms.chain_id, &c.terms.escrow, &ch.id(), 0));
        let source = did_pkh(c.terms.chain_id, c.payer.text());
        Ok(Self { funding: c.funding, first, voucher, authorization, channel: OwnedChannel::of(&ch), source })
    }
}

/// The unsigned opening: the funding, then the first voucher, and the credential from both answers.
#[derive(Debug, Clone)]
struct Opening<'a> {
    parts: OpeningParts,
    echo: Cow<'a, Value>,
}

impl Opening<'_> {
    /// The credential for the funding's answer and the voucher's signature, as bound reads it: a `hash` opening's
    /// answer a 32-byte transaction hash, a signed opening's a signature of 1 to 8192 bytes, the voucher's signature
    /// of 1 to 8192 bytes, and the whole within MPP's bounds; `mpp/credential-malformed` otherwise.
    fn credential(&self, funded: &str, voucher: &str) -> Result<Credential<'_>, Refusal> {
        let p = &self.parts;
        let funded_ok = match p.funding {
            Funding::Hash => AtrHash::parse(funded).is_some(),
            Funding::Authorization | Funding::Permit2 => is_hex_bytes(funded, 1, MAX_SIGNATURE),
        };
        if !funded_ok || !is_hex_bytes(voucher, 1, MAX_SIGNATURE) {
            return Err(malformed());
        }
        let ch = p.channel.channel().ok_or_else(malformed)?;
        let funded = match (p.funding, &p.authorization) {
            (Funding::Hash, _) => Funded::Hash(funded),
            (funding, Some(authorization)) => {
                Funded::Signed { funding, authorization: authorization.clone(), signature: funded }
            }
            (_, None) => return Err(malformed()),
        };
        let payload = Value::Object(ch.opening_payload(funded, voucher));
        Credential::new(Cow::Borrowed(&*self.echo), Some(p.source.clone()), payload)
    }
}

impl Unsigned for Opening<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.parts.first.clone()))
    }

    /// With the funding's answer alone, the voucher to sign next, once that answer completes a credential with the
    /// shortest voucher signature (so a funding answer the credential would refuse is refused before the voucher is
    /// asked for); with both answers, the credential.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        match answers {
            [funded] => {
                self.credential(funded.as_str().ok_or_else(malformed)?, SHORTEST_SIGNATURE)?;
                Ok(Completion::Next(self.parts.voucher.clone()))
            }
            [funded, voucher] => {
                let (Some(funded), Some(voucher)) = (funded.as_str(), voucher.as_str()) else {
                    return Err(malformed());
                };
                Ok(self.credential(funded, voucher)?.completion())
            }
            _ => Err(malformed()),
        }
    }
}
