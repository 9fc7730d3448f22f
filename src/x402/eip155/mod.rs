//! The x402 pairings on EIP-155 chains. H rides in a field the payer signs: the EIP-3009 nonce, the Permit2 nonce,
//! a delegation salt, an escrow salt (to which the signed nonce commits) or a channel salt; at ERC-7710's unsigned
//! level it rides nowhere the payer signs, and Cloudflare's batch settlement signs nothing: for those two the agreement
//! payment is the proof. The shared EVM pieces are [`permit2`], [`escrow`] and [`delegation`]; [`family`] holds what
//! the x402 pairings beside EIP-3009 share.

pub mod auth_capture_eip3009;
pub mod auth_capture_permit2;
pub mod batch_settlement;
pub mod cloudflare;
pub mod delegation;
pub mod eip3009;
pub mod erc7710;
pub mod erc7710_salt;
pub mod escrow;
pub mod exact_permit2;
pub mod family;
pub mod permit2;
pub mod upto_permit2;

use alloy_primitives::{Address, B256, U256};
use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::json::Member;
use crate::signer::{TypedData, TypedField};

/// Whether the value is `0x` and 40 hex digits in either case.
pub fn is_address(value: &Value) -> bool {
    value.as_str().is_some_and(is_address_text)
}

/// Whether the text is `0x` and 40 hex digits in either case.
pub fn is_address_text(text: &str) -> bool {
    text.strip_prefix("0x").is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The EIP-712 values of typed data, computed from a `sol!` static struct definition (not from the JSON types), to
/// cross-check what a wallet hashes from the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eip712Parts {
    /// keccak256 of the encoded type.
    pub type_hash: B256,
    /// The domain separator.
    pub domain_separator: B256,
    /// hashStruct(message).
    pub struct_hash: B256,
    /// The signing hash.
    pub digest: B256,
}

impl Eip712Parts {
    /// The parts of a static struct under a domain.
    pub(crate) fn of<S: alloy_sol_types::SolStruct>(message: &S, domain: &alloy_sol_types::Eip712Domain) -> Self {
        Self {
            type_hash: message.eip712_type_hash(),
            domain_separator: domain.separator(),
            struct_hash: message.eip712_hash_struct(),
            digest: message.eip712_signing_hash(domain),
        }
    }
}

/// A `json!` object literal as a map. Called only on object literals, so the empty map is never returned.
pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// An EIP-712 `types` member from static struct definitions, in order.
pub(crate) fn types(entries: &[(&str, &[(&'static str, &'static str)])]) -> IndexMap<String, Vec<TypedField>> {
    entries
        .iter()
        .map(|(name, fields)| ((*name).to_owned(), fields.iter().map(|(n, t)| TypedField::new(*n, *t)).collect()))
        .collect()
}

/// The `EIP712Domain` of a domain with a name, a version, a chain id and a verifying contract: every EIP-3009 token's
/// and the batch-settlement channel contract's.
pub(crate) const EIP712_DOMAIN: &[(&str, &str)] =
    &[("name", "string"), ("version", "string"), ("chainId", "uint256"), ("verifyingContract", "address")];

/// The members of both EIP-3009 authorizations, `TransferWithAuthorization` and `ReceiveWithAuthorization`.
const EIP3009_AUTHORIZATION: &[(&str, &str)] = &[
    ("from", "address"),
    ("to", "address"),
    ("value", "uint256"),
    ("validAfter", "uint256"),
    ("validBefore", "uint256"),
    ("nonce", "bytes32"),
];

/// An EIP-3009 authorization's members in the order wallets and payloads write them, valid from 0: `value` as the
/// uint256 decimal in typed data, or as the option wrote it in a payload.
pub(crate) fn eip3009_message(
    from: &str,
    to: &str,
    value: String,
    valid_before: String,
    nonce: String,
) -> Map<String, Value> {
    let mut m = Map::with_capacity(6);
    m.insert("from".into(), from.into());
    m.insert("to".into(), to.into());
    m.insert("value".into(), value.into());
    m.insert("validAfter".into(), "0".into());
    m.insert("validBefore".into(), valid_before.into());
    m.insert("nonce".into(), nonce.into());
    m
}

