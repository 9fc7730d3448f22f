//! The agreement exchange for the card family, against real HTTP/1.1 servers on loopback through the real `HttpFetch`
//! (the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to `127.0.0.1`): the ATR server serves
//! buyer.json's A, and the agreement URL answers buyer.json's agreement request (an EIP-3009 option, a public proof),
//! 202, then the receipt for A's hash. The main payment is `card/visa-tap` over a shown document whose legal context
//! names A's hash, link and the agreement URL: the agent's signer is handed the `lcp-hash` field only with the receipt
//! in hand, and answers card.json's C2 signature fields with the line it sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::Mutex;

use serde_json::{Value, json};
use support::world::Agreeing;
use support::{Buyer, link_of, paused, vectors};
use terms::{Answer, BoxFuture, DeclineCode, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, transact};

/// The agent's RFC 9421 signer: it adds each `tap-field` it is handed to its request and answers C2's
/// `Signature-Input` and `Signature` (which list `lcp-hash` in the `agent-payer-auth` signature) with the line it sent.
struct Agent {
    account: String,
    fields: Mutex<Vec<Value>>,
}

impl Agent {
    fn new(account: &str) -> Self {
        Self { account: account.to_owned(), fields: Mutex::default() }
    }
    fn fields(&self) -> Vec<Value> {
        self.fields.lock().unwrap().clone()
    }
}

impl Signer for Agent {
    fn account(&self) -> &str {
        &self.account
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            match request {
                SigningRequest::TapField(field) => {
                    self.fields.lock().unwrap().push(Value::Object(field.clone()));
                    let c2 = &vectors("card.json")["C2"]["request"];
                    Ok(Answer::new(json!({
                        "signatureInput": c2["signatureInput"],
                        "signature": c2["signature"],
                        "lcpHash": [field["value"]],
                    })))
                }
                other => Err(SignerError::new(format!("the agent signs TAP fields, not {}", other.kind()))),
            }
        })
    }
}

/// C2's shown document with its legal context naming A's hash, link and (unless `agreement` is false) the agreement
/// URL.
fn shown(b: &Buyer, agreement: bool) -> Value {
    let mut doc = vectors("card.json")["C2"]["build"]["doc"].clone();
    let lc = &mut doc["legalContext"];
    lc["value"] = json!(atr_hash(&b.a()).to_hex());
    lc["legalContextUrl"] = json!(link_of(&b.doc()));
    if agreement {
        lc["legalContextAgreementUrl"] = b.agreement("url");
    }
    doc
}

#[test]
fn visa_tap_the_agent_signs_only_with_the_receipt() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let doc = shown(&w.b, true);
        let agent = Agent::new(w.b.signer().account());
        let pairing = terms::pairing("card/visa-tap").unwrap();
        let got = w.pay(&doc, pairing, &agent, &json!({}), || agent.fields().len()).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        let h = atr_hash(&w.b.a()).to_hex();
        assert_eq!(agent.fields(), vec![json!({"field": "lcp-hash", "value": h, "component": "lcp-hash"})]);
        let payment = t.signed.unwrap().to_value();
        assert_eq!(payment["lcpHash"], json!([h]));
        assert_eq!(t.h, atr_hash(&w.b.a()));
        w.assert_agreement_paid();
    });
}

/// Without an agreement URL the card payment declines `agreement-not-offered` once the bytes are compared, the agent
/// never asked.
#[test]
fn visa_tap_no_agreement_url() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let agent = Agent::new(w.b.signer().account());
        let pairing = terms::pairing("card/visa-tap").unwrap();
        let got = transact(&shown(&w.b, false), pairing, &agent, &w.fetch, &w.options(&json!({}))).await;
        assert_eq!(got.unwrap_err().code, DeclineCode::AgreementNotOffered);
        assert_eq!((agent.fields().len(), w.agreeing.count(), w.api.count()), (0, 0, 0));
        assert_eq!(w.atr.count(), 1);
    });
}
