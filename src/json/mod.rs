//! JSON as the reference reads and writes it: a 64-level nesting cap on every text read, JSON.parse's member order,
//! JSON.stringify's compact form, RFC 8785 equality, and the safe-integer rule for numbers.

use serde_json::{Map, Number, Value};

/// A JSON object.
pub type Object = Map<String, Value>;

/// The deepest nesting of arrays and objects the gate reads or writes.
pub const MAX_JSON_DEPTH: usize = 64;

/// The largest integer a JSON number may hold and still mean the same thing in every implementation: 2^53 − 1.
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

mod read;

pub use read::parse;
#[cfg(any(feature = "contract", feature = "card", feature = "checkout"))]
pub(crate) use read::text_within_depth;

/// Whether no array or object in the value nests more than `limit` levels deep (the value itself is level 1).
pub fn within_depth(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, level)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if level > limit {
            return false;
        }
        stack.extend(children.map(|c| (c, level + 1)));
    }
    true
}

/// The number as an `i64` when it is a JSON number holding a safe integer (|n| ≤ 2^53 − 1), written with or
/// without a fraction of zero: `60` and `60.0` are both 60. Booleans, strings and other numbers are `None`.
pub(crate) fn safe_int(value: &Value) -> Option<i64> {
    let Value::Number(n) = value else { return None };
    let i = if let Some(i) = n.as_i64() {
        i
    } else if n.is_u64() {
        return None;
    } else {
        let f = n.as_f64()?;
        if !f.is_finite() || f.fract() != 0.0 || f.abs() > MAX_SAFE_INTEGER as f64 {
            return None;
        }
        f as i64
    };
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i).then_some(i)
}

/// The length of a string in UTF-16 code units, as JavaScript's `length` counts it.
pub fn js_length(text: &str) -> usize {
    // ASCII (nearly every text a payment holds) is one unit a byte; otherwise one a character, two past U+FFFF.
    if text.is_ascii() { text.len() } else { text.chars().map(char::len_utf16).sum() }
}

/// Writes a number as JSON.stringify writes it (ECMAScript `Number::toString`): an integer beyond 2^53 is the double
/// JavaScript reads for it.
fn write_es_number(n: &Number, out: &mut String) {
    use std::fmt::Write as _;
    const EXACT: u64 = 1 << 53;
    // Writing into a String cannot fail.
    if let Some(u) = n.as_u64() {
        if u <= EXACT {
            let _ = write!(out, "{u}");
            return;
        }
    } else if let Some(i) = n.as_i64()
        && i.unsigned_abs() <= EXACT
    {
        let _ = write!(out, "{i}");
        return;
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        out.push('0');
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(f));
    }
}

/// How a value is written: as JSON.stringify writes it (ECMAScript numbers, at most [`MAX_JSON_DEPTH`] levels), or
/// exactly as serde_json holds it (every number as parsed, any depth), so that reading the text back gives the same
/// value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Js,
    Exact,
}

/// The text JSON.stringify writes for the value: compact, members in their order, non-ASCII kept, numbers in
/// ECMAScript form. `None` past [`MAX_JSON_DEPTH`] levels, which the gate never writes.
pub fn to_js_string(value: &Value) -> Option<String> {
    let mut out = String::with_capacity(256);
    write_value(value, &mut out, 1, Form::Js).then_some(out)
}

/// Compact JSON text of an object given as its members, in order, without building the object: the form a payment
/// whose members are borrowed from elsewhere is written in. Numbers are written as serde_json holds them, so the
/// text reads back as the same value.
pub(crate) fn exact_object<'k, 'v>(members: impl IntoIterator<Item = (&'k str, &'v Value)>) -> String {
    let mut out = String::with_capacity(1024);
    write_members(members, &mut out, 1, Form::Exact);
    out
}

/// Compact JSON text of the value that reads back as the same value: [`exact_object`] for any value.
pub(crate) fn exact_string(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(value, &mut out, 1, Form::Exact);
    out
}

/// Whether text [`exact_string`] or [`exact_object`] wrote is already the text [`to_js_string`] writes for its
/// value, so that a payment's header needs no second writing. The two forms write strings, literals and member order
/// alike and differ only in numbers and the depth limit: a text nested at most [`MAX_JSON_DEPTH`] deep whose every
/// number is a plain integer within 2^53 (what a payment holds: a version, a count) is the same in both. `false`
/// decides nothing: the value is written again.
pub(crate) fn exact_is_js(text: &str) -> bool {
    read::Pieces::new(text).all(|piece| match piece {
        read::Piece::TooDeep => false,
        read::Piece::Number { token, .. } => is_plain_safe_integer(token),
        _ => true,
    })
}

