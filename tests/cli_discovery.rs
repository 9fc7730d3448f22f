//! `terms check` and `terms pay` beside the seller's discovery document, the binary run as a process against a small
//! seller of this file's own on loopback (the offer and terms of `examples/support/seller.rs`, and a discovery
//! document scripted per test): the document is shown beside the offer, a listed `atrHash` other than the offer's H
//! is said plainly while the offer's H still decides, an origin that serves none or serves a bad document is said so,
//! and `acceptanceRequired` reaches the policy's `acceptance_required` rule in `check` and in `pay`, where a refusal
//! comes before anything is signed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;

use std::net::SocketAddr;
use std::process::Output;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const WELL_KNOWN: &str = "/.well-known/legal-context.json";

/// One request the origin read: its path and whether it carried a payment.
type Seen = Arc<Mutex<Vec<(String, bool)>>>;

/// A seller whose `/report` answers 402 with the stand-in seller's offer, whose `/atr/<H>` serves its terms, and
/// whose discovery document is `discovery` (status and body).
async fn origin(discovery: (u16, Vec<u8>)) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let path = text.split(' ').nth(1).unwrap_or("").to_owned();
            let paid = text.contains("payment-signature:");
            log.lock().unwrap().push((path.clone(), paid));
            let (status, headers, body) = if path == "/report" {
                let offer =
                    base64::engine::general_purpose::STANDARD.encode(seller::offer(addr, "/report").to_string());
                (402, format!("payment-required: {offer}\r\n"), b"payment required".to_vec())
            } else if path == format!("/atr/{}", seller::h()) {
                (200, String::new(), seller::ATR.to_vec())
            } else if path == WELL_KNOWN {
                (discovery.0, "etag: \"d1\"\r\n".to_owned(), discovery.1.clone())
            } else {
                (404, String::new(), Vec::new())
            };
            let reply =
                format!("HTTP/1.1 {status} X\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n", body.len());
            let _ = socket.write_all(reply.as_bytes()).await;
            let _ = socket.write_all(&body).await;
        }
    });
    (addr, seen)
}

struct Run {
    addr: SocketAddr,
    seen: Seen,
    dir: tempfile::TempDir,
}

impl Run {
    /// The origin serving `discovery`, and a policy with `rule` among its members.
    async fn new(discovery: (u16, Vec<u8>), rule: &str) -> Self {
        let (addr, seen) = origin(discovery).await;
        let dir = tempfile::tempdir().unwrap();
        let (network, usdc) = (seller::NETWORK, seller::USDC);
        let policy = format!(
            "resources = [\"http://{addr}/\"]\nnetworks = [\"{network}\"]\n{rule}\n\n[[assets]]\nnetwork = \
             \"{network}\"\naddress = \"{usdc}\"\nsymbol = \"USDC\"\ndecimals = 6\ncap = \"50000\"\n"
        );
        std::fs::write(dir.path().join("policy.toml"), policy).unwrap();
        let config = "journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n";
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        Self { addr, seen, dir }
    }

    async fn terms(&self, args: &[&str]) -> Output {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_terms"));
        command
            .arg("--config")
            .arg(self.dir.path().join("config.toml"))
            .args(args)
            .arg("--local-seller")
            .arg(format!("{}={}", seller::HOST, self.addr))
            .env("TERMS_KEY", seller::KEY);
        tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
    }

