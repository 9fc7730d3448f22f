//! The approval queue: the seam through which a payment the spend policy sends to a person waits for that person
//! (ours; the reference hands the payment back and keeps no queue). The gate asks the queue ([`ApprovalQueue::ask`])
//! once the offer's terms are fetched and compared; a person decides by id ([`ApprovalQueue::approve`],
//! [`ApprovalQueue::deny`]) outside the agent's reach (the `terms` CLI, a host's own code: no MCP tool does); the
//! purchase's next send is paid when the approval binds exactly the payment the gate would make then.
//!
//! An approval binds the pairing, the payer, the purchase, H, and the quote's amount, asset, payee, network, scheme
//! and deposit (its validity window aside, as [`SpendApproval`](super::SpendApproval) is compared). It is decided
//! once, expires at its `expires_at` whether decided or not, and is used at most once: the send that pays it marks
//! it `used` (with its journal attempt) in the same write that finds it approved, before anything is signed. The
//! journal's record of that payment answers every later send of the purchase (the same bytes re-sent); a purchase
//! whose journal has nothing to re-send needs a new approval.
//!
//! Both journal backends ([`SqliteJournal`](crate::safety::journal::SqliteJournal) and, with `postgres`,
//! `PostgresJournal`) implement [`ApprovalQueue`]; what each write decides is [`step`] and [`decided`], shared.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::spend::{Allowed, JournalError, PolicyRefusal, Purchase, journal_failed};
use super::types::Options;
use crate::decline::Declined;
use crate::hash::AtrHash;
use crate::pairing::Quote;
use crate::refusal::Reason;
use crate::signer::BoxFuture;

/// How long a queued approval waits for a person, and how long an approved one may be paid, by default: one hour.
pub const APPROVAL_EXPIRY_SECONDS: u64 = 3600;

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ApprovalState {
    /// Waiting for a person.
    Pending,
    /// A person approved it: the purchase's next send pays it, once.
    Approved,
    /// A person denied it: every later send of the purchase declines `policy/approval-denied`.
    Denied,
    /// A send paid it (the journal attempt it names): it pays nothing again.
    Used,
    /// The purchase's offer changed (another quote or H) before it was paid: a new approval was queued in its place.
    Superseded,
    /// Its time ran out before it was decided or paid.
    Expired,
}

impl ApprovalState {
    /// The state as records write it, e.g. `pending`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Used => "used",
            Self::Superseded => "superseded",
            Self::Expired => "expired",
        }
    }

    /// The state written `text`; `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Denied, Self::Used, Self::Superseded, Self::Expired]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

impl fmt::Display for ApprovalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One approval of the queue: the payment a person is asked about, as the gate would make it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Approval {
    /// Its id: `ap_` and 20 characters of `[A-Za-z0-9_-]`.
    pub id: String,
    /// The purchase's idempotency key.
    pub key: String,
    /// Where it stands, read at the time it was read (an undecided or unpaid one past `expires_at` is `expired`).
    pub state: ApprovalState,
    /// The pairing's id.
    pub pairing: String,
    /// The payer (CAIP-10).
    pub account: String,
    /// What would be paid: amount (atomic units), asset, payee, network, scheme.
    pub quote: Quote,
    /// What it buys: the resource's method and URL (and body digest, idempotency key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purchase: Option<Purchase>,
    /// The hash of the terms (ATR) the offer advertises, compared with the bytes below before it was queued.
    pub h: AtrHash,
    /// The link the terms were fetched from.
    pub link: String,
    /// The terms' exact bytes.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// The policy rule that asked for a person (e.g. `approval_above."eip155:8453/0x…" = "5000000"`).
    pub rule: String,
    /// The requesting agent, where the host named one (an MCP client's `clientInfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// When it was queued (Unix seconds).
    pub created_at: u64,
    /// When it stops counting (Unix seconds): undecided, or approved and unpaid, it is `expired` from then on.
    pub expires_at: u64,
    /// When a person decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<u64>,
    /// The journal attempt that paid it, once `used`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
}

impl Approval {
    /// Its state at `now`: a pending or approved one whose time ran out is [`ApprovalState::Expired`].
    pub fn state_at(&self, now: u64) -> ApprovalState {
        match self.state {
            ApprovalState::Pending | ApprovalState::Approved if now >= self.expires_at => ApprovalState::Expired,
            other => other,
        }
    }
}

