//! The in-channel reading every x402 batch channel shares (EVM, Solana): the seller's new challenge must advertise the
//! held ATR's hash, the amount is the first option on the held network, and the cumulative amount the voucher signs is
//! the recorded charge plus that amount (a refund signs the recorded charge). Everything else comes from the hold.

use ruint::aliases::{U256, U512};
use serde_json::Value;

use crate::decimal;
use crate::decline::{DeclineCode, Declined};
use crate::json::Member;
use crate::pairing::{Batch, Offer, Pairing, Quote, Refund, WithinArgs, WithinPlan};
use crate::refusal::{Reason, Refusal};

/// What an x402 batch channel's in-channel build takes: the challenge and its option on the held network, the held
/// opening's channel configuration, the cumulative amount to sign, and the refund asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct WithinOffer {
    /// The seller's new `PAYMENT-REQUIRED` document.
    pub required: Value,
    /// Its first option on the held network, as the document wrote it.
    pub accepted: Value,
    /// The held opening's `payload.channelConfig` (`null` where it has none).
    pub channel_config: Value,
    /// The cumulative amount the voucher signs: the recorded charge, plus the option's amount for a voucher.
    pub max_claimable: U512,
    /// The refund asked for, if any.
    pub refund: Option<Refund>,
}

fn declined(code: DeclineCode, detail: impl Into<String>) -> Declined {
    Declined::new(code, detail)
}

/// Reads the new challenge against the hold: the pairing's read (a refusal is `offer-unreadable`), the advertised H
/// (another one is `hash-mismatch`, before anything is built or signed), the first option on the held network, and its
/// amount, a decimal of up to 78 digits.
pub(crate) fn within_offer(pairing: &dyn Pairing, args: &WithinArgs<'_>) -> Result<WithinOffer, Declined> {
    let read = pairing.read(args.doc).map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
    if read.h != *args.h {
        return Err(declined(
            DeclineCode::HashMismatch,
            "The challenge advertises another ATR's hash than the one this channel opened for.",
        ));
    }
    let no_option = || declined(DeclineCode::NoPayableOption, Refusal::x402(Reason::NoPayableOption).code());
    let Offer::X402 { required, options } = read.offer else { return Err(no_option()) };
    let network = Value::String(args.hold.network.clone());
    let accepted = options
        .into_iter()
        .find(|o| o.as_object().is_some_and(|m| m.member("network") == Some(&network)))
        .ok_or_else(no_option)?;
    let amount = accepted
        .member("amount")
        .and_then(Value::as_str)
        .and_then(decimal::parse)
        .ok_or_else(|| declined(DeclineCode::OfferUnreadable, Refusal::x402(Reason::OptionMalformed).code()))?;
    let charged = decimal::parse(&args.hold.charged)
        .ok_or_else(|| declined(DeclineCode::SignedNotBound, "The channel hold is malformed."))?;
    // Two amounts of at most 78 digits each sum below 2^512.
    let max_claimable = if args.refund.is_some() { charged } else { charged.saturating_add(amount) };
    let channel_config = args.hold.opening.pointer("/payload/channelConfig").cloned().unwrap_or(Value::Null);
    Ok(WithinOffer {
        required: required.clone(),
        accepted: accepted.clone(),
        channel_config,
        max_claimable,
        refund: args.refund.cloned(),
    })
}

/// Plans the in-channel payment: `within_offer`, then the pairing's build over it (a refusal is
/// `offer-unreadable`). The gate completes the build with placeholder answers and checks the channel it would name
/// before the signer is called.
pub fn plan_within(
    pairing: &dyn Pairing,
    args: &WithinArgs<'_>,
    build: impl FnOnce(&WithinOffer) -> Result<Box<dyn Batch>, Refusal>,
) -> Result<WithinPlan, Declined> {
    let offer = within_offer(pairing, args)?;
    let batch = build(&offer).map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
    let quote = within_quote(&offer);
    Ok(WithinPlan { batch, cumulative: decimal::format(offer.max_claimable), precheck: true, quote })
}

/// What the voucher pays, read from the option it answers: its asset, payee, network and scheme, and the cumulative
/// amount (`None` where the option names no asset or payee, or the amount passes 2^256).
fn within_quote(offer: &WithinOffer) -> Option<Quote> {
    let text = |name: &str| offer.accepted.member(name).and_then(Value::as_str);
    let amount = U256::checked_from_limbs_slice(offer.max_claimable.as_limbs())?;
    Some(Quote::new(amount, text("asset")?, text("payTo")?, text("network")?, text("scheme")?))
}
