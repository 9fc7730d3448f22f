//! The `WWW-Authenticate` field: RFC 9110's challenge grammar (section 11.6.1), read into MPP's JSON challenge
//! list. Several field values, several challenges in one value, and `Payment` beside other schemes are all read;
//! only the `Payment` challenges are kept, each with MPP's ten parameters (quoted-strings unescaped, names
//! lower-cased, unknown parameters dropped) in the order the seller wrote them.
//!
//! The reference's caps: a value of at most [`MAX_FIELD_CHARS`] UTF-16 code units and at most [`MAX_CHALLENGES`]
//! `Payment` challenges in all (`mpp/header-malformed`); a quoted-string holds no CR, LF or other control character
//! but HTAB, and no character past U+00FF (obs-text is Latin-1). A parameter repeated, or one of `id`, `realm`,
//! `method`, `intent` and `request` missing or empty, is `mpp/challenge-malformed`; a repeat is any name given twice
//! in one `Payment` challenge (case-insensitively), MPP's or not, as RFC 9110 (section 11.2) allows each name once.
//! Optional whitespace (OWS, BWS) is spaces and tabs wherever the grammar has it; the `1*SP` between a scheme and its
//! token68 or first parameter is spaces alone, as RFC 9110 writes it. Nothing else is read here: the
//! `request`, `expires` and `opaque` values are checked where a pairing reads the list.
//!
//! Why not the `mpp` crate's reader (`mpp::parse_www_authenticate_all`, tried at 0.15.1 and 0.18.2 on 2026-12-01):
//! it decodes `request` while it reads the header, so `mpp-challenge.json`'s MV9 (whose requests are `"..."`) reads
//! no challenge; and it has none of the reference's caps: 33 challenges are all read, a 17 KiB `opaque` is read
//! (its 16 KiB cap is on `request` alone), and a CR LF inside a quoted value is kept.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::json::js_length;
use crate::refusal::{Reason, Refusal};

/// The longest `WWW-Authenticate` value read, in UTF-16 code units (characters, for the ASCII a header holds).
pub const MAX_FIELD_CHARS: usize = 8192;
/// The most `Payment` challenges read, over all the values given.
pub const MAX_CHALLENGES: usize = 32;

/// MPP's challenge parameters, the only ones kept.
const PARAMS: [&str; 10] =
    ["id", "realm", "method", "intent", "request", "expires", "digest", "description", "header", "opaque"];
/// The parameters every `Payment` challenge must carry, non-empty.
const REQUIRED: [&str; 5] = ["id", "realm", "method", "intent", "request"];

/// Why `WWW-Authenticate` values could not be read as MPP challenges. Positions are byte offsets into the value;
/// `field` counts the values given from 0, `challenge` the `Payment` challenges read from 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChallengeError {
    /// A value is longer than [`MAX_FIELD_CHARS`].
    #[error("WWW-Authenticate value {field} is longer than 8192 characters")]
    FieldTooLong {
        /// The value.
        field: usize,
    },
    /// A quoted-string runs to the end of the value (or ends on a lone backslash).
    #[error("WWW-Authenticate value {field} has a quoted-string opened at byte {at} that is never closed")]
    UnterminatedQuote {
        /// The value.
        field: usize,
        /// Where the quoted-string opens.
        at: usize,
    },
    /// A quoted-string holds a character RFC 9110 does not allow there: CR, LF, another control character but HTAB,
    /// DEL, or a character past U+00FF.
    #[error("WWW-Authenticate value {field} has a character a quoted-string cannot hold at byte {at}")]
    ForbiddenCharacter {
        /// The value.
        field: usize,
        /// Where the character is.
        at: usize,
    },
    /// A value does not follow the challenge grammar elsewhere.
    #[error("WWW-Authenticate value {field} does not follow RFC 9110's challenge grammar at byte {at}")]
    Grammar {
        /// The value.
        field: usize,
        /// Where the reading stopped.
        at: usize,
    },
    /// More than [`MAX_CHALLENGES`] `Payment` challenges.
    #[error("more than 32 Payment challenges")]
    TooManyChallenges,
    /// A `Payment` challenge repeats one of MPP's parameters.
    #[error("Payment challenge {challenge} repeats the parameter {name}")]
    DuplicateParameter {
        /// The challenge.
        challenge: usize,
        /// The parameter, lower-cased.
        name: &'static str,
    },
    /// A `Payment` challenge repeats a parameter that is not one of MPP's (RFC 9110 allows each name once per
    /// challenge, whatever it is).
    #[error("Payment challenge {challenge} repeats the parameter {name}")]
    DuplicateOtherParameter {
        /// The challenge.
        challenge: usize,
        /// The parameter, lower-cased.
        name: String,
    },
    /// A `Payment` challenge lacks one of `id`, `realm`, `method`, `intent`, `request`, or has it empty.
    #[error("Payment challenge {challenge} has no {name}, or an empty one")]
    MissingParameter {
        /// The challenge.
        challenge: usize,
        /// The parameter.
        name: &'static str,
    },
}

