//! What the one-shot x402 pairings on EIP-155 chains beside EIP-3009 share (exact and upto over Permit2, exact over
//! ERC-7710 at both levels, auth-capture on the commerce-payments escrow): the option filter that says which pairing
//! an option names, the checks every build makes on the buyer's choice, the presented payment every bound reads, and
//! the completion of an EIP-712 payment with its signature.

use std::borrow::Cow;

use alloy_primitives::U256;
use serde_json::{Map, Value};

use crate::account::evm_account;
use crate::codec::is_hex;
use crate::hash::AtrHash;
use crate::json::{Member, js_length, safe_int};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Pairing, Quote, Unsigned};
use crate::rail::evm::escrow::{self, deployment_of};
use crate::rail::evm::{chain_id_of, is_address, uint256_of};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest, TypedData};
use crate::x402::{
    Read, Served, X402Payment, accepted_by, amount_of, check_chosen, first_on_network, is_v2, keep_document, read_with,
    timeout_seconds,
};

/// The id of the EIP-3009 exact pairing, which the filter names for the options it leaves to that pairing.
const EXACT_EIP3009: &str = "x402/exact/eip155/eip3009";

/// The fewest bytes a signature the signer answers may have.
pub(crate) const MIN_SIGNED_BYTES: usize = 65;
/// The most bytes any signature may have.
pub(crate) const MAX_SIGNATURE_BYTES: usize = 8192;
/// The longest string member a bound reads, in UTF-16 code units.
pub(crate) const MAX_MEMBER: usize = 256;
/// 2^48: the bound of a uint48 (the escrow's expiries).
pub(crate) const UINT48_LIMIT: u64 = 1 << 48;

/// The members an auth-capture option's `extra` must carry, present (even as `null`).
const AUTH_CAPTURE_REQUIRED: [&str; 8] = [
    "captureAuthorizer",
    "captureDeadline",
    "refundDeadline",
    "feeRecipient",
    "minFeeBps",
    "maxFeeBps",
    "name",
    "version",
];

/// One of the six pairings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    ExactPermit2,
    UptoPermit2,
    Erc7710,
    Erc7710Salt,
    AuthCaptureEip3009,
    AuthCapturePermit2,
}

impl Kind {
    pub(crate) const fn id(self) -> &'static str {
        match self {
            Self::ExactPermit2 => "x402/exact/eip155/permit2",
            Self::UptoPermit2 => "x402/upto/eip155/permit2",
            Self::Erc7710 => "x402/exact/eip155/erc7710",
            Self::Erc7710Salt => "x402/exact/eip155/erc7710-salt",
            Self::AuthCaptureEip3009 => "x402/auth-capture/eip155/eip3009",
            Self::AuthCapturePermit2 => "x402/auth-capture/eip155/permit2",
        }
    }

    /// The x402 scheme: the second part of the id.
    const fn scheme(self) -> &'static str {
        match self {
            Self::ExactPermit2 | Self::Erc7710 | Self::Erc7710Salt => "exact",
            Self::UptoPermit2 => "upto",
            Self::AuthCaptureEip3009 | Self::AuthCapturePermit2 => "auth-capture",
        }
    }

    /// The pairing an option names for this one: both ERC-7710 levels pay the `erc7710` option.
    const fn option_id(self) -> &'static str {
        match self {
            Self::Erc7710Salt => Self::Erc7710.id(),
            other => other.id(),
        }
    }

    const fn is_auth_capture(self) -> bool {
        matches!(self, Self::AuthCaptureEip3009 | Self::AuthCapturePermit2)
    }

    /// The time window the kind's build signs, from its deadline (now + maxTimeoutSeconds): the Permit2 witness's
    /// `validAfter` 0 and the permit's deadline; EIP-3009's `validAfter` 0 and `validBefore`; a Permit2 transfer
    /// with no witness, the deadline alone; an ERC-7710 delegation request, none.
    const fn window(self, deadline: u64) -> (Option<u64>, Option<u64>) {
        match self {
            Self::ExactPermit2 | Self::UptoPermit2 | Self::AuthCaptureEip3009 => (Some(0), Some(deadline)),
            Self::AuthCapturePermit2 => (None, Some(deadline)),
            Self::Erc7710 | Self::Erc7710Salt => (None, None),
        }
    }
}

