//! `atr_pay`, the paid fetch, against the client's stand-in seller on a real loopback socket
//! (`examples/support/seller.rs`, which checks the EIP-3009 signature and that its nonce is H) and the scripted
//! loopback seller of `common.rs`: a 402 paid end to end through the tool, the host's policy refusing before the
//! signer, the journal's record, the same call made twice paying once, and the bad input (a URL that is not https or
//! names an address that is not public, on the public-only transport as well as the test's; a body over 1 MiB; an
//! answer over 1 MiB, returned cut). The binary itself: offered only with a signer, public-only.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::BoxFuture;
use terms::client::{Incoming, Outgoing, ReqwestTransport, Transport, TransportError};
use terms::http::{Lookup, LoopbackFetch};
use terms::mcp::{BuyerOptions, MAX_PAY_BODY, PublicTransport, buyer_server};
use terms::safety::journal::SqliteJournal;
use terms::safety::policy::Policy;

use crate::common::{self, Answer, Loopback, call, connect, declined, ok, run, spawn};
use crate::seller::{self, Seller};
use crate::support::CountingSigner;

const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("pay: a 402 paid end to end: the answer, the receipt, the states, the journal's record", || {
            Ok(run(paid_end_to_end()))
        }),
        Trial::test("pay: the host's policy refuses before the signer, nothing is sent with a payment", || {
            Ok(run(policy_refuses()))
        }),
        Trial::test("pay: a URL that is not https or not public is refused before any connection", || {
            Ok(run(urls_refused()))
        }),
        Trial::test("pay: a request body over 1 MiB is declined unsent; an answer over 1 MiB is returned cut", || {
            Ok(run(bodies_capped()))
        }),
        Trial::test("pay: terms-mcp offers atr_pay only with a signer, and sends only to public addresses", || {
            Ok(run(binary_offers_and_refuses()))
        }),
    ]
}

/// The client's transport for tests: `https://<host>/<path>` to a loopback seller over plain HTTP, through the
/// crate's own hardened client; `/<host>` kept in front of the path where `prefix` (the scripted seller's routes).
#[derive(Debug)]
struct ToSeller {
    inner: ReqwestTransport,
    addr: SocketAddr,
    prefix: bool,
}

impl ToSeller {
    fn new(addr: SocketAddr, prefix: bool) -> Arc<Self> {
        Arc::new(Self { inner: ReqwestTransport::new().unwrap(), addr, prefix })
    }
}

impl Transport for ToSeller {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        Box::pin(async move {
            let Some(rest) = request.url.strip_prefix("https://") else {
                return Err(TransportError(format!("no loopback route for {}", request.url)));
            };
            let path =
                if self.prefix { format!("/{rest}") } else { rest[rest.find('/').unwrap_or(rest.len())..].to_owned() };
            let mut routed = request.clone();
            routed.url = format!("http://{}{path}", self.addr);
            self.inner.send(&routed).await
        })
    }
}

/// A lookup that resolves every name to one address.
struct To(IpAddr);

impl Lookup for To {
    fn lookup<'a>(&'a self, _host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move { Ok(vec![self.0]) })
    }
}

/// The payer's wallet on the seller's network (Anvil's key #0), counting what it signs.
fn wallet() -> CountingSigner {
    CountingSigner::new(seller::KEY, &format!("{}:{PAYER}", seller::NETWORK))
}

fn policy(cap: &str) -> Policy {
    let text = format!(
        "resources = [\"*\"]\nnetworks = [{net:?}]\n\n[[assets]]\nnetwork = {net:?}\naddress = {usdc:?}\n\
         symbol = \"USDC\"\ndecimals = 6\ncap = {cap:?}\n\n[[budgets]]\nname = \"day\"\nasset = \"{net}/{usdc}\"\n\
         window = \"day\"\nlimit = \"1000000\"\n",
        net = seller::NETWORK,
        usdc = seller::USDC,
    );
    Policy::from_toml_str(&text).unwrap()
}

/// The server over the stand-in seller: its terms fetched through `LoopbackFetch`, the paid URL sent on `transport`.
fn options(seller: &Seller, wallet: &CountingSigner, transport: Arc<dyn Transport>) -> BuyerOptions {
    let fetch = LoopbackFetch::new().unwrap().route(seller::HOST, seller.addr).unwrap();
    BuyerOptions::new(Arc::new(fetch)).signer(Arc::new(wallet.clone())).pay_transport(transport)
}

fn url(path: &str) -> String {
    format!("https://{}{path}", seller::HOST)
}