/// What the gate asks the queue about one payment (ours).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Asking<'a> {
    /// The id a new approval gets.
    pub id: &'a str,
    /// The purchase's idempotency key.
    pub key: &'a str,
    /// The pairing's id.
    pub pairing: &'a str,
    /// The payer.
    pub account: &'a str,
    /// What it pays.
    pub quote: &'a Quote,
    /// What it buys.
    pub purchase: Option<&'a Purchase>,
    /// The terms' hash, compared with `bytes`.
    pub h: &'a AtrHash,
    /// The link the terms came from.
    pub link: &'a str,
    /// The terms' bytes.
    pub bytes: &'a [u8],
    /// The policy rule that asked.
    pub rule: &'a str,
    /// The requesting agent, where known.
    pub agent: Option<&'a str>,
    /// The journal attempt that would pay it (marked on an approval it uses).
    pub attempt: &'a str,
    /// Now (Unix seconds).
    pub now: u64,
    /// When a new approval expires.
    pub expires_at: u64,
}

impl Asking<'_> {
    /// What an approval binds, as one digest: every member of the payment but its validity window.
    pub fn binding(&self) -> String {
        let q = self.quote;
        let bound = json!([
            self.pairing,
            self.account,
            self.h.to_hex(),
            self.purchase,
            q.amount.to_string(),
            q.asset,
            q.payee,
            q.network,
            q.scheme,
            q.deposit.map(|d| d.to_string()),
        ]);
        hex::encode(Sha256::digest(bound.to_string().as_bytes()))
    }

    /// The approval a queue writes for this asking: `pending`, undecided.
    pub fn approval(&self) -> Approval {
        Approval {
            id: self.id.to_owned(),
            key: self.key.to_owned(),
            state: ApprovalState::Pending,
            pairing: self.pairing.to_owned(),
            account: self.account.to_owned(),
            quote: self.quote.clone(),
            purchase: self.purchase.cloned(),
            h: *self.h,
            link: self.link.to_owned(),
            bytes: self.bytes.to_vec(),
            rule: self.rule.to_owned(),
            agent: self.agent.map(str::to_owned),
            created_at: self.now,
            expires_at: self.expires_at,
            decided_at: None,
            attempt: None,
        }
    }
}

/// The queue's answer to [`ApprovalQueue::ask`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Asked {
    /// Waiting for a person (queued now, or already queued for this very payment): nothing may be signed.
    Pending(Box<Approval>),
    /// A person approved this very payment; it is now `used` by the asking attempt: pay it.
    Approved(Box<Approval>),
    /// A person denied the purchase: decline.
    Denied(Box<Approval>),
}

/// A person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Pay it (on the purchase's next send).
    Approve,
    /// Never pay it.
    Deny,
}

/// Why a person's decision was not recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// No approval has this id.
    #[error("no approval has the id {0:?}")]
    NotFound(String),
    /// It was decided before, or is no longer waiting (used, superseded): an approval is decided once.
    #[error("the approval {id} is {state}, not pending: an approval is decided once")]
    NotPending {
        /// The approval.
        id: String,
        /// Where it stands.
        state: ApprovalState,
    },
    /// Its time ran out before the decision.
    #[error("the approval {id} expired at {expires_at} (Unix seconds) before it was decided")]
    Expired {
        /// The approval.
        id: String,
        /// When it expired.
        expires_at: u64,
    },
    /// The journal failed: nothing was recorded.
    #[error("{0}")]
    Journal(#[from] JournalError),
}

