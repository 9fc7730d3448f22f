//! A journal that dies at one write: the write named fails before it reaches the journal underneath, as a process
//! killed right before it would leave the journal. Every other write and read goes through.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use terms::BoxFuture;
use terms::safety::{Answered, Begun, Ended, Intent, JournalError, Prepared, SpendJournal};

/// The write a [`Dying`] journal dies at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// `stepped`: after the wallet's first answer, before the next step is recorded.
    Stepped,
    /// `signed`: after the wallet's last answer, before the payment is recorded.
    Signed,
}

/// Dies once at its write, then is the journal underneath.
#[derive(Debug)]
pub(crate) struct Dying {
    inner: Arc<dyn SpendJournal>,
    at: At,
    died: AtomicBool,
}

impl Dying {
    /// `inner`, dying at `at` the first time it comes.
    pub(crate) fn new(inner: Arc<dyn SpendJournal>, at: At) -> Self {
        Self { inner, at, died: AtomicBool::new(false) }
    }

    /// Whether it died.
    pub(crate) fn died(&self) -> bool {
        self.died.load(Ordering::SeqCst)
    }

    fn dies(&self, here: At) -> bool {
        here == self.at && !self.died.swap(true, Ordering::SeqCst)
    }
}

fn killed<'a, T: Send + 'a>(what: &str) -> BoxFuture<'a, Result<T, JournalError>> {
    let e = JournalError(format!("the process was killed before the journal's {what} write"));
    Box::pin(async move { Err(e) })
}

impl SpendJournal for Dying {
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        self.inner.begin(intent)
    }
    fn look<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        self.inner.look(intent)
    }
    fn stepped<'a>(&'a self, attempt: &'a str, prepared: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        if self.dies(At::Stepped) {
            return killed("stepped");
        }
        self.inner.stepped(attempt, prepared)
    }
    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        self.inner.moving(attempt)
    }
    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a Value,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        if self.dies(At::Signed) {
            return killed("signed");
        }
        self.inner.signed(attempt, bytes, payment)
    }
    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        // A killed process records no end either.
        if self.died() {
            return killed("ended");
        }
        self.inner.ended(attempt, ended)
    }
    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        self.inner.answered(attempt, answered)
    }
}
