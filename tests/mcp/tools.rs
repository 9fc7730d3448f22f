//! Listing, lifecycles, definitions, the skill, the quickstart through the tools, declines and schema failures. The
//! agreement exchange and its cancellation are in `agreement.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Trial;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use terms::REGISTRY;
use terms::mcp::{BuyerOptions, SERVER_NAME, TOOL_NAMES, buyer_server};
use terms::{Signer, SigningRequest};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::*;
use crate::support::{Reply, ScriptedFetch};

const EIP3009: &str = "x402/exact/eip155/eip3009";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::binary_lists_five_tools_after_initialize", || Ok(run(binary_initialize()))),
        Trial::test("mcp::binary_lists_five_tools_per_request", || Ok(run(binary_per_request()))),
        Trial::test("mcp::binary_raw_lifecycles", || Ok(run(raw_lifecycles()))),
        Trial::test("mcp::signer_process_lists_eight_tools", || Ok(run(every_tool()))),
        Trial::test("mcp::tool_list_is_at_most_half_its_size_before", || Ok(run(list_size()))),
        Trial::test("mcp::tool_definitions", || Ok(run(definitions()))),
        Trial::test("mcp::skill_names_every_tool", || Ok(run(skill()))),
        Trial::test("mcp::quickstart_confirm_finish_check", || Ok(run(quickstart()))),
        Trial::test("mcp::binary_confirm_of_loopback_link_is_unfetchable", || Ok(run(binary_loopback()))),
        Trial::test("mcp::planted_atr_is_hash_mismatch", || Ok(run(planted()))),
        Trial::test("mcp::non_utf8_atr_and_unbuilt_pairing", || Ok(run(odd_values()))),
        Trial::test("mcp::schema_failures_fetch_and_sign_nothing", || Ok(run(schema_failures()))),
    ]
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn five() -> Vec<String> {
    ["atr_confirm", "atr_finish", "atr_check", "atr_channel_open", "atr_channel_record_charge"]
        .map(String::from)
        .to_vec()
}

async fn binary_initialize() {
    let client = spawn(binary()).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().unwrap().name, SERVER_NAME);
    assert_eq!(info.server_info.as_ref().unwrap().version, env!("CARGO_PKG_VERSION"));
    assert_eq!(serde_json::to_value(&info.capabilities).unwrap(), json!({"tools": {}}));
    assert_eq!(names(&client.list_all_tools().await.unwrap()), five());
    client.cancel().await.unwrap();
}

async fn binary_per_request() {
    let transport = rmcp::transport::TokioChildProcess::new(binary()).unwrap();
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        )
        .await
        .expect("discover");
    assert_eq!(names(&client.list_all_tools().await.unwrap()), five());
    let r = call(&client, "atr_check", json!({"pairing": EIP3009, "atr": b64(&bytes("A")), "presented": {}})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC lines to the binary, answers matched by id.
struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    fn start() -> Self {
        let mut child = binary()
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, stdin, lines }
    }
    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_string(&message).unwrap();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
    }
    async fn answer(&mut self, id: i64) -> Value {
        loop {
            let line =
                tokio::time::timeout(Duration::from_secs(30), self.lines.next_line()).await.unwrap().unwrap().unwrap();
            let v: Value = serde_json::from_str(&line).expect("every stdout line is JSON-RPC");
            if v["id"] == id {
                return v;
            }
        }
    }
}

fn meta(version: &str, capabilities: bool) -> Value {
    let mut m = json!({"io.modelcontextprotocol/protocolVersion": version});
    if capabilities {
        m["io.modelcontextprotocol/clientCapabilities"] = json!({});
    }
    m
}

