//! The host's policy and journal in the server: a SQLite journal in a temporary folder and a policy from TOML, with
//! the payer's wallet. The policy is checked before the signer (a refused payment never reaches it), every payment
//! is journaled, and the read-only tools read the journal back: `atr_history`, `atr_record`, `atr_budget`.

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::mcp::{BuyerOptions, TOOL_NAMES, buyer_server};
use terms::safety::journal::SqliteJournal;
use terms::safety::policy::Policy;

use crate::common::*;

const EIP3009: &str = "x402/exact/eip155/eip3009";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("host: the policy is checked before the signer, each payment journaled and read back", || {
            Ok(run(policy_journal_and_read_back()))
        }),
        Trial::test("host: the read-only tools are offered with a journal, and refuse malformed arguments", || {
            Ok(run(offered_and_malformed()))
        }),
        Trial::test("host: terms-mcp --config reads the policy, the key and the journal of the CLI's file", || {
            Ok(run(binary_reads_the_file()))
        }),
        Trial::test("host: a journal that cannot be opened: the tools that sign decline and sign nothing", || {
            Ok(run(journal_unavailable()))
        }),
    ]
}

/// A policy for D's one option: any resource, its network, its asset with `cap`, one daily budget of `limit`.
fn policy(cap: &str, limit: &str) -> Policy {
    Policy::from_toml_str(&policy_text(cap, limit)).unwrap()
}

fn policy_text(cap: &str, limit: &str) -> String {
    let o = &doc()["accepts"][0];
    let (network, asset) = (o["network"].as_str().unwrap(), o["asset"].as_str().unwrap());
    format!(
        "resources = [\"*\"]\nnetworks = [{network:?}]\n\n[[assets]]\nnetwork = {network:?}\naddress = {asset:?}\n\
         symbol = \"USDC\"\ndecimals = 6\ncap = {cap:?}\n\n[[budgets]]\nname = \"day\"\nasset = \"{network}/{asset}\"\n\
         window = \"day\"\nlimit = {limit:?}\n"
    )
}

fn journal(dir: &tempfile::TempDir) -> Arc<SqliteJournal> {
    Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap())
}

