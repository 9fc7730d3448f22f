//! The two seams a buyer's safety layer plugs into, both named in [`Options`]: a [`SpendPolicy`] asked about every
//! payment right after the choice (before the link is fetched, and before any signer is called), and a
//! [`SpendJournal`] told before the signer is asked and after the payment is signed. The gate defines them and calls
//! them; `terms::safety` implements them (a policy file, a SQLite journal). With neither set, every decline and
//! every payment is exactly what it is without them.

use std::fmt;
use std::sync::Arc;

use ruint::aliases::U256;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::decline::{DeclineCode, Declined};
use crate::hash::AtrHash;
use crate::pairing::{Chosen, Quote};
use crate::refusal::{Reason, Refusal};
use crate::signer::BoxFuture;

use super::Options;
use super::prepared::{Prepared, Resumed, ToSign};

/// What a payment buys, as the caller states it: the request the payment is for. The policy's resource rule reads
/// its URL, and the purchase's idempotency key is derived from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Purchase {
    /// The HTTP method, as sent (`GET`, `POST`…).
    pub method: String,
    /// The URL of the resource bought.
    pub url: String,
    /// SHA-256 of the request body, lowercase hex; `None` for a request without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_sha256: Option<String>,
    /// The caller's own idempotency key; `None` to derive one ([`Purchase::key`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Purchase {
    /// A purchase of `url` by `method`, with no body.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self { method: method.into(), url: url.into(), body_sha256: None, key: None }
    }

    /// With the request body the payment is sent beside (only its digest is kept).
    #[must_use]
    pub fn with_body(mut self, body: &[u8]) -> Self {
        self.body_sha256 = Some(hex::encode(Sha256::digest(body)));
        self
    }

    /// With the caller's own idempotency key.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The purchase's idempotency key for a payer: the caller's own, or `p1:` and SHA-256 (hex) over the method
    /// (upper-cased), the URL, the body digest and the payer's account, each length-prefixed so no two purchases
    /// share one. Two requests with the same key are one purchase: it is signed for at most once.
    pub fn key(&self, account: &str) -> String {
        if let Some(key) = &self.key {
            return key.clone();
        }
        let mut hash = Sha256::new();
        let method = self.method.to_ascii_uppercase();
        for part in [method.as_str(), self.url.as_str(), self.body_sha256.as_deref().unwrap_or(""), account] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
        format!("p1:{}", hex::encode(hash.finalize()))
    }
}

/// Which payment of a purchase the policy is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The payment for the resource.
    Payment,
    /// The agreement payment paid first, for a pairing whose payment is no public proof.
    Agreement,
    /// An increase of a channel's signed maximum (a voucher).
    Voucher,
}

impl Role {
    /// The role as written in records, e.g. `agreement`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Payment => "payment",
            Self::Agreement => "agreement",
            Self::Voucher => "voucher",
        }
    }
}

/// What the buyer verified about the seller before paying, as a policy reads it: nothing (unproven), or a
/// verifier's attested record of the seller's calls. It names no protocol: whoever verified the record (the signed
/// agent contract's `terms::contract::standing`, or the caller's own check) turns it into these figures. The gate
/// never verifies it; it passes it to the policy ([`Options::seller`]), and a policy may refuse or lower its limits
/// for a seller it does not count as proven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SellerStanding {
    /// Nothing verified about the seller: no attestation, or one that did not count. The default.
    #[default]
    Unproven,
    /// A verifier's attestation, verified by the caller, with its figures.
    Attested(Attested),
}

/// The figures of a seller's verified attestation. The success rate is kept as parts per million, an integer from 0
/// to [`Attested::WHOLE`]: exact (no float rounding), totally ordered and hashable, so a policy's minimum is met or
/// not with no tolerance, and six decimal places are finer than any figure an attestation writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attested {
    window_seconds: u64,
    calls: u64,
    success_ppm: u32,
}

impl Attested {
    /// A success rate of 1 (every call succeeded), in parts per million.
    pub const WHOLE: u32 = 1_000_000;

    /// The figures of an attestation: the length of the window it covers (seconds), the calls it saw, and the share of
    /// them that succeeded in parts per million; `None` when the share is above [`Attested::WHOLE`].
    pub const fn new(window_seconds: u64, calls: u64, success_ppm: u32) -> Option<Self> {
        if success_ppm > Self::WHOLE {
            return None;
        }
        Some(Self { window_seconds, calls, success_ppm })
    }

