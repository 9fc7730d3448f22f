//! A fetch for links anyone may name (the `terms-mcp` binary's): a link is fetched only from public addresses. A server that an agent drives
//! fetches whatever link a seller's document names; without this rule a document could point it at the loopback
//! interface, the cloud metadata address or the host's private network.
//!
//! A host written as an IP address is checked before any connection (the HTTP connector never asks the resolver
//! for a literal). A host name is resolved once, and the connection goes only to the resolved addresses, and only
//! when every one of them is public. Everything else is [`HttpFetch`]'s: https only, no redirect followed, no
//! proxy, nothing decompressed.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use super::HttpFetch;
use crate::fetch::{Fetch, FetchError, Request, Response};
use crate::signer::BoxFuture;

/// The IPv4 blocks that are not globally reachable: IANA's special-purpose registry (this network, private use,
/// shared address space, loopback, link local, IETF protocol assignments, the documentation nets, the 6to4 relay
/// anycast, benchmarking), multicast and the reserved 240/4 (with the limited broadcast).
const NOT_PUBLIC_V4: [(Ipv4Addr, u8); 15] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    (Ipv4Addr::new(192, 0, 2, 0), 24),
    (Ipv4Addr::new(192, 88, 99, 0), 24),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    (Ipv4Addr::new(198, 51, 100, 0), 24),
    (Ipv4Addr::new(203, 0, 113, 0), 24),
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    (Ipv4Addr::new(240, 0, 0, 0), 4),
];

/// Inside global unicast (2000::/3), the blocks that are not globally reachable or not a host's own address: the
/// IETF protocol assignments (Teredo included), documentation, 6to4, and the second documentation block.
const NOT_PUBLIC_V6: [(Ipv6Addr, u8); 4] = [
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),
];

const NAT64: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0);

fn in_v4(addr: Ipv4Addr, (net, len): (Ipv4Addr, u8)) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
    u32::from(addr) & mask == u32::from(net) & mask
}

fn in_v6(addr: Ipv6Addr, (net, len): (Ipv6Addr, u8)) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
    u128::from(addr) & mask == u128::from(net) & mask
}

fn public_v4(addr: Ipv4Addr) -> bool {
    !NOT_PUBLIC_V4.iter().any(|block| in_v4(addr, *block))
}

fn public_v6(addr: Ipv6Addr) -> bool {
    // IPv4-mapped (::ffff:0:0/96) and well-known NAT64 (64:ff9b::/96) reach the IPv4 address they carry.
    if let Some(v4) = addr.to_ipv4_mapped() {
        return public_v4(v4);
    }
    if in_v6(addr, (NAT64, 96)) {
        let [.., a, b, c, d] = addr.octets();
        return public_v4(Ipv4Addr::new(a, b, c, d));
    }
    let global_unicast = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);
    in_v6(addr, global_unicast) && !NOT_PUBLIC_V6.iter().any(|block| in_v6(addr, *block))
}

