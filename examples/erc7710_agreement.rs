//! The agreement-payments walkthrough. The seller offers an ERC-7710 delegation, which is no public proof of H, so
//! its offer names an agreement URL beside the link. The gate fetches and compares the terms, asks the agreement
//! URL once and hands its one-unit EIP-3009 payment (nonce H) to the agent to approve; once approved, it signs and
//! pays that, and signs the delegation only with the receipt in hand.
//!
//! The seller is an in-memory stand-in (it prints the agreement URL's answers as it gives them); the wallet is a
//! local key (Anvil's development key #0) that prints each request kind it signs.
//!
//! Run: `cargo run --example erc7710_agreement`

#[path = "support/mod.rs"]
mod support;

use support::{NOW, Seller, Wallet, offer};
use terms::{FixedClock, Options, TransactOutcome, hash_equals, transact};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pairing = terms::pairing("x402/exact/eip155/erc7710")?;
    let seller = Seller::new()?;
    let wallet = Wallet::new()?;
    let options = Options::new().clock(FixedClock(NOW));

    // First call: the terms are fetched and compared, the agreement URL is asked once, nothing is signed.
    let TransactOutcome::ToApprove(pending) = transact(&offer(), pairing, &wallet, &seller, &options).await? else {
        return Err("expected an agreement payment to approve".into());
    };
    let o = &pending.approve.option;
    let text = |k: &str| o.get(k).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
    println!("approve: {} of {} to {} on {}", text("amount"), text("asset"), text("payTo"), text("network"));

    // Second call, with the approval unchanged: the agreement payment is signed and paid once, then the delegation.
    let approved = options.approved(pending.approve);
    let TransactOutcome::Signed(paid) = transact(&offer(), pairing, &wallet, &seller, &approved).await? else {
        return Err("expected the payment".into());
    };
    let receipt = paid.agreement.ok_or("no agreement receipt")?;
    println!("receipt for H: {}", hash_equals(&receipt.atr_hash, &paid.h.to_hex()));
    Ok(())
}
