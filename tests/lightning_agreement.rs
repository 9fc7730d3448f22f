//! The agreement exchange for the Lightning pairings, against real HTTP/1.1 servers on loopback through the real
//! `HttpFetch` (the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to `127.0.0.1`): the ATR
//! server serves buyer.json's A, and the agreement URL answers buyer.json's agreement request (an EIP-3009 option,
//! a public proof), 202, then the receipt for A's hash. The main payment is `x402/exact/lnbtc`'s option of the
//! vector file with its invoice's `m` written as A's hash (the signature is not read), and `mpp/charge/lightning`'s
//! challenge placed for A with its invoice's `h` so. The buyer's node pays the invoice only with the receipt in
//! hand, and a decline after it paid carries what moved.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "lightning/bolt11.rs"]
mod bolt11;
mod support;

use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use support::world::Agreeing;
use support::{Buyer, link_of, paused, vectors};
use terms::{Answer, BoxFuture, DeclineCode, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, transact};

/// The buyer's Lightning node: it pays each `bolt11-pay` invoice and answers `answer` (the preimage), and is asked
/// nothing else.
struct Node {
    account: String,
    answer: Value,
    paid: Mutex<Vec<String>>,
}

impl Node {
    fn new(account: &str, answer: Value) -> Self {
        Self { account: account.to_owned(), answer, paid: Mutex::default() }
    }
    fn paid(&self) -> Vec<String> {
        self.paid.lock().unwrap().clone()
    }
}

impl Signer for Node {
    fn account(&self) -> &str {
        &self.account
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            match request {
                SigningRequest::Bolt11Pay { invoice } => {
                    self.paid.lock().unwrap().push(invoice.clone());
                    Ok(Answer::new(self.answer.clone()))
                }
                other => Err(SignerError::new(format!("a node pays invoices, not {}", other.kind()))),
            }
        })
    }
}

/// x402/exact/lnbtc's B2 document for buyer.json's A: its invoice's `m` is A's hash, its legal context names A's hash,
/// link and the agreement URL.
fn lnbtc_doc(b: &Buyer) -> (Value, Value, String) {
    let f = vectors("x402-exact-lnbtc.json");
    let b2 = f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == "B2").unwrap()["input"].clone();
    let h = atr_hash(&b.a());
    let mut doc = b2["doc"].clone();
    let invoice = bolt11::with_field(doc["accepts"][0]["extra"]["invoice"].as_str().unwrap(), bolt11::M, h.as_bytes());
    doc["accepts"][0]["extra"]["invoice"] = json!(invoice);
    let info = &mut doc["extensions"]["legalContext"]["info"];
    info["value"] = json!(h.to_hex());
    info["legalContextUrl"] = json!(link_of(&b.doc()));
    info["legalContextAgreementUrl"] = b.agreement("url");
    (doc, b2, invoice)
}

#[test]
fn lnbtc_the_node_pays_only_with_the_receipt() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let (doc, b2, invoice) = lnbtc_doc(&w.b);
        let preimage = vectors("x402-exact-lnbtc.json")["fixed"]["preimage"].clone();
        let node = Node::new(b2["account"].as_str().unwrap(), preimage.clone());
        let pairing = terms::pairing("x402/exact/lnbtc").unwrap();
        let got = w.pay(&doc, pairing, &node, &b2["inputs"], || node.paid().len()).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        assert_eq!(node.paid(), vec![invoice.clone()], "the node paid the invoice once, after the receipt");
        let payment = t.signed.unwrap().to_value();
        assert_eq!(payment["payload"], json!({"preimage": preimage}));
        assert_eq!(payment["accepted"]["extra"]["invoice"], json!(invoice));
        assert_eq!(t.h, atr_hash(&w.b.a()));
        w.assert_agreement_paid();
    });
}

