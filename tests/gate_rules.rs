//! Three rules of the gate, each held by a test that fails when the rule is broken (found by mutation testing: each
//! mutant below survived the suite before these tests):
//!
//! - `finish` skips the read-back of H only for a pairing whose payment is no public proof and whose read-back says
//!   it has nothing to read (its payment is proven by the agreement payment): a public-proof pairing that says
//!   so, a no-proof pairing that refuses for another reason, or one that reads another H, is declined;
//! - `confirm` takes a build's refusal as "nothing to sign" only when it says so: any other build refusal declines;
//! - after a signer that moves the money itself, a decline of `finish` carries what moved; after one that does not,
//!   or one that gave no answer (none, or `null`), it carries nothing.
//! - `transact` completes the build `confirm` made rather than building the payment again (the kept build is used
//!   only when made with the hash of the bytes being finished: `==` turned to `!=` there made every payment build
//!   twice, unseen).
//! - `check_landed` declines bytes over the cap (exactly the cap is read) and a landed read that is not a JSON object
//!   beside a JSON object (five mutants of its two guards, each a real gap, survived before).
//! - `transact` takes a payment with nothing to sign as paid only when its completion says "nothing to sign"; any
//!   other completion failure declines.
//! - a signer that fails at the first step has moved nothing, whatever the pairing's signer does.
//! - the journal is told a payment is moving before a signer that moves the money itself is asked, and not before
//!   one that only signs.
//!
//! The pairing is a stub of ours whose every answer the test sets.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use serde_json::{Map, Value, json};
use terms::json::Member;
use terms::pairing::{Advertised, ChooseContext, Completion, InputSpec, Offer, Quote, Unsigned};
use terms::safety::{Answered, Begun, Ended, Intent, JournalError, Prepared, SpendJournal};
use terms::{
    Answer, AtrHash, BoxFuture, Chosen, DeclineCode, Fetch, FetchError, Finish, Options, Pairing, Reason, Refusal,
    Request, Response, SigningRequest, atr_hash, confirm, finish,
};

const ATR: &[u8] = b"the terms";
const LINK: &str = "https://atr.seller.example/terms";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Build {
    /// A request for the signer.
    Request,
    /// The build is the payment: nothing to sign.
    Nothing,
    /// The build refuses (not "nothing to sign").
    Refuses,
    /// The build is made, and asks the signer nothing: the build is the payment.
    Empty,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    /// Reads the hash of the compared bytes.
    H,
    /// Reads another hash.
    Other,
    /// Says it has nothing to read.
    NothingToSign,
    /// Refuses for another reason.
    Refuses,
}

#[derive(Debug, Clone, Copy)]
struct Stub {
    public_proof: bool,
    build: Build,
    bound: Bound,
    /// Whether the signer moves the money itself.
    moves: bool,
    /// Whether completing the payment fails.
    complete_fails: bool,
}

impl Stub {
    fn new() -> Self {
        Self { public_proof: true, build: Build::Request, bound: Bound::H, moves: false, complete_fails: false }
    }
}

struct Built(Stub);

impl Unsigned for Built {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok((self.0.build == Build::Request).then(|| SigningRequest::Erc7710(Map::new())))
    }

    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        if self.0.complete_fails {
            return Err(Refusal::new("stub", Reason::SignatureMalformed));
        }
        let signed: Vec<Value> = answers.iter().map(|a| a.as_json().clone()).collect();
        Ok(Completion::Payment { payment: Box::new(json!({"signed": signed})), landed: None })
    }
}

impl Pairing for Stub {
    fn id(&self) -> &'static str {
        "stub/rules"
    }
    fn public_proof(&self) -> bool {
        self.public_proof
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let agreement = Some("https://api.seller.example/agreement".to_owned());
        Ok(Advertised { h: atr_hash(ATR), link: LINK.to_owned(), offer: Offer::Json(doc), agreement })
    }
    fn choose(&self, _: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        Ok(Chosen {
            pairing: self.id().into(),
            build_input: Map::new(),
            reference: ctx.reference.into(),
            agreement: None,
        })
    }
    fn build<'a>(&'a self, _: &'a Chosen, _: &'a [u8], _: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        match self.build {
            Build::Refuses => Err(Refusal::new("stub", Reason::OptionMalformed)),
            Build::Nothing if self.public_proof => Err(Refusal::new("stub", Reason::NothingToSign)),
            _ => Ok(Box::new(Built(*self))),
        }
    }
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }
    fn quote(&self, _: &Chosen) -> Result<Quote, Refusal> {
        Ok(Quote::new(terms::U256::from(1u8), "0xAsset", "0xPayee", "eip155:1", "exact"))
    }
    fn bound(&self, _: &dyn Member, _: Option<&Value>) -> Result<AtrHash, Refusal> {
        match self.bound {
            Bound::H => Ok(atr_hash(ATR)),
            Bound::Other => Ok(atr_hash(b"other terms")),
            Bound::NothingToSign => Err(Refusal::new("stub", Reason::NothingToSign)),
            Bound::Refuses => Err(Refusal::new("stub", Reason::PayloadMalformed)),
        }
    }
    fn moves(&self, _: &SigningRequest) -> bool {
        self.moves
    }
}

