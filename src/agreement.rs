//! The agreement exchange: for a pairing whose signed payment is no public proof of H (a card charge, a Lightning
//! invoice, an ERC-7710 delegation, a checkout), the buyer first pays a small x402 payment at the seller's agreement
//! URL whose own payment does carry H, and signs the main payment only with the URL's receipt in hand.
//!
//! Two calls. Without an approved payment: one unpaid GET; a 402 is read and the agreement payment is handed back
//! for approval, nothing signed; a 200 is a receipt already recorded; a 202 is pending. With the payment the agent
//! approved, carried back unchanged: it is signed once, sent in `PAYMENT-SIGNATURE`, and re-sent (never re-signed)
//! after each 202, 5xx or timeout, until a receipt, a refusal or the end of the window.

use std::borrow::Cow;
use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::decline::{DeclineCode, Declined, Moved};
use crate::fetch::{Fetch, Request};
use crate::gate::approvals::SOME_RULE;
use crate::gate::atr::{IDENTITY, declared_over, is_identity, read_capped, trim_http};
use crate::gate::ledger::{Failed, Ledger, Opened, Opening, entry};
use crate::gate::{
    Agreement, AgreementPayment, AgreementReceipt, BuiltRequest, Options, Resumed, Resuming, ToApprove, ToSign,
    build_request, rebuild, sign_steps,
};
use crate::gate::{Allowed, PolicyRefusal};
use crate::gate::{Answered, Role, journal_failed, spend_check};
use crate::hash::{AtrHash, atr_hash, hash_equals};
use crate::json::{Member, is_offered};
use crate::link::{is_https_link, link_reason};
use crate::pairing::{ChooseContext, Chosen, Pairing, Quote, choose_with_inputs};
use crate::payment::Payment;
use crate::refusal::{Reason, Refusal};
use crate::registry::x402_pairings;
use crate::signer::Signer;
use crate::x402::{MAX_OPTIONS, decode_payment_required, timeout_seconds};

/// The unpaid request's deadline.
pub(crate) const UNPAID_DEADLINE: Duration = Duration::from_secs(10);
/// The cap on the seconds an option's timeout adds to a paid request's deadline.
pub(crate) const EXCHANGE_CAP_S: u64 = 120;
const SETTLE_S: u64 = 60;
const VERIFY_S: u64 = 10;
/// The seconds the whole exchange adds to the option's `maxTimeoutSeconds`.
pub(crate) const WINDOW_EXTRA_S: u64 = 180;
/// The largest receipt the gate reads.
pub(crate) const MAX_ANSWER_BYTES: usize = 65_536;
const RETRY_DEFAULT_S: u64 = 2;
const RETRY_MIN_S: u64 = 1;

fn failed(detail: impl Into<String>) -> Declined {
    Declined::new(DeclineCode::AgreementFailed, detail)
}

fn ended() -> Declined {
    failed("The caller's signal ended the agreement exchange before the payment was sent.")
}

fn is_ended(cancel: Option<&CancellationToken>) -> bool {
    cancel.is_some_and(CancellationToken::is_cancelled)
}

/// The work's result, or `None` when the token is cancelled first (the work is then dropped, which cancels it).
async fn until<T>(cancel: Option<&CancellationToken>, work: impl Future<Output = T>) -> Option<T> {
    match cancel {
        None => Some(work.await),
        Some(token) => tokio::select! {
            biased;
            () = token.cancelled() => None,
            out = work => Some(out),
        },
    }
}

/// One answer of the agreement URL.
enum Answer {
    Answered {
        status: u16,
        payment_required: Option<String>,
        retry_after: Option<String>,
        body: Option<Vec<u8>>,
    },
    /// No answer: the deadline passed or the URL could not be reached.
    Unanswered,
}

/// `Retry-After` as 1 to 9 ASCII digits of seconds (surrounding HTTP whitespace aside), at least 1; 2 for anything
/// else, HTTP-dates included.
pub fn retry_seconds(header: Option<&str>) -> u64 {
    match header.map(trim_http) {
        Some(v) if (1..=9).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()) => {
            v.parse::<u64>().map_or(RETRY_DEFAULT_S, |n| n.max(RETRY_MIN_S))
        }
        _ => RETRY_DEFAULT_S,
    }
}

