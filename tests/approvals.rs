//! The approval queue inside `transact`, on both journals (a SQLite file and a PostgreSQL server): a payment above
//! the policy's threshold waits for a person with its quote, H, terms, rule, agent and expiry, nothing signed; once
//! approved it is paid on the purchase's next call, once; and the bad input: an id approved twice, a denied
//! purchase, an expired approval, an approval whose quote or H changed before the payment, an unknown id, two sends
//! racing one approval.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use terms::safety::policy::Policy;
use terms::safety::{Approval, ApprovalError, ApprovalState, JournalError, Purchase};
use terms::{
    BoxFuture, DeclineCode, Fetch, FetchError, FixedClock, Options, Request, Response, Signer, TransactOutcome,
    atr_hash, transact,
};

#[macro_use]
#[path = "backends/mod.rs"]
mod backends;
mod support;

use backends::{Journal, Place};
use support::CountingSigner;

on_both_backends!(
    a_queued_payment_is_paid_once_a_person_approves_and_the_approval_is_used_once,
    a_denied_purchase_declines_and_is_never_signed,
    an_expired_approval_is_neither_decided_nor_paid,
    an_approval_whose_quote_or_h_changed_pays_nothing_and_a_new_one_is_queued,
    terms_that_do_not_hash_to_h_are_never_queued,
    two_sends_racing_one_approval_sign_once,
    an_approval_taken_by_a_send_that_never_signs_is_asked_again_never_paid_twice,
);

const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const NOW: u64 = 1_790_000_000;
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const TERMS: &[u8] = b"Terms of the report\nThe seller delivers one report per payment.\n";
const OTHER_TERMS: &[u8] = b"Terms of the report, second edition\nNo refunds.\n";

/// The quickstart policy with an approval threshold of 5000 (cap 50000).
fn policy() -> Arc<Policy> {
    let text = format!(
        r#"
resources = ["https://api.seller.example/v1/"]
networks = ["eip155:84532"]
approval_above = {{ "eip155:84532/{USDC}" = "5000" }}

[[assets]]
network = "eip155:84532"
address = "{USDC}"
symbol = "USDC"
decimals = 6
cap = "50000"
"#
    );
    Arc::new(Policy::from_toml_str(&text).unwrap())
}

/// The seller's 402 for `amount`, advertising the hash of `terms`.
fn offer(amount: &str, terms: &[u8]) -> Value {
    let h = atr_hash(terms).to_hex();
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/report"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": amount, "asset": USDC,
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h, "legalContextUrl": format!("https://atr.seller.example/{h}")
        }}}
    })
}

/// Serves the bytes it holds at any link; counts the fetches.
struct Seller(Mutex<Vec<u8>>, AtomicUsize);

impl Seller {
    fn new(terms: &[u8]) -> Self {
        Self(Mutex::new(terms.to_vec()), AtomicUsize::new(0))
    }
    fn serve(&self, terms: &[u8]) {
        *self.0.lock().unwrap() = terms.to_vec();
    }
    fn fetches(&self) -> usize {
        self.1.load(Ordering::SeqCst)
    }
}

impl Fetch for Seller {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.1.fetch_add(1, Ordering::SeqCst);
        let bytes = self.0.lock().unwrap().clone();
        Box::pin(async move { Ok(Response::new(200, vec![], terms::Body::from_bytes(bytes))) })
    }
}

/// The payer's wallet (Anvil's key #0 on Base Sepolia), counting what it signs.
fn wallet() -> CountingSigner {
    CountingSigner::new(KEY, "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
}

fn pairing() -> &'static dyn terms::pairing::Pairing {
    terms::pairing("x402/exact/eip155/eip3009").unwrap()
}

/// The options of purchase `n` at `now`, with the policy, the journal and its queue, and an agent's name.
fn options(journal: &Arc<dyn Journal>, n: usize, now: u64) -> Options {
    Options::new()
        .clock(FixedClock(now))
        .policy(policy())
        .journal(journal.clone())
        .approvals(journal.clone())
        .agent("report-agent 1.0")
        .purchase(Purchase::new("GET", format!("https://api.seller.example/v1/report?n={n}")))
}

/// `transact` of `amount` under `terms`; its pending approval, or a panic naming what came instead.
async fn pending(seller: &Seller, wallet: &CountingSigner, options: &Options, amount: &str, terms: &[u8]) -> Approval {
    match transact(offer(amount, terms), pairing(), wallet, seller, options).await {
        Ok(TransactOutcome::PendingApproval(p)) => *p.pending_approval,
        other => panic!("not queued: {other:?}"),
    }
}

