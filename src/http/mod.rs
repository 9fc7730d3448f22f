//! The default [`Fetch`]: reqwest with rustls, hardened for fetching what a seller serves, and [`PublicFetch`], the
//! same fetch that connects only to public addresses.
//!
//! Use [`HttpFetch`] when the links your agent follows come from sellers you chose (your own allow-list, a fixed
//! catalogue). Use [`PublicFetch`] when any seller's document can name the link (an agent browsing the open web, a
//! server other people's agents drive): without it a document could point the fetch at loopback, the cloud
//! metadata address or the host's private network.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;

use crate::fetch::{Body, Fetch, FetchError, Request, Response};
use crate::signer::BoxFuture;

#[cfg(feature = "loopback")]
mod loopback;
mod public;

#[cfg(feature = "loopback")]
pub use loopback::LoopbackFetch;
#[cfg(feature = "mcp")]
pub(crate) use public::public_client;
pub use public::{Lookup, PublicFetch, PublicResolver, SystemLookup, check_link, is_public_address, is_public_ip};

/// A [`Fetch`] on reqwest: https only, no redirect followed, no proxy, no decompression, no transport retry (a
/// request may carry a payment). The gate applies the deadline and the size caps.
#[derive(Debug, Clone)]
pub struct HttpFetch {
    client: reqwest::Client,
}

impl HttpFetch {
    /// The hardened client.
    pub fn new() -> Result<Self, FetchError> {
        let client = hardened().https_only(true).build().map_err(FetchError::new)?;
        Ok(Self { client })
    }

    /// A fetch over a client of your own, which carries your network policy. It must not follow redirects or
    /// decode bodies; [`HttpFetch::builder`] gives one that does neither.
    pub fn from_client(client: reqwest::Client) -> Self {
        Self { client }
    }

    /// A client builder with redirects, proxies, decompression and retries off, to add policy to (a resolver, a
    /// TLS root store) before [`HttpFetch::from_client`].
    pub fn builder() -> reqwest::ClientBuilder {
        hardened()
    }
}

fn hardened() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .no_gzip()
        .no_brotli()
        .no_zstd()
        .no_deflate()
        .retry(reqwest::retry::never())
        .referer(false)
}

/// An answer's headers as (name, value) pairs, in wire order; a value that is not UTF-8 is read lossily, since the
/// headers the gate and the client read are ASCII, and a lossily read value never equals an expected one.
pub(crate) fn header_pairs(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    headers.iter().map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect()
}

/// The error and every error beneath it, so that the cause (a refused address, a TLS failure) reaches the log.
pub(crate) fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

type Pending = Pin<Box<dyn Future<Output = (reqwest::Response, Option<Result<Bytes, FetchError>>)> + Send>>;

/// The body of a reqwest response as a stream of chunks, read as sent.
struct Chunks {
    response: Option<reqwest::Response>,
    pending: Option<Pending>,
}

impl Stream for Chunks {
    type Item = Result<Bytes, FetchError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.pending.is_none() {
            let Some(mut response) = self.response.take() else { return Poll::Ready(None) };
            self.pending = Some(Box::pin(async move {
                let chunk = response.chunk().await.map_err(FetchError::new).transpose();
                (response, chunk)
            }));
        }
        let Some(pending) = self.pending.as_mut() else { return Poll::Ready(None) };
        match pending.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready((response, chunk)) => {
                self.pending = None;
                if matches!(chunk, Some(Ok(_))) {
                    self.response = Some(response);
                }
                Poll::Ready(chunk)
            }
        }
    }
}

impl Fetch for HttpFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let mut builder = self.client.get(request.url);
            for (name, value) in request.headers {
                builder = builder.header(*name, *value);
            }
            let response = builder.send().await.map_err(|e| FetchError::new(with_sources(&e)))?;
            let status = response.status().as_u16();
            let headers = header_pairs(response.headers());
            let body = Body::from_stream(Chunks { response: Some(response), pending: None });
            Ok(Response::new(status, headers, body))
        })
    }
}
