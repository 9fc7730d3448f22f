//! One payment's passage through the buyer's policy and journal, as `transact`, the agreement exchange and a
//! channel's voucher take it: the policy's verdict on the quote, then the journal's `look` (before the link is
//! fetched: a payment to re-send or resume is answered without a fetch), then its `begin` once the payment is built
//! (the budget reserved, and the intent recorded with the bytes and the wallet's first request, before any signer is
//! asked), then `moving`, `stepped`, `signed`, `ended` and `answered` as the payment goes. Journal failures become
//! declines here, in one place.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use super::prepared::{Prepared, Resumed, ToSign};
use super::spend::{
    Allowed, Begun, Claim, Ended, Intent, PolicyRefusal, Role, SpendApproval, SpendJournal, journal_failed,
};
use super::{Options, Staged, ns_code};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::pairing::{Chosen, Pairing, Quote};
use crate::refusal::Reason;

/// Where the journal stands for one payment: `Go(())` from a `look` (nothing stands in the way: build the payment,
/// then [`Entry::begin`]), `Go(ledger)` from a `begin` (the intent is recorded and the budget reserved: sign, then
/// tell the ledger).
#[derive(Debug)]
pub(crate) enum Opened<'a, G> {
    /// Go on.
    Go(G),
    /// A payment for this purchase was signed before: re-send exactly this (the JSON the gate returned then).
    Resend {
        /// The attempt that signed it, to tell the seller's answer.
        ledger: Ledger<'a>,
        /// What the gate returned then.
        payment: Value,
    },
    /// An attempt of this purchase recorded what its wallet was asked and died before recording a signed payment:
    /// ask exactly that again (its ledger tells the journal what follows).
    Resume {
        /// The resumed attempt.
        ledger: Ledger<'a>,
        /// What the journal holds of it.
        resumed: Box<Resumed>,
    },
}

/// A decline of a journaled payment, by whether its wallet had been asked.
#[derive(Debug)]
pub(crate) enum Failed {
    /// Before any signer call: the attempt is `not-paid`, its reservation released.
    Before(Declined),
    /// After its wallet was asked: the attempt stays in flight with its request ([`Ended::Asked`]).
    Asked(Declined),
}

impl From<Declined> for Failed {
    fn from(declined: Declined) -> Self {
        Self::Before(declined)
    }
}

impl Failed {
    /// The decline, whenever it came.
    pub(crate) fn declined(self) -> Declined {
        match self {
            Self::Before(d) | Self::Asked(d) => d,
        }
    }

    /// The same decline, counted as after the wallet was asked (a resumed attempt's wallet was asked before).
    pub(crate) fn asked(self) -> Self {
        Self::Asked(self.declined())
    }
}

/// The journal's handle on one attempt.
#[derive(Debug)]
pub(crate) struct Ledger<'a> {
    pub(crate) journal: &'a dyn SpendJournal,
    pub(crate) attempt: String,
}

impl Ledger<'_> {
    /// The attempt's id.
    pub(crate) fn attempt(&self) -> &str {
        &self.attempt
    }

    /// Before a signer that moves money itself is called.
    pub(crate) async fn moving(&self) -> Result<(), Declined> {
        self.journal.moving(&self.attempt).await.map_err(|e| journal_failed(Reason::Unavailable, e))
    }

    /// Before the next step of a payment signed in steps is asked: the answers so far and that step.
    pub(crate) async fn stepped(&self, prepared: &Prepared) -> Result<(), Declined> {
        self.journal.stepped(&self.attempt, prepared).await.map_err(|e| journal_failed(Reason::Unavailable, e))
    }

    /// After signing: the bytes and the exact payment. A failure here drops the payment: it is never returned
    /// unrecorded (and the attempt, its request recorded, is resumed by the purchase's next try).
    pub(crate) async fn signed(&self, bytes: &[u8], payment: &Value) -> Result<(), Declined> {
        self.journal.signed(&self.attempt, bytes, payment).await.map_err(|e| journal_failed(Reason::Unavailable, e))
    }

    /// The attempt declined: `not-paid` (its reservation released), with `moved` `unknown`, or, after its wallet was
    /// asked, still in flight with its request ([`Ended::Asked`]). The decline is returned as it was; a journal that cannot record it leaves the attempt in flight (its reservation held, so
    /// the budget errs on the safe side) and says so in the cause.
    pub(crate) async fn ended(&self, failed: Failed) -> Declined {
        let (declined, asked) = match failed {
            Failed::Before(d) => (d, false),
            Failed::Asked(d) => (d, true),
        };
        let ended = match (&declined.moved, asked) {
            (Some(_), _) => Ended::Moved(&declined),
            (None, true) => Ended::Asked(&declined),
            (None, false) => Ended::NotPaid(&declined),
        };
        match self.journal.ended(&self.attempt, ended).await {
            Ok(()) => declined,
            Err(e) => {
                let cause = match &declined.cause {
                    Some(c) => format!("{c}; the journal could not record the decline: {e}"),
                    None => format!("the journal could not record the decline: {e}"),
                };
                declined.with_cause(cause)
            }
        }
    }

    /// The payment was handed back for approval: nothing signed.
    pub(crate) async fn handed_back(&self) -> Result<(), Declined> {
        self.journal.ended(&self.attempt, Ended::HandedBack).await.map_err(|e| journal_failed(Reason::Unavailable, e))
    }
}

