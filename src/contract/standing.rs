//! The seller's standing from its offer card and a verifier's attestation: the protocol-free
//! [`SellerStanding`] a spend policy reads ([`Options::seller`](crate::Options::seller)).
//!
//! A card's `proof` is the seller's own repetition of a verifier's record; it counts only beside the verifier's
//! signed [`Attestation`], and only where the two tell the same story. The figures the policy reads are the
//! attestation's, never the card's.

use super::read::Signed;
use super::types::{Attestation, OfferCard, Window};
use crate::gate::{Attested, SellerStanding};

/// Why an offer card's proof does not count: the seller stays unproven (`.unwrap_or_default()` gives
/// [`SellerStanding::Unproven`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Uncounted {
    /// The card carries no `proof`.
    #[error("the offer card carries no proof")]
    NoProof,
    /// No attestation was given for the card's proof.
    #[error("no attestation was given for the offer card's proof")]
    NoAttestation,
    /// The attestation is signed by another verifier than the one the card's proof names.
    #[error("the card's proof names the verifier {card:?}, and the attestation is by {attestation:?}")]
    Verifier {
        /// The card's `proof.by`.
        card: String,
        /// The attestation's `verifier`.
        attestation: String,
    },
    /// The attestation is of another seller than the card's.
    #[error("the card is {card:?}'s, and the attestation is of {attestation:?}")]
    Subject {
        /// The card's `seller.host`.
        card: String,
        /// The attestation's `subject`.
        attestation: String,
    },
    /// A window time is not an RFC 3339 date-time.
    #[error("{0:?} is not an RFC 3339 date-time")]
    Time(String),
    /// The attestation's window ends before it starts.
    #[error("the attestation's window ends ({until}) before it starts ({from})")]
    WindowEndsFirst {
        /// Its `from`.
        from: String,
        /// Its `until`.
        until: String,
    },
    /// The card's proof covers another window than the attestation.
    #[error("the card's proof covers {card}, and the attestation {attestation}")]
    Window {
        /// The card's window, `from/until`.
        card: String,
        /// The attestation's window, `from/until`.
        attestation: String,
    },
    /// The card's proof claims another number of calls than the attestation counts.
    #[error("the card's proof claims {card} calls, and the attestation counts {attestation}")]
    Calls {
        /// The card's `proof.calls`.
        card: u64,
        /// The attestation's `calls`.
        attestation: u64,
    },
    /// The attestation's per-Verb calls do not add up to its `calls`.
    #[error("the attestation's results add up to {results} calls, and it counts {calls}")]
    Results {
        /// The sum of `results[].calls`.
        results: u128,
        /// Its `calls`.
        calls: u64,
    },
    /// A Verb's success rate is not a number from 0 to 1.
    #[error("the attestation's success rate for {verb:?} is {success}, not a share from 0 to 1")]
    Success {
        /// The Verb.
        verb: String,
        /// Its success rate, as a decimal.
        success: String,
    },
}

