//! One run of a purchase (as an agent runs it), the child process that runs it and is killed, and what is checked
//! after each kill: the payments that reached the seller are in the journal, a retry within the lease of the dead
//! attempt declines `journal/in-flight` and asks nothing, retries past it complete the purchase, re-sending the
//! journal's bytes where a payment was signed, and each payment of the purchase was asked of the wallet as one
//! request (perhaps more than once, identically) and reached the seller as one payment.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use terms::safety::journal::{JournalConfig, PaymentState, Stage};
use terms::safety::{Answered, Purchase, Role, SpendJournal};
use terms::{Declined, FixedClock, Options, TransactOutcome, transact};

use crate::backends;
use crate::scenarios::Scenario;
use crate::seller;
use crate::shop::{Shop, received};
use crate::tripwire::{Steps, Tripwire};
use crate::wallet::{self, Logged};

/// The first run's clock.
pub(crate) const NOW: u64 = seller::NOW;
/// Inside the journal's default lease (300 s) of an attempt begun at [`NOW`]: a retry finds it in flight.
const WITHIN: u64 = NOW + 60;
/// Past the lease: a retry finds the dead attempt lapsed (its validity window, deadline and salt would all be
/// drawn anew by a fresh build).
const LATER: u64 = NOW + 3_600;

/// The logs one backend's purchases share, outside every buyer process: what the wallet was asked and answered,
/// and what reached the seller; and the child's executable.
#[derive(Debug, Clone)]
pub(crate) struct Logs {
    pub(crate) wallet: PathBuf,
    pub(crate) seller: PathBuf,
    /// A copy of this test binary beside the logs: another build of the crate in the same target folder may replace
    /// the binary while the harness runs.
    pub(crate) child: PathBuf,
}

impl Logs {
    pub(crate) fn in_dir(dir: &Path) -> Self {
        Self { wallet: dir.join("wallet.log"), seller: dir.join("seller.log"), child: dir.join("child") }
    }

    /// The logs in `dir`, with the child's executable put there.
    pub(crate) fn with_child(dir: &Path) -> Self {
        let logs = Self::in_dir(dir);
        std::fs::copy(std::env::current_exe().unwrap(), &logs.child).unwrap();
        logs
    }
}

/// One run of one purchase.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attempt<'a> {
    pub(crate) scenario: Scenario,
    /// The journal, as a configuration names it.
    pub(crate) spec: &'a str,
    pub(crate) logs: &'a Logs,
    /// The purchase's number in the logs.
    pub(crate) purchase: usize,
    pub(crate) now: u64,
    /// A retry: the buyer's inputs of a later instant (another recent blockhash).
    pub(crate) retry: bool,
}

/// What a run that completed sent.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) payment: String,
    pub(crate) resent: bool,
    /// How many times it asked the wallet.
    pub(crate) asked: usize,
}

fn purchase() -> Purchase {
    Purchase::new("GET", "https://api.seller.example/v1/quote")
}

/// The purchase's idempotency key for the scenario's payer.
fn key(scenario: Scenario) -> String {
    purchase().key(scenario.signer().account())
}

