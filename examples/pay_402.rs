//! A paid request end to end: a stand-in x402 v2 seller on a real loopback socket answers `GET /report` with 402;
//! `terms::client` reads the offer, fetches the seller's terms once and compares their SHA-256 with the H the offer
//! advertises, has a local key sign an EIP-3009 authorization whose nonce is H, re-sends the request with
//! `PAYMENT-SIGNATURE`, and reads the seller's `PAYMENT-RESPONSE`. The seller checks the signature and the nonce
//! before it answers. The key is the published Anvil development key #0, never a real one; nothing leaves loopback.
//!
//! Run: `cargo run --example pay_402`.

#[path = "support/seller.rs"]
mod seller;

use terms::client::{Client, Outcome, Outgoing, Settlement};
use terms::http::LoopbackFetch;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = seller::Seller::start().await;
    // The terms' https links name `seller.test`: route that host to the stand-in, over plain HTTP on loopback.
    let fetch = LoopbackFetch::new()?.route(seller::HOST, seller.addr)?;
    let key = terms::EvmKey::from_hex(seller::KEY)?;
    let client = Client::builder(key).fetch(fetch).build()?;

    let url = seller.url("/report");
    println!("GET {url}");
    match client.send(Outgoing::new("GET", url)).await? {
        Outcome::Answered(reply) => {
            println!("HTTP {}: {}", reply.status, String::from_utf8_lossy(&reply.body));
            if let Some(paid) = &reply.paid {
                println!("paid with {} from {}", paid.pairing, paid.account);
                println!("terms H    {}", paid.h.to_hex());
                if let Some(Settlement::X402(s)) = &paid.settlement {
                    println!("settled    {} on {:?}, transaction {:?}", s.success, s.network, s.transaction);
                }
            }
            println!("recovery   {}", reply.recovery.map_or_else(|| "none: success".to_owned(), |r| r.to_string()));
        }
        other => println!("not paid: {other:?}"),
    }
    Ok(())
}
