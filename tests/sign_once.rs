//! Sign once, even across a crash (issue 40), in one process and on paused time: a journal whose write fails right
//! after the wallet answered leaves the attempt exactly as a process killed there does (its request recorded, no
//! signed payment); the purchase's next try, past the lease, asks the wallet the identical request, and never
//! builds a new payment from the offer it meets then (whose validity window, read from a later clock, differs).
//! The bad inputs: a journal whose recorded request, pairing or payer was edited, and a key reused for another
//! body. `tests/crash.rs` kills real processes at every step; this file pins each rule with one case.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/mod.rs"]
mod seller;

#[path = "backends/mod.rs"]
mod backends;

#[path = "support/dying.rs"]
mod dying;

use std::sync::{Arc, Mutex};

use dying::{At, Dying};
use serde_json::{Value, json};
use terms::safety::journal::{Journal, JournalConfig, PaymentState, SqliteJournal, Stage};
use terms::safety::{Purchase, SpendJournal};
use terms::{
    Answer, BoxFuture, DeclineCode, Declined, FixedClock, Options, Signer, SignerError, SigningRequest,
    TransactOutcome, confirm, transact,
};

const NOW: u64 = seller::NOW;
/// Past the journal's default lease (300 s).
const LATER: u64 = NOW + 3_600;
const PAIRING: &str = "x402/exact/eip155/eip3009";

/// The seller's offer paid with EIP-3009 (no agreement first): its validity window is read from the clock.
fn offer() -> Value {
    let mut offer = seller::offer();
    let info = offer.pointer_mut("/extensions/legalContext/info").unwrap().as_object_mut().unwrap();
    info.remove("legalContextAgreementUrl");
    offer["accepts"][0]["extra"].as_object_mut().unwrap().remove("assetTransferMethod");
    offer
}

/// The examples' wallet (RFC 6979: one request, one signature), keeping every request and answer; refusing the
/// first `refuse` requests.
struct Recording {
    inner: seller::Wallet,
    asked: Mutex<Vec<(Value, Option<Value>)>>,
    refuse: Mutex<usize>,
}

impl Recording {
    fn new(refuse: usize) -> Self {
        Self { inner: seller::Wallet::new().unwrap(), asked: Mutex::default(), refuse: Mutex::new(refuse) }
    }

    fn asked(&self) -> Vec<(Value, Option<Value>)> {
        self.asked.lock().unwrap().clone()
    }
}

impl Signer for Recording {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let refuse = {
                let mut left = self.refuse.lock().unwrap();
                let refuse = *left > 0;
                *left = left.saturating_sub(1);
                refuse
            };
            let answer =
                if refuse { Err(SignerError::new("the person said no")) } else { self.inner.sign(request).await };
            let kept = answer.as_ref().ok().map(|a| a.as_json().clone());
            self.asked.lock().unwrap().push((request.to_json(), kept));
            answer
        })
    }
}

fn purchase() -> Purchase {
    Purchase::new("POST", "https://api.seller.example/v1/quote").with_body(b"{\"n\":1}")
}

async fn pay(
    journal: Arc<dyn SpendJournal>,
    wallet: &Recording,
    at: u64,
    p: Purchase,
) -> Result<TransactOutcome, Declined> {
    let options = Options::new().clock(FixedClock(at)).journal(journal).purchase(p);
    let pairing = terms::pairing(PAIRING).unwrap();
    transact(offer(), pairing, wallet, &seller::Seller::new().unwrap(), &options).await
}

fn refused(got: &Result<TransactOutcome, Declined>, code: DeclineCode, detail: &str) -> String {
    match got {
        Err(d) if d.code == code && d.detail == detail => d.cause.clone().unwrap_or_default(),
        other => panic!("wanted {code:?} {detail}, got {other:?}"),
    }
}

/// The journal's one attempt of the purchase.
async fn attempt(store: &dyn Journal) -> terms::safety::journal::Record {
    let key = purchase().key(seller::Wallet::new().unwrap().account());
    let mut all = store.attempts(&key).await.unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    all.pop().unwrap()
}

/// Each backend the suite has: a SQLite file, and PostgreSQL where `TERMS_TEST_POSTGRES` names a server.
async fn journals(test: &str) -> Vec<(tempfile::TempDir, Arc<dyn Journal>)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let sqlite: Arc<dyn Journal> = Arc::new(SqliteJournal::open(&path).unwrap());
    let mut all = vec![(dir, sqlite)];
    if let Some(server) = backends::server(test) {
        let spec = backends::fresh_schema(&server).await;
        all.push((tempfile::tempdir().unwrap(), backends::open_spec(&spec, JournalConfig::default()).await));
    }
    all
}

