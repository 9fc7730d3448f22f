//! The embedded journal: one SQLite file the caller names, in WAL mode with `synchronous = FULL`, so a write that
//! returns is on disk, and other processes on the same machine share the file (two writers serialize on
//! `BEGIN IMMEDIATE`; readers never wait). It needs a local file system: WAL does not work over a network share.
//!
//! rusqlite is synchronous and the library runs on no runtime of its own, so each call does its SQLite work inside
//! the future, on the thread that polls it, under one mutex per journal. That is what a local file costs anyway
//! (one fsync of the WAL per write); a caller that must not block its executor's thread runs the gate where it may.
//!
//! # Schema (version 3, in `PRAGMA user_version`; `PRAGMA application_id` marks the file as a journal)
//!
//! ```sql
//! CREATE TABLE atr (h TEXT PRIMARY KEY, bytes BLOB NOT NULL);  -- once per H, `0x` and 64 hex digits
//! CREATE TABLE attempts (
//!   attempt TEXT PRIMARY KEY, key TEXT NOT NULL, role TEXT NOT NULL, pairing TEXT NOT NULL,
//!   account TEXT NOT NULL, h TEXT NOT NULL, payee TEXT NOT NULL,
//!   purchase TEXT, chosen TEXT NOT NULL, quote TEXT NOT NULL,              -- JSON
//!   stage TEXT NOT NULL, payment_state TEXT NOT NULL, execution TEXT NOT NULL, response TEXT, retry TEXT NOT NULL,
//!   moving INTEGER NOT NULL,                                               -- 0 or 1
//!   payment TEXT, answer TEXT, decline TEXT,                               -- JSON
//!   cause TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, -- Unix seconds
//!   prepared TEXT);                                                        -- JSON, version 2
//! CREATE INDEX attempts_by_key ON attempts (key, role);
//! CREATE INDEX attempts_by_time ON attempts (created_at);
//! CREATE TABLE reservations (
//!   attempt TEXT NOT NULL REFERENCES attempts (attempt), budget TEXT NOT NULL, scope TEXT NOT NULL,
//!   asset TEXT NOT NULL, window_seconds INTEGER NOT NULL, amount TEXT NOT NULL,  -- decimal atomic units
//!   at INTEGER NOT NULL, state TEXT NOT NULL);                                   -- reserved|committed|released
//! CREATE INDEX reservations_by_attempt ON reservations (attempt);
//! -- version 3: running totals per budget and bucket (`buckets`), the budgets `terms journal check` found wrong
//! CREATE TABLE budget_totals (budget, scope, asset, level, bucket, committed BLOB, reserved BLOB,  -- 40 bytes BE
//!   PRIMARY KEY (budget, scope, asset, level, bucket)) WITHOUT ROWID;
//! CREATE TABLE budget_faults (budget, scope, asset, buckets, found_at, PRIMARY KEY (budget, scope, asset));
//! CREATE INDEX attempts_by_payee ON attempts (payee, created_at);     -- history by payee
//! CREATE INDEX attempts_by_state ON attempts (payment_state, created_at);  -- history by state
//! CREATE INDEX attempts_by_nonce ON attempts (h, account, pairing);   -- one nonce per payer
//! ```
//!
//! Version 2 adds `prepared` (what the wallet is asked, recorded before it is asked); version 3 the running totals
//! (filled from the reservations' rows) and indexes, and drops the reservations' index by budget and time (version
//! 2's). An older file is migrated when it is opened for writing, in one transaction (a version 1 file's attempts
//! keep `prepared` NULL; a migration cut short leaves the file as it was). A file opened read-only is read as it
//! is, its totals computed in memory.
//!
//! The states are written as [`PaymentState::as_str`](super::PaymentState::as_str) and its siblings write them; the
//! "newest" attempt of a key is the last inserted (`rowid`).

