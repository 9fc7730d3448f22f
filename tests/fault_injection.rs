//! Fault injection on a real socket: the ATR fetch and the agreement exchange against loopback HTTP/1.1 servers
//! scripted to misbehave (resets, a slow-loris body, endless bodies, lying lengths, gzip bombs, redirects), through
//! the real `HttpFetch`. The cases `agreement_http.rs` already has (a reset mid-poll, 5xx storms, endless 202s, a
//! 3xx on the paid request, bodies of 1 MiB + 1 and of exactly 1 MiB) are extended there, not repeated here.
//!
//! Every case asserts the decline (code and, where fixed, detail), the signer calls, the requests each server saw,
//! the time it took (the runtime's paused clock exactly, where the gate waits; the wall clock bounded), and that
//! memory stays bounded, three ways: the bytes the fetch handed the gate (the gate stops at the first chunk past its
//! cap), the bytes an endless server managed to write (it never runs more than [`WINDOW`] ahead of the client, so
//! what it wrote is what the client read), and the peak heap of the call, counted on the test's thread where the
//! gate, hyper and the servers all run (see `support::Measured`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::io::Read;
use std::time::Duration;

use support::net::{Act, Framing, Hold, Server, Step, WINDOW};
use support::world::{
    AGREEMENT_NOT_IDENTITY, AGREEMENT_PEAK, API_HOST, ATR_HOST, ATR_PEAK, ATR_UNFETCHED, Atr, MISMATCH, NOT_A_RECEIPT,
    NOT_IDENTITY, NOT_RECORDED, REAL, TOO_LARGE_RECEIPT, UNREACHED, World, advertising, challenge, gzip, json_body,
    mib_body, millis, padded_receipt, receipt, required_text, too_large_atr,
};
use support::{Buyer, Measured};
use terms::{DeclineCode, MAX_ATR_BYTES};

/// The agreement receipt's cap.
const RECEIPT_CAP: usize = 65_536;
/// The piece an endless ATR body repeats, and the chunks large bodies are sent in.
const PIECE: usize = 16 * 1024;
/// The piece an endless receipt repeats.
const SMALL_PIECE: usize = 4 * 1024;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// `bytes` one a second, the first half a second in, so no byte lands on the same instant as a deadline.
fn dribble(bytes: &[u8]) -> Vec<Step> {
    let mut steps = vec![Step::Pause(Duration::from_millis(500))];
    for b in bytes {
        steps.push(Step::Send(vec![*b]));
        steps.push(Step::Pause(secs(1)));
    }
    steps
}

/// `bytes` sent in pieces of `piece`.
fn pieces(bytes: &[u8], piece: usize) -> Vec<Step> {
    bytes.chunks(piece).map(|c| Step::Send(c.to_vec())).collect()
}

/// A gzip stream of `members` members, each 1 MiB of zeros deflated: about a kilobyte each on the wire, `members`
/// MiB once inflated (RFC 1952: the members of one stream inflate one after another).
fn bomb(members: usize) -> Vec<u8> {
    let bomb = bomb_member().repeat(members);
    let mut two = Vec::new();
    flate2::read::MultiGzDecoder::new(&bomb[..2 * bomb_member().len()]).read_to_end(&mut two).unwrap();
    assert!(two.len() == 2 << 20 && two.iter().all(|b| *b == 0), "not a bomb");
    bomb
}

/// One member of the bomb: 1 MiB of zeros, deflated.
fn bomb_member() -> Vec<u8> {
    gzip(&vec![0u8; 1 << 20])
}

/// The gate stopped at the first chunk that took it past `cap`: it was handed more than `cap` bytes, all of them
/// but the last chunk's within the cap; and the endless server wrote at most one window and one piece more.
fn assert_stopped_at(hold: &Hold, server: &Server, cap: usize, piece: usize) {
    let (handed, last) = (hold.handed(), hold.last_chunk());
    assert!(handed > cap && handed - last <= cap, "handed {handed} bytes, the last chunk {last}, cap {cap}");
    assert!(last <= piece, "a chunk of {last} bytes");
    let written = server.written();
    assert!(written >= handed && written <= handed + WINDOW + piece, "wrote {written}, handed {handed}");
}

// ---------------------------------------------------------------------------------------------------------------
// The ATR fetch.

/// The link's server answering `act`, ready to be paid with the plain pairing.
fn atr_world(m: &Measured, doc: serde_json::Value, act: Act) -> Atr {
    m.block_on(Atr::new(doc, act))
}

#[test]
fn atr_reset_before_headers() {
    let m = Measured::new();
    let w = atr_world(&m, Buyer::load().doc(), Act::Reset);
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, ATR_UNFETCHED);
    assert_eq!(w.handed(), 0);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

