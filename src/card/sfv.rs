//! The part of RFC 9651 (Structured Field Values) TAP's two signature fields need: a Dictionary whose members are
//! Items or Inner Lists, of Integers, Strings, Tokens, Booleans and Byte Sequences, with parameters. A Decimal, a Date
//! or a Display String fails the parse, as the reference's reader fails them. A repeated key keeps its first place
//! and takes the later value (RFC 9651 §4.2.2).
//!
//! Not the `sfv` crate: its 0.16 needs Rust 1.95 (the crate's is 1.88), and its rules are not the reference's. It
//! decodes a Byte Sequence's base64, where the reference only holds it to the base64 alphabet (`:a:` is a Signature
//! the reference reads); it reads Decimals, Dates and Display Strings, which the reference fails; and it counts a
//! dictionary's members once parsed and deduplicated, where the reference's bounds (16 members, 32 items) count every
//! member and item written, as it reads them.

use indexmap::IndexMap;

/// A bare item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Bare {
    /// An Integer of at most 15 digits.
    Integer(i64),
    /// A String (printable ASCII).
    String(String),
    /// A Token.
    Token(String),
    /// A Boolean.
    Boolean(bool),
    /// A Byte Sequence, its base64 text as written (never decoded).
    Bytes(String),
}

/// Parameters, in the order first written.
pub(crate) type Params = IndexMap<String, Bare>;

/// An Item and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub(crate) bare: Bare,
    pub(crate) params: Params,
}

/// A Dictionary member: an Item, or an Inner List of Items with its own parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Member {
    Item(Item),
    InnerList(Vec<Item>, Params),
}

impl Member {
    /// The member's own parameters.
    pub(crate) fn params(&self) -> &Params {
        match self {
            Self::Item(item) => &item.params,
            Self::InnerList(_, params) => params,
        }
    }
}

/// Why a dictionary was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SfvError {
    /// Not a Dictionary of the subset read.
    Malformed,
    /// More members, or more items in an inner list, than the bounds allow.
    TooLarge,
}

const TOKEN_EXTRA: &[u8] = b":/!#$%&'*+-.^_`|~";

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    max_members: usize,
    max_items: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, set: &[u8]) {
        while self.peek().is_some_and(|b| set.contains(&b)) {
            self.i += 1;
        }
    }

    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> String {
        let start = self.i;
        while self.peek().is_some_and(&keep) {
            self.i += 1;
        }
        String::from_utf8_lossy(self.s.get(start..self.i).unwrap_or_default()).into_owned()
    }

    fn key(&mut self) -> Option<String> {
        let first = self.peek()?;
        if !(first.is_ascii_lowercase() || first == b'*') {
            return None;
        }
        Some(self.take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b)))
    }

    fn bare(&mut self) -> Option<Bare> {
        let c = self.peek()?;
        match c {
            b'-' | b'0'..=b'9' => {
                let negative = c == b'-';
                if negative {
                    self.i += 1;
                }
                let digits = self.take_while(|b| b.is_ascii_digit());
                if digits.is_empty() || digits.len() > 15 || self.peek() == Some(b'.') {
                    return None;
                }
                let value: i64 = digits.parse().ok()?;
                Some(Bare::Integer(if negative { -value } else { value }))
            }
            b'"' => {
                self.i += 1;
                let mut value = String::new();
                loop {
                    let d = self.peek()?;
                    self.i += 1;
                    match d {
                        b'\\' => {
                            let e = self.peek().filter(|e| matches!(e, b'"' | b'\\'))?;
                            self.i += 1;
                            value.push(char::from(e));
                        }
                        b'"' => return Some(Bare::String(value)),
                        0x20..=0x7e => value.push(char::from(d)),
                        _ => return None,
                    }
                }
            }
            b'*' | b'A'..=b'Z' | b'a'..=b'z' => {
                Some(Bare::Token(self.take_while(|b| b.is_ascii_alphanumeric() || TOKEN_EXTRA.contains(&b))))
            }
            b':' => {
                self.i += 1;
                let text = self.take_while(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
                if self.peek() != Some(b':') {
                    return None;
                }
                self.i += 1;
                Some(Bare::Bytes(text))
            }
            b'?' => {
                let b = self.s.get(self.i + 1).copied().filter(|b| matches!(b, b'0' | b'1'))?;
                self.i += 2;
                Some(Bare::Boolean(b == b'1'))
            }
            _ => None,
        }
    }

    fn params(&mut self) -> Option<Params> {
        let mut params = Params::new();
        while self.peek() == Some(b';') {
            self.i += 1;
            self.skip(b" ");
            let key = self.key()?;
            let value = if self.peek() == Some(b'=') {
                self.i += 1;
                self.bare()?
            } else {
                Bare::Boolean(true)
            };
            params.insert(key, value);
        }
        Some(params)
    }

    fn item(&mut self) -> Option<Item> {
        let bare = self.bare()?;
        Some(Item { bare, params: self.params()? })
    }

    fn inner_list(&mut self) -> Result<Member, SfvError> {
        self.i += 1;
        let mut items = Vec::new();
        while self.peek().is_some() {
            self.skip(b" ");
            if self.peek() == Some(b')') {
                self.i += 1;
                let params = self.params().ok_or(SfvError::Malformed)?;
                return Ok(Member::InnerList(items, params));
            }
            if items.len() >= self.max_items {
                return Err(SfvError::TooLarge);
            }
            items.push(self.item().ok_or(SfvError::Malformed)?);
            if !matches!(self.peek(), Some(b' ' | b')')) {
                return Err(SfvError::Malformed);
            }
        }
        Err(SfvError::Malformed)
    }

    fn dictionary(&mut self) -> Result<IndexMap<String, Member>, SfvError> {
        let mut out = IndexMap::new();
        let mut members = 0usize;
        self.skip(b" ");
        while self.peek().is_some() {
            if members >= self.max_members {
                return Err(SfvError::TooLarge);
            }
            members += 1;
            let key = self.key().ok_or(SfvError::Malformed)?;
            let member = if self.peek() == Some(b'=') {
                self.i += 1;
                if self.peek() == Some(b'(') {
                    self.inner_list()?
                } else {
                    Member::Item(self.item().ok_or(SfvError::Malformed)?)
                }
            } else {
                Member::Item(Item { bare: Bare::Boolean(true), params: self.params().ok_or(SfvError::Malformed)? })
            };
            out.insert(key, member);
            self.skip(b" \t");
            if self.peek().is_none() {
                return Ok(out);
            }
            if self.peek() != Some(b',') {
                return Err(SfvError::Malformed);
            }
            self.i += 1;
            self.skip(b" \t");
            if self.peek().is_none() {
                return Err(SfvError::Malformed);
            }
        }
        Ok(out)
    }
}

