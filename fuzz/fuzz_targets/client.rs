//! The client's reading of a seller's answers: `terms::client::Client::send` of one GET through a scripted transport
//! whose answers (status, headers, body, transport errors, silence) come from the input. The first is the seller's
//! answer to the unpaid request (a 402 with x402's `PAYMENT-REQUIRED` or MPP's `WWW-Authenticate`, or anything else);
//! the next are its answers to the paid request and its re-sends (x402's `PAYMENT-RESPONSE` or MPP's
//! `Payment-Receipt`, a 202 with a job id or a `Location`, `Retry-After`, another 402, a 5xx, silence). The terms are
//! served from memory ("abc", whose hash every fixture offer advertises), the signer is the EIP-3009 fixture's
//! counting key, and tokio's time is paused, so every deadline and wait passes at once.
//!
//! Input: answers split on 0xFF, each in [`terms_fuzz::Reply::from_fuzz`]'s form (a stall is silence here: the
//! transport reads whole bodies). Past the script, every request fails as a transport error.
//!
//! Asserts: the signer is called at most once; the first request carries no payment and is the caller's; every
//! later request is the same bytes as the second (a re-send never changes the payment, the idempotency key or the
//! body), and there are at most 1 + 1 + `MAX_RESENDS` of them; a paid request goes out only after the one signature,
//! and only after the terms were fetched once; an outcome that paid nothing (a refusal, an approval to ask for, an
//! unpaid answer, an error) sent no paid request; an outcome that paid names the header the paid request carried and
//! the H of the bytes served.
#![no_main]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use terms::client::{Client, Incoming, MAX_RESENDS, Outcome, Outgoing, Transport, TransportError};
use terms::{BoxFuture, atr_hash};
use terms_fuzz::{FuzzFetch, Reply, fixture, parts, paused};

/// The fixture whose key pays, whose offer the seeds serve and whose clock the gate reads.
const FIXTURE: &str = "x402/exact/eip155/eip3009";
/// The MPP fixture whose challenge a seed serves, and whose buyer inputs the client is given too.
const MPP: &str = "mpp/charge/evm/authorization";
/// The URL the caller asks for.
const URL: &str = "https://api.seller.example/paid";

/// A seller that answers from a script, and remembers every request it was sent (a clone shares both).
#[derive(Debug, Default, Clone)]
struct Scripted {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    sent: Arc<Mutex<Vec<Outgoing>>>,
}

impl Transport for Scripted {
    fn send<'a>(&'a self, request: &'a Outgoing) -> BoxFuture<'a, Result<Incoming, TransportError>> {
        self.sent.lock().unwrap().push(request.clone());
        let reply = self.replies.lock().unwrap().pop_front().unwrap_or(Reply::Reject);
        Box::pin(async move {
            match reply {
                Reply::Answer { status, headers, chunks } => {
                    Ok(Incoming { status, headers, body: chunks.concat().into() })
                }
                Reply::Reject => Err(TransportError("connection reset".into())),
                Reply::Never | Reply::Stall { .. } => std::future::pending().await,
            }
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let f = fixture(FIXTURE);
    let seller = Scripted::default();
    seller.replies.lock().unwrap().extend(parts(data).into_iter().map(Reply::from_fuzz));
    let fetch = FuzzFetch::serving(&f.atr);
    let signer = f.signer();
    // The buyer's inputs of both offers the seeds serve, so that an MPP challenge is paid as well as an x402 offer.
    let mut inputs = fixture(MPP).inputs.clone();
    inputs.extend(f.inputs.clone());
    let client = Client::for_signer(signer.clone())
        .fetch(fetch.clone())
        .transport(seller.clone())
        .options(f.options().inputs(inputs.clone()))
        .build()
        .expect("a client with a signer and a fetch builds");
    let asked = Outgoing::new("GET", URL).header("accept", "application/json");
    let got = paused().block_on(client.send(asked.clone()));
    let sent = seller.sent.lock().unwrap().clone();

    assert!(signer.count() <= 1, "signed {} times for one purchase", signer.count());
    assert!(fetch.count() <= 1, "fetched the terms {} times", fetch.count());
    let Some((first, paid)) = sent.split_first() else { panic!("nothing was sent: {got:?}") };
    assert_eq!(first, &asked, "the unpaid request is not the caller's");
    assert!(paid.len() <= 1 + MAX_RESENDS as usize, "{} paid requests", paid.len());
    if let Some(once) = paid.first() {
        assert!(paid.iter().all(|p| p == once), "a re-send changed the request: {paid:?}");
        assert_eq!(signer.count(), 1, "a paid request went out without the one signature");
        assert_eq!(fetch.count(), 1, "a paid request went out without the terms fetched");
        assert_eq!((&once.method, &once.url, &once.body), (&asked.method, &asked.url, &asked.body));
    }
    match &got {
        Err(e) => assert!(paid.is_empty(), "send erred ({e}) after a payment was sent"),
        Ok(Outcome::Refused(_) | Outcome::ToApprove(_) | Outcome::ApproveSpend(_)) => {
            assert!(paid.is_empty(), "paid, then answered {got:?}");
        }
        Ok(outcome) => match outcome.paid() {
            None => assert!(paid.is_empty(), "a paid request went out, the outcome names none: {outcome:?}"),
            Some(sent_payment) => {
                let once = paid.first().expect("an outcome that paid sent a paid request");
                let (name, value) = &sent_payment.header;
                assert_eq!(once.get(name), Some(value.as_str()), "the outcome names a header not sent");
                assert_eq!(sent_payment.h, atr_hash(&f.atr), "paid for other bytes than served");
            }
        },
    }
});