fn not_pending(result: Result<Approval, ApprovalError>, state: ApprovalState) {
    match result {
        Err(ApprovalError::NotPending { state: s, .. }) => assert_eq!(s, state),
        other => panic!("decided again: {other:?}"),
    }
}

async fn a_queued_payment_is_paid_once_a_person_approves_and_the_approval_is_used_once(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    let asked = pending(&seller, &wallet, &options(&journal, 0, NOW), "10000", TERMS).await;
    assert_eq!((seller.fetches(), wallet.count()), (1, 0), "the terms are compared; nothing is signed");
    assert!(asked.id.starts_with("ap_") && asked.id.len() == 23, "{}", asked.id);
    assert_eq!(asked.state, ApprovalState::Pending);
    assert_eq!(
        (asked.quote.amount.to_string().as_str(), asked.quote.payee.as_str()),
        ("10000", asked.quote.payee.as_str())
    );
    assert_eq!((asked.h, asked.bytes.as_slice()), (atr_hash(TERMS), TERMS));
    assert_eq!(asked.link, format!("https://atr.seller.example/{}", atr_hash(TERMS).to_hex()));
    assert!(asked.rule.starts_with(&format!("approval_above.\"eip155:84532/{USDC}\" = \"5000\"")), "{}", asked.rule);
    assert_eq!(asked.agent.as_deref(), Some("report-agent 1.0"));
    assert_eq!((asked.created_at, asked.expires_at), (NOW, NOW + terms::safety::APPROVAL_EXPIRY_SECONDS));
    assert_eq!(asked.purchase.as_ref().map(|p| p.url.as_str()), Some("https://api.seller.example/v1/report?n=0"));
    // The queue holds it as it was handed back.
    let listed = journal.pending(NOW + 1).await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&asked));
    assert_eq!(journal.approval(&asked.id, NOW + 1).await.unwrap().as_ref(), Some(&asked));
    // Asked again before a person decided: the same approval, not a second one.
    let again = pending(&seller, &wallet, &options(&journal, 0, NOW + 5), "10000", TERMS).await;
    assert_eq!(again.id, asked.id);
    assert_eq!(journal.pending(NOW + 5).await.unwrap().len(), 1);
    assert_eq!(wallet.count(), 0);

    let approved = journal.approve(&asked.id, NOW + 10).await.unwrap();
    assert_eq!((approved.state, approved.decided_at), (ApprovalState::Approved, Some(NOW + 10)));
    assert!(journal.pending(NOW + 10).await.unwrap().is_empty());
    // Approved twice, or denied after: refused, once decided is decided.
    not_pending(journal.approve(&asked.id, NOW + 11).await, ApprovalState::Approved);
    not_pending(journal.deny(&asked.id, NOW + 11).await, ApprovalState::Approved);
    assert_eq!(wallet.count(), 0, "approving signs nothing");

    // The purchase's next call pays it.
    let paid = transact(offer("10000", TERMS), pairing(), &wallet, &seller, &options(&journal, 0, NOW + 20)).await;
    let Ok(TransactOutcome::Signed(done)) = paid else { panic!("not paid: {paid:?}") };
    assert_eq!(wallet.count(), 1);
    let used = journal.approval(&asked.id, NOW + 20).await.unwrap().unwrap();
    assert_eq!((used.state, used.attempt.as_deref()), (ApprovalState::Used, done.attempt.as_deref()));
    // Called again: the same payment re-sent from the journal, never signed again, the approval not asked for.
    let resent = transact(offer("10000", TERMS), pairing(), &wallet, &seller, &options(&journal, 0, NOW + 30)).await;
    let Ok(TransactOutcome::Resend(r)) = resent else { panic!("not re-sent: {resent:?}") };
    assert_eq!(r.resend.signed, done.signed);
    assert_eq!(wallet.count(), 1);
    not_pending(journal.approve(&asked.id, NOW + 31).await, ApprovalState::Used);
    // An id the queue never gave.
    assert!(matches!(journal.approve("ap_nosuchid", NOW).await, Err(ApprovalError::NotFound(_))));
    assert!(matches!(journal.deny("", NOW).await, Err(ApprovalError::NotFound(_))));
    assert_eq!(journal.approval("ap_nosuchid", NOW).await.unwrap(), None);
}

