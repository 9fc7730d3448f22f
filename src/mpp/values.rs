//! The value checks MPP's challenge checks share: base64url JSON kept raw and decoded on demand (`request`,
//! `opaque`), RFC 3339 times, decimal amounts, EVM addresses, positive integers and CAIP-2 ids. All pure: no I/O, no
//! panic on any input.

use std::sync::Arc;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use crate::codec::{b64u_decode, b64u_encode};
use crate::json::{Object, canonical, safe_int, within_depth};

/// The most bytes a decoded `request` or `opaque` may hold: 8 KiB.
pub(crate) const MAX_DECODED: usize = 8192;
/// The deepest nesting of a decoded `request` or `opaque`, and of a credential: 16 levels, the value itself 1.
pub(crate) const MAX_DEPTH: usize = 16;

/// A base64url JSON parameter (`request`, `opaque`) as the challenge carries it. The raw text is the source of
/// truth (it is what the seller's HMAC covers and what a credential echoes); the JSON is decoded on demand, never
/// re-encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct B64Json<'a> {
    raw: &'a str,
}

impl<'a> B64Json<'a> {
    /// The parameter as written.
    pub(crate) const fn new(raw: &'a str) -> Self {
        Self { raw }
    }

    /// The text as the challenge carries it.
    pub(crate) const fn raw(&self) -> &'a str {
        self.raw
    }

    /// The JSON object the text holds: canonical unpadded base64url of at most 8 KiB, UTF-8 JSON (as JSON.parse reads
    /// it) holding an object nested at most 16 deep, whose numbers are all finite and which has an RFC 8785 form.
    /// `None` for anything else. Shared with the thread's recent decodes (read it, never copy it to read it).
    pub(crate) fn object(&self) -> Option<Arc<Object>> {
        decode_shared(self.raw)
    }

    /// Whether the text holds such an object: [`B64Json::object`] for a check that reads nothing of it.
    pub(crate) fn decodes(&self) -> bool {
        self.object().is_some()
    }

    /// The flat string-to-string map the text holds (an `opaque`), or `None`.
    pub(crate) fn string_map(&self) -> Option<Arc<Object>> {
        self.object().filter(|m| m.values().all(Value::is_string))
    }

    /// Whether the text holds such a map: [`B64Json::string_map`] for a check that reads nothing of it.
    pub(crate) fn is_string_map(&self) -> bool {
        self.string_map().is_some()
    }

    /// Whether the text is exactly the base64url of the RFC 8785 form of `parsed`, its own decoding: the bytes a
    /// hash "of the request as received" covers.
    pub(crate) fn is_jcs_of(&self, parsed: &Object) -> bool {
        canonical(&Value::Object(parsed.clone())).is_some_and(|text| b64u_encode(text.as_bytes()) == self.raw)
    }
}

/// The longest base64url text that can hold `max` bytes: ceil(4 max / 3) characters.
const fn b64u_chars(max: usize) -> usize {
    (max * 4).div_ceil(3)
}

/// How many decoded texts each thread remembers: a confirm or finish reads the same `request` and `opaque` of one or
/// two challenges about ten times over (the read, the choice, the build, the bound), and each reading is a base64url
/// decode, two JSON parses and an RFC 8785 write; remembering the last few makes every reading after the first a
/// string comparison and a shared handle (the decoded object itself is never copied: nothing writes to it).
const RECENT: usize = 8;

/// The texts a thread decoded last, oldest first, each with its reading.
type Recent = std::collections::VecDeque<(Box<str>, Option<Arc<Object>>)>;

