//! Option selection: `read` and `choose` through `confirm`, for any built pairing, with an in-memory fetch that
//! serves the fixtures' ATR ("abc", whose hash every fixture document advertises), a fuzzed document, account, buyer
//! inputs and clock.
//!
//! Input: the pairing's byte (modulo the number built), then `document ⏐ account ⏐ inputs ⏐ now` (parts split on
//! 0xFF; the document and inputs are JSON text read by the gate's depth-capped parser; an empty or unreadable part
//! keeps the fixture's value). One pairing per execution, as `finish` takes it: every pairing in turn made each
//! execution about sixty times as slow, and the fuzzer still reaches any pairing with any document by that byte.
//!
//! Asserts, for the pairing: at most one fetch, and none when the offer is unreadable, unpayable or its link refused;
//! a read the pairing refuses is `offer-unreadable` with the refusal's code; a confirmation fetched the read's link
//! once, carries the hash of the bytes served (which is the advertised H), names this pairing, chooses an option
//! the document offers, names an agreement URL only for a pairing whose payment is no public proof, and survives a
//! serde round trip; and the same call again gives the same answer (the same decline, or a confirmation of the same
//! bytes and H for the same pairing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::json::is_offered;
use terms::{Confirmed, DeclineCode, FixedClock, Options, atr_hash, confirm};
use terms_fuzz::{FuzzFetch, fixtures, parts, paused, text};

fuzz_target!(|data: &[u8]| {
    let [which, rest @ ..] = data else { return };
    let parts = parts(rest);
    let Some(doc) = parts.first().and_then(|p| terms::json::parse(&text(p))) else { return };
    let rt = paused();
    let all = fixtures();
    let f = &all[usize::from(*which) % all.len()];
    let pairing = f.pairing();
    let account = parts.get(1).map_or_else(|| f.account.clone(), |p| text(p));
    let inputs = match parts.get(2).and_then(|p| terms::json::parse(&text(p))) {
        Some(Value::Object(m)) => m,
        _ => f.inputs.clone(),
    };
    let now = parts.get(3).and_then(|p| text(p).parse::<u64>().ok()).unwrap_or(f.now);
    let run = || {
        let fetch = FuzzFetch::serving(&f.atr);
        let options = Options::new().clock(FixedClock(now)).ids(terms::CountingIds::default()).inputs(inputs.clone());
        let got = rt.block_on(confirm(&doc, pairing, &account, &fetch, &options));
        (got, fetch.asked())
    };
    let (got, asked) = run();
    assert!(asked.len() <= 1, "{}: {} fetches", f.id, asked.len());
    let read = pairing.read(&doc);
    match (&got, &read) {
        (Err(d), Err(r)) => {
            assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, r.code().as_str()), "{}", f.id);
        }
        (Ok(_), Err(r)) => panic!("{}: confirmed an offer its read refuses ({r:?})", f.id),
        (_, Ok(_)) => {}
    }
    match &got {
        Err(d) => {
            if matches!(
                d.code,
                DeclineCode::NoPayableOption | DeclineCode::LinkNotHttps | DeclineCode::PairingNotSupported
            ) || read.is_err()
            {
                assert!(asked.is_empty(), "{}: fetched before declining {:?}", f.id, d.code);
            }
            assert!(d.moved.is_none(), "{}: nothing moves in confirm", f.id);
        }
        Ok(c) => confirmed(f.id, pairing.public_proof(), &doc, c, read.as_ref().ok(), &asked, &f.atr),
    }
    // The same call again gives the same answer. A build may draw a fresh random value where the buyer's
    // inputs give none (the batch channel's deposit `authSalt`), so a confirmation is compared by what it
    // read and compared, a decline whole.
    let (again, _) = run();
    match (&got, &again) {
        (Ok(a), Ok(b)) => assert_eq!((a.h, &a.bytes, &a.chosen.pairing), (b.h, &b.bytes, &b.chosen.pairing)),
        (a, b) => assert_eq!(a, b, "{}: the same confirm answered differently", f.id),
    }
});

fn confirmed(
    id: &str,
    public_proof: bool,
    doc: &Value,
    c: &Confirmed,
    read: Option<&terms::pairing::Advertised>,
    asked: &[terms_fuzz::Asked],
    served: &[u8],
) {
    let read = read.expect("a confirmation has a read");
    assert_eq!(asked.len(), 1, "{id}: one fetch");
    assert_eq!(asked[0].url, read.link, "{id}: the read's link is the one fetched");
    assert_eq!(c.bytes, served, "{id}: the bytes are the ones served");
    assert_eq!(c.h, atr_hash(served), "{id}: H is the hash of the bytes");
    assert_eq!(c.h, read.h, "{id}: the hash compared equal to the advertised one");
    assert_eq!(c.chosen.pairing, id);
    if let Some(accepted) = c.chosen.build_input.get("accepted") {
        let accepts = doc["accepts"].as_array().expect("accepts");
        assert!(is_offered(accepts, accepted), "{id}: chose an option the document does not offer");
    }
    assert!(c.chosen.agreement.is_none() || !public_proof, "{id}: an agreement URL for a public proof");
    let json = serde_json::to_string(c).expect("a confirmation serialises");
    let back: Confirmed = serde_json::from_str(&json).expect("and reads back");
    assert_eq!(&back, c, "{id}: the confirmation changed through serde");
}