async fn a_denied_purchase_declines_and_is_never_signed(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    let asked = pending(&seller, &wallet, &options(&journal, 1, NOW), "10000", TERMS).await;
    let denied = journal.deny(&asked.id, NOW + 10).await.unwrap();
    assert_eq!(denied.state, ApprovalState::Denied);
    not_pending(journal.deny(&asked.id, NOW + 11).await, ApprovalState::Denied);
    not_pending(journal.approve(&asked.id, NOW + 11).await, ApprovalState::Denied);
    for (now, amount) in [(NOW + 20, "10000"), (NOW + 30, "20000"), (NOW + 100_000, "10000")] {
        // The same offer, another amount, and long after the approval's expiry: declined each time, never queued.
        let declined =
            transact(offer(amount, TERMS), pairing(), &wallet, &seller, &options(&journal, 1, now)).await.unwrap_err();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, "policy/approval-denied"));
        assert!(declined.cause.as_deref().unwrap_or_default().contains(&asked.id), "{declined:?}");
    }
    assert_eq!(wallet.count(), 0);
    assert!(journal.pending(NOW + 20).await.unwrap().is_empty());
    // Another purchase asks again.
    let other = pending(&seller, &wallet, &options(&journal, 2, NOW + 40), "10000", TERMS).await;
    assert_ne!(other.id, asked.id);
}

async fn an_expired_approval_is_neither_decided_nor_paid(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    let at = |now| options(&journal, 3, now).approval_expiry(100);
    let first = pending(&seller, &wallet, &at(NOW), "10000", TERMS).await;
    assert_eq!(first.expires_at, NOW + 100);
    assert_eq!(journal.pending(NOW + 99).await.unwrap().len(), 1);
    assert!(journal.pending(NOW + 100).await.unwrap().is_empty(), "an expired approval waits for no one");
    match journal.approve(&first.id, NOW + 100).await {
        Err(ApprovalError::Expired { id, expires_at }) => assert_eq!((id, expires_at), (first.id.clone(), NOW + 100)),
        other => panic!("an expired approval was decided: {other:?}"),
    }
    assert_eq!(journal.approval(&first.id, NOW + 100).await.unwrap().unwrap().state, ApprovalState::Expired);
    // The purchase asks again: a new approval, the old one marked expired.
    let second = pending(&seller, &wallet, &at(NOW + 150), "10000", TERMS).await;
    assert_ne!(second.id, first.id);
    assert_eq!(journal.approval(&first.id, NOW).await.unwrap().unwrap().state, ApprovalState::Expired);
    // Approved in time, paid too late: nothing signed, and a third approval is queued.
    journal.approve(&second.id, NOW + 160).await.unwrap();
    let third = pending(&seller, &wallet, &at(NOW + 250), "10000", TERMS).await;
    assert_ne!(third.id, second.id);
    assert_eq!(journal.approval(&second.id, NOW + 150).await.unwrap().unwrap().state, ApprovalState::Expired);
    assert_eq!(wallet.count(), 0);
}

async fn an_approval_whose_quote_or_h_changed_pays_nothing_and_a_new_one_is_queued(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    // The amount changes after the approval.
    let asked = pending(&seller, &wallet, &options(&journal, 4, NOW), "10000", TERMS).await;
    journal.approve(&asked.id, NOW + 10).await.unwrap();
    let raised = pending(&seller, &wallet, &options(&journal, 4, NOW + 20), "20000", TERMS).await;
    assert_ne!(raised.id, asked.id);
    assert_eq!(raised.quote.amount.to_string(), "20000");
    assert_eq!(journal.approval(&asked.id, NOW + 20).await.unwrap().unwrap().state, ApprovalState::Superseded);
    not_pending(journal.approve(&asked.id, NOW + 21).await, ApprovalState::Superseded);
    // Back to the approved amount: the superseded approval pays nothing either.
    let back = pending(&seller, &wallet, &options(&journal, 4, NOW + 25), "10000", TERMS).await;
    assert!(back.id != asked.id && back.id != raised.id);
    assert_eq!(wallet.count(), 0);

    // The terms change after the approval (the seller serves new bytes under their new hash).
    let asked = pending(&seller, &wallet, &options(&journal, 5, NOW), "10000", TERMS).await;
    journal.approve(&asked.id, NOW + 10).await.unwrap();
    seller.serve(OTHER_TERMS);
    let changed = pending(&seller, &wallet, &options(&journal, 5, NOW + 20), "10000", OTHER_TERMS).await;
    assert_eq!((changed.h, changed.bytes.as_slice()), (atr_hash(OTHER_TERMS), OTHER_TERMS));
    assert_eq!(journal.approval(&asked.id, NOW + 20).await.unwrap().unwrap().state, ApprovalState::Superseded);
    assert_eq!(wallet.count(), 0, "an approval of other terms pays nothing");
    // Approved as it is now, it is paid.
    journal.approve(&changed.id, NOW + 30).await.unwrap();
    let paid =
        transact(offer("10000", OTHER_TERMS), pairing(), &wallet, &seller, &options(&journal, 5, NOW + 40)).await;
    let Ok(TransactOutcome::Signed(done)) = paid else { panic!("not paid: {paid:?}") };
    assert_eq!((done.h, wallet.count()), (atr_hash(OTHER_TERMS), 1));
}

