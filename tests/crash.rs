//! Crash safety, proven with real processes (issue 40): `transact` runs in a child process on a real journal (a
//! SQLite file, and a PostgreSQL database where `TERMS_TEST_POSTGRES` names a server, as `.ci/run` starts one) and is
//! killed with SIGKILL at every step of the exchange (before and after each journal write, each wallet call, each
//! fetch and each send; among them right after the wallet's answer, before the journal's `signed` write) and at
//! random instants (many of them inside a write), in six purchases (`crash/scenarios.rs`): an EIP-3009 payment, a
//! Permit2 payment, a batch-settlement channel's opening (its salt drawn at random), a Solana transfer (a recent
//! blockhash as input), an ERC-7710 payment paid after an agreement payment, and an MPP session's opening (one
//! payment signed in two steps, the journal's `stepped` write between them).
//!
//! The wallet is wrapped (`crash/wallet.rs`) so that every request it is asked and every answer it gives is appended
//! to a log outside the child and synced; the seller logs every payment that reaches it the same way. After each kill
//! the purchase is retried as an agent would retry it: within the lease of an attempt in flight (it declines
//! `journal/in-flight` and asks the wallet nothing), then past the lease, at a later clock and with later inputs (a
//! fresh build would draw another validity window, salt or blockhash, or read a later expiry), until a retry
//! completes. The test asserts, per purchase: every payment that left the process is in the journal in state
//! `unknown` or later (none is lost), a retry after a signed payment re-sends the journal's bytes without asking the
//! wallet, and for each payment of the purchase (the agreement payment and the main payment are two; each step of a
//! payment signed in steps counts apart) the wallet was asked exactly one distinct request (perhaps more than once,
//! identically, after a kill) and the seller received at most one distinct payment.
//!
//! Each backend is killed at every step of each purchase and at random instants: under CI (`CI` set, as `.ci/run`
//! runs) 24 instants per purchase and at least 200 kills in all; in a local `cargo test`, to keep it short, 8
//! instants per purchase and at least 150 kills (every step is still a kill). `TERMS_CRASH_INSTANTS` sets the
//! instants per purchase.
//!
//! The child is this test binary itself, run with `--exact child --ignored` and the `CRASH_*` variables; it prints
//! `@<n> <step>` before and after each step and, at the step it was told, `@KILL`, then waits to be killed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/mod.rs"]
mod seller;

#[path = "backends/mod.rs"]
mod backends;

#[path = "support/rows.rs"]
mod rows;

#[path = "crash/harness.rs"]
mod harness;
#[path = "crash/scenarios.rs"]
mod scenarios;
#[path = "crash/shop.rs"]
mod shop;
#[path = "crash/tripwire.rs"]
mod tripwire;
#[path = "crash/wallet.rs"]
mod wallet;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use harness::{Attempt, Logs, NOW, Tally, child_run, fresh_dir, run, runtime, verify};
use scenarios::Scenario;
use tripwire::Steps;

/// The child: one run, killed where the parent said.
#[test]
#[ignore = "run by the crash harness as a child process"]
fn child() {
    let Ok(logs) = std::env::var("CRASH_LOGS") else { return };
    let var = |name: &str| std::env::var(name).unwrap();
    let logs = Logs::in_dir(Path::new(&logs));
    let spec = var("CRASH_JOURNAL");
    let a = Attempt {
        scenario: Scenario::parse(&var("CRASH_SCENARIO")),
        spec: &spec,
        logs: &logs,
        purchase: var("CRASH_PURCHASE").parse().unwrap(),
        now: NOW,
        retry: false,
    };
    if let Err(declined) = runtime().block_on(run(&a, Steps::printed(var("CRASH_KILL_AT").parse().unwrap()))) {
        panic!("{} declined: {declined:?}", a.scenario.name());
    }
    println!("@DONE");
}

mod sigkill_at_every_step_and_at_random_instants_asks_one_payment_loses_nothing_and_pays_nothing_twice {
    #[test]
    fn sqlite() {
        let (random, least) = super::kills();
        super::harness(None, random, least);
    }

    #[test]
    fn postgres() {
        let test = concat!(module_path!(), "::postgres");
        if let Some(server) = super::backends::server(test) {
            let (random, least) = super::kills();
            super::harness(Some(&server), random, least);
        }
    }
}

/// The random instants per purchase and the least kills per backend: 24 and 200 under CI, 8 and 150 otherwise
/// (the module's documentation); `TERMS_CRASH_INSTANTS` sets the instants.
fn kills() -> (usize, usize) {
    let ci = std::env::var_os("CI").is_some();
    let random = std::env::var("TERMS_CRASH_INSTANTS").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0);
    (random.unwrap_or(if ci { 24 } else { 8 }), if ci { 200 } else { 150 })
}

