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
//!
//! A streamed answer ([`Act::Stream`]) is written step by step: a body that pauses (a slow-loris dribble, a stall
//! before more) releases the hold only once the client has been handed every byte sent, lets the clock run, and
//! takes the hold again before it writes the next byte, so each byte's virtual time is exact too. An endless body
//! never runs more than [`WINDOW`] bytes ahead of what the client has been handed, so the bytes the server wrote
//! measure what the client read rather than what the kernel's socket buffers absorbed. Each request's hold counts
//! the body bytes the fetch handed the gate ([`Net::handed_to`]).
#![allow(dead_code, unreachable_pub)]

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use terms::BoxFuture;
use terms::http::HttpFetch;
use terms::{Body, Fetch, FetchError, Request, Response};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;

/// Keeps tokio's paused clock still while held: a blocking task waiting for its sender to drop. A server that lets
/// the clock run on purpose (a pause in a body) takes it again before it writes more.
#[derive(Debug)]
pub struct Hold {
    /// The URL the gate asked for.
    url: String,
    state: Mutex<HoldState>,
    /// Body bytes the client has been handed so far.
    yielded: AtomicUsize,
    /// The size of the last chunk handed over.
    last: AtomicUsize,
    progress: Notify,
}

#[derive(Debug, Default)]
struct HoldState {
    tx: Option<std::sync::mpsc::Sender<()>>,
    /// The client's body ended, failed or was dropped: the request is over.
    closed: bool,
}

/// A blocking task in flight until the sender drops or `limit` real time passes.
fn blocking_waiter(limit: std::time::Duration) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    drop(tokio::task::spawn_blocking(move || {
        let _ = rx.recv_timeout(limit);
    }));
    tx
}

