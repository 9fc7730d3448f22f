//! The pairing seam: one trait that every pairing family implements and the gate calls. The gate never names a
//! rail; a family reads the seller's document, chooses the option, builds the unsigned payment with H, completes it
//! with the signer's answer, and reads H back.

mod channel;
mod inputs;
mod quote;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hash::AtrHash;
use crate::json::Member;
use crate::payment::Payment;
use crate::refusal::Refusal;
use crate::signer::{Signature, SigningRequest};

pub use channel::{Batch, Channel, ChannelHold, ChannelKind, ChannelRef, Refund, WithinArgs, WithinPlan};
pub use inputs::{InputFormat, InputSpec, InputType, check_inputs, check_specs, choose_with_inputs};
pub use quote::Quote;

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
    /// The pairing's build input.
    pub choice: Map<String, Value>,
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
    fn complete(&self, answers: &[Signature], chosen: &Chosen) -> Result<Completion<'_>, Refusal>;
}

/// A completed payment whose members a pairing may borrow from the choice instead of copying them: the gate has the
/// pairing read H back from it (with [`Pairing::bound_built`]) and only then writes it out, once, as the text that
/// is sent.
pub trait Built: Send + Sync {
    /// The payment's top-level members, where it is an object whose members can be read in place.
    fn members(&self) -> Option<&dyn Member>;

    /// The payment's text.
    fn write(&self) -> Payment;

    /// The payment as a JSON value.
    fn to_value(&self) -> Value;

    /// The payment, where it is held as a JSON value already.
    fn as_value(&self) -> Option<&Value> {
        None
    }
}

/// A completion: the payment, or the next request.
#[non_exhaustive]
pub enum Completion<'a> {
    /// The payment as a JSON value, read back with the pairing's `bound`, and the landed read the pairing's bound
    /// needs beside it, where there is one.
    Payment {
        /// The payment.
        payment: Value,
        /// The landed read kept out of band.
        landed: Option<Value>,
    },
    /// The payment as the pairing built it, read back with [`Pairing::bound_built`].
    Built {
        /// The payment.
        payment: Box<dyn Built + 'a>,
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
                f.debug_struct("Payment").field("payment", payment).field("landed", landed).finish()
            }
            Self::Built { payment, landed } => {
                f.debug_struct("Built").field("payment", &payment.to_value()).field("landed", landed).finish()
            }
            Self::Next(next) => f.debug_tuple("Next").field(next).finish(),
        }
    }
}

impl Completion<'_> {
    /// The payment as a JSON value, or `None` for a next request.
    pub fn payment_value(&self) -> Option<Value> {
        match self {
            Self::Payment { payment, .. } => Some(payment.clone()),
            Self::Built { payment, .. } => Some(payment.to_value()),
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

    /// Chooses the first option the signer's account can pay. The choice leaves out the seller's document itself
    /// where [`Pairing::document_member`] names a member for it: the gate puts it there ([`keep_document`]). The
    /// gate has held `ctx.inputs` to [`Pairing::inputs`] first ([`check_inputs`]), so `choose` checks only what needs
    /// the offer.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal>;

    /// The buyer's own inputs the pairing takes (`ctx.inputs` of [`Pairing::choose`]); empty for a pairing that
    /// takes none.
    fn inputs(&self) -> &'static [InputSpec];

    /// What the buyer would pay for the choice, read from the same parsed values [`Pairing::build`] builds from, so
    /// what a policy approves is what is built. A choice the build refuses (for what the choice holds, not for the
    /// ATR it is handed) is refused here with the same refusal; a hand-edited choice never panics.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal>;

    /// The member of this pairing's choice that holds the seller's whole document, filled in by the gate after
    /// `choose`, so that a caller who hands the gate its document has it moved into the choice instead of copied.
    fn document_member(&self) -> Option<&'static str> {
        None
    }

    /// Builds the unsigned payment with H, the hash of `atr`. It may borrow from `chosen` and `atr`, so building
    /// copies nothing the payment does not need.
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal>;

    /// Reads H back from a completed payment (with the landed read beside it, where the pairing needs one).
    fn bound(&self, presented: &Value, landed: Option<&Value>) -> Result<AtrHash, Refusal>;

    /// Reads H back from a payment its own `complete` built, before it is written out. It must read exactly what
    /// [`Pairing::bound`] reads from the same payment as a value; the default does just that, and a pairing whose
    /// bound reads a payment's members in place reads the built payment's members instead of a copy.
    fn bound_built(&self, built: &dyn Built, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        match built.as_value() {
            Some(payment) => self.bound(payment, landed),
            None => self.bound(&built.to_value(), landed),
        }
    }

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

/// Puts the seller's document into the choice, first, under the member the pairing keeps it in (nothing where the
/// pairing keeps none): what `choose` left out, so that the choice is what `build` takes.
pub fn keep_document(pairing: &dyn Pairing, chosen: &mut Chosen, doc: Value) {
    if let Some(member) = pairing.document_member() {
        chosen.choice.shift_insert(0, member.to_owned(), doc);
    }
}

/// The seller's document as a caller hands it to the gate: borrowed, and the gate copies what the choice keeps of
/// it; or owned, and the gate moves it into the choice.
pub trait Document: Send {
    /// The document.
    fn get(&self) -> &Value;

    /// The document, owned.
    fn into_value(self) -> Value;
}

impl Document for Value {
    fn get(&self) -> &Value {
        self
    }

    fn into_value(self) -> Value {
        self
    }
}

impl Document for &Value {
    fn get(&self) -> &Value {
        self
    }

    fn into_value(self) -> Value {
        self.clone()
    }
}

/// The namespace of a pairing id: the part before the first `/`.
pub fn namespace(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}