/// What the buyer may count about the seller of `card`: the figures of `attestation` when it is the signed record
/// behind the card's `proof`; otherwise why not (the seller is then unproven).
///
/// **The caller verifies both documents first**: the card under the seller's keys and the attestation under the
/// verifier's keys (fetched from the verifier named by the card's `proof.by`, at the card's `proof.signed` URL;
/// [`Signed::verify`]). This function reads figures; it checks no signature, and a figure from an unverified
/// document proves nothing.
///
/// The proof counts when an attestation is given and:
/// - its `verifier` is the card's `proof.by`, and its `subject` the card's `seller.host` (hosts, compared
///   ASCII-case-insensitively);
/// - its window is the card's (the same instants: `Z` and `+00:00` are one time) and its `calls` the card's: a card
///   that claims a longer window or more calls than its attestation (or any other figures) does not count;
/// - its `results[].calls` add up to its `calls`, and each Verb's `success` is from 0 to 1.
///
/// The figures are the attestation's: the window's length in seconds (`until` less `from`), its `calls`, and its
/// success rate weighted by calls over its `results` (the attestation has no overall figure; with no calls it is
/// 0). Each Verb's rate is read from its shortest decimal text and cut (never rounded up) to parts per million, and
/// the weighted mean is cut again, so the rate is never above what the verifier wrote. The card's own `success` is
/// not read: the attestation's figure is the one that counts, so a card cannot raise it.
pub fn standing(
    card: &Signed<OfferCard>,
    attestation: Option<&Signed<Attestation>>,
) -> Result<SellerStanding, Uncounted> {
    let card = card.doc();
    let proof = card.proof.as_ref().ok_or(Uncounted::NoProof)?;
    let attestation = attestation.ok_or(Uncounted::NoAttestation)?.doc();
    if !proof.by.eq_ignore_ascii_case(&attestation.verifier) {
        return Err(Uncounted::Verifier { card: proof.by.clone(), attestation: attestation.verifier.clone() });
    }
    if !card.seller.host.eq_ignore_ascii_case(&attestation.subject) {
        return Err(Uncounted::Subject { card: card.seller.host.clone(), attestation: attestation.subject.clone() });
    }
    let (from, until) = instants(&attestation.window)?;
    if until < from {
        let window = &attestation.window;
        return Err(Uncounted::WindowEndsFirst { from: window.from.clone(), until: window.until.clone() });
    }
    if instants(&proof.window)? != (from, until) {
        let show = |w: &Window| format!("{}/{}", w.from, w.until);
        return Err(Uncounted::Window { card: show(&proof.window), attestation: show(&attestation.window) });
    }
    if proof.calls != attestation.calls {
        return Err(Uncounted::Calls { card: proof.calls, attestation: attestation.calls });
    }
    let success = success(attestation)?;
    // `until` is not before `from`, so the length is not negative; it fits u64 (the reader's years are 4 digits).
    let window = u64::try_from(until.saturating_sub(from)).unwrap_or(u64::MAX);
    // A share is at most whole (`success` weighs the verbs' shares, each at most 1); `new` refuses more, so it is
    // held to whole rather than read as unproven.
    Ok(Attested::new(window, attestation.calls, success.min(Attested::WHOLE))
        .map_or(SellerStanding::Unproven, SellerStanding::Attested))
}

/// A window's two times as Unix seconds.
fn instants(window: &Window) -> Result<(i64, i64), Uncounted> {
    let at = |text: &str| crate::rfc3339::unix_of(text).ok_or_else(|| Uncounted::Time(text.to_owned()));
    Ok((at(&window.from)?, at(&window.until)?))
}

/// The attestation's success rate, in parts per million, weighted by calls over its results.
fn success(attestation: &Attestation) -> Result<u32, Uncounted> {
    let mut calls: u128 = 0;
    let mut succeeded: u128 = 0;
    for result in &attestation.results {
        let Some(ppm) = ppm_of(result.success) else {
            return Err(Uncounted::Success { verb: result.verb.clone(), success: result.success.to_string() });
        };
        calls += u128::from(result.calls);
        // At most 2^64 calls times 10^6 a result, and a document of at most 256 KiB holds fewer than 2^18 results.
        succeeded = succeeded.saturating_add(u128::from(result.calls) * u128::from(ppm));
    }
    if calls != u128::from(attestation.calls) {
        return Err(Uncounted::Results { results: calls, calls: attestation.calls });
    }
    if calls == 0 {
        return Ok(0);
    }
    // A mean of rates of at most 10^6 is at most 10^6.
    Ok(u32::try_from(succeeded / calls).unwrap_or(Attested::WHOLE))
}

