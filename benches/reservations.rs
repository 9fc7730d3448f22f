//! Budget reservations per second, and the latency of one (p50, p99), with 1 and with 8 processes reserving from one
//! budget at once, on a SQLite file and on a PostgreSQL server, with 10^3, 10^4, 10^5 and 10^6 reservations already
//! in the budget's window; and the history and budget reads at each size:
//!
//! ```text
//! export TERMS_TEST_POSTGRES=$(scripts/pg-test-server start)
//! cargo bench --bench reservations                 # TERMS_BENCH_SIZES=1000,1000000 for fewer sizes
//! scripts/bench-reservations-ab                    # the same beside main's code, built from the same bench file
//! ```
//!
//! A reservation is one `begin` that reserves (a new purchase, a budget with room): one durable transaction that
//! checks the budget's window and records the intent and its reservation. The window is filled first by bulk SQL
//! (rows as a journal of schema version 2 holds them; a build that keeps running totals migrates them when it opens
//! the journal, and the time that takes is printed). Each process is this binary again, run with
//! `TERMS_BENCH_CHILD`; it makes its reservations as fast as it can and prints each one's latency. Without
//! `TERMS_TEST_POSTGRES` the PostgreSQL rows say they were skipped. The same file builds against the code before
//! issue 46 (it uses only the API both have), so `scripts/bench-reservations-ab` runs it on both.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ruint::aliases::U256;
use serde_json::{Map, json};
use terms::safety::journal::{HistoryFilter, JournalConfig, JournalTarget};
use terms::safety::{Begun, Claim, Intent};
use terms::{Chosen, Quote, atr_hash};

const CHILD: &str = "TERMS_BENCH_CHILD";
/// The intents' time: every filled row is in the day before it.
const NOW: u64 = 10_000_000;
const WINDOW: u64 = 86_400;
/// Reservations made in each row: by the one process, and by each of the eight.
const ONE: usize = 200;
const EACH_OF_EIGHT: usize = 50;

fn config() -> JournalConfig {
    // Eight processes queue for one budget: a reservation may wait its turn a while.
    JournalConfig { busy_timeout: Duration::from_secs(600), ..JournalConfig::default() }
}

/// One process: `count` reservations, each latency printed in microseconds.
fn child(spec: &str) {
    let mut parts = spec.splitn(3, '|');
    let (id, count, target) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let count: usize = count.parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let journal = runtime.block_on(JournalTarget::parse(target).unwrap().open(config())).unwrap();
    let chosen = Chosen {
        pairing: "x402/exact/eip3009".into(),
        build_input: Map::from_iter([("option".to_string(), json!({"amount": "1"}))]),
        reference: "ref-0123456789abcdef0123456789ab".into(),
        agreement: None,
    };
    let quote = Quote::new(U256::from(1), "0xAsset", "0xPayee", "eip155:8453", "exact");
    let h = atr_hash(b"terms");
    let claims = [Claim::new("day", "", "eip155:8453/0xAsset", WINDOW, U256::MAX, U256::from(1))];
    let mut out = String::new();
    runtime.block_on(async {
        for i in 0..count {
            let (key, attempt) = (format!("p{id}-k{i}"), format!("p{id}-a{i}"));
            let intent =
                Intent::new(&key, &attempt, "eip155:8453:0xBuyer", &h, &chosen, &quote, NOW).with_claims(&claims);
            let started = Instant::now();
            let begun = journal.begin(&intent).await.unwrap();
            let took = started.elapsed();
            assert!(matches!(begun, Begun::Fresh), "{begun:?}");
            out.push_str(&format!("{}\n", took.as_micros()));
        }
    });
    print!("{out}");
}

/// The filled rows' SQL: `{series}` is the backend's series of `0..=n-1` as `i`. Half settled (committed), half
/// unknown (reserved), all in the window; one in a thousand to a rarer payee.
fn rows_sql(series: &str, no: &str) -> String {
    format!(
        "INSERT INTO {{a}} (attempt, key, role, pairing, account, h, payee, chosen, quote, stage, payment_state, \
         execution, retry, moving, created_at, updated_at) SELECT 'f' || i, 'f' || i, 'payment', \
         'x402/exact/eip3009', 'eip155:8453:0xBuyer', '0x{zero}', CASE WHEN i % 1000 = 0 THEN '0xRare' ELSE \
         '0xPayee' END, '{{}}', '{{\"amount\":\"1\"}}', 'answered', CASE i % 2 WHEN 0 THEN 'settled' ELSE 'unknown' END, \
         'not-started', 'forbidden', {no}, {NOW} - 1 - i % 80000, {NOW} - 1 - i % 80000 FROM {series}; \
         INSERT INTO {{r}} (attempt, budget, scope, asset, window_seconds, amount, at, state) \
         SELECT 'f' || i, 'day', '', 'eip155:8453/0xAsset', {WINDOW}, '1', {NOW} - 1 - i % 80000, \
         CASE i % 2 WHEN 0 THEN 'committed' ELSE 'reserved' END FROM {series};",
        zero = "0".repeat(64),
    )
}

