//! One ATR per session: open an MPP EVM session (`mpp/session/evm`) on Base Sepolia, pay two more requests in it,
//! record the seller's charge after each, and close it.
//!
//! The seller is an in-memory stand-in: it serves the ATR and answers each request with a `WWW-Authenticate: Payment`
//! challenge, which the crate decodes (`terms::mpp::decode_challenges`). The opening's challenge carries H in its id
//! and its opaque; the gate fetches and compares the terms once, and the escrow channel it opens is salted with their
//! hash, so the channel id commits to H. Every later challenge names the channel, and each voucher, signed from the
//! hold, signs that channel id. The wallet is a published Anvil development key, never a real one: it signs the
//! deposit's EIP-3009 authorization and every voucher.
//!
//! Run: `cargo run --example mpp_session`

#[path = "support/session_seller.rs"]
mod session_seller;

use serde_json::{Map, Value, json};
use session_seller::{NOW, SessionSeller, pay_then_close, show};
use terms::{FixedClock, LocalSigner, Options, Payment, TransactOutcome, open_channel, transact};

/// Anvil's published development key #0: the payer.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const CHAIN: u64 = 84_532;
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const ESCROW: &str = "0x1234567890AbcdEF1234567890aBcdef12345678";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = SessionSeller {
        atr: br#"{"atrVersion":"1","seller":{"note":"Per-request quotes, billed in a session."}}"#.to_vec(),
        method: "evm",
        currency: USDC,
        recipient: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
        details: json!({"chainId": CHAIN, "escrowContract": ESCROW, "credentialTypes": ["authorization"]}),
    };
    let wallet = LocalSigner::from_hex(ANVIL_KEY_0, CHAIN)?;
    let pairing = terms::pairing("mpp/session/evm")?;

    // The opening: the buyer names the deposit the channel locks and the token's EIP-712 domain.
    let mut inputs = Map::new();
    inputs.insert("deposit".into(), json!("5000000"));
    inputs.insert("credentialType".into(), json!("authorization"));
    inputs.insert("tokenDomain".into(), json!({"name": "USDC", "version": "2"}));
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs);
    let offer = seller.offer("100", None)?;
    let TransactOutcome::Signed(opened) = transact(&offer, pairing, &wallet, &seller, &options).await? else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.as_ref().ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let hold = open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref())?;
    println!("H:               {}", seller.h());
    println!("challenge id:    {}", offer.pointer("/0/id").and_then(Value::as_str).unwrap_or("?"));
    println!("held channel:    {} on {}", hold.channel, hold.network);
    println!("salt == H:       {}", opening.pointer("/payload/salt") == Some(&json!(hold.h)));
    let header = opened.signed.as_ref().and_then(Payment::authorization).unwrap_or_default();
    println!("Authorization:   {}…", header.get(..48).unwrap_or(&header));
    show("open (request 1)", &opening, &hold);

    // Two more requests in the channel, then the close.
    pay_then_close(&seller, pairing, &wallet, hold, &[(2, "100"), (3, "250")], 5_000_000).await
}
