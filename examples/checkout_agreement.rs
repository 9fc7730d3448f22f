//! The checkout walkthrough. The seller offers `acp/checkout/delegated`: an Agentic Commerce Protocol checkout session
//! whose `id` is H, with the link in `metadata.legal_context`. The agent's `delegate_payment` allowance names the
//! session, but nothing in it is public: the seller's payment service charges the card the agent's vault token stands
//! for. So the session names an agreement URL beside the link. The gate fetches and compares the terms, asks the
//! agreement URL once and hands its one-unit EIP-3009 payment (nonce H, a public proof) to the agent to approve; once
//! approved, the wallet signs it and the gate pays it, and only with the receipt in hand hands the agent the
//! allowance it built from the buyer's own values (`acp-allowance`, `checkout_session_id` = H). The agent answers its
//! `delegate_payment` request, and H reads back from it.
//!
//! The session, the ATR and the buyer's allowance values are the vector file `tests/vectors/acp-checkout.json`'s own
//! (its B2 session, with the agreement URL added, and B6's ATR). The seller is the in-memory stand-in of `support/`;
//! the wallet that pays the agreement is a local key (Anvil's development key #0); the agent is a stand-in that
//! answers the allowance it is handed. Each prints what it is asked.
//!
//! Run: `cargo run --example checkout_agreement --features checkout`

#[path = "support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::{Seller, Wallet, agreement_url, link};
use terms::{
    Answer, BoxFuture, FixedClock, Options, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, check,
    hash_equals, transact,
};

/// The vector file, compiled in: the example runs from any folder.
const VECTORS: &str = include_str!("../tests/vectors/acp-checkout.json");

/// The buyer's agent, a stand-in: it answers an `acp-allowance` request only once the seller has given the
/// agreement's receipt (it refuses before), with its `delegate_payment` request (the allowance and its payment
/// method), and is asked nothing else.
struct Agent<'a> {
    account: String,
    seller: &'a Seller,
    asked: Mutex<Vec<Value>>,
}

impl Agent<'_> {
    fn asked(&self) -> Vec<Value> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Signer for Agent<'_> {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let SigningRequest::AcpAllowance(fields) = request else {
                return Err(SignerError::new(format!("an agent answers allowances, not {}", request.kind())));
            };
            let allowance = fields.get("allowance").cloned().unwrap_or_default();
            let receipts = self.seller.receipts();
            println!("agent: {} {allowance} (the seller has given {receipts} receipt)", request.kind());
            if receipts == 0 {
                return Err(SignerError::new("asked for the allowance before the agreement's receipt"));
            }
            self.asked.lock().map_err(|_| SignerError::new("the agent's list is poisoned"))?.push(allowance.clone());
            Ok(Answer::new(json!({"allowance": allowance, "payment_method": {"type": "card"}})))
        })
    }
}

/// The row of the file's `buyer` section named `name` for `pairing`.
fn row<'a>(file: &'a Value, name: &str, pairing: &str) -> Result<&'a Value, String> {
    let rows = file.pointer("/buyer/rows").and_then(Value::as_array).ok_or("the file has no buyer rows")?;
    rows.iter()
        .find(|r| r["name"] == name && r["pairing"] == pairing)
        .ok_or_else(|| format!("the file has no row {name}"))
}

fn text<'a>(v: &'a Value, pointer: &str) -> Result<&'a str, String> {
    v.pointer(pointer).and_then(Value::as_str).ok_or_else(|| format!("no text at {pointer}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    const ID: &str = "acp/checkout/delegated";
    let file: Value = serde_json::from_str(VECTORS)?;
    let b2 = &row(&file, "B2", ID)?["input"];
    let atr = hex::decode(text(row(&file, "B6", ID)?, "/input/check/0/bytesHex")?)?;
    let seller = Seller::of(atr.clone());

    // The offer: the file's session, its legal context naming the agreement URL beside the link.
    let mut session = b2["doc"].clone();
    let lc = session.pointer_mut("/metadata/legal_context").and_then(Value::as_object_mut).ok_or("no legal_context")?;
    if lc.get("legal_context_url").and_then(Value::as_str) != Some(link(seller.h()).as_str()) {
        return Err("the session's link is not the seller's".into());
    }
    lc.insert("legal_context_agreement_url".into(), json!(agreement_url(seller.h())));

    // The session's id is H: the hash of the ATR the link serves.
    let id = text(&session, "/id")?.to_owned();
    println!("session id: {id}");
    println!("ATR hash:   {}", atr_hash(&atr));
    if !hash_equals(&id, &atr_hash(&atr).to_hex()) {
        return Err("the session's id is not the ATR's hash".into());
    }

    let pairing = terms::pairing(ID)?;
    let wallet = Wallet::new()?;
    let agent = Agent { account: text(b2, "/account")?.to_owned(), seller: &seller, asked: Mutex::default() };
    let inputs = b2["inputs"].as_object().cloned().ok_or("no inputs")?;
    println!("allowance values: {}", Value::Object(inputs.clone()));
    let options =
        Options::new().clock(FixedClock(support::NOW)).inputs(inputs).agreement_signer(Arc::new(wallet.clone()));

    // First call: the terms are fetched and compared, the agreement URL is asked once, no one signs or is asked.
    let TransactOutcome::ToApprove(pending) = transact(&session, pairing, &agent, &seller, &options).await? else {
        return Err("expected an agreement payment to approve".into());
    };
    if !wallet.kinds().is_empty() || !agent.asked().is_empty() || seller.receipts() != 0 {
        return Err("something was signed or asked before the approval".into());
    }
    let o = &pending.approve.option;
    let field = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    println!("approve: {} of {} to {} on {}", field("amount"), field("asset"), field("payTo"), field("network"));

    // Second call, with the approval unchanged: the wallet signs the agreement payment (EIP-3009, nonce H), the gate
    // pays it, and with the receipt the agent is handed the allowance.
    let approved = options.approved(pending.approve);
    let TransactOutcome::Signed(paid) = transact(&session, pairing, &agent, &seller, &approved).await? else {
        return Err("expected the payment".into());
    };
    let receipt = paid.agreement.ok_or("no agreement receipt")?;
    println!("agreement receipt: {} on {} ({})", receipt.atr_hash, receipt.network, receipt.transaction);
    if !hash_equals(&receipt.atr_hash, &id) || wallet.kinds() != ["eip712"] || seller.receipts() != 1 {
        return Err("the agreement was not paid once, with one EIP-3009 signature, for H".into());
    }
    let asked = agent.asked();
    let [allowance] = asked.as_slice() else { return Err("the agent was not asked once".into()) };
    if !hash_equals(text(allowance, "/checkout_session_id")?, &id) {
        return Err("the allowance does not name the session".into());
    }

    // The agent's answer: its delegate_payment request, from which H reads back.
    let payment = paid.signed.ok_or("no payment")?.to_value();
    println!("delegate_payment: {payment}");
    let checked = check(&atr, &payment, pairing)?;
    if checked.h != paid.h || !hash_equals(&checked.h.to_hex(), &id) {
        return Err("the payment does not read H back".into());
    }
    println!("payment reads H back: {}", checked.h);
    Ok(())
}
