//! The LCP extension for A2A: the ATR hash H and the link to the seller's copy, delivered in an A2A task's
//! `metadata` under the extension's URI ([`EXTENSION_URIS`]). A2A signs nothing per transaction, so this is a carrier
//! and no pairing: wherever an A2A pairing is asked for, the answer is [`BINDING`] (`a2a/no-signed-place`), and a
//! delivery proves nothing about a payment ([`DELIVERY_PROVES`]).
//!
//! The agent card lists the extension ([`agent_extension`]); a client activates it with the `A2A-Extensions` request
//! header ([`requested`]); the seller's agent [`place`]s H and the link in the task it answers; the buyer's agent
//! [`read`]s them back, or [`confirm_task`]s them: one fetch of the link under the gate's rules and the SHA-256 of
//! the bytes compared with H, as the gate confirms an offer's terms. Everything but `confirm_task` is synchronous
//! and does no I/O.
//!
//! ```
//! use serde_json::json;
//! use terms::a2a;
//!
//! let h = "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
//! let link = format!("https://atr.seller.example/{h}");
//! let task = a2a::place(&json!({"id": "task-1"}), h, &link, None)?;
//! let read = a2a::read(&task)?;
//! assert_eq!((read.h.to_hex().as_str(), read.link.as_str()), (h, link.as_str()));
//! assert!(a2a::requested(Some("https://integraledger.com/lcp/a2a/legal-context/v1")));
//! # Ok::<(), terms::Refusal>(())
//! ```

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::decline::{DeclineCode, Declined};
use crate::fetch::Fetch;
use crate::gate::atr::fetch_atr;
use crate::hash::{AtrHash, atr_hash};
use crate::json::{exact_string, js_length, same_json, to_js_string};
use crate::legal_context::{hash_with_non_https_link, legal_context_info};
use crate::link::{MAX_LINK_CHARS, is_https_link, is_other_scheme_link};
use crate::refusal::{Reason, Refusal};

/// The extension's URIs, in order of preference; the first is the one [`place`] writes under when the request
/// activated none.
pub const EXTENSION_URIS: &[&str] = &["https://integraledger.com/lcp/a2a/legal-context/v1"];

/// A2A binds nothing: the refusal wherever an A2A pairing is asked for.
pub const BINDING: Refusal = Refusal::new("a2a", Reason::NoSignedPlace);

/// What a delivery in task metadata proves.
pub const DELIVERY_PROVES: &str = "Delivered in A2A task metadata under the LCP extension's URI, protected only by \
    the transport and the request's authentication. A2A signs nothing per transaction, so this proves nothing about \
    the payment; the payment's own pairing states what its record proves.";

const DESCRIPTION: &str = "Delivers the ATR hash and the link to the seller's copy in task metadata, keyed by this \
    URI. Delivery only: A2A signs nothing per transaction.";

/// The longest `A2A-Extensions` value read, in UTF-16 code units; a longer one activates nothing.
const MAX_HEADER: usize = 8192;
/// The most comma-separated elements an `A2A-Extensions` value may have; more activate nothing.
const MAX_ELEMENTS: usize = 64;
/// The largest value under the URI, as UTF-8 bytes of its JSON.
const MAX_VALUE_BYTES: usize = 4096;

fn refused(reason: Reason) -> Refusal {
    Refusal::new("a2a", reason)
}

/// One Agent Card `capabilities.extensions[]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AgentExtension {
    /// The extension's URI.
    pub uri: &'static str,
    /// What it delivers.
    pub description: &'static str,
    /// Whether the agent requires clients to activate it.
    pub required: bool,
}

/// The Agent Card entries of the extension, one per listed URI (`required` as given; the reference's default is
/// `false`).
pub fn agent_extension(required: bool) -> Vec<AgentExtension> {
    EXTENSION_URIS.iter().map(|uri| AgentExtension { uri, description: DESCRIPTION, required }).collect()
}

/// The first listed URI the `A2A-Extensions` value names, or `None`: the value split on commas, each element
/// trimmed of spaces and tabs and compared case-sensitively; a value over 8 KiB or of more than 64 elements names
/// none.
fn activated(a2a_extensions: Option<&str>) -> Option<&'static str> {
    let value = a2a_extensions.filter(|v| js_length(v) <= MAX_HEADER)?;
    if value.split(',').count() > MAX_ELEMENTS {
        return None;
    }
    let named: Vec<&str> = value.split(',').map(|e| e.trim_matches([' ', '\t'])).collect();
    EXTENSION_URIS.iter().copied().find(|uri| named.contains(uri))
}

/// Whether the request's `A2A-Extensions` header value (`None` when the request has none) activates the extension.
pub fn requested(a2a_extensions: Option<&str>) -> bool {
    activated(a2a_extensions).is_some()
}

/// The UTF-8 length of the value's JSON as `JSON.stringify` writes it.
fn json_bytes(value: &Value) -> usize {
    to_js_string(value).unwrap_or_else(|| exact_string(value)).len()
}

