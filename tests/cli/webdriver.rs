//! A minimal W3C WebDriver client on reqwest, for the console's browser test: chromedriver from the distribution's
//! package, driving headless Chromium. New session, navigate, find elements, click, read text and the address, run
//! a script, take a screenshot; the session is ended (and the browser with it) when the value is dropped, even on a
//! failed assertion.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

/// The key of an element reference in WebDriver's answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver, where the machine has it; `None` with a message where it does not (and a failure under `CI`).
pub(super) fn chromedriver() -> Option<&'static str> {
    const PATH: &str = "/usr/bin/chromedriver";
    if std::path::Path::new(PATH).exists() {
        return Some(PATH);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set and {PATH} is missing: install chromium and chromium-driver (apt-get install chromium chromium-driver)"
    );
    eprintln!("skipped: no {PATH} (apt-get install chromium chromium-driver to run the console's browser test)");
    None
}

/// chromedriver with one headless Chromium session.
pub(super) struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free loopback port and opens a session (headless, a `width`×`height` window).
    pub(super) async fn start(chromedriver: &str, width: u32, height: u32) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
        let profile = tempfile::tempdir().unwrap();
        let mut browser = Self { driver, addr, session: String::new(), http, _profile: profile };
        for _ in 0..100 {
            let ready = browser.http.get(browser.url("/status")).send().await;
            if let Ok(r) = ready
                && let Ok(bytes) = r.bytes().await
                && serde_json::from_slice::<Value>(&bytes).ok().and_then(|v| v["value"]["ready"].as_bool())
                    == Some(true)
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let args = [
            "--headless=new".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", browser._profile.path().display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}
        }}});
        let created = browser.call(reqwest::Method::POST, "/session", Some(capabilities)).await;
        browser.session = created["sessionId"].as_str().unwrap_or_else(|| panic!("no session: {created}")).to_owned();
        browser
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// One command; its `value`, or a panic naming WebDriver's error.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let value = self.try_call(method, path, body).await;
        assert!(value.get("error").is_none(), "WebDriver {path}: {value}");
        value
    }

    /// One command; its `value`, an error included.
    async fn try_call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, self.url(path));
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        let bytes = request.send().await.unwrap().bytes().await.unwrap();
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("WebDriver {path}: {e}"));
        answer["value"].clone()
    }

    fn at(&self, path: &str) -> String {
        format!("/session/{}{path}", self.session)
    }

    /// Opens `url`.
    pub(super) async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, &self.at("/url"), Some(json!({ "url": url }))).await;
    }

    /// The address the page is at now.
    pub(super) async fn current(&self) -> String {
        self.call(reqwest::Method::GET, &self.at("/url"), None).await.as_str().unwrap_or_default().to_owned()
    }

    /// Every element `css` selects (their references).
    pub(super) async fn all(&self, css: &str) -> Vec<String> {
        let path = self.at("/elements");
        let found = self.call(reqwest::Method::POST, &path, Some(json!({"using": "css selector", "value": css}))).await;
        found.as_array().into_iter().flatten().filter_map(|e| e[ELEMENT].as_str().map(str::to_owned)).collect()
    }

    /// The one element `css` selects first, or a panic naming the selector.
    pub(super) async fn find(&self, css: &str) -> String {
        self.all(css).await.into_iter().next().unwrap_or_else(|| panic!("no element {css}"))
    }

    /// The first element `css` selects once the page has one (a page loading after a click), within 10 s; a panic
    /// with the page's text where none comes.
    pub(super) async fn wait(&self, css: &str) -> String {
        for _ in 0..100 {
            if let Some(found) = self.all(css).await.into_iter().next() {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = self.script("return document.body.innerText").await;
        panic!("no element {css} within 10 s at {}: {page}", self.current().await)
    }

    /// The text of the first element `css` selects, read in one step (no reference to go stale as the page
    /// reloads); `None` where there is none.
    pub(super) async fn read(&self, css: &str) -> Option<String> {
        let script = "const e = document.querySelector(arguments[0]); return e ? e.innerText : null;";
        let path = self.at("/execute/sync");
        let value = self.call(reqwest::Method::POST, &path, Some(json!({"script": script, "args": [css]}))).await;
        value.as_str().map(str::to_owned)
    }

    /// Waits (10 s at most) until the first element `css` selects holds `needle`; its text.
    pub(super) async fn wait_text(&self, css: &str, needle: &str) -> String {
        for _ in 0..100 {
            if let Some(text) = self.read(css).await.filter(|t| t.contains(needle)) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{css} never held {needle:?} at {}: {:?}", self.current().await, self.read("body").await)
    }

    /// Clicks the first element `css` selects, as a person would (WebDriver's click); found again where the page
    /// reloaded (its poll) between finding and clicking.
    pub(super) async fn click_on(&self, css: &str) {
        for _ in 0..3 {
            let element = self.wait(css).await;
            let path = self.at(&format!("/element/{element}/click"));
            let done = self.try_call(reqwest::Method::POST, &path, Some(json!({}))).await;
            match done.get("error").and_then(Value::as_str) {
                None => return,
                Some("stale element reference") => continue,
                Some(_) => panic!("WebDriver click on {css}: {done}"),
            }
        }
        panic!("{css} went stale three times");
    }

    /// Runs `script` in the page (WebDriver's own evaluation, not the page's) and returns its value.
    pub(super) async fn script(&self, script: &str) -> Value {
        self.call(reqwest::Method::POST, &self.at("/execute/sync"), Some(json!({"script": script, "args": []}))).await
    }

    /// The page as PNG, written to `path`.
    pub(super) async fn screenshot(&self, path: &std::path::Path) {
        let png = self.call(reqwest::Method::GET, &self.at("/screenshot"), None).await;
        let bytes = base64::engine::general_purpose::STANDARD.decode(png.as_str().unwrap_or_default()).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for Browser {
    /// Ends the session (chromedriver closes the browser), then stops chromedriver; with a plain socket, as a drop
    /// cannot await.
    fn drop(&mut self) {
        if let Ok(mut stream) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(2)) {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
            let request = format!(
                "DELETE /session/{} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                self.session, self.addr
            );
            let _ = stream.write_all(request.as_bytes());
            let _ = stream.read_to_end(&mut Vec::new());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
