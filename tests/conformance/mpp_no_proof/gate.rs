//! The gate over the four pairings: `transact` through the agreement exchange with a stand-in seller (the agreement
//! payment is paid first, and the pairing's payment is the build itself: the signer is never asked for it), and bad
//! input (an `opaque` changed between confirm and finish, an expired challenge, a challenge whose id carries another
//! H).

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::{AtrHash, DeclineCode, FixedClock, Options, TransactOutcome, atr_hash, confirm, finish, transact};

use super::super::x402_evm::File;
use super::{FILES, atr_of, b64u_json, challenge, decoded, expires_unix, lcp, link_of_challenges, now, with_request};
use crate::support::{CountingSigner, Reply, ScriptedFetch, link_of, paused, vectors};
use crate::{Fixed, Outcome, eq};

pub(super) fn trials(all: &mut Vec<Trial>) {
    for name in FILES {
        let id = File::load(name).pairing_id();
        all.push(Trial::test(format!("mpp-no-proof::{id}::transact through the agreement exchange"), move || {
            agreement_first(name)
        }));
        let f = File::load(name);
        if f.row("B2")["input"]["account"] == Fixed::load().v["account"] {
            all.push(Trial::test(format!("mpp-no-proof::{id}::one signer for both payments"), move || {
                one_signer(name)
            }));
        }
        all.push(Trial::test(format!("mpp-no-proof::{id}::no agreement URL"), move || agreement_not_offered(name)));
        all.push(Trial::test(format!("mpp-no-proof::{id}::bad input::opaque changed after confirm"), move || {
            opaque_changed(name)
        }));
        all.push(Trial::test(format!("mpp-no-proof::{id}::bad input::expired challenge"), move || expired(name)));
        all.push(Trial::test(format!("mpp-no-proof::{id}::bad input::id carrying another H"), move || other_h(name)));
    }
}

/// The challenge placed again for `h`, as a seller places it: its id carries `h` at position 0, its `opaque` the
/// three LCP members (the agreement URL where one is given), and the carrier in its request (`externalId`, or the
/// metadata's `legal_context`: every string that was the file's L) is `h`'s LCP string.
fn placed_for(f: &File, h: &AtrHash, link: &str, agreement: Option<&str>) -> Value {
    let c = challenge(f);
    let old = f.fixed()["L"].as_str().unwrap().to_owned();
    fn carry(v: &mut Value, old: &str, new: &str) {
        match v {
            Value::String(s) if s == old => *s = new.to_owned(),
            Value::Array(a) => a.iter_mut().for_each(|x| carry(x, old, new)),
            Value::Object(m) => m.values_mut().for_each(|x| carry(x, old, new)),
            _ => {}
        }
    }
    let mut request = decoded(&c["request"]);
    carry(&mut request, &old, &lcp(h));
    let mut c = with_request(&c, &request);
    let mut opaque = json!({"legalContext": lcp(h), "legalContextUrl": link});
    if let Some(url) = agreement {
        opaque["legalContextAgreementUrl"] = json!(url);
    }
    c["id"] = json!(terms::mpp::challenge_id(h, 0).unwrap());
    c["opaque"] = json!(b64u_json(&opaque));
    c
}

/// The file's challenge placed for buyer.json's ATR A, with A's link and its agreement URL: the document the
/// agreement rows' stand-in seller answers for.
fn for_a(f: &File, fixed: &Fixed) -> Value {
    let url = fixed.agreement("url");
    json!([placed_for(f, &atr_hash(&fixed.bytes("A")), &link_of(&fixed.doc()), url.as_str())])
}

/// The payer of the main payment (the file's B2 account, which nothing is signed for) and the agreement's payer
/// (buyer.json's, on the agreement option's chain), and the options with the agreement signer set.
fn payers(f: &File, fixed: &Fixed) -> (CountingSigner, CountingSigner, Options) {
    let account = f.row("B2")["input"]["account"].as_str().unwrap();
    let main = CountingSigner::new(fixed.v["payerKey"].as_str().unwrap(), account);
    let agreeing = fixed.signer();
    let options = fixed.options().agreement_signer(Arc::new(agreeing.clone()));
    (main, agreeing, options)
}

