//! The spend policy from files: bad input refuses to load with the error that names it, and a loaded policy refuses
//! payments with the reason that names them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use ruint::aliases::U256;
use terms::safety::policy::{Format, Policy, PolicyError, Problem};
use terms::safety::{Allowed, Attested, PolicyRefusal, Purchase, Role, SellerStanding, Spend, SpendPolicy};
use terms::{DeclineCode, Quote, Reason};

const BASE: &str = "eip155:8453";
const USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const SEPOLIA: &str = "eip155:84532";
const SEPOLIA_USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PAYEE: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const NOW: u64 = 1_790_000_000;
/// 2^256: one past the largest amount.
const TWO_TO_THE_256: &str = "115792089237316195423570985008687907853269984665640564039457584007913129639936";

/// A file in a directory of its own under the system's temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("terms-policy-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        Self(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn load(name: &str, text: &str) -> Result<Policy, PolicyError> {
    let file = TempFile::new(name, text);
    Policy::load(&file.0)
}

/// A policy of one asset (USDC on Base, or with `cap` as written) and what follows it.
fn policy_text(cap: &str, after: &str) -> String {
    format!(
        r#"resources = ["https://api.seller.example/v1/"]
networks = ["{BASE}", "{SEPOLIA}"]

[[assets]]
network = "{BASE}"
address = "{USDC}"
symbol = "USDC"
decimals = 6
cap = {cap}

[[assets]]
network = "{SEPOLIA}"
address = "{SEPOLIA_USDC}"
symbol = "USDC"
decimals = 6
cap = "1000000"
{after}
"#
    )
}

#[track_caller]
fn assert_invalid(result: Result<Policy, PolicyError>, member: &str, problem: Problem) {
    match result {
        Err(PolicyError::Invalid { member: m, problem: p }) => assert_eq!((m.as_str(), p), (member, problem)),
        other => panic!("expected {member} to be invalid, got {other:?}"),
    }
}

#[track_caller]
fn assert_syntax(result: Result<Policy, PolicyError>, format: Format, names: &str) {
    match result {
        Err(PolicyError::Syntax { format: f, message }) => {
            assert_eq!(f, format);
            assert!(message.contains(names), "{message:?} should name {names:?}");
        }
        other => panic!("expected a {format} syntax error naming {names:?}, got {other:?}"),
    }
}

fn check(policy: &Policy, quote: &Quote) -> Result<Allowed, PolicyRefusal> {
    check_as(policy, quote, SellerStanding::Unproven)
}

fn check_as(policy: &Policy, quote: &Quote, seller: SellerStanding) -> Result<Allowed, PolicyRefusal> {
    let purchase = Purchase::new("GET", "https://api.seller.example/v1/forecast");
    let spend =
        Spend::new("x402/exact/eip155/eip3009", "eip155:8453:0xabc", quote, Some(&purchase), Role::Payment, NOW);
    policy.check(&spend.with_seller(seller))
}

#[test]
fn a_policy_file_with_unknown_members_does_not_load() {
    let top = policy_text("\"1\"", "").replacen("networks", "spend_everything = true\nnetworks", 1);
    assert_syntax(load("policy.toml", &top), Format::Toml, "unknown field `spend_everything`");
    let nested = policy_text("\"1\"", "").replacen("decimals = 6\n", "decimals = 6\nname = \"USD Coin\"\n", 1);
    assert_syntax(load("policy.toml", &nested), Format::Toml, "unknown field `name`");
    let json = r#"{"resources": ["*"], "networks": [], "assets": [], "payees": {"allow": [], "trust": []}}"#;
    assert_syntax(load("policy.json", json), Format::Json, "unknown field `trust`");
}

#[test]
fn a_negative_cap_does_not_load() {
    assert_invalid(load("policy.toml", &policy_text("\"-5\"", "")), "assets[0].cap", Problem::NotAnAmount("-5".into()));
    assert_syntax(load("policy.toml", &policy_text("-5", "")), Format::Toml, "quoted decimal string");
}

