//! Test doubles shared by the integration tests: a scripted in-memory fetch that counts and records what it is
//! asked, a signer that counts and records what it signs (or answers what it is told to), the vector files and
//! buyer.json's fixture, and (in `net`) real loopback HTTP servers with a fetch that reaches them.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use alloy_primitives::{Address, U256};
use bytes::Bytes;
use futures_core::Stream;
use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::json::Member;
use terms::pairing::{Advertised, ChooseContext, Chosen, Unsigned};
use terms::rail::evm::delegation::{self, abi};
use terms::{Answer, AtrHash, Pairing, Refusal, Signer, SignerError, SigningRequest};
use terms::{Body, Fetch, FetchError, Request, Response};

pub mod net;
pub mod rows;
#[cfg(feature = "solana")]
pub mod solana;
pub mod world;

/// A vector file from `tests/vectors/`.
pub fn vectors(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("vector file")).expect("vector JSON")
}

pub fn hex(text: &str) -> Vec<u8> {
    hex::decode(text).expect("hex")
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Status, headers and the body in chunks.
    Answer { status: u16, headers: Vec<(String, String)>, chunks: Vec<Bytes> },
    /// A transport error.
    Reject,
    /// No answer, ever.
    Never,
    /// Status and headers arrive, then these chunks, then the body stalls forever.
    Stall { status: u16, headers: Vec<(String, String)>, chunks: Vec<Bytes> },
}

impl Reply {
    pub fn ok(body: impl Into<Bytes>) -> Self {
        Self::Answer { status: 200, headers: vec![], chunks: vec![body.into()] }
    }
    pub fn status(status: u16) -> Self {
        Self::Answer { status, headers: vec![], chunks: vec![] }
    }
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Answer { headers, .. } | Self::Stall { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }
    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        if let Self::Answer { chunks, .. } = &mut self {
            *chunks = vec![body.into()];
        }
        self
    }
    pub fn with_chunks(mut self, parts: Vec<Bytes>) -> Self {
        if let Self::Answer { chunks, .. } = &mut self {
            *chunks = parts;
        }
        self
    }
}

/// A request the fetch was asked.
#[derive(Clone, Debug)]
pub struct Asked {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

impl Asked {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Route {
    replies: VecDeque<Reply>,
    /// Repeat the last reply forever.
    repeat_last: bool,
}

/// An in-memory fetch answering each URL from a script.
#[derive(Clone, Default)]
pub struct ScriptedFetch {
    routes: Arc<Mutex<HashMap<String, Route>>>,
    asked: Arc<Mutex<Vec<Asked>>>,
    cancelled: Arc<AtomicUsize>,
}

impl ScriptedFetch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `url` with these replies in order, then fails.
    pub fn script(self, url: &str, replies: Vec<Reply>) -> Self {
        self.routes.lock().unwrap().insert(url.to_owned(), Route { replies: replies.into(), repeat_last: false });
        self
    }

    /// Answers `url` with these replies in order, the last one forever.
    pub fn script_repeating(self, url: &str, replies: Vec<Reply>) -> Self {
        self.routes.lock().unwrap().insert(url.to_owned(), Route { replies: replies.into(), repeat_last: true });
        self
    }

    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }

    /// Requests to `url`.
    pub fn asked_of(&self, url: &str) -> Vec<Asked> {
        self.asked().into_iter().filter(|a| a.url == url).collect()
    }

    /// Requests to `url` that carried a payment.
    pub fn paid_of(&self, url: &str) -> Vec<Asked> {
        self.asked_of(url).into_iter().filter(|a| a.header("payment-signature").is_some()).collect()
    }

    /// Bodies dropped before they were read to the end.
    pub fn cancelled_bodies(&self) -> usize {
        self.cancelled.load(Ordering::SeqCst)
    }
}

/// A body that notes being dropped before its end.
struct Tracked {
    chunks: VecDeque<Bytes>,
    finished: bool,
    /// After the chunks, pend forever instead of ending.
    stalls: bool,
    cancelled: Arc<AtomicUsize>,
}

