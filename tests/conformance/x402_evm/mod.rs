//! The x402 one-shot pairings on EIP-155 chains beside EIP-3009: exact and upto over Permit2, exact over ERC-7710
//! (the unsigned level and the salt level), and auth-capture on the commerce-payments escrow (EIP-3009 and Permit2).
//! One module per pair of vector files, run from the rows' own data, and the gate's own trials for each pairing
//! (transact, check, agreement, bad input).

mod auth_capture;
mod erc7710;
mod gate;
mod peer;
mod permit2;

use std::sync::{Arc, Mutex};

use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::pairing::{Chosen, Completion};
use terms::rail::evm::delegation::abi;
use terms::{Answer, AtrHash, Pairing, Refusal, Signer, SignerError, SigningRequest};

use crate::support::vectors;
use crate::{Outcome, eq, ignored};

/// Every trial of the six files and of the gate over the six pairings.
pub fn trials() -> Vec<Trial> {
    let mut all = Vec::new();
    permit2::trials(&mut all);
    erc7710::trials(&mut all);
    auth_capture::trials(&mut all);
    gate::trials(&mut all);
    peer::trials(&mut all);
    all
}

/// A failed trial with a message.
fn fail(message: impl Into<String>) -> Failed {
    Failed::from(message.into())
}

/// `Err` with the message unless the condition holds.
fn ensure(cond: bool, message: impl FnOnce() -> String) -> Outcome {
    if cond { Ok(()) } else { Err(fail(message())) }
}

/// One vector file, with the values every row of it shares.
pub(crate) struct File {
    pub(crate) v: Value,
}

impl File {
    pub(crate) fn load(name: &str) -> Self {
        Self { v: vectors(name) }
    }

    pub(crate) fn fixed(&self) -> &Value {
        &self.v["fixed"]
    }

    pub(crate) fn h(&self) -> AtrHash {
        AtrHash::parse(self.fixed()["H"].as_str().unwrap()).unwrap()
    }

    pub(crate) fn row(&self, name: &str) -> &Value {
        self.v["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
    }

    pub(crate) fn pairing_id(&self) -> String {
        self.row("B2")["pairing"].as_str().unwrap().to_owned()
    }

    pub(crate) fn pairing(&self) -> &'static dyn Pairing {
        terms::pairing(&self.pairing_id()).unwrap()
    }

    /// The document the file's B2 row advertises H in.
    pub(crate) fn doc(&self) -> Value {
        self.row("B2")["input"]["doc"].clone()
    }

    /// The payment the file's B6 row checks.
    pub(crate) fn presented(&self) -> Value {
        self.row("B6")["input"]["presented"].clone()
    }

    /// The build input for the document's one option: `{required, accepted, from, now}`.
    pub(crate) fn choice(&self) -> Map<String, Value> {
        let doc = self.doc();
        let option = doc["accepts"][0].clone();
        assert_eq!(option, self.fixed()["option"], "B2's option is the file's fixed option");
        let choice =
            json!({"required": doc, "accepted": option, "from": self.fixed()["payer"], "now": self.fixed()["now"]});
        choice.as_object().unwrap().clone()
    }

    /// The choice with the option replaced, in the document too.
    pub(crate) fn choice_with_option(&self, option: Value) -> Map<String, Value> {
        let mut choice = self.choice();
        choice["required"]["accepts"] = json!([&option]);
        choice.insert("accepted".into(), option);
        choice
    }

    pub(crate) fn chosen(&self) -> Chosen {
        Chosen { pairing: self.pairing_id(), build_input: self.choice(), reference: "r".repeat(32), agreement: None }
    }

    pub(crate) fn key(&self) -> &str {
        self.fixed()["payerKey"].as_str().unwrap()
    }

    pub(crate) fn local(&self) -> LocalSigner {
        LocalSigner::from_hex(self.key(), 84_532).unwrap()
    }
}

/// The code of a refusal, or `None` for a success.
pub(crate) fn code_of<T>(got: Result<T, Refusal>) -> Option<String> {
    got.err().map(|r| r.code())
}

/// The code a row's `expect` (or the row itself) names.
pub(crate) fn want_code(v: &Value) -> Option<String> {
    let e = v.get("expect").unwrap_or(v);
    assert_eq!(e["refused"], true, "a refusal row");
    e["code"].as_str().map(str::to_owned)
}

/// The payment a completion gives.
pub(crate) fn payment_of(done: Result<Completion<'_>, Refusal>) -> Result<Value, Failed> {
    match done {
        Ok(Completion::Next(n)) => Err(fail(format!("unexpected next {n:?}"))),
        Ok(completion) => completion.payment_value().ok_or_else(|| fail(format!("no payment in {completion:?}"))),
        Err(r) => Err(fail(format!("refused {r}"))),
    }
}