impl ChallengeError {
    /// The refusal the reference gives: `mpp/challenge-malformed` for a challenge's own parameters, else
    /// `mpp/header-malformed`.
    pub const fn refusal(&self) -> Refusal {
        match self {
            Self::DuplicateParameter { .. } | Self::DuplicateOtherParameter { .. } | Self::MissingParameter { .. } => {
                Refusal::mpp(Reason::ChallengeMalformed)
            }
            _ => Refusal::mpp(Reason::HeaderMalformed),
        }
    }
}

/// Reads `WWW-Authenticate` field values (one per header line, or one combined value; other schemes may sit beside
/// `Payment`) into MPP's JSON challenge list, the document an MPP pairing reads: an array of objects of string
/// members, each `Payment` challenge's parameters in the order written. Pure and bounded: each value is read once,
/// left to right, with no recursion.
///
/// ```
/// # #[cfg(feature = "mpp")] {
/// let list = terms::mpp::decode_challenges(&[
///     r#"Bearer realm="x", Payment id="a", realm="api.example.com", method="evm", intent="charge", request="e30""#,
/// ])
/// .unwrap();
/// assert_eq!(list[0]["id"], "a");
/// assert_eq!(list.as_array().map(Vec::len), Some(1));
/// # }
/// ```
pub fn decode_challenges(values: &[&str]) -> Result<Value, ChallengeError> {
    let mut out: Vec<Value> = Vec::new();
    for (field, value) in values.iter().enumerate() {
        if js_length(value) > MAX_FIELD_CHARS {
            return Err(ChallengeError::FieldTooLong { field });
        }
        for parsed in Reader::new(value, field).challenges()? {
            if !parsed.scheme.eq_ignore_ascii_case("payment") {
                continue;
            }
            let challenge = out.len();
            match parsed.duplicate {
                Some(Duplicate::Mpp(name)) => return Err(ChallengeError::DuplicateParameter { challenge, name }),
                Some(Duplicate::Other(name)) => {
                    return Err(ChallengeError::DuplicateOtherParameter { challenge, name });
                }
                None => {}
            }
            let given = |name: &str| parsed.params.iter().any(|(k, v)| *k == name && !v.is_empty());
            if let Some(name) = REQUIRED.into_iter().find(|name| !given(name)) {
                return Err(ChallengeError::MissingParameter { challenge, name });
            }
            let params: Map<String, Value> =
                parsed.params.into_iter().map(|(k, v)| (k.to_owned(), Value::String(v))).collect();
            out.push(Value::Object(params));
            if out.len() > MAX_CHALLENGES {
                return Err(ChallengeError::TooManyChallenges);
            }
        }
    }
    Ok(Value::Array(out))
}

/// The first parameter name a challenge repeats: one of MPP's, or another (lower-cased).
enum Duplicate {
    Mpp(&'static str),
    Other(String),
}

/// One challenge of a value: its scheme, MPP's parameters it carries, the other names it carries (lower-cased), and
/// the first name it repeats.
struct Parsed<'s> {
    scheme: &'s str,
    params: Vec<(&'static str, String)>,
    others: HashSet<String>,
    duplicate: Option<Duplicate>,
}

impl<'s> Parsed<'s> {
    fn new(scheme: &'s str) -> Self {
        Self { scheme, params: Vec::new(), others: HashSet::new(), duplicate: None }
    }

    /// Keeps the parameter when it is one of MPP's, noting a repeat of any name (names are case-insensitive, and
    /// RFC 9110 allows each once per challenge). Only a `Payment` challenge's names are noted: another scheme's
    /// parameters are not read.
    fn add(&mut self, name: &str, value: String) {
        if !self.scheme.eq_ignore_ascii_case("payment") {
            return;
        }
        let repeat = if let Some(known) = PARAMS.into_iter().find(|p| p.eq_ignore_ascii_case(name)) {
            if !self.params.iter().any(|(k, _)| *k == known) {
                self.params.push((known, value));
                return;
            }
            Duplicate::Mpp(known)
        } else {
            let lower = name.to_ascii_lowercase();
            if !self.others.contains(&lower) {
                self.others.insert(lower);
                return;
            }
            Duplicate::Other(lower)
        };
        self.duplicate.get_or_insert(repeat);
    }
}

/// RFC 9110's `tchar`.
const fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        )
}