async fn paid_end_to_end() {
    let seller = Seller::start().await;
    let signer = wallet();
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap());
    let server = buyer_server(
        options(&seller, &signer, ToSeller::new(seller.addr, false))
            .policy(Arc::new(policy("20000")))
            .journal(journal.clone()),
    );
    let client = connect(server).await;
    let r = ok(&call(&client, "atr_pay", json!({"url": url("/report")})).await);
    assert_eq!(r["outcome"], "answered", "{r}");
    assert_eq!(r["response"]["status"], 200);
    let text = format!("the report for {PAYER}");
    assert_eq!(
        r["response"]["body"],
        json!({"encoding": "utf8", "text": text, "size": text.len(), "truncated": false})
    );
    let headers = r["response"]["headers"].as_array().unwrap();
    assert!(headers.iter().any(|h| h[0].as_str().unwrap().eq_ignore_ascii_case("payment-response")), "{r}");
    assert_eq!(r["receipt"]["kind"], "x402");
    assert_eq!(
        (r["receipt"]["success"].as_bool(), r["receipt"]["payer"].as_str(), r["receipt"]["transaction"].as_str()),
        (Some(true), Some(PAYER), Some("0x5e771e"))
    );
    assert_eq!(r["receipt"]["amount"], seller::AMOUNT);
    assert_eq!(
        r["states"],
        json!({"payment": "settled", "execution": "completed", "response": "received", "retry": "forbidden"})
    );
    assert_eq!(r["recovery"], Value::Null, "a success has nothing left to do");
    let paid = &r["paid"];
    assert_eq!((paid["pairing"].as_str(), paid["sends"].as_u64()), (Some("x402/exact/eip155/eip3009"), Some(1)));
    assert_eq!(paid["h"], seller::h());
    // One signature, one fetch of the terms, one paid request carrying the purchase's key.
    assert_eq!(signer.count(), 1);
    assert_eq!(seller.hits(&format!("/atr/{}", seller::h())), 1);
    assert_eq!(seller.paid("/report"), 1);
    let key = paid["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("p1:"), "a derived key: {key}");
    assert_eq!(seller.seen.lock().unwrap().keys, vec![key.clone()]);
    // The journal's record, read back through the tool.
    let record = ok(&call(&client, "atr_record", json!({"key": key})).await);
    assert_eq!(record["record"]["payment_state"], "settled", "{record}");
    assert_eq!(record["record"]["purchase"], json!({"method": "GET", "url": url("/report")}));
    assert_eq!(record["record"]["pairing"], "x402/exact/eip155/eip3009");
    // The same call again is the same purchase: nothing is signed twice.
    let again = call(&client, "atr_pay", json!({"url": url("/report")})).await;
    let again = ok(&again);
    assert_eq!(signer.count(), 1, "a retried call signs nothing new: {again}");
    assert_eq!((again["paid"]["key"].as_str(), again["paid"]["resent"].as_bool()), (Some(key.as_str()), Some(true)));
    let payments = seller.payments();
    assert_eq!((payments.len(), &payments[0]), (2, &payments[1]), "the journal's payment, re-sent byte for byte");
    assert_eq!(again["response"]["body"], r["response"]["body"], "the seller's answer to that payment");
    assert_eq!(seller.seen.lock().unwrap().nonces.len(), 1, "one payment settled");
    // A request the seller does not charge for is answered unpaid, with a body that is not UTF-8 sent as base64.
    let free =
        ok(&call(&client, "atr_pay", json!({"url": url("/free"), "method": "POST", "bodyBase64": "/wA="})).await);
    assert_eq!((free["response"]["status"].as_u64(), free["paid"].is_null()), (Some(200), true), "{free}");
    assert_eq!(free["states"]["payment"], "not-paid");
    assert_eq!(signer.count(), 1);
}

async fn policy_refuses() {
    let seller = Seller::start().await;
    let signer = wallet();
    let below = (seller::AMOUNT.parse::<u64>().unwrap() - 1).to_string();
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap());
    let server = buyer_server(
        options(&seller, &signer, ToSeller::new(seller.addr, false)).policy(Arc::new(policy(&below))).journal(journal),
    );
    let client = connect(server).await;
    let (code, v) = declined(&call(&client, "atr_pay", json!({"url": url("/report")})).await);
    assert_eq!(
        (code.as_str(), v["outcome"].as_str(), v["status"].as_u64()),
        ("policy-refused", Some("refused"), Some(402))
    );
    // The reason and its cause: which rule, and the amounts it compared.
    assert_eq!(v["decline"]["detail"], "policy/amount-above-cap", "{v}");
    let cause = v["decline"]["cause"].as_str().unwrap_or_else(|| panic!("no cause: {v}"));
    assert!(cause.contains(seller::AMOUNT) && cause.contains(&below), "{cause}");
    assert_eq!(v["recovery"]["action"].as_str().map(|a| !a.is_empty()), Some(true), "{v}");
    assert_eq!(signer.count(), 0, "a refused payment never reaches the signer");
    assert_eq!(seller.paid("/report"), 0);
    assert_eq!(seller.hits(&format!("/atr/{}", seller::h())), 0, "the terms are not fetched");
    // A journal the host named and that could not be opened: declined before anything is sent.
    let unavailable =
        options(&seller, &signer, ToSeller::new(seller.addr, false)).journal_unavailable("no such folder");
    let client = connect(buyer_server(unavailable)).await;
    let (code, v) = declined(&call(&client, "atr_pay", json!({"url": url("/report")})).await);
    assert_eq!((code.as_str(), v["decline"]["detail"].as_str()), ("journal-failed", Some("journal/unavailable")));
    assert_eq!(seller.hits("/report"), 1, "only the first call's unpaid request reached the seller");
    assert_eq!(signer.count(), 0);
}

