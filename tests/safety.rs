//! The buyer-safety layer inside `transact`, `agree` and `within`, on a real SQLite journal file: a refusal is
//! `policy-refused` before the link is fetched and the signer is asked; a budget holds what it holds; a payment above
//! the approval threshold is handed back and paid once approved, unchanged; a purchase signed once is re-sent, never
//! signed again; a journal that cannot be written signs nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use terms::safety::journal::{PaymentState, SqliteJournal, Store};
use terms::safety::policy::Policy;
use terms::safety::{Purchase, SpendJournal};

#[macro_use]
#[path = "backends/mod.rs"]
mod backends;

use backends::Place;

// Each test of a journal that works runs on SQLite and on PostgreSQL.
on_both_backends!(
    each_refusal_is_policy_refused_before_the_link_is_fetched_and_nothing_is_signed,
    a_budget_holds_what_it_holds_and_the_next_payment_is_refused_unfetched,
    above_the_threshold_the_payment_is_handed_back_and_paid_once_approved_unchanged,
    a_purchase_signed_once_is_re_sent_byte_for_byte_and_never_signed_again,
    a_declined_payment_releases_its_reservation_and_may_be_tried_again,
    without_policy_or_journal_the_payment_is_what_it_always_was,
    an_amount_past_two_to_the_256_is_never_quoted_or_signed,
    eight_processes_spend_one_budget_and_never_more,
);
use terms::{
    Answer, BoxFuture, DeclineCode, Fetch, FetchError, FixedClock, LocalSigner, Options, Request, Response, Signer,
    SignerError, SigningRequest, TransactOutcome, transact,
};

const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const NOW: u64 = 1_790_000_000;
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

/// A policy for the quickstart payment (10000 of USDC on Base Sepolia), with the values a test changes.
fn policy(extra: &str, limit: &str) -> Arc<Policy> {
    let text = format!(
        r#"
resources = ["https://api.seller.example/v1/"]
networks = ["eip155:84532"]
{extra}

[[assets]]
network = "eip155:84532"
address = "{USDC}"
symbol = "USDC"
decimals = 6
cap = "50000"

[[budgets]]
name = "usdc-day"
asset = "eip155:84532/{USDC}"
window = "day"
limit = "{limit}"
"#
    );
    Arc::new(Policy::from_toml_str(&text).unwrap())
}

fn offer(amount: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": amount, "asset": USDC,
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": H, "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}

/// Serves the ATR; counts the fetches.
#[derive(Default)]
struct Seller(AtomicUsize);

impl Fetch for Seller {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Response::new(200, vec![], terms::Body::from_bytes(hex::decode(ATR).unwrap()))) })
    }
}

/// The local key; counts the signatures.
struct Wallet(LocalSigner, AtomicUsize);

impl Wallet {
    fn new() -> Self {
        Self(LocalSigner::from_hex(KEY, 84_532).unwrap(), AtomicUsize::new(0))
    }
    fn count(&self) -> usize {
        self.1.load(Ordering::SeqCst)
    }
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        self.0.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.sign(request)
    }
}

fn temp(label: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "terms-safety-{}-{label}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn purchase(n: usize) -> Purchase {
    Purchase::new("GET", format!("https://api.seller.example/v1/quote?n={n}"))
}

fn pairing() -> &'static dyn terms::pairing::Pairing {
    terms::pairing("x402/exact/eip155/eip3009").unwrap()
}