/// buyer.json's BA1 steps at the agreement URL (402 with the agreement request, 202, 200 with the receipt), the link
/// serving A. Without an approval the agreement payment comes back to approve and nothing is signed; with it, the
/// agreement payment (EIP-3009, nonce H) is signed once and paid, and the pairing's payment is the build itself:
/// `signed` is none, the receipt is the agreement's, and the main signer is never asked.
fn agreement_first(name: &str) -> Outcome {
    let (f, fixed) = (File::load(name), Fixed::load());
    let pairing = f.pairing();
    let doc = for_a(&f, &fixed);
    let url = fixed.agreement("url").as_str().unwrap().to_owned();
    let ba1 = crate::row_named(&vectors("buyer.json")["rows"], "BA1").clone();
    let (replies, _) = crate::agreement_replies(&fixed, &ba1["input"]["agreement"]);
    let link = link_of(&fixed.doc());
    let fetch = ScriptedFetch::new().script_repeating(&link, vec![Reply::ok(fixed.bytes("A"))]).script(&url, replies);
    let (main, agreeing, options) = payers(&f, &fixed);
    paused().block_on(async {
        let confirmed = confirm(&doc, pairing, main_account(&main), &fetch, &options).await;
        let confirmed = confirmed.map_err(|d| format!("confirm: {d:?}"))?;
        eq("confirm's request (nothing to sign)", confirmed.request.is_none(), true)?;
        eq("confirm's agreement URL", confirmed.chosen.agreement.as_deref(), Some(url.as_str()))?;
        let first = transact(&doc, pairing, &main, &fetch, &options).await;
        let Ok(TransactOutcome::ToApprove(approve)) = first else { return Err(format!("first: {first:?}").into()) };
        eq("signer calls before approval", (main.count(), agreeing.count()), (0, 0))?;
        let approval = crate::approval_of(&TransactOutcome::ToApprove(approve.clone()));
        eq("approval", approval, Some(ba1["expect"]["approval"].clone()))?;
        let done = transact(&doc, pairing, &main, &fetch, &options.approved(approve.approve.clone())).await;
        let Ok(TransactOutcome::Signed(t)) = done else { return Err(format!("second: {done:?}").into()) };
        eq("the pairing's payment is the build: nothing signed", t.signed.is_none(), true)?;
        eq("h", t.h, atr_hash(&fixed.bytes("A")))?;
        eq("main signer calls", main.count(), 0)?;
        eq("agreement signer kinds", agreeing.calls().iter().map(|r| r.kind()).collect::<Vec<_>>(), vec!["eip712"])?;
        eq("agreement message", crate::typed_message(&agreeing.calls()[0]), ba1["expect"]["agreementMessage"].clone())?;
        eq("agreement signature", agreeing.answers()[0].clone(), ba1["expect"]["agreementSignature"].clone())?;
        let paid = fetch.paid_of(&url);
        eq("paid agreement requests", paid.len() as u64, ba1["expect"]["paidRequests"].as_u64().unwrap())?;
        eq("the same payment re-sent", paid[0].header("payment-signature"), paid[1].header("payment-signature"))?;
        let receipt = serde_json::to_value(&t.agreement).unwrap();
        eq("receipt", receipt, fixed.agreement(ba1["expect"]["receipt"].as_str().unwrap()))
    })
}

/// One signer for both payments, where the file's account is on the agreement option's chain (card and Stripe,
/// whose choice reads no account): its only call is the agreement payment's EIP-712 request.
fn one_signer(name: &str) -> Outcome {
    let (f, fixed) = (File::load(name), Fixed::load());
    let doc = for_a(&f, &fixed);
    let url = fixed.agreement("url").as_str().unwrap().to_owned();
    let ba1 = crate::row_named(&vectors("buyer.json")["rows"], "BA1").clone();
    let (replies, _) = crate::agreement_replies(&fixed, &ba1["input"]["agreement"]);
    let link = link_of(&fixed.doc());
    let fetch = ScriptedFetch::new().script_repeating(&link, vec![Reply::ok(fixed.bytes("A"))]).script(&url, replies);
    let signer = fixed.signer();
    paused().block_on(async {
        let first = transact(&doc, f.pairing(), &signer, &fetch, &fixed.options()).await;
        let Ok(TransactOutcome::ToApprove(approve)) = first else { return Err(format!("first: {first:?}").into()) };
        let options = fixed.options().approved(approve.approve);
        let done = transact(&doc, f.pairing(), &signer, &fetch, &options).await;
        let Ok(TransactOutcome::Signed(t)) = done else { return Err(format!("second: {done:?}").into()) };
        eq("nothing signed for the pairing", t.signed.is_none(), true)?;
        eq("receipt", t.agreement.is_some(), true)?;
        eq("signer kinds", signer.calls().iter().map(|r| r.kind()).collect::<Vec<_>>(), vec!["eip712"])?;
        eq("agreement signature", signer.answers()[0].clone(), ba1["expect"]["agreementSignature"].clone())
    })
}

