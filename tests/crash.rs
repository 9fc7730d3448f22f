//! Crash safety, proven with real processes: `transact` runs in a child process on a real journal (a SQLite file,
//! and a PostgreSQL database where `TERMS_TEST_POSTGRES` names a server) and is killed with SIGKILL at every step of the exchange (before and after each journal write, each signer call,
//! each fetch and each send) and at random instants (many of them inside a write), in two purchases: an EIP-3009
//! payment, and an ERC-7710 payment paid after an agreement payment. After each kill the journal is reopened and the
//! purchase retried as an agent would retry it, and the test asserts: every payment that left the process is in the
//! journal in state `unknown` or later, none is lost, the retry re-sends the same bytes, and no purchase is ever
//! paid with two different payments.
//!
//! On SQLite it is killed at every step and at 30 random instants per purchase; on PostgreSQL at every step and at
//! 10 random instants per purchase (at least 50 kills).
//!
//! The child is this test binary itself, run with `--exact child --ignored` and the `CRASH_*` variables; it prints
//! `@<n> <step>` before and after each step and, at the step it was told, `@KILL`, then waits to be killed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/mod.rs"]
mod seller;

#[path = "backends/mod.rs"]
mod backends;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use terms::safety::journal::{JournalConfig, PaymentState};
use terms::safety::policy::Policy;
use terms::safety::{Answered, Begun, Ended, Intent, JournalError, Purchase, SpendJournal};
use terms::{
    Answer, BoxFuture, Fetch, FetchError, FixedClock, Options, Request, Response, Signer, SignerError, SigningRequest,
    TransactOutcome, transact,
};

const NOW: u64 = seller::NOW;
/// Past the journal's default lease (300 s): a retry after the crash finds the dead attempt lapsed.
const LATER: u64 = NOW + 3_600;

const POLICY: &str = r#"
resources = ["https://api.seller.example/"]
networks = ["eip155:84532"]

[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "1000000"

[[budgets]]
name = "usdc-day"
asset = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"
window = "day"
limit = "100000000"
"#;

/// The two purchases the harness kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// One EIP-3009 payment.
    Exact,
    /// An agreement payment (EIP-3009, nonce H), then the ERC-7710 delegation.
    Agreement,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Agreement => "agreement",
        }
    }

    fn parse(text: &str) -> Self {
        if text == "agreement" { Self::Agreement } else { Self::Exact }
    }

    fn pairing(self) -> &'static str {
        match self {
            Self::Exact => "x402/exact/eip155/eip3009",
            Self::Agreement => "x402/exact/eip155/erc7710",
        }
    }

    fn offer(self) -> Value {
        let mut offer = seller::offer();
        if self == Self::Exact {
            let info = offer.pointer_mut("/extensions/legalContext/info").unwrap().as_object_mut().unwrap();
            info.remove("legalContextAgreementUrl");
            offer["accepts"][0]["extra"].as_object_mut().unwrap().remove("assetTransferMethod");
        }
        offer
    }
}

/// Where a run prints its steps, and the step at which it stops to be killed (0: none).
struct Steps {
    kill_at: usize,
    n: AtomicUsize,
    print: bool,
}

impl Steps {
    fn step(&self, name: &str) {
        let n = self.n.fetch_add(1, Ordering::SeqCst) + 1;
        if self.print {
            let mut out = std::io::stdout().lock();
            writeln!(out, "@{n} {name}").unwrap();
            if n == self.kill_at {
                writeln!(out, "@KILL").unwrap();
                out.flush().unwrap();
                drop(out);
                loop {
                    std::thread::sleep(Duration::from_secs(60));
                }
            }
            out.flush().unwrap();
        }
    }
}

/// The journal, each call a step on either side.
#[derive(Debug)]
struct Tripwire {
    inner: Arc<dyn backends::Journal>,
    steps: Arc<StepsHandle>,
}

#[derive(Debug)]
struct StepsHandle(Steps);

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Steps")
    }
}

