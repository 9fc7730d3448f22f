//! EIP-712 typed data in the JSON form a wallet takes. Plain serde data; only [`TypedData::signing_hash`] needs the
//! `evm` feature.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One field of an EIP-712 struct type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypedField {
    /// The member name.
    pub name: Cow<'static, str>,
    /// The Solidity type, e.g. `uint256`.
    #[serde(rename = "type")]
    pub ty: Cow<'static, str>,
}

impl TypedField {
    /// A field. Static names and types (the usual case: a pairing's fixed struct) are borrowed, not copied.
    pub fn new(name: impl Into<Cow<'static, str>>, ty: impl Into<Cow<'static, str>>) -> Self {
        Self { name: name.into(), ty: ty.into() }
    }
}

/// EIP-712 typed data in the `eth_signTypedData_v4` JSON form a wallet takes: uint256 values as decimal strings
/// (a JSON number would lose precision past 2^53 in many wallets), addresses and byte strings as `0x` hex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypedData {
    /// The domain.
    pub domain: Map<String, Value>,
    /// The struct types, `EIP712Domain` first.
    pub types: IndexMap<String, Vec<TypedField>>,
    /// The primary type's name.
    #[serde(rename = "primaryType")]
    pub primary_type: String,
    /// The message.
    pub message: Map<String, Value>,
}

#[cfg(feature = "evm")]
impl TypedData {
    /// The EIP-712 signing hash `keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message))`, computed by
    /// `alloy-dyn-abi` from this JSON; `None` when the JSON does not describe typed data alloy can hash.
    pub fn signing_hash(&self) -> Option<alloy_primitives::B256> {
        // An EIP-3009 authorization in its canonical form (nearly every payment's) is hashed from alloy's static
        // structs: the general path below parses every type string again on each call (4.2 µs against 7.6 µs,
        // `cargo bench --bench gate -- EIP-712`). Anything else, or that form written otherwise, takes the general
        // path.
        super::eip3009::canonical_signing_hash(self).or_else(|| self.general_signing_hash())
    }

    /// The signing hash through alloy's resolver, for any typed data.
    fn general_signing_hash(&self) -> Option<alloy_primitives::B256> {
        // Built member by member with alloy's own parsers (the domain's deserializer, `PropertyDef::new`), which is
        // what deserializing the whole JSON does, without writing and re-reading it.
        use alloy_dyn_abi::{Eip712Types, PropertyDef, Resolver};
        let domain = alloy_sol_types::Eip712Domain::deserialize(&self.domain).ok()?;
        let mut types = Eip712Types::default();
        for (name, fields) in &self.types {
            let props = fields.iter().map(|f| PropertyDef::new(f.ty.as_ref(), f.name.as_ref()));
            types.insert(name.clone(), props.collect::<Result<Vec<_>, _>>().ok()?);
        }
        let typed = alloy_dyn_abi::TypedData {
            domain,
            resolver: Resolver::from(&types),
            primary_type: self.primary_type.clone(),
            message: Value::Object(self.message.clone()),
        };
        typed.eip712_signing_hash().ok()
    }
}

#[cfg(test)]
#[cfg(feature = "evm")]
mod tests {
    use alloy_primitives::U256;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use crate::codec::to_hex;
    use crate::rail::evm::eip3009::{Eip3009Token, canonical_signing_hash, eip3009_message, eip3009_typed_data};

    /// `0x` hex with the letters of the digits picked by `upper` in upper case (an EIP-55-like mixed case).
    fn mixed(bytes: &[u8], upper: u64) -> String {
        let hex = to_hex(bytes);
        let (prefix, digits) = hex.split_at(2);
        let digits: String = digits
            .chars()
            .enumerate()
            .map(|(i, c)| if upper >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c })
            .collect();
        format!("{prefix}{digits}")
    }

    proptest! {
        /// The static path for EIP-3009 authorizations hashes what alloy's resolver hashes from the same JSON, and
        /// typed data written in any other form (a chain id as a string, an amount as a number, a member more, an
        /// address without `0x`, the members in another order, another primary type, a type or a domain member more) is left to the resolver.
        #[test]
        fn the_static_path_hashes_what_the_resolver_hashes(
            from in any::<[u8; 20]>(), to in any::<[u8; 20]>(), contract in any::<[u8; 20]>(),
            value in any::<[u8; 32]>(), valid_before in any::<u64>(), nonce in any::<[u8; 32]>(),
            chain_id in 1u64..=9_007_199_254_740_991, name in "[ -~]{0,12}", version in "[0-9a-z.]{0,4}",
            upper in any::<u64>(), zeros in 0usize..3, receive in any::<bool>(), variant in 0usize..9,
        ) {
            let primary = if receive { "ReceiveWithAuthorization" } else { "TransferWithAuthorization" };
            let token = Eip3009Token { name: &name, version: &version, chain_id, address: &mixed(&contract, upper) };
            let value = format!("{}{}", "0".repeat(zeros), U256::from_be_bytes(value));
            let message = eip3009_message(
                &mixed(&from, upper.rotate_left(7)), &mixed(&to, !upper), value, valid_before.to_string(),
                mixed(&nonce, upper.rotate_left(13)),
            );
            let mut typed = eip3009_typed_data(primary, token, message);
            match variant {
                1 => { typed.domain.insert("chainId".into(), json!(chain_id.to_string())); }
                2 => { typed.message.insert("validAfter".into(), json!(0)); }
                3 => { typed.message.insert("memo".into(), json!("x")); }
                4 => { typed.message.insert("to".into(), Value::String(to_hex(&to)[2..].to_owned())); }
                5 => { typed.types.get_mut(primary).expect("primary type").swap(3, 4); }
                6 => { typed.primary_type = "Transfer".into(); typed.types.swap_remove(primary).map(|f| typed.types.insert("Transfer".into(), f)); }
                7 => { typed.types.insert("Extra".into(), Vec::new()); }
                8 => { typed.domain.insert("salt".into(), json!(to_hex(&nonce))); }
                _ => {}
            }
            let fast = canonical_signing_hash(&typed);
            let general = typed.general_signing_hash();
            prop_assert_eq!(fast.is_some(), variant == 0, "variant {}", variant);
            if variant == 0 {
                prop_assert_eq!(fast, general);
            }
            prop_assert_eq!(typed.signing_hash(), fast.or(general));
        }
    }
}
