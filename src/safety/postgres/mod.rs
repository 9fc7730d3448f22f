//! The journal and budgets on a PostgreSQL server (feature `postgres`): one record of every payment and one budget
//! that agent processes on many machines share, with the same records, states, ATR store and budgets as the SQLite
//! journal ([`SqliteJournal`](crate::safety::journal::SqliteJournal)), behind the same [`SpendJournal`] and
//! [`Store`]. What each write decides is the same code for both; only the SQL differs.
//!
//! ```no_run
//! # async fn run() -> Result<(), terms::safety::JournalError> {
//! use std::sync::Arc;
//! use terms::safety::postgres::PostgresJournal;
//!
//! let journal = Arc::new(PostgresJournal::connect("postgres://agent@db.internal/payments?sslmode=require").await?);
//! let options = terms::Options::new().journal(journal);
//! # let _ = options; Ok(()) }
//! ```
//!
//! # How it holds up
//!
//! - **No overspending.** `begin` is one transaction that locks the purchase and then each budget it claims
//!   (`pg_advisory_xact_lock` on a 64-bit key of the names, taken in one order, so two begins never wait on each
//!   other in a circle; held until the commit, and written nowhere, so a refused begin costs no disk flush), and only
//!   then sums the window and inserts the reservations: two processes reserving from one budget take turns,
//!   whatever machine they run on. The attempts of the purchase it reads are row-locked (`FOR UPDATE`), so an attempt
//!   being signed at that moment is read as its write left it.
//! - **Durable.** A write returns once PostgreSQL committed it (the server's `synchronous_commit`, on by default).
//! - **A dropped connection.** A write whose connection fails before its commit was sent is rolled back by the
//!   server and run again on a new connection (until [`JournalConfig::busy_timeout`] has passed); a reservation
//!   it made is gone with it. A connection that fails while the commit is on its way leaves the outcome unknown:
//!   the journal reconnects and looks. A `begin` whose attempt is there was committed (`Fresh`, its reservation
//!   found, never made twice); any other write that is there as it was asked is done; otherwise it runs again.
//! - **A server restart.** The pool drops its dead connections and opens new ones; writes that fail meanwhile
//!   record nothing and say so, and the agent goes on when the server is back.
//!
//! # Schema
//!
//! The crate creates its tables (all named `terms_…`, in the connection's current schema, so one database can hold
//! other things, or several journals in several schemas) and migrates them: `terms_schema` lists each version
//! applied, once. Two processes that start together take turns on an advisory lock, and the second finds the work
//! done. A database migrated by a newer build is refused (never migrated down); a user that may not create
//! tables can use a journal a user that may has created, and is told so where there is none yet.
//! [`JournalConfig::busy_timeout`] is also the server's `lock_timeout` for the journal's connections.
//! [`JournalConfig::max_bytes`] is for SQLite files and is not used here.
//!
//! # Connection strings
//!
//! `postgres://user:password@host:port/database?sslmode=…` or the `key=value` form, as libpq reads them (the
//! options tokio-postgres knows). TLS is rustls with the platform's roots: `sslmode=require` needs it, `prefer` (the
//! default) uses it where the server offers it, `disable` never does.

mod approvals;
#[cfg(test)]
mod plans;
mod read;
mod schema;
mod totals;
mod write;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime, Timeouts};
use ruint::aliases::U256;
use tokio_postgres::error::SqlState;

use super::journal::{BudgetFault, BudgetUse, HistoryFilter, JournalConfig, Record, Store};
use crate::gate::{Answered, Begun, Ended, Intent, JournalError, Prepared, SpendJournal};
use crate::hash::AtrHash;
use crate::signer::BoxFuture;

pub use schema::SCHEMA_VERSION;

/// How many connections one journal keeps open at most.
const POOL_SIZE: usize = 4;

/// A journal on a PostgreSQL server: a [`SpendJournal`] for the gate and a [`Store`] to read it back. Every write is
/// one transaction, durable when it returns; a write that fails records nothing, or says it does not know.
pub struct PostgresJournal {
    pool: Pool,
    /// The server and database, without the password (for errors and `Debug`).
    target: String,
    config: JournalConfig,
}