fn chosen(stub: &Stub) -> Chosen {
    Chosen { pairing: stub.id().into(), build_input: Map::new(), reference: "ref-1".into(), agreement: None }
}

fn answer() -> Vec<Answer> {
    vec![Answer::new(json!("0xsigned"))]
}

#[test]
fn the_read_back_is_skipped_only_for_a_no_proof_pairing_with_nothing_to_read() {
    // The one case the bypass is for: proven by the agreement payment.
    let agreed = Stub { public_proof: false, bound: Bound::NothingToSign, ..Stub::new() };
    assert!(matches!(finish(ATR, &chosen(&agreed), &answer(), &agreed), Ok(Finish::Finished(_))));
    // Every other case is read back, and declined.
    let cases = [
        Stub { public_proof: true, bound: Bound::NothingToSign, ..Stub::new() },
        Stub { public_proof: false, bound: Bound::Refuses, ..Stub::new() },
        Stub { public_proof: false, bound: Bound::Other, ..Stub::new() },
        Stub { public_proof: true, bound: Bound::Other, ..Stub::new() },
        Stub { public_proof: true, bound: Bound::Refuses, ..Stub::new() },
    ];
    for stub in cases {
        let declined = finish(ATR, &chosen(&stub), &answer(), &stub).unwrap_err();
        assert_eq!(
            (declined.code, declined.detail.as_str()),
            (DeclineCode::SignedNotBound, "The pairing does not read the hash of the compared bytes from the payment."),
            "{stub:?}"
        );
    }
    let proven = Stub::new();
    assert!(matches!(finish(ATR, &chosen(&proven), &answer(), &proven), Ok(Finish::Finished(_))));
}

/// Serves the ATR at the link.
struct Seller;

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let status = if request.url == LINK { 200 } else { 404 };
        Box::pin(async move { Ok(Response::new(status, Vec::new(), terms::Body::from_bytes(ATR))) })
    }
}

#[tokio::test]
async fn a_build_refusal_is_nothing_to_sign_only_when_it_says_so() {
    let account = "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    let refuses = Stub { build: Build::Refuses, ..Stub::new() };
    let declined = confirm(json!({}), &refuses, account, &Seller, &Options::new()).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::OfferUnreadable, "stub/option-malformed"));
    let nothing = Stub { build: Build::Nothing, ..Stub::new() };
    let confirmed = confirm(json!({}), &nothing, account, &Seller, &Options::new()).await.unwrap();
    assert!(confirmed.request.is_none(), "nothing to sign");
    let request = Stub::new();
    let confirmed = confirm(json!({}), &request, account, &Seller, &Options::new()).await.unwrap();
    assert!(confirmed.request.is_some(), "a request for the signer");
}

#[test]
fn a_decline_after_a_signer_that_moves_money_carries_what_moved() {
    let moving = Stub { moves: true, complete_fails: true, ..Stub::new() };
    let declined = finish(ATR, &chosen(&moving), &answer(), &moving).unwrap_err();
    assert_eq!(declined.code, DeclineCode::SignedNotBound);
    let moved = declined.moved.expect("what moved is kept");
    assert_eq!(moved.signed, json!("0xsigned"));
    assert_eq!((moved.bytes.as_slice(), moved.h), (ATR, atr_hash(ATR)));
    // The same decline after a signer that only signs: nothing moved.
    let signing = Stub { moves: false, complete_fails: true, ..Stub::new() };
    assert!(finish(ATR, &chosen(&signing), &answer(), &signing).unwrap_err().moved.is_none());
    // And a moving signer's payment that reads back another H is declined with what moved, too.
    let other = Stub { moves: true, bound: Bound::Other, ..Stub::new() };
    assert!(finish(ATR, &chosen(&other), &answer(), &other).unwrap_err().moved.is_some());
}

