//! The pairing seam: one trait that every pairing family implements and the gate calls. The gate never names a
//! rail; a family reads the seller's document, chooses the option, builds the unsigned payment with H, completes it
//! with the signer's answer, and reads H back.

mod channel;
mod inputs;
mod quote;

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hash::AtrHash;
use crate::json::Member;
use crate::payment::Payment;
use crate::refusal::Refusal;
use crate::signer::{Answer, SigningRequest};

pub use channel::{Batch, Channel, ChannelHold, ChannelKind, ChannelRef, Refund, WithinArgs, WithinPlan};
pub(crate) use inputs::choose_with_inputs;
pub use inputs::{InputFormat, InputSpec, InputType, check_inputs};
pub use quote::Quote;
pub(crate) use quote::{atomic, parse_atomic};

/// What a pairing's read finds in the seller's document. It borrows the document, so reading copies nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Advertised<'a> {
    /// The advertised ATR hash.
    pub h: AtrHash,
    /// The https link the ATR is served at.
    pub link: String,
    /// What the pairing chooses from.
    pub offer: Offer<'a>,
    /// The agreement URL, when the offer names one.
    pub agreement: Option<String>,
}

/// The options a read found, in document order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Offer<'a> {
    /// An x402 `PAYMENT-REQUIRED` document and the `accepts` entries this pairing serves.
    X402 {
        /// The whole document.
        required: &'a Value,
        /// The entries the pairing's filter serves, in document order.
        options: Vec<&'a Value>,
    },
    /// MPP challenges.
    Challenges(Vec<&'a Value>),
    /// Another protocol's offer, as JSON.
    Json(&'a Value),
}

impl Offer<'_> {
    /// The networks the options name (their `network` members), in document order, each once: what a decline for
    /// an account on another network reports beside its detail.
    pub fn networks(&self) -> Vec<&str> {
        let options: &[&Value] = match self {
            Self::X402 { options, .. } | Self::Challenges(options) => options,
            Self::Json(_) => &[],
        };
        let mut networks: Vec<&str> = Vec::new();
        for network in options.iter().filter_map(|o| o.pointer("/network").and_then(Value::as_str)) {
            if !networks.contains(&network) {
                networks.push(network);
            }
        }
        networks
    }
}

/// What the gate chose to pay: a plain value, so a caller can confirm on one machine and finish on another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chosen {
    /// The pairing id.
    pub pairing: String,
    /// The pairing's own input to its build (the seller's document, the option chosen, the payer, the time, the
    /// buyer's inputs it keeps): opaque to the caller, and written `choice` in JSON. What it would pay is
    /// [`Pairing::quote`]'s answer; never read an amount out of this map.
    #[serde(rename = "choice")]
    pub build_input: Map<String, Value>,
    /// The payment's own id (the x402 payment-identifier), 32 characters of `[A-Za-z0-9_-]`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The agreement URL to pay first, for a pairing whose payment is no public proof of H.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<String>,
}

/// What a pairing's choose sees.
#[derive(Debug, Clone, Copy)]
pub struct ChooseContext<'a> {
    /// The signer's CAIP-10 account.
    pub account: &'a str,
    /// The buyer's own inputs (a recent block, an account nonce…).
    pub inputs: &'a Map<String, Value>,
    /// floor(Unix seconds).
    pub now: u64,
    /// The fresh payment id.
    pub reference: &'a str,
    /// The seller's document as given.
    pub doc: &'a Value,
}

/// A payment a pairing built with H: what the signer is handed, and how its answers complete the payment.
pub trait Unsigned: Send + Sync {
    /// What the signer is handed; `None` when the build is itself the payment.
    fn request(&self) -> Result<Option<SigningRequest>, Refusal>;

    /// Joins the signer's answers so far (in order; empty when `request` is `None`) into the payment, or names the
    /// next request of a payment signed in steps.
    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal>;
}

/// A completed payment as its pairing built it: read member by member (the gate hands it to the pairing's own
/// [`Pairing::bound`], and nothing else reads H back from it), then written once, as the text that is sent. A
/// pairing may build it from members it borrows from the choice, so completing copies only what the signer added.
pub trait Completed: Member + Send + Sync {
    /// The payment's text, written once, after the pairing read H back from it.
    fn write(&self) -> Payment;