/// The approval queue, kept in the journal (ours). Object-safe and async. The gate calls [`ApprovalQueue::ask`]; a
/// person's tools call the rest.
pub trait ApprovalQueue: Send + Sync + fmt::Debug {
    /// In one durable write, for a payment the policy sends to a person: this very payment's approval, `used` by
    /// `asking.attempt` where a person approved it; `pending` where it waits (a new one queued where the purchase
    /// has none that binds this payment: the one it had, of another quote or H, becomes `superseded`, an expired one
    /// `expired`); `denied` where a person denied the purchase.
    fn ask<'a>(&'a self, asking: &'a Asking<'a>) -> BoxFuture<'a, Result<Asked, JournalError>>;

    /// The approvals waiting for a person at `now`, oldest first.
    fn pending<'a>(&'a self, now: u64) -> BoxFuture<'a, Result<Vec<Approval>, JournalError>>;

    /// The approval `id`, in whatever state (read at `now`); `None` where there is none.
    fn approval<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, Result<Option<Approval>, JournalError>>;

    /// Records a person's decision on the pending approval `id` at `now`, once.
    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
        now: u64,
    ) -> BoxFuture<'a, Result<Approval, ApprovalError>>;

    /// A person approves `id` at `now`.
    fn approve<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, Result<Approval, ApprovalError>> {
        self.decide(id, Decision::Approve, now)
    }

    /// A person denies `id` at `now`.
    fn deny<'a>(&'a self, id: &'a str, now: u64) -> BoxFuture<'a, Result<Approval, ApprovalError>> {
        self.decide(id, Decision::Deny, now)
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// What a queue does for an [`Asking`], given the purchase's newest approval (its state as stored).
#[derive(Debug)]
pub(crate) enum Step {
    /// Answer this, writing nothing.
    Answer(Asked),
    /// Mark this approved approval `used` by the asking attempt, and answer it approved.
    Take(Box<Approval>),
    /// Queue a new approval; first give the newest one, still live, this state.
    Queue(Option<(String, ApprovalState)>),
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// The shared rule of [`ApprovalQueue::ask`]; `binding` is the newest approval's stored binding.
pub(crate) fn step(newest: Option<(Approval, String)>, asking: &Asking<'_>) -> Step {
    let Some((newest, binding)) = newest else { return Step::Queue(None) };
    let same = binding == asking.binding();
    match (newest.state_at(asking.now), same) {
        (ApprovalState::Denied, _) => Step::Answer(Asked::Denied(Box::new(newest))),
        // The same attempt asking again (its first write's commit went unanswered): the approval it took.
        (ApprovalState::Used, _) if newest.attempt.as_deref() == Some(asking.attempt) => {
            Step::Answer(Asked::Approved(Box::new(newest)))
        }
        (ApprovalState::Pending, true) => Step::Answer(Asked::Pending(Box::new(newest))),
        (ApprovalState::Approved, true) => Step::Take(Box::new(newest)),
        (ApprovalState::Pending | ApprovalState::Approved, false) => {
            Step::Queue(Some((newest.id, ApprovalState::Superseded)))
        }
        (ApprovalState::Expired, _) if newest.state != ApprovalState::Expired => {
            Step::Queue(Some((newest.id, ApprovalState::Expired)))
        }
        _ => Step::Queue(None),
    }
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// The shared rule of [`ApprovalQueue::decide`]: the state the approval takes, or why it may not.
pub(crate) fn decided(approval: &Approval, decision: Decision, now: u64) -> Result<ApprovalState, ApprovalError> {
    match approval.state_at(now) {
        ApprovalState::Pending => Ok(match decision {
            Decision::Approve => ApprovalState::Approved,
            Decision::Deny => ApprovalState::Denied,
        }),
        ApprovalState::Expired if approval.decided_at.is_none() => {
            Err(ApprovalError::Expired { id: approval.id.clone(), expires_at: approval.expires_at })
        }
        state => Err(ApprovalError::NotPending { id: approval.id.clone(), state }),
    }
}

/// The answer to an `ask` that took the approved `approval` for `attempt` (the queue wrote it `used`).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn taken(approval: Box<Approval>, attempt: &str) -> Asked {
    let mut taken = approval;
    taken.state = ApprovalState::Used;
    taken.attempt = Some(attempt.to_owned());
    Asked::Approved(taken)
}

/// The approval as a decision at `now` left it (the queue wrote it `state`).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn decided_at(mut approval: Approval, state: ApprovalState, now: u64) -> Approval {
    approval.state = state;
    approval.decided_at = Some(now);
    approval
}

/// An approval's id from a fresh payment id: `ap_` and its first 20 characters.
pub(crate) fn approval_id(fresh: &str) -> String {
    format!("ap_{}", fresh.chars().take(20).collect::<String>())
}

/// The queue a payment waits in, where it goes to one: the policy asks for a person, no approval was passed in
/// Rust ([`Options::spend_approved`]), and the call names a queue and its purchase.
#[derive(Debug)]
pub(crate) struct Queued<'a> {
    queue: &'a dyn ApprovalQueue,
    purchase: &'a Purchase,
    quote: &'a Quote,
    rule: &'a str,
}

/// The rule a custom policy that names none is said to have asked with.
pub(crate) const SOME_RULE: &str = "the spend policy's approval rule";

