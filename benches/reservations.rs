//! Budget reservations per second, and the latency of one (p50, p99), with 1 and with 8 processes reserving from one
//! budget at once, on a SQLite file and on a PostgreSQL server, in one run:
//!
//! ```text
//! export TERMS_TEST_POSTGRES=$(scripts/pg-test-server start)
//! cargo bench --bench reservations
//! ```
//!
//! A reservation is one `begin` that reserves (a new purchase, a budget with room): one durable transaction that
//! checks the budget's window and records the intent and its reservation. Each process is this binary again, run
//! with `TERMS_BENCH_CHILD`; it makes `PER_PROCESS` reservations as fast as it can and prints each one's latency.
//! Without `TERMS_TEST_POSTGRES` the PostgreSQL rows say they were skipped.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ruint::aliases::U256;
use serde_json::{Map, json};
use terms::safety::journal::{JournalConfig, JournalTarget};
use terms::safety::{Begun, Claim, Intent};
use terms::{Chosen, Quote, atr_hash};

const CHILD: &str = "TERMS_BENCH_CHILD";
const PER_PROCESS: usize = 400;

fn config() -> JournalConfig {
    // Eight processes queue for one budget: a reservation may wait its turn a while.
    JournalConfig { busy_timeout: Duration::from_secs(60), ..JournalConfig::default() }
}

/// One process: `PER_PROCESS` reservations, each latency printed in microseconds.
fn child(spec: &str) {
    let (id, target) = spec.split_once('|').unwrap();
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
    let claims = [Claim::new("day", "", "eip155:8453/0xAsset", 86_400, U256::MAX, U256::from(1))];
    let mut out = String::new();
    runtime.block_on(async {
        for i in 0..PER_PROCESS {
            let (key, attempt) = (format!("p{id}-k{i}"), format!("p{id}-a{i}"));
            let intent =
                Intent::new(&key, &attempt, "eip155:8453:0xBuyer", &h, &chosen, &quote, 1_000).with_claims(&claims);
            let started = Instant::now();
            let begun = journal.begin(&intent).await.unwrap();
            let took = started.elapsed();
            assert!(matches!(begun, Begun::Fresh), "{begun:?}");
            out.push_str(&format!("{}\n", took.as_micros()));
        }
    });
    print!("{out}");
}

/// One row: `processes` processes at once on a fresh journal at `target`.
fn row(backend: &str, target: &str, processes: usize) {
    // Created (and migrated) once before the processes start.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    drop(runtime.block_on(JournalTarget::parse(target).unwrap().open(config())).unwrap());
    let started = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|id| {
            Command::new(std::env::current_exe().unwrap())
                .env(CHILD, format!("{id}|{target}"))
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
        "{backend:<10} {processes:>2} process{} {:>6} reservations {rate:>9.0}/s   p50 {:>7.2} ms   p99 {:>7.2} ms",
        if processes == 1 { " " } else { "es" },
        latencies.len(),
        at(0.50) as f64 / 1000.0,
        at(0.99) as f64 / 1000.0,
    );
}

/// A schema of its own on the server, as a URL that works in it.
fn fresh_schema(server: &str, n: usize) -> String {
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
    println!("budget reservations, {PER_PROCESS} per process, all from one budget (one durable transaction each)");
    let dir = tempfile::tempdir().unwrap();
    for processes in [1, 8] {
        let file = dir.path().join(format!("journal-{processes}.db"));
        row("sqlite", &format!("sqlite://{}", file.display()), processes);
    }
    match std::env::var("TERMS_TEST_POSTGRES") {
        Ok(server) if !server.is_empty() => {
            for processes in [1, 8] {
                row("postgres", &fresh_schema(&server, processes), processes);
            }
        }
        _ => {
            println!("postgres   skipped: TERMS_TEST_POSTGRES not set (export it from `scripts/pg-test-server start`)")
        }
    }
}
