//! The gate's values. Every one is plain serde data: a caller can confirm on one machine, keep or send the value,
//! and finish on another. Beside them, [`Document`]: how a caller hands the gate the seller's document.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::env::{Clock, Ids, RandomIds, SystemClock};
use crate::hash::AtrHash;
use crate::pairing::Chosen;
use crate::payment::Payment;
use crate::signer::{Signer, SigningRequest};

/// The seller's document as a caller hands it to the gate: lent (`&Value`), and the gate copies what the choice
/// keeps of it; or handed over (`Value`), and the gate moves it into the choice.
pub trait Document: Send {
    /// The document.
    fn get(&self) -> &Value;

    /// The document, borrowed where it was lent and owned where it was handed over.
    fn into_cow<'a>(self) -> Cow<'a, Value>
    where
        Self: 'a;
}

impl Document for Value {
    fn get(&self) -> &Value {
        self
    }

    fn into_cow<'a>(self) -> Cow<'a, Value>
    where
        Self: 'a,
    {
        Cow::Owned(self)
    }
}

impl Document for &Value {
    fn get(&self) -> &Value {
        self
    }

    fn into_cow<'a>(self) -> Cow<'a, Value>
    where
        Self: 'a,
    {
        Cow::Borrowed(self)
    }
}

/// The comparison passed: what was chosen, what the signer is handed, and the bytes compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmed {
    /// What the gate chose to pay; `chosen.agreement` names the agreement URL to pay first, where there is one.
    pub chosen: Chosen,
    /// What the signer is handed; `None` when the pairing has nothing to sign or the build is itself the payment.
    pub request: Option<SigningRequest>,
    /// The ATR bytes as served.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// Their SHA-256.
    pub h: AtrHash,
}

/// The payment, and the hash of the bytes it carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// The payment as it is sent, in the protocol's JSON form.
    pub signed: Payment,
    /// The hash the pairing read back from it.
    pub h: AtrHash,
    /// The landed read the pairing needs beside the payment, where there is one: keep it for `check`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Value>,
}

/// The next request of a payment signed in steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Next {
    /// Sign this, then call `finish` again with every answer so far, in order.
    pub next: SigningRequest,
    /// The hash of the bytes.
    pub h: AtrHash,
}

/// What `finish` gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Finish {
    /// The payment.
    Finished(Finished),
    /// Another signature is needed.
    Next(Next),
}

/// The pairing read the hash of the bytes back from the payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checked {
    /// The hash.
    pub h: AtrHash,
}

/// The agreement payment the buyer's agent approves before anything is signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementPayment {
    /// The agreement URL.
    pub url: String,
    /// The option of the URL's payment request the gate pays: its `amount`, `asset`, `payTo` and `network` are what
    /// the agent approves.
    pub option: Value,
    /// The URL's payment request as it served it.
    pub required: Value,
}

/// An agreement payment waiting for approval: nothing has been signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToApprove {
    /// What to approve. Approve by calling again with this value unchanged.
    pub approve: AgreementPayment,
    /// The ATR bytes compared.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// Their hash.
    pub h: AtrHash,
}

/// The agreement URL's receipt: its statement that the agreement payment carrying H is recorded. The gate does not
/// look the transaction up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgreementReceipt {
    /// The hash, as the server wrote it.
    #[serde(rename = "atrHash")]
    pub atr_hash: String,
    /// Always `true`.
    pub agreed: bool,
    /// The network the agreement payment settled on.
    pub network: String,
    /// The server's transaction reference.
    pub transaction: String,
}

/// What the exchange gives when it does not decline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Agreement {
    /// The agreement is recorded: its receipt.
    Agreed {
        /// The receipt.
        receipt: AgreementReceipt,
    },
    /// The agreement payment to approve; nothing was signed.
    ToApprove(ToApprove),
}

