//! What the fuzz targets share: the vector files' fixtures for every built pairing, an in-memory [`Fetch`] whose
//! answers come from the fuzz input and that counts what it is asked, a signer that counts what it is handed, a
//! paused tokio runtime, and the input's framing.
//!
//! Framing. Most targets read several values from one input. They are separated by the byte `0xFF`, which never
//! occurs in UTF-8 text, so the fuzzer mutates each part on its own and a seed is the parts joined by that byte.
//! A part that is not UTF-8 is read lossily.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::{Answer, Pairing, Signer, SignerError, SigningRequest};
use terms::{Body, Fetch, FetchError, Request, Response};

/// The byte between the parts of an input.
pub const SEP: u8 = 0xFF;

/// The input's parts, split on [`SEP`].
pub fn parts(data: &[u8]) -> Vec<&[u8]> {
    data.split(|b| *b == SEP).collect()
}

/// The input's parts joined: how a seed is written.
pub fn join(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(SEP);
        }
        out.extend_from_slice(p);
    }
    out
}

/// A part as text.
pub fn text(part: &[u8]) -> String {
    String::from_utf8_lossy(part).into_owned()
}

/// A current-thread runtime with paused time: every wait (a deadline, a Retry-After, the exchange's window) is
/// instant, and elapsed virtual time can be measured exactly.
pub fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime")
}

// ---------------------------------------------------------------------------------------------------------------
// Vector files.

/// The vector folder: the files are read at run time (once each), so a file a new family adds is fuzzed without
/// a line here.
const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors");

/// A vector file, parsed.
pub fn vector_file(name: &str) -> Value {
    vector_files().iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).expect("a vector file in tests/vectors")
}

/// Every vector file in tests/vectors, by name, in name order.
pub fn vector_files() -> &'static [(String, Value)] {
    static ALL: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<(String, Value)> = std::fs::read_dir(VECTORS)
            .expect("tests/vectors")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("a vector file");
                let name = p.file_name().expect("a name").to_string_lossy().into_owned();
                (name, serde_json::from_str(&text).expect("vector JSON"))
            })
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    })
}

/// buyer.json's `fixed`: the ATR A, the seller document D, the payer and the agreement fixtures.
pub fn buyer() -> &'static Value {
    static BUYER_FIXED: OnceLock<Value> = OnceLock::new();
    BUYER_FIXED.get_or_init(|| vector_file("buyer.json")["fixed"].clone())
}

/// Bytes from hex.
pub fn hex(text: &str) -> Vec<u8> {
    let text = text.trim_start_matches("0x");
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex")).collect()
}

/// What confirm needs for one built pairing, from its vector file: the seller's document (advertising H of `atr`),
/// the ATR its link serves, the payer's account, the buyer's inputs, the time, and the keys that sign.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub id: &'static str,
    pub doc: Value,
    pub atr: Vec<u8>,
    pub account: String,
    pub inputs: Map<String, Value>,
    pub now: u64,
    pub payer_key: String,
    /// The key that signs EIP-712 `Voucher` requests (a batch channel's payer authorizer), where it differs.
    pub voucher_key: Option<String>,
    /// The B6 payment of the file, where it has one: a signed payment whose bound reads H(`atr`).
    pub presented: Option<Value>,
}

impl Fixture {
    pub fn pairing(&self) -> &'static dyn Pairing {
        terms::pairing(self.id).expect("a built pairing")
    }

    /// The link the document names.
    pub fn link(&self) -> String {
        self.pairing().read(&self.doc).expect("the fixture document reads").link
    }

    /// The gate options: the fixture's clock and inputs, counting payment ids.
    pub fn options(&self) -> terms::Options {
        terms::Options::new()
            .clock(terms::FixedClock(self.now))
            .ids(terms::CountingIds::default())
            .inputs(self.inputs.clone())
    }

    /// A signer with the fixture's keys that counts what it is handed.
    pub fn signer(&self) -> CountingSigner {
        CountingSigner::new(&self.payer_key, self.voucher_key.as_deref(), &self.account)
    }
}

