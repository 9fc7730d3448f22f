//! One ATR per channel on Solana: open an x402 batch-settlement channel of the payment-channels program (the gate
//! fetches and compares the terms once, and the opening transaction carries their hash as its Memo), pay two more
//! requests in it with vouchers built from the hold, record the seller's charge after each, and close it with a
//! refund.
//!
//! The seller is an in-memory stand-in serving the ATR and each request's x402 offer. The wallet is one local ed25519
//! key made from a fixed test seed (never a real one): it pays the deposit and, as the payer authorizer, signs every
//! voucher. Nothing is sent to a cluster.
//!
//! Run: `cargo run --example solana_channel --features solana,local-signer`

#[path = "support/channel.rs"]
mod channel_seller;

use channel_seller::{Terms, cumulative, show};
use serde_json::{Map, Value, json};
use terms::{FixedClock, Options, Refund, SolanaKey, TransactOutcome, open_channel, record_charge, transact, within};

/// A fixed test seed: the payer and its payer authorizer.
const PAYER_SEED: &str = "0101010101010101010101010101010101010101010101010101010101010101";
const NETWORK: &str = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

/// The x402 v2 offer for one request: its price in a batch-settlement channel, H as the option's memo, and H and
/// the link beside it.
fn offer(seller: &Terms, price: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "batch-settlement",
            "network": NETWORK,
            "amount": price,
            "asset": "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
            "payTo": "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
            "maxTimeoutSeconds": 300,
            "extra": {
                "feePayer": "9hSR6S7WPtxmTojgo6GG3k4yDPecgJY292j7xrsUGWBu",
                "receiverAuthorizer": "GyGKxMyg1p9SsHfm15MkNUu1u9TN2JtTspcdmrtGUdse",
                "withdrawDelay": 3600,
                "tokenProgram": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
                "memo": format!("lcp:sha256:{}", seller.h())
            }
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256",
            "value": seller.h().to_hex(),
            "legalContextUrl": seller.link()
        }}}
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = Terms::per_request();
    let key = SolanaKey::from_seed_hex(PAYER_SEED)?;
    let wallet = key.on_network(NETWORK).ok_or("a Solana network")?;
    let pairing = terms::pairing("x402/batch-settlement/solana")?;
    let channel = pairing.channel().ok_or("a channel pairing")?;

    // The opening: the buyer's payer authorizer, the deposit the channel holds, and its reads of the cluster (a
    // recent slot and blockhash, the mint's token program).
    let mut inputs = Map::new();
    inputs.insert("payerAuthorizer".into(), json!(key.address()));
    inputs.insert("deposit".into(), json!("100000"));
    inputs.insert("openSlot".into(), json!("341000000"));
    inputs.insert("tokenProgram".into(), json!("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"));
    inputs.insert("recentBlockhash".into(), json!("EZ3rST5dvHmbanh75jc4PuLfV96vp9fEYBVeNk4FfM1k"));
    let options = Options::new().clock(FixedClock(1_790_000_000)).inputs(inputs);
    let TransactOutcome::Signed(opened) =
        transact(&offer(&seller, "1000"), pairing, &wallet, &seller, &options).await?
    else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let mut hold = open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref())?;
    println!("H:            {}", seller.h());
    println!("held channel: {} on {}", hold.channel, hold.network);
    show("open (request 1)", &opening, &hold);
    hold = record_charge(&hold, "1000")?;
    show("  seller charged 1000", &opening, &hold);

    // Two more requests: only the price comes from each offer; the ATR, H and the channel come from the hold. A
    // voucher signs the channel, not H: the opening bound the channel to H.
    for (request, price) in [(2, "1000"), (3, "250")] {
        let paid = within(&offer(&seller, price), &hold, pairing, &wallet, None, &Options::new()).await?;
        if channel.channel_ref(&paid.signed, None).map_err(|r| r.code())?.channel != hold.channel {
            return Err("every voucher names the held channel".into());
        }
        show(&format!("voucher (request {request})"), &paid.signed, &paid.hold);
        let charged = cumulative(&paid.signed).to_owned();
        hold = record_charge(&paid.hold, &charged)?;
        show(&format!("  seller charged {charged}"), &paid.signed, &hold);
    }

    // Close with a refund: the final voucher claims the recorded charge, and the rest of the deposit goes back.
    let closed =
        within(&offer(&seller, "250"), &hold, pairing, &wallet, Some(&Refund::close()), &Options::new()).await?;
    show("close (refund)", &closed.signed, &closed.hold);
    println!(
        "unclaimed:    {} of the 100000 deposit goes back to the payer",
        100_000 - cumulative(&closed.signed).parse::<u64>()?
    );
    Ok(())
}
