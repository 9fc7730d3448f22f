//! A dry run: the request sent without payment, the offer read, the pairing chosen, the terms fetched and compared
//! (`confirm`), the quote read and the policy's verdict given. Nothing is signed.

use serde::Serialize;
use serde_json::Value;

use super::offer;
use super::types::{ClientError, Outgoing};
use super::{Client, flow};
use crate::decline::Declined;
use crate::gate::{Options, Purchase, Role, Spend, confirm};
use crate::hash::AtrHash;
use crate::pairing::Quote;

/// What the spend policy says of the payment a probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Verdict {
    /// No policy is set.
    NoPolicy,
    /// Allowed; `needs_approval` above the approval threshold.
    Allowed {
        /// A person approves it first.
        needs_approval: bool,
    },
    /// A policy is set, but the offer was declined before a payment to ask it about was known.
    NotAsked,
    /// Refused: `policy/<reason>`, and why.
    Refused {
        /// The refusal's code, e.g. `policy/amount-above-cap`.
        code: String,
        /// The explanation.
        why: String,
    },
}

/// What paying the request would do, found without signing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Plan {
    /// The status of the unpaid answer.
    pub status: u16,
    /// The offer's document (x402 `PAYMENT-REQUIRED` or the MPP challenge list), where the answer was a 402.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer: Option<Value>,
    /// The pairing chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
    /// The payer's account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The hash of the terms, compared with the bytes served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub h: Option<AtrHash>,
    /// The size of the terms served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub atr_bytes: Option<usize>,
    /// What the payment would pay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<Quote>,
    /// The policy's verdict.
    pub policy: Verdict,
    /// Why it cannot be paid, where it cannot (the gate's decline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declined: Option<Declined>,
}

impl Plan {
    fn unpaid(status: u16) -> Self {
        Self {
            status,
            offer: None,
            pairing: None,
            account: None,
            h: None,
            atr_bytes: None,
            quote: None,
            policy: Verdict::NoPolicy,
            declined: None,
        }
    }
}

impl Client {
    /// A dry run of [`Client::send`]: the request is sent without payment, and on a 402 the offer is read, the
    /// pairing chosen, the terms fetched once and compared with H, and the policy asked. Nothing is signed, and the
    /// journal is not written.
    pub async fn probe(&self, request: Outgoing) -> Result<Plan, ClientError> {
        let first = flow::once(self, self.transport.as_ref(), &request).await.map_err(ClientError::Transport)?;
        let mut plan = Plan::unpaid(first.status);
        if self.options.policy.is_some() {
            plan.policy = Verdict::NotAsked;
        }
        if first.status != 402 {
            return Ok(plan);
        }
        let mut offer = match offer::read(&first) {
            Ok(o) => o,
            Err(d) => return Ok(Plan { declined: Some(d), ..plan }),
        };
        plan.offer = Some(offer.doc.clone());
        let (pairing, signer, _) = match offer::choose(&mut offer, self.wallet.as_ref()) {
            Ok(c) => c,
            Err(d) => return Ok(Plan { declined: Some(d), ..plan }),
        };
        plan.pairing = Some(pairing.id().to_owned());
        plan.account = Some(signer.account().to_owned());
        let mut purchase = Purchase::new(request.method.clone(), request.url.clone());
        if !request.body.is_empty() {
            purchase = purchase.with_body(&request.body);
        }
        // The terms are compared whatever the policy says: the gate's own options, without the policy or journal.
        let mut bare = Options::new().inputs(self.options.get_inputs().clone());
        bare.clock = self.options.clock.clone();
        bare.ids = self.options.ids.clone();
        let confirmed = match confirm(&offer.doc, pairing, signer.account(), self.fetch.as_ref(), &bare).await {
            Ok(c) => c,
            Err(d) => return Ok(Plan { declined: Some(d), ..plan }),
        };
        plan.h = Some(confirmed.h);
        plan.atr_bytes = Some(confirmed.bytes.len());
        plan.quote = pairing.quote(&confirmed.chosen).ok();
        plan.policy = match (&self.options.policy, &plan.quote) {
            (None, _) => Verdict::NoPolicy,
            (Some(_), None) => Verdict::Refused {
                code: "policy/quote-unknown".into(),
                why: "the pairing gives no quote of the payment".into(),
            },
            (Some(policy), Some(quote)) => {
                let now = self.options.clock.now();
                let spend = Spend::new(pairing.id(), signer.account(), quote, Some(&purchase), Role::Payment, now)
                    .with_seller(self.options.seller)
                    .with_acceptance_required(self.options.acceptance_required);
                match policy.check(&spend) {
                    Ok(allowed) => Verdict::Allowed { needs_approval: allowed.needs_approval },
                    Err(refusal) => Verdict::Refused { code: refusal.declined().detail, why: refusal.why },
                }
            }
        };
        Ok(plan)
    }
}