async fn raw_lifecycles() {
    // The 2026-07-28 opening: every request carries its own _meta, no initialize.
    let mut raw = Raw::start();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta("2026-07-28", true)}}))
        .await;
    let listed = raw.answer(1).await;
    let got: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(got, five());
    raw.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta("2026-07-28", false)}}),
    )
    .await;
    assert_eq!(raw.answer(2).await["error"]["code"], -32602);
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta("2099-01-01", true)}}))
        .await;
    let refused = raw.answer(3).await;
    assert_eq!(refused["error"]["code"], -32022);
    assert!(refused["error"]["data"]["supported"].as_array().unwrap().contains(&json!("2026-07-28")));
    raw.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "_meta": meta("2026-07-28", true), "name": "atr_nothing", "arguments": {}}}))
        .await;
    assert_eq!(raw.answer(4).await["error"]["code"], -32602);
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "_meta": meta("2026-07-28", true), "name": "atr_check",
        "arguments": {"pairing": EIP3009, "atr": "/w==", "presented": {}}}}))
        .await;
    let r = raw.answer(5).await;
    assert_eq!(r["result"]["structuredContent"]["decline"]["code"], "signed-not-bound");
    assert_eq!(r["result"]["isError"], true);
    drop(raw.stdin);
    assert!(raw.child.wait().await.unwrap().success(), "ends cleanly when the client closes its input");

    // The 2025-11-25 handshake.
    let mut raw = Raw::start();
    raw.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        .await;
    let init = raw.answer(1).await;
    assert_eq!(
        init["result"],
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
               "serverInfo": {"name": "integraledger-terms", "version": env!("CARGO_PKG_VERSION")}})
    );
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    let listed = raw.answer(2).await;
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 5);
    raw.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "atr_check",
        "arguments": {"pairing": EIP3009, "atr": "/w==", "presented": {}}}}))
        .await;
    let r = raw.answer(3).await;
    assert!(r["result"].get("resultType").is_none(), "no resultType for a 2025-11-25 peer");
    assert_eq!(r["result"]["isError"], true);
}

async fn every_tool() {
    // Every tool but the three that read a journal (the helper has none; tests/mcp/host.rs lists all eleven).
    let ledger = ["atr_budget", "atr_history", "atr_record"];
    let all: Vec<String> = TOOL_NAMES.iter().filter(|n| !ledger.contains(n)).map(|n| n.to_string()).collect();
    assert_eq!(all.len(), 9);
    // A separate process of this test binary, serving buyer_server with a local wallet over stdio.
    let client = spawn(helper()).await;
    let listed = names(&client.list_all_tools().await.unwrap());
    assert_eq!(listed, all);
    client.cancel().await.unwrap();
    // An agreement signer alone adds atr_agree only.
    let only_agreement = buyer_server(BuyerOptions::new(Arc::new(seller())).agreement_signer(Arc::new(signer())));
    let client = connect(only_agreement).await;
    let mut six = five();
    six.insert(3, "atr_agree".into());
    assert_eq!(names(&client.list_all_tools().await.unwrap()), six);
    // Without a signer, a tool the server does not offer is not found.
    let bare = connect(buyer_server(BuyerOptions::new(Arc::new(seller())))).await;
    let err = bare
        .call_tool(
            CallToolRequestParams::new("atr_transact").with_arguments(obj(json!({"pairing": EIP3009, "document": {}}))),
        )
        .await;
    assert!(err.is_err(), "atr_transact is not offered without a signer");
}

/// The nine tools a signer's server lists (every feature, as this test builds), as `tools/list` sends them, took
/// 83,748 bytes of JSON before issue 42 (measured on the commit before this change); shared definitions (`$defs`) and shorter words keep them at most half that.
/// What each schema checks is unchanged: `schemas.rs` holds every input schema to the gate's own check.
const LIST_BYTES_BEFORE: usize = 83_748;

async fn list_size() {
    let client = spawn(helper()).await;
    let tools = client.list_all_tools().await.unwrap();
    let bytes = serde_json::to_string(&tools).unwrap().len();
    eprintln!("tools/list: {} tools, {bytes} bytes (before: {LIST_BYTES_BEFORE})", tools.len());
    assert_eq!(tools.len(), 9);
    assert!(bytes * 2 <= LIST_BYTES_BEFORE, "{bytes} bytes is more than half of {LIST_BYTES_BEFORE}");
    client.cancel().await.unwrap();
}

