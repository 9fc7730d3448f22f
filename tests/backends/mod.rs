//! The journal's two backends for the tests: each journal and budget test runs on a SQLite file in a temporary
//! folder and on a real PostgreSQL server, in a schema of its own. The server is the one `TERMS_TEST_POSTGRES` names
//! (a URL, e.g. `postgres://postgres@127.0.0.1:25329/terms` as `scripts/pg-test-server start` prints it); without
//! it each PostgreSQL test says on stderr that it was skipped, by name, and why (and under CI it fails instead, so
//! CI never passes without the server).

#![allow(dead_code)]

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use terms::safety::journal::Journal;
use terms::safety::journal::{JournalConfig, JournalTarget};

/// The variable the PostgreSQL tests read.
pub(crate) const VAR: &str = "TERMS_TEST_POSTGRES";

/// The server's URL, or `None` after saying on stderr that `test` is skipped (a failure under CI).
pub(crate) fn server(test: &str) -> Option<String> {
    match std::env::var(VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: {VAR} is not set, and CI must run the PostgreSQL tests (.ci/run starts a server)"
            );
            // Straight to stderr: libtest captures `eprintln!` of a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: {test}: {VAR} not set (a PostgreSQL URL; `scripts/pg-test-server start` prints one)"
            );
            None
        }
    }
}

/// How many rounds the many-process budget races run (`tests/safety.rs`, `tests/journal/processes.rs`): ten under
/// CI (`CI` set), three otherwise, so that a warm `cargo test` stays short; `TERMS_STRESS_ROUNDS` sets it. Each
/// round is eight processes racing for one budget; every round checks exactly what the ten do.
pub(crate) fn stress_rounds() -> usize {
    let default = if std::env::var_os("CI").is_some() { 10 } else { 3 };
    std::env::var("TERMS_STRESS_ROUNDS").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

/// Where one test keeps its journal.
#[derive(Debug)]
pub(crate) enum Place {
    /// A SQLite file in a temporary folder.
    Sqlite(tempfile::TempDir),
    /// A schema of its own on the server: `url` reaches it.
    Postgres {
        /// The server, as the variable names it.
        server: String,
        /// The server, in the test's schema.
        url: String,
    },
}

impl Place {
    /// A new SQLite file.
    pub(crate) fn sqlite() -> Self {
        Self::Sqlite(tempfile::tempdir().unwrap())
    }

    /// A new schema on the server, or `None` where there is no server (said on stderr, by `test`'s name).
    pub(crate) async fn postgres(test: &str) -> Option<Self> {
        let server = server(test)?;
        Some(Self::Postgres { url: fresh_schema(&server).await, server })
    }

    /// Another new place of the same backend.
    pub(crate) async fn fresh(&self) -> Self {
        match self {
            Self::Sqlite(_) => Self::sqlite(),
            Self::Postgres { server, .. } => Self::Postgres { url: fresh_schema(server).await, server: server.clone() },
        }
    }

    /// What a child process is given to open the same journal ([`open_spec`]): the journal as a configuration
    /// file names it.
    pub(crate) fn spec(&self) -> String {
        match self {
            Self::Sqlite(dir) => format!("sqlite://{}", dir.path().join("journal.db").display()),
            Self::Postgres { url, .. } => url.clone(),
        }
    }

    /// Which backend, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "sqlite",
            Self::Postgres { .. } => "postgres",
        }
    }

    /// Opens (or connects to) the journal.
    pub(crate) async fn open(&self, config: JournalConfig) -> Arc<dyn Journal> {
        open_spec(&self.spec(), config).await
    }

    /// Opens it with the default configuration.
    pub(crate) async fn journal(&self) -> Arc<dyn Journal> {
        self.open(JournalConfig::default()).await
    }
}

/// Opens the journal a [`Place::spec`] names, as the crate reads a configuration's `journal = "…"`.
pub(crate) async fn open_spec(spec: &str, config: JournalConfig) -> Arc<dyn Journal> {
    JournalTarget::parse(spec).unwrap().open(config).await.unwrap()
}

/// A client of the server, for a test's own SQL.
pub(crate) async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Creates a schema no other test uses and returns a URL whose connections work in it alone.
pub(crate) async fn fresh_schema(url: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!("t{}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst), nanos());
    client(url).await.batch_execute(&format!("CREATE SCHEMA {name}")).await.unwrap();
    in_schema(url, &name)
}

/// The URL with the connection option that puts `schema` first (and alone) in the search path.
pub(crate) fn in_schema(url: &str, schema: &str) -> String {
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}options=-c%20search_path%3D{schema}")
}