impl fmt::Debug for PostgresJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresJournal")
            .field("target", &self.target)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why a call failed, before the server's name is put to it.
#[derive(Debug)]
enum Fail {
    /// PostgreSQL (or the connection to it) failed.
    Sql(tokio_postgres::Error),
    /// No connection could be had.
    Pool(PoolError),
    /// The journal refused (the sentence says why).
    Refused(String),
    /// The server did not answer within the time a call may take (a network that drops packets without a word).
    Silent(Duration),
}

impl From<tokio_postgres::Error> for Fail {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::Sql(error)
    }
}

impl From<PoolError> for Fail {
    fn from(error: PoolError) -> Self {
        Self::Pool(error)
    }
}

impl Fail {
    /// Whether the failure was the connection's (the server is down, restarting, or the link broke), not an
    /// answer: the transaction is gone on the server's side, and the same work may be tried on a new connection.
    fn is_connection(&self) -> bool {
        match self {
            Self::Sql(e) | Self::Pool(PoolError::Backend(e)) => lost(e),
            Self::Pool(PoolError::Timeout(deadpool_postgres::TimeoutType::Create)) | Self::Silent(_) => true,
            Self::Pool(_) | Self::Refused(_) => false,
        }
    }

    /// Whether the server rolled the transaction back to break a race (a deadlock, a serialization failure):
    /// running it again is what it asks for.
    fn is_race(&self) -> bool {
        let Self::Sql(e) = self else { return false };
        e.code().is_some_and(|c| *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE)
    }
}

/// Whether an error is the connection's: no answer from the server (the link broke, nothing listens), a connection
/// exception (class 08), or the server shutting down or starting up. A password refused is an answer.
fn lost(e: &tokio_postgres::Error) -> bool {
    match e.code() {
        None => true,
        Some(code) => {
            code.code().starts_with("08")
                || [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW].contains(code)
        }
    }
}

/// What a call was doing when it failed, for its error's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    Open,
    Read,
    Write,
}

impl PostgresJournal {
    /// Connects to the journal at `url` with the default [`JournalConfig`], creating or migrating its schema.
    pub async fn connect(url: &str) -> Result<Self, JournalError> {
        Self::connect_with(url, JournalConfig::default()).await
    }

