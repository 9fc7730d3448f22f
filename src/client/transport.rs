//! The client's transport seam: one request out, one answer in, the body read whole. [`ReqwestTransport`] is the
//! default, on the same hardened reqwest client as the gate's fetch (no redirect followed, no decompression, no
//! proxy, no transport retry: a request may carry a payment).

use std::fmt;

use bytes::{Bytes, BytesMut};

use super::types::{Incoming, Outgoing};
use crate::http::{header_pairs, with_sources};
use crate::signer::BoxFuture;

/// A transport failure: a refused or reset connection, a TLS failure, a body cut short, a request that does not
/// parse. After a payment it is answered by re-sending the same payment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// Sends one request and reads its whole answer. An implementation must not follow redirects (a 3xx is an answer)
/// and must not retry by itself: the client decides what is sent again, and only ever the same bytes.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sends the request; answers once the body is read.
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>>;
}

/// The most body bytes [`ReqwestTransport`] reads of an answer by default: 16 MiB.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The default transport: reqwest with rustls, hardened as [`HttpFetch`](crate::http::HttpFetch) is.
#[derive(Debug, Clone)]
pub struct ReqwestTransport {
    client: reqwest::Client,
    max_response: usize,
}

impl ReqwestTransport {
    /// The hardened client (plain `http` is allowed here: the resource's URL is the caller's, and the gate's own
    /// fetch of the terms stays https only).
    pub fn new() -> Result<Self, TransportError> {
        let client = crate::http::HttpFetch::builder().build().map_err(|e| TransportError(e.to_string()))?;
        Ok(Self { client, max_response: MAX_RESPONSE_BYTES })
    }

    /// A transport over a client of your own. It must not follow redirects or decode bodies;
    /// [`HttpFetch::builder`](crate::http::HttpFetch::builder) gives one that does neither.
    pub fn from_client(client: reqwest::Client) -> Self {
        Self { client, max_response: MAX_RESPONSE_BYTES }
    }

    /// With another cap on the answer's body, in bytes.
    #[must_use]
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }
}

impl Transport for ReqwestTransport {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        Box::pin(async move {
            let request = to_reqwest(&self.client, request)?;
            let response = self.client.execute(request).await.map_err(|e| TransportError(with_sources(&e)))?;
            read(response, self.max_response).await
        })
    }
}

/// The request as reqwest's, its parts checked.
pub(crate) fn to_reqwest(client: &reqwest::Client, request: &Outgoing) -> Result<reqwest::Request, TransportError> {
    let bad = |what: &str, e: &dyn fmt::Display| TransportError(format!("the request's {what} does not parse: {e}"));
    let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|e| bad("method", &e))?;
    let url = reqwest::Url::parse(&request.url).map_err(|e| bad("URL", &e))?;
    let mut builder = client.request(method, url);
    for (name, value) in &request.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad("header name", &e))?;
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|e| bad("header value", &e))?;
        builder = builder.header(name, value);
    }
    if !request.body.is_empty() {
        builder = builder.body(request.body.clone());
    }
    builder.build().map_err(|e| TransportError(with_sources(&e)))
}

/// A reqwest answer, its body read whole up to `max` bytes.
pub(crate) async fn read(mut response: reqwest::Response, max: usize) -> Result<Incoming, TransportError> {
    let status = response.status().as_u16();
    let headers = header_pairs(response.headers());
    let mut body = BytesMut::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| TransportError(with_sources(&e)))? {
        if body.len().saturating_add(chunk.len()) > max {
            return Err(TransportError(format!("the answer's body is larger than {max} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Incoming { status, headers, body: Bytes::from(body) })
}