/// The policy's verdict and the approval rule for the payment `staged` chose: `Ok(Some(approval))` when a person
/// must approve it first (nothing is signed), `Ok(None)` to go on. An approval passed back is compared with the
/// payment the gate would make now, its validity window aside (the window is re-read from the clock on every
/// call, and the policy checks it again): changed, it declines `policy/approval-changed`.
pub(crate) fn approval(
    pairing: &dyn Pairing,
    staged: &Staged,
    account: &str,
    options: &Options,
    spent: Option<&(Quote, Allowed)>,
) -> Result<Option<SpendApproval>, Declined> {
    let Some((quote, allowed)) = spent else { return Ok(None) };
    if options.spend_approved.is_none() && !allowed.needs_approval {
        return Ok(None);
    }
    let wanted = SpendApproval {
        pairing: pairing.id().to_owned(),
        account: account.to_owned(),
        quote: quote.clone(),
        purchase: options.purchase.clone(),
        h: staged.h,
    };
    match &options.spend_approved {
        Some(given) if same_approval(given, &wanted) => Ok(None),
        Some(_) => Err(PolicyRefusal::new(
            Reason::ApprovalChanged,
            "the approval passed back is not the payment the gate would make now",
        )
        .declined()),
        None if allowed.needs_approval => Ok(Some(wanted)),
        None => Ok(None),
    }
}

fn same_approval(given: &SpendApproval, wanted: &SpendApproval) -> bool {
    let (g, w) = (&given.quote, &wanted.quote);
    given.pairing == wanted.pairing
        && given.account == wanted.account
        && given.purchase == wanted.purchase
        && given.h == wanted.h
        && (&g.amount, &g.asset, &g.payee, &g.network, &g.scheme, &g.deposit)
            == (&w.amount, &w.asset, &w.payee, &w.network, &w.scheme, &w.deposit)
}

/// What [`open`] records a payment under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opening<'a> {
    pub(crate) pairing: &'a dyn Pairing,
    pub(crate) chosen: &'a Chosen,
    pub(crate) account: &'a str,
    pub(crate) h: &'a AtrHash,
    pub(crate) role: Role,
    /// The purchase's key where no purchase is named (the payment is then its own purchase).
    pub(crate) fallback_key: &'a str,
}

/// What the journal is told of one payment, worked out once: [`Entry::look`] before the link is fetched, then
/// [`Entry::begin`] once the payment is built.
#[derive(Debug)]
pub(crate) struct Entry<'a> {
    journal: &'a dyn SpendJournal,
    pairing: &'static str,
    account: String,
    h: AtrHash,
    role: Role,
    quote: Quote,
    claims: &'a [Claim],
    key: String,
    attempt: String,
    options: &'a Options,
}

