//! The Stellar rail: strkeys (G, M and C, CRC16-XModem) and the muxed id that carries H, the `TransactionEnvelope`
//! read from the buyer's simulated XDR with the caps of `decoder-caps.json`, the one SEP-41 `transfer` a Soroban
//! payment invokes and the address-credential authorization entry that signs it, the entry's preimage (CAP-46,
//! and CAP-71's address-bound form), and the envelope its signature completes. Types and codec are
//! `stellar-xdr`'s and `stellar-strkey`'s (the Stellar Development Foundation's); nothing here fetches or signs.

pub mod strkey;
pub mod transfer;
pub mod xdr;

#[cfg(test)]
mod tests;

pub use strkey::{Strkey, muxed_id};
pub use transfer::{Payment, Signing, read_signed_transfer, read_source_transfer, signing_for, signing_input};
pub use xdr::{MAX_DEPTH, MAX_ELEMENTS, decode_envelope, decode_scval, envelope_bytes};

use crate::refusal::{Reason, Refusal};

/// The most base64 characters an envelope may hold.
pub const MAX_XDR: usize = 8192;

/// A refusal in the `stellar` namespace.
pub(crate) const fn stellar(reason: Reason) -> Refusal {
    Refusal::new("stellar", reason)
}

/// A Stellar network the rail knows, by its CAIP-2 name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// `stellar:pubnet`.
    Pubnet,
    /// `stellar:testnet`.
    Testnet,
}

impl Network {
    /// The network a CAIP-2 name is, `None` for any other.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "stellar:pubnet" => Some(Self::Pubnet),
            "stellar:testnet" => Some(Self::Testnet),
            _ => None,
        }
    }

    /// The network's passphrase.
    pub const fn passphrase(self) -> &'static str {
        match self {
            Self::Pubnet => "Public Global Stellar Network ; September 2015",
            Self::Testnet => "Test SDF Network ; September 2015",
        }
    }

    /// The network id: SHA-256 of the passphrase.
    pub fn id(self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        Sha256::digest(self.passphrase().as_bytes()).into()
    }
}

/// Whether a value is the CAIP-2 name of a network the rail knows.
pub fn is_network(value: &serde_json::Value) -> bool {
    value.as_str().and_then(Network::parse).is_some()
}

/// The buyer's inputs, present and of their forms (`<namespace>/input-missing` for the first that is not): a
/// non-empty `simulatedXdr` and a non-negative integer `currentLedger`.
#[cfg_attr(not(any(feature = "x402", feature = "mpp")), allow(dead_code, reason = "the pairings take it"))]
pub(crate) fn buyer_inputs(
    given: &serde_json::Map<String, serde_json::Value>,
    namespace: &'static str,
) -> Result<serde_json::Map<String, serde_json::Value>, Refusal> {
    let missing = || Refusal::new(namespace, Reason::InputMissing);
    let xdr = given.get("simulatedXdr").filter(|v| v.as_str().is_some_and(|s| !s.is_empty())).ok_or_else(missing)?;
    let ledger =
        given.get("currentLedger").filter(|v| crate::json::safe_int(v).is_some_and(|n| n >= 0)).ok_or_else(missing)?;
    let mut out = serde_json::Map::with_capacity(2);
    out.insert("simulatedXdr".into(), xdr.clone());
    out.insert("currentLedger".into(), ledger.clone());
    Ok(out)
}
