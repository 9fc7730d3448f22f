//! The SD-JWT presentation reader of RFC 9901 §7.1, steps 1 and 3 to 5 (step 2, the issuer signature, is the
//! caller's): the presentation split on `~`, the JWS's header and payload decoded, each disclosure decoded and its
//! digest taken, and every digest the payload references (an object's `_sd`, an array's `{"...": digest}`) replaced by
//! its disclosure, recursively. Every disclosure must be referenced and no digest referenced twice. With the one
//! allowance the reference makes: a digest in `_sd` that names no three-element disclosure (a two-element one, or
//! none) is ignored at its first listing there, and a second `_sd` listing of it is malformed.
//!
//! The reasons are the caller's to name ([`SdJwtError`]): a card pairing and an AP2 mandate give them different codes.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Segment, decode_json_segment, disclosure_digest, jws_segments};
use crate::json::{self, MAX_JSON_DEPTH, Object};

/// How many disclosures deep a disclosed value may sit inside other disclosed values.
const RESOLUTION_DEPTH: usize = 16;

/// Why a presentation is refused; the caller gives each its own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SdJwtError {
    /// Not a presentation of the form RFC 9901 gives, a digest referenced twice, a disclosure repeated, or a
    /// disclosure of the wrong shape for its place.
    Malformed,
    /// The payload names an `_sd_alg` other than `sha-256`.
    SdAlgUnsupported,
    /// A disclosure no digest in the payload references.
    Unreferenced,
    /// Over the byte or disclosure bounds, or nested past [`MAX_JSON_DEPTH`] (as written or once resolved), or
    /// disclosures nested more than 16 deep.
    TooLarge,
}

/// The size bounds of one presentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// The most UTF-16 code units the presentation may hold.
    pub(crate) max_length: usize,
    /// The most disclosures it may carry.
    pub(crate) max_disclosures: usize,
}

impl Default for Bounds {
    /// The reference's defaults: 1 MiB and 128 disclosures.
    fn default() -> Self {
        Self { max_length: 1_048_576, max_disclosures: 128 }
    }
}

/// A presentation read and resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SdJwt<'a> {
    /// The compact JWS the presentation starts with.
    pub(crate) jwt: &'a str,
    /// The JWS header.
    pub(crate) header: Object,
    /// The JWS payload as signed, `_sd` and `_sd_alg` included.
    pub(crate) payload: Object,
    /// The payload with every referenced disclosure in its place and `_sd`, `_sd_alg` removed.
    pub(crate) resolved: Object,
    /// The disclosures as presented, in order.
    pub(crate) disclosures: Vec<&'a str>,
    /// The key-binding JWT the presentation ends with, when it has one.
    pub(crate) key_binding: Option<&'a str>,
}

/// One disclosure: a member's name and value, or an array element's value (no name).
struct Disclosure {
    name: Option<String>,
    value: Value,
    used: bool,
}

/// Whether the presentation holds only the characters base64url, `.` and `~` give.
fn is_presentation_text(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~' | b'-'))
}

/// Reads an SD-JWT presentation and resolves its disclosures. Each JWS segment and each disclosure is base64url
/// without padding in its canonical form. No signature is verified.
pub(crate) fn read(token: &str, bounds: Bounds) -> Result<SdJwt<'_>, SdJwtError> {
    use SdJwtError::{Malformed, SdAlgUnsupported, TooLarge, Unreferenced};
    if json::js_length(token) > bounds.max_length {
        return Err(TooLarge);
    }
    if !is_presentation_text(token) {
        return Err(Malformed);
    }
    let parts: Vec<&str> = token.split('~').collect();
    let [jwt, middle @ .., last] = parts.as_slice() else { return Err(Malformed) };
    let key_binding = match *last {
        "" => None,
        kb if kb.contains('.') => Some(kb),
        _ => return Err(Malformed),
    };
    if middle.len() > bounds.max_disclosures {
        return Err(TooLarge);
    }

    let [header, payload, _] = jws_segments(jwt).ok_or(Malformed)?;
    let (header, payload) = (decode_json_segment(header), decode_json_segment(payload));
    if !header.is_object() || !payload.is_object() {
        return Err(Malformed);
    }
    let (Some(header), Some(payload)) = (header.into_object(), payload.into_object()) else { return Err(TooLarge) };
    if !within_cap_object(&header) || !within_cap_object(&payload) {
        return Err(TooLarge);
    }
    if payload.get("_sd_alg").is_some_and(|alg| alg != "sha-256") {
        return Err(SdAlgUnsupported);
    }

    let mut by_digest: HashMap<String, Disclosure> = HashMap::with_capacity(middle.len());
    for &d in middle {
        if d.is_empty() {
            return Err(Malformed);
        }
        let decoded = decode_json_segment(d);
        if !decoded.is_array() {
            return Err(Malformed);
        }
        let Segment::Value(Value::Array(items)) = decoded else { return Err(TooLarge) };
        let disclosure = match items.as_slice() {
            [Value::String(_), Value::String(name), value] => {
                Disclosure { name: Some(name.clone()), value: value.clone(), used: false }
            }
            [Value::String(_), value] => Disclosure { name: None, value: value.clone(), used: false },
            _ => return Err(Malformed),
        };
        if by_digest.insert(disclosure_digest(d), disclosure).is_some() {
            return Err(Malformed);
        }
    }

    let mut resolver = Resolver { by_digest, referenced: HashSet::new(), listed_ignored: HashSet::new() };
    let outcome = resolver.resolve(&Value::Object(payload.clone()), 0, 1)?;
    if resolver.by_digest.values().any(|d| !d.used) {
        return Err(Unreferenced);
    }
    let Value::Object(mut resolved) = outcome else { return Err(Malformed) };
    resolved.shift_remove("_sd_alg");
    Ok(SdJwt { jwt, header, payload, resolved, disclosures: middle.to_vec(), key_binding })
}

