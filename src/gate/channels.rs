//! Channels and sessions: one ATR per channel. `open_channel` keeps the compared ATR with the signed opening as a
//! hold; `within` signs every later payment from the hold (only the amount comes from the seller's new document);
//! `record_charge` records the seller's cumulative charge, bounded by what was signed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::types::Options;
use crate::codec::{b64_decode, b64_encode};
use crate::decimal;
use crate::decline::{DeclineCode, Declined};
use crate::hash::{MAX_ATR_BYTES, atr_hash, hash_equals};
use crate::json::{MAX_JSON_DEPTH, within_depth};
use ruint::aliases::{U256, U512};

use super::ledger::{Failed, Opened, Opening, entry};
use super::prepared::ToSign;
use super::spend::{Allowed, PolicyRefusal, Role, Spend, SpendApproval, journal_failed};
use crate::hash::AtrHash;
use crate::pairing::{
    Channel, ChannelHold, ChannelKind, ChannelRef, Chosen, Pairing, Quote, Refund, WithinArgs, WithinPlan, namespace,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Signer, SigningRequest};

/// A later payment signed in a held channel, and the hold with its largest signed amount updated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Within {
    /// The payment to send.
    pub signed: Value,
    /// The hold to keep from now on.
    pub hold: ChannelHold,
}

fn declined(code: DeclineCode, detail: impl Into<String>) -> Declined {
    Declined::new(code, detail)
}

fn not_bound(detail: impl Into<String>) -> Declined {
    declined(DeclineCode::SignedNotBound, detail)
}

fn channel_of(pairing: &dyn Pairing) -> Result<&dyn Channel, Declined> {
    pairing.channel().ok_or_else(|| declined(DeclineCode::PairingNotSupported, "The pairing has no channel."))
}

/// A channel member guarded like every pairing call: a panic inside it reads as `member-failed`.
fn guarded<T>(f: impl FnOnce() -> Result<T, Refusal>) -> Result<T, Refusal> {
    super::guarded(f, || Refusal::bare(Reason::MemberFailed))
}

fn same_channel(read: &Result<ChannelRef, Refusal>, hold: &ChannelHold) -> bool {
    matches!(read, Ok(r) if r.network == hold.network && r.channel == hold.channel)
}

/// Whether the hold has the hold's form: decimal `charged` and `signedMax` of at most 78 digits with
/// `charged ≤ signedMax`, an object `opening`, and an object `landed` where present.
fn is_hold(hold: &ChannelHold) -> bool {
    let (Some(charged), Some(most)) = (decimal::parse(&hold.charged), decimal::parse(&hold.signed_max)) else {
        return false;
    };
    charged <= most && hold.opening.is_object() && hold.landed.as_ref().is_none_or(Value::is_object)
}

/// Takes a channel pairing's signed opening and the ATR bytes the gate compared for it (with the landed read
/// `finish` or `transact` returned beside it, where there is one) and keeps them together as a hold: the opening must
/// open a channel, the pairing must read the hash of these bytes from it, and it must name its channel.
pub fn open_channel(
    bytes: &[u8],
    opened: &Value,
    pairing: &dyn Pairing,
    landed: Option<&Value>,
) -> Result<ChannelHold, Declined> {
    let channel = channel_of(pairing)?;
    if landed.is_some_and(|l| !l.is_object() || !opened.is_object()) {
        return Err(not_bound("The landed receipt is not a JSON object beside the opening."));
    }
    if bytes.len() > MAX_ATR_BYTES {
        return Err(super::atr::too_large());
    }
    if guarded(|| channel.kind(opened, landed)) != Ok(ChannelKind::Open) {
        return Err(not_bound("The payment does not open a channel."));
    }
    let h = atr_hash(bytes);
    if super::bound(pairing, opened, landed) != Ok(h) {
        return Err(not_bound("The pairing does not read the hash of the compared bytes from the opening."));
    }
    let read = guarded(|| channel.channel_ref(opened, landed)).map_err(|r| not_bound(r.code()))?;
    if !opened.is_object() || !within_depth(opened, MAX_JSON_DEPTH) {
        return Err(not_bound("The opening is not plain JSON."));
    }
    if landed.is_some_and(|l| !within_depth(l, MAX_JSON_DEPTH)) {
        return Err(not_bound("The read held for the opening is not plain JSON."));
    }
    let signed_max = guarded(|| Ok(channel.signed_max(opened))).map_err(|r| not_bound(r.code()))?;
    Ok(ChannelHold {
        pairing: pairing.id().to_owned(),
        network: read.network,
        channel: read.channel,
        h: h.to_hex(),
        atr: b64_encode(bytes),
        opening: opened.clone(),
        landed: landed.cloned(),
        charged: "0".to_owned(),
        signed_max,
    })
}

