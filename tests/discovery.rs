//! The discovery document (LCP §2): every `emit` and `parse` row of `discovery.json` from its own data (`bytes`,
//! `bytesHex`, `inputRepeat`, `padTo`), the bad input an origin could serve (not JSON, nested past the cap, members
//! of the wrong type, an `atrHash` of the wrong form), and the document read from real loopback sockets under the
//! gate's fetch rules (an http origin refused unsent, the size cap declared and streamed, a redirect not followed,
//! the ETag kept and sent back, the deadline).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "support/net.rs"]
mod net;

use std::time::Duration;

use net::{Act, Framing, Loopback, Net, Payload, Server, Step};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use terms::discovery::{
    Discovered, DiscoveryError, DiscoveryRefusal, Found, MAX_DOCUMENT_BYTES, WELL_KNOWN_PATH, discovery_url, emit,
    fetch, parse,
};
use terms::{AtrHash, atr_hash};

fn file() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/discovery.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The file's `padTo` body: `{"terms":"https://seller.example/t.md","x-pad":"` + `a`… + `"}`, exactly `n` bytes.
fn pad_to(about: &str, n: usize) -> Vec<u8> {
    // The file's `about` states the form; the two ends are cut from it, not retyped.
    let head = about.split("'padTo' is the bytes '").nth(1).unwrap().split("' + 'a'").next().unwrap();
    let head = head.replace("\\\"", "\"");
    let tail = "\"}";
    assert!(head.starts_with("{\"terms\":\"https://") && head.ends_with("\"x-pad\":\""), "{head}");
    let mut body = head.into_bytes();
    body.resize(n - tail.len(), b'a');
    body.extend_from_slice(tail.as_bytes());
    assert_eq!(body.len(), n);
    body
}

fn row_bytes(f: &Value, row: &Value) -> Vec<u8> {
    if let Some(text) = row["bytes"].as_str() {
        text.as_bytes().to_vec()
    } else if let Some(hex) = row["bytesHex"].as_str() {
        hex::decode(hex).unwrap()
    } else {
        let n = usize::try_from(row["padTo"].as_u64().expect("bytes, bytesHex or padTo")).unwrap();
        pad_to(f["about"].as_str().unwrap(), n)
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn every_parse_row_reads_or_refuses_as_the_file_says() {
    let f = file();
    let rows = f["parse"].as_array().unwrap();
    assert_eq!(rows.len(), 16);
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let got = parse(&row_bytes(&f, row));
        match row["refused"].as_str() {
            Some(code) => assert_eq!(got.map(|_| ()).unwrap_err().code(), code, "{name}"),
            None => {
                let parsed = got.unwrap_or_else(|r| panic!("{name}: refused {r}"));
                assert_eq!(serde_json::to_value(&parsed.document).unwrap(), row["document"], "{name}");
                assert_eq!(json!(parsed.ignored), row["ignored"], "{name}");
            }
        }
    }
}

#[test]
fn every_emit_row_writes_or_refuses_as_the_file_says() {
    let f = file();
    let rows = f["emit"].as_array().unwrap();
    assert_eq!(rows.len(), 15);
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let mut input = row["input"].clone();
        if let Some(repeat) = row.get("inputRepeat") {
            let text =
                repeat["char"].as_str().unwrap().repeat(usize::try_from(repeat["count"].as_u64().unwrap()).unwrap());
            input[repeat["member"].as_str().unwrap()] = Value::String(text);
        }
        let got = emit(&input);
        let Some(expected) = row["bytes"].as_str() else {
            assert_eq!(got.unwrap_err().code(), row["refused"].as_str().unwrap(), "{name}");
            continue;
        };
        let bytes = got.unwrap_or_else(|r| panic!("{name}: refused {r}"));
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), expected, "{name}");
        if let Some(sha) = row["sha256"].as_str() {
            assert_eq!(sha256_hex(&bytes), sha, "{name}");
        }
        if let Some(etag) = row["etag"].as_str() {
            assert_eq!(format!("\"{}\"", sha256_hex(&bytes)), etag, "{name}");
        }
        // What parse reads back, written again by the typed document, is the same bytes.
        assert_eq!(parse(&bytes).unwrap().document.to_bytes().unwrap(), bytes, "{name}");
    }
}

const TERMS: &str = "https://seller.example/t.md";

fn with(member: &str, value: Value) -> Vec<u8> {
    let mut doc = json!({"terms": TERMS});
    doc[member] = value;
    serde_json::to_vec(&doc).unwrap()
}

fn code(bytes: &[u8]) -> String {
    parse(bytes).map(|p| format!("read {:?}", p.document)).unwrap_or_else(|r| r.code())
}

