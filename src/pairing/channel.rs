//! The channel seam: what a pairing whose payments run in a channel (x402 batch settlement, MPP sessions) gives the
//! gate's channel steps. One ATR covers the whole channel: it is compared once, at the opening, and every later
//! payment is built from the hold.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::refusal::Refusal;
use crate::signer::SigningRequest;

/// What a payment does in its channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    /// Opens the channel.
    Open,
    /// A later payment (a voucher, or a partial refund).
    Within,
    /// Closes the channel.
    Close,
}

/// The channel a payment names: a read key only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelRef {
    /// The network, as the pairing spells it.
    pub network: String,
    /// The channel id, as the pairing spells it.
    pub channel: String,
}

/// A channel the buyer opened for an ATR it compared: a plain value the caller keeps and always passes back whole.
/// Everything in a later payment comes from the hold except the amount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelHold {
    /// The pairing id.
    pub pairing: String,
    /// The channel's network.
    pub network: String,
    /// The channel id.
    pub channel: String,
    /// The hash of the opening's ATR.
    pub h: String,
    /// The ATR bytes, as canonical padded standard base64.
    pub atr: String,
    /// The signed opening, as plain JSON.
    pub opening: Value,
    /// The landed read of the opening, kept out of band, where the pairing needs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Value>,
    /// The seller's cumulative charge last recorded, a decimal (`"0"` at the opening).
    pub charged: String,
    /// The largest cumulative amount signed in the channel, a decimal.
    #[serde(rename = "signedMax")]
    pub signed_max: String,
}

/// A refund in a held channel: `{}` closes the channel, `{amount}` refunds down to that cumulative amount and keeps
/// it open (x402 only). The amount must be a decimal of up to 78 digits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refund {
    /// The amount of a partial refund; `None` closes the channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<String>,
}

impl Refund {
    /// `{}`: close the channel.
    pub fn close() -> Self {
        Self { amount: None }
    }

    /// `{amount}`: a partial refund.
    pub fn partial(amount: impl Into<String>) -> Self {
        Self { amount: Some(amount.into()) }
    }
}

/// Several signing requests signed in order; completed with one answer per request.
pub trait Batch: Send + Sync {
    /// The requests, in order.
    fn requests(&self) -> &[SigningRequest];

    /// The payment from the answers, in order. `reference` is a fresh payment id the pairing writes where its
    /// protocol takes one (the x402 payment-identifier extension); `None` for a trial completion with placeholder
    /// answers, made only to read the channel the payment would name, which writes no id.
    fn complete(&self, answers: &[String], reference: Option<&str>) -> Result<Value, Refusal>;
}

/// What the gate hands a channel pairing to build a later payment: the seller's new document, and the hold's values
/// already checked against the held ATR.
#[derive(Debug, Clone, Copy)]
pub struct WithinArgs<'a> {
    /// The seller's document for this payment, as given.
    pub doc: &'a Value,
    /// The hold, checked: its ATR hashes to `h`, its opening reads `h` and names its channel.
    pub hold: &'a ChannelHold,
    /// The hash of the held ATR.
    pub h: &'a AtrHash,
    /// The refund asked for, if any.
    pub refund: Option<&'a Refund>,
    /// The buyer's own inputs.
    pub inputs: &'a Map<String, Value>,
}

/// A later payment, built.
pub struct WithinPlan {
    /// The requests and how they complete.
    pub batch: Box<dyn Batch>,
    /// The cumulative amount the payment signs, a decimal.
    pub cumulative: String,
    /// Whether the payment's channel can be read from a completion with placeholder answers, and must be checked
    /// against the hold before the signer is called (x402 batch channels).
    pub precheck: bool,
    /// What the payment pays (asset, payee, network, scheme), its amount the cumulative amount signed; `None`
    /// where the pairing cannot say. A spend policy counts the increase over the hold's largest signed amount, and
    /// refuses a plan with no quote.
    pub quote: Option<super::Quote>,
}

impl std::fmt::Debug for WithinPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithinPlan")
            .field("requests", &self.batch.requests())
            .field("cumulative", &self.cumulative)
            .field("precheck", &self.precheck)
            .field("quote", &self.quote)
            .finish()
    }
}

/// A pairing whose payments run in a channel.
pub trait Channel: Send + Sync {
    /// What the payment does in its channel.
    fn kind(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelKind, Refusal>;

    /// The channel the payment names.
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal>;

    /// H as a later payment commits to it. A refusal whose reason is
    /// [`NotBoundWithin`](crate::Reason::NotBoundWithin) (`…/not-bound-within`) says the pairing's vouchers carry no
    /// H (they sign the channel, which the opening bound), which the gate accepts.
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal>;

    /// The most the opening's first voucher lets the seller claim, as a decimal (`"0"` where it names none): where
    /// a hold's `signedMax` starts.
    fn signed_max(&self, opening: &Value) -> String;

    /// Reads the new document (the amount; everything else comes from the hold) and builds the later payment.
    /// Declines with the gate's codes and details.
    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined>;
}