/// Whether the address is one the fetch may connect to: globally reachable unicast, judged for IPv4-mapped and
/// NAT64 addresses by the IPv4 address they carry.
pub fn is_public_ip(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

/// Whether the text is an IP address (IPv4 dotted quad, or IPv6 without brackets or zone) that is public. A name, a
/// bracketed or zoned address, or anything else is not.
pub fn is_public_address(text: &str) -> bool {
    text.parse::<IpAddr>().is_ok_and(is_public_ip)
}

fn not_public(addr: IpAddr) -> FetchError {
    FetchError::new(format!("ENOTPUBLIC: {addr} is not a public address."))
}

/// Where a host name's addresses come from. The binary uses the operating system's resolver; tests inject their
/// own so that a name can be made to resolve to any address.
pub trait Lookup: Send + Sync {
    /// Every address the name resolves to.
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo`, so `/etc/hosts` counts), asked once for every address.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, 0)).await?.map(|a| a.ip()).collect()) })
    }
}

/// The resolver the fetch connects through: one lookup, then every address vetted.
#[derive(Clone)]
pub struct PublicResolver {
    lookup: Arc<dyn Lookup>,
}

impl fmt::Debug for PublicResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicResolver").finish_non_exhaustive()
    }
}

impl PublicResolver {
    /// A resolver over this lookup.
    pub fn new(lookup: Arc<dyn Lookup>) -> Self {
        Self { lookup }
    }

    /// The addresses to connect to for `host`: all it resolves to when every one is public; an error when the
    /// lookup fails, finds nothing, or finds any address that is not public.
    pub async fn vet(&self, host: &str) -> Result<Vec<SocketAddr>, FetchError> {
        let found = self.lookup.lookup(host).await.map_err(FetchError::new)?;
        if found.is_empty() {
            return Err(FetchError::new(format!("ENOTPUBLIC: {host} resolves to no address.")));
        }
        if let Some(bad) = found.iter().find(|a| !is_public_ip(**a)) {
            return Err(not_public(*bad));
        }
        Ok(found.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect())
    }
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        Box::pin(async move {
            let addrs = this.vet(name.as_str()).await?;
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The check made on a link before any connection: https, and a host written as an IP address must be public.
/// (A host name is checked by [`PublicResolver`] when the connection resolves it.)
pub fn check_link(link: &str) -> Result<(), FetchError> {
    let url = url::Url::parse(link).map_err(FetchError::new)?;
    if url.scheme() != "https" {
        return Err(FetchError::new("only https links are fetched"));
    }
    let literal = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        // A WHATWG parser turns every IPv4 form into Host::Ipv4; a name that still reads as an address is checked
        // as one all the same.
        Some(url::Host::Domain(name)) => match name.parse::<IpAddr>() {
            Ok(ip) => ip,
            Err(_) => return Ok(()),
        },
        None => return Err(FetchError::new("the link has no host")),
    };
    if is_public_ip(literal) { Ok(()) } else { Err(not_public(literal)) }
}

/// A [`Fetch`] that connects only to public addresses: the fetch `terms-mcp` serves with.
#[derive(Debug, Clone)]
pub struct PublicFetch {
    inner: HttpFetch,
}

impl PublicFetch {
    /// Over the operating system's resolver.
    pub fn new() -> Result<Self, FetchError> {
        Self::with_lookup(Arc::new(SystemLookup))
    }

    /// Over another lookup (tests; a host with its own resolver). The rule is the same: every address it gives
    /// must be public.
    pub fn with_lookup(lookup: Arc<dyn Lookup>) -> Result<Self, FetchError> {
        let client = public_client(lookup).map_err(FetchError::new)?;
        Ok(Self { inner: HttpFetch::from_client(client) })
    }
}

/// The gate's hardened reqwest client, https only, connecting only where `lookup`'s every address is public: what
/// [`PublicFetch`] fetches terms with, and what `atr_pay` sends on.
pub(crate) fn public_client(lookup: Arc<dyn Lookup>) -> Result<reqwest::Client, reqwest::Error> {
    HttpFetch::builder().https_only(true).dns_resolver(Arc::new(PublicResolver::new(lookup))).build()
}

impl Fetch for PublicFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            check_link(request.url)?;
            self.inner.get(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_cover_the_edges() {
        assert!(in_v4(Ipv4Addr::new(0, 0, 0, 0), (Ipv4Addr::new(0, 0, 0, 0), 0)));
        assert!(in_v4(Ipv4Addr::new(10, 255, 255, 255), (Ipv4Addr::new(10, 0, 0, 0), 8)));
        assert!(!in_v4(Ipv4Addr::new(11, 0, 0, 0), (Ipv4Addr::new(10, 0, 0, 0), 8)));
        assert!(in_v6(Ipv6Addr::LOCALHOST, (Ipv6Addr::LOCALHOST, 128)));
    }

    #[test]
    fn a_resolver_prints_its_name_not_its_lookup() {
        // A fetch's Debug (in a decline's log line) names the resolver; the lookup behind it is the caller's.
        assert_eq!(format!("{:?}", PublicResolver::new(Arc::new(SystemLookup))), "PublicResolver { .. }");
    }
}
