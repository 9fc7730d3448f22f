//! Approvals outside the agent's reach, through the real `terms-mcp` binary driven by rmcp's client: a payment above
//! the host policy's threshold is `pending-approval` from `atr_pay`, with its id and quote; an agent holding every
//! tool the server lists, each called with what an agent would try (the pending approval passed back as an approval,
//! the seller's document to `atr_transact`, a confirm and finish, channel calls, the read-only tools), gets nothing
//! signed by the host's key; once a person approves in the journal, the same `atr_pay` pays, once.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::mcp::TOOL_NAMES;
use terms::safety::journal::{HistoryFilter, SqliteJournal, Store as _};
use terms::safety::{ApprovalQueue as _, ApprovalState};

use crate::common::{self, call, spawn};
use crate::seller::{self, Seller};

pub fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "approvals: an agent with every tool gets nothing above the threshold signed; a person's approval pays once",
        || Ok(common::run(every_tool_and_no_payment())),
    )]
}

/// The host's policy: the seller's price (10000) is above its approval threshold (5000), within its cap.
fn policy() -> String {
    format!(
        "resources = [\"*\"]\nnetworks = [{net:?}]\napproval_above = {{ \"{net}/{usdc}\" = \"5000\" }}\n\n\
         [[assets]]\nnetwork = {net:?}\naddress = {usdc:?}\nsymbol = \"USDC\"\ndecimals = 6\ncap = \"50000\"\n",
        net = seller::NETWORK,
        usdc = seller::USDC,
    )
}