    /// The length of the window the attestation covers, in seconds.
    pub const fn window_seconds(&self) -> u64 {
        self.window_seconds
    }

    /// How many calls it saw.
    pub const fn calls(&self) -> u64 {
        self.calls
    }

    /// The share of them that succeeded, in parts per million (0 to [`Attested::WHOLE`]).
    pub const fn success_ppm(&self) -> u32 {
        self.success_ppm
    }
}

/// One payment a policy is asked about.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Spend<'a> {
    /// The pairing's id.
    pub pairing: &'a str,
    /// The payer's account (CAIP-10).
    pub account: &'a str,
    /// What would be paid, as the pairing reads it from the choice.
    pub quote: &'a Quote,
    /// What it buys, where the caller said.
    pub purchase: Option<&'a Purchase>,
    /// Which payment of the purchase it is.
    pub role: Role,
    /// Now, from the options' clock (Unix seconds).
    pub now: u64,
    /// What the buyer verified about the seller ([`Options::seller`]); [`SellerStanding::Unproven`] where nothing was.
    pub seller: SellerStanding,
    /// Whether the seller's discovery document requires signed acceptance of its terms (its `acceptanceRequired`,
    /// [`Options::acceptance_required`]); `None` where the caller read no discovery document.
    pub acceptance_required: Option<bool>,
}

impl<'a> Spend<'a> {
    /// A payment to ask a policy about, to a seller of unproven standing ([`Spend::with_seller`] to say more).
    pub const fn new(
        pairing: &'a str,
        account: &'a str,
        quote: &'a Quote,
        purchase: Option<&'a Purchase>,
        role: Role,
        now: u64,
    ) -> Self {
        Self {
            pairing,
            account,
            quote,
            purchase,
            role,
            now,
            seller: SellerStanding::Unproven,
            acceptance_required: None,
        }
    }

    /// The same payment, to a seller of this standing.
    #[must_use]
    pub const fn with_seller(mut self, seller: SellerStanding) -> Self {
        self.seller = seller;
        self
    }

    /// The same payment, to a seller whose discovery document says this of `acceptanceRequired` (`None`: none read).
    #[must_use]
    pub const fn with_acceptance_required(mut self, required: Option<bool>) -> Self {
        self.acceptance_required = required;
        self
    }
}

/// One budget a payment counts against: the journal reserves `amount` in it atomically, and refuses when what the
/// window already holds and `amount` together pass `limit`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Claim {
    /// The budget's name in the policy (unique in it).
    pub budget: String,
    /// The value the budget is kept per (a payee or an origin), `""` for a budget over all of the asset.
    pub scope: String,
    /// The asset (`<network>/<asset>` as the policy lists it, e.g. `eip155:8453/0x8335…`).
    pub asset: String,
    /// The rolling window, in seconds.
    pub window: u64,
    /// What the window may hold, in atomic units.
    #[serde(with = "crate::pairing::atomic")]
    pub limit: U256,
    /// What this payment adds, in atomic units.
    #[serde(with = "crate::pairing::atomic")]
    pub amount: U256,
}

impl Claim {
    /// A claim of `amount` against a budget.
    pub fn new(
        budget: impl Into<String>,
        scope: impl Into<String>,
        asset: impl Into<String>,
        window: u64,
        limit: U256,
        amount: U256,
    ) -> Self {
        Self { budget: budget.into(), scope: scope.into(), asset: asset.into(), window, limit, amount }
    }
}

/// A policy's yes: the budgets the payment counts against, and whether a person must approve it first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Allowed {
    /// The budgets to reserve the payment in before it is signed.
    pub claims: Vec<Claim>,
    /// Above the policy's approval threshold: handed back for approval, signed by nothing.
    pub needs_approval: bool,
    /// The rule that asked for a person, as the policy writes it ([`Allowed::because`]), kept with a queued approval.
    pub approval_rule: Option<String>,
}

impl Allowed {
    /// Allowed with these claims, no approval needed.
    pub fn new(claims: Vec<Claim>) -> Self {
        Self { claims, needs_approval: false, approval_rule: None }
    }

