//! One payment's passage through the buyer's policy and journal, as `transact` and the agreement exchange take it:
//! the policy's verdict on the quote, then the journal's `begin` (the budget reserved and the intent recorded before
//! any signer is asked), then `moving`, `signed`, `ended` and `answered` as the payment goes. Journal failures become
//! declines here, in one place.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::Value;

use super::spend::{
    Allowed, Begun, Claim, Ended, Intent, PolicyRefusal, Role, SpendApproval, SpendJournal, journal_failed,
};
use super::{Options, Staged, ns_code};
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::pairing::{Chosen, Pairing, Quote};
use crate::refusal::Reason;

/// Where the journal stands for one payment.
#[derive(Debug)]
pub(crate) enum Opened<'a> {
    /// No journal: the payment goes exactly as the gate alone takes it.
    Unjournaled,
    /// The intent is recorded and the budget reserved: sign, then tell the ledger.
    Fresh(Ledger<'a>),
    /// A payment for this purchase was signed before: re-send exactly this (the JSON the gate returned then).
    Resend {
        /// The attempt that signed it, to tell the seller's answer.
        ledger: Ledger<'a>,
        /// What the gate returned then.
        payment: Value,
    },
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

    /// After signing: the bytes and the exact payment. A failure here drops the payment: it is never returned
    /// unrecorded.
    pub(crate) async fn signed(&self, bytes: &[u8], payment: &Value) -> Result<(), Declined> {
        self.journal.signed(&self.attempt, bytes, payment).await.map_err(|e| journal_failed(Reason::Unavailable, e))
    }

    /// The attempt declined: `not-paid` (its reservation released) or, with `moved`, `unknown`. The decline is
    /// returned as it was; a journal that cannot record it leaves the attempt in flight (its reservation held, so
    /// the budget errs on the safe side) and says so in the cause.
    pub(crate) async fn ended(&self, declined: Declined) -> Declined {
        let ended = if declined.moved.is_some() { Ended::Moved(&declined) } else { Ended::NotPaid(&declined) };
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

/// The journal's `begin` for one payment: its budgets reserved and its intent recorded before any signer is asked.
/// Without a journal, a policy that keeps budgets refuses (the budgets have nowhere to be kept).
pub(crate) async fn open<'a>(
    opening: Opening<'_>,
    spent: Option<&(Quote, Allowed)>,
    options: &'a Options,
) -> Result<Opened<'a>, Declined> {
    let claims: &[Claim] = spent.map_or(&[], |(_, a)| a.claims.as_slice());
    let Some(journal) = options.journal.as_deref() else {
        if !claims.is_empty() {
            return Err(PolicyRefusal::new(
                Reason::BudgetExhausted,
                "the policy keeps budgets and no journal is set to hold them",
            )
            .declined());
        }
        return Ok(Opened::Unjournaled);
    };
    let Opening { pairing, chosen, account, h, role, fallback_key } = opening;
    let quoted;
    let quote = match spent {
        Some((q, _)) => q,
        None => {
            let read = catch_unwind(AssertUnwindSafe(|| pairing.quote(chosen)))
                .unwrap_or_else(|_| Err(ns_code(pairing, Reason::MemberFailed)));
            quoted = read.map_err(|r| {
                journal_failed(
                    Reason::QuoteUnknown,
                    format!("the pairing {} gives no quote to record: {r}", pairing.id()),
                )
            })?;
            &quoted
        }
    };
    let purchase = options.purchase.as_ref();
    let key = purchase.map_or_else(|| fallback_key.to_owned(), |p| p.key(account));
    let attempt = options.ids.next_id();
    let intent = Intent {
        key: &key,
        attempt: &attempt,
        role,
        purchase,
        pairing: pairing.id(),
        account,
        h,
        chosen,
        quote,
        claims,
        at: options.clock.now(),
    };
    match journal.begin(&intent).await {
        Err(e) => Err(journal_failed(Reason::Unavailable, e)),
        Ok(Begun::Fresh) => Ok(Opened::Fresh(Ledger { journal, attempt })),
        Ok(Begun::Resend { attempt, payment }) => {
            Ok(Opened::Resend { ledger: Ledger { journal, attempt }, payment: *payment })
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