async fn get_once(fetch: &dyn Fetch, url: &str, signature: Option<&str>) -> Result<Answer, Declined> {
    let paid;
    let headers: &[(&str, &str)] = match signature {
        None => &[IDENTITY],
        Some(s) => {
            paid = [IDENTITY, ("PAYMENT-SIGNATURE", s)];
            &paid
        }
    };
    let Ok(mut response) = fetch.get(Request { url, headers }).await else { return Ok(Answer::Unanswered) };
    let status = response.status;
    let payment_required = response.header("payment-required");
    let retry_after = response.header("retry-after");
    if (status == 200 || status == 402) && !is_identity(response.header("content-encoding").as_deref()) {
        return Err(failed("The agreement URL served a content coding other than identity."));
    }
    if status != 200 {
        return Ok(Answer::Answered { status, payment_required, retry_after, body: None });
    }
    let too_large = || failed("The agreement receipt is larger than 64 KiB.");
    if declared_over(response.header("content-length").as_deref(), MAX_ANSWER_BYTES) {
        return Err(too_large());
    }
    match read_capped(&mut response, MAX_ANSWER_BYTES).await {
        Ok(body) => Ok(Answer::Answered { status, payment_required, retry_after, body: Some(body) }),
        Err(Some(())) => Err(too_large()),
        Err(None) => Ok(Answer::Unanswered),
    }
}

/// One GET of the agreement URL with the identity coding, no redirect followed, and one deadline over headers and
/// body. A 200 or 402 in another coding is `agreement-failed` with its body unread; only a 200 body is read, up to
/// 64 KiB.
async fn get(fetch: &dyn Fetch, url: &str, signature: Option<&str>, deadline: Duration) -> Result<Answer, Declined> {
    tokio::time::timeout(deadline, get_once(fetch, url, signature)).await.unwrap_or(Ok(Answer::Unanswered))
}

/// The receipt a 200 carries, when it is the receipt for `h`: a UTF-8 JSON object whose `atrHash` is H, `agreed`
/// exactly `true`, and `network` and `transaction` strings. Extra members are ignored.
fn receipt(body: Option<&[u8]>, h: &AtrHash) -> Result<AgreementReceipt, Declined> {
    let not_json = || failed("The agreement URL answered 200 without a JSON receipt.");
    let text = std::str::from_utf8(body.unwrap_or_default()).map_err(|_| not_json())?;
    let parsed = crate::json::parse(text).ok_or_else(not_json)?;
    let map = parsed.as_object().ok_or_else(not_json)?;
    let atr_hash = match map.member("atrHash").and_then(Value::as_str) {
        Some(s) if hash_equals(s, &h.to_hex()) => s.to_owned(),
        _ => return Err(failed("The agreement receipt names another ATR hash.")),
    };
    match (map.member("agreed"), map.member("network"), map.member("transaction")) {
        (Some(Value::Bool(true)), Some(Value::String(network)), Some(Value::String(transaction))) => {
            Ok(AgreementReceipt { atr_hash, agreed: true, network: network.clone(), transaction: transaction.clone() })
        }
        _ => Err(failed("The agreement receipt is not a recorded agreement.")),
    }
}

/// The option the agreement is paid with, and its pairing, read and choice.
struct Selected {
    option: Value,
    pairing: &'static dyn Pairing,
    /// The H the challenge advertises.
    h: AtrHash,
    chosen: Chosen,
    /// The paid request's deadline and the whole window, in seconds.
    limits: (u64, u64),
}

/// The paid request's deadline and the whole exchange's, from the option's `maxTimeoutSeconds`.
fn bounds(option: &Value) -> Option<(u64, u64)> {
    let t = timeout_seconds(option.member("maxTimeoutSeconds")?)?;
    Some((t.min(EXCHANGE_CAP_S) + SETTLE_S + VERIFY_S, t.saturating_add(WINDOW_EXTRA_S)))
}

/// The refusal of a challenge that serves no option.
const NO_PAYABLE_OPTION: Refusal = Refusal::x402(Reason::NoPayableOption);

