//! The steps a run prints (and the one it stops at to be killed), and the journal wrapped so each of its calls is a
//! step on either side.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use terms::BoxFuture;
use terms::safety::{Answered, Begun, Ended, Intent, JournalError, Prepared, SpendJournal};

use crate::backends;

/// Where a run prints its steps, and the step at which it stops to be killed (0: none).
pub(crate) struct Steps {
    kill_at: usize,
    n: AtomicUsize,
    print: bool,
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Steps")
    }
}

impl Steps {
    /// The steps of a child: printed as `@<n> <step>`, and at step `kill_at` `@KILL`, then a wait to be killed.
    pub(crate) fn printed(kill_at: usize) -> Arc<Self> {
        Arc::new(Self { kill_at, n: AtomicUsize::new(0), print: true })
    }

    /// The steps of a run in the parent (a retry): not printed, never stopped at.
    pub(crate) fn silent() -> Arc<Self> {
        Arc::new(Self { kill_at: 0, n: AtomicUsize::new(0), print: false })
    }

    pub(crate) fn step(&self, name: &str) {
        let n = self.n.fetch_add(1, Ordering::SeqCst) + 1;
        if self.print {
            let mut out = std::io::stdout().lock();
            writeln!(out, "@{n} {name}").unwrap();
            if n == self.kill_at {
                writeln!(out, "@KILL").unwrap();
                out.flush().unwrap();
                drop(out);
                loop {
                    std::thread::sleep(Duration::from_secs(60));
                }
            }
            out.flush().unwrap();
        }
    }
}

/// The journal, each call a step on either side.
#[derive(Debug)]
pub(crate) struct Tripwire {
    pub(crate) inner: Arc<dyn backends::Journal>,
    pub(crate) steps: Arc<Steps>,
}

impl Tripwire {
    /// The call, made (not only awaited) between its two steps: a backend may write before its future is polled.
    async fn around<'a, T>(&'a self, name: &str, call: impl FnOnce() -> BoxFuture<'a, T>) -> T {
        self.steps.step(&format!("journal.{name}.before"));
        let r = call().await;
        self.steps.step(&format!("journal.{name}.after"));
        r
    }
}

impl SpendJournal for Tripwire {
    fn begin<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(self.around("begin", move || self.inner.begin(intent)))
    }
    fn look<'a>(&'a self, intent: &'a Intent<'a>) -> BoxFuture<'a, Result<Begun, JournalError>> {
        Box::pin(self.around("look", move || self.inner.look(intent)))
    }
    fn stepped<'a>(&'a self, attempt: &'a str, prepared: &'a Prepared) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.around("stepped", move || self.inner.stepped(attempt, prepared)))
    }
    fn moving<'a>(&'a self, attempt: &'a str) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.around("moving", move || self.inner.moving(attempt)))
    }
    fn signed<'a>(
        &'a self,
        attempt: &'a str,
        bytes: &'a [u8],
        payment: &'a Value,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.around("signed", move || self.inner.signed(attempt, bytes, payment)))
    }
    fn ended<'a>(&'a self, attempt: &'a str, ended: Ended<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.around("ended", move || self.inner.ended(attempt, ended)))
    }
    fn answered<'a>(&'a self, attempt: &'a str, answered: Answered<'a>) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(self.around("answered", move || self.inner.answered(attempt, answered)))
    }
}