async fn each_refusal_is_policy_refused_before_the_link_is_fetched_and_nothing_is_signed(place: Place) {
    let cases: &[(&str, Value, Option<Purchase>, &str)] = &[
        (
            "",
            offer("10000"),
            Some(Purchase::new("GET", "https://other.example/v1/quote")),
            "policy/resource-not-allowed",
        ),
        ("", offer("10000"), None, "policy/resource-not-allowed"),
        ("", offer("60000"), Some(purchase(0)), "policy/amount-above-cap"),
        ("max_validity_seconds = 30", offer("10000"), Some(purchase(0)), "policy/window-too-long"),
        (
            "",
            {
                let mut o = offer("10000");
                o["accepts"][0]["network"] = json!("eip155:8453");
                o
            },
            Some(purchase(0)),
            "policy/network-not-allowed",
        ),
        (
            "",
            {
                let mut o = offer("10000");
                o["accepts"][0]["payTo"] = json!(format!("0x{}", "0".repeat(40)));
                o
            },
            Some(purchase(0)),
            "policy/payee-not-allowed",
        ),
    ];
    for (extra, doc, purchase, detail) in cases {
        let (seller, wallet) = (Seller::default(), Wallet::new());
        let journal = place.journal().await;
        let mut options = Options::new().clock(FixedClock(NOW)).policy(policy(extra, "1000000")).journal(journal);
        if let Some(p) = purchase {
            options = options.purchase(p.clone());
        }
        let account = if doc["accepts"][0]["network"] == "eip155:8453" {
            // The account must be able to pay the option for the policy to be asked at all.
            Wallet(LocalSigner::from_hex(KEY, 8453).unwrap(), AtomicUsize::new(0))
        } else {
            wallet
        };
        let declined = transact(doc.clone(), pairing(), &account, &seller, &options).await.unwrap_err();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, *detail), "{detail}");
        assert!(declined.cause.as_deref().is_some_and(|c| !c.is_empty()), "{detail}: no explanation");
        assert_eq!(seller.0.load(Ordering::SeqCst), 0, "{detail}: the link was fetched");
        assert_eq!(account.count(), 0, "{detail}: the signer was asked");
    }
}

async fn a_budget_holds_what_it_holds_and_the_next_payment_is_refused_unfetched(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let base = Options::new().clock(FixedClock(NOW)).policy(policy("", "25000")).journal(journal.clone());
    for n in 0..2 {
        let done = transact(offer("10000"), pairing(), &wallet, &seller, &base.clone().purchase(purchase(n))).await;
        assert!(matches!(done, Ok(TransactOutcome::Signed(_))), "{done:?}");
    }
    let declined =
        transact(offer("10000"), pairing(), &wallet, &seller, &base.clone().purchase(purchase(2))).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, "policy/budget-exhausted"));
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (2, 2), "the third was fetched or signed");
    // A day later the window has rolled.
    let later = base.clone().clock(FixedClock(NOW + 86_400)).purchase(purchase(3));
    assert!(matches!(
        transact(offer("10000"), pairing(), &wallet, &seller, &later).await,
        Ok(TransactOutcome::Signed(_))
    ));
}

#[tokio::test]
async fn budgets_without_a_journal_refuse_rather_than_go_uncounted() {
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).policy(policy("", "1000000")).purchase(purchase(0));
    let declined = transact(offer("10000"), pairing(), &wallet, &seller, &options).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, "policy/budget-exhausted"));
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (0, 0));
}

async fn above_the_threshold_the_payment_is_handed_back_and_paid_once_approved_unchanged(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let threshold = format!("approval_above = {{ \"eip155:84532/{USDC}\" = \"5000\" }}");
    let options = Options::new()
        .clock(FixedClock(NOW))
        .policy(policy(&threshold, "1000000"))
        .journal(journal)
        .purchase(purchase(0));
    let Ok(TransactOutcome::ApproveSpend(asked)) =
        transact(offer("10000"), pairing(), &wallet, &seller, &options).await
    else {
        panic!("not handed back")
    };
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (0, 0), "something was fetched or signed");
    assert_eq!(asked.approve_spend.quote.amount.to_string(), "10000");
    // Passed back through JSON, as an agent's host would.
    let back: terms::ApproveSpend = serde_json::from_value(serde_json::to_value(&asked).unwrap()).unwrap();
    // Changed: another amount.
    let mut changed = back.approve_spend.clone();
    changed.quote.amount = alloy_primitives::U256::from(1u64);
    let declined = transact(offer("10000"), pairing(), &wallet, &seller, &options.clone().spend_approved(changed))
        .await
        .unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, "policy/approval-changed"));
    assert_eq!(wallet.count(), 0);
    // Unchanged, a minute later (the validity window moves with the clock; the payment does not).
    let approved = options.clone().clock(FixedClock(NOW + 60)).spend_approved(back.approve_spend);
    let done = transact(offer("10000"), pairing(), &wallet, &seller, &approved).await;
    assert!(matches!(done, Ok(TransactOutcome::Signed(_))), "{done:?}");
    assert_eq!(wallet.count(), 1);
}

