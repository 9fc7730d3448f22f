//! A signer's answer to `finish`, for every built pairing: each pairing is confirmed once from its vector fixture
//! (the link serving "abc", whose hash the document advertises), then the fuzzed answers are joined to it.
//!
//! Input: the pairing's byte (modulo the number built), a selector byte, then the answer as JSON text. Selector bit
//! 4: a JSON array is passed as that many answers rather than one; bit 5: finish over other bytes ("abd") than were
//! compared; bit 6: pass no answer at all.
//!
//! Asserts: when `finish` completes a payment, its H is the hash of the bytes given, the pairing reads that H back
//! (`bound`), and `check` over the same bytes (with the landed read) reads the same H, while `check` over other
//! bytes declines; a pairing whose payment is no public proof may complete only with H echoed or nowhere signed;
//! a next request carries the same H; a decline names one of finish's codes and what moved carries the bytes' H;
//! and the same call gives the same answer twice.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::{Answer, DeclineCode, Finish, atr_hash, check, check_landed, finish};
use terms_fuzz::confirmed;

fuzz_target!(|data: &[u8]| {
    let [which, selector, rest @ ..] = data else { return };
    let selector = *selector;
    let all = confirmed();
    let (f, c) = &all[usize::from(*which) % all.len()];
    let pairing = f.pairing();
    let Ok(answer) = serde_json::from_slice::<Value>(rest) else { return };
    let answers: Vec<Answer> = match answer {
        _ if selector & 0x40 != 0 => Vec::new(),
        Value::Array(items) if selector & 0x10 != 0 => items.into_iter().map(Answer::new).collect(),
        one => vec![Answer::new(one)],
    };
    let bytes: &[u8] = if selector & 0x20 != 0 { b"abd" } else { &c.bytes };
    let h = atr_hash(bytes);
    let got = finish(bytes, &c.chosen, &answers, pairing);
    assert_eq!(got, finish(bytes, &c.chosen, &answers, pairing), "{}: finish answered differently", f.id);
    match got {
        Ok(Finish::Finished(done)) => {
            assert_eq!(done.h, h, "{}: finished with another H", f.id);
            let landed = done.landed.as_ref();
            let signed = done.signed.to_value();
            match pairing.bound(&signed, landed) {
                Ok(read) => {
                    assert_eq!(read, h, "{}: the payment finish returned reads another H", f.id);
                    let checked = check_landed(bytes, &signed, landed, pairing).map(|c| c.h);
                    assert_eq!(checked, Ok(h), "{}: check does not read what finish read", f.id);
                    if landed.is_none() {
                        assert_eq!(check(bytes, &signed, pairing).map(|c| c.h), Ok(h));
                    }
                    let other: &[u8] = if bytes == b"abd" { b"abc" } else { b"abd" };
                    let code = check_landed(other, &signed, landed, pairing).map_err(|d| d.code);
                    assert_eq!(code, Err(DeclineCode::SignedNotBound), "{}: check accepted other bytes", f.id);
                }
                Err(r) => {
                    assert!(
                        !pairing.public_proof() && r.is_nothing_to_sign(),
                        "{}: finished a payment the pairing reads no H from: {r:?}",
                        f.id
                    );
                }
            }
        }
        Ok(Finish::Next(next)) => assert_eq!(next.h, h, "{}: a next request for another H", f.id),
        Err(d) => {
            assert!(
                matches!(d.code, DeclineCode::SignedNotBound | DeclineCode::OfferUnreadable),
                "{}: finish declined {:?}",
                f.id,
                d.code
            );
            if let Some(moved) = &d.moved {
                assert_eq!(moved.h, h);
                assert_eq!(moved.bytes, bytes);
            }
        }
    }
});