/// The buyer row `name` (`B2`, `B6`) of a pairing, in whichever vector file has it.
fn buyer_row(id: &str, name: &str) -> Option<(&'static Value, &'static Value)> {
    vector_files().iter().find_map(|(_, file)| {
        let row = file["buyer"]["rows"].as_array()?.iter().find(|r| r["name"] == name && r["pairing"] == id)?;
        Some((file, row))
    })
}

/// Every byte string a file writes in hex, anywhere: among them the ATR whose hash its documents advertise, where
/// that is not "abc" (`fixed.A`, an `atrHex`, a check row's `bytesHex`).
fn hex_strings(value: &Value, out: &mut Vec<Vec<u8>>) {
    match value {
        Value::Object(map) => map.values().for_each(|v| hex_strings(v, out)),
        Value::Array(items) => items.iter().for_each(|v| hex_strings(v, out)),
        Value::String(text) => {
            let digits = text.strip_prefix("0x").unwrap_or(text);
            if !digits.is_empty() && digits.len() % 2 == 0 && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.push(hex(digits));
            }
        }
        _ => {}
    }
}

/// The agreement URL named beside every link a document names (`legalContextUrl` or `legal_context_url`, in the
/// same spelling), in the document, in JSON text it holds (a card offer), and in an MPP challenge's `opaque` legal
/// context (base64url JSON).
fn name_agreement_url(value: &mut Value, url: &Value) {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    match value {
        Value::Object(map) => {
            for (link, agreement) in
                [("legalContextUrl", "legalContextAgreementUrl"), ("legal_context_url", "legal_context_agreement_url")]
            {
                if map.contains_key(link) && !map.contains_key(agreement) {
                    map.insert(agreement.to_owned(), url.clone());
                }
            }
            let opaque = map.get("opaque").and_then(Value::as_str).and_then(|o| b64.decode(o).ok());
            if let Some(mut legal) = opaque.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok()) {
                name_agreement_url(&mut legal, url);
                map.insert("opaque".to_owned(), Value::String(b64.encode(legal.to_string())));
            }
            map.values_mut().filter(|v| !v.is_string()).for_each(|v| name_agreement_url(v, url));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| name_agreement_url(v, url)),
        Value::String(text) => {
            if let Ok(mut inner @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
                name_agreement_url(&mut inner, url);
                *text = inner.to_string();
            }
        }
        _ => {}
    }
}

/// A key that signs EIP-712 requests for the files that name no EVM payer key (the signer then answers with the
/// wrong signature for the pairing's own rail: the fuzzer still reaches every decline after the signer).
const STAND_IN_KEY: &str = "0x4c0883a69102937d6231471b5decb7e4ea7ef5e7c7a5b5c7d0c3b7b8f4b0d1e2";

