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