mod approvals;
#[cfg(test)]
mod plans;
mod read;
mod totals;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use ruint::aliases::U256;
use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use super::{BudgetFault, BudgetUse, HistoryFilter, JournalConfig, Record, Store, rules};
use crate::gate::{Answered, Begun, Ended, Intent, JournalError, Prepared, SpendJournal};
use crate::hash::AtrHash;
use crate::signer::BoxFuture;

/// The schema version this build writes and reads (it reads versions 1 and 2 too, and migrates them when it may
/// write).
const SCHEMA_VERSION: i64 = 3;

/// From version 1: what the wallet is asked, recorded before it is asked.
const TO_V2: &str = "ALTER TABLE attempts ADD COLUMN prepared TEXT;";

/// `PRAGMA application_id` of a journal: `term` in ASCII.
const APPLICATION_ID: i64 = 0x7465_726d;

const SCHEMA: &str = concat!(
    "
CREATE TABLE atr (h TEXT PRIMARY KEY, bytes BLOB NOT NULL);
CREATE TABLE attempts (
  attempt TEXT PRIMARY KEY,",
    rules::attempt_columns!(),
    "
  moving INTEGER NOT NULL CHECK (moving IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  prepared TEXT
);
CREATE INDEX attempts_by_key ON attempts (key, role);
CREATE INDEX attempts_by_time ON attempts (created_at);
CREATE TABLE reservations (",
    rules::reservation_columns!(),
    "
  attempt TEXT NOT NULL REFERENCES attempts (attempt),
  window_seconds INTEGER NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX reservations_by_attempt ON reservations (attempt);
"
);
// A new file is created as version 2 was, then migrated to version 3 like any other (one transaction).

/// A journal in one SQLite file: a [`SpendJournal`] for the gate and a [`Store`] to read it back. Every write is
/// one `BEGIN IMMEDIATE` transaction, durable when it returns; a write that fails records nothing.
pub struct SqliteJournal {
    conn: Mutex<Connection>,
    path: PathBuf,
    config: JournalConfig,
}

impl fmt::Debug for SqliteJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteJournal").field("path", &self.path).field("config", &self.config).finish_non_exhaustive()
    }
}

/// Why a call failed, before the file's name is put to it.
#[derive(Debug)]
enum Fail {
    /// SQLite refused.
    Sql(rusqlite::Error),
    /// The journal refused (the sentence says why).
    Refused(String),
}

impl From<rusqlite::Error> for Fail {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sql(error)
    }
}

/// What a call was doing when it failed, for its error's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doing {
    Open,
    Read,
    Write,
}

impl SqliteJournal {
    /// Opens (or creates) the journal at `path` with the default [`JournalConfig`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        Self::open_with(path, JournalConfig::default())
    }

    /// Opens (or creates) the journal at `path`: WAL, `synchronous = FULL`, foreign keys on, the busy timeout and
    /// size bound of `config`, and the schema where the file has none. A file that is not a SQLite database, is a
    /// database of something else, or holds a journal of a newer schema is refused with a sentence that says so.
    pub fn open_with(path: impl AsRef<Path>, config: JournalConfig) -> Result<Self, JournalError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Self::start(path.as_ref(), config, flags)
    }

    /// Opens an existing journal to read it back ([`Store`]) and write nothing: every write fails, recording
    /// nothing.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Self::start(path.as_ref(), JournalConfig::default(), flags)
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn start(path: &Path, config: JournalConfig, flags: OpenFlags) -> Result<Self, JournalError> {
        let read_only = flags.contains(OpenFlags::SQLITE_OPEN_READ_ONLY);
        let fail = |e: Fail| error(path, &config, Doing::Open, e);
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| fail(e.into()))?;
        prepare(&mut conn, &config, read_only).map_err(fail)?;
        if !read_only {
            approvals::create(&mut conn).map_err(fail)?;
        }
        Ok(Self { conn: Mutex::new(conn), path: path.to_path_buf(), config })
    }

    /// Runs `work` in one `BEGIN IMMEDIATE` transaction and commits it; on any failure nothing is written.
    fn write<T>(&self, work: impl FnOnce(&Transaction<'_>) -> Result<T, Fail>) -> Result<T, JournalError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let run = || -> Result<T, Fail> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = work(&tx)?;
            tx.commit()?;
            Ok(out)
        };
        run().map_err(|e| error(&self.path, &self.config, Doing::Write, e))
    }

    /// Runs `work` in one read transaction (one snapshot of the file).
    fn read<T>(&self, work: impl FnOnce(&Transaction<'_>) -> Result<T, Fail>) -> Result<T, JournalError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let run = || -> Result<T, Fail> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
            work(&tx)
        };
        run().map_err(|e| error(&self.path, &self.config, Doing::Read, e))
    }
}

