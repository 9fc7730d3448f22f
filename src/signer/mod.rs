//! The signer seam: what the wallet is asked to sign, and what it answers.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

// The enum and its per-kind methods are generated from the one table of kinds there.
mod kinds;

pub use self::kinds::SigningRequest;
pub use crate::rail::evm::typed_data::{TypedData, TypedField};

/// A boxed, sendable future: the form the two seams ([`Signer`] and [`Fetch`](crate::Fetch)) return, so that both
/// can be used as trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The members of a signing request other than its kind, for the kinds whose typed form is not built yet.
pub type Fields = Map<String, Value>;

impl SigningRequest {
    /// The request as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// A zero answer of the kind's form (65 zero bytes in `0x` hex for `eip712`, 64 for `solana-message` and
    /// `stellar-auth`; 64 zero bytes in base58 for `ed25519-raw`; a preimage of 64 zero hex digits for `bolt11-pay`;
    /// 64 zero bytes in hex for `xrpl-claim`; for `xrpl-tx`, the transaction signed with a zero ed25519 key, `ED` and
    /// 32 zero bytes, and 64 zero bytes of signature, in upper-case hex), so a build can be completed and the
    /// channel it names read before anything is signed; `None` for a kind that has no such form.
    pub fn placeholder(&self) -> Option<String> {
        match self {
            #[cfg(feature = "xrpl")]
            Self::XrplTx(fields) => {
                let mut tx = fields.get("txJson")?.as_object()?.clone();
                tx.insert("SigningPubKey".into(), Value::String(format!("ED{}", "00".repeat(32))));
                tx.insert("TxnSignature".into(), Value::String("00".repeat(64)));
                Some(hex::encode_upper(crate::rail::xrpl::Tx::from_json(&tx).ok()?.encode()))
            }
            Self::Eip712 { .. } => Some(format!("0x{}", "00".repeat(65))),
            Self::SolanaMessage(_) | Self::StellarAuth(_) => Some(format!("0x{}", "00".repeat(64))),
            Self::Ed25519Raw(_) => Some("1".repeat(64)),
            Self::Bolt11Pay { .. } => Some("0".repeat(64)),
            Self::XrplClaim(_) => Some("00".repeat(64)),
            _ => None,
        }
    }

    /// Whether the request tells the signer to broadcast what it signs (the signer then moves money itself).
    pub fn broadcasts(&self) -> bool {
        if let Self::EvmCall { broadcast, .. } = self {
            return *broadcast;
        }
        self.fields().and_then(|f| f.get("broadcast")) == Some(&Value::Bool(true))
    }
}

/// A signer's answer, as JSON: a signature string for most kinds, an object for kinds answered with several values,
/// a list for a `batch`. Byte strings are `0x` hex unless the kind names another form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Answer(Value);

impl Answer {
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

impl From<Value> for Answer {
    fn from(value: Value) -> Self {
        Self(value)
    }
}

impl From<String> for Answer {
    fn from(value: String) -> Self {
        Self(Value::String(value))
    }
}

impl From<&str> for Answer {
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
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>>;
}

impl<S: Signer + ?Sized> Signer for std::sync::Arc<S> {
    fn account(&self) -> &str {
        (**self).account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        (**self).sign(request)
    }
}

impl<S: Signer + ?Sized> Signer for &S {
    fn account(&self) -> &str {
        (**self).account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        (**self).sign(request)
    }
}

/// A wallet that may pay on several networks: the [`Signer`] that pays on a CAIP-2 network. A key not tied to one
/// chain (one secp256k1 key pays on every EIP-155 chain) answers a signer for each chain it is asked about; a
/// [`Signer`] of one account is a wallet through [`OneAccount`]. The client (`terms::client`) asks it for the
/// network of each option, in the offer's order, and pays with the first signer it answers.
pub trait Wallet: Send + Sync + fmt::Debug {
    /// The signer that pays on `network` (CAIP-2, e.g. `eip155:8453`); `None` where this wallet does not pay there.
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>>;

