//! A decline keeps the reference's code and detail exactly, and carries its cause beside them as a diagnostic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use serde_json::{Value, json};
use std::borrow::Cow;
use terms::BoxFuture;
use terms::{Body, Fetch, FetchError, Request, Response};

use terms::pairing::{Advertised, ChooseContext, Unsigned};
use terms::{AtrHash, Chosen, DeclineCode, InputSpec, Options, Pairing, Quote, Refusal, confirm};

const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";

fn offer() -> Value {
    json!({
        "x402Version": 2,
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": "10000",
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": H, "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}

/// A fetch whose every answer is `answer`.
struct Answers(fn() -> Result<Response, FetchError>);

impl Fetch for Answers {
    fn get<'a>(&'a self, _: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let answer = (self.0)();
        Box::pin(async move { answer })
    }
}

const PAYER: &str = "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

#[tokio::test]
async fn the_transport_error_rides_beside_atr_unfetchable() {
    let fetch = Answers(|| Err(FetchError::new("dns error: no such host atr.seller.example")));
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let d = confirm(offer(), pairing, PAYER, &fetch, &Options::new()).await.unwrap_err();
    assert_eq!(d.code, DeclineCode::AtrUnfetchable);
    assert_eq!(d.detail, "The ATR could not be fetched from the link.");
    assert_eq!(d.cause.as_deref(), Some("dns error: no such host atr.seller.example"));
    let serialized = serde_json::to_value(&d).unwrap();
    assert_eq!(serialized["cause"], "dns error: no such host atr.seller.example");
    assert_eq!(d, terms::Declined::new(DeclineCode::AtrUnfetchable, "The ATR could not be fetched from the link."));
}

#[tokio::test]
async fn the_content_coding_rides_beside_atr_unfetchable() {
    let fetch = Answers(|| Ok(Response::new(200, vec![("Content-Encoding".into(), "gzip".into())], Body::empty())));
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let d = confirm(offer(), pairing, PAYER, &fetch, &Options::new()).await.unwrap_err();
    assert_eq!(
        (d.code, d.detail.as_str()),
        (DeclineCode::AtrUnfetchable, "The link served a content coding other than identity.")
    );
    assert_eq!(d.cause.as_deref(), Some("content-encoding: gzip"));
}

#[tokio::test]
async fn the_networks_offered_ride_beside_no_payable_option() {
    let fetch = Answers(|| panic!("an offer with no payable option is never fetched"));
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let account = "eip155:8453:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    let d = confirm(offer(), pairing, account, &fetch, &Options::new()).await.unwrap_err();
    assert_eq!((d.code, d.detail.as_str()), (DeclineCode::NoPayableOption, "x402/no-payable-option"));
    let cause = d.cause.expect("a cause");
    assert!(cause.contains("eip155:84532") && cause.contains(account), "{cause}");
}

/// EIP-3009 exact, except that keeping the seller's document panics.
#[derive(Debug)]
struct PanicsKeeping;

impl Pairing for PanicsKeeping {
    fn id(&self) -> &'static str {
        terms::pairing("x402/exact/eip155/eip3009").unwrap().id()
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        terms::pairing(self.id()).unwrap().read(doc)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        terms::pairing(self.id()).unwrap().choose(read, ctx)
    }
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        terms::pairing(self.id()).unwrap().quote(chosen)
    }
    fn keep_document(&self, _: &mut Chosen, _: Cow<'_, Value>) {
        panic!("keeping the document panics");
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        terms::pairing(self.id()).unwrap().build(chosen, atr, h)
    }
    fn bound(&self, presented: &dyn terms::json::Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        terms::pairing(self.id()).unwrap().bound(presented, landed)
    }
}

#[tokio::test]
async fn a_pairing_that_panics_keeping_the_document_is_declined_not_propagated() {
    let atr = b"the terms".to_vec();
    let h = terms::atr_hash(&atr).to_hex();
    let mut doc = offer();
    doc["extensions"]["legalContext"]["info"]["value"] = Value::String(h.clone());
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"] =
        Value::String(format!("https://atr.seller.example/{h}"));
    struct Serves(Vec<u8>);
    impl Fetch for Serves {
        fn get<'a>(&'a self, _: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
            let body = self.0.clone();
            Box::pin(async move { Ok(Response::new(200, vec![], Body::from_bytes(body))) })
        }
    }
    let d = confirm(doc, &PanicsKeeping, PAYER, &Serves(atr), &Options::new()).await.unwrap_err();
    assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, "x402/member-failed"));
}
