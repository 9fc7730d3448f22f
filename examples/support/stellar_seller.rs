//! A stand-in Stellar seller on a real loopback socket (hyper, HTTP/1.1), for the client's tests of the Stellar
//! pairings. It serves its terms at `/atr/<H>` (the vectors' ATR, `abc`), answers `/report` with an x402 v2 402 whose
//! one option is `x402-exact-stellar.json`'s (`payTo` the seller's account muxed with H's first 8 bytes) and `/mpp`
//! with `mpp-charge-stellar.json`'s placed challenge, its links rewritten to this seller's host. It checks a paid
//! request as a facilitator would before it submits: the payment reads H back (`terms::check` over its own ATR) and
//! its envelope is the one the payer's key signs over the vectors' simulated envelope (ed25519 signatures are
//! deterministic, so that is the signature check), then answers 200 with `PAYMENT-RESPONSE` or a `Payment-Receipt`.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The host the terms' links name; route it to the seller's address.
pub const HOST: &str = "seller.test";
/// The seller's terms: the vectors' ATR.
pub const ATR: &[u8] = b"abc";
/// The payer's ed25519 seed (the vectors' 05x32).
pub const PAYER_SEED: &str = "0505050505050505050505050505050505050505050505050505050505050505";
/// The time the vectors' MPP challenge was issued at, 60 s before it expires.
pub const NOW: u64 = 1_790_000_000;

fn vectors(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// H of the ATR, `0x` hex.
pub fn h() -> String {
    terms::atr_hash(ATR).to_hex()
}

/// The terms' link on this seller.
pub fn link() -> String {
    format!("https://{HOST}/atr/{}", h())
}

/// The buyer's inputs: the envelope the wallet simulated and the current ledger (`x402-exact-stellar.json` V2).
pub fn inputs() -> serde_json::Map<String, Value> {
    let v2 = &vectors("x402-exact-stellar.json")["V2"];
    json!({"simulatedXdr": v2["simulatedXdr"], "currentLedger": v2["currentLedger"]}).as_object().unwrap().clone()
}

/// The x402 offer: the vectors' B2 document, its link this seller's.
pub fn offer() -> Value {
    let mut doc = vectors("x402-exact-stellar.json")["buyer"]["rows"][0]["input"]["doc"].clone();
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"] = json!(link());
    doc
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The MPP challenge: the vectors' placed challenge, its opaque's link this seller's.
pub fn challenge() -> Value {
    let m = vectors("mpp-charge-stellar.json");
    let mut c = m["place"]["expect"].clone();
    let opaque = json!({"legalContext": m["fixed"]["L"], "legalContextUrl": link()});
    c["opaque"] = json!(b64url(opaque.to_string().as_bytes()));
    c
}

fn www_authenticate(c: &Value) -> String {
    let keys = ["id", "realm", "method", "intent", "request", "expires", "opaque"];
    let params: Vec<String> = keys.iter().map(|k| format!("{k}=\"{}\"", c[*k].as_str().unwrap())).collect();
    format!("Payment {}", params.join(", "))
}

/// What the seller saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every payment and credential, as sent.
    pub payments: Vec<String>,
    /// Why each refused one was refused.
    pub refused: Vec<String>,
}

/// The seller.
#[derive(Debug)]
pub struct StellarSeller {
    /// Where it listens.
    pub addr: SocketAddr,
    /// What it saw.
    pub seen: Arc<Mutex<Seen>>,
}

impl StellarSeller {
    /// Binds `127.0.0.1:0` and serves on the current runtime.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let state = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let state = state.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(state.clone(), req));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(socket), service).await;
                });
            }
        });
        Self { addr, seen }
    }

    /// The URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

fn reply(status: u16, headers: &[(&str, String)], body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::builder().status(status);
    for (k, v) in headers {
        r = r.header(*k, v);
    }
    r.body(Full::new(body.into())).unwrap()
}

/// The payment's H and envelope checked: `check` over the ATR, and the envelope the payer's key signs.
fn verify(payment: &Value, pairing: &str, expected: &Value) -> Result<(), String> {
    let p = terms::pairing(pairing).map_err(|d| d.detail)?;
    let checked = terms::check(ATR, payment, p).map_err(|d| format!("{}: {}", d.detail, pairing))?;
    if checked.h.to_hex() != h() {
        return Err("another H".into());
    }
    if payment["payload"]["transaction"] != *expected {
        return Err("not the envelope the payer's key signs".into());
    }
    Ok(())
}

async fn answer(state: Arc<Mutex<Seen>>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let path = req.uri().path().to_owned();
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if path == format!("/atr/{}", h()) {
        return Ok(reply(200, &[], ATR));
    }
    let x = vectors("x402-exact-stellar.json");
    let b64 = |v: &Value| base64::engine::general_purpose::STANDARD.encode(v.to_string());
    match path.as_str() {
        "/report" => {
            let Some(payment) = header("PAYMENT-SIGNATURE") else {
                return Ok(reply(402, &[("PAYMENT-REQUIRED", b64(&offer()))], "payment required"));
            };
            state.lock().unwrap().payments.push(payment.clone());
            let decoded =
                base64::engine::general_purpose::STANDARD.decode(payment.trim()).map_err(std::io::Error::other)?;
            let value: Value = serde_json::from_slice(&decoded).map_err(std::io::Error::other)?;
            if let Err(why) = verify(&value, "x402/exact/stellar", &x["V2"]["expectEnvelope"]) {
                state.lock().unwrap().refused.push(why.clone());
                return Ok(reply(402, &[("PAYMENT-REQUIRED", b64(&offer()))], why));
            }
            let payer = x["fixed"]["payer"].as_str().unwrap();
            let response =
                json!({"success": true, "payer": payer, "transaction": "ab".repeat(32), "network": "stellar:testnet"});
            Ok(reply(200, &[("PAYMENT-RESPONSE", b64(&response))], format!("the report for {payer}")))
        }
        "/mpp" => {
            let challenged = || reply(402, &[("WWW-Authenticate", www_authenticate(&challenge()))], "payment required");
            let Some(credential) = header("Authorization") else { return Ok(challenged()) };
            state.lock().unwrap().payments.push(credential.clone());
            let token = credential.strip_prefix("Payment ").unwrap_or_default().trim();
            let decoded =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).map_err(std::io::Error::other)?;
            let value: Value = serde_json::from_slice(&decoded).map_err(std::io::Error::other)?;
            if let Err(why) = verify(&value, "mpp/charge/stellar", &x["V3"]["envelope"]) {
                state.lock().unwrap().refused.push(why);
                return Ok(challenged());
            }
            let receipt = json!({
                "status": "success", "method": "stellar", "timestamp": "2026-09-21T14:13:30Z",
                "reference": "ab".repeat(32),
            });
            Ok(reply(200, &[("Payment-Receipt", b64url(receipt.to_string().as_bytes()))], "the report"))
        }
        _ => Ok(reply(404, &[], "not found")),
    }
}
