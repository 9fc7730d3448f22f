#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The client pays the Stellar pairings' offers end to end on a real loopback socket: a stand-in seller
//! (`examples/support/stellar_seller.rs`) serving its terms, an x402 offer and an MPP challenge, the payer's local
//! Stellar key, the SQLite journal. The seller takes only the payment it checks (H read back, the envelope the key
//! signs).

#[path = "../examples/support/stellar_seller.rs"]
mod stellar_seller;

use std::sync::Arc;

use stellar_seller::StellarSeller;
use terms::client::{Client, Outgoing};
use terms::http::LoopbackFetch;
use terms::safety::journal::{PaymentState, SqliteJournal};
use terms::{FixedClock, Options, StellarKey};

async fn client(seller: &StellarSeller, dir: &tempfile::TempDir) -> Client {
    let key = StellarKey::from_seed_hex(stellar_seller::PAYER_SEED).unwrap();
    let signer = key.on_network("stellar:testnet").unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.path().join("journal.db")).unwrap());
    let fetch = LoopbackFetch::new().unwrap().route(stellar_seller::HOST, seller.addr).unwrap();
    let options = Options::new().clock(FixedClock(stellar_seller::NOW)).inputs(stellar_seller::inputs());
    Client::for_signer(signer).journal(journal).fetch(fetch).options(options).build().unwrap()
}

#[tokio::test]
async fn an_x402_stellar_offer_is_paid_on_a_loopback_socket() {
    let seller = StellarSeller::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&seller, &dir).await;
    let outcome = client.send(Outgoing::new("GET", seller.url("/report"))).await.unwrap();
    let r = outcome.reply().unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(r.status, 200, "{outcome:?} {:?}", seller.seen.lock().unwrap());
    let paid = r.paid.as_ref().unwrap();
    assert_eq!(paid.pairing, "x402/exact/stellar");
    assert_eq!(paid.h.to_hex(), stellar_seller::h());
    assert_eq!(r.states.payment, PaymentState::Settled);
    let seen = seller.seen.lock().unwrap();
    assert_eq!((seen.payments.len(), seen.refused.len()), (1, 0));
}

#[tokio::test]
async fn an_mpp_stellar_challenge_is_paid_on_a_loopback_socket() {
    let seller = StellarSeller::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&seller, &dir).await;
    let outcome = client.send(Outgoing::new("GET", seller.url("/mpp"))).await.unwrap();
    let r = outcome.reply().unwrap_or_else(|| panic!("{outcome:?}"));
    assert_eq!(r.status, 200, "{outcome:?} {:?}", seller.seen.lock().unwrap());
    let paid = r.paid.as_ref().unwrap();
    assert_eq!(paid.pairing, "mpp/charge/stellar");
    assert_eq!(paid.h.to_hex(), stellar_seller::h());
    let seen = seller.seen.lock().unwrap();
    assert_eq!((seen.payments.len(), seen.refused.len()), (1, 0));
}
