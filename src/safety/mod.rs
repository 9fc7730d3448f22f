//! The buyer-safety layer: a spend [`Policy`](policy::Policy) checked before every signature, typed
//! [`Recovery`](recovery::Recovery) after every outcome, idempotent purchases, and a journal that loses nothing
//! (SQLite by default, behind the `sqlite` feature). The gate calls it through two seams in
//! [`Options`](crate::Options): [`SpendPolicy`] and [`SpendJournal`]; with neither set, the gate is exactly the gate.
//! The [`journal`] keeps every attempt and its budget reservations; [`journal::Store`] reads them back.

pub mod journal;
pub mod policy;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod recovery;

pub use crate::gate::{
    APPROVAL_EXPIRY_SECONDS, Allowed, Answered, Approval, ApprovalError, ApprovalQueue, ApprovalState, Asked, Asking,
    Attested, Begun, Claim, Decision, Ended, Intent, JournalError, PolicyRefusal, Prepared, Purchase, Resumed, Role,
    SellerStanding, Spend, SpendApproval, SpendJournal, SpendPolicy, ToSign,
};
