//! The buyer gate: compare the bytes a seller's link serves with the advertised ATR hash H before anything is
//! signed, build the payment with the hash of those bytes, and return it only when the pairing reads that hash back
//! from the signed payment. The gate knows no rail: it calls a [`Pairing`].

pub(crate) mod approvals;
pub(crate) mod atr;
mod channels;
pub(crate) mod ledger;
pub(crate) mod prepared;
mod spend;
mod types;

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

pub use approvals::{
    APPROVAL_EXPIRY_SECONDS, Approval, ApprovalError, ApprovalQueue, ApprovalState, Asked, Asking, Decision,
};
pub use channels::{Within, open_channel, record_charge, within};
pub use prepared::{Prepared, Resumed, ToSign};
pub(crate) use spend::journal_failed;
pub use spend::{
    Allowed, Answered, Attested, Begun, Claim, Ended, Intent, JournalError, PolicyRefusal, Purchase, Role,
    SellerStanding, Spend, SpendApproval, SpendJournal, SpendPolicy,
};
pub use types::{
    Agreement, AgreementPayment, AgreementReceipt, Checked, Confirmed, Document, Finish, Finished, Next, Options,
    ToApprove,
};

use crate::decline::{DeclineCode, Declined, Moved};
use crate::fetch::Fetch;
use crate::hash::{AtrHash, MAX_ATR_BYTES, atr_hash};
use crate::json::Member;
use crate::link::{is_https_link, link_reason};
use crate::pairing::{
    ChooseContext, Chosen, Completed, Completion, Pairing, Quote, Unsigned, choose_with_inputs, namespace,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Signer, SigningRequest};

/// The most signer calls one payment takes: a funding and then a voucher.
const MAX_STEPS: usize = 2;

fn decline(code: DeclineCode, detail: impl Into<String>) -> Declined {
    Declined::new(code, detail)
}

/// Runs a pairing member; a panic inside it becomes the refusal `failed` gives, so one family's bug can never take
/// the caller's process down with it.
fn guarded<T>(f: impl FnOnce() -> Result<T, Refusal>, failed: impl FnOnce() -> Refusal) -> Result<T, Refusal> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(failed()))
}

fn ns_code(pairing: &dyn Pairing, reason: Reason) -> Refusal {
    Refusal::new(namespace(pairing.id()), reason)
}

pub(crate) fn build_guarded<'a>(
    pairing: &'a dyn Pairing,
    chosen: &'a Chosen,
    bytes: &'a [u8],
    h: &AtrHash,
) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    guarded(|| pairing.build(chosen, bytes, h), || ns_code(pairing, Reason::BuildFailed))
}

pub(crate) fn request_guarded(
    pairing: &dyn Pairing,
    unsigned: &dyn Unsigned,
) -> Result<Option<SigningRequest>, Refusal> {
    guarded(|| unsigned.request(), || ns_code(pairing, Reason::BuildFailed))
}

/// The pairing's own read of H from a payment: a payment it completed, or one presented to `check`.
fn bound(pairing: &dyn Pairing, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
    guarded(|| pairing.bound(presented, landed), || Refusal::bare(Reason::BoundFailed))
}

/// The first request of the payment rebuilt from `chosen` and the bytes: the request a wallet's first answer answers.
/// `None` where nothing is to be signed or the build fails (`finish` then declines on its own).
#[cfg(feature = "mcp")]
pub(crate) fn first_request(pairing: &dyn Pairing, chosen: &Chosen, bytes: &[u8]) -> Option<SigningRequest> {
    let unsigned = build_guarded(pairing, chosen, bytes, &atr_hash(bytes)).ok()?;
    request_guarded(pairing, unsigned.as_ref()).ok().flatten()
}

/// The answers as the reference passes them: one answer bare, several as a list.
fn answers_json(answers: &[Answer]) -> Value {
    match answers {
        [one] => one.as_json().clone(),
        many => Value::Array(many.iter().map(|a| a.as_json().clone()).collect()),
    }
}