impl SpendJournal for Tripwire {
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(async move {
            self.steps.0.step("journal.begin.before");
            let r = self.inner.begin(intent).await;
            self.steps.0.step("journal.begin.after");
            r
        })
    }
    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.steps.0.step("journal.moving.before");
            let r = self.inner.moving(attempt).await;
            self.steps.0.step("journal.moving.after");
            r
        })
    }
    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a Value,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.steps.0.step("journal.signed.before");
            let r = self.inner.signed(attempt, bytes, payment).await;
            self.steps.0.step("journal.signed.after");
            r
        })
    }
    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.steps.0.step("journal.ended.before");
            let r = self.inner.ended(attempt, ended).await;
            self.steps.0.step("journal.ended.after");
            r
        })
    }
    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            self.steps.0.step("journal.answered.before");
            let r = self.inner.answered(attempt, answered).await;
            self.steps.0.step("journal.answered.after");
            r
        })
    }
}

/// The wallet of the examples, each signature a step, counted.
struct Wallet {
    inner: seller::Wallet,
    steps: Arc<StepsHandle>,
    signed: AtomicUsize,
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            self.steps.0.step(&format!("signer.{}.before", request.kind()));
            let r = self.inner.sign(request).await;
            self.signed.fetch_add(1, Ordering::SeqCst);
            self.steps.0.step(&format!("signer.{}.after", request.kind()));
            r
        })
    }
}

/// The seller of the examples. Every payment that reaches it (the agreement payment in `PAYMENT-SIGNATURE`, the
/// main payment sent after `transact`) is appended to its log and synced before it answers: the log is what left
/// the buyer's process.
struct Shop {
    log: PathBuf,
    steps: Arc<StepsHandle>,
}

impl Shop {
    fn receive(&self, what: &str, payment: &str) {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).unwrap();
        writeln!(file, "{}", json!({"what": what, "payment": payment})).unwrap();
        file.sync_all().unwrap();
    }

    fn received(log: &Path) -> Vec<(String, String)> {
        let Ok(text) = std::fs::read_to_string(log) else { return Vec::new() };
        // A line cut short by the kill is a payment that never fully reached the seller.
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| (v["what"].as_str().unwrap().to_owned(), v["payment"].as_str().unwrap().to_owned()))
            .collect()
    }
}

impl Fetch for Shop {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let paid = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("payment-signature"));
            self.steps.0.step(if paid.is_some() { "fetch.paid.before" } else { "fetch.before" });
            if let Some((_, payment)) = paid {
                self.receive("agreement", payment);
            }
            let r = seller::Seller::new().unwrap().get(request).await;
            self.steps.0.step("fetch.after");
            r
        })
    }
}

fn purchase() -> Purchase {
    Purchase::new("GET", "https://api.seller.example/v1/quote")
}

/// One run of a purchase, as an agent runs it: transact (twice for an agreement: the approval, then the payment),
/// send what it returns, and tell the journal the seller's answer.
async fn run(scenario: Scenario, dir: &Path, spec: &str, steps: Arc<StepsHandle>, now: u64) -> Run {
    let inner = backends::open_spec(spec, JournalConfig::default()).await;
    let journal = Arc::new(Tripwire { inner, steps: steps.clone() });
    let wallet = Wallet { inner: seller::Wallet::new().unwrap(), steps: steps.clone(), signed: AtomicUsize::new(0) };
    let shop = Shop { log: dir.join("seller.log"), steps: steps.clone() };
    let pairing = terms::pairing(scenario.pairing()).unwrap();
    let policy = Arc::new(Policy::from_toml_str(POLICY).unwrap());
    let options = Options::new().clock(FixedClock(now)).policy(policy).journal(journal.clone()).purchase(purchase());
    let mut outcome = transact(scenario.offer(), pairing, &wallet, &shop, &options).await;
    if let Ok(TransactOutcome::ToApprove(pending)) = outcome {
        let approved = options.clone().approved(pending.approve);
        outcome = transact(scenario.offer(), pairing, &wallet, &shop, &approved).await;
    }
    let (paid, resent) = match outcome {
        Ok(TransactOutcome::Signed(t)) => (t, false),
        Ok(TransactOutcome::Resend(r)) => (r.resend, true),
        other => panic!("{} did not pay: {other:?}", scenario.name()),
    };
    let payment = paid.signed.as_ref().unwrap().as_str().to_owned();
    steps.0.step("send.before");
    shop.receive("payment", &payment);
    steps.0.step("send.after");
    let attempt = paid.attempt.clone().unwrap();
    journal.answered(&attempt, Answered::Settled(&json!({"success": true}))).await.unwrap();
    Run { payment, resent, signatures: wallet.signed.load(Ordering::SeqCst) }
}