/// RFC 9110's `token68` characters, before the trailing `=`s.
const fn is_token68(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
}

/// A character a quoted-string may hold as itself (`qdtext`) or escaped (`quoted-pair`, which also takes `"` and
/// `\`): HTAB, SP, visible ASCII, and obs-text, read as the Latin-1 range U+0080 to U+00FF.
fn is_qdtext(c: char, escaped: bool) -> bool {
    matches!(c, '\t' | ' ' | '!' | '#'..='~' | '\u{80}'..='\u{ff}') || (escaped && c == '"')
}

/// A cursor over one field value.
struct Reader<'s> {
    s: &'s str,
    b: &'s [u8],
    i: usize,
    field: usize,
}

impl<'s> Reader<'s> {
    fn new(s: &'s str, field: usize) -> Self {
        Self { s, b: s.as_bytes(), i: 0, field }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    fn grammar(&self) -> ChallengeError {
        ChallengeError::Grammar { field: self.field, at: self.i }
    }

    /// OWS: spaces and tabs.
    fn ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// A token, or `None` (nothing consumed) when none starts here.
    fn token(&mut self) -> Option<&'s str> {
        let start = self.i;
        while self.peek().is_some_and(is_tchar) {
            self.i += 1;
        }
        (self.i > start).then(|| self.s.get(start..self.i).unwrap_or_default())
    }

    /// Whether `BWS "=" BWS (token / quoted-string)` follows, without consuming it: what makes the token before it a
    /// parameter name rather than a scheme.
    fn param_follows(&self) -> bool {
        let skip = |mut j: usize| {
            while matches!(self.b.get(j), Some(b' ' | b'\t')) {
                j += 1;
            }
            j
        };
        let j = skip(self.i);
        if self.b.get(j) != Some(&b'=') {
            return false;
        }
        self.b.get(skip(j + 1)).is_some_and(|&c| c == b'"' || is_tchar(c))
    }

    /// A quoted-string, the cursor on its opening quote: its value unescaped.
    fn quoted(&mut self) -> Result<String, ChallengeError> {
        let open = self.i;
        self.i += 1;
        let unterminated = ChallengeError::UnterminatedQuote { field: self.field, at: open };
        let mut value = String::new();
        loop {
            let Some(c) = self.s.get(self.i..).and_then(|rest| rest.chars().next()) else { return Err(unterminated) };
            match c {
                '"' => {
                    self.i += 1;
                    return Ok(value);
                }
                '\\' => {
                    let at = self.i + 1;
                    let Some(e) = self.s.get(at..).and_then(|rest| rest.chars().next()) else {
                        return Err(unterminated);
                    };
                    if !is_qdtext(e, true) {
                        return Err(ChallengeError::ForbiddenCharacter { field: self.field, at });
                    }
                    value.push(e);
                    self.i = at + e.len_utf8();
                }
                c if is_qdtext(c, false) => {
                    value.push(c);
                    self.i += c.len_utf8();
                }
                _ => return Err(ChallengeError::ForbiddenCharacter { field: self.field, at: self.i }),
            }
        }
    }

    /// After a parameter's name: `BWS "=" BWS (token / quoted-string)`, then the end of the list element.
    fn param_value(&mut self) -> Result<String, ChallengeError> {
        self.ows();
        self.i += 1; // the `=` that `param_follows` saw
        self.ows();
        let value = if self.peek() == Some(b'"') {
            self.quoted()?
        } else {
            self.token().ok_or_else(|| self.grammar())?.to_owned()
        };
        self.element_end()?;
        Ok(value)
    }

    /// OWS, then a comma (left for the list loop) or the end.
    fn element_end(&mut self) -> Result<(), ChallengeError> {
        self.ows();
        if self.at_end() || self.peek() == Some(b',') { Ok(()) } else { Err(self.grammar()) }
    }