async fn policy_journal_and_read_back() {
    let amount = doc()["accepts"][0]["amount"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let wallet = signer();
    // The cap is below the amount: refused before the signer is asked; nothing is journaled as signed.
    let below = (amount.parse::<u64>().unwrap() - 1).to_string();
    let refusing = server_options(Arc::new(seller()))
        .signer(Arc::new(wallet.clone()))
        .policy(Arc::new(policy(&below, "1000000000")))
        .journal(journal(&dir));
    let client = connect(buyer_server(refusing)).await;
    let (code, v) = declined(&call(&client, "atr_transact", json!({"pairing": EIP3009, "document": doc()})).await);
    assert_eq!(code, "policy-refused", "{v}");
    assert_eq!(wallet.count(), 0, "a refused payment never reaches the signer");
    let history = ok(&call(&client, "atr_history", json!({})).await);
    // The journal's first record is the intent written before a signer call; a policy refusal comes before it, so
    // there is no record at all.
    assert_eq!(history, json!({"records": []}), "a refused payment leaves no record");

    // A cap that allows it: signed once, journaled, and read back by each read-only tool.
    let limit = (amount.parse::<u64>().unwrap() * 3).to_string();
    let allowing = server_options(Arc::new(seller()))
        .signer(Arc::new(wallet.clone()))
        .policy(Arc::new(policy(&amount, &limit)))
        .journal(journal(&dir));
    let client = connect(buyer_server(allowing)).await;
    let paid = ok(&call(&client, "atr_transact", json!({"pairing": EIP3009, "document": doc()})).await);
    assert_eq!(paid["atrHash"], h_of_a());
    assert_eq!(wallet.count(), 1);
    let history = ok(&call(&client, "atr_history", json!({"limit": 1})).await);
    let records = history["records"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{history}");
    let newest = &records[0];
    assert_eq!(newest["pairing"], EIP3009);
    assert_eq!(newest["quote"]["amount"], json!(amount));
    assert_eq!(newest["account"], json!(account()));
    let key = newest["key"].as_str().unwrap();
    let record = ok(&call(&client, "atr_record", json!({"key": key})).await);
    assert_eq!(&record["record"], newest);
    let none = ok(&call(&client, "atr_record", json!({"key": "no-such-purchase"})).await);
    assert_eq!(none, json!({"record": null}));
    // The budget holds the payment (signed, not yet settled: reserved), and what remains is the rest.
    let budget = ok(&call(&client, "atr_budget", json!({})).await);
    let row = &budget["budgets"][0];
    assert_eq!(
        (row["budget"].as_str(), row["window"].as_str(), row["limit"].as_str()),
        (Some("day"), Some("day"), Some(&*limit))
    );
    let n = |k: &str| row[k].as_str().unwrap().parse::<u64>().unwrap();
    assert_eq!(n("spent") + n("reserved"), amount.parse::<u64>().unwrap(), "{row}");
    assert_eq!(n("remaining"), limit.parse::<u64>().unwrap() - amount.parse::<u64>().unwrap());
    let hourly = ok(&call(&client, "atr_budget", json!({"window": "hour"})).await);
    assert_eq!(
        (hourly["budgets"][0]["window"].as_str(), hourly["budgets"][0]["windowSeconds"].as_u64()),
        (Some("hour"), Some(3600))
    );
}

async fn offered_and_malformed() {
    let dir = tempfile::tempdir().unwrap();
    let all = buyer_server(
        server_options(Arc::new(seller()))
            .signer(Arc::new(signer()))
            .policy(Arc::new(policy("1", "1")))
            .journal(journal(&dir)),
    );
    let listed: Vec<String> =
        connect(all.clone()).await.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(listed, TOOL_NAMES.map(String::from).to_vec());
    // A journal without a policy: history and record, no budget; neither without a journal.
    let no_policy = buyer_server(server_options(Arc::new(seller())).journal(journal(&dir)));
    let listed: Vec<String> = no_policy.tools().iter().map(|t| t.name.to_string()).collect();
    assert!(listed.ends_with(&["atr_history".to_owned(), "atr_record".to_owned()]), "{listed:?}");
    assert!(!listed.contains(&"atr_budget".to_owned()));
    let bare: Vec<String> =
        buyer_server(BuyerOptions::new(Arc::new(seller()))).tools().iter().map(|t| t.name.to_string()).collect();
    assert!(!bare.iter().any(|n| n == "atr_history" || n == "atr_record" || n == "atr_budget"));
    // Every read-only tool says so.
    for t in all.tools().iter().filter(|t| ["atr_budget", "atr_history", "atr_record"].contains(&t.name.as_ref())) {
        let a = serde_json::to_value(&t.annotations).unwrap();
        assert_eq!(
            (a["readOnlyHint"].as_bool(), a["openWorldHint"].as_bool()),
            (Some(true), Some(false)),
            "{}",
            t.name
        );
    }
    let client = connect(all).await;
    for (tool, args, argument) in [
        ("atr_budget", json!({"window": "week"}), "window"),
        ("atr_budget", json!({"window": 3600}), "window"),
        ("atr_budget", json!({"since": 1}), ""),
        ("atr_history", json!({"limit": 0}), "limit"),
        ("atr_history", json!({"limit": 1001}), "limit"),
        ("atr_history", json!({"limit": "5"}), "limit"),
        ("atr_record", json!({}), "key"),
    ] {
        let v = invalid(&call(&client, tool, args.clone()).await);
        assert_eq!(v["argument"], argument, "{tool} {args}: {v}");
    }
    // The policy is not writable: no tool takes it.
    for t in client.list_all_tools().await.unwrap() {
        let properties = t.input_schema.get("properties").and_then(Value::as_object).unwrap();
        assert!(!properties.keys().any(|k| k.contains("policy") || k.contains("budget")), "{}", t.name);
    }
}

async fn journal_unavailable() {
    let wallet = signer();
    let options = server_options(Arc::new(seller()))
        .signer(Arc::new(wallet.clone()))
        .journal_unavailable("config.toml: the journal cannot be opened: no such folder");
    let client = connect(buyer_server(options)).await;
    for (tool, args) in [
        ("atr_transact", json!({"pairing": EIP3009, "document": doc()})),
        ("atr_channel_within", json!({"pairing": BATCH, "hold": {}, "document": channel_doc(None)})),
    ] {
        let (code, v) = declined(&call(&client, tool, args).await);
        assert_eq!((code.as_str(), v["decline"]["detail"].as_str()), ("journal-failed", Some("journal/unavailable")));
        assert!(v["decline"]["cause"].as_str().unwrap().contains("no such folder"), "{v}");
    }
    assert_eq!(wallet.count(), 0);
    // The tools that sign nothing still serve.
    let r = call(&client, "atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account()})).await;
    assert_eq!(ok(&r)["atrHash"], h_of_a());
}

async fn binary_reads_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.toml"), policy_text("1000000", "5000000")).unwrap();
    let network = doc()["accepts"][0]["network"].as_str().unwrap().to_owned();
    let config = format!(
        "journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"TERMS_MCP_HOST_KEY\"\nnetwork = {network:?}\n"
    );
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let mut cmd = binary();
    cmd.arg("--config").arg(dir.path().join("config.toml"));
    cmd.env("TERMS_MCP_HOST_KEY", fixed()["payerKey"].as_str().unwrap());
    let client = spawn(cmd).await;
    let listed: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(listed, TOOL_NAMES.map(String::from).to_vec());
    assert_eq!(ok(&call(&client, "atr_history", json!({})).await), json!({"records": []}));
    let budget = ok(&call(&client, "atr_budget", json!({})).await);
    let row = &budget["budgets"][0];
    assert_eq!(
        (row["limit"].as_str(), row["remaining"].as_str(), row["spent"].as_str()),
        (Some("5000000"), Some("5000000"), Some("0"))
    );
    client.cancel().await.unwrap();
    assert!(dir.path().join("journal.db").exists(), "the journal beside the file");
    // Without the key's variable: no signer, so no tool that signs.
    let mut cmd = binary();
    cmd.arg("--config").arg(dir.path().join("config.toml")).env_remove("TERMS_MCP_HOST_KEY");
    let client = spawn(cmd).await;
    let listed: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(
        !listed.iter().any(|n| ["atr_transact", "atr_agree", "atr_channel_within"].contains(&n.as_str())),
        "{listed:?}"
    );
    assert!(listed.contains(&"atr_budget".to_owned()));
    client.cancel().await.unwrap();
}