    /// Allowed once a person approves.
    #[must_use]
    pub fn with_approval(mut self, needs_approval: bool) -> Self {
        self.needs_approval = needs_approval;
        self
    }
}

/// A policy's no: a typed reason, written `policy/<reason>`, and what a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRefusal {
    /// The reason (one of the policy reasons of [`Reason`]).
    pub reason: Reason,
    /// The explanation, for the decline's cause.
    pub why: String,
}

impl PolicyRefusal {
    /// A refusal for `reason`.
    pub fn new(reason: Reason, why: impl Into<String>) -> Self {
        Self { reason, why: why.into() }
    }

    /// The decline: `policy-refused`, the detail `policy/<reason>`, the cause the explanation.
    pub fn declined(&self) -> Declined {
        Declined::new(DeclineCode::PolicyRefused, Refusal::new("policy", self.reason).code()).with_cause(&self.why)
    }
}

/// A buyer's spend policy. It reads the [`Quote`] and nothing else of the payment, and fails closed: a value it
/// cannot place refuses. It is pure and quick (it is asked inside the gate, before the fetch); budgets are checked
/// against the journal, which reserves the claims it returns.
pub trait SpendPolicy: Send + Sync + fmt::Debug {
    /// Allowed (with the budgets it counts against), or refused.
    fn check(&self, spend: &Spend<'_>) -> Result<Allowed, PolicyRefusal>;
}

/// A payment handed back for a person's approval because the policy's threshold is passed; nothing was signed.
/// Passed back unchanged ([`Options::spend_approved`]) it is paid, once; changed, it declines
/// `policy-refused`, `policy/approval-changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpendApproval {
    /// The pairing's id.
    pub pairing: String,
    /// The payer.
    pub account: String,
    /// What would be paid.
    pub quote: Quote,
    /// What it buys, where the caller said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purchase: Option<Purchase>,
    /// The hash the offer advertises (not yet compared with the bytes).
    pub h: AtrHash,
}

/// What a journal holds of a purchase when a payment for it begins.
#[derive(Debug)]
#[non_exhaustive]
pub enum Begun {
    /// Nothing signed for this purchase: the intent is recorded and the claims reserved; sign.
    Fresh,
    /// A payment for this purchase was signed and may have moved (or has settled): the only next step is to
    /// re-send exactly these bytes (`payment`, the JSON [`SpendJournal::signed`] was given). The signer is not
    /// called.
    Resend {
        /// The attempt that signed it.
        attempt: String,
        /// What the gate returned then.
        payment: Box<serde_json::Value>,
    },
    /// An attempt of this purchase recorded what its wallet would be asked and never recorded a signed payment (its
    /// process died between the two), and its lease lapsed: ask exactly that request again, never build anew.
    /// Nothing was written.
    Resume(Box<Resumed>),
    /// A budget has no room for the payment: nothing was recorded or reserved.
    OverBudget(Claim),
    /// The purchase cannot be paid now (a payment for it is in flight, or its state is unknown and nothing can be
    /// re-sent): `journal/<reason>` and why.
    Blocked(Reason, String),
}

/// A journal's failure: the journal could not be read or written. Before the signer is called the payment is not
/// signed; after, the signed payment is dropped, never returned unrecorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JournalError(pub String);

/// The payment about to be signed, as the journal records it before the signer is asked.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Intent<'a> {
    /// The purchase's idempotency key.
    pub key: &'a str,
    /// This attempt's id (unique).
    pub attempt: &'a str,
    /// Which payment of the purchase.
    pub role: Role,
    /// What it buys, where the caller said.
    pub purchase: Option<&'a Purchase>,
    /// The pairing's id.
    pub pairing: &'a str,
    /// The payer.
    pub account: &'a str,
    /// The hash the offer advertises.
    pub h: &'a AtrHash,
    /// The choice.
    pub chosen: &'a Chosen,
    /// What it pays.
    pub quote: &'a Quote,
    /// The budgets to reserve it in.
    pub claims: &'a [Claim],
    /// Now (Unix seconds).
    pub at: u64,
    /// The payment the wallet will be asked to sign, kept with the intent so that a process that dies after asking
    /// can only ask the same again; `None` for an intent recorded before its payment is built (a lapsed lease then
    /// takes it as not paid).
    pub to_sign: Option<ToSign<'a>>,
}

