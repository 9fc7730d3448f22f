//! The console's pages that read the journal: the approvals waiting for a person (with approve and deny), the
//! history, newest first, and one purchase's full record. Each page reads what it shows first, every read its own
//! short query, and renders from the values read: no lock or transaction of the journal is held while a page is
//! written.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;
use terms::safety::Approval;
use terms::safety::journal::{HistoryFilter, Record};
use terms::{AtrHash, U256};

use super::Cx;
use super::html::{esc, page, query, terms_excerpt};
use crate::units::{Assets, rfc3339};

/// How many lines of the terms a listing shows.
const TERMS_LINES: usize = 3;
/// How many payments the history shows.
pub(crate) const HISTORY_LIMIT: u32 = 100;

/// A journal failure, as the page says it.
pub(crate) type Failed = String;

/// A JSON value's member as text (`?` where absent).
fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("?").to_owned()
}

/// A quote's amount in human units: `0.01 USDC (10000)`.
fn amount(assets: &Assets, quote: &Value) -> String {
    let atomic = text(quote, "amount").parse::<U256>().unwrap_or_default();
    assets.show(&text(quote, "network"), &text(quote, "asset"), atomic)
}

/// A state as a small badge.
fn badge(state: &str) -> String {
    format!("<span class=\"state state-{0}\">{0}</span>", esc(state))
}

/// The pending approvals, and the one just decided (`?decided=ID`) as the journal holds it now.
pub(crate) async fn approvals(cx: &Cx, decided: Option<&str>) -> Result<String, Failed> {
    let now = cx.clock.now();
    let pending = cx.journal.pending(now).await.map_err(|e| e.to_string())?;
    let decided = match decided {
        Some(id) => cx.journal.approval(id, now).await.map_err(|e| e.to_string())?,
        None => None,
    };
    Ok(render_approvals(&pending, decided.as_ref(), &cx.assets, cx.guard.csrf(), now))
}

fn render_approvals(pending: &[Approval], decided: Option<&Approval>, assets: &Assets, csrf: &str, now: u64) -> String {
    let mut body = String::new();
    if let Some(a) = decided {
        let said = match a.state_at(now).as_str() {
            "approved" => "approved: the agent's next send of the same request pays it, once".to_owned(),
            "denied" => "denied: it is never paid".to_owned(),
            other => format!("is {other}"),
        };
        let _ = writeln!(body, "<p class=\"said\" id=\"said\"><code>{}</code> {}</p>", esc(&a.id), esc(&said));
    }
    if pending.is_empty() {
        body.push_str("<p class=\"note\" id=\"none-pending\">No payment waits for approval.</p>\n");
    }
    for a in pending {
        let q = serde_json::to_value(&a.quote).unwrap_or_default();
        let resource = a.purchase.as_ref().map_or_else(|| "-".to_owned(), |p| format!("{} {}", p.method, p.url));
        let _ = write!(
            body,
            "<section class=\"card approval\" id=\"{id}\" data-id=\"{id}\">\n<h2><code>{id}</code> {state} {amount} to \
             <code>{payee}</code></h2>\n<dl>\
             <dt>for</dt><dd class=\"mono\">{resource}</dd><dt>network</dt><dd>{network} ({pairing})</dd>\
             <dt>payer</dt><dd class=\"mono\">{account}</dd><dt>terms</dt><dd class=\"mono\">H {h}<br>from {link}</dd>\
             <dt></dt><dd>{excerpt}</dd><dt>rule</dt><dd class=\"mono\">{rule}</dd>",
            id = esc(&a.id),
            state = badge(a.state_at(now).as_str()),
            amount = esc(&amount(assets, &q)),
            payee = esc(&a.quote.payee),
            resource = esc(&resource),
            network = esc(&a.quote.network),
            pairing = esc(&a.pairing),
            account = esc(&a.account),
            h = esc(&a.h.to_hex()),
            link = esc(&a.link),
            excerpt = terms_excerpt(&a.bytes, TERMS_LINES),
            rule = esc(&a.rule),
        );
        if let Some(agent) = &a.agent {
            let _ = write!(body, "<dt>agent</dt><dd>{}</dd>", esc(agent));
        }
        let _ = write!(
            body,
            "<dt>queued</dt><dd>{} · expires {}</dd></dl>\n\
             <form method=\"post\" action=\"/approve\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"id\" value=\"{id}\"><button class=\"approve\" type=\"submit\">Approve</button>\
             </form> <form method=\"post\" action=\"/deny\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <input type=\"hidden\" name=\"id\" value=\"{id}\"><button class=\"deny\" type=\"submit\">Deny</button></form>\n\
             </section>\n",
            rfc3339(a.created_at),
            rfc3339(a.expires_at),
            csrf = esc(csrf),
            id = esc(&a.id),
        );
    }
    page("Approvals", "/", true, &body)
}