/// Reads the file's header first (so a file that is not a database says so before anything is written to it),
/// then sets the connection up and creates the schema where there is none.
fn prepare(conn: &mut Connection, config: &JournalConfig, read_only: bool) -> Result<(), Fail> {
    conn.busy_timeout(config.busy_timeout)?;
    let version = check_version(conn)?;
    if !read_only {
        let mode = wal(conn, config.busy_timeout)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Fail::Refused(format!("it cannot be put in WAL mode (its journal mode stays {mode})")));
        }
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    if let Some(max) = config.max_bytes {
        let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let pages = i64::try_from(max).unwrap_or(i64::MAX) / page.max(1);
        conn.pragma_update(None, "max_page_count", pages.max(1))?;
    }
    if version < SCHEMA_VERSION {
        if read_only && version == 0 {
            return Err(Fail::Refused("it holds no journal, and is opened read-only".into()));
        }
        if read_only {
            // A journal of an older version read as it is, unchanged: what it lacks stands in this connection's own
            // temporary schema (which names resolve first). A version 1 file's attempts have no `prepared` column,
            // so a view reads them with it NULL; the running totals are computed from its rows.
            if version == 1 {
                conn.execute_batch(
                    "CREATE TEMP VIEW attempts AS SELECT rowid AS rowid, *, NULL AS prepared FROM main.attempts",
                )?;
            }
            conn.execute_batch(totals::TEMP)?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
            totals::fill(&tx)?;
            tx.commit()?;
            return Ok(());
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have created or migrated it meanwhile: look again under the write lock.
        match check_version(&tx)? {
            0 => {
                let tables: i64 =
                    tx.query_row("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'", [], |r| {
                        r.get(0)
                    })?;
                if tables > 0 {
                    return Err(Fail::Refused("it is a SQLite database of something else, not a journal".into()));
                }
                tx.execute_batch(SCHEMA)?;
                tx.pragma_update(None, "application_id", APPLICATION_ID)?;
                tx.execute_batch(totals::TO_V3)?;
            }
            from @ (1 | 2) => {
                if from == 1 {
                    tx.execute_batch(TO_V2)?;
                }
                // The running totals of every budget, from its rows: in the transaction that sets the version, so a
                // migration cut short leaves version 2 as it was, and the next open runs it again.
                tx.execute_batch(totals::TO_V3)?;
                totals::fill(&tx)?;
            }
            _ => {}
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
    }
    Ok(())
}

/// Puts the file in WAL mode and answers the mode it is in. The switch needs the file to itself, and where another
/// connection is switching it too SQLite answers "busy" at once instead of calling the busy handler (two
/// connections that each hold a read lock and wait for the other would never end): eight processes opening one new
/// journal at once meet it. So the switch is tried again, as the busy handler would, until the busy timeout.
fn wal(conn: &Connection, busy: Duration) -> Result<String, Fail> {
    let deadline = Instant::now() + busy;
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)) {
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            mode => return Ok(mode?),
        }
    }
}

