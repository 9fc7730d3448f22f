//! `terms budget`: the policy's budgets, spent, reserved and remaining now.

use serde_json::{Value, json};
use terms::U256;

use crate::Fail;
use crate::setup::{Setup, read_journal};

/// Prints every budget of the policy.
pub(crate) async fn run(setup: &Setup, json: bool) -> Result<u8, Fail> {
    let Some(policy) = &setup.policy else {
        return Err(Fail(crate::exit::USAGE, "no policy: set one in the configuration or --policy".into()));
    };
    let journal = read_journal(setup).await?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut rows = Vec::new();
    for b in &policy.rules().budgets {
        let limit = b.limit.parse::<U256>().unwrap_or(U256::ZERO);
        let used = journal
            .budget(&b.name, "", &b.asset, b.window.seconds(), limit, now)
            .await
            .map_err(|e| Fail(crate::exit::INTERNAL, e.to_string()))?;
        rows.push(json!({
            "budget": b.name, "asset": b.asset, "window": b.window.seconds(), "limit": b.limit,
            "spent": used.spent.to_string(), "reserved": used.reserved.to_string(), "remaining": used.remaining.to_string(),
        }));
        if !json {
            // A budget's asset is `<network>/<asset>`; the network may hold a `/` of its own only before the last.
            let (network, asset) = b.asset.rsplit_once('/').unwrap_or(("", b.asset.as_str()));
            let show = |n: U256| setup.assets.show(network, asset, n);
            println!(
                "{}  limit {}  spent {}  reserved {}  remaining {}",
                b.name,
                show(limit),
                show(used.spent),
                show(used.reserved),
                show(used.remaining)
            );
        }
    }
    if json {
        println!("{}", Value::Array(rows));
    }
    Ok(0)
}
