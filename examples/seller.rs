//! A minimal x402 v2 seller that serves its terms the way a buyer's gate needs them (docs/sellers.md):
//!
//! - one ATR (the terms' bytes) per transaction: each 402 writes terms naming a fresh transaction id, so H, their
//!   SHA-256, differs for every purchase. An EIP-3009 payment's nonce is H, and a nonce settles once: a seller that
//!   served one static ATR could settle only the first payment of each payer;
//! - the offer's legal context, `extensions.legalContext.info` = `{type: "sha256", value: H, legalContextUrl}`, the
//!   link serving exactly those bytes over https;
//! - on a paid request, `terms::check` reads H back out of the signed payment before the seller answers; a re-sent
//!   payment (the same bytes) gets the first answer again, never a second charge; the answer carries
//!   `PAYMENT-RESPONSE` (`success`, `payer`, `transaction`, `network`).
//!
//! It settles nothing on chain: where it answers, a real seller posts the payment to its facilitator's `/settle` and
//! reports that transaction; this one reports the authorization's nonce in its place. It serves plain HTTP on
//! loopback; its links name `https://seller.test/…`, which `--local-seller seller.test=127.0.0.1:8402` routes to it.
//!
//! Run: `cargo run --example seller` (listens on 127.0.0.1:8402, or the address given as its one argument).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The host its terms links name.
pub const HOST: &str = "seller.test";
/// The network: Base Sepolia.
pub const NETWORK: &str = "eip155:84532";
/// The asset: test USDC (6 decimals).
pub const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/// The price: 0.01 USDC.
pub const PRICE: &str = "10000";
/// The payee.
pub const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const PAIRING: &str = "x402/exact/eip155/eip3009";

/// What the seller keeps: the terms it served, by H, and the answer to each settled nonce.
#[derive(Default)]
struct Books {
    terms: HashMap<String, Vec<u8>>,
    settled: HashMap<String, String>,
    served: u64,
}

type Shared = Arc<Mutex<Books>>;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn reply(status: u16, headers: &[(&str, String)], body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, value);
    }
    builder.body(Full::new(body.into())).unwrap_or_default()
}

/// A 402: new terms for this transaction, their H in the offer's legal context.
fn offer(books: &mut Books, resource: &str) -> Response<Full<Bytes>> {
    books.served += 1;
    let terms = format!(
        r#"{{"atrVersion":"1","seller":{{"name":"Report Co."}},"transaction":"tx-{}","terms":"One report, licensed for one reader."}}"#,
        books.served
    );
    let h = terms::atr_hash(terms.as_bytes()).to_hex();
    books.terms.insert(h.clone(), terms.into_bytes());
    let document = json!({
        "x402Version": 2,
        "resource": {"url": resource},
        "accepts": [{
            "scheme": "exact", "network": NETWORK, "amount": PRICE, "asset": USDC, "payTo": PAY_TO,
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h, "legalContextUrl": format!("https://{HOST}/atr/{h}")
        }}}
    });
    reply(402, &[("PAYMENT-REQUIRED", b64(document.to_string().as_bytes()))], "payment required")
}

/// A paid request: H read back from the payment against the terms served under it, then the answer (the first one
/// again for a payment already settled).
fn paid(books: &mut Books, header: &str) -> Response<Full<Bytes>> {
    let decoded = base64::engine::general_purpose::STANDARD.decode(header.trim()).ok();
    let Some(payment) = decoded.and_then(|b| serde_json::from_slice::<Value>(&b).ok()) else {
        return reply(400, &[], "PAYMENT-SIGNATURE is not base64 of JSON");
    };
    let auth = payment.pointer("/payload/authorization").cloned().unwrap_or_default();
    let text = |k: &str| auth.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let nonce = text("nonce");
    if let Some(answer) = books.settled.get(&nonce) {
        return reply(200, &[("PAYMENT-RESPONSE", answer.clone())], "your report (again)");
    }
    let Some(terms) = books.terms.get(&nonce) else { return reply(402, &[], "no terms were served under this H") };
    let Ok(pairing) = terms::pairing(PAIRING) else { return reply(500, &[], "this build has no EIP-3009 pairing") };
    if let Err(d) = terms::check(terms, &payment, pairing) {
        return reply(402, &[], format!("the payment does not carry the terms' hash: {}", d.detail));
    }
    if text("value") != PRICE || !text("to").eq_ignore_ascii_case(PAY_TO) {
        return reply(402, &[], "the payment is not the offer's");
    }
    // A real seller settles here (its facilitator's /settle) and reports that transaction.
    let response = json!({"success": true, "payer": text("from"), "transaction": nonce, "network": NETWORK});
    let answer = b64(response.to_string().as_bytes());
    books.settled.insert(nonce, answer.clone());
    reply(200, &[("PAYMENT-RESPONSE", answer)], "your report")
}

async fn answer(
    books: Shared,
    addr: SocketAddr,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let path = req.uri().path().to_owned();
    let mut books = books.lock().map_err(|_| std::io::Error::other("poisoned"))?;
    if let Some(h) = path.strip_prefix("/atr/") {
        return Ok(match books.terms.get(h) {
            Some(bytes) => reply(200, &[("Content-Type", "application/json".into())], bytes.clone()),
            None => reply(404, &[], "no such terms"),
        });
    }
    Ok(match req.headers().get("payment-signature").and_then(|v| v.to_str().ok()) {
        Some(header) => paid(&mut books, header),
        None => offer(&mut books, &format!("http://{addr}{path}")),
    })
}

/// Serves on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener) {
    let addr = listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)));
    let books = Shared::default();
    while let Ok((socket, _)) = listener.accept().await {
        let books = books.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| answer(books.clone(), addr, req));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(socket), service).await;
        });
    }
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let at = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8402".into());
    let listener = TcpListener::bind(&at).await?;
    println!("seller on http://{at}/report; its terms links name https://{HOST}/ (--local-seller {HOST}={at})");
    serve(listener).await;
    Ok(())
}
