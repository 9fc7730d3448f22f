//! The stdio bounds of the real `terms-mcp` binary: a line over 16 MiB, a request nested deeper than 127 levels
//! and a line that is not JSON each get an answer (a JSON-RPC error naming the limit) or, with no readable id, a
//! line on stderr; a line of exactly 16 MiB is answered like any other; and the server goes on serving after each.

use std::process::Stdio;
use std::time::Duration;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::mcp::{MAX_DEPTH, MAX_LINE};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

use crate::common::*;

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::limits::over_long_line_is_answered", || Ok(run(over_long()))),
        Trial::test("mcp::limits::lines_up_to_the_limit_are_answered", || Ok(run(at_the_limit()))),
        Trial::test("mcp::limits::over_deep_request_is_answered", || Ok(run(over_deep()))),
        Trial::test("mcp::limits::not_json_is_answered", || Ok(run(not_json()))),
        Trial::test("mcp::limits::no_id_is_a_line_on_stderr", || Ok(run(no_id()))),
    ]
}

const WAIT: Duration = Duration::from_secs(30);
const EIP3009: &str = "x402/exact/eip155/eip3009";

struct Bin {
    _child: Child,
    stdin: ChildStdin,
    out: Lines<BufReader<ChildStdout>>,
    err: Lines<BufReader<ChildStderr>>,
}

impl Bin {
    fn start() -> Self {
        let mut child = binary()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap()).lines();
        let err = BufReader::new(child.stderr.take().unwrap()).lines();
        Self { _child: child, stdin, out, err }
    }
    async fn raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }
    async fn answer(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.out.next_line()).await.expect("an answer in time").unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }
    /// A `tools/call` of `atr_check` with id `id`, answered normally: the server still serves.
    async fn still_serves(&mut self, id: i64) {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "name": "atr_check", "arguments": {"pairing": EIP3009, "atr": "/w==", "presented": {}}}});
        self.raw(&serde_json::to_vec(&call).unwrap()).await;
        let r = self.answer().await;
        assert_eq!(r["id"], id);
        assert_eq!(r["result"]["structuredContent"]["decline"]["code"], "signed-not-bound");
    }
}

fn assert_error(answer: &Value, id: Value, code: i64, names: &str) {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(names), "{message:?} names {names:?}");
}

/// A tools/call whose argument `presented` nests `levels` levels (4 + levels - 1 in the message).
fn nested_call(id: i64, levels: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"atr_check","arguments":{{"pairing":"{EIP3009}","atr":"/w==","presented":"#
    );
    let mut line = head.into_bytes();
    line.extend(std::iter::repeat_n(b'[', levels));
    line.extend(std::iter::repeat_n(b']', levels));
    line.extend_from_slice(b"}}}");
    line
}

async fn over_long() {
    let mut bin = Bin::start();
    let mut line = br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"pad":""#.to_vec();
    line.extend(std::iter::repeat_n(b'a', MAX_LINE));
    line.extend_from_slice(br#""}}"#);
    bin.raw(&line).await;
    assert_error(&bin.answer().await, json!(41), -32600, &MAX_LINE.to_string());
    bin.still_serves(42).await;
}

/// A `tools/call` of `atr_check` with id `id`, padded with spaces before its closing brace to exactly `length` bytes
/// (without the newline): its id stays near its start, where a line over the limit has it read.
fn padded_call(id: i64, length: usize) -> Vec<u8> {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": "atr_check", "arguments": {"pairing": EIP3009, "atr": "/w==", "presented": {}}}});
    let compact = serde_json::to_vec(&call).unwrap();
    let mut line = Vec::with_capacity(length);
    line.extend_from_slice(&compact[..compact.len() - 1]);
    line.extend(std::iter::repeat_n(b' ', length - compact.len()));
    line.push(b'}');
    assert_eq!(line.len(), length);
    line
}

/// A line of MAX_LINE - 1 bytes and one of exactly MAX_LINE bytes (the documented maximum) are answered like any
/// other; one of MAX_LINE + 1 bytes gets the over-the-limit error.
async fn at_the_limit() {
    let mut bin = Bin::start();
    for (id, length) in [(81, MAX_LINE - 1), (82, MAX_LINE)] {
        bin.raw(&padded_call(id, length)).await;
        let answered = tokio::time::timeout(WAIT, bin.out.next_line()).await;
        let line = answered.unwrap_or_else(|_| panic!("no answer to a line of {length} bytes")).unwrap().unwrap();
        let r: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(r["id"], id, "a line of {length} bytes: {r}");
        assert_eq!(r["result"]["structuredContent"]["decline"]["code"], "signed-not-bound", "{length} bytes: {r}");
    }
    bin.raw(&padded_call(83, MAX_LINE + 1)).await;
    assert_error(&bin.answer().await, json!(83), -32600, &MAX_LINE.to_string());
    bin.still_serves(84).await;
}

async fn over_deep() {
    let mut bin = Bin::start();
    // The message object, params and arguments are three levels: an argument may nest MAX_DEPTH - 3.
    bin.raw(&nested_call(51, MAX_DEPTH - 3 + 1)).await;
    assert_error(&bin.answer().await, json!(51), -32600, &MAX_DEPTH.to_string());
    bin.raw(&nested_call(52, MAX_DEPTH - 3)).await;
    let within = bin.answer().await;
    assert_eq!(within["id"], 52);
    assert!(within.get("error").is_none(), "an argument of {} levels is read: {within}", MAX_DEPTH - 3);
    bin.still_serves(53).await;
}

async fn not_json() {
    let mut bin = Bin::start();
    bin.raw(br#"{"jsonrpc":"2.0","id":"n1","method":tools/list}"#).await;
    assert_error(&bin.answer().await, json!("n1"), -32700, "not JSON");
    bin.still_serves(61).await;
}

async fn no_id() {
    let mut bin = Bin::start();
    let mut line = br#"{"jsonrpc":"2.0","method":"tools/list","params":{"pad":""#.to_vec();
    line.extend(std::iter::repeat_n(b'a', MAX_LINE + 1));
    bin.raw(&line).await;
    let said = tokio::time::timeout(WAIT, bin.err.next_line()).await.expect("a stderr line in time").unwrap().unwrap();
    assert!(said.contains("no readable id") && said.contains(&MAX_LINE.to_string()), "{said}");
    let mut deep = br#"{"jsonrpc":"2.0","method":"tools/list","params":"#.to_vec();
    deep.extend(std::iter::repeat_n(b'[', MAX_DEPTH + 5));
    deep.extend(std::iter::repeat_n(b']', MAX_DEPTH + 5));
    deep.push(b'}');
    bin.raw(&deep).await;
    let said = tokio::time::timeout(WAIT, bin.err.next_line()).await.expect("a stderr line in time").unwrap().unwrap();
    assert!(said.contains("no readable id") && said.contains(&MAX_DEPTH.to_string()), "{said}");
    bin.still_serves(71).await;
}