impl Stream for Tracked {
    type Item = Result<Bytes, FetchError>;
    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.chunks.pop_front() {
            Some(c) => Poll::Ready(Some(Ok(c))),
            None if self.stalls => Poll::Pending,
            None => {
                self.finished = true;
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if !self.finished {
            self.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Fetch for ScriptedFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.asked.lock().unwrap().push(Asked {
            url: request.url.to_owned(),
            headers: request.headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
        });
        let reply = {
            let mut routes = self.routes.lock().unwrap();
            match routes.get_mut(request.url) {
                Some(route) if route.repeat_last && route.replies.len() == 1 => route.replies.front().cloned(),
                Some(route) => route.replies.pop_front(),
                None => None,
            }
        };
        let cancelled = self.cancelled.clone();
        Box::pin(async move {
            match reply {
                None | Some(Reply::Reject) => Err(FetchError::new("no route")),
                Some(Reply::Never) => std::future::pending().await,
                Some(Reply::Answer { status, headers, chunks }) => Ok(Response::new(
                    status,
                    headers,
                    Body::from_stream(Tracked { chunks: chunks.into(), finished: false, stalls: false, cancelled }),
                )),
                Some(Reply::Stall { status, headers, chunks }) => Ok(Response::new(
                    status,
                    headers,
                    Body::from_stream(Tracked { chunks: chunks.into(), finished: false, stalls: true, cancelled }),
                )),
            }
        })
    }
}

/// What the counting signer does when asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Sign,
    Reject,
    /// Answer this JSON, whatever the request.
    Answer(Value),
}

/// A signer that records every request, signs with a local key (or refuses), and can be cloned to share its log.
#[derive(Clone)]
pub struct CountingSigner {
    inner: Arc<LocalSigner>,
    /// The key that signs EIP-712 `Voucher` requests (a batch channel's payer authorizer), where it is not the payer's.
    voucher: Option<Arc<LocalSigner>>,
    /// The leaf (delegate and caveats) of the delegations that answer `erc7710` requests, where it answers them.
    delegation: Option<Arc<Value>>,
    account: String,
    mode: Mode,
    calls: Arc<Mutex<Vec<SigningRequest>>>,
    answers: Arc<Mutex<Vec<Value>>>,
}

impl CountingSigner {
    pub fn new(key: &str, account: &str) -> Self {
        let chain = account.split(':').nth(1).and_then(|c| c.parse().ok()).unwrap_or(1);
        Self {
            inner: Arc::new(LocalSigner::from_hex(key, chain).expect("key")),
            voucher: None,
            delegation: None,
            account: account.to_owned(),
            mode: Mode::Sign,
            calls: Arc::default(),
            answers: Arc::default(),
        }
    }
    pub fn rejecting(mut self) -> Self {
        self.mode = Mode::Reject;
        self
    }
    /// Signs vouchers (EIP-712 `Voucher`, alone or in a batch) with this key, everything else with the payer's.
    pub fn with_voucher_key(mut self, key: &str) -> Self {
        self.voucher = Some(Arc::new(LocalSigner::from_hex(key, 1).expect("key")));
        self
    }
    /// Answers `erc7710` requests with a root delegation from the payer's key (see [`delegation_answer`]) to the
    /// delegate, under the caveats, of the ERC-7710 salt-level vector file's leaf.
    pub fn with_delegations(mut self) -> Self {
        self.delegation = Some(Arc::new(delegation_leaf()));
        self
    }
    /// Answers every request with this JSON.
    pub fn answering(mut self, answer: Value) -> Self {
        self.mode = Mode::Answer(answer);
        self
    }
    pub fn calls(&self) -> Vec<SigningRequest> {
        self.calls.lock().unwrap().clone()
    }
    pub fn answers(&self) -> Vec<Value> {
        self.answers.lock().unwrap().clone()
    }
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

impl CountingSigner {
    /// One request's answer: a batch answered in order, each voucher by the voucher key where there is one.
    async fn answer(&self, request: &SigningRequest) -> Result<Answer, SignerError> {
        let key_of = |r: &SigningRequest| match (r, &self.voucher) {
            (SigningRequest::Eip712 { typed_data }, Some(v)) if typed_data.primary_type == "Voucher" => v.clone(),
            _ => self.inner.clone(),
        };
        match request {
            SigningRequest::Batch { requests } => {
                let mut out = Vec::new();
                for r in requests {
                    out.push(key_of(r).sign(r).await?.into_json());
                }
                Ok(Answer::new(Value::Array(out)))
            }
            SigningRequest::Erc7710(fields) if self.delegation.is_some() => {
                let leaf = self.delegation.as_deref().unwrap();
                delegation_answer(&self.inner, fields, leaf_delegate(leaf), leaf_caveats(leaf)).map(Answer::new)
            }
            other => key_of(other).sign(other).await,
        }
    }
}

/// The leaf delegation of `x402-exact-eip155-erc7710-salt.json` (`fixed.leaf`): the delegate and caveats the test
/// wallets' delegations carry.
pub fn delegation_leaf() -> Value {
    vectors("x402-exact-eip155-erc7710-salt.json")["fixed"]["leaf"].clone()
}

/// A leaf's delegate.
pub fn leaf_delegate(leaf: &Value) -> Address {
    leaf["delegate"].as_str().unwrap().parse().unwrap()
}

/// A leaf's caveats.
pub fn leaf_caveats(leaf: &Value) -> Vec<abi::Caveat> {
    leaf["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| abi::Caveat {
            enforcer: c["enforcer"].as_str().unwrap().parse().unwrap(),
            terms: c["terms"].as_str().unwrap().parse().unwrap(),
            args: c["args"].as_str().unwrap().parse().unwrap(),
        })
        .collect()
}

/// The answer to an `erc7710` request: a root delegation from the key's account to `delegate` under `caveats`, its
/// salt the request's `salt` (H), signed by the key for the reference DelegationManager on the request's chain, as
/// `{delegationManager, permissionContext, delegator}`.
pub fn delegation_answer(
    key: &LocalSigner,
    fields: &Map<String, Value>,
    delegate: Address,
    caveats: Vec<abi::Caveat>,
) -> Result<Value, SignerError> {
    let salt = fields.get("salt").and_then(Value::as_str).ok_or_else(|| SignerError::new("no salt"))?;
    let chain_id = fields.get("chainId").and_then(Value::as_u64).ok_or_else(|| SignerError::new("no chain"))?;
    let salt = U256::from_str_radix(salt.strip_prefix("0x").unwrap_or(salt), 16).map_err(SignerError::new)?;
    let manager: Address = delegation::DELEGATION_MANAGER.parse().unwrap();
    let mut d = delegation::root_delegation(delegate, key.address(), caveats, salt);
    let signature = key.sign_digest(&delegation::signing_hash(&d, chain_id, manager).0)?;
    d.signature = signature.parse().map_err(SignerError::new)?;
    Ok(json!({
        "delegationManager": delegation::DELEGATION_MANAGER,
        "permissionContext": delegation::encode_permission_context(&[d]),
        "delegator": key.address().to_checksum(None),
    }))
}

impl Signer for CountingSigner {
    fn account(&self) -> &str {
        &self.account
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.lock().unwrap().push(request.clone());
        Box::pin(async move {
            let answer = match &self.mode {
                Mode::Reject => return Err(SignerError::new("refused")),
                Mode::Answer(a) => Answer::new(a.clone()),
                Mode::Sign => self.answer(request).await?,
            };
            self.answers.lock().unwrap().push(answer.as_json().clone());
            Ok(answer)
        })
    }
}

/// A current-thread runtime with paused time, so every wait is instant and exact.
pub fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime")
}