/// The refusal the x402 reads give a challenge that serves no option: the first that is not
/// `x402/no-payable-option`.
fn unserved(required: &Value) -> Refusal {
    x402_pairings()
        .filter_map(|p| p.read(required).err())
        .find(|r| *r != NO_PAYABLE_OPTION)
        .unwrap_or(NO_PAYABLE_OPTION)
}

/// A fault of the challenge's own (version, legal context, agreement URL) that no x402 read accepts.
fn challenge_fault(required: &Value) -> Option<String> {
    if x402_pairings().any(|p| p.read(required).is_ok()) {
        return None;
    }
    Some(unserved(required)).filter(|r| *r != NO_PAYABLE_OPTION).map(|r| r.code())
}

/// The option the agreement is paid with, by the main payment's rule: the options in document order, the first one
/// the signer can pay whose pairing (the first x402 pairing, in registry order, whose read accepts the challenge
/// holding only that option) is itself a public proof.
fn select(
    required: &Map<String, Value>,
    account: &str,
    options: &Options,
    approved: Option<&Value>,
) -> Result<Selected, Declined> {
    let whole = Value::Object(required.clone());
    let unreadable_whole = || Declined::new(DeclineCode::OfferUnreadable, unserved(&whole).code());
    let accepts = match required.member("accepts") {
        Some(Value::Array(a)) if a.len() <= MAX_OPTIONS && a.iter().any(Value::is_object) => a,
        _ => return Err(unreadable_whole()),
    };
    if let Some(approved) = approved {
        if let Some(fault) = challenge_fault(&whole) {
            return Err(Declined::new(DeclineCode::OfferUnreadable, fault));
        }
        if !is_offered(accepts, approved) {
            return Err(Declined::new(DeclineCode::OfferUnreadable, Refusal::x402(Reason::OptionNotInDocument).code()));
        }
    }
    let now = options.clock.now();
    let mut unreadable: Option<String> = None;
    let mut unpayable: Option<String> = None;
    let candidates: Vec<&Value> = match approved {
        Some(a) => vec![a],
        None => accepts.iter().collect(),
    };
    for option in candidates.into_iter().filter(|o| o.is_object()) {
        let mut only = required.clone();
        only.insert("accepts".into(), Value::Array(vec![option.clone()]));
        let only = Value::Object(only);
        let mut found = None;
        for pairing in x402_pairings() {
            match pairing.read(&only) {
                Ok(read) => {
                    found = Some((pairing, read));
                    break;
                }
                Err(r) if r != NO_PAYABLE_OPTION && unreadable.is_none() => {
                    unreadable = Some(r.code());
                }
                Err(_) => {}
            }
        }
        let Some((pairing, read)) = found else { continue };
        if !pairing.public_proof() {
            continue;
        }
        let Some(limits) = bounds(option) else { continue };
        let reference = options.ids.next_id();
        let ctx = ChooseContext { account, inputs: &options.inputs, now, reference: &reference, doc: &only };
        match choose_with_inputs(pairing, &read, &ctx) {
            Ok(mut chosen) => {
                let h = read.h;
                pairing.keep_document(&mut chosen, Cow::Owned(only));
                return Ok(Selected { option: option.clone(), pairing, h, chosen, limits });
            }
            Err(r) => {
                unpayable.get_or_insert_with(|| r.code());
            }
        }
    }
    match (unpayable, unreadable) {
        (None, Some(code)) => Err(Declined::new(DeclineCode::OfferUnreadable, code)),
        (unpayable, _) => {
            Err(Declined::new(DeclineCode::NoPayableOption, unpayable.unwrap_or_else(|| NO_PAYABLE_OPTION.code())))
        }
    }
}

/// The option chosen for `h`, once the challenge is found to advertise it: selection first, so a challenge with no
/// payable option declines for that before its hash is looked at.
fn paying(
    required: &Map<String, Value>,
    h: &AtrHash,
    account: &str,
    options: &Options,
    approved: Option<&Value>,
) -> Result<Selected, Declined> {
    let selected = select(required, account, options, approved)?;
    if selected.h != *h {
        return Err(Declined::new(DeclineCode::HashMismatch, "The agreement challenge advertises another ATR hash."));
    }
    Ok(selected)
}