fn structured(r: &rmcp::model::CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

/// Nothing was paid with the host's key: the seller saw no payment, and the journal holds no signed attempt.
async fn nothing_signed(seller: &Seller, journal: &SqliteJournal, after: &str) {
    assert!(seller.payments().is_empty(), "after {after}: the seller got a payment");
    let history = journal.history(&HistoryFilter::new()).await.unwrap();
    assert!(history.iter().all(|r| r.payment.is_none()), "after {after}: a signed attempt: {history:?}");
}

async fn every_tool_and_no_payment() {
    let seller = Seller::start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.toml"), policy()).unwrap();
    let config = format!(
        "journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"TERMS_MCP_APPROVAL_KEY\"\nnetwork = {:?}\n",
        seller::NETWORK
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let mut cmd = common::binary();
    cmd.arg("--config")
        .arg(dir.path().join("config.toml"))
        .arg("--local-seller")
        .arg(format!("{}={}", seller::HOST, seller.addr))
        .env("TERMS_MCP_APPROVAL_KEY", seller::KEY);
    let client = spawn(cmd).await;
    let journal = SqliteJournal::open(dir.path().join("journal.db")).unwrap();

    // Every tool there is, listed; none of them decides an approval or writes the policy.
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    let mut all = TOOL_NAMES.to_vec();
    all.sort_unstable();
    assert_eq!(names, all, "the server with a signer, a journal and a policy lists every tool");
    for tool in &tools {
        let schema = serde_json::to_string(&tool.input_schema).unwrap();
        for word in ["approveSpend", "spendApproved", "approvalId", "deny", "policy"] {
            assert!(!schema.contains(word), "{} takes {word}: {schema}", tool.name);
        }
    }

    // The paid fetch: pending, with the id and the quote, nothing signed.
    let report = format!("https://{}/report", seller::HOST);
    let first = structured(&call(&client, "atr_pay", json!({"url": report})).await);
    assert_eq!(first["outcome"], "pending-approval", "{first}");
    let approval = first["approval"].clone();
    let id = approval["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (approval["state"].as_str(), approval["quote"]["amount"].as_str()),
        (Some("pending"), Some(seller::AMOUNT))
    );
    assert_eq!(first["atrHash"], seller::h());
    assert!(approval["agent"].as_str().is_some_and(|a| a.starts_with("rmcp ")), "the client's clientInfo: {approval}");
    assert!(first["next"].as_str().unwrap().contains("no tool here approves it"));
    nothing_signed(&seller, &journal, "atr_pay").await;

    // What an agent would try with every tool. Each answer is whatever it is; what matters is what was signed.
    let doc = seller::offer(seller.addr, "/report");
    let account = format!("{}:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", seller::NETWORK);
    let pairing = "x402/exact/eip155/eip3009";
    let confirmed = structured(
        &call(&client, "atr_confirm", json!({"pairing": pairing, "document": doc, "account": account})).await,
    );
    let atr = json!({"base64": confirmed["atr"]["base64"].clone()});
    let tries: Vec<(&str, Value)> = vec![
        ("atr_pay", json!({"url": report, "approved": approval})),
        ("atr_pay", json!({"url": report, "approved": first})),
        ("atr_pay", json!({"url": report, "headers": {"Idempotency-Key": id}})),
        ("atr_transact", json!({"pairing": pairing, "document": doc})),
        ("atr_transact", json!({"pairing": pairing, "document": doc, "approved": approval})),
        ("atr_transact", json!({"pairing": pairing, "document": doc, "approveSpend": approval})),
        (
            "atr_finish",
            json!({"pairing": pairing, "atr": atr["base64"], "chosen": confirmed["chosen"], "signature": "0x00"}),
        ),
        ("atr_agree", json!({"atr": atr["base64"], "chosen": confirmed["chosen"]})),
        (
            "atr_channel_open",
            json!({"pairing": pairing, "atr": atr["base64"], "signed": {}, "mac": format!("0x{}", "0".repeat(64))}),
        ),
        ("atr_channel_within", json!({"pairing": pairing, "document": doc, "hold": {}})),
        ("atr_channel_record_charge", json!({"hold": {}, "charged": "1"})),
        ("atr_check", json!({"pairing": pairing, "atr": atr["base64"], "presented": {}})),
        ("atr_budget", json!({})),
        ("atr_history", json!({})),
        ("atr_record", json!({"key": id})),
    ];
    let mut called: Vec<&str> = vec!["atr_pay", "atr_confirm"];
    for (tool, args) in tries {
        let r = client
            .call_tool(rmcp::model::CallToolRequestParams::new(tool).with_arguments(common::obj(args)))
            .await
            .expect("tools/call");
        let v = structured(&r);
        assert!(v.get("signed").is_none_or(Value::is_null), "{tool} signed: {v}");
        nothing_signed(&seller, &journal, tool).await;
        called.push(tool);
    }
    called.sort_unstable();
    called.dedup();
    assert_eq!(called, all, "every tool was tried");
    assert_eq!(seller.paid("/report"), 0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let waiting = journal.pending(now).await.unwrap();
    // The first, and the one the agent's own Idempotency-Key made another purchase of: waiting, nothing more.
    assert_eq!(waiting.len(), 2, "{waiting:?}");
    assert_eq!(waiting[0].id, id);
    assert_eq!(waiting[1].purchase.as_ref().and_then(|p| p.key.as_deref()), Some(id.as_str()));
    // A person approves outside the agent's reach (`terms approve` does this); the same call pays, once.
    assert_eq!(journal.approve(&id, now).await.unwrap().state, ApprovalState::Approved);
    let paid = structured(&call(&client, "atr_pay", json!({"url": report})).await);
    assert_eq!(
        (paid["outcome"].as_str(), paid["response"]["status"].as_u64()),
        (Some("answered"), Some(200)),
        "{paid}"
    );
    assert_eq!(seller.paid("/report"), 1);
    let again = structured(&call(&client, "atr_pay", json!({"url": report})).await);
    assert_eq!(again["paid"]["resent"], true, "{again}");
    assert_eq!(seller.seen.lock().unwrap().nonces.len(), 1, "one payment");
    assert_eq!(journal.approval(&id, now).await.unwrap().map(|a| a.state), Some(ApprovalState::Used));
    client.cancel().await.unwrap();
}
