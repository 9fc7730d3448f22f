//! Fixtures (from the vector files' own data), the test servers, clients, and a loopback HTTP seller that records
//! and counts what reaches it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::CountingIds;
use terms::http::HttpFetch;
use terms::json::to_js_string;
use terms::mcp::{BuyerOptions, BuyerServer, buyer_server};
use terms::{Fetch, FetchError, Request, Response};
use terms::{FixedClock, Options};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::{CountingSigner, Reply, ScriptedFetch, vectors};

pub type Client = RunningService<RoleClient, ()>;

// ---------------------------------------------------------------------------------------------------------------
// Fixtures.

pub fn fixed() -> Value {
    vectors("buyer.json")["fixed"].clone()
}

pub fn row(name: &str) -> Value {
    vectors("buyer.json")["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone()
}

pub fn bytes(name: &str) -> Vec<u8> {
    hex::decode(fixed()[name].as_str().unwrap()).unwrap()
}

pub fn b64(bytes: &[u8]) -> String {
    b64_encode(bytes)
}

pub fn doc() -> Value {
    fixed()["D"].clone()
}

pub fn link() -> String {
    doc()["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().to_owned()
}

pub fn h_of_a() -> String {
    row("B1")["expect"]["h"].as_str().unwrap().to_owned()
}

pub fn account() -> String {
    fixed()["account"].as_str().unwrap().to_owned()
}

pub fn agreement(key: &str) -> Value {
    fixed()["agreement"][key].clone()
}

pub fn agreement_url() -> String {
    agreement("url").as_str().unwrap().to_owned()
}

/// The payer's wallet: buyer.json's payer key signs EIP-712 requests (and answers `erc7710` requests with a
/// delegation, see `CountingSigner::with_delegations`); the batch-settlement file's payer authorizer key signs
/// channel vouchers.
pub fn signer() -> CountingSigner {
    CountingSigner::new(fixed()["payerKey"].as_str().unwrap(), &account())
        .with_voucher_key(evm()["payerAuthorizerKey"].as_str().unwrap())
        .with_delegations()
}

/// The pairing whose payment is no public proof of H: the agreement is paid first.
pub const ERC7710: &str = "x402/exact/eip155/erc7710";
/// The channel pairing.
pub const BATCH: &str = "x402/batch-settlement/eip155";

/// D (which advertises H of A at its link) with its one option replaced by `x402-exact-eip155-erc7710.json`'s
/// ERC-7710 option and buyer.json's agreement URL beside the link: what a seller whose payment is no public proof
/// of H offers.
pub fn erc7710_doc() -> Value {
    let option = vectors("x402-exact-eip155-erc7710.json")["fixed"]["option"].clone();
    let mut d = doc();
    for k in ["network", "asset", "payTo"] {
        assert_eq!(option[k], d["accepts"][0][k], "the option pays the same payee as D's");
    }
    d["accepts"] = json!([option]);
    d["extensions"]["legalContext"]["info"]["legalContextAgreementUrl"] = agreement("url");
    d
}

/// `x402-batch-settlement.json`'s EVM fixture: the channel option, the payer authorizer and its key, the deposit.
pub fn evm() -> Value {
    vectors("x402-batch-settlement.json")["fixed"]["evm"].clone()
}

/// D with its one option replaced by the batch-settlement file's EVM option, at `amount` where given.
pub fn channel_doc(amount: Option<&str>) -> Value {
    let mut option = evm()["option"].clone();
    if let Some(a) = amount {
        option["amount"] = json!(a);
    }
    let mut d = doc();
    d["accepts"] = json!([option]);
    d
}

/// The buyer's inputs of a channel opening, from the batch-settlement file: the payer authorizer, the deposit and
/// the deposit authorization's salt.
pub fn channel_inputs() -> Value {
    let e = evm();
    assert_eq!(account().rsplit(':').next().unwrap(), e["payer"], "buyer.json's payer is the channel's payer");
    json!({"payerAuthorizer": e["payerAuthorizer"], "deposit": e["deposit"], "authSalt": e["authSalt"]})
}

pub fn gate_options() -> Options {
    Options::new().clock(FixedClock(fixed()["now"].as_u64().unwrap())).ids(CountingIds::default())
}

/// The in-memory seller: D's link serves A, every time.
pub fn seller() -> ScriptedFetch {
    ScriptedFetch::new().script_repeating(&link(), vec![Reply::ok(bytes("A"))])
}

/// The options of a test server: the fetch, the vectors' clock and ids.
pub fn server_options(fetch: Arc<dyn Fetch>) -> BuyerOptions {
    BuyerOptions::new(fetch).gate_options(gate_options())
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

pub fn run<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

// ---------------------------------------------------------------------------------------------------------------
// Servers and clients.

/// The helper process: the test server with the payer's wallet, over stdio.
pub fn serve_helper() {
    runtime().block_on(async {
        let server = buyer_server(server_options(Arc::new(seller())).signer(Arc::new(signer())));
        let running = server.serve(rmcp::transport::stdio()).await.expect("serve");
        let _ = running.waiting().await;
    });
}

/// rmcp's client over an in-memory duplex to an in-process server (the legacy `initialize` handshake).
pub async fn connect(server: BuyerServer) -> Client {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(theirs).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(ours).await.expect("client")
}

pub fn binary() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"))
}

pub fn helper() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
    cmd.env(crate::HELPER_ENV, "1");
    cmd
}

/// rmcp's client over a child process's stdio.
pub async fn spawn(cmd: tokio::process::Command) -> Client {
    ().serve(TokioChildProcess::new(cmd).expect("spawn")).await.expect("client")
}

pub fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

/// Calls a tool and checks the result's form: the text of its one block is the JSON of its structured content,
/// and `isError` is absent or `true`.
pub async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let r = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(obj(args)))
        .await
        .expect("tools/call");
    check_form(&r);
    r
}

