//! The round trip of one `atr_check` over stdio: the `terms-mcp` binary as a child process, initialized once, then
//! asked one `tools/call` at a time on its stdin, each timed from the request line written to the answer line read
//! (the JSON-RPC framing, rmcp's dispatch, the schema check, the check itself and the answer's JSON). The payment is
//! the quickstart's, signed in process by the local key; every answer is checked to carry its hash.
//!
//! Run: `cargo bench --features mcp,host --bench mcp_stdio` (cargo builds the binary with the bench's profile, release,
//! and names it in `CARGO_BIN_EXE_terms-mcp`). `MCP_STDIO_CALLS` sets the number of timed calls (default 5000).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use terms::{FixedClock, LocalSigner, Options, Signer, confirm, finish};

mod support;
use support::{ATR, H, KEY, Memory, NOW, offer};

const EIP3009: &str = "x402/exact/eip155/eip3009";
const WARM_UP: usize = 200;

/// The quickstart payment, signed by the local key: what `atr_check` is asked about.
fn signed() -> Value {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pairing = terms::pairing(EIP3009).unwrap();
    let wallet = LocalSigner::from_hex(KEY, 84_532).unwrap();
    let options = Options::new().clock(FixedClock(NOW));
    let confirmed = rt.block_on(confirm(&offer(), pairing, wallet.account(), &Memory::atr(), &options)).unwrap();
    let answer = rt.block_on(wallet.sign(confirmed.request.as_ref().unwrap())).unwrap();
    match finish(&confirmed.bytes, &confirmed.chosen, &[answer], pairing).unwrap() {
        terms::Finish::Finished(done) => serde_json::to_value(&done.signed).unwrap(),
        terms::Finish::Next(_) => panic!("one signature pays EIP-3009"),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter that names another bench skips this one.
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if filter.as_deref().is_some_and(|f| !"mcp_stdio atr_check".contains(f)) {
        return;
    }
    let calls: usize = std::env::var("MCP_STDIO_CALLS").ok().and_then(|n| n.parse().ok()).unwrap_or(5000);
    let atr = base64_of(&hex::decode(ATR).unwrap());
    let presented = signed();

    let mut child = Command::new(env!("CARGO_BIN_EXE_terms-mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("terms-mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send = |message: &Value| {
        let mut text = serde_json::to_string(message).unwrap();
        text.push('\n');
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    let mut answer = |line: &mut String| {
        line.clear();
        assert!(stdout.read_line(line).unwrap() > 0, "terms-mcp closed its stdout");
    };

    send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "mcp_stdio bench", "version": "0"}
    }}));
    answer(&mut line);
    assert!(serde_json::from_str::<Value>(&line).unwrap()["result"]["serverInfo"].is_object(), "{line}");
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let mut times = Vec::with_capacity(calls);
    for id in 1..=WARM_UP + calls {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "atr_check", "arguments": {"pairing": EIP3009, "atr": atr, "presented": presented}
        }});
        let start = Instant::now();
        send(&request);
        answer(&mut line);
        let took = start.elapsed();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!((v["id"].as_u64(), &v["result"]["structuredContent"]), (Some(id as u64), &json!({"atrHash": H})));
        if id > WARM_UP {
            times.push(took);
        }
    }
    let _ = child.kill();
    let _ = child.wait();

    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "atr_check over stdio, {calls} round trips after {WARM_UP} to warm up: p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs, \
         mean {:.1} µs",
        us(percentile(&times, 0.50)),
        us(percentile(&times, 0.99)),
        us(*times.last().unwrap()),
        us(mean)
    );
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
