//! MPP's six EVM charge pairings (the reference's `bindings/mpp_charge_evm.py` and `mpp_charge_usdc.py`): on the
//! `evm` method, an EIP-3009 authorization whose nonce is the challenge hash ([`authorization`]), a Permit2 witness
//! transfer whose witness carries it ([`permit2`]), and an ERC-20 transfer the signer signs or broadcasts, which carries
//! nothing of H ([`call`]: `transaction`, `hash`); on the `usdc` method, an EIP-3009 authorization whose nonce is the
//! `usdc` derivation, and a Circle Gateway burn intent whose salt is ([`usdc`]: `evm`, `gateway`); and the session
//! `mpp/session/evm` ([`session`]), an escrow channel salted with H, opened with a deposit and a first voucher and
//! paid within by later vouchers.
//!
//! Each pairing is a [`Charge`]: its [`Piece`] (the MPP core's choose, hold and quote), and its own build and bound,
//! on the EVM rail ([`crate::rail::evm`]).

pub(crate) mod authorization;
pub(crate) mod call;
pub(crate) mod permit2;
pub(crate) mod session;
mod session_channel;
pub(crate) mod usdc;

use std::fmt;

use alloy_primitives::B256;
use serde_json::{Map, Value};

use super::credential::{Echoed, did_pkh, did_pkh_address};
use super::pieces::{Held, OneAnswer, Piece};
use crate::codec::to_hex;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Pairing, Quote, Unsigned};
use crate::rail::evm::eip3009::{self, Eip3009Token, eip3009_message};
use crate::rail::evm::transaction::transaction_hash;
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// The most bytes of a signature an answer may hold (the reference's `MAX_SIGNATURE`).
const MAX_SIGNATURE: usize = 8192;

/// A pairing's build: the unsigned payment for the choice, with H.
type Build = for<'a> fn(&Piece, &'a Chosen, &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal>;
/// A pairing's bound: H read back from a credential.
type Bound = fn(&Piece, &dyn Member) -> Result<AtrHash, Refusal>;
/// A pairing's quote, from the choice as its build holds it.
type QuoteOf = fn(&Held<'_>) -> Result<Quote, Refusal>;

/// One EVM charge pairing: its piece, whether its payment is a public proof of H, and its build, bound and quote.
pub(crate) struct Charge {
    piece: Piece,
    public_proof: bool,
    build: Build,
    bound: Bound,
    quote: QuoteOf,
}

impl Charge {
    const fn new(piece: Piece, public_proof: bool, build: Build, bound: Bound) -> Self {
        Self { piece, public_proof, build, bound, quote: held_quote }
    }

    const fn with_quote(mut self, quote: QuoteOf) -> Self {
        self.quote = quote;
        self
    }
}

fn held_quote(held: &Held<'_>) -> Result<Quote, Refusal> {
    held.quote()
}

impl fmt::Debug for Charge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Charge").field("pairing", &self.piece.pairing).finish_non_exhaustive()
    }
}

impl Pairing for Charge {
    fn id(&self) -> &'static str {
        self.piece.pairing
    }

    fn public_proof(&self) -> bool {
        self.public_proof
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        self.piece.choose(read, ctx)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        self.piece.inputs
    }

    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        (self.quote)(&self.piece.held(chosen)?)
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        (self.build)(&self.piece, chosen, h)
    }

    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        (self.bound)(&self.piece, presented)
    }

    /// A request the signer broadcasts (`mpp/charge/evm/hash`) moves the money before the gate reads the answer.
    fn moves(&self, first: &SigningRequest) -> bool {
        first.broadcasts()
    }
}

/// A string member of a decoded request or details map, empty when absent.
fn text<'a>(map: &'a Object, key: &str) -> &'a str {
    map.member(key).and_then(Value::as_str).unwrap_or_default()
}

/// The chain a charge pays on: a positive safe integer `chainId` of `details` (the filter has checked it).
fn chain_of(details: &Object) -> Result<u64, Refusal> {
    super::values::positive_int(details.member("chainId")).ok_or(Refusal::mpp(Reason::RequestMalformed))
}

/// `expires` as the Unix seconds a signature's deadline takes (`mpp/expires-required` without one).
fn deadline_of(held: &Held<'_>) -> Result<u64, Refusal> {
    u64::try_from(held.checked.expires_required()?).map_err(|_| Refusal::mpp(Reason::ExpiresRequired))
}

