//! A seller of our own on a real loopback socket, paid through `http::LoopbackFetch`: the gate fetches the
//! `https` link the offer names, the fetch sends it to the seller's plain-HTTP port, and the payment carries H.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use serde_json::{Value, json};
use terms::LocalSigner;
use terms::http::LoopbackFetch;
use terms::{DeclineCode, FixedClock, Options, TransactOutcome, transact};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The 138-byte ATR of the conformance vectors and its hash, as the quickstart example serves them.
const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

fn offer(h: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://seller.test/v1/quote"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": "10000",
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h, "legalContextUrl": format!("https://seller.test/atr/{h}")
        }}}
    })
}

/// Serves `body` to every connection, once each, and records the request lines.
async fn seller(body: Vec<u8>) -> (std::net::SocketAddr, tokio::task::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = vec![0u8; 4096];
        let n = socket.read(&mut head).await.unwrap();
        let line = String::from_utf8_lossy(&head[..n]).lines().next().unwrap_or_default().to_owned();
        let reply = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
        socket.write_all(reply.as_bytes()).await.unwrap();
        socket.write_all(&body).await.unwrap();
        vec![line]
    });
    (address, task)
}

#[tokio::test]
async fn a_seller_on_loopback_is_paid_through_its_https_link() {
    let atr = hex::decode(ATR).unwrap();
    let h = terms::atr_hash(&atr).to_hex();
    let (address, served) = seller(atr.clone()).await;
    let fetch = LoopbackFetch::new().unwrap().route("seller.test", address).unwrap();
    let signer = LocalSigner::from_hex(ANVIL_KEY_0, 84532).unwrap();
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let options = Options::new().clock(FixedClock(1_700_000_000));
    let done = transact(offer(&h), pairing, &signer, &fetch, &options).await.unwrap();
    let TransactOutcome::Signed(paid) = done else { panic!("an agreement was asked for") };
    assert_eq!(paid.bytes, atr);
    assert_eq!(paid.h.to_hex(), h);
    let payment = paid.signed.expect("eip3009 signs").to_value();
    assert_eq!(terms::check(&atr, &payment, pairing).unwrap().h.to_hex(), h);
    assert_eq!(served.await.unwrap(), vec![format!("GET /atr/{h} HTTP/1.1")]);
}

#[tokio::test]
async fn a_link_no_route_names_is_never_fetched() {
    let fetch = LoopbackFetch::new().unwrap();
    let signer = LocalSigner::from_hex(ANVIL_KEY_0, 84532).unwrap();
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let h = terms::atr_hash(&hex::decode(ATR).unwrap()).to_hex();
    let declined = transact(offer(&h), pairing, &signer, &fetch, &Options::new()).await.unwrap_err();
    assert_eq!(declined.code, DeclineCode::AtrUnfetchable);
}
