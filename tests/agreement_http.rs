//! The agreement exchange, and the ATR fetch, against real HTTP/1.1 servers on loopback, through the real
//! `HttpFetch` (plain HTTP: the [`Loopback`] fetch sends the gate's `https://<test host>/...` requests to
//! `http://127.0.0.1:<port>/...`). The main payment's pairing is `x402/exact/eip155/eip3009` stubbed to carry no
//! public proof and to name the agreement URL, as buyer.json's BA rows do.
//!
//! Every case asserts the exchange's promises: the signer is called at most once for the agreement, the main
//! payment is never signed without a receipt, and once the agreement payment is sent nothing is lost: the decline
//! carries it as `moved`, and its base64 JSON is byte for byte the `PAYMENT-SIGNATURE` the server received, every
//! time. Waits run on tokio's paused clock with the servers in the same current-thread runtime (see
//! `support/net.rs` for why that is exact and reliable); times are the runtime's virtual seconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::net::{Act, Loopback, Net, Payload, Seen, Server};
use support::{Buyer, CountingSigner, link_of, message_of, paused};
use terms::codec::{b64_decode, b64_encode};
use terms::json::{parse, to_js_string};
use terms::pairing::{Advertised, ChooseContext, Chosen, Unsigned};
use terms::signer::BoxFuture;
use terms::x402::eip155::eip3009;
use terms::{
    AtrHash, CancellationToken, DeclineCode, Declined, MAX_ATR_BYTES, Options, Pairing, Refusal, Signature, Signer,
    SignerError, SigningRequest, ToApprove, Transaction, atr_hash, transact,
};
use tokio::time::Instant;

const ATR_HOST: &str = "atr.seller.example";
const API_HOST: &str = "api.seller.example";

const ENDED_BEFORE: &str = "The caller's signal ended the agreement exchange before the payment was sent.";
const ENDED_AFTER: &str = "The caller's signal ended the exchange after the agreement payment was sent.";
const NOT_RECORDED: &str = "The agreement payment was sent and is not yet recorded.";
const UNREADABLE_402: &str = "The agreement URL answered 402 without a readable PAYMENT-REQUIRED.";
const TOO_LARGE_RECEIPT: &str = "The agreement receipt is larger than 64 KiB.";

fn eip3009() -> &'static dyn Pairing {
    terms::pairing(eip3009::ID).expect("built")
}

/// The main payment's pairing: EIP-3009 with `public_proof` false and the agreement URL in its read.
#[derive(Debug)]
struct NoProof {
    url: String,
}

impl Pairing for NoProof {
    fn id(&self) -> &'static str {
        eip3009().id()
    }
    fn public_proof(&self) -> bool {
        false
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let mut read = eip3009().read(doc)?;
        read.agreement = Some(self.url.clone());
        Ok(read)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        eip3009().choose(read, ctx)
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        eip3009().build(chosen, atr, h)
    }
    fn bound(&self, presented: &Value, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        eip3009().bound(presented, landed)
    }
}

/// Signs as the counting signer, then ends the exchange: the payment is signed and never sent.
struct CancelOnSign {
    inner: CountingSigner,
    token: CancellationToken,
}

impl Signer for CancelOnSign {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Signature, SignerError>> {
        Box::pin(async move {
            let answer = self.inner.sign(request).await;
            self.token.cancel();
            answer
        })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The world: an ATR server, the agreement server, the fetch, the signer.

struct World {
    b: Buyer,
    atr: Server,
    api: Server,
    fetch: Loopback,
    signer: CountingSigner,
    pairing: NoProof,
    url: String,
    /// When the second (approved) call started.
    start: Instant,
}

impl World {
    /// The ATR server serving A forever, and the agreement server answering `acts` (the last one forever when
    /// `repeat`), both routed for the gate.
    async fn new(acts: Vec<Act>, repeat: bool) -> Self {
        Self::with(acts, repeat, |_, f| f).await
    }