fn main_account(signer: &CountingSigner) -> &str {
    terms::Signer::account(signer)
}

/// Without an agreement URL the pairing declines `agreement-not-offered` after the comparison, and nothing is
/// signed.
fn agreement_not_offered(name: &str) -> Outcome {
    let f = File::load(name);
    let doc = f.doc();
    let atr = atr_of(&f.h());
    let fetch = ScriptedFetch::new().script(&link_of_challenges(&doc), vec![Reply::ok(atr)]);
    let (main, agreeing, options) = payers(&f, &Fixed::load());
    let options = options.clock(FixedClock(now()));
    let got = paused().block_on(transact(&doc, f.pairing(), &main, &fetch, &options));
    eq("decline", got.map(|_| ()).map_err(|d| d.code), Err(DeclineCode::AgreementNotOffered))?;
    eq("fetches", fetch.asked().len(), 1)?;
    eq("signer calls", (main.count(), agreeing.count()), (0, 0))
}

/// An `opaque` changed between confirm and finish: `finish` rebuilds from the choice, and the choice's challenge must
/// still be held as the credential would echo it. Unchanged, the build is the payment (`mpp/no-signed-place` or
/// `mpp/nothing-to-sign`: finish has nothing to complete); an opaque naming another H, or none, or not a map of
/// strings, is refused before that (and the quote refuses it alike). An opaque that still names H (its link changed)
/// is the seller's HMAC to refuse: the buyer's build holds it as it holds the original.
fn opaque_changed(name: &str) -> Outcome {
    let (f, fixed) = (File::load(name), Fixed::load());
    let pairing = f.pairing();
    let doc = for_a(&f, &fixed);
    let a = fixed.bytes("A");
    let fetch = ScriptedFetch::new().script_repeating(&link_of(&fixed.doc()), vec![Reply::ok(a.clone())]);
    let (main, _, options) = payers(&f, &fixed);
    let confirmed = paused().block_on(confirm(&doc, pairing, main_account(&main), &fetch, &options));
    let confirmed = confirmed.map_err(|d| format!("{d:?}"))?;
    let finished = |chosen: &terms::pairing::Chosen| finish(&a, chosen, &[], pairing).map(|_| ()).map_err(|d| d.detail);
    let nothing = if pairing.id() == "mpp/charge/nearintents" { "mpp/nothing-to-sign" } else { "mpp/no-signed-place" };
    eq("unchanged", finished(&confirmed.chosen), Err(nothing.to_owned()))?;
    let c = confirmed.chosen.build_input["challenge"].clone();
    let opaque = decoded(&c["opaque"]);
    let other = atr_hash(&fixed.bytes("C"));
    let mut another_h = opaque.clone();
    another_h["legalContext"] = json!(lcp(&other));
    let mut other_link = opaque;
    other_link["legalContextUrl"] = json!("https://atr.seller.example/other");
    for (what, value, want) in [
        ("naming another H", Some(json!(b64u_json(&another_h))), "mpp/opaque-not-this-hash"),
        ("removed", None, "mpp/opaque-not-this-hash"),
        ("not a map of strings", Some(json!(b64u_json(&json!({"legalContext": 1})))), "mpp/opaque-malformed"),
        ("not base64url JSON", Some(json!("!!")), "mpp/opaque-malformed"),
        ("its link changed", Some(json!(b64u_json(&other_link))), nothing),
    ] {
        let mut chosen = confirmed.chosen.clone();
        let challenge = chosen.build_input.get_mut("challenge").unwrap().as_object_mut().unwrap();
        match value {
            Some(v) => drop(challenge.insert("opaque".into(), v)),
            None => drop(challenge.shift_remove("opaque")),
        }
        eq(&format!("finish, opaque {what}"), finished(&chosen), Err(want.to_owned()))?;
        let quoted = pairing.quote(&chosen).map(drop).map_err(|r| r.code());
        let want_quote = if want == nothing { Ok(()) } else { Err(want.to_owned()) };
        eq(&format!("quote, opaque {what}"), quoted, want_quote)?;
    }
    Ok(())
}