#[test]
fn a_fractional_cap_does_not_load() {
    assert_invalid(
        load("policy.toml", &policy_text("\"0.5\"", "")),
        "assets[0].cap",
        Problem::NotAnAmount("0.5".into()),
    );
    assert_syntax(load("policy.toml", &policy_text("0.5", "")), Format::Toml, "quoted decimal string");
    let json = format!(
        r#"{{"resources": ["*"], "networks": ["{BASE}"],
            "assets": [{{"network": "{BASE}", "address": "{USDC}", "symbol": "USDC", "decimals": 6, "cap": 1.5}}]}}"#
    );
    assert_syntax(load("policy.json", &json), Format::Json, "quoted decimal string");
}

#[test]
fn a_cap_past_two_to_the_256_does_not_load() {
    assert_eq!(TWO_TO_THE_256.len(), 78);
    let text = policy_text(&format!("\"{TWO_TO_THE_256}\""), "");
    assert_invalid(load("policy.toml", &text), "assets[0].cap", Problem::NotAnAmount(TWO_TO_THE_256.into()));
    let max = U256::MAX.to_string();
    let policy = load("policy.toml", &policy_text(&format!("\"{max}\""), "")).unwrap();
    assert_eq!(policy.cap(BASE, USDC), Some(U256::MAX), "2^256 - 1 is a cap");
}

#[test]
fn an_asset_without_decimals_does_not_load() {
    let text = policy_text("\"1\"", "").replacen("decimals = 6\n", "", 1);
    assert_syntax(load("policy.toml", &text), Format::Toml, "missing field `decimals`");
    let text = policy_text("\"1\"", "").replacen("symbol = \"USDC\"\n", "", 1);
    assert_syntax(load("policy.toml", &text), Format::Toml, "missing field `symbol`");
}

#[test]
fn overlapping_windows_do_not_load() {
    let budgets = format!(
        r#"
[[budgets]]
name = "day"
asset = "{BASE}/{USDC}"
window = "day"
limit = "50000000"

[[budgets]]
name = "another-day"
asset = "{BASE}/{}"
window = "day"
limit = "10000000"
"#,
        USDC.to_ascii_lowercase()
    );
    let text = policy_text("\"1\"", &budgets);
    assert_invalid(load("policy.toml", &text), "budgets[1]", Problem::OverlappingWindows("day".into()));
    let e = load("policy.toml", &text).unwrap_err().to_string();
    assert!(e.contains("budgets[1]") && e.contains("\"day\""), "{e}");
}

#[test]
fn a_budget_in_one_asset_is_not_claimed_by_a_payment_in_another() {
    let budgets =
        format!("\n[[budgets]]\nname = \"base-day\"\nasset = \"{BASE}/{USDC}\"\nwindow = \"day\"\nlimit = \"5\"\n");
    let policy = load("policy.toml", &policy_text("\"1000000\"", &budgets)).unwrap();
    let sepolia = Quote::new(U256::from(900_000u64), SEPOLIA_USDC, PAYEE, SEPOLIA, "exact");
    let allowed = check(&policy, &sepolia).unwrap();
    assert!(allowed.claims.is_empty(), "{:?}", allowed.claims);
    // The same amount on Base is above the whole of its budget.
    let base = Quote::new(U256::from(900_000u64), USDC, PAYEE, BASE, "exact");
    let refused = check(&policy, &base).unwrap_err();
    assert_eq!(refused.reason, Reason::BudgetExhausted);
    assert!(refused.why.contains("base-day"), "{}", refused.why);
    let small = Quote::new(U256::from(5u8), USDC, PAYEE, BASE, "exact");
    let claims = check(&policy, &small).unwrap().claims;
    assert_eq!(claims.len(), 1);
    assert_eq!((claims[0].budget.as_str(), claims[0].asset.as_str()), ("base-day", format!("{BASE}/{USDC}").as_str()));
}

#[test]
fn a_quote_whose_payee_is_the_zero_address_is_refused() {
    let policy = load("policy.toml", &policy_text("\"1000000\"", "")).unwrap();
    for zero in ["0x0000000000000000000000000000000000000000", "0X0000000000000000000000000000000000000000"] {
        let quote = Quote::new(U256::from(1u8), USDC, zero, BASE, "exact");
        let refused = check(&policy, &quote).unwrap_err();
        assert_eq!(refused.reason, Reason::PayeeNotAllowed);
        assert!(refused.why.contains(zero) && refused.why.contains("zero address"), "{}", refused.why);
        let declined = refused.declined();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, "policy/payee-not-allowed"));
    }
}