/// A hold the test forgets to release ends by itself after a few real seconds, so a broken script fails an
/// assertion instead of hanging the run.
pub const HOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Hold {
    fn new(url: &str) -> Arc<Self> {
        let state = HoldState { tx: Some(blocking_waiter(HOLD_LIMIT)), closed: false };
        Arc::new(Self {
            url: url.to_owned(),
            state: Mutex::new(state),
            yielded: AtomicUsize::new(0),
            last: AtomicUsize::new(0),
            progress: Notify::new(),
        })
    }

    /// Lets the clock move again.
    pub fn release(&self) {
        self.state.lock().unwrap().tx.take();
    }

    /// Stops the clock again, unless the request is over (nothing would release it then).
    fn acquire(&self) {
        let mut state = self.state.lock().unwrap();
        if !state.closed && state.tx.is_none() {
            state.tx = Some(blocking_waiter(HOLD_LIMIT));
        }
    }

    /// The client is done with the body: the clock may move, and a server waiting on it stops waiting.
    fn finish(&self) {
        {
            let mut state = self.state.lock().unwrap();
            state.closed = true;
            state.tx.take();
        }
        self.progress.notify_waiters();
    }

    /// Whether the client is done with the body.
    pub fn closed(&self) -> bool {
        self.state.lock().unwrap().closed
    }

    fn note(&self, n: usize) {
        self.yielded.fetch_add(n, Ordering::SeqCst);
        self.last.store(n, Ordering::SeqCst);
        self.progress.notify_waiters();
    }

    /// Body bytes the client has been handed.
    pub fn handed(&self) -> usize {
        self.yielded.load(Ordering::SeqCst)
    }

    /// The size of the last chunk the client was handed.
    pub fn last_chunk(&self) -> usize {
        self.last.load(Ordering::SeqCst)
    }

    /// Waits until the client has been handed at least `n` body bytes, or is done with the body.
    async fn until_yielded(&self, n: usize) {
        loop {
            let notified = self.progress.notified();
            if self.yielded.load(Ordering::SeqCst) >= n || self.closed() {
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
            hold.finish();
        }
    }
}

/// What the fetch and the servers share: the hold of the request in flight, and every request's.
#[derive(Debug, Default)]
pub struct Net {
    current: Mutex<Option<Arc<Hold>>>,
    all: Mutex<Vec<Arc<Hold>>>,
}

impl Net {
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn hold(&self, url: &str) -> Option<Arc<Hold>> {
        let hold = Hold::new(url);
        *self.current.lock().unwrap() = Some(hold.clone());
        self.all.lock().unwrap().push(hold.clone());
        Some(hold)
    }

    fn current(&self) -> Option<Arc<Hold>> {
        self.current.lock().unwrap().clone()
    }

    /// The body bytes the fetch handed the gate, request by request, in order.
    pub fn handed(&self) -> Vec<usize> {
        self.all.lock().unwrap().iter().map(|h| h.handed()).collect()
    }

    /// The body bytes the fetch handed the gate for the requests to `https://<host>/...`, in order.
    pub fn handed_to(&self, host: &str) -> Vec<usize> {
        let prefix = format!("https://{host}/");
        self.all.lock().unwrap().iter().filter(|h| h.url.starts_with(&prefix)).map(|h| h.handed()).collect()
    }

    /// The last request's hold.
    pub fn last(&self) -> Arc<Hold> {
        self.all.lock().unwrap().last().cloned().expect("a request")
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

/// How a streamed body is framed.
#[derive(Clone, Copy, Debug)]
pub enum Framing {
    /// `Content-Length` of this many bytes, whatever is sent.
    Length(usize),
    /// `Transfer-Encoding: chunked`, each send one chunk.
    Chunked,
    /// No length: the body ends when the connection closes.
    UntilClose,
}

/// One step of a streamed body.
#[derive(Clone, Debug)]
pub enum Step {
    /// These bytes (one chunk when chunked).
    Send(Vec<u8>),
    /// Once the client has been handed everything sent, the body stalls and the clock runs this long.
    Pause(Duration),
    /// This piece again and again until the client is done with the body, never more than [`WINDOW`] bytes ahead
    /// of what the client has been handed: the bytes written then measure what the client read.
    Endless(Vec<u8>),
    /// Once the client has been handed everything sent, quiet forever with the connection open.
    Stall,
    /// Once the client has been handed everything sent, a reset (RST).
    Reset,
}

/// How far an [`Step::Endless`] body runs ahead of the client.
pub const WINDOW: usize = 64 * 1024;

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
    /// The status line, these headers, the framing's header, and a body written step by step; at its end (a
    /// chunked body's last chunk written) the server closes its side, then waits for the client to close.
    Stream { status: u16, headers: Vec<(String, String)>, framing: Framing, steps: Vec<Step> },
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
            Self::Answer { headers, .. }
            | Self::Stall { headers, .. }
            | Self::ResetMidBody { headers, .. }
            | Self::Stream { headers, .. } => {
                headers.push((name.to_owned(), value.to_owned()));
            }
            Self::Never | Self::Reset => {}
        }
        self
    }
    /// 200 with a body written step by step.
    pub fn stream(framing: Framing, steps: Vec<Step>) -> Self {
        Self::Stream { status: 200, headers: vec![], framing, steps }
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
    /// Body bytes streamed answers wrote.
    written: Arc<AtomicUsize>,
    /// Connections of streamed answers the client closed, as the server saw it (end of stream or error).
    peer_closed: Arc<AtomicUsize>,
    ended: Arc<Notify>,
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
            written: Arc::default(),
            peer_closed: Arc::default(),
            ended: Arc::default(),
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
                let _ = write_response(&mut socket, status, &headers, &body).await;
                let _ = socket.shutdown().await;
            }
            Act::Stream { status, headers, framing, steps } => {
                self.stream(socket, net.current(), status, &headers, framing, steps).await;
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

    /// Writes a streamed answer. The hold (the request's) is released only while the body pauses or stalls on
    /// purpose, and only once the client has been handed every byte sent, so no byte is on its way when the clock
    /// moves.
    async fn stream(
        &self,
        mut socket: TcpStream,
        hold: Option<Arc<Hold>>,
        status: u16,
        headers: &[(String, String)],
        framing: Framing,
        steps: Vec<Step>,
    ) {
        let length = match framing {
            Framing::Length(n) => Some(n),
            Framing::Chunked | Framing::UntilClose => None,
        };
        let chunked = matches!(framing, Framing::Chunked);
        if socket.write_all(&head(status, headers, length, chunked)).await.is_err() {
            return;
        }
        let closed = || hold.as_ref().is_some_and(|h| h.closed());
        let caught_up = |n: usize| {
            let hold = hold.clone();
            async move {
                if let Some(hold) = hold {
                    hold.until_yielded(n).await;
                }
            }
        };
        let mut sent = 0usize;
        for step in steps {
            if closed() {
                break;
            }
            match step {
                Step::Send(bytes) => {
                    if self.send(&mut socket, &bytes, chunked).await.is_err() {
                        return self.until_peer_closed(socket).await;
                    }
                    sent += bytes.len();
                }
                Step::Pause(wait) => {
                    caught_up(sent).await;
                    if let Some(hold) = &hold {
                        hold.release();
                    }
                    tokio::time::sleep(wait).await;
                    if let Some(hold) = &hold {
                        hold.acquire();
                    }
                }
                Step::Endless(piece) => loop {
                    caught_up(sent.saturating_sub(WINDOW)).await;
                    if closed() {
                        break;
                    }
                    if self.send(&mut socket, &piece, chunked).await.is_err() {
                        return self.until_peer_closed(socket).await;
                    }
                    sent += piece.len();
                },
                Step::Stall => {
                    caught_up(sent).await;
                    if let Some(hold) = &hold {
                        hold.release();
                    }
                    std::future::pending::<()>().await;
                }
                Step::Reset => {
                    caught_up(sent).await;
                    let _ = socket.set_zero_linger();
                    return;
                }
            }
        }
        if chunked && !closed() && socket.write_all(b"0\r\n\r\n").await.is_err() {
            return self.until_peer_closed(socket).await;
        }
        let _ = socket.shutdown().await;
        self.until_peer_closed(socket).await;
    }

    /// One piece of body, counted once written.
    async fn send(&self, socket: &mut TcpStream, bytes: &[u8], chunked: bool) -> std::io::Result<()> {
        if chunked {
            if bytes.is_empty() {
                return Ok(());
            }
            socket.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
            socket.write_all(bytes).await?;
            socket.write_all(b"\r\n").await?;
        } else {
            socket.write_all(bytes).await?;
        }
        self.written.fetch_add(bytes.len(), Ordering::SeqCst);
        Ok(())
    }

    /// Reads (and drops) until the client closes the connection.
    async fn until_peer_closed(&self, mut socket: TcpStream) {
        let mut sink = [0u8; 1024];
        while let Ok(n) = socket.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
        self.peer_closed.fetch_add(1, Ordering::SeqCst);
        self.ended.notify_waiters();
    }

    /// Body bytes streamed answers wrote.
    pub fn written(&self) -> usize {
        self.written.load(Ordering::SeqCst)
    }

    /// Streamed answers whose connection the client closed.
    pub fn peer_closed(&self) -> usize {
        self.peer_closed.load(Ordering::SeqCst)
    }

    /// Waits (in real time, the clock held) until the client has closed `n` streamed answers' connections, at most
    /// a few real seconds; answers whether it did.
    pub async fn closed_by_peer(&self, n: usize) -> bool {
        let wait = async {
            loop {
                let notified = self.ended.notified();
                if self.peer_closed() >= n {
                    return;
                }
                notified.await;
            }
        };
        in_real_time(wait, HOLD_LIMIT).await.is_some()
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

/// Writes an answer: the head, then the body as it is, never copied (the measured calls count the server's heap
/// too).
async fn write_response(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &Payload,
) -> std::io::Result<()> {
    match body {
        Payload::Sized(b) => {
            let declared = headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
            socket.write_all(&head(status, headers, (!declared).then_some(b.len()), false)).await?;
            socket.write_all(b).await
        }
        Payload::Chunked(chunks) => {
            socket.write_all(&head(status, headers, None, true)).await?;
            for c in chunks.iter().filter(|c| !c.is_empty()) {
                socket.write_all(format!("{:x}\r\n", c.len()).as_bytes()).await?;
                socket.write_all(c).await?;
                socket.write_all(b"\r\n").await?;
            }
            socket.write_all(b"0\r\n\r\n").await
        }
        Payload::UntilClose(b) => {
            socket.write_all(&head(status, headers, None, false)).await?;
            socket.write_all(b).await
        }
    }
}

/// Runs `work` with tokio's paused clock held still (a blocking task in flight) for at most `limit` real time;
/// `None` when the limit passed first. For waits on the network alone, which take no virtual time.
pub async fn in_real_time<T>(work: impl Future<Output = T>, limit: std::time::Duration) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let waiter = tokio::task::spawn_blocking(move || {
        let _ = rx.recv_timeout(limit);
    });
    tokio::select! {
        out = work => {
            drop(tx);
            Some(out)
        }
        _ = waiter => None,
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
            let hold = Guard(self.net.hold(request.url));
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