/// The node paid, then answered what is no preimage: the gate declines, and the decline carries what moved (the
/// node's answer, for the ATR compared).
#[test]
fn lnbtc_a_decline_after_the_node_paid_keeps_what_moved() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let (doc, b2, _) = lnbtc_doc(&w.b);
        let node = Node::new(b2["account"].as_str().unwrap(), json!("not a preimage"));
        let pairing = terms::pairing("x402/exact/lnbtc").unwrap();
        let got = w.pay(&doc, pairing, &node, &b2["inputs"], || node.paid().len()).await;
        let d = got.unwrap_err();
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::SignedNotBound, "ln/preimage-malformed"));
        let moved = d.moved.expect("what moved is kept");
        assert_eq!(moved.signed, json!("not a preimage"));
        assert_eq!((moved.bytes, moved.h), (w.b.a(), atr_hash(&w.b.a())));
        assert_eq!(node.paid().len(), 1);
        w.assert_agreement_paid();
    });
}

/// mpp/charge/lightning's B2 challenge placed for A: its id and `opaque` carry A's hash (with the link and the
/// agreement URL), and its invoice's `h` is A's hash.
#[test]
fn mpp_charge_the_node_pays_only_with_the_receipt() {
    let b64 = |v: &Value| URL_SAFE_NO_PAD.encode(terms::json::canonical(v).unwrap());
    let un64 =
        |v: &Value| -> Value { serde_json::from_slice(&URL_SAFE_NO_PAD.decode(v.as_str().unwrap()).unwrap()).unwrap() };
    paused().block_on(async {
        let w = Agreeing::new().await;
        let f = vectors("mpp-charge-lightning.json");
        let b2 = f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == "B2").unwrap()["input"].clone();
        let h = atr_hash(&w.b.a());
        let mut c = b2["doc"][0].clone();
        let mut request = un64(&c["request"]);
        let invoice =
            bolt11::with_field(request["methodDetails"]["invoice"].as_str().unwrap(), bolt11::H, h.as_bytes());
        request["methodDetails"]["invoice"] = json!(invoice);
        c["request"] = json!(b64(&request));
        c["id"] = json!(terms::mpp::challenge_id(&h, 0).unwrap());
        let opaque = json!({
            "legalContext": format!("lcp:sha256:{}", h.to_hex()),
            "legalContextUrl": link_of(&w.b.doc()),
            "legalContextAgreementUrl": w.b.agreement("url"),
        });
        c["opaque"] = json!(b64(&opaque));
        let doc = json!([c]);
        let node = Node::new(b2["account"].as_str().unwrap(), f["fixed"]["preimage"].clone());
        let pairing = terms::pairing("mpp/charge/lightning").unwrap();
        let got = w.pay(&doc, pairing, &node, &json!({}), || node.paid().len()).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a credential, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        assert_eq!(node.paid(), vec![invoice]);
        let credential = t.signed.unwrap().to_value();
        assert_eq!(credential["payload"], json!({"preimage": f["fixed"]["preimage"]}));
        assert_eq!(credential["challenge"], c);
        w.assert_agreement_paid();
    });
}

/// Without an agreement URL the Lightning payment declines `agreement-not-offered` once the bytes are compared, the
/// node never asked.
#[test]
fn lnbtc_no_agreement_url() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let (mut doc, b2, _) = lnbtc_doc(&w.b);
        doc["extensions"]["legalContext"]["info"].as_object_mut().unwrap().shift_remove("legalContextAgreementUrl");
        let node = Node::new(b2["account"].as_str().unwrap(), json!("00"));
        let pairing = terms::pairing("x402/exact/lnbtc").unwrap();
        let got = transact(&doc, pairing, &node, &w.fetch, &w.options(&b2["inputs"])).await;
        assert_eq!(got.unwrap_err().code, DeclineCode::AgreementNotOffered);
        assert_eq!((node.paid().len(), w.agreeing.count(), w.api.count()), (0, 0, 0));
        assert_eq!(w.atr.count(), 1);
    });
}
