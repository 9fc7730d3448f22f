//! The seller's discovery document (LCP §2), served at `/.well-known/legal-context.json`: where its terms are, their
//! format, the ATR hash it lists for them, whether it requires signed acceptance, its dispute resolution, returns
//! and contacts.
//!
//! [`parse`] reads one and [`emit`] writes one, as the reference's protocol package does: one UTF-8 JSON object of at
//! most [`MAX_DOCUMENT_BYTES`], nested at most [`MAX_JSON_DEPTH`](crate::json::MAX_JSON_DEPTH) deep, its members
//! checked in the order of LCP §2.4–§2.5's tables and the first fault refused ([`DiscoveryRefusal`], the reference's
//! `discovery/<reason>` codes). A member LCP does not name is left out of the document and named in
//! [`Parsed::ignored`] by its dotted path. Both are synchronous and do no I/O; [`fetch`] reads the document from an
//! origin under the gate's fetch rules.
//!
//! A discovery listing is never a confirmation. Its `atrHash` is what the seller lists for its terms today; the H a
//! payment carries is the one its offer advertises, and the gate compares that H with the bytes its link serves.
//! [`Discovered::differs_from`] says when the two disagree, for a person to see.
//!
//! ```
//! use terms::discovery::{DiscoveryRefusal, parse};
//!
//! let parsed = parse(br#"{"terms":"https://seller.example/t.md","acceptanceRequired":true,"x-pad":1}"#)?;
//! assert_eq!(parsed.document.acceptance_required, Some(true));
//! assert_eq!(parsed.ignored, ["x-pad"]);
//! assert_eq!(parse(br#"{"terms":"http://seller.example/t.md"}"#).unwrap_err().code(), "discovery/terms-not-https");
//! # Ok::<(), DiscoveryRefusal>(())
//! ```

mod fetch;

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::hash::AtrHash;
use crate::link::is_https_link;

pub use fetch::{Discovered, DiscoveryError, Found, discovery_url, fetch};

/// Where an origin serves its discovery document (LCP §2.1).
pub const WELL_KNOWN_PATH: &str = "/.well-known/legal-context.json";

/// The largest discovery document read or written: 65,536 bytes (exactly that many is accepted).
pub const MAX_DOCUMENT_BYTES: usize = 65_536;

/// Why a discovery document is refused: the reference's `discovery/<reason>` code ([`DiscoveryRefusal::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiscoveryRefusal {
    /// More than [`MAX_DOCUMENT_BYTES`] bytes: `discovery/too-large`.
    TooLarge,
    /// Not one JSON object in UTF-8 (not JSON, another JSON value, a byte order mark, invalid UTF-8, nested past the
    /// cap): `discovery/not-json-object`.
    NotJsonObject,
    /// No `terms` member: `discovery/terms-missing`.
    TermsMissing,
    /// `terms` is a string but not an absolute https URL: `discovery/terms-not-https`.
    TermsNotHttps,
    /// `atrHash` is not `0x` and 64 hex digits: `discovery/atr-hash-malformed`.
    AtrHashMalformed,
    /// `disputeResolution.clauseId` is not `sha256:0x` and 64 hex digits: `discovery/clause-id-malformed`.
    ClauseIdMalformed,
    /// A member LCP names is of the wrong type, or an empty string: `discovery/member-malformed/<dotted path>`.
    MemberMalformed(&'static str),
}

impl DiscoveryRefusal {
    /// The code as the reference writes it, e.g. `discovery/member-malformed/contact.legal`.
    pub fn code(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for DiscoveryRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = match self {
            Self::TooLarge => "too-large",
            Self::NotJsonObject => "not-json-object",
            Self::TermsMissing => "terms-missing",
            Self::TermsNotHttps => "terms-not-https",
            Self::AtrHashMalformed => "atr-hash-malformed",
            Self::ClauseIdMalformed => "clause-id-malformed",
            Self::MemberMalformed(path) => return write!(f, "discovery/member-malformed/{path}"),
        };
        write!(f, "discovery/{reason}")
    }
}

impl std::error::Error for DiscoveryRefusal {}

/// A discovery document's members (LCP §2.4–§2.5), in the order of its tables; an absent member is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegalContextDocument {
    /// The absolute https URL of the terms document.
    pub terms: String,
    /// The terms' format token (`markdown`, `json`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms_format: Option<String>,
    /// The ATR hash the seller lists for the terms at `terms` (written in lower case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atr_hash: Option<AtrHash>,
    /// Whether the seller requires signed acceptance of the terms before transacting (LCP §3, Level 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance_required: Option<bool>,
    /// How disputes are resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispute_resolution: Option<DisputeResolution>,
    /// Where the returns policy is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    /// Whom to contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<Contact>,
    /// The entry point to richer legal functionality.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

