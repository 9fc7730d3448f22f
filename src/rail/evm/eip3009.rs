//! EIP-3009 authorizations (`TransferWithAuthorization`, `ReceiveWithAuthorization`): the message a payer signs,
//! its typed data under the token's domain, and the values read back from typed data as a wallet is handed it.

use alloy_primitives::{Address, B256, U256};
use serde_json::{Map, Value};

use super::codec::{EIP712_DOMAIN, address_in, decimal_in, types};
use super::typed_data::TypedData;
use crate::json::Member;

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
