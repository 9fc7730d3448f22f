//! `terms pay URL`: request the URL and pay the 402 it answers (or, with `--dry-run`, show what would be signed).
//! A request paid before is re-sent, never paid again, and the output says so; `--new` makes a new purchase.

use serde_json::Value;
use terms::client::{Outcome, Outgoing};
use terms::safety::Purchase;
use terms::safety::journal::Journal;
use terms::safety::recovery::Action;
use terms::{Ids as _, U256};

use crate::setup::{Setup, client, journal, not_sent, outgoing, wallet};
use crate::units::{Assets, Max, rfc3339};
use crate::{Fail, RequestArgs, exit};

/// The header of the purchase key.
const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// The flags of `pay`.
pub(crate) struct How<'a> {
    pub(crate) max: Option<&'a str>,
    pub(crate) dry_run: bool,
    pub(crate) new: bool,
}

/// Pays (or, dry, plans) the request and prints the outcome.
pub(crate) async fn run(setup: &Setup, args: &RequestArgs, how: How<'_>, json: bool) -> Result<u8, Fail> {
    let mut request = outgoing(args)?;
    if how.new {
        if request.get(IDEMPOTENCY_KEY).is_some() {
            return Err(Fail(
                exit::USAGE,
                "--new and an Idempotency-Key header both name the purchase: keep one of them".into(),
            ));
        }
        request = request.header(IDEMPOTENCY_KEY, terms::RandomIds::default().next_id());
    }
    let max = how.max.map(|m| Max::parse(m, &setup.assets)).transpose().map_err(|e| Fail(exit::USAGE, e))?;
    let wallet = wallet(&setup.config)?;
    // What the seller's discovery document says of signed acceptance, where the policy has a rule that reads it.
    let acceptance = crate::discovery::for_pay(setup, &args.url).await;
    if how.dry_run {
        let client = client(setup, wallet, max.as_ref(), None, acceptance).await?;
        let plan = client.probe(request.clone()).await.map_err(|e| not_sent(&e))?;
        let key = plan.account.as_deref().map(|a| purchase_key(&request, a, how.new));
        return Ok(crate::check::print_plan(&plan, &setup.assets, json, Some(key.as_deref().unwrap_or("-"))));
    }
    if setup.policy.is_none() {
        let only = if max.is_some() { ", only --max" } else { "" };
        eprintln!(
            "terms: no spend policy limits this payment{only} (name one with `policy` in the configuration, \
             or --policy)"
        );
    }
    let journal = journal(setup).await?;
    let client = client(setup, wallet, max.as_ref(), Some(journal.clone()), acceptance).await?;
    eprintln!("terms: {} {}", request.method, request.url);
    let outcome = client.send(request).await.map_err(|e| not_sent(&e))?;
    let code = exit_code(&outcome);
    if json {
        let mut value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
        if let (Some(reply), Some(map)) = (outcome.reply(), value.as_object_mut()) {
            map.insert("body".into(), Value::String(String::from_utf8_lossy(&reply.body).into_owned()));
        }
        println!("{value}");
        return Ok(code);
    }
    say_paid(&outcome, journal.as_ref(), &setup.assets).await;
    print_outcome(&outcome);
    Ok(code)
}

/// The purchase key the payment would be recorded under (a fresh one with `--new`).
fn purchase_key(request: &Outgoing, account: &str, new: bool) -> String {
    if new {
        return "a new one (--new)".into();
    }
    let mut purchase = Purchase::new(request.method.clone(), request.url.clone());
    if !request.body.is_empty() {
        purchase = purchase.with_body(&request.body);
    }
    if let Some(key) = request.get(IDEMPOTENCY_KEY) {
        purchase = purchase.with_key(key);
    }
    purchase.key(account)
}

fn exit_code(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::ToApprove(_) | Outcome::ApproveSpend(_) | Outcome::PendingApproval(_) => exit::APPROVE,
        _ => match outcome.recovery().map(|r| r.action()) {
            None => exit::OK,
            Some(Action::DoNotRetry) => exit::DO_NOT_RETRY,
            Some(Action::ResendSamePayment) => exit::RESEND_SAME,
            Some(Action::QueryFirst) => exit::QUERY_FIRST,
            Some(Action::RetryAfterPayment | Action::RetryAfterQuotaReset | Action::RefreshCredential) => {
                exit::RETRY_LATER
            }
            Some(_) => exit::OPERATOR_REVIEW,
        },
    }
}

/// What was paid, from the journal's record of the purchase: the amount in the asset's units, the pairing and the
/// payer, and for a re-sent payment when it was first made.
async fn say_paid(outcome: &Outcome, journal: &dyn Journal, assets: &Assets) {
    let Some(paid) = outcome.paid() else { return };
    let record = journal.record(&paid.key).await.ok().flatten();
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let amount = record.as_ref().map_or_else(String::new, |r| {
        let q = &r.quote;
        let atomic = text(q, "amount").parse::<U256>().unwrap_or_default();
        format!("{} ", assets.show(&text(q, "network"), &text(q, "asset"), atomic))
    });
    let sends = format!("{} send{}", paid.sends, if paid.sends == 1 { "" } else { "s" });
    if paid.resent {
        let when = record.as_ref().map_or_else(|| "an earlier time".to_owned(), |r| rfc3339(r.created_at));
        eprintln!("terms: re-sent the payment made at {when}; no new payment ({amount}with {}, {sends})", paid.pairing);
        eprintln!("terms: to buy again, pay with --new (see `terms pay --help`)");
    } else {
        eprintln!("terms: paid {amount}with {} as {} ({sends})", paid.pairing, paid.account);
    }
    eprintln!("terms: purchase {}", paid.key);
}

fn print_outcome(outcome: &Outcome) {
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
        Outcome::PendingApproval(p) => {
            let a = &p.pending_approval;
            eprintln!("terms: a person must approve this payment ({}); nothing signed", a.rule);
            eprintln!("terms: it waits as approval {}, until {}", a.id, crate::units::rfc3339(a.expires_at));
            eprintln!(
                "terms: approve it with `terms approve {}` (or `terms deny {}`), then run this same `terms pay` again \
                 to pay it",
                a.id, a.id
            );
        }
        _ => {}
    }
    if let Some(r) = outcome.recovery() {
        eprintln!("terms: recovery {r}");
    }
}