/// The buyer's `tokenDomain`: an object with a non-empty string `name` and `version` (`mpp/input-malformed`).
fn token_domain<'a>(held: &'a Held<'_>) -> Result<(&'a str, &'a str), Refusal> {
    let td = held.input("tokenDomain").and_then(Value::as_object);
    let field = |k: &str| td.and_then(|t| t.member(k)).and_then(Value::as_str).filter(|s| !s.is_empty());
    match (field("name"), field("version")) {
        (Some(name), Some(version)) => Ok((name, version)),
        _ => Err(Refusal::mpp(Reason::InputMalformed)),
    }
}

/// `0x` and an even number of hex digits, of 1 to [`MAX_SIGNATURE`] bytes (the reference's `is_hex_bytes`).
fn is_signature(value: &str) -> bool {
    value.strip_prefix("0x").is_some_and(|d| {
        !d.is_empty() && d.len() % 2 == 0 && d.len() <= 2 * MAX_SIGNATURE && d.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// A 32-byte value of a payload, `0x` and 64 hex digits in either case (the reference's `normal_hash`).
fn hash_in(value: Option<&Value>) -> Option<B256> {
    transaction_hash(value?.as_str()?)
}

/// The payload's `type` must be `kind` (`mpp/credential-type`).
fn of_type(e: &Echoed<'_>, kind: &str) -> Result<(), Refusal> {
    if e.payload.member("type").and_then(Value::as_str) == Some(kind) {
        Ok(())
    } else {
        Err(Refusal::mpp(Reason::CredentialType))
    }
}

/// Ours, not the reference's: a `did:pkh` source names the challenge's chain (`mpp/chain-mismatch`). A source of
/// another form is left to the seller, as the reference leaves every source.
fn source_on(e: &Echoed<'_>, chain: u64) -> Result<(), Refusal> {
    match e.source.and_then(did_pkh_address) {
        Some((c, _)) if c != chain => Err(Refusal::mpp(Reason::ChainMismatch)),
        _ => Ok(()),
    }
}

/// The EIP-3009 build of the `evm` method's authorization and the `usdc` method's EVM profile: the request's
/// `amount` of its `currency` from the payer to its `recipient`, valid from 0 until `expires`, under `nonce`, signed
/// under the buyer's token domain on `chain`; the credential's payload `{type: "authorization", from, to, value (as
/// written), validAfter, validBefore, nonce, signature}` and its source the payer's `did:pkh` on `chain`.
fn eip3009_charge<'a>(held: Held<'a>, chain: u64, nonce: &B256) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let (name, version) = token_domain(&held)?;
    let r = held.checked.request();
    let (currency, recipient, amount) = (text(r, "currency"), text(r, "recipient"), text(r, "amount"));
    let from = held.payer().unwrap_or_default();
    let valid_before = deadline_of(&held)?;
    let token = Eip3009Token { name, version, chain_id: chain, address: currency };
    let typed_data = eip3009::transfer_authorization(token, from, recipient, amount, valid_before, nonce)?;
    let mut payload = Map::with_capacity(8);
    payload.insert("type".into(), "authorization".into());
    payload.extend(eip3009_message(
        from,
        recipient,
        amount.to_owned(),
        valid_before.to_string(),
        to_hex(nonce.as_slice()),
    ));
    let source = did_pkh(chain, from);
    Ok(Box::new(OneAnswer::new(SigningRequest::Eip712 { typed_data }, held.echo, Some(source), move |signature| {
        if !is_signature(signature) {
            return Err(Refusal::mpp(Reason::CredentialMalformed));
        }
        let mut payload = payload.clone();
        payload.insert("signature".into(), signature.into());
        Ok(Value::Object(payload))
    })))
}

/// The signed nonce of an EIP-3009 credential: the payload of type `authorization` (`mpp/credential-type`), its
/// source on the chain, and its `nonce` 32 bytes of hex (`mpp/credential-malformed`).
fn signed_nonce(e: &Echoed<'_>, chain: u64) -> Result<B256, Refusal> {
    of_type(e, "authorization")?;
    let nonce = hash_in(e.payload.member("nonce")).ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
    source_on(e, chain)?;
    Ok(nonce)
}
