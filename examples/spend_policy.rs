//! A payment under the buyer's spend policy and journal: the policy file `examples/policy.toml` (1 test USDC a
//! payment on Base Sepolia, 5 a day), a SQLite journal in a temporary file, and the quickstart's in-memory seller.
//! The first purchase is paid; the same purchase asked again is re-sent from the journal, byte for byte, never
//! signed again; a payment above the cap is refused before the terms are fetched; the journal shows the day's
//! budget, and each outcome says what the agent may do next.
//!
//! Run: `cargo run --example spend_policy`

use std::sync::Arc;

use serde_json::{Value, json};
use terms::safety::journal::{SqliteJournal, Store};
use terms::safety::policy::Policy;
use terms::safety::recovery::Recovery;
use terms::safety::{Answered, Purchase, SpendJournal};
use terms::{
    Body, BoxFuture, Fetch, FetchError, FixedClock, LocalSigner, Options, Request, Response, TransactOutcome, transact,
};

const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
/// Anvil's published development key #0, never a real one.
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

/// The seller's offer of `amount` (atomic units of test USDC) for the quote.
fn offer(amount: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": amount, "asset": USDC,
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": H, "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}

/// The seller's ATR link, in memory.
struct Seller;

impl Fetch for Seller {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async {
            let atr = hex::decode(ATR).map_err(FetchError::new)?;
            Ok(Response::new(200, vec![], Body::from_bytes(atr)))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policy = Arc::new(Policy::load(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/policy.toml"))?);
    let dir = std::env::temp_dir().join(format!("terms-spend-policy-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let journal = Arc::new(SqliteJournal::open(dir.join("journal.db"))?);
    let wallet = LocalSigner::from_hex(KEY, 84_532)?;
    let pairing = terms::pairing("x402/exact/eip155/eip3009")?;
    let now = 1_790_000_000;
    let options = Options::new()
        .clock(FixedClock(now))
        .policy(policy)
        .journal(journal.clone())
        .purchase(Purchase::new("GET", "https://api.seller.example/v1/quote"));

    // 0.01 test USDC: within the cap and the day's budget.
    let TransactOutcome::Signed(paid) = transact(offer("10000"), pairing, &wallet, &Seller, &options).await? else {
        return Err("expected a payment".into());
    };
    let attempt = paid.attempt.clone().ok_or("no attempt")?;
    println!("paid: attempt {attempt}, {} bytes of payment", paid.signed.as_ref().map_or(0, |p| p.as_str().len()));

    // The same purchase again (a retry after a timeout): the journal's bytes, not a second signature.
    let TransactOutcome::Resend(again) = transact(offer("10000"), pairing, &wallet, &Seller, &options).await? else {
        return Err("expected the journal's payment".into());
    };
    println!("retried: the same bytes re-sent: {}", again.resend.signed == paid.signed);

    // The seller settles; the reservation becomes spend.
    journal.answered(&attempt, Answered::Settled(&json!({"success": true}))).await?;

    // 2 test USDC: above the 1 USDC cap, refused before the terms are fetched.
    let other = options.clone().purchase(Purchase::new("GET", "https://api.seller.example/v1/quote?big"));
    let refused = transact(offer("2000000"), pairing, &wallet, &Seller, &other).await.err().ok_or("not refused")?;
    let recovery = Recovery::of_decline(&refused);
    println!(
        "refused: {} {} -> {}, no charge: {}",
        refused.code,
        refused.detail,
        recovery.action(),
        recovery.no_charge()
    );

    let asset = format!("eip155:84532/{USDC}");
    let day = journal.budget("sepolia-usdc-day", "", &asset, 86_400, terms::U256::from(5_000_000u64), now).await?;
    println!("budget sepolia-usdc-day: spent {}, reserved {}, remaining {}", day.spent, day.reserved, day.remaining);
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
