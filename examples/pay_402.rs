//! A paid request end to end: a stand-in x402 v2 seller on a real loopback socket answers `GET /report` with 402;
//! `terms::client` reads the offer, checks the spend policy, fetches the seller's terms once and compares their
//! SHA-256 with the H the offer advertises, has a local key sign an EIP-3009 authorization whose nonce is H, re-sends
//! the request with `PAYMENT-SIGNATURE`, reads the seller's `PAYMENT-RESPONSE`, and journals every step. The seller
//! checks the signature and the nonce before it answers. The key is the published Anvil development key #0, never a
//! real one; nothing leaves loopback.
//!
//! Run: `cargo run --example pay_402`.

#[path = "support/seller.rs"]
mod seller;

use std::sync::Arc;

use terms::U256;
use terms::client::{Client, Outcome, Outgoing, Settlement};
use terms::http::LoopbackFetch;
use terms::safety::journal::{SqliteJournal, Store as _};
use terms::safety::policy::Policy;

/// `amount` atomic units in units of `decimals` decimals: 10000 and 6 give `0.01`.
fn units(amount: U256, decimals: u8) -> String {
    let digits = format!("{amount:0>width$}", width = usize::from(decimals) + 1);
    let (whole, fraction) = digits.split_at(digits.len() - usize::from(decimals));
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() { whole.to_owned() } else { format!("{whole}.{fraction}") }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = seller::Seller::start().await;
    // The terms' https links name `seller.test`: route that host to the stand-in, over plain HTTP on loopback.
    let fetch = LoopbackFetch::new()?.route(seller::HOST, seller.addr)?;
    let key = terms::EvmKey::from_hex(seller::KEY)?;
    // At most 0.05 USDC a payment; the policy also names the asset's symbol and decimals.
    let policy = Arc::new(Policy::from_toml_str(&format!(
        "resources = [\"*\"]\nnetworks = [\"{n}\"]\n[[assets]]\nnetwork = \"{n}\"\naddress = \"{a}\"\nsymbol = \"USDC\"\n\
         decimals = 6\ncap = \"50000\"\n",
        n = seller::NETWORK,
        a = seller::USDC
    ))?);
    let dir = tempfile::tempdir()?;
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db"))?);
    let client = Client::builder(key).fetch(fetch).policy(policy.clone()).journal(journal.clone()).build()?;

    let url = seller.url("/report");
    println!("GET {url}");
    let outcome = client.send(Outgoing::new("GET", url)).await?;
    let Outcome::Answered(reply) = outcome else {
        println!("not paid: recovery {}", outcome.recovery().map_or_else(|| "none".to_owned(), |r| r.to_string()));
        return Ok(());
    };
    if let Some(paid) = &reply.paid {
        println!("pairing    {}", paid.pairing);
        if let Some(record) = journal.record(&paid.key).await? {
            let text = |k: &str| record.quote.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            let amount: U256 = text("amount").parse()?;
            let (network, asset) = (text("network"), text("asset"));
            match policy.asset_info(&network, &asset) {
                Some((symbol, decimals)) => {
                    println!("price      {} {symbol} ({amount}) on {network}", units(amount, decimals))
                }
                None => println!("price      {amount} of {asset} on {network}"),
            }
        }
        let terms = journal.atr(&paid.h).await?.unwrap_or_default();
        println!("terms      {}", String::from_utf8_lossy(&terms).lines().next().unwrap_or_default());
        println!("H          {}", paid.h.to_hex());
    }
    println!("HTTP {}   {}", reply.status, String::from_utf8_lossy(&reply.body));
    if let Some(Settlement::X402(s)) = reply.paid.as_ref().and_then(|p| p.settlement.as_ref()) {
        let said = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        println!("settled    transaction {} on {}", said(&s.transaction), said(&s.network));
    }
    println!("recovery   {}", reply.recovery.map_or_else(|| "none: success".to_owned(), |r| r.to_string()));
    Ok(())
}
