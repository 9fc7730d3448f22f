//! A stand-in x402 v2 seller on a real loopback socket (hyper, HTTP/1.1), shared by `examples/pay_402.rs`, the
//! client's tests and the CLI's. It serves its terms (ATR) at `/atr/<H>`, answers each resource path with 402 and a
//! `PAYMENT-REQUIRED` offer (one EIP-3009 USDC option on Base Sepolia, the legal context carrying H and the
//! payment-identifier extension), and checks a paid request as a facilitator would: the payment decodes, the
//! EIP-3009 signature recovers to the `from` of the authorization over its own typed data, and the nonce is H
//! (read back with `terms::check`). What it answers then depends on the path:
//!
//! | path | after a good payment |
//! | --- | --- |
//! | `/report` | 200 with `PAYMENT-RESPONSE` (`success`, `payer`, `transaction`, `network`, `amount`) |
//! | `/job` | 202 `{"jobId": "job-1"}` with `PAYMENT-RESPONSE` |
//! | `/refuse` | 402 with `PAYMENT-RESPONSE` `success: false`, `errorReason: insufficient_funds` |
//! | `/always402` | 402 again with a fresh offer, to every paid request |
//! | `/flaky` | 503 with `Retry-After: 1` to the first paid request, then as `/report` |
//! | `/drop` | the connection dropped with no answer to the first paid request (settled all the same); a re-send with the same payment-identifier gets the cached answer |
//! | `/redirect` | 302 to `/elsewhere` |
//! | `/down` | 503 with `Retry-After: 3600` to every paid request (longer than a client waits) |
//! | `/quota` | 429 with an exhausted quota (`X-Quota-Limit`, `X-Quota-Remaining: 0`, `X-Quota-Reset`) to every paid request |
//! | `/http-link` | as `/report`, but its offer's terms link is `http://`, not `https://` |
//! | `/swap` | as `/report`, but its ATR link serves other bytes than the H it advertises |
//! | `/free` | 200 without asking for payment |
//! | `/open` | as `/report`, for peers' clients in the bench (`benches/peers`): the offer and the signature checks are the same, but the nonce may be any (a peer's random one), and nothing but the request line is kept (no nonce is settled once) |
//! | `/mpp` | MPP instead: 402 with two `WWW-Authenticate: Payment` challenges (`evm` charges on chains 1 and 84532, the id carrying H, the opaque the legal context); a good `Authorization: Payment` credential (its challenge one of the two, H read back, the EIP-3009 signature the payer's over the challenge hash) gets 200 with a `Payment-Receipt` |
//!
//! Every request with an `Idempotency-Key` already seen with another body gets 409. Nothing here touches a network
//! but loopback; the key is the published Anvil development key #0.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use alloy_primitives::{Address, Signature};
use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

/// The seller's terms.
pub const ATR: &[u8] =
    br#"{"atrVersion":"1","seller":{"name":"Report Co."},"terms":"Reports are licensed for one reader."}"#;
/// Other terms, served in their place on `/swap`'s link.
pub const SWAPPED: &[u8] = br#"{"atrVersion":"1","seller":{"name":"Report Co."},"terms":"Reports are ours forever."}"#;
/// Anvil's published development key #0 (payer `0xf39F…2266`).
pub const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// The host the terms' links name; route it to the seller's address.
pub const HOST: &str = "seller.test";
/// The network the offer pays on.
pub const NETWORK: &str = "eip155:84532";
/// The token.
pub const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/// The payee.
pub const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
/// The price, in USDC's atomic units (0.01 USDC).
pub const AMOUNT: &str = "10000";
const PAIRING: &str = "x402/exact/eip155/eip3009";
const MPP_PAIRING: &str = "mpp/charge/evm/authorization";
/// The realm of the MPP challenges.
pub const REALM: &str = "seller.test";
/// The MPP challenges' expiry (fixed, so the two challenges are the same bytes on every 402).
pub const EXPIRES: &str = "2030-01-01T00:00:00Z";
/// The chains of the two MPP challenges, in the order offered.
pub const MPP_CHAINS: [u64; 2] = [1, 84532];

/// What the seller saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every request: method, path, whether it carried a payment.
    pub requests: Vec<(String, String, bool)>,
    /// Every payment header received, in order.
    pub payments: Vec<String>,
    /// Every request's headers, names in lower case, in order.
    pub headers: Vec<Vec<(String, String)>>,
    /// Every `Idempotency-Key` received with a payment.
    pub keys: Vec<String>,
    /// Payments settled, by payment-identifier id: the answer kept for a re-send.
    settled: HashMap<String, (u16, String)>,
    /// Nonces settled (a nonce is settled once).
    pub nonces: Vec<String>,
    /// Idempotency keys and the body digest first seen with each.
    bodies: HashMap<String, String>,
    /// Paid requests per path.
    paid: HashMap<String, usize>,
}

