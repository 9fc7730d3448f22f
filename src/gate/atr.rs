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

async fn fetch_once(fetch: &dyn Fetch, link: &str) -> Result<Vec<u8>, Declined> {
    let headers = [IDENTITY];
    let mut response = fetch
        .get(Request { url: link, headers: &headers })
        .await
        .map_err(|e| unfetchable("The ATR could not be fetched from the link.").with_cause(e))?;
    if response.status != 200 {
        return Err(unfetchable(format!("The link answered status {}.", response.status)));
    }
    if let Some(coding) = response.header("content-encoding").filter(|c| !is_identity(Some(c))) {
        let cause = format!("content-encoding: {coding}");
        return Err(unfetchable("The link served a content coding other than identity.").with_cause(cause));
    }
    if declared_over(response.header("content-length").as_deref(), MAX_ATR_BYTES) {
        return Err(too_large());
    }
    match read_capped(&mut response, MAX_ATR_BYTES).await {
        Ok(body) => Ok(body),
        Err(Some(())) => Err(too_large()),
        Err(None) => Err(unfetchable("The ATR could not be fetched from the link.")
            .with_cause("the body ended with a transport error")),
    }
}

/// Fetches the ATR: one GET asking for the identity coding, status 200 only, any other content coding declined
/// with its body unread, at most [`MAX_ATR_BYTES`] read (exactly that many is accepted), all within one 10 s
/// deadline. Every non-success path drops the body, which cancels the transfer.
pub(crate) async fn fetch_atr(fetch: &dyn Fetch, link: &str) -> Result<Vec<u8>, Declined> {
    tokio::time::timeout(FETCH_DEADLINE, fetch_once(fetch, link)).await.unwrap_or_else(|_| {
        let cause = format!("no whole answer within {} s", FETCH_DEADLINE.as_secs());
        Err(unfetchable("The ATR could not be fetched from the link.").with_cause(cause))
    })
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