/// Every built pairing's fixture, in registry order, from its vector file's plant row (B2: the seller's document,
/// the account, the inputs) and the ATR whose hash that document advertises. Panics (a crash the fuzzer reports at
/// once) when a pairing this build has has no plant row in tests/vectors, so a new family cannot go unfuzzed.
pub fn fixtures() -> &'static [Fixture] {
    static ALL: OnceLock<Vec<Fixture>> = OnceLock::new();
    ALL.get_or_init(|| {
        let agreement_url = buyer()["agreement"]["url"].clone();
        let mut all = Vec::new();
        for id in terms::built_ids() {
            let (file, row) = buyer_row(id, "B2").unwrap_or_else(|| panic!("no vector file has a B2 row for {id}"));
            let input = &row["input"];
            let mut doc = input["doc"].clone();
            let pairing = terms::pairing(id).expect("a built pairing");
            // A document the pairing no longer reads (a file older than the reference's rules) still seeds `choose`,
            // whose documents are fuzzed; `confirmed` leaves it out and says so.
            let read = pairing.read(&doc).ok().map(|read| (read.h, read.agreement.is_some()));
            if !pairing.public_proof() && read.is_some_and(|(_, agreement)| !agreement) {
                // An offer whose payment is no public proof needs an agreement URL beside the link.
                name_agreement_url(&mut doc, &agreement_url);
            }
            // Most files advertise SHA-256("abc") (B2 plants "abd"); others write their ATR in hex somewhere.
            let mut atrs = vec![b"abc".to_vec()];
            hex_strings(file, &mut atrs);
            let atr = match read {
                Some((h, _)) => atrs
                    .into_iter()
                    .find(|a| terms::atr_hash(a) == h)
                    .unwrap_or_else(|| panic!("{id}: no ATR of the file has the advertised hash")),
                None => b"abc".to_vec(),
            };
            let fixed = &file["fixed"];
            let key = |v: &Value| v.as_str().filter(|k| k.len() == 66 && k.starts_with("0x")).map(str::to_owned);
            let evm = &fixed["evm"];
            let payer_key = key(&evm["payerKey"]).or_else(|| key(&fixed["payerKey"]));
            let now = input["now"].as_u64().or_else(|| fixed["now"].as_u64()).unwrap_or(1_790_000_000);
            all.push(Fixture {
                id,
                doc,
                atr,
                account: input["account"].as_str().expect("account").to_owned(),
                inputs: input["inputs"].as_object().cloned().unwrap_or_default(),
                now,
                payer_key: payer_key.unwrap_or_else(|| STAND_IN_KEY.to_owned()),
                voucher_key: key(&evm["payerAuthorizerKey"]),
                presented: buyer_row(id, "B6").map(|(_, r)| r["input"]["presented"].clone()),
            });
        }
        all
    })
}

/// The fixture of a pairing.
pub fn fixture(id: &str) -> &'static Fixture {
    fixtures().iter().find(|f| f.id == id).expect("a fixture")
}

/// The agreement payment buyer.json's 402 offers, approved as the gate would hand it over.
pub fn approved_agreement() -> terms::AgreementPayment {
    let a = &buyer()["agreement"];
    terms::AgreementPayment {
        url: a["url"].as_str().unwrap().to_owned(),
        option: a["option"].clone(),
        required: a["required"].clone(),
    }
}

/// buyer.json's ATR A, the one its agreement fixtures are for.
pub fn buyer_atr() -> Vec<u8> {
    hex(buyer()["A"].as_str().unwrap())
}

/// A signer with buyer.json's payer key and account.
pub fn buyer_signer() -> CountingSigner {
    CountingSigner::new(buyer()["payerKey"].as_str().unwrap(), None, buyer()["account"].as_str().unwrap())
}

// ---------------------------------------------------------------------------------------------------------------
// The fetch.

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, headers and the body in chunks.
    Answer { status: u16, headers: Vec<(String, String)>, chunks: Vec<Bytes> },
    /// A transport error.
    Reject,
    /// Never answers.
    Never,
    /// Status and headers, then these chunks, then the body stalls forever.
    Stall { status: u16, headers: Vec<(String, String)>, chunks: Vec<Bytes> },
}

impl Reply {
    pub fn ok(body: impl Into<Bytes>) -> Self {
        Self::Answer { status: 200, headers: Vec::new(), chunks: vec![body.into()] }
    }