async fn terms_that_do_not_hash_to_h_are_never_queued(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(OTHER_TERMS), wallet());
    let declined =
        transact(offer("10000", TERMS), pairing(), &wallet, &seller, &options(&journal, 6, NOW)).await.unwrap_err();
    assert_eq!(declined.code, DeclineCode::HashMismatch);
    assert!(journal.pending(NOW).await.unwrap().is_empty(), "no person is asked about terms that do not match");
    assert_eq!(wallet.count(), 0);
}

async fn two_sends_racing_one_approval_sign_once(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    let asked = pending(&seller, &wallet, &options(&journal, 7, NOW), "10000", TERMS).await;
    journal.approve(&asked.id, NOW + 10).await.unwrap();
    let (a, b) = (options(&journal, 7, NOW + 20), options(&journal, 7, NOW + 20));
    let (one, two) = tokio::join!(
        transact(offer("10000", TERMS), pairing(), &wallet, &seller, &a),
        transact(offer("10000", TERMS), pairing(), &wallet, &seller, &b),
    );
    let signed = [&one, &two].iter().filter(|r| matches!(r, Ok(TransactOutcome::Signed(_)))).count();
    assert_eq!((signed, wallet.count()), (1, 1), "{one:?} {two:?}");
    // The other send re-sends it, waits on it, or asks a person again: never a second signature.
    for other in [&one, &two] {
        match other {
            Ok(TransactOutcome::Signed(_) | TransactOutcome::Resend(_) | TransactOutcome::PendingApproval(_)) => {}
            Err(d) if d.detail == "journal/in-flight" => {}
            other => panic!("{other:?}"),
        }
    }
    let key = Purchase::new("GET", "https://api.seller.example/v1/report?n=7").key(wallet.account());
    assert_eq!(journal.attempts(&key).await.unwrap().len(), 1, "one attempt began");
}

/// The journal, with its `begin` failing: a send that took its approval and never recorded an intent, as a process
/// killed right after the approval's write would leave it.
#[derive(Debug)]
struct NoBegin(Arc<dyn Journal>);

impl terms::safety::SpendJournal for NoBegin {
    fn begin<'a>(
        &'a self,
        _: &'a terms::safety::Intent<'a>,
    ) -> BoxFuture<'a, Result<terms::safety::Begun, JournalError>> {
        Box::pin(async { Err(JournalError("the process died here".into())) })
    }
    fn look<'a>(
        &'a self,
        intent: &'a terms::safety::Intent<'a>,
    ) -> BoxFuture<'a, Result<terms::safety::Begun, JournalError>> {
        self.0.look(intent)
    }
    fn stepped<'a>(&'a self, a: &'a str, p: &'a terms::safety::Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.stepped(a, p)
    }
    fn moving<'a>(&'a self, a: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.moving(a)
    }
    fn signed<'a>(&'a self, a: &'a str, b: &'a [u8], p: &'a Value) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.signed(a, b, p)
    }
    fn ended<'a>(&'a self, a: &'a str, e: terms::safety::Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.ended(a, e)
    }
    fn answered<'a>(&'a self, a: &'a str, x: terms::safety::Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.answered(a, x)
    }
}

async fn an_approval_taken_by_a_send_that_never_signs_is_asked_again_never_paid_twice(place: Place) {
    let journal = place.journal().await;
    let (seller, wallet) = (Seller::new(TERMS), wallet());
    let asked = pending(&seller, &wallet, &options(&journal, 8, NOW), "10000", TERMS).await;
    journal.approve(&asked.id, NOW + 10).await.unwrap();
    let dying = options(&journal, 8, NOW + 20).journal(Arc::new(NoBegin(journal.clone())));
    let declined = transact(offer("10000", TERMS), pairing(), &wallet, &seller, &dying).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::JournalFailed, "journal/unavailable"));
    assert_eq!(wallet.count(), 0, "nothing is signed before the intent is recorded");
    let used = journal.approval(&asked.id, NOW + 20).await.unwrap().unwrap();
    assert_eq!(used.state, ApprovalState::Used, "taken before anything was signed: it pays nothing again");
    // The next send finds nothing to re-send: a person is asked again, and only that approval pays, once.
    let again = pending(&seller, &wallet, &options(&journal, 8, NOW + 30), "10000", TERMS).await;
    assert_ne!(again.id, asked.id);
    journal.approve(&again.id, NOW + 40).await.unwrap();
    let paid = transact(offer("10000", TERMS), pairing(), &wallet, &seller, &options(&journal, 8, NOW + 50)).await;
    assert!(matches!(paid, Ok(TransactOutcome::Signed(_))), "{paid:?}");
    assert_eq!(wallet.count(), 1);
}