/// Reads the offer, chooses the first option the account can pay, fetches the link once and compares SHA-256 of
/// the bytes with the advertised H; only on a match builds the unsigned payment, with the hash it computed. Nothing
/// is signed. For a pairing whose payment is no public proof, `chosen.agreement` names the agreement URL to pay
/// (with [`agree`](crate::agree)) before signing.
///
/// Order: read → choose → spend policy (where [`Options::policy`] set one) → link rule → one fetch → compare →
/// agreement offered → build → request. So an offer with no payable option, or one the policy refuses, is never
/// fetched, and a mismatch is found before anything is built. `confirm` reserves no budget and asks for no
/// approval: it signs nothing; [`transact`](crate::transact) does both.
///
/// `doc` is the seller's document, lent (`&Value`: a pairing that keeps it in the choice keeps a copy) or handed
/// over (`Value`: moved into the choice, nothing copied).
pub async fn confirm(
    doc: impl Document,
    pairing: &dyn Pairing,
    account: &str,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Confirmed, Declined> {
    let mut staged = stage(doc.get(), pairing, account, options)?;
    if options.policy.is_none() {
        return confirm_staged(staged, Some(doc.into_cow()), pairing, fetch).await;
    }
    keep(pairing, &mut staged, doc.into_cow())?;
    spend_check(pairing, &staged.chosen, account, options, Role::Payment)?;
    confirm_staged(staged, None, pairing, fetch).await
}

/// The pairing keeps the seller's document in the choice (guarded: a panic is `offer-unreadable`,
/// `<ns>/member-failed`). `confirm` does it after the compare; with a spend policy or a journal it is done before
/// the fetch, since the quote is read from the choice with its document.
pub(crate) fn keep(pairing: &dyn Pairing, staged: &mut Staged, doc: Cow<'_, Value>) -> Result<(), Declined> {
    let kept = || {
        pairing.keep_document(&mut staged.chosen, doc);
        Ok(())
    };
    guarded(kept, || ns_code(pairing, Reason::MemberFailed))
        .map_err(|r| decline(DeclineCode::OfferUnreadable, r.code()))
}

/// The choice, made before anything is fetched: what [`confirm_staged`] fetches and compares next.
#[derive(Debug)]
pub(crate) struct Staged {
    /// The hash the offer advertises.
    pub(crate) h: AtrHash,
    /// The link the offer names.
    pub(crate) link: String,
    /// The choice.
    pub(crate) chosen: Chosen,
}

/// Read → choose: nothing fetched, nothing signed.
pub(crate) fn stage(doc: &Value, pairing: &dyn Pairing, account: &str, options: &Options) -> Result<Staged, Declined> {
    let read = guarded(|| pairing.read(doc), || ns_code(pairing, Reason::MemberFailed))
        .map_err(|r| decline(DeclineCode::OfferUnreadable, r.code()))?;
    let reference = options.ids.next_id();
    let ctx = ChooseContext { account, inputs: &options.inputs, now: options.clock.now(), reference: &reference, doc };
    let chosen = guarded(|| choose_with_inputs(pairing, &read, &ctx), || ns_code(pairing, Reason::MemberFailed));
    let mut chosen = chosen.map_err(|r| {
        let declined = decline(DeclineCode::NoPayableOption, r.code());
        if r.reason() != Reason::NoPayableOption {
            return declined;
        }
        let offered = read.offer.networks().join(", ");
        declined.with_cause(format!("the account {account} is not paid by the options offered on [{offered}]"))
    })?;
    chosen.agreement = if pairing.public_proof() { None } else { read.agreement };
    Ok(Staged { h: read.h, link: read.link, chosen })
}

/// The buyer's spend policy on the pairing's quote of `chosen`, where the options carry one: `None` without a
/// policy; a refusal (and a pairing that gives no quote, or panics giving it) declines `policy-refused`.
pub(crate) fn spend_check(
    pairing: &dyn Pairing,
    chosen: &Chosen,
    account: &str,
    options: &Options,
    role: Role,
) -> Result<Option<(Quote, Allowed)>, Declined> {
    let Some(policy) = &options.policy else { return Ok(None) };
    let quote = guarded(|| pairing.quote(chosen), || ns_code(pairing, Reason::MemberFailed)).map_err(|r| {
        PolicyRefusal::new(Reason::QuoteUnknown, format!("the pairing {} gives no quote: {r}", pairing.id())).declined()
    })?;
    let spend = Spend {
        pairing: pairing.id(),
        account,
        quote: &quote,
        purchase: options.purchase.as_ref(),
        role,
        now: options.clock.now(),
        seller: options.seller,
        acceptance_required: options.acceptance_required,
    };
    let verdict = catch_unwind(AssertUnwindSafe(|| policy.check(&spend)))
        .unwrap_or_else(|_| Err(PolicyRefusal::new(Reason::QuoteUnknown, "the spend policy panicked")));
    let allowed = verdict.map_err(|r| r.declined())?;
    Ok(Some((quote, allowed)))
}

/// Link rule → one fetch → compare → agreement offered → keep the document (where [`keep`] has not) → build →
/// request, for a choice [`stage`] made.
pub(crate) async fn confirm_staged(
    staged: Staged,
    doc: Option<Cow<'_, Value>>,
    pairing: &dyn Pairing,
    fetch: &dyn Fetch,
) -> Result<Confirmed, Declined> {
    let Compared { chosen, bytes, h } = compare_staged(staged, doc, pairing, fetch).await?;
    let (_, request) = build_request(pairing, &chosen, &bytes, &h)?;
    Ok(Confirmed { chosen, request, bytes, h })
}

/// A choice whose link served the advertised bytes: what [`build_request`] builds from.
pub(crate) struct Compared {
    /// The choice, its document kept.
    pub(crate) chosen: Chosen,
    /// The bytes the link served.
    pub(crate) bytes: Vec<u8>,
    /// Their hash, equal to the advertised H.
    pub(crate) h: AtrHash,
}

/// Link rule → one fetch → compare → agreement offered → keep the document (where [`keep`] has not): nothing built.
pub(crate) async fn compare_staged(
    staged: Staged,
    doc: Option<Cow<'_, Value>>,
    pairing: &dyn Pairing,
    fetch: &dyn Fetch,
) -> Result<Compared, Declined> {
    let mut staged = staged;
    if !is_https_link(&staged.link) {
        let detail = ns_code(pairing, link_reason(&staged.link)).code();
        return Err(decline(DeclineCode::LinkNotHttps, detail));
    }
    let bytes = atr::fetch_atr(fetch, &staged.link).await?;
    let h = atr_hash(&bytes);
    if staged.h != h {
        return Err(decline(
            DeclineCode::HashMismatch,
            "The bytes the link served do not hash to the advertised ATR hash.",
        ));
    }
    if !pairing.public_proof() && staged.chosen.agreement.is_none() {
        return Err(decline(
            DeclineCode::AgreementNotOffered,
            "The pairing's payment carries no public proof and the offer names no agreement URL.",
        ));
    }
    if let Some(doc) = doc {
        keep(pairing, &mut staged, doc)?;
    }
    Ok(Compared { chosen: staged.chosen, bytes, h })
}

/// A build kept, where there is one, beside its first request.
pub(crate) type BuiltRequest<'a> = (Option<Box<dyn Unsigned + 'a>>, Option<SigningRequest>);

