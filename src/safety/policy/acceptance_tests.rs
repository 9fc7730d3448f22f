//! Unit tests of the acceptance rule: each of its values against a seller that requires signed acceptance, one
//! that does not, and one whose discovery document was not read; where it stands among the other rules; its
//! round trip through TOML and JSON, and a value the file may not hold.

use ruint::aliases::U256;

use super::*;
use crate::pairing::Quote;
use crate::refusal::Reason;
use crate::safety::{Purchase, Role, SellerStanding};

use super::tests::{BASE, NOW, PAYEE, USDC, policy};

fn quote(amount: u64) -> Quote {
    Quote::new(U256::from(amount), USDC, PAYEE, BASE, "exact")
}

fn check(policy: &Policy, quote: &Quote, required: Option<bool>) -> Result<Allowed, PolicyRefusal> {
    let purchase = Purchase::new("GET", "https://api.seller.example/v1/forecast");
    let spend =
        Spend::new("x402/exact/eip155/eip3009", "eip155:8453:0xabc", quote, Some(&purchase), Role::Payment, NOW)
            .with_acceptance_required(required);
    policy.check(&spend)
}

#[test]
fn allow_is_the_default_and_reads_nothing() {
    let unwritten = policy("", "");
    assert_eq!(unwritten.rules().acceptance_required, Acceptance::Allow);
    assert_eq!(unwritten, policy(r#"acceptance_required = "allow""#, ""));
    for required in [None, Some(false), Some(true)] {
        assert_eq!(check(&unwritten, &quote(1000), required).unwrap(), Allowed::new(Vec::new()), "{required:?}");
    }
    let json = serde_json::to_string(&unwritten).unwrap();
    assert!(!json.contains("acceptance"), "{json}");
}

#[test]
fn refuse_refuses_a_seller_that_requires_acceptance_whatever_it_pays() {
    let refuse = policy(r#"acceptance_required = "refuse""#, "");
    for amount in [0, 1, 1000] {
        let refusal = check(&refuse, &quote(amount), Some(true)).unwrap_err();
        assert_eq!(refusal.reason, Reason::AcceptanceRequired);
        assert_eq!(refusal.declined().detail, "policy/acceptance-required");
        assert!(refusal.why.contains("acceptanceRequired"), "{}", refusal.why);
    }
    // A quote of unknown amount too, before the unknown-amount rule hands it to a person.
    let unknown = Quote { amount_known: false, ..quote(0) };
    let approve_unknown = policy("acceptance_required = \"refuse\"\nunknown_amount = \"approve\"", "");
    assert_eq!(check(&approve_unknown, &unknown, Some(true)).unwrap_err().reason, Reason::AcceptanceRequired);
    // No requirement stated, or none read: the rest of the policy decides.
    for required in [None, Some(false)] {
        assert_eq!(check(&refuse, &quote(1000), required).unwrap(), Allowed::new(Vec::new()), "{required:?}");
    }
    // The rules before it still come first: a network the policy does not allow is refused as such.
    let elsewhere = Quote::new(U256::from(1u64), USDC, PAYEE, "eip155:1", "exact");
    assert_eq!(check(&refuse, &elsewhere, Some(true)).unwrap_err().reason, Reason::NetworkNotAllowed);
}

#[test]
fn approve_hands_the_payment_to_a_person_and_keeps_every_other_rule() {
    let approve = policy(r#"acceptance_required = "approve""#, "");
    let allowed = check(&approve, &quote(1000), Some(true)).unwrap();
    assert!(allowed.needs_approval);
    for required in [None, Some(false)] {
        assert!(!check(&approve, &quote(1000), required).unwrap().needs_approval, "{required:?}");
    }
    // Approval does not lift the cap: above it, refused as before.
    assert_eq!(check(&approve, &quote(1_000_001), Some(true)).unwrap_err().reason, Reason::AmountAboveCap);
    // With budgets, the claims are kept beside the approval.
    let budgeted = policy(
        r#"acceptance_required = "approve""#,
        &format!("[[budgets]]\nname = \"day\"\nasset = \"{BASE}/{USDC}\"\nwindow = \"day\"\nlimit = \"5000\"\n"),
    );
    let allowed = check(&budgeted, &quote(1000), Some(true)).unwrap();
    assert!(allowed.needs_approval);
    assert_eq!(allowed.claims.len(), 1);
}

#[test]
fn the_rule_round_trips_and_refuses_another_value() {
    for value in ["approve", "refuse"] {
        let p = policy(&format!("acceptance_required = \"{value}\""), "");
        assert_eq!(p.rules().acceptance_required.as_str(), value);
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains(&format!("\"acceptance_required\":\"{value}\"")), "{json}");
        assert_eq!(Policy::from_json_str(&json).unwrap(), p);
    }
    for bad in ["\"Refuse\"", "\"ask\"", "true", "1"] {
        let text = super::tests::toml(&format!("acceptance_required = {bad}"), "");
        assert!(matches!(Policy::from_toml_str(&text), Err(PolicyError::Syntax { .. })), "{bad}");
    }
}

#[test]
fn the_standing_and_the_acceptance_are_read_apart() {
    let p = policy("acceptance_required = \"refuse\"\nunproven = \"refuse\"", "");
    let purchase = Purchase::new("GET", "https://api.seller.example/v1/forecast");
    let q = quote(1);
    let spend = Spend::new("x402/exact/eip155/eip3009", "eip155:8453:0xabc", &q, Some(&purchase), Role::Payment, NOW)
        .with_seller(SellerStanding::Unproven)
        .with_acceptance_required(Some(true));
    // The seller rule stands before the acceptance rule.
    assert_eq!(p.check(&spend).unwrap_err().reason, Reason::SellerUnproven);
}
