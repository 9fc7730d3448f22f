//! An MPP EVM charge end to end on a real loopback socket: a stand-in seller answers `GET /report` with 402 and two
//! `WWW-Authenticate: Payment` challenges (one on a chain the signer is not on), the crate reads them, pays the one
//! on the signer's chain with `mpp/charge/evm/authorization` (an EIP-3009 authorization whose nonce is the challenge
//! hash, the challenge id carrying H), signed by a local key, and retries with `Authorization: Payment`. The seller
//! reads H back from the credential, and answers 200 with a `Payment-Receipt`.
//!
//! Run: `cargo run --example mpp_charge`.

use base64::Engine as _;
use serde_json::{Value, json};
use terms::http::LoopbackFetch;
use terms::{Fetch, FixedClock, LocalSigner, Options, Request, TransactOutcome};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const ATR: &[u8] =
    br#"{"atrVersion":"1","seller":{"name":"Report Co."},"terms":"Reports are licensed for one reader."}"#;
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const REALM: &str = "seller.test";
const NOW: u64 = 1_790_000_000;
const EXPIRES: &str = "2026-09-21T14:14:20Z";
const PAIRING: &str = "mpp/charge/evm/authorization";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// One challenge at `position`: 0.01 USDC on `chain`, its id carrying H, its opaque the legal context.
fn challenge(h: &terms::AtrHash, position: usize, chain: u64) -> Option<String> {
    let request = json!({
        "amount": "10000", "currency": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        "methodDetails": {"chainId": chain, "credentialTypes": ["authorization"]},
        "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    });
    let hex = h.to_hex();
    let opaque = json!({"legalContext": format!("lcp:sha256:{hex}"), "legalContextUrl": format!("https://seller.test/atr/{hex}")});
    let id = terms::mpp::challenge_id(h, position).ok()?;
    Some(format!(
        r#"Payment id="{id}", realm="{REALM}", method="evm", intent="charge", request="{}", expires="{EXPIRES}", opaque="{}""#,
        b64(terms::json::canonical(&request)?.as_bytes()),
        b64(terms::json::canonical(&opaque)?.as_bytes()),
    ))
}

/// The seller: the ATR at `/atr/…`; `/report` without a credential is 402 with two challenges, and with one the
/// seller reads H back (`check`) and answers 200 with a receipt.
async fn seller(listener: TcpListener) {
    let h = terms::atr_hash(ATR);
    loop {
        let Ok((mut socket, _)) = listener.accept().await else { return };
        let mut head = vec![0u8; 65_536];
        let n = socket.read(&mut head).await.unwrap_or(0);
        let text = String::from_utf8_lossy(head.get(..n).unwrap_or_default()).into_owned();
        let path = text.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let authorization = text
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("authorization")))
            .map(|(_, v)| v.trim().to_owned());
        let (status, headers, body): (&str, Vec<String>, Vec<u8>) = if path.starts_with("/atr/") {
            ("200 OK", vec![], ATR.to_vec())
        } else {
            match authorization {
                None => (
                    "402 Payment Required",
                    vec![
                        format!("WWW-Authenticate: {}", challenge(&h, 0, 1).unwrap_or_default()),
                        format!("WWW-Authenticate: {}", challenge(&h, 1, 84532).unwrap_or_default()),
                    ],
                    b"payment required".to_vec(),
                ),
                Some(value) => {
                    let credential = terms::mpp::decode_credential(&value).unwrap_or_default();
                    let checked = terms::pairing(PAIRING).ok().map(|p| terms::check(ATR, &credential, p));
                    match checked {
                        Some(Ok(c)) if c.h == h => {
                            let receipt = json!({
                                "status": "success", "method": "evm", "timestamp": "2026-09-21T14:13:30Z",
                                "reference": credential.pointer("/payload/nonce"),
                            });
                            let token = b64(receipt.to_string().as_bytes());
                            ("200 OK", vec![format!("Payment-Receipt: {token}")], b"the report".to_vec())
                        }
                        _ => ("402 Payment Required", vec![], b"not bound".to_vec()),
                    }
                }
            }
        };
        let mut reply = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
        for header in headers {
            reply.push_str(&header);
            reply.push_str("\r\n");
        }
        reply.push_str("\r\n");
        let _ = socket.write_all(reply.as_bytes()).await;
        let _ = socket.write_all(&body).await;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let fetch = LoopbackFetch::new()?.route("seller.test", listener.local_addr()?)?;
    tokio::spawn(seller(listener));

    // 1. The resource answers 402 with two challenges; the crate reads them.
    let first = fetch.get(Request { url: "https://seller.test/report", headers: &[] }).await?;
    println!("seller answered {}", first.status);
    let values: Vec<&str> = first
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, value)| value.as_str())
        .collect();
    let challenges: Value = terms::mpp::decode_challenges(&values)?;
    println!("challenges: {}", challenges.as_array().map_or(0, Vec::len));

    // 2. Confirm, sign with the local key, finish: the challenge on chain 84532, the one the signer is on.
    let signer = LocalSigner::from_hex(KEY, 84532)?;
    let pairing = terms::pairing(PAIRING)?;
    let inputs = json!({"tokenDomain": {"name": "USDC", "version": "2"}});
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs.as_object().cloned().unwrap_or_default());
    let TransactOutcome::Signed(paid) = terms::transact(&challenges, pairing, &signer, &fetch, &options).await? else {
        return Err("the seller asked for an agreement first".into());
    };
    let payment = paid.signed.ok_or("nothing was signed")?;
    let credential = payment.to_value();
    let text = |pointer: &str| credential.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    let (id, realm) = (text("/challenge/id"), text("/challenge/realm"));
    println!("H:              {}", paid.h.to_hex());
    println!("challenge id:   {id}");
    println!("challenge hash: 0x{}", hex::encode(terms::mpp::challenge_hash(id, realm)));
    println!("signed nonce:   {}", text("/payload/nonce"));

    // 3. Retry with the credential; the seller reads H back and answers with its receipt.
    let authorization = payment.authorization().ok_or("no Authorization value")?;
    let headers = [("Authorization", authorization.as_str())];
    let second = fetch.get(Request { url: "https://seller.test/report", headers: &headers }).await?;
    println!("seller answered {}", second.status);
    let receipt = terms::mpp::read_receipt(&second.header("payment-receipt").ok_or("no Payment-Receipt")?)?;
    println!("receipt:        method {}, reference {}, at {}", receipt.method, receipt.reference, receipt.timestamp);
    Ok(())
}