/// A challenge whose `expires` has passed by the gate's clock is not chosen: `no-payable-option`
/// (`mpp/challenge-expired`) before anything is fetched or signed; a second challenge that has not expired is chosen
/// in its place.
fn expired(name: &str) -> Outcome {
    let (f, fixed) = (File::load(name), Fixed::load());
    let doc = for_a(&f, &fixed);
    let at = expires_unix(&doc[0]);
    let (main, agreeing, options) = payers(&f, &fixed);
    let fetch = ScriptedFetch::new().script_repeating(&link_of(&fixed.doc()), vec![Reply::ok(fixed.bytes("A"))]);
    for now in [at, at + 1] {
        let options = options.clone().clock(FixedClock(now));
        let got = paused().block_on(transact(&doc, f.pairing(), &main, &fetch, &options));
        let got = got.map(|_| ()).map_err(|d| (d.code, d.detail));
        eq(&format!("at {now}"), got, Err((DeclineCode::NoPayableOption, "mpp/challenge-expired".to_owned())))?;
    }
    eq("fetches", fetch.asked().len(), 0)?;
    eq("signer calls", (main.count(), agreeing.count()), (0, 0))?;
    // A later challenge, in second place, is chosen once the first has expired.
    let mut later = doc[0].clone();
    later["expires"] = json!("2026-09-21T15:14:20Z");
    later["id"] = json!(terms::mpp::challenge_id(&atr_hash(&fixed.bytes("A")), 1).unwrap());
    let two = json!([doc[0], later]);
    let options = options.clock(FixedClock(at));
    let got = paused().block_on(confirm(&two, f.pairing(), main_account(&main), &fetch, &options));
    let got = got.map_err(|d| format!("{d:?}"))?;
    eq("the challenge chosen", &got.chosen.build_input["challenge"], &later)?;
    let quote = f.pairing().quote(&got.chosen).map_err(|r| r.code())?;
    eq("valid before", quote.valid_before, Some(at + 3600))
}

/// A challenge whose id and `opaque` carry another H than the bytes the link serves: `hash-mismatch`, the signer not
/// called (the file's own B2 row, with the link serving A); and one whose id alone carries another H than its
/// `opaque`: not read as the seller's (`mpp/no-legal-context`), nothing fetched.
fn other_h(name: &str) -> Outcome {
    let (f, fixed) = (File::load(name), Fixed::load());
    let (main, agreeing, options) = payers(&f, &fixed);
    let doc = for_a(&f, &fixed);
    let c_hash = atr_hash(&fixed.bytes("C"));
    let link = link_of(&fixed.doc());
    let mut planted = placed_for(&f, &c_hash, &link, fixed.agreement("url").as_str());
    let fetch = ScriptedFetch::new().script_repeating(&link, vec![Reply::ok(fixed.bytes("A"))]);
    let got = paused().block_on(transact(&json!([planted.clone()]), f.pairing(), &main, &fetch, &options));
    eq("decline", got.map(|_| ()).map_err(|d| d.code), Err(DeclineCode::HashMismatch))?;
    eq("fetches", fetch.asked().len(), 1)?;
    planted["opaque"] = doc[0]["opaque"].clone();
    let got = paused().block_on(transact(&json!([planted]), f.pairing(), &main, &fetch, &options));
    let got = got.map(|_| ()).map_err(|d| (d.code, d.detail));
    eq("id alone", got, Err((DeclineCode::OfferUnreadable, "mpp/no-legal-context".to_owned())))?;
    eq("fetches", fetch.asked().len(), 1)?;
    eq("signer calls", (main.count(), agreeing.count()), (0, 0))
}