/// The Dictionary the text holds, read with at most `max_members` members written and `max_items` items in any
/// inner list. Any byte outside the grammar (a non-ASCII one included) fails.
pub(crate) fn parse_dictionary(
    text: &str,
    max_members: usize,
    max_items: usize,
) -> Result<IndexMap<String, Member>, SfvError> {
    Parser { s: text.as_bytes(), i: 0, max_members, max_items }.dictionary()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<IndexMap<String, Member>, SfvError> {
        parse_dictionary(text, 16, 32)
    }

    #[test]
    fn reads_a_signature_input() {
        let d = parse(r#"sig1=("@authority" "lcp-hash");created=1790000000;tag="agent-payer-auth";x=?0, b=:ab+/=:"#)
            .unwrap();
        let Member::InnerList(items, params) = &d["sig1"] else { panic!("inner list") };
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].bare, Bare::String("lcp-hash".into()));
        assert_eq!(params["created"], Bare::Integer(1_790_000_000));
        assert_eq!(params["tag"], Bare::String("agent-payer-auth".into()));
        assert_eq!(params["x"], Bare::Boolean(false));
        assert_eq!(d["b"], Member::Item(Item { bare: Bare::Bytes("ab+/=".into()), params: Params::new() }));
        assert_eq!(parse("a, b;c=tok*/x").unwrap()["b"].params()["c"], Bare::Token("tok*/x".into()));
        assert_eq!(parse("").unwrap().len(), 0);
        let repeated = parse("a=1, b=2, a=3").unwrap();
        assert_eq!(repeated.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(repeated["a"], Member::Item(Item { bare: Bare::Integer(3), params: Params::new() }));
    }

    #[test]
    fn fails_what_the_reference_fails() {
        for text in [
            "a=1.5",
            "a=@1790000000",
            r#"a=%"x""#,
            "A=1",
            "a=1,",
            "a=1;",
            r#"a="\n""#,
            "a=(1 2",
            "a=(1,2)",
            "a=1234567890123456",
            "a=:abc",
            "a=é",
            "a=1 b=2",
            "a=?2",
        ] {
            assert_eq!(parse(text), Err(SfvError::Malformed), "{text}");
        }
        let members: Vec<String> = (0..17).map(|i| format!("k{i}=1")).collect();
        assert_eq!(parse(&members.join(", ")), Err(SfvError::TooLarge));
        assert!(parse(&members[..16].join(", ")).is_ok());
        let items = vec!["1"; 33].join(" ");
        assert_eq!(parse(&format!("a=({items})")), Err(SfvError::TooLarge));
    }
}
