//! Sign once, even across a crash: what the wallet will be asked is durable before it is asked. `begin` records
//! the choice (with every value its build drew or read: validity window, salt, nonce, payment id, recent
//! blockhash), the ATR bytes and the exact first request; a payment signed in steps records each answer and the
//! next request before that step is asked ([`SpendJournal::stepped`](super::SpendJournal::stepped)). An attempt
//! that recorded its request and never recorded a signed payment is, once its lease lapses, [resumed](Resumed):
//! the build is made again from the recorded choice and bytes, it must give the recorded request member for member,
//! and the wallet is asked that identical request. Nothing is rebuilt from a new offer, so for one purchase the
//! wallet is only ever asked to sign one payment (possibly more than once, identically).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hash::{AtrHash, atr_hash};
use crate::pairing::{Chosen, Pairing};
use crate::refusal::Reason;
use crate::signer::{Answer, SigningRequest};

use super::spend::journal_failed;
use crate::decline::Declined;

/// The payment an attempt is about to hand to its wallet, as `begin` records it with the intent.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToSign<'a> {
    /// The ATR bytes the payment was built from (their SHA-256 is the intent's H); kept once per hash.
    pub bytes: &'a [u8],
    /// The first request the wallet will be asked; `None` where the build itself is the payment.
    pub request: Option<&'a SigningRequest>,
}

impl<'a> ToSign<'a> {
    /// The payment built from `bytes` whose first request is `request`.
    pub fn new(bytes: &'a [u8], request: Option<&'a SigningRequest>) -> Self {
        Self { bytes, request }
    }

    /// What the journal keeps of it: the request as JSON, no step taken yet.
    pub fn prepared(&self) -> Prepared {
        Prepared { request: self.request.map(SigningRequest::to_json), answers: Vec::new(), next: None }
    }
}

/// What the journal holds of an attempt's signing, before and between the wallet's answers (the JSON of its
/// `prepared` column).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Prepared {
    /// The first request, as JSON ([`SigningRequest::to_json`]); `None` where nothing is for a wallet to sign.
    pub request: Option<Value>,
    /// The answers of the steps the wallet answered, recorded before the next step was asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Value>,
    /// The step asked after those answers, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Value>,
}

impl Prepared {
    /// The record after a step: `answers` given, `next` to be asked.
    pub fn stepped(&self, answers: &[Answer], next: &SigningRequest) -> Self {
        Self {
            request: self.request.clone(),
            answers: answers.iter().map(|a| a.as_json().clone()).collect(),
            next: Some(next.to_json()),
        }
    }
}

/// An attempt whose wallet may have been asked and whose signed payment was never recorded (its process died
/// between the two), found past its lease: the purchase goes on with exactly that attempt's request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Resumed {
    /// The attempt.
    pub attempt: String,
    /// The pairing it was built for.
    pub pairing: String,
    /// The payer it was built for.
    pub account: String,
    /// Its H.
    pub h: AtrHash,
    /// The choice it was built from.
    pub chosen: Chosen,
    /// The ATR bytes it was built from.
    pub bytes: Vec<u8>,
    /// What the wallet was asked, and the steps answered.
    pub prepared: Prepared,
}

impl Resumed {
    /// An attempt resumed from what the journal holds.
    pub fn new(
        attempt: impl Into<String>,
        pairing: impl Into<String>,
        account: impl Into<String>,
        h: AtrHash,
        chosen: Chosen,
        bytes: Vec<u8>,
        prepared: Prepared,
    ) -> Self {
        Self { attempt: attempt.into(), pairing: pairing.into(), account: account.into(), h, chosen, bytes, prepared }
    }

    /// The recorded choice, checked against what is paying now: the same pairing and payer, bytes that hash to the
    /// attempt's H. Anything else is `journal/state-unknown`, and nothing is signed.
    pub(crate) fn choice(&self, pairing: &dyn Pairing, account: &str) -> Result<&Chosen, Declined> {
        let unknown = |why: String| journal_failed(Reason::StateUnknown, why);
        let attempt = &self.attempt;
        if self.pairing != pairing.id() || self.chosen.pairing != pairing.id() {
            return Err(unknown(format!(
                "attempt {attempt} of this purchase recorded a payment for the pairing {} and is paying with {}: \
                 only that payment may be signed; nothing was signed, and a person must look",
                self.pairing,
                pairing.id()
            )));
        }
        if self.account != account {
            return Err(unknown(format!(
                "attempt {attempt} of this purchase recorded a payment from {} and the signer is {account}: only \
                 that payment may be signed; nothing was signed, and a person must look",
                self.account
            )));
        }
        if atr_hash(&self.bytes) != self.h {
            return Err(unknown(format!(
                "the ATR bytes the journal holds for attempt {attempt} do not hash to its H: nothing was signed, and \
                 a person must look"
            )));
        }
        Ok(&self.chosen)
    }

    /// The decline for a rebuild that does not give what the journal recorded.
    pub(crate) fn changed(&self, what: &str) -> Declined {
        journal_failed(
            Reason::StateUnknown,
            format!(
                "the journal's {what} of attempt {} is not what its recorded choice and bytes build (the record was \
                 changed, or another build wrote it): nothing was signed, and a person must look",
                self.attempt
            ),
        )
    }
}
