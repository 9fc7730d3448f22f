//! The signer seam: what the wallet is asked to sign, and what it answers.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A boxed, sendable future: the form the two seams ([`Signer`] and [`Fetch`](crate::Fetch)) return, so that both
/// can be used as trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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

/// The members of a signing request other than its kind, for the kinds whose typed form is not built yet.
pub type Fields = Map<String, Value>;

/// What the signer is handed: one variant per request kind. It serialises to the reference's JSON form,
/// `{"kind": "...", ...}`, with byte strings as `0x` lower-case hex.
///
/// The kinds whose pairings are built carry typed payloads; the others carry their members as a JSON object until
/// their family lands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum SigningRequest {
    /// EIP-712 typed data (EIP-3009, Permit2, vouchers): answer a 65-byte signature as `0x` hex.
    Eip712 {
        /// The typed data to sign.
        #[serde(rename = "typedData")]
        typed_data: TypedData,
    },
    /// An ERC-7710 delegation for the option: answer `{delegationManager, permissionContext, delegator}`.
    Erc7710(Fields),
    /// Several requests signed in order: answer a list of the answers, same length and order.
    Batch {
        /// The requests, in order.
        requests: Vec<Self>,
    },
    EvmCall(Fields),
    EvmCalls(Fields),
    GatewayBurnIntent(Fields),
    TempoCall(Fields),
    TempoCalls(Fields),
    TempoKeyAuthorization(Fields),
    SolanaMessage(Fields),
    SolanaSessionOpen(Fields),
    #[serde(rename = "ed25519-raw")]
    Ed25519Raw(Fields),
    StellarAuth(Fields),
    XrplTx(Fields),
    XrplSessionOpen(Fields),
    XrplClaim(Fields),
    HederaBody(Fields),
    HederaExecutor(Fields),
    HederaSessionOpen(Fields),
    AlgorandTxn(Fields),
    AptosTransaction(Fields),
    SuiTransaction(Fields),
    CardanoTransaction(Fields),
    NearDelegate(Fields),
    #[serde(rename = "starknet-snip12")]
    StarknetSnip12(Fields),
    SubstrateCall(Fields),
    TronTxid(Fields),
    #[serde(rename = "ton-w5")]
    TonW5(Fields),
    #[serde(rename = "casper-eip712")]
    CasperEip712(Fields),
    CcdTransfer(Fields),
    StacksContractCall(Fields),
    #[serde(rename = "bolt11-pay")]
    Bolt11Pay(Fields),
    TapField(Fields),
    ViCheckoutMandate(Fields),
    #[serde(rename = "ap2-checkout-mandate")]
    Ap2CheckoutMandate(Fields),
    UcpCheckout(Fields),
    AcpAllowance(Fields),
}

impl SigningRequest {
    /// The request's kind as the reference writes it, e.g. `eip712`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Eip712 { .. } => "eip712",
            Self::Batch { .. } => "batch",
            Self::Erc7710(_) => "erc7710",
            Self::EvmCall(_) => "evm-call",
            Self::EvmCalls(_) => "evm-calls",
            Self::GatewayBurnIntent(_) => "gateway-burn-intent",
            Self::TempoCall(_) => "tempo-call",
            Self::TempoCalls(_) => "tempo-calls",
            Self::TempoKeyAuthorization(_) => "tempo-key-authorization",
            Self::SolanaMessage(_) => "solana-message",
            Self::SolanaSessionOpen(_) => "solana-session-open",
            Self::Ed25519Raw(_) => "ed25519-raw",
            Self::StellarAuth(_) => "stellar-auth",
            Self::XrplTx(_) => "xrpl-tx",
            Self::XrplSessionOpen(_) => "xrpl-session-open",
            Self::XrplClaim(_) => "xrpl-claim",
            Self::HederaBody(_) => "hedera-body",
            Self::HederaExecutor(_) => "hedera-executor",
            Self::HederaSessionOpen(_) => "hedera-session-open",
            Self::AlgorandTxn(_) => "algorand-txn",
            Self::AptosTransaction(_) => "aptos-transaction",
            Self::SuiTransaction(_) => "sui-transaction",
            Self::CardanoTransaction(_) => "cardano-transaction",
            Self::NearDelegate(_) => "near-delegate",
            Self::StarknetSnip12(_) => "starknet-snip12",
            Self::SubstrateCall(_) => "substrate-call",
            Self::TronTxid(_) => "tron-txid",
            Self::TonW5(_) => "ton-w5",
            Self::CasperEip712(_) => "casper-eip712",
            Self::CcdTransfer(_) => "ccd-transfer",
            Self::StacksContractCall(_) => "stacks-contract-call",
            Self::Bolt11Pay(_) => "bolt11-pay",
            Self::TapField(_) => "tap-field",
            Self::ViCheckoutMandate(_) => "vi-checkout-mandate",
            Self::Ap2CheckoutMandate(_) => "ap2-checkout-mandate",
            Self::UcpCheckout(_) => "ucp-checkout",
            Self::AcpAllowance(_) => "acp-allowance",
        }
    }

    /// The members beside `kind`, for the kinds that carry them as a JSON object.
    pub fn fields(&self) -> Option<&Fields> {
        match self {
            Self::Eip712 { .. } | Self::Batch { .. } => None,
            Self::Erc7710(f) => Some(f),
            Self::EvmCall(f) => Some(f),
            Self::EvmCalls(f) => Some(f),
            Self::GatewayBurnIntent(f) => Some(f),
            Self::TempoCall(f) => Some(f),
            Self::TempoCalls(f) => Some(f),
            Self::TempoKeyAuthorization(f) => Some(f),
            Self::SolanaMessage(f) => Some(f),
            Self::SolanaSessionOpen(f) => Some(f),
            Self::Ed25519Raw(f) => Some(f),
            Self::StellarAuth(f) => Some(f),
            Self::XrplTx(f) => Some(f),
            Self::XrplSessionOpen(f) => Some(f),
            Self::XrplClaim(f) => Some(f),
            Self::HederaBody(f) => Some(f),
            Self::HederaExecutor(f) => Some(f),
            Self::HederaSessionOpen(f) => Some(f),
            Self::AlgorandTxn(f) => Some(f),
            Self::AptosTransaction(f) => Some(f),
            Self::SuiTransaction(f) => Some(f),
            Self::CardanoTransaction(f) => Some(f),
            Self::NearDelegate(f) => Some(f),
            Self::StarknetSnip12(f) => Some(f),
            Self::SubstrateCall(f) => Some(f),
            Self::TronTxid(f) => Some(f),
            Self::TonW5(f) => Some(f),
            Self::CasperEip712(f) => Some(f),
            Self::CcdTransfer(f) => Some(f),
            Self::StacksContractCall(f) => Some(f),
            Self::Bolt11Pay(f) => Some(f),
            Self::TapField(f) => Some(f),
            Self::ViCheckoutMandate(f) => Some(f),
            Self::Ap2CheckoutMandate(f) => Some(f),
            Self::UcpCheckout(f) => Some(f),
            Self::AcpAllowance(f) => Some(f),
        }
    }

    /// The request as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A zero answer of the kind's form (65 zero bytes in `0x` hex for `eip712`; 64 zero bytes in base58 for
    /// `ed25519-raw` and `solana-message`), so a build can be completed and the channel it names read before
    /// anything is signed; `None` for a kind that has no such form.
    pub fn placeholder(&self) -> Option<String> {
        match self {
            Self::Eip712 { .. } => Some(format!("0x{}", "00".repeat(65))),
            Self::Ed25519Raw(_) | Self::SolanaMessage(_) => Some("1".repeat(64)),
            _ => None,
        }
    }

    /// Whether the request tells the signer to broadcast what it signs (the signer then moves money itself).
    pub fn broadcasts(&self) -> bool {
        self.fields().and_then(|f| f.get("broadcast")) == Some(&Value::Bool(true))
    }
}

