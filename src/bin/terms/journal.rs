//! `terms journal check`: every budget's running totals compared with the reservations they sum; a budget that
//! disagrees is listed, marked and refused until `--repair` recomputes its totals from the rows.

use serde_json::json;

use crate::setup::{Setup, journal};
use crate::{Fail, exit};

/// Checks (or repairs) the journal's budget totals; `operator-review` where a budget disagrees and was not repaired.
pub(crate) async fn check(setup: &Setup, repair: bool, json: bool) -> Result<u8, Fail> {
    let journal = journal(setup).await?;
    let faults = journal.check_budgets(repair).await.map_err(|e| Fail(exit::INTERNAL, e.to_string()))?;
    if json {
        println!("{}", json!({"faults": faults, "repaired": repair && !faults.is_empty()}));
    } else if faults.is_empty() {
        println!("every budget's running totals agree with its reservations");
    }
    for f in faults.iter().filter(|_| !json) {
        let scope = if f.scope.is_empty() { String::new() } else { format!(" for {}", f.scope) };
        let what =
            if repair { "recomputed from its reservations" } else { "refused until `terms journal check --repair`" };
        println!(
            "budget {}{scope} of {}: {} bucket(s) disagreed with its reservations; {what}",
            f.budget, f.asset, f.buckets
        );
    }
    Ok(if faults.is_empty() || repair { exit::OK } else { exit::OPERATOR_REVIEW })
}