/// The kills of one scenario, and how many were at random instants and inside a journal write.
struct Killed {
    scenario: Scenario,
    /// The purchases (one per kill) in the logs.
    purchases: BTreeSet<usize>,
    steps: usize,
    /// Kills at random instants.
    timed: usize,
    /// Runs whose random instant came after they completed: verified, not counted as kills.
    finished: usize,
    in_writes: usize,
    tally: Tally,
}

/// Kills the child at every step of every purchase and at (at least) `random` random instants of each, on a SQLite file
/// (`server` `None`) or in a fresh schema of the server for each kill; at least `least` kills in all.
fn harness(server: Option<&str>, random: usize, least: usize) {
    let backend = if server.is_some() { "postgres" } else { "sqlite" };
    let spec = |dir: &Path| match server {
        None => format!("sqlite://{}", dir.join("journal.db").display()),
        Some(url) => runtime().block_on(backends::fresh_schema(url)),
    };
    let logs_dir = fresh_dir(&format!("{backend}-logs"));
    let logs = Logs::with_child(&logs_dir);
    let mut purchase = 0;
    // A whole run of each purchase first: its steps (each a kill point), and how long it takes.
    let mut wholes = Vec::new();
    for scenario in Scenario::all() {
        purchase += 1;
        let dir = fresh_dir("whole");
        let journal = spec(&dir);
        let whole =
            child_run(&Attempt { scenario, spec: &journal, logs: &logs, purchase, now: NOW, retry: false }, 0, None);
        std::fs::remove_dir_all(&dir).ok();
        assert!(whole.done && whole.steps.len() >= 10, "{}: {:?}", scenario.name(), whole.steps);
        // Between each answer of the wallet and the journal's next write (`signed`, or `stepped` before a payment's
        // next step) there is a step: a kill there is one of the kills.
        let names: Vec<&str> = whole.steps.iter().map(|s| s.split_once(' ').unwrap().1).collect();
        let answered = names.windows(2).filter(|w| {
            w[0].starts_with("signer.")
                && w[0].ends_with(".after")
                && (w[1] == "journal.signed.before" || w[1] == "journal.stepped.before")
        });
        assert_eq!(answered.count(), scenario.asks().len(), "{}: {names:?}", scenario.name());
        wholes.push((scenario, whole));
    }
    let at_steps: usize = wholes.iter().map(|(_, w)| w.steps.len()).sum();
    let random = random.max(least.saturating_sub(at_steps).div_ceil(wholes.len()));
    // A small deterministic generator for the kill instants (xorshift64*).
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut all = Vec::new();
    for (scenario, whole) in wholes {
        let mut killed = Killed {
            scenario,
            purchases: BTreeSet::new(),
            steps: whole.steps.len(),
            timed: 0,
            finished: 0,
            in_writes: 0,
            tally: Tally::default(),
        };
        let mut kill = |at: usize, after: Option<Duration>, killed: &mut Killed| {
            purchase += 1;
            killed.purchases.insert(purchase);
            let dir = fresh_dir(scenario.name());
            let journal = spec(&dir);
            let a = Attempt { scenario, spec: &journal, logs: &logs, purchase, now: NOW, retry: false };
            let died = child_run(&a, at, after);
            let last = match after {
                None => format!("{} {}", scenario.name(), died.last),
                Some(at) => format!("{} at {at:?} after {}", scenario.name(), died.last),
            };
            if after.is_some() && died.last.contains(" journal.") && died.last.ends_with(".before") {
                killed.in_writes += 1;
            }
            verify(&a, &mut killed.tally, &last);
            std::fs::remove_dir_all(&dir).ok();
            match (died.done, after) {
                (true, _) => killed.finished += 1,
                (false, Some(_)) => killed.timed += 1,
                (false, None) => {}
            }
            if !died.done {
                killed.tally.kills += 1;
            }
            died.done.then_some(died.span)
        };
        for kill_at in 1..=whole.steps.len() {
            assert!(kill(kill_at, None, &mut killed).is_none(), "{} ran past step {kill_at}", scenario.name());
        }
        // Kills at random instants over the whole run: most land inside a step, many inside a write. A run that
        // completes before its instant is verified, its time bounds the later instants, and another is drawn.
        let mut took = whole.span;
        while killed.timed < random && killed.finished < 3 * random {
            let at = u64::try_from(took.as_nanos()).unwrap().max(1);
            if let Some(span) = kill(0, Some(Duration::from_nanos(next() % at)), &mut killed) {
                took = took.min(span);
            }
        }
        all.push(killed);
    }
    report(backend, &logs, &all, least);
    std::fs::remove_dir_all(&logs_dir).ok();
}

