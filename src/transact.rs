//! `transact`: confirm, then the agreement payment where the pairing's payment is no public proof, then the signer,
//! then finish. It stands above the gate because the agreement exchange does.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decline::Declined;
use crate::fetch::Fetch;
use crate::gate::approvals::{ToQueue, queued};
use crate::gate::journal_failed;
use crate::gate::ledger::{Failed, Ledger, Opened, Opening, approval, entry};
use crate::gate::{
    Agreement, AgreementReceipt, Approval, Compared, Document, Options, Resumed, Resuming, Role, SpendApproval,
    ToApprove, ToSign, build_request, compare_staged, keep, rebuild, sign_steps, spend_check, stage,
};
use crate::hash::AtrHash;
use crate::pairing::{Chosen, Pairing, Unsigned};
use crate::payment::Payment;
use crate::refusal::Reason;
use crate::signer::{Signer, SigningRequest};

/// A transaction the gate completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transacted {
    /// The payment to send; `None` when the pairing has nothing for the buyer to sign.
    pub signed: Option<Payment>,
    /// The ATR bytes compared.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// Their hash.
    pub h: AtrHash,
    /// The agreement's receipt, when an agreement payment came first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementReceipt>,
    /// The landed read to keep beside the payment, where the pairing has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Value>,
    /// The journal's attempt that recorded the payment, where a journal is set: tell it the seller's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
}

/// A payment the journal already holds for this purchase: re-send exactly it, never sign a new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resent {
    /// What `transact` returned when it signed it.
    pub resend: Transacted,
}

/// A payment above the policy's approval threshold, handed back for a person's approval: nothing was signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApproveSpend {
    /// Pass it back unchanged with [`Options::spend_approved`] to pay it.
    pub approve_spend: SpendApproval,
}

/// A payment above the policy's approval threshold, queued for a person in the call's approval queue
/// ([`Options::approvals`]): nothing was signed. Once a person approves it (by its id), the purchase's next send pays
/// it (ours).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingApproval {
    /// The queued approval: its id, the quote, H and the terms, the rule that asked, and its expiry.
    pub pending_approval: Box<Approval>,
}

/// What `transact` gives when it does not decline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum TransactOutcome {
    /// The payment (and the agreement receipt, where one was paid).
    Signed(Transacted),
    /// An agreement payment to approve first; nothing was signed.
    ToApprove(ToApprove),
    /// A payment above the policy's approval threshold to approve first; nothing was signed.
    ApproveSpend(ApproveSpend),
    /// The journal holds a payment signed for this purchase that may have moved: re-send exactly its bytes.
    Resend(Resent),
    /// A payment above the policy's approval threshold, waiting for a person in the approval queue; nothing was
    /// signed.
    PendingApproval(PendingApproval),
}