#[tokio::test]
async fn a_wallet_answer_lost_before_the_signed_write_is_asked_again_identically() {
    for (_dir, journal) in
        journals(concat!(module_path!(), "::a_wallet_answer_lost_before_the_signed_write_is_asked_again_identically"))
            .await
    {
        let wallet = Recording::new(0);
        // The wallet answers; the process dies before `signed`.
        let dying = Arc::new(Dying::new(journal.clone(), At::Signed));
        let got = pay(dying.clone(), &wallet, NOW, purchase()).await;
        assert!(dying.died());
        assert_eq!(
            refused(&got, DeclineCode::JournalFailed, "journal/unavailable"),
            "the process was killed before the journal's signed write"
        );
        let recorded = attempt(journal.as_ref()).await;
        assert_eq!((recorded.stage, recorded.payment.as_ref()), (Stage::Intent, None));
        let first = wallet.asked();
        assert_eq!(first.len(), 1);
        assert_eq!(recorded.prepared.as_ref().unwrap()["request"], first[0].0, "recorded before it was asked");

        // Within the lease: in flight, nothing asked.
        let got = pay(journal.clone(), &wallet, NOW + 10, purchase()).await;
        refused(&got, DeclineCode::JournalFailed, "journal/in-flight");
        assert_eq!(wallet.asked().len(), 1);

        // Past it: a fresh build would draw another window, and the wallet is asked the identical request instead.
        let fresh = confirm(
            offer(),
            terms::pairing(PAIRING).unwrap(),
            wallet.account(),
            &seller::Seller::new().unwrap(),
            &Options::new().clock(FixedClock(LATER)),
        )
        .await
        .unwrap();
        assert_ne!(fresh.request.as_ref().unwrap().to_json(), first[0].0, "the later offer builds another payment");
        let got = pay(journal.clone(), &wallet, LATER, purchase()).await;
        let Ok(TransactOutcome::Signed(paid)) = got else { panic!("{got:?}") };
        let asked = wallet.asked();
        assert_eq!(asked.len(), 2);
        assert_eq!(asked[1], asked[0], "the same request, and (RFC 6979) the same signature");
        let recorded = attempt(journal.as_ref()).await;
        assert_eq!((recorded.stage, recorded.payment_state), (Stage::Signed, PaymentState::Unknown));
        assert_eq!(paid.attempt.as_deref(), Some(recorded.attempt.as_str()));

        // From here the payment is re-sent, never signed again.
        let got = pay(journal.clone(), &wallet, LATER + 10, purchase()).await;
        let Ok(TransactOutcome::Resend(again)) = got else { panic!("{got:?}") };
        assert_eq!(again.resend.signed, paid.signed);
        assert_eq!(wallet.asked().len(), 2);
    }
}

/// A wallet that refuses (a person said no, or a remote signer failed) may still hold a signature of the request:
/// the attempt stays with its request, and the purchase's next try asks the same request at once.
#[tokio::test]
async fn a_wallet_that_refused_is_asked_the_same_request_on_the_next_try() {
    for (_dir, journal) in
        journals(concat!(module_path!(), "::a_wallet_that_refused_is_asked_the_same_request_on_the_next_try")).await
    {
        let wallet = Recording::new(1);
        let got = pay(journal.clone(), &wallet, NOW, purchase()).await;
        refused(&got, DeclineCode::SignerFailed, "The signer did not sign.");
        let recorded = attempt(journal.as_ref()).await;
        assert_eq!((recorded.stage, recorded.payment_state), (Stage::Intent, PaymentState::NotPaid));
        assert!(recorded.decline.is_some() && recorded.reservations.iter().all(|r| r.state.as_str() == "reserved"));
        let got = pay(journal.clone(), &wallet, NOW + 60, purchase()).await;
        assert!(matches!(got, Ok(TransactOutcome::Signed(_))), "{got:?}");
        let asked = wallet.asked();
        assert_eq!((asked.len(), &asked[1].0), (2, &asked[0].0), "one request, asked twice");
    }
}