/// A discovery document's `disputeResolution` (LCP §2.5).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DisputeResolution {
    /// The method (e.g. an arbitration service's rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The jurisdiction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jurisdiction: Option<String>,
    /// Whom to contact about a dispute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
    /// The clause's digest, `sha256:0x` and 64 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clause_id: Option<String>,
    /// Where the clause is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The dispute service's catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<String>,
}

/// A discovery document's `contact` (LCP §2.5).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Contact {
    /// The legal contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal: Option<String>,
    /// The technical contact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technical: Option<String>,
}

impl LegalContextDocument {
    /// The document with only its `terms`.
    pub fn new(terms: impl Into<String>) -> Self {
        Self {
            terms: terms.into(),
            terms_format: None,
            atr_hash: None,
            acceptance_required: None,
            dispute_resolution: None,
            returns: None,
            contact: None,
            api: None,
        }
    }

    /// The document's bytes as [`emit`] writes them (its members checked again: a value built by hand may break a
    /// rule the parser holds to).
    pub fn to_bytes(&self) -> Result<Vec<u8>, DiscoveryRefusal> {
        emit(&serde_json::to_value(self).map_err(|_| DiscoveryRefusal::NotJsonObject)?)
    }
}

/// A discovery document read: its members, and the dotted paths of the members LCP does not name, in the order
/// they appear (left out of the document, as LCP §2.5 says a reader should ignore them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Parsed {
    /// The members LCP names, checked.
    pub document: LegalContextDocument,
    /// The members it does not, by dotted path (`x-custom`, `contact.phone`).
    pub ignored: Vec<String>,
}

