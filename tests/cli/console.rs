//! `terms console` as a process, over real sockets: a request without the token or with a wrong one, a rebound
//! `Host`, a request from another site, a form without its CSRF token or from another origin, an oversized form;
//! none of them reads or decides anything. The printed link logs in with an `HttpOnly`, `SameSite=Strict` cookie,
//! every answer carries the CSP and forbids framing, and a console serves its pages while another process writes
//! the journal (no lock held across a page).

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use terms::safety::Purchase;
use terms::safety::journal::{JournalConfig, JournalTarget};
use terms::{BoxFuture, Fetch, FetchError, Options, Request, Response, TransactOutcome, atr_hash, transact};

use super::approvals::{queued, run_above_threshold};
use super::{CONFIG, Run, json as json_of, seller};

/// The console's content security policy, as the issue asks for it.
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// A running `terms console` (stopped when dropped).
pub(super) struct Console {
    child: Child,
    /// The link it printed, with the token.
    pub(super) link: String,
    /// `http://127.0.0.1:PORT`.
    pub(super) origin: String,
    /// The token.
    pub(super) token: String,
}

impl Console {
    /// `terms console --port 0` on the run's configuration; its printed link.
    pub(super) async fn start(run: &Run) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_terms"))
            .arg("--config")
            .arg(run.dir.path().join("config.toml"))
            .args(["console", "--port", "0"])
            .env("TERMS_KEY", seller::KEY)
            .env_remove("TERMS_CONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let line = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::task::spawn_blocking(move || {
                let mut line = String::new();
                std::io::BufReader::new(stdout).read_line(&mut line).unwrap();
                line
            }),
        )
        .await
        .expect("the console printed no link within 30 s")
        .unwrap();
        let link = line.trim().to_owned();
        let (origin, token) = link.split_once("/?token=").unwrap_or_else(|| panic!("not a link: {line:?}"));
        assert!(origin.starts_with("http://127.0.0.1:") && token.len() == 64, "{link}");
        Self { origin: origin.to_owned(), token: token.to_owned(), link, child }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    fn cookie(&self) -> String {
        let port = self.origin.rsplit(':').next().unwrap_or_default();
        format!("terms_console_{port}={}", self.token)
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that follows no redirect and keeps no cookie: every request says exactly what the test gives it.
fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A page's status and body.
async fn get(request: reqwest::RequestBuilder) -> (u16, String) {
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// The CSRF token a page wrote into its forms.
fn csrf_of(page: &str) -> String {
    page.split("name=\"csrf\" value=\"").nth(1).and_then(|s| s.split('"').next()).unwrap().to_owned()
}

/// The approvals the journal holds as pending, by `terms approvals --json`.
async fn pending_ids(run: &Run) -> Vec<String> {
    let listed = json_of(&run.terms(&["approvals", "--json"]).await);
    let ids = listed["pending"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap().to_owned());
    ids.collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_a_wrong_token_another_host_or_site_and_a_form_without_its_csrf_token_are_refused() {
    let run = run_above_threshold(CONFIG).await;
    let id = queued(&run, "/report").await;
    let console = Console::start(&run).await;
    let http = client();
    let home = console.url("/");

    // No token, a wrong one (in the link, the cookie, the header): 401, and nothing of the journal shown.
    let cookie = console.cookie();
    let wrong_cookie = cookie.replace(&console.token, &"0".repeat(64));
    for request in [
        http.get(&home),
        http.get(console.url("/?token=0123")),
        http.get(console.url(&format!("/?token={}x", console.token))),
        http.get(&home).header("cookie", &wrong_cookie),
        http.get(&home).header("authorization", "Bearer wrong"),
        http.get(console.url("/history")),
        http.get(console.url("/console.css")),
    ] {
        let (status, body) = get(request).await;
        assert_eq!(status, 401, "{body}");
        assert!(!body.contains(&id) && !body.contains("0x"), "{body}");
    }

    // The printed link: a 303 to the same page without the token, setting the cookie for this site only.
    let login = http.get(&console.link).send().await.unwrap();
    assert_eq!(login.status().as_u16(), 303);
    assert_eq!(login.headers()["location"], "/");
    let set = login.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert_eq!(set, format!("{cookie}; Path=/; HttpOnly; SameSite=Strict"));
    for response in [&login, &http.get(&home).send().await.unwrap()] {
        assert_eq!(response.headers()["content-security-policy"], CSP);
        assert_eq!(response.headers()["x-frame-options"], "DENY");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    }
    let (status, page) = get(http.get(&home).header("cookie", &cookie)).await;
    assert_eq!(status, 200);
    assert!(page.contains(&id) && page.contains("0.01 USDC (10000)") && page.contains(&seller::h()), "{page}");
    let (status, _) = get(http.get(&home).header("authorization", format!("Bearer {}", console.token))).await;
    assert_eq!(status, 200, "the token as a header");
    let csrf = csrf_of(&page);
    assert_eq!(csrf.len(), 64);
    assert_ne!(csrf, console.token);

    // With the token: another Host (a DNS-rebound name), a request from another site.
    let port = console.origin.rsplit(':').next().unwrap();
    for host in [format!("localhost:{port}"), format!("evil.example:{port}"), "127.0.0.1".to_owned()] {
        let (status, body) = get(http.get(&home).header("cookie", &cookie).header("host", &host)).await;
        assert_eq!(status, 421, "{host}: {body}");
        assert!(!body.contains(&id));
    }
    for site in ["cross-site", "same-site"] {
        let (status, body) = get(http.get(&home).header("cookie", &cookie).header("sec-fetch-site", site)).await;
        assert_eq!(status, 403, "{site}: {body}");
        assert!(!body.contains(&id));
    }

    // Forms that must decide nothing.
    let approve = console.url("/approve");
    let form = |fields: &[(&str, &str)]| {
        url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields.iter().copied()).finish()
    };
    let post = |body: String| {
        http.post(&approve)
            .header("cookie", &cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
    };
    let refused: Vec<(u16, reqwest::RequestBuilder)> = vec![
        (403, post(form(&[("id", &id)]))),
        (403, post(form(&[("id", &id), ("csrf", "")]))),
        (403, post(form(&[("id", &id), ("csrf", &console.token)]))),
        (403, post(form(&[("id", &id), ("csrf", &csrf[1..])]))),
        (403, post(form(&[("id", &id), ("csrf", &csrf)])).header("origin", "http://evil.example")),
        (403, post(form(&[("id", &id), ("csrf", &csrf)])).header("origin", "null")),
        (403, post(form(&[("id", &id), ("csrf", &csrf)])).header("sec-fetch-site", "cross-site")),
        (
            401,
            http.post(console.url(&format!("/approve?token={}", console.token)))
                .body(form(&[("id", &id), ("csrf", &csrf)])),
        ),
        (413, post(format!("{}&pad={}", form(&[("id", &id), ("csrf", &csrf)]), "x".repeat(5000)))),
    ];
    for (want, request) in refused {
        let (status, body) = get(request).await;
        assert_eq!(status, want, "{body}");
    }
    assert_eq!(pending_ids(&run).await, std::slice::from_ref(&id), "nothing was decided");
    assert_eq!(run.seller.paid("/report"), 0);

    // The console's own form: decided once, through the queue.
    let own = || post(form(&[("id", &id), ("csrf", &csrf)])).header("origin", &console.origin);
    let decided = own().send().await.unwrap();
    assert_eq!(decided.status().as_u16(), 303);
    assert_eq!(decided.headers()["location"].to_str().unwrap(), format!("/?decided={id}"));
    assert!(pending_ids(&run).await.is_empty());
    let (status, body) = get(own()).await;
    assert_eq!(status, 409, "decided once: {body}");
    assert!(body.contains("decided once"), "{body}");
    let (status, body) = get(http.get(console.url(&format!("/?decided={id}"))).header("cookie", &cookie)).await;
    assert_eq!(status, 200);
    assert!(body.contains("approved: the agent&#39;s next send of the same request pays it, once"), "{body}");
    let (status, _) = get(post(form(&[("id", "ap_nosuchapproval"), ("csrf", &csrf)]))).await;
    assert_eq!(status, 404);
    for (path, want) in [("/history", 200), ("/budgets", 200), ("/purchase?key=nope", 404), ("/nope", 404)] {
        let (status, body) = get(http.get(console.url(path)).header("cookie", &cookie)).await;
        assert_eq!(status, want, "{path}: {body}");
    }
}

/// Serves `terms` at any link.
#[derive(Debug)]
pub(super) struct Terms(pub(super) Vec<u8>);

impl Fetch for Terms {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let bytes = self.0.clone();
        Box::pin(async move { Ok(Response::new(200, vec![], terms::Body::from_bytes(bytes))) })
    }
}

/// A seller's 402 for 0.01 USDC on Base Sepolia, advertising the hash of `terms`.
pub(super) fn offer(terms: &[u8]) -> Value {
    let h = atr_hash(terms).to_hex();
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/report"},
        "accepts": [{
            "scheme": "exact", "network": seller::NETWORK, "amount": seller::AMOUNT, "asset": seller::USDC,
            "payTo": seller::PAY_TO, "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h, "legalContextUrl": format!("https://atr.seller.example/{h}")
        }}}
    })
}