/// The payment's queue, where it goes to one (see [`Queued`]).
pub(crate) fn queued<'a>(options: &'a Options, spent: Option<&'a (Quote, Allowed)>) -> Option<Queued<'a>> {
    let (quote, allowed) = spent?;
    if !allowed.needs_approval || options.spend_approved.is_some() {
        return None;
    }
    Some(Queued {
        queue: options.approvals.as_deref()?,
        purchase: options.purchase.as_ref()?,
        quote,
        rule: allowed.approval_rule.as_deref().unwrap_or(SOME_RULE),
    })
}

/// The payment as the gate would make it now, once its terms are fetched and compared.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToQueue<'a> {
    pub(crate) pairing: &'a str,
    pub(crate) account: &'a str,
    pub(crate) h: &'a AtrHash,
    pub(crate) link: &'a str,
    pub(crate) bytes: &'a [u8],
    /// The journal attempt that would pay it.
    pub(crate) attempt: &'a str,
}

impl Queued<'_> {
    /// Asks the queue: `Ok(None)` to pay (a person approved this very payment, now used by `payment.attempt`),
    /// `Ok(Some(approval))` while it waits; a denied purchase declines `policy/approval-denied`.
    pub(crate) async fn ask(&self, payment: ToQueue<'_>, options: &Options) -> Result<Option<Approval>, Declined> {
        let now = options.clock.now();
        let id = approval_id(&options.ids.next_id());
        let key = self.purchase.key(payment.account);
        let asking = Asking {
            id: &id,
            key: &key,
            pairing: payment.pairing,
            account: payment.account,
            quote: self.quote,
            purchase: Some(self.purchase),
            h: payment.h,
            link: payment.link,
            bytes: payment.bytes,
            rule: self.rule,
            agent: options.agent.as_deref(),
            attempt: payment.attempt,
            now,
            expires_at: now.saturating_add(options.approval_expiry),
        };
        match self.queue.ask(&asking).await.map_err(|e| journal_failed(Reason::Unavailable, e))? {
            Asked::Approved(_) => Ok(None),
            Asked::Pending(approval) => Ok(Some(*approval)),
            Asked::Denied(approval) => Err(PolicyRefusal::new(
                Reason::ApprovalDenied,
                format!(
                    "a person denied the approval {} of this purchase; nothing was signed (a new purchase, with \
                     another idempotency key, asks again)",
                    approval.id
                ),
            )
            .declined()),
        }
    }
}

impl Allowed {
    /// Allowed once a person approves, because of `rule` (as the policy writes it).
    #[must_use]
    pub fn because(mut self, rule: impl Into<String>) -> Self {
        self.needs_approval = true;
        self.approval_rule = Some(rule.into());
        self
    }
}

impl Options {
    /// The queue a payment above the policy's approval threshold waits in for a person, where the call names its
    /// purchase ([`Options::purchase`]): the purchase's next send pays it once a person approved it. Without it (or
    /// without a purchase) such a payment is handed back ([`TransactOutcome::ApproveSpend`](crate::TransactOutcome)).
    #[must_use]
    pub fn approvals(mut self, queue: Arc<dyn ApprovalQueue>) -> Self {
        self.approvals = Some(queue);
        self
    }

    /// The requesting agent's identity, kept with any approval it queues (a host names it; the MCP server takes the
    /// client's `clientInfo`).
    #[must_use]
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// How long a queued approval waits, and an approved one may be paid, in seconds (default
    /// [`APPROVAL_EXPIRY_SECONDS`]).
    #[must_use]
    pub fn approval_expiry(mut self, seconds: u64) -> Self {
        self.approval_expiry = seconds;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_is_written_as_serde_writes_it_and_read_back() {
        for s in [
            ApprovalState::Pending,
            ApprovalState::Approved,
            ApprovalState::Denied,
            ApprovalState::Used,
            ApprovalState::Superseded,
            ApprovalState::Expired,
        ] {
            assert_eq!(serde_json::to_value(s).ok(), Some(serde_json::Value::String(s.as_str().into())));
            assert_eq!(ApprovalState::parse(s.as_str()), Some(s));
        }
        assert_eq!(ApprovalState::parse("Pending"), None);
    }

    #[test]
    fn an_id_is_prefixed_and_cut() {
        assert_eq!(approval_id("abcdefghijklmnopqrstuvwxyz"), "ap_abcdefghijklmnopqrst");
        assert_eq!(approval_id("-x"), "ap_-x");
    }
}