async fn definitions() {
    let server = buyer_server(BuyerOptions::new(Arc::new(seller())).signer(Arc::new(signer())));
    let tools = connect(server).await.list_all_tools().await.unwrap();
    let ids: Vec<Value> = REGISTRY.iter().map(|e| json!(e.id)).collect();
    assert_eq!(ids.len(), 67);
    for t in &tools {
        let v = serde_json::to_value(t).unwrap();
        assert!(v.get("outputSchema").is_none() && v.get("title").is_none(), "{}", t.name);
        assert!(v["description"].as_str().unwrap().len() > 40);
        let a = &v["annotations"];
        let (read_only, world) = match t.name.as_ref() {
            "atr_confirm" => (true, true),
            "atr_transact" | "atr_agree" | "atr_channel_within" | "atr_pay" => (false, true),
            _ => (true, false),
        };
        assert_eq!(a["readOnlyHint"], read_only, "{}", t.name);
        assert_eq!(a["openWorldHint"], world, "{}", t.name);
        if read_only {
            assert!(a.get("destructiveHint").is_none() && a.get("idempotentHint").is_none(), "{}", t.name);
        } else {
            // A paid request may change anything at the seller's.
            assert_eq!(a["destructiveHint"], t.name == "atr_pay", "{}", t.name);
            assert_eq!(a["idempotentHint"], false);
        }
        assert_eq!(a.as_object().unwrap().len(), if read_only { 2 } else { 4 });
        let s = &v["inputSchema"];
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        for req in s["required"].as_array().unwrap() {
            assert!(s["properties"].get(req.as_str().unwrap()).is_some());
        }
        for (name, p) in s["properties"].as_object().unwrap() {
            assert!(p["description"].is_string(), "{}.{name}", t.name);
            if name == "pairing" {
                assert_eq!(p["enum"].as_array().unwrap(), &ids);
            }
            if name == "atr" {
                assert_eq!(p["pattern"], terms::mcp::BASE64_PATTERN);
            }
        }
    }
    // The documents' words say the form each protocol's request takes, the same for every tool that takes one.
    let about = |tool: &str, arg: &str| {
        let t = tools.iter().find(|t| t.name == tool).unwrap();
        t.input_schema["properties"][arg]["description"].as_str().unwrap().to_owned()
    };
    let document = about("atr_confirm", "document");
    assert!(document.contains("PAYMENT-REQUIRED") && document.contains("`WWW-Authenticate: Payment` challenge"));
    assert_eq!(about("atr_transact", "document"), document);
    assert!(about("atr_channel_within", "document").contains("as atr_confirm takes it"));
    assert!(about("atr_channel_within", "refund").contains("an MPP session declines it"));
    let pairing_takers: BTreeSet<&str> = tools
        .iter()
        .filter(|t| t.input_schema["properties"].get("pairing").is_some())
        .map(|t| t.name.as_ref())
        .collect();
    assert_eq!(pairing_takers.len(), 6, "every tool but atr_agree and atr_channel_record_charge names a pairing");
}