/// What the gate takes beside its arguments: the buyer's inputs, the clock, the id source, and for the agreement
/// exchange the approval, a cancellation token and a separate agreement signer.
#[derive(Clone)]
pub struct Options {
    pub(crate) inputs: Map<String, Value>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn Ids>,
    pub(crate) approved: Option<AgreementPayment>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) agreement_signer: Option<Arc<dyn Signer>>,
    pub(crate) policy: Option<Arc<dyn super::SpendPolicy>>,
    pub(crate) journal: Option<Arc<dyn super::SpendJournal>>,
    pub(crate) purchase: Option<super::Purchase>,
    pub(crate) spend_approved: Option<super::SpendApproval>,
    pub(crate) approvals: Option<Arc<dyn super::ApprovalQueue>>,
    pub(crate) agent: Option<String>,
    pub(crate) approval_expiry: u64,
    pub(crate) seller: super::SellerStanding,
    pub(crate) acceptance_required: Option<bool>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            inputs: Map::new(),
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds::default()),
            approved: None,
            cancel: None,
            agreement_signer: None,
            policy: None,
            journal: None,
            purchase: None,
            spend_approved: None,
            approvals: None,
            agent: None,
            approval_expiry: super::APPROVAL_EXPIRY_SECONDS,
            seller: super::SellerStanding::Unproven,
            acceptance_required: None,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("inputs", &self.inputs)
            .field("now", &self.clock.now())
            .field("approved", &self.approved)
            .field("cancel", &self.cancel)
            .field("agreement_signer", &self.agreement_signer.as_ref().map(|s| s.account().to_owned()))
            .field("policy", &self.policy)
            .field("journal", &self.journal)
            .field("purchase", &self.purchase)
            .field("spend_approved", &self.spend_approved)
            .field("approvals", &self.approvals)
            .field("agent", &self.agent)
            .field("seller", &self.seller)
            .field("acceptance_required", &self.acceptance_required)
            .finish_non_exhaustive()
    }
}

impl Options {
    /// The defaults: no inputs, the system clock, random ids.
    pub fn new() -> Self {
        Self::default()
    }

    /// The buyer's own values a pairing's build needs beside the offer (a recent block, an account nonce…).
    #[must_use]
    pub fn inputs(mut self, inputs: Map<String, Value>) -> Self {
        self.inputs = inputs;
        self
    }

    /// The clock `now` is read from.
    #[must_use]
    pub fn clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Where payment ids come from.
    #[must_use]
    pub fn ids(mut self, ids: impl Ids + 'static) -> Self {
        self.ids = Arc::new(ids);
        self
    }

    /// The agreement payment the agent approved, exactly as the gate handed it over.
    #[must_use]
    pub fn approved(mut self, approved: AgreementPayment) -> Self {
        self.approved = Some(approved);
        self
    }

    /// A token that ends the agreement exchange: before the agreement payment is sent, with `agreement-failed`
    /// and nothing sent; after, with `agreement-pending` and the payment in `moved`.
    #[must_use]
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// A different wallet to pay the agreement payment with.
    #[must_use]
    pub fn agreement_signer(mut self, signer: Arc<dyn Signer>) -> Self {
        self.agreement_signer = Some(signer);
        self
    }

    /// The buyer's inputs.
    pub fn get_inputs(&self) -> &Map<String, Value> {
        &self.inputs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::Options;
    use crate::FixedClock;

    /// The options print what a call will use (the inputs, the clock's time) and hand their inputs back as given.
    #[test]
    fn options_print_what_a_call_uses_and_give_their_inputs_back() {
        let mut inputs = Map::new();
        inputs.insert("recentBlockhash".into(), json!("11111111111111111111111111111111"));
        let options = Options::new().inputs(inputs.clone()).clock(FixedClock(1_700_000_000));
        assert_eq!(options.get_inputs(), &inputs);
        let printed = format!("{options:?}");
        assert!(printed.starts_with("Options { inputs: {\"recentBlockhash\": String(\"1111"), "{printed}");
        assert!(printed.contains("now: 1700000000"), "{printed}");
        assert!(printed.ends_with(", .. }"), "{printed}");
    }
}