async fn a_purchase_signed_once_is_re_sent_byte_for_byte_and_never_signed_again(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new()
        .clock(FixedClock(NOW))
        .policy(policy("", "1000000"))
        .journal(journal.clone())
        .purchase(purchase(7));
    let Ok(TransactOutcome::Signed(first)) = transact(offer("10000"), pairing(), &wallet, &seller, &options).await
    else {
        panic!("not signed")
    };
    // Ten minutes later, the same purchase: the journal holds its payment as unknown, so it is re-sent.
    let later = options.clone().clock(FixedClock(NOW + 600));
    let Ok(TransactOutcome::Resend(again)) = transact(offer("10000"), pairing(), &wallet, &seller, &later).await else {
        panic!("not re-sent")
    };
    assert_eq!(again.resend.signed.as_ref().unwrap().as_str(), first.signed.as_ref().unwrap().as_str());
    assert_eq!(again.resend.attempt, first.attempt);
    assert_eq!(wallet.count(), 1, "signed twice");
    let key = purchase(7).key(wallet.account());
    let record = journal.record(&key).await.unwrap().unwrap();
    assert_eq!(record.payment_state, PaymentState::Unknown);
    // Another purchase is signed afresh.
    let other = options.clone().purchase(purchase(8));
    assert!(matches!(
        transact(offer("10000"), pairing(), &wallet, &seller, &other).await,
        Ok(TransactOutcome::Signed(_))
    ));
    assert_eq!(wallet.count(), 2);
}

async fn a_declined_payment_releases_its_reservation_and_may_be_tried_again(place: Place) {
    let journal = place.journal().await;
    let wallet = Wallet::new();
    let options = Options::new()
        .clock(FixedClock(NOW))
        .policy(policy("", "10000"))
        .journal(journal.clone())
        .purchase(purchase(1));
    // The link serves other bytes: hash-mismatch, before anything is recorded or reserved (the journal's `begin`
    // comes once the payment is built).
    struct Other;
    impl Fetch for Other {
        fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
            Box::pin(async { Ok(Response::new(200, vec![], terms::Body::from_bytes(b"other".to_vec()))) })
        }
    }
    let declined = transact(offer("10000"), pairing(), &wallet, &Other, &options).await.unwrap_err();
    assert_eq!(declined.code, DeclineCode::HashMismatch);
    assert!(journal.record(&purchase(1).key(wallet.account())).await.unwrap().is_none());
    // The budget holds exactly one payment, and the decline took nothing of it.
    let done = transact(offer("10000"), pairing(), &wallet, &Seller::default(), &options).await;
    assert!(matches!(done, Ok(TransactOutcome::Signed(_))), "{done:?}");
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_signs_nothing() {
    let dir = temp("readonly");
    let path = dir.join("j.db");
    drop(SqliteJournal::open(&path).unwrap());
    let journal: Arc<dyn SpendJournal> = Arc::new(SqliteJournal::open_read_only(&path).unwrap());
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).journal(journal).purchase(purchase(0));
    let declined = transact(offer("10000"), pairing(), &wallet, &seller, &options).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    assert!(declined.cause.is_some());
    // The journal's look is a read: the terms are fetched once, and the write before the wallet fails.
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (1, 0));
}

async fn without_policy_or_journal_the_payment_is_what_it_always_was(place: Place) {
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let plain = Options::new().clock(FixedClock(NOW)).ids(terms::CountingIds::default());
    let a = transact(offer("10000"), pairing(), &wallet, &seller, &plain).await.unwrap();
    let journal = place.journal().await;
    let guarded = Options::new()
        .clock(FixedClock(NOW))
        .ids(terms::CountingIds::default())
        .policy(policy("", "1000000"))
        .journal(journal)
        .purchase(purchase(0));
    let b = transact(offer("10000"), pairing(), &wallet, &seller, &guarded).await.unwrap();
    let (TransactOutcome::Signed(a), TransactOutcome::Signed(b)) = (a, b) else { panic!("not signed") };
    assert_eq!(a.signed, b.signed, "the policy and the journal changed the payment");
    assert_eq!((a.attempt, b.attempt.is_some()), (None, true));
}