/// The payer's key, as the gate's signer.
pub(super) fn signer() -> terms::LocalSigner {
    terms::LocalSigner::from_hex(seller::KEY, 84_532).unwrap()
}

pub(super) fn pairing() -> &'static dyn terms::pairing::Pairing {
    terms::pairing("x402/exact/eip155/eip3009").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_serves_its_pages_while_another_process_writes_the_journal() {
    let run = Run::new(CONFIG).await;
    let console = Console::start(&run).await;
    // This process writes the file the console reads: purchases signed one after another, each write allowed to
    // wait 250 ms at most for a lock (a console holding one across a page would make them fail).
    let config = JournalConfig { busy_timeout: Duration::from_millis(250), ..JournalConfig::default() };
    let journal = JournalTarget::Sqlite(run.dir.path().join("journal.db")).open(config).await.unwrap();
    const PURCHASES: usize = 60;
    let writer = tokio::spawn(async move {
        let signer = signer();
        for n in 0..PURCHASES {
            let terms_text = format!("Terms of report {n}\nOne report per payment.\n").into_bytes();
            let options = Options::new()
                .journal(journal.clone())
                .purchase(Purchase::new("GET", format!("https://api.seller.example/v1/report?n={n}")));
            let done = transact(offer(&terms_text), pairing(), &signer, &Terms(terms_text.clone()), &options).await;
            assert!(matches!(done, Ok(TransactOutcome::Signed(_))), "purchase {n}: {done:?}");
        }
    });
    let http = client();
    let bearer = format!("Bearer {}", console.token);
    let mut pages = 0;
    let mut seen_rows = Vec::new();
    while !writer.is_finished() {
        for path in ["/history", "/budgets", "/"] {
            let (status, body) = get(http.get(console.url(path)).header("authorization", &bearer)).await;
            assert_eq!(status, 200, "{path} while the journal is written: {body}");
            if path == "/history" {
                seen_rows.push(body.matches("<tr class=\"payment\"").count());
            }
            pages += 1;
        }
    }
    writer.await.unwrap();
    let (_, history) = get(http.get(console.url("/history")).header("authorization", &bearer)).await;
    assert_eq!(history.matches("<tr class=\"payment\"").count(), PURCHASES);
    assert!(history.contains("Terms of report 59") && history.contains("Terms of report 0"));
    assert!(pages >= 3, "{pages} pages served while the journal was written");
    assert!(seen_rows.windows(2).all(|w| w[0] <= w[1]), "the history only grows: {seen_rows:?}");
    eprintln!("{pages} pages served during {PURCHASES} purchases written; rows seen: {seen_rows:?}");
}

