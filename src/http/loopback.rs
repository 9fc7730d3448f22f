//! A fetch for tests against a seller of your own on loopback. The gate fetches only `https` links, and a test
//! seller on `127.0.0.1` serves plain HTTP; [`LoopbackFetch`] sends the link `https://<host>/<path>` to
//! `http://<address>/<path>` for each host you route to a loopback address, through the same hardened client as
//! [`HttpFetch`](super::HttpFetch) (no redirect followed, nothing decompressed, no proxy). Any other link is refused
//! before a connection is made, so nothing reaches the network.
//!
//! It exists only with the `loopback` feature, which the `terms` CLI (`cli`) and `terms-mcp` (`mcp`) build for their
//! `--local-seller HOST=ADDRESS` flag, followed only when the operator names it on the command line. A library user
//! names the feature in `[dev-dependencies]` alone: Cargo then never turns it on in a build of their program.

use std::net::SocketAddr;

use crate::fetch::{Fetch, FetchError, Request, Response};
use crate::signer::BoxFuture;

/// The gate's fetch for tests: routed `https://<host>/...` links go to a loopback address over plain HTTP.
#[derive(Debug, Clone)]
pub struct LoopbackFetch {
    inner: super::HttpFetch,
    routes: Vec<(String, SocketAddr)>,
}

impl LoopbackFetch {
    /// A fetch with no routes yet (every link is refused until one is routed).
    pub fn new() -> Result<Self, FetchError> {
        let client = super::HttpFetch::builder().build().map_err(FetchError::new)?;
        Ok(Self { inner: super::HttpFetch::from_client(client), routes: Vec::new() })
    }

    /// A fetch with no routes yet over a client of your own, e.g. the one your transport sends on, so that the
    /// terms and the paid requests share its connections as the client's defaults do. It must not follow redirects
    /// or decode bodies; [`HttpFetch::builder`](super::HttpFetch::builder) gives one that does neither.
    pub fn from_client(client: reqwest::Client) -> Self {
        Self { inner: super::HttpFetch::from_client(client), routes: Vec::new() }
    }

    /// Sends `https://<host>/...` to `address`, which must be a loopback address (`127.0.0.0/8` or `::1`).
    pub fn route(mut self, host: impl Into<String>, address: SocketAddr) -> Result<Self, FetchError> {
        if !address.ip().is_loopback() {
            return Err(FetchError::new(format!("{address} is not a loopback address")));
        }
        self.routes.push((host.into().to_ascii_lowercase(), address));
        Ok(self)
    }

    /// Reads a route as a person writes it, `HOST=ADDRESS` (`seller.test=127.0.0.1:8402`): the host name and the
    /// address, which must be a loopback one. The `--local-seller` flag of the `terms` CLI and of `terms-mcp`.
    pub fn route_spec(spec: &str) -> Result<(String, SocketAddr), FetchError> {
        let fail = |why: String| FetchError::new(format!("{spec}: {why}"));
        let (host, addr) =
            spec.split_once('=').ok_or_else(|| fail("not HOST=ADDRESS (seller.test=127.0.0.1:8402)".into()))?;
        let addr: SocketAddr = addr.parse().map_err(|_| fail(format!("{addr:?} is not an IP address and port")))?;
        if !addr.ip().is_loopback() {
            return Err(fail(format!(
                "{} is not a loopback address: only a seller on this machine is followed",
                addr.ip()
            )));
        }
        if host.is_empty() || host.contains(['/', ':', '@', '?', '#']) {
            return Err(fail(format!("{host:?} is not a host name")));
        }
        Ok((host.to_ascii_lowercase(), addr))
    }

    /// The plain-HTTP URL a routed link goes to, or `None` for a link no route names.
    pub(crate) fn target(&self, url: &str) -> Option<String> {
        let rest = url.strip_prefix("https://")?;
        let (host, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        let (_, address) = self.routes.iter().find(|(h, _)| h.eq_ignore_ascii_case(host))?;
        let path = if path.starts_with('/') { path.to_owned() } else { format!("/{path}") };
        Some(format!("http://{address}{path}"))
    }
}

impl Fetch for LoopbackFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let Some(target) = self.target(request.url) else {
                return Err(FetchError::new(format!("no loopback route for {}", request.url)));
            };
            self.inner.get(Request { url: &target, ..request }).await
        })
    }
}

/// One seller on this machine beside the public web (`--local-seller HOST=ADDRESS` of the `terms` CLI and
/// `terms-mcp`): links to `https://HOST/…` go to `http://ADDRESS/…` as [`LoopbackFetch`] sends them, every other link
/// through [`PublicFetch`](super::PublicFetch), public addresses only.
#[derive(Debug, Clone)]
pub struct LocalSellerFetch {
    local: LoopbackFetch,
    public: super::PublicFetch,
}

impl LocalSellerFetch {
    /// `host`'s links to `address` (a loopback address), every other link from public addresses only.
    pub fn new(host: impl Into<String>, address: SocketAddr) -> Result<Self, FetchError> {
        Ok(Self { local: LoopbackFetch::new()?.route(host, address)?, public: super::PublicFetch::new()? })
    }
}

impl Fetch for LocalSellerFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        if self.local.target(request.url).is_some() {
            return self.local.get(request);
        }
        self.public.get(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_only_named_hosts_to_loopback() {
        let at: SocketAddr = "127.0.0.1:8402".parse().unwrap();
        let fetch = LoopbackFetch::new().unwrap().route("seller.test", at).unwrap();
        assert_eq!(fetch.target("https://seller.test/terms.json").as_deref(), Some("http://127.0.0.1:8402/terms.json"));
        assert_eq!(fetch.target("https://Seller.Test?x=1").as_deref(), Some("http://127.0.0.1:8402/?x=1"));
        assert_eq!(fetch.target("https://other.test/terms.json"), None);
        assert_eq!(fetch.target("http://seller.test/terms.json"), None);
        assert!(LoopbackFetch::new().unwrap().route("x.test", "10.0.0.1:80".parse().unwrap()).is_err());
        assert_eq!(LoopbackFetch::route_spec("Seller.Test=127.0.0.1:8402").unwrap(), ("seller.test".into(), at));
        for bad in ["seller.test=10.0.0.1:80", "seller.test", "=127.0.0.1:1", "a/b=127.0.0.1:1", "x=127.0.0.1"] {
            assert!(LoopbackFetch::route_spec(bad).is_err(), "{bad}");
        }
    }
}
