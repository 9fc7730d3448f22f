//! Byte encodings the gate reads and writes: padded standard base64 and unpadded base64url (RFC 4648 §4 and §5),
//! each read only in its canonical form (§3.5), and `0x` hex.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// Padded standard base64 of the bytes.
pub(crate) fn b64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// The bytes of padded standard base64 in its canonical form; `None` for anything else (missing or extra padding,
/// whitespace, the URL-safe alphabet, bits set past the last byte).
pub(crate) fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = STANDARD.decode(text).ok()?;
    // The engine already refuses non-canonical padding and trailing bits; re-encoding makes the rule explicit.
    (STANDARD.encode(&bytes) == text).then_some(bytes)
}

/// Unpadded base64url of the bytes.
pub(crate) fn b64u_encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The bytes of unpadded base64url in its canonical form; `None` for anything else.
#[cfg_attr(not(feature = "mpp"), allow(dead_code, reason = "MPP's challenges, credentials and receipts are base64url"))]
pub(crate) fn b64u_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
    (URL_SAFE_NO_PAD.encode(&bytes) == text).then_some(bytes)
}

/// `0x` and the bytes in lower-case hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; 2 + bytes.len() * 2];
    let (prefix, digits) = out.split_at_mut(2);
    prefix.copy_from_slice(b"0x");
    if hex::encode_to_slice(bytes, digits).is_err() {
        return format!("0x{}", hex::encode(bytes));
    }
    // Only `0`-`9`, `a`-`f` and `x` were written.
    String::from_utf8(out).unwrap_or_default()
}

/// The bytes of `0x` and an even number of hex digits in either case; `None` for anything else.
pub(crate) fn hex_bytes(text: &str) -> Option<Vec<u8>> {
    let digits = text.strip_prefix("0x")?;
    if digits.len() % 2 != 0 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    hex::decode(digits).ok()
}

/// Whether the text is `0x` and an even number of hex digits.
pub(crate) fn is_hex(text: &str) -> bool {
    text.strip_prefix("0x").is_some_and(|d| d.len() % 2 == 0 && d.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Serde for byte strings as canonical padded standard base64, the form ATR bytes take in every value that crosses
/// a process boundary.
pub(crate) mod base64_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the bytes as padded standard base64.
    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::b64_encode(bytes))
    }

    /// Reads canonical padded standard base64 only.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::b64_decode(&text).ok_or_else(|| serde::de::Error::custom("not canonical padded standard base64"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_canonical_only() {
        assert_eq!(b64_decode("/w==").as_deref(), Some(&[0xffu8][..]));
        assert_eq!(b64_decode(""), Some(vec![]));
        assert_eq!(b64_decode("/x=="), None, "trailing bits set");
        assert_eq!(b64_decode("/w"), None, "padding missing");
        assert_eq!(b64_decode("/w== "), None, "whitespace");
        assert_eq!(b64_decode("_w=="), None, "url-safe alphabet");
        assert_eq!(b64u_decode("_w").as_deref(), Some(&[0xffu8][..]));
        assert_eq!(b64u_decode("_x"), None);
        assert_eq!(b64u_decode("_w=="), None);
    }

    #[test]
    fn hex_needs_prefix_and_pairs() {
        assert_eq!(hex_bytes("0xAb").as_deref(), Some(&[0xabu8][..]));
        assert_eq!(hex_bytes("ab"), None);
        assert_eq!(hex_bytes("0xabc"), None);
        assert!(is_hex("0x"));
        assert!(!is_hex("0xg0"));
    }
}
