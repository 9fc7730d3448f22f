//! `terms pay URL`: request the URL and pay the 402 it answers (or, with `--dry-run`, print the plan).

use serde_json::Value;
use terms::client::Outcome;
use terms::safety::recovery::Action;

use crate::setup::{Setup, client, outgoing};
use crate::{Fail, RequestArgs};

/// Pays (or plans) the request and prints the outcome.
pub(crate) async fn run(
    setup: &Setup,
    request: &RequestArgs,
    max: Option<&str>,
    dry_run: bool,
    json: bool,
) -> Result<u8, Fail> {
    let client = client(setup, max).await?;
    if dry_run {
        let plan = client.probe(outgoing(request)?).await.map_err(|e| Fail(3, e.to_string()))?;
        return Ok(crate::check::print_plan(&plan, json));
    }
    if setup.policy.is_none() {
        let only = if max.is_some() { ", only --max" } else { "" };
        eprintln!(
            "terms: no spend policy limits this payment{only} (name one with `policy` in the configuration, \
             or --policy)"
        );
    }
    eprintln!("terms: {} {}", request.method.to_ascii_uppercase(), request.url);
    let outcome = client.send(outgoing(request)?).await.map_err(|e| Fail(3, e.to_string()))?;
    Ok(print_outcome(&outcome, json))
}

fn exit_code(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::ToApprove(_) | Outcome::ApproveSpend(_) => 8,
        _ => match outcome.recovery().map(|r| r.action()) {
            None => 0,
            Some(Action::DoNotRetry) => 3,
            Some(Action::ResendSamePayment) => 4,
            Some(Action::QueryFirst) => 5,
            Some(Action::RetryAfterPayment | Action::RetryAfterQuotaReset | Action::RefreshCredential) => 7,
            Some(_) => 6,
        },
    }
}

fn print_outcome(outcome: &Outcome, json: bool) -> u8 {
    let code = exit_code(outcome);
    if json {
        let mut value = serde_json::to_value(outcome).unwrap_or(Value::Null);
        if let (Some(reply), Some(map)) = (outcome.reply(), value.as_object_mut()) {
            map.insert("body".into(), Value::String(String::from_utf8_lossy(&reply.body).into_owned()));
        }
        println!("{value}");
        return code;
    }
    if let Some(paid) = outcome.paid() {
        eprintln!(
            "terms: paid with {} as {} ({} send{})",
            paid.pairing,
            paid.account,
            paid.sends,
            if paid.sends == 1 { "" } else { "s" }
        );
        eprintln!("terms: purchase {}", paid.key);
    }
    match outcome {
        Outcome::Answered(r) => {
            eprintln!("terms: HTTP {}", r.status);
            if let Some(job) = r.paid.as_ref().and_then(|p| p.job.as_deref()) {
                eprintln!("terms: job {job} (execution queued)");
            }
            print!("{}", String::from_utf8_lossy(&r.body));
        }
        Outcome::Lost(l) => eprintln!("terms: no answer: {}", l.cause),
        Outcome::Refused(r) => {
            let cause = r.declined.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
            eprintln!("terms: declined {}: {}{cause}", r.declined.code, r.declined.detail);
        }
        Outcome::ToApprove(_) => eprintln!("terms: an agreement payment needs approval first; nothing signed"),
        Outcome::ApproveSpend(_) => eprintln!("terms: the payment is above the approval threshold; nothing signed"),
        _ => {}
    }
    if let Some(r) = outcome.recovery() {
        eprintln!("terms: recovery {r}");
    }
    code
}