    async fn check(&self) -> (Option<i32>, String) {
        let out = self.terms(&["check", &format!("http://{}/report", self.addr)]).await;
        (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }

    async fn check_json(&self) -> Value {
        let out = self.terms(&["--json", "check", &format!("http://{}/report", self.addr)]).await;
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    fn asked(&self, path: &str) -> usize {
        self.seen.lock().unwrap().iter().filter(|(p, _)| p == path).count()
    }

    fn paid(&self) -> usize {
        self.seen.lock().unwrap().iter().filter(|(_, paid)| *paid).count()
    }
}

fn served(doc: &Value) -> (u16, Vec<u8>) {
    (200, serde_json::to_vec(doc).unwrap())
}

fn h_of(text: &[u8]) -> String {
    terms::atr_hash(text).to_hex()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_shows_the_document_beside_the_offer() {
    let doc = json!({
        "terms": "https://seller.test/terms.md", "atrHash": seller::h(), "acceptanceRequired": false, "x-note": 1
    });
    let run = Run::new(served(&doc), "").await;
    let (code, said) = run.check().await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("discovery https://seller.test/.well-known/legal-context.json"), "{said}");
    assert!(said.contains(&format!("atrHash   {} = the offer's H", seller::h())), "{said}");
    assert!(said.contains("acceptance not required") && said.contains("ignored   x-note"), "{said}");
    assert!(!said.contains("DIFFERS"), "{said}");
    assert_eq!(run.asked(WELL_KNOWN), 1);

    let shown = run.check_json().await;
    assert_eq!(shown["h"], json!(seller::h()), "the plan's members are kept: {shown}");
    let discovery = &shown["discovery"];
    assert_eq!(discovery["atrHashMatchesOffer"], json!(true), "{shown}");
    assert_eq!(discovery["document"]["terms"], json!("https://seller.test/terms.md"));
    assert_eq!((discovery["ignored"].clone(), discovery["etag"].clone()), (json!(["x-note"]), json!("\"d1\"")));
}

/// The seller lists other terms than its offer advertises: said plainly, and the offer's H, whose bytes its link
/// serves, is still what the gate compared (the check passes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_hash_other_than_the_offer_s_is_said_plainly() {
    let listed = h_of(b"other terms");
    let run = Run::new(served(&json!({"terms": "https://seller.test/terms.md", "atrHash": listed})), "").await;
    let (code, said) = run.check().await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(&format!("terms     {} bytes, SHA-256 {} = the offer's H", seller::ATR.len(), seller::h())));
    assert!(said.contains(&format!("atrHash   {listed} DIFFERS from the offer's H {}", seller::h())), "{said}");
    assert!(said.contains("a discovery listing is never a confirmation"), "{said}");
    let shown = run.check_json().await;
    assert_eq!(shown["discovery"]["atrHashMatchesOffer"], json!(false), "{shown}");
    assert_eq!(shown["discovery"]["document"]["atrHash"], json!(listed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_that_serves_none_or_a_bad_document_is_said_so() {
    let run = Run::new((404, Vec::new()), "").await;
    let (code, said) = run.check().await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("discovery none: https://seller.test/.well-known/legal-context.json answered 404"), "{said}");
    assert_eq!(
        run.check_json().await["discovery"],
        json!({"url": format!("https://seller.test{WELL_KNOWN}"), "served": false, "status": 404})
    );

    for (body, code_said) in [
        (b"{\"terms\":".to_vec(), "discovery/not-json-object"),
        (br#"{"terms":"https://seller.test/t.md","atrHash":"0x1234"}"#.to_vec(), "discovery/atr-hash-malformed"),
        (br#"{"terms":"http://seller.test/t.md"}"#.to_vec(), "discovery/terms-not-https"),
        (vec![b' '; 65_537], "discovery/too-large"),
    ] {
        let run = Run::new((200, body), "").await;
        let (code, said) = run.check().await;
        assert_eq!(code, Some(0), "a bad listing does not stop the check: {said}");
        assert!(said.contains(&format!("discovery not read: {code_said}")), "{said}");
        assert_eq!(run.check_json().await["discovery"]["error"]["code"], json!(code_said));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acceptance_required_reaches_the_policy_in_check() {
    let requires = json!({"terms": "https://seller.test/terms.md", "acceptanceRequired": true});
    let run = Run::new(served(&requires), "acceptance_required = \"refuse\"").await;
    let (code, said) = run.check().await;
    assert_eq!(code, Some(3), "{said}");
    assert!(said.contains("policy    refused: policy/acceptance-required"), "{said}");
    assert!(said.contains("acceptance required"), "{said}");

    let run = Run::new(served(&requires), "acceptance_required = \"approve\"").await;
    let (code, said) = run.check().await;
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("policy    allowed (needs approval)"), "{said}");
    // The same seller not requiring it: allowed outright.
    let run =
        Run::new(served(&json!({"terms": "https://seller.test/terms.md"})), "acceptance_required = \"refuse\"").await;
    let (code, said) = run.check().await;
    assert!(code == Some(0) && said.contains("policy    allowed\n"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pay_refuses_a_seller_that_requires_acceptance_before_signing() {
    let requires = json!({"terms": "https://seller.test/terms.md", "acceptanceRequired": true});
    let run = Run::new(served(&requires), "acceptance_required = \"refuse\"").await;
    let out = run.terms(&["pay", &format!("http://{}/report", run.addr)]).await;
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("acceptance-required"), "{said}");
    assert_eq!((run.asked(WELL_KNOWN), run.paid()), (1, 0), "{said}");
    // A policy without the rule does not read the document when paying.
    let run = Run::new(served(&requires), "").await;
    let _ = run.terms(&["pay", "--dry-run", &format!("http://{}/report", run.addr)]).await;
    assert_eq!(run.asked(WELL_KNOWN), 0);
}