/// Whether a number token is an integer both writers write alike: no sign on zero, no leading zero, no fraction or
/// exponent, and at most 2^53 from zero.
fn is_plain_safe_integer(token: &str) -> bool {
    const EXACT: u64 = 1 << 53;
    let digits = token.strip_prefix('-').unwrap_or(token);
    match digits.as_bytes() {
        [b'0'] => token == "0",
        [b'1'..=b'9', rest @ ..] => {
            rest.iter().all(u8::is_ascii_digit) && digits.parse::<u64>().is_ok_and(|n| n <= EXACT)
        }
        _ => false,
    }
}

/// Whether JSON.stringify would escape any of the bytes: a quote, a backslash or a C0 control.
fn needs_escape(bytes: &[u8]) -> bool {
    // Eight bytes at a time as one word (the SWAR "has a byte less than n / equal to b" tests, exact for n ≤ 128),
    // so the scan of every string a payment carries stays a small part of writing it.
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS != 0;
    let holds = |x: u64, b: u8| below(x ^ (ONES * u64::from(b)), 1);
    let mut words = bytes.chunks_exact(8);
    let in_words = words.by_ref().any(|w| {
        // Every chunk of `chunks_exact(8)` has eight bytes; loaded as one word, not copied byte by byte.
        let x = u64::from_ne_bytes(<[u8; 8]>::try_from(w).unwrap_or([b'0'; 8]));
        below(x, 0x20) || holds(x, b'"') || holds(x, b'\\')
    });
    in_words || words.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

fn write_string(s: &str, out: &mut String) {
    // Most protocol strings (addresses, amounts, hashes, links) need no escape: they are copied as they are.
    if !needs_escape(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    // serde_json escapes exactly what JSON.stringify escapes: the quote, the backslash and C0 controls, with the
    // short forms \b \f \n \r \t and lower-case \u00xx for the rest. Rust strings hold no lone surrogates.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

fn write_number(n: &Number, out: &mut String, form: Form) {
    match form {
        // serde_json's `Display` for a number is its serialised form; writing into a String cannot fail.
        Form::Exact => {
            use std::fmt::Write as _;
            let _ = write!(out, "{n}");
        }
        Form::Js => write_es_number(n, out),
    }
}

/// Writes the value at nesting `level` (the outermost value is level 1); in the JS form, `false` when an array or
/// object sits past [`MAX_JSON_DEPTH`], so that recursion never goes deeper than that. The exact form writes any
/// value the caller already holds, however deep.
fn write_value(value: &Value, out: &mut String, level: usize, form: Form) -> bool {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(n, out, form),
        Value::String(s) => write_string(s, out),
        Value::Array(_) | Value::Object(_) if form == Form::Js && level > MAX_JSON_DEPTH => return false,
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !write_value(item, out, level + 1, form) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Object(map) => return write_members(map.iter().map(|(k, v)| (k.as_str(), v)), out, level, form),
    }
    true
}

/// Writes an object of these members at nesting `level`; `false` as [`write_value`] gives it.
fn write_members<'k, 'v>(
    members: impl IntoIterator<Item = (&'k str, &'v Value)>,
    out: &mut String,
    level: usize,
    form: Form,
) -> bool {
    out.push('{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(k, out);
        out.push(':');
        if !write_value(v, out, level + 1, form) {
            return false;
        }
    }
    out.push('}');
    true
}

/// Reads text [`exact_string`] or [`exact_object`] wrote back into the value it was written from: serde_json's
/// reading, with no nesting limit, since the value already existed at that depth.
pub(crate) fn read_exact(text: &str) -> Option<Value> {
    use serde::Deserialize as _;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// The RFC 8785 (JCS) form of the value, or `None` past [`MAX_JSON_DEPTH`] levels.
pub fn canonical(value: &Value) -> Option<String> {
    if !within_depth(value, MAX_JSON_DEPTH) {
        return None;
    }
    serde_json_canonicalizer::to_string(value).ok()
}

/// Whether the two values have the same RFC 8785 form: member order and `60` against `60.0` do not count, any other
/// change does. A value with no form (too deep) equals nothing.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (canonical(a), canonical(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// Whether `x` is one of `items`: structurally equal, or equal in RFC 8785 form.
pub fn is_offered(items: &[Value], x: &Value) -> bool {
    items.iter().any(|a| equal(a, x) || same_json(a, x))
}

/// Structural equality, as `Value`'s `==` decides it (objects equal whatever their member order), with members
/// looked up by [`Member`] rather than by hashing every name.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.member(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal(v, w)),
        _ => a == b,
    }
}

/// Member lookup for the small objects of the protocols: a linear scan below 16 members, where comparing a few short
/// names is cheaper than hashing the key with the map's SipHash; a hashed lookup above. Same answer as `get`.
pub trait Member {
    /// The member named `key`, if this is an object that has one.
    fn member(&self, key: &str) -> Option<&Value>;

    /// The whole value, where it is held as one: for a reader that needs more than members (a payment a pairing
    /// builds member by member is not held as one).
    fn as_value(&self) -> Option<&Value> {
        None
    }
}

impl Member for Map<String, Value> {
    #[inline]
    fn member(&self, key: &str) -> Option<&Value> {
        if self.len() <= 16 { self.iter().find_map(|(k, v)| (k == key).then_some(v)) } else { self.get(key) }
    }
}

impl Member for Value {
    #[inline]
    fn member(&self, key: &str) -> Option<&Value> {
        self.as_object()?.member(key)
    }

    #[inline]
    fn as_value(&self) -> Option<&Value> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_escape_scan_agrees_with_a_byte_by_byte_scan() {
        let naive = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        // Every byte value at every offset of a 17-byte string (two words and a remainder), on a plain background.
        for at in 0..17 {
            for byte in 0..=255u8 {
                let mut text = *b"0x036CbD53842c5426";
                text[at] = byte;
                assert_eq!(needs_escape(&text[..17]), naive(&text[..17]), "byte {byte:#04x} at {at}");
            }
        }
        assert!(!needs_escape("Café — 30 días ✓".as_bytes()));
        assert!(needs_escape("tab\there".as_bytes()) && needs_escape(b"\x7f\x1f") && !needs_escape(b"\x7f\x20"));
    }

    #[test]
    fn safe_int_reads_integral_numbers_only() {
        assert_eq!(safe_int(&json!(60)), Some(60));
        assert_eq!(safe_int(&serde_json::from_str::<Value>("60.0").unwrap()), Some(60));
        assert_eq!(safe_int(&json!(60.5)), None);
        assert_eq!(safe_int(&json!("60")), None);
        assert_eq!(safe_int(&json!(true)), None);
        assert_eq!(safe_int(&json!(MAX_SAFE_INTEGER)), Some(MAX_SAFE_INTEGER));
        assert_eq!(safe_int(&json!(MAX_SAFE_INTEGER + 1)), None);
        assert_eq!(safe_int(&json!(u64::MAX)), None);
        assert_eq!(safe_int(&json!(-MAX_SAFE_INTEGER)), Some(-MAX_SAFE_INTEGER));
    }

    #[test]
    fn js_writer_matches_json_stringify() {
        let v = parse(r#"{"b":60.0,"a":[1e21,-0.0,0.5,"é\u2028\u001f"],"2":1,"1":2}"#).unwrap();
        assert_eq!(to_js_string(&v).unwrap(), "{\"1\":2,\"2\":1,\"b\":60,\"a\":[1e+21,0,0.5,\"é\u{2028}\\u001f\"]}");
        let big = parse("9007199254740993").unwrap();
        assert_eq!(to_js_string(&big).unwrap(), "9007199254740992");
    }

    #[test]
    fn jcs_equality_ignores_order_and_integral_fractions() {
        let a = json!({"a": 60, "b": {"y": 1, "x": 2}});
        let b = parse(r#"{"b":{"x":2,"y":1},"a":60.0}"#).unwrap();
        assert!(same_json(&a, &b));
        assert!(!same_json(&a, &json!({"a": 61, "b": {"y": 1, "x": 2}})));
    }

    #[test]
    fn depth_is_capped() {
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(parse(&ok).is_some());
        assert!(parse(&deep).is_none());
        assert!(within_depth(&parse(&ok).unwrap(), 64));
        assert!(canonical(&serde_json::from_str(&deep).unwrap()).is_none());
    }

    #[test]
    fn js_length_counts_utf16_units() {
        assert_eq!(js_length("a😀"), 3);
        assert_eq!(js_length("é"), 1);
    }
}