#[test]
fn atr_reset_mid_body() {
    let m = Measured::new();
    let b = Buyer::load();
    let a = b.a();
    let steps = vec![Step::Send(a[..a.len() / 2].to_vec()), Step::Reset];
    let w = atr_world(&m, b.doc(), Act::stream(Framing::Length(a.len()), steps));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, ATR_UNFETCHED);
    assert_eq!(w.handed(), a.len() / 2);
    assert_eq!(w.atr.written(), a.len() / 2);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// One byte a second: the 10 s deadline over headers and body ends it with 10 bytes read.
#[test]
fn atr_slow_loris_is_ended_by_the_deadline() {
    let m = Measured::new();
    let b = Buyer::load();
    let a = b.a();
    let w = atr_world(&m, b.doc(), Act::stream(Framing::Length(a.len()), dribble(&a)));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, ATR_UNFETCHED);
    assert_eq!(w.handed(), 10);
    assert_eq!(w.atr.written(), 10);
    cost.assert_time(secs(10), REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// A chunked body that never ends: declined once the bytes read pass 1 MiB, at once, and the connection closed.
#[test]
fn atr_endless_chunked_body() {
    let m = Measured::new();
    let w = atr_world(&m, Buyer::load().doc(), Act::stream(Framing::Chunked, vec![Step::Endless(vec![b' '; PIECE])]));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    cost.assert_peak_under(ATR_PEAK);
    assert_stopped_at(&w.net.last(), &w.atr, MAX_ATR_BYTES, PIECE);
    cost.assert_time(Duration::ZERO, REAL);
    assert!(m.block_on(w.atr.closed_by_peer(1)), "the client kept the connection open");
}

/// Half a MiB, a 3 s stall, then chunks forever: declined at the stall's end, as soon as the cap is passed.
#[test]
fn atr_endless_chunked_body_after_a_stall() {
    let m = Measured::new();
    let steps = vec![Step::Send(vec![b' '; MAX_ATR_BYTES / 2]), Step::Pause(secs(3)), Step::Endless(vec![b' '; PIECE])];
    let w = atr_world(&m, Buyer::load().doc(), Act::stream(Framing::Chunked, steps));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    cost.assert_peak_under(ATR_PEAK);
    assert_stopped_at(&w.net.last(), &w.atr, MAX_ATR_BYTES, MAX_ATR_BYTES / 2);
    cost.assert_time(secs(3), REAL);
    assert!(m.block_on(w.atr.closed_by_peer(1)));
}

/// Exactly 1 MiB in chunks, one more byte in a chunk of its own, then silence with no last chunk: declined on that
/// byte, not at the deadline.
#[test]
fn atr_chunked_body_one_byte_past_the_cap_then_stalled() {
    let m = Measured::new();
    let mut steps = pieces(&vec![b' '; MAX_ATR_BYTES], PIECE);
    steps.extend([Step::Send(vec![b' ']), Step::Stall]);
    let w = atr_world(&m, Buyer::load().doc(), Act::stream(Framing::Chunked, steps));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    let hold = w.net.last();
    assert_eq!((hold.handed(), hold.last_chunk()), (MAX_ATR_BYTES + 1, 1));
    assert_eq!(w.atr.written(), MAX_ATR_BYTES + 1);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// No length and no end: declined once the bytes read pass 1 MiB.
#[test]
fn atr_endless_body_until_close() {
    let m = Measured::new();
    let act = Act::stream(Framing::UntilClose, vec![Step::Endless(vec![b' '; PIECE])]);
    let w = atr_world(&m, Buyer::load().doc(), act);
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrTooLarge, &too_large_atr());
    cost.assert_peak_under(ATR_PEAK);
    assert_stopped_at(&w.net.last(), &w.atr, MAX_ATR_BYTES, PIECE);
    cost.assert_time(Duration::ZERO, REAL);
    assert!(m.block_on(w.atr.closed_by_peer(1)));
}

/// Exactly 1 MiB with no length, ended by the close: read whole and paid for.
#[test]
fn atr_exactly_one_mib_until_close_is_paid() {
    let m = Measured::new();
    let body = mib_body(MAX_ATR_BYTES);
    let act = Act::stream(Framing::UntilClose, pieces(&body, PIECE));
    let w = atr_world(&m, advertising(&body), act);
    let (got, cost) = m.measure(w.transact());
    w.paid_for(&got, &body);
    assert_eq!(w.handed(), MAX_ATR_BYTES);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Content-Length one byte short of what is sent: the gate hashes the declared bytes, which are not A.
#[test]
fn atr_content_length_fewer_than_sent() {
    let m = Measured::new();
    let b = Buyer::load();
    let a = b.a();
    let w = atr_world(&m, b.doc(), Act::stream(Framing::Length(a.len() - 1), vec![Step::Send(a.clone())]));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::HashMismatch, MISMATCH);
    assert_eq!(w.handed(), a.len() - 1);
    assert_eq!(w.atr.written(), a.len());
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Content-Length of A with more bytes after it: the body is the declared bytes, A, and only A is hashed and paid
/// for (the reference reads the same).
#[test]
fn atr_content_length_of_a_with_bytes_after_it() {
    let m = Measured::new();
    let b = Buyer::load();
    let a = b.a();
    let steps = vec![Step::Send(a.clone()), Step::Send(b" and more terms nobody hashed".to_vec())];
    let w = atr_world(&m, b.doc(), Act::stream(Framing::Length(a.len()), steps));
    let (got, cost) = m.measure(w.transact());
    w.paid_for(&got, &a);
    assert_eq!(w.handed(), a.len());
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// Content-Length past what is sent, then the close: a transport failure at once, not the deadline.
#[test]
fn atr_content_length_more_than_sent() {
    let m = Measured::new();
    let b = Buyer::load();
    let a = b.a();
    let w = atr_world(&m, b.doc(), Act::stream(Framing::Length(a.len() + 100), vec![Step::Send(a.clone())]));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, ATR_UNFETCHED);
    assert_eq!(w.handed(), a.len());
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// A gzip stream that would inflate to 512 MiB, served with no Content-Encoding: the gate hashes the bytes as
/// sent (the whole stream, under 1 MiB), never inflates them, and they are not A.
#[test]
fn atr_gzip_bomb_labelled_identity_is_hashed_as_sent() {
    let m = Measured::new();
    let bomb = bomb(512);
    assert!(bomb.len() < MAX_ATR_BYTES);
    let w = atr_world(&m, Buyer::load().doc(), Act::stream(Framing::Length(bomb.len()), pieces(&bomb, PIECE)));
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::HashMismatch, MISMATCH);
    assert_eq!(w.handed(), bomb.len());
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// The same bomb advertised by its own hash is an ATR like any other: paid for, bytes as sent.
#[test]
fn atr_gzip_bomb_labelled_identity_advertised_as_sent_is_paid_as_sent() {
    let m = Measured::new();
    let bomb = bomb(512);
    let w = atr_world(&m, advertising(&bomb), Act::stream(Framing::Length(bomb.len()), pieces(&bomb, PIECE)));
    let (got, cost) = m.measure(w.transact());
    w.paid_for(&got, &bomb);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

/// The bomb labelled gzip: declined on the header, not a byte of the body read.
#[test]
fn atr_gzip_bomb_labelled_gzip_is_declined_unread() {
    let m = Measured::new();
    let bomb = bomb(512);
    let act = Act::stream(Framing::Length(bomb.len()), pieces(&bomb, PIECE)).header("Content-Encoding", "gzip");
    let w = atr_world(&m, advertising(&bomb), act);
    let (got, cost) = m.measure(w.transact());
    w.declined(&got, DeclineCode::AtrUnfetchable, NOT_IDENTITY);
    assert_eq!(w.handed(), 0);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(ATR_PEAK);
}

// ---------------------------------------------------------------------------------------------------------------
// The agreement exchange's unpaid request: nothing is signed, nothing sent.

/// The agreement server answering `acts` (the last forever when `repeat`), set up unmeasured.
fn world(m: &Measured, acts: Vec<Act>, repeat: bool) -> World {
    m.block_on(World::new(acts, repeat))
}

/// The body bytes the gate was handed for the agreement URL's requests, in order; every ATR fetch was read whole.
fn handed_api(w: &World) -> Vec<usize> {
    let atr = w.net.handed_to(ATR_HOST);
    assert!(!atr.is_empty() && atr.iter().all(|n| *n == w.b.a().len()), "ATR bodies {atr:?}");
    w.net.handed_to(API_HOST)
}

#[test]
fn unpaid_reset_before_headers() {
    let m = Measured::new();
    let w = world(&m, vec![Act::Reset], false);
    let (got, cost) = m.measure(w.transact_with(&w.signer, &w.b.options()));
    w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREACHED, 0);
    assert_eq!((w.atr.count(), w.api.count(), w.api.overruns()), (1, 1, 0));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A 200 (a receipt already recorded) reset mid-body: no answer.
#[test]
fn unpaid_reset_mid_receipt() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let act = Act::stream(Framing::Length(r.len()), vec![Step::Send(r[..20].to_vec()), Step::Reset]);
    let w = world(&m, vec![act], false);
    let (got, cost) = m.measure(w.transact_with(&w.signer, &w.b.options()));
    w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREACHED, 0);
    assert_eq!(handed_api(&w), vec![20]);
    assert_eq!((w.atr.count(), w.api.count()), (1, 1));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A 402 whose body is reset mid-way: the challenge is in the header and the body is never read, so the payment
/// is handed back for approval.
#[test]
fn unpaid_402_reset_mid_body_is_never_read() {
    let m = Measured::new();
    let b = Buyer::load();
    let act = Act::Stream {
        status: 402,
        headers: vec![("PAYMENT-REQUIRED".into(), b64_encode(required_text(&b).as_bytes()))],
        framing: Framing::Length(1000),
        steps: vec![Step::Send(vec![b'x'; 100]), Step::Reset],
    };
    let w = world(&m, vec![act], false);
    let (t, cost) = m.measure(w.to_approve());
    assert_eq!(t.approve.required, b.agreement("required"));
    assert_eq!(handed_api(&w), vec![0]);
    assert_eq!((w.atr.count(), w.api.count(), w.signer.count()), (1, 1, 0));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A receipt dribbled one byte a second: the unpaid request's 10 s deadline ends it.
#[test]
fn unpaid_slow_loris() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let w = world(&m, vec![Act::stream(Framing::Length(r.len()), dribble(&r))], false);
    let (got, cost) = m.measure(w.transact_with(&w.signer, &w.b.options()));
    w.assert_unsent(&got, DeclineCode::AgreementFailed, UNREACHED, 0);
    assert_eq!(handed_api(&w), vec![10]);
    assert_eq!((w.atr.count(), w.api.count()), (1, 1));
    cost.assert_time(secs(10), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// An endless 200 to the unpaid request: declined past 64 KiB, nothing signed.
#[test]
fn unpaid_endless_body() {
    let m = Measured::new();
    let w = world(&m, vec![Act::stream(Framing::Chunked, vec![Step::Endless(vec![b' '; SMALL_PIECE])])], false);
    let (got, cost) = m.measure(w.transact_with(&w.signer, &w.b.options()));
    w.assert_unsent(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 0);
    cost.assert_peak_under(AGREEMENT_PEAK);
    assert_stopped_at(&w.net.last(), &w.api, RECEIPT_CAP, SMALL_PIECE);
    assert_eq!((w.atr.count(), w.api.count()), (1, 1));
    cost.assert_time(Duration::ZERO, REAL);
    assert!(m.block_on(w.api.closed_by_peer(1)));
}

/// A 3xx is a status like any other: the Location, a second server, is never asked.
#[test]
fn unpaid_redirect_is_not_followed() {
    for status in [301, 302, 303, 307, 308] {
        let m = Measured::new();
        let net = support::net::Net::new();
        let elsewhere = m.block_on(Server::start(&net, vec![receipt(&Buyer::load())]));
        let act = Act::status(status).header("Location", &format!("{}/agreement", elsewhere.origin()));
        let w = m.block_on(World::with(vec![act], false, |_, f| f.route("elsewhere.example", &elsewhere)));
        let (got, cost) = m.measure(w.transact_with(&w.signer, &w.b.options()));
        let detail = format!("The agreement URL answered status {status}.");
        w.assert_unsent(&got, DeclineCode::AgreementFailed, &detail, 0);
        assert_eq!((w.atr.count(), w.api.count(), elsewhere.connections()), (1, 1, 0));
        assert!(w.fetch.asked().iter().all(|u| !u.contains("elsewhere")));
        cost.assert_time(Duration::ZERO, REAL);
        cost.assert_peak_under(AGREEMENT_PEAK);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The paid requests: every decline keeps the payment, and the same bytes are sent each time.

/// A receipt dribbled one byte a second to every paid request: each is ended by its deadline (min(60, 120) + 70 =
/// 130 s, then what is left of the 240 s window), the same payment sent again after 2 s, pending at 240 s.
#[test]
fn paid_slow_loris_to_the_end_of_the_window() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = padded_receipt(&b, 1000);
    let mut w = world(&m, vec![challenge(&b), Act::stream(Framing::Length(r.len()), dribble(&r))], true);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementPending, NOT_RECORDED, 2);
    assert_eq!(millis(&w.paid_at()), vec![0, 132_000]);
    assert_eq!(handed_api(&w), vec![0, 130, 108]);
    assert_eq!((w.atr.count(), w.api.count()), (2, 3));
    cost.assert_time(secs(240), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// An endless receipt: declined past 64 KiB at once, the payment kept.
#[test]
fn paid_endless_receipt() {
    let m = Measured::new();
    let b = Buyer::load();
    let endless = Act::stream(Framing::Chunked, vec![Step::Endless(vec![b' '; SMALL_PIECE])]);
    let mut w = world(&m, vec![challenge(&b), endless], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    cost.assert_peak_under(AGREEMENT_PEAK);
    assert_stopped_at(&w.net.last(), &w.api, RECEIPT_CAP, SMALL_PIECE);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    assert!(m.block_on(w.api.closed_by_peer(1)));
}

/// 16 KiB of receipt, a 5 s stall, then chunks forever: declined past 64 KiB at the stall's end.
#[test]
fn paid_endless_receipt_after_a_stall() {
    let m = Measured::new();
    let b = Buyer::load();
    let steps = vec![Step::Send(vec![b' '; PIECE]), Step::Pause(secs(5)), Step::Endless(vec![b' '; SMALL_PIECE])];
    let mut w = world(&m, vec![challenge(&b), Act::stream(Framing::Chunked, steps)], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, TOO_LARGE_RECEIPT, 1);
    cost.assert_peak_under(AGREEMENT_PEAK);
    assert_stopped_at(&w.net.last(), &w.api, RECEIPT_CAP, PIECE);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(secs(5), REAL);
    assert!(m.block_on(w.api.closed_by_peer(1)));
}

/// A receipt declaring more bytes than sent, then the close: no answer, so the same payment is sent again 2 s
/// later, and the whole receipt that answers it is read.
#[test]
fn paid_content_length_more_than_sent_is_asked_again() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let short = Act::stream(Framing::Length(r.len() + 50), vec![Step::Send(r)]);
    let mut w = world(&m, vec![challenge(&b), short, receipt(&b)], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_agreed(&got, 2);
    assert_eq!(millis(&w.paid_at()), vec![0, 2000]);
    assert_eq!((w.atr.count(), w.api.count(), w.api.overruns()), (2, 3, 0));
    cost.assert_time(secs(2), REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A receipt declaring one byte fewer than sent: the declared bytes are read, and they are no JSON.
#[test]
fn paid_content_length_fewer_than_sent() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let lying = Act::stream(Framing::Length(r.len() - 1), vec![Step::Send(r.clone())]);
    let mut w = world(&m, vec![challenge(&b), lying], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, NOT_A_RECEIPT, 1);
    assert_eq!(handed_api(&w), vec![0, r.len() - 1]);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A gzip bomb labelled gzip as the receipt: declined on the header, the body unread, the payment kept.
#[test]
fn paid_gzip_bomb_labelled_gzip() {
    let m = Measured::new();
    let b = Buyer::load();
    let bomb = bomb(512);
    let act = Act::stream(Framing::Length(bomb.len()), pieces(&bomb, PIECE)).header("Content-Encoding", "gzip");
    let mut w = world(&m, vec![challenge(&b), act], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, AGREEMENT_NOT_IDENTITY, 1);
    assert_eq!(handed_api(&w), vec![0, 0]);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A gzip bomb under 64 KiB with no Content-Encoding as the receipt: read as sent, never inflated, and no JSON.
#[test]
fn paid_gzip_bomb_labelled_identity() {
    let m = Measured::new();
    let b = Buyer::load();
    let member = bomb_member().len();
    let bomb = bomb(RECEIPT_CAP / member);
    assert!(bomb.len() <= RECEIPT_CAP && bomb.len() > RECEIPT_CAP - member);
    let act = Act::stream(Framing::Length(bomb.len()), pieces(&bomb, SMALL_PIECE));
    let mut w = world(&m, vec![challenge(&b), act], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_kept(&got, DeclineCode::AgreementFailed, NOT_A_RECEIPT, 1);
    assert_eq!(handed_api(&w), vec![0, bomb.len()]);
    assert_eq!((w.atr.count(), w.api.count()), (2, 2));
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// A control for the streamed answers: the receipt in one-byte chunks is read whole, and the main payment signed.
#[test]
fn paid_receipt_in_one_byte_chunks_is_read() {
    let m = Measured::new();
    let b = Buyer::load();
    let r = json_body(&b.agreement("receipt"));
    let mut w = world(&m, vec![challenge(&b), Act::stream(Framing::Chunked, pieces(&r, 1))], false);
    let (got, cost) = m.measure(w.pay());
    w.assert_agreed(&got, 1);
    assert_eq!(handed_api(&w), vec![0, r.len()]);
    cost.assert_time(Duration::ZERO, REAL);
    cost.assert_peak_under(AGREEMENT_PEAK);
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
