//! The upstream conformance vectors, run from the rows' own data. Every row and key of each file is either run
//! here or listed, by name, as not run with the reason, so the count of what runs is visible in the output.
#![allow(unreachable_pub)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use support::{CountingSigner, Reply, ScriptedFetch, Stub, hex, paused, vectors};
use terms::CountingIds;
use terms::json::{canonical, parse, same_json, to_js_string};
use terms::link::{is_https_link, link_fault};
use terms::pairing::{Chosen, Offer, Unsigned};
use terms::x402::evm::eip3009;
use terms::{
    AtrHash, DeclineCode, Declined, FixedClock, Options, Pairing, SigningRequest, TransactOutcome, atr_hash, check,
    confirm, finish, hash_equals, transact,
};

type Outcome = Result<(), Failed>;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(Failed::from(format!($($msg)+)));
        }
    };
}

// After `ensure!`, so that the family modules can use it.
mod conformance;

fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    ensure!(got == want, "{what}: got {got:?}, want {want:?}");
    Ok(())
}

fn code(d: &Declined) -> &str {
    d.code.as_str()
}

/// The row's expected decline code, as the code enum.
fn decline_code(name: &str) -> DeclineCode {
    serde_json::from_value(json!(name)).expect("decline code")
}

fn expect_decline<T: std::fmt::Debug>(got: &Result<T, Declined>, want: &Value) -> Result<Declined, Failed> {
    match got {
        Ok(v) => Err(format!("expected decline {want}, got {v:?}").into()),
        Err(d) => {
            if let Some(w) = want.as_str() {
                ensure!(d.code == decline_code(w), "decline: got {} ({}), want {w}", code(d), d.detail);
            }
            Ok(d.clone())
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The buyer.json fixture.

struct Fixed {
    v: Value,
}

impl Fixed {
    fn load() -> Self {
        Self { v: vectors("buyer.json")["fixed"].clone() }
    }
    fn bytes(&self, name: &str) -> Vec<u8> {
        hex(self.v[name].as_str().unwrap())
    }
    fn doc(&self) -> Value {
        self.v["D"].clone()
    }
    fn account(&self) -> String {
        self.v["account"].as_str().unwrap().to_owned()
    }
    fn now(&self) -> u64 {
        self.v["now"].as_u64().unwrap()
    }
    fn signer(&self) -> CountingSigner {
        CountingSigner::new(self.v["payerKey"].as_str().unwrap(), &self.account())
    }
    fn options(&self) -> Options {
        Options::new().clock(FixedClock(self.now())).ids(CountingIds::default())
    }
    fn agreement(&self, key: &str) -> Value {
        self.v["agreement"][key].clone()
    }
}

/// The link a document names: an x402 document's legal context's, or an MPP challenge list's first `opaque`'s.
fn link_of(doc: &Value) -> String {
    if doc.is_array() {
        return conformance::mpp_no_proof::link_of_challenges(doc);
    }
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().to_owned()
}

fn eip3009() -> &'static dyn Pairing {
    terms::pairing(eip3009::ID).expect("built")
}

fn typed_message(request: &SigningRequest) -> Value {
    match request {
        SigningRequest::Eip712 { typed_data } => Value::Object(typed_data.message.clone()),
        other => panic!("not an eip712 request: {other:?}"),
    }
}

/// The payment B6 signs: confirm D, then finish with the row's signature.
fn b6_payment(row: &Value) -> Value {
    let f = Fixed::load();
    let fetch = ScriptedFetch::new().script(&link_of(&f.doc()), vec![Reply::ok(f.bytes("A"))]);
    paused().block_on(async {
        let c = confirm(&f.doc(), eip3009(), &f.account(), &fetch, &f.options()).await.unwrap();
        let sig = row["input"]["then"]["finish"]["signature"].as_str().unwrap();
        match finish(&f.bytes("A"), &c.chosen, &[sig.into()], eip3009()).unwrap() {
            terms::Finish::Finished(done) => done.signed.to_value(),
            terms::Finish::Next(n) => panic!("unexpected next {n:?}"),
        }
    })
}

fn row_named<'a>(rows: &'a Value, name: &str) -> &'a Value {
    rows.as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
}

/// transact over `doc` with the link serving `served`.
fn transact_serving(
    doc: &Value,
    pairing: &dyn Pairing,
    served: Reply,
    signer: &CountingSigner,
    options: &Options,
) -> (Result<TransactOutcome, Declined>, ScriptedFetch) {
    let fetch = ScriptedFetch::new().script(&link_of(doc), vec![served]);
    let got = paused().block_on(transact(doc, pairing, signer, &fetch, options));
    (got, fetch)
}

