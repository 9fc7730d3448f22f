//! The agreement exchange for the card family, against real HTTP/1.1 servers on loopback through the real `HttpFetch`
//! (the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to `127.0.0.1`): the ATR server serves
//! buyer.json's A, and the agreement URL answers buyer.json's agreement request (an EIP-3009 option, a public proof),
//! 202, then the receipt for A's hash. The main payment is `card/visa-tap` over a shown document whose legal context
//! names A's hash, link and the agreement URL: the agent's signer is handed the `lcp-hash` field only with the receipt
//! in hand, and answers card.json's C2 signature fields with the line it sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::net::{Act, Loopback, Net, Server};
use support::world::{API_HOST, ATR_HOST, accepted, challenge, receipt};
use support::{Buyer, CountingSigner, link_of, paused, vectors};
use terms::{
    Answer, BoxFuture, DeclineCode, Options, Signer, SignerError, SigningRequest, TransactOutcome, atr_hash, transact,
};

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

/// The servers, the fetch routed to them, and the agreement's payer (buyer.json's).
struct World {
    atr: Server,
    api: Server,
    fetch: Loopback,
    agreeing: CountingSigner,
    b: Buyer,
}

impl World {
    async fn new() -> Self {
        let b = Buyer::load();
        let net = Net::new();
        let atr = Server::repeating(&net, vec![Act::ok(b.a())]).await;
        let api = Server::start(&net, vec![challenge(&b), accepted("2"), receipt(&b)]).await;
        let fetch = Loopback::new(&net).route(ATR_HOST, &atr).route(API_HOST, &api);
        assert!(link_of(&b.doc()).starts_with(&format!("https://{ATR_HOST}/")));
        assert!(b.agreement("url").as_str().unwrap().starts_with(&format!("https://{API_HOST}/")));
        let agreeing = b.signer();
        Self { atr, api, fetch, agreeing, b }
    }

    fn options(&self) -> Options {
        self.b.options().agreement_signer(Arc::new(self.agreeing.clone()))
    }

    /// C2's shown document with its legal context naming A's hash, link and (unless `agreement` is false) the
    /// agreement URL.
    fn doc(&self, agreement: bool) -> Value {
        let mut doc = vectors("card.json")["C2"]["build"]["doc"].clone();
        let lc = &mut doc["legalContext"];
        lc["value"] = json!(atr_hash(&self.b.a()).to_hex());
        lc["legalContextUrl"] = json!(link_of(&self.b.doc()));
        if agreement {
            lc["legalContextAgreementUrl"] = self.b.agreement("url");
        }
        doc
    }
}

#[test]
fn visa_tap_the_agent_signs_only_with_the_receipt() {
    paused().block_on(async {
        let w = World::new().await;
        let doc = w.doc(true);
        let agent = Agent::new(w.b.signer().account());
        let pairing = terms::pairing("card/visa-tap").unwrap();
        let first = transact(&doc, pairing, &agent, &w.fetch, &w.options()).await;
        let Ok(TransactOutcome::ToApprove(t)) = first else { panic!("expected an approval, got {first:?}") };
        assert_eq!(t.approve.option, w.b.agreement("option"));
        assert_eq!((w.agreeing.count(), agent.fields().len()), (0, 0), "asked before approval");
        assert_eq!(t.h, atr_hash(&w.b.a()));

        let got = transact(&doc, pairing, &agent, &w.fetch, &w.options().approved(t.approve)).await;
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        assert_eq!(serde_json::to_value(t.agreement.as_ref().unwrap()).unwrap(), w.b.agreement("receipt"));
        let h = atr_hash(&w.b.a()).to_hex();
        assert_eq!(agent.fields(), vec![json!({"field": "lcp-hash", "value": h, "component": "lcp-hash"})]);
        let payment = t.signed.unwrap().to_value();
        assert_eq!(payment["lcpHash"], json!([h]));
        assert_eq!(t.h, atr_hash(&w.b.a()));

        // The agreement was paid once (one EIP-3009 signature, sent to the agreement URL twice: 402, 202, receipt).
        let kinds: Vec<&str> = w.agreeing.calls().iter().map(SigningRequest::kind).collect();
        assert_eq!(kinds, vec!["eip712"]);
        let paid: Vec<_> = w.api.seen().into_iter().filter(|s| s.header("payment-signature").is_some()).collect();
        assert_eq!(paid.len(), 2, "paid agreement requests");
        assert!(w.atr.count() >= 1);
    });
}

/// Without an agreement URL the card payment declines `agreement-not-offered` once the bytes are compared, the agent
/// never asked.
#[test]
fn visa_tap_no_agreement_url() {
    paused().block_on(async {
        let w = World::new().await;
        let agent = Agent::new(w.b.signer().account());
        let pairing = terms::pairing("card/visa-tap").unwrap();
        let got = transact(&w.doc(false), pairing, &agent, &w.fetch, &w.options()).await;
        assert_eq!(got.unwrap_err().code, DeclineCode::AgreementNotOffered);
        assert_eq!((agent.fields().len(), w.agreeing.count(), w.api.count()), (0, 0, 0));
        assert_eq!(w.atr.count(), 1);
    });
}