async fn urls_refused() {
    let seller = Seller::start().await;
    let signer = wallet();
    let port = seller.addr.port();
    // The test's transport would reach the seller on any of these; the rule refuses them before it is asked.
    let client = connect(buyer_server(options(&seller, &signer, ToSeller::new(seller.addr, false)))).await;
    for bad in [
        format!("http://{}/report", seller::HOST),
        format!("http://127.0.0.1:{port}/report"),
        format!("https://127.0.0.1:{port}/report"),
        "https://10.0.0.1/report".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://[::1]/report".to_owned(),
        "https://[::ffff:127.0.0.1]/report".to_owned(),
        "ftp://seller.test/report".to_owned(),
        "not a url".to_owned(),
    ] {
        let (code, v) = declined(&call(&client, "atr_pay", json!({"url": bad})).await);
        assert_eq!(code, "url-refused", "{bad}: {v}");
    }
    assert!(seller.seen.lock().unwrap().requests.is_empty(), "nothing reached the seller");
    // The public-only transport: a name that resolves to loopback is refused when it connects.
    let public = PublicTransport::with_lookup(Arc::new(To("127.0.0.1".parse().unwrap()))).unwrap();
    let client = connect(buyer_server(options(&seller, &signer, Arc::new(public)))).await;
    let (code, v) = declined(&call(&client, "atr_pay", json!({"url": url("/report")})).await);
    assert_eq!(code, "url-refused", "{v}");
    assert!(v["decline"]["cause"].as_str().unwrap().contains("ENOTPUBLIC"), "{v}");
    assert!(seller.seen.lock().unwrap().requests.is_empty(), "no connection was made");
    // A seller that is not there: the unpaid request gets no answer, request-failed, nothing paid.
    let gone = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = gone.local_addr().unwrap();
    drop(gone);
    let client = connect(buyer_server(options(&seller, &signer, ToSeller::new(addr, false)))).await;
    let (code, v) = declined(&call(&client, "atr_pay", json!({"url": url("/report")})).await);
    assert_eq!((code.as_str(), v["outcome"].as_str()), ("request-failed", Some("refused")), "{v}");
    assert_eq!(signer.count(), 0);
}

