//! The checks a buyer of the signed agent contract runs alone that fetch: a document from its fixed address, a
//! seller's key list, a mandate's status and the upstream receipts, against an in-memory `Fetch` and against real
//! HTTP/1.1 servers on loopback through `http::LoopbackFetch` (each test host routed to its own server). Every
//! document is signed here with `sign_object` and fixed seeds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use terms::contract::{
    ContractError, MAX_DOCUMENT_BYTES, MAX_UPSTREAM, Quote, Receipt, check_output, check_status, fetch_document,
    fetch_keys, follow_upstream, public_key_of, read, sign_object,
};
use terms::http::LoopbackFetch;
use terms::{Body, BoxFuture, Fetch, FetchError, Request, Response};
use tokio::net::TcpListener;

const SELLER_A: [u8; 32] = [0xa1; 32];
const SELLER_B: [u8; 32] = [0xb2; 32];
const SELLER_C: [u8; 32] = [0xc3; 32];
const STRANGER: [u8; 32] = [0x5e; 32];

/// One scripted answer: status, headers, body.
type Answer = (u16, Vec<(String, String)>, Vec<u8>);

fn ok(body: impl Into<Vec<u8>>) -> Answer {
    (200, vec![("content-type".into(), "application/json".into())], body.into())
}

fn object(value: Value) -> Map<String, Value> {
    let Value::Object(o) = value else { panic!("not an object") };
    o
}

fn signed_bytes(mut o: Map<String, Value>, seed: &[u8; 32]) -> Vec<u8> {
    let signature = sign_object(&o, seed).unwrap();
    o.insert("signature".into(), Value::String(signature));
    serde_json::to_vec(&Value::Object(o)).unwrap()
}

fn key_list(seed: &[u8; 32]) -> Vec<u8> {
    serde_json::to_vec(&json!({"contract": "1.0", "keys": [{
        "kid": "k1", "alg": "ed25519", "key": public_key_of(seed), "from": "2025-01-01T00:00:00Z"
    }]}))
    .unwrap()
}

fn receipt_object(seller: &str, id: &str, upstream: &[&str], kid: &str) -> Map<String, Value> {
    let h = |b: u8| format!("0x{}", hex::encode([b; 32]));
    let mut o = object(json!({
        "contract": "1.0", "id": id, "seller": seller, "verb": "translate", "version": "1", "price": "0.01",
        "currency": "USD", "paid": "0.01", "terms": h(1), "output": h(2), "definition": h(3), "kind": "call",
        "time": "2026-01-01T00:00:00Z", "kid": kid
    }));
    if !upstream.is_empty() {
        o.insert("upstream".into(), json!(upstream));
    }
    o
}

/// A receipt signed with `seed` under the key id `k1`.
fn receipt(seller: &str, id: &str, upstream: &[&str], seed: &[u8; 32]) -> Vec<u8> {
    signed_bytes(receipt_object(seller, id, upstream, "k1"), seed)
}

/// The buyer's own receipt, which names the first upstream receipts (its signature is not what these tests check).
fn root(upstream: &[&str]) -> Receipt {
    read::<Receipt>(&receipt("root.test", "root", upstream, &STRANGER)).unwrap().into_doc()
}

// ---- An in-memory fetch ----

/// Answers each URL from a table and records every URL asked for; a URL not in the table is a transport error.
#[derive(Default)]
struct Memory {
    answers: HashMap<String, Answer>,
    asked: Mutex<Vec<String>>,
}

impl Memory {
    fn with(mut self, url: &str, answer: Answer) -> Self {
        self.answers.insert(url.to_owned(), answer);
        self
    }
    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Fetch for Memory {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.asked.lock().unwrap().push(request.url.to_owned());
        assert_eq!(request.headers, &[("Accept-Encoding", "identity")]);
        let answer = self.answers.get(request.url).cloned();
        Box::pin(async move {
            let (status, headers, body) = answer.ok_or_else(|| FetchError::new("connection refused"))?;
            Ok(Response::new(status, headers, Body::from_bytes(body)))
        })
    }
}

fn unfetchable(e: ContractError) -> (String, String) {
    match e {
        ContractError::Unfetchable { url, detail } => (url, detail),
        other => panic!("not Unfetchable: {other:?}"),
    }
}

