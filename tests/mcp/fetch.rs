//! The public-address-only fetch: the address table of mcp.md §4, the resolver's vetting, and the fetch refusing
//! every non-public destination with zero connections on a loopback listener that counts them.

use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Trial;
use proptest::prelude::*;
use terms::BoxFuture;
use terms::http::{Lookup, PublicFetch, PublicResolver, check_link, is_public_address, is_public_ip};
use terms::{Fetch, Request};

use crate::common::*;

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::public_address_table", || Ok(table())),
        Trial::test("mcp::resolver_vets_every_address", || Ok(run(resolver()))),
        Trial::test("mcp::public_fetch_refuses_with_zero_connections", || Ok(run(zero_connections()))),
        Trial::test("mcp::public_literal_passes_the_check", || Ok(literal_passes())),
        Trial::test("mcp::base64_pattern_is_the_decoder", || Ok(base64_pattern())),
    ]
}

const NOT_PUBLIC: &str = "0.0.0.0 0.255.255.255 10.0.0.1 10.255.255.255 100.64.0.1 100.127.255.255 127.0.0.1 \
    127.255.255.254 169.254.169.254 172.16.0.1 172.31.255.255 192.0.0.8 192.0.2.1 198.51.100.7 203.0.113.9 \
    192.88.99.1 192.168.1.1 198.18.0.1 198.19.255.255 224.0.0.1 239.255.255.250 240.0.0.1 255.255.255.255 :: ::1 \
    ::ffff:127.0.0.1 ::ffff:10.0.0.1 ::ffff:a9fe:a9fe 64:ff9b::a00:1 64:ff9b::7f00:1 64:ff9b:1::1 100::1 2001::1 \
    2001:0:4136:e378:8000:63bf:3fff:fdd2 2001:db8::1 3fff::1 2002:c000:204::1 fc00::1 fd12:3456:789a::1 fe80::1 \
    febf::1 fec0::1 ff02::1";
const PUBLIC: &str = "1.1.1.1 8.8.8.8 9.9.9.9 100.63.255.255 100.128.0.0 172.15.255.255 172.32.0.0 192.167.255.255 \
    192.169.0.0 2606:4700:4700::1111 2001:4860:4860::8888 2001:200::1 ::ffff:1.1.1.1 ::ffff:101:101 64:ff9b::101:101";
const NOT_ADDRESSES: [&str; 6] = ["localhost", "atr.seller.example", "", "1.1.1", "fe80::1%eth0", "[::1]"];

fn table() {
    for a in NOT_PUBLIC.split_whitespace() {
        assert!(!is_public_address(a), "{a} is not public");
        assert!(a.parse::<IpAddr>().is_ok(), "{a} is an address");
    }
    for a in PUBLIC.split_whitespace() {
        assert!(is_public_address(a), "{a} is public");
    }
    for a in NOT_ADDRESSES {
        assert!(!is_public_address(a), "{a:?} is not an address");
    }
}