/// One spender process: 200 payments (its own purchases) from the shared journal, each printed as it is decided.
#[test]
#[ignore = "run by eight_processes_spend_one_budget_and_never_more as a child process"]
fn spender() {
    let (Ok(spec), Ok(worker)) = (std::env::var("SPEND_JOURNAL"), std::env::var("SPEND_WORKER")) else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        // Eight processes queue for one write lock: on a loaded machine a write can wait seconds, so the wait is long
        // (a write that times out fails its payment, and the test would count it as neither paid nor refused).
        let config = terms::safety::journal::JournalConfig {
            busy_timeout: std::time::Duration::from_secs(60),
            ..terms::safety::journal::JournalConfig::default()
        };
        let journal = backends::open_spec(&spec, config).await;
        let (seller, wallet) = (Seller::default(), Wallet::new());
        // 500 payments of 10000 fill the budget exactly.
        let base = Options::new().clock(FixedClock(NOW)).policy(policy("", "5000000")).journal(journal);
        let (mut paid, mut refused) = (0, 0);
        for n in 0..200 {
            let p = Purchase::new("GET", format!("https://api.seller.example/v1/quote?w={worker}&n={n}"));
            match transact(offer("10000"), pairing(), &wallet, &seller, &base.clone().purchase(p)).await {
                Ok(TransactOutcome::Signed(_)) => paid += 1,
                Err(d) if d.detail == "policy/budget-exhausted" => refused += 1,
                other => panic!("worker {worker}: {other:?}"),
            }
        }
        println!("@SPENT {paid} {refused}");
    });
}

async fn eight_processes_spend_one_budget_and_never_more(first: Place) {
    let started = std::time::Instant::now();
    let rounds = backends::stress_rounds();
    for round in 0..rounds {
        let place = first.fresh().await;
        drop(place.journal().await);
        let children: Vec<_> = (0..8)
            .map(|worker| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "spender", "--ignored", "--nocapture", "--test-threads=1"])
                    .env("SPEND_JOURNAL", place.spec())
                    .env("SPEND_WORKER", worker.to_string())
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let (mut paid, mut refused) = (0, 0);
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "a spender failed: {}", String::from_utf8_lossy(&out.stdout));
            let text = String::from_utf8(out.stdout).unwrap();
            // libtest prints `test spender ... ` before the child's own first line.
            let line = text.lines().find_map(|l| l.split_once("@SPENT ").map(|(_, t)| t)).expect("no tally");
            let counts: Vec<usize> = line.split(' ').map(|n| n.parse().unwrap()).collect();
            paid += counts[0];
            refused += counts[1];
        }
        assert_eq!((paid, refused), (500, 1100), "round {round}: {paid} payments passed a budget that holds 500");
        let journal = place.journal().await;
        let limit = alloy_primitives::U256::from(5_000_000u64);
        let asset = format!("eip155:84532/{USDC}");
        let used = journal.budget("usdc-day", "", &asset, 86_400, limit, NOW).await.unwrap();
        assert_eq!(used.remaining, alloy_primitives::U256::ZERO, "round {round}: {used:?}");
    }
    eprintln!("{}: eight spenders, {rounds} rounds of 1600 payments (500 paid): {:?}", first.name(), started.elapsed());
}

#[tokio::test]
async fn a_full_journal_signs_nothing() {
    use terms::safety::journal::JournalConfig;
    let path = temp("full").join("j.db");
    // Room for the schema and a few payments.
    let config = JournalConfig { max_bytes: Some(96 * 1024), ..JournalConfig::default() };
    let journal = SqliteJournal::open_with(&path, config).unwrap();
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).journal(Arc::new(journal)).purchase(purchase(0));
    let mut declined = None;
    for n in 0..500 {
        // Fill it: each payment adds a record; one of them finds the journal full.
        match transact(offer("10000"), pairing(), &wallet, &seller, &options.clone().purchase(purchase(n))).await {
            Ok(_) => {}
            Err(d) => {
                declined = Some(d);
                break;
            }
        }
    }
    let declined = declined.expect("the journal never filled");
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    // Every payment signed was recorded and returned; the refused one was not signed, or was dropped unreturned.
    let journal = SqliteJournal::open_read_only(&path).unwrap();
    let recorded = journal.history(&terms::safety::journal::HistoryFilter::new()).await.unwrap();
    let signed = recorded.iter().filter(|r| r.payment.is_some()).count();
    assert!(wallet.count() == signed || wallet.count() == signed + 1, "{} signed, {signed} recorded", wallet.count());
}

