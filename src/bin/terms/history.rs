//! `terms history`: the journal's payments, newest first.

use serde_json::Value;
use terms::safety::journal::HistoryFilter;

use crate::Fail;
use crate::setup::{Setup, read_journal};

/// Prints at most `limit` payments.
pub(crate) async fn run(setup: &Setup, limit: u32, json: bool) -> Result<u8, Fail> {
    let journal = read_journal(setup).await?;
    let records = journal.history(&HistoryFilter::new().limit(limit)).await.map_err(|e| Fail(1, e.to_string()))?;
    if json {
        println!("{}", serde_json::to_string(&records).unwrap_or_default());
    } else if records.is_empty() {
        println!("no payments");
    }
    for r in records.iter().filter(|_| !json) {
        let url = r.purchase.as_ref().and_then(|p| p.get("url")).and_then(Value::as_str).unwrap_or("-");
        let amount = r.quote.get("amount").and_then(Value::as_str).unwrap_or("?");
        println!("{}  {:<9} {:>12} {}  {}  {}", r.created_at, r.payment_state, amount, r.pairing, url, r.key);
    }
    Ok(0)
}
