//! The channel side of `x402/batch-settlement/eip155`: a later voucher or refund built from the hold, and the
//! pairing's [`Channel`] members (what a payment does in its channel, which channel it names, the held H a voucher
//! commits to, and the opening's signed maximum).

use serde_json::{Map, Value, json};

use ruint::aliases::U512;

use super::batch_settlement::{
    BatchSettlement, channel_id, channel_of, eip712, filter, is_deposit_config, malformed, payload_kind,
    payload_malformed, salt_of, voucher_typed_data,
};
use crate::decimal;
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, WithinArgs, WithinPlan};
use crate::rail::evm::chain_id_of;
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;
use crate::x402::batch::{is_hex_signature, payload_of};
use crate::x402::channel::WithinOffer;
use crate::x402::{X402Payment, check_chosen};

/// A later voucher or refund in a channel opened under H: one request, the voucher.
#[derive(Debug, Clone)]
pub struct InChannel {
    requests: Vec<SigningRequest>,
    required: Map<String, Value>,
    accepted: Value,
    config: Value,
    channel_id: String,
    max_claimable: u128,
    /// `None`: a voucher; `Some(None)`: the close; `Some(Some(amount))`: a partial refund.
    refund: Option<Option<u128>>,
}

/// Builds a later voucher, or a refund, from the within offer and the held H: the option must be one the document
/// offers and the filter serves, the held configuration one the deposit takes and salted with H
/// (`x402/channel-id-mismatch`), the cumulative amount and a refund's amount below 2^128 (a refund's above 0).
pub fn build_within(offer: &WithinOffer, h: &AtrHash) -> Result<InChannel, Refusal> {
    let (required, accepted) = check_chosen(Some(&offer.required), Some(&offer.accepted), filter)?;
    let config = &offer.channel_config;
    if !is_deposit_config(config) {
        return Err(payload_malformed());
    }
    if config.member("salt").and_then(Value::as_str).and_then(AtrHash::parse) != Some(*h) {
        return Err(Refusal::x402(Reason::ChannelIdMismatch));
    }
    let u128_of_u512 = |n: U512| u128::try_from(n).ok();
    let max_claimable = u128_of_u512(offer.max_claimable).ok_or_else(malformed)?;
    let refund = match &offer.refund {
        None => None,
        Some(r) => match &r.amount {
            None => Some(None),
            Some(a) => Some(Some(decimal::parse(a).and_then(u128_of_u512).filter(|a| *a > 0).ok_or_else(malformed)?)),
        },
    };
    let chain_id = accepted.member("network").and_then(chain_id_of).ok_or_else(malformed)?;
    let channel_id = channel_id(chain_id, config)?;
    Ok(InChannel {
        requests: vec![eip712(voucher_typed_data(chain_id, &channel_id, max_claimable))],
        required: required.clone(),
        accepted: Value::Object(accepted.clone()),
        config: config.clone(),
        channel_id,
        max_claimable,
        refund,
    })
}

impl Batch for InChannel {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    fn complete(&self, answers: &[String], reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(Refusal::x402(Reason::SignatureMalformed)) };
        if !is_hex_signature(signature) {
            return Err(Refusal::x402(Reason::SignatureMalformed));
        }
        let voucher = json!({
            "channelId": self.channel_id,
            "maxClaimableAmount": self.max_claimable.to_string(),
            "signature": signature,
        });
        let kind = if self.refund.is_some() { "refund" } else { "voucher" };
        let mut payload = json!({"type": kind, "channelConfig": self.config, "voucher": voucher});
        if let (Some(Some(amount)), Some(p)) = (self.refund, payload.as_object_mut()) {
            p.insert("amount".into(), Value::String(amount.to_string()));
        }
        Ok(X402Payment::new(&self.required, &self.accepted, payload, reference)?.to_value())
    }
}

impl Channel for BatchSettlement {
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        let (_, payload) = payload_of(payment, filter)?;
        payload_kind(payload)
    }

    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        self.kind(payment, landed)?;
        channel_of(payment).map(|(r, _)| r)
    }

    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        let (_, payload) = channel_of(payment)?;
        salt_of(payload)
    }

    fn signed_max(&self, opening: &Value) -> String {
        opening
            .pointer("/payload/voucher/maxClaimableAmount")
            .and_then(Value::as_str)
            .filter(|s| decimal::is_decimal(s))
            .unwrap_or("0")
            .to_owned()
    }

    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        crate::x402::channel::plan_within(self, args, |offer| {
            Ok(Box::new(build_within(offer, args.h)?) as Box<dyn Batch>)
        })
    }
}