    async fn with(acts: Vec<Act>, repeat: bool, route: impl FnOnce(&Arc<Net>, Loopback) -> Loopback) -> Self {
        let b = Buyer::load();
        let net = Net::new();
        let atr = Server::repeating(&net, vec![Act::ok(b.a())]).await;
        let api = if repeat { Server::repeating(&net, acts).await } else { Server::start(&net, acts).await };
        let fetch = route(&net, Loopback::new(&net).route(ATR_HOST, &atr).route(API_HOST, &api));
        let url = b.agreement("url").as_str().unwrap().to_owned();
        assert!(url.starts_with(&format!("https://{API_HOST}/")));
        assert!(link_of(&b.doc()).starts_with(&format!("https://{ATR_HOST}/")));
        let signer = b.signer();
        Self { b, atr, api, fetch, signer, pairing: NoProof { url: url.clone() }, url, start: Instant::now() }
    }

    async fn transact_with(&self, signer: &dyn Signer, options: &Options) -> Result<Transaction, Declined> {
        transact(&self.b.doc(), &self.pairing, signer, &self.fetch, options).await
    }

    /// The first call: one unpaid request answered 402, the payment handed back for approval, nothing signed.
    async fn to_approve(&self) -> ToApprove {
        let got = self.transact_with(&self.signer, &self.b.options()).await;
        let Ok(Transaction::ToApprove(t)) = got else { panic!("expected an approval, got {got:?}") };
        assert_eq!(self.signer.count(), 0, "signed before approval");
        assert_eq!(self.api.count(), 1, "unpaid requests");
        assert_eq!(t.approve.option, self.b.agreement("option"));
        assert_eq!(t.approve.url, self.url);
        t
    }

    /// Both calls: approval, then the approved payment with these options added.
    async fn pay_with(&mut self, add: impl FnOnce(Options) -> Options) -> Result<Transaction, Declined> {
        let t = self.to_approve().await;
        self.start = Instant::now();
        let options = add(self.b.options().approved(t.approve));
        self.transact_with(&self.signer, &options).await
    }

    async fn pay(&mut self) -> Result<Transaction, Declined> {
        self.pay_with(|o| o).await
    }

    /// The requests to the agreement URL that carried a payment.
    fn paid(&self) -> Vec<Seen> {
        self.api.seen().into_iter().filter(|s| s.header("payment-signature").is_some()).collect()
    }

    /// When each paid request arrived, in seconds after the approved call started.
    fn paid_at(&self) -> Vec<f64> {
        self.paid().iter().map(|s| (s.at - self.start).as_secs_f64()).collect()
    }

    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Every request, to either server, asked for the identity coding; only paid requests carry a payment.
    fn assert_request_headers(&self) {
        for seen in self.api.seen().iter().chain(self.atr.seen().iter()) {
            assert_eq!(seen.header("accept-encoding"), Some("identity"), "{}", seen.line);
        }
        for seen in self.atr.seen() {
            assert_eq!(seen.header("payment-signature"), None);
        }
    }

    /// The signer's one call was the agreement payment's.
    fn assert_one_agreement_call(&self) {
        let calls = self.signer.calls();
        assert_eq!(calls.len(), 1, "signer calls");
        assert_eq!(message_of(&calls[0])["value"], self.b.agreement("option")["amount"], "not the agreement");
    }