/// What a member of the tables holds.
enum Kind {
    /// `terms`: a string that is an absolute https URL.
    Terms,
    /// A non-empty string.
    Text,
    /// `atrHash`: `0x` and 64 hex digits, kept in lower case.
    Hash,
    /// A boolean.
    Flag,
    /// `clauseId`: `sha256:0x` and 64 hex digits.
    Clause,
    /// An object of these members.
    Object(&'static [Member]),
}

/// One member of LCP §2.4–§2.5's tables: its name, its dotted path, what it holds.
struct Member(&'static str, &'static str, Kind);

const DISPUTE: &[Member] = &[
    Member("method", "disputeResolution.method", Kind::Text),
    Member("jurisdiction", "disputeResolution.jurisdiction", Kind::Text),
    Member("contact", "disputeResolution.contact", Kind::Text),
    Member("clauseId", "disputeResolution.clauseId", Kind::Clause),
    Member("source", "disputeResolution.source", Kind::Text),
    Member("catalog", "disputeResolution.catalog", Kind::Text),
];

const CONTACT: &[Member] =
    &[Member("legal", "contact.legal", Kind::Text), Member("technical", "contact.technical", Kind::Text)];

const DOCUMENT: &[Member] = &[
    Member("terms", "terms", Kind::Terms),
    Member("termsFormat", "termsFormat", Kind::Text),
    Member("atrHash", "atrHash", Kind::Hash),
    Member("acceptanceRequired", "acceptanceRequired", Kind::Flag),
    Member("disputeResolution", "disputeResolution", Kind::Object(DISPUTE)),
    Member("returns", "returns", Kind::Text),
    Member("contact", "contact", Kind::Object(CONTACT)),
    Member("api", "api", Kind::Text),
];

/// The members of `o` the table names, checked, in table order (`atrHash` in lower case), or the first refusal in
/// table order. Members the table does not name are left out.
fn check(o: &Map<String, Value>, members: &'static [Member]) -> Result<Map<String, Value>, DiscoveryRefusal> {
    let mut out = Map::new();
    for Member(name, path, kind) in members {
        let Some(v) = o.get(*name) else {
            if matches!(kind, Kind::Terms) {
                return Err(DiscoveryRefusal::TermsMissing);
            }
            continue;
        };
        let malformed = DiscoveryRefusal::MemberMalformed(path);
        let checked = match kind {
            Kind::Terms => {
                let terms = v.as_str().ok_or(malformed)?;
                if !is_https_link(terms) {
                    return Err(DiscoveryRefusal::TermsNotHttps);
                }
                v.clone()
            }
            Kind::Hash => {
                let h = v.as_str().and_then(AtrHash::parse).ok_or(DiscoveryRefusal::AtrHashMalformed)?;
                Value::String(h.to_hex())
            }
            Kind::Clause => {
                let clause = v.as_str().and_then(|c| c.strip_prefix("sha256:")).and_then(AtrHash::parse);
                clause.ok_or(DiscoveryRefusal::ClauseIdMalformed)?;
                v.clone()
            }
            Kind::Flag => Value::Bool(v.as_bool().ok_or(malformed)?),
            Kind::Text => match v.as_str() {
                Some(text) if !text.is_empty() => v.clone(),
                _ => return Err(malformed),
            },
            Kind::Object(inner) => Value::Object(check(v.as_object().ok_or(malformed)?, inner)?),
        };
        out.insert((*name).to_owned(), checked);
    }
    Ok(out)
}

/// Pushes the dotted paths of the members of `o` the table does not name, in the order they appear.
fn unknown(o: &Map<String, Value>, members: &'static [Member], prefix: &str, into: &mut Vec<String>) {
    for (name, v) in o {
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        match members.iter().find(|m| m.0 == name) {
            None => into.push(path),
            Some(Member(_, _, Kind::Object(inner))) => {
                if let Some(v) = v.as_object() {
                    unknown(v, inner, &path, into);
                }
            }
            Some(_) => {}
        }
    }
}

/// The document of members [`check`] passed.
fn typed(c: &Map<String, Value>) -> Result<LegalContextDocument, DiscoveryRefusal> {
    fn text(o: &Map<String, Value>, name: &str) -> Option<String> {
        o.get(name).and_then(Value::as_str).map(str::to_owned)
    }
    let terms = text(c, "terms").ok_or(DiscoveryRefusal::TermsMissing)?;
    let dispute_resolution = c.get("disputeResolution").and_then(Value::as_object).map(|d| DisputeResolution {
        method: text(d, "method"),
        jurisdiction: text(d, "jurisdiction"),
        contact: text(d, "contact"),
        clause_id: text(d, "clauseId"),
        source: text(d, "source"),
        catalog: text(d, "catalog"),
    });
    let contact = c
        .get("contact")
        .and_then(Value::as_object)
        .map(|o| Contact { legal: text(o, "legal"), technical: text(o, "technical") });
    Ok(LegalContextDocument {
        terms,
        terms_format: text(c, "termsFormat"),
        atr_hash: c.get("atrHash").and_then(Value::as_str).and_then(AtrHash::parse),
        acceptance_required: c.get("acceptanceRequired").and_then(Value::as_bool),
        dispute_resolution,
        returns: text(c, "returns"),
        contact,
        api: text(c, "api"),
    })
}

/// Reads a discovery document: at most [`MAX_DOCUMENT_BYTES`], one JSON object in UTF-8 (no byte order mark, a
/// repeated member read as its last value, as `JSON.parse` reads it), its members checked as LCP §2 states.
pub fn parse(bytes: &[u8]) -> Result<Parsed, DiscoveryRefusal> {
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(DiscoveryRefusal::TooLarge);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| DiscoveryRefusal::NotJsonObject)?;
    let value = crate::json::parse(text).ok_or(DiscoveryRefusal::NotJsonObject)?;
    let object = value.as_object().ok_or(DiscoveryRefusal::NotJsonObject)?;
    let checked = check(object, DOCUMENT)?;
    let mut ignored = Vec::new();
    unknown(object, DOCUMENT, "", &mut ignored);
    Ok(Parsed { document: typed(&checked)?, ignored })
}

/// Writes a discovery document from a JSON object: its members checked as [`parse`] checks them, written in table
/// order with no whitespace (strings escaped as `JSON.stringify` escapes them, UTF-8), `atrHash` in lower case, and
/// no other member; at most [`MAX_DOCUMENT_BYTES`].
pub fn emit(document: &Value) -> Result<Vec<u8>, DiscoveryRefusal> {
    let object = document.as_object().ok_or(DiscoveryRefusal::NotJsonObject)?;
    let checked = Value::Object(check(object, DOCUMENT)?);
    let text = crate::json::to_js_string(&checked).ok_or(DiscoveryRefusal::NotJsonObject)?;
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(DiscoveryRefusal::TooLarge);
    }
    Ok(text.into_bytes())
}