#[tokio::test]
async fn a_document_is_fetched_under_the_gate_rules() {
    let url = "https://a.test/receipts/a1";
    let body = receipt("a.test", "a1", &[], &SELLER_A);
    let memory = Memory::default()
        .with(url, ok(body.clone()))
        .with("https://a.test/.well-known/receipt-keys", ok(key_list(&SELLER_A)))
        .with("https://a.test/moved", (301, vec![("location".into(), url.into())], vec![]))
        .with("https://a.test/gzip", (200, vec![("content-encoding".into(), "gzip".into())], body.clone()))
        .with("https://a.test/huge", ok(vec![b' '; MAX_DOCUMENT_BYTES + 1]))
        .with("https://a.test/quote", ok(body.clone()));
    let got = fetch_document::<Receipt>(&memory, url).await.unwrap();
    got.verify(&fetch_keys(&memory, "a.test").await.unwrap()).unwrap();
    assert_eq!(got.doc().id, "a1");
    // The receipt's output digest against the body the call answered, as a buyer holds it.
    let answered = b"the translated text";
    let e = check_output(got.doc(), answered).unwrap_err();
    assert_eq!(e.code(), "contract/digest-mismatch");

    let (_, detail) = unfetchable(fetch_document::<Receipt>(&memory, "https://a.test/moved").await.unwrap_err());
    assert!(detail.contains("redirect (status 301)"), "{detail}");
    let (_, detail) = unfetchable(fetch_document::<Receipt>(&memory, "https://a.test/gzip").await.unwrap_err());
    assert!(detail.contains("`gzip`"), "{detail}");
    let (_, detail) = unfetchable(fetch_document::<Receipt>(&memory, "https://a.test/huge").await.unwrap_err());
    assert!(detail.contains(&format!("more than {MAX_DOCUMENT_BYTES} bytes")), "{detail}");
    let (_, detail) = unfetchable(fetch_document::<Receipt>(&memory, "https://a.test/none").await.unwrap_err());
    assert!(detail.contains("connection refused"), "{detail}");
    // A receipt read as a quote is malformed; nothing was followed but the URLs asked for.
    let e = fetch_document::<Quote>(&memory, "https://a.test/quote").await.unwrap_err();
    assert!(matches!(e, ContractError::Malformed { document: "quote", .. }), "{e:?}");
    assert_eq!(memory.asked().iter().filter(|u| u.as_str() == url).count(), 1);

    // Links that are not https, and hosts that are not hosts, are refused unsent.
    let before = memory.asked().len();
    for bad in ["http://a.test/receipts/a1", "https://user@a.test/x", "a.test/receipts/a1"] {
        let (got_url, detail) = unfetchable(fetch_document::<Receipt>(&memory, bad).await.unwrap_err());
        assert_eq!((got_url.as_str(), detail.as_str()), (bad, "not an https link"));
    }
    for bad in ["", "a.test/x", "a.test?x", "me@a.test", "a.test#"] {
        let (_, detail) = unfetchable(fetch_keys(&memory, bad).await.unwrap_err());
        assert!(detail.ends_with("is not a host"), "{bad}: {detail}");
    }
    assert_eq!(memory.asked().len(), before);
}

/// A fetch that never answers.
struct Silent;