/// The reference takes no answer, or one answer that is `null`, as no answer at all: nothing moved, whatever the
/// signer was asked to do (found by the differential test, scripts/differential.sh, on `mpp/charge/evm/hash`). Two
/// answers, one of them `null`, are answers.
#[test]
fn a_null_answer_is_no_answer_and_nothing_moved() {
    let moving = Stub { moves: true, complete_fails: true, ..Stub::new() };
    for answers in [vec![], vec![Answer::new(Value::Null)]] {
        let declined = finish(ATR, &chosen(&moving), &answers, &moving).unwrap_err();
        assert_eq!(declined.code, DeclineCode::SignedNotBound);
        assert!(declined.moved.is_none(), "{answers:?}");
    }
    let two = [Answer::new(Value::Null), Answer::new(json!("0xsigned"))];
    let moved = finish(ATR, &chosen(&moving), &two, &moving).unwrap_err().moved.expect("two answers moved");
    assert_eq!(moved.signed, json!([null, "0xsigned"]));
}

/// The stub, counting its builds.
#[derive(Debug)]
struct Counting {
    stub: Stub,
    builds: std::sync::atomic::AtomicUsize,
}

impl Pairing for Counting {
    fn id(&self) -> &'static str {
        self.stub.id()
    }
    fn public_proof(&self) -> bool {
        self.stub.public_proof()
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        self.stub.read(doc)
    }
    fn choose(&self, advertised: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        self.stub.choose(advertised, ctx)
    }
    fn build<'a>(&'a self, c: &'a Chosen, bytes: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        self.builds.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.stub.build(c, bytes, h)
    }
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }
    fn quote(&self, c: &Chosen) -> Result<Quote, Refusal> {
        self.stub.quote(c)
    }
    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        self.stub.bound(presented, landed)
    }
}

/// A wallet that answers every request with the same text.
struct Wallet;

impl terms::Signer for Wallet {
    fn account(&self) -> &str {
        "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    }
    fn sign<'a>(&'a self, _: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, terms::SignerError>> {
        Box::pin(async { Ok(Answer::new(json!("0xsigned"))) })
    }
}

/// `transact` completes the build `confirm` made for these bytes rather than building again (the kept build is taken
/// only when made with the hash of the bytes being finished, which in `transact` it always is): one build for a
/// payment signed in one step. `finish` alone, with no build kept, builds once.
#[tokio::test]
async fn transact_builds_the_payment_once() {
    let counting = Counting { stub: Stub::new(), builds: 0.into() };
    let outcome = terms::transact(json!({}), &counting, &Wallet, &Seller, &Options::new()).await.unwrap();
    assert!(matches!(outcome, terms::TransactOutcome::Signed(_)));
    assert_eq!(counting.builds.load(std::sync::atomic::Ordering::SeqCst), 1);
    let counting = Counting { stub: Stub::new(), builds: 0.into() };
    assert!(matches!(finish(ATR, &chosen(&counting.stub), &answer(), &counting), Ok(Finish::Finished(_))));
    assert_eq!(counting.builds.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// `check_landed` reads H back from a payment and what landed of it, after two rules of its own: bytes over the cap
/// are too large (exactly the cap is not), and a landed read beside the payment must be a JSON object beside a JSON
/// object; with no landed read, the payment goes to the pairing as it is.
#[test]
fn check_landed_caps_the_bytes_and_takes_a_landed_read_only_beside_an_object() {
    let stub = Stub::new();
    let at_cap = vec![b'a'; terms::MAX_ATR_BYTES];
    let over = vec![b'a'; terms::MAX_ATR_BYTES + 1];
    let obj = json!({"payload": {}});
    assert_eq!(terms::check_landed(&over, &obj, None, &stub).unwrap_err().code, DeclineCode::AtrTooLarge);
    // At the cap the bytes are read; the stub reads the hash of other bytes back, so it is not bound.
    let at = terms::check_landed(&at_cap, &obj, None, &stub).unwrap_err();
    assert_eq!(
        (at.code, at.detail.as_str()),
        (DeclineCode::SignedNotBound, "The pairing does not read the hash of the compared bytes from the payment.")
    );
    let not_beside = "The landed receipt is not a JSON object beside the payment.";
    for (presented, landed) in [(&obj, json!("0xlanded")), (&obj, json!([])), (&json!("0xpayment"), json!({}))] {
        let declined = terms::check_landed(ATR, presented, Some(&landed), &stub).unwrap_err();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::SignedNotBound, not_beside), "{landed}");
    }
    assert_eq!(terms::check_landed(ATR, &obj, Some(&json!({"tx": "0x1"})), &stub).unwrap().h, atr_hash(ATR));
    assert_eq!(terms::check_landed(ATR, &json!("0xpayment"), None, &stub).unwrap().h, atr_hash(ATR));
}

/// `transact` of a payment whose build asks the signer nothing takes only "nothing to sign" as a payment with
/// nothing signed: a build that then fails to complete for another reason declines, it never passes as paid with
/// nothing (`true` in place of that guard survived before).
#[tokio::test]
async fn a_payment_with_nothing_to_sign_that_fails_to_complete_declines() {
    let completes = Stub { build: Build::Empty, ..Stub::new() };
    let outcome = terms::transact(json!({}), &completes, &Wallet, &Seller, &Options::new()).await.unwrap();
    let terms::TransactOutcome::Signed(done) = outcome else { panic!("{outcome:?}") };
    assert_eq!(done.signed.unwrap().to_value(), json!({"signed": []}));
    let fails = Stub { build: Build::Empty, complete_fails: true, ..Stub::new() };
    let declined = terms::transact(json!({}), &fails, &Wallet, &Seller, &Options::new()).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::SignedNotBound, "stub/signature-malformed"));
}