/// One run of a purchase, as an agent runs it: transact (twice for an agreement: the approval, then the payment),
/// send what it returns, and tell the journal the seller's answer.
pub(crate) async fn run(a: &Attempt<'_>, steps: Arc<Steps>) -> Result<Run, Declined> {
    let inner = backends::open_spec(a.spec, JournalConfig::default()).await;
    let journal = Arc::new(Tripwire { inner, steps: steps.clone() });
    let wallet = Logged {
        inner: a.scenario.signer(),
        scenario: a.scenario,
        log: a.logs.wallet.clone(),
        purchase: a.purchase,
        steps: steps.clone(),
        asked: AtomicUsize::new(0),
    };
    let seller = seller::Seller::of(a.scenario.atr());
    let shop = Shop { seller, log: a.logs.seller.clone(), purchase: a.purchase, steps: steps.clone() };
    let pairing = terms::pairing(a.scenario.pairing()).unwrap();
    let options = Options::new()
        .clock(FixedClock(a.now))
        .policy(a.scenario.policy())
        .journal(journal.clone())
        .purchase(purchase())
        .inputs(a.scenario.inputs(a.retry));
    let mut outcome = transact(a.scenario.offer(a.retry), pairing, &wallet, &shop, &options).await?;
    if let TransactOutcome::ToApprove(pending) = outcome {
        let approved = options.clone().approved(pending.approve);
        outcome = transact(a.scenario.offer(a.retry), pairing, &wallet, &shop, &approved).await?;
    }
    let (paid, resent) = match outcome {
        TransactOutcome::Signed(t) => (t, false),
        TransactOutcome::Resend(r) => (r.resend, true),
        other => panic!("{} did not pay: {other:?}", a.scenario.name()),
    };
    let payment = paid.signed.as_ref().unwrap().as_str().to_owned();
    steps.step("send.before");
    shop.receive("payment", &payment);
    steps.step("send.after");
    let attempt = paid.attempt.clone().unwrap();
    journal.answered(&attempt, Answered::Settled(&json!({"success": true}))).await.unwrap();
    Ok(Run { payment, resent, asked: wallet.asked.load(Ordering::SeqCst) })
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// How a child run ended.
#[derive(Debug)]
pub(crate) struct Killed {
    /// The last step printed before the kill.
    pub(crate) last: String,
    /// Every step printed, in order.
    pub(crate) steps: Vec<String>,
    /// Whether the run completed (printed `@DONE`).
    pub(crate) done: bool,
    /// From the first step to the end, for a whole run.
    pub(crate) span: Duration,
}

/// Runs the child for purchase `a.purchase`, killing it at step `kill_at` (or after `after`, whichever comes first;
/// 0 and `None` for neither). A child that ends on its own without completing (a panic) fails the test.
pub(crate) fn child_run(a: &Attempt<'_>, kill_at: usize, after: Option<Duration>) -> Killed {
    let logs = a.logs.wallet.parent().unwrap();
    let mut child = Command::new(&a.logs.child)
        .args(["--exact", "child", "--ignored", "--nocapture", "--test-threads=1"])
        .env("CRASH_LOGS", logs)
        .env("CRASH_JOURNAL", a.spec)
        .env("CRASH_KILL_AT", kill_at.to_string())
        .env("CRASH_SCENARIO", a.scenario.name())
        .env("CRASH_PURCHASE", a.purchase.to_string())
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
    let (mut steps, mut done, mut span) = (Vec::new(), false, Duration::ZERO);
    loop {
        let wait = match (after, start) {
            (Some(a), Some(s)) => a.saturating_sub(s.elapsed()),
            _ => Duration::from_secs(60),
        };
        match rx.recv_timeout(wait) {
            Ok(line) if line == "@KILL" => break,
            Ok(line) if line == "@DONE" => {
                span = start.map_or(Duration::ZERO, |s| s.elapsed());
                done = true;
                break;
            }
            Ok(line) => {
                start.get_or_insert_with(Instant::now);
                steps.push(line);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if after.is_some() && start.is_some() => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("the child hung after {:?}", steps.last()),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the child of {} ended on its own after {:?}", a.scenario.name(), steps.last())
            }
        }
    }
    child.kill().ok(); // SIGKILL on Unix
    child.wait().unwrap();
    drop(rx);
    reader.join().unwrap();
    let last = steps.last().cloned().unwrap_or_else(|| String::from("(start)"));
    Killed { last, steps, done, span }
}

/// What the kills of one backend found.
#[derive(Default, Debug)]
pub(crate) struct Tally {
    /// SIGKILLs (a run that completed before its random instant is verified, and not counted).
    pub(crate) kills: usize,
    /// Kills whose last step was the wallet's answer (before the journal's `signed` write).
    pub(crate) answered_unrecorded: usize,
    /// Payments that reached the seller before the retries.
    pub(crate) sent: usize,
    pub(crate) lost: usize,
    /// Retries that re-sent the journal's bytes.
    pub(crate) resent: usize,
    /// Retries within the lease that declined `journal/in-flight`.
    pub(crate) in_lease: usize,
    /// Payments whose request the wallet was asked again (identically) after a kill.
    pub(crate) reasked: usize,
    /// Retries past the lease that declined before one completed.
    pub(crate) retries_declined: usize,
}

/// After the kill of purchase `a.purchase`: every payment that reached the seller is in the journal in state
/// `unknown` or later; a retry within the lease of an attempt in flight declines `journal/in-flight` and asks the
/// wallet nothing; retries past it complete the purchase, and where the main payment was signed the retry re-sends
/// the journal's bytes without asking the wallet; and, per payment of the purchase, the wallet was asked one
/// distinct request and the seller received one distinct payment.
pub(crate) fn verify(a: &Attempt<'_>, tally: &mut Tally, last: &str) {
    let rt = runtime();
    let journal = rt.block_on(backends::open_spec(a.spec, JournalConfig::default()));
    let records = rt.block_on(journal.attempts(&key(a.scenario))).unwrap();
    drop(journal);
    let signed: BTreeSet<String> =
        records.iter().filter_map(|r| r.payment.as_ref().map(|p| payment_text(r.role, p))).collect();
    for (what, payment) in &received(&a.logs.seller, a.purchase) {
        tally.sent += 1;
        let held = records.iter().find(|r| r.payment.as_ref().is_some_and(|p| payment_text(r.role, p) == *payment));
        if !held.is_some_and(|r| r.payment_state != PaymentState::NotPaid) {
            tally.lost += 1;
            eprintln!("LOST after {last}: the {what} payment {payment} is not in the journal as unknown or later");
        }
    }
    // Within the lease of an attempt in flight: the retry declines, and asks the wallet nothing.
    if records.iter().any(|r| r.stage == Stage::Intent) {
        let (asked, sent) = (wallet::lines(&a.logs.wallet).len(), wallet::lines(&a.logs.seller).len());
        let within = Attempt { now: WITHIN, retry: true, ..*a };
        let got = rt.block_on(run(&within, Steps::silent()));
        let declined = got.err().unwrap_or_else(|| panic!("after {last}: a retry within the lease paid"));
        assert_eq!(declined.detail, "journal/in-flight", "after {last}: within the lease: {declined:?}");
        assert_eq!(wallet::lines(&a.logs.wallet).len(), asked, "after {last}: asked the wallet within the lease");
        assert_eq!(wallet::lines(&a.logs.seller).len(), sent, "after {last}: paid the seller within the lease");
        tally.in_lease += 1;
    }
    // Past the lease, until a retry completes (each at a later clock than the one before).
    let mut retried = None;
    for k in 0..3 {
        let later = Attempt { now: LATER + k * 3_600, retry: true, ..*a };
        match rt.block_on(run(&later, Steps::silent())) {
            Ok(r) => {
                retried = Some(r);
                break;
            }
            Err(d) => {
                tally.retries_declined += 1;
                eprintln!("after {last}: retry {k} declined: {d:?}");
            }
        }
    }
    // Per payment of the purchase (and per step of a payment signed in steps), whatever the retries did: one
    // distinct request asked of the wallet (answered identically), at most one distinct payment received.
    let asked = wallet::asked(&a.logs.wallet);
    let received = crate::shop::received_all(&a.logs.seller);
    for role in a.scenario.asks() {
        let of = asked.get(&(a.purchase, (*role).to_owned())).cloned().unwrap_or_default();
        let distinct: BTreeSet<&String> = of.requests.iter().collect();
        assert!(
            distinct.len() <= 1,
            "after {last}: the wallet was asked {} different {role} requests for purchase {}: {distinct:#?}",
            distinct.len(),
            a.purchase
        );
        assert!(of.distinct_answers() <= 1, "after {last}: the wallet gave {} {role} answers", of.distinct_answers());
    }
    for what in a.scenario.payments() {
        let got = received.get(&(a.purchase, (*what).to_owned())).map_or(0, BTreeSet::len);
        assert!(got <= 1, "after {last}: {got} different {what} payments reached the seller");
    }
    // And the purchase completed: each payment asked once (perhaps again, identically) and received.
    let retried = retried.unwrap_or_else(|| panic!("after {last}: no retry completed the purchase"));
    let main_signed = records.iter().any(|r| r.role == Role::Payment && r.payment.is_some());
    if main_signed {
        assert!(retried.resent, "after {last}: the main payment was signed, and the retry did not re-send it");
        assert!(signed.contains(&retried.payment), "after {last}: the retry sent other bytes than the journal's");
        assert_eq!(retried.asked, 0, "after {last}: the retry asked the wallet again");
        tally.resent += 1;
    }
    for role in a.scenario.asks() {
        let of = asked.get(&(a.purchase, (*role).to_owned())).cloned().unwrap_or_default();
        assert_eq!(of.distinct_requests(), 1, "after {last}: the wallet was never asked the {role} request");
        if of.requests.len() > 1 {
            tally.reasked += 1;
        }
    }
    for what in a.scenario.payments() {
        let got = received.get(&(a.purchase, (*what).to_owned())).map_or(0, BTreeSet::len);
        assert_eq!(got, 1, "after {last}: no {what} payment reached the seller");
    }
    let roles: BTreeSet<&str> = asked.keys().filter(|(p, _)| *p == a.purchase).map(|(_, r)| r.as_str()).collect();
    assert_eq!(roles, a.scenario.asks().iter().copied().collect(), "after {last}: the wallet's roles");
    if last.contains(" signer.") && last.ends_with(".after") {
        tally.answered_unrecorded += 1;
    }
}

/// What a journal's payment record sends: the main payment's text as `transact` returned it (`Transacted.signed`),
/// or the agreement payment's `PAYMENT-SIGNATURE` value.
fn payment_text(role: Role, recorded: &Value) -> String {
    if role == Role::Agreement {
        return terms::Payment::from_value(recorded).header().unwrap();
    }
    let t: terms::Transacted = serde_json::from_value(recorded.clone()).unwrap();
    t.signed.unwrap().into_string()
}

pub(crate) fn fresh_dir(label: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("terms-crash-{}-{label}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
