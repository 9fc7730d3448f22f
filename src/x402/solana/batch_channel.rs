//! The channel side of `x402/batch-settlement/solana`: a later voucher or the refund built from the hold, and the
//! pairing's [`Channel`] members (what a payment does in its channel, which channel it names, and the opening's
//! signed maximum). A voucher signs the channel, not H: the opening bound it.

use serde_json::{Map, Value, json};

use super::batch::voucher_json;
use super::batch::{BatchSolana, batch_signatures, channel_of, config_of, ed25519_raw, filter, payload_kind};
use super::{key_of, svm};
use crate::decimal;
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Batch, Channel, ChannelKind, ChannelRef, WithinArgs, WithinPlan};
use crate::rail::solana::Key;
use crate::rail::solana::channel::voucher_message;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::batch::payload_of;
use crate::x402::channel::WithinOffer;
use crate::x402::{X402Payment, check_chosen};

/// A later voucher, or the refund that closes the channel: one request, the voucher, for the payer authorizer.
#[derive(Debug, Clone)]
pub struct InChannel {
    requests: Vec<SigningRequest>,
    required: Map<String, Value>,
    accepted: Value,
    config: Value,
    channel: Key,
    max_claimable: u64,
    refund: bool,
}

/// Builds a later voucher, or a refund, from the within offer: the option must be one the document offers and the
/// filter serves, the held configuration one the program's open takes (`x402/payload-malformed`), and the cumulative
/// amount a u64 (`svm/input-malformed`). The channel is the configuration's under the option's fee payer, so an option
/// of another fee payer names another channel, which the gate refuses before the signer is called. A refund closes
/// the whole channel: one with an amount is `svm/input-malformed`. The refund the reference takes again after the
/// seller answers that the receiver's binding is unavailable (the voucher with a payer-signed `request_close`) is not
/// built here.
pub fn build_within(offer: &WithinOffer, _h: &AtrHash) -> Result<InChannel, Refusal> {
    let (required, accepted) = check_chosen(Some(&offer.required), Some(&offer.accepted), filter)?;
    let config = config_of(Some(&offer.channel_config))?;
    let fee_payer = accepted.member("extra").and_then(|e| key_of(e.member("feePayer")));
    let channel = config.channel(&fee_payer.ok_or(Refusal::x402(Reason::OptionMalformed))?)?;
    let max_claimable = u64::try_from(offer.max_claimable).map_err(|_| svm(Reason::InputMalformed))?;
    let refund = match &offer.refund {
        None => false,
        Some(r) if r.amount.is_some() => return Err(svm(Reason::InputMalformed)),
        Some(_) => true,
    };
    let voucher = voucher_message(&channel, max_claimable, 0);
    Ok(InChannel {
        requests: vec![ed25519_raw(&voucher, &config.payer_authorizer)],
        required: required.clone(),
        accepted: Value::Object(accepted.clone()),
        config: offer.channel_config.clone(),
        channel,
        max_claimable,
        refund,
    })
}

impl Batch for InChannel {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    fn complete(&self, answers: &[String], reference: Option<&str>) -> Result<Value, Refusal> {
        let answer = Answer::new(Value::Array(answers.iter().cloned().map(Value::String).collect()));
        let sigs = batch_signatures(std::slice::from_ref(&answer), self.requests.len())?;
        let [signature] = sigs.as_slice() else { return Err(svm(Reason::InputMalformed)) };
        let kind = if self.refund { "refund" } else { "voucher" };
        let voucher = voucher_json(&self.channel, self.max_claimable, signature);
        let payload = json!({"type": kind, "channelConfig": self.config, "voucher": voucher});
        Ok(X402Payment::new(&self.required, &self.accepted, payload, reference)?.to_value())
    }
}

impl Channel for BatchSolana {
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        let (_, payload) = payload_of(payment, filter)?;
        payload_kind(payload)
    }

    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        self.kind(payment, landed)?;
        channel_of(payment)
    }

    fn bound_within(&self, _payment: &Value) -> Result<AtrHash, Refusal> {
        Err(Refusal::x402(Reason::NotBoundWithin))
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
