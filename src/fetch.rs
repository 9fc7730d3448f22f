//! The fetch seam: one HTTP GET with given headers, answered with a status, headers and a streamed body.
//!
//! The gate's rules (status 200 only, content codings declined unread, size caps, the deadline) live in the gate,
//! so they hold for every implementation of [`Fetch`]; an implementation only has to move bytes and never follow a
//! redirect or decode a body itself.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;

use crate::signer::BoxFuture;

/// A transport failure: DNS, TLS, a reset connection, a refused address. The gate declines it as unfetchable (or
/// unanswered, in the agreement exchange) and never shows its text as a detail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(String);

impl FetchError {
    /// An error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        Self(message.to_string())
    }
}

/// One GET: the URL and exactly the headers to send.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The absolute URL.
    pub url: &'a str,
    /// The request headers, sent as given and no others the implementation can avoid.
    pub headers: &'a [(&'a str, &'a str)],
}

/// The body as a stream of chunks. Dropping it cancels the transfer.
pub struct Body(Pin<Box<dyn Stream<Item = Result<Bytes, FetchError>> + Send>>);

impl Body {
    /// A body from a stream of chunks.
    pub fn from_stream(stream: impl Stream<Item = Result<Bytes, FetchError>> + Send + 'static) -> Self {
        Self(Box::pin(stream))
    }

    /// A body of these bytes, in one chunk.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        Self::from_chunks(vec![bytes.into()])
    }

    /// A body of these chunks, in order.
    pub fn from_chunks(chunks: Vec<Bytes>) -> Self {
        Self::from_stream(Chunks(chunks.into_iter()))
    }

    /// An empty body.
    pub fn empty() -> Self {
        Self::from_chunks(Vec::new())
    }

    /// The next chunk; `None` at the end.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, FetchError>> {
        std::future::poll_fn(|cx| self.0.as_mut().poll_next(cx)).await
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Body(..)")
    }
}

struct Chunks(std::vec::IntoIter<Bytes>);

impl Stream for Chunks {
    type Item = Result<Bytes, FetchError>;
    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.next().map(Ok))
    }
}

/// An HTTP answer: its status, its headers as sent, and its body unread.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Header names and values as sent; a name may repeat.
    pub headers: Vec<(String, String)>,
    /// The body, unread.
    pub body: Body,
}

impl Response {
    /// A response.
    pub fn new(status: u16, headers: Vec<(String, String)>, body: Body) -> Self {
        Self { status, headers, body }
    }

    /// The header's value, matched case-insensitively; repeated headers are joined with `", "` as the Fetch
    /// Standard and HTTP clients join them, so `identity` and `gzip` on two lines read as `identity, gzip`.
    pub fn header(&self, name: &str) -> Option<String> {
        let mut values = self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
        let first = values.next()?;
        let mut joined = first.to_owned();
        for v in values {
            joined.push_str(", ");
            joined.push_str(v);
        }
        Some(joined)
    }
}

/// One GET. Implementations must not follow redirects (a 3xx is answered as it is) and must not decode content
/// codings (the body is the bytes as sent). The gate sends `Accept-Encoding: identity` and applies its own deadline
/// by dropping the returned future.
pub trait Fetch: Send + Sync {
    /// Sends the GET and answers once the status and headers are in.
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>>;
}

impl<F: Fetch + ?Sized> Fetch for std::sync::Arc<F> {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        (**self).get(request)
    }
}

impl<F: Fetch + ?Sized> Fetch for &F {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        (**self).get(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response in a log line or a panic message shows its status and headers but never its body: the bytes are
    /// the gate's to read (once, under its caps), and a stream printed would be a stream consumed.
    #[test]
    fn a_response_prints_without_its_body() {
        let headers = vec![("content-type".to_owned(), "text/plain".to_owned())];
        let printed = format!("{:?}", Response::new(200, headers, Body::from_bytes("the seller's terms")));
        assert!(printed.contains("status: 200") && printed.contains("content-type"), "{printed}");
        assert!(printed.contains("body: Body(..)"), "{printed}");
        assert!(!printed.contains("the seller's terms"), "{printed}");
    }
}
