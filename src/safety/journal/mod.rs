//! The buyer's journal: one record per payment attempt, written before the signer is asked (the intent and the
//! budget reservations), after signing (the exact payment that will be sent, and the ATR bytes it is for) and after
//! each answer, so a process killed at any instant loses no payment that left it.
//!
//! A record keeps four states apart ([`PaymentState`], [`ExecutionState`], [`ResponseState`], [`RetryState`]) and
//! the journal's own progress through the attempt ([`Stage`]). [`Store`] reads records and budgets back; it is
//! object-safe and async. Two backends implement both it and [`SpendJournal`](super::SpendJournal): the embedded
//! [`SqliteJournal`] (feature `sqlite`) and, on a server many machines share,
//! [`PostgresJournal`](crate::safety::postgres) (feature `postgres`). What they decide is one module's code; a
//! [`JournalTarget`] (a configuration's `journal = "…"`) opens either as a [`Journal`].
//!
//! # What the journal does at each write
//!
//! - `begin` looks at the newest attempt of the purchase's key and role. A signed payment whose state is `unknown`
//!   or `settled` is handed back to be re-sent, byte for byte ([`Begun::Resend`](super::Begun::Resend)). An
//!   attempt still signing blocks (`journal/in-flight`) until its lease ([`JournalConfig::lease_seconds`]) lapses;
//!   then, since it recorded what its wallet was asked, it is resumed ([`Begun::Resume`](super::Begun::Resume)):
//!   the same request is asked again, and nothing new is built (an intent recorded without its payment, as a caller
//!   of `begin` may still write one, is `not-paid` then and its reservations are released). An attempt that was
//!   handing the payment to a signer that moves money itself, or that ended after money may have moved with nothing
//!   to re-send, blocks (`journal/state-unknown`) until a person looks. Otherwise every claim is checked against its
//!   budget window and, where all fit, the attempt (with its choice, the ATR bytes once per hash and the wallet's
//!   first request) and one reservation per claim are written. `look` answers what `begin` would, writing nothing.
//! - `stepped` records, before the next step of a payment signed in steps is asked, the answers so far and that
//!   step's request.
//! - `signed` stores the ATR bytes once per hash (their SHA-256 must be the attempt's H), the payment as the gate
//!   returns it, and marks the payment `unknown`. An attempt that is no longer in flight is refused, so a late
//!   process never returns a second signed payment.
//! - `ended` and `answered` move the states, and release, keep or commit the reservations.
//!
//! A budget window is `(at - window, at]` for the claim's `at`; reservations dated after `at` (another process's
//! clock ahead of this one) count too, which only ever refuses more. Amounts are summed as 256-bit integers; a sum
//! that would pass 2^256 - 1 is over budget.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod approvals;
#[cfg(all(feature = "fuzzing", any(feature = "sqlite", feature = "postgres")))]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod row;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod rules;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod buckets;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod history;

mod target;

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteJournal;
pub use target::{Journal, JournalTarget};

use std::fmt;
use std::time::Duration;

use ruint::aliases::U256;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gate::{JournalError, Role};
use crate::hash::AtrHash;
use crate::signer::BoxFuture;