/// The console on a PostgreSQL journal (a fleet's): it shows the approval an agent's `terms pay` queued on the
/// server, decides it through its form, and shows the payment the same `terms pay` then makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_reads_and_decides_on_a_postgres_journal() {
    let Some(server) = super::backends::server(concat!(module_path!(), "::on_postgres")) else { return };
    let url = super::backends::fresh_schema(&server).await;
    let run =
        run_above_threshold(&format!("journal = {url:?}\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n")).await;
    let id = queued(&run, "/report").await;
    let console = Console::start(&run).await;
    let (http, bearer) = (client(), format!("Bearer {}", console.token));
    let (status, page) = get(http.get(console.url("/")).header("authorization", &bearer)).await;
    assert_eq!(status, 200);
    assert!(page.contains(&id) && page.contains("0.01 USDC (10000)"), "{page}");
    let form = format!("id={id}&csrf={}", csrf_of(&page));
    let decided = http.post(console.url("/approve")).header("authorization", &bearer).body(form).send().await.unwrap();
    assert_eq!(decided.status().as_u16(), 303);
    assert!(pending_ids(&run).await.is_empty());
    let paid = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(paid.status.code(), Some(0), "{}", super::said(&paid));
    let (status, history) = get(http.get(console.url("/history")).header("authorization", &bearer)).await;
    assert_eq!(status, 200);
    assert_eq!(history.matches("data-state=\"settled\"").count(), 1, "{history}");
    assert!(history.contains("0x5e771e"), "the receipt: {history}");
    assert!(!std::path::Path::new(&run.dir.path().join("journal.db")).exists(), "no SQLite file: the server's journal");
}