#[test]
fn what_is_not_one_json_object_is_refused_as_such() {
    for bad in [
        &b""[..],
        b" ",
        b"{",
        b"null",
        b"\"https://seller.example/t.md\"",
        b"7",
        b"{\"terms\":\"https://seller.example/t.md\"} {}",
        b"{\"terms\":\"https://seller.example/t.md\",}",
        b"{'terms':'https://seller.example/t.md'}",
        b"{\"terms\":\"https://seller.example/t.md\"}\x00",
        b"\xfe\xff{}",
    ] {
        assert_eq!(code(bad), "discovery/not-json-object", "{:?}", String::from_utf8_lossy(bad));
    }
}

/// 64 levels (the document itself is level 1) are read, its unknown member ignored; 65 are not JSON the gate reads.
#[test]
fn a_document_nested_past_the_cap_is_refused() {
    let nested = |levels: usize| {
        let inner = format!("{}{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        format!("{{\"terms\":\"{TERMS}\",\"x\":{inner}}}").into_bytes()
    };
    let read = parse(&nested(64)).unwrap();
    assert_eq!(read.ignored, ["x"]);
    assert_eq!(code(&nested(65)), "discovery/not-json-object");
    // Deep inside a known member too, and far past the cap without a stack overflow.
    let deep_contact = format!("{{\"terms\":\"{TERMS}\",\"contact\":{{\"x\":{}{}}}}}", "[".repeat(70), "]".repeat(70));
    assert_eq!(code(deep_contact.as_bytes()), "discovery/not-json-object");
    let abyss = format!("{{\"terms\":\"{TERMS}\",\"x\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(abyss.len() > MAX_DOCUMENT_BYTES);
    assert_eq!(code(abyss.as_bytes()), "discovery/too-large");
    let abyss = format!("{{\"terms\":\"{TERMS}\",\"x\":{}{}}}", "[".repeat(30_000), "]".repeat(30_000));
    assert_eq!(code(abyss.as_bytes()), "discovery/not-json-object");
}

#[test]
fn every_member_of_the_wrong_type_is_refused_by_its_path() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (with("terms", json!(null)), "discovery/member-malformed/terms"),
        (with("terms", json!(["https://seller.example/t.md"])), "discovery/member-malformed/terms"),
        (with("termsFormat", json!("")), "discovery/member-malformed/termsFormat"),
        (with("termsFormat", json!(1)), "discovery/member-malformed/termsFormat"),
        (with("acceptanceRequired", json!(1)), "discovery/member-malformed/acceptanceRequired"),
        (with("acceptanceRequired", json!(null)), "discovery/member-malformed/acceptanceRequired"),
        (with("disputeResolution", json!("arbitration")), "discovery/member-malformed/disputeResolution"),
        (with("disputeResolution", json!([])), "discovery/member-malformed/disputeResolution"),
        (with("disputeResolution", json!({"method": {}})), "discovery/member-malformed/disputeResolution.method"),
        (with("disputeResolution", json!({"catalog": ""})), "discovery/member-malformed/disputeResolution.catalog"),
        (with("disputeResolution", json!({"clauseId": 7})), "discovery/clause-id-malformed"),
        (with("returns", json!(true)), "discovery/member-malformed/returns"),
        (with("contact", json!("legal@seller.example")), "discovery/member-malformed/contact"),
        (with("contact", json!({"technical": ["x"]})), "discovery/member-malformed/contact.technical"),
        (with("api", json!({})), "discovery/member-malformed/api"),
        (with("terms", json!("https://user@seller.example/t.md")), "discovery/terms-not-https"),
        (with("terms", json!("HTTPS://seller.example/t.md ")), "discovery/terms-not-https"),
        (serde_json::to_vec(&json!({"termsFormat": "markdown", "api": 1})).unwrap(), "discovery/terms-missing"),
    ];
    for (bytes, expected) in cases {
        assert_eq!(code(&bytes), expected, "{}", String::from_utf8_lossy(&bytes));
    }
    // The first fault in table order is the one named, whatever order the document writes its members in.
    let two = br#"{"api":1,"termsFormat":2,"terms":"https://seller.example/t.md"}"#;
    assert_eq!(code(two), "discovery/member-malformed/termsFormat");
}

#[test]
fn an_atr_hash_of_the_wrong_form_is_refused() {
    let h = atr_hash(b"abc").to_hex();
    let digits = &h[2..];
    for bad in [
        json!(format!("0X{digits}")),
        json!(digits),
        json!(format!("0x{}", &digits[1..])),
        json!(format!("0x{digits}0")),
        json!(format!("0x{}g", &digits[1..])),
        json!(format!(" {h}")),
        json!(format!("sha256:{h}")),
        json!(null),
        json!(7),
        json!([h]),
    ] {
        assert_eq!(code(&with("atrHash", bad.clone())), "discovery/atr-hash-malformed", "{bad}");
    }
    // Either case reads, as the same 32 bytes.
    let upper = format!("0x{}", digits.to_uppercase());
    assert_eq!(parse(&with("atrHash", json!(upper))).unwrap().document.atr_hash, AtrHash::parse(&h));
}

#[test]
fn the_url_is_the_origin_s_well_known_path_and_https_only() {
    assert_eq!(
        discovery_url("https://Seller.Example:8443/v1/quote?x=1#f").unwrap(),
        format!("https://seller.example:8443{WELL_KNOWN_PATH}")
    );
    assert_eq!(
        discovery_url("https://seller.example:443").unwrap(),
        format!("https://seller.example{WELL_KNOWN_PATH}")
    );
    for bad in [
        "http://seller.example/",
        "seller.example",
        "/v1/quote",
        "https://user:pw@seller.example/",
        "ftp://seller.example/",
        "https://",
        "https://seller example/",
    ] {
        let err = discovery_url(bad).unwrap_err();
        assert_eq!(err.code(), "discovery/not-https", "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Read from an origin on loopback.

const HOST: &str = "seller.test";
const SERVICE: &str = "https://seller.test/v1/quote";

fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

fn document() -> Vec<u8> {
    let h = atr_hash(b"abc").to_hex();
    serde_json::to_vec(&json!({"terms": TERMS, "atrHash": h, "acceptanceRequired": true, "x-note": "kept out"}))
        .unwrap()
}

/// Serves `acts` for the origin and reads its document once (with `etag` where given).
fn read_with(acts: Vec<Act>, etag: Option<&str>) -> (Result<Found, DiscoveryError>, Server, Loopback) {
    let rt = paused();
    let net = Net::new();
    let server = rt.block_on(Server::start(&net, acts));
    let loopback = Loopback::new(&net).route(HOST, &server);
    let got = rt.block_on(fetch(&loopback, SERVICE, etag));
    (got, server, loopback)
}

fn unfetchable(got: &Result<Found, DiscoveryError>) -> String {
    match got {
        Err(e @ DiscoveryError::Unfetchable { .. }) => e.to_string(),
        other => panic!("not unfetchable: {other:?}"),
    }
}

#[test]
fn a_document_is_read_with_its_etag_and_the_etag_is_sent_back() {
    let etag = "\"v1-abc\"";
    let (got, server, loopback) = read_with(vec![Act::ok(document()).header("ETag", etag)], None);
    let Ok(Found::Document(found)) = got else { panic!("{got:?}") };
    let Discovered { url, document: read, ignored, etag: kept, bytes, .. } = *found;
    assert_eq!(url, format!("https://{HOST}{WELL_KNOWN_PATH}"));
    assert_eq!(loopback.asked(), std::slice::from_ref(&url));
    let seen = server.seen();
    assert_eq!(seen[0].line, format!("GET {WELL_KNOWN_PATH} HTTP/1.1"));
    assert_eq!(seen[0].header("accept-encoding"), Some("identity"));
    assert_eq!(seen[0].header("if-none-match"), None);
    assert_eq!((read.acceptance_required, ignored), (Some(true), vec!["x-note".to_owned()]));
    assert_eq!(read.atr_hash, Some(atr_hash(b"abc")));
    assert_eq!((kept.as_deref(), bytes), (Some(etag), document()));

    let (again, server, _) = read_with(vec![Act::status(304).header("ETag", etag)], Some(etag));
    assert_eq!(again, Ok(Found::NotModified { url }));
    assert_eq!(server.seen()[0].header("if-none-match"), Some(etag));
    // A 304 nobody asked for is no answer.
    let (unasked, _, _) = read_with(vec![Act::status(304)], None);
    assert!(unfetchable(&unasked).contains("answered status 304"));
}

#[test]
fn an_origin_that_serves_none_says_so_and_other_statuses_are_unfetchable() {
    for status in [404, 410] {
        let (got, _, _) = read_with(vec![Act::status(status)], None);
        assert!(matches!(got, Ok(Found::NotServed { status: s, .. }) if s == status), "{got:?}");
    }
    for status in [500, 401, 402, 204, 206] {
        let (got, _, _) = read_with(vec![Act::status(status)], None);
        assert!(unfetchable(&got).contains(&format!("answered status {status}")), "{got:?}");
    }
}

#[test]
fn a_redirect_is_not_followed() {
    let to = format!("https://{HOST}/elsewhere.json");
    let (got, server, loopback) = read_with(vec![Act::status(302).header("Location", &to), Act::ok(document())], None);
    assert!(unfetchable(&got).contains("redirect (status 302)"), "{got:?}");
    assert_eq!((server.count(), loopback.asked().len()), (1, 1));
}

#[test]
fn an_http_origin_is_refused_before_anything_is_sent() {
    let rt = paused();
    let net = Net::new();
    let server = rt.block_on(Server::start(&net, vec![Act::ok(document())]));
    let loopback = Loopback::new(&net).route(HOST, &server);
    let got = rt.block_on(fetch(&loopback, "http://seller.test/v1/quote", None));
    assert!(matches!(got, Err(DiscoveryError::NotHttps { .. })), "{got:?}");
    assert_eq!(got.unwrap_err().code(), "discovery/not-https");
    assert!(loopback.asked().is_empty());
    assert_eq!(server.count(), 0);
}

#[test]
fn a_document_over_the_cap_is_refused_declared_or_streamed() {
    let f = file();
    let exact = pad_to(f["about"].as_str().unwrap(), MAX_DOCUMENT_BYTES);
    let (got, _, _) = read_with(vec![Act::ok(exact.clone())], None);
    assert!(matches!(&got, Ok(Found::Document(d)) if d.bytes == exact), "exactly the cap is read");

    let over = pad_to(f["about"].as_str().unwrap(), MAX_DOCUMENT_BYTES + 1);
    let too_large = Err(DiscoveryError::Refused {
        url: format!("https://{HOST}{WELL_KNOWN_PATH}"),
        refusal: DiscoveryRefusal::TooLarge,
    });
    let (declared, _, _) = read_with(vec![Act::ok(over.clone())], None);
    assert_eq!(declared, too_large);
    // Chunked with no length declared: stopped once the bytes passed the cap, the endless body never read to its end.
    let endless = Act::stream(Framing::Chunked, vec![Step::Endless(vec![b' '; 4096])]);
    let (streamed, server, _) = read_with(vec![endless], None);
    assert_eq!(streamed, too_large);
    assert!(server.written() <= MAX_DOCUMENT_BYTES + net::WINDOW + 4096, "wrote {}", server.written());
    let (until_close, _, _) = read_with(vec![Act::ok(vec![]).body(Payload::UntilClose(over))], None);
    assert_eq!(until_close, too_large);
}

#[test]
fn a_served_document_is_held_to_parse() {
    let (got, _, _) = read_with(vec![Act::ok(b"<html>not json</html>".to_vec())], None);
    assert_eq!(got.unwrap_err().code(), "discovery/not-json-object");
    let (got, _, _) = read_with(vec![Act::ok(with("atrHash", json!("0x1234")))], None);
    assert_eq!(got.unwrap_err().code(), "discovery/atr-hash-malformed");
    let (got, _, _) = read_with(vec![Act::ok(with("terms", json!("http://seller.example/t.md")))], None);
    assert_eq!(got.unwrap_err().code(), "discovery/terms-not-https");
    let (got, _, _) = read_with(vec![Act::ok(document()).header("Content-Encoding", "gzip")], None);
    assert!(unfetchable(&got).contains("content coding `gzip`"), "{got:?}");
}

#[test]
fn an_origin_that_never_answers_is_ended_by_the_deadline() {
    let rt = paused();
    let net = Net::new();
    let server = rt.block_on(Server::start(&net, vec![Act::Never]));
    let loopback = Loopback::new(&net).route(HOST, &server);
    let got = rt.block_on(async {
        let started = tokio::time::Instant::now();
        let got = fetch(&loopback, SERVICE, None).await;
        (got, started.elapsed())
    });
    assert!(unfetchable(&got.0).contains("no whole answer within 10 s"), "{:?}", got.0);
    assert_eq!(got.1, Duration::from_secs(10));
}

#[test]
fn a_listing_that_differs_from_the_offer_s_h_is_said() {
    let (got, _, _) = read_with(vec![Act::ok(document())], None);
    let Ok(Found::Document(found)) = got else { panic!("{got:?}") };
    assert_eq!(found.differs_from(&atr_hash(b"abc")), None);
    assert_eq!(found.differs_from(&atr_hash(b"abd")), Some(atr_hash(b"abc")));
    let (got, _, _) = read_with(vec![Act::ok(with("termsFormat", json!("markdown")))], None);
    let Ok(Found::Document(unlisted)) = got else { panic!("{got:?}") };
    assert_eq!(unlisted.differs_from(&atr_hash(b"abd")), None, "no listing differs from nothing");
}
