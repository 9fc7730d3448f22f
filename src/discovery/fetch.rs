//! An origin's discovery document, read under the gate's fetch rules: an https origin only, one GET of
//! `/.well-known/legal-context.json` asking for the identity coding (and, given the ETag of an earlier read,
//! `If-None-Match`), a redirect answered as it is and never followed, any other content coding refused unread, at
//! most [`MAX_DOCUMENT_BYTES`] read (checked on the declared length and while streaming), all within the gate's
//! 10 s deadline. The ETag the origin sends is kept beside the document.

use url::Url;

use super::{DiscoveryRefusal, LegalContextDocument, MAX_DOCUMENT_BYTES, WELL_KNOWN_PATH, parse};
use crate::fetch::Fetch;
use crate::gate::atr::{FETCH_DEADLINE, Fault, Got, IDENTITY, get_capped};
use crate::hash::AtrHash;
use crate::link::is_https_link;

/// What an origin answered for its discovery document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Found {
    /// It serves one, read and checked.
    Document(Box<Discovered>),
    /// It serves the same document as the ETag given names (status 304 to `If-None-Match`).
    NotModified {
        /// The document's URL.
        url: String,
    },
    /// It serves none (status 404 or 410): LCP §2 makes the document optional.
    NotServed {
        /// The document's URL.
        url: String,
        /// The status it answered.
        status: u16,
    },
}

/// A discovery document an origin served.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Discovered {
    /// Where it was read: `https://<origin>/.well-known/legal-context.json`.
    pub url: String,
    /// Its members.
    pub document: LegalContextDocument,
    /// The members LCP does not name, by dotted path.
    pub ignored: Vec<String>,
    /// The ETag the origin sent with it, as sent: pass it to the next [`fetch`] to ask only for a changed document.
    pub etag: Option<String>,
    /// The bytes served.
    pub bytes: Vec<u8>,
}

impl Discovered {
    /// The `atrHash` the document lists where it is not `h` (the H of an offer), or `None` when it lists `h` or no
    /// hash at all. A listing is never a confirmation either way: the gate compares the offer's H with the bytes its
    /// link serves, and a different listing is something for a person to see, not a reason the gate reads.
    pub fn differs_from(&self, h: &AtrHash) -> Option<AtrHash> {
        self.document.atr_hash.filter(|listed| listed != h)
    }
}

/// Why an origin's discovery document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoveryError {
    /// The URL given is not an https URL (no userinfo, a host): nothing was fetched.
    #[error("{url:?} is not an https URL: a discovery document is read over https only")]
    NotHttps {
        /// The URL given.
        url: String,
    },
    /// The fetch failed, or the origin answered another status than 200, 304, 404 or 410 (a redirect is not
    /// followed).
    #[error("{url} could not be read: {detail}")]
    Unfetchable {
        /// The document's URL.
        url: String,
        /// What happened.
        detail: String,
    },
    /// The origin served a document [`parse`] refuses (over [`MAX_DOCUMENT_BYTES`] included).
    #[error("{url} is refused: {refusal}")]
    Refused {
        /// The document's URL.
        url: String,
        /// The refusal.
        refusal: DiscoveryRefusal,
    },
}

impl DiscoveryError {
    /// The code: the refusal's (`discovery/too-large`…), or ours, `discovery/not-https` and `discovery/unfetchable`.
    pub fn code(&self) -> String {
        match self {
            Self::NotHttps { .. } => "discovery/not-https".to_owned(),
            Self::Unfetchable { .. } => "discovery/unfetchable".to_owned(),
            Self::Refused { refusal, .. } => refusal.code(),
        }
    }
}

/// The discovery document's URL for a service: `https://<origin>` + [`WELL_KNOWN_PATH`], the origin (scheme, host
/// and port) of `service`, which may be any https URL of the service (its path, query and fragment are not read).
/// `service` is held to the gate's https-link rule: `http`, userinfo or a malformed host refuse.
pub fn discovery_url(service: &str) -> Result<String, DiscoveryError> {
    let refused = || DiscoveryError::NotHttps { url: service.to_owned() };
    if !is_https_link(service) {
        return Err(refused());
    }
    let url = Url::parse(service).map_err(|_| refused())?;
    Ok(format!("{}{WELL_KNOWN_PATH}", url.origin().ascii_serialization()))
}

/// Reads the discovery document of `service`'s origin ([`discovery_url`]) through `fetch`, under the gate's fetch
/// rules. With `etag` (a [`Discovered::etag`] of an earlier read) the request asks `If-None-Match` and a 304 is
/// [`Found::NotModified`]; without it a 304 is unfetchable. Nothing here is a confirmation of any terms.
pub async fn fetch(fetch: &dyn Fetch, service: &str, etag: Option<&str>) -> Result<Found, DiscoveryError> {
    let url = discovery_url(service)?;
    let unfetchable = |detail: String| DiscoveryError::Unfetchable { url: url.clone(), detail };
    let mut headers = vec![IDENTITY];
    if let Some(etag) = etag {
        headers.push(("If-None-Match", etag));
    }
    match get_capped(fetch, &url, &headers, MAX_DOCUMENT_BYTES).await {
        Ok(got @ Got { body: Some(_), .. }) => {
            let etag = got.header("etag");
            let bytes = got.body.unwrap_or_default();
            let parsed = parse(&bytes).map_err(|refusal| DiscoveryError::Refused { url: url.clone(), refusal })?;
            let discovered = Discovered { url, document: parsed.document, ignored: parsed.ignored, etag, bytes };
            Ok(Found::Document(Box::new(discovered)))
        }
        Ok(Got { status: 304, .. }) if etag.is_some() => Ok(Found::NotModified { url }),
        Ok(Got { status: status @ (404 | 410), .. }) => Ok(Found::NotServed { url, status }),
        Ok(Got { status: status @ (300..=303 | 305..=399), .. }) => {
            Err(unfetchable(format!("answered a redirect (status {status}), which is not followed")))
        }
        Ok(Got { status, .. }) => Err(unfetchable(format!("answered status {status}"))),
        Err(Fault::TooLarge) => Err(DiscoveryError::Refused { url, refusal: DiscoveryRefusal::TooLarge }),
        Err(Fault::Transport(e)) => Err(unfetchable(format!("the fetch failed: {e}"))),
        Err(Fault::Coding(coding)) => Err(unfetchable(format!("answered the content coding `{coding}`, not identity"))),
        Err(Fault::BodyFailed) => Err(unfetchable("the body ended with a transport error".to_owned())),
        Err(Fault::Deadline) => Err(unfetchable(format!("no whole answer within {} s", FETCH_DEADLINE.as_secs()))),
    }
}