    /// The payment as a JSON value (for a decline that keeps what was signed).
    fn to_value(&self) -> Value;
}

/// A payment a pairing completed as a JSON value.
impl Completed for Value {
    fn write(&self) -> Payment {
        Payment::from_value(self)
    }

    fn to_value(&self) -> Value {
        self.clone()
    }
}

/// A completion: the payment, or the next request.
#[non_exhaustive]
pub enum Completion<'a> {
    /// The payment, read back with the pairing's [`Pairing::bound`], and the landed read the pairing's bound needs
    /// beside it, where there is one.
    Payment {
        /// The payment.
        payment: Box<dyn Completed + 'a>,
        /// The landed read kept out of band.
        landed: Option<Value>,
    },
    /// The next request of a payment signed in steps.
    Next(SigningRequest),
}

impl fmt::Debug for Completion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Payment { payment, landed } => {
                f.debug_struct("Payment").field("payment", &payment.to_value()).field("landed", landed).finish()
            }
            Self::Next(next) => f.debug_tuple("Next").field(next).finish(),
        }
    }
}

impl Completion<'_> {
    /// The payment as a JSON value, or `None` for a next request.
    pub fn payment_value(&self) -> Option<Value> {
        match self {
            Self::Payment { payment, .. } => Some(payment.to_value()),
            Self::Next(_) => None,
        }
    }
}

/// One pairing: a protocol binding and its buyer piece. Every method is pure and synchronous; only the gate does
/// I/O.
pub trait Pairing: Send + Sync + fmt::Debug {
    /// The pairing id, e.g. `x402/exact/eip155/eip3009`.
    fn id(&self) -> &'static str;

    /// Whether the pairing's signed payment is itself a public proof of H; when it is not, the buyer pays an
    /// agreement payment first.
    fn public_proof(&self) -> bool;

    /// Reads H, the link, the options and the agreement URL from the seller's document.
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal>;

    /// Chooses the first option the signer's account can pay. The choice may leave out the seller's document itself,
    /// for [`Pairing::keep_document`] to put in. The gate has held `ctx.inputs` to [`Pairing::inputs`] first ([`check_inputs`]), so `choose` checks only what needs
    /// the offer.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal>;

    /// The buyer's own inputs the pairing takes (`ctx.inputs` of [`Pairing::choose`]); empty for a pairing that
    /// takes none.
    fn inputs(&self) -> &'static [InputSpec];

    /// What the buyer would pay for the choice, read from the same parsed values [`Pairing::build`] builds from, so
    /// what a policy approves is what is built. A choice the build refuses (for what the choice holds, not for the
    /// ATR it is handed) is refused here with the same refusal; a hand-edited choice never panics.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal>;

    /// Keeps what the choice needs of the seller's document, after `choose`: a pairing whose build reads the whole
    /// document puts it into the choice here, so that a document the caller handed over is moved there instead of
    /// copied. The default keeps nothing.
    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        let _ = (chosen, doc);
    }

    /// Builds the unsigned payment with H, the hash of `atr`. It may borrow from `chosen` and `atr`, so building
    /// copies nothing the payment does not need.
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal>;

    /// Reads H back from a payment, member by member: one its own `complete` built, before the gate writes it out, or
    /// one presented later as a JSON value (with the landed read beside it, where the pairing needs one). A bound
    /// that reads the payment whole takes [`Member::as_value`], which a JSON value answers.
    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal>;

    /// Whether the signer, handed this first request, moves the money itself before the gate reads what was signed
    /// (it broadcasts, or pays an invoice): a later decline then carries what moved.
    fn moves(&self, first: &SigningRequest) -> bool {
        let _ = first;
        false
    }

    /// The pairing's channel members, when its payments run in a channel the buyer holds.
    fn channel(&self) -> Option<&dyn Channel> {
        None
    }
}

/// The namespace of a pairing id: the part before the first `/`.
pub fn namespace(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}