/// Whether a 0x value matches a row's `{prefix, suffix}`.
pub(crate) fn matches_truncated(value: &str, want: &Value) -> Outcome {
    let (prefix, suffix) = (want["prefix"].as_str().unwrap(), want["suffix"].as_str().unwrap());
    ensure(value.starts_with(prefix) && value.ends_with(suffix), || format!("{value} is not {prefix}…{suffix}"))
}

/// The bound of a pairing, as a code or the hash.
pub(crate) fn bound_of(pairing: &dyn Pairing, presented: &Value) -> Result<String, String> {
    pairing.bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The trials of one vector file: each key run or listed, and any key neither run nor listed a failure.
pub(crate) fn file_trials(
    all: &mut Vec<Trial>,
    name: &'static str,
    run: fn(&str, &File) -> Outcome,
    keys_run: &[&str],
    keys_ignored: &[(&str, &str)],
) {
    let file = vectors(name);
    for key in file.as_object().unwrap().keys() {
        let label = format!("{name}::{key}");
        match key.as_str() {
            "about" | "fixed" => {}
            "buyer" => {
                for row in file["buyer"]["rows"].as_array().unwrap().clone() {
                    let label = format!("{label}::{}", row["name"].as_str().unwrap());
                    all.push(Trial::test(label, move || crate::pairing_buyer_row(&row)));
                }
                if let Some(none) = file["buyer"].get("noSignedPayment") {
                    all.push(ignored(&format!("{label}::noSignedPayment {none}"), "no B6 row"));
                }
            }
            k if keys_run.contains(&k) => {
                let key = key.clone();
                all.push(Trial::test(label, move || run(&key, &File::load(name))));
            }
            k => match keys_ignored.iter().find(|(i, _)| *i == k) {
                Some((_, why)) => all.push(ignored(&label, why)),
                None => {
                    let k = k.to_owned();
                    all.push(Trial::test(label, move || Err(fail(format!("key {k} is neither run nor listed")))));
                }
            },
        }
    }
}

/// A signer for the two ERC-7710 levels beside EIP-712: it signs `eip712` requests with its key, and answers an
/// `erc7710` request with a root delegation from its account, signed for the reference DelegationManager, of the
/// shape of the salt-level file's leaf (its delegate and caveats) with the request's salt. It records the kind of
/// every request it signs.
#[derive(Clone)]
pub(crate) struct DelegationSigner {
    key: Arc<LocalSigner>,
    account: String,
    leaf: Value,
    kinds: Arc<Mutex<Vec<String>>>,
    requests: Arc<Mutex<Vec<SigningRequest>>>,
    answers: Arc<Mutex<Vec<Value>>>,
}

impl DelegationSigner {
    pub(crate) fn new(key: &str, account: &str) -> Self {
        let leaf = crate::support::delegation_leaf();
        Self {
            key: Arc::new(LocalSigner::from_hex(key, 84_532).unwrap()),
            account: account.to_owned(),
            leaf,
            kinds: Arc::default(),
            requests: Arc::default(),
            answers: Arc::default(),
        }
    }

    /// The signer's leaf with its first caveat's terms replaced.
    pub(crate) fn set_leaf_terms(&mut self, terms_hex: &str) {
        self.leaf["caveats"][0]["terms"] = json!(format!("0x{}", terms_hex.trim_start_matches("0x")));
    }

    pub(crate) fn kinds(&self) -> Vec<String> {
        self.kinds.lock().unwrap().clone()
    }

    /// The signer's `i`th answer.
    pub(crate) fn answers_of(&self, i: usize) -> Value {
        self.answers.lock().unwrap()[i].clone()
    }

    pub(crate) fn requests(&self) -> Vec<SigningRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The caveats of the fixture's leaf.
    pub(crate) fn caveats(leaf: &Value) -> Vec<abi::Caveat> {
        crate::support::leaf_caveats(leaf)
    }

    /// The delegation answer for an ERC-7710 request's members.
    pub(crate) fn delegation_for(&self, fields: &Map<String, Value>) -> Result<Value, SignerError> {
        let (delegate, caveats) = (crate::support::leaf_delegate(&self.leaf), Self::caveats(&self.leaf));
        crate::support::delegation_answer(&self.key, fields, delegate, caveats)
    }
}

impl Signer for DelegationSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.kinds.lock().unwrap().push(request.kind().to_owned());
        self.requests.lock().unwrap().push(request.clone());
        Box::pin(async move {
            let answer = match request {
                SigningRequest::Erc7710(fields) => self.delegation_for(fields).map(Answer::new),
                other => self.key.sign(other).await,
            }?;
            self.answers.lock().unwrap().push(answer.as_json().clone());
            Ok(answer)
        })
    }
}

/// `eq` for two JSON values, naming the first member path where they differ.
pub(crate) fn same(what: &str, got: &Value, want: &Value) -> Outcome {
    if got == want {
        // Member order too: serde_json with preserve_order compares maps in order-insensitive form, so compare text.
        return eq(what, serde_json::to_string(got).unwrap(), serde_json::to_string(want).unwrap());
    }
    eq(what, got, want)
}