    /// One answer read from a part of the fuzz input, in an HTTP-like text form:
    ///
    /// ```text
    /// <status line>\n<name>: <value>\n...\n\n<body>
    /// ```
    ///
    /// The status line is `R` (a transport error), `N` (no answer ever), `S<digits>` (that status, then the body's
    /// first chunk, then a stall), or the status digits. A header named `PAYMENT-REQUIRED-JSON` is sent as
    /// `PAYMENT-REQUIRED` with its value base64-encoded, so the fuzzer can mutate the JSON itself. The byte `0xFE`
    /// in the body splits it into chunks.
    pub fn from_fuzz(part: &[u8]) -> Self {
        let (head, body) = match part.windows(2).position(|w| w == b"\n\n") {
            Some(i) => (&part[..i], &part[i + 2..]),
            None => (part, &[][..]),
        };
        let head = String::from_utf8_lossy(head);
        let mut lines = head.split('\n');
        let status_line = lines.next().unwrap_or("").trim();
        let mut headers = Vec::new();
        for line in lines {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.strip_prefix(' ').unwrap_or(value);
            if name.eq_ignore_ascii_case("payment-required-json") {
                headers.push(("PAYMENT-REQUIRED".to_owned(), b64_encode(value.as_bytes())));
            } else {
                headers.push((name.to_owned(), value.to_owned()));
            }
        }
        let chunks: Vec<Bytes> = body.split(|b| *b == 0xFE).map(Bytes::copy_from_slice).collect();
        let status = |s: &str| s.parse::<u16>().unwrap_or(200);
        match status_line {
            "R" => Self::Reject,
            "N" => Self::Never,
            s if s.starts_with('S') => {
                Self::Stall { status: status(&s[1..]), headers, chunks: chunks.into_iter().take(1).collect() }
            }
            s => Self::Answer { status: status(s), headers, chunks },
        }
    }

    /// The fuzz form of an answer: the inverse of [`Reply::from_fuzz`] for a one-chunk body.
    pub fn to_fuzz(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        let mut out = status.as_bytes().to_vec();
        for (n, v) in headers {
            out.extend_from_slice(format!("\n{n}: {v}").as_bytes());
        }
        out.extend_from_slice(b"\n\n");
        out.extend_from_slice(body);
        out
    }
}

/// A request the fetch was asked.
#[derive(Debug, Clone)]
pub struct Asked {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

impl Asked {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An in-memory fetch answering every URL from one script in order; past its end it answers `after`.
#[derive(Clone)]
pub struct FuzzFetch {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    after: Reply,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl FuzzFetch {
    pub fn new(replies: Vec<Reply>, after: Reply) -> Self {
        Self { replies: Arc::new(Mutex::new(replies.into())), after, asked: Arc::default() }
    }

    /// Serves these bytes with 200 to every request.
    pub fn serving(bytes: &[u8]) -> Self {
        Self::new(Vec::new(), Reply::ok(Bytes::copy_from_slice(bytes)))
    }

