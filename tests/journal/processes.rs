//! Eight processes, one journal (a SQLite file, a PostgreSQL database), one budget of 500: exactly 500 payments go
//! through, ten times over. And how long a payment's three durable writes take.

use std::process::Command;
use std::time::{Duration, Instant};

use ruint::aliases::U256;
use serde_json::json;
use terms::safety::journal::{HistoryFilter, JournalConfig};
use terms::safety::{Answered, Begun};

use super::backends::{Place, open_spec};
use super::{ATR, day, fx, intent, payment};

const WORKER: &str = "TERMS_JOURNAL_WORKER";
const WORKERS: usize = 8;
const PER_WORKER: usize = 200;
const LIMIT: u64 = 500;

/// One worker process: 200 payments, each begin, signed and answered (settled) where the budget lets it.
#[test]
#[ignore = "a child of eight_processes_never_pass_one_budget, run by it"]
fn journal_worker() {
    let Ok(spec) = std::env::var(WORKER) else { return };
    let (id, spec) = spec.split_once(':').unwrap();
    let config = JournalConfig { busy_timeout: Duration::from_secs(60), ..JournalConfig::default() };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let journal = runtime.block_on(open_spec(spec, config));
    let f = fx();
    let claims = day(LIMIT, 1);
    let (mut fresh, mut over) = (0, 0);
    runtime.block_on(async {
        for i in 0..PER_WORKER {
            let (key, attempt) = (format!("w{id}-k{i}"), format!("w{id}-a{i}"));
            match journal.begin(&intent(&f, &key, &attempt, &claims, 1000)).await.unwrap() {
                Begun::Fresh => {
                    fresh += 1;
                    journal.signed(&attempt, ATR, &payment()).await.unwrap();
                    journal.answered(&attempt, Answered::Settled(&json!({"success": true}))).await.unwrap();
                }
                Begun::OverBudget(_) => over += 1,
                other => panic!("{other:?}"),
            }
        }
    });
    println!("worker-result fresh={fresh} over={over}");
}

fn spawn_worker(spec: &str, id: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "processes::journal_worker", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(WORKER, format!("{id}:{spec}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

on_both_backends!(eight_processes_never_pass_one_budget);

async fn eight_processes_never_pass_one_budget(first: Place) {
    let started = Instant::now();
    let rounds = crate::backends::stress_rounds();
    let deadlocks_before = deadlocks(&first).await;
    for round in 0..rounds {
        let place = first.fresh().await;
        drop(place.journal().await);
        let children: Vec<_> = (0..WORKERS).map(|id| spawn_worker(&place.spec(), id)).collect();
        let (mut fresh, mut over) = (0, 0);
        for child in children {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "worker failed: {text}");
            // libtest writes `test journal_worker ... ` before it, on the same line.
            let line = text.lines().find_map(|l| l.split_once("worker-result ")).expect("no result").1;
            let (f, o) = line.split_once(' ').unwrap();
            fresh += f.trim_start_matches("fresh=").parse::<usize>().unwrap();
            over += o.trim_start_matches("over=").parse::<usize>().unwrap();
        }
        assert_eq!((fresh, over), (500, WORKERS * PER_WORKER - 500), "round {round}");
        let journal = place.journal().await;
        let use_ = journal.budget("day", "", "eip155:8453/0xAsset", 86_400, U256::from(LIMIT), 1000).await.unwrap();
        assert_eq!((use_.spent, use_.reserved, use_.remaining), (U256::from(LIMIT), U256::ZERO, U256::ZERO));
        assert_eq!(journal.history(&HistoryFilter::new()).await.unwrap().len(), 500);
    }
    // A payment's writes take their locks in one order: no round broke a deadlock (each costs the server's
    // deadlock_timeout, a second; a running total moved in no order met about 90 a round). The count is the
    // database's, so a deadlock of a test beside this one counts too: none should have any.
    let deadlocks_after = deadlocks(&first).await;
    assert_eq!(deadlocks_before, deadlocks_after, "deadlocks on the server while eight processes raced");
    let name = first.name();
    eprintln!(
        "{name}: eight processes, {rounds} rounds of 1600 begins (500 paid, 1500 durable writes): {:?}",
        started.elapsed()
    );
}

/// How many deadlocks the server has broken in the place's database (`None` on SQLite). A backend reports its own
/// at its next transaction or when it exits, so the last moments of a run may not be counted yet.
async fn deadlocks(place: &Place) -> Option<i64> {
    let Place::Postgres { url, .. } = place else { return None };
    let c = crate::backends::client(url).await;
    c.batch_execute("SELECT pg_stat_clear_snapshot()").await.unwrap();
    let row = c.query_one("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()", &[]).await;
    Some(row.unwrap().get(0))
}

/// How long each of a payment's three durable writes takes (run with `--ignored --nocapture`).
#[tokio::test]
#[ignore = "a measurement, not a test"]
async fn measure_the_three_durable_writes_of_a_payment() {
    let journal = Place::sqlite().journal().await;
    let f = fx();
    let claims = day(1_000_000, 1);
    let n = 300;
    let mut times = [Duration::ZERO; 3];
    for i in 0..n {
        let (key, attempt) = (format!("k{i}"), format!("a{i}"));
        let t = Instant::now();
        journal.begin(&intent(&f, &key, &attempt, &claims, 1000)).await.unwrap();
        times[0] += t.elapsed();
        let t = Instant::now();
        journal.signed(&attempt, ATR, &payment()).await.unwrap();
        times[1] += t.elapsed();
        let t = Instant::now();
        journal.answered(&attempt, Answered::Settled(&json!({"success": true}))).await.unwrap();
        times[2] += t.elapsed();
    }
    let each = times.map(|t| t / n);
    eprintln!("per payment, {n} payments: begin {:?}, signed {:?}, answered {:?}", each[0], each[1], each[2]);
}
