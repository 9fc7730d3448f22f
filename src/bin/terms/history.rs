//! `terms history`: the journal's payments, newest first, their times in RFC 3339 and their amounts in the asset's
//! units where known.

use serde_json::Value;
use terms::U256;
use terms::safety::journal::HistoryFilter;

use crate::setup::{Setup, read_journal};
use crate::units::rfc3339;
use crate::{Fail, exit};

/// Prints at most `limit` payments.
pub(crate) async fn run(setup: &Setup, limit: u32, json: bool) -> Result<u8, Fail> {
    let journal = read_journal(setup).await?;
    let records =
        journal.history(&HistoryFilter::new().limit(limit)).await.map_err(|e| Fail(exit::INTERNAL, e.to_string()))?;
    if json {
        println!("{}", serde_json::to_string(&records).unwrap_or_default());
    } else if records.is_empty() {
        println!("no payments");
    }
    for r in records.iter().filter(|_| !json) {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
        let url = r.purchase.as_ref().map_or_else(|| "-".to_owned(), |p| text(p, "url"));
        let atomic = text(&r.quote, "amount").parse::<U256>().unwrap_or_default();
        let amount = setup.assets.show(&text(&r.quote, "network"), &text(&r.quote, "asset"), atomic);
        println!("{}  {:<9} {amount}  {}  {url}  {}", rfc3339(r.created_at), r.payment_state, r.pairing, r.key);
    }
    Ok(exit::OK)
}
