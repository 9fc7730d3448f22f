//! `terms receipt KEY`: the journal's record of one purchase.

use crate::Fail;
use crate::setup::{Setup, read_journal};

/// Prints the record of the purchase `key`.
pub(crate) async fn run(setup: &Setup, key: &str, json: bool) -> Result<u8, Fail> {
    let journal = read_journal(setup).await?;
    let record = journal.record(key).await.map_err(|e| Fail(crate::exit::INTERNAL, e.to_string()))?;
    let Some(r) = record else { return Err(Fail(crate::exit::USAGE, format!("no purchase {key} in the journal"))) };
    if json {
        println!("{}", serde_json::to_string(&r).unwrap_or_default());
    } else {
        println!("purchase  {}\npairing   {}\npayer     {}\nH         {}", r.key, r.pairing, r.account, r.h.to_hex());
        println!("payment   {}\nexecution {}\nretry     {}", r.payment_state, r.execution, r.retry);
        println!("answer    {}", r.answer.map_or_else(|| "-".to_owned(), |a| a.to_string()));
    }
    Ok(0)
}