/// What the option filter says an option names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Named {
    /// The pairing with this id.
    Pairing(&'static str),
    /// An option of a scheme these pairings carry, with what is wrong with it.
    Refused(Reason),
}

/// A member as the reference reads it: `None` when absent, `Some(Value::Null)` when present as `null`.
fn member<'a>(obj: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a Value> {
    obj.and_then(|o| o.get(key))
}

/// The option's `extra`: `Ok(None)` when absent, `Err` when present and not an object.
fn extra_of(option: &Map<String, Value>) -> Result<Option<&Map<String, Value>>, ()> {
    match option.member("extra") {
        None => Ok(None),
        Some(Value::Object(extra)) => Ok(Some(extra)),
        Some(_) => Err(()),
    }
}

fn network_chain(option: &Map<String, Value>) -> Option<u64> {
    chain_id_of(option.member("network").unwrap_or(&Value::Null))
}

fn is_address_member(option: Option<&Map<String, Value>>, key: &str) -> bool {
    member(option, key).is_some_and(is_address)
}

/// An exact or upto payment flow this pairing family carries: absent, or one of `allowed`.
fn flow_is(extra: Option<&Map<String, Value>>, allowed: [&str; 2]) -> bool {
    member(extra, "paymentFlow").is_none_or(|f| allowed.iter().any(|a| f == *a))
}

/// The EIP-3009 exact filter: that pairing's id for an option it pays.
fn eip3009_of(option: &Map<String, Value>) -> Option<Named> {
    if option.member("scheme").is_none_or(|s| s != "exact") || network_chain(option).is_none() {
        return None;
    }
    let extra = extra_of(option).ok()?;
    if member(extra, "assetTransferMethod").is_some_and(|m| m != "eip3009") {
        return None;
    }
    flow_is(extra, ["authorization", "upfront"]).then_some(Named::Pairing(EXACT_EIP3009))
}

/// A network, an asset and a payee: what every option of these schemes places.
fn places(option: &Map<String, Value>) -> bool {
    network_chain(option).is_some()
        && is_address_member(Some(option), "asset")
        && is_address_member(Some(option), "payTo")
}

/// The pairing an option names, a refusal naming what is wrong with an option of a scheme these pairings carry, or
/// `None` for any other option.
fn option_filter(option: &Map<String, Value>) -> Option<Named> {
    let extra = extra_of(option).ok()?;
    match option.member("scheme").and_then(Value::as_str) {
        Some("exact") => {
            let method = member(extra, "assetTransferMethod");
            if method.is_none_or(|m| m == "eip3009") {
                return eip3009_of(option);
            }
            if !places(option) || !flow_is(extra, ["authorization", "upfront"]) {
                return None;
            }
            match method.and_then(Value::as_str) {
                Some("permit2") => Some(Named::Pairing(Kind::ExactPermit2.id())),
                Some("erc7710") => Some(Named::Pairing(Kind::Erc7710.id())),
                _ => None,
            }
        }
        Some("upto") => {
            if !places(option) {
                return None;
            }
            if !is_address_member(extra, "facilitatorAddress") {
                return Some(Named::Refused(Reason::FacilitatorMissing));
            }
            Some(Named::Pairing(Kind::UptoPermit2.id()))
        }
        Some("auth-capture") => {
            if !places(option) {
                return None;
            }
            let Some(extra) = extra.filter(|e| AUTH_CAPTURE_REQUIRED.iter().all(|k| e.contains_key(*k))) else {
                return Some(Named::Refused(Reason::OptionMalformed));
            };
            if deployment_of(extra).is_none() {
                return Some(Named::Refused(Reason::EscrowNotCanonical));
            }
            if !flow_is(Some(extra), ["escrow", "authorization"])
                || extra.member("autoCapture") == Some(&Value::Bool(true))
            {
                return Some(Named::Refused(Reason::FlowNotCarried));
            }
            match extra.member("assetTransferMethod") {
                None => Some(Named::Pairing(Kind::AuthCaptureEip3009.id())),
                Some(m) if m == "eip3009" => Some(Named::Pairing(Kind::AuthCaptureEip3009.id())),
                Some(m) if m == "permit2" => Some(Named::Pairing(Kind::AuthCapturePermit2.id())),
                Some(_) => None,
            }
        }
        _ => None,
    }
}