/// Whether an object nests at most [`MAX_JSON_DEPTH`] levels, itself level 1.
fn within_cap_object(object: &Object) -> bool {
    object.values().all(|v| json::within_depth(v, MAX_JSON_DEPTH - 1))
}

/// The digests seen so far while resolving one payload.
struct Resolver {
    by_digest: HashMap<String, Disclosure>,
    referenced: HashSet<String>,
    listed_ignored: HashSet<String>,
}

impl Resolver {
    /// The value with its references resolved. `level` counts the disclosures the value sits in, `depth` its nesting
    /// once resolved (the payload is 1). Both are bounded, so the recursion is at most [`MAX_JSON_DEPTH`] deep.
    fn resolve(&mut self, value: &Value, level: usize, depth: usize) -> Result<Value, SdJwtError> {
        use SdJwtError::{Malformed, TooLarge};
        match value {
            Value::Array(_) | Value::Object(_) if depth > MAX_JSON_DEPTH => Err(TooLarge),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for element in items {
                    let reference = match element {
                        Value::Object(map) if map.len() == 1 => map.get("..."),
                        _ => None,
                    };
                    let Some(reference) = reference else {
                        out.push(self.resolve(element, level, depth + 1)?);
                        continue;
                    };
                    let Value::String(digest) = reference else { return Err(Malformed) };
                    if !self.referenced.insert(digest.clone()) {
                        return Err(Malformed);
                    }
                    let Some(found) = self.by_digest.get_mut(digest) else { continue };
                    if found.name.is_some() {
                        return Err(Malformed);
                    }
                    found.used = true;
                    if level + 1 > RESOLUTION_DEPTH {
                        return Err(TooLarge);
                    }
                    let disclosed = found.value.clone();
                    out.push(self.resolve(&disclosed, level + 1, depth + 1)?);
                }
                Ok(Value::Array(out))
            }
            Value::Object(map) => self.resolve_object(map, level, depth),
            other => Ok(other.clone()),
        }
    }

    fn resolve_object(&mut self, map: &Object, level: usize, depth: usize) -> Result<Value, SdJwtError> {
        use SdJwtError::{Malformed, TooLarge};
        let mut out = Object::new();
        for (key, member) in map {
            if key != "_sd" {
                let resolved = self.resolve(member, level, depth + 1)?;
                out.insert(key.clone(), resolved);
            }
        }
        let Some(sd) = map.get("_sd") else { return Ok(Value::Object(out)) };
        let Value::Array(digests) = sd else { return Err(Malformed) };
        for digest in digests {
            let Value::String(digest) = digest else { return Err(Malformed) };
            let named = self.by_digest.get(digest).and_then(|d| d.name.clone());
            let Some(name) = named else {
                if !self.listed_ignored.insert(digest.clone()) {
                    return Err(Malformed);
                }
                continue;
            };
            if !self.referenced.insert(digest.clone()) {
                return Err(Malformed);
            }
            if name == "_sd" || name == "..." || out.contains_key(&name) {
                return Err(Malformed);
            }
            let Some(found) = self.by_digest.get_mut(digest) else { return Err(Malformed) };
            found.used = true;
            if level + 1 > RESOLUTION_DEPTH {
                return Err(TooLarge);
            }
            let disclosed = found.value.clone();
            let resolved = self.resolve(&disclosed, level + 1, depth + 1)?;
            out.insert(name, resolved);
        }
        Ok(Value::Object(out))
    }
}
