//! The agreement exchange for the checkout family, against real HTTP/1.1 servers on loopback through the real
//! `HttpFetch` (the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to `127.0.0.1`): the ATR
//! server serves buyer.json's A, and the agreement URL answers buyer.json's agreement request (an EIP-3009 option, a
//! public proof), 202, then the receipt for A's hash. The main payment is `acp/checkout/delegated`'s session of
//! acp-checkout.json with its id and legal context written for A (the agent is handed the allowance only with the
//! receipt in hand), and `ucp/checkout/unsigned`'s checkout of ucp.json placed so (nothing to sign: the gate confirms
//! once the agreement is paid).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::Mutex;

use serde_json::{Value, json};
use support::world::Agreeing;
use support::{Buyer, link_of, paused, vectors};
use terms::{Answer, BoxFuture, DeclineCode, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, transact};

/// The buyer's agent: it answers each `acp-allowance` request with its `delegate_payment` request (the allowance
/// handed, and its payment method), and is asked nothing else.
struct Agent {
    account: String,
    asked: Mutex<Vec<Value>>,
}

impl Agent {
    fn new(account: &str) -> Self {
        Self { account: account.to_owned(), asked: Mutex::default() }
    }
    fn asked(&self) -> Vec<Value> {
        self.asked.lock().unwrap().clone()
    }
}

impl Signer for Agent {
    fn account(&self) -> &str {
        &self.account
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            match request {
                SigningRequest::AcpAllowance(fields) => {
                    let allowance = fields["allowance"].clone();
                    self.asked.lock().unwrap().push(allowance.clone());
                    Ok(Answer::new(json!({"allowance": allowance, "payment_method": {"type": "card"}})))
                }
                other => Err(SignerError::new(format!("an agent answers allowances, not {}", other.kind()))),
            }
        })
    }
}

/// acp-checkout.json's B2 session written for buyer.json's A: its id and legal context name A's hash, link and the
/// agreement URL. The row's inputs are the buyer's allowance values.
fn acp_session(b: &Buyer) -> (Value, Value) {
    let f = vectors("acp-checkout.json");
    let rows = f["buyer"]["rows"].as_array().unwrap();
    let b2 = rows.iter().find(|r| r["name"] == "B2" && r["pairing"] == "acp/checkout/delegated").unwrap();
    let h = atr_hash(&b.a()).to_hex();
    let mut doc = b2["input"]["doc"].clone();
    doc["id"] = json!(h);
    let lc = &mut doc["metadata"]["legal_context"];
    lc["value"] = json!(h);
    lc["legal_context_url"] = json!(link_of(&b.doc()));
    lc["legal_context_agreement_url"] = b.agreement("url");
    (doc, b2["input"]["inputs"].clone())
}

#[test]
fn acp_delegated_the_agent_is_handed_the_allowance_only_with_the_receipt() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let (doc, inputs) = acp_session(&w.b);
        let agent = Agent::new(&w.b.account());
        let pairing = terms::pairing("acp/checkout/delegated").unwrap();
        let got = w.pay(&doc, pairing, &agent, &inputs, || agent.asked().len()).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        let asked = agent.asked();
        assert_eq!(asked.len(), 1, "the agent was asked once, after the receipt");
        assert_eq!(asked[0]["checkout_session_id"], doc["id"]);
        assert_eq!(asked[0]["max_amount"], inputs["max_amount"]);
        let payment = t.signed.unwrap().to_value();
        assert_eq!(payment["allowance"], asked[0]);
        assert_eq!(t.h, atr_hash(&w.b.a()));
        w.assert_agreement_paid();
    });
}

#[test]
fn ucp_unsigned_the_checkout_is_confirmed_once_the_agreement_is_paid() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let f = vectors("ucp.json");
        let rows = f["buyer"]["rows"].as_array().unwrap();
        let b2 = rows.iter().find(|r| r["name"] == "B2" && r["pairing"] == "ucp/checkout/unsigned").unwrap();
        let mut doc = b2["input"]["doc"].clone();
        let links = doc["links"].as_array_mut().unwrap();
        let entry = links.iter_mut().find(|l| l["type"] == "legal_context").unwrap();
        entry["title"] = json!(format!("lcp:sha256:{}", atr_hash(&w.b.a()).to_hex()));
        entry["url"] = json!(link_of(&w.b.doc()));
        links.push(json!({"type": "legal_context_agreement", "url": w.b.agreement("url")}));
        let agent = Agent::new(&w.b.account());
        let pairing = terms::pairing("ucp/checkout/unsigned").unwrap();
        let got = w.pay(&doc, pairing, &agent, &json!({}), || agent.asked().len()).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a confirmation, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        assert!(t.signed.is_none(), "nothing is signed for an unsigned checkout");
        assert!(agent.asked().is_empty());
        w.assert_agreement_paid();
    });
}

/// Without an agreement URL the checkout declines `agreement-not-offered` once the bytes are compared, the agent
/// never asked.
#[test]
fn acp_no_agreement_url() {
    paused().block_on(async {
        let w = Agreeing::new().await;
        let (mut doc, inputs) = acp_session(&w.b);
        doc["metadata"]["legal_context"].as_object_mut().unwrap().shift_remove("legal_context_agreement_url");
        let agent = Agent::new(&w.b.account());
        let pairing = terms::pairing("acp/checkout/delegated").unwrap();
        let got = transact(&doc, pairing, &agent, &w.fetch, &w.options(&inputs)).await;
        assert_eq!(got.unwrap_err().code, DeclineCode::AgreementNotOffered);
        assert_eq!((agent.asked().len(), w.agreeing.count(), w.api.count()), (0, 0, 0));
        assert_eq!(w.atr.count(), 1);
    });
}
