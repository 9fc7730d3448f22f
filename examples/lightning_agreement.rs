//! The Lightning walkthrough. The seller offers `x402/exact/lnbtc`: a BOLT11 invoice whose `m` field is H. Paying it
//! puts H nowhere public (the invoice is between the seller and the buyer's node), so the offer names an agreement URL
//! beside the link. The gate fetches and compares the terms, asks the agreement URL once and hands its one-unit
//! EIP-3009 payment (nonce H, a public proof) to the agent to approve; once approved, the wallet signs it and the gate
//! pays it, and only with the receipt in hand asks the node to pay the invoice (`bolt11-pay`). The node's answer is
//! the preimage, and the payment made of it reads H back from the invoice.
//!
//! The offer, the invoice, the ATR, the preimage and the buyer's request are the vector file
//! `tests/vectors/x402-exact-lnbtc.json`'s own (its B2 document, with the agreement URL added, and B6's ATR). The
//! seller is the in-memory stand-in of `support/`; the wallet that pays the agreement is a local key (Anvil's
//! development key #0); the node is a stand-in that answers the file's preimage. Each prints what it is asked.
//!
//! Run: `cargo run --example lightning_agreement`

#[path = "support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{Seller, Wallet, agreement_url, link};
use terms::rail::lightning::{Field, decode, invoice_h};
use terms::{
    Answer, BoxFuture, FixedClock, Options, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, check,
    hash_equals, transact,
};

/// The vector file, compiled in: the example runs from any folder.
const VECTORS: &str = include_str!("../tests/vectors/x402-exact-lnbtc.json");

/// The buyer's Lightning node, a stand-in: it pays a `bolt11-pay` invoice only once the seller has given the
/// agreement's receipt (it refuses before), answers the preimage, and is asked nothing else.
struct Node<'a> {
    account: String,
    preimage: String,
    seller: &'a Seller,
    paid: Mutex<Vec<String>>,
}

impl Node<'_> {
    fn paid(&self) -> Vec<String> {
        self.paid.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl Signer for Node<'_> {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let SigningRequest::Bolt11Pay { invoice } = request else {
                return Err(SignerError::new(format!("a node pays invoices, not {}", request.kind())));
            };
            let receipts = self.seller.receipts();
            let start = invoice.get(..24).unwrap_or(invoice);
            println!("node: {} {start}… (the seller has given {receipts} receipt)", request.kind());
            if receipts == 0 {
                return Err(SignerError::new("asked to pay the invoice before the agreement's receipt"));
            }
            self.paid.lock().map_err(|_| SignerError::new("the node's list is poisoned"))?.push(invoice.clone());
            Ok(Answer::new(json!(self.preimage)))
        })
    }
}

/// The row of the file's `buyer` section named `name`.
fn row<'a>(file: &'a Value, name: &str) -> Result<&'a Value, String> {
    let rows = file.pointer("/buyer/rows").and_then(Value::as_array).ok_or("the file has no buyer rows")?;
    rows.iter().find(|r| r["name"] == name).ok_or_else(|| format!("the file has no row {name}"))
}

fn text<'a>(v: &'a Value, pointer: &str) -> Result<&'a str, String> {
    v.pointer(pointer).and_then(Value::as_str).ok_or_else(|| format!("no text at {pointer}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file: Value = serde_json::from_str(VECTORS)?;
    let b2 = &row(&file, "B2")?["input"];
    let atr = hex::decode(text(row(&file, "B6")?, "/input/check/0/bytesHex")?)?;
    let seller = Seller::of(atr.clone());

    // The offer: the file's document, its legal context naming the agreement URL beside the link.
    let mut doc = b2["doc"].clone();
    let info = doc.pointer_mut("/extensions/legalContext/info").and_then(Value::as_object_mut).ok_or("no info")?;
    if info.get("legalContextUrl").and_then(Value::as_str) != Some(link(seller.h()).as_str()) {
        return Err("the document's link is not the seller's".into());
    }
    info.insert("legalContextAgreementUrl".into(), json!(agreement_url(seller.h())));

    // The invoice's `m` field is H: the hash of the ATR the link serves.
    let invoice = text(&doc, "/accepts/0/extra/invoice")?.to_owned();
    let bolt11 = decode(&invoice).map_err(|r| format!("the invoice: {r}"))?;
    let m = invoice_h(&bolt11, Field::M).map_err(|r| format!("the invoice's m: {r}"))?;
    println!("invoice m: {m}");
    println!("ATR hash:  {}", atr_hash(&atr));
    if m != atr_hash(&atr) {
        return Err("the invoice's m is not the ATR's hash".into());
    }

    let pairing = terms::pairing("x402/exact/lnbtc")?;
    let wallet = Wallet::new()?;
    let node = Node {
        account: text(b2, "/account")?.to_owned(),
        preimage: text(&file, "/fixed/preimage")?.to_owned(),
        seller: &seller,
        paid: Mutex::default(),
    };
    let now = b2["now"].as_u64().ok_or("no now")?;
    let inputs = b2["inputs"].as_object().cloned().ok_or("no inputs")?;
    let options = Options::new().clock(FixedClock(now)).inputs(inputs).agreement_signer(Arc::new(wallet.clone()));

    // First call: the terms are fetched and compared, the agreement URL is asked once, no one signs or pays.
    let TransactOutcome::ToApprove(pending) = transact(&doc, pairing, &node, &seller, &options).await? else {
        return Err("expected an agreement payment to approve".into());
    };
    if !wallet.kinds().is_empty() || !node.paid().is_empty() || seller.receipts() != 0 {
        return Err("something was signed or paid before the approval".into());
    }
    let o = &pending.approve.option;
    let field = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    println!("approve: {} of {} to {} on {}", field("amount"), field("asset"), field("payTo"), field("network"));

    // Second call, with the approval unchanged: the wallet signs the agreement payment (EIP-3009, nonce H), the gate
    // pays it, and with the receipt the node pays the invoice.
    let approved = options.approved(pending.approve);
    let TransactOutcome::Signed(paid) = transact(&doc, pairing, &node, &seller, &approved).await? else {
        return Err("expected the payment".into());
    };
    let receipt = paid.agreement.ok_or("no agreement receipt")?;
    println!("agreement receipt: {} on {} ({})", receipt.atr_hash, receipt.network, receipt.transaction);
    if !hash_equals(&receipt.atr_hash, &m.to_hex()) || wallet.kinds() != ["eip712"] || seller.receipts() != 1 {
        return Err("the agreement was not paid once, with one EIP-3009 signature, for H".into());
    }
    if node.paid() != [invoice.clone()] {
        return Err("the node did not pay the offer's invoice once".into());
    }

    // The node's answer: the preimage, whose SHA-256 is the invoice's payment hash.
    let payment = paid.signed.ok_or("no payment")?.to_value();
    let preimage = text(&payment, "/payload/preimage")?;
    println!("preimage: {preimage}");
    if Sha256::digest(hex::decode(preimage)?).as_slice() != bolt11.payment_hash {
        return Err("the preimage is not the invoice's".into());
    }

    // The payment made of it: the offer's invoice, from which H reads back.
    if text(&payment, "/accepted/extra/invoice")? != invoice {
        return Err("the payment is not of the offer's invoice".into());
    }
    let checked = check(&atr, &payment, pairing)?;
    if checked.h != m || paid.h != m {
        return Err("the payment does not read H back".into());
    }
    println!("payment reads H back: {}", checked.h);
    Ok(())
}