    /// Connects to the journal at `url` (a `postgres://` URL or `key=value` pairs): one connection is opened and the
    /// schema created or migrated before this returns, so a string that does not parse, a server that cannot be
    /// reached, a database migrated by a newer build and a user that may not create the schema are each refused here
    /// with a sentence that says so (and the password never appears in it).
    pub async fn connect_with(url: &str, config: JournalConfig) -> Result<Self, JournalError> {
        let mut pg = tokio_postgres::Config::from_str(url).map_err(|e| {
            JournalError(format!("the journal's PostgreSQL connection string does not parse: {}", words(&e)))
        })?;
        let target = describe(&pg);
        let lock = format!("-c lock_timeout={}", config.busy_timeout.as_millis().max(1));
        let options = pg.get_options().map_or(lock.clone(), |o| format!("{o} {lock}"));
        pg.options(options);
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(config.busy_timeout.max(Duration::from_secs(1)));
        }
        if pg.get_application_name().is_none() {
            pg.application_name("terms-journal");
        }
        let tls = tls().map_err(|e| JournalError(format!("the journal on {target} cannot set up TLS: {e}")))?;
        let manager = Manager::from_config(pg, tls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let timeouts = Timeouts {
            wait: Some(config.busy_timeout),
            create: Some(config.busy_timeout.max(Duration::from_secs(1))),
            recycle: Some(config.busy_timeout),
        };
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .timeouts(timeouts)
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| JournalError(format!("the journal on {target} cannot be set up: {e}")))?;
        let journal = Self { pool, target, config };
        let migrate = async {
            let mut client = journal.pool.get().await?;
            schema::migrate(&mut client).await?;
            approvals::create(&mut client).await
        };
        migrate.await.map_err(|e| journal.error(Doing::Open, e))?;
        Ok(journal)
    }

    /// The server and database the journal is on, as `postgres://user@host:port/database` (no password).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Runs a write until it is done, refused, or past [`JournalConfig::busy_timeout`] (connection failures and
    /// races are tried again; each try is one transaction).
    async fn write(&self, op: write::Op<'_>) -> Result<write::Done, JournalError> {
        let deadline = tokio::time::Instant::now() + self.config.busy_timeout;
        let mut pause = Duration::from_millis(20);
        // Set once a commit may have gone through: the next try first looks whether it did.
        let mut unsure = false;
        loop {
            let tried = async {
                let mut client = self.pool.get().await?;
                if unsure && let Some(done) = write::applied(&client, &op).await? {
                    return Ok(Ok(done));
                }
                write::run(&mut client, &op, self.config).await
            };
            let fail = match bounded(deadline, tried).await {
                Ok(Ok(Ok(done))) => return Ok(done),
                Ok(Ok(Err(write::Commit(fail)))) => {
                    unsure |= fail.is_connection();
                    fail
                }
                Ok(Err(fail)) => fail,
                // Cut short where it was: its commit may have been on its way.
                Err(fail) => {
                    unsure = true;
                    fail
                }
            };
            let again = fail.is_race() || fail.is_connection();
            if !again || tokio::time::Instant::now() >= deadline {
                return Err(self.write_error(fail, unsure));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// Runs a read, tried again on a new connection while the connection fails, until the busy timeout.
    async fn read<T>(&self, op: read::Op<'_>, pick: impl Fn(read::Out) -> Option<T>) -> Result<T, JournalError> {
        let deadline = tokio::time::Instant::now() + self.config.busy_timeout;
        let mut pause = Duration::from_millis(20);
        loop {
            let tried = async {
                let mut client: Object = self.pool.get().await?;
                read::run(&mut client, &op).await
            };
            match bounded(deadline, tried).await.and_then(|out| out) {
                Ok(out) => {
                    return pick(out).ok_or_else(|| JournalError(format!("the journal on {} misread", self.target)));
                }
                Err(fail) if (fail.is_connection() || fail.is_race()) && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                Err(fail) => return Err(self.error(Doing::Read, fail)),
            }
        }
    }

    fn write_error(&self, fail: Fail, unsure: bool) -> JournalError {
        if unsure && fail.is_connection() {
            let target = &self.target;
            return JournalError(format!(
                "the journal on {target} lost its connection while committing, and could not look whether the \
                 write is recorded ({}): whether it is recorded is not known",
                text(&fail)
            ));
        }
        self.error(Doing::Write, fail)
    }

    /// The error a caller reads: what failed, on which server, and (for a write) that nothing was recorded.
    fn error(&self, doing: Doing, fail: Fail) -> JournalError {
        let target = &self.target;
        let nothing = if doing == Doing::Write { ": nothing was recorded" } else { "" };
        if let Fail::Refused(why) = &fail {
            return JournalError(match doing {
                Doing::Open => format!("the journal on {target} cannot be used: {why}"),
                _ => format!("{why}{nothing}"),
            });
        }
        if fail.is_connection() {
            return JournalError(format!(
                "the journal's PostgreSQL server {target} cannot be reached: {}{nothing}",
                text(&fail)
            ));
        }
        if let Fail::Sql(e) = &fail
            && e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
        {
            return JournalError(format!(
                "the journal on {target} is locked by another process (it was not free within {} ms){nothing}",
                self.config.busy_timeout.as_millis()
            ));
        }
        if let Fail::Pool(PoolError::Timeout(_)) = &fail {
            return JournalError(format!(
                "the journal on {target} had no free connection within {} ms{nothing}",
                self.config.busy_timeout.as_millis()
            ));
        }
        JournalError(format!("the journal on {target} failed: {}{nothing}", text(&fail)))
    }
}

/// Runs one try, given until `deadline` and a grace of a second (the server's own `lock_timeout` answers first);
/// past that, [`Fail::Silent`].
async fn bounded<T>(deadline: tokio::time::Instant, work: impl Future<Output = T>) -> Result<T, Fail> {
    let grace = Duration::from_secs(1);
    let room = deadline.saturating_duration_since(tokio::time::Instant::now()) + grace;
    tokio::time::timeout(room, work).await.map_err(|_| Fail::Silent(room))
}

/// A failure's words: the server's message (and detail) where it answered, else what broke.
fn text(fail: &Fail) -> String {
    match fail {
        Fail::Sql(e) => words(e),
        Fail::Pool(PoolError::Backend(e)) => words(e),
        Fail::Pool(e) => e.to_string(),
        Fail::Refused(why) => why.clone(),
        Fail::Silent(after) => format!("the server did not answer within {} ms", after.as_millis()),
    }
}

fn words(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// `postgres://user@host:port/database`, from a parsed configuration: never the password.
fn describe(pg: &tokio_postgres::Config) -> String {
    let user = pg.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let hosts: Vec<String> = pg
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let name = match host {
                tokio_postgres::config::Host::Tcp(name) => name.clone(),
                tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
            };
            let port = pg.get_ports().get(i).or(pg.get_ports().first()).copied().unwrap_or(5432);
            format!("{name}:{port}")
        })
        .collect();
    let hosts = if hosts.is_empty() { "localhost:5432".to_owned() } else { hosts.join(",") };
    format!("postgres://{user}{hosts}/{}", pg.get_dbname().or(pg.get_user()).unwrap_or_default())
}

/// rustls with the platform's certificate verifier, on the provider reqwest builds (aws-lc-rs).
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

impl SpendJournal for PostgresJournal {
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(async move {
            match self.write(write::Op::Begin(intent)).await? {
                write::Done::Begun(begun) => Ok(begun),
                _ => Err(JournalError(format!("the journal on {} misread", self.target))),
            }
        })
    }

    fn look<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(async move {
            self.read(read::Op::Look(intent, self.config), |out| match out {
                read::Out::Begun(begun) => Some(begun),
                _ => None,
            })
            .await
        })
    }

    fn stepped<'a>(&'a self, attempt: &'a str, prepared: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(write::Op::Stepped(attempt, prepared)).await.map(drop) })
    }

    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(write::Op::Moving(attempt)).await.map(drop) })
    }

    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(write::Op::Signed(attempt, bytes, payment)).await.map(drop) })
    }

    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(write::Op::Ended(attempt, ended)).await.map(drop) })
    }

    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(write::Op::Answered(attempt, answered)).await.map(drop) })
    }
}