#[derive(Debug)]
struct Run {
    payment: String,
    resent: bool,
    signatures: usize,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// The child: one run, killed where the parent said.
#[test]
#[ignore = "run by the crash harness as a child process"]
fn child() {
    let Ok(dir) = std::env::var("CRASH_DIR") else { return };
    let kill_at = std::env::var("CRASH_KILL_AT").unwrap().parse().unwrap();
    let scenario = Scenario::parse(&std::env::var("CRASH_SCENARIO").unwrap());
    let spec = std::env::var("CRASH_JOURNAL").unwrap();
    let steps = Arc::new(StepsHandle(Steps { kill_at, n: AtomicUsize::new(0), print: true }));
    runtime().block_on(run(scenario, Path::new(&dir), &spec, steps, NOW));
    println!("@DONE");
}

/// How a child run ended.
struct Killed {
    /// The last step printed before the kill.
    last: String,
    /// The steps a whole run printed (a run with no kill).
    steps: usize,
    /// From the first step to the end, for a whole run.
    span: Duration,
}

/// Runs the child on `dir`, killing it at step `kill_at` (or after `after`, whichever comes first; 0 and `None` for
/// neither).
fn child_run(scenario: Scenario, dir: &Path, spec: &str, kill_at: usize, after: Option<Duration>) -> Killed {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("CRASH_DIR", dir)
        .env("CRASH_JOURNAL", spec)
        .env("CRASH_KILL_AT", kill_at.to_string())
        .env("CRASH_SCENARIO", scenario.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        // libtest prints `test child ... ` before the child's own first line.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(at) = line.find('@')
                && tx.send(line[at..].to_owned()).is_err()
            {
                break;
            }
        }
    });
    // A timed kill counts from the first step, so it lands inside the exchange, not in the process's start.
    let mut start: Option<Instant> = None;
    let (mut last, mut steps, mut span) = (String::from("(start)"), 0, Duration::ZERO);
    loop {
        let wait = match (after, start) {
            (Some(a), Some(s)) => a.saturating_sub(s.elapsed()),
            _ => Duration::from_secs(60),
        };
        match rx.recv_timeout(wait) {
            Ok(line) if line == "@KILL" => break,
            Ok(line) if line == "@DONE" => {
                span = start.map_or(Duration::ZERO, |s| s.elapsed());
                break;
            }
            Ok(line) => {
                start.get_or_insert_with(Instant::now);
                steps += 1;
                last = line;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if after.is_some() => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("the child hung after {last}"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    child.kill().ok(); // SIGKILL on Unix
    child.wait().unwrap();
    drop(rx);
    reader.join().unwrap();
    Killed { last, steps, span }
}

/// What one kill found.
#[derive(Default, Debug)]
struct Tally {
    kills: usize,
    sent: usize,
    lost: usize,
    doubles: usize,
    resent: usize,
}

/// After a kill: every payment that reached the seller is in the journal in state `unknown` or later; the retry
/// re-sends the bytes the journal holds (never signs a new payment for a purchase whose payment was signed); and
/// no purchase reached the seller with two different payments.
fn verify(scenario: Scenario, dir: &Path, spec: &str, tally: &mut Tally, last: &str) {
    let rt = runtime();
    let journal = rt.block_on(backends::open_spec(spec, JournalConfig::default()));
    let key = purchase().key(seller::Wallet::new().unwrap().account());
    let records = rt.block_on(journal.attempts(&key)).unwrap();
    let signed: BTreeSet<String> =
        records.iter().filter_map(|r| r.payment.as_ref().map(|p| payment_text(r.role, p))).collect();
    let before = Shop::received(&dir.join("seller.log"));
    for (what, payment) in &before {
        tally.sent += 1;
        let held = records.iter().find(|r| r.payment.as_ref().is_some_and(|p| payment_text(r.role, p) == *payment));
        match held {
            Some(r) if r.payment_state != PaymentState::NotPaid => {}
            _ => {
                tally.lost += 1;
                eprintln!("LOST after {last}: the {what} payment {payment} is not in the journal as unknown or later");
            }
        }
    }
    drop(journal);
    // The agent retries once the lease of the dead attempt has passed.
    let steps = Arc::new(StepsHandle(Steps { kill_at: 0, n: AtomicUsize::new(0), print: false }));
    let retried = rt.block_on(run(scenario, dir, spec, steps, LATER));
    let main_signed = records.iter().any(|r| r.role == terms::safety::Role::Payment && r.payment.is_some());
    if main_signed {
        assert!(retried.resent, "after {last}: the main payment was signed, and the retry did not re-send it");
        assert!(signed.contains(&retried.payment), "after {last}: the retry sent other bytes than the journal's");
        tally.resent += 1;
    }
    if main_signed && scenario == Scenario::Exact {
        assert_eq!(retried.signatures, 0, "after {last}: the retry asked the signer again");
    }
    let after = Shop::received(&dir.join("seller.log"));
    let mut per: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (what, payment) in &after {
        per.entry(what).or_default().insert(payment);
    }
    for (what, payments) in &per {
        if payments.len() > 1 {
            tally.doubles += 1;
            eprintln!("DOUBLE after {last}: {} different {what} payments reached the seller", payments.len());
        }
    }
    tally.kills += 1;
}

/// What a journal's payment record sends: the main payment's text as `transact` returned it (`Transacted.signed`),
/// or the agreement payment's `PAYMENT-SIGNATURE` value.
fn payment_text(role: terms::safety::Role, recorded: &Value) -> String {
    if role == terms::safety::Role::Agreement {
        return terms::Payment::from_value(recorded).header().unwrap();
    }
    let t: terms::Transacted = serde_json::from_value(recorded.clone()).unwrap();
    t.signed.unwrap().into_string()
}

fn fresh_dir(label: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("terms-crash-{}-{label}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

mod sigkill_at_every_step_and_at_random_instants_loses_nothing_and_pays_nothing_twice {
    #[test]
    fn sqlite() {
        super::harness(None, 30, 100);
    }

    #[test]
    fn postgres() {
        let test = concat!(module_path!(), "::postgres");
        if let Some(server) = super::backends::server(test) {
            super::harness(Some(&server), 10, 50);
        }
    }
}

/// Kills the child at every step of both purchases and at `random` instants of each, on a SQLite file (`server`
/// `None`) or in a fresh schema of the server for each kill; at least `least` kills.
fn harness(server: Option<&str>, random: usize, least: usize) {
    let backend = if server.is_some() { "postgres" } else { "sqlite" };
    let spec = |dir: &Path| match server {
        None => format!("sqlite://{}", dir.join("journal.db").display()),
        Some(url) => runtime().block_on(backends::fresh_schema(url)),
    };
    let mut tally = Tally::default();
    let (mut timed, mut in_writes) = (0, 0);
    // A small deterministic generator for the kill instants (xorshift64*).
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    for scenario in [Scenario::Exact, Scenario::Agreement] {
        // A whole run first: how many steps it has, and how long it takes.
        let dir = fresh_dir("whole");
        let whole = child_run(scenario, &dir, &spec(&dir), 0, None);
        let took = whole.span;
        std::fs::remove_dir_all(&dir).ok();
        assert!(whole.steps >= 10, "{}: only {} steps", scenario.name(), whole.steps);
        for kill_at in 1..=whole.steps {
            let dir = fresh_dir(scenario.name());
            let journal = spec(&dir);
            let killed = child_run(scenario, &dir, &journal, kill_at, None);
            verify(scenario, &dir, &journal, &mut tally, &format!("{} {}", scenario.name(), killed.last));
            std::fs::remove_dir_all(&dir).ok();
        }
        // Kills at random instants over the whole run: most land inside a step, many inside a write.
        for _ in 0..random {
            let at = Duration::from_nanos(next() % (took.as_nanos() as u64).max(1));
            let dir = fresh_dir("timed");
            let journal = spec(&dir);
            let killed = child_run(scenario, &dir, &journal, 0, Some(at));
            if killed.last.contains("journal.") && killed.last.ends_with(".before") {
                in_writes += 1;
            }
            let last = format!("{} at {at:?} after {}", scenario.name(), killed.last);
            verify(scenario, &dir, &journal, &mut tally, &last);
            std::fs::remove_dir_all(&dir).ok();
            timed += 1;
        }
    }
    eprintln!(
        "crash harness ({backend}): {} kills ({} at steps, {timed} at random instants, {in_writes} of them inside a journal \
         write), {} payments reached the seller, {} lost, {} paid twice, {} retries re-sent the journal's bytes",
        tally.kills,
        tally.kills - timed,
        tally.sent,
        tally.lost,
        tally.doubles,
        tally.resent
    );
    assert!(tally.kills >= least, "only {} kill points", tally.kills);
    assert_eq!(tally.lost, 0, "payments lost");
    assert_eq!(tally.doubles, 0, "purchases paid twice");
}
