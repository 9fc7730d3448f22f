//! The ATR fetch: one GET of the link, held to the gate's rules whatever the `Fetch` implementation does.

use std::time::Duration;

use crate::decline::{DeclineCode, Declined};
use crate::fetch::{Fetch, Request, Response};
use crate::hash::MAX_ATR_BYTES;

/// One deadline over the headers and the body.
pub(crate) const FETCH_DEADLINE: Duration = Duration::from_secs(10);

/// The one request header: the bytes hashed must be the bytes sent, so no content coding is asked for.
pub(crate) const IDENTITY: (&str, &str) = ("Accept-Encoding", "identity");

fn unfetchable(detail: impl Into<String>) -> Declined {
    Declined::new(DeclineCode::AtrUnfetchable, detail)
}

pub(crate) fn too_large() -> Declined {
    Declined::new(DeclineCode::AtrTooLarge, format!("The ATR is larger than {MAX_ATR_BYTES} bytes."))
}

/// HTTP whitespace as the Fetch Standard trims it: tab, LF, CR and space.
pub(crate) fn trim_http(value: &str) -> &str {
    value.trim_matches(['\t', '\n', '\r', ' '])
}

/// Whether a Content-Encoding value names no coding: absent, empty or `identity`, in any case, surrounding HTTP
/// whitespace aside. A list such as `identity, gzip` names a coding.
pub(crate) fn is_identity(content_encoding: Option<&str>) -> bool {
    let v = trim_http(content_encoding.unwrap_or(""));
    v.is_empty() || v.eq_ignore_ascii_case("identity")
}

/// Whether a Content-Length value declares more than `bound` bytes: ASCII digits only (surrounding HTTP whitespace
/// aside), compared by their significant digits so a value of any length is read. Any other value declares nothing;
/// the streamed count still applies.
pub(crate) fn declared_over(declared: Option<&str>, bound: usize) -> bool {
    let v = trim_http(declared.unwrap_or(""));
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let significant = v.trim_start_matches('0');
    let limit = bound.to_string();
    significant.len() > limit.len() || (significant.len() == limit.len() && significant > limit.as_str())
}