impl Store for PostgresJournal {
    fn record<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, JournalError>> {
        Box::pin(async move {
            self.read(read::Op::Record(key), |out| match out {
                read::Out::Records(mut r) => Some(r.pop()),
                _ => None,
            })
            .await
        })
    }

    fn attempts<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(async move { self.read(read::Op::Attempts(key), read::Out::records).await })
    }

    fn history<'a>(&'a self, filter: &'a HistoryFilter) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(async move { self.read(read::Op::History(filter), read::Out::records).await })
    }

    fn budget<'a>(
        &'a self,
        budget: &'a str,
        scope: &'a str,
        asset: &'a str,
        window: u64,
        limit: U256,
        now: u64,
    ) -> BoxFuture<'a, Result<BudgetUse, JournalError>> {
        Box::pin(async move {
            let op = read::Op::Window { budget, scope, asset, window, now };
            self.read(op, |out| match out {
                read::Out::Held(held) => Some(held.usage(limit)),
                _ => None,
            })
            .await
        })
    }

    fn atr<'a>(&'a self, h: &'a AtrHash) -> BoxFuture<'a, Result<Option<Vec<u8>>, JournalError>> {
        Box::pin(async move {
            self.read(read::Op::Atr(h), |out| match out {
                read::Out::Atr(bytes) => Some(bytes),
                _ => None,
            })
            .await
        })
    }

    fn check_budgets(&self, repair: bool) -> BoxFuture<'_, Result<Vec<BudgetFault>, JournalError>> {
        Box::pin(async move {
            match self.write(write::Op::Check(repair)).await? {
                write::Done::Checked(faults) => Ok(faults),
                _ => Err(JournalError(format!("the journal on {} misread", self.target))),
            }
        })
    }
}
