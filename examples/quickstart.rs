//! The main job: a seller offers a payment beside the hash of its terms; the gate fetches the terms once, compares
//! SHA-256, and only then has the wallet sign a payment that carries that hash.
//!
//! The seller here is an in-memory stand-in serving the 138-byte ATR and the x402 offer of the conformance vectors;
//! the wallet is a local key (the published Anvil development key #0, never a real one).
//!
//! Run: `cargo run --example quickstart`

use serde_json::{Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::{Body, Fetch, FetchError, Request, Response};
use terms::{FixedClock, Options, TransactOutcome, transact};

/// The seller's ATR: 138 bytes the gate never parses.
const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
/// Anvil's published development key #0.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// The seller's x402 v2 PAYMENT-REQUIRED document: one USDC option on Base Sepolia, H and the link beside it.
fn offer() -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact",
            "network": "eip155:84532",
            "amount": "10000",
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60,
            "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256",
            "value": H,
            "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}

/// The stand-in seller: serves the ATR at its link, and nothing else.
struct Seller;

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != format!("https://atr.seller.example/{H}") {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            let atr = hex::decode(ATR).map_err(FetchError::new)?;
            Ok(Response::new(200, vec![("content-type".into(), "application/json".into())], Body::from_bytes(atr)))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pairing = terms::pairing("x402/exact/eip155/eip3009")?;
    let wallet = LocalSigner::from_hex(ANVIL_KEY_0, 84_532)?;
    // A fixed clock makes the signed validBefore (now + 60 s) the same on every run.
    let options = Options::new().clock(FixedClock(1_790_000_000));

    let TransactOutcome::Signed(paid) = transact(&offer(), pairing, &wallet, &Seller, &options).await? else {
        return Err("this pairing needs no agreement payment".into());
    };
    let signed = paid.signed.ok_or("the pairing had nothing to sign")?.to_value();
    let nonce = signed.pointer("/payload/authorization/nonce").and_then(serde_json::Value::as_str).unwrap_or_default();

    println!("H:            {}", paid.h);
    println!("signed nonce: {nonce}");
    println!("nonce == H:   {}", terms::hash_equals(nonce, &paid.h.to_hex()));
    println!("kept bytes:   {} bytes", paid.bytes.len());
    println!("{}", String::from_utf8_lossy(&paid.bytes));
    Ok(())
}