/// A signer's answer, as JSON: a signature string for most kinds, an object for kinds answered with several values,
/// a list for a `batch`. Byte strings are `0x` hex unless the kind names another form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Signature(Value);

impl Signature {
    /// The answer with this JSON.
    pub fn new(value: Value) -> Self {
        Self(value)
    }

    /// The answer's JSON.
    pub fn as_json(&self) -> &Value {
        &self.0
    }

    /// The answer as a string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_str()
    }

    /// The answer's JSON, owned.
    pub fn into_json(self) -> Value {
        self.0
    }
}

impl From<Value> for Signature {
    fn from(value: Value) -> Self {
        Self(value)
    }
}

impl From<String> for Signature {
    fn from(value: String) -> Self {
        Self(Value::String(value))
    }
}

impl From<&str> for Signature {
    fn from(value: &str) -> Self {
        Self(Value::String(value.to_owned()))
    }
}

/// The signer did not sign. The gate turns any such error into `signer-failed`; the message is the signer's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SignerError(String);

impl SignerError {
    /// An error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        Self(message.to_string())
    }
}

/// The wallet: a CAIP-10 account and a way to sign a [`SigningRequest`]. `sign` must sign exactly the request and
/// change nothing; the gate never calls it before the ATR bytes have been compared.
pub trait Signer: Send + Sync {
    /// The CAIP-10 account, e.g. `eip155:84532:0xf39F…2266`: it selects the option and is usually the payer.
    fn account(&self) -> &str;

    /// Signs the request.
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Signature, SignerError>>;
}

impl<S: Signer + ?Sized> Signer for std::sync::Arc<S> {
    fn account(&self) -> &str {
        (**self).account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Signature, SignerError>> {
        (**self).sign(request)
    }
}

impl<S: Signer + ?Sized> Signer for &S {
    fn account(&self) -> &str {
        (**self).account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Signature, SignerError>> {
        (**self).sign(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_is_the_serialised_tag() {
        let kinds = [
            "erc7710",
            "evm-call",
            "evm-calls",
            "gateway-burn-intent",
            "tempo-call",
            "tempo-calls",
            "tempo-key-authorization",
            "solana-message",
            "solana-session-open",
            "ed25519-raw",
            "stellar-auth",
            "xrpl-tx",
            "xrpl-session-open",
            "xrpl-claim",
            "hedera-body",
            "hedera-executor",
            "hedera-session-open",
            "algorand-txn",
            "aptos-transaction",
            "sui-transaction",
            "cardano-transaction",
            "near-delegate",
            "starknet-snip12",
            "substrate-call",
            "tron-txid",
            "ton-w5",
            "casper-eip712",
            "ccd-transfer",
            "stacks-contract-call",
            "bolt11-pay",
            "tap-field",
            "vi-checkout-mandate",
            "ap2-checkout-mandate",
            "ucp-checkout",
            "acp-allowance",
        ];
        for kind in kinds {
            let request: SigningRequest =
                serde_json::from_value(serde_json::json!({"kind": kind, "broadcast": true})).unwrap();
            assert_eq!(request.kind(), kind);
            assert_eq!(request.to_json()["kind"], kind);
            assert!(request.broadcasts());
        }
        let batch = SigningRequest::Batch { requests: vec![] };
        assert_eq!(batch.kind(), "batch");
        assert_eq!(batch.to_json()["kind"], "batch");
    }
}