/// The unsigned payment built from the compared bytes, and its first request: `(None, None)` where the pairing has
/// nothing for the buyer to sign. A caller that keeps the build (transact) completes it in place of `finish`'s
/// rebuild of the same choice and bytes.
pub(crate) fn build_request<'a>(
    pairing: &'a dyn Pairing,
    chosen: &'a Chosen,
    bytes: &'a [u8],
    h: &AtrHash,
) -> Result<BuiltRequest<'a>, Declined> {
    let built = match build_guarded(pairing, chosen, bytes, h) {
        Ok(unsigned) => request_guarded(pairing, unsigned.as_ref()).map(|request| (Some(unsigned), request)),
        Err(r) if r.is_nothing_to_sign() => Ok((None, None)),
        Err(r) => Err(r),
    };
    built.map_err(|r| decline(DeclineCode::OfferUnreadable, r.code()))
}

/// Rebuilds the payment from `chosen` and the bytes, joins the signer's answers (in order; none where the build is
/// itself the payment), and returns the payment only when the pairing reads the hash of these bytes back from it.
/// The hash is always recomputed from `bytes`: a hash the caller holds is never trusted.
pub fn finish(bytes: &[u8], chosen: &Chosen, answers: &[Answer], pairing: &dyn Pairing) -> Result<Finish, Declined> {
    finishing(bytes, chosen, answers, pairing).map_err(|f| f.declined)
}