pub fn check_form(r: &CallToolResult) {
    assert_eq!(r.content.len(), 1, "one content block");
    let text = serde_json::to_value(&r.content[0]).unwrap();
    assert_eq!(text["type"], "text");
    let structured = r.structured_content.clone().expect("structuredContent");
    assert_eq!(serde_json::from_str::<Value>(text["text"].as_str().unwrap()).unwrap(), structured);
    assert_eq!(text["text"].as_str().unwrap(), serde_json::to_string(&structured).unwrap());
    assert!(r.is_error.is_none() || r.is_error == Some(true), "isError absent or true");
}

/// The structured content of a success.
pub fn ok(r: &CallToolResult) -> Value {
    assert!(r.is_error.is_none(), "expected success, got {:?}", r.structured_content);
    let v = r.structured_content.clone().unwrap();
    assert!(v.get("decline").is_none());
    v
}

/// The decline of a result: its code, and the whole structured content.
pub fn declined(r: &CallToolResult) -> (String, Value) {
    assert_eq!(r.is_error, Some(true), "expected a decline, got {:?}", r.structured_content);
    let v = r.structured_content.clone().unwrap();
    let code = v["decline"]["code"].as_str().unwrap_or_else(|| panic!("not a decline: {v}")).to_owned();
    (code, v)
}

/// The schema failure of a result.
pub fn invalid(r: &CallToolResult) -> Value {
    assert_eq!(r.is_error, Some(true), "expected a schema failure, got {:?}", r.structured_content);
    let v = r.structured_content.clone().unwrap();
    assert!(v["invalid"]["reason"].is_string(), "not a schema failure: {v}");
    v["invalid"].clone()
}

// ---------------------------------------------------------------------------------------------------------------
// A loopback HTTP seller.

#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub payment: Option<String>,
}

#[derive(Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn new(status: u16) -> Self {
        Self { status, headers: vec![], body: vec![] }
    }
    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A plain-HTTP server on 127.0.0.1 answering each path from a script (the last answer repeats), recording every
/// request and counting every connection.
#[derive(Clone)]
pub struct Loopback {
    pub addr: SocketAddr,
    routes: Arc<Mutex<HashMap<String, VecDeque<Answer>>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
}

