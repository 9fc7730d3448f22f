//! The EVM values every piece of the rail reads and writes: addresses, chain ids, uint256 decimals, EIP-712 type
//! lists and the parts of an EIP-712 hash.

use alloy_primitives::{Address, B256, U256};
use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::typed_data::TypedField;

/// Whether the value is `0x` and 40 hex digits in either case.
pub(crate) fn is_address(value: &Value) -> bool {
    value.as_str().is_some_and(is_address_text)
}

/// Whether the text is `0x` and 40 hex digits in either case.
pub(crate) fn is_address_text(text: &str) -> bool {
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

/// A member that is an address.
pub(crate) fn address_in(value: Option<&Value>) -> Option<Address> {
    value?.as_str()?.parse().ok()
}

/// A member that is a decimal uint256 string.
pub(crate) fn decimal_in(value: Option<&Value>) -> Option<U256> {
    U256::from_str_radix(value?.as_str()?, 10).ok()
}

/// The chain id of an `eip155:<decimal>` network (no leading zero, at most 2^53 − 1).
pub(crate) fn chain_id_of(network: &Value) -> Option<u64> {
    let digits = network.as_str()?.strip_prefix("eip155:")?;
    let b = digits.as_bytes();
    if b.is_empty() || b.len() > 16 || b.first() == Some(&b'0') || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.parse::<u64>().ok().filter(|n| *n <= crate::json::MAX_SAFE_INTEGER as u64)
}

/// A string of at most 78 decimal digits below 2^256.
pub(crate) fn uint256_of(value: &Value) -> Option<U256> {
    let s = value.as_str()?;
    if s.is_empty() || s.len() > 78 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    U256::from_str_radix(s, 10).ok()
}
