use proptest::prelude::*;
use ruint::aliases::U256;
use serde_json::{Value, json};

use super::*;
use crate::decline::Moved;
use crate::hash::atr_hash;

use Action::{
    DoNotRetry, OperatorReview, QueryFirst, RefreshCredential, ResendSamePayment, RetryAfterPayment,
    RetryAfterQuotaReset,
};
use Charge::{No, Unknown, Yes};

fn assert_recovery(recovery: Recovery, action: Action, charge: Charge, row: &str) {
    assert_eq!(recovery.action(), action, "{row}: action");
    assert_eq!(recovery.charge(), charge, "{row}: charge");
    assert_eq!(recovery.no_charge(), charge == No, "{row}: no_charge");
}

fn moved() -> Moved {
    Moved { signed: json!({"payload": {"signature": "0x00"}}), bytes: b"terms".to_vec(), h: atr_hash(b"terms") }
}

/// Every decline code, with and without `moved`: (code, detail, moved, action, charge).
const DECLINES: &[(DeclineCode, &str, bool, Action, Charge)] = {
    use DeclineCode as C;
    &[
        (C::PairingNotSupported, "The chosen payment is not for the pairing p.", false, DoNotRetry, No),
        (C::PairingNotSupported, "The chosen payment is not for the pairing p.", true, QueryFirst, Unknown),
        (C::OfferUnreadable, "x402/not-v2", false, DoNotRetry, No),
        (C::OfferUnreadable, "x402/not-v2", true, QueryFirst, Unknown),
        (C::NoPayableOption, "x402/no-payable-option", false, DoNotRetry, No),
        (C::NoPayableOption, "x402/no-payable-option", true, QueryFirst, Unknown),
        (C::LinkNotHttps, "x402/link-not-https", false, DoNotRetry, No),
        (C::LinkNotHttps, "x402/link-not-https", true, QueryFirst, Unknown),
        (C::AtrUnfetchable, "The link did not serve the ATR.", false, DoNotRetry, No),
        (C::AtrUnfetchable, "The link did not serve the ATR.", true, QueryFirst, Unknown),
        (C::AtrTooLarge, "The ATR is too large.", false, DoNotRetry, No),
        (C::AtrTooLarge, "The ATR is too large.", true, QueryFirst, Unknown),
        (C::HashMismatch, "The bytes do not hash to H.", false, DoNotRetry, No),
        (C::HashMismatch, "The bytes do not hash to H.", true, QueryFirst, Unknown),
        (C::SignerFailed, "The signer did not sign.", false, DoNotRetry, No),
        (C::SignerFailed, "The signer did not sign.", true, QueryFirst, Unknown),
        (C::SignedNotBound, "The pairing does not read the hash.", false, DoNotRetry, No),
        (C::SignedNotBound, "The pairing does not read the hash.", true, QueryFirst, Unknown),
        (C::AgreementNotOffered, "No agreement URL.", false, DoNotRetry, No),
        (C::AgreementNotOffered, "No agreement URL.", true, QueryFirst, Unknown),
        (C::AgreementPending, "An agreement payment for this ATR is already settling.", false, QueryFirst, Unknown),
        (C::AgreementPending, "The agreement payment was sent and is not yet recorded.", true, QueryFirst, Unknown),
        (C::AgreementFailed, "The agreement URL answered status 400.", false, DoNotRetry, No),
        (C::AgreementFailed, "The agreement URL answered status 400 to the payment.", true, QueryFirst, Unknown),
        (C::PolicyRefused, "policy/budget-exhausted", false, DoNotRetry, No),
        (C::PolicyRefused, "policy/amount-above-cap", true, QueryFirst, Unknown),
        (C::JournalFailed, "journal/unavailable", false, DoNotRetry, No),
        (C::JournalFailed, "journal/unavailable", true, OperatorReview, Unknown),
        (C::JournalFailed, "journal/in-flight", false, QueryFirst, Unknown),
        (C::JournalFailed, "journal/in-flight", true, OperatorReview, Unknown),
        (C::JournalFailed, "journal/state-unknown", false, OperatorReview, Unknown),
        (C::JournalFailed, "journal/state-unknown", true, OperatorReview, Unknown),
        (C::JournalFailed, "journal/something-new", false, OperatorReview, Unknown),
        (C::JournalFailed, "policy/unavailable", false, OperatorReview, Unknown),
        (C::JournalFailed, "", false, OperatorReview, Unknown),
    ]
};