/// The file's schema version: 0 for a file with no journal yet; a newer version, or a version set by something
/// other than a journal, refuses.
fn check_version(conn: &Connection) -> Result<i64, Fail> {
    // One statement, so one read of the file: read apart, a journal another process created between the two could
    // show its application id beside the version 0 it had before (a journal of "version 0", refused).
    let (version, application): (i64, i64) = conn.query_row(
        "SELECT u.user_version, a.application_id FROM pragma_user_version AS u, pragma_application_id AS a",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if version == 0 && application == 0 {
        return Ok(0);
    }
    if application != APPLICATION_ID {
        return Err(Fail::Refused("it is a SQLite database of something else, not a journal".into()));
    }
    if !(1..=SCHEMA_VERSION).contains(&version) {
        return Err(Fail::Refused(format!(
            "it holds a journal of schema version {version}, and this build reads version {SCHEMA_VERSION} (a newer \
             build wrote it)"
        )));
    }
    Ok(version)
}

/// The error a caller reads: what failed, on which file, and (for a write) that nothing was recorded.
fn error(path: &Path, config: &JournalConfig, doing: Doing, fail: Fail) -> JournalError {
    let file = path.display();
    let nothing = if doing == Doing::Write { ": nothing was recorded" } else { "" };
    let text = match fail {
        Fail::Refused(why) if doing == Doing::Open => format!("the journal file {file} cannot be used: {why}"),
        Fail::Refused(why) => format!("{why}{nothing}"),
        Fail::Sql(e) => match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => format!("the journal file {file} is not a SQLite database"),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => format!(
                "the journal file {file} is locked by another process (it was not free within {} ms){nothing}",
                config.busy_timeout.as_millis()
            ),
            Some(ErrorCode::DiskFull) => format!("the journal file {file} is full{nothing}"),
            Some(ErrorCode::ReadOnly) => format!("the journal file {file} is read-only{nothing}"),
            Some(ErrorCode::CannotOpen) => format!("the journal file {file} cannot be opened: {e}"),
            Some(ErrorCode::SystemIoFailure) if doing == Doing::Write => {
                format!("the journal file {file} failed to write ({e}): whether the write is on disk is not known")
            }
            _ => format!("the journal file {file} failed: {e}{nothing}"),
        },
    };
    JournalError(text)
}

impl SpendJournal for SqliteJournal {
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(async move { self.write(|tx| write::begin(tx, intent, self.config)) })
    }

    fn look<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(async move { self.read(|tx| write::look(tx, intent, self.config)) })
    }

    fn stepped<'a>(&'a self, attempt: &'a str, prepared: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(|tx| write::stepped(tx, attempt, prepared)) })
    }

    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(|tx| write::moving(tx, attempt)) })
    }

    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(|tx| write::signed(tx, attempt, bytes, payment)) })
    }

    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(|tx| write::ended(tx, attempt, ended)) })
    }

    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move { self.write(|tx| write::answered(tx, attempt, answered)) })
    }
}

impl Store for SqliteJournal {
    fn record<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, JournalError>> {
        Box::pin(async move { self.read(|tx| read::record(tx, key)) })
    }

    fn attempts<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(async move { self.read(|tx| read::attempts(tx, key)) })
    }

    fn history<'a>(&'a self, filter: &'a HistoryFilter) -> BoxFuture<'a, Result<Vec<Record>, JournalError>> {
        Box::pin(async move { self.read(|tx| read::history(tx, filter)) })
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
        Box::pin(async move { self.read(|tx| Ok(totals::window(tx, budget, scope, asset, window, now)?.usage(limit))) })
    }

    fn atr<'a>(&'a self, h: &'a AtrHash) -> BoxFuture<'a, Result<Option<Vec<u8>>, JournalError>> {
        Box::pin(async move { self.read(|tx| read::atr(tx, h)) })
    }

    fn check_budgets(&self, repair: bool) -> BoxFuture<'_, Result<Vec<BudgetFault>, JournalError>> {
        Box::pin(async move { self.write(|tx| totals::check(tx, repair)) })
    }
}