    pub fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

struct Chunks {
    chunks: VecDeque<Bytes>,
    stalls: bool,
}

impl Stream for Chunks {
    type Item = Result<Bytes, FetchError>;
    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.chunks.pop_front() {
            Some(c) => Poll::Ready(Some(Ok(c))),
            None if self.stalls => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

impl Fetch for FuzzFetch {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        self.asked.lock().unwrap().push(Asked {
            url: request.url.to_owned(),
            headers: request.headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
        });
        let reply = self.replies.lock().unwrap().pop_front().unwrap_or_else(|| self.after.clone());
        Box::pin(async move {
            match reply {
                Reply::Reject => Err(FetchError::new("rejected")),
                Reply::Never => std::future::pending().await,
                Reply::Answer { status, headers, chunks } => Ok(Response::new(
                    status,
                    headers,
                    Body::from_stream(Chunks { chunks: chunks.into(), stalls: false }),
                )),
                Reply::Stall { status, headers, chunks } => Ok(Response::new(
                    status,
                    headers,
                    Body::from_stream(Chunks { chunks: chunks.into(), stalls: true }),
                )),
            }
        })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The signer.

/// A signer that records every request and signs it with local keys (vouchers with the voucher key, where there is
/// one), or answers a fixed JSON value.
#[derive(Clone)]
pub struct CountingSigner {
    payer: Arc<LocalSigner>,
    voucher: Option<Arc<LocalSigner>>,
    account: String,
    answer: Option<Value>,
    calls: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<SigningRequest>>>,
}

/// The local signer of a key, made once per key for the whole run: a key's public point costs a scalar
/// multiplication, which each execution would otherwise pay again (the targets make a signer per input).
fn local_key(key: &str) -> Arc<LocalSigner> {
    static KEYS: OnceLock<Mutex<HashMap<String, Arc<LocalSigner>>>> = OnceLock::new();
    let mut keys = KEYS.get_or_init(Mutex::default).lock().unwrap();
    Arc::clone(keys.entry(key.to_owned()).or_insert_with(|| Arc::new(LocalSigner::from_hex(key, 1).expect("key"))))
}

impl CountingSigner {
    pub fn new(key: &str, voucher_key: Option<&str>, account: &str) -> Self {
        Self {
            payer: local_key(key),
            voucher: voucher_key.map(local_key),
            account: account.to_owned(),
            answer: None,
            calls: Arc::default(),
            requests: Arc::default(),
        }
    }

    /// Answers every request with this JSON instead of signing.
    pub fn answering(mut self, answer: Value) -> Self {
        self.answer = Some(answer);
        self
    }

    pub fn count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<SigningRequest> {
        self.requests.lock().unwrap().clone()
    }

    fn sign_one(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::Batch { requests } => {
                requests.iter().map(|r| self.sign_one(r)).collect::<Result<Vec<_>, _>>().map(Value::Array)
            }
            SigningRequest::Eip712 { typed_data } => {
                let key = match &self.voucher {
                    Some(v) if typed_data.primary_type == "Voucher" => v,
                    _ => &self.payer,
                };
                let digest = typed_data.signing_hash().ok_or_else(|| SignerError::new("typed data does not hash"))?;
                key.sign_digest(&digest.0).map(Value::String)
            }
            // A delegation of the answer's form (the unsigned ERC-7710 level reads H from the echoed legal context).
            SigningRequest::Erc7710(_) => Ok(json!({
                "delegationManager": "0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3",
                "permissionContext": format!("0x{}", "00".repeat(64)),
                "delegator": self.payer.address().to_checksum(None),
            })),
            other => Err(SignerError::new(format!("does not sign {}", other.kind()))),
        }
    }
}

impl Signer for CountingSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.requests.lock().unwrap().push(request.clone());
        let answer = match &self.answer {
            Some(a) => Ok(Answer::new(a.clone())),
            None => self.sign_one(request).map(Answer::new),
        };
        Box::pin(async move { answer })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Values made once from the fixtures.

/// Every built pairing confirmed once from its fixture (the link serving the fixture's ATR). A fixture whose plant
/// row no longer confirms (a vector file older than the reference's rules) is left out and named on stderr, once.
pub fn confirmed() -> &'static [(&'static Fixture, terms::Confirmed)] {
    static ALL: OnceLock<Vec<(&'static Fixture, terms::Confirmed)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let rt = paused();
        fixtures()
            .iter()
            .filter_map(|f| {
                let fetch = FuzzFetch::serving(&f.atr);
                match rt.block_on(terms::confirm(&f.doc, f.pairing(), &f.account, &fetch, &f.options())) {
                    Ok(c) => Some((f, c)),
                    Err(d) => {
                        eprintln!(
                            "{}: its plant row does not confirm ({:?}: {}); not fuzzed here",
                            f.id, d.code, d.detail
                        );
                        None
                    }
                }
            })
            .collect()
    })
}

/// The batch-settlement pairing on EIP-155, whose fixture [`real_hold`] opens.
pub const CHANNEL: &str = "x402/batch-settlement/eip155";

/// The batch-settlement fixture's hold: the opening transact signs, kept by open_channel, with a first charge of
/// 1000 recorded.
pub fn real_hold() -> &'static terms::ChannelHold {
    static HOLD: OnceLock<terms::ChannelHold> = OnceLock::new();
    HOLD.get_or_init(|| {
        let f = fixture(CHANNEL);
        let fetch = FuzzFetch::serving(&f.atr);
        let t = paused()
            .block_on(terms::transact(&f.doc, f.pairing(), &f.signer(), &fetch, &f.options()))
            .expect("the fixture opens a channel");
        let terms::TransactOutcome::Signed(t) = t else { panic!("not signed") };
        let opening = t.signed.expect("an opening").to_value();
        let hold = terms::open_channel(&f.atr, &opening, f.pairing(), t.landed.as_ref()).expect("held");
        terms::record_charge(&hold, "1000").expect("recorded")
    })
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
