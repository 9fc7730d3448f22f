//! `terms check URL`: the offer, the terms compared, the policy's verdict; nothing signed.

use terms::client::{Plan, Verdict};

use crate::setup::{Setup, client, outgoing};
use crate::{Fail, RequestArgs};

/// Probes the URL and prints the plan.
pub(crate) async fn run(setup: &Setup, args: &RequestArgs, json: bool) -> Result<u8, Fail> {
    let client = client(setup, None).await?;
    let plan = client.probe(outgoing(args)?).await.map_err(|e| Fail(3, e.to_string()))?;
    Ok(print_plan(&plan, json))
}

pub(crate) fn print_plan(plan: &Plan, json: bool) -> u8 {
    let code = match (&plan.declined, &plan.policy) {
        (Some(_), _) | (_, Verdict::Refused { .. }) => 3,
        _ => 0,
    };
    if json {
        println!("{}", serde_json::to_string(plan).unwrap_or_default());
        return code;
    }
    println!("status    {}", plan.status);
    if let Some(p) = &plan.pairing {
        println!("pairing   {p}");
    }
    if let Some(a) = &plan.account {
        println!("payer     {a}");
    }
    if let Some(q) = &plan.quote {
        println!("pays      {} of {} on {} to {}", q.amount, q.asset, q.network, q.payee);
    }
    if let (Some(h), Some(n)) = (&plan.h, plan.atr_bytes) {
        println!("terms     {n} bytes, SHA-256 {} = the offer's H", h.to_hex());
    }
    match &plan.policy {
        Verdict::NoPolicy => println!("policy    none"),
        Verdict::Allowed { needs_approval } => {
            println!("policy    allowed{}", if *needs_approval { " (needs approval)" } else { "" });
        }
        Verdict::Refused { code, why } => println!("policy    refused: {code} ({why})"),
        _ => {}
    }
    if let Some(d) = &plan.declined {
        println!(
            "declined  {}: {}{}",
            d.code,
            d.detail,
            d.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        );
    }
    println!("signed    nothing");
    code
}