#[test]
fn every_decline_code_with_and_without_moved_has_its_recovery() {
    for &(code, detail, with_moved, action, charge) in DECLINES {
        let declined = Declined::new(code, detail).with_moved(with_moved.then(moved));
        assert_recovery(
            Recovery::of_decline(&declined),
            action,
            charge,
            &format!("{code} {detail} moved={with_moved}"),
        );
        if let Some(reason) = journal_reason(detail) {
            // The gate's own journal declines read the same.
            let built = crate::gate::journal_failed(reason, "why").with_moved(with_moved.then(moved));
            assert_eq!(Recovery::of_decline(&built), Recovery::of_decline(&declined));
        }
        // The cause is a diagnostic, never read.
        let caused = declined.clone().with_cause("journal/state-unknown");
        assert_eq!(Recovery::of_decline(&caused), Recovery::of_decline(&declined));
    }
    for code in DeclineCode::ALL.into_iter().chain(DeclineCode::OURS) {
        for with_moved in [false, true] {
            assert!(
                DECLINES.iter().any(|&(c, _, m, _, _)| c == code && m == with_moved),
                "{code} moved={with_moved} has no row"
            );
        }
    }
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|&(n, v)| (n.to_owned(), v.to_owned())).collect()
}

const QUOTA_OUT: &[(&str, &str)] = &[("X-Quota-Limit", "100"), ("X-Quota-Remaining", "0"), ("X-Quota-Reset", "60")];
const BEARER_EXPIRED: &[(&str, &str)] =
    &[("WWW-Authenticate", r#"Bearer realm="api", error="invalid_token", error_description="expired""#)];

/// Every mapped HTTP answer: (status, headers, payment sent, expected; `None` for a success).
#[allow(clippy::type_complexity, reason = "a table")]
const HTTP: &[(u16, &[(&str, &str)], bool, Option<(Action, Charge)>)] = &[
    (200, &[], false, None),
    (200, &[], true, None),
    (201, &[], true, None),
    (204, &[], true, None),
    (202, &[("Location", "/jobs/1")], true, Some((QueryFirst, Yes))),
    (202, &[], false, Some((QueryFirst, No))),
    (402, &[], false, Some((RetryAfterPayment, No))),
    (402, &[], true, Some((DoNotRetry, No))),
    (402, QUOTA_OUT, false, Some((RetryAfterPayment, No))),
    (429, QUOTA_OUT, false, Some((RetryAfterQuotaReset, No))),
    (429, QUOTA_OUT, true, Some((RetryAfterQuotaReset, Unknown))),
    (403, QUOTA_OUT, false, Some((RetryAfterQuotaReset, No))),
    (429, &[], false, Some((OperatorReview, No))),
    (429, &[], true, Some((OperatorReview, Unknown))),
    (429, &[("Retry-After", "30")], false, Some((OperatorReview, No))),
    (
        429,
        &[("X-Quota-Limit", "100"), ("X-Quota-Remaining", "3"), ("X-Quota-Reset", "60")],
        false,
        Some((OperatorReview, No)),
    ),
    (429, &[("X-Quota-Limit", "100"), ("X-Quota-Remaining", "0")], false, Some((OperatorReview, No))),
    (429, &[("X-Quota-Remaining", "0"), ("X-Quota-Reset", "60")], false, Some((OperatorReview, No))),
    (
        429,
        &[("X-Quota-Limit", "100"), ("X-Quota-Remaining", "0"), ("X-Quota-Reset", "soon")],
        false,
        Some((OperatorReview, No)),
    ),
    (401, BEARER_EXPIRED, false, Some((RefreshCredential, No))),
    (401, BEARER_EXPIRED, true, Some((RefreshCredential, Unknown))),
    (403, BEARER_EXPIRED, false, Some((RefreshCredential, No))),
    (401, &[("www-authenticate", "Bearer error=INVALID_TOKEN")], false, Some((RefreshCredential, No))),
    (401, &[("WWW-Authenticate", r#"Bearer error = "expired_token""#)], false, Some((RefreshCredential, No))),
    (
        401,
        &[("WWW-Authenticate", r#"Basic realm="x""#), ("WWW-Authenticate", r#"Bearer error="invalid_token""#)],
        false,
        Some((RefreshCredential, No)),
    ),
    (403, &[("WWW-Authenticate", r#"Bearer error="insufficient_scope", scope="read""#)], false, Some((DoNotRetry, No))),
    (401, &[], false, Some((OperatorReview, No))),
    (403, &[], true, Some((OperatorReview, Unknown))),
    // An `error=` inside a quoted description is not the error.
    (
        401,
        &[("WWW-Authenticate", r#"Bearer error_description="error=invalid_token""#)],
        false,
        Some((OperatorReview, No)),
    ),
    (401, &[("WWW-Authenticate", r#"Bearer realm="a \"error=invalid_token\"""#)], false, Some((OperatorReview, No))),
    (400, &[], false, Some((DoNotRetry, No))),
    (400, &[], true, Some((DoNotRetry, Unknown))),
    (404, &[], false, Some((DoNotRetry, No))),
    (405, &[], false, Some((DoNotRetry, No))),
    (409, &[], true, Some((DoNotRetry, Unknown))),
    (410, &[], false, Some((DoNotRetry, No))),
    (413, &[], false, Some((DoNotRetry, No))),
    (415, &[], false, Some((DoNotRetry, No))),
    (422, &[], false, Some((DoNotRetry, No))),
    (500, &[], true, Some((ResendSamePayment, Unknown))),
    (502, &[], true, Some((ResendSamePayment, Unknown))),
    (503, &[("Retry-After", "5")], true, Some((ResendSamePayment, Unknown))),
    (599, &[], true, Some((ResendSamePayment, Unknown))),
    (500, &[], false, Some((DoNotRetry, No))),
    (504, &[], false, Some((DoNotRetry, No))),
    (100, &[], false, Some((OperatorReview, No))),
    (302, &[("Location", "/elsewhere")], true, Some((OperatorReview, Unknown))),
    (408, &[], true, Some((OperatorReview, Unknown))),
    (418, &[], false, Some((OperatorReview, No))),
    (600, &[], true, Some((OperatorReview, Unknown))),
    (0, &[], false, Some((OperatorReview, No))),
    (u16::MAX, &[], true, Some((OperatorReview, Unknown))),
];

#[test]
fn every_http_answer_has_its_recovery() {
    for &(status, pairs, sent, expected) in HTTP {
        let row = format!("{status} {pairs:?} payment_sent={sent}");
        let got = Recovery::of_http(status, &headers(pairs), sent);
        match expected {
            None => assert_eq!(got, None, "{row}"),
            Some((action, charge)) => {
                let Some(got) = got else { panic!("{row}: a success") };
                assert_recovery(got, action, charge, &row);
            }
        }
    }
}

#[test]
fn a_quota_error_without_its_headers_is_operator_review() {
    let got = Recovery::of_http(429, &[], false);
    assert_eq!(got, Some(Recovery::new(OperatorReview, No)));
    assert_eq!(Outcome::of_http(429, &[], false).and_then(|o| o.quota), None);
}

#[test]
fn transport_failures_have_their_recovery() {
    assert_recovery(Recovery::of_transport(true), ResendSamePayment, Unknown, "after paying");
    assert_recovery(Recovery::of_transport(false), DoNotRetry, No, "before paying");
}

#[test]
fn every_settlement_response_has_its_recovery() {
    let rows: &[(Value, Option<(Action, Charge)>)] = &[
        (json!({"success": true, "transaction": "0xabc", "network": "eip155:8453"}), None),
        (json!({"success": true, "errorReason": "insufficient_funds"}), None),
        (json!({"success": false, "errorReason": "insufficient_funds"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "invalid_exact_evm_payload_signature"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "invalid_network"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "INVALID_SIGNATURE"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "payment-expired"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "unsupported_scheme"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "unsupported_network"}), Some((DoNotRetry, No))),
        (json!({"success": false, "errorReason": "unexpected_settle_error"}), Some((QueryFirst, Unknown))),
        (json!({"success": false, "errorReason": "nonce_already_used"}), Some((QueryFirst, Unknown))),
        (
            json!({"success": false, "errorReason": "settle_exact_svm_transaction_confirmation_timed_out"}),
            Some((QueryFirst, Unknown)),
        ),
        (json!({"success": false, "errorReason": "invalidish"}), Some((QueryFirst, Unknown))),
        (json!({"success": false, "errorReason": 7}), Some((QueryFirst, Unknown))),
        (json!({"success": false}), Some((QueryFirst, Unknown))),
        (json!({"success": "false", "errorReason": "insufficient_funds"}), Some((OperatorReview, Unknown))),
        (json!({"errorReason": "insufficient_funds"}), Some((OperatorReview, Unknown))),
        (json!({}), Some((OperatorReview, Unknown))),
        (json!([{"success": true}]), Some((OperatorReview, Unknown))),
        (json!(null), Some((OperatorReview, Unknown))),
        (json!("success"), Some((OperatorReview, Unknown))),
    ];
    for (response, expected) in rows {
        let got = Recovery::of_settlement(response);
        match *expected {
            None => assert_eq!(got, None, "{response}"),
            Some((action, charge)) => {
                let Some(got) = got else { panic!("{response}: a success") };
                assert_recovery(got, action, charge, &response.to_string());
            }
        }
    }
}

#[test]
fn no_charge_is_charge_no_for_every_action_and_charge() {
    for action in Action::ALL {
        for charge in [No, Yes, Unknown] {
            let r = Recovery::new(action, charge);
            assert_eq!(r.no_charge(), charge == No);
            let text = serde_json::to_value(r).unwrap();
            assert_eq!(text, json!({"action": action.as_str(), "no_charge": charge == No, "charge": charge.as_str()}));
            assert_eq!(serde_json::from_value::<Recovery>(text).unwrap(), r);
        }
    }
}

#[test]
fn a_recovery_whose_no_charge_disagrees_does_not_deserialize() {
    for text in [
        json!({"action": "do-not-retry", "no_charge": false, "charge": "no"}),
        json!({"action": "query-first", "no_charge": true, "charge": "unknown"}),
        json!({"action": "query-first", "no_charge": true, "charge": "yes"}),
        json!({"action": "query-first", "charge": "yes"}),
        json!({"action": "wait", "no_charge": true, "charge": "no"}),
        json!({"action": "do-not-retry", "no_charge": true, "charge": "no", "extra": 1}),
    ] {
        assert!(serde_json::from_value::<Recovery>(text.clone()).is_err(), "{text}");
    }
}

#[test]
fn junk_quota_headers_are_kept_raw_and_read_as_no_number() {
    let huge = "340282366920938463463374607431768211456".to_owned();
    for (raw, number) in [
        ("100", Some(100)),
        (" 7\t", Some(7)),
        ("007", Some(7)),
        ("18446744073709551615", Some(u64::MAX)),
        ("18446744073709551616", None),
        (huge.as_str(), None),
        ("-1", None),
        ("+1", None),
        ("1.5", None),
        ("1e3", None),
        ("0x10", None),
        ("", None),
        ("  ", None),
        ("abc", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("１２", None),
        ("5\u{0}", None),
    ] {
        let field = QuotaField::new(raw);
        assert_eq!(field.raw(), raw);
        assert_eq!(field.number(), number, "{raw:?}");
    }
    let junk = headers(&[("x-quota-limit", "lots"), ("X-QUOTA-REMAINING", "-0"), ("X-Quota-Reset", &"9".repeat(4096))]);
    let quota = Quota::from_headers(&junk).unwrap();
    assert_eq!(quota.limit.as_ref().map(QuotaField::raw), Some("lots"));
    assert_eq!(quota.remaining.as_ref().map(QuotaField::raw), Some("-0"));
    assert_eq!(quota.reset.as_ref().and_then(QuotaField::number), None);
    assert!(!quota.is_exhausted());
    assert_eq!(Recovery::of_http(429, &junk, false), Some(Recovery::new(OperatorReview, No)));
    // A header that repeats is joined as HTTP joins it, and the two values read as no number.
    let twice = headers(&[("X-Quota-Remaining", "0"), ("X-Quota-Remaining", "5")]);
    let quota = Quota::from_headers(&twice).unwrap();
    assert_eq!(quota.remaining.as_ref().map(QuotaField::raw), Some("0, 5"));
    assert_eq!(quota.remaining.as_ref().and_then(QuotaField::number), None);
    assert_eq!(Quota::from_headers(&headers(&[("Retry-After", "1")])), None);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_header_value_panics_or_breaks_no_charge(
        status in any::<u16>(),
        sent in any::<bool>(),
        value in any::<String>(),
        name in prop::sample::select(vec!["WWW-Authenticate", "X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset"]),
    ) {
        let mut pairs = headers(QUOTA_OUT);
        pairs.push((name.to_owned(), value.clone()));
        if let Some(r) = Recovery::of_http(status, &pairs, sent) {
            prop_assert_eq!(r.no_charge(), r.charge() == No);
            prop_assert!(sent || r.no_charge());
        }
        let _ = auth_errors(&value);
        let field = QuotaField::new(value.clone());
        prop_assert_eq!(field.raw(), value.as_str());
    }
}

#[test]
fn the_spend_envelope_saturates_at_zero_and_says_so() {
    let u = U256::from;
    let s = SpendEnvelope::new(Some(u(1000)), Some(u(250)), Some(u(1000)));
    assert_eq!(
        (s.cap(), s.required(), s.remaining_after(), s.over_budget()),
        (Some("1000"), Some("250"), Some("750"), false)
    );
    let s = SpendEnvelope::new(None, Some(u(250)), Some(u(250)));
    assert_eq!((s.remaining_after(), s.over_budget()), (Some("0"), false));
    let s = SpendEnvelope::new(None, Some(U256::MAX), Some(u(1)));
    assert_eq!((s.remaining_after(), s.over_budget()), (Some("0"), true));
    assert_eq!(s.required(), Some(U256::MAX.to_string().as_str()));
    let s = SpendEnvelope::new(Some(u(5)), None, Some(u(100)));
    assert_eq!((s.remaining_after(), s.over_budget()), (None, false));
    let s = SpendEnvelope::new(None, Some(u(5)), None);
    assert_eq!((s.cap(), s.remaining_after(), s.over_budget()), (None, None, false));
}

#[test]
fn an_outcome_serializes_for_agents() {
    let pairs = headers(&[("X-Quota-Limit", "100"), ("X-Quota-Remaining", "0"), ("X-Quota-Reset", "later")]);
    let outcome = Outcome::of_http(429, &pairs, true).unwrap().with_spend(Some(SpendEnvelope::new(
        Some(U256::from(1000)),
        Some(U256::from(250)),
        Some(U256::from(100)),
    )));
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({
            "recovery": {"action": "operator-review", "no_charge": false, "charge": "unknown"},
            "quota": {
                "limit": {"raw": "100", "number": 100},
                "remaining": {"raw": "0", "number": 0},
                "reset": {"raw": "later"},
            },
            "spend": {"cap": "1000", "required": "250", "remaining_after": "0", "over_budget": true},
        })
    );
    let bare = Outcome::new(Recovery::of_transport(false));
    assert_eq!(
        serde_json::to_value(&bare).unwrap(),
        json!({"recovery": {"action": "do-not-retry", "no_charge": true, "charge": "no"}})
    );
    assert_eq!(Outcome::of_http(200, &pairs, true), None);
    let exhausted = Outcome::of_http(429, &headers(QUOTA_OUT), false).unwrap();
    assert_eq!(exhausted.recovery, Recovery::new(RetryAfterQuotaReset, No));
    assert!(exhausted.quota.is_some_and(|q| q.is_exhausted()));
}

#[test]
fn actions_and_charges_are_written_in_kebab_case() {
    for action in Action::ALL {
        assert_eq!(serde_json::to_value(action).unwrap(), json!(action.as_str()));
        assert_eq!(action.to_string(), action.as_str());
    }
    assert_eq!(Recovery::new(QueryFirst, Unknown).to_string(), "query-first (charged: unknown)");
}

#[test]
fn a_pending_settlement_is_query_first_with_its_hash_and_operator_review_without_it_or_beside_success() {
    let of = |v: Value| Recovery::of_settlement(&v);
    let ask = Some(Recovery::new(Action::QueryFirst, Charge::Unknown));
    let look = Some(Recovery::new(Action::OperatorReview, Charge::Unknown));
    assert_eq!(of(json!({"success": false, "errorReason": "settlement_pending", "transaction": "0x01"})), ask);
    assert_eq!(of(json!({"success": false, "errorReason": "Settlement-Pending", "transaction": "0x01"})), ask);
    assert_eq!(of(json!({"success": false, "errorReason": "settlement_pending"})), look);
    assert_eq!(of(json!({"success": false, "errorReason": "settlement_pending", "transaction": ""})), look);
    assert_eq!(of(json!({"success": false, "errorReason": "settlement_pending", "transaction": 1})), look);
    assert_eq!(of(json!({"success": true, "errorReason": "settlement_pending", "transaction": "0x01"})), look);
}
