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

use alloy_primitives::{B256, U256};
use serde_json::Value;

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