impl Fetch for Silent {
    fn get<'a>(&'a self, _: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn a_fetch_that_never_answers_ends_at_the_deadline() {
    let started = tokio::time::Instant::now();
    let (_, detail) = unfetchable(check_status(&Silent, "https://status.test/m/1").await.unwrap_err());
    assert_eq!(detail, "no whole answer within 10 s");
    assert_eq!(started.elapsed(), std::time::Duration::from_secs(10));
}

#[tokio::test]
async fn the_status_is_active_or_revoked_and_nothing_else() {
    let at = |p: &str| format!("https://status.test/{p}");
    let memory = Memory::default()
        .with(&at("active"), ok(r#"{"status":"active","since":"2026-01-01T00:00:00Z"}"#))
        .with(&at("revoked"), ok(r#"{"status":"revoked"}"#))
        .with(&at("twice"), ok(r#"{"status":"revoked","status":"active"}"#))
        .with(&at("upper"), ok(r#"{"status":"ACTIVE"}"#))
        .with(&at("bool"), ok(r#"{"status":true}"#))
        .with(&at("none"), ok(r#"{"state":"active"}"#))
        .with(&at("list"), ok(r#"["active"]"#));
    check_status(&memory, &at("active")).await.unwrap();
    assert_eq!(check_status(&memory, &at("revoked")).await, Err(ContractError::Revoked));
    for (path, want) in [
        ("twice", "unreadable"),
        ("upper", "\"ACTIVE\", neither"),
        ("bool", "true, neither"),
        ("none", "no `status` member"),
        ("list", "unreadable"),
    ] {
        let (url, detail) = unfetchable(check_status(&memory, &at(path)).await.unwrap_err());
        assert_eq!(url, at(path));
        assert!(detail.contains(want), "{path}: {detail}");
    }
}

#[tokio::test]
async fn upstream_receipts_are_refused_past_their_bounds_in_memory() {
    let a = "https://a.test/receipts/a1";
    let b = "https://b.test/receipts/b1";
    let c = "https://c.test/receipts/c1";
    let keys = |m: Memory| {
        m.with("https://a.test/.well-known/receipt-keys", ok(key_list(&SELLER_A)))
            .with("https://b.test/.well-known/receipt-keys", ok(key_list(&SELLER_B)))
            .with("https://c.test/.well-known/receipt-keys", ok(key_list(&SELLER_C)))
    };
    // A diamond: a and b both name c, which is refused as followed already.
    let memory = keys(Memory::default())
        .with(a, ok(receipt("a.test", "a1", &[c], &SELLER_A)))
        .with(b, ok(receipt("b.test", "b1", &[c], &SELLER_B)))
        .with(c, ok(receipt("c.test", "c1", &[], &SELLER_C)));
    assert_eq!(follow_upstream(&memory, &root(&[a, b]), 3).await, Err(ContractError::UpstreamLoop(c.into())));
    // The key list of each seller is fetched once.
    let asked = memory.asked();
    assert_eq!(asked.iter().filter(|u| u.starts_with("https://c.test/.well-known")).count(), 1);
    // A receipt that names the buyer's own receipt again (by seller and id, at another address).
    let memory = keys(Memory::default())
        .with(a, ok(receipt("a.test", "a1", &["https://root.test/r/root"], &SELLER_A)))
        .with("https://root.test/r/root", ok(receipt("root.test", "root", &[], &STRANGER)))
        .with("https://root.test/.well-known/receipt-keys", ok(key_list(&STRANGER)));
    let e = follow_upstream(&memory, &root(&[a]), 3).await.unwrap_err();
    assert_eq!(e, ContractError::UpstreamLoop("https://root.test/r/root".into()));
    // Depth 0 allows no upstream receipt at all, and asks for none.
    let memory = keys(Memory::default());
    assert_eq!(follow_upstream(&memory, &root(&[a]), 0).await, Err(ContractError::UpstreamTooDeep(0)));
    assert!(memory.asked().is_empty());
    assert_eq!(follow_upstream(&memory, &root(&[]), 0).await, Ok(vec![]));
    // More receipts in all than the bound, however shallow.
    let many: Vec<String> = (0..=MAX_UPSTREAM).map(|i| format!("https://a.test/receipts/{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let e = follow_upstream(&memory, &root(&many), 1).await.unwrap_err();
    assert_eq!((e.code(), e), ("contract/upstream-too-many", ContractError::UpstreamTooMany(MAX_UPSTREAM)));
    assert!(memory.asked().is_empty());
}

// ---- Real sockets ----

/// An HTTP/1.1 server on loopback answering each path from `answers` (404 otherwise), counting the requests per
/// path.
async fn serve(answers: HashMap<&str, Answer>) -> (SocketAddr, Arc<Mutex<HashMap<String, usize>>>) {
    let answers: Arc<HashMap<String, Answer>> = Arc::new(answers.into_iter().map(|(p, a)| (p.to_owned(), a)).collect());
    let hits = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let counted = hits.clone();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else { return };
            let (answers, counted) = (answers.clone(), counted.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request: hyper::Request<Incoming>| {
                    let path = request.uri().path().to_owned();
                    *counted.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let (status, headers, body) = answers.get(&path).cloned().unwrap_or((404, vec![], vec![]));
                    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
                    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                    for (name, value) in headers {
                        response.headers_mut().insert(
                            HeaderName::from_bytes(name.as_bytes()).unwrap(),
                            HeaderValue::from_str(&value).unwrap(),
                        );
                    }
                    async move { Ok::<_, Infallible>(response) }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(socket), service).await;
            });
        }
    });
    (address, hits)
}

#[tokio::test]
async fn the_status_on_a_real_socket() {
    let large = format!(r#"{{"status":"active","pad":"{}"}}"#, "x".repeat(5000));
    let (address, hits) = serve(HashMap::from([
        ("/active", ok(r#"{"status":"active"}"#)),
        ("/revoked", ok(r#"{"status":"revoked"}"#)),
        ("/moved", (302, vec![("location".into(), "/active".into())], vec![])),
        ("/broken", (500, vec![], br#"{"status":"active"}"#.to_vec())),
        ("/paused", ok(r#"{"status":"paused"}"#)),
        ("/html", (200, vec![("content-type".into(), "text/html".into())], b"<p>active</p>".to_vec())),
        ("/large", ok(large)),
    ]))
    .await;
    let fetch = LoopbackFetch::new().unwrap().route("status.test", address).unwrap();
    let at = |p: &str| format!("https://status.test{p}");
    check_status(&fetch, &at("/active")).await.unwrap();
    let e = check_status(&fetch, &at("/revoked")).await.unwrap_err();
    assert_eq!((e.code(), &e), ("contract/revoked", &ContractError::Revoked));
    for (path, want) in [
        ("/moved", "answered a redirect (status 302), which is not followed"),
        ("/broken", "answered status 500, not 200"),
        ("/paused", "the status is \"paused\", neither \"active\" nor \"revoked\""),
        ("/html", "the status answer is unreadable"),
        ("/large", "answered more than 4096 bytes"),
    ] {
        let e = check_status(&fetch, &at(path)).await.unwrap_err();
        assert_eq!(e.code(), "contract/unfetchable");
        let (url, detail) = unfetchable(e);
        assert_eq!(url, at(path));
        assert!(detail.starts_with(want), "{path}: {detail}");
    }
    // The redirect was not followed: `/active` was asked for once, by the first check.
    assert_eq!(hits.lock().unwrap().get("/active"), Some(&1));
    assert_eq!(hits.lock().unwrap().get("/moved"), Some(&1));
}

/// Three sellers, each on its own loopback server with its key list at `/.well-known/receipt-keys` and the receipts
/// `extra` adds; the fetch routes `a.test`, `b.test` and `c.test` to them.
async fn sellers(extra: [Vec<(&str, Vec<u8>)>; 3]) -> LoopbackFetch {
    let mut fetch = LoopbackFetch::new().unwrap();
    for ((host, seed), receipts) in
        [("a.test", &SELLER_A), ("b.test", &SELLER_B), ("c.test", &SELLER_C)].into_iter().zip(extra)
    {
        let mut answers = HashMap::from([("/.well-known/receipt-keys", ok(key_list(seed)))]);
        answers.extend(receipts.into_iter().map(|(path, body)| (path, ok(body))));
        let (address, _) = serve(answers).await;
        fetch = fetch.route(host, address).unwrap();
    }
    fetch
}

#[tokio::test]
async fn upstream_receipts_on_real_sockets() {
    let (a1, b1, c1) = ("https://a.test/r/a1", "https://b.test/r/b1", "https://c.test/r/c1");
    let (a2, b2) = ("https://a.test/r/a2", "https://b.test/r/b2");
    let (b3, b4) = ("https://b.test/r/b3", "https://b.test/r/b4");
    let fetch = sellers([
        vec![
            ("/r/a1", receipt("a.test", "a1", &[b1], &SELLER_A)),
            ("/r/a2", receipt("a.test", "a2", &[b2], &SELLER_A)),
        ],
        vec![
            ("/r/b1", receipt("b.test", "b1", &[c1], &SELLER_B)),
            ("/r/b2", receipt("b.test", "b2", &[a2], &SELLER_B)),
            // Signed by a key b.test does not list, under a kid it does not list, then under its own kid.
            ("/r/b3", signed_bytes(receipt_object("b.test", "b3", &[], "k9"), &STRANGER)),
            ("/r/b4", receipt("b.test", "b4", &[], &STRANGER)),
        ],
        vec![("/r/c1", receipt("c.test", "c1", &[], &SELLER_C))],
    ])
    .await;

    // A chain of three, each verified under its own seller's keys.
    let followed = follow_upstream(&fetch, &root(&[a1]), 3).await.unwrap();
    let ids: Vec<(&str, &str)> = followed.iter().map(|r| (r.doc().seller.as_str(), r.doc().id.as_str())).collect();
    assert_eq!(ids, [("a.test", "a1"), ("b.test", "b1"), ("c.test", "c1")]);
    // The same chain past a bound of two.
    assert_eq!(follow_upstream(&fetch, &root(&[a1]), 2).await, Err(ContractError::UpstreamTooDeep(2)));
    // a2 → b2 → a2.
    let e = follow_upstream(&fetch, &root(&[a2]), 8).await.unwrap_err();
    assert_eq!((e.code(), e), ("contract/upstream-loop", ContractError::UpstreamLoop(a2.into())));
    // Signed with a key not in the seller's list.
    assert_eq!(follow_upstream(&fetch, &root(&[b3]), 3).await, Err(ContractError::KeyUnknown("k9".into())));
    assert_eq!(follow_upstream(&fetch, &root(&[b4]), 3).await, Err(ContractError::SignatureInvalid));
    // One bad receipt among good ones fails the whole walk.
    assert_eq!(follow_upstream(&fetch, &root(&[c1, b4]), 3).await, Err(ContractError::SignatureInvalid));
    // An upstream address that answers 404.
    let (url, detail) = unfetchable(follow_upstream(&fetch, &root(&["https://c.test/r/gone"]), 3).await.unwrap_err());
    assert_eq!((url.as_str(), detail.as_str()), ("https://c.test/r/gone", "answered status 404, not 200"));
}
