//! `terms::client` against a seller nobody here wrote: the official x402 express middleware (`@x402/express` 2.27,
//! its resource server and `@x402/evm`'s exact scheme) in `tests/node-seller/seller.mjs`, with a local facilitator
//! stand-in that checks the EIP-3009 signature (viem), the payee, amount and validity, and that the nonce is H.
//! The route declares the legal context extension, and the middleware carries it into `PAYMENT-REQUIRED` as written.
//!
//! Ignored by default: it needs Node and `tests/node-seller/node_modules` (`npm ci` there). `.ci/run` runs it:
//! `cargo test --test node_seller -- --ignored`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use sha2::{Digest, Sha256};
use terms::client::{Client, Outgoing, Settlement};
use terms::http::LoopbackFetch;

const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// The node seller, killed when dropped.
struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the seller; its port, H and the child.
fn start() -> (u16, String, Node) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node-seller");
    let mut child = Command::new("node")
        .arg("seller.mjs")
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs (and `npm ci` was run in tests/node-seller)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let hello: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    let port = u16::try_from(hello["port"].as_u64().unwrap()).unwrap();
    (port, hello["h"].as_str().unwrap().to_owned(), Node(child))
}

#[tokio::test]
#[ignore = "needs Node and `npm ci` in tests/node-seller; .ci/run runs it"]
async fn the_official_x402_express_middleware_is_paid_and_its_settlement_read() {
    let (port, h, _node) = start();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let fetch = LoopbackFetch::new().unwrap().route("seller.test", addr).unwrap();
    let client = Client::builder(terms::EvmKey::from_hex(KEY).unwrap()).fetch(fetch).build().unwrap();
    let url = format!("http://{addr}/report");

    // The offer, as the middleware wrote it: the legal context extension the route declared.
    let plan = client.probe(Outgoing::new("GET", &url)).await.unwrap();
    assert_eq!(plan.status, 402);
    let offer = plan.offer.as_ref().unwrap();
    assert_eq!(offer["extensions"]["legalContext"]["info"]["type"], "sha256");
    assert_eq!(offer["extensions"]["legalContext"]["info"]["value"], h.as_str());
    assert_eq!(plan.h.map(|x| x.to_hex()).as_deref(), Some(h.as_str()), "{plan:?}");
    assert!(plan.declined.is_none(), "{plan:?}");

    let outcome = client.send(Outgoing::new("GET", &url)).await.unwrap();
    let reply = outcome.reply().unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(reply.status, 200, "{outcome:?}: {}", String::from_utf8_lossy(&reply.body));
    assert_eq!(&reply.body[..], b"the report from node");
    assert!(reply.is_success(), "{outcome:?}");
    let paid = reply.paid.as_ref().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.sends), ("x402/exact/eip155/eip3009", 1));
    assert_eq!(paid.h.to_hex(), h);
    // The middleware's PAYMENT-RESPONSE, from the facilitator's settle: the payer, the network, the transaction.
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{outcome:?}") };
    assert!(s.success);
    assert_eq!(s.payer.as_deref(), Some(PAYER));
    assert_eq!(s.network.as_deref(), Some("eip155:84532"));
    let transaction = format!("0x{}", hex::encode(Sha256::digest(h.as_bytes())));
    assert_eq!(s.transaction.as_deref(), Some(transaction.as_str()));

    // The facilitator verified and settled one payment, whose nonce is H, and refused nothing.
    let seen = reqwest_json(&format!("http://{addr}/seen")).await;
    assert_eq!(seen["verified"], serde_json::json!([h]));
    assert_eq!(seen["settled"], serde_json::json!([h]));
    assert_eq!(seen["refused"], serde_json::json!([]));
    // The payment echoed the offer's legal context as the route declared it.
    assert_eq!(seen["echoed"][0]["legalContext"], offer["extensions"]["legalContext"], "{seen}");

    // The same call again is a new purchase (a fresh idempotency key), paid with a new payment whose nonce is H
    // too: the facilitator refuses it as already used, and the client reads the refusal, signing nothing more.
    let again = client.send(Outgoing::new("GET", &url)).await.unwrap();
    let r = again.reply().unwrap_or_else(|| panic!("{again:?}"));
    assert_eq!(r.status, 402, "{again:?}");
    let Some(Settlement::X402(s)) = &r.paid.as_ref().unwrap().settlement else { panic!("{again:?}") };
    assert_eq!((s.success, s.error_reason.as_deref()), (false, Some("invalid_exact_evm_nonce_used")), "{again:?}");
    assert_eq!(r.paid.as_ref().unwrap().sends, 1);
}

async fn reqwest_json(url: &str) -> Value {
    let client = terms::http::HttpFetch::builder().build().unwrap();
    let bytes = client.get(url).send().await.unwrap().bytes().await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}
