//! The approval queue's rows, as both backends store them (ours): one table of its own, created where it is
//! missing (`CREATE TABLE IF NOT EXISTS`) beside the journal's, outside the journal's schema version, so a journal
//! file or database of any version gains it when a build that keeps approvals opens it for writing.
//!
//! ```sql
//! CREATE TABLE approvals (                  -- `terms_approvals` on PostgreSQL
//!   seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order they were queued (BIGINT IDENTITY on PostgreSQL)
//!   id TEXT NOT NULL UNIQUE, key TEXT NOT NULL, state TEXT NOT NULL,
//!   pairing TEXT NOT NULL, account TEXT NOT NULL, h TEXT NOT NULL,
//!   quote TEXT NOT NULL, purchase TEXT,     -- JSON
//!   link TEXT NOT NULL, bytes BLOB NOT NULL, rule TEXT NOT NULL, agent TEXT,
//!   binding TEXT NOT NULL,                  -- SHA-256 of what the approval binds (`Asking::binding`)
//!   created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, decided_at INTEGER, attempt TEXT);
//! CREATE INDEX approvals_by_key ON approvals (key, seq);
//! CREATE INDEX approvals_by_state ON approvals (state, seq);
//! ```
//!
//! What each write decides is [`step`](crate::gate::approvals::step) and
//! [`decided`](crate::gate::approvals::decided); this is the row.

use crate::gate::{Approval, ApprovalState, Asking};
use crate::hash::AtrHash;
use crate::safety::journal::rules::int;

/// The columns every read selects, in [`Raw`]'s order.
pub(crate) const COLUMNS: &str = "id, key, state, pairing, account, h, quote, purchase, link, bytes, rule, agent, \
                                  binding, created_at, expires_at, decided_at, attempt";

/// The columns after `seq`, as both backends declare them; `$bytes` and `$int` are each backend's types.
macro_rules! approval_columns {
    ($bytes:literal, $int:literal) => {
        concat!(
            "
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'used', 'superseded', 'expired')),
  pairing TEXT NOT NULL,
  account TEXT NOT NULL,
  h TEXT NOT NULL,
  quote TEXT NOT NULL,
  purchase TEXT,
  link TEXT NOT NULL,
  bytes ",
            $bytes,
            " NOT NULL,
  rule TEXT NOT NULL,
  agent TEXT,
  binding TEXT NOT NULL,
  created_at ",
            $int,
            " NOT NULL,
  expires_at ",
            $int,
            " NOT NULL,
  decided_at ",
            $int,
            ",
  attempt TEXT
"
        )
    };
}
pub(crate) use approval_columns;

/// One row as read, before it is checked.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) id: String,
    pub(crate) key: String,
    pub(crate) state: String,
    pub(crate) pairing: String,
    pub(crate) account: String,
    pub(crate) h: String,
    pub(crate) quote: String,
    pub(crate) purchase: Option<String>,
    pub(crate) link: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) rule: String,
    pub(crate) agent: Option<String>,
    pub(crate) binding: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: i64,
    pub(crate) decided_at: Option<i64>,
    pub(crate) attempt: Option<String>,
}

impl Raw {
    /// The approval (its state as stored) and its binding; a row that does not read is refused with a sentence.
    pub(crate) fn read(self) -> Result<(Approval, String), String> {
        let id = self.id;
        let bad = |what: &str| format!("the approval {id}'s {what} does not read");
        let state = ApprovalState::parse(&self.state).ok_or_else(|| bad("state"))?;
        let h = AtrHash::parse(&self.h).ok_or_else(|| bad("h"))?;
        let quote = serde_json::from_str(&self.quote).map_err(|_| bad("quote"))?;
        let purchase = self.purchase.map(|p| serde_json::from_str(&p)).transpose().map_err(|_| bad("purchase"))?;
        let time = |t: i64, what: &str| u64::try_from(t).map_err(|_| bad(what));
        let approval = Approval {
            key: self.key,
            state,
            pairing: self.pairing,
            account: self.account,
            quote,
            purchase,
            h,
            link: self.link,
            bytes: self.bytes,
            rule: self.rule,
            agent: self.agent,
            created_at: time(self.created_at, "created_at")?,
            expires_at: time(self.expires_at, "expires_at")?,
            decided_at: self.decided_at.map(|t| time(t, "decided_at")).transpose()?,
            attempt: self.attempt,
            id,
        };
        Ok((approval, self.binding))
    }
}

/// The approval as a person reads it at `now` (a pending or approved one past its time reads `expired`).
pub(crate) fn at(mut approval: Approval, now: u64) -> Approval {
    approval.state = approval.state_at(now);
    approval
}

/// What a new row holds beside the asking's own text: the quote and purchase as JSON, the binding, the times.
#[derive(Debug)]
pub(crate) struct NewRow {
    pub(crate) quote: String,
    pub(crate) purchase: Option<String>,
    pub(crate) binding: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: i64,
}

impl NewRow {
    /// The row of a new approval for `asking`.
    pub(crate) fn of(asking: &Asking<'_>) -> Result<Self, String> {
        let text = |v: Result<String, serde_json::Error>| v.map_err(|e| e.to_string());
        Ok(Self {
            quote: text(serde_json::to_string(asking.quote))?,
            purchase: asking.purchase.map(|p| text(serde_json::to_string(p))).transpose()?,
            binding: asking.binding(),
            created_at: int(asking.now, "the approval's time")?,
            expires_at: int(asking.expires_at, "the approval's expiry")?,
        })
    }
}
