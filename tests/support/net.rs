//! Real sockets for the gate's fetches: an HTTP/1.1 server on loopback that answers from a per-test script (counting
//! connections and recording every request head), and a [`Fetch`] that sends the gate's `https://<test host>/...`
//! requests to those servers as plain HTTP through the real [`HttpFetch`].
//!
//! Paused time and real sockets. The tests run on a current-thread runtime with paused time, the servers in the same
//! runtime. tokio (1.54) advances a paused clock to the next timer only when the runtime finds nothing to do: a task
//! woken by socket readiness during the runtime's zero-timeout I/O poll marks the time driver woken, so the clock
//! stays put. That holds as long as the kernel has delivered the loopback bytes by the time the runtime parks, which
//! a loaded machine does not promise (softirq work can be deferred); then the clock would jump to the gate's
//! deadline with a reply on its way. So the fetch takes a [`Hold`] for every request: a `spawn_blocking` task, which
//! tokio counts as work in flight and during which it never advances a paused clock. The hold lasts from the call
//! until the body ends, fails or is dropped, or until the server goes quiet on purpose (never answers, or stalls a
//! body once the client has read what was sent). While held, socket work runs in real time and takes no virtual
//! time; once released, nothing is in flight, and the clock jumps straight to the gate's next timer (a deadline, a
//! Retry-After wait, the end of the window), so every wait is measured exactly.
#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use terms::fetch::{Body, Fetch, FetchError, Request, Response};
use terms::http::HttpFetch;
use terms::signer::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;

/// Keeps tokio's paused clock still while held: a blocking task waiting for its sender to drop.
#[derive(Debug)]
pub struct Hold {
    tx: Mutex<Option<std::sync::mpsc::Sender<()>>>,
    /// Body bytes the client has been handed so far.
    yielded: AtomicUsize,
    progress: Notify,
}

impl Hold {
    fn new() -> Arc<Self> {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        // A hold the test forgets to release ends by itself after a few real seconds, so a broken script fails an
        // assertion instead of hanging the run.
        drop(tokio::task::spawn_blocking(move || {
            let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
        }));
        Arc::new(Self { tx: Mutex::new(Some(tx)), yielded: AtomicUsize::new(0), progress: Notify::new() })
    }

    /// Lets the clock move again.
    pub fn release(&self) {
        self.tx.lock().unwrap().take();
    }

    fn note(&self, n: usize) {
        self.yielded.fetch_add(n, Ordering::SeqCst);
        self.progress.notify_waiters();
    }

    /// Waits until the client has been handed at least `n` body bytes.
    async fn until_yielded(&self, n: usize) {
        loop {
            let notified = self.progress.notified();
            if self.yielded.load(Ordering::SeqCst) >= n {
                return;
            }
            notified.await;
        }
    }
}

/// Releases its hold when dropped: a request future dropped by a deadline or a cancellation lets the clock go.
struct Guard(Option<Arc<Hold>>);

impl Guard {
    fn note(&self, n: usize) {
        if let Some(hold) = &self.0 {
            hold.note(n);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(hold) = self.0.take() {
            hold.release();
        }
    }
}

/// What the fetch and the servers share: the hold of the request in flight.
#[derive(Debug, Default)]
pub struct Net {
    current: Mutex<Option<Arc<Hold>>>,
}

impl Net {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn hold(&self) -> Option<Arc<Hold>> {
        let hold = Hold::new();
        *self.current.lock().unwrap() = Some(hold.clone());
        Some(hold)
    }