/// Signs one later payment (a voucher, a partial refund, or the close) in a held channel. The ATR, its hash and the
/// channel come from the hold and are checked first; the pairing reads only the amount from `doc`. Where the pairing's
/// plan asks for it, the channel the payment would name is checked before the signer is called; afterwards the signed payment
/// must be of the expected kind, commit to the held hash where the pairing's voucher carries one, and name the held
/// channel, or it is dropped.
pub async fn within(
    doc: &Value,
    hold: &ChannelHold,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    refund: Option<&Refund>,
    options: &Options,
) -> Result<Within, Declined> {
    let channel = channel_of(pairing)?;
    let ns = namespace(pairing.id());
    if !is_hold(hold) {
        return Err(not_bound("The channel hold is malformed."));
    }
    if hold.pairing != pairing.id() {
        return Err(declined(
            DeclineCode::PairingNotSupported,
            format!("The hold is not for the pairing {}.", pairing.id()),
        ));
    }
    if refund.and_then(|r| r.amount.as_deref()).is_some_and(|a| !decimal::is_decimal(a)) {
        return Err(declined(DeclineCode::NoPayableOption, Refusal::new(ns, Reason::InputMissing).code()));
    }
    let atr = b64_decode(&hold.atr)
        .filter(|a| a.len() <= MAX_ATR_BYTES)
        .ok_or_else(|| not_bound("The held ATR is unreadable."))?;
    let h = atr_hash(&atr);
    if !hash_equals(&hold.h, &h.to_hex()) {
        return Err(declined(DeclineCode::HashMismatch, "The held ATR does not hash to the held hash."));
    }
    let landed = hold.landed.as_ref();
    if super::bound(pairing, &hold.opening, landed) != Ok(h) {
        return Err(not_bound("The pairing does not read the held ATR's hash from the held opening."));
    }
    if !same_channel(&guarded(|| channel.channel_ref(&hold.opening, landed)), hold) {
        return Err(not_bound("The held opening does not name the held channel."));
    }

    let args = WithinArgs { doc, hold, h: &h, refund, inputs: &options.inputs };
    let build_failed = || declined(DeclineCode::OfferUnreadable, Refusal::new(ns, Reason::BuildFailed).code());
    let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| channel.plan_within(&args)))
        .unwrap_or_else(|_| Err(build_failed()))?;
    // The amount the payment signs is read before the signer is called: a plan that names none is never signed.
    let cumulative = decimal::parse(&plan.cumulative).ok_or_else(build_failed)?;
    let requests = plan.batch.requests().to_vec();
    if plan.precheck {
        let unreadable = || {
            declined(
                DeclineCode::OfferUnreadable,
                "The in-channel payment's channel cannot be read before it is signed.",
            )
        };
        let answers =
            requests.iter().map(SigningRequest::placeholder).collect::<Option<Vec<_>>>().ok_or_else(unreadable)?;
        let completed = guarded(|| plan.batch.complete(&answers, None))
            .map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
        let would_be = guarded(|| channel.channel_ref(&completed, None))
            .map_err(|r| declined(DeclineCode::OfferUnreadable, r.code()))?;
        if would_be.network != hold.network || would_be.channel != hold.channel {
            return Err(declined(
                DeclineCode::NoPayableOption,
                "The challenge asks for a payment in a channel this hold did not open.",
            ));
        }
    }

    let spent = voucher_spend(pairing, hold, &plan, &h, signer.account(), options)?;
    // What the journal records the voucher under: its channel and cumulative amount (one voucher per amount).
    let fallback_key = format!("voucher:{}:{}:{}", hold.network, hold.channel, plan.cumulative);
    let chosen = Chosen {
        pairing: pairing.id().to_owned(),
        build_input: serde_json::Map::from_iter([
            ("channel".to_owned(), Value::String(hold.channel.clone())),
            ("cumulative".to_owned(), Value::String(plan.cumulative.clone())),
        ]),
        reference: fallback_key.clone(),
        agreement: None,
    };
    let opening = Opening {
        pairing,
        chosen: &chosen,
        account: signer.account(),
        h: &h,
        role: Role::Voucher,
        fallback_key: &fallback_key,
    };
    let Some(entry) = entry(opening, spent.as_ref(), options)? else {
        return sign_within(&plan, cumulative, hold, &h, refund, channel, signer, options).await;
    };
    // One signer call, with the plan's requests as one batch: what the journal records before it is asked.
    let request = SigningRequest::Batch { requests: requests.clone() };
    let ledger = match entry.begin(&chosen, ToSign::new(&atr, Some(&request))).await? {
        Opened::Go(ledger) => ledger,
        // This voucher was signed before: the same bytes, never a second signature.
        Opened::Resend { ledger, payment } => {
            return serde_json::from_value(payment).map_err(|e| {
                journal_failed(
                    Reason::StateUnknown,
                    format!("the journal's voucher of {} cannot be read: {e}", ledger.attempt()),
                )
            });
        }
        // Its wallet may have signed it before: only the identical request may be asked again.
        Opened::Resume { ledger, resumed } => {
            if resumed.prepared.request.as_ref() != Some(&request.to_json()) || resumed.bytes != atr {
                return Err(resumed.changed("voucher request"));
            }
            ledger
        }
    };
    match sign_within(&plan, cumulative, hold, &h, refund, channel, signer, options).await {
        // The signer is asked first thing: any decline comes after it.
        Err(d) => Err(ledger.ended(Failed::Asked(d)).await),
        Ok(within) => {
            let recorded = serde_json::to_value(&within).map_err(|e| journal_failed(Reason::Unavailable, e))?;
            ledger.signed(&atr, &recorded).await?;
            Ok(within)
        }
    }
}