fn non_empty(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

/// An option build can pay: a positive amount below 2^256 and a time bound; for auth-capture also the token's
/// EIP-712 name and version, the escrow terms, and a `maxTimeoutSeconds` below 2^48 (now plus it is the payment's
/// preApprovalExpiry, a uint48).
fn payable(kind: Kind, option: &Map<String, Value>) -> bool {
    let amount = option.member("amount").unwrap_or(&Value::Null);
    let Some(timeout) = option.member("maxTimeoutSeconds").and_then(timeout_seconds) else { return false };
    if amount_of(amount).is_none() || uint256_of(amount).is_none() {
        return false;
    }
    if !kind.is_auth_capture() {
        return true;
    }
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    non_empty(extra.member("name"))
        && non_empty(extra.member("version"))
        && timeout < UINT48_LIMIT
        && escrow::Terms::of(option).is_ok()
}

/// The option filter of a pairing, the one its read, build and bound apply: the option names the pairing, and build
/// can pay it. An option of the pairing's scheme that the filter refuses gives that refusal, one build cannot pay is
/// `x402/option-malformed`, and any other option is not this pairing's.
pub(crate) fn served(kind: Kind, option: &Map<String, Value>) -> Served {
    match option_filter(option) {
        Some(Named::Refused(reason)) if option.member("scheme").is_some_and(|s| s == kind.scheme()) => {
            Served::Refused(Refusal::x402(reason))
        }
        Some(Named::Pairing(id)) if id == kind.option_id() => {
            if payable(kind, option) {
                Served::Yes
            } else {
                Served::Refused(Refusal::x402(Reason::OptionMalformed))
            }
        }
        _ => Served::NotMine,
    }
}

/// The filter as the function the shared x402 helpers take.
pub(crate) fn filter_of(kind: Kind) -> crate::x402::Filter {
    match kind {
        Kind::ExactPermit2 => |o| served(Kind::ExactPermit2, o),
        Kind::UptoPermit2 => |o| served(Kind::UptoPermit2, o),
        Kind::Erc7710 => |o| served(Kind::Erc7710, o),
        Kind::Erc7710Salt => |o| served(Kind::Erc7710Salt, o),
        Kind::AuthCaptureEip3009 => |o| served(Kind::AuthCaptureEip3009, o),
        Kind::AuthCapturePermit2 => |o| served(Kind::AuthCapturePermit2, o),
    }
}

/// The first option, in document order, on the chain of the signer's CAIP-10 account, as the choice
/// `{required, accepted, from, now}` (the gate puts `required`, the document, in: [`DOCUMENT`]).
pub(crate) fn choose(kind: Kind, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    choose_for(kind.id(), read, ctx)
}

/// [`choose`] for the pairing `id`: every EIP-155 x402 pairing that pays one option from the signer's account.
pub(crate) fn choose_for(id: &str, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, from) = evm_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let mut choice = Map::with_capacity(4);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("from".into(), Value::String(from));
    choice.insert("now".into(), Value::from(ctx.now));
    Ok(Chosen { pairing: id.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// The choice, checked: the payer, the chain, the amount, the `now + maxTimeoutSeconds` bound, and for auth-capture
/// the escrow terms. Every build of the family and its quote read this one parse.
#[derive(Debug, Clone)]
pub(crate) struct Choice<'a> {
    pub(crate) required: &'a Map<String, Value>,
    /// The option, as the choice holds it (an object: the checks have passed).
    pub(crate) option: &'a Value,
    pub(crate) accepted: &'a Map<String, Value>,
    pub(crate) payer: &'a str,
    pub(crate) chain_id: u64,
    /// The option's amount, below 2^256.
    pub(crate) amount: U256,
    pub(crate) deadline: u64,
    /// The escrow terms of an auth-capture option (whose deadline, the payment's preApprovalExpiry, is below 2^48);
    /// `None` for the other kinds.
    pub(crate) escrow: Option<escrow::Terms>,
}

impl Choice<'_> {
    /// A member of the accepted option that the filter has checked is a string.
    pub(crate) fn text(&self, key: &str) -> &str {
        self.accepted.get(key).and_then(Value::as_str).unwrap_or_default()
    }

    /// A member of the accepted option's `extra`.
    pub(crate) fn extra(&self, key: &str) -> Option<&Value> {
        self.accepted.member("extra").and_then(Value::as_object).and_then(|e| e.get(key))
    }
}

/// The checks every build makes on the choice: its `from` and `now`, then its document and option, and for
/// auth-capture the escrow terms and an expiry below 2^48.
pub(crate) fn choice_of(kind: Kind, choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let payer = choice.member("from").filter(|f| is_address(f)).and_then(Value::as_str).ok_or_else(malformed)?;
    let now = choice.member("now").and_then(safe_int).and_then(|n| u64::try_from(n).ok()).ok_or_else(malformed)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter_of(kind))?;
    let option = choice.member("accepted").ok_or_else(malformed)?;
    let chain_id = network_chain(accepted).ok_or_else(malformed)?;
    let amount = accepted.member("amount").and_then(uint256_of).ok_or_else(malformed)?;
    let timeout = accepted.member("maxTimeoutSeconds").and_then(timeout_seconds).ok_or_else(malformed)?;
    let deadline = now.checked_add(timeout).ok_or_else(malformed)?;
    let escrow = if kind.is_auth_capture() {
        let terms = escrow::Terms::of(accepted)?;
        if deadline >= UINT48_LIMIT {
            return Err(malformed());
        }
        Some(terms)
    } else {
        None
    };
    Ok(Choice { required, option, accepted, payer, chain_id, amount, deadline, escrow })
}