async fn bodies_capped() {
    let seller = Loopback::start("127.0.0.1:0").await.unwrap();
    let big = vec![b'a'; MAX_PAY_BODY + 10];
    let mut binary = vec![0xffu8; MAX_PAY_BODY + 1];
    binary[0] = 0;
    seller.route("/seller.test/big", vec![Answer::new(200).body(big)]);
    seller.route("/seller.test/binary", vec![Answer::new(200).body(binary)]);
    seller.route("/seller.test/echo", vec![Answer::new(201).body(b"made".to_vec())]);
    let signer = wallet();
    let options = BuyerOptions::new(Arc::new(common::ToLoopback::new(&seller)))
        .signer(Arc::new(signer.clone()))
        .pay_transport(ToSeller::new(seller.addr, true));
    let client = connect(buyer_server(options)).await;
    // Over the cap, as text or as base64: declined, nothing sent.
    let over = "x".repeat(MAX_PAY_BODY + 1);
    let (code, v) = declined(
        &call(&client, "atr_pay", json!({"url": "https://seller.test/echo", "method": "POST", "body": over})).await,
    );
    assert_eq!(code, "body-too-large", "{v}");
    let over = common::b64(&vec![7u8; MAX_PAY_BODY + 1]);
    let (code, _) = declined(
        &call(&client, "atr_pay", json!({"url": "https://seller.test/echo", "method": "PUT", "bodyBase64": over}))
            .await,
    );
    assert_eq!(code, "body-too-large");
    assert_eq!(seller.connections(), 0, "nothing was sent");
    // At the cap it is sent.
    let at = "x".repeat(MAX_PAY_BODY);
    let args = json!({"url": "https://seller.test/echo", "method": "POST", "body": at, "headers": {"X-Test": "1"}});
    let r = ok(&call(&client, "atr_pay", args).await);
    assert_eq!((r["response"]["status"].as_u64(), r["response"]["body"]["text"].as_str()), (Some(201), Some("made")));
    // An answer over the cap: the first 1 MiB, and its whole size.
    let r = ok(&call(&client, "atr_pay", json!({"url": "https://seller.test/big"})).await);
    let body = &r["response"]["body"];
    assert_eq!((body["encoding"].as_str(), body["truncated"].as_bool()), (Some("utf8"), Some(true)));
    assert_eq!(
        (body["text"].as_str().unwrap().len(), body["size"].as_u64()),
        (MAX_PAY_BODY, Some((MAX_PAY_BODY + 10) as u64))
    );
    let r = ok(&call(&client, "atr_pay", json!({"url": "https://seller.test/binary"})).await);
    let body = &r["response"]["body"];
    assert_eq!((body["encoding"].as_str(), body["truncated"].as_bool()), (Some("base64"), Some(true)));
    let decoded =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body["text"].as_str().unwrap()).unwrap();
    assert_eq!((decoded.len(), decoded[0], decoded[1]), (MAX_PAY_BODY, 0, 0xff));
    // Bad arguments are schema failures: a method outside the list, a header value that is not a string or not a
    // header value, both bodies.
    for (args, argument) in [
        (json!({"url": "https://seller.test/echo", "method": "BREW"}), "method"),
        (json!({"url": "https://seller.test/echo", "headers": {"X-Test": 1}}), "headers.X-Test"),
        (json!({"url": "https://seller.test/echo", "headers": {"X-Test": "a\r\nb"}}), "headers.X-Test"),
        (json!({"url": "https://seller.test/echo", "headers": {"bad name": "a"}}), "headers.bad name"),
        (json!({"url": "https://seller.test/echo", "body": "a", "bodyBase64": "YQ=="}), ""),
        (json!({}), "url"),
    ] {
        let v = common::invalid(&call(&client, "atr_pay", args.clone()).await);
        assert_eq!(v["argument"], argument, "{args}: {v}");
    }
    assert_eq!(signer.count(), 0);
}

async fn binary_offers_and_refuses() {
    // In process: listed with a signer, not without; not found without one.
    let bare = buyer_server(BuyerOptions::new(Arc::new(LoopbackFetch::new().unwrap())));
    assert!(!bare.tools().iter().any(|t| t.name == "atr_pay"));
    let bare = connect(bare).await;
    let err = bare
        .call_tool(
            rmcp::model::CallToolRequestParams::new("atr_pay")
                .with_arguments(common::obj(json!({"url": "https://a.test/"}))),
        )
        .await;
    assert!(err.is_err(), "not offered, so not found: {err:?}");
    // The binary with a key: atr_pay is listed, not read-only, open-world, and its URL is held to the public rule.
    let dir = tempfile::tempdir().unwrap();
    let config = format!("key_env = \"TERMS_MCP_PAY_KEY\"\nnetwork = {:?}\n", seller::NETWORK);
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let mut cmd = common::binary();
    cmd.arg("--config").arg(dir.path().join("config.toml")).env("TERMS_MCP_PAY_KEY", seller::KEY);
    let client = spawn(cmd).await;
    let tools = client.list_all_tools().await.unwrap();
    let pay = tools.iter().find(|t| t.name == "atr_pay").expect("atr_pay with a signer");
    let a = serde_json::to_value(&pay.annotations).unwrap();
    assert_eq!((a["readOnlyHint"].as_bool(), a["openWorldHint"].as_bool()), (Some(false), Some(true)), "{a}");
    assert_eq!(pay.input_schema["required"], json!(["url"]));
    assert_eq!(pay.input_schema["properties"]["method"]["enum"][0], "GET");
    // A loopback listener that counts connections: none arrive.
    let listener = Loopback::start("127.0.0.1:0").await.unwrap();
    let port = listener.addr.port();
    for bad in [
        format!("http://127.0.0.1:{port}/x"),
        format!("https://127.0.0.1:{port}/x"),
        format!("https://localhost:{port}/x"),
        "https://192.168.0.1/x".to_owned(),
    ] {
        let (code, v) = declined(&call(&client, "atr_pay", json!({"url": bad})).await);
        assert_eq!(code, "url-refused", "{bad}: {v}");
    }
    assert_eq!(listener.connections(), 0);
    client.cancel().await.unwrap();
    // Without the key: no signer, no atr_pay.
    let mut cmd = common::binary();
    cmd.arg("--config").arg(dir.path().join("config.toml")).env_remove("TERMS_MCP_PAY_KEY");
    let client = spawn(cmd).await;
    assert!(!client.list_all_tools().await.unwrap().iter().any(|t| t.name == "atr_pay"));
    client.cancel().await.unwrap();
}
