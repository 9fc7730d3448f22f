//! `terms::client` paying the XRPL pairings against a stand-in seller on a real loopback socket: an x402 offer of
//! `x402/exact/xrpl` (`PAYMENT-SIGNATURE`) and an MPP challenge of `mpp/charge/xrpl` (`Authorization: Payment`), each
//! paid by the local XRPL key from entropy 01x16 in one call, the seller reading H back with `terms::check` and
//! checking the signed blob is the payer's (its key's account is the blob's `Account`, and the payer's key signs the
//! same bytes to the same signature: ed25519 is deterministic); and a seller whose ATR does not hash to H gets
//! nothing signed or sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use terms::client::{Client, Outgoing, Settlement};
use terms::http::LoopbackFetch;
use terms::rail::xrpl::{self, decode, fields};
use terms::{Answer, BoxFuture, Options, Signer, SignerError, SigningRequest, Wallet, XrplKey, atr_hash};
use tokio::net::TcpListener;

const HOST: &str = "xrpl-seller.test";
const ATR: &[u8] = br#"{"atrVersion":"1","seller":{"name":"Ledger Reports"},"terms":"One report per payment."}"#;
const PAY_TO: &str = "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyN";
const NETWORK: &str = "xrpl:1";
const DROPS: &str = "1000000";

fn key() -> XrplKey {
    XrplKey::ed25519_from_entropy_hex(&"01".repeat(16)).unwrap()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The x402 offer: one XRP option to the payee, its `extra.invoiceId` H's LCP string, H and the link beside it.
fn offer(addr: SocketAddr, swap: bool) -> Value {
    let h = atr_hash(ATR).to_hex();
    json!({
        "x402Version": 2,
        "resource": {"url": format!("http://{addr}/report")},
        "accepts": [{
            "scheme": "exact", "network": NETWORK, "amount": DROPS, "asset": "XRP", "payTo": PAY_TO,
            "maxTimeoutSeconds": 60,
            "extra": {"areFeesSponsored": false, "invoiceId": format!("lcp:sha256:{h}")}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h,
            "legalContextUrl": format!("https://{HOST}/atr/{h}{}", if swap { "?swap" } else { "" })
        }}}
    })
}

/// The MPP challenge: 1 XRP to the payee on the testnet, `invoiceId` H, its id carrying H.
fn challenge() -> String {
    let h = atr_hash(ATR);
    let invoice = hex::encode_upper(h.as_bytes());
    let request = json!({"amount": DROPS, "currency": "XRP", "recipient": PAY_TO,
        "methodDetails": {"network": "testnet", "invoiceId": invoice}});
    let opaque =
        json!({"legalContext": format!("lcp:sha256:{h}"), "legalContextUrl": format!("https://{HOST}/atr/{h}")});
    format!(
        r#"Payment id="{}", realm="{HOST}", method="xrpl", intent="charge", request="{}", expires="2030-01-01T00:00:00Z", opaque="{}""#,
        terms::mpp::challenge_id(&h, 0).unwrap(),
        b64url(terms::json::canonical(&request).unwrap().as_bytes()),
        b64url(terms::json::canonical(&opaque).unwrap().as_bytes()),
    )
}

/// Why a signed blob is not the payer's, or its transaction id: its key's account is its `Account`, and the payer's
/// key signs its unsigned bytes to its signature.
fn payers(blob: &str) -> Result<String, String> {
    let blob = xrpl::decode_presented(blob).map_err(|r| r.code())?;
    let f = blob.fields();
    let public = decode::leaf_of(&f, fields::SIGNING_PUB_KEY).unwrap_or_default();
    let account = decode::leaf_of(&f, fields::ACCOUNT_FIELD).unwrap_or_default();
    let k = key();
    if public != k.public_key() || account != xrpl::account_id(k.address()).unwrap() {
        return Err("not the payer's key or account".into());
    }
    // The signing bytes hold the key: `STX\0` and the blob without its signature only.
    let kept: Vec<_> = f.iter().filter(|x| x.code != fields::TXN_SIGNATURE).cloned().collect();
    let signing = xrpl::signing_bytes(&decode::encode(&kept));
    if decode::leaf_of(&f, fields::TXN_SIGNATURE) != Some(&k.sign_bytes(&signing).unwrap()[..]) {
        return Err("the signature is not the payer's".into());
    }
    Ok(hex::encode_upper(blob.hash))
}

#[derive(Default)]
struct Seen {
    paid: usize,
    atr_fetches: usize,
}

