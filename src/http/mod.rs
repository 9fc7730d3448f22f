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
pub use loopback::{LocalSellerFetch, LoopbackFetch};
#[cfg(feature = "client")]
pub(crate) use public::public_client;
pub use public::{Lookup, PublicFetch, PublicResolver, SystemLookup, check_link, is_public_address, is_public_ip};

/// A [`Fetch`] on reqwest: https only, no redirect followed, no proxy, no decompression, no transport retry (a
/// request may carry a payment). The gate applies the deadline and the size caps.
#[derive(Debug, Clone)]
pub struct HttpFetch {
    client: reqwest::Client,
    /// Whether the fetch itself refuses a link that is not https, for a client it shares with a transport that may
    /// send plain http (the client's default).
    https_only: bool,
}

impl HttpFetch {
    /// The hardened client.
    pub fn new() -> Result<Self, FetchError> {
        let client = hardened().https_only(true).build().map_err(FetchError::new)?;
        Ok(Self { client, https_only: true })
    }

    /// A fetch over a client of your own, which carries your network policy. It must not follow redirects or
    /// decode bodies; [`HttpFetch::builder`] gives one that does neither.
    pub fn from_client(client: reqwest::Client) -> Self {
        Self { client, https_only: false }
    }

    /// A fetch over a hardened client shared with the client's transport, which refuses a link that is not https
    /// before it is sent: the terms and the paid requests to one seller then share its connections.
    #[cfg(feature = "client")]
    pub(crate) fn https_only_over(client: reqwest::Client) -> Self {
        Self { client, https_only: true }
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
            let https = request.url.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
            if self.https_only && !https {
                return Err(FetchError::new(format!("{}: the terms are fetched over https only", request.url)));
            }
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

#[cfg(all(test, feature = "client"))]
mod tests {
    use super::*;

    /// A listener that counts the connections made to it, answering each request with an empty 200.
    async fn counting() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = count.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                seen.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    while matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {
                        let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
                    }
                });
            }
        });
        (format!("127.0.0.1:{}", addr.port()), count)
    }

    #[tokio::test]
    async fn a_fetch_on_a_shared_client_refuses_a_link_that_is_not_https_before_connecting() {
        use std::sync::atomic::Ordering;
        let (addr, count) = counting().await;
        let client = HttpFetch::builder().build().unwrap();
        // The shared client itself sends plain http (the transport's use of it).
        let sent = client.get(format!("http://{addr}/free")).send().await.unwrap();
        assert_eq!((sent.status().as_u16(), count.load(Ordering::SeqCst)), (200, 1));
        let fetch = HttpFetch::https_only_over(client);
        for link in [format!("http://{addr}/atr"), format!("HTTP://{addr}/atr"), format!("//{addr}/atr")] {
            let Err(e) = fetch.get(Request { url: &link, headers: &[] }).await else { panic!("{link} fetched") };
            assert_eq!(e.to_string(), format!("{link}: the terms are fetched over https only"));
        }
        // An https link passes the check (and fails at TLS against the plain listener, a connection made).
        let link = format!("HTTPS://{addr}/atr");
        let Err(e) = fetch.get(Request { url: &link, headers: &[] }).await else { panic!("{link} fetched") };
        assert!(!e.to_string().contains("https only"), "{e}");
        assert_eq!(count.load(Ordering::SeqCst), 2, "the refused links made no connection");
        // A fetch over a client of the caller's own carries the caller's policy: it sends what its client sends.
        let own = HttpFetch::from_client(HttpFetch::builder().build().unwrap());
        let answer = own.get(Request { url: &format!("http://{addr}/atr"), headers: &[] }).await.unwrap();
        assert_eq!(answer.status, 200);
    }
}