/// A lookup that answers from a table, counting the lookups.
struct Table(Vec<(&'static str, io::Result<Vec<IpAddr>>)>, std::sync::atomic::AtomicUsize);

impl Table {
    fn new(entries: Vec<(&'static str, io::Result<Vec<IpAddr>>)>) -> Arc<Self> {
        Arc::new(Self(entries, Default::default()))
    }
    fn count(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Lookup for Table {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let found = match self.0.iter().find(|(h, _)| *h == host) {
            Some((_, Ok(a))) => Ok(a.clone()),
            Some((_, Err(e))) => Err(io::Error::new(e.kind(), e.to_string())),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no such host")),
        };
        Box::pin(async move { found })
    }
}

fn ips(list: &[&str]) -> Vec<IpAddr> {
    list.iter().map(|a| a.parse().unwrap()).collect()
}

async fn resolver() {
    let table = Table::new(vec![
        ("public.example", Ok(ips(&["1.1.1.1", "2606:4700:4700::1111"]))),
        ("mixed.example", Ok(ips(&["1.1.1.1", "10.0.0.1"]))),
        ("mapped.example", Ok(ips(&["::ffff:127.0.0.1"]))),
        ("empty.example", Ok(vec![])),
        ("broken.example", Err(io::Error::other("resolver down"))),
    ]);
    let r = PublicResolver::new(table.clone());
    let got = r.vet("public.example").await.unwrap();
    assert_eq!(got.iter().map(|a| a.ip()).collect::<Vec<_>>(), ips(&["1.1.1.1", "2606:4700:4700::1111"]));
    for host in ["mixed.example", "mapped.example", "empty.example"] {
        let e = r.vet(host).await.unwrap_err();
        assert!(e.to_string().starts_with("ENOTPUBLIC"), "{host}: {e}");
    }
    let e = r.vet("broken.example").await.unwrap_err();
    assert!(e.to_string().contains("resolver down"), "the resolver's error passes: {e}");
    assert_eq!(table.count(), 5, "one lookup per name");
}

async fn zero_connections() {
    let v4 = Loopback::start("127.0.0.1:0").await.unwrap();
    let v6 = Loopback::start("[::1]:0").await;
    let port = v4.addr.port();
    let table = Table::new(vec![
        ("private.example", Ok(ips(&["127.0.0.1"]))),
        ("half.example", Ok(ips(&["1.1.1.1", "127.0.0.1"]))),
        ("mapped.example", Ok(ips(&["::ffff:127.0.0.1"]))),
    ]);
    let system = PublicFetch::new().unwrap();
    let injected = PublicFetch::with_lookup(table.clone()).unwrap();
    let mut links = vec![
        format!("https://127.0.0.1:{port}/atr"),
        format!("https://127.1:{port}/atr"),
        format!("https://0x7f.1:{port}/atr"),
        format!("https://2130706433:{port}/atr"),
        format!("https://[::ffff:127.0.0.1]:{port}/atr"),
        format!("https://[64:ff9b::7f00:1]:{port}/atr"),
        format!("https://localhost:{port}/atr"),
        format!("http://127.0.0.1:{port}/atr"),
    ];
    if let Some(v6) = &v6 {
        links.push(format!("https://[::1]:{}/atr", v6.addr.port()));
    }
    for link in &links {
        let got = system.get(Request { url: link, headers: &[] }).await;
        let e = got.err().unwrap_or_else(|| panic!("{link} refused"));
        let http = link.starts_with("http:");
        assert!(e.to_string().contains(if http { "only https" } else { "ENOTPUBLIC" }), "{link}: {e}");
    }
    for host in ["private.example", "half.example", "mapped.example"] {
        let link = format!("https://{host}:{port}/atr");
        let got = injected.get(Request { url: &link, headers: &[] }).await;
        let e = got.err().unwrap_or_else(|| panic!("{link} refused"));
        assert!(e.to_string().contains("ENOTPUBLIC"), "{link}: {e}");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(v4.connections(), 0, "no connection to 127.0.0.1");
    assert_eq!(v6.as_ref().map_or(0, Loopback::connections), 0, "no connection to ::1");
    assert_eq!(table.count(), 3, "each name resolved once");

    // The control: the same listener does count a connection from a fetch that does not vet addresses.
    let plain = terms::http::HttpFetch::from_client(terms::http::HttpFetch::builder().build().unwrap());
    let _ = plain.get(Request { url: &format!("http://127.0.0.1:{port}/atr"), headers: &[] }).await;
    assert!(until(5, || v4.connections() == 1).await, "the counter counts");
}

fn literal_passes() {
    for link in [
        "https://1.1.1.1/atr",
        "https://[2606:4700:4700::1111]/atr",
        "https://[::ffff:1.1.1.1]/atr",
        "https://atr.seller.example/x",
    ] {
        assert!(check_link(link).is_ok(), "{link}");
    }
    for link in
        ["https://10.0.0.1/", "https://[fe80::1]/", "https://169.254.169.254/latest", "http://1.1.1.1/", "not a link"]
    {
        assert!(check_link(link).is_err(), "{link}");
    }
    assert!(is_public_ip("64:ff9b::101:101".parse().unwrap()));
}

fn base64_pattern() {
    let re = regex::Regex::new(terms::mcp::BASE64_PATTERN).unwrap();
    let canonical = |s: &str| b64_decode(s).is_some();
    for s in [
        "", "/w==", "/x==", "/w", "AAE=", "AAF=", "AAAA", "AA==AA==", "_w==", "/w== ", "=", "A===", "QUJD", "QUI=",
        "QUJ=",
    ] {
        assert_eq!(re.is_match(s), canonical(s), "{s:?}");
    }
    let config = proptest::test_runner::Config { failure_persistence: None, cases: 2048, ..Default::default() };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    runner
        .run(&("[A-Za-z0-9+/=_ -]{0,12}", proptest::collection::vec(any::<u8>(), 0..10)), |(text, bytes)| {
            prop_assert_eq!(re.is_match(&text), canonical(&text), "{:?}", text);
            let encoded = b64_encode(&bytes);
            prop_assert!(re.is_match(&encoded));
            Ok(())
        })
        .unwrap();
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The bytes of canonical padded standard base64; `None` for anything else.
fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()?;
    (b64_encode(&bytes) == text).then_some(bytes)
}