    /// After sending: one signer call (the agreement's, never the main payment), the decline as given, and `moved`
    /// holding the very payment the server received in each of `paid` identical requests.
    fn assert_kept(&self, got: &Result<Transaction, Declined>, code: DeclineCode, detail: &str, paid: usize) {
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
    fn assert_unsent(&self, got: &Result<Transaction, Declined>, code: DeclineCode, detail: &str, signs: usize) {
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
    fn assert_agreed(&self, got: &Result<Transaction, Declined>, paid: usize) {
        let Ok(Transaction::Signed(t)) = got else { panic!("expected a payment, got {got:?}") };
        let receipt = serde_json::to_value(t.agreement.as_ref().expect("receipt")).unwrap();
        assert_eq!(receipt, self.b.agreement("receipt"));
        let calls = self.signer.calls();
        assert_eq!(calls.len(), 2, "signer calls");
        assert_eq!(message_of(&calls[0])["value"], self.b.agreement("option")["amount"]);
        assert_eq!(message_of(&calls[1])["value"], self.b.doc()["accepts"][0]["amount"]);
        assert_eq!(t.signed.as_ref().unwrap()["payload"]["authorization"]["nonce"], json!(t.h.to_hex()));
        let paid_requests = self.paid();
        assert_eq!(paid_requests.len(), paid, "paid requests");
        let first = paid_requests[0].header("payment-signature");
        assert!(paid_requests.iter().all(|s| s.header("payment-signature") == first), "re-signed");
        self.assert_request_headers();
    }
}

/// Runs `body` on a fresh current-thread runtime with paused time.
fn on_paused<T>(body: impl std::future::Future<Output = T>) -> T {
    paused().block_on(body)
}

// ---------------------------------------------------------------------------------------------------------------
// Answers.

fn required_text(b: &Buyer) -> String {
    to_js_string(&b.agreement("required")).unwrap()
}

/// 402 with the fixture's challenge.
fn challenge(b: &Buyer) -> Act {
    Act::status(402).header("PAYMENT-REQUIRED", &b64_encode(required_text(b).as_bytes()))
}

fn json_body(v: &Value) -> Vec<u8> {
    to_js_string(v).unwrap().into_bytes()
}

/// 200 with the fixture's receipt.
fn receipt(b: &Buyer) -> Act {
    Act::ok(json_body(&b.agreement("receipt"))).header("Content-Type", "application/json")
}

fn accepted(retry_after: &str) -> Act {
    Act::status(202).header("Retry-After", retry_after)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The receipt, padded with spaces inside the object to exactly `len` bytes.
fn padded_receipt(b: &Buyer, len: usize) -> Vec<u8> {
    let text = to_js_string(&b.agreement("receipt")).unwrap();
    let pad = len - text.len();
    format!("{}{}{}", &text[..text.len() - 1], " ".repeat(pad), "}").into_bytes()
}

/// Seconds as whole milliseconds, to compare exactly.
fn millis(v: &[f64]) -> Vec<u64> {
    v.iter().map(|s| (s * 1000.0).round() as u64).collect()
}

// ---------------------------------------------------------------------------------------------------------------
// Transport faults after the payment is sent: each is read as no answer, and the same payment is sent again.

#[test]
fn connection_reset_mid_poll_then_receipt() {
    on_paused(async {
        let b = Buyer::load();
        let mid = Act::ResetMidBody {
            status: 200,
            headers: vec![],
            declared: json_body(&b.agreement("receipt")).len(),
            sent: json_body(&b.agreement("receipt"))[..20].to_vec(),
        };
        let mut w = World::new(vec![challenge(&b), Act::Reset, mid, receipt(&b)], false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 3);
        assert_eq!(millis(&w.paid_at()), vec![0, 2000, 4000]);
        assert_eq!(w.api.overruns(), 0);
    });
}

#[test]
fn connection_reset_on_every_poll_ends_pending_with_the_payment() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::Reset], true).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
        assert_eq!(w.elapsed(), Duration::from_secs(240));
    });
}

#[test]
fn unpaid_request_never_answered() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::Never], false).await;
        let start = Instant::now();
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, "The agreement URL could not be reached.", 0);
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        assert_eq!(w.api.count(), 1);
    });
}

/// The paid request's deadline is min(60, 120) + 70 = 130 s, then 2 s, then the rest of the 240 s window.
#[test]
fn paid_request_never_answered() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::Never], true).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 2);
        assert_eq!(millis(&w.paid_at()), vec![0, 132_000]);
        assert_eq!(w.elapsed(), Duration::from_secs(240));
    });
}

/// maxTimeoutSeconds 60: requests at 0, 2, ..., 238, pending at 240; the same bytes every time.
#[test]
fn endless_202() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), accepted("2")], true).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
        let want: Vec<u64> = (0..120).map(|i| i * 2000).collect();
        assert_eq!(millis(&w.paid_at()), want);
        assert_eq!(w.elapsed(), Duration::from_secs(240));
    });
}

/// Retry-After is 1 to 9 ASCII digits, at least 1; anything else waits 2 s.
#[test]
fn retry_after_values() {
    on_paused(async {
        let b = Buyer::load();
        let acts = vec![
            challenge(&b),
            accepted("0"),
            accepted("-1"),
            accepted("1.5"),
            accepted("Wed, 21 Oct 2015 07:28:00 GMT"),
            accepted("1234567890"),
            receipt(&b),
        ];
        let mut w = World::new(acts, false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 6);
        let at = millis(&w.paid_at());
        let waits: Vec<u64> = at.windows(2).map(|p| p[1] - p[0]).collect();
        assert_eq!(waits, vec![1000, 2000, 2000, 2000, 2000]);
    });
}

