//! EIP-3009 authorizations (`TransferWithAuthorization`, `ReceiveWithAuthorization`): the message a payer signs,
//! its typed data under the token's domain for any nonce (x402's H, the challenge hash of MPP's `evm` method, the
//! nonce of its `usdc` method), the values read back from typed data as a wallet is handed it, and its EIP-712 parts
//! from `sol!` static structs.

use alloy_primitives::{Address, B256, U256};
use serde_json::{Map, Value, json};

use super::codec::{EIP712_DOMAIN, Eip712Parts, address_in, decimal_in, is_address_text, types, uint256_of};
use super::typed_data::TypedData;
use crate::codec::to_hex;
use crate::json::{MAX_SAFE_INTEGER, Member};
use crate::refusal::{Reason, Refusal};

alloy_sol_types::sol! {
    /// EIP-3009's transfer authorization, as USDC and every EIP-3009 token define it.
    #[allow(missing_docs)]
    #[derive(Debug, PartialEq, Eq)]
    struct TransferWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }

    /// EIP-3009's receive authorization: the same members, which only the payee may submit.
    #[allow(missing_docs)]
    #[derive(Debug, PartialEq, Eq)]
    struct ReceiveWithAuthorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eip3009Token<'a> {
    /// The token's EIP-712 name, e.g. `USDC`.
    pub name: &'a str,
    /// The token's EIP-712 version, e.g. `2`.
    pub version: &'a str,
    /// The chain.
    pub chain_id: u64,
    /// The token contract: the domain's verifying contract.
    pub address: &'a str,
}

/// The typed data of a `TransferWithAuthorization` of `value` (a decimal string below 2^256) from `from` to `to`,
/// valid from 0 until `valid_before`, under `nonce`, or the rail's refusal: `evm/network-malformed` for a chain id
/// of 0 or past 2^53 − 1, `evm/amount-malformed` for a value that is not such a decimal, `evm/field-malformed` for
/// a token, payer or payee that is not `0x` and 40 hex digits. The nonce is written as `0x` and lower-case hex.
pub fn transfer_authorization(
    token: Eip3009Token<'_>,
    from: &str,
    to: &str,
    value: &str,
    valid_before: u64,
    nonce: &B256,
) -> Result<TypedData, Refusal> {
    if token.chain_id == 0 || token.chain_id > MAX_SAFE_INTEGER as u64 {
        return Err(Refusal::evm(Reason::NetworkMalformed));
    }
    let value = uint256_of(&json!(value)).ok_or(Refusal::evm(Reason::AmountMalformed))?;
    if !is_address_text(token.address) || !is_address_text(from) || !is_address_text(to) {
        return Err(Refusal::evm(Reason::FieldMalformed));
    }
    let message = eip3009_message(from, to, value.to_string(), valid_before.to_string(), to_hex(nonce.as_slice()));
    Ok(eip3009_typed_data("TransferWithAuthorization", token, message))
}

/// The EIP-712 parts of an authorization's typed data (`TransferWithAuthorization` or `ReceiveWithAuthorization`),
/// from the `sol!` static structs rather than from the JSON types; `None` for any other shape.
pub fn eip712_parts(typed: &TypedData) -> Option<Eip712Parts> {
    let v = Eip3009Values::of(typed)?;
    let (from, to, value, valid_after, valid_before, nonce) =
        (v.from, v.to, v.value, v.valid_after, v.valid_before, v.nonce);
    match typed.primary_type.as_str() {
        "TransferWithAuthorization" => Some(Eip712Parts::of(
            &TransferWithAuthorization { from, to, value, validAfter: valid_after, validBefore: valid_before, nonce },
            &v.domain,
        )),
        "ReceiveWithAuthorization" => Some(Eip712Parts::of(
            &ReceiveWithAuthorization { from, to, value, validAfter: valid_after, validBefore: valid_before, nonce },
            &v.domain,
        )),
        _ => None,
    }
}

/// The signing hash of an EIP-3009 authorization in exactly the form built here, from the `sol!` static structs:
/// the types are the two canonical ones and nothing else, the domain and the message have exactly their members, each
/// address and the nonce is `0x` hex, each amount and time decimal digits, the chain id a JSON number. Any other typed
/// data is `None` and is hashed by the general path (alloy's resolver, which parses every type string on each call).
pub(crate) fn canonical_signing_hash(typed: &TypedData) -> Option<B256> {
    use alloy_sol_types::SolStruct;
    let primary = typed.primary_type.as_str();
    let is_fields = |name: &str, want: &[(&str, &str)]| {
        typed.types.get(name).is_some_and(|fields| {
            fields.len() == want.len() && fields.iter().zip(want).all(|(f, (n, t))| f.name == *n && f.ty == *t)
        })
    };
    let hex_of = |value: Option<&Value>, len: usize| {
        value
            .and_then(Value::as_str)
            .and_then(|t| t.strip_prefix("0x"))
            .is_some_and(|h| h.len() == len && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let digits = |value: Option<&Value>| {
        value.and_then(Value::as_str).is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
    };
    let (d, m) = (&typed.domain, &typed.message);
    let canonical = matches!(primary, "TransferWithAuthorization" | "ReceiveWithAuthorization")
        && typed.types.len() == 2
        && is_fields("EIP712Domain", EIP712_DOMAIN)
        && is_fields(primary, EIP3009_AUTHORIZATION)
        && d.len() == 4
        && d.get("name").is_some_and(Value::is_string)
        && d.get("version").is_some_and(Value::is_string)
        && d.get("chainId").is_some_and(Value::is_u64)
        && hex_of(d.get("verifyingContract"), 40)
        && m.len() == 6
        && hex_of(m.get("from"), 40)
        && hex_of(m.get("to"), 40)
        && ["value", "validAfter", "validBefore"].iter().all(|k| digits(m.get(*k)))
        && hex_of(m.get("nonce"), 64);
    if !canonical {
        return None;
    }
    let v = Eip3009Values::of(typed)?;
    let (from, to, value, valid_after, valid_before, nonce) =
        (v.from, v.to, v.value, v.valid_after, v.valid_before, v.nonce);
    Some(match primary {
        "TransferWithAuthorization" => {
            TransferWithAuthorization { from, to, value, validAfter: valid_after, validBefore: valid_before, nonce }
                .eip712_signing_hash(&v.domain)
        }
        _ => ReceiveWithAuthorization { from, to, value, validAfter: valid_after, validBefore: valid_before, nonce }
            .eip712_signing_hash(&v.domain),
    })
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