impl Loopback {
    pub async fn start(addr: &str) -> Option<Self> {
        let listener = TcpListener::bind(addr).await.ok()?;
        let this = Self {
            addr: listener.local_addr().unwrap(),
            routes: Arc::default(),
            seen: Arc::default(),
            connections: Arc::default(),
        };
        let served = this.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                served.connections.fetch_add(1, Ordering::SeqCst);
                let s = served.clone();
                tokio::spawn(async move { s.answer(stream).await });
            }
        });
        Some(this)
    }

    pub fn route(&self, path: &str, answers: Vec<Answer>) {
        self.routes.lock().unwrap().insert(path.to_owned(), answers.into());
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path == path).cloned().collect()
    }

    /// Every path requested so far, in order.
    pub fn requested(&self) -> Vec<String> {
        self.seen.lock().unwrap().iter().map(|s| s.path.clone()).collect()
    }

    pub fn paid(&self, path: &str) -> usize {
        self.seen(path).iter().filter(|s| s.payment.is_some()).count()
    }

    async fn answer(&self, mut stream: tokio::net::TcpStream) {
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65_536 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        // The whole request body is read before the answer, so a client still writing a large body never meets a
        // closed socket (a broken pipe, not the answer).
        let length = text
            .split("\r\n")
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        let body_start = head.windows(4).position(|w| w == b"\r\n\r\n").map_or(head.len(), |i| i + 4);
        let mut unread = length.saturating_sub(head.len() - body_start);
        while unread > 0 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => unread = unread.saturating_sub(n),
            }
        }
        let mut lines = text.split("\r\n");
        let path = lines.next().unwrap_or_default().split(' ').nth(1).unwrap_or_default().to_owned();
        let payment = lines
            .filter_map(|l| l.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case("payment-signature"))
            .map(|(_, v)| v.trim().to_owned());
        self.seen.lock().unwrap().push(Seen { path: path.clone(), payment });
        let answer = {
            let mut routes = self.routes.lock().unwrap();
            match routes.get_mut(&path) {
                Some(q) if q.len() > 1 => q.pop_front(),
                Some(q) => q.front().cloned(),
                None => None,
            }
        }
        .unwrap_or_else(|| Answer::new(404));
        let mut out = format!(
            "HTTP/1.1 {} Answer\r\nContent-Length: {}\r\nConnection: close\r\n",
            answer.status,
            answer.body.len()
        );
        for (n, v) in &answer.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&answer.body);
        let _ = stream.write_all(&bytes).await;
        let _ = stream.shutdown().await;
    }

    /// The path an https URL is served at here: `/host/path`.
    pub fn path_of(url: &str) -> String {
        format!("/{}", url.strip_prefix("https://").unwrap())
    }
}

/// A fetch that sends each https URL to the loopback seller over plain HTTP (`https://host/path` →
/// `http://127.0.0.1:port/host/path`), through the crate's own reqwest client: the gate still sees https links.
pub struct ToLoopback {
    inner: HttpFetch,
    base: String,
}

impl ToLoopback {
    pub fn new(seller: &Loopback) -> Self {
        Self::to(seller.addr)
    }

    /// The same, to a loopback seller known only by its address (one that another process started).
    pub fn to(addr: SocketAddr) -> Self {
        Self { inner: HttpFetch::from_client(HttpFetch::builder().build().unwrap()), base: format!("http://{addr}") }
    }
}

impl Fetch for ToLoopback {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let url = format!("{}{}", self.base, Loopback::path_of(request.url));
            self.inner.get(Request { url: &url, headers: request.headers }).await
        })
    }
}

/// The loopback seller with A at D's link and the agreement URL answering `answers`.
pub async fn agreement_seller(answers: Vec<Answer>) -> Loopback {
    let seller = Loopback::start("127.0.0.1:0").await.unwrap();
    seller.route(&Loopback::path_of(&link()), vec![Answer::new(200).body(bytes("A"))]);
    seller.route(&Loopback::path_of(&agreement_url()), answers);
    seller
}

/// The agreement URL's 402: PAYMENT-REQUIRED = base64 of the vectors' `required`, as JSON.stringify writes it.
pub fn payment_required(key: &str) -> Answer {
    let text = to_js_string(&agreement(key)).unwrap();
    Answer::new(402).header("PAYMENT-REQUIRED", &b64(text.as_bytes()))
}

pub fn receipt_answer(key: &str) -> Answer {
    Answer::new(200).body(to_js_string(&agreement(key)).unwrap().into_bytes())
}

/// Waits until `cond` holds, for at most `secs` seconds.
pub async fn until(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < end {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

/// The document D with its link (and nothing else) replaced.
pub fn doc_with_link(link: &str) -> Value {
    let mut d = doc();
    d["extensions"]["legalContext"]["info"]["legalContextUrl"] = json!(link);
    d
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