    /// The signer for an option that names no network (an MPP card or Stripe challenge); `None` by default.
    fn any(&self) -> Option<Arc<dyn Signer>> {
        None
    }
}

/// A wallet of one [`Signer`]: it pays on its account's network, and answers the options that name none.
#[derive(Clone)]
pub struct OneAccount(pub Arc<dyn Signer>);

impl fmt::Debug for OneAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OneAccount").field(&self.0.account()).finish()
    }
}

impl Wallet for OneAccount {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        (network_of(self.0.account()) == Some(network)).then(|| self.0.clone())
    }

    fn any(&self) -> Option<Arc<dyn Signer>> {
        Some(self.0.clone())
    }
}

/// The chain id of an `eip155:<chain id>` network (CAIP-2: decimal digits, no sign, no leading zero).
#[cfg(any(feature = "local-signer", feature = "alloy-signer"))]
pub(crate) fn eip155_chain(network: &str) -> Option<u64> {
    let chain = network.strip_prefix("eip155:")?;
    if chain.is_empty() || chain.starts_with('0') || !chain.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    chain.parse().ok()
}

/// The CAIP-2 network of a CAIP-10 account (`eip155:8453` of `eip155:8453:0x…`), as written.
pub fn network_of(account: &str) -> Option<&str> {
    let mut colons = account.match_indices(':');
    let (_, (second, _)) = (colons.next()?, colons.next()?);
    account.get(..second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accounts_network_is_its_first_two_parts() {
        assert_eq!(network_of("eip155:8453:0xAb"), Some("eip155:8453"));
        assert_eq!(network_of("cloudflare:402:acct:x"), Some("cloudflare:402"));
        assert_eq!(network_of("eip155:8453"), None);
        assert_eq!(network_of(""), None);
    }

    #[test]
    fn kind_is_the_serialised_tag() {
        // The kinds that carry their members as a JSON object, from the table (every kind but `eip712`, `batch`,
        // `evm-call`, `gateway-burn-intent` and `bolt11-pay`).
        let kinds = kinds::FIELDS_KINDS;
        assert_eq!(kinds.len(), 32);
        for &kind in kinds {
            let request: SigningRequest =
                serde_json::from_value(serde_json::json!({"kind": kind, "broadcast": true})).unwrap();
            assert_eq!(request.kind(), kind);
            assert_eq!(request.to_json()["kind"], kind);
            assert!(request.broadcasts());
        }
        let batch = SigningRequest::Batch { requests: vec![] };
        assert_eq!(batch.kind(), "batch");
        assert_eq!(batch.to_json()["kind"], "batch");
        // A typed call broadcasts when its member says so, and is written in the reference's member order.
        let call = |broadcast: bool| {
            let to = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
            serde_json::json!({"kind": "evm-call", "chainId": 84532, "call": {"to": to, "data": "0x"}, "broadcast": broadcast})
        };
        for broadcast in [true, false] {
            let request: SigningRequest = serde_json::from_value(call(broadcast)).unwrap();
            assert_eq!((request.kind(), request.broadcasts()), ("evm-call", broadcast));
            assert_eq!(serde_json::to_string(&request).unwrap(), call(broadcast).to_string());
        }
    }

    #[test]
    fn every_kind_round_trips_through_its_json_form() {
        let mut seen = std::collections::BTreeSet::new();
        for &kind in kinds::KINDS {
            let request = SigningRequest::example(kind).unwrap_or_else(|| panic!("no example for {kind}"));
            assert_eq!(request.kind(), kind);
            let value = serde_json::to_value(&request).unwrap();
            assert_eq!(value["kind"], request.kind(), "{value}");
            assert_eq!(request.to_json(), value);
            let back: SigningRequest = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(back, request, "{value}");
            // The text form too: written, read back, written again to the same bytes.
            let text = serde_json::to_string(&request).unwrap();
            let read: SigningRequest = serde_json::from_str(&text).unwrap();
            assert_eq!(read, request);
            assert_eq!(serde_json::to_string(&read).unwrap(), text);
            assert_eq!(read.fields().is_some(), kinds::FIELDS_KINDS.contains(&kind), "{kind}");
            assert!(seen.insert(kind), "{kind} is in the table twice");
        }
        assert_eq!(seen.len(), 37);
        assert_eq!(kinds::KINDS.len(), 37);
    }
}
