#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! `x402/batch-settlement/solana` through the gate's channel steps, from x402-batch-settlement.json's Solana values
//! (the option in the reference's form, with `extra.receiverAuthorizer`): the opening, a voucher whose signature is
//! the payer authorizer's over the held channel and the cumulative amount, a challenge of another fee payer (a
//! voucher for another channel) declined before the signer is called, a refund with an amount declined, and the close.

use std::sync::atomic::{AtomicUsize, Ordering};

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use serde_json::{Map, Value, json};
use terms::pairing::ChannelHold;
use terms::rail::solana::Key;
use terms::rail::solana::channel::voucher_message;
use terms::{
    Answer, Body, BoxFuture, Fetch, FetchError, FixedClock, Options, Refund, Request, Response, Signer, SignerError,
    SigningRequest, SolanaKey, SolanaSigner, TransactOutcome, atr_hash, open_channel, record_charge, transact, within,
};

fn file() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/x402-batch-settlement.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The seller: the ATR at its link.
struct Link {
    url: String,
}

impl Fetch for Link {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let status = if request.url == self.url { 200 } else { 404 };
            Ok(Response::new(status, vec![], Body::from_bytes(b"abc".to_vec())))
        })
    }
}

/// The payer's key, counting the requests it signs.
struct Counting {
    inner: SolanaSigner,
    calls: AtomicUsize,
}

impl Signer for Counting {
    fn account(&self) -> &str {
        self.inner.account()
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.sign(request)
    }
}

/// The B2 document with the option in the reference's form at `price`, and `fee_payer` as its fee payer.
fn doc(f: &Value, price: &str, fee_payer: &Value) -> Value {
    let row = f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["pairing"] == "x402/batch-settlement/solana");
    let mut doc = row.unwrap()["input"]["doc"].clone();
    let option = &mut doc["accepts"][0];
    option["amount"] = json!(price);
    option["extra"]["receiverAuthorizer"] = f["fixed"]["svm"]["feePayer"].clone();
    option["extra"]["feePayer"] = fee_payer.clone();
    doc
}

fn inputs(f: &Value) -> Map<String, Value> {
    let row = f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["pairing"] == "x402/batch-settlement/solana");
    row.unwrap()["input"]["inputs"].as_object().unwrap().clone()
}

async fn open(f: &Value, signer: &Counting) -> ChannelHold {
    let pairing = terms::pairing("x402/batch-settlement/solana").unwrap();
    let doc = doc(f, "1000", &f["fixed"]["svm"]["feePayer"]);
    let link = Link { url: doc["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().into() };
    let options = Options::new().clock(FixedClock(1_790_000_000)).inputs(inputs(f));
    let TransactOutcome::Signed(opened) = transact(&doc, pairing, signer, &link, &options).await.unwrap() else {
        panic!("not signed")
    };
    let opening = opened.signed.unwrap().to_value();
    open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref()).unwrap()
}

#[tokio::test]
async fn a_channel_opens_pays_vouchers_and_closes() {
    let f = file();
    let key = SolanaKey::from_seed_hex(f["fixed"]["svm"]["payerSeed"].as_str().unwrap()).unwrap();
    let network = f["fixed"]["svm"]["option"]["network"].as_str().unwrap();
    let signer = Counting { inner: key.on_network(network).unwrap(), calls: AtomicUsize::new(0) };
    let pairing = terms::pairing("x402/batch-settlement/solana").unwrap();
    let hold = open(&f, &signer).await;
    assert_eq!(hold.channel, f["ES1"]["channelPda"].as_str().unwrap());
    assert_eq!(hold.h, atr_hash(b"abc").to_hex());
    assert_eq!(signer.calls.load(Ordering::SeqCst), 1);
    let hold = record_charge(&hold, "1000").unwrap();

    // A voucher: the payer authorizer's signature over the held channel and the cumulative amount, expiring at 0.
    let fee_payer = f["fixed"]["svm"]["feePayer"].clone();
    let paid = within(&doc(&f, "250", &fee_payer), &hold, pairing, &signer, None, &Options::new()).await.unwrap();
    let voucher = &paid.signed["payload"]["voucher"];
    assert_eq!(paid.signed["payload"]["type"], "voucher");
    assert_eq!(voucher["maxClaimableAmount"], "1250");
    let channel = Key::parse(&hold.channel).unwrap();
    let message = voucher_message(&channel, 1250, 0);
    let signature: [u8; 64] =
        bs58::decode(voucher["signature"].as_str().unwrap()).into_vec().unwrap().try_into().unwrap();
    let authorizer = VerifyingKey::from_bytes(Key::parse(key.address()).unwrap().as_bytes()).unwrap();
    authorizer.verify(&message, &Signature::from_bytes(&signature)).unwrap();
    assert_eq!(pairing.channel().unwrap().bound_within(&paid.signed).unwrap_err().code(), "x402/not-bound-within");
    let hold = record_charge(&paid.hold, "1250").unwrap();

    // A challenge of another fee payer names another channel: declined before the signer is called.
    let calls = signer.calls.load(Ordering::SeqCst);
    let other = doc(&f, "250", &f["fixed"]["svm"]["payTo"]);
    let declined = within(&other, &hold, pairing, &signer, None, &Options::new()).await.unwrap_err();
    assert_eq!(declined.code.as_str(), "no-payable-option");
    assert_eq!(signer.calls.load(Ordering::SeqCst), calls);

    // A refund of an amount: the program closes the whole channel (svm/input-malformed), nothing signed.
    let partial = Refund { amount: Some("5".into()) };
    let declined = within(&doc(&f, "250", &fee_payer), &hold, pairing, &signer, Some(&partial), &Options::new())
        .await
        .unwrap_err();
    assert_eq!((declined.code.as_str(), declined.detail.as_str()), ("offer-unreadable", "svm/input-malformed"));
    assert_eq!(signer.calls.load(Ordering::SeqCst), calls);

    // The close: a refund voucher for the recorded charge.
    let closed =
        within(&doc(&f, "250", &fee_payer), &hold, pairing, &signer, Some(&Refund::close()), &Options::new()).await;
    let closed = closed.unwrap();
    assert_eq!(closed.signed["payload"]["type"], "refund");
    assert_eq!(closed.signed["payload"]["voucher"]["maxClaimableAmount"], "1250");
    assert_eq!(closed.signed["payload"]["voucher"]["channelId"], json!(hold.channel));
}