/// Fills the journal at `target` (created first by the build under test) with `n` rows, as schema version 2: a build
/// that keeps running totals finds version 2 and migrates (filling them) when it next opens it.
fn fill(target: &str, n: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    drop(runtime.block_on(JournalTarget::parse(target).unwrap().open(config())).unwrap());
    if let Some(path) = target.strip_prefix("sqlite://") {
        let conn = rusqlite::Connection::open(path).unwrap();
        let series = format!(
            "(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {}) SELECT i FROM s)",
            n - 1
        );
        let rows = rows_sql(&series, "0").replace("{a}", "attempts").replace("{r}", "reservations");
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS budget_totals; DROP TABLE IF EXISTS budget_faults; \
             DROP INDEX IF EXISTS attempts_by_payee; DROP INDEX IF EXISTS attempts_by_state; \
             DROP INDEX IF EXISTS attempts_by_nonce; \
             CREATE INDEX IF NOT EXISTS reservations_by_budget ON reservations (budget, scope, asset, at); \
             PRAGMA user_version = 2; BEGIN; {rows} COMMIT;"
        ))
        .unwrap();
        return;
    }
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(target, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        let rows = rows_sql(&format!("generate_series(0, {}) AS s(i)", n - 1), "false");
        let rows = rows.replace("{a}", "terms_attempts").replace("{r}", "terms_reservations");
        client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS terms_budget_totals, terms_budget_faults; \
                 DROP FUNCTION IF EXISTS terms_begin, terms_move, terms_window, terms_nonce_user; \
                 DROP INDEX IF EXISTS terms_attempts_by_payee, terms_attempts_by_state, terms_attempts_by_nonce; \
                 CREATE INDEX IF NOT EXISTS terms_reservations_by_budget ON terms_reservations \
                 (budget, scope, asset, at); DELETE FROM terms_schema WHERE version > 2; {rows} ANALYZE;"
            ))
            .await
            .unwrap();
    });
}

/// Opens the filled journal (a build with running totals migrates it here) and times the reads a person asks for.
fn open_and_read(target: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let started = Instant::now();
        let journal = JournalTarget::parse(target).unwrap().open(config()).await.unwrap();
        let open = started.elapsed();
        let time = |started: Instant| format!("{:.1} ms", started.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let newest = journal.history(&HistoryFilter::new().limit(20)).await.unwrap();
        let history = time(t);
        let t = Instant::now();
        let rare = journal.history(&HistoryFilter::new().payee("0xRare").limit(20)).await.unwrap();
        let by_payee = time(t);
        let t = Instant::now();
        let used = journal.budget("day", "", "eip155:8453/0xAsset", WINDOW, U256::MAX, NOW).await.unwrap();
        let budget = time(t);
        assert!(newest.len() == 20 && !rare.is_empty() && used.spent > U256::ZERO);
        format!(
            "open (and migrate) {:.2} s; history(20) {history}; history(payee, 20) {by_payee}; budget {budget}",
            open.as_secs_f64()
        )
    })
}

/// One row: `processes` processes at once on the journal at `target`.
fn row(backend: &str, target: &str, filled: u64, processes: usize) {
    let count = if processes == 1 { ONE } else { EACH_OF_EIGHT };
    let started = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|id| {
            Command::new(std::env::current_exe().unwrap())
                .env(CHILD, format!("{filled}x{processes}-{id}|{count}|{target}"))
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut latencies: Vec<u64> = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a process failed");
        latencies.extend(String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse::<u64>().unwrap()));
    }
    let wall = started.elapsed();
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    let rate = latencies.len() as f64 / wall.as_secs_f64();
    println!(
        "{backend:<10} {filled:>8} in window {processes:>2} process{} {:>4} reservations {rate:>8.0}/s   p50 {:>8.2} ms   \
         p99 {:>8.2} ms",
        if processes == 1 { " " } else { "es" },
        latencies.len(),
        at(0.50) as f64 / 1000.0,
        at(0.99) as f64 / 1000.0,
    );
}

/// A schema of its own on the server, as a URL that works in it.
fn fresh_schema(server: &str, n: u64) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let name = format!("bench{}_{n}", std::process::id());
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(server, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        client.batch_execute(&format!("CREATE SCHEMA {name}")).await.unwrap();
    });
    let joint = if server.contains('?') { '&' } else { '?' };
    format!("{server}{joint}options=-c%20search_path%3D{name}")
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        child(&spec);
        return;
    }
    let sizes: Vec<u64> = std::env::var("TERMS_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,10000,100000,1000000".into())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    println!("budget reservations from one budget (one durable transaction each), with rows already in its window");
    let dir = tempfile::tempdir().unwrap();
    let server = std::env::var("TERMS_TEST_POSTGRES").ok().filter(|s| !s.is_empty());
    for &n in &sizes {
        let file = dir.path().join(format!("journal-{n}.db"));
        let mut targets = vec![("sqlite", format!("sqlite://{}", file.display()))];
        if let Some(server) = &server {
            targets.push(("postgres", fresh_schema(server, n)));
        }
        for (backend, target) in targets {
            fill(&target, n);
            println!("{backend:<10} {n:>8} in window: {}", open_and_read(&target));
            for processes in [1, 8] {
                row(backend, &target, n, processes);
            }
        }
    }
    if server.is_none() {
        println!("postgres   skipped: TERMS_TEST_POSTGRES not set (export it from `scripts/pg-test-server start`)");
    }
}