/// confirm, then (for a pairing whose payment is no public proof) the agreement payment, then the signer, then
/// finish: the signer is called at most once per step of the payment, and never before the bytes are compared or
/// after a decline. A build without the `x402` feature has no agreement exchange: there an offer that names an
/// agreement URL declines `agreement-failed`, before anything is signed.
///
/// With a spend policy ([`Options::policy`]) the choice is checked right after it is made, before the link is
/// fetched; above the policy's approval threshold the payment is handed back ([`TransactOutcome::ApproveSpend`]),
/// or, with an approval queue ([`Options::approvals`]) and a purchase ([`Options::purchase`]), its terms are fetched
/// and compared and it waits in the queue for a person ([`TransactOutcome::PendingApproval`]); once a person approved
/// that very payment (same quote and H), the purchase's next call pays it, and the approval is used up. A purchase a
/// person denied declines `policy-refused`, `policy/approval-denied` (ours).
/// With a journal ([`Options::journal`]) the journal is asked before the link is fetched whether the purchase was
/// paid before: a purchase whose payment was signed is answered with those bytes ([`TransactOutcome::Resend`]), the
/// signer not called. Otherwise, once the payment is built, its budgets are reserved and its intent recorded with
/// the ATR bytes and the exact request the wallet will be asked, before the wallet is asked; the payment is recorded
/// before it is returned. A purchase whose earlier attempt died after asking its wallet and before recording the
/// payment (its lease lapsed) is resumed: nothing is built from the new offer, and the wallet is asked the identical
/// request again, so for one purchase the wallet is only ever asked to sign one payment.
pub async fn transact(
    doc: impl Document,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<TransactOutcome, Declined> {
    let account = signer.account();
    let mut staged = stage(doc.get(), pairing, account, options)?;
    // The quote is read from the choice with its document: with a policy or a journal the document is kept now.
    let doc = if options.policy.is_some() || options.journal.is_some() {
        keep(pairing, &mut staged, doc.into_cow())?;
        None
    } else {
        Some(doc.into_cow())
    };
    let spent = spend_check(pairing, &staged.chosen, account, options, Role::Payment)?;
    let queued = queued(options, spent.as_ref());
    if queued.is_none()
        && let Some(wanted) = approval(pairing, &staged, account, options, spent.as_ref())?
    {
        return Ok(TransactOutcome::ApproveSpend(ApproveSpend { approve_spend: wanted }));
    }
    let fallback_key = format!("attempt:{}", staged.chosen.reference);
    let opening = Opening {
        pairing,
        chosen: &staged.chosen,
        account,
        h: &staged.h,
        role: Role::Payment,
        fallback_key: &fallback_key,
    };
    let entry = entry(opening, spent.as_ref(), options)?;
    if let Some(entry) = &entry {
        match entry.look(&staged.chosen).await? {
            Opened::Resend { ledger, payment } => return resend(ledger.attempt(), payment),
            Opened::Resume { ledger, resumed } => {
                return resume(ledger, &resumed, pairing, signer, fetch, options).await;
            }
            Opened::Go(()) => {}
        }
    }
    let link = staged.link.clone();
    let Compared { chosen, bytes, h } = compare_staged(staged, doc, pairing, fetch).await?;
    if let Some(queued) = &queued {
        // The terms are compared before a person is asked about them; nothing is signed while the approval waits.
        let fresh;
        let attempt = match &entry {
            Some(entry) => entry.attempt(),
            None => {
                fresh = options.ids.next_id();
                &fresh
            }
        };
        let payment = ToQueue { pairing: pairing.id(), account, h: &h, link: &link, bytes: &bytes, attempt };
        if let Some(pending) = queued.ask(payment, options).await? {
            return Ok(TransactOutcome::PendingApproval(PendingApproval { pending_approval: Box::new(pending) }));
        }
    }
    // Built once, as confirm builds it: the signer is handed its request, and its answers complete this same build
    // (the choice and the bytes are not changed in between) rather than a rebuild.
    let (unsigned, request) = build_request(pairing, &chosen, &bytes, &h)?;
    let ledger = match &entry {
        None => None,
        Some(entry) => match entry.begin(&chosen, ToSign::new(&bytes, request.as_ref())).await? {
            Opened::Go(ledger) => Some(ledger),
            Opened::Resend { ledger, payment } => return resend(ledger.attempt(), payment),
            Opened::Resume { ledger, resumed } => {
                return resume(ledger, &resumed, pairing, signer, fetch, options).await;
            }
        },
    };
    let payment = ToPay { chosen: &chosen, bytes: &bytes, h, unsigned: unsigned.as_deref(), request };
    let paid = paying(payment, Resuming::default(), pairing, signer, fetch, options, ledger.as_ref()).await;
    let Some(ledger) = ledger else {
        return paid.map_err(Failed::declined).map(|p| match p {
            Paid::Signed(t) => TransactOutcome::Signed(t),
            Paid::ToApprove(t) => TransactOutcome::ToApprove(t),
        });
    };
    match paid {
        Err(declined) => Err(ledger.ended(declined).await),
        Ok(Paid::ToApprove(t)) => {
            ledger.handed_back().await?;
            Ok(TransactOutcome::ToApprove(t))
        }
        Ok(Paid::Signed(done)) => signed(&ledger, done).await,
    }
}

/// The journal's record of the signed payment, then the payment.
async fn signed(ledger: &Ledger<'_>, mut done: Transacted) -> Result<TransactOutcome, Declined> {
    done.attempt = Some(ledger.attempt().to_owned());
    let recorded = serde_json::to_value(&done).map_err(|e| journal_failed(Reason::Unavailable, e))?;
    ledger.signed(&done.bytes, &recorded).await?;
    Ok(TransactOutcome::Signed(done))
}

/// An attempt that asked its wallet and died before recording the payment: its payment built again from the
/// recorded choice and bytes (it must give the recorded request), the agreement paid where it comes first, and the
/// wallet asked the identical request. A decline leaves the attempt in flight, to be resumed again.
async fn resume(
    ledger: Ledger<'_>,
    resumed: &Resumed,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<TransactOutcome, Declined> {
    let chosen = resumed.choice(pairing, signer.account())?;
    let ((unsigned, request), from) = rebuild(pairing, chosen, resumed)?;
    let payment = ToPay { chosen, bytes: &resumed.bytes, h: resumed.h, unsigned: unsigned.as_deref(), request };
    match paying(payment, from, pairing, signer, fetch, options, Some(&ledger)).await {
        // Its wallet was asked in the life that died: whatever declines now, the attempt stays to be asked again.
        Err(failed) => Err(ledger.ended(failed.asked()).await),
        Ok(Paid::ToApprove(t)) => Ok(TransactOutcome::ToApprove(t)),
        Ok(Paid::Signed(done)) => signed(&ledger, done).await,
    }
}

/// The payment the journal holds, as it was returned.
fn resend(attempt: &str, payment: Value) -> Result<TransactOutcome, Declined> {
    match serde_json::from_value::<Transacted>(payment) {
        Ok(resend) => Ok(TransactOutcome::Resend(Resent { resend })),
        Err(e) => Err(journal_failed(
            Reason::StateUnknown,
            format!("the journal's payment of attempt {attempt} cannot be read: {e}"),
        )),
    }
}

/// A built payment, about to be signed.
struct ToPay<'a> {
    chosen: &'a Chosen,
    bytes: &'a [u8],
    h: AtrHash,
    unsigned: Option<&'a dyn Unsigned>,
    request: Option<SigningRequest>,
}

/// The agreement payment where one comes first, then the signer, from where `from` says.
async fn paying(
    payment: ToPay<'_>,
    from: Resuming,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
    ledger: Option<&Ledger<'_>>,
) -> Result<Paid, Failed> {
    let ToPay { chosen, bytes, h, unsigned, request } = payment;
    let mut receipt = None;
    if let Some(url) = &chosen.agreement {
        match agreement(bytes, url, pairing, signer, fetch, options).await? {
            Agreement::Agreed { receipt: r } => receipt = Some(r),
            Agreement::ToApprove(t) => return Ok(Paid::ToApprove(t)),
        }
    }
    if let (Some(ledger), Some(first)) = (ledger, &request)
        && pairing.moves(first)
    {
        ledger.moving().await?;
    }
    let asks = request.is_some();
    let done = sign_steps(pairing, chosen, request, unsigned, signer, bytes, h, ledger, from)
        .await
        .map_err(|d| if asks { Failed::Asked(d) } else { Failed::Before(d) })?;
    let bytes = bytes.to_vec();
    Ok(Paid::Signed(match done {
        None => Transacted { signed: None, bytes, h, agreement: receipt, landed: None, attempt: None },
        Some(f) => {
            Transacted { signed: Some(f.signed), bytes, h: f.h, agreement: receipt, landed: f.landed, attempt: None }
        }
    }))
}

/// What [`paying`] ends with.
enum Paid {
    Signed(Transacted),
    ToApprove(ToApprove),
}

/// The agreement exchange at the URL the offer named, paid by the agreement signer where there is one.
#[cfg(feature = "x402")]
async fn agreement(
    bytes: &[u8],
    url: &str,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Agreement, Declined> {
    let payer: &dyn Signer = match &options.agreement_signer {
        Some(s) => s.as_ref(),
        None => signer,
    };
    crate::agreement::exchange(bytes, url, payer, fetch, options, crate::pairing::namespace(pairing.id())).await
}

/// Without `x402` this build has no agreement exchange (its request is an x402 document): a pairing whose payment is
/// no public proof declines `agreement-failed`, and nothing is signed.
#[cfg(not(feature = "x402"))]
async fn agreement(
    _bytes: &[u8],
    _url: &str,
    _pairing: &dyn Pairing,
    _signer: &dyn Signer,
    _fetch: &dyn Fetch,
    _options: &Options,
) -> Result<Agreement, Declined> {
    Err(Declined::new(crate::decline::DeclineCode::AgreementFailed, NO_EXCHANGE))
}

/// The detail of that decline.
#[cfg(not(feature = "x402"))]
const NO_EXCHANGE: &str = "This build has no x402 agreement exchange (the `x402` feature is off): the agreement \
                           payment this pairing needs first cannot be paid, so nothing was signed.";

/// A build without `x402` (`cargo test --no-default-features --lib` in a copy without the crate's self
/// dev-dependency, whose `cli` feature would turn `x402` on: `.ci/run` does so): a pairing of the caller's own
/// whose payment is no public proof, its offer naming an agreement URL, declines `agreement-failed` after the bytes
/// compare, and the signer is never called.
#[cfg(test)]
#[cfg(not(feature = "x402"))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{Map, Value, json};

    use super::*;
    use crate::decline::DeclineCode;
    use crate::fetch::{Body, FetchError, Request, Response};
    use crate::hash::atr_hash;
    use crate::json::Member;
    use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Offer, Quote, Unsigned};
    use crate::refusal::{Reason, Refusal};
    use crate::signer::{Answer, BoxFuture, SignerError, SigningRequest};

    const ATR: &[u8] = b"abc";
    const LINK: &str = "https://atr.seller.example/abc";

    /// A pairing whose payment is no public proof: its read finds H, the link and an agreement URL.
    #[derive(Debug)]
    struct NoProof;

    impl Pairing for NoProof {
        fn id(&self) -> &'static str {
            "card/seller-reference"
        }
        fn public_proof(&self) -> bool {
            false
        }
        fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
            let agreement = Some("https://api.seller.example/agreement".to_owned());
            Ok(Advertised { h: atr_hash(ATR), link: LINK.to_owned(), offer: Offer::Json(doc), agreement })
        }
        fn choose(&self, _: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
            Ok(Chosen {
                pairing: self.id().into(),
                build_input: Map::new(),
                reference: ctx.reference.into(),
                agreement: None,
            })
        }
        fn build<'a>(&'a self, _: &'a Chosen, _: &'a [u8], _: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
            Err(Refusal::new("card", Reason::NothingToSign))
        }
        fn inputs(&self) -> &'static [InputSpec] {
            &[]
        }
        fn quote(&self, _: &Chosen) -> Result<Quote, Refusal> {
            Err(Refusal::new("card", Reason::NothingToSign))
        }
        fn bound(&self, _: &dyn Member, _: Option<&Value>) -> Result<AtrHash, Refusal> {
            Err(Refusal::new("card", Reason::NothingToSign))
        }
    }

    /// Serves the ATR at the link; counts the GETs.
    #[derive(Default)]
    struct Seller(AtomicUsize);

    impl Fetch for Seller {
        fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            let status = if request.url == LINK { 200 } else { 404 };
            Box::pin(async move { Ok(Response::new(status, Vec::new(), Body::from_bytes(ATR))) })
        }
    }

    /// Counts its calls and signs nothing.
    #[derive(Default)]
    struct Wallet(AtomicUsize);

    impl Signer for Wallet {
        fn account(&self) -> &str {
            "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
        }
        fn sign<'a>(&'a self, _: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Err(SignerError::new("never asked")) })
        }
    }

    #[tokio::test]
    async fn an_agreement_first_declines_without_the_exchange() {
        let (seller, wallet) = (Seller::default(), Wallet::default());
        let declined = transact(json!({}), &NoProof, &wallet, &seller, &Options::new()).await.unwrap_err();
        assert_eq!(declined.code, DeclineCode::AgreementFailed);
        assert_eq!(declined.detail, NO_EXCHANGE);
        assert!(declined.moved.is_none());
        assert_eq!(seller.0.load(Ordering::SeqCst), 1, "the link is fetched once, the agreement URL never");
        assert_eq!(wallet.0.load(Ordering::SeqCst), 0, "nothing is signed");
    }
}