#[test]
fn server_error_storm_then_receipt() {
    on_paused(async {
        let b = Buyer::load();
        let acts = vec![
            challenge(&b),
            Act::status(500),
            Act::status(502),
            Act::status(503).header("Retry-After", "30"),
            Act::status(504),
            Act::status(599),
            receipt(&b),
        ];
        let mut w = World::new(acts, false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 6);
        assert_eq!(millis(&w.paid_at()), vec![0, 2000, 4000, 6000, 8000, 10_000]);
    });
}

#[test]
fn server_error_storm_to_the_end_of_the_window() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::status(503)], true).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 120);
        assert_eq!(w.elapsed(), Duration::from_secs(240));
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Answers to the payment that end the exchange: every one keeps the payment.

#[test]
fn oversize_receipt_declared_by_content_length() {
    on_paused(async {
        let b = Buyer::load();
        let big = Act::ok(padded_receipt(&b, 65_537));
        let mut w = World::new(vec![challenge(&b), big], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    });
}

/// The declared length alone declines it: the server sends no body byte, and the decline comes at once rather
/// than at the paid request's 130 s deadline.
#[test]
fn oversize_receipt_declared_and_never_sent() {
    on_paused(async {
        let b = Buyer::load();
        let big = Act::Stall { status: 200, headers: vec![], declared: 65_537, sent: vec![] };
        let mut w = World::new(vec![challenge(&b), big], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
        assert_eq!(w.elapsed(), Duration::ZERO);
    });
}

#[test]
fn oversize_receipt_streamed_without_length() {
    on_paused(async {
        let b = Buyer::load();
        let body = padded_receipt(&b, 65_537);
        let chunks = body.chunks(4096).map(<[u8]>::to_vec).collect();
        let big = Act::ok(vec![]).body(Payload::Chunked(chunks));
        let mut w = World::new(vec![challenge(&b), big], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    });
}

#[test]
fn receipt_of_exactly_64_kib_streamed_is_read() {
    on_paused(async {
        let b = Buyer::load();
        let body = padded_receipt(&b, 65_536);
        let chunks = body.chunks(4096).map(<[u8]>::to_vec).collect();
        let mut w = World::new(vec![challenge(&b), Act::ok(vec![]).body(Payload::Chunked(chunks))], false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 1);
    });
}

#[test]
fn receipt_for_another_h() {
    on_paused(async {
        let b = Buyer::load();
        let other = Act::ok(json_body(&b.agreement("receiptOtherHash")));
        let mut w = World::new(vec![challenge(&b), other], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, "The agreement receipt names another ATR hash.", 1);
    });
}

#[test]
fn receipt_agreed_as_a_string() {
    on_paused(async {
        let b = Buyer::load();
        let mut r = b.agreement("receipt");
        r["agreed"] = json!("true");
        let mut w = World::new(vec![challenge(&b), Act::ok(json_body(&r))], false).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, "The agreement receipt is not a recorded agreement.", 1);
    });
}

/// A 302 to the payment is a status like any other; the Location, a second server, is never asked.
#[test]
fn redirect_on_the_paid_request() {
    on_paused(async {
        let b = Buyer::load();
        let net = Net::new();
        let elsewhere = Server::start(&net, vec![receipt(&b)]).await;
        let location = format!("{}/agreement", elsewhere.origin());
        let acts = vec![challenge(&b), Act::status(302).header("Location", &location)];
        let mut w = World::with(acts, false, |_, f| f.route("elsewhere.example", &elsewhere)).await;
        let got = w.pay().await;
        w.assert_kept(&got, DeclineCode::AgreementFailed, "The agreement URL answered status 302 to the payment.", 1);
        assert_eq!(elsewhere.connections(), 0);
        assert!(w.fetch.asked().iter().all(|u| !u.contains("elsewhere")));
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The unpaid request's faults: nothing is signed.

#[test]
fn gzip_402() {
    on_paused(async {
        let b = Buyer::load();
        let act = Act::Answer {
            status: 402,
            headers: vec![
                ("PAYMENT-REQUIRED".into(), b64_encode(required_text(&b).as_bytes())),
                ("Content-Encoding".into(), "gzip".into()),
            ],
            body: Payload::Sized(gzip(required_text(&b).as_bytes())),
        };
        let w = World::new(vec![act], false).await;
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(
            &got,
            DeclineCode::AgreementFailed,
            "The agreement URL served a content coding other than identity.",
            0,
        );
    });
}

fn unreadable_challenge(header: String) {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::status(402).header("PAYMENT-REQUIRED", &header)], false).await;
        let got = w.transact_with(&w.signer, &b.options()).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREADABLE_402, 0);
        assert_eq!(w.api.count(), 1);
    });
}