fn nanos() -> u32 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
}

/// A TCP proxy to the server. Once armed it cuts the connection that sends the next `COMMIT`, or the next run of the
/// statement that begins a new purchase in one statement (`terms_begin`, its own transaction): before the commit
/// reaches the server (the transaction is rolled back), or after (it is committed, and its answer is lost). Closed,
/// it drops every connection and takes no more: the server is gone.
pub(crate) struct Proxy {
    port: u16,
    target: String,
    /// Set to cut the next commit.
    pub(crate) armed: Arc<AtomicBool>,
    /// How many commits it cut.
    pub(crate) cuts: Arc<AtomicUsize>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Proxy {
    /// A proxy to the server of `url` (`…@host:port/…`); a cut commit reaches the server when `commit_reaches`.
    pub(crate) async fn start(url: &str, commit_reaches: bool) -> Self {
        let target = url.split('@').nth(1).unwrap().split('/').next().unwrap().to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (armed, cuts) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let tasks = Arc::new(Mutex::new(Vec::new()));
        let (a, n, t, to) = (armed.clone(), cuts.clone(), tasks.clone(), target.clone());
        let accept = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let outbound = tokio::net::TcpStream::connect(&to).await.unwrap();
                let pipe = tokio::spawn(pipe(inbound, outbound, a.clone(), n.clone(), commit_reaches));
                t.lock().unwrap().push(pipe);
            }
        });
        tasks.lock().unwrap().push(accept);
        Self { port, target, armed, cuts, tasks }
    }

    /// `url` (of the same server) through the proxy.
    pub(crate) fn url(&self, url: &str) -> String {
        url.replacen(&self.target, &format!("127.0.0.1:{}", self.port), 1)
    }

    /// Drops every connection and takes no more.
    pub(crate) fn close(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.close();
    }
}

async fn pipe(
    inbound: tokio::net::TcpStream,
    outbound: tokio::net::TcpStream,
    armed: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
    pass: bool,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (mut in_read, mut in_write) = inbound.into_split();
    let (mut out_read, mut out_write) = outbound.into_split();
    let cut = Arc::new(AtomicBool::new(false));
    let c = cut.clone();
    let back = tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = out_read.read(&mut buf).await {
            if n == 0 || c.load(Ordering::SeqCst) || in_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 16 * 1024];
    // The name tokio-postgres gave the prepared `terms_begin` statement (`s` and digits, in its Parse message):
    // a Bind of it (`\0name\0` after the empty portal's name) runs it, and that is its commit.
    let mut begin: Option<Vec<u8>> = None;
    while let Ok(n) = in_read.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        let text = b"SELECT outcome, detail FROM terms_begin(";
        let parse = chunk.windows(text.len()).position(|w| w == text);
        if let Some(at) = parse {
            let name_end = at - 1;
            let start = (0..name_end).rev().find(|&i| chunk[i] == b's').unwrap();
            begin = Some(chunk[start..name_end].to_vec());
        }
        // The statement is prepared in a round trip of its own: the chunk that names it does not run it.
        let runs_begin = parse.is_none()
            && begin.as_ref().is_some_and(|name| {
                let bind = [&[0][..], name, &[0]].concat();
                chunk.windows(bind.len()).any(|w| w == bind)
            });
        let commit = chunk.windows(6).any(|w| w == b"COMMIT") || runs_begin;
        if commit && armed.swap(false, Ordering::SeqCst) {
            cut.store(true, Ordering::SeqCst);
            cuts.fetch_add(1, Ordering::SeqCst);
            if pass {
                out_write.write_all(&buf[..n]).await.unwrap();
                // The server commits; its answer is dropped on the way back.
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            break;
        }
        if out_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    back.abort();
}

/// Runs a test body once per backend: `mod NAME { fn sqlite; fn postgres }`, each calling `NAME(place)`.
#[allow(unused_macros)]
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(crate::backends::Place::sqlite()).await;
            }

            #[tokio::test]
            async fn postgres() {
                let test = concat!(module_path!(), "::postgres");
                if let Some(place) = crate::backends::Place::postgres(test).await {
                    super::$name(place).await;
                }
            }
        }
    )+};
}
