//! Reading JSON text as JSON.parse reads it: the nesting cap, `-0` and numbers past the double range, integers past
//! 2^53, and array-index member names first.

use serde_json::{Number, Value};

use super::MAX_JSON_DEPTH;

/// Whether no array or object in the text nests more than [`MAX_JSON_DEPTH`] deep, counting brackets outside
/// strings. Nothing else about the text is checked; it runs before any parser sees the text, so a deep text costs
/// one linear scan and no recursion.
#[cfg_attr(
    not(any(feature = "contract", feature = "card", feature = "checkout")),
    allow(dead_code, reason = "the contract's and the card and checkout families' readers check depth before parsing")
)]
pub(crate) fn text_within_depth(text: &str) -> bool {
    scan(text).is_some()
}

/// The value of JSON text nested at most [`MAX_JSON_DEPTH`] deep, read as JSON.parse reads it: a repeated member
/// keeps its last value, array-index member names come first in ascending order, and an integer past 2^53 is the
/// double nearest to it, still an integer where a `u64` or `i64` holds it (as the reference holds it); `-0` is the
/// integer 0 and a number past the double range is `null` (JSON.parse's infinity, as JSON.stringify writes it).
/// `None` for text that is deeper or is not JSON, and for a string holding a lone surrogate escape, which JSON.parse
/// reads but no Rust string can hold (a deliberate difference from the reference: such a challenge or receipt is
/// declined as unreadable).
pub fn parse(text: &str) -> Option<Value> {
    let needs = scan(text)?;
    let mut value: Value =
        if needs.rewrite { serde_json::from_str(&as_js_numbers(text)) } else { serde_json::from_str(text) }.ok()?;
    if needs.walk {
        as_parsed_by_js(&mut value);
    }
    Some(value)
}

/// What a text needs beyond serde_json's own reading to be read as JSON.parse reads it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Needs {
    /// A number form [`as_js_numbers`] rewrites: `-0`, or one past the double range.
    rewrite: bool,
    /// A value [`as_parsed_by_js`] changes may be there: an integer of 16 digits or more, or a member name that may
    /// be an array index (digits alone, or any escape, which may spell digits).
    walk: bool,
}

/// One piece of JSON text, as the scans before a read and before a write see it: the bytes outside strings one at
/// a time, a string literal whole (found with `memchr`, not byte by byte), a number token whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece<'a> {
    /// A string literal's content between its quotes, escapes as written (to the end of a text that never closes it).
    String(&'a [u8]),
    /// A number token (the run of bytes a JSON number may hold) and where it starts.
    Number { at: usize, token: &'a str },
    /// A bracket that opens an array or an object.
    Open,
    /// Any other byte outside strings: a closing bracket, a colon, a comma, a space, a letter of a literal.
    Byte(u8),
    /// The text nests deeper than [`MAX_JSON_DEPTH`] here; the last piece.
    TooDeep,
}

/// The [`Piece`]s of a text in order, the nesting counted as they go.
pub(super) struct Pieces<'a> {
    text: &'a str,
    at: usize,
    depth: usize,
}

impl<'a> Pieces<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Self { text, at: 0, depth: 0 }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let bytes = self.text.as_bytes();
        let at = self.at;
        let &b = bytes.get(at)?;
        let piece = match b {
            b'"' => {
                // The closing quote: the first quote no backslash escapes.
                let mut end = at + 1;
                let close = loop {
                    match memchr::memchr2(b'"', b'\\', bytes.get(end..).unwrap_or_default()) {
                        Some(k) if bytes.get(end + k) == Some(&b'\\') => end += k + 2,
                        Some(k) => break end + k,
                        None => break bytes.len(),
                    }
                };
                self.at = close + 1;
                return Some(Piece::String(bytes.get(at + 1..close).unwrap_or_default()));
            }
            b'-' | b'0'..=b'9' => {
                let len =
                    bytes.get(at..).unwrap_or_default().iter().take_while(|c| b"0123456789+-.eE".contains(c)).count();
                self.at = at + len;
                return Some(Piece::Number { at, token: self.text.get(at..at + len).unwrap_or_default() });
            }
            b'[' | b'{' => {
                self.depth += 1;
                if self.depth > MAX_JSON_DEPTH {
                    self.at = bytes.len();
                    return Some(Piece::TooDeep);
                }
                Piece::Open
            }
            b']' | b'}' => {
                self.depth = self.depth.saturating_sub(1);
                Piece::Byte(b)
            }
            _ => Piece::Byte(b),
        };
        self.at = at + 1;
        Some(piece)
    }
}

/// What JSON.parse's reading of a number token needs in the text serde_json reads: `0` for `-0` (JSON.parse's
/// value, held as the integer 0, where serde_json would hold the float -0.0), `null` for a number past the double
/// range (JSON.parse reads an infinity, which no JSON value holds and JSON.stringify writes as `null`; serde_json
/// refuses the whole text); `None` for every other token, which serde_json reads as it is.
fn rewritten(token: &str) -> Option<&'static str> {
    if token == "-0" {
        return Some("0");
    }
    // Without a fraction or an exponent a token of at most 308 characters is below 10^308, inside the double range:
    // the common token is not parsed at all.
    let may_overflow = token.contains(['.', 'e', 'E']) || token.len() > 308;
    (may_overflow && token.parse::<f64>().is_ok_and(f64::is_infinite)).then_some("null")
}