#[test]
fn payment_required_without_its_padding() {
    let canonical = b64_encode(required_text(&Buyer::load()).as_bytes());
    assert!(canonical.ends_with("=="), "the fixture's base64 is padded");
    unreadable_challenge(canonical.trim_end_matches('=').to_owned());
}

#[test]
fn payment_required_with_nonzero_trailing_bits() {
    let canonical = b64_encode(required_text(&Buyer::load()).as_bytes());
    let (head, tail) = canonical.split_at(canonical.len() - 3);
    assert_eq!(tail, "Q==", "the fixture's base64 ends as expected");
    // 'R' differs from 'Q' only in a bit the padding discards.
    let altered = format!("{head}R==");
    assert_eq!(b64_decode(&altered), None);
    unreadable_challenge(altered);
}

#[test]
fn payment_required_of_a_list() {
    unreadable_challenge(b64_encode(b"[1,2]"));
}

#[test]
fn payment_required_of_a_string() {
    unreadable_challenge(b64_encode(br#""x402""#));
}

/// One amount changed in the approved option: declined before anything is signed or sent; the agreement URL is
/// not asked again (through `transact` the ATR is fetched again, as every call compares it; through `agree`
/// nothing at all is fetched).
#[test]
fn approved_option_with_another_amount() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let mut t = w.to_approve().await;
        t.approve.option["amount"] = json!("2");
        let got = w.transact_with(&w.signer, &b.options().approved(t.approve.clone())).await;
        w.assert_unsent(&got, DeclineCode::OfferUnreadable, "x402/option-not-in-document", 0);
        assert_eq!(w.api.count(), 1);
        assert_eq!(w.atr.count(), 2);

        let direct = terms::agree(&b.a(), &w.url, &w.signer, &w.fetch, &b.options().approved(t.approve)).await;
        let Err(d) = direct else { panic!("{direct:?}") };
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, "x402/option-not-in-document"));
        assert_eq!((w.api.count(), w.atr.count(), w.signer.count()), (1, 2, 0));
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Cancellation at each stage.

#[test]
fn cancelled_before_the_unpaid_request() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b)], false).await;
        let token = CancellationToken::new();
        token.cancel();
        let got = w.transact_with(&w.signer, &b.options().cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 0);
        assert_eq!(w.api.count(), 0);
        assert_eq!(w.atr.count(), 1, "the ATR is compared before the exchange starts");
    });
}

#[test]
fn cancelled_during_the_unpaid_request() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![Act::Never], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(1).await;
            cancel.cancel();
        });
        let start = Instant::now();
        let got = w.transact_with(&w.signer, &b.options().cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 0);
        assert_eq!(start.elapsed(), Duration::ZERO, "waited for the deadline");
        assert_eq!(w.api.count(), 1);
    });
}

#[test]
fn cancelled_after_signing_before_sending() {
    on_paused(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let t = w.to_approve().await;
        let token = CancellationToken::new();
        let signer = CancelOnSign { inner: w.signer.clone(), token: token.clone() };
        let got = w.transact_with(&signer, &b.options().approved(t.approve).cancel(token)).await;
        w.assert_unsent(&got, DeclineCode::AgreementFailed, ENDED_BEFORE, 1);
        assert_eq!(w.api.count(), 1, "the payment was sent");
    });
}