/// Pays the agreement for the ATR `bytes` at `url` with `signer`: without `options.approved`, hands the agreement
/// payment back for approval (or the receipt of one already recorded); with it, signs exactly that payment once,
/// sends it, and waits for the receipt. Never call it twice with the same approval: to collect a receipt after
/// `agreement-pending`, call again without `approved`.
pub async fn agree(
    bytes: &[u8],
    url: &str,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Agreement, Declined> {
    exchange(bytes, url, signer, fetch, options, "x402").await
}

/// The exchange, with `ns` the namespace of the pairing whose offer named the URL.
pub(crate) async fn exchange(
    bytes: &[u8],
    url: &str,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
    ns: &'static str,
) -> Result<Agreement, Declined> {
    if !is_https_link(url) {
        return Err(Declined::new(DeclineCode::LinkNotHttps, Refusal::new(ns, link_reason(url)).code()));
    }
    if options.approved.as_ref().is_some_and(|a| !a.option.is_object() || !a.required.is_object()) {
        return Err(Declined::new(DeclineCode::NoPayableOption, Refusal::new(ns, Reason::InputMalformed).code()));
    }
    let cancel = options.cancel.as_ref();
    if is_ended(cancel) {
        return Err(ended());
    }
    let h = atr_hash(bytes);
    let Some(approved) = &options.approved else {
        return offer(bytes, h, url, signer, fetch, options).await;
    };
    pay(bytes, h, url, approved, signer, fetch, options).await
}

async fn offer(
    bytes: &[u8],
    h: AtrHash,
    url: &str,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Agreement, Declined> {
    let cancel = options.cancel.as_ref();
    let unpaid = until(cancel, get(fetch, url, None, UNPAID_DEADLINE)).await;
    let Some(unpaid) = unpaid.filter(|_| !is_ended(cancel)) else { return Err(ended()) };
    let (status, payment_required, body) = match unpaid? {
        Answer::Unanswered => return Err(failed("The agreement URL could not be reached.")),
        Answer::Answered { status, payment_required, body, .. } => (status, payment_required, body),
    };
    match status {
        200 => return Ok(Agreement::Agreed { receipt: receipt(body.as_deref(), &h)? }),
        202 => {
            return Err(Declined::new(
                DeclineCode::AgreementPending,
                "An agreement payment for this ATR is already settling.",
            ));
        }
        402 => {}
        other => return Err(failed(format!("The agreement URL answered status {other}."))),
    }
    let required = payment_required
        .as_deref()
        .and_then(|header| decode_payment_required(header).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .ok_or_else(|| failed("The agreement URL answered 402 without a readable PAYMENT-REQUIRED."))?;
    let selected = paying(&required, &h, signer.account(), options, None)?;
    let approve = AgreementPayment { url: url.to_owned(), option: selected.option, required: Value::Object(required) };
    Ok(Agreement::ToApprove(ToApprove { approve, bytes: bytes.to_vec(), h }))
}

async fn pay(
    bytes: &[u8],
    h: AtrHash,
    url: &str,
    approved: &AgreementPayment,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Agreement, Declined> {
    if approved.url != url {
        return Err(failed("The approved agreement payment names another agreement URL."));
    }
    let Some(required) = approved.required.as_object() else {
        return Err(Declined::new(DeclineCode::NoPayableOption, Refusal::x402(Reason::InputMalformed).code()));
    };
    let selected = paying(required, &h, signer.account(), options, Some(&approved.option))?;
    let account = signer.account();
    let spent = spend_check(selected.pairing, &selected.chosen, account, options, Role::Agreement)?;
    approved_or_refused(selected.pairing.id(), account, &h, spent.as_ref(), options)?;
    let fallback_key = format!("agreement:{url}#{}", h.to_hex());
    let opening = Opening {
        pairing: selected.pairing,
        chosen: &selected.chosen,
        account,
        h: &h,
        role: Role::Agreement,
        fallback_key: &fallback_key,
    };
    let Some(entry) = entry(opening, spent.as_ref(), options)? else {
        let built = build_agreement(selected.pairing, &selected.chosen, bytes, &h)?;
        let paid = sign_agreement(selected.pairing, &selected.chosen, built, signer, bytes, h, None)
            .await
            .map_err(Failed::declined)?;
        return send(bytes, h, url, &selected, &paid, fetch, options).await;
    };
    let (ledger, paid) = match entry.look(&selected.chosen).await? {
        // Signed before for this agreement: the same bytes are sent again, never a new signature.
        Opened::Resend { ledger, payment } => (ledger, Payment::from_value(&payment)),
        Opened::Resume { ledger, resumed } => resume(ledger, &resumed, selected.pairing, signer).await?,
        Opened::Go(()) => {
            let built = build_agreement(selected.pairing, &selected.chosen, bytes, &h)?;
            match entry.begin(&selected.chosen, ToSign::new(bytes, built.1.as_ref())).await? {
                Opened::Go(ledger) => {
                    let signing = Some((&ledger, Resuming::default()));
                    match sign_agreement(selected.pairing, &selected.chosen, built, signer, bytes, h, signing).await {
                        Err(declined) => return Err(ledger.ended(declined).await),
                        Ok(paid) => {
                            ledger.signed(bytes, &paid.to_value()).await?;
                            (ledger, paid)
                        }
                    }
                }
                Opened::Resend { ledger, payment } => (ledger, Payment::from_value(&payment)),
                Opened::Resume { ledger, resumed } => resume(ledger, &resumed, selected.pairing, signer).await?,
            }
        }
    };
    let sent = send(bytes, h, url, &selected, &paid, fetch, options).await;
    match sent {
        Ok(Agreement::Agreed { receipt }) => {
            let answer = serde_json::to_value(&receipt).unwrap_or(Value::Null);
            ledger
                .journal
                .answered(&ledger.attempt, Answered::Settled(&answer))
                .await
                .map_err(|e| journal_failed(Reason::Unavailable, e))?;
            Ok(Agreement::Agreed { receipt })
        }
        Ok(other) => Ok(other),
        Err(declined) => Err(ledger.ended(declined.into()).await),
    }
}

/// An agreement payment whose wallet may have signed it before (its process died before recording it): the same
/// request, built again from the record, never a new one. A decline leaves the attempt in flight.
async fn resume<'a>(
    ledger: Ledger<'a>,
    resumed: &Resumed,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
) -> Result<(Ledger<'a>, Payment), Declined> {
    let chosen = resumed.choice(pairing, signer.account())?;
    let (built, from) = rebuild(pairing, chosen, resumed)?;
    let (bytes, h) = (&resumed.bytes[..], resumed.h);
    match sign_agreement(pairing, chosen, built, signer, bytes, h, Some((&ledger, from))).await {
        // Its wallet was asked in the life that died: the attempt stays to be asked again.
        Err(failed) => Err(ledger.ended(failed.asked()).await),
        Ok(paid) => {
            ledger.signed(bytes, &paid.to_value()).await?;
            Ok((ledger, paid))
        }
    }
}

/// Sends the signed agreement payment and waits for its receipt, within the challenge's limits.
async fn send(
    bytes: &[u8],
    h: AtrHash,
    url: &str,
    selected: &Selected,
    paid: &Payment,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Agreement, Declined> {
    let cancel = options.cancel.as_ref();
    let (request_s, exchange_s) = selected.limits;
    if is_ended(cancel) {
        // Signed but not sent: the payment is dropped, and nothing has moved.
        return Err(ended());
    }
    let Some(payment) = paid.header() else {
        return Err(Declined::new(DeclineCode::SignedNotBound, "The agreement payment is not plain JSON."));
    };
    let moved = Moved { signed: paid.to_value(), bytes: bytes.to_vec(), h };
    let with_moved = |d: Declined| d.with_moved(Some(moved.clone()));
    let pending = || {
        with_moved(Declined::new(
            DeclineCode::AgreementPending,
            "The agreement payment was sent and is not yet recorded.",
        ))
    };
    let stopped = || {
        with_moved(Declined::new(
            DeclineCode::AgreementPending,
            "The caller's signal ended the exchange after the agreement payment was sent.",
        ))
    };
    let end = Instant::now() + Duration::from_secs(exchange_s);
    loop {
        let remaining = end.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(pending());
        }
        let deadline = remaining.min(Duration::from_secs(request_s));
        let answer = until(cancel, get(fetch, url, Some(&payment), deadline)).await;
        let Some(answer) = answer.filter(|_| !is_ended(cancel)) else { return Err(stopped()) };
        let mut wait = Duration::from_secs(RETRY_DEFAULT_S);
        match answer.map_err(with_moved)? {
            Answer::Answered { status, .. } if (500..=599).contains(&status) => {}
            Answer::Answered { status: 200, body, .. } => {
                return receipt(body.as_deref(), &h).map(|r| Agreement::Agreed { receipt: r }).map_err(with_moved);
            }
            Answer::Answered { status: 202, retry_after, .. } => {
                wait = Duration::from_secs(retry_seconds(retry_after.as_deref()));
            }
            Answer::Answered { status, .. } => {
                return Err(with_moved(failed(format!("The agreement URL answered status {status} to the payment."))));
            }
            Answer::Unanswered => {}
        }
        let nap = wait.min(end.saturating_duration_since(Instant::now()));
        let slept = until(cancel, tokio::time::sleep(nap)).await;
        if slept.is_none() || is_ended(cancel) {
            return Err(stopped());
        }
    }
}

/// The selected agreement payment, built as `confirm` builds a payment: nothing to sign is no agreement payment.
fn build_agreement<'a>(
    pairing: &'a dyn Pairing,
    chosen: &'a Chosen,
    bytes: &'a [u8],
    h: &AtrHash,
) -> Result<BuiltRequest<'a>, Declined> {
    match build_request(pairing, chosen, bytes, h)? {
        (None, _) => Err(Declined::new(DeclineCode::OfferUnreadable, "The agreement payment gave nothing to sign.")),
        built => Ok(built),
    }
}

/// Signs the built agreement payment: the signer is called once (or once per step, each step recorded first where
/// a ledger is kept), and the payment is returned only when its pairing reads H back from it.
async fn sign_agreement(
    pairing: &dyn Pairing,
    chosen: &Chosen,
    built: BuiltRequest<'_>,
    signer: &dyn Signer,
    bytes: &[u8],
    h: AtrHash,
    ledger: Option<(&Ledger<'_>, Resuming)>,
) -> Result<Payment, Failed> {
    let (unsigned, request) = built;
    let (ledger, from) = match ledger {
        Some((l, from)) => (Some(l), from),
        None => (None, Resuming::default()),
    };
    if let (Some(ledger), Some(first)) = (ledger, &request)
        && pairing.moves(first)
    {
        ledger.moving().await?;
    }
    let asks = request.is_some();
    let signed = sign_steps(pairing, chosen, request, unsigned.as_deref(), signer, bytes, h, ledger, from)
        .await
        .map_err(|d| if asks { Failed::Asked(d) } else { Failed::Before(d) })?;
    match signed {
        Some(finished) => Ok(finished.signed),
        None => Err(Declined::new(DeclineCode::OfferUnreadable, "The agreement payment gave nothing to sign.").into()),
    }
}

/// For a payment no queue holds (an agreement payment): where the policy asks for a person, it is paid only with
/// that very approval passed in Rust ([`Options::spend_approved`]); otherwise it declines `policy-refused`,
/// `policy/approval-required`, before anything is signed.
fn approved_or_refused(
    pairing: &str,
    account: &str,
    h: &AtrHash,
    spent: Option<&(Quote, Allowed)>,
    options: &Options,
) -> Result<(), Declined> {
    let Some((quote, allowed)) = spent else { return Ok(()) };
    if !allowed.needs_approval {
        return Ok(());
    }
    let wanted = crate::gate::SpendApproval {
        pairing: pairing.to_owned(),
        account: account.to_owned(),
        quote: quote.clone(),
        purchase: options.purchase.clone(),
        h: *h,
    };
    if options.spend_approved.as_ref() == Some(&wanted) {
        return Ok(());
    }
    Err(PolicyRefusal::new(
        Reason::ApprovalRequired,
        format!(
            "the agreement payment is above the policy's approval threshold ({}) and no approval of it was passed",
            allowed.approval_rule.as_deref().unwrap_or(SOME_RULE)
        ),
    )
    .declined())
}

#[cfg(test)]
mod tests;