/// The journal's entry for one payment: `None` where no journal is set. Without a journal, a policy that keeps
/// budgets refuses (the budgets have nowhere to be kept).
pub(crate) fn entry<'a>(
    opening: Opening<'_>,
    spent: Option<&'a (Quote, Allowed)>,
    options: &'a Options,
) -> Result<Option<Entry<'a>>, Declined> {
    let claims: &[Claim] = spent.map_or(&[], |(_, a)| a.claims.as_slice());
    let Some(journal) = options.journal.as_deref() else {
        if !claims.is_empty() {
            return Err(PolicyRefusal::new(
                Reason::BudgetExhausted,
                "the policy keeps budgets and no journal is set to hold them",
            )
            .declined());
        }
        return Ok(None);
    };
    let Opening { pairing, chosen, account, h, role, fallback_key } = opening;
    let quote = match spent {
        Some((q, _)) => q.clone(),
        None => {
            let read = catch_unwind(AssertUnwindSafe(|| pairing.quote(chosen)))
                .unwrap_or_else(|_| Err(ns_code(pairing, Reason::MemberFailed)));
            read.map_err(|r| {
                journal_failed(
                    Reason::QuoteUnknown,
                    format!("the pairing {} gives no quote to record: {r}", pairing.id()),
                )
            })?
        }
    };
    let key = options.purchase.as_ref().map_or_else(|| fallback_key.to_owned(), |p| p.key(account));
    let attempt = options.ids.next_id();
    let (pairing, account, h) = (pairing.id(), account.to_owned(), *h);
    Ok(Some(Entry { journal, pairing, account, h, role, quote, claims, key, attempt, options }))
}

impl<'a> Entry<'a> {
    /// The attempt a `begin` records.
    pub(crate) fn attempt(&self) -> &str {
        &self.attempt
    }

    fn intent<'i>(&'i self, chosen: &'i Chosen) -> Intent<'i> {
        Intent {
            key: &self.key,
            attempt: &self.attempt,
            role: self.role,
            purchase: self.options.purchase.as_ref(),
            pairing: self.pairing,
            account: &self.account,
            h: &self.h,
            chosen,
            quote: &self.quote,
            claims: self.claims,
            at: self.options.clock.now(),
            to_sign: None,
        }
    }

    /// What `begin` would answer now, recording nothing: `Clear` to fetch and build, or the payment to re-send or
    /// resume; a purchase blocked or over budget declines.
    pub(crate) async fn look(&self, chosen: &Chosen) -> Result<Opened<'a, ()>, Declined> {
        let looked = self.journal.look(&self.intent(chosen)).await;
        self.answer(looked, |_| ())
    }

    /// The journal's `begin`: the budgets reserved and the intent recorded with the payment the wallet will be asked
    /// to sign, before any signer is asked.
    pub(crate) async fn begin(&self, chosen: &Chosen, to_sign: ToSign<'_>) -> Result<Opened<'a, Ledger<'a>>, Declined> {
        let intent = Intent { to_sign: Some(to_sign), ..self.intent(chosen) };
        let begun = self.journal.begin(&intent).await;
        self.answer(begun, |ledger| ledger)
    }

    /// The journal's answer; `go` makes a fresh one's handle (a `look`'s drops it: nothing was recorded).
    fn answer<G>(
        &self,
        begun: Result<Begun, super::JournalError>,
        go: impl FnOnce(Ledger<'a>) -> G,
    ) -> Result<Opened<'a, G>, Declined> {
        let journal = self.journal;
        match begun {
            Err(e) => Err(journal_failed(Reason::Unavailable, e)),
            Ok(Begun::Fresh) => Ok(Opened::Go(go(Ledger { journal, attempt: self.attempt.clone() }))),
            Ok(Begun::Resend { attempt, payment }) => {
                Ok(Opened::Resend { ledger: Ledger { journal, attempt }, payment: *payment })
            }
            Ok(Begun::Resume(resumed)) => {
                Ok(Opened::Resume { ledger: Ledger { journal, attempt: resumed.attempt.clone() }, resumed })
            }
            Ok(Begun::OverBudget(claim)) => Err(PolicyRefusal::new(
                Reason::BudgetExhausted,
                format!(
                    "the budget {} ({}{}) has no room for {} more in its {} s window (limit {})",
                    claim.budget,
                    claim.asset,
                    if claim.scope.is_empty() { String::new() } else { format!(", {}", claim.scope) },
                    claim.amount,
                    claim.window,
                    claim.limit
                ),
            )
            .declined()),
            Ok(Begun::Blocked(reason, why)) => Err(journal_failed(reason, why)),
        }
    }
}
