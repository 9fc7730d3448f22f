//! The worlds the socket tests pay in: buyer.json's seller with its ATR served by one loopback server and its
//! agreement URL by another (the main payment's pairing stubbed to carry no public proof, as buyer.json's BA rows
//! are), or the ATR alone for the plain public-proof pairing; the answers those servers give; and the checks every
//! exchange must pass.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use terms::json::{parse, to_js_string};
use terms::x402::evm::eip3009;
use terms::{
    DeclineCode, Declined, MAX_ATR_BYTES, Options, Pairing, Signer, SigningRequest, ToApprove, TransactOutcome,
    atr_hash, transact,
};
use tokio::time::Instant;

use super::net::{Act, Loopback, Net, Seen, Server};
use super::{Buyer, CountingSigner, Stub, link_of, message_of};

pub const ATR_HOST: &str = "atr.seller.example";
pub const API_HOST: &str = "api.seller.example";

pub const NOT_RECORDED: &str = "The agreement payment was sent and is not yet recorded.";
pub const UNREACHED: &str = "The agreement URL could not be reached.";
pub const TOO_LARGE_RECEIPT: &str = "The agreement receipt is larger than 64 KiB.";
pub const NOT_A_RECEIPT: &str = "The agreement URL answered 200 without a JSON receipt.";
pub const ATR_UNFETCHED: &str = "The ATR could not be fetched from the link.";
pub const NOT_IDENTITY: &str = "The link served a content coding other than identity.";
pub const AGREEMENT_NOT_IDENTITY: &str = "The agreement URL served a content coding other than identity.";
pub const MISMATCH: &str = "The bytes the link served do not hash to the advertised ATR hash.";

/// The peak heap a call over a body capped at 1 MiB may take: the body once (its buffer grows to at most the cap),
/// hyper's read buffer and a chunk in flight. A gate that buffered a body past its cap (or inflated a gzip
/// bomb) goes over it.
pub const ATR_PEAK: u64 = 3 << 20;
/// The same for the agreement exchange, whose bodies are capped at 64 KiB.
pub const AGREEMENT_PEAK: u64 = 1 << 20;
/// The wall-clock bound of one call, against a hang. The exact virtual durations are the measure of time (a hold
/// that ran out would show there); this one only has to hold on two cores shared by several test processes, where
/// a 121-connection exchange took up to 5.4 s with eight of them running at once.
pub const REAL: Duration = Duration::from_secs(30);

pub fn too_large_atr() -> String {
    format!("The ATR is larger than {MAX_ATR_BYTES} bytes.")
}

pub fn eip3009() -> &'static dyn Pairing {
    terms::pairing(eip3009::ID).expect("built")
}

/// The main payment's pairing: EIP-3009 with `public_proof` false and the agreement URL in its read.
pub fn no_proof(url: &str) -> Stub {
    Stub { public_proof: Some(false), agreement: Some(url.to_owned()), ..Stub::of(eip3009()) }
}

// ---------------------------------------------------------------------------------------------------------------
// The world of a family's own pairing that carries no public proof (a card, a checkout, a Lightning payment): the ATR
// server, the agreement server answering 402, 202 and the receipt, and buyer.json's signer paying the agreement.

pub struct Agreeing {
    pub b: Buyer,
    pub atr: Server,
    pub api: Server,
    pub fetch: Loopback,
    pub agreeing: CountingSigner,
}

impl Agreeing {
    pub async fn new() -> Self {
        let b = Buyer::load();
        let net = Net::new();
        let atr = Server::repeating(&net, vec![Act::ok(b.a())]).await;
        let api = Server::start(&net, vec![challenge(&b), accepted("2"), receipt(&b)]).await;
        let fetch = Loopback::new(&net).route(ATR_HOST, &atr).route(API_HOST, &api);
        assert!(link_of(&b.doc()).starts_with(&format!("https://{ATR_HOST}/")));
        assert!(b.agreement("url").as_str().unwrap().starts_with(&format!("https://{API_HOST}/")));
        let agreeing = b.signer();
        Self { b, atr, api, fetch, agreeing }
    }

    /// buyer.json's options with the agreement's signer and the main payment's inputs.
    pub fn options(&self, inputs: &Value) -> Options {
        let options = self.b.options().agreement_signer(Arc::new(self.agreeing.clone()));
        options.inputs(inputs.as_object().cloned().unwrap_or_default())
    }