/// A line straight to stderr (libtest captures `eprintln!` of a passing test, and these lines are the run's result).
fn say(line: String) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Prints one line per scenario and one for the backend (kills; purchases; per purchase, the most distinct requests
/// the wallet was asked for one payment (or one step of it) and the most distinct payments the seller received for
/// one payment; what was lost), read back from the whole logs, then asserts them.
fn report(backend: &str, logs: &Logs, all: &[Killed], least: usize) {
    let (wallet_log, seller_log) = (wallet::asked(&logs.wallet), shop::received_all(&logs.seller));
    // Over the purchases `of`: how many, how many payments (and steps) the wallet was asked, the most distinct
    // requests of one, the most distinct answers of one, and the most distinct payments the seller got for one.
    let counts = |of: &dyn Fn(usize) -> bool| {
        let asked: Vec<&wallet::Asked> = wallet_log.iter().filter(|((p, _), _)| of(*p)).map(|(_, a)| a).collect();
        let received: Vec<usize> = seller_log.iter().filter(|((p, _), _)| of(*p)).map(|(_, r)| r.len()).collect();
        let purchases: BTreeSet<usize> = wallet_log.keys().map(|(p, _)| *p).filter(|p| of(*p)).collect();
        (
            purchases.len(),
            asked.len(),
            asked.iter().map(|a| a.distinct_requests()).max().unwrap_or(0),
            asked.iter().map(|a| a.distinct_answers()).max().unwrap_or(0),
            received.iter().copied().max().unwrap_or(0),
        )
    };
    let sum = |f: fn(&Killed) -> usize| all.iter().map(f).sum::<usize>();
    for k in all {
        let t = &k.tally;
        let (purchases, payments, most_asked, _, most_received) = counts(&|p| k.purchases.contains(&p));
        say(format!(
            "crash harness ({backend}, {} = {}): {} kills ({} at steps, {} at random instants, {} inside a journal \
             write, {} right after a wallet's answer; {} runs done before their instant) over {purchases} purchases; \
             per purchase and payment: at most \
             {most_asked} distinct request asked of the wallet ({payments} payments and steps asked, {} asked again \
             identically), at most {most_received} distinct payment received by the seller ({} payments reached it \
             before a retry), {} lost; {} retries within the lease declined, {} re-sent the journal's bytes",
            k.scenario.name(),
            k.scenario.pairing(),
            t.kills,
            k.steps,
            k.timed,
            k.in_writes,
            t.answered_unrecorded,
            k.finished,
            t.reasked,
            t.sent,
            t.lost,
            t.in_lease,
            t.resent
        ));
    }
    let kills = sum(|k| k.tally.kills);
    let lost = sum(|k| k.tally.lost);
    let (purchases, payments, most_asked, most_answers, most_received) = counts(&|_| true);
    say(format!(
        "crash harness ({backend}): {kills} kills ({} at steps, {} at random instants, {} inside a journal write, {} \
         right after a wallet's answer, before the journal's signed or stepped write; {} runs done before their \
         instant) over {purchases} purchases of {} scenarios; per purchase and payment: at most {most_asked} distinct request asked of the wallet \
         ({payments} payments and steps asked, {} asked again identically after a kill, at most {most_answers} \
         distinct answer), at most {most_received} distinct payment received by the seller, {lost} lost; {} retries \
         within the lease declined journal/in-flight, {} retries re-sent the journal's bytes, {} retries past the \
         lease declined before one completed",
        sum(|k| k.steps),
        sum(|k| k.timed),
        sum(|k| k.in_writes),
        sum(|k| k.tally.answered_unrecorded),
        sum(|k| k.finished),
        all.len(),
        sum(|k| k.tally.reasked),
        sum(|k| k.tally.in_lease),
        sum(|k| k.tally.resent),
        sum(|k| k.tally.retries_declined),
    ));
    assert!(kills >= least, "only {kills} kills");
    assert_eq!(lost, 0, "payments lost");
    assert_eq!(most_asked, 1, "a payment whose wallet was asked two different requests");
    assert_eq!(most_received, 1, "a purchase paid twice");
    for k in all {
        let (name, answered) = (k.scenario.name(), k.tally.answered_unrecorded);
        assert!(answered >= k.scenario.asks().len(), "{name}: {answered} kills right after a wallet's answer");
    }
}