fn reply(status: u16, headers: &[(&'static str, String)], body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap();
    for (name, value) in headers {
        response.headers_mut().append(*name, value.parse().unwrap());
    }
    response
}

async fn answer(
    seen: Arc<Mutex<Seen>>,
    addr: SocketAddr,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let path = req.uri().path().to_owned();
    let swap = req.uri().query() == Some("swap");
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (payment, authorization) = (header("payment-signature"), header("authorization"));
    let mut s = seen.lock().unwrap();
    if path.starts_with("/atr/") {
        s.atr_fetches += 1;
        return Ok(reply(200, &[], if swap { &b"other terms"[..] } else { ATR }));
    }
    let required = |swap: bool| reply(402, &[("PAYMENT-REQUIRED", b64(offer(addr, swap).to_string().as_bytes()))], "");
    match path.as_str() {
        "/report" | "/swap" => {
            let Some(payment) = payment else { return Ok(required(path == "/swap")) };
            s.paid += 1;
            let decoded: Value = serde_json::from_slice(
                &base64::engine::general_purpose::STANDARD.decode(payment.trim()).unwrap_or_default(),
            )
            .unwrap_or_default();
            let pairing = terms::pairing("x402/exact/xrpl").unwrap();
            let bound = terms::check(ATR, &decoded, pairing).map(|_| ()).map_err(|d| d.detail);
            let blob = decoded.pointer("/payload/signedTxBlob").and_then(Value::as_str).unwrap_or_default();
            match bound.and_then(|()| payers(blob)) {
                Ok(tx) => {
                    let response = json!({"success": true, "payer": key().address(), "transaction": tx,
                        "network": NETWORK, "amount": DROPS});
                    Ok(reply(200, &[("PAYMENT-RESPONSE", b64(response.to_string().as_bytes()))], "the report"))
                }
                Err(why) => Ok(reply(402, &[], format!("invalid: {why}"))),
            }
        }
        "/mpp" => {
            let Some(credential) = authorization else {
                return Ok(reply(402, &[("WWW-Authenticate", challenge())], ""));
            };
            s.paid += 1;
            let credential = terms::mpp::decode_credential(&credential).unwrap_or_default();
            let pairing = terms::pairing("mpp/charge/xrpl").unwrap();
            let bound = terms::check(ATR, &credential, pairing).map(|_| ()).map_err(|d| d.detail);
            let blob = credential.pointer("/payload/blob").and_then(Value::as_str).unwrap_or_default();
            match bound.and_then(|()| payers(blob)) {
                Ok(tx) => {
                    let receipt = json!({"status": "success", "method": "xrpl",
                        "timestamp": "2026-09-21T14:13:30Z", "reference": tx});
                    Ok(reply(200, &[("Payment-Receipt", b64url(receipt.to_string().as_bytes()))], "the report"))
                }
                Err(why) => Ok(reply(402, &[], format!("invalid: {why}"))),
            }
        }
        _ => Ok(reply(404, &[], "")),
    }
}

struct Seller {
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
}

async fn seller() -> Seller {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let state = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else { return };
            let state = state.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(state.clone(), addr, req));
                let _ = http1::Builder::new().serve_connection(TokioIo::new(socket), service).await;
            });
        }
    });
    Seller { addr, seen }
}

/// The payer's key, counting what it signs.
#[derive(Clone, Debug)]
struct Counting(Arc<AtomicUsize>);

struct CountingSigner(Arc<dyn Signer>, Arc<AtomicUsize>);

impl Signer for CountingSigner {
    fn account(&self) -> &str {
        self.0.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.sign(request)
    }
}

impl Wallet for Counting {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        Some(Arc::new(CountingSigner(key().on(network)?, self.0.clone())))
    }
}

/// The client on a loopback route to the seller, with the buyer's reads of the ledger as inputs.
fn client(s: &Seller, wallet: Counting) -> Client {
    let fetch = LoopbackFetch::new().unwrap().route(HOST, s.addr).unwrap();
    let mut inputs = Map::new();
    inputs.insert("fee".into(), json!("12"));
    inputs.insert("sequence".into(), json!(7));
    inputs.insert("lastLedgerSequence".into(), json!(1000));
    Client::builder(wallet).fetch(fetch).options(Options::new().inputs(inputs)).build().unwrap()
}

#[tokio::test]
async fn an_x402_xrpl_offer_is_paid_end_to_end() {
    let s = seller().await;
    let wallet = Counting(Arc::default());
    let outcome = client(&s, wallet.clone()).send(Outgoing::new("GET", format!("http://{}/report", s.addr))).await;
    let outcome = outcome.unwrap();
    let r = outcome.reply().unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!((r.status, &r.body[..]), (200, &b"the report"[..]), "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.header.0.as_str()), ("x402/exact/xrpl", "PAYMENT-SIGNATURE"));
    assert_eq!(paid.h, atr_hash(ATR));
    let Some(Settlement::X402(settled)) = &paid.settlement else { panic!("{paid:?}") };
    assert!(settled.success);
    assert_eq!(settled.payer.as_deref(), Some(key().address()));
    assert_eq!(wallet.0.load(Ordering::SeqCst), 1);
    let seen = s.seen.lock().unwrap();
    assert_eq!((seen.paid, seen.atr_fetches), (1, 1));
}

#[tokio::test]
async fn an_mpp_xrpl_charge_is_paid_with_authorization_payment() {
    let s = seller().await;
    let wallet = Counting(Arc::default());
    let outcome = client(&s, wallet.clone()).send(Outgoing::new("GET", format!("http://{}/mpp", s.addr))).await;
    let outcome = outcome.unwrap();
    let r = outcome.reply().unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(r.status, 200, "{outcome:?}");
    let paid = r.paid.as_ref().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.header.0.as_str()), ("mpp/charge/xrpl", "Authorization"));
    let credential = terms::mpp::decode_credential(&paid.header.1).unwrap();
    assert_eq!(credential["payload"]["type"], "transaction");
    let Some(Settlement::Mpp { receipt }) = &paid.settlement else { panic!("{paid:?}") };
    assert_eq!((receipt["status"].as_str(), receipt["method"].as_str()), (Some("success"), Some("xrpl")));
    assert_eq!(wallet.0.load(Ordering::SeqCst), 1);
    assert_eq!(s.seen.lock().unwrap().paid, 1);
}

#[tokio::test]
async fn terms_that_do_not_hash_to_h_get_nothing_signed_or_sent() {
    let s = seller().await;
    let wallet = Counting(Arc::default());
    let got = client(&s, wallet.clone()).send(Outgoing::new("GET", format!("http://{}/swap", s.addr))).await;
    let outcome = got.unwrap();
    let terms::client::Outcome::Refused(refused) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(refused.declined.code.as_str(), "hash-mismatch");
    assert_eq!(wallet.0.load(Ordering::SeqCst), 0);
    assert_eq!(s.seen.lock().unwrap().paid, 0);
}