/// One pass over the text: `None` when it nests deeper than [`MAX_JSON_DEPTH`] (as [`text_within_depth`] finds),
/// else what its reading needs. It sees the number tokens [`as_js_numbers`] sees and every member name, so a text
/// whose reading needs nothing more is read by serde_json alone: most texts (an offer, a receipt) hold neither form.
fn scan(text: &str) -> Option<Needs> {
    let mut needs = Needs::default();
    // Whether the string just closed may be an array index, if a colon follows it: then it is a member name.
    let mut index_like = false;
    for piece in Pieces::new(text) {
        match piece {
            Piece::TooDeep => return None,
            Piece::String(content) => {
                index_like =
                    !content.is_empty() && (content.contains(&b'\\') || content.iter().all(u8::is_ascii_digit));
                continue;
            }
            Piece::Number { token, .. } => {
                needs.rewrite |= rewritten(token).is_some();
                let plain = !token.contains(['.', 'e', 'E']);
                needs.walk |= plain && token.trim_start_matches('-').len() >= 16;
            }
            Piece::Byte(b':') if index_like => needs.walk = true,
            Piece::Byte(b) if b.is_ascii_whitespace() => continue,
            Piece::Open | Piece::Byte(_) => {}
        }
        index_like = false;
    }
    Some(needs)
}

/// The text with the two number forms serde_json reads otherwise than the reference rewritten as [`rewritten`]
/// gives them: `-0` as `0`, a number past the double range as `null`. Strings are left alone; a text with neither
/// form is borrowed as it is.
fn as_js_numbers(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0usize;
    for piece in Pieces::new(text) {
        let Piece::Number { at, token } = piece else { continue };
        if let Some(rewritten) = rewritten(token) {
            let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buffer.push_str(text.get(copied..at).unwrap_or_default());
            buffer.push_str(rewritten);
            copied = at + token.len();
        }
    }
    match out {
        None => std::borrow::Cow::Borrowed(text),
        Some(mut buffer) => {
            buffer.push_str(text.get(copied..).unwrap_or_default());
            std::borrow::Cow::Owned(buffer)
        }
    }
}

fn is_array_index(key: &str) -> bool {
    let bytes = key.as_bytes();
    match bytes {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] if rest.iter().all(u8::is_ascii_digit) && bytes.len() <= 10 => {
            key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
        }
        _ => false,
    }
}

fn as_parsed_by_js(value: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                let wide = n.as_u64().map(|u| u > 1 << 53).unwrap_or(false)
                    || n.as_i64().map(|i| i < -(1 << 53)).unwrap_or(false);
                if wide && let Some(nearest) = n.as_f64().and_then(integer_of) {
                    *n = nearest;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => {
                if map.keys().any(|k| is_array_index(k)) {
                    let taken = std::mem::take(map);
                    let mut indices: Vec<(u64, String, Value)> = Vec::new();
                    let mut rest: Vec<(String, Value)> = Vec::new();
                    for (k, v) in taken {
                        match k.parse::<u64>() {
                            Ok(n) if is_array_index(&k) => indices.push((n, k, v)),
                            _ => rest.push((k, v)),
                        }
                    }
                    indices.sort_by_key(|(n, _, _)| *n);
                    for (_, k, v) in indices {
                        map.insert(k, v);
                    }
                    for (k, v) in rest {
                        map.insert(k, v);
                    }
                }
                stack.extend(map.values_mut());
            }
            _ => {}
        }
    }
}