/// A vector file's plant row (`B2`): the seller serves other bytes than the ones H names, and `transact` declines
/// with the row's code before the signer is asked (`signCalls`), with the buyer's inputs and time where the row names
/// them. `link` is where the row's document points; the signer holds the file's payer key, or a stand-in key where the
/// file names none (a Lightning node's: the signer is never asked).
pub fn plant_declines_before_the_signer(f: &Value, r: &Value, link: &str, pairing: &'static dyn Pairing) {
    let i = &r["input"];
    let served = hex(i["servesHex"].as_str().expect("servesHex"));
    assert_eq!(terms::atr_hash(&served).to_hex(), r["servedHash"].as_str().expect("servedHash"));
    let stand_in = format!("0x{}", "11".repeat(32));
    let key = f["fixed"]["payerKey"].as_str().unwrap_or(&stand_in);
    let signer = CountingSigner::new(key, i["account"].as_str().expect("account"));
    let fetch = ScriptedFetch::new().script(link, vec![Reply::ok(served)]);
    // A row whose build needs no time (a card's) names none: the gate's own clock then.
    let mut options = terms::Options::new();
    if let Some(now) = i["now"].as_u64() {
        options = options.clock(terms::FixedClock(now));
    }
    if let Some(inputs) = i["inputs"].as_object() {
        options = options.inputs(inputs.clone());
    }
    let got = paused().block_on(terms::transact(&i["doc"], pairing, &signer, &fetch, &options));
    let want: terms::DeclineCode = serde_json::from_value(r["expect"]["decline"].clone()).expect("decline");
    assert_eq!(got.expect_err("a plant declines").code, want);
    assert_eq!(signer.count() as u64, r["expect"]["signCalls"].as_u64().expect("signCalls"));
}