#[tokio::test]
async fn a_journal_locked_by_another_process_signs_nothing() {
    use terms::safety::journal::JournalConfig;
    let path = temp("locked").join("j.db");
    drop(SqliteJournal::open(&path).unwrap());
    // Another process holds the database's write lock for the whole call (a child `sqlite3`-free way: this test
    // binary's own child, holding an exclusive transaction until it is killed).
    let mut holder = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "lock_holder", "--ignored", "--nocapture", "--test-threads=1"])
        .env("LOCK_JOURNAL", &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(holder.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("@LOCKED") {
        line.clear();
        assert!(std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0, "the lock holder ended");
    }
    let config = JournalConfig { busy_timeout: std::time::Duration::from_millis(200), ..JournalConfig::default() };
    let journal = Arc::new(SqliteJournal::open_with(&path, config).unwrap());
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).journal(journal).purchase(purchase(0));
    let declined = transact(offer("10000"), pairing(), &wallet, &seller, &options).await.unwrap_err();
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    assert!(declined.cause.as_deref().is_some_and(|c| c.contains("lock")), "{:?}", declined.cause);
    // The look reads past the writer's lock (WAL): the terms are fetched once, and the write before the wallet fails.
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (1, 0));
}

/// Holds an exclusive lock on the journal until killed.
#[test]
#[ignore = "run by a_journal_locked_by_another_process_signs_nothing as a child process"]
fn lock_holder() {
    let Ok(path) = std::env::var("LOCK_JOURNAL") else { return };
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    println!("@LOCKED");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

async fn an_amount_past_two_to_the_256_is_never_quoted_or_signed(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options =
        Options::new().clock(FixedClock(NOW)).policy(policy("", "1000000")).journal(journal).purchase(purchase(0));
    let past = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    let declined = transact(offer(past), pairing(), &wallet, &seller, &options).await.unwrap_err();
    // The reference's own answer for an option it cannot read: before the quote, the policy or the journal.
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::OfferUnreadable, "x402/no-payable-option"));
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (0, 0));
}

#[tokio::test]
async fn a_journal_whose_postgres_server_is_gone_signs_nothing() {
    let Some(server) =
        backends::server(concat!(module_path!(), "::a_journal_whose_postgres_server_is_gone_signs_nothing"))
    else {
        return;
    };
    let proxy = backends::Proxy::start(&server, false).await;
    let url = proxy.url(&backends::fresh_schema(&server).await);
    let config = terms::safety::journal::JournalConfig {
        busy_timeout: std::time::Duration::from_millis(500),
        ..terms::safety::journal::JournalConfig::default()
    };
    let journal = Arc::new(terms::safety::postgres::PostgresJournal::connect_with(&url, config).await.unwrap());
    // The server goes away (every connection dropped, nothing listening) after the journal connected.
    proxy.close();
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).policy(policy("", "1000000")).journal(journal);
    let declined =
        transact(offer("10000"), pairing(), &wallet, &seller, &options.purchase(purchase(0))).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    assert!(declined.cause.as_deref().is_some_and(|c| c.contains("cannot be reached")), "{:?}", declined.cause);
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (0, 0));
}

#[tokio::test]
async fn a_postgres_journal_locked_by_another_session_signs_nothing() {
    let test = concat!(module_path!(), "::a_postgres_journal_locked_by_another_session_signs_nothing");
    let Some(server) = backends::server(test) else { return };
    let url = backends::fresh_schema(&server).await;
    let config = terms::safety::journal::JournalConfig {
        busy_timeout: std::time::Duration::from_millis(200),
        ..terms::safety::journal::JournalConfig::default()
    };
    let journal = Arc::new(terms::safety::postgres::PostgresJournal::connect_with(&url, config).await.unwrap());
    let holder = backends::client(&url).await;
    holder.batch_execute("BEGIN; LOCK TABLE terms_attempts IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let (seller, wallet) = (Seller::default(), Wallet::new());
    let options = Options::new().clock(FixedClock(NOW)).journal(journal).purchase(purchase(0));
    let declined = transact(offer("10000"), pairing(), &wallet, &seller, &options).await.unwrap_err();
    holder.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    assert!(declined.cause.as_deref().is_some_and(|c| c.contains("locked by another process")), "{:?}", declined.cause);
    assert_eq!((seller.0.load(Ordering::SeqCst), wallet.count()), (0, 0));
}