    fn current(&self) -> Option<Arc<Hold>> {
        self.current.lock().unwrap().clone()
    }
}

/// A response body the server writes.
#[derive(Clone, Debug)]
pub enum Payload {
    /// With `Content-Length`.
    Sized(Vec<u8>),
    /// `Transfer-Encoding: chunked`, in these chunks, no `Content-Length`.
    Chunked(Vec<Vec<u8>>),
    /// No length at all: the body ends when the connection closes.
    UntilClose(Vec<u8>),
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Act {
    /// The status line, these headers and the body; then the connection closes.
    Answer { status: u16, headers: Vec<(String, String)>, body: Payload },
    /// The status line, these headers (a `Content-Length` of `declared`) and `sent` body bytes; once the client has
    /// read them, the server goes quiet with the connection open.
    Stall { status: u16, headers: Vec<(String, String)>, declared: usize, sent: Vec<u8> },
    /// Reads the request and never answers; the connection stays open.
    Never,
    /// Reads the request and resets the connection (RST) before any answer.
    Reset,
    /// The status line, headers declaring `declared` bytes and `sent` of them, then a reset mid-body.
    ResetMidBody { status: u16, headers: Vec<(String, String)>, declared: usize, sent: Vec<u8> },
}

impl Act {
    pub fn status(status: u16) -> Self {
        Self::Answer { status, headers: vec![], body: Payload::Sized(vec![]) }
    }
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self::Answer { status: 200, headers: vec![], body: Payload::Sized(body.into()) }
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match &mut self {
            Self::Answer { headers, .. } | Self::Stall { headers, .. } | Self::ResetMidBody { headers, .. } => {
                headers.push((name.to_owned(), value.to_owned()));
            }
            Self::Never | Self::Reset => {}
        }
        self
    }
    pub fn body(mut self, payload: Payload) -> Self {
        if let Self::Answer { body, .. } = &mut self {
            *body = payload;
        }
        self
    }
}

/// A request the server read.
#[derive(Clone, Debug)]
pub struct Seen {
    /// When it was read, on the runtime's clock.
    pub at: Instant,
    /// The request line.
    pub line: String,
    pub headers: Vec<(String, String)>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

struct Script {
    acts: VecDeque<Act>,
    repeat_last: bool,
}

/// A scripted HTTP/1.1 server on 127.0.0.1, one request per connection.
#[derive(Clone)]
pub struct Server {
    pub addr: SocketAddr,
    script: Arc<Mutex<Script>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
    overruns: Arc<AtomicUsize>,
    arrived: Arc<Notify>,
}

impl Server {
    /// Starts a server answering with `acts` in order, then resetting every connection.
    pub async fn start(net: &Arc<Net>, acts: Vec<Act>) -> Self {
        Self::launch(net, acts, false).await
    }

    /// Starts a server answering with `acts` in order, the last one forever.
    pub async fn repeating(net: &Arc<Net>, acts: Vec<Act>) -> Self {
        Self::launch(net, acts, true).await
    }