/// The spend policy on the voucher's increase over the hold's largest signed amount, where a policy is set. Above
/// the approval threshold a voucher declines `policy/approval-required` unless the approval is passed in (`within`
/// has no hand-back: it answers a seller mid-channel).
fn voucher_spend(
    pairing: &dyn Pairing,
    hold: &ChannelHold,
    plan: &WithinPlan,
    h: &AtrHash,
    account: &str,
    options: &Options,
) -> Result<Option<(Quote, Allowed)>, Declined> {
    let Some(policy) = &options.policy else { return Ok(None) };
    let unknown = |why: &str| PolicyRefusal::new(Reason::QuoteUnknown, why).declined();
    let mut quote = plan.quote.clone().ok_or_else(|| unknown("the channel's plan gives no quote of the voucher"))?;
    let (Some(cumulative), Some(held)) = (decimal::parse(&plan.cumulative), decimal::parse(&hold.signed_max)) else {
        return Err(unknown("the voucher's cumulative amount cannot be read"));
    };
    let increase = cumulative.saturating_sub(held);
    quote.amount = U256::checked_from_limbs_slice(increase.as_limbs())
        .ok_or_else(|| unknown("the voucher's increase passes 2^256"))?;
    let spend = Spend {
        pairing: pairing.id(),
        account,
        quote: &quote,
        purchase: options.purchase.as_ref(),
        role: Role::Voucher,
        now: options.clock.now(),
        seller: options.seller,
        acceptance_required: options.acceptance_required,
    };
    let verdict = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| policy.check(&spend)))
        .unwrap_or_else(|_| Err(PolicyRefusal::new(Reason::QuoteUnknown, "the spend policy panicked")));
    let allowed = verdict.map_err(|r| r.declined())?;
    if allowed.needs_approval {
        let wanted = SpendApproval {
            pairing: pairing.id().to_owned(),
            account: account.to_owned(),
            quote: quote.clone(),
            purchase: options.purchase.clone(),
            h: *h,
        };
        if options.spend_approved.as_ref() != Some(&wanted) {
            return Err(PolicyRefusal::new(
                Reason::ApprovalRequired,
                "the voucher's increase is above the policy's approval threshold and no approval of it was passed",
            )
            .declined());
        }
    }
    Ok(Some((quote, allowed)))
}

