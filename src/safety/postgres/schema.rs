//! The journal's tables on PostgreSQL and their migrations: each version applied once, in order, in one
//! transaction under an advisory lock, and listed in `terms_schema`.
//!
//! ```sql
//! CREATE TABLE terms_schema (version INTEGER PRIMARY KEY, crate_version TEXT NOT NULL, applied_at BIGINT NOT NULL);
//! -- version 1
//! CREATE TABLE terms_atr (h TEXT PRIMARY KEY, bytes BYTEA NOT NULL);         -- once per H
//! CREATE TABLE terms_attempts (seq BIGINT IDENTITY, attempt TEXT PRIMARY KEY, ...);      -- as SQLite's `attempts`
//! CREATE TABLE terms_reservations (seq BIGINT IDENTITY, attempt TEXT REFERENCES terms_attempts, ...);
//! -- version 2
//! ALTER TABLE terms_attempts ADD COLUMN prepared TEXT;                       -- what the wallet is asked
//! -- version 3 (`totals.rs`): running totals per budget and bucket, filled from the reservations
//! CREATE TABLE terms_budget_totals (budget, scope, asset, level, bucket, committed NUMERIC, reserved NUMERIC, ...);
//! CREATE TABLE terms_budget_faults (budget, scope, asset, buckets, found_at);  -- found by `terms journal check`
//! CREATE INDEX terms_attempts_by_payee / _by_state / _by_nonce;   -- history by payee, by state; one nonce per payer
//! DROP INDEX terms_reservations_by_budget;                                    -- no read scans a window any more
//! CREATE FUNCTION terms_window, terms_nonce_user, terms_move, terms_begin;   -- a reservation in one statement
//! ```
//!
//! JSON columns are `TEXT`, so a signed payment reads back byte for byte (`jsonb` would reorder its keys); times are
//! Unix seconds; amounts decimal text of atomic units; `seq` orders attempts and reservations as they were made.

use deadpool_postgres::Object;
use tokio_postgres::error::SqlState;

use super::Fail;
use crate::safety::journal::rules::{self, now};

/// The schema version this build migrates to and reads.
pub const SCHEMA_VERSION: i32 = 3;

/// The advisory lock every journal process takes to migrate: `termjnl1` in ASCII.
const MIGRATION_LOCK: i64 = 0x7465_726d_6a6e_6c31;

/// Each version's SQL, applied in order to reach it.
const MIGRATIONS: &[(i32, &str)] = &[(1, V1), (2, V2), (3, super::totals::V3)];

/// What the wallet is asked, recorded before it is asked (JSON text); attempts written before it keep NULL.
const V2: &str = "ALTER TABLE terms_attempts ADD COLUMN prepared TEXT;";

const V1: &str = concat!(
    "
CREATE TABLE terms_atr (h TEXT PRIMARY KEY, bytes BYTEA NOT NULL);
CREATE TABLE terms_attempts (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  attempt TEXT PRIMARY KEY,",
    rules::attempt_columns!(),
    "
  moving BOOLEAN NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX terms_attempts_by_key ON terms_attempts (key, role, seq);
CREATE INDEX terms_attempts_by_time ON terms_attempts (created_at);
CREATE TABLE terms_reservations (",
    rules::reservation_columns!(),
    "
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  attempt TEXT NOT NULL REFERENCES terms_attempts (attempt),
  window_seconds BIGINT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX terms_reservations_by_budget ON terms_reservations (budget, scope, asset, at);
CREATE INDEX terms_reservations_by_attempt ON terms_reservations (attempt);
"
);

/// The newest version applied, 0 where there is no `terms_schema`; a version past this build's refuses.
async fn version(client: &impl deadpool_postgres::GenericClient) -> Result<i32, Fail> {
    // Read from the catalog under this statement's snapshot, not with `to_regclass`: that answers from the session's
    // catalog cache, which a wait for the migration lock does not refresh, so under the lock it could still call
    // absent a `terms_schema` another process created and committed while this one waited (and migrate again).
    let exists: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n \
             ON n.oid = c.relnamespace WHERE c.relname = 'terms_schema' AND n.nspname = ANY (current_schemas(true)))",
            &[],
        )
        .await?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let version: Option<i32> = client.query_one("SELECT max(version) FROM terms_schema", &[]).await?.get(0);
    let version = version.unwrap_or(0);
    if version > SCHEMA_VERSION {
        return Err(Fail::Refused(format!(
            "it holds a journal of schema version {version}, and this build reads version {SCHEMA_VERSION} (a newer \
             build migrated it; a journal is never migrated down)"
        )));
    }
    Ok(version)
}

/// Brings the schema to [`SCHEMA_VERSION`]: nothing to do (and no right to create tables needed) where it is there;
/// otherwise every missing version, in one transaction under the migration lock.
pub(super) async fn migrate(client: &mut Object) -> Result<(), Fail> {
    if version(&*client).await? == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
    // Another process may have migrated it meanwhile: look again under the lock.
    let from = version(&tx).await?;
    if from < SCHEMA_VERSION {
        create(&tx, from).await.map_err(|e| match e.code() {
            Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => {
                let why = e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_owned());
                Fail::Refused(format!(
                    "its user may not create the journal's tables ({why}): connect once as a user that may (the \
                     database's owner, or one granted CREATE on the schema), and this user can then use them; \
                     nothing was changed"
                ))
            }
            _ => Fail::Sql(e),
        })?;
    }
    tx.commit().await?;
    Ok(())
}

/// Applies every version after `from`, each listed once in `terms_schema`.
async fn create(tx: &deadpool_postgres::Transaction<'_>, from: i32) -> Result<(), tokio_postgres::Error> {
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS terms_schema (version INTEGER PRIMARY KEY, crate_version TEXT NOT NULL, \
         applied_at BIGINT NOT NULL)",
    )
    .await?;
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > from) {
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO terms_schema (version, crate_version, applied_at) VALUES ($1, $2, $3)",
            &[version, &env!("CARGO_PKG_VERSION"), &now()],
        )
        .await?;
    }
    Ok(())
}