/// The receipt of an answer, short: its transaction or reference where it names one, else its JSON cut short.
fn receipt(answer: Option<&Value>) -> String {
    let Some(answer) = answer else { return "-".to_owned() };
    let named =
        |v: &Value| ["transaction", "reference", "txHash"].iter().find_map(|k| v.get(k)?.as_str().map(str::to_owned));
    let found = named(answer).or_else(|| answer.as_object()?.values().find_map(named));
    found.unwrap_or_else(|| {
        let json = answer.to_string();
        let cut: String = json.chars().take(80).collect();
        if cut.len() < json.len() { format!("{cut}…") } else { cut }
    })
}

/// The terms' bytes of each hash the records name, read once per hash.
async fn terms_of(cx: &Cx, records: &[Record]) -> Result<HashMap<AtrHash, Vec<u8>>, Failed> {
    let mut terms = HashMap::new();
    for r in records {
        if !terms.contains_key(&r.h)
            && let Some(bytes) = cx.journal.atr(&r.h).await.map_err(|e| e.to_string())?
        {
            terms.insert(r.h, bytes);
        }
    }
    Ok(terms)
}

/// The payments, newest first.
pub(crate) async fn history(cx: &Cx) -> Result<String, Failed> {
    let records = cx.journal.history(&HistoryFilter::new().limit(HISTORY_LIMIT)).await.map_err(|e| e.to_string())?;
    let terms = terms_of(cx, &records).await?;
    Ok(render_history(&records, &terms, &cx.assets))
}

fn render_history(records: &[Record], terms: &HashMap<AtrHash, Vec<u8>>, assets: &Assets) -> String {
    let mut body = String::new();
    if records.is_empty() {
        body.push_str("<p class=\"note\" id=\"no-payments\">No payments yet.</p>\n");
    } else {
        body.push_str(
            "<table id=\"history\"><thead><tr><th>when</th><th>state</th><th>amount</th><th>for</th><th>terms</th>\
             <th>receipt</th></tr></thead><tbody>\n",
        );
    }
    for r in records {
        let url =
            r.purchase.as_ref().map_or_else(|| "-".to_owned(), |p| format!("{} {}", text(p, "method"), text(p, "url")));
        let excerpt = terms.get(&r.h).map_or_else(
            || "<span class=\"note\">(the journal keeps the terms of signed payments only)</span>".to_owned(),
            |b| terms_excerpt(b, TERMS_LINES),
        );
        let _ = writeln!(
            body,
            "<tr class=\"payment\" data-key=\"{key}\" data-state=\"{state_text}\"><td>{when}</td><td>{state}<br>\
             <span class=\"note\">{execution}</span></td><td>{amount}<br><span class=\"note\">to <code>{payee}</code>\
             </span></td><td class=\"mono\">{url}<br><a href=\"/purchase?key={qkey}\">the full record</a></td>\
             <td><code>{h}</code>{excerpt}</td><td class=\"mono receipt\">{receipt}</td></tr>",
            key = esc(&r.key),
            state_text = esc(r.payment_state.as_str()),
            when = rfc3339(r.created_at),
            state = badge(r.payment_state.as_str()),
            execution = esc(r.execution.as_str()),
            amount = esc(&amount(assets, &r.quote)),
            payee = esc(&r.payee),
            url = esc(&url),
            qkey = esc(&query(&r.key)),
            h = esc(&r.h.to_hex()),
            receipt = esc(&receipt(r.answer.as_ref())),
        );
    }
    if !records.is_empty() {
        body.push_str("</tbody></table>\n");
    }
    page("History", "/history", true, &body)
}

