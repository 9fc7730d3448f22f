//! The x402 pairings on EIP-155 chains. H rides in a field the payer signs: the EIP-3009 nonce, the Permit2 nonce,
//! a delegation salt, an escrow salt or a channel salt; and Cloudflare's batch settlement, paid after an agreement
//! payment.

pub mod batch_settlement;
pub mod cloudflare;
pub mod eip3009;

use alloy_primitives::U256;
use serde_json::Value;

/// Whether the value is `0x` and 40 hex digits in either case.
pub fn is_address(value: &Value) -> bool {
    value.as_str().is_some_and(|s| {
        s.strip_prefix("0x").is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
    })
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