/// What the buyer would pay for the choice: the option's amount of its asset to its payTo, in the window the kind's
/// build signs ([`choice_of`], the parse every build of the family reads).
pub(crate) fn quote(kind: Kind, choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(kind, choice)?;
    let (valid_after, valid_before) = kind.window(c.deadline);
    let quote = Quote::new(c.amount, c.text("asset"), c.text("payTo"), c.text("network"), kind.scheme());
    Ok(quote.with_window(valid_after, valid_before))
}

/// `0x` and an even number of hex digits, from `min_bytes` to 8 KiB.
pub(crate) fn is_signature(value: Option<&Value>, min_bytes: usize) -> bool {
    value
        .and_then(Value::as_str)
        .filter(|s| is_hex(s))
        .is_some_and(|s| (min_bytes..=MAX_SIGNATURE_BYTES).contains(&((s.len() - 2) / 2)))
}

/// Whether each named member is a string of at most 256 UTF-16 code units.
pub(crate) fn all_strings(obj: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().all(|k| obj.get(*k).and_then(Value::as_str).is_some_and(|s| js_length(s) <= MAX_MEMBER))
}

/// The object when each named member is a string of at most 256 UTF-16 code units.
pub(crate) fn strings<'a>(obj: Option<&'a Value>, keys: &[&str]) -> Option<&'a Map<String, Value>> {
    obj?.as_object().filter(|o| all_strings(o, keys))
}