/// The signer over the planned requests, and the checks of what it signed.
#[allow(clippy::too_many_arguments, reason = "the checks of `within`, moved out of it whole")]
async fn sign_within(
    plan: &WithinPlan,
    cumulative: U512,
    hold: &ChannelHold,
    h: &AtrHash,
    refund: Option<&Refund>,
    channel: &dyn Channel,
    signer: &dyn Signer,
    options: &Options,
) -> Result<Within, Declined> {
    let h = *h;
    let requests = plan.batch.requests();
    let request = SigningRequest::Batch { requests: requests.to_vec() };
    let answer =
        signer.sign(&request).await.map_err(|_| declined(DeclineCode::SignerFailed, "The signer did not sign."))?;
    let incomplete = || not_bound("The signer's answer did not complete the payment.");
    let answers: Vec<String> = match answer.as_json() {
        Value::Array(items) if items.len() == requests.len() => {
            items.iter().map(|a| a.as_str().map(str::to_owned)).collect::<Option<_>>().ok_or_else(incomplete)?
        }
        _ => return Err(incomplete()),
    };
    let reference = options.ids.next_id();
    let signed = guarded(|| plan.batch.complete(&answers, Some(&reference))).map_err(|r| not_bound(r.code()))?;

    let closing = refund.is_some_and(|r| r.amount.is_none());
    let (expected, word) = if closing { (ChannelKind::Close, "close") } else { (ChannelKind::Within, "within") };
    if guarded(|| channel.kind(&signed, None)) != Ok(expected) {
        return Err(not_bound(format!("The signed payment is not a {word} payment.")));
    }
    let committed = match guarded(|| channel.bound_within(&signed)) {
        Ok(inside) => inside == h,
        Err(r) => r.reason() == Reason::NotBoundWithin,
    };
    if !committed {
        return Err(not_bound("The signed voucher does not commit to the held ATR's hash."));
    }
    if !same_channel(&guarded(|| channel.channel_ref(&signed, None)), hold) {
        return Err(not_bound("The signed voucher does not name the held channel."));
    }
    // The hold keeps the larger of the two, written canonically when the new amount is not below the held one.
    let signed_max = match decimal::parse(&hold.signed_max) {
        Some(held) if held > cumulative => hold.signed_max.clone(),
        _ => decimal::format(cumulative),
    };
    Ok(Within { signed, hold: ChannelHold { signed_max, ..hold.clone() } })
}

/// Records the seller's cumulative charge: a decimal no lower than the charge already recorded and no higher than
/// the largest amount signed in the channel.
pub fn record_charge(hold: &ChannelHold, charged: &str) -> Result<ChannelHold, Declined> {
    if !is_hold(hold) {
        return Err(not_bound("The channel hold is malformed."));
    }
    let unreadable = |detail: &str| declined(DeclineCode::OfferUnreadable, detail);
    let amount = decimal::parse(charged).ok_or_else(|| unreadable("The charged amount is not a decimal."))?;
    let (Some(recorded), Some(most)) = (decimal::parse(&hold.charged), decimal::parse(&hold.signed_max)) else {
        return Err(not_bound("The channel hold is malformed."));
    };
    if amount < recorded {
        return Err(unreadable("The charged amount is below the charge already recorded."));
    }
    if amount > most {
        return Err(unreadable("The charged amount is above the largest amount signed in the channel."));
    }
    Ok(ChannelHold { charged: decimal::format(amount), ..hold.clone() })
}
