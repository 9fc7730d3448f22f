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
        five8::decode_32(text, &mut out).ok().map(|()| Self(out))
    }

    /// The key's base58 text.
    pub fn to_base58(&self) -> String {
        let mut out = [0u8; 44];
        let len = self.write_base58(&mut out);
        // five8 writes only characters of the Bitcoin alphabet, so the text is ASCII.
        out.get(..len).and_then(|t| std::str::from_utf8(t).ok()).map(str::to_owned).unwrap_or_default()
    }

    /// Writes the key's base58 text (ASCII, 32 to 44 characters) at the start of `out`; returns its length.
    pub(crate) fn write_base58(&self, out: &mut [u8; 44]) -> usize {
        usize::from(five8::encode_32(&self.0, out))
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

#[cfg(test)]
mod tests {
    use super::Key;
    use proptest::prelude::*;

    const ALPHABET: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

    /// bs58's reading of a key, the rule before five8: base58 of exactly 32 bytes.
    fn by_bs58(text: &str) -> Option<[u8; 32]> {
        let mut out = [0u8; 32];
        (!text.is_empty() && text.len() <= 44 && matches!(bs58::decode(text).onto(&mut out), Ok(32))).then_some(out)
    }

    proptest! {
        #[test]
        fn writes_as_bs58_writes(bytes in any::<[u8; 32]>(), zeros in 0usize..33) {
            let mut bytes = bytes;
            bytes.iter_mut().take(zeros).for_each(|b| *b = 0);
            let text = Key(bytes).to_base58();
            prop_assert_eq!(&text, &bs58::encode(bytes).into_string());
            prop_assert_eq!(Key::parse(&text), Some(Key(bytes)));
        }

        #[test]
        fn reads_as_bs58_reads(picks in proptest::collection::vec(0usize..58, 0..48), ones in 0usize..34) {
            let text: String = std::iter::repeat_n('1', ones)
                .chain(picks.iter().filter_map(|&i| ALPHABET.chars().nth(i)))
                .collect();
            prop_assert_eq!(Key::parse(&text).map(|k| k.0), by_bs58(&text));
        }

        #[test]
        fn reads_any_text_as_bs58_reads(text in "\\PC{0,50}") {
            prop_assert_eq!(Key::parse(&text).map(|k| k.0), by_bs58(&text));
        }
    }
}