impl<'a> Intent<'a> {
    /// The intent of attempt `attempt` to pay `chosen` (its pairing, as [`Chosen::pairing`] names it) for the
    /// purchase `key`, from `account`, at `at`: the [`Role::Payment`], no purchase named, no budget to reserve.
    pub fn new(
        key: &'a str,
        attempt: &'a str,
        account: &'a str,
        h: &'a AtrHash,
        chosen: &'a Chosen,
        quote: &'a Quote,
        at: u64,
    ) -> Self {
        Self {
            key,
            attempt,
            role: Role::Payment,
            purchase: None,
            pairing: &chosen.pairing,
            account,
            h,
            chosen,
            quote,
            claims: &[],
            at,
            to_sign: None,
        }
    }

    /// The same intent, with the payment its wallet will be asked to sign.
    #[must_use]
    pub fn with_payment(mut self, to_sign: ToSign<'a>) -> Self {
        self.to_sign = Some(to_sign);
        self
    }

    /// The same intent for another payment of the purchase.
    #[must_use]
    pub fn with_role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// The same intent, with what it buys.
    #[must_use]
    pub fn with_purchase(mut self, purchase: &'a Purchase) -> Self {
        self.purchase = Some(purchase);
        self
    }

    /// The same intent, with the budgets to reserve it in.
    #[must_use]
    pub fn with_claims(mut self, claims: &'a [Claim]) -> Self {
        self.claims = claims;
        self
    }
}

