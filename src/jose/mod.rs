//! The JOSE the card and checkout families read: a compact JWS split into its three base64url segments (RFC 7515
//! §7.1), a segment decoded to JSON under the crate's nesting cap, the SD-JWT presentation of RFC 9901 §7.1 with its
//! disclosures resolved by digest ([`sd_jwt`]), and, for the card family, ES256 verification on `p256`.
//!
//! Nothing here decides what an `alg` may be: the reference reads a JWS header only where a pairing needs it, and the
//! pairing then names the one algorithm it takes (a Verifiable Intent layer takes ES256 alone, so `none` is refused
//! there). Nothing here verifies a signature but [`es256`], which only the card family calls.

#[cfg(feature = "card")]
pub(crate) mod es256;
pub(crate) mod sd_jwt;
#[cfg(test)]
mod tests;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::codec::{b64u_decode, b64u_encode};
use crate::json::{self, Object};

/// The three segments of a compact JWS (header, payload, signature), each base64url without padding in its canonical
/// form (RFC 4648 §3.5); `None` for any other number of dots or any other segment form, a last character carrying a
/// bit past the last byte included.
pub(crate) fn jws_segments(text: &str) -> Option<[&str; 3]> {
    let mut parts = text.split('.');
    let segments = [parts.next()?, parts.next()?, parts.next()?];
    if parts.next().is_some() || !segments.iter().all(|s| b64u_decode(s).is_some()) {
        return None;
    }
    Some(segments)
}

/// A base64url segment read as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    /// JSON text within the crate's nesting cap, and its value.
    Value(Value),
    /// JSON text nested past [`json::MAX_JSON_DEPTH`]: every depth check refuses it. `object` says whether its
    /// top-level value is an object (otherwise an array), as a reader that first asks for an object needs to know.
    TooDeep {
        /// Whether the top-level value is an object.
        object: bool,
    },
    /// Not canonical base64url, not UTF-8, or not JSON.
    Unparsed,
}

impl Segment {
    /// The object the segment holds, when it holds one within the cap.
    pub(crate) fn into_object(self) -> Option<Object> {
        match self {
            Self::Value(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    /// Whether the segment holds an object, within the cap or past it.
    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Self::Value(Value::Object(_)) | Self::TooDeep { object: true })
    }

    /// Whether the segment holds an array, within the cap or past it.
    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Self::Value(Value::Array(_)) | Self::TooDeep { object: false })
    }
}

/// The JSON value that base64url text without padding, in its canonical form, decodes to as UTF-8.
pub(crate) fn decode_json_segment(text: &str) -> Segment {
    let Some(bytes) = b64u_decode(text) else { return Segment::Unparsed };
    let Ok(decoded) = std::str::from_utf8(&bytes) else { return Segment::Unparsed };
    if json::text_within_depth(decoded) {
        return json::parse(decoded).map_or(Segment::Unparsed, Segment::Value);
    }
    if is_json_text(decoded) {
        Segment::TooDeep { object: decoded.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{') }
    } else {
        Segment::Unparsed
    }
}

/// Unpadded base64url of SHA-256 over the text's UTF-8 bytes: an SD-JWT disclosure's digest (RFC 9901 §4.2.3), a
/// Verifiable Intent `checkout_hash` and `sd_hash`.
pub(crate) fn disclosure_digest(text: &str) -> String {
    b64u_encode(&Sha256::digest(text.as_bytes()))
}

/// Where a reader of JSON text stands between tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    ValueOrEnd,
    Key,
    KeyOrEnd,
    Colon,
    After,
}

/// Whether the text is one RFC 8259 JSON value with optional whitespace around it, read with an explicit stack so
/// that any nesting is read without recursion (only a text past the nesting cap comes here).
fn is_json_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0usize;
    let mut objects: Vec<bool> = Vec::new();
    let mut expect = Expect::Value;
    loop {
        while bytes.get(at).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
            at += 1;
        }
        if expect == Expect::After && objects.is_empty() {
            return at == bytes.len();
        }
        let Some(&c) = bytes.get(at) else { return false };
        expect = match (expect, c) {
            (Expect::ValueOrEnd, b']') | (Expect::KeyOrEnd, b'}') => {
                objects.pop();
                at += 1;
                Expect::After
            }
            (Expect::Value | Expect::ValueOrEnd, b'{' | b'[') => {
                objects.push(c == b'{');
                at += 1;
                if c == b'{' { Expect::KeyOrEnd } else { Expect::ValueOrEnd }
            }
            (Expect::Value | Expect::ValueOrEnd, _) => {
                let Some(end) = scalar_end(bytes, at) else { return false };
                at = end;
                Expect::After
            }
            (Expect::Key | Expect::KeyOrEnd, b'"') => {
                let Some(end) = string_end(bytes, at) else { return false };
                at = end;
                Expect::Colon
            }
            (Expect::Colon, b':') => {
                at += 1;
                Expect::Value
            }
            (Expect::After, b',') => {
                at += 1;
                if objects.last() == Some(&true) { Expect::Key } else { Expect::Value }
            }
            (Expect::After, b'}' | b']') if objects.last() == Some(&(c == b'}')) => {
                objects.pop();
                at += 1;
                Expect::After
            }
            _ => return false,
        };
    }
}

/// The end of the string literal starting at `at` (its opening quote); `None` when it is not one.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        match *bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match *bytes.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    bytes.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                    i += 6;
                }
                _ => return None,
            },
            b if b < 0x20 => return None,
            _ => i += 1,
        }
    }
}

/// The end of the string, number or literal starting at `at`; `None` when none starts there.
fn scalar_end(bytes: &[u8], at: usize) -> Option<usize> {
    let rest = bytes.get(at..)?;
    if rest.first() == Some(&b'"') {
        return string_end(bytes, at);
    }
    for literal in [&b"true"[..], b"false", b"null"] {
        if rest.starts_with(literal) {
            return Some(at + literal.len());
        }
    }
    let digits = |from: usize| rest.get(from..).map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count());
    let mut i = usize::from(rest.first() == Some(&b'-'));
    match rest.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return None,
    }
    if rest.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if matches!(rest.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(rest.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(at + i)
}