/// Every top-level key of a vector file is one its tests run, or one listed with why it is not.
pub fn keys_run_or_listed(name: &str, run: &[&str], listed: &[(&str, &str)]) {
    for key in vectors(name).as_object().expect("a vector file is an object").keys() {
        assert!(
            run.contains(&key.as_str()) || listed.iter().any(|(k, _)| k == key),
            "{name}: key {key} neither run nor listed"
        );
    }
}

/// A member of a vector file that its tests do not run (an ignored test names it, with why): it is in the file.
pub fn member_not_run(name: &str, pointer: &str) {
    assert!(vectors(name).pointer(pointer).is_some(), "{name}: no {pointer}");
}

/// A vector file's B6 row: `check` over the row's payment with each of its byte strings gives the row's H, or its
/// decline.
pub fn b6_checks(r: &Value, pairing: &'static dyn Pairing) {
    let cases = r["input"]["check"].as_array().expect("check");
    for (case, want) in cases.iter().zip(r["expect"].as_array().expect("expect")) {
        let got = terms::check(&hex(case["bytesHex"].as_str().expect("bytesHex")), &r["input"]["presented"], pairing);
        match want.get("h") {
            Some(h) => assert_eq!(got.expect("checked").h.to_hex(), h.as_str().expect("h")),
            None => {
                let want: terms::DeclineCode = serde_json::from_value(want["decline"].clone()).expect("decline");
                assert_eq!(got.expect_err("declined").code, want);
            }
        }
    }
}

/// What one call cost.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    /// The most heap the test's thread held at once during the call, over what it held before: the gate, the
    /// fetch, hyper's buffers and the loopback servers all run on that thread.
    pub peak: u64,
    /// The runtime's (paused) clock.
    pub virtual_time: std::time::Duration,
    /// The wall clock.
    pub real: std::time::Duration,
}

impl Cost {
    /// Asserts the peak heap stays under `bound` bytes. With `PEAK_LOG` set, prints each call's peak and wall time
    /// (to see how far under its bound each case runs).
    pub fn assert_peak_under(&self, bound: u64) {
        if std::env::var_os("PEAK_LOG").is_some() {
            eprintln!("PEAK {} {} {:?}", std::thread::current().name().unwrap_or("?"), self.peak, self.real);
        }
        assert!(self.peak < bound, "peak heap {} bytes, bound {bound}", self.peak);
        assert!(self.peak > 0, "nothing counted: is the counting allocator installed?");
    }

    /// Asserts the call took exactly `virtual_time` on the paused clock, and less than `real` on the wall clock.
    pub fn assert_time(&self, virtual_time: std::time::Duration, real: std::time::Duration) {
        assert_eq!(self.virtual_time, virtual_time, "virtual time");
        assert!(self.real < real, "real time {:?}, bound {real:?}", self.real);
    }
}

/// A paused current-thread runtime whose calls can be measured: what a call allocates on this thread (where every
/// task of the runtime runs), and how long it takes on both clocks. Counting is per thread (the
/// `allocation-counter` crate is this binary's global allocator), so tests running in parallel never count.
pub struct Measured {
    rt: tokio::runtime::Runtime,
}

impl Measured {
    pub fn new() -> Self {
        Self { rt: paused() }
    }