/// A wallet that never signs.
struct Refusing;

impl terms::Signer for Refusing {
    fn account(&self) -> &str {
        "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    }
    fn sign<'a>(&'a self, _: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, terms::SignerError>> {
        Box::pin(async { Err(terms::SignerError::new("no")) })
    }
}

/// A signer that fails at the first step has moved nothing, even for a pairing whose signer moves the money itself:
/// the decline carries no payment (`||` in place of `&&` there made it carry an empty one).
#[tokio::test]
async fn a_signer_that_fails_at_the_first_step_moved_nothing() {
    for moves in [true, false] {
        let stub = Stub { moves, ..Stub::new() };
        let declined = terms::transact(json!({}), &stub, &Refusing, &Seller, &Options::new()).await.unwrap_err();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::SignerFailed, "The signer did not sign."));
        assert!(declined.moved.is_none(), "moves: {moves}");
    }
}

/// One log of who was asked what, in order: the journal's and the signer's calls.
#[derive(Debug, Default, Clone)]
struct Log(std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>);

impl Log {
    fn push(&self, what: &'static str) {
        self.0.lock().unwrap().push(what);
    }
}

/// A journal that logs its calls and answers each as a fresh purchase would be answered.
#[derive(Debug)]
struct LoggingJournal(Log);

impl SpendJournal for LoggingJournal {
    fn begin<'a>(&'a self, _: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        self.0.push("journal.begin");
        Box::pin(async { Ok(Begun::Fresh) })
    }
    fn look<'a>(&'a self, _: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        self.0.push("journal.look");
        Box::pin(async { Ok(Begun::Fresh) })
    }
    fn stepped<'a>(&'a self, _: &'a str, _: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.push("journal.stepped");
        Box::pin(async { Ok(()) })
    }
    fn moving<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.push("journal.moving");
        Box::pin(async { Ok(()) })
    }
    fn signed<'a>(&'a self, _: &'a str, _: &'a [u8], _: &'a Value) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.push("journal.signed");
        Box::pin(async { Ok(()) })
    }
    fn ended<'a>(&'a self, _: &'a str, _: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.push("journal.ended");
        Box::pin(async { Ok(()) })
    }
    fn answered<'a>(&'a self, _: &'a str, _: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        self.0.push("journal.answered");
        Box::pin(async { Ok(()) })
    }
}

/// A wallet that logs each request it is asked to sign.
struct LoggingWallet(Log);

impl terms::Signer for LoggingWallet {
    fn account(&self) -> &str {
        Wallet.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, terms::SignerError>> {
        self.0.push("signer.sign");
        Wallet.sign(request)
    }
}

/// The journal is looked at before anything is fetched, and told the payment (`begin`, with what the wallet will be
/// asked) before the wallet is asked. Before a signer that moves the money itself is asked, the journal is told: an
/// attempt cut short after that is `unknown`, never `not-paid`. A signer that only signs needs no such write.
#[tokio::test]
async fn the_journal_is_told_before_a_signer_that_moves_money_is_asked() {
    for moves in [true, false] {
        let log = Log::default();
        let stub = Stub { moves, ..Stub::new() };
        let options = Options::new().journal(std::sync::Arc::new(LoggingJournal(log.clone())));
        let got = terms::transact(json!({}), &stub, &LoggingWallet(log.clone()), &Seller, &options).await;
        assert!(matches!(got, Ok(terms::TransactOutcome::Signed(_))), "{got:?}");
        let want: &[&str] = if moves {
            &["journal.look", "journal.begin", "journal.moving", "signer.sign", "journal.signed"]
        } else {
            &["journal.look", "journal.begin", "signer.sign", "journal.signed"]
        };
        assert_eq!(*log.0.lock().unwrap(), want, "moves: {moves}");
    }
}