/// A share from 0 to 1 in parts per million, from its shortest decimal text (Rust writes an `f64` with the fewest
/// digits that read back as it, and never with an exponent), the digits past the sixth place cut. `None` for a
/// value outside 0 to 1.
fn ppm_of(share: f64) -> Option<u32> {
    if !(0.0..=1.0).contains(&share) {
        return None;
    }
    let text = share.abs().to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let whole: u32 = match whole {
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let six = fraction.bytes().chain(std::iter::repeat(b'0')).take(6);
    let fraction =
        six.map(|d| d.is_ascii_digit().then(|| u32::from(d - b'0'))).try_fold(0u32, |n, d| Some(n * 10 + d?))?;
    Some(whole * 1_000_000 + fraction).filter(|&v| v <= Attested::WHOLE)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Uncounted, ppm_of, standing};
    use crate::contract::{Attestation, OfferCard, Signed, read};
    use crate::gate::{Attested, SellerStanding};

    const FROM: &str = "2026-06-01T00:00:00Z";
    const UNTIL: &str = "2026-07-01T00:00:00Z";
    /// 30 days.
    const WINDOW: u64 = 2_592_000;

    fn card(proof: Option<Value>) -> Value {
        let mut card = json!({
            "contract": "1.0",
            "seller": {"host": "api.seller.example", "verification": "domain"},
            "rates": [{"name": "translate", "price": "0.002", "currency": "USD", "unit": "call", "miss": "free"}],
            "quote": "https://api.seller.example/quote",
            "terms": {"digest": format!("0x{}", "ab".repeat(32)), "refund": "none", "license": "use"},
            "pay": [{"kind": "x402"}],
            "keys": "https://api.seller.example/.well-known/receipt-keys",
            "issued": "2026-07-02T00:00:00Z",
            "kid": "k1",
            "signature": "ed25519:x"
        });
        if let Some(proof) = proof {
            card["proof"] = proof;
        }
        card
    }

    fn proof() -> Value {
        json!({
            "by": "verifier.example",
            "window": {"from": FROM, "until": UNTIL},
            "calls": 1200,
            "success": 0.99,
            "signed": "https://verifier.example/attestations/api.seller.example"
        })
    }

    fn attestation() -> Value {
        json!({
            "contract": "1.0",
            "verifier": "verifier.example",
            "subject": "api.seller.example",
            "checked": ["receipts", "outputs"],
            "window": {"from": FROM, "until": UNTIL},
            "calls": 1200,
            "results": [
                {"verb": "translate", "calls": 1000, "success": 0.99},
                {"verb": "summarize", "calls": 200, "success": 1}
            ],
            "issued": "2026-07-01T01:00:00Z",
            "kid": "v1",
            "signature": "ed25519:x"
        })
    }

    fn read_card(card: &Value) -> Signed<OfferCard> {
        read(card.to_string().as_bytes()).unwrap()
    }

    fn read_attestation(attestation: &Value) -> Signed<Attestation> {
        read(attestation.to_string().as_bytes()).unwrap()
    }

    fn of(card: &Value, attestation: &Value) -> Result<SellerStanding, Uncounted> {
        standing(&read_card(card), Some(&read_attestation(attestation)))
    }

    #[test]
    fn a_proof_its_attestation_bears_out_counts_with_the_attestations_figures() {
        // (1000 × 990000 + 200 × 1000000) / 1200 = 991666.6…, cut to 991666.
        let expected = Attested::new(WINDOW, 1200, 991_666).unwrap();
        assert_eq!(of(&card(Some(proof())), &attestation()), Ok(SellerStanding::Attested(expected)));
        // The card's own success figure is not read: a card claiming a perfect record gets the attestation's.
        let mut boasting = proof();
        boasting["success"] = json!(1.0);
        assert_eq!(of(&card(Some(boasting)), &attestation()), Ok(SellerStanding::Attested(expected)));
    }

    #[test]
    fn without_an_attestation_or_a_proof_the_seller_is_unproven() {
        let card_with_proof = read_card(&card(Some(proof())));
        assert_eq!(standing(&card_with_proof, None), Err(Uncounted::NoAttestation));
        assert_eq!(standing(&card_with_proof, None).unwrap_or_default(), SellerStanding::Unproven);
        let bare = read_card(&card(None));
        assert_eq!(standing(&bare, Some(&read_attestation(&attestation()))), Err(Uncounted::NoProof));
    }

    #[test]
    fn an_attestation_by_another_verifier_does_not_count() {
        let mut other = attestation();
        other["verifier"] = json!("friendly-verifier.example");
        let expected =
            Uncounted::Verifier { card: "verifier.example".into(), attestation: "friendly-verifier.example".into() };
        assert_eq!(of(&card(Some(proof())), &other), Err(expected));
    }

    #[test]
    fn an_attestation_of_another_seller_does_not_count() {
        let mut other = attestation();
        other["subject"] = json!("api.other-seller.example");
        let expected =
            Uncounted::Subject { card: "api.seller.example".into(), attestation: "api.other-seller.example".into() };
        assert_eq!(of(&card(Some(proof())), &other), Err(expected));
    }

    #[test]
    fn hosts_compare_in_any_case_and_times_by_their_instant() {
        let mut shouting = attestation();
        shouting["verifier"] = json!("Verifier.Example");
        shouting["subject"] = json!("API.seller.example");
        shouting["window"] = json!({"from": "2026-06-01T02:00:00+02:00", "until": "2026-07-01t00:00:00z"});
        let counted = of(&card(Some(proof())), &shouting).unwrap();
        assert_eq!(counted, SellerStanding::Attested(Attested::new(WINDOW, 1200, 991_666).unwrap()));
    }

    #[test]
    fn a_card_that_claims_more_calls_than_its_attestation_does_not_count() {
        let mut more = proof();
        more["calls"] = json!(1201);
        assert_eq!(of(&card(Some(more)), &attestation()), Err(Uncounted::Calls { card: 1201, attestation: 1200 }));
        let mut fewer = proof();
        fewer["calls"] = json!(1199);
        assert_eq!(of(&card(Some(fewer)), &attestation()), Err(Uncounted::Calls { card: 1199, attestation: 1200 }));
    }

    #[test]
    fn a_card_that_claims_a_longer_window_than_its_attestation_does_not_count() {
        let mut longer = proof();
        longer["window"]["from"] = json!("2026-01-01T00:00:00Z");
        let expected =
            Uncounted::Window { card: format!("2026-01-01T00:00:00Z/{UNTIL}"), attestation: format!("{FROM}/{UNTIL}") };
        assert_eq!(of(&card(Some(longer)), &attestation()), Err(expected));
    }

    #[test]
    fn a_window_that_is_not_a_time_or_ends_first_does_not_count() {
        let mut garbled = attestation();
        garbled["window"]["until"] = json!("July 2026");
        assert_eq!(of(&card(Some(proof())), &garbled), Err(Uncounted::Time("July 2026".into())));
        let mut garbled_card = proof();
        garbled_card["window"]["from"] = json!("2026-06-01");
        assert_eq!(of(&card(Some(garbled_card)), &attestation()), Err(Uncounted::Time("2026-06-01".into())));
        let mut backwards = attestation();
        backwards["window"] = json!({"from": UNTIL, "until": FROM});
        let mut card_backwards = proof();
        card_backwards["window"] = backwards["window"].clone();
        let expected = Uncounted::WindowEndsFirst { from: UNTIL.into(), until: FROM.into() };
        assert_eq!(of(&card(Some(card_backwards)), &backwards), Err(expected));
    }

    #[test]
    fn results_that_do_not_add_up_or_a_rate_outside_zero_to_one_do_not_count() {
        let mut short = attestation();
        short["results"][1]["calls"] = json!(199);
        assert_eq!(of(&card(Some(proof())), &short), Err(Uncounted::Results { results: 1199, calls: 1200 }));
        let mut none = attestation();
        none["results"] = json!([]);
        assert_eq!(of(&card(Some(proof())), &none), Err(Uncounted::Results { results: 0, calls: 1200 }));
        let mut over = attestation();
        over["results"][0]["success"] = json!(1.5);
        let expected = Uncounted::Success { verb: "translate".into(), success: "1.5".into() };
        assert_eq!(of(&card(Some(proof())), &over), Err(expected));
        let mut negative = attestation();
        negative["results"][1]["success"] = json!(-0.1);
        assert!(
            matches!(of(&card(Some(proof())), &negative), Err(Uncounted::Success { verb, .. }) if verb == "summarize")
        );
    }

    #[test]
    fn an_attestation_of_no_calls_counts_with_a_rate_of_zero() {
        let mut quiet = attestation();
        quiet["calls"] = json!(0);
        quiet["results"] = json!([]);
        let mut claim = proof();
        claim["calls"] = json!(0);
        let expected = Attested::new(WINDOW, 0, 0).unwrap();
        assert_eq!(of(&card(Some(claim)), &quiet), Ok(SellerStanding::Attested(expected)));
    }

    #[test]
    fn a_rate_is_read_from_its_shortest_decimal_and_cut_to_parts_per_million() {
        assert_eq!(ppm_of(0.99), Some(990_000));
        assert_eq!(ppm_of(0.1 + 0.2), Some(300_000), "0.30000000000000004 is cut, not rounded");
        assert_eq!(ppm_of(0.999_999_9), Some(999_999), "never rounded up to 1");
        assert_eq!(ppm_of(0.000_000_1), Some(0));
        assert_eq!(ppm_of(0.000_001), Some(1));
        assert_eq!(ppm_of(1.0), Some(1_000_000));
        assert_eq!(ppm_of(0.0), Some(0));
        assert_eq!(ppm_of(-0.0), Some(0));
        for bad in [1.000_000_1, -0.000_001, f64::NAN, f64::INFINITY, 2.0] {
            assert_eq!(ppm_of(bad), None, "{bad}");
        }
    }
}