    /// Runs unmeasured work (setting up servers, checks after the call).
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.rt.block_on(work)
    }

    /// Runs `call`, measured.
    pub fn measure<F: std::future::Future>(&self, call: F) -> (F::Output, Cost) {
        let mut out = None;
        let real = std::time::Instant::now();
        let info = allocation_counter::measure(|| {
            out = Some(self.rt.block_on(async {
                let start = tokio::time::Instant::now();
                let got = call.await;
                (got, start.elapsed())
            }));
        });
        let real = real.elapsed();
        let (got, virtual_time) = out.expect("ran");
        (got, Cost { peak: info.bytes_max, virtual_time, real })
    }
}

/// buyer.json's `fixed`: the ATRs A and C, the seller document D, the payer, the clock and the agreement fixtures.
pub struct Buyer {
    pub v: Value,
}

impl Buyer {
    pub fn load() -> Self {
        Self { v: vectors("buyer.json")["fixed"].clone() }
    }
    /// The ATR D advertises.
    pub fn a(&self) -> Vec<u8> {
        hex(self.v["A"].as_str().unwrap())
    }
    /// A with one byte changed.
    pub fn c(&self) -> Vec<u8> {
        hex(self.v["C"].as_str().unwrap())
    }
    pub fn doc(&self) -> Value {
        self.v["D"].clone()
    }
    pub fn account(&self) -> String {
        self.v["account"].as_str().unwrap().to_owned()
    }
    pub fn now(&self) -> u64 {
        self.v["now"].as_u64().unwrap()
    }
    pub fn signer(&self) -> CountingSigner {
        CountingSigner::new(self.v["payerKey"].as_str().unwrap(), &self.account())
    }
    pub fn options(&self) -> terms::Options {
        terms::Options::new().clock(terms::FixedClock(self.now())).ids(terms::CountingIds::default())
    }
    pub fn agreement(&self, key: &str) -> Value {
        self.v["agreement"][key].clone()
    }
}

/// The link a document's legal context names.
pub fn link_of(doc: &Value) -> String {
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().to_owned()
}

/// The message of an EIP-712 request.
pub fn message_of(request: &SigningRequest) -> Value {
    match request {
        SigningRequest::Eip712 { typed_data } => Value::Object(typed_data.message.clone()),
        other => panic!("not an eip712 request: {other:?}"),
    }
}

/// A pairing that behaves as another except where a test says otherwise: the read's H, link or agreement URL, whether
/// its payment is a public proof, and the hash its read-back returns. It records the hash each build was given.
#[derive(Debug)]
pub struct Stub {
    pub inner: &'static dyn Pairing,
    pub h: Option<AtrHash>,
    pub link: Option<String>,
    pub agreement: Option<String>,
    pub public_proof: Option<bool>,
    pub bound: Option<AtrHash>,
    pub built_with: Mutex<Vec<AtrHash>>,
}

impl Stub {
    pub fn of(inner: &'static dyn Pairing) -> Self {
        Self {
            inner,
            h: None,
            link: None,
            agreement: None,
            public_proof: None,
            bound: None,
            built_with: Mutex::default(),
        }
    }
}

impl Pairing for Stub {
    fn id(&self) -> &'static str {
        self.inner.id()
    }
    fn public_proof(&self) -> bool {
        self.public_proof.unwrap_or_else(|| self.inner.public_proof())
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let mut read = self.inner.read(doc)?;
        if let Some(h) = self.h {
            read.h = h;
        }
        if let Some(link) = &self.link {
            read.link.clone_from(link);
        }
        if self.agreement.is_some() {
            read.agreement.clone_from(&self.agreement);
        }
        Ok(read)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        self.inner.choose(read, ctx)
    }
    fn inputs(&self) -> &'static [terms::InputSpec] {
        self.inner.inputs()
    }
    fn quote(&self, chosen: &Chosen) -> Result<terms::Quote, Refusal> {
        self.inner.quote(chosen)
    }
    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        self.inner.keep_document(chosen, doc);
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        self.built_with.lock().unwrap().push(*h);
        self.inner.build(chosen, atr, h)
    }
    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        match self.bound {
            Some(h) => Ok(h),
            None => self.inner.bound(presented, landed),
        }
    }
}