/// One purchase's full record: every attempt, every role, oldest first, with its terms.
pub(crate) async fn purchase(cx: &Cx, key: &str) -> Result<Option<String>, Failed> {
    let attempts = cx.journal.attempts(key).await.map_err(|e| e.to_string())?;
    if attempts.is_empty() {
        return Ok(None);
    }
    let terms = terms_of(cx, &attempts).await?;
    Ok(Some(render_purchase(key, &attempts, &terms, &cx.assets)))
}

fn render_purchase(key: &str, attempts: &[Record], terms: &HashMap<AtrHash, Vec<u8>>, assets: &Assets) -> String {
    let mut body = format!("<p class=\"mono\" id=\"key\">{}</p>\n", esc(key));
    for r in attempts {
        let response = r.response.map_or("-", |s| s.as_str());
        let _ = write!(
            body,
            "<section class=\"card attempt\" id=\"{attempt}\">\n<h2>{role} attempt <code>{attempt}</code> {state}</h2>\n\
             <dl><dt>pairing</dt><dd>{pairing}</dd><dt>amount</dt><dd>{amount}</dd><dt>payer</dt>\
             <dd class=\"mono\">{account}</dd><dt>payee</dt><dd class=\"mono\">{payee}</dd><dt>H</dt>\
             <dd class=\"mono\">{h}</dd><dt>terms</dt><dd>{excerpt}</dd><dt>stage</dt><dd>{stage}</dd>\
             <dt>execution</dt><dd>{execution}</dd><dt>answer</dt><dd>{response}</dd><dt>next</dt><dd>{retry}</dd>\
             <dt>receipt</dt><dd class=\"mono\">{receipt}</dd><dt>cause</dt><dd>{cause}</dd>\
             <dt>begun</dt><dd>{created} · last change {updated}</dd></dl>\n",
            attempt = esc(&r.attempt),
            role = esc(&format!("{:?}", r.role)),
            state = badge(r.payment_state.as_str()),
            pairing = esc(&r.pairing),
            amount = esc(&amount(assets, &r.quote)),
            account = esc(&r.account),
            payee = esc(&r.payee),
            h = esc(&r.h.to_hex()),
            excerpt = terms.get(&r.h).map_or_else(|| "-".to_owned(), |b| terms_excerpt(b, 20)),
            stage = esc(r.stage.as_str()),
            execution = esc(r.execution.as_str()),
            response = esc(response),
            retry = esc(r.retry.as_str()),
            receipt = esc(&receipt(r.answer.as_ref())),
            cause = esc(r.cause.as_deref().unwrap_or("-")),
            created = rfc3339(r.created_at),
            updated = rfc3339(r.updated_at),
        );
        if !r.reservations.is_empty() {
            body.push_str(
                "<table><thead><tr><th>budget</th><th>amount</th><th>at</th><th>state</th></tr></thead><tbody>",
            );
            for v in &r.reservations {
                let (network, asset) = v.asset.rsplit_once('/').unwrap_or(("", v.asset.as_str()));
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&v.budget),
                    esc(&assets.show(network, asset, v.amount)),
                    rfc3339(v.at),
                    badge(v.state.as_str())
                );
            }
            body.push_str("</tbody></table>\n");
        }
        let members = [
            ("purchase", r.purchase.as_ref()),
            ("quote", Some(&r.quote)),
            ("choice", Some(&r.chosen)),
            ("asked of the wallet", r.prepared.as_ref()),
            ("payment", r.payment.as_ref()),
            ("answer", r.answer.as_ref()),
            ("decline", r.decline.as_ref()),
        ];
        for (name, value) in members {
            if let Some(v) = value {
                let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
                let _ = writeln!(body, "<h2>{name}</h2><pre class=\"json\">{}</pre>", esc(&pretty));
            }
        }
        body.push_str("</section>\n");
    }
    page("Purchase", "", false, &body)
}