thread_local! {
    static DECODED: std::cell::RefCell<Recent> = const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// See [`B64Json::object`], as an owned copy (for a caller that keeps or changes it).
#[cfg(test)]
pub(crate) fn decode_object(text: &str) -> Option<Object> {
    decode_shared(text).map(Arc::unwrap_or_clone)
}

/// See [`B64Json::object`]. A pure function of the text: what the thread last decoded is kept by the whole text
/// (compared byte for byte) and handed back shared, read-only.
fn decode_shared(text: &str) -> Option<Arc<Object>> {
    if text.len() > b64u_chars(MAX_DECODED) {
        return None;
    }
    let known = DECODED.with(|d| d.borrow().iter().find(|(raw, _)| **raw == *text).map(|(_, object)| object.clone()));
    if let Some(object) = known {
        return object;
    }
    let object = decode_uncached(text).map(Arc::new);
    DECODED.with(|d| {
        let mut d = d.borrow_mut();
        if d.len() == RECENT {
            d.pop_front();
        }
        d.push_back((text.into(), object.clone()));
    });
    object
}

fn decode_uncached(text: &str) -> Option<Object> {
    let bytes = b64u_decode(text)?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let value = crate::json::parse(text)?;
    // JSON.parse reads a number past the double range as an infinity, which has no RFC 8785 form: the reference
    // refuses such a request. The crate's reader writes it as null, so serde_json, which refuses it, decides.
    serde_json::from_str::<Value>(text).ok()?;
    if !within_depth(&value, MAX_DEPTH) || canonical(&value).is_none() {
        return None;
    }
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

pub(crate) use crate::rfc3339::unix_of;

/// Whether the value is `0x` and 40 hex digits in either case: an EVM address as MPP's requests write it.
pub(crate) fn is_address(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(is_address_str)
}

/// [`is_address`] for text.
pub(crate) fn is_address_str(text: &str) -> bool {
    text.strip_prefix("0x").is_some_and(|h| h.len() == 40 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The amount of a string of 1 to 78 decimal digits below 2^256 (leading zeros allowed, as the reference reads
/// them), or `None`.
pub(crate) fn decimal_of(value: Option<&Value>) -> Option<U256> {
    let text = value?.as_str()?;
    if !(1..=78).contains(&text.len()) || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    U256::from_str_radix(text, 10).ok()
}

/// A JSON number holding a safe integer above zero (`84532.0` is 84532), or `None`.
pub(crate) fn positive_int(value: Option<&Value>) -> Option<u64> {
    value.and_then(safe_int).and_then(|n| u64::try_from(n).ok()).filter(|n| *n > 0)
}

/// Whether the value is a CAIP-2 id: `[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}`.
pub(crate) fn is_caip2(value: Option<&Value>) -> bool {
    let Some((ns, reference)) = value.and_then(Value::as_str).and_then(|s| s.split_once(':')) else { return false };
    (3..=8).contains(&ns.len())
        && ns.bytes().all(|b| b == b'-' || b.is_ascii_lowercase() || b.is_ascii_digit())
        && (1..=32).contains(&reference.len())
        && reference.bytes().all(|b| b == b'-' || b == b'_' || b.is_ascii_alphanumeric())
}

/// Whether `key` is a member of the map (JSON `null` counts as present, as the reference's `in` reads it).
pub(crate) fn has(map: &Map<String, Value>, key: &str) -> bool {
    map.contains_key(key)
}

/// Whether the value fits within `limit` bytes as MPP counts JSON (a string its UTF-16 length and 2, a number, a
/// boolean or null 8, a container 2, a member name its length and 3) and nests at most 16 levels deep. The depth is
/// read first, without recursion, so the count never walks deeper than 16 levels.
pub(crate) fn json_within(value: &Value, limit: usize) -> bool {
    within_depth(value, MAX_DEPTH) && measure(value, limit).is_some()
}

/// What is left of `budget` once the value is counted, or `None` when the value does not fit.
pub(crate) fn measure(value: &Value, budget: usize) -> Option<usize> {
    use crate::json::js_length;
    match value {
        Value::String(s) => budget.checked_sub(js_length(s) + 2),
        Value::Array(items) => items.iter().try_fold(budget.checked_sub(2)?, |left, item| measure(item, left)),
        Value::Object(map) => {
            map.iter().try_fold(budget.checked_sub(2)?, |left, (k, v)| measure(v, left.checked_sub(js_length(k) + 3)?))
        }
        _ => budget.checked_sub(8),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the thread remembers changes no answer: texts read in turn, more of them than it keeps, valid and not,
    /// each decode to what a fresh reading gives, first time and every time after.
    #[test]
    fn remembering_decodes_changes_no_answer() {
        let mut texts: Vec<String> = (0..RECENT * 2)
            .map(|n| b64u_encode(format!(r#"{{"amount":"{n}","n":{{"k":[{n}]}}}}"#).as_bytes()))
            .collect();
        texts.push(b64u_encode(b"[1,2]"));
        texts.push(b64u_encode(br#"{"a":1e400}"#));
        texts.push("not base64url!".to_owned());
        for round in 0..3 {
            for (i, text) in texts.iter().enumerate().rev().skip(round) {
                let fresh = decode_uncached(text);
                assert_eq!(decode_object(text), fresh, "{i}");
                assert_eq!(decode_object(text), fresh, "{i} again");
                assert_eq!(fresh.is_some(), i < RECENT * 2, "{i}");
            }
        }
    }

    #[test]
    fn base64url_json_is_strict() {
        assert_eq!(decode_object("e30"), Some(Map::new()));
        assert_eq!(decode_object("e30="), None, "padding");
        assert_eq!(decode_object("e31"), None, "trailing bits");
        assert_eq!(decode_object("W10"), None, "an array");
        assert_eq!(decode_object(&b64u_encode(br#"{"a":1e400}"#)), None, "an infinite number");
        assert_eq!(decode_object(&b64u_encode(br#"{"a":"\ud800"}"#)), None, "a lone surrogate");
        let levels = |n: usize| format!("{}{{}}{}", r#"{"a":"#.repeat(n - 1), "}".repeat(n - 1));
        assert!(decode_object(&b64u_encode(levels(16).as_bytes())).is_some(), "16 levels");
        assert_eq!(decode_object(&b64u_encode(levels(17).as_bytes())), None, "17 levels");
        let big = format!(r#"{{"a":"{}"}}"#, "x".repeat(MAX_DECODED - 8));
        assert!(decode_object(&b64u_encode(big.as_bytes())).is_some());
        let bigger = format!(r#"{{"a":"{}"}}"#, "x".repeat(MAX_DECODED - 7));
        assert_eq!(decode_object(&b64u_encode(bigger.as_bytes())), None, "over 8 KiB");
        let raw = b64u_encode(br#"{"b":1,"a":2}"#);
        let parsed = B64Json::new(&raw).object().unwrap();
        assert!(!B64Json::new(&raw).is_jcs_of(&parsed));
        let jcs = b64u_encode(br#"{"a":2,"b":1}"#);
        assert!(B64Json::new(&jcs).is_jcs_of(&parsed));
        assert_eq!(B64Json::new(&b64u_encode(br#"{"k":{"n":"v"}}"#)).string_map(), None);
    }

    #[test]
    fn amounts_addresses_and_ids() {
        assert_eq!(decimal_of(Some(&json!("007"))), Some(U256::from(7)));
        assert_eq!(decimal_of(Some(&json!(format!("{}", U256::MAX)))), Some(U256::MAX));
        assert_eq!(
            decimal_of(Some(&json!("115792089237316195423570985008687907853269984665640564039457584007913129639936"))),
            None
        );
        assert_eq!(decimal_of(Some(&json!(""))), None);
        assert_eq!(decimal_of(Some(&json!(1))), None);
        assert!(is_address(Some(&json!("0x036CbD53842c5426634e7929541eC2318f3dCF7e"))));
        assert!(!is_address(Some(&json!("0x036C"))));
        assert_eq!(positive_int(Some(&json!(84532.0))), Some(84532));
        assert_eq!(positive_int(Some(&json!(0))), None);
        assert_eq!(positive_int(Some(&json!("1"))), None);
        assert!(is_caip2(Some(&json!("eip155:42161"))));
        assert!(!is_caip2(Some(&json!("EIP155:1"))));
    }

    #[test]
    fn json_is_measured_as_mpp_counts_it() {
        // {"a":"xy"}: 2 for the object, 1 + 3 for the name, 2 + 2 for the string.
        assert!(json_within(&json!({"a": "xy"}), 10));
        assert!(!json_within(&json!({"a": "xy"}), 9));
        assert!(json_within(&json!([null, true, 1]), 26));
        assert!(!json_within(&json!([null, true, 1]), 25));
        let deep = (0..16).fold(json!(1), |inner, _| json!([inner]));
        assert!(json_within(&deep, 1000));
        assert!(!json_within(&json!([deep]), 1000));
    }
}
