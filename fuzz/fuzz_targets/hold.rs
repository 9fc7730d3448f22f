//! A hold passed to `within` and `record_charge`: fuzzed JSON deserialised as a `ChannelHold`, then a sequence of
//! fuzzed steps on it, for the x402 batch-settlement pairing on EIP-155 with its vector fixture's local keys.
//!
//! Input: `hold ⏐ step ⏐ step …` (parts split on 0xFF). The hold is JSON text (the seed is the fixture's real
//! hold: transact, open_channel, record_charge "1000"). A step is `r<amount>` (record_charge), `w<amount>` (within,
//! the seller's new document asking that amount; empty keeps the fixture's), `p<amount>` (within, a partial refund
//! to that amount), `c` (within, the close), or else the whole part as a charged amount for record_charge. Each
//! step applies to the hold the previous one returned.
//!
//! Asserts, after every step that returns a hold: `charged ≤ signedMax`; `signedMax` never lowered (record_charge
//! keeps it, within keeps the larger); `charged` never lowered (record_charge) or kept (within); every other member
//! unchanged; and the signer is called only for a hold whose ATR hashes to its H, whose opening reads that H, and
//! whose pairing is this one (the comparison comes before the signature), and at most once per step.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ruint::aliases::U512;
use serde_json::Value;
use terms::pairing::ChannelHold;
use terms::{AtrHash, Options, Refund, atr_hash, record_charge, within};
use terms_fuzz::{CHANNEL, Fixture, fixture, parts, paused, real_hold, text};

/// Whether the hold is one whose ATR the gate would have compared: its bytes hash to its H, its opening reads that
/// H for this pairing.
fn compared(f: &Fixture, hold: &ChannelHold) -> bool {
    let Some(atr) = b64_decode(&hold.atr) else { return false };
    let h = atr_hash(&atr);
    AtrHash::parse(&hold.h) == Some(h)
        && hold.pairing == f.id
        && f.pairing().bound(&hold.opening, hold.landed.as_ref()) == Ok(h)
}

fn amounts(hold: &ChannelHold) -> (U512, U512) {
    (decimal_parse(&hold.charged).expect("charged"), decimal_parse(&hold.signed_max).expect("signedMax"))
}

fn same_but_amounts(a: &ChannelHold, b: &ChannelHold) -> bool {
    ChannelHold { charged: String::new(), signed_max: String::new(), ..a.clone() }
        == ChannelHold { charged: String::new(), signed_max: String::new(), ..b.clone() }
}

fuzz_target!(|data: &[u8]| {
    let _ = real_hold();
    let parts = parts(data);
    let Some(mut hold) = parts
        .first()
        .and_then(|p| terms::json::parse(&text(p)))
        .and_then(|v| serde_json::from_value::<ChannelHold>(v).ok())
    else {
        return;
    };
    let f = fixture(CHANNEL);
    let pairing = f.pairing();
    let signer = f.signer();
    let rt = paused();
    for step in parts.iter().skip(1).take(8) {
        let step = text(step);
        let (op, arg) = match step.chars().next() {
            Some(c @ ('r' | 'w' | 'p' | 'c')) => (c, &step[1..]),
            _ => ('r', step.as_str()),
        };
        let before = signer.count();
        let was_compared = compared(f, &hold);
        let next = if op == 'r' {
            record_charge(&hold, arg).inspect(|new| {
                let (old_charged, old_max) = amounts(&hold);
                let (charged, max) = amounts(new);
                assert_eq!(new.signed_max, hold.signed_max, "record_charge changed signedMax");
                assert!(charged >= old_charged, "record_charge lowered charged");
                assert!(max >= old_max);
                assert_eq!(decimal_parse(arg), Some(charged), "record_charge recorded another amount");
            })
        } else {
            let mut doc = f.doc.clone();
            if op == 'w' && !arg.is_empty() {
                doc["accepts"][0]["amount"] = Value::String(arg.to_owned());
            }
            let refund = match op {
                'p' => Some(Refund::partial(arg)),
                'c' => Some(Refund::close()),
                _ => None,
            };
            let options = Options::new().ids(terms::CountingIds::default()).inputs(f.inputs.clone());
            let got = rt.block_on(within(&doc, &hold, pairing, &signer, refund.as_ref(), &options));
            got.map(|w| {
                let (old_charged, old_max) = amounts(&hold);
                let (charged, max) = amounts(&w.hold);
                assert!(max >= old_max, "within lowered signedMax");
                assert_eq!(charged, old_charged, "within changed charged");
                assert_eq!(w.hold.charged, hold.charged);
                assert_eq!(signer.count(), before + 1, "within returned a payment without exactly one signature");
                w.hold
            })
        };
        assert!(signer.count() <= before + 1, "one step signed {} times", signer.count() - before);
        if signer.count() > before {
            assert!(was_compared, "signed in a hold whose ATR was not compared: {hold:?}");
            assert!(op != 'r', "record_charge signed");
        }
        let Ok(new) = next else { continue };
        let (charged, max) = amounts(&new);
        assert!(charged <= max, "charged {} above signedMax {}", new.charged, new.signed_max);
        assert!(same_but_amounts(&hold, &new), "a step changed more than the amounts");
        hold = new;
    }
});

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The bytes of canonical padded standard base64; `None` for anything else.
fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()?;
    (b64_encode(&bytes) == text).then_some(bytes)
}

/// A decimal string of at most 78 digits, as the gate reads amounts.
fn decimal_parse(text: &str) -> Option<ruint::aliases::U512> {
    (!text.is_empty() && text.len() <= 78 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| ruint::aliases::U512::from_str_radix(text, 10).ok())
        .flatten()
}