#[test]
fn a_yaml_file_is_not_read() {
    let file = TempFile::new("policy.yaml", "resources: []\n");
    match Policy::load(&file.0) {
        Err(PolicyError::Extension { path }) => assert_eq!(path, file.0),
        other => panic!("{other:?}"),
    }
    assert!(matches!(load("policy", "{}"), Err(PolicyError::Extension { .. })), "no extension is not read either");
    // The extension is read in any case.
    assert!(load("POLICY.TOML", &policy_text("\"1\"", "")).is_ok());
}

#[test]
fn malformed_toml_does_not_load() {
    assert_syntax(load("policy.toml", "resources = [\"https://a.example/\"\nnetworks = []"), Format::Toml, "line 2");
    assert_syntax(load("policy.toml", "[[assets]\n"), Format::Toml, "TOML parse error");
    assert_syntax(load("policy.json", "{\"resources\": "), Format::Json, "EOF");
}

#[test]
fn a_missing_file_is_a_read_error() {
    let path = std::env::temp_dir().join(format!("terms-policy-{}-absent/policy.toml", std::process::id()));
    match Policy::load(&path) {
        Err(PolicyError::Read { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_example_policy_loads_and_places_payments() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/policy.toml");
    let policy = Policy::load(&path).unwrap();
    assert_eq!(policy.asset_info(BASE, &USDC.to_ascii_lowercase()), Some(("USDC", 6)));
    assert_eq!(policy.cap(SEPOLIA, SEPOLIA_USDC), Some(U256::from(1_000_000u64)));
    let quote = Quote::new(U256::from(6_000_000u64), USDC, PAYEE, BASE, "exact").with_window(Some(0), Some(NOW + 60));
    // Unproven, the seller is on probation: 1 USDC a payment on Base.
    assert_eq!(check(&policy, &quote).unwrap_err().reason, Reason::ProbationCap);
    let small = Quote::new(U256::from(1_000_000u64), USDC, PAYEE, BASE, "exact").with_window(Some(0), Some(NOW + 60));
    assert!(!check(&policy, &small).unwrap().needs_approval);
    // An attestation of 30 days, 1000 calls, 99% proves it; one call fewer does not.
    let proven = SellerStanding::Attested(Attested::new(2_592_000, 1000, 990_000).unwrap());
    let short = SellerStanding::Attested(Attested::new(2_592_000, 999, 990_000).unwrap());
    assert_eq!(check_as(&policy, &quote, short).unwrap_err().reason, Reason::ProbationCap);
    let check = |policy: &Policy, quote: &Quote| check_as(policy, quote, proven);
    let allowed = check(&policy, &quote).unwrap();
    assert!(allowed.needs_approval, "6 USDC is above the 5 USDC approval threshold");
    let scopes: Vec<_> = allowed.claims.iter().map(|c| (c.budget.as_str(), c.scope.as_str(), c.window)).collect();
    let payee = PAYEE.to_ascii_lowercase();
    assert_eq!(
        scopes,
        [
            ("base-usdc-day", "", 86_400),
            ("base-usdc-hour-per-payee", payee.as_str(), 3_600),
            ("base-usdc-month-per-origin", "https://api.seller.example", 2_592_000),
        ]
    );
    let long = quote.with_window(Some(0), Some(NOW + 3601));
    assert_eq!(check(&policy, &long).unwrap_err().reason, Reason::WindowTooLong);
    // It reads back from its JSON form.
    let json = serde_json::to_string(&policy).unwrap();
    let file = TempFile::new("policy.json", &json);
    assert_eq!(Policy::load(&file.0).unwrap(), policy);
}

#[test]
fn policies_are_equal_only_when_their_rules_are() {
    let five = load("policy.toml", &policy_text("\"5000000\"", "")).unwrap();
    let again = load("policy.toml", &policy_text("\"5000000\"", "")).unwrap();
    let six = load("policy.toml", &policy_text("\"6000000\"", "")).unwrap();
    assert_eq!(five, again, "the same file read twice");
    assert_ne!(five, six, "a cap of 5 USDC is not a cap of 6");
    let json = load("policy.json", &serde_json::to_string(&five).unwrap()).unwrap();
    assert_eq!(json, five, "the same rules written as JSON");
    assert_ne!(json, six);
}

#[test]
fn a_channel_is_held_to_the_cap_by_the_larger_of_its_deposit_and_its_amount() {
    let policy = load("policy.toml", &policy_text("\"5000000\"", "")).unwrap();
    let window = |q: Quote| q.with_window(Some(0), Some(NOW + 60));
    let quote = |amount: u64| window(Quote::new(U256::from(amount), USDC, PAYEE, BASE, "exact"));
    // A deposit under the amount does not lower what the cap is held against.
    let small_deposit = quote(6_000_000).with_deposit(U256::from(1_000_000u64));
    let refused = check(&policy, &small_deposit).unwrap_err();
    assert_eq!(refused.reason, Reason::AmountAboveCap);
    assert_eq!(refused.why, format!("the amount 6000000 (6 USDC) is above the cap 5000000 (5 USDC) for {BASE}/{USDC}"));
    assert!(check(&policy, &quote(4_000_000).with_deposit(U256::from(1_000_000u64))).is_ok());
    // A deposit equal to the amount is named as the amount.
    let equal = check(&policy, &quote(6_000_000).with_deposit(U256::from(6_000_000u64))).unwrap_err();
    assert!(equal.why.starts_with("the amount 6000000 (6 USDC) is above the cap"), "{}", equal.why);
    // A deposit over the amount is what the cap is held against.
    let large_deposit = quote(1_000_000).with_deposit(U256::from(7_000_000u64));
    let refused = check(&policy, &large_deposit).unwrap_err();
    assert_eq!(refused.reason, Reason::AmountAboveCap);
    assert!(refused.why.starts_with("the deposit 7000000 (7 USDC) is above the cap"), "{}", refused.why);
}

#[test]
fn an_amount_under_one_unit_is_shown_with_its_leading_zero() {
    let policy = load("policy.toml", &policy_text("\"100000\"", "")).unwrap();
    for (amount, shown) in
        [(500_000u64, "500000 (0.5 USDC)"), (250_001, "250001 (0.250001 USDC)"), (1_000_000, "1000000 (1 USDC)")]
    {
        let quote = Quote::new(U256::from(amount), USDC, PAYEE, BASE, "exact").with_window(Some(0), Some(NOW + 60));
        let refused = check(&policy, &quote).unwrap_err();
        assert_eq!(refused.reason, Reason::AmountAboveCap);
        let expected = format!("the amount {shown} is above the cap 100000 (0.1 USDC) for ");
        assert!(refused.why.starts_with(&expected), "{} does not start with {expected}", refused.why);
    }
}

/// A policy written out (as JSON) and read again is the same policy: an unknown amount handed to a person stays
/// handed to a person, and the default (refused) is left out of what is written.
#[test]
fn an_unknown_amount_rule_is_written_back_as_it_was_and_its_default_left_out() {
    for (rule, written) in [("approve", true), ("refuse", false)] {
        let p =
            Policy::from_toml_str(&format!("unknown_amount = \"{rule}\"\nresources = []\nnetworks = []\nassets = []"))
                .unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json.contains("unknown_amount"), written, "{rule}: {json}");
        // Payees left open (the default) are left out too.
        assert!(!json.contains("payees"), "{rule}: {json}");
        assert_eq!(Policy::from_json_str(&json).unwrap(), p, "{rule}: {json}");
    }
}

/// What a budget is kept per, and its window, read as the file writes them.
#[test]
fn a_budgets_per_and_window_read_as_the_file_writes_them() {
    use terms::safety::policy::{Per, Window};
    for per in [Per::Payee, Per::Origin] {
        assert_eq!(serde_json::to_value(per).unwrap(), per.as_str(), "{per:?}");
    }
    for window in [Window::Hour, Window::Day, Window::Month] {
        assert_eq!(serde_json::to_value(window).unwrap(), window.as_str(), "{window:?}");
    }
    assert_eq!((Per::Payee.as_str(), Per::Origin.as_str()), ("payee", "origin"));
    assert_eq!((Window::Hour.as_str(), Window::Day.as_str(), Window::Month.as_str()), ("hour", "day", "month"));
}