#[test]
fn cancelled_during_a_paid_request() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), Act::Never], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(2).await;
            cancel.cancel();
        });
        let got = w.pay_with(|o| o.cancel(token)).await;
        w.assert_kept(&got, DeclineCode::AgreementPending, ENDED_AFTER, 1);
        assert_eq!(w.elapsed(), Duration::ZERO);
    });
}

#[test]
fn cancelled_during_a_retry_after_wait() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), accepted("30"), receipt(&b)], false).await;
        let token = CancellationToken::new();
        let (api, cancel) = (w.api.clone(), token.clone());
        tokio::spawn(async move {
            api.arrived(2).await;
            tokio::time::sleep(Duration::from_secs(5)).await;
            cancel.cancel();
        });
        let got = w.pay_with(|o| o.cancel(token)).await;
        w.assert_kept(&got, DeclineCode::AgreementPending, ENDED_AFTER, 1);
        assert_eq!(w.elapsed(), Duration::from_secs(5));
        assert_eq!(w.api.count(), 2, "asked again after the signal");
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The whole exchange once, as a control: 402, approval, 202, receipt.

#[test]
fn approved_payment_pending_then_recorded() {
    on_paused(async {
        let b = Buyer::load();
        let mut w = World::new(vec![challenge(&b), accepted("2"), receipt(&b)], false).await;
        let got = w.pay().await;
        w.assert_agreed(&got, 2);
        assert_eq!(millis(&w.paid_at()), vec![0, 2000]);
        assert_eq!(w.atr.count(), 2);
    });
}

// ---------------------------------------------------------------------------------------------------------------
// The ATR fetch through HttpFetch: the gate's rules hold on a real socket as they do in memory.

/// transact with the plain (public proof) pairing, the link served by `act`.
struct AtrRun {
    got: Result<Transaction, Declined>,
    signer: CountingSigner,
    atr: Server,
    fetch: Loopback,
    elapsed: Duration,
}

async fn atr_run(doc: Value, act: Act, route: impl FnOnce(&Arc<Net>, Loopback) -> Loopback) -> AtrRun {
    let b = Buyer::load();
    let net = Net::new();
    let atr = Server::start(&net, vec![act]).await;
    let fetch = route(&net, Loopback::new(&net).route(ATR_HOST, &atr));
    let signer = b.signer();
    let start = Instant::now();
    let got = transact(&doc, eip3009(), &signer, &fetch, &b.options()).await;
    let elapsed = start.elapsed();
    assert_eq!(atr.count(), 1, "one GET of the link");
    assert_eq!(atr.seen()[0].header("accept-encoding"), Some("identity"));
    AtrRun { got, signer, atr, fetch, elapsed }
}

impl AtrRun {
    fn declined(&self, code: DeclineCode, detail: &str) {
        let Err(d) = &self.got else { panic!("expected {code}, got {:?}", self.got) };
        assert_eq!((d.code, d.detail.as_str()), (code, detail));
        assert!(d.moved.is_none());
        assert_eq!(self.signer.count(), 0, "signed before the comparison");
    }
}

fn redirect_not_followed(status: u16) {
    on_paused(async {
        let b = Buyer::load();
        let net_for_second = Net::new();
        let second = Server::start(&net_for_second, vec![Act::ok(b.a())]).await;
        let location = format!("{}/terms", second.origin());
        let act = Act::status(status).header("Location", &location);
        let r = atr_run(b.doc(), act, |_, f| f.route("elsewhere.example", &second)).await;
        r.declined(DeclineCode::AtrUnfetchable, &format!("The link answered status {status}."));
        assert_eq!(second.connections(), 0, "the redirect was followed");
        assert_eq!(r.fetch.asked(), vec![link_of(&b.doc())]);
    });
}

#[test]
fn atr_redirect_302_is_not_followed() {
    redirect_not_followed(302);
}

#[test]
fn atr_redirect_301_is_not_followed() {
    redirect_not_followed(301);
}

#[test]
fn atr_redirect_307_is_not_followed() {
    redirect_not_followed(307);
}

#[test]
fn atr_redirect_308_is_not_followed() {
    redirect_not_followed(308);
}

#[test]
fn atr_gzip_body() {
    on_paused(async {
        let b = Buyer::load();
        let act = Act::ok(gzip(&b.a())).header("Content-Encoding", "gzip");
        let r = atr_run(b.doc(), act, |_, f| f).await;
        r.declined(DeclineCode::AtrUnfetchable, "The link served a content coding other than identity.");
    });
}

