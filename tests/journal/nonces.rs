//! `JournalConfig::one_nonce_per_payer`: through a pairing whose authorization's nonce is H, a second purchase of
//! the same payer under the same H is blocked `journal/nonce-used` (in `look` and in `begin`, nothing recorded) once
//! the first one's payment may have moved; another H, another payer, a pairing whose nonce is not H, a first payment
//! that was never sent, or the setting off: as before.

use terms::safety::Begun;
use terms::safety::journal::JournalConfig;

use super::backends::Place;
use super::{ATR, day, fx, intent, kind, payment};

on_both_backends!(a_second_purchase_under_one_h_is_refused_where_the_nonce_is_h);

async fn a_second_purchase_under_one_h_is_refused_where_the_nonce_is_h(place: Place) {
    let on = JournalConfig { one_nonce_per_payer: true, ..JournalConfig::default() };
    let journal = place.open(on).await;
    let mut f = fx();
    f.chosen.pairing = "x402/exact/eip155/eip3009".into();
    let claims = day(10, 1);
    // A first purchase whose intent was recorded but nothing signed: its nonce is not used yet.
    assert_eq!(kind(&journal.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap()), "fresh");
    assert_eq!(kind(&journal.look(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap()), "fresh");
    // Signed: its payment may move, and its nonce, H, is taken for this payer.
    journal.signed("a1", ATR, &payment()).await.unwrap();
    for got in [
        journal.look(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap(),
        journal.begin(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap(),
    ] {
        let Begun::Blocked(reason, why) = &got else { panic!("{}", kind(&got)) };
        assert_eq!(reason.as_str(), "nonce-used");
        assert!(why.contains("k1") && why.contains("static ATR"), "{why}");
    }
    assert!(journal.record("k2").await.unwrap().is_none(), "nothing recorded for the blocked purchase");
    // The same purchase again is a re-send, as ever.
    assert!(kind(&journal.begin(&intent(&f, "k1", "a3", &claims, 100)).await.unwrap()).starts_with("resend"));
    // Another payer, another H, or a pairing whose nonce is not H: fresh.
    let mut other = fx();
    other.chosen.pairing = f.chosen.pairing.clone();
    other.account = "eip155:8453:0xOther".into();
    assert_eq!(kind(&journal.begin(&intent(&other, "k3", "a4", &claims, 100)).await.unwrap()), "fresh");
    let mut new_terms = fx();
    new_terms.chosen.pairing = f.chosen.pairing.clone();
    new_terms.h = terms::atr_hash(b"other terms");
    assert_eq!(kind(&journal.begin(&intent(&new_terms, "k4", "a5", &claims, 100)).await.unwrap()), "fresh");
    let mut permit2 = fx();
    permit2.chosen.pairing = "x402/exact/eip155/permit2".into();
    journal.begin(&intent(&permit2, "k5", "a6", &claims, 100)).await.unwrap();
    journal.signed("a6", ATR, &payment()).await.unwrap();
    assert_eq!(kind(&journal.begin(&intent(&permit2, "k6", "a7", &claims, 100)).await.unwrap()), "fresh");

    // The setting off (the default): the second purchase under one H begins.
    let off = place.fresh().await.open(JournalConfig::default()).await;
    off.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap();
    off.signed("a1", ATR, &payment()).await.unwrap();
    assert_eq!(kind(&off.begin(&intent(&f, "k2", "a2", &claims, 100)).await.unwrap()), "fresh");
}