/// Writes a state enum once: the variants, their kebab-case names (serde's and [`as_str`]'s, one table) and the
/// reading back of a stored name.
macro_rules! states {
    ($(#[doc = $doc:literal])+ $name:ident { $($(#[doc = $vdoc:literal])+ $variant:ident => $text:literal,)+ }) => {
        $(#[doc = $doc])+
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $($(#[doc = $vdoc])+ $variant,)+
        }

        impl $name {
            /// The state as records write it, e.g. `not-paid`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }

            /// The state written `text`, as [`Self::as_str`] writes it; `None` for any other text.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Every state, in the order they are written.
            #[cfg(test)]
            const ALL: &'static [Self] = &[$(Self::$variant,)+];
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

states! {
    /// Whether money moved: what the buyer knows of the payment.
    PaymentState {
        /// Nothing left the wallet, or the seller said there was no charge: a new signature is allowed.
        NotPaid => "not-paid",
        /// A payment was signed (or money may have moved) and no answer says what became of it: only the same signed
        /// bytes may be sent again.
        Unknown => "unknown",
        /// The seller settled it (a settlement response or a receipt).
        Settled => "settled",
    }
}

states! {
    /// What became of the work the payment buys, as far as the buyer knows: a receipt proves a payment, not the work.
    ExecutionState {
        /// Not started, or not known to have started.
        NotStarted => "not-started",
        /// Accepted and queued (a job id was given).
        Queued => "queued",
        /// Running.
        Running => "running",
        /// Failed.
        Failed => "failed",
        /// Done: the result was received.
        Completed => "completed",
    }
}

states! {
    /// Whether the seller's answer to a sent payment reached the buyer.
    ResponseState {
        /// An answer was read.
        Received => "received",
        /// No readable answer came (a timeout, a reset, a 5xx).
        Lost => "lost",
    }
}

states! {
    /// What the buyer may do next for the purchase.
    RetryState {
        /// Sign a new payment: nothing was paid.
        Safe => "safe",
        /// Ask the seller (for the job, the receipt) before anything else: money may have moved.
        QueryFirst => "query-first",
        /// Never sign again for this purchase; only the same signed bytes may be re-sent.
        Forbidden => "forbidden",
    }
}

states! {
    /// How far the journal has followed the attempt.
    Stage {
        /// The intent is recorded and the claims reserved; nothing signed yet (in flight).
        Intent => "intent",
        /// The payment is signed and recorded, about to be (or already) sent.
        Signed => "signed",
        /// It ended inside the gate: declined, with or without money moved.
        Ended => "ended",
        /// The seller's answer (or its absence) is recorded.
        Answered => "answered",
        /// Its lease lapsed with nothing signed: another attempt may have begun, and it may sign nothing now.
        Lapsed => "lapsed",
    }
}

states! {
    /// Whether a reservation counts against its budget.
    ReservationState {
        /// Held for a payment whose outcome is not known yet: it counts.
        Reserved => "reserved",
        /// Spent: the payment settled. It counts.
        Committed => "committed",
        /// Given back: nothing was paid. It does not count.
        Released => "released",
    }
}

/// One budget reservation of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reservation {
    /// The budget's name in the policy.
    pub budget: String,
    /// The value the budget is kept per, `""` for all of the asset.
    pub scope: String,
    /// The asset, as the policy lists it.
    pub asset: String,
    /// The budget's window when the reservation was made, in seconds.
    pub window: u64,
    /// What it holds, in atomic units.
    #[serde(with = "crate::pairing::atomic")]
    pub amount: U256,
    /// When it was made (the intent's time, Unix seconds).
    pub at: u64,
    /// Whether it counts.
    pub state: ReservationState,
}

/// Everything the journal holds of one attempt: every column of its row, JSON columns as JSON, and its
/// reservations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// The attempt's id.
    pub attempt: String,
    /// The purchase's idempotency key.
    pub key: String,
    /// Which payment of the purchase.
    pub role: Role,
    /// The pairing's id.
    pub pairing: String,
    /// The payer (CAIP-10).
    pub account: String,
    /// The hash the offer advertised.
    pub h: AtrHash,
    /// The payee, as the quote names it.
    pub payee: String,
    /// What the payment buys, where the caller said ([`Purchase`](super::Purchase)).
    pub purchase: Option<Value>,
    /// The choice ([`Chosen`](crate::Chosen)).
    pub chosen: Value,
    /// What it pays ([`Quote`](crate::Quote)).
    pub quote: Value,
    /// How far the journal has followed it.
    pub stage: Stage,
    /// Whether money moved.
    pub payment_state: PaymentState,
    /// What became of the work.
    pub execution: ExecutionState,
    /// Whether the seller's answer arrived; `None` before anything was sent.
    pub response: Option<ResponseState>,
    /// What may be done next.
    pub retry: RetryState,
    /// Whether the signer was one that moves money itself (told before it was called).
    pub moving: bool,
    /// The signed payment, exactly as the gate returned it; `None` before signing.
    pub payment: Option<Value>,
    /// The seller's answer (settlement response or receipt, or its refusal), as received.
    pub answer: Option<Value>,
    /// The gate's decline, with what moved where money moved.
    pub decline: Option<Value>,
    /// What the wallet was asked to sign, recorded before it was asked ([`Prepared`](crate::safety::Prepared) as
    /// JSON): the first request, and for a payment signed in steps the answers so far and the next step. `None` for
    /// an intent recorded before its payment was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepared: Option<Value>,
    /// The last diagnostic the journal kept (a lapsed lease, why no answer came).
    pub cause: Option<String>,
    /// When the intent was recorded (the intent's time, Unix seconds).
    pub created_at: u64,
    /// When the record last changed (Unix seconds; the system clock for writes after the intent).
    pub updated_at: u64,
    /// Its budget reservations, in the order they were made.
    pub reservations: Vec<Reservation>,
}

/// Which records [`Store::history`] returns: every bound is optional, and all that are given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HistoryFilter {
    /// Begun at or after this time (Unix seconds).
    pub since: Option<u64>,
    /// Begun strictly before this time (Unix seconds).
    pub until: Option<u64>,
    /// To this payee, as the quote names it.
    pub payee: Option<String>,
    /// In this payment state.
    pub state: Option<PaymentState>,
    /// At most this many records.
    pub limit: Option<u32>,
}

impl HistoryFilter {
    /// Every record.
    pub fn new() -> Self {
        Self::default()
    }

    /// Those begun at or after `since`.
    #[must_use]
    pub fn since(mut self, since: u64) -> Self {
        self.since = Some(since);
        self
    }

    /// Those begun strictly before `until`.
    #[must_use]
    pub fn until(mut self, until: u64) -> Self {
        self.until = Some(until);
        self
    }

    /// Those to `payee`.
    #[must_use]
    pub fn payee(mut self, payee: impl Into<String>) -> Self {
        self.payee = Some(payee.into());
        self
    }

    /// Those in payment state `state`.
    #[must_use]
    pub fn state(mut self, state: PaymentState) -> Self {
        self.state = Some(state);
        self
    }

    /// At most `limit` of them (the newest).
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// What a budget window holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BudgetUse {
    /// Spent: payments that settled inside the window.
    #[serde(with = "crate::pairing::atomic")]
    pub spent: U256,
    /// Reserved for payments whose outcome is not known yet.
    #[serde(with = "crate::pairing::atomic")]
    pub reserved: U256,
    /// What is left of the limit after both (zero when they pass it).
    #[serde(with = "crate::pairing::atomic")]
    pub remaining: U256,
}

impl BudgetUse {
    /// The use of a window of `limit` holding `spent` and `reserved`; a total past 2^256 - 1 leaves nothing.
    pub fn new(spent: U256, reserved: U256, limit: U256) -> Self {
        let remaining = spent.checked_add(reserved).map_or(U256::ZERO, |used| limit.saturating_sub(used));
        Self { spent, reserved, remaining }
    }
}

/// A budget whose running totals disagree with its reservations, as `terms journal check` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BudgetFault {
    /// The budget's name.
    pub budget: String,
    /// The value it is kept per (`""` for all of the asset).
    pub scope: String,
    /// The asset.
    pub asset: String,
    /// How many of its bucket rows disagree with its reservations (missing or extra rows included).
    pub buckets: u64,
}

/// How a journal runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalConfig {
    /// How long an attempt that began and signed nothing blocks another attempt for the same purchase, in seconds.
    /// Past it the attempt is taken as dead (`not-paid`), and a late `signed` for it is refused. Default 300.
    pub lease_seconds: u64,
    /// How long a write waits for another process's lock before it fails (nothing recorded). Default 5 s. On
    /// PostgreSQL it is also the server's `lock_timeout`, how long a connection may take to open, and how long a
    /// write or read keeps trying while its connection fails.
    pub busy_timeout: Duration,
    /// The most the journal file may grow to, in bytes; a write that needs more fails (nothing recorded). `None`
    /// (the default) for no bound but the disk's. SQLite only: a PostgreSQL server keeps its own bounds.
    pub max_bytes: Option<u64>,
    /// Refuse a new purchase whose payment's nonce would be one the same payer already used (ours): through a
    /// pairing whose authorization's nonce is H (EIP-3009's `x402/exact/eip155/eip3009`, MPP's
    /// `mpp/charge/evm/authorization`), another purchase of the payer under the same H, in any state but
    /// `not-paid`, blocks it with `journal/nonce-used` before anything is signed: a seller serving one static ATR
    /// could never settle it. Default off (a test seller may serve one ATR to many purchases); the `terms` CLI and
    /// `terms-mcp` turn it on.
    pub one_nonce_per_payer: bool,
}

impl Default for JournalConfig {
    fn default() -> Self {
        Self { lease_seconds: 300, busy_timeout: Duration::from_secs(5), max_bytes: None, one_nonce_per_payer: false }
    }
}

/// Reading a journal back: a purchase's record, its attempts, the history, a budget's use, the ATR bytes of a hash.
/// Object-safe and async, so a shared database can stand behind the same calls as the embedded one.
pub trait Store: Send + Sync + fmt::Debug {
    /// The newest attempt of the purchase `key` for its payment ([`Role::Payment`]); `None` if there is none.
    fn record<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, JournalError>>;

    /// Every attempt of the purchase `key`, every role, oldest first.
    fn attempts<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Vec<Record>, JournalError>>;

    /// The attempts the filter lets through, newest first.
    fn history<'a>(&'a self, filter: &'a HistoryFilter) -> BoxFuture<'a, Result<Vec<Record>, JournalError>>;

    /// What the window `(now - window, now]` of the budget `budget`, kept per `scope`, of `asset` holds against
    /// `limit` (reservations dated after `now` count too).
    fn budget<'a>(
        &'a self,
        budget: &'a str,
        scope: &'a str,
        asset: &'a str,
        window: u64,
        limit: U256,
        now: u64,
    ) -> BoxFuture<'a, Result<BudgetUse, JournalError>>;

    /// The ATR bytes kept for the hash `h`; `None` if no payment was signed for it.
    fn atr<'a>(&'a self, h: &'a AtrHash) -> BoxFuture<'a, Result<Option<Vec<u8>>, JournalError>>;

    /// Compares every budget's running totals with the reservations they sum (`terms journal check`): each budget
    /// that disagrees is returned and marked, and refused from then on (no reservation from it, no report of it)
    /// until a check with `repair` recomputes its totals from the rows and clears every mark. Reads every
    /// reservation: its cost grows with the journal.
    fn check_budgets(&self, repair: bool) -> BoxFuture<'_, Result<Vec<BudgetFault>, JournalError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<T>(all: &[T], text: impl Fn(T) -> &'static str, parse: impl Fn(&str) -> Option<T>)
    where
        T: Serialize + Copy + PartialEq + fmt::Debug,
    {
        for &state in all {
            assert_eq!(serde_json::to_value(state).ok(), Some(Value::String(text(state).into())));
            assert_eq!(parse(text(state)), Some(state));
        }
        assert!(parse("Not-Paid").is_none() && parse("").is_none());
    }

    #[test]
    fn every_state_is_written_in_kebab_case_by_serde_and_as_str_alike_and_read_back() {
        names(PaymentState::ALL, PaymentState::as_str, PaymentState::parse);
        names(ExecutionState::ALL, ExecutionState::as_str, ExecutionState::parse);
        names(ResponseState::ALL, ResponseState::as_str, ResponseState::parse);
        names(RetryState::ALL, RetryState::as_str, RetryState::parse);
        names(Stage::ALL, Stage::as_str, Stage::parse);
        names(ReservationState::ALL, ReservationState::as_str, ReservationState::parse);
        assert_eq!(PaymentState::ALL.len() + ExecutionState::ALL.len() + ResponseState::ALL.len(), 10);
        assert_eq!(RetryState::QueryFirst.to_string(), "query-first");
    }

    #[test]
    fn a_budget_use_leaves_nothing_when_spend_passes_the_limit_or_overflows() {
        let u = |n: u64| U256::from(n);
        assert_eq!(BudgetUse::new(u(2), u(3), u(10)).remaining, u(5));
        assert_eq!(BudgetUse::new(u(8), u(3), u(10)).remaining, U256::ZERO);
        assert_eq!(BudgetUse::new(U256::MAX, u(1), U256::MAX).remaining, U256::ZERO);
        let text = serde_json::to_string(&BudgetUse::new(u(1), u(2), u(4))).unwrap_or_default();
        assert_eq!(text, r#"{"spent":"1","reserved":"2","remaining":"1"}"#);
    }

    #[test]
    fn a_history_filter_is_built_bound_by_bound() {
        let f = HistoryFilter::new().since(1).until(9).payee("0xP").state(PaymentState::Settled).limit(3);
        assert_eq!((f.since, f.until, f.limit), (Some(1), Some(9), Some(3)));
        assert_eq!((f.payee.as_deref(), f.state), (Some("0xP"), Some(PaymentState::Settled)));
        assert_eq!(HistoryFilter::new(), HistoryFilter::default());
    }
}
