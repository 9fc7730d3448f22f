//! `terms approvals`, `terms approve ID`, `terms deny ID`: a person's side of the approval queue the journal keeps
//! (ours). A payment the policy sends to a person waits there, nothing signed; approved, the agent's next send of
//! the same request pays it, once; denied, it is never paid. No MCP tool does any of this.

use terms::safety::{Approval, ApprovalError};
use terms::{Clock as _, SystemClock};

use crate::setup::{Setup, journal, read_journal};
use crate::units::{Assets, rfc3339};
use crate::{Fail, exit};

/// How many lines of the terms a listing shows.
const TERMS_LINES: usize = 3;

/// Lists the approvals waiting for a person, oldest first.
pub(crate) async fn list(setup: &Setup, json: bool) -> Result<u8, Fail> {
    let journal = read_journal(setup).await?;
    let pending = journal.pending(SystemClock.now()).await.map_err(|e| Fail(exit::INTERNAL, e.to_string()))?;
    if json {
        println!("{}", serde_json::json!({ "pending": pending }));
        return Ok(exit::OK);
    }
    if pending.is_empty() {
        eprintln!("terms: no payment waits for approval");
        return Ok(exit::OK);
    }
    for approval in &pending {
        print!("{}", describe(approval, &setup.assets));
    }
    eprintln!("terms: approve one with `terms approve ID`, or deny it with `terms deny ID`");
    Ok(exit::OK)
}

/// Approves (`approve`) or denies the approval `id`, once.
pub(crate) async fn decide(setup: &Setup, id: &str, approve: bool, json: bool) -> Result<u8, Fail> {
    let journal = journal(setup).await?;
    let now = SystemClock.now();
    let decided = if approve { journal.approve(id, now).await } else { journal.deny(id, now).await };
    let approval = decided.map_err(|e| match e {
        ApprovalError::NotFound(_) => Fail(exit::USAGE, e.to_string()),
        ApprovalError::Journal(_) => Fail(exit::INTERNAL, e.to_string()),
        _ => Fail(exit::DO_NOT_RETRY, e.to_string()),
    })?;
    if json {
        println!("{}", serde_json::to_string(&approval).unwrap_or_default());
        return Ok(exit::OK);
    }
    print!("{}", describe(&approval, &setup.assets));
    if approve {
        eprintln!(
            "terms: approved {}: the agent's next send of the same request pays it, once, before {}",
            approval.id,
            rfc3339(approval.expires_at)
        );
    } else {
        eprintln!("terms: denied {}: it is never paid", approval.id);
    }
    Ok(exit::OK)
}

/// An approval for a person: what, to whom, for what, under which terms, asked by which rule and agent.
fn describe(a: &Approval, assets: &Assets) -> String {
    let q = &a.quote;
    let amount = assets.show(&q.network, &q.asset, q.amount);
    let resource = a.purchase.as_ref().map_or_else(|| "-".to_owned(), |p| format!("{} {}", p.method, p.url));
    let mut text = format!("{}  {}  {amount} to {} on {} ({})\n", a.id, a.state, q.payee, q.network, a.pairing);
    text.push_str(&format!("  for      {resource}\n  payer    {}\n", a.account));
    text.push_str(&format!("  terms    {} from {}\n", a.h.to_hex(), a.link));
    for line in String::from_utf8_lossy(&a.bytes).lines().filter(|l| !l.trim().is_empty()).take(TERMS_LINES) {
        // The seller's text, shown as data: control characters are not passed to the terminal.
        let clean: String = line.chars().map(|c| if c.is_control() { '?' } else { c }).take(120).collect();
        text.push_str(&format!("  |        {clean}\n"));
    }
    text.push_str(&format!("  rule     {}\n", a.rule));
    if let Some(agent) = &a.agent {
        text.push_str(&format!("  agent    {agent}\n"));
    }
    text.push_str(&format!("  queued   {}, expires {}\n", rfc3339(a.created_at), rfc3339(a.expires_at)));
    text
}