/// A string member the caller has checked with [`strings`].
pub(crate) fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A Permit2 nonce as decimal digits (at most 78, below 2^256) or `0x` and 64 hex digits, as 32 big-endian bytes.
pub(crate) fn nonce_as_hash(nonce: &str) -> Option<AtrHash> {
    if let Some(h) = AtrHash::parse(nonce) {
        return Some(h);
    }
    let value = uint256_of(&Value::String(nonce.to_owned()))?;
    Some(AtrHash::from_bytes(value.to_be_bytes()))
}

/// A presented payment's members and its payload object.
pub(crate) type Presented<'a> = (&'a dyn Member, &'a Map<String, Value>);

/// A presented payment whose `accepted` the pairing's read offers, with its payload as an object.
pub(crate) fn presented_as(kind: Kind, p: &dyn Member) -> Result<Presented<'_>, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    accepted_by(p.member("accepted"), filter_of(kind))?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    Ok((p, payload))
}

/// An unsigned EIP-712 payment: the typed data the payer signs, and the payload the signature completes.
#[derive(Debug, Clone)]
pub struct Signed {
    typed_data: TypedData,
    required: Map<String, Value>,
    accepted: Value,
    payload: Map<String, Value>,
}

impl Signed {
    pub(crate) fn new(typed_data: TypedData, choice: &Choice<'_>, payload: Map<String, Value>) -> Self {
        let (required, accepted) = (choice.required.clone(), choice.option.clone());
        Self { typed_data, required, accepted, payload }
    }

    /// The typed data the payer signs.
    pub fn typed_data(&self) -> &TypedData {
        &self.typed_data
    }

    /// The payload the signature completes, without the signature.
    pub fn payload(&self) -> &Map<String, Value> {
        &self.payload
    }
}

impl Unsigned for Signed {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Eip712 { typed_data: self.typed_data.clone() }))
    }

    /// The payload with the signature first: a hex signature of 65 bytes to 8 KiB.
    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::x402(Reason::SignatureMalformed);
        let [answer] = answers else { return Err(malformed()) };
        if !is_signature(Some(answer.as_json()), MIN_SIGNED_BYTES) {
            return Err(malformed());
        }
        let mut payload = Map::new();
        payload.insert("signature".into(), answer.as_json().clone());
        payload.extend(self.payload.iter().map(|(k, v)| (k.clone(), v.clone())));
        let payment = X402Payment::for_chosen(&self.required, &self.accepted, Value::Object(payload), chosen)?;
        Ok(payment.completion())
    }
}

/// One pairing of the family: the family's read (the kind's option filter) and choice, with the kind's own build and
/// bound. Every member of the family is this one type, so what they share is written once.
pub struct FamilyPairing<U> {
    kind: Kind,
    public_proof: bool,
    build: fn(&Map<String, Value>, &AtrHash) -> Result<U, Refusal>,
    read: Read,
}

impl<U> FamilyPairing<U> {
    pub(crate) const fn new(
        kind: Kind,
        public_proof: bool,
        build: fn(&Map<String, Value>, &AtrHash) -> Result<U, Refusal>,
        read: Read,
    ) -> Self {
        Self { kind, public_proof, build, read }
    }
}

impl<U> std::fmt::Debug for FamilyPairing<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FamilyPairing").field(&self.kind.id()).finish()
    }
}

impl<U: Unsigned + 'static> Pairing for FamilyPairing<U> {
    fn id(&self) -> &'static str {
        self.kind.id()
    }

    fn public_proof(&self) -> bool {
        self.public_proof
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, filter_of(self.kind))
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        choose(self.kind, read, ctx)
    }

    /// None: the option and the signer's account are all any of the family takes.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        quote(self.kind, &chosen.build_input)
    }

    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        keep_document(chosen, doc);
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new((self.build)(&chosen.build_input, h)?))
    }

    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        (self.read)(presented)
    }
}
