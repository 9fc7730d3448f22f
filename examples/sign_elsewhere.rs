//! The sign-elsewhere flow for a pairing whose payment is no public proof of H (an ERC-7710 delegation): the agent
//! confirms the terms, pays the agreement payment (asking for approval first), and only with the agreement's
//! receipt in hand has the wallet sign the confirmed request, then finishes. `Confirmed`, the approval and `Chosen`
//! are plain serde values: here they go through JSON between the steps, as they would between processes.
//!
//! The seller is an in-memory stand-in; the wallet a local key (Anvil's development key #0).
//!
//! Run: `cargo run --example sign_elsewhere`

#[path = "support/mod.rs"]
mod support;

use support::{NOW, Seller, Wallet, offer};
use terms::{
    Agreement, AgreementPayment, Chosen, Confirmed, Finish, FixedClock, Options, Signer, agree, check, confirm, finish,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pairing = terms::pairing("x402/exact/eip155/erc7710")?;
    let seller = Seller::new()?;
    let wallet = Wallet::new()?;
    let options = Options::new().clock(FixedClock(NOW));

    // The agent: fetch and compare the terms, build the request. Nothing is signed.
    let confirmed = confirm(&offer(), pairing, wallet.account(), &seller, &options).await?;
    let url = confirmed.chosen.agreement.clone().ok_or("the offer names no agreement URL")?;
    let kept = serde_json::to_string(&confirmed)?;
    println!("confirmed: H {} ({} bytes of terms), agreement first at {url}", confirmed.h, confirmed.bytes.len());

    // The agreement payment: without an approval it comes back to approve; with it, it is signed and paid once.
    let Agreement::ToApprove(pending) = agree(&confirmed.bytes, &url, &wallet, &seller, &options).await? else {
        return Err("expected an agreement payment to approve".into());
    };
    let approval = serde_json::to_string(&pending.approve)?;
    let approve: AgreementPayment = serde_json::from_str(&approval)?;
    let text = |k: &str| approve.option.get(k).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
    println!("approve: {} of {} to {} on {}", text("amount"), text("asset"), text("payTo"), text("network"));
    let Agreement::Agreed { receipt } =
        agree(&confirmed.bytes, &url, &wallet, &seller, &options.approved(approve)).await?
    else {
        return Err("the agreement is not recorded".into());
    };
    println!("receipt: {} on {} ({})", receipt.atr_hash, receipt.network, receipt.transaction);

    // Only now, with the receipt in hand: the wallet (anywhere) signs the confirmed request.
    let confirmed: Confirmed = serde_json::from_str(&kept)?;
    let request = confirmed.request.as_ref().ok_or("nothing to sign")?;
    let answer = wallet.sign(request).await?;

    // And the agent finishes from the chosen payment and the kept bytes: H is recomputed from the bytes.
    let chosen: Chosen = serde_json::from_str(&serde_json::to_string(&confirmed.chosen)?)?;
    let Finish::Finished(done) = finish(&confirmed.bytes, &chosen, &[answer], pairing)? else {
        return Err("the payment asked for another signature".into());
    };
    let signed = done.signed.to_value();
    let checked = check(&confirmed.bytes, &signed, pairing)?;
    println!("payment reads H back: {}", checked.h == confirmed.h);
    // The header is the payment's text as JSON.stringify writes it; a payment nested past 64 levels has none.
    let sent = done.signed.header().ok_or("the payment cannot be sent as JSON")?;
    println!("PAYMENT-SIGNATURE: {} characters of base64", sent.len());
    Ok(())
}
