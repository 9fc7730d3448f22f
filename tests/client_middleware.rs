//! `terms::client::PayMiddleware` in a caller's `reqwest-middleware` stack, against the stand-in seller on a real
//! loopback socket (`examples/support/seller.rs`, which checks the EIP-3009 signature and that the nonce is H): the
//! stack's own layers see both the unpaid and the paid request, the 402 is paid once, and the call's outcome rides
//! in the response's extensions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;

use std::sync::{Arc, Mutex};

use http::Extensions;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next};
use seller::Seller;
use terms::DeclineCode;
use terms::client::{Client, Outcome, PayMiddleware, Settlement};
use terms::http::LoopbackFetch;
use terms::safety::journal::{PaymentState, SqliteJournal, Store};

/// What the layer below passed on: the path, the payment header, the tag of the layer above.
type Passed = (String, Option<String>, Option<String>);

/// A layer of the caller's, below the payment layer: it stamps every request and records what it passed on.
#[derive(Debug, Clone, Default)]
struct Below {
    seen: Arc<Mutex<Vec<Passed>>>,
}

#[async_trait::async_trait]
impl Middleware for Below {
    async fn handle(
        &self,
        mut req: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let header = |name: &str| req.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        let tag = extensions.get::<Tag>().map(|t| t.0.to_owned());
        self.seen.lock().unwrap().push((req.url().path().to_owned(), header("payment-signature"), tag));
        req.headers_mut().insert("x-caller", "below".parse().unwrap());
        next.run(req, extensions).await
    }
}

/// An extension a layer above puts on the request.
#[derive(Debug, Clone)]
struct Tag(&'static str);

/// A layer above the payment layer: it tags the request and counts the calls it makes.
#[derive(Debug, Clone, Default)]
struct Above {
    calls: Arc<Mutex<usize>>,
}

#[async_trait::async_trait]
impl Middleware for Above {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        *self.calls.lock().unwrap() += 1;
        extensions.insert(Tag("above"));
        next.run(req, extensions).await
    }
}

struct World {
    seller: Seller,
    http: ClientWithMiddleware,
    above: Above,
    below: Below,
    journal: Arc<SqliteJournal>,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let seller = Seller::start().await;
    let dir = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap());
    let fetch = LoopbackFetch::new().unwrap().route(seller::HOST, seller.addr).unwrap();
    let key = terms::EvmKey::from_hex(seller::KEY).unwrap();
    let client = Client::builder(key).journal(journal.clone()).fetch(fetch).build().unwrap();
    let (above, below) = (Above::default(), Below::default());
    let reqwest = terms::http::HttpFetch::builder().build().unwrap();
    let http =
        ClientBuilder::new(reqwest).with(above.clone()).with(PayMiddleware::new(client)).with(below.clone()).build();
    World { seller, http, above, below, journal, _dir: dir }
}

const PAYER: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

#[tokio::test]
async fn a_callers_stack_pays_a_402_through_the_layer_and_reads_the_settlement() {
    let w = world().await;
    let response = w.http.get(w.seller.url("/report")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.url().as_str(), w.seller.url("/report"));
    let outcome = response.extensions().get::<Outcome>().cloned().unwrap();
    assert!(response.headers().get("payment-response").is_some());
    assert_eq!(response.text().await.unwrap(), format!("the report for {PAYER}"));
    let paid = outcome.paid().unwrap();
    assert_eq!((paid.pairing.as_str(), paid.sends), ("x402/exact/eip155/eip3009", 1));
    assert_eq!(paid.h.to_hex(), seller::h());
    let Some(Settlement::X402(s)) = &paid.settlement else { panic!("{outcome:?}") };
    assert!(s.success && s.payer.as_deref() == Some(PAYER), "{s:?}");
    assert!(outcome.recovery().is_none(), "{outcome:?}");
    // The layer below saw the unpaid request and then the paid one (the payment went down the caller's stack,
    // with the extension the layer above set); the layer above was called once.
    let seen = w.below.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!((seen[0].1.as_deref(), seen[0].2.as_deref()), (None, Some("above")));
    assert_eq!(seen[1].1.as_deref(), Some(w.seller.payments()[0].as_str()));
    assert_eq!(seen[1].2.as_deref(), Some("above"));
    assert_eq!(*w.above.calls.lock().unwrap(), 1);
    assert_eq!((w.seller.paid("/report"), w.seller.hits(&format!("/atr/{}", seller::h()))), (1, 1));
    let record = w.journal.record(&paid.key).await.unwrap().unwrap();
    assert_eq!(record.payment_state, PaymentState::Settled);
}

#[tokio::test]
async fn a_402_the_gate_declines_comes_back_as_the_402_with_the_refusal_and_nothing_paid() {
    let w = world().await;
    let response = w.http.get(w.seller.url("/swap")).send().await.unwrap();
    assert_eq!(response.status(), 402);
    assert!(response.headers().get("payment-required").is_some());
    let Some(Outcome::Refused(refused)) = response.extensions().get::<Outcome>() else {
        panic!("{:?}", response.extensions().get::<Outcome>())
    };
    assert_eq!(refused.declined.code, DeclineCode::HashMismatch);
    assert_eq!(w.seller.paid("/swap"), 0);
    assert_eq!(w.below.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_request_that_is_not_a_402_passes_through_untouched() {
    let w = world().await;
    let response = w.http.get(w.seller.url("/free")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.extensions().get::<Outcome>().is_none());
    assert_eq!(response.text().await.unwrap(), "free");
    assert_eq!(w.below.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_5xx_after_the_payment_is_resent_down_the_stack_with_the_same_payment() {
    let w = world().await;
    let response = w.http.get(w.seller.url("/flaky")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let outcome = response.extensions().get::<Outcome>().cloned().unwrap();
    assert_eq!(outcome.paid().unwrap().sends, 2);
    let seen = w.below.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[1].1.is_some() && seen[1].1 == seen[2].1, "the re-send is the same payment");
    assert_eq!(*w.above.calls.lock().unwrap(), 1);
}