/// A decline of [`finish`], with the pairing's refusal it was made from where it was made from one: a caller
/// decides on the refusal, never on the decline's text.
struct Unfinished {
    declined: Declined,
    refusal: Option<Refusal>,
}

impl From<Declined> for Unfinished {
    fn from(declined: Declined) -> Self {
        Self { declined, refusal: None }
    }
}

impl Unfinished {
    fn refused(declined: Declined, refusal: Refusal) -> Self {
        Self { declined, refusal: Some(refusal) }
    }
}

/// [`finish`], its decline beside the refusal it was made from.
fn finishing(bytes: &[u8], chosen: &Chosen, answers: &[Answer], pairing: &dyn Pairing) -> Result<Finish, Unfinished> {
    completing(bytes, chosen, answers, pairing, None)
}

/// The unsigned payment `transact` built at confirm, kept to be completed, and the hash it was built with.
#[derive(Clone, Copy)]
pub(crate) struct Built<'a> {
    /// The build.
    pub(crate) unsigned: &'a dyn Unsigned,
    /// The hash handed to the build.
    pub(crate) h: &'a AtrHash,
}

/// [`finishing`] with the build of the same pairing, choice and bytes made before, where the caller kept one: it is
/// completed in place of a rebuild only when it was built with the hash of these bytes (the build is a pure function
/// of the pairing, the choice, the bytes and that hash, so it is the build a rebuild would make). Every check after
/// the build is the same either way.
fn completing(
    bytes: &[u8],
    chosen: &Chosen,
    answers: &[Answer],
    pairing: &dyn Pairing,
    built: Option<Built<'_>>,
) -> Result<Finish, Unfinished> {
    if bytes.len() > MAX_ATR_BYTES {
        return Err(atr::too_large().into());
    }
    if chosen.pairing != pairing.id() {
        return Err(decline(
            DeclineCode::PairingNotSupported,
            format!("The chosen payment is not for the pairing {}.", pairing.id()),
        )
        .into());
    }
    let h = atr_hash(bytes);
    let rebuilt;
    let unsigned: &dyn Unsigned = match built.filter(|b| *b.h == h) {
        Some(b) => b.unsigned,
        None => {
            rebuilt = build_guarded(pairing, chosen, bytes, &h)
                .map_err(|r| Unfinished::refused(decline(DeclineCode::OfferUnreadable, r.code()), r))?;
            rebuilt.as_ref()
        }
    };
    // Whether the signer moved the money itself matters only on a decline, so it is worked out only there.
    // As the reference reads it: no answer, or one answer that is `null`, is no answer, and nothing moved.
    let answered = match answers {
        [] => false,
        [one] => !one.as_json().is_null(),
        _ => true,
    };
    let keep = |code: DeclineCode, detail: &str, signed: Value| {
        let moves = answered && matches!(request_guarded(pairing, unsigned), Ok(Some(ref r)) if pairing.moves(r));
        decline(code, detail).with_moved(moves.then(|| Moved { signed, bytes: bytes.to_vec(), h }))
    };
    let completion = catch_unwind(AssertUnwindSafe(|| unsigned.complete(answers, chosen)));
    let (payment, landed) = match completion {
        Err(_) => {
            return Err(keep(
                DeclineCode::SignedNotBound,
                "The signer's answer did not complete the payment.",
                answers_json(answers),
            )
            .into());
        }
        Ok(Err(r)) => {
            return Err(Unfinished::refused(keep(DeclineCode::SignedNotBound, &r.code(), answers_json(answers)), r));
        }
        Ok(Ok(Completion::Next(next))) => return Ok(Finish::Next(Next { next, h })),
        Ok(Ok(Completion::Payment { payment, landed })) => (payment, landed),
    };
    let value_of = |p: &dyn Completed| catch_unwind(AssertUnwindSafe(|| p.to_value())).unwrap_or(Value::Null);
    // Read back by the pairing's own bound, member by member from the payment as it was built.
    let inside = bound(pairing, payment.as_ref(), landed.as_ref());
    let on_agreement = !pairing.public_proof() && matches!(&inside, Err(r) if r.is_nothing_to_sign());
    if !on_agreement && inside.as_ref().map_or(true, |read| *read != h) {
        return Err(keep(
            DeclineCode::SignedNotBound,
            "The pairing does not read the hash of the compared bytes from the payment.",
            value_of(payment.as_ref()),
        )
        .into());
    }
    // Written once, after the read-back: the text the caller sends is the payment H was read from.
    let Ok(signed) = catch_unwind(AssertUnwindSafe(|| payment.write())) else {
        return Err(keep(
            DeclineCode::SignedNotBound,
            "The signer's answer did not complete the payment.",
            answers_json(answers),
        )
        .into());
    };
    Ok(Finish::Finished(Finished { signed, h, landed }))
}