    /// Both calls: the agreement payment handed back for approval (neither signer asked: `asked` counts what the
    /// main payment's signer was asked), then paid.
    pub async fn pay(
        &self,
        doc: &Value,
        pairing: &dyn Pairing,
        payer: &dyn Signer,
        inputs: &Value,
        asked: impl Fn() -> usize,
    ) -> Result<TransactOutcome, Declined> {
        let first = transact(doc, pairing, payer, &self.fetch, &self.options(inputs)).await;
        let Ok(TransactOutcome::ToApprove(t)) = first else { panic!("expected an approval, got {first:?}") };
        assert_eq!(t.approve.option, self.b.agreement("option"));
        assert_eq!((self.agreeing.count(), asked()), (0, 0), "asked before approval");
        assert_eq!(t.h, atr_hash(&self.b.a()));
        transact(doc, pairing, payer, &self.fetch, &self.options(inputs).approved(t.approve)).await
    }

    /// The agreement was paid once: one EIP-3009 signature, sent to the agreement URL twice (402, 202, receipt).
    pub fn assert_agreement_paid(&self) {
        let kinds: Vec<&str> = self.agreeing.calls().iter().map(SigningRequest::kind).collect();
        assert_eq!(kinds, vec!["eip712"]);
        let paid: Vec<_> = self.api.seen().into_iter().filter(|s| s.header("payment-signature").is_some()).collect();
        assert_eq!(paid.len(), 2, "paid agreement requests");
        assert_eq!(paid[0].header("payment-signature"), paid[1].header("payment-signature"), "re-signed");
        assert!(self.atr.count() >= 1);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The world: an ATR server, the agreement server, the fetch, the signer.

pub struct World {
    pub b: Buyer,
    pub net: Arc<Net>,
    pub atr: Server,
    pub api: Server,
    pub fetch: Loopback,
    pub signer: CountingSigner,
    pub pairing: Stub,
    pub url: String,
    /// When the second (approved) call started.
    pub start: Instant,
}

impl World {
    /// The ATR server serving A forever, and the agreement server answering `acts` (the last one forever when
    /// `repeat`), both routed for the gate.
    pub async fn new(acts: Vec<Act>, repeat: bool) -> Self {
        Self::with(acts, repeat, |_, f| f).await
    }

    pub async fn with(acts: Vec<Act>, repeat: bool, route: impl FnOnce(&Arc<Net>, Loopback) -> Loopback) -> Self {
        let b = Buyer::load();
        let net = Net::new();
        let atr = Server::repeating(&net, vec![Act::ok(b.a())]).await;
        let api = if repeat { Server::repeating(&net, acts).await } else { Server::start(&net, acts).await };
        let fetch = route(&net, Loopback::new(&net).route(ATR_HOST, &atr).route(API_HOST, &api));
        let url = b.agreement("url").as_str().unwrap().to_owned();
        assert!(url.starts_with(&format!("https://{API_HOST}/")));
        assert!(link_of(&b.doc()).starts_with(&format!("https://{ATR_HOST}/")));
        let signer = b.signer();
        Self { b, net, atr, api, fetch, signer, pairing: no_proof(&url), url, start: Instant::now() }
    }

    pub async fn transact_with(&self, signer: &dyn Signer, options: &Options) -> Result<TransactOutcome, Declined> {
        transact(&self.b.doc(), &self.pairing, signer, &self.fetch, options).await
    }

    /// The first call: one unpaid request answered 402, the payment handed back for approval, nothing signed.
    pub async fn to_approve(&self) -> ToApprove {
        let got = self.transact_with(&self.signer, &self.b.options()).await;
        let Ok(TransactOutcome::ToApprove(t)) = got else { panic!("expected an approval, got {got:?}") };
        assert_eq!(self.signer.count(), 0, "signed before approval");
        assert_eq!(self.api.count(), 1, "unpaid requests");
        assert_eq!(t.approve.option, self.b.agreement("option"));
        assert_eq!(t.approve.url, self.url);
        t
    }

    /// Both calls: approval, then the approved payment with these options added.
    pub async fn pay_with(&mut self, add: impl FnOnce(Options) -> Options) -> Result<TransactOutcome, Declined> {
        let t = self.to_approve().await;
        self.start = Instant::now();
        let options = add(self.b.options().approved(t.approve));
        self.transact_with(&self.signer, &options).await
    }

    pub async fn pay(&mut self) -> Result<TransactOutcome, Declined> {
        self.pay_with(|o| o).await
    }

    /// The requests to the agreement URL that carried a payment.
    pub fn paid(&self) -> Vec<Seen> {
        self.api.seen().into_iter().filter(|s| s.header("payment-signature").is_some()).collect()
    }

    /// When each paid request arrived, in seconds after the approved call started.
    pub fn paid_at(&self) -> Vec<f64> {
        self.paid().iter().map(|s| (s.at - self.start).as_secs_f64()).collect()
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Every request, to either server, asked for the identity coding; only paid requests carry a payment.
    pub fn assert_request_headers(&self) {
        for seen in self.api.seen().iter().chain(self.atr.seen().iter()) {
            assert_eq!(seen.header("accept-encoding"), Some("identity"), "{}", seen.line);
        }
        for seen in self.atr.seen() {
            assert_eq!(seen.header("payment-signature"), None);
        }
    }

    /// The signer's one call was the agreement payment's.
    pub fn assert_one_agreement_call(&self) {
        let calls = self.signer.calls();
        assert_eq!(calls.len(), 1, "signer calls");
        assert_eq!(message_of(&calls[0])["value"], self.b.agreement("option")["amount"], "not the agreement");
    }

    /// After sending: one signer call (the agreement's, never the main payment), the decline as given, and `moved`
    /// holding the very payment the server received in each of `paid` identical requests.
    pub fn assert_kept(&self, got: &Result<TransactOutcome, Declined>, code: DeclineCode, detail: &str, paid: usize) {
        let Err(d) = got else { panic!("expected {code}, got {got:?}") };
        assert_eq!((d.code, d.detail.as_str()), (code, detail), "decline");
        self.assert_one_agreement_call();
        self.assert_request_headers();
        let moved = d.moved.as_ref().expect("the sent payment is kept");
        assert_eq!(moved.bytes, self.b.a());
        assert_eq!(moved.h, atr_hash(&self.b.a()));
        assert_eq!(eip3009().bound(&moved.signed, None).unwrap(), moved.h, "not the agreement payment");
        assert_eq!(moved.signed["accepted"], self.b.agreement("option"));
        let sent = b64_encode(to_js_string(&moved.signed).unwrap().as_bytes());
        let received: Vec<String> =
            self.paid().iter().map(|s| s.header("payment-signature").unwrap().to_owned()).collect();
        assert_eq!(received.len(), paid, "paid requests");
        for header in &received {
            assert_eq!(header, &sent, "the server received another payment");
            let decoded = parse(&String::from_utf8(b64_decode(header).unwrap()).unwrap()).unwrap();
            assert_eq!(decoded, moved.signed);
        }
    }

    /// Before sending: no payment left, the decline as given, the signer called `signs` times (0, or 1 for the
    /// agreement).
    pub fn assert_unsent(
        &self,
        got: &Result<TransactOutcome, Declined>,
        code: DeclineCode,
        detail: &str,
        signs: usize,
    ) {
        let Err(d) = got else { panic!("expected {code}, got {got:?}") };
        assert_eq!((d.code, d.detail.as_str()), (code, detail), "decline");
        assert!(d.moved.is_none(), "moved: {:?}", d.moved);
        assert!(self.paid().is_empty(), "a payment was sent");
        if signs == 0 {
            assert_eq!(self.signer.count(), 0);
        } else {
            self.assert_one_agreement_call();
        }
        self.assert_request_headers();
    }

    /// The receipt in hand: two signer calls, the agreement's then the main payment's, and `paid` identical paid
    /// requests.
    pub fn assert_agreed(&self, got: &Result<TransactOutcome, Declined>, paid: usize) {
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        let receipt = serde_json::to_value(t.agreement.as_ref().expect("receipt")).unwrap();
        assert_eq!(receipt, self.b.agreement("receipt"));
        let calls = self.signer.calls();
        assert_eq!(calls.len(), 2, "signer calls");
        assert_eq!(message_of(&calls[0])["value"], self.b.agreement("option")["amount"]);
        assert_eq!(message_of(&calls[1])["value"], self.b.doc()["accepts"][0]["amount"]);
        assert_eq!(t.signed.as_ref().unwrap().to_value()["payload"]["authorization"]["nonce"], json!(t.h.to_hex()));
        let paid_requests = self.paid();
        assert_eq!(paid_requests.len(), paid, "paid requests");
        let first = paid_requests[0].header("payment-signature");
        assert!(paid_requests.iter().all(|s| s.header("payment-signature") == first), "re-signed");
        self.assert_request_headers();
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Answers.

pub fn required_text(b: &Buyer) -> String {
    to_js_string(&b.agreement("required")).unwrap()
}

/// 402 with the fixture's challenge.
pub fn challenge(b: &Buyer) -> Act {
    Act::status(402).header("PAYMENT-REQUIRED", &b64_encode(required_text(b).as_bytes()))
}

pub fn json_body(v: &Value) -> Vec<u8> {
    to_js_string(v).unwrap().into_bytes()
}

/// 200 with the fixture's receipt.
pub fn receipt(b: &Buyer) -> Act {
    Act::ok(json_body(&b.agreement("receipt"))).header("Content-Type", "application/json")
}

pub fn accepted(retry_after: &str) -> Act {
    Act::status(202).header("Retry-After", retry_after)
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The receipt, padded with spaces inside the object to exactly `len` bytes.
pub fn padded_receipt(b: &Buyer, len: usize) -> Vec<u8> {
    let text = to_js_string(&b.agreement("receipt")).unwrap();
    let pad = len - text.len();
    format!("{}{}{}", &text[..text.len() - 1], " ".repeat(pad), "}").into_bytes()
}

/// Seconds as whole milliseconds, to compare exactly.
pub fn millis(v: &[f64]) -> Vec<u64> {
    v.iter().map(|s| (s * 1000.0).round() as u64).collect()
}

// ---------------------------------------------------------------------------------------------------------------
// The ATR alone: the plain (public proof) pairing, its link served by one server.

/// buyer.json's payer paying `doc` with `x402/exact/eip155/eip3009`, the link served by `atr`.
pub struct Atr {
    pub b: Buyer,
    pub net: Arc<Net>,
    pub atr: Server,
    pub fetch: Loopback,
    pub signer: CountingSigner,
    pub doc: Value,
}

impl Atr {
    /// The link's server answering `act` once.
    pub async fn new(doc: Value, act: Act) -> Self {
        Self::with(doc, act, |_, f| f).await
    }

    pub async fn with(doc: Value, act: Act, route: impl FnOnce(&Arc<Net>, Loopback) -> Loopback) -> Self {
        let b = Buyer::load();
        let net = Net::new();
        let atr = Server::start(&net, vec![act]).await;
        let fetch = route(&net, Loopback::new(&net).route(ATR_HOST, &atr));
        let signer = b.signer();
        assert!(link_of(&doc).starts_with(&format!("https://{ATR_HOST}/")));
        Self { b, net, atr, fetch, signer, doc }
    }

    /// One `transact`.
    pub async fn transact(&self) -> Result<TransactOutcome, Declined> {
        transact(&self.doc, eip3009(), &self.signer, &self.fetch, &self.b.options()).await
    }

    /// One GET of the link, asking for the identity coding, and nothing after the script.
    fn assert_one_get(&self) {
        assert_eq!(self.atr.count(), 1, "one GET of the link");
        assert_eq!(self.atr.connections(), 1, "one connection");
        assert_eq!(self.atr.overruns(), 0);
        assert_eq!(self.atr.seen()[0].header("accept-encoding"), Some("identity"));
    }

    /// Declined as given, nothing signed, one GET.
    pub fn declined(&self, got: &Result<TransactOutcome, Declined>, code: DeclineCode, detail: &str) {
        let Err(d) = got else { panic!("expected {code}, got {}", summary(got)) };
        assert_eq!((d.code, d.detail.as_str()), (code, detail));
        assert!(d.moved.is_none());
        assert_eq!(self.signer.count(), 0, "signed before the comparison");
        self.assert_one_get();
    }

    /// Paid for exactly `bytes`: one signer call, whose nonce is their hash.
    pub fn paid_for(&self, got: &Result<TransactOutcome, Declined>, bytes: &[u8]) {
        let Ok(TransactOutcome::Signed(t)) = got else { panic!("expected a payment, got {}", summary(got)) };
        assert!(t.bytes == bytes, "paid for {} other bytes", t.bytes.len());
        assert_eq!(t.h, atr_hash(bytes));
        assert_eq!(
            t.signed.as_ref().unwrap().to_value()["payload"]["authorization"]["nonce"],
            json!(atr_hash(bytes).to_hex())
        );
        assert_eq!(self.signer.count(), 1, "signer calls");
        self.assert_one_get();
    }

    /// The body bytes the gate was handed.
    pub fn handed(&self) -> usize {
        let handed = self.net.handed();
        assert_eq!(handed.len(), 1, "requests");
        handed[0]
    }
}

/// A transaction's outcome in a line: its bodies can be a MiB long.
pub fn summary(got: &Result<TransactOutcome, Declined>) -> String {
    match got {
        Ok(TransactOutcome::Signed(t)) => format!("a payment for {} bytes hashing to {}", t.bytes.len(), t.h.to_hex()),
        Ok(TransactOutcome::ToApprove(t)) => format!("an agreement payment to approve at {}", t.approve.url),
        Err(d) => format!("{} {:?} (moved: {})", d.code, d.detail, d.moved.is_some()),
        Ok(_) => "another transaction".to_owned(),
    }
}

/// A JSON object of exactly `len` bytes: `{`, spaces, `}`.
pub fn mib_body(len: usize) -> Vec<u8> {
    let mut body = vec![b' '; len];
    body[0] = b'{';
    body[len - 1] = b'}';
    body
}

/// buyer.json's document advertising the hash of `bytes`.
pub fn advertising(bytes: &[u8]) -> Value {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["legalContext"]["info"]["value"] = json!(atr_hash(bytes).to_hex());
    doc
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The bytes of canonical padded standard base64; `None` for anything else.
fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()?;
    (b64_encode(&bytes) == text).then_some(bytes)
}
