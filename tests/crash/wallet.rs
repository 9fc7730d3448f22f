//! The wallet wrapper: every request the wallet is asked, and every answer it gives, appended to a log outside the
//! buyer's process and synced before the run goes on, so what the wallet was asked survives any kill. A request is
//! logged before the real signer is asked (a run killed in between counts as having asked it), its answer after,
//! then the step `signer.<kind>.after`: a kill there is a kill between the wallet's answer and the journal's
//! `signed` write.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use terms::{Answer, BoxFuture, Signer, SignerError, SigningRequest};

use crate::scenarios::Scenario;
use crate::tripwire::Steps;

/// Appends one JSON line to `log` and syncs it: a line that returned is durable.
pub(crate) fn append(log: &Path, line: &Value) {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    // One write of the whole line: a kill leaves at most one cut line, at the end, which the readers skip.
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
    file.sync_all().unwrap();
}

/// The log's lines (a line cut short by a kill never reached the log whole, and is skipped).
pub(crate) fn lines(log: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(log) else { return Vec::new() };
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).collect()
}

/// The scenario's wallet, each request and answer logged for purchase `purchase`, each call a step on either side.
pub(crate) struct Logged {
    pub(crate) inner: Box<dyn Signer>,
    pub(crate) scenario: Scenario,
    pub(crate) log: PathBuf,
    pub(crate) purchase: usize,
    pub(crate) steps: Arc<Steps>,
    /// How many times this run asked the wallet.
    pub(crate) asked: AtomicUsize,
}

impl Signer for Logged {
    fn account(&self) -> &str {
        self.inner.account()
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let kind = request.kind();
            self.steps.step(&format!("signer.{kind}.before"));
            let (purchase, role) = (self.purchase, self.scenario.role_of(request));
            let asked = serde_json::to_value(request).unwrap();
            append(&self.log, &json!({"purchase": purchase, "role": role, "request": asked}));
            self.asked.fetch_add(1, Ordering::SeqCst);
            let answer = self.inner.sign(request).await;
            let logged = match &answer {
                Ok(a) => a.as_json().clone(),
                Err(e) => json!({"refused": e.to_string()}),
            };
            append(&self.log, &json!({"purchase": purchase, "role": role, "answer": logged}));
            self.steps.step(&format!("signer.{kind}.after"));
            answer
        })
    }
}

/// What the wallet's log says of one payment (one purchase, one role).
#[derive(Debug, Default, Clone)]
pub(crate) struct Asked {
    /// Every request asked, in RFC 8785 form, in order.
    pub(crate) requests: Vec<String>,
    /// Every answer given, in RFC 8785 form.
    pub(crate) answers: Vec<String>,
}

impl Asked {
    pub(crate) fn distinct_requests(&self) -> usize {
        self.requests.iter().collect::<BTreeSet<_>>().len()
    }

    pub(crate) fn distinct_answers(&self) -> usize {
        self.answers.iter().collect::<BTreeSet<_>>().len()
    }
}

/// The wallet's log, per purchase and role.
pub(crate) fn asked(log: &Path) -> BTreeMap<(usize, String), Asked> {
    let mut out: BTreeMap<(usize, String), Asked> = BTreeMap::new();
    for line in lines(log) {
        let purchase = usize::try_from(line["purchase"].as_u64().unwrap()).unwrap();
        let entry = out.entry((purchase, line["role"].as_str().unwrap().to_owned())).or_default();
        if let Some(request) = line.get("request") {
            entry.requests.push(terms::json::canonical(request).unwrap());
        }
        if let Some(answer) = line.get("answer") {
            entry.answers.push(terms::json::canonical(answer).unwrap());
        }
    }
    out
}