/// Whether the pairing reads the hash of `bytes` back from a payment held later. No fetch, no signer.
pub fn check(bytes: &[u8], presented: &Value, pairing: &dyn Pairing) -> Result<Checked, Declined> {
    check_landed(bytes, presented, None, pairing)
}

/// [`check`] with the landed read `finish` or `transact` returned beside the payment. Pass only the read your own
/// reader made for the payment, never a value another party sent; a `landed` member inside the payment is never
/// read.
pub fn check_landed(
    bytes: &[u8],
    presented: &Value,
    landed: Option<&Value>,
    pairing: &dyn Pairing,
) -> Result<Checked, Declined> {
    if bytes.len() > MAX_ATR_BYTES {
        return Err(atr::too_large());
    }
    if landed.is_some_and(|l| !l.is_object() || !presented.is_object()) {
        return Err(decline(
            DeclineCode::SignedNotBound,
            "The landed receipt is not a JSON object beside the payment.",
        ));
    }
    let h = atr_hash(bytes);
    match bound(pairing, presented, landed) {
        Ok(read) if read == h => Ok(Checked { h }),
        _ => Err(decline(
            DeclineCode::SignedNotBound,
            "The pairing does not read the hash of the compared bytes from the payment.",
        )),
    }
}

/// Where [`sign_steps`] starts: at the first request, or (a resumed payment signed in steps) after the answers the
/// journal recorded, at the step it recorded next.
#[derive(Debug, Default)]
pub(crate) struct Resuming {
    /// The answers already given.
    pub(crate) answers: Vec<Answer>,
    /// The step to ask next in place of the first request.
    pub(crate) next: Option<SigningRequest>,
}