#[test]
fn atr_deadline_mid_body() {
    on_paused(async {
        let b = Buyer::load();
        let a = b.a();
        let act = Act::Stall { status: 200, headers: vec![], declared: a.len(), sent: a[..a.len() / 2].to_vec() };
        let r = atr_run(b.doc(), act, |_, f| f).await;
        r.declined(DeclineCode::AtrUnfetchable, "The ATR could not be fetched from the link.");
        assert_eq!(r.elapsed, Duration::from_secs(10));
    });
}

fn mib_body(len: usize) -> Vec<u8> {
    let mut body = vec![b' '; len];
    body[0] = b'{';
    body[MAX_ATR_BYTES - 1] = b'}';
    body
}

fn advertising(bytes: &[u8]) -> Value {
    let mut doc = Buyer::load().doc();
    doc["extensions"]["legalContext"]["info"]["value"] = json!(atr_hash(bytes).to_hex());
    doc
}

#[test]
fn atr_one_mib_and_one_byte_chunked() {
    on_paused(async {
        let body = mib_body(MAX_ATR_BYTES + 1);
        let act = Act::ok(vec![]).body(Payload::Chunked(body.chunks(65_536).map(<[u8]>::to_vec).collect()));
        let r = atr_run(advertising(&body), act, |_, f| f).await;
        r.declined(DeclineCode::AtrTooLarge, "The ATR is larger than 1048576 bytes.");
    });
}

#[test]
fn atr_one_mib_and_one_byte_until_close() {
    on_paused(async {
        let body = mib_body(MAX_ATR_BYTES + 1);
        let r = atr_run(advertising(&body), Act::ok(vec![]).body(Payload::UntilClose(body)), |_, f| f).await;
        r.declined(DeclineCode::AtrTooLarge, "The ATR is larger than 1048576 bytes.");
    });
}

#[test]
fn atr_one_mib_and_one_byte_by_content_length() {
    on_paused(async {
        let body = mib_body(MAX_ATR_BYTES + 1);
        let r = atr_run(advertising(&body), Act::ok(body), |_, f| f).await;
        r.declined(DeclineCode::AtrTooLarge, "The ATR is larger than 1048576 bytes.");
    });
}

/// Declared and never sent: declined on the header at once, not at the 10 s deadline.
#[test]
fn atr_one_mib_and_one_byte_declared_and_never_sent() {
    on_paused(async {
        let body = mib_body(MAX_ATR_BYTES + 1);
        let act = Act::Stall { status: 200, headers: vec![], declared: body.len(), sent: vec![] };
        let r = atr_run(advertising(&body), act, |_, f| f).await;
        r.declined(DeclineCode::AtrTooLarge, "The ATR is larger than 1048576 bytes.");
        assert_eq!(r.elapsed, Duration::ZERO);
    });
}

/// A gzip body that never arrives is declined on its header at once.
#[test]
fn atr_gzip_body_is_not_read() {
    on_paused(async {
        let b = Buyer::load();
        let act =
            Act::Stall { status: 200, headers: vec![], declared: 100, sent: vec![] }.header("Content-Encoding", "gzip");
        let r = atr_run(b.doc(), act, |_, f| f).await;
        r.declined(DeclineCode::AtrUnfetchable, "The link served a content coding other than identity.");
        assert_eq!(r.elapsed, Duration::ZERO);
    });
}

#[test]
fn atr_exactly_one_mib_chunked_is_paid() {
    on_paused(async {
        let body = mib_body(MAX_ATR_BYTES);
        let act = Act::ok(vec![]).body(Payload::Chunked(body.chunks(65_536).map(<[u8]>::to_vec).collect()));
        let r = atr_run(advertising(&body), act, |_, f| f).await;
        let Ok(Transaction::Signed(t)) = &r.got else { panic!("{:?}", r.got) };
        assert_eq!(t.bytes, body);
        assert_eq!(t.signed.as_ref().unwrap()["payload"]["authorization"]["nonce"], json!(atr_hash(&body).to_hex()));
        assert_eq!(r.signer.count(), 1);
        assert_eq!(r.atr.connections(), 1);
    });
}