/// Reads a body, declining as soon as it passes `cap` bytes; nothing past the cap is buffered. `Err(None)` is a
/// transport failure.
pub(crate) async fn read_capped(response: &mut Response, cap: usize) -> Result<Vec<u8>, Option<()>> {
    let declared = response.header("content-length");
    let hint = declared.as_deref().map(trim_http).and_then(|v| v.parse::<usize>().ok()).map_or(0, |n| n.min(cap));
    let mut body = Vec::with_capacity(hint);
    while let Some(chunk) = response.body.chunk().await {
        let chunk = chunk.map_err(|_| None)?;
        let needed = body.len() + chunk.len();
        if needed > cap {
            return Err(Some(()));
        }
        // Grow by doubling as a Vec would, but never past the cap: a capped body never holds a buffer larger than
        // the cap itself.
        if needed > body.capacity() {
            let target = needed.max(body.capacity().saturating_mul(2)).min(cap);
            body.reserve_exact(target - body.len());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Why a capped GET ended without a body: each caller says it in its own words.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The fetch failed before an answer: DNS, TLS, a refused or reset connection.
    Transport(crate::fetch::FetchError),
    /// A 200 whose content coding is not identity (named); its body was not read.
    Coding(String),
    /// A 200 whose body declared or streamed more than the cap.
    TooLarge,
    /// A 200 whose body ended with a transport error.
    BodyFailed,
    /// No whole answer within [`FETCH_DEADLINE`].
    Deadline,
}

/// An answer a capped GET read: its status, its headers, and its body where the status is 200 (any other status's
/// body is dropped unread, which cancels its transfer).
#[derive(Debug)]
pub(crate) struct Got {
    /// The status code.
    pub(crate) status: u16,
    /// The headers as sent.
    pub(crate) headers: Vec<(String, String)>,
    /// The body of a 200, at most the cap; `None` for any other status.
    pub(crate) body: Option<Vec<u8>>,
}

impl Got {
    /// The header's value, matched case-insensitively (repeated ones joined as [`Response::header`] joins them).
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        let values: Vec<&str> =
            self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

async fn get_once(fetch: &dyn Fetch, url: &str, headers: &[(&str, &str)], cap: usize) -> Result<Got, Fault> {
    let mut response = fetch.get(Request { url, headers }).await.map_err(Fault::Transport)?;
    if response.status != 200 {
        return Ok(Got { status: response.status, headers: std::mem::take(&mut response.headers), body: None });
    }
    if let Some(coding) = response.header("content-encoding").filter(|c| !is_identity(Some(c))) {
        return Err(Fault::Coding(coding));
    }
    if declared_over(response.header("content-length").as_deref(), cap) {
        return Err(Fault::TooLarge);
    }
    match read_capped(&mut response, cap).await {
        Ok(body) => Ok(Got { status: 200, headers: std::mem::take(&mut response.headers), body: Some(body) }),
        Err(Some(())) => Err(Fault::TooLarge),
        Err(None) => Err(Fault::BodyFailed),
    }
}

/// One GET under the gate's fetch rules: exactly these headers (the caller names [`IDENTITY`] among them), a 200's
/// body read only in the identity coding and at most `cap` bytes (checked on the declared length and while
/// streaming; exactly `cap` is accepted), everything within one [`FETCH_DEADLINE`]. The [`Fetch`] never follows a
/// redirect, so a 3xx comes back as its status.
pub(crate) async fn get_capped(
    fetch: &dyn Fetch,
    url: &str,
    headers: &[(&str, &str)],
    cap: usize,
) -> Result<Got, Fault> {
    tokio::time::timeout(FETCH_DEADLINE, get_once(fetch, url, headers, cap)).await.unwrap_or(Err(Fault::Deadline))
}

/// Fetches the ATR: one GET asking for the identity coding, status 200 only, any other content coding declined
/// with its body unread, at most [`MAX_ATR_BYTES`] read (exactly that many is accepted), all within one 10 s
/// deadline. Every non-success path drops the body, which cancels the transfer.
pub(crate) async fn fetch_atr(fetch: &dyn Fetch, link: &str) -> Result<Vec<u8>, Declined> {
    let failed = || unfetchable("The ATR could not be fetched from the link.");
    match get_capped(fetch, link, &[IDENTITY], MAX_ATR_BYTES).await {
        Ok(Got { body: Some(body), .. }) => Ok(body),
        Ok(Got { status, .. }) => Err(unfetchable(format!("The link answered status {status}."))),
        Err(Fault::Transport(e)) => Err(failed().with_cause(e)),
        Err(Fault::Coding(coding)) => Err(unfetchable("The link served a content coding other than identity.")
            .with_cause(format!("content-encoding: {coding}"))),
        Err(Fault::TooLarge) => Err(too_large()),
        Err(Fault::BodyFailed) => Err(failed().with_cause("the body ended with a transport error")),
        Err(Fault::Deadline) => {
            Err(failed().with_cause(format!("no whole answer within {} s", FETCH_DEADLINE.as_secs())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_is_read_by_significant_digits() {
        assert!(!declared_over(Some("1048576"), MAX_ATR_BYTES));
        assert!(declared_over(Some("1048577"), MAX_ATR_BYTES));
        assert!(declared_over(Some(" 0001048577\t"), MAX_ATR_BYTES));
        assert!(!declared_over(Some("00001048576"), MAX_ATR_BYTES));
        assert!(declared_over(Some("99999999999999999999999999"), MAX_ATR_BYTES));
        assert!(!declared_over(Some("1048577, 1048577"), MAX_ATR_BYTES));
        assert!(!declared_over(Some("-5"), MAX_ATR_BYTES));
        assert!(!declared_over(None, MAX_ATR_BYTES));
    }

    /// The buffer a capped read holds never grows past the cap, whatever the chunks: a body of exactly the cap, in
    /// chunks that would double a Vec past it, ends in a buffer of the cap's capacity; and a declared length past the
    /// cap reserves no more than the cap.
    #[tokio::test]
    async fn a_capped_read_never_holds_a_buffer_larger_than_its_cap() {
        const CAP: usize = 1000;
        for sizes in [vec![600, 400], vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 489], vec![999, 1], vec![1000]] {
            let chunks = sizes.iter().map(|&n| bytes::Bytes::from(vec![7u8; n])).collect();
            let mut response = Response::new(200, vec![], crate::fetch::Body::from_chunks(chunks));
            let body = read_capped(&mut response, CAP).await.unwrap();
            assert_eq!(body.len(), CAP);
            assert!(body.capacity() <= CAP, "{sizes:?}: a buffer of {} for a cap of {CAP}", body.capacity());
        }
        let declared = vec![("content-length".to_owned(), "5000".to_owned())];
        let mut response =
            Response::new(200, declared, crate::fetch::Body::from_chunks(vec![bytes::Bytes::from(vec![1u8; 10])]));
        let body = read_capped(&mut response, CAP).await.unwrap();
        assert!(body.capacity() <= CAP, "a declared length past the cap reserved {}", body.capacity());
        // One byte past the cap is refused, whatever came before.
        let chunks = vec![bytes::Bytes::from(vec![0u8; 600]), bytes::Bytes::from(vec![0u8; 401])];
        let mut response = Response::new(200, vec![], crate::fetch::Body::from_chunks(chunks));
        assert_eq!(read_capped(&mut response, CAP).await, Err(Some(())));
    }

    /// A body that comes as long as it declared fills the buffer reserved for it and is not moved into a larger
    /// one: the read grows the buffer only when a chunk does not fit.
    #[tokio::test]
    async fn a_body_of_its_declared_length_stays_in_the_buffer_reserved_for_it() {
        for (declared, chunks) in [(100, vec![100]), (100, vec![60, 40]), (1000, vec![1000])] {
            let parts = chunks.iter().map(|&n| bytes::Bytes::from(vec![7u8; n])).collect();
            let headers = vec![("content-length".to_owned(), declared.to_string())];
            let mut response = Response::new(200, headers, crate::fetch::Body::from_chunks(parts));
            let body = read_capped(&mut response, 1000).await.unwrap();
            assert_eq!((body.len(), body.capacity()), (declared, declared), "{chunks:?}");
        }
    }

    #[test]
    fn identity_is_the_only_coding() {
        for ok in [None, Some(""), Some(" identity "), Some("IDENTITY"), Some("\tIdentity\r\n")] {
            assert!(is_identity(ok), "{ok:?}");
        }
        for bad in ["gzip", "x-gzip", "identity, gzip", "gzip, gzip", "br", "deflate", "identity,"] {
            assert!(!is_identity(Some(bad)), "{bad}");
        }
    }
}