/// How an attempt ended inside the gate.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Ended<'a> {
    /// Declined before anything moved: the payment is `not-paid` with no charge, its reservation released.
    NotPaid(&'a Declined),
    /// Declined after money may have moved (the decline's `moved`): the payment is `unknown`.
    Moved(&'a Declined),
    /// Handed back for a person's approval (an agreement payment to approve first): nothing was signed, so the
    /// payment is `not-paid` with no charge and its reservation released.
    HandedBack,
    /// Declined, nothing moved, after its wallet was asked (the wallet refused, or answered what the pairing cannot
    /// read back): the wallet may hold a signature of the recorded request, so the attempt stays in flight with its
    /// request and reservation, and the purchase's next try asks that same request at once (it is resumed; no new
    /// payment is built for the purchase).
    Asked(&'a Declined),
}

/// What the seller answered to a payment that was sent.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Answered<'a> {
    /// Settled: the settlement response or receipt as received. The reservation becomes spend.
    Settled(&'a serde_json::Value),
    /// Settled and answered with the purchase itself (a 2xx other than 202, with its body): settled as
    /// [`Answered::Settled`] is, and the execution `completed`.
    Completed(&'a serde_json::Value),
    /// Accepted and queued (a 202 with a job id): settled as [`Answered::Settled`] is, the execution `queued`
    /// and the retry `query-first` (ask for the job before anything else).
    Queued(&'a serde_json::Value),
    /// Refused with no charge (the seller says so): the payment is `not-paid`, its reservation released.
    NotPaid(&'a serde_json::Value),
    /// No readable answer (a timeout, a reset, a 5xx): the payment stays `unknown`.
    Unknown(&'a str),
    /// The seller says the settlement is pending (broadcast, not yet final), as received with its transaction hash:
    /// the payment stays `unknown` (money may have moved), the answer and its hash are kept, the reservation still
    /// counts, and the retry is `query-first`: the purchase is only ever re-sent. A settled attempt does not take it.
    Pending(&'a serde_json::Value),
}

/// A buyer's journal: told before each signer call and after each signature, so a process killed at any instant
/// loses no payment that left it. A write that returns `Ok` is durable.
pub trait SpendJournal: Send + Sync + fmt::Debug {
    /// In one durable write: reads the purchase's record; where nothing was signed for it, reserves every claim and
    /// records the intent, with the payment to sign ([`Intent::to_sign`]: its ATR bytes and first request).
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>>;

    /// What `begin` would answer for the intent now, writing nothing (its `Fresh`: a begin may record it). The gate
    /// asks before it fetches the link, so a purchase to re-send or resume is answered without a fetch.
    fn look<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>>;

    /// Before the next step of a payment signed in steps is asked: the answers so far and that step's request
    /// (`prepared`), so a process that dies after asking can only ask the same again.
    fn stepped<'a>(&'a self, attempt: &'a str, prepared: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>>;

    /// Before a signer that moves money itself (broadcasts) is called: from here an attempt cut short is
    /// `unknown`. A signer that only signs needs no such write (what it signed never left the process).
    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>>;

    /// After signing, before the payment is returned: the ATR bytes (kept once per hash) and the exact payment that
    /// will be sent, as the JSON of what the gate returns. The payment is now `unknown` until an answer says more.
    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<(), JournalError>>;

    /// The attempt ended inside the gate without a payment.
    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>>;

    /// What the seller answered to the payment the attempt signed.
    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>>;
}

impl Options {
    /// The spend policy every payment is checked against before anything is fetched or signed.
    #[must_use]
    pub fn policy(mut self, policy: Arc<dyn SpendPolicy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The journal every payment is recorded in before and after it is signed.
    #[must_use]
    pub fn journal(mut self, journal: Arc<dyn SpendJournal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// What the payment buys: the policy's resource rule and the idempotency key read it.
    #[must_use]
    pub fn purchase(mut self, purchase: Purchase) -> Self {
        self.purchase = Some(purchase);
        self
    }

    /// What the buyer verified about the seller, passed to the policy with every payment of the purchase (the payment,
    /// its agreement payment, a channel's vouchers). Without it the seller is [`SellerStanding::Unproven`].
    #[must_use]
    pub fn seller(mut self, standing: SellerStanding) -> Self {
        self.seller = standing;
        self
    }

    /// What the seller's discovery document says of signed acceptance (its `acceptanceRequired`, read with
    /// [`discovery::fetch`](crate::discovery::fetch)), passed to the policy with every payment of the purchase. Without
    /// it the policy is told nothing was read (`None`). The gate reads nothing here itself: a listing is the seller's
    /// word, and only the policy's `acceptance_required` rule acts on it.
    #[must_use]
    pub fn acceptance_required(mut self, required: bool) -> Self {
        self.acceptance_required = Some(required);
        self
    }

    /// A payment a person approved, exactly as `transact` handed it back.
    #[must_use]
    pub fn spend_approved(mut self, approval: SpendApproval) -> Self {
        self.spend_approved = Some(approval);
        self
    }
}

/// A journal failure as a decline: `journal-failed`, `journal/<reason>`.
pub(crate) fn journal_failed(reason: Reason, why: impl fmt::Display) -> Declined {
    Declined::new(DeclineCode::JournalFailed, Refusal::new("journal", reason).code()).with_cause(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_purchase_key_is_derived_from_every_part_and_the_callers_key_wins() {
        let p = Purchase::new("get", "https://api.example/a");
        let a = "chain:1:0xA";
        assert_eq!(p.key(a), Purchase::new("GET", "https://api.example/a").key(a));
        assert!(p.key(a).starts_with("p1:") && p.key(a).len() == 67);
        assert_ne!(p.key(a), p.key("chain:1:0xB"));
        assert_ne!(p.key(a), Purchase::new("POST", "https://api.example/a").key(a));
        assert_ne!(p.key(a), Purchase::new("GET", "https://api.example/b").key(a));
        assert_ne!(p.key(a), p.clone().with_body(b"x").key(a));
        assert_ne!(p.clone().with_body(b"x").key(a), p.clone().with_body(b"y").key(a));
        // Length prefixes: moving a character from one part to the next changes the key.
        assert_ne!(Purchase::new("GET", "https://a/").key("b"), Purchase::new("GET", "https://a").key("/b"));
        assert_eq!(p.with_key("mine").key(a), "mine");
    }

    #[test]
    fn a_refusal_declines_policy_refused_with_its_code_and_cause() {
        let d = PolicyRefusal::new(Reason::BudgetExhausted, "the day's budget holds 5").declined();
        assert_eq!(d.code, DeclineCode::PolicyRefused);
        assert_eq!(d.detail, "policy/budget-exhausted");
        assert_eq!(d.cause.as_deref(), Some("the day's budget holds 5"));
        assert!(d.moved.is_none());
    }
}