async fn skill() {
    let path = format!("{}/skills/confirming-the-atr-hash-before-paying/SKILL.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let rest = text.strip_prefix("---\n").expect("frontmatter");
    let (front, body) = rest.split_once("\n---\n").expect("frontmatter end");
    assert!(front.lines().any(|l| l == "name: confirming-the-atr-hash-before-paying"));
    let description = front.lines().find_map(|l| l.strip_prefix("description: ")).expect("description");
    assert!(description.starts_with("Use before") && description.contains("ATR hash"));
    let steps: Vec<usize> =
        body.lines().filter_map(|l| l.split_once(". ").and_then(|(n, _)| n.trim().parse().ok())).collect();
    assert_eq!(steps, (1..=13).collect::<Vec<_>>(), "thirteen numbered steps in order");
    let re = regex::Regex::new(r"`(atr_[a-z_]+)`").unwrap();
    let named: BTreeSet<String> = re.captures_iter(&text).map(|c| c[1].to_owned()).collect();
    let client = spawn(helper()).await;
    let mut offered: BTreeSet<String> = names(&client.list_all_tools().await.unwrap()).into_iter().collect();
    client.cancel().await.unwrap();
    // The helper has no journal: the three tools that read one are named too (every tool of TOOL_NAMES).
    offered.extend(["atr_budget", "atr_history", "atr_record"].map(String::from));
    assert_eq!(offered, TOOL_NAMES.map(String::from).into_iter().collect::<BTreeSet<_>>());
    assert_eq!(named, offered);
}

pub async fn sign(signer: &dyn Signer, request: &Value) -> Value {
    let request: SigningRequest = serde_json::from_value(request.clone()).unwrap();
    signer.sign(&request).await.unwrap().into_json()
}

async fn quickstart() {
    let fetch = seller();
    let client = connect(buyer_server(server_options(Arc::new(fetch.clone())))).await;
    let b6 = row("B6");
    let r = call(&client, "atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account()})).await;
    let c = ok(&r);
    assert_eq!(c["atrHash"], h_of_a());
    assert_eq!(c["atr"], json!({"base64": b64(&bytes("A")), "utf8": String::from_utf8(bytes("A")).unwrap()}));
    assert_eq!(c["request"]["kind"], "eip712");
    assert_eq!(c["request"]["typedData"]["message"], b6["expect"]["message"]);
    assert_eq!(c["chosen"]["choice"]["accepted"], doc()["accepts"][0]);
    assert!(terms::http::is_public_address("1.1.1.1"));
    assert!(
        c["chosen"]["mac"].as_str().is_some_and(|m| regex::Regex::new(terms::mcp::MAC_PATTERN).unwrap().is_match(m))
    );
    assert_eq!(fetch.asked_of(&link()).len(), 1, "one fetch");

    let answer = sign(&signer(), &c["request"]).await;
    assert_eq!(answer, b6["expect"]["signature"], "the wallet signs exactly the vectors' message");
    let atr = c["atr"]["base64"].clone();
    let r = call(
        &client,
        "atr_finish",
        json!({"pairing": EIP3009, "atr": atr, "chosen": c["chosen"], "signature": answer}),
    )
    .await;
    let f = ok(&r);
    assert_eq!(f["atrHash"], h_of_a());
    assert_eq!(f["signed"]["payload"]["authorization"]["nonce"], b6["expect"]["signedNonce"]);
    assert_eq!(f["signed"]["payload"]["signature"], b6["expect"]["signature"]);
    assert!(f.get("mac").is_none(), "no opening mac on a pairing without a channel");

    // B7: the payment checks against A, and not against C.
    let r = call(&client, "atr_check", json!({"pairing": EIP3009, "atr": atr, "presented": f["signed"]})).await;
    assert_eq!(ok(&r), json!({"atrHash": h_of_a()}));
    let r = call(&client, "atr_check", json!({"pairing": EIP3009, "atr": b64(&bytes("C")), "presented": f["signed"]}))
        .await;
    assert_eq!(declined(&r).0, "signed-not-bound");
    // A chosen from atr_confirm in another order still finishes (the seal is over its members, not their order).
    let chosen: serde_json::Map<String, Value> = c["chosen"].as_object().unwrap().clone().into_iter().rev().collect();
    let r = call(&client, "atr_finish", json!({"pairing": EIP3009, "atr": atr, "chosen": chosen, "signature": answer}))
        .await;
    assert_eq!(ok(&r)["signed"], f["signed"]);
}

async fn binary_loopback() {
    let counter = Loopback::start("127.0.0.1:0").await.unwrap();
    let port = counter.addr.port();
    let client = spawn(binary()).await;
    let h = h_of_a();
    for link in [
        format!("https://127.0.0.1:{port}/{h}"),
        format!("https://localhost:{port}/{h}"),
        format!("https://0x7f.1:{port}/{h}"),
    ] {
        let r = call(
            &client,
            "atr_confirm",
            json!({"pairing": EIP3009, "document": doc_with_link(&link), "account": account()}),
        )
        .await;
        let (code, v) = declined(&r);
        assert_eq!(code, "atr-unfetchable", "{link}");
        assert_eq!(v["decline"]["detail"], "The ATR could not be fetched from the link.");
        assert!(v.get("moved").is_none());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counter.connections(), 0, "the refused links were never connected to");
    client.cancel().await.unwrap();
}

async fn planted() {
    let fetch = ScriptedFetch::new().script_repeating(&link(), vec![Reply::ok(bytes("C"))]);
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(fetch.clone())).signer(Arc::new(wallet.clone())))).await;
    let r = call(&client, "atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account()})).await;
    let (code, v) = declined(&r);
    assert_eq!(code, "hash-mismatch");
    assert!(v.get("request").is_none() && v.get("chosen").is_none());
    let r = call(&client, "atr_transact", json!({"pairing": EIP3009, "document": doc()})).await;
    assert_eq!(declined(&r).0, "hash-mismatch");
    assert_eq!(wallet.count(), 0, "the signer is never called on a mismatch");
    assert_eq!(fetch.asked_of(&link()).len(), 2);
}