fn signed_of(t: &TransactOutcome) -> Value {
    match t {
        TransactOutcome::Signed(s) => s.signed.as_ref().map_or(Value::Null, terms::Payment::to_value),
        other => panic!("not signed: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// buyer.json: B rows.

fn buyer_b(name: &str, row: &Value) -> Outcome {
    let f = Fixed::load();
    let rows = vectors("buyer.json")["rows"].clone();
    let input = &row["input"];
    let expect = &row["expect"];
    let d = f.doc();
    let link = link_of(&d);
    match name {
        "B1" => eq(
            "h",
            atr_hash(&f.bytes(input["hashOf"].as_str().unwrap())).to_hex(),
            expect["h"].as_str().unwrap().into(),
        ),
        "B2" | "B2b" | "B3" | "B4" => {
            let doc = if input["doc"].is_string() { f.doc() } else { input["doc"].clone() };
            let served = match input.get("serves") {
                Some(s) => f.bytes(s.as_str().unwrap()),
                None => hex(input["servesHex"].as_str().unwrap()),
            };
            if let Some(h) = row.get("servedHash") {
                eq("served hash", atr_hash(&served).to_hex(), h.as_str().unwrap().into())?;
            }
            let signer = f.signer();
            let (got, _) = transact_serving(&doc, eip3009(), Reply::ok(served), &signer, &f.options());
            expect_decline(&got, &expect["decline"])?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())
        }
        "B5" => {
            let h = AtrHash::parse(input["stubRead"]["h"].as_str().unwrap()).unwrap();
            let stub = Stub { h: Some(h), ..Stub::of(eip3009()) };
            let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(f.bytes(input["serves"].as_str().unwrap()))]);
            let got = paused().block_on(confirm(&d, &stub, &f.account(), &fetch, &f.options()));
            ensure!(got.is_ok() == expect["match"].as_bool().unwrap(), "match: {got:?}");
            eq("h", got.unwrap().h.to_hex(), expect["h"].as_str().unwrap().into())?;
            let built = stub.built_with.lock().unwrap().clone();
            eq(
                "build receives",
                built.iter().map(AtrHash::to_hex).collect(),
                vec![expect["buildReceives"].as_str().unwrap().to_owned()],
            )
        }
        "B6" => {
            let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(f.bytes(input["serves"].as_str().unwrap()))]);
            let c = paused().block_on(confirm(&d, eip3009(), &f.account(), &fetch, &f.options())).unwrap();
            let request = c.request.clone().unwrap();
            eq("message", typed_message(&request), expect["message"].clone())?;
            let SigningRequest::Eip712 { typed_data } = &request else { unreachable!() };
            let digest = typed_data.signing_hash().unwrap();
            eq("digest (alloy-dyn-abi)", digest.to_string(), expect["digest"].as_str().unwrap().into())?;
            let parts = eip3009::eip712_parts(typed_data).unwrap();
            eq("digest (sol!)", parts.digest.to_string(), expect["digest"].as_str().unwrap().into())?;
            let signer = f.signer();
            let (got, _) = transact_serving(&d, eip3009(), Reply::ok(f.bytes("A")), &signer, &f.options());
            let answer = signer.answers()[0].clone();
            eq("signature", answer, expect["signature"].clone())?;
            eq(
                "transact signature",
                signed_of(&got.unwrap())["payload"]["signature"].clone(),
                expect["signature"].clone(),
            )?;
            let then = &input["then"]["finish"];
            let bytes = f.bytes(then["bytes"].as_str().unwrap());
            let done = finish(&bytes, &c.chosen, &[then["signature"].as_str().unwrap().into()], eip3009()).unwrap();
            let terms::Finish::Finished(done) = done else { return Err("next".into()) };
            eq(
                "signed nonce",
                done.signed.to_value()["payload"]["authorization"]["nonce"].clone(),
                expect["signedNonce"].clone(),
            )?;
            let sig = alloy_primitives::Signature::from_raw(&hex(&expect["signature"].as_str().unwrap()[2..])).unwrap();
            let recovered = sig.recover_address_from_prehash(&digest).unwrap();
            eq("recovers", recovered.to_checksum(None), expect["recovers"].as_str().unwrap().into())
        }
        "B7" => {
            let signed = b6_payment(row_named(&rows, "B6"));
            for (case, want) in input["check"].as_array().unwrap().iter().zip(expect.as_array().unwrap()) {
                ensure!(case["presented"] == "B6 signed", "presented {}", case["presented"]);
                let got = check(&f.bytes(case["bytes"].as_str().unwrap()), &signed, eip3009());
                match want.get("h") {
                    Some(h) => {
                        eq("h", got.map(|c| c.h.to_hex()).map_err(|d| d.detail), Ok(h.as_str().unwrap().into()))?
                    }
                    None => drop(expect_decline(&got, &want["decline"])?),
                }
            }
            Ok(())
        }
        "B8" => {
            ensure!(input["as"] == "B6", "as");
            let pattern = expect["paymentIdentifierPattern"].as_str().unwrap();
            ensure!(pattern == "^[A-Za-z0-9_-]{32}$", "pattern changed: {pattern}");
            let mut doc = d.clone();
            doc["extensions"]["payment-identifier"] = json!({"info": {}, "schema": {}});
            let options = Options::new().clock(FixedClock(f.now()));
            let mut ids = Vec::new();
            for _ in 0..input["runs"].as_u64().unwrap() {
                let (got, _) = transact_serving(&doc, eip3009(), Reply::ok(f.bytes("A")), &f.signer(), &options);
                let signed = signed_of(&got.unwrap());
                let id = signed["extensions"]["payment-identifier"]["info"]["id"].as_str().unwrap().to_owned();
                ensure!(
                    id.len() == 32 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                    "id {id}"
                );
                ids.push(id);
            }
            ensure!((ids[0] != ids[1]) == expect["differsBetweenRuns"].as_bool().unwrap(), "ids {ids:?}");
            let (got, _) = transact_serving(&d, eip3009(), Reply::ok(f.bytes("A")), &f.signer(), &options);
            ensure!(expect["withoutAdvertisement"] == "no payment-identifier in signed", "row text changed");
            ensure!(
                signed_of(&got.unwrap())["extensions"].get("payment-identifier").is_none(),
                "identifier without advertisement"
            );
            Ok(())
        }
        "B9" => {
            let bound = AtrHash::parse(f.v[input["stubBound"].as_str().unwrap()].as_str().unwrap()).unwrap();
            let stub = Stub { bound: Some(bound), ..Stub::of(eip3009()) };
            let signer = f.signer();
            let (got, _) = transact_serving(&d, &stub, Reply::ok(f.bytes("A")), &signer, &f.options());
            let declined = expect_decline(&got, &expect["decline"])?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
            ensure!(expect["signed"].is_null() && declined.moved.is_none(), "a payment came back");
            Ok(())
        }
        "B10" => {
            for (case, want) in input.as_array().unwrap().iter().zip(expect.as_array().unwrap()) {
                let signer = f.signer();
                let fetch = ScriptedFetch::new();
                let got = if let Some(stub) = case.get("stubRead") {
                    let stub = Stub { link: Some(stub["link"].as_str().unwrap().into()), ..Stub::of(eip3009()) };
                    paused().block_on(transact(&d, &stub, &signer, &fetch, &f.options()))
                } else {
                    ensure!(case["doc"] == "D with an http:// link", "case text changed");
                    let mut doc = d.clone();
                    doc["extensions"]["legalContext"]["info"]["legalContextUrl"] =
                        json!(link.replacen("https://", "http://", 1));
                    paused().block_on(transact(&doc, eip3009(), &signer, &fetch, &f.options()))
                };
                let declined = expect_decline(&got, &want["decline"])?;
                if let Some(detail) = want.get("detail") {
                    eq("detail", declined.detail.as_str(), detail.as_str().unwrap())?;
                }
                eq("fetches", fetch.asked().len() as u64, want["fetches"].as_u64().unwrap())?;
            }
            Ok(())
        }
        "B11" => {
            for case in input["fetch"].as_array().unwrap() {
                let reply = if case.get("rejects").is_some() {
                    Reply::Reject
                } else {
                    Reply::status(case["status"].as_u64().unwrap() as u16)
                        .with_header("location", "https://elsewhere.example/")
                };
                let signer = f.signer();
                let (got, _) = transact_serving(&d, eip3009(), reply, &signer, &f.options());
                expect_decline(&got, &expect["decline"])?;
                eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
            }
            Ok(())
        }
        "B12" => {
            let body = vec![b'a'; input["bodyLength"].as_u64().unwrap() as usize];
            let (got, _) = transact_serving(&d, eip3009(), Reply::ok(body), &f.signer(), &f.options());
            expect_decline(&got, &expect["decline"]).map(drop)
        }
        "B13" => {
            for case in input.as_array().unwrap() {
                let reply = match case.get("bodyLength") {
                    Some(n) => {
                        ensure!(case["contentLength"].is_null() && case["streamed"] == true, "case changed");
                        let chunks = vec![
                            bytes::Bytes::from(vec![b'a'; 65_536]);
                            (n.as_u64().unwrap() as usize).div_ceil(65_536)
                        ];
                        let mut chunks = chunks;
                        let total: usize = chunks.iter().map(bytes::Bytes::len).sum();
                        let over = total - n.as_u64().unwrap() as usize;
                        let last = chunks.pop().unwrap();
                        chunks.push(last.slice(..last.len() - over));
                        Reply::status(200).with_chunks(chunks)
                    }
                    None => Reply::ok("a").with_header("Content-Length", &case["contentLength"].to_string()),
                };
                let signer = f.signer();
                let (got, fetch) = transact_serving(&d, eip3009(), reply, &signer, &f.options());
                expect_decline(&got, &expect["decline"])?;
                ensure!(
                    fetch.cancelled_bodies() == usize::from(expect["streamCancelled"] == true),
                    "body not cancelled"
                );
                eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
            }
            Ok(())
        }
        "B14" => {
            ensure!(input["fetch"] == "never-answers", "case changed");
            paused().block_on(async {
                let fetch = ScriptedFetch::new().script(&link, vec![Reply::Never]);
                let start = tokio::time::Instant::now();
                let got = transact(&d, eip3009(), &f.signer(), &fetch, &f.options()).await;
                expect_decline(&got, &expect["decline"])?;
                eq("ms waited", start.elapsed().as_millis() as u64, input["advanceMs"].as_u64().unwrap())
            })
        }
        "B15" => {
            ensure!(input["signer"] == "rejects", "case changed");
            let signer = f.signer().rejecting();
            let (got, _) = transact_serving(&d, eip3009(), Reply::ok(f.bytes("A")), &signer, &f.options());
            let declined = expect_decline(&got, &expect["decline"])?;
            ensure!(declined.moved.is_none(), "moved on a first-call failure");
            eq("sign calls", signer.count(), 1)
        }
        "B16" => {
            for account in input["accounts"].as_array().unwrap() {
                let fetch = ScriptedFetch::new();
                let got = paused().block_on(confirm(&d, eip3009(), account.as_str().unwrap(), &fetch, &f.options()));
                expect_decline(&got, &expect["decline"])?;
                eq("fetches", fetch.asked().len() as u64, expect["fetches"].as_u64().unwrap())?;
            }
            Ok(())
        }
        "B17" => {
            let got = terms::pairing(input["stubBindingId"].as_str().unwrap()).map(|p| p.id());
            expect_decline(&got, &expect["decline"]).map(drop)
        }
        "B18" => {
            for case in input["cases"].as_array().unwrap() {
                let mut doc = d.clone();
                doc["extensions"]["payment-identifier"] = case["extension"].clone();
                let signer = f.signer();
                let (got, _) = transact_serving(&doc, eip3009(), Reply::ok(f.bytes("A")), &signer, &f.options());
                let declined = expect_decline(&got, &expect["decline"])?;
                eq("detail", declined.detail.as_str(), expect["detail"].as_str().unwrap())?;
                eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
                ensure!(expect["signed"].is_null() && declined.moved.is_none(), "a payment came back");
            }
            Ok(())
        }
        "BE1" => {
            let mut cases: Vec<(Option<String>, Vec<u8>)> = input["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| (Some(c["contentEncoding"].as_str().unwrap().to_owned()), hex(c["bodyHex"].as_str().unwrap())))
                .collect();
            cases.push((None, f.bytes("A"))); // the control: the same exchange in the identity coding
            for (coding, body) in cases {
                let reply = match &coding {
                    Some(c) => Reply::ok(body).with_header("Content-Encoding", c),
                    None => Reply::ok(body),
                };
                let signer = f.signer();
                let (got, fetch) = transact_serving(&d, eip3009(), reply, &signer, &f.options());
                for (name, value) in expect["requestHeaders"].as_object().unwrap() {
                    eq("request header", fetch.asked()[0].header(name), value.as_str())?;
                }
                match coding {
                    Some(_) => {
                        let declined = expect_decline(&got, &expect["decline"])?;
                        eq(
                            "detail",
                            declined.detail.as_str(),
                            "The link served a content coding other than identity.",
                        )?;
                        eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
                    }
                    None => ensure!(got.is_ok() && signer.count() == 1, "control: {got:?}"),
                }
            }
            Ok(())
        }
        other => Err(format!("unhandled row {other}").into()),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// buyer.json: the agreement rows.

fn payment_required_reply(f: &Fixed, step: &Value) -> Reply {
    let text = match step.get("paymentRequiredText") {
        Some(name) => f.agreement(name.as_str().unwrap()).as_str().unwrap().to_owned(),
        None => to_js_string(&f.agreement(step["paymentRequired"].as_str().unwrap())).unwrap(),
    };
    Reply::status(402).with_header("PAYMENT-REQUIRED", &b64_encode(text.as_bytes()))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn agreement_replies(f: &Fixed, steps: &Value) -> (Vec<Reply>, bool) {
    let mut replies = Vec::new();
    let mut repeats = false;
    for step in steps.as_array().unwrap() {
        let status = step["status"].as_u64().unwrap() as u16;
        let mut reply = match status {
            402 => payment_required_reply(f, step),
            200 => {
                let body = to_js_string(&f.agreement(step["body"].as_str().unwrap())).unwrap().into_bytes();
                let body = if step["contentEncoding"] == "gzip" { gzip(&body) } else { body };
                Reply::ok(body)
            }
            _ => Reply::status(status),
        };
        if let Some(r) = step.get("retryAfter") {
            reply = reply.with_header("Retry-After", r.as_str().unwrap());
        }
        if let Some(c) = step.get("contentEncoding") {
            reply = reply.with_header("Content-Encoding", c.as_str().unwrap());
        }
        repeats |= step["repeats"] == true;
        replies.push(reply);
    }
    (replies, repeats)
}

/// The pairing of BA1: the main payment's pairing with publicProof false and the agreement URL in its read.
fn agreement_stub(f: &Fixed) -> Stub {
    Stub {
        public_proof: Some(false),
        agreement: Some(f.agreement("url").as_str().unwrap().to_owned()),
        ..Stub::of(eip3009())
    }
}

fn approval_of(t: &TransactOutcome) -> Option<Value> {
    match t {
        TransactOutcome::ToApprove(a) => {
            let o = &a.approve.option;
            Some(json!({"amount": o["amount"], "asset": o["asset"], "payTo": o["payTo"], "network": o["network"]}))
        }
        _ => None,
    }
}

struct Exchange {
    first: Result<TransactOutcome, Declined>,
    last: Result<TransactOutcome, Declined>,
    signer: CountingSigner,
    fetch: ScriptedFetch,
    elapsed_ms: u64,
}

/// Runs transact once, and again with the approval when the row approves.
fn run_exchange(f: &Fixed, steps: &Value, approve: Option<bool>) -> Exchange {
    let url = f.agreement("url").as_str().unwrap().to_owned();
    let (replies, repeats) = agreement_replies(f, steps);
    let d = f.doc();
    let fetch = ScriptedFetch::new().script_repeating(&link_of(&d), vec![Reply::ok(f.bytes("A"))]);
    let fetch = if repeats { fetch.script_repeating(&url, replies) } else { fetch.script(&url, replies) };
    let signer = f.signer();
    let stub = agreement_stub(f);
    paused().block_on(async {
        let first = transact(&d, &stub, &signer, &fetch, &f.options()).await;
        let start = tokio::time::Instant::now();
        let last = match (&first, approve) {
            (Ok(TransactOutcome::ToApprove(a)), Some(true)) => {
                transact(&d, &stub, &signer, &fetch, &f.options().approved(a.approve.clone())).await
            }
            _ => first.clone(),
        };
        let elapsed_ms = start.elapsed().as_millis() as u64;
        Exchange { first, last, signer: signer.clone(), fetch: fetch.clone(), elapsed_ms }
    })
}

fn buyer_ba(name: &str, row: &Value) -> Outcome {
    let f = Fixed::load();
    let rows = vectors("buyer.json")["rows"].clone();
    let b6 = row_named(&rows, "B6");
    let input = &row["input"];
    let expect = &row["expect"];
    let url = f.agreement("url").as_str().unwrap().to_owned();
    match name {
        "BA5" => {
            let bad = input["agreementUrl"].as_str().unwrap();
            // Directly through agree, and through transact with an offer whose read names that URL.
            let signer = f.signer();
            let fetch = ScriptedFetch::new().script_repeating(&link_of(&f.doc()), vec![Reply::ok(f.bytes("A"))]);
            let direct = paused().block_on(terms::agree(&f.bytes("A"), bad, &signer, &fetch, &f.options()));
            let declined = expect_decline(&direct, &expect["decline"])?;
            eq("detail", declined.detail.as_str(), "x402/link-not-https")?;
            let stub = Stub { agreement: Some(bad.to_owned()), ..agreement_stub(&f) };
            let via = paused().block_on(transact(&f.doc(), &stub, &signer, &fetch, &f.options()));
            expect_decline(&via, &expect["decline"])?;
            eq("agreement fetches", fetch.asked_of(bad).len() as u64, expect["agreementFetches"].as_u64().unwrap())?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())
        }
        "BA6" => {
            let mut doc = f.doc();
            let info = doc["extensions"]["legalContext"]["info"].as_object_mut().unwrap();
            info.insert("legalContextAgreementUrl".into(), f.agreement("url"));
            let keys: Vec<&String> = info.keys().collect();
            ensure!(
                keys.iter().position(|k| *k == "legalContextAgreementUrl")
                    > keys.iter().position(|k| *k == "legalContextUrl"),
                "order"
            );
            let signer = f.signer();
            let fetch = ScriptedFetch::new().script(&link_of(&doc), vec![Reply::ok(f.bytes("A"))]);
            let got = paused().block_on(transact(&doc, eip3009(), &signer, &fetch, &f.options()));
            eq("agreement fetches", fetch.asked_of(&url).len() as u64, expect["agreementFetches"].as_u64().unwrap())?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())?;
            ensure!(expect["paymentSignature"] == "B6", "row changed");
            let Ok(TransactOutcome::Signed(t)) = got else { return Err(format!("{got:?}").into()) };
            ensure!(t.agreement.is_none(), "an agreement receipt without an agreement");
            eq(
                "payment signature",
                t.signed.unwrap().to_value()["payload"]["signature"].clone(),
                b6["expect"]["signature"].clone(),
            )
        }
        "BE2" => {
            for case in input["cases"].as_array().unwrap() {
                let ex = run_exchange(&f, &case["agreement"], Some(input["approve"] == true));
                let want = &case["expect"];
                let got = if matches!(ex.first, Ok(TransactOutcome::ToApprove(_))) { &ex.last } else { &ex.first };
                expect_decline(got, &want["decline"])?;
                eq("sign calls", ex.signer.count() as u64, want["signCalls"].as_u64().unwrap())?;
                if let Some(paid) = want.get("paidRequests") {
                    eq("paid requests", ex.fetch.paid_of(&url).len() as u64, paid.as_u64().unwrap())?;
                }
                for asked in ex.fetch.asked_of(&url) {
                    for (h, v) in row["expect"]["requestHeaders"].as_object().unwrap() {
                        eq("request header", asked.header(h), v.as_str())?;
                    }
                }
            }
            Ok(())
        }
        _ => {
            ensure!(input["doc"].as_str().is_some_and(|d| d.starts_with("D, through a stub") || d == "as BA1"), "doc");
            let approve = input.get("approve").and_then(Value::as_bool);
            let ex = run_exchange(&f, &input["agreement"], approve);
            if let Some(approval) = expect.get("approval") {
                eq(
                    "approval",
                    approval_of(ex.first.as_ref().map_err(|d| d.detail.clone()).unwrap()),
                    Some(approval.clone()),
                )?;
            }
            if let Some(want) = expect.get("decline") {
                let declined = expect_decline(&ex.last, want)?;
                if declined.code == DeclineCode::AgreementPending || ex.signer.count() > 0 {
                    ensure!(
                        declined.moved.is_some() != ex.fetch.paid_of(&url).is_empty(),
                        "moved: {:?}",
                        declined.moved
                    );
                }
            }
            if let Some(n) = expect.get("signCalls") {
                eq("sign calls", ex.signer.count() as u64, n.as_u64().unwrap())?;
            }
            if let Some(n) = expect.get("paidRequests") {
                let paid = ex.fetch.paid_of(&url);
                eq("paid requests", paid.len() as u64, n.as_u64().unwrap())?;
                let first = paid.first().and_then(|p| p.header("payment-signature").map(str::to_owned));
                ensure!(paid.iter().all(|p| p.header("payment-signature").map(str::to_owned) == first), "re-signed");
            }
            if let Some(n) = expect.get("agreementFetches") {
                eq("agreement fetches", ex.fetch.asked_of(&url).len() as u64, n.as_u64().unwrap())?;
            }
            if let Some(ms) = input.get("advanceMs") {
                eq("ms waited", ex.elapsed_ms, ms.as_u64().unwrap())?;
            }
            let calls = ex.signer.calls();
            if let Some(order) = expect.get("order") {
                ensure!(order == &json!(["agreement", "payment"]), "order changed");
                eq(
                    "agreement value",
                    typed_message(&calls[0])["value"].clone(),
                    f.agreement("option")["amount"].clone(),
                )?;
                eq(
                    "payment value",
                    typed_message(&calls[1])["value"].clone(),
                    f.doc()["accepts"][0]["amount"].clone(),
                )?;
            }
            if let Some(message) = expect.get("agreementMessage") {
                eq("agreement message", typed_message(&calls[0]), message.clone())?;
            }
            if let Some(digest) = expect.get("agreementDigest") {
                let SigningRequest::Eip712 { typed_data } = &calls[0] else { return Err("kind".into()) };
                eq(
                    "agreement digest",
                    typed_data.signing_hash().unwrap().to_string(),
                    digest.as_str().unwrap().into(),
                )?;
            }
            if let Some(sig) = expect.get("agreementSignature") {
                eq("agreement signature", ex.signer.answers()[0].clone(), sig.clone())?;
            }
            if let Some(p) = expect.get("paymentSignature") {
                ensure!(p == "B6", "row changed");
                eq("payment signature", ex.signer.answers()[1].clone(), b6["expect"]["signature"].clone())?;
            }
            if let Some(s) = expect.get("signed") {
                ensure!(s == "B6", "row changed");
                eq("signed", signed_of(ex.last.as_ref().unwrap()), b6_payment(b6))?;
            }
            let receipt_key = expect.get("receipt").or_else(|| expect.get("agreement"));
            if let Some(r) = receipt_key {
                let Ok(TransactOutcome::Signed(t)) = &ex.last else { return Err(format!("{:?}", ex.last).into()) };
                eq("receipt", serde_json::to_value(&t.agreement).unwrap(), f.agreement(r.as_str().unwrap()))?;
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// core-vectors.json

fn core_trials(trials: &mut Vec<Trial>) {
    let core = vectors("core-vectors.json");
    for row in core["vectors"].as_array().unwrap().clone() {
        let name = row["name"].as_str().unwrap().to_owned();
        let all = core["vectors"].clone();
        trials.push(Trial::test(format!("core-vectors.json::vectors::{name} (hash)"), move || {
            let bytes = hex(row.get("expectBytesHex").or_else(|| row.get("bytesHex")).unwrap().as_str().unwrap());
            let h = atr_hash(&bytes).to_hex();
            eq("hash", h.as_str(), row["expectHash"].as_str().unwrap())?;
            if let Some(other) = row.get("mustNotEqual") {
                let other = row_named(&all, other.as_str().unwrap());
                ensure!(!hash_equals(&h, other["expectHash"].as_str().unwrap()), "plant equals {other}");
                ensure!(hash_equals(&h, &h.to_uppercase().replacen("0X", "0x", 1)), "case");
            }
            Ok(())
        }));
    }
    trials.push(ignored("core-vectors.json::vectors (assemble)", "seller side: ATR assembly"));
    trials.push(ignored("core-vectors.json::refusals", "seller side: ATR assembly refusals"));
    for row in core["links"]["rows"].as_array().unwrap().clone() {
        let name = row["name"].as_str().unwrap().to_owned();
        trials.push(Trial::test(format!("core-vectors.json::links::{name}"), move || {
            let link = row["link"].as_str().unwrap();
            eq("accept", is_https_link(link), row["accept"].as_bool().unwrap())?;
            let refused_as = row["refusedAs"].as_str().unwrap();
            if refused_as != "accepted" {
                eq("refusal", link_fault(link), refused_as)?;
            }
            // The same value as the legalContextUrl and as the agreement URL of an x402 document.
            let mut doc = Fixed::load().doc();
            doc["extensions"]["legalContext"]["info"]["legalContextUrl"] = json!(link);
            let read = eip3009().read(&doc);
            match refused_as {
                "accepted" => eq("read link", read.map(|r| r.link), Ok(link.to_owned()))?,
                fault => eq("read", read.map(|r| r.link).map_err(|r| r.code()), Err(format!("x402/{fault}")))?,
            }
            let mut doc = Fixed::load().doc();
            doc["extensions"]["legalContext"]["info"]["legalContextAgreementUrl"] = json!(link);
            let read = eip3009().read(&doc);
            match refused_as {
                "accepted" => eq("read agreement", read.map(|r| r.agreement), Ok(Some(link.to_owned())))?,
                fault => eq("read", read.map(|r| r.link).map_err(|r| r.code()), Err(format!("x402/{fault}")))?,
            }
            Ok(())
        }));
    }
    assert_eq!(core["jsonDepth"]["max"], json!(terms::json::MAX_JSON_DEPTH));
    for row in core["jsonDepth"]["rows"].as_array().unwrap().clone() {
        let name = row["name"].as_str().unwrap().to_owned();
        trials.push(Trial::test(format!("core-vectors.json::jsonDepth::{name}"), move || {
            eq("accept", parse(row["text"].as_str().unwrap()).is_some(), row["accept"].as_bool().unwrap())
        }));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// x402-exact-eip155-eip3009.json

fn pairing_file(key: &str) -> Outcome {
    let file = vectors("x402-exact-eip155-eip3009.json");
    let fixed = &file["fixed"];
    let h = AtrHash::parse(fixed["H"].as_str().unwrap()).unwrap();
    let o = fixed["O"].clone();
    let required = json!({"x402Version": 2, "resource": fixed["resource"], "accepts": [o]});
    let choice = json!({"required": required, "accepted": o, "from": fixed["payer"], "now": fixed["now"]});
    let choice = choice.as_object().unwrap().clone();
    let signer = terms::LocalSigner::from_hex(fixed["payerKey"].as_str().unwrap(), 84_532).unwrap();
    let v1 = &file["V1"];
    let built = eip3009::build(&choice, &h).map_err(|r| r.to_string())?;
    let chosen =
        Chosen { pairing: eip3009::ID.into(), build_input: choice.clone(), reference: "r".repeat(32), agreement: None };
    match key {
        "V1" => {
            let typed = &built.typed_data();
            eq("domain", Value::Object(typed.domain.clone()), v1["expectDomain"].clone())?;
            eq("message", Value::Object(typed.message.clone()), v1["expectMessage"].clone())?;
            let parts = eip3009::eip712_parts(typed).unwrap();
            eq("type hash", parts.type_hash.to_string(), v1["expectTypeHash"].as_str().unwrap().into())?;
            eq(
                "domain separator",
                parts.domain_separator.to_string(),
                v1["expectDomainSeparator"].as_str().unwrap().into(),
            )?;
            eq("struct hash", parts.struct_hash.to_string(), v1["expectStructHash"].as_str().unwrap().into())?;
            eq("digest", parts.digest.to_string(), v1["expectDigest"].as_str().unwrap().into())?;
            eq("digest (alloy-dyn-abi)", typed.signing_hash().unwrap(), parts.digest)?;
            eq(
                "signature",
                signer.sign_digest(&parts.digest.0).unwrap(),
                v1["expectSignature"].as_str().unwrap().into(),
            )?;
            let sig =
                alloy_primitives::Signature::from_raw(&hex(&v1["expectSignature"].as_str().unwrap()[2..])).unwrap();
            eq(
                "recovers",
                sig.recover_address_from_prehash(&parts.digest).unwrap().to_checksum(None),
                v1["expectRecovers"].as_str().unwrap().into(),
            )
        }
        "V2" => {
            let v2 = &file["V2"];
            let done = built.complete(&[v1["expectSignature"].as_str().unwrap().into()], &chosen).unwrap();
            let payment = match done {
                terms::pairing::Completion::Next(_) => return Err("next".into()),
                completion => completion.payment_value().ok_or("no payment")?,
            };
            eq("payload", payment.clone(), v2["expectPayload"].clone())?;
            eq(
                "bound",
                eip3009().bound(&payment, None).map(|h| h.to_hex()),
                Ok(v2["expectBound"].as_str().unwrap().into()),
            )?;
            let mut upper = payment.clone();
            let nonce =
                upper["payload"]["authorization"]["nonce"].as_str().unwrap().to_uppercase().replacen("0X", "0x", 1);
            upper["payload"]["authorization"]["nonce"] = json!(nonce);
            eq(
                "bound of upper-case nonce",
                eip3009().bound(&upper, None).map(|h| h.to_hex()),
                Ok(v2["boundOfUpperCaseNonce"].as_str().unwrap().into()),
            )?;
            let mut permit2 = payment;
            permit2["accepted"]["extra"]["assetTransferMethod"] = json!("permit2");
            eq(
                "permit2",
                eip3009().bound(&permit2, None).map_err(|r| r.code()).err(),
                v2["permit2"]["expect"]["code"].as_str().map(str::to_owned),
            )
        }
        "V4" => {
            let v4 = &file["V4"];
            let digest = |v: &Value| format!("0x{}", hex::encode(Sha256::digest(canonical(v).unwrap())));
            eq("issued digest", digest(&v4["option"]), v4["expectIssuedDigest"].as_str().unwrap().into())?;
            eq("reordered", digest(&v4["reordered"]), v4["expectIssuedDigest"].as_str().unwrap().into())?;
            ensure!(same_json(&v4["option"], &v4["reordered"]), "RFC 8785 equality");
            Ok(())
        }
        "V5" => {
            let v5 = &file["V5"];
            let read = eip3009().read(&v5["expectDocument"]).map_err(|r| r.to_string())?;
            let Offer::X402 { options, .. } = &read.offer else { return Err("offer".into()) };
            eq("read", json!({"h": read.h.to_hex(), "link": read.link, "options": options}), v5["expectRead"].clone())?;
            let refusal = |doc: &Value| eip3009().read(doc).err().map(|r| r.code());
            eq(
                "readHttpLink",
                refusal(&v5["readHttpLink"]["doc"]),
                v5["readHttpLink"]["expect"]["code"].as_str().map(str::to_owned),
            )?;
            let mut doc = v5["expectDocument"].clone();
            doc["extensions"]["legalContext"]["info"]["value"] = v5["readMalformed"]["valueOverride"].clone();
            eq("readMalformed", refusal(&doc), v5["readMalformed"]["expect"]["code"].as_str().map(str::to_owned))
        }
        "MX" => {
            let mx = &file["MX"];
            let read = eip3009().read(&mx["expectDocument"]).map_err(|r| r.to_string())?;
            eq(
                "read",
                json!({"h": read.h.to_hex(), "link": read.link, "agreement": read.agreement}),
                mx["expectRead"].clone(),
            )
        }
        "agreedRefusals" => agreed_refusals(&file, &choice, &chosen, &built),
        _ => Err(format!("unhandled key {key}").into()),
    }
}

fn agreed_refusals(
    file: &Value,
    choice: &serde_json::Map<String, Value>,
    chosen: &Chosen,
    built: &eip3009::Authorization<'_>,
) -> Outcome {
    let h = AtrHash::parse(file["fixed"]["H"].as_str().unwrap()).unwrap();
    let doc = file["V5"]["expectDocument"].clone();
    let read_code = |doc: &Value| eip3009().read(doc).err().map(|r| r.code());
    let build_code = |choice: &serde_json::Map<String, Value>| eip3009::build(choice, &h).err().map(|r| r.code());
    let payment = match built.complete(&[file["V1"]["expectSignature"].as_str().unwrap().into()], chosen).unwrap() {
        terms::pairing::Completion::Next(_) => return Err("next".into()),
        completion => completion.payment_value().ok_or("no payment")?,
    };
    let bound_code = |p: &Value| eip3009().bound(p, None).err().map(|r| r.code());
    for row in file["agreedRefusals"]["rows"].as_array().unwrap() {
        let case = row["case"].as_str().unwrap();
        let want = row["expect"].as_str().map(str::to_owned);
        let mut got: Vec<Option<String>> = Vec::new();
        match case {
            "read or build with accepts not a list, or over 32 options" => {
                for accepts in [json!({}), json!(vec![doc["accepts"][0].clone(); 33])] {
                    let mut d = doc.clone();
                    d["accepts"] = accepts.clone();
                    got.push(read_code(&d));
                    let mut c = choice.clone();
                    c["required"]["accepts"] = accepts;
                    got.push(build_code(&c));
                }
            }
            "read with a legalContext link over 2048 characters" => {
                let mut d = doc.clone();
                let long = format!("https://atr.seller.example/{}", "a".repeat(2048));
                d["extensions"]["legalContext"]["info"]["legalContextUrl"] = json!(long);
                got.push(read_code(&d));
            }
            "read with legalContextUrl and legal_context_url present and different" => {
                let mut d = doc.clone();
                d["extensions"]["legalContext"]["info"]["legal_context_url"] =
                    json!("https://atr.seller.example/other");
                got.push(read_code(&d));
            }
            "build with a malformed from, asset, payTo, maxTimeoutSeconds or now, or an amount of 2^256 or more" => {
                let too_big = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
                for (member, value) in [("from", json!("0x1234")), ("now", json!(-1)), ("now", json!("1790000000"))] {
                    let mut c = choice.clone();
                    c.insert(member.into(), value);
                    got.push(build_code(&c));
                }
                for (member, value) in [
                    ("asset", json!("0xnot")),
                    ("payTo", json!(7)),
                    ("maxTimeoutSeconds", json!(60.5)),
                    ("amount", json!(too_big)),
                ] {
                    let mut c = choice.clone();
                    let mut o = c["accepted"].clone();
                    o[member] = value;
                    c.insert("accepted".into(), o.clone());
                    c["required"]["accepts"] = json!([o]);
                    got.push(build_code(&c));
                }
            }
            "build with a nonce that is not 0x and 64 hex digits" => {
                // build takes a typed AtrHash, so a malformed nonce cannot reach it; bound reads the same rule.
                let mut p = payment.clone();
                p["payload"]["authorization"]["nonce"] = json!("0x1234");
                got.push(bound_code(&p));
            }
            "complete with a signature outside 65 to 8192 decoded bytes" => {
                for sig in [format!("0x{}", "11".repeat(64)), format!("0x{}", "11".repeat(8193)), "11".repeat(65)] {
                    got.push(built.complete(&[sig.as_str().into()], chosen).err().map(|r| r.code()));
                }
            }
            "bound with a signature over 8192 decoded bytes, or not 0x and an even number of hex digits" => {
                for sig in [format!("0x{}", "11".repeat(8193)), "0x111".to_owned(), "11".repeat(65)] {
                    let mut p = payment.clone();
                    p["payload"]["signature"] = json!(sig);
                    got.push(bound_code(&p));
                }
            }
            other => return Err(format!("unhandled agreed refusal: {other}").into()),
        }
        ensure!(!got.is_empty() && got.iter().all(|g| *g == want), "{case}: got {got:?}, want {want:?}");
    }
    Ok(())
}

fn pairing_buyer_row(row: &Value) -> Outcome {
    let input = &row["input"];
    let expect = &row["expect"];
    let pairing = terms::pairing(row["pairing"].as_str().unwrap()).map_err(|d| d.detail)?;
    match row["name"].as_str().unwrap() {
        "B2" => {
            let doc = &input["doc"];
            let served = hex(input["servesHex"].as_str().unwrap());
            eq("served hash", atr_hash(&served).to_hex(), row["servedHash"].as_str().unwrap().into())?;
            let key = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
            let signer = CountingSigner::new(key, input["account"].as_str().unwrap());
            // The card, Stripe and NEAR Intents rows name no time (their build takes none): the vectors' shared clock
            // (NOTES.md, buyer.json's `fixed.now`), before their challenges' `expires`.
            let now = input["now"].as_u64().unwrap_or_else(|| Fixed::load().now());
            let mut options = Options::new().clock(FixedClock(now));
            if let Some(inputs) = input["inputs"].as_object() {
                options = options.inputs(inputs.clone());
            }
            let (got, _) = transact_serving(doc, pairing, Reply::ok(served), &signer, &options);
            expect_decline(&got, &expect["decline"])?;
            eq("sign calls", signer.count() as u64, expect["signCalls"].as_u64().unwrap())
        }
        "B6" => {
            for (case, want) in input["check"].as_array().unwrap().iter().zip(expect.as_array().unwrap()) {
                let got = check(&hex(case["bytesHex"].as_str().unwrap()), &input["presented"], pairing);
                match want.get("h") {
                    Some(h) => {
                        eq("h", got.map(|c| c.h.to_hex()).map_err(|d| d.detail), Ok(h.as_str().unwrap().into()))?
                    }
                    None => drop(expect_decline(&got, &want["decline"])?),
                }
            }
            Ok(())
        }
        other => Err(format!("unhandled buyer row {other}").into()),
    }
}

fn ignored(name: &str, why: &str) -> Trial {
    Trial::test(format!("{name} (not run: {why})"), || Ok(())).with_ignored_flag(true)
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();

    let buyer = vectors("buyer.json");
    for row in buyer["rows"].as_array().unwrap().clone() {
        let name = row["name"].as_str().unwrap().to_owned();
        let label = format!("buyer.json::{name}");
        match name.as_str() {
            n if n.starts_with("BA") || n == "BE2" => {
                trials.push(Trial::test(label, move || buyer_ba(&name, &row)));
            }
            n if n.starts_with('B') && !n.starts_with("BS") && !n.starts_with("BX") => {
                trials.push(Trial::test(label, move || buyer_b(&name, &row)));
            }
            #[cfg(feature = "stellar")]
            "BS1" | "BS2" => trials.push(Trial::test(label, move || conformance::x402_stellar::buyer_bs(&row))),
            #[cfg(not(feature = "stellar"))]
            "BS1" | "BS2" => trials.push(ignored(&label, "the Stellar family is not in this build")),
            "BX1" => trials.push(ignored(
                &label,
                "run in tests/xrpl_session.rs (buyer_json_bx1), which has the mpp and xrpl features",
            )),
            other => trials.push(Trial::test(label, {
                let other = other.to_owned();
                move || Err(format!("row {other} is neither run nor listed").into())
            })),
        }
    }

    core_trials(&mut trials);

    let file = vectors("x402-exact-eip155-eip3009.json");
    for key in file.as_object().unwrap().keys() {
        let label = format!("x402-exact-eip155-eip3009.json::{key}");
        match key.as_str() {
            "about" | "fixed" => {}
            "V1" | "V2" | "V4" | "V5" | "MX" | "agreedRefusals" => {
                let key = key.clone();
                trials.push(Trial::test(label, move || pairing_file(&key)));
            }
            "buyer" => {
                for row in file["buyer"]["rows"].as_array().unwrap().clone() {
                    let name = format!("{label}::{}", row["name"].as_str().unwrap());
                    trials.push(Trial::test(name, move || pairing_buyer_row(&row)));
                }
                if let Some(none) = file["buyer"].get("noSignedPayment") {
                    trials.push(ignored(&format!("{label}::noSignedPayment {none}"), "no B6 row"));
                }
            }
            "V3" => trials.push(ignored(&label, "seller side: the request commitment the seller issues")),
            "V6" => trials.push(ignored(&label, "seller side: settlement status and recovery from a receipt")),
            "plant" => trials.push(ignored(&label, "seller side: settlement status of a planted receipt")),
            other => {
                let other = other.to_owned();
                trials.push(Trial::test(label, move || Err(format!("key {other} is neither run nor listed").into())));
            }
        }
    }
    trials.push(ignored("x402-exact-eip155-eip3009.json::V5.advertise/httpLink/conflict", "seller side: advertise"));
    trials.push(ignored("x402-exact-eip155-eip3009.json::MX.advertise/conflicts", "seller side: advertise"));

    trials.extend(conformance::trials());
    libtest_mimic::run(&args, trials).exit();
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