/// What the journal recorded is what is asked: a record edited after the fact (the request, the pairing, the
/// payer, the choice, the ATR bytes, the steps) or unreadable is `journal/state-unknown`, and nothing is signed; a key reused for another body keeps its payment and
/// pays nothing for the new body.
#[tokio::test]
async fn an_edited_record_or_a_reused_key_signs_nothing() {
    let set = |column: &str, value: &str| format!("UPDATE attempts SET {column} = '{value}'");
    // Each edit, and the words of the refusal it meets.
    let edits = [
        (
            set(
                "prepared",
                r#"{"request":{"kind":"eip712","typedData":{"domain":{},"types":{},"primaryType":"X","message":{}}}}"#,
            ),
            "journal's request of attempt",
        ),
        (set("pairing", "x402/exact/eip155/permit2"), "recorded a payment for the pairing"),
        (set("account", "eip155:84532:0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), "recorded a payment from"),
        (set("chosen", r#"{"pairing":"x402/exact/eip155/eip3009","choice":{},"reference":"r"}"#), "choice"),
        (set("prepared", "not json"), "that record is unreadable"),
        ("UPDATE atr SET bytes = x'00'".to_owned(), "do not hash to its H"),
        (
            "UPDATE attempts SET prepared = json_set(prepared, '$.answers', json('[\"0x00\"]'))".to_owned(),
            "journal's steps of attempt",
        ),
    ];
    for (edit, words) in edits {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let journal: Arc<dyn Journal> = Arc::new(SqliteJournal::open(&path).unwrap());
        let wallet = Recording::new(0);
        let dying = Arc::new(Dying::new(journal.clone(), At::Signed));
        let _ = pay(dying, &wallet, NOW, purchase()).await;
        assert_eq!(rusqlite::Connection::open(&path).unwrap().execute(&edit, []).unwrap(), 1, "{edit}");
        let got = pay(journal.clone(), &wallet, LATER, purchase()).await;
        let cause = refused(&got, DeclineCode::JournalFailed, "journal/state-unknown");
        assert!(cause.contains(words), "{edit}: {cause}");
        assert!(cause.contains("nothing was signed") || cause.contains("nothing new may be signed"), "{edit}: {cause}");
        assert_eq!(wallet.asked().len(), 1, "{edit}: the wallet is not asked again");
    }

    // The same key, another body: the earlier payment stands, and the new body is not paid under that key.
    let dir = tempfile::tempdir().unwrap();
    let journal: Arc<dyn Journal> = Arc::new(SqliteJournal::open(dir.path().join("j.db")).unwrap());
    let wallet = Recording::new(0);
    let keyed =
        |body: &[u8]| Purchase::new("POST", "https://api.seller.example/v1/quote").with_body(body).with_key("k-1");
    let got = pay(journal.clone(), &wallet, NOW, keyed(b"one")).await;
    assert!(matches!(got, Ok(TransactOutcome::Signed(_))), "{got:?}");
    let got = pay(journal.clone(), &wallet, LATER, keyed(b"two")).await;
    let cause = refused(&got, DeclineCode::JournalFailed, "journal/key-reused");
    assert!(cause.contains("its payment stands"), "{cause}");
    assert_eq!(wallet.asked().len(), 1);
    let got = pay(journal.clone(), &wallet, LATER, keyed(b"one")).await;
    assert!(matches!(got, Ok(TransactOutcome::Resend(_))), "{got:?}");
}

/// A journal the previous release wrote (schema version 1, no `prepared` column) is read as it is when opened
/// read-only, and migrated once when opened for writing: its records read the same, with nothing prepared.
#[tokio::test]
async fn a_version_1_journal_is_read_as_it_is_and_migrated_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    {
        let journal = SqliteJournal::open(&path).unwrap();
        let wallet = Recording::new(0);
        let got = pay(Arc::new(journal), &wallet, NOW, purchase()).await;
        assert!(matches!(got, Ok(TransactOutcome::Signed(_))), "{got:?}");
    }
    // Back to what version 1 wrote: version 3's running totals and indexes dropped, version 2's column dropped, the
    // version 1.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE budget_totals; DROP TABLE budget_faults; DROP INDEX attempts_by_payee; \
         DROP INDEX attempts_by_state; DROP INDEX attempts_by_nonce; \
         ALTER TABLE attempts DROP COLUMN prepared; PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(conn);
    let read_only = SqliteJournal::open_read_only(&path).unwrap();
    let before = attempt(&read_only).await;
    assert!(before.prepared.is_none());
    drop(read_only);
    let version = |p: &std::path::Path| -> i64 {
        rusqlite::Connection::open(p).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(version(&path), 1, "a read-only open changes nothing");
    let journal = SqliteJournal::open(&path).unwrap();
    assert_eq!(version(&path), 3);
    assert_eq!(attempt(&journal).await, before);
    drop(journal);
    drop(SqliteJournal::open(&path).unwrap());
    assert_eq!(version(&path), 3);
    let _ = json!({});
}
