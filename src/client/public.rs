//! Transports for requests whose URL someone else names (an agent's `atr_pay`, a tool behind `terms gateway`): the
//! rule the public fetch of terms obeys (https only, no address that is not public, a name resolved once and every
//! address vetted) held on the first send and on every re-send. With the `loopback` feature, one seller on this
//! machine beside them, named by the operator (`--local-seller HOST=ADDRESS`).

use std::sync::Arc;

use super::transport::{ReqwestTransport, Transport, TransportError};
use super::types::{Incoming, Outgoing};
use crate::http::{Lookup, SystemLookup, check_link, public_client};
use crate::signer::BoxFuture;

/// The gate's hardened reqwest client, https only, its connections only to public addresses
/// ([`PublicResolver`](crate::http::PublicResolver)), every URL checked with [`check_link`] before it is sent (a
/// re-send included). A refusal's message carries `ENOTPUBLIC` where the address is the reason.
#[derive(Debug, Clone)]
pub struct PublicTransport {
    inner: ReqwestTransport,
}

impl PublicTransport {
    /// Over the operating system's resolver.
    pub fn new() -> Result<Self, TransportError> {
        Self::with_lookup(Arc::new(SystemLookup))
    }

    /// Over another lookup (tests; a host with its own resolver): every address it gives must be public.
    pub fn with_lookup(lookup: Arc<dyn Lookup>) -> Result<Self, TransportError> {
        let client = public_client(lookup).map_err(|e| TransportError(e.to_string()))?;
        Ok(Self { inner: ReqwestTransport::from_client(client) })
    }
}

impl Transport for PublicTransport {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        Box::pin(async move {
            check_link(&request.url).map_err(|e| TransportError(e.to_string()))?;
            self.inner.send(request).await
        })
    }
}

/// [`PublicTransport`] with one seller on this machine: `https://HOST/…` sent to `http://ADDRESS/…` (a loopback
/// address), as [`LoopbackFetch`](crate::http::LoopbackFetch) fetches that host's terms; every other URL on the
/// public-address transport.
#[cfg(feature = "loopback")]
#[derive(Debug, Clone)]
pub struct LocalSellerTransport {
    routes: crate::http::LoopbackFetch,
    direct: ReqwestTransport,
    public: PublicTransport,
}

#[cfg(feature = "loopback")]
impl LocalSellerTransport {
    /// `host`'s URLs to `address`, which must be a loopback address; every other URL to public addresses only.
    pub fn new(host: impl Into<String>, address: std::net::SocketAddr) -> Result<Self, TransportError> {
        let routes = crate::http::LoopbackFetch::new()
            .and_then(|f| f.route(host, address))
            .map_err(|e| TransportError(e.to_string()))?;
        Ok(Self { routes, direct: ReqwestTransport::new()?, public: PublicTransport::new()? })
    }
}

#[cfg(feature = "loopback")]
impl Transport for LocalSellerTransport {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        Box::pin(async move {
            let Some(target) = self.routes.target(&request.url) else { return self.public.send(request).await };
            let mut routed = request.clone();
            routed.url = target;
            self.direct.send(&routed).await
        })
    }
}
