//! A Solana public key (32 bytes) and its base58 text.

use std::fmt;

/// A 32-byte Solana public key (an account address, a program id, a blockhash).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// The key a base58 string names, `None` unless it is base58 of exactly 32 bytes. The empty string and any
    /// character outside the Bitcoin alphabet are `None`.
    pub fn parse(text: &str) -> Option<Self> {
        // 32 bytes are at most 44 base58 characters; a longer string cannot be a key and is not decoded at all.
        if text.is_empty() || text.len() > 44 {
            return None;
        }
        let mut out = [0u8; 32];
        match bs58::decode(text).onto(&mut out) {
            Ok(32) => Some(Self(out)),
            _ => None,
        }
    }

    /// The key's base58 text.
    pub fn to_base58(&self) -> String {
        bs58::encode(self.0).into_string()
    }

    /// The key's bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_base58())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({self})")
    }
}
