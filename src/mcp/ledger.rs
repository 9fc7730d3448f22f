//! The read-only tools over the host's journal and policy: `atr_budget` (each budget of the policy, what its window
//! holds and what remains), `atr_history` (the journal's records, newest first) and `atr_record` (one purchase's
//! record). None of them writes anything; no tool writes the policy.

use ruint::aliases::U256;
use serde_json::{Value, json};

use super::BuyerOptions;
use super::schema::{Field, Invalid, Kind, field, optional};
use super::tools::{Args, Fail, to_json};
use crate::safety::journal::HistoryFilter;
use crate::safety::policy::Window;

type Outcome = Result<Value, Fail>;

/// How many records `atr_history` returns when no `limit` is given.
const DEFAULT_LIMIT: u32 = 20;

pub(crate) const BUDGET: [Field; 1] = [optional(
    "window",
    Kind::Text,
    "Count every budget over this rolling window (hour, day or month) in place of its own; absent, each budget's own.",
)];
pub(crate) const HISTORY: [Field; 1] =
    [optional("limit", Kind::Count, "At most this many records, newest first (default 20, at most 1000).")];
pub(crate) const RECORD: [Field; 1] =
    [field("key", Kind::Text, "The purchase's idempotency key, as atr_history gives it (`key`).")];

pub(crate) fn description(name: &str) -> &'static str {
    match name {
        "atr_budget" => {
            "The host's spend policy's budgets, read from the journal: for each, its asset, window and limit, and what \
             the window holds now (spent, reserved) and what remains. Read-only: no tool changes the policy."
        }
        "atr_history" => {
            "The host's journal: one record per payment attempt, newest first: its pairing, payer, quote, ATR hash, \
             the payment, execution, response and retry states, and its key. Read-only."
        }
        "atr_record" => {
            "The journal's record of one purchase, by its key: the newest attempt, or `record: null` where the journal \
             holds none. Read-only."
        }
        _ => "",
    }
}

fn journal_error(e: &crate::gate::JournalError) -> Fail {
    let d = crate::gate::journal_failed(crate::refusal::Reason::Unavailable, e);
    Fail::Result(json!({"decline": {"code": d.code.as_str(), "detail": d.detail, "cause": d.cause}}))
}

fn no_journal() -> Fail {
    Fail::Invalid(Invalid { argument: String::new(), reason: "no journal".into() })
}

pub(crate) async fn atr_budget(options: &BuyerOptions, args: &Args<'_>) -> Outcome {
    let (Some(journal), Some(policy)) = (&options.store, &options.policy) else { return Err(no_journal()) };
    let window = match args.0.get("window") {
        None => None,
        Some(_) => Some(serde_json::from_value::<Window>(args.value("window")).map_err(|_| {
            Fail::Invalid(Invalid { argument: "window".into(), reason: "must be hour, day or month".into() })
        })?),
    };
    let now = options.gate.clock.now();
    let mut rows = Vec::new();
    for b in &policy.rules().budgets {
        let window = window.unwrap_or(b.window);
        let limit = b.limit.parse::<U256>().unwrap_or(U256::ZERO);
        let used =
            journal.budget(&b.name, "", &b.asset, window.seconds(), limit, now).await.map_err(|e| journal_error(&e))?;
        rows.push(json!({
            "budget": b.name,
            "asset": b.asset,
            "window": window.as_str(),
            "windowSeconds": window.seconds(),
            "limit": b.limit,
            "per": b.per,
            "spent": used.spent.to_string(),
            "reserved": used.reserved.to_string(),
            "remaining": used.remaining.to_string(),
        }));
    }
    Ok(json!({"now": now, "budgets": rows}))
}

pub(crate) async fn atr_history(options: &BuyerOptions, args: &Args<'_>) -> Outcome {
    let Some(journal) = &options.store else { return Err(no_journal()) };
    let limit = args.0.get("limit").and_then(Value::as_u64).and_then(|n| u32::try_from(n).ok());
    let filter = HistoryFilter::new().limit(limit.unwrap_or(DEFAULT_LIMIT));
    let records = journal.history(&filter).await.map_err(|e| journal_error(&e))?;
    Ok(json!({"records": to_json(&records)}))
}

pub(crate) async fn atr_record(options: &BuyerOptions, args: &Args<'_>) -> Outcome {
    let Some(journal) = &options.store else { return Err(no_journal()) };
    let record = journal.record(args.text("key")).await.map_err(|e| journal_error(&e))?;
    Ok(json!({"record": to_json(&record)}))
}