    /// The value's challenges: `#challenge`, where a list element is a new challenge (a scheme, then one space or
    /// more and a token68 or its first parameter) or one more parameter of the challenge before it.
    fn challenges(mut self) -> Result<Vec<Parsed<'s>>, ChallengeError> {
        let mut out: Vec<Parsed<'s>> = Vec::new();
        loop {
            while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
                self.i += 1;
            }
            if self.at_end() {
                return Ok(out);
            }
            let name = self.token().ok_or_else(|| self.grammar())?;
            if self.param_follows() {
                if out.is_empty() {
                    return Err(self.grammar());
                }
                let value = self.param_value()?;
                if let Some(current) = out.last_mut() {
                    current.add(name, value);
                }
                continue;
            }
            out.push(Parsed::new(name));
            // A bare scheme: OWS (spaces and tabs), then the list's comma or the end.
            let after = self.i;
            self.ows();
            if self.at_end() || self.peek() == Some(b',') {
                continue;
            }
            self.i = after;
            // Else `1*SP` (RFC 9110's challenge rule: spaces alone, no tab) and a token68 or the first parameter.
            if self.peek() != Some(b' ') {
                return Err(self.grammar());
            }
            while self.peek() == Some(b' ') {
                self.i += 1;
            }
            if self.at_end() || self.peek() == Some(b',') {
                continue;
            }
            let start = self.i;
            if let Some(first) = self.token()
                && self.param_follows()
            {
                let value = self.param_value()?;
                if let Some(current) = out.last_mut() {
                    current.add(first, value);
                }
                continue;
            }
            self.i = start;
            while self.peek().is_some_and(is_token68) {
                self.i += 1;
            }
            while self.peek() == Some(b'=') {
                self.i += 1;
            }
            if self.i == start {
                return Err(self.grammar());
            }
            self.element_end()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ids(values: &[&str]) -> Vec<String> {
        let list = decode_challenges(values).unwrap();
        list.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_owned()).collect()
    }

    const ONE: &str = r#"Payment id="a", realm="r", method="evm", intent="charge", request="e30""#;

    #[test]
    fn payment_challenges_are_read_beside_other_schemes() {
        let value = format!(
            r#"Basic realm="x", {ONE}, Bearer abc==, Newauth realm="apps", type=1, Payment ID=b, REALM="r", method=evm, intent=charge, request=e30"#
        );
        assert_eq!(ids(&[&value]), ["a", "b"]);
        assert_eq!(ids(&["Bearer", ONE, "Negotiate abc"]), ["a"]);
        let list = decode_challenges(&[ONE]).unwrap();
        assert_eq!(list, json!([{"id": "a", "realm": "r", "method": "evm", "intent": "charge", "request": "e30"}]));
    }

    #[test]
    fn quoted_strings_are_unescaped_and_unknown_parameters_dropped() {
        let value =
            format!("{ONE}, description=\"say \\\"hi\\\" \\\\ caf\u{e9}\", x-other=\"y\", digest = \"sha-256=:a:\"");
        let list = decode_challenges(&[&value]).unwrap();
        assert_eq!(list[0]["description"], "say \"hi\" \\ caf\u{e9}");
        assert_eq!(list[0]["digest"], "sha-256=:a:");
        assert!(list[0].get("x-other").is_none());
        // A comma or a scheme name inside a quoted-string is text.
        let value = format!(r#"{ONE}, description="x, Payment id=y""#);
        assert_eq!(ids(&[&value]), ["a"]);
    }

    #[test]
    fn the_grammar_is_held() {
        for (bad, want) in [
            (r#"Payment id="a" realm="r""#, "grammar"),
            (r#"Payment	id="a""#, "grammar"),
            (r#"id="a""#, "grammar"),
            (r#"Payment id="a", realm="#, "grammar"),
            (r#"Payment id="a"#, "unterminated"),
            ("Payment id=\"a\\", "unterminated"),
            ("Payment id=\"a\rb\"", "forbidden"),
            ("Payment id=\"a\\\nb\"", "forbidden"),
            ("Payment id=\"\u{20ac}\"", "forbidden"),
            ("Payment a b", "grammar"),
            ("@", "grammar"),
        ] {
            let got = decode_challenges(&[bad]).unwrap_err();
            let kind = match got {
                ChallengeError::Grammar { .. } => "grammar",
                ChallengeError::UnterminatedQuote { .. } => "unterminated",
                ChallengeError::ForbiddenCharacter { .. } => "forbidden",
                _ => "other",
            };
            assert_eq!(kind, want, "{bad:?}: {got}");
            assert_eq!(got.refusal().code(), "mpp/header-malformed");
        }
    }

    #[test]
    fn the_caps_hold() {
        let many = vec![ONE; 32].join(", ");
        assert_eq!(ids(&[&many]).len(), 32);
        let split: Vec<&str> = vec![ONE; 33];
        assert_eq!(decode_challenges(&split), Err(ChallengeError::TooManyChallenges));
        let long = format!("{ONE}, description=\"{}\"", "x".repeat(MAX_FIELD_CHARS));
        assert_eq!(decode_challenges(&[ONE, &long]), Err(ChallengeError::FieldTooLong { field: 1 }));
        let exact = format!("{ONE}, description=\"{}\"", "x".repeat(MAX_FIELD_CHARS - ONE.len() - 16));
        assert_eq!(js_length(&exact), MAX_FIELD_CHARS);
        assert!(decode_challenges(&[&exact]).is_ok());
    }
}