async fn odd_values() {
    let client = connect(buyer_server(server_options(Arc::new(seller())))).await;
    // A byte that is not UTF-8: utf8 is null; the BOM of a UTF-8 text is not part of the text.
    let fetch = ScriptedFetch::new().script_repeating(&link(), vec![Reply::ok(vec![0xffu8])]);
    let mut d = doc();
    d["extensions"]["legalContext"]["info"]["value"] = json!(terms::atr_hash(&[0xff]).to_hex());
    let odd = connect(buyer_server(server_options(Arc::new(fetch)))).await;
    let r = call(&odd, "atr_confirm", json!({"pairing": EIP3009, "document": d, "account": account()})).await;
    assert_eq!(ok(&r)["atr"], json!({"base64": "/w==", "utf8": null}));
    let r = call(&odd, "atr_check", json!({"pairing": EIP3009, "atr": "/w==", "presented": {"payload": {}}})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
    // A pairing of the 67 that this build does not implement.
    let r = call(&client, "atr_check", json!({"pairing": "x402/exact/aptos", "atr": "/w==", "presented": {}})).await;
    let (code, v) = declined(&r);
    assert_eq!(code, "pairing-not-supported");
    assert_eq!(v["decline"]["detail"], "The gate has no buyer piece for the pairing x402/exact/aptos.");
}

async fn schema_failures() {
    let fetch = seller();
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(fetch.clone())).signer(Arc::new(wallet.clone())))).await;
    let a = b64(&bytes("A"));
    let mac = format!("0x{}", "ab".repeat(32));
    let cases: Vec<(&str, Value, &str)> = vec![
        ("atr_confirm", json!({"pairing": "x402/exact/nowhere", "document": doc(), "account": account()}), "pairing"),
        ("atr_confirm", json!({"pairing": 7, "document": doc(), "account": account()}), "pairing"),
        ("atr_confirm", json!({"document": doc(), "account": account()}), "pairing"),
        ("atr_confirm", json!({"pairing": EIP3009, "account": account()}), "document"),
        ("atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": 1}), "account"),
        ("atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account(), "inputs": null}), "inputs"),
        ("atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account(), "inputs": []}), "inputs"),
        ("atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account(), "extra": 1}), ""),
        ("atr_check", json!({"pairing": EIP3009, "atr": "/x==", "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": "/w", "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": "/w== ", "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": "_w==", "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": "/w=\n=", "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": null, "presented": {}}), "atr"),
        ("atr_check", json!({"pairing": EIP3009, "atr": a}), "presented"),
        ("atr_finish", json!({"pairing": EIP3009, "atr": a, "chosen": [], "signature": "0x"}), "chosen"),
        ("atr_finish", json!({"pairing": EIP3009, "atr": a, "chosen": {}}), "signature"),
        (
            "atr_transact",
            json!({"pairing": EIP3009, "document": doc(), "approved": {"url": "https://x"}}),
            "approved.option",
        ),
        (
            "atr_transact",
            json!({"pairing": EIP3009, "document": doc(), "approved": {"url": 1, "option": {}, "required": {}}}),
            "approved.url",
        ),
        (
            "atr_transact",
            json!({"pairing": EIP3009, "document": doc(), "approved": {"url": "u", "option": {}, "required": {}, "x": 1}}),
            "approved",
        ),
        ("atr_transact", json!({"pairing": EIP3009, "document": doc(), "approved": null}), "approved"),
        ("atr_agree", json!({"atr": a, "agreement": agreement_url()}), ""),
        ("atr_agree", json!({"atr": a}), "chosen"),
        ("atr_channel_open", json!({"pairing": EIP3009, "atr": a, "signed": {}, "mac": "0x00"}), "mac"),
        ("atr_channel_open", json!({"pairing": EIP3009, "atr": a, "signed": {}, "mac": mac.to_uppercase()}), "mac"),
        ("atr_channel_open", json!({"pairing": EIP3009, "atr": a, "signed": {}}), "mac"),
        ("atr_channel_record_charge", json!({"hold": "h", "charged": "1"}), "hold"),
        ("atr_channel_record_charge", json!({"hold": {}, "charged": 1}), "charged"),
        (
            "atr_channel_within",
            json!({"pairing": EIP3009, "hold": {}, "document": {}, "refund": {"amount": 1}}),
            "refund.amount",
        ),
        (
            "atr_channel_within",
            json!({"pairing": EIP3009, "hold": {}, "document": {}, "refund": {"all": true}}),
            "refund",
        ),
        ("atr_channel_within", json!({"pairing": EIP3009, "hold": {}, "document": {}, "refund": null}), "refund"),
    ];
    for (tool, args, argument) in cases {
        let r = call(&client, tool, args.clone()).await;
        let why = invalid(&r);
        assert_eq!(why["argument"], argument, "{tool} {args}");
    }
    // Arguments absent altogether.
    let r = client.call_tool(CallToolRequestParams::new("atr_check")).await.unwrap();
    assert_eq!(invalid(&r)["argument"], "pairing");
    assert!(fetch.asked().is_empty(), "nothing was fetched");
    assert_eq!(wallet.count(), 0, "nothing was signed");
    // The empty string is canonical base64 of no bytes; `receipt: null` is a receipt, not an absent one.
    let r = call(&client, "atr_check", json!({"pairing": EIP3009, "atr": "", "presented": {}})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
}