/// The token an EIP-3009 authorization is signed for: its EIP-712 domain.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Eip3009Token<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
    pub(crate) chain_id: u64,
    pub(crate) address: &'a str,
}

/// The typed data of an EIP-3009 authorization (`primary_type` `TransferWithAuthorization` or
/// `ReceiveWithAuthorization`) of [`eip3009_message`] under its token's domain. [`Eip3009Values`] reads it back.
pub(crate) fn eip3009_typed_data(
    primary_type: &'static str,
    token: Eip3009Token<'_>,
    message: Map<String, Value>,
) -> TypedData {
    let mut domain = Map::with_capacity(4);
    domain.insert("name".into(), token.name.into());
    domain.insert("version".into(), token.version.into());
    domain.insert("chainId".into(), token.chain_id.into());
    domain.insert("verifyingContract".into(), token.address.into());
    TypedData {
        domain,
        types: types(&[("EIP712Domain", EIP712_DOMAIN), (primary_type, EIP3009_AUTHORIZATION)]),
        primary_type: primary_type.into(),
        message,
    }
}

/// A member that is an address.
pub(crate) fn address_in(value: Option<&Value>) -> Option<Address> {
    value?.as_str()?.parse().ok()
}

/// A member that is a decimal uint256 string.
pub(crate) fn decimal_in(value: Option<&Value>) -> Option<U256> {
    U256::from_str_radix(value?.as_str()?, 10).ok()
}

/// The values of an EIP-3009 authorization (`TransferWithAuthorization` or `ReceiveWithAuthorization`, which share
/// their members) and its token's domain, read back from typed data as the wallet is handed it.
pub(crate) struct Eip3009Values {
    pub(crate) domain: alloy_sol_types::Eip712Domain,
    pub(crate) from: Address,
    pub(crate) to: Address,
    pub(crate) value: U256,
    pub(crate) valid_after: U256,
    pub(crate) valid_before: U256,
    pub(crate) nonce: B256,
}

impl Eip3009Values {
    /// The values, when the typed data names every one in the form built here.
    pub(crate) fn of(typed: &TypedData) -> Option<Self> {
        let d = &typed.domain;
        let m = &typed.message;
        let domain = alloy_sol_types::Eip712Domain::new(
            Some(d.member("name")?.as_str()?.to_owned().into()),
            Some(d.member("version")?.as_str()?.to_owned().into()),
            Some(U256::from(d.member("chainId")?.as_u64()?)),
            Some(address_in(d.member("verifyingContract"))?),
            None,
        );
        Some(Self {
            domain,
            from: address_in(m.member("from"))?,
            to: address_in(m.member("to"))?,
            value: decimal_in(m.member("value"))?,
            valid_after: decimal_in(m.member("validAfter"))?,
            valid_before: decimal_in(m.member("validBefore"))?,
            nonce: m.member("nonce")?.as_str()?.parse::<B256>().ok()?,
        })
    }
}

/// The chain id of an `eip155:<decimal>` network (no leading zero, at most 2^53 − 1).
pub fn chain_id_of(network: &Value) -> Option<u64> {
    let digits = network.as_str()?.strip_prefix("eip155:")?;
    let b = digits.as_bytes();
    if b.is_empty() || b.len() > 16 || b.first() == Some(&b'0') || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.parse::<u64>().ok().filter(|n| *n <= crate::json::MAX_SAFE_INTEGER as u64)
}

/// A string of at most 78 decimal digits below 2^256.
pub fn uint256_of(value: &Value) -> Option<U256> {
    let s = value.as_str()?;
    if s.is_empty() || s.len() > 78 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    U256::from_str_radix(s, 10).ok()
}