/// An integer literal's nearest double held as the integer it is, as the reference holds it (an integer stays an
/// integer: 9007199254740993 reads as the integer 9007199254740992, never as 9007199254740992.0); a double no
/// `u64` or `i64` holds (2^64 and past) stays a double, the one form `serde_json` has for it.
fn integer_of(double: f64) -> Option<Number> {
    // Every double past 2^53 in magnitude is integral, so the casts below are exact inside the bounds checked.
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (0.0..TWO_64).contains(&double) {
        Some(Number::from(double as u64))
    } else if (-TWO_63..0.0).contains(&double) {
        Some(Number::from(double as i64))
    } else {
        Number::from_f64(double)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Which bytes of JSON text belong to string literals, fed one byte at a time: a scan outside strings needs no
    /// parser.
    #[derive(Default)]
    struct Strings {
        inside: bool,
        escaped: bool,
    }

    impl Strings {
        /// Whether `b` is part of a string literal, its quotes included.
        fn holds(&mut self, b: u8) -> bool {
            if self.inside {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.inside = false;
                }
                return true;
            }
            self.inside = b == b'"';
            self.inside
        }
    }

    /// The reading as it was before the one-pass scan, kept as the oracle: a depth scan and a number rewrite byte by
    /// byte (every token parsed), then every value walked.
    fn read_in_full(text: &str) -> Option<Value> {
        let bytes = text.as_bytes();
        let mut strings = Strings::default();
        let mut depth = 0usize;
        for &b in bytes {
            if strings.holds(b) {
                continue;
            }
            match b {
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_JSON_DEPTH {
                        return None;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        let (mut rewritten, mut at, mut copied) = (String::new(), 0usize, 0usize);
        let mut strings = Strings::default();
        while let Some(&b) = bytes.get(at) {
            if strings.holds(b) || (b != b'-' && !b.is_ascii_digit()) {
                at += 1;
                continue;
            }
            let end = at + bytes[at..].iter().take_while(|c| b"0123456789+-.eE".contains(c)).count();
            let token = &text[at..end];
            let form = if token == "-0" {
                Some("0")
            } else {
                token.parse::<f64>().ok().filter(|f| f.is_infinite()).map(|_| "null")
            };
            if let Some(form) = form {
                rewritten.push_str(&text[copied..at]);
                rewritten.push_str(form);
                copied = end;
            }
            at = end;
        }
        rewritten.push_str(&text[copied..]);
        let mut value: Value = serde_json::from_str(&rewritten).ok()?;
        as_parsed_by_js(&mut value);
        Some(value)
    }

    /// The value and its member order, which `==` on values does not see.
    fn both_ways(text: &str) -> (Option<String>, Option<String>) {
        let written = |v: Option<Value>| v.map(|v| serde_json::to_string(&v).unwrap_or_default());
        (written(parse(text)), written(read_in_full(text)))
    }

    #[test]
    fn each_form_that_needs_more_than_serde_json_is_seen() {
        for (text, rewrite, walk) in [
            (r#"{"a":[1,"x",2.5,-3e2],"b":"-0 1e999 9007199254740993"}"#, false, false),
            ("-0", true, false),
            ("[1,-0]", true, false),
            ("-0.0", false, false),
            ("1e999", true, false),
            ("-1E+400", true, false),
            ("1e308", false, false),
            (&"9".repeat(309), true, true),
            (&"9".repeat(308), false, true),
            ("9007199254740993", false, true),
            ("-900719925474099", false, false),
            ("123456789012345.5", false, false),
            (r#"{"1":2}"#, false, true),
            (r#"{"10" :2}"#, false, true),
            (r#"{"\u0031":2}"#, false, true),
            (r#"{"a1":2,"b":"1"}"#, false, false),
            (r#"["1",{"":1}]"#, false, false),
        ] {
            assert_eq!(scan(text), Some(Needs { rewrite, walk }), "{text}");
            let (fast, full) = both_ways(text);
            assert_eq!(fast, full, "{text}");
        }
        // Brackets inside strings, escaped quotes among them, do not count toward the depth.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(scan(&deep(64)).is_some() && scan(&deep(65)).is_none());
        assert!(scan(&format!("[\"\\\"{}\"]", "[".repeat(100))).is_some());
        assert!(scan(&format!("[\"\\\\\"{}]", deep(64))).is_none());
    }

    /// JSON text with the forms the readings part on: `-0`, numbers past the double range, long integers, member
    /// names of digits (escaped or not), escapes and brackets inside strings, and spaces where JSON allows them.
    fn texts() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,3})?([eE][-+]?[0-9]{1,3})?",
            Just("-0".to_owned()),
            Just("1e999".to_owned()),
            Just("-0.0".to_owned()),
        ];
        let string = "\"([a-z0-9\\[\\]{}:,]|\\\\u003[0-9]|\\\\\"|\\\\\\\\){0,6}\"";
        let leaf = prop_oneof![Just("null".to_owned()), Just("true".to_owned()), number, string];
        let space = "[ \\n]{0,1}";
        leaf.prop_recursive(6, 48, 5, move |inner| {
            let name = "\"(0|[1-9][0-9]{0,11}|01|[a-z]{1,2}|\\\\u003[0-9]|4294967295|4294967294)\"";
            prop_oneof![
                proptest::collection::vec((space, inner.clone()), 0..5).prop_map(|items| {
                    let items: Vec<String> = items.into_iter().map(|(s, v)| format!("{s}{v}")).collect();
                    format!("[{}]", items.join(","))
                }),
                proptest::collection::vec((name, space, inner), 0..5).prop_map(|members| {
                    let members: Vec<String> = members.into_iter().map(|(k, s, v)| format!("{k}{s}:{v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3_000, ..ProptestConfig::default() })]

        #[test]
        fn the_one_pass_reading_reads_every_json_text_as_the_full_reading_does(text in texts()) {
            let (fast, full) = both_ways(&text);
            prop_assert_eq!(fast, full, "{}", text);
        }

        #[test]
        fn and_every_text_that_is_not_json_alike(text in "[\\[\\]{}\":, 0-9eE.+\\-\\\\ua]{0,40}") {
            let (fast, full) = both_ways(&text);
            prop_assert_eq!(fast, full, "{}", text);
        }
    }
}