/// The signer, once per step in order, then `finish` over its answers, completing `built` (the build `first` came
/// from, where the caller kept it) rather than rebuilding it. `Ok(None)` where the pairing has nothing for the buyer
/// to sign. With a ledger, each step after the first is recorded ([`Ledger::stepped`]) before it is asked; `from`
/// starts a resumed payment where its record stops.
#[allow(clippy::too_many_arguments)] // the payment's parts, each named
pub(crate) async fn sign_steps(
    pairing: &dyn Pairing,
    chosen: &Chosen,
    first: Option<SigningRequest>,
    built: Option<&dyn Unsigned>,
    signer: &dyn Signer,
    bytes: &[u8],
    h: AtrHash,
    ledger: Option<&ledger::Ledger<'_>>,
    from: Resuming,
) -> Result<Option<Finished>, Declined> {
    let built = built.map(|unsigned| Built { unsigned, h: &h });
    let Some(first) = first else {
        return match completing(bytes, chosen, &[], pairing, built) {
            Err(Unfinished { refusal: Some(r), .. }) if r.is_nothing_to_sign() => Ok(None),
            Err(f) => Err(f.declined),
            Ok(Finish::Next(_)) => {
                Err(decline(DeclineCode::SignedNotBound, "The pairing asked for a signature it did not request."))
            }
            Ok(Finish::Finished(f)) => Ok(Some(f)),
        };
    };
    let moves = pairing.moves(&first);
    // What the journal records of each step begins with the first request (as JSON only where there is a journal).
    let prepared = ledger.map(|_| ToSign::new(bytes, Some(&first)).prepared());
    let mut answers: Vec<Answer> = Vec::with_capacity(MAX_STEPS);
    answers.extend(from.answers);
    let mut request = from.next.unwrap_or(first);
    for _ in answers.len()..MAX_STEPS {
        match signer.sign(&request).await {
            Ok(answer) => answers.push(answer),
            Err(_) => {
                let moved = (moves && !answers.is_empty()).then(|| Moved {
                    signed: answers_json(&answers),
                    bytes: bytes.to_vec(),
                    h,
                });
                return Err(decline(DeclineCode::SignerFailed, "The signer did not sign.").with_moved(moved));
            }
        }
        match completing(bytes, chosen, &answers, pairing, built).map_err(|f| f.declined)? {
            Finish::Finished(f) => return Ok(Some(f)),
            Finish::Next(next) => {
                if let (Some(ledger), Some(prepared)) = (ledger, &prepared) {
                    ledger.stepped(&prepared.stepped(&answers, &next.next)).await?;
                }
                request = next.next;
            }
        }
    }
    let all = Value::Array(answers.iter().map(|a| a.as_json().clone()).collect());
    let moved = moves.then(|| Moved { signed: all, bytes: bytes.to_vec(), h });
    Err(decline(DeclineCode::SignedNotBound, "The pairing asked for more signatures than a payment takes.")
        .with_moved(moved))
}

/// The payment a resumed attempt recorded, built again from its recorded choice and bytes: the build, its first
/// request and where the signing resumes. Each must be what the journal recorded, member for member (the first
/// request; the step after the recorded answers), or it is `journal/state-unknown` and nothing is signed.
pub(crate) fn rebuild<'a>(
    pairing: &'a dyn Pairing,
    chosen: &'a Chosen,
    resumed: &'a Resumed,
) -> Result<(BuiltRequest<'a>, Resuming), Declined> {
    let (bytes, h) = (&resumed.bytes[..], &resumed.h);
    let (unsigned, request) = build_request(pairing, chosen, bytes, h).map_err(|_| resumed.changed("choice"))?;
    let recorded = &resumed.prepared;
    if request.as_ref().map(SigningRequest::to_json) != recorded.request {
        return Err(resumed.changed("request"));
    }
    let answers: Vec<Answer> = recorded.answers.iter().cloned().map(Answer::new).collect();
    let from = match (&recorded.next, unsigned.as_deref()) {
        (None, _) if answers.is_empty() => Resuming::default(),
        (Some(next), Some(built)) if !answers.is_empty() => {
            let built = Some(Built { unsigned: built, h });
            match completing(bytes, chosen, &answers, pairing, built) {
                Ok(Finish::Next(n)) if n.next.to_json() == *next => Resuming { answers, next: Some(n.next) },
                _ => return Err(resumed.changed("next step")),
            }
        }
        _ => return Err(resumed.changed("steps")),
    };
    Ok(((unsigned, request), from))
}
