//! `terms gateway` as a process on a real loopback socket, paid through by unmodified clients (`curl` and Python's
//! `urllib`) against the stand-in seller routed with `--local-seller`: it pays under the policy, journal and
//! purchase keys of `terms pay`, queues a payment above the threshold for a person, and refuses (sending nothing)
//! a missing or wrong token, an http seller, a loopback or private seller, a body over the cap, a browser's request
//! and a `Host` that is not this machine.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{CONFIG, Run, json, said, seller};

/// A token long enough for the gateway.
const TOKEN: &str = "operator-token-0123456789";

/// A running `terms gateway`, stopped when dropped.
struct Gateway {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
    log: Arc<Mutex<String>>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Gateway {
    /// The gateway's URL for a seller's URL.
    fn url(&self, seller_url: &str) -> String {
        format!("http://{}/{seller_url}", self.addr)
    }
}

/// The run's policy, its resources the routed host's (the gateway names the seller `https://seller.test/…`), with
/// an approval threshold below the stand-in's price where `approval` is set.
fn gateway_policy(run: &Run, approval: bool) {
    let path = run.dir.path().join("policy.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut text = text.replace(&format!("http://{}/", run.seller.addr), &format!("https://{}/", seller::HOST));
    if approval {
        text = format!("approval_above = {{ \"{}/{}\" = \"5000\" }}\n{text}", seller::NETWORK, seller::USDC);
    }
    std::fs::write(&path, text).unwrap();
}

/// Starts `terms gateway --listen 127.0.0.1:0` with `args` (and `--local-seller` where `local`), and waits for the
/// address it prints.
async fn start(run: &Run, args: &[&str], local: bool) -> Gateway {
    start_with(run, args, local, &[]).await
}

/// [`start`] with more environment variables.
async fn start_with(run: &Run, args: &[&str], local: bool, env: &[(&str, &str)]) -> Gateway {
    let mut command = Command::new(env!("CARGO_BIN_EXE_terms"));
    command.envs(env.iter().copied());
    command
        .arg("--config")
        .arg(run.dir.path().join("config.toml"))
        .args(["gateway", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("TERMS_KEY", seller::KEY)
        .env_remove("TERMS_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if local {
        command.arg("--local-seller").arg(run.local());
    }
    tokio::task::spawn_blocking(move || {
        let mut child = command.spawn().unwrap();
        let mut reader = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let addr = loop {
            let mut line = String::new();
            assert_ne!(reader.read_line(&mut line).unwrap(), 0, "the gateway stopped: {seen}");
            seen.push_str(&line);
            if let Some(rest) = line.split("listening on http://").nth(1) {
                break rest.split('/').next().unwrap().to_owned();
            }
        };
        let log = Arc::new(Mutex::new(seen));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                kept.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Gateway { child, addr, log }
    })
    .await
    .unwrap()
}

/// What an HTTP client got: the status, the headers (names in lower case) and the body.
#[derive(Debug)]
struct Got {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// `curl -sS -i ARGS`: the final answer (a `100 Continue` skipped).
async fn curl(args: Vec<String>) -> Got {
    let out = run_blocking(Command::new("curl").args(["-sS", "-i", "--max-time", "60"]).args(args)).await;
    assert_eq!(out.status.code(), Some(0), "curl: {}", said(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut rest = text.as_str();
    loop {
        let (head, body) = rest.split_once("\r\n\r\n").unwrap_or((rest, ""));
        let mut lines = head.lines();
        let status: u16 = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        if status == 100 {
            rest = body;
            continue;
        }
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        return Got { status, headers, body: body.to_owned() };
    }
}

async fn run_blocking(command: &mut Command) -> Output {
    let mut command = std::mem::replace(command, Command::new("true"));
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// Python's `urllib.request`, unmodified: a request with `method`, `body` and a header, printing the status, the
/// `Terms-*` headers and the body as JSON (an `HTTPError` is an answer too).
async fn urllib(url: &str, method: &str, body: &str) -> Value {
    const SCRIPT: &str = r#"
import json, sys, urllib.request, urllib.error
url, method, body = sys.argv[1], sys.argv[2], sys.argv[3].encode()
req = urllib.request.Request(url, data=body or None, method=method, headers={"Content-Type": "application/json"})
try:
    r = urllib.request.urlopen(req, timeout=60)
except urllib.error.HTTPError as e:
    r = e
print(json.dumps({"status": r.status, "headers": {k.lower(): v for k, v in r.headers.items()}, "body": r.read().decode()}))
"#;
    let out = run_blocking(Command::new("python3").args(["-c", SCRIPT, url, method, body])).await;
    assert_eq!(out.status.code(), Some(0), "python3: {}", said(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", said(&out)))
}

fn report() -> String {
    format!("https://{}/report", seller::HOST)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_and_urllib_pay_through_the_gateway_once_per_purchase() {
    let run = Run::new(CONFIG).await;
    gateway_policy(&run, false);
    let gateway = start(&run, &[], true).await;

    let hop = ["-H".into(), "Connection: x-hop".into(), "-H".into(), "X-Hop: never forwarded".into()];
    let mut args = vec![gateway.url(&report()), "-H".into(), "X-Agent-Note: forwarded".into()];
    args.extend(hop);
    let paid = curl(args).await;
    assert_eq!(paid.status, 200, "{paid:?}");
    assert!(paid.body.starts_with("the report for 0x"), "{paid:?}");
    assert_eq!(paid.header("terms-outcome"), Some("answered"));
    assert_eq!(paid.header("terms-pairing"), Some("x402/exact/eip155/eip3009"));
    assert_eq!(paid.header("terms-atr-hash"), Some(seller::h().as_str()));
    assert_eq!(paid.header("terms-resent"), Some("false"));
    assert!(paid.header("payment-response").is_some(), "the seller's settlement is passed on: {paid:?}");
    assert_eq!(run.seller.paid("/report"), 1);
    {
        let seen = run.seller.seen.lock().unwrap();
        let last = seen.headers.last().unwrap();
        assert!(last.iter().any(|(n, v)| n == "x-agent-note" && v == "forwarded"), "{last:?}");
        assert!(last.iter().any(|(n, _)| n == "payment-signature"), "{last:?}");
        // A header the caller's `Connection` names is hop-by-hop: not forwarded, on either send.
        assert!(!seen.headers.iter().flatten().any(|(n, _)| n == "x-hop"), "{:?}", seen.headers);
    }
    // The purchase is the journal's, as `terms pay` records it.
    let key = paid.header("terms-purchase").unwrap().to_owned();
    let receipt = run.terms(&["receipt", &key, "--json"]).await;
    assert_eq!(receipt.status.code(), Some(0), "{}", said(&receipt));

    // The same request again (from another client): the same purchase, the same payment re-sent, no new one.
    let again = urllib(&gateway.url(&report()), "GET", "").await;
    assert_eq!(again["status"], 200, "{again}");
    assert_eq!(again["headers"]["terms-resent"], "true", "{again}");
    assert_eq!(again["headers"]["terms-purchase"], key.as_str());
    let payments = run.seller.payments();
    assert_eq!(payments.len(), 2);
    assert_eq!(payments[0], payments[1], "the same bytes re-sent");
    assert_eq!(run.seller.seen.lock().unwrap().nonces.len(), 1, "one payment settled");

    // Another purchase from the same payer of a seller serving one static ATR: refused before signing, as `terms
    // pay` refuses it (its nonce is H, already used).
    let second = urllib(&gateway.url(&format!("https://{}/job", seller::HOST)), "POST", r#"{"q":1}"#).await;
    assert_eq!(second["status"], 402, "{second}");
    assert_eq!(second["headers"]["terms-decline"], "journal-failed", "{second}");
    assert_eq!(run.seller.paid("/job"), 0);
    let log = gateway.log.lock().unwrap().clone();
    assert!(log.contains("GET /https://seller.test/report -> 200 answered"), "{log}");
}

/// urllib's POST with a body, through a gateway on its own journal: paid once, the job's id passed on, the body
/// forwarded as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urllib_posts_a_body_and_pays() {
    let run = Run::new(CONFIG).await;
    gateway_policy(&run, false);
    let gateway = start(&run, &[], true).await;
    let job = urllib(&gateway.url(&format!("https://{}/job?q=1", seller::HOST)), "POST", r#"{"q":1}"#).await;
    assert_eq!(job["status"], 202, "{job}");
    assert_eq!(job["body"], r#"{"jobId":"job-1"}"#);
    assert_eq!(job["headers"]["terms-outcome"], "answered", "{job}");
    assert_eq!(job["headers"]["terms-job"], "job-1", "{job}");
    assert_eq!(run.seller.paid("/job"), 1);
    let seen = run.seller.seen.lock().unwrap();
    assert_eq!(seen.requests.iter().filter(|(m, p, _)| m == "POST" && p == "/job").count(), 2, "{:?}", seen.requests);
    let last = seen.headers.last().unwrap();
    assert!(last.iter().any(|(n, v)| n == "content-type" && v == "application/json"), "{last:?}");
    assert!(last.iter().any(|(n, v)| n == "content-length" && v == "7"), "{last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_above_the_threshold_waits_for_a_person_then_pays_once() {
    let run = Run::new(CONFIG).await;
    gateway_policy(&run, true);
    let gateway = start(&run, &[], true).await;
    let waiting = curl(vec![gateway.url(&report())]).await;
    assert_eq!(waiting.status, 402, "{waiting:?}");
    assert_eq!(waiting.header("terms-outcome"), Some("pending-approval"));
    let id = waiting.header("terms-approval").unwrap().to_owned();
    let body = waiting.json();
    assert_eq!(body["approval"]["id"], id.as_str());
    assert_eq!(body["approval"]["h"], seller::h());
    assert!(body["approval"].get("bytes").is_none(), "{body}");
    assert!(body["next"].as_str().unwrap().contains("terms approve"), "{body}");
    assert!(body["approval"]["agent"].as_str().unwrap().starts_with("terms gateway (curl/"), "{body}");
    assert_eq!(run.seller.paid("/report"), 0, "nothing signed");

    let approved = run.terms(&["approve", &id, "--json"]).await;
    assert_eq!(approved.status.code(), Some(0), "{}", said(&approved));
    assert_eq!(json(&approved)["state"], "approved");
    let paid = curl(vec![gateway.url(&report())]).await;
    assert_eq!(paid.status, 200, "{paid:?}");
    assert_eq!(paid.header("terms-resent"), Some("false"));
    let again = curl(vec![gateway.url(&report())]).await;
    assert_eq!((again.status, again.header("terms-resent")), (200, Some("true")), "{again:?}");
    assert_eq!(run.seller.seen.lock().unwrap().nonces.len(), 1, "paid once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_and_nothing_is_sent() {
    let run = Run::new(CONFIG).await;
    gateway_policy(&run, false);
    let gateway = start(&run, &["--token", TOKEN], true).await;
    let with_token = |url: String| vec![url, "-H".to_owned(), format!("Terms-Gateway-Token: {TOKEN}")];
    let port = run.seller.addr.port();
    let refused = |got: &Got, status: u16, code: &str| {
        assert_eq!(got.status, status, "{got:?}");
        assert_eq!(got.header("terms-error"), Some(code), "{got:?}");
        assert_eq!(got.json()["error"]["code"], code);
    };

    refused(&curl(vec![gateway.url(&report())]).await, 401, "gateway/token-missing");
    let wrong = vec![gateway.url(&report()), "-H".into(), "Terms-Gateway-Token: operator-token-0123456780".into()];
    refused(&curl(wrong).await, 401, "gateway/token-wrong");
    let short = vec![gateway.url(&report()), "-H".into(), "Terms-Gateway-Token: x".into()];
    refused(&curl(short).await, 401, "gateway/token-wrong");
    let http = format!("http://{}/report", seller::HOST);
    refused(&curl(with_token(gateway.url(&http))).await, 400, "gateway/not-https");
    refused(&curl(with_token(gateway.url("report"))).await, 400, "gateway/not-a-url");
    // Loopback and private sellers, by address and by name: the flag routes its host name, never an address.
    for private in [
        format!("https://127.0.0.1:{port}/report"),
        "https://10.0.0.1/report".into(),
        "https://192.168.1.2/report".into(),
        "https://169.254.169.254/latest/meta-data".into(),
        "https://[::1]/report".into(),
    ] {
        refused(&curl(with_token(gateway.url(&private))).await, 403, "gateway/not-public");
    }
    refused(
        &curl(with_token(gateway.url(&format!("https://localhost:{port}/report")))).await,
        403,
        "gateway/not-public",
    );

    // A body over 1 MiB, with its length and chunked.
    let big = run.dir.path().join("big.bin");
    std::fs::write(&big, vec![b'a'; 1024 * 1024 + 1]).unwrap();
    let data = format!("@{}", big.display());
    let mut post = with_token(gateway.url(&report()));
    post.extend(["--data-binary".into(), data]);
    refused(&curl(post.clone()).await, 413, "gateway/body-too-large");
    post.extend(["-H".into(), "Transfer-Encoding: chunked".into()]);
    refused(&curl(post).await, 413, "gateway/body-too-large");

    // A web page's request, and a Host that is not this machine (DNS rebinding).
    let mut page = with_token(gateway.url(&report()));
    page.extend(["-H".into(), "Origin: https://evil.example".into()]);
    refused(&curl(page).await, 403, "gateway/browser-refused");
    let mut site = with_token(gateway.url(&report()));
    site.extend(["-H".into(), "Sec-Fetch-Site: cross-site".into()]);
    refused(&curl(site).await, 403, "gateway/browser-refused");
    let mut rebound = with_token(gateway.url(&report()));
    rebound.extend(["-H".into(), "Host: evil.example".into()]);
    refused(&curl(rebound).await, 403, "gateway/not-local");
    assert!(run.seller.seen.lock().unwrap().requests.is_empty(), "nothing reached the seller");

    // The right token pays, and the token is never forwarded.
    let paid = curl(with_token(gateway.url(&report()))).await;
    assert_eq!(paid.status, 200, "{paid:?}");
    let seen = run.seller.seen.lock().unwrap();
    assert!(!seen.headers.iter().flatten().any(|(n, _)| n == "terms-gateway-token"), "{:?}", seen.headers);
}

/// Without `--local-seller` the stand-in on loopback is out of reach by any name; a listen address that is not
/// loopback and a short token are refused at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_loopback_seller_without_the_flag_and_no_remote_listener() {
    let run = Run::new(CONFIG).await;
    let gateway = start(&run, &[], false).await;
    let port = run.seller.addr.port();
    for url in [format!("https://127.0.0.1:{port}/report"), format!("https://localhost:{port}/report")] {
        let got = curl(vec![gateway.url(&url)]).await;
        assert_eq!((got.status, got.header("terms-error")), (403, Some("gateway/not-public")), "{got:?}");
    }
    assert!(run.seller.seen.lock().unwrap().requests.is_empty());
    drop(gateway);

    for (args, says) in [
        (vec!["--listen", "0.0.0.0:0"], "not a loopback address"),
        (vec!["--listen", "192.168.1.2:8402"], "not a loopback address"),
        (vec!["--token", "short"], "at least 16"),
    ] {
        let mut all = vec!["gateway"];
        all.extend(args);
        let out = run.terms(&all).await;
        assert_eq!(out.status.code(), Some(2), "{}", said(&out));
        assert!(said(&out).contains(says), "{}", said(&out));
    }
}

/// A paid request whose answer is lost is re-sent with the same payment (`Terms-Sends: 2`); a seller down for longer
/// than the client waits is passed on with `Terms-Recovery: resend-same-payment`, and the same request again
/// re-sends that payment, never a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_or_unavailable_answer_is_re_sent_never_paid_again() {
    let run = Run::new(CONFIG).await;
    gateway_policy(&run, false);
    let gateway = start(&run, &[], true).await;
    let dropped = curl(vec![gateway.url(&format!("https://{}/drop", seller::HOST))]).await;
    assert_eq!((dropped.status, dropped.header("terms-sends")), (200, Some("2")), "{dropped:?}");
    assert_eq!(run.seller.seen.lock().unwrap().nonces.len(), 1);

    let run = Run::new(CONFIG).await;
    gateway_policy(&run, false);
    let gateway = start(&run, &[], true).await;
    let down = format!("https://{}/down", seller::HOST);
    let busy = curl(vec![gateway.url(&down)]).await;
    assert_eq!((busy.status, busy.header("terms-outcome")), (503, Some("answered")), "{busy:?}");
    assert_eq!(busy.header("terms-recovery"), Some("resend-same-payment (charged: unknown)"), "{busy:?}");
    assert_eq!(busy.body, "down for an hour");
    let again = curl(vec![gateway.url(&down)]).await;
    assert_eq!((again.status, again.header("terms-resent")), (503, Some("true")), "{again:?}");
    let payments = run.seller.payments();
    assert!(payments.len() >= 2 && payments.iter().all(|p| *p == payments[0]), "one payment, re-sent: {payments:?}");
}

/// The token from the configuration: `gateway_token_env` names the variable holding it; a variable not set stops
/// the gateway at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_from_the_configuration() {
    let run = Run::new(&format!("{CONFIG}gateway_token_env = \"GATEWAY_TOKEN\"\n")).await;
    gateway_policy(&run, false);
    let unset = run.terms(&["gateway", "--listen", "127.0.0.1:0"]).await;
    assert_eq!(unset.status.code(), Some(2), "{}", said(&unset));
    assert!(said(&unset).contains("GATEWAY_TOKEN, which is not set"), "{}", said(&unset));
    let gateway = start_with(&run, &[], true, &[("GATEWAY_TOKEN", TOKEN)]).await;
    let missing = curl(vec![gateway.url(&report())]).await;
    assert_eq!((missing.status, missing.header("terms-error")), (401, Some("gateway/token-missing")));
    let paid = curl(vec![gateway.url(&report()), "-H".into(), format!("Terms-Gateway-Token: {TOKEN}")]).await;
    assert_eq!(paid.status, 200, "{paid:?}");
    assert_eq!(run.seller.paid("/report"), 1);
}