/// A copy of `task` whose `metadata` carries `{type: "sha256", value: H, legalContextUrl: link}` under the listed
/// URI the request's `A2A-Extensions` value activated (or the first listed URI); its other metadata is kept. H is
/// written in lower case. Refused `a2a/legal-context-malformed` when the task or its metadata is not an object, H is
/// not `0x` and 64 hex digits, or the link is not an https link of at most 2048 UTF-16 code units
/// (`a2a/link-not-https` for a link of another scheme); `a2a/too-large` when the value is over 4 KiB; and
/// `a2a/legal-context-conflict` when the task already carries another value under a listed URI.
pub fn place(task: &Value, h: &str, link: &str, a2a_extensions: Option<&str>) -> Result<Value, Refusal> {
    let malformed = || refused(Reason::LegalContextMalformed);
    let mut task = task.as_object().cloned().ok_or_else(malformed)?;
    let mut metadata = match task.get("metadata") {
        None => Map::new(),
        Some(m) => m.as_object().cloned().ok_or_else(malformed)?,
    };
    let h = AtrHash::parse(h).ok_or_else(malformed)?;
    if !is_https_link(link) {
        return Err(if is_other_scheme_link(link) { refused(Reason::LinkNotHttps) } else { malformed() });
    }
    if js_length(link) > MAX_LINK_CHARS {
        return Err(malformed());
    }
    let value = json!({"type": "sha256", "value": h.to_hex(), "legalContextUrl": link});
    if json_bytes(&value) > MAX_VALUE_BYTES {
        return Err(refused(Reason::TooLarge));
    }
    if EXTENSION_URIS.iter().any(|uri| metadata.get(*uri).is_some_and(|present| !same_json(present, &value))) {
        return Err(refused(Reason::LegalContextConflict));
    }
    let key = activated(a2a_extensions).or_else(|| EXTENSION_URIS.first().copied()).ok_or_else(malformed)?;
    metadata.insert(key.to_owned(), value);
    task.insert("metadata".to_owned(), Value::Object(metadata));
    Ok(Value::Object(task))
}

/// H and the link a task delivers under the extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TaskTerms {
    /// The ATR hash H.
    pub h: AtrHash,
    /// The link to the seller's copy of the terms.
    pub link: String,
}

/// H and the link from the task's `metadata` under a listed URI; no other key is read (a bare `legalContext` is not
/// the extension's). Refused `a2a/no-legal-context` when no listed URI is there (or the task or its metadata is not
/// an object); `a2a/too-large` for a value over 4 KiB; `a2a/link-not-https` for a well-formed value whose link is of
/// another scheme; `a2a/legal-context-malformed` for any other value that is not `{type: "sha256", value: H,
/// legalContextUrl: link}` with an https link of at most 2048 UTF-16 code units; and `a2a/legal-context-conflict`
/// when two listed URIs carry different values.
pub fn read(task: &Value) -> Result<TaskTerms, Refusal> {
    let metadata = task.get("metadata").and_then(Value::as_object);
    let mut found: Option<TaskTerms> = None;
    for uri in EXTENSION_URIS {
        let Some(value) = metadata.and_then(|m| m.get(*uri)) else { continue };
        if json_bytes(value) > MAX_VALUE_BYTES {
            return Err(refused(Reason::TooLarge));
        }
        let Some((h, link)) = legal_context_info(value) else {
            return Err(refused(if hash_with_non_https_link(value) {
                Reason::LinkNotHttps
            } else {
                Reason::LegalContextMalformed
            }));
        };
        if js_length(&link) > MAX_LINK_CHARS {
            return Err(refused(Reason::LegalContextMalformed));
        }
        let terms = TaskTerms { h, link };
        if found.as_ref().is_some_and(|f| *f != terms) {
            return Err(refused(Reason::LegalContextConflict));
        }
        found = Some(terms);
    }
    found.ok_or_else(|| refused(Reason::NoLegalContext))
}

/// A task's terms, confirmed: the bytes its link served hash to the H it delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfirmedTask {
    /// The ATR hash H, equal to the SHA-256 of `bytes`.
    pub h: AtrHash,
    /// The link the bytes were fetched from.
    pub link: String,
    /// The exact bytes the link served: keep them.
    pub bytes: Vec<u8>,
}

/// Confirms a task's terms as the gate confirms an offer's: H and the link [`read`] from the task, the link fetched
/// once under the gate's fetch rules (https only, no redirect followed, the identity coding, at most
/// [`MAX_ATR_BYTES`](crate::MAX_ATR_BYTES), one 10 s deadline), and the SHA-256 of the bytes compared with H. Nothing
/// is signed: A2A has no signed place ([`BINDING`]), so a confirmed task is terms a person or a payment's own pairing
/// can rely on, never a payment. Declines: `offer-unreadable` (detail the `a2a/...` refusal), `link-not-https`,
/// `atr-unfetchable`, `atr-too-large`, `hash-mismatch`.
pub async fn confirm_task(task: &Value, fetch: &dyn Fetch) -> Result<ConfirmedTask, Declined> {
    let TaskTerms { h, link } = read(task).map_err(|refusal| {
        let code = if refusal.reason() == Reason::LinkNotHttps {
            DeclineCode::LinkNotHttps
        } else {
            DeclineCode::OfferUnreadable
        };
        Declined::new(code, refusal.code())
    })?;
    let bytes = fetch_atr(fetch, &link).await?;
    if atr_hash(&bytes) != h {
        return Err(Declined::new(
            DeclineCode::HashMismatch,
            "The bytes the link served do not hash to the ATR hash the task delivers.",
        ));
    }
    Ok(ConfirmedTask { h, link, bytes })
}