    async fn launch(net: &Arc<Net>, acts: Vec<Act>, repeat_last: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = Self {
            addr: listener.local_addr().unwrap(),
            script: Arc::new(Mutex::new(Script { acts: acts.into(), repeat_last })),
            seen: Arc::default(),
            connections: Arc::default(),
            overruns: Arc::default(),
            arrived: Arc::default(),
        };
        let this = server.clone();
        let net = net.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                this.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(this.clone().serve(socket, net.clone()));
            }
        });
        server
    }

    fn next_act(&self) -> Act {
        let mut script = self.script.lock().unwrap();
        if script.repeat_last && script.acts.len() == 1 {
            return script.acts.front().cloned().unwrap();
        }
        script.acts.pop_front().unwrap_or_else(|| {
            self.overruns.fetch_add(1, Ordering::SeqCst);
            Act::Reset
        })
    }

    async fn serve(self, mut socket: TcpStream, net: Arc<Net>) {
        let Some((line, headers)) = read_head(&mut socket).await else { return };
        let act = self.next_act();
        self.seen.lock().unwrap().push(Seen { at: Instant::now(), line, headers });
        self.arrived.notify_waiters();
        match act {
            Act::Answer { status, headers, body } => {
                let _ = socket.write_all(&response(status, &headers, &body)).await;
                let _ = socket.shutdown().await;
            }
            Act::Stall { status, headers, declared, sent } => {
                let mut bytes = head(status, &headers, Some(declared), false);
                bytes.extend_from_slice(&sent);
                let _ = socket.write_all(&bytes).await;
                if let Some(hold) = net.current() {
                    hold.until_yielded(sent.len()).await;
                    hold.release();
                }
                std::future::pending::<()>().await;
            }
            Act::Never => {
                if let Some(hold) = net.current() {
                    hold.release();
                }
                std::future::pending::<()>().await;
            }
            Act::Reset => {
                let _ = socket.set_zero_linger();
                drop(socket);
            }
            Act::ResetMidBody { status, headers, declared, sent } => {
                let mut bytes = head(status, &headers, Some(declared), false);
                bytes.extend_from_slice(&sent);
                let _ = socket.write_all(&bytes).await;
                if let Some(hold) = net.current() {
                    hold.until_yielded(sent.len()).await;
                }
                let _ = socket.set_zero_linger();
                drop(socket);
            }
        }
    }

    /// Every request read so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Connections accepted.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests that came after the script ran out.
    pub fn overruns(&self) -> usize {
        self.overruns.load(Ordering::SeqCst)
    }

    /// Waits until `n` requests have been read.
    pub async fn arrived(&self, n: usize) {
        loop {
            let notified = self.arrived.notified();
            if self.count() >= n {
                return;
            }
            notified.await;
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn read_head(socket: &mut TcpStream) -> Option<(String, Vec<(String, String)>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > 65_536 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let line = lines.next()?.to_owned();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Some((line, headers))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        402 => "Payment Required",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

fn head(status: u16, headers: &[(String, String)], length: Option<usize>, chunked: bool) -> Vec<u8> {
    let mut text = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        text.push_str(&format!("{n}: {v}\r\n"));
    }
    if let Some(length) = length {
        text.push_str(&format!("Content-Length: {length}\r\n"));
    }
    if chunked {
        text.push_str("Transfer-Encoding: chunked\r\n");
    }
    text.push_str("Connection: close\r\n\r\n");
    text.into_bytes()
}

fn response(status: u16, headers: &[(String, String)], body: &Payload) -> Vec<u8> {
    match body {
        Payload::Sized(b) => {
            let declared = headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
            let mut out = head(status, headers, (!declared).then_some(b.len()), false);
            out.extend_from_slice(b);
            out
        }
        Payload::Chunked(chunks) => {
            let mut out = head(status, headers, None, true);
            for c in chunks.iter().filter(|c| !c.is_empty()) {
                out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
                out.extend_from_slice(c);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
            out
        }
        Payload::UntilClose(b) => {
            let mut out = head(status, headers, None, false);
            out.extend_from_slice(b);
            out
        }
    }
}

/// The gate's fetch over loopback: `https://<host>/<path>` goes to the server routed for `<host>` as
/// `http://127.0.0.1:<port>/<path>`, through the real [`HttpFetch`] (no redirect, no decoding). Any other URL is a
/// transport failure, so nothing leaves the machine.
pub struct Loopback {
    inner: HttpFetch,
    routes: Vec<(String, Server)>,
    net: Arc<Net>,
    asked: Mutex<Vec<String>>,
}

impl Loopback {
    pub fn new(net: &Arc<Net>) -> Self {
        let client = HttpFetch::builder().build().expect("client");
        Self { inner: HttpFetch::from_client(client), routes: vec![], net: net.clone(), asked: Mutex::default() }
    }

    /// Routes `https://<host>/...` to `server`.
    pub fn route(mut self, host: &str, server: &Server) -> Self {
        self.routes.push((host.to_owned(), server.clone()));
        self
    }

    /// Every URL the gate asked for, as it asked.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    fn rewrite(&self, url: &str) -> Option<String> {
        let rest = url.strip_prefix("https://")?;
        let (host, path) = rest.split_once('/').map_or((rest, ""), |(h, p)| (h, p));
        let (_, server) = self.routes.iter().find(|(h, _)| h == host)?;
        Some(format!("{}/{path}", server.origin()))
    }
}

impl Fetch for Loopback {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.asked.lock().unwrap().push(request.url.to_owned());
        Box::pin(async move {
            let Some(url) = self.rewrite(request.url) else { return Err(FetchError::new("no route")) };
            let hold = Guard(self.net.hold());
            let response = self.inner.get(Request { url: &url, headers: request.headers }).await?;
            let body = Body::from_stream(Held { body: response.body, hold });
            Ok(Response::new(response.status, response.headers, body))
        })
    }
}

/// A body that keeps its request's hold until it ends, fails or is dropped.
struct Held {
    body: Body,
    hold: Guard,
}

impl Stream for Held {
    type Item = Result<Bytes, FetchError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let polled = {
            let next = this.body.chunk();
            let mut next = std::pin::pin!(next);
            next.as_mut().poll(cx)
        };
        match polled {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                this.hold.note(chunk.len());
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(end) => {
                drop(std::mem::replace(&mut this.hold, Guard(None)));
                Poll::Ready(end)
            }
        }
    }
}