/// A running seller.
#[derive(Debug, Clone)]
pub struct Seller {
    /// Where it listens.
    pub addr: SocketAddr,
    /// What it saw.
    pub seen: Arc<Mutex<Seen>>,
}

impl Seller {
    /// Binds `127.0.0.1:0` and serves on the current runtime.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener)
    }

    /// Serves on `listener`.
    pub fn serve(listener: TcpListener) -> Self {
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let state = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let state = state.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(state.clone(), addr, req));
                    let _ =
                        http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(socket), service).await;
                });
            }
        });
        Self { addr, seen }
    }

    /// The URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Paid requests to `path`.
    pub fn paid(&self, path: &str) -> usize {
        self.seen.lock().unwrap().paid.get(path).copied().unwrap_or(0)
    }

    /// Requests to `path`, paid or not.
    pub fn hits(&self, path: &str) -> usize {
        self.seen.lock().unwrap().requests.iter().filter(|(_, p, _)| p == path).count()
    }

    /// Every payment header received.
    pub fn payments(&self) -> Vec<String> {
        self.seen.lock().unwrap().payments.clone()
    }
}

/// H of the terms.
pub fn h() -> String {
    format!("0x{}", hex::encode(Sha256::digest(ATR)))
}

/// The offer of `path`: one option, H and the link, the payment-identifier extension.
pub fn offer(addr: SocketAddr, path: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": format!("http://{addr}{path}"), "description": "a report"},
        "accepts": [{
            "scheme": "exact", "network": NETWORK, "amount": AMOUNT, "asset": USDC, "payTo": PAY_TO,
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {
            "legalContext": {"info": {"type": "sha256", "value": h(), "legalContextUrl": format!("{}://{HOST}/atr/{}{}", if path == "/http-link" { "http" } else { "https" }, h(), if path == "/swap" { "?swap" } else { "" })}},
            "payment-identifier": {"info": {"required": false}}
        }
    })
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn reply(status: u16, headers: &[(&'static str, String)], body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap();
    for (name, value) in headers {
        response.headers_mut().append(*name, value.parse().unwrap());
    }
    response
}

fn required(addr: SocketAddr, path: &str, error: Option<&str>) -> Response<Full<Bytes>> {
    let mut doc = offer(addr, path);
    if let Some(e) = error {
        doc["error"] = json!(e);
    }
    reply(402, &[("PAYMENT-REQUIRED", b64(doc.to_string().as_bytes()))], "payment required")
}

/// Why a payment is not good, or its payer, nonce and payment-identifier id.
fn verify(header: &str) -> Result<(String, String, Option<String>), String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(header.trim()).map_err(|_| "not base64")?;
    let payment: Value = serde_json::from_slice(&bytes).map_err(|_| "not JSON")?;
    bound(&payment)?;
    signed(&payment)
}

/// Why the payment does not carry H, the terms' hash, as its nonce.
fn bound(payment: &Value) -> Result<(), String> {
    let pairing = terms::pairing(PAIRING).map_err(|e| e.detail)?;
    let checked = terms::check(ATR, payment, pairing).map_err(|e| format!("not bound: {}", e.detail))?;
    if checked.h.to_hex() != h() {
        return Err("another H".into());
    }
    if payment["payload"]["authorization"]["nonce"] != h() {
        return Err("the nonce is not H".into());
    }
    Ok(())
}

/// Why the payment's EIP-3009 signature is not its payer's over the offer's transfer, or its payer, nonce and
/// payment-identifier id.
fn signed(payment: &Value) -> Result<(String, String, Option<String>), String> {
    let auth = &payment["payload"]["authorization"];
    let text = |k: &str| auth[k].as_str().unwrap_or_default().to_owned();
    let signer = recover(auth, payment["payload"]["signature"].as_str().unwrap_or_default(), 84532)?;
    let from: Address = text("from").parse().map_err(|_| "from")?;
    if signer != from || !text("to").eq_ignore_ascii_case(PAY_TO) || text("value") != AMOUNT {
        return Err("the signature is not the payer's, or the payment is not the offer's".into());
    }
    let id = payment.pointer("/extensions/payment-identifier/info/id").and_then(Value::as_str).map(str::to_owned);
    Ok((from.to_checksum(None), text("nonce"), id))
}

/// The signer of an EIP-3009 authorization (`from`, `to`, `value`, `validAfter`, `validBefore`, `nonce`) of USDC on
/// `chain`.
fn recover(auth: &Value, signature: &str, chain: u64) -> Result<Address, String> {
    let text = |k: &str| auth[k].as_str().unwrap_or_default().to_owned();
    let token = terms::rail::evm::eip3009::Eip3009Token { name: "USDC", version: "2", chain_id: chain, address: USDC };
    let nonce: alloy_primitives::B256 = text("nonce").parse().map_err(|_| "nonce")?;
    let valid_before: u64 = text("validBefore").parse().map_err(|_| "validBefore")?;
    let mut typed = terms::rail::evm::eip3009::transfer_authorization(
        token,
        &text("from"),
        &text("to"),
        &text("value"),
        valid_before,
        &nonce,
    )
    .map_err(|e| e.code())?;
    // The builder signs from 0; a peer's client may name a start (x402-rs signs from ten minutes before now).
    if let Some(after) = auth.get("validAfter").and_then(Value::as_str) {
        typed.message.insert("validAfter".into(), after.into());
    }
    let digest = typed.signing_hash().ok_or("no digest")?;
    let raw = hex::decode(signature.trim_start_matches("0x")).map_err(|_| "signature hex")?;
    let signature = Signature::from_raw(&raw).map_err(|_| "signature")?;
    Ok(signature.recover_address_from_prehash(&digest).map_err(|_| "does not recover")?)
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The MPP challenge at `position`: 0.01 USDC to the payee on `chain`, its id carrying H, its opaque the legal
/// context.
pub fn challenge(position: usize, chain: u64) -> String {
    let h = terms::atr_hash(ATR);
    let request = json!({
        "amount": AMOUNT, "currency": USDC, "recipient": PAY_TO,
        "methodDetails": {"chainId": chain, "credentialTypes": ["authorization"]},
    });
    let hex = h.to_hex();
    let opaque =
        json!({"legalContext": format!("lcp:sha256:{hex}"), "legalContextUrl": format!("https://{HOST}/atr/{hex}")});
    let id = terms::mpp::challenge_id(&h, position).unwrap();
    format!(
        r#"Payment id="{id}", realm="{REALM}", method="evm", intent="charge", request="{}", expires="{EXPIRES}", opaque="{}""#,
        b64url(terms::json::canonical(&request).unwrap().as_bytes()),
        b64url(terms::json::canonical(&opaque).unwrap().as_bytes()),
    )
}

/// The 402 of `/mpp`: both challenges, one `WWW-Authenticate` line each.
fn challenged() -> Response<Full<Bytes>> {
    let lines: Vec<(&'static str, String)> =
        MPP_CHAINS.iter().enumerate().map(|(i, c)| ("WWW-Authenticate", challenge(i, *c))).collect();
    reply(402, &lines, "payment required")
}

/// Why an MPP credential is not good, or its payer and signed nonce: the challenge it echoes is one of the two
/// offered, H reads back from it, the nonce is the challenge hash, and the EIP-3009 signature is the payer's.
fn verify_mpp(value: &str) -> Result<(String, String), String> {
    let credential = terms::mpp::decode_credential(value).map_err(|e| format!("credential: {e}"))?;
    let pairing = terms::pairing(MPP_PAIRING).map_err(|e| e.detail)?;
    let checked = terms::check(ATR, &credential, pairing).map_err(|e| format!("not bound: {}", e.detail))?;
    if checked.h.to_hex() != h() {
        return Err("another H".into());
    }
    let id = credential.pointer("/challenge/id").and_then(Value::as_str).unwrap_or_default();
    let position = (0..MPP_CHAINS.len())
        .find(|i| terms::mpp::challenge_id(&checked.h, *i).ok().as_deref() == Some(id))
        .ok_or("the challenge is not one offered")?;
    let chain = MPP_CHAINS[position];
    let payload = &credential["payload"];
    let nonce = payload["nonce"].as_str().unwrap_or_default().to_owned();
    if nonce != format!("0x{}", hex::encode(terms::mpp::challenge_hash(id, REALM))) {
        return Err("the nonce is not the challenge hash".into());
    }
    let signer = recover(payload, payload["signature"].as_str().unwrap_or_default(), chain)?;
    let from: Address = payload["from"].as_str().unwrap_or_default().parse().map_err(|_| "from")?;
    if signer != from || payload["to"] != PAY_TO || payload["value"] != AMOUNT {
        return Err("the signature is not the payer's, or the payment is not the challenge's".into());
    }
    Ok((from.to_checksum(None), nonce))
}

async fn answer(
    seen: Arc<Mutex<Seen>>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let payment = header("payment-signature");
    let authorization = header("authorization");
    let key = header("idempotency-key");
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let digest = hex::encode(Sha256::digest(&body));
    let mut s = seen.lock().unwrap();
    s.requests.push((method, path.clone(), payment.is_some() || authorization.is_some()));
    s.headers.push(headers);
    if path.starts_with("/atr/") {
        return Ok(reply(200, &[], if query == "swap" { SWAPPED } else { ATR }));
    }
    if path == "/free" || path == "/elsewhere" {
        return Ok(reply(200, &[], "free"));
    }
    if path == "/open" {
        drop(s);
        let Some(payment) = payment else { return Ok(required(addr, &path, None)) };
        let checked = base64::engine::general_purpose::STANDARD
            .decode(payment.trim())
            .map_err(|_| "not base64".to_owned())
            .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|_| "not JSON".to_owned()))
            .and_then(|p| signed(&p));
        return Ok(match checked {
            Ok((payer, _, _)) => settled(200, &payer, format!("the report for {payer}")),
            Err(why) => required(addr, &path, Some(&format!("invalid_payload: {why}"))),
        });
    }
    if let Some(k) = &key {
        match s.bodies.get(k) {
            Some(d) if *d != digest => return Ok(reply(409, &[], "idempotency key reused with another body")),
            Some(_) => {}
            None => {
                s.bodies.insert(k.clone(), digest);
            }
        }
    }
    if path == "/mpp" {
        let Some(credential) = authorization else { return Ok(challenged()) };
        s.payments.push(credential.clone());
        s.keys.extend(key);
        *s.paid.entry(path.clone()).or_default() += 1;
        let (payer, nonce) = match verify_mpp(&credential) {
            Ok(v) => v,
            Err(why) => return Ok(reply(402, &[], format!("invalid credential: {why}"))),
        };
        if s.nonces.contains(&nonce) {
            return Ok(challenged());
        }
        s.nonces.push(nonce.clone());
        let receipt = json!({
            "status": "success", "method": "evm", "timestamp": "2026-09-21T14:13:30Z", "reference": nonce,
        });
        let token = b64url(receipt.to_string().as_bytes());
        return Ok(reply(200, &[("Payment-Receipt", token)], format!("the report for {payer}")));
    }
    let Some(payment) = payment else { return Ok(required(addr, &path, None)) };
    s.payments.push(payment.clone());
    s.keys.extend(key);
    let count = {
        let n = s.paid.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    let (payer, nonce, id) = match verify(&payment) {
        Ok(v) => v,
        Err(why) => return Ok(required(addr, &path, Some(&format!("invalid_payload: {why}")))),
    };
    if let Some((status, body)) = id.as_ref().and_then(|i| s.settled.get(i)).cloned() {
        return Ok(settled(status, &payer, body));
    }
    if path == "/always402" {
        return Ok(required(addr, &path, Some("unexpected_settle_error")));
    }
    if path == "/refuse" {
        let response =
            json!({"success": false, "errorReason": "insufficient_funds", "payer": payer, "network": NETWORK});
        return Ok(reply(402, &[("PAYMENT-RESPONSE", b64(response.to_string().as_bytes()))], "refused"));
    }
    if path == "/flaky" && count == 1 {
        return Ok(reply(503, &[("Retry-After", "1".into())], "busy"));
    }
    if path == "/redirect" {
        return Ok(reply(302, &[("Location", format!("http://{addr}/elsewhere"))], ""));
    }
    if path == "/down" {
        return Ok(reply(503, &[("Retry-After", "3600".into())], "down for an hour"));
    }
    if path == "/quota" {
        let quota = [("X-Quota-Limit", "10".into()), ("X-Quota-Remaining", "0".into()), ("X-Quota-Reset", "60".into())];
        return Ok(reply(429, &quota, "quota exhausted"));
    }
    if s.nonces.contains(&nonce) {
        return Ok(required(addr, &path, Some("invalid_exact_evm_nonce_used")));
    }
    s.nonces.push(nonce);
    let (status, body) = if path == "/job" {
        (202, r#"{"jobId":"job-1"}"#.to_owned())
    } else {
        (200, format!("the report for {payer}"))
    };
    if let Some(id) = id {
        s.settled.insert(id, (status, body.clone()));
    }
    if path == "/drop" && count == 1 {
        return Err(std::io::Error::other("dropped after settling"));
    }
    Ok(settled(status, &payer, body))
}

fn settled(status: u16, payer: &str, body: String) -> Response<Full<Bytes>> {
    let response = json!({
        "success": true, "payer": payer, "transaction": "0x5e771e", "network": NETWORK, "amount": AMOUNT,
    });
    reply(status, &[("PAYMENT-RESPONSE", b64(response.to_string().as_bytes()))], body)
}
