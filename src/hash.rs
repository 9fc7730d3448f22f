//! The ATR hash H: SHA-256 over the exact bytes a seller serves.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The largest ATR the gate reads, fetches, finishes or checks: 1 MiB.
pub const MAX_ATR_BYTES: usize = 1_048_576;

/// An ATR hash: 32 bytes, written `0x` and 64 lower-case hex digits.
///
/// The gate always writes H in lower case; it reads either case, because a seller may advertise an upper-case H
/// (vector B5) and the comparison is over the decoded bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AtrHash([u8; 32]);

impl AtrHash {
    /// The hash with these 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// `0x` followed by exactly 64 hex digits in either case; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let digits = text.strip_prefix("0x")?;
        if digits.len() != 64 {
            return None;
        }
        // `decode_to_slice` refuses any byte that is not a hex digit, in either case.
        let mut out = [0u8; 32];
        hex::decode_to_slice(digits, &mut out).ok()?;
        Some(Self(out))
    }

    /// The hash written `0x` and 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        crate::codec::to_hex(&self.0)
    }
}

impl fmt::Display for AtrHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for AtrHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AtrHash({})", self.to_hex())
    }
}

/// The text is not `0x` and 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an ATR hash: expected 0x and 64 hex digits")]
pub struct NotAHash;

impl FromStr for AtrHash {
    type Err = NotAHash;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or(NotAHash)
    }
}

impl Serialize for AtrHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for AtrHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom(NotAHash))
    }
}

/// SHA-256 over the bytes exactly as given: no size check, no parsing, no normalisation.
pub fn atr_hash(bytes: &[u8]) -> AtrHash {
    AtrHash(Sha256::digest(bytes).into())
}

/// Whether two written hashes decode to the same 32 bytes. Each must be `0x` and 64 hex digits in either case; a
/// malformed value is never equal to anything, so a seller that advertises a malformed H gets `hash-mismatch`.
pub fn hash_equals(a: &str, b: &str) -> bool {
    match (AtrHash::parse(a), AtrHash::parse(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abc_is_the_fips_value() {
        assert_eq!(atr_hash(b"abc").to_hex(), "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn equality_ignores_case_and_refuses_malformed() {
        let lower = atr_hash(b"abc").to_hex();
        let upper = format!("0x{}", lower[2..].to_uppercase());
        assert!(hash_equals(&lower, &upper));
        assert!(!hash_equals(&lower, &lower[..65]));
        assert!(!hash_equals(&format!("0X{}", &lower[2..]), &lower));
        assert!(!hash_equals(&format!("{lower} "), &lower));
        assert!(!hash_equals(&lower, &atr_hash(b"abd").to_hex()));
    }
}
