//! Unit tests of the policy: each rule allowed and refused, each validation error.

use ruint::aliases::U256;

use super::*;
use crate::pairing::Quote;
use crate::refusal::Reason;
use crate::safety::{Claim, Purchase, Role};

pub(super) const BASE: &str = "eip155:8453";
pub(super) const USDC: &str = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
pub(super) const SEPOLIA: &str = "eip155:84532";
pub(super) const SEPOLIA_USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
pub(super) const PAYEE: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
pub(super) const NOW: u64 = 1_790_000_000;

/// The base policy, with `top` among its top-level members and `tables` after its assets.
pub(super) fn toml(top: &str, tables: &str) -> String {
    format!(
        r#"
resources = ["https://api.seller.example/v1/", "https://data.example/feed"]
networks = ["{BASE}", "{SEPOLIA}"]
{top}

[[assets]]
network = "{BASE}"
address = "{USDC}"
symbol = "USDC"
decimals = 6
cap = "1000000"

[[assets]]
network = "{SEPOLIA}"
address = "{SEPOLIA_USDC}"
symbol = "USDC"
decimals = 6
cap = "5000000"
{tables}
"#
    )
}

pub(super) fn policy(top: &str, tables: &str) -> Policy {
    Policy::from_toml_str(&toml(top, tables)).unwrap()
}

pub(super) fn invalid(top: &str, tables: &str) -> (String, Problem) {
    match Policy::from_toml_str(&toml(top, tables)) {
        Err(PolicyError::Invalid { member, problem }) => (member, problem),
        other => panic!("expected an invalid member, got {other:?}"),
    }
}

fn quote(amount: u64) -> Quote {
    Quote::new(U256::from(amount), USDC, PAYEE, BASE, "exact")
}

fn check(policy: &Policy, quote: &Quote, url: Option<&str>) -> Result<Allowed, PolicyRefusal> {
    let purchase = url.map(|u| Purchase::new("GET", u));
    let spend =
        Spend::new("x402/exact/eip155/eip3009", "eip155:8453:0xabc", quote, purchase.as_ref(), Role::Payment, NOW);
    policy.check(&spend)
}

const URL: Option<&str> = Some("https://api.seller.example/v1/forecast?city=Paris");

#[track_caller]
fn refused(result: Result<Allowed, PolicyRefusal>, reason: Reason, names: &str) {
    match result {
        Err(r) => {
            assert_eq!(r.reason, reason, "{}", r.why);
            assert!(r.why.contains(names), "{:?} should name {names:?}", r.why);
        }
        Ok(a) => panic!("expected {reason:?}, allowed: {a:?}"),
    }
}

#[test]
fn a_payment_within_every_rule_is_allowed_with_no_claims_and_no_approval() {
    let allowed = check(&policy("", ""), &quote(1_000_000), URL).unwrap();
    assert_eq!(allowed, Allowed::new(Vec::new()));
}

#[test]
fn a_resource_must_be_under_a_listed_prefix() {
    let p = policy("", "");
    let q = quote(1);
    for ok in [
        "https://api.seller.example/v1/",
        "https://api.seller.example/v1/a/b",
        "https://API.Seller.example:443/v1/a",
        "https://data.example/feed",
        "https://data.example/feed/today",
        "https://data.example/feed?x=1",
    ] {
        assert!(check(&p, &q, Some(ok)).is_ok(), "{ok}");
    }
    for (bad, names) in [
        ("https://api.seller.example/v1", "https://api.seller.example/v1"),
        ("https://api.seller.example/v2/a", "/v2/a"),
        ("https://api.seller.example/v1/../admin", "/admin"),
        ("https://api.seller.example/v1/%2e%2e/admin", "/admin"),
        ("http://api.seller.example/v1/a", "http://api.seller.example/v1/a"),
        ("https://api.seller.example:8443/v1/a", ":8443"),
        ("https://api.seller.example.evil/v1/a", "evil"),
        ("https://api.seller.example@evil.example/v1/a", "evil.example"),
        ("https://data.example/feeds", "/feeds"),
        ("ftp://api.seller.example/v1/a", "ftp://"),
        ("not a url", "not a url"),
    ] {
        refused(check(&p, &q, Some(bad)), Reason::ResourceNotAllowed, names);
    }
    refused(check(&p, &q, None), Reason::ResourceNotAllowed, "names no purchase");
}

#[test]
fn a_star_allows_any_resource_and_no_purchase_and_an_empty_list_none() {
    let any = Policy::from_toml_str(&toml("", "").replacen(
        r#"resources = ["https://api.seller.example/v1/", "https://data.example/feed"]"#,
        r#"resources = ["*"]"#,
        1,
    ))
    .unwrap();
    for url in [None, Some("https://anywhere.example/x"), Some("not a url")] {
        assert!(check(&any, &quote(1), url).is_ok(), "{url:?}");
    }
    let none = Policy::from_toml_str(&toml("", "").replacen(
        r#"resources = ["https://api.seller.example/v1/", "https://data.example/feed"]"#,
        "resources = []",
        1,
    ))
    .unwrap();
    refused(check(&none, &quote(1), URL), Reason::ResourceNotAllowed, "api.seller.example");
}

#[test]
fn a_network_must_be_listed() {
    let q = Quote::new(U256::from(1u8), USDC, PAYEE, "eip155:1", "exact");
    refused(check(&policy("", ""), &q, URL), Reason::NetworkNotAllowed, "eip155:1");
}

#[test]
fn an_asset_must_be_listed_on_its_network_and_hex_compares_in_any_case() {
    let p = policy("", "");
    let lower = Quote::new(U256::from(1u8), USDC.to_ascii_lowercase(), PAYEE, BASE, "exact");
    assert!(check(&p, &lower, URL).is_ok());
    let other = Quote::new(U256::from(1u8), "0x4200000000000000000000000000000000000006", PAYEE, BASE, "exact");
    refused(check(&p, &other, URL), Reason::AssetNotAllowed, "0x4200000000000000000000000000000000000006");
    // Sepolia's USDC is listed, but not on Base.
    let misplaced = Quote::new(U256::from(1u8), SEPOLIA_USDC, PAYEE, BASE, "exact");
    refused(check(&p, &misplaced, URL), Reason::AssetNotAllowed, SEPOLIA_USDC);
}

#[test]
fn a_malformed_or_zero_payee_always_refuses() {
    let p = policy("", "");
    for (payee, names) in [
        ("", "is empty"),
        ("0x0000000000000000000000000000000000000000", "zero address"),
        ("0X0000000000000000000000000000000000000000", "zero address"),
        ("0x0", "zero address"),
        ("0xNOTHEX", "0xNOTHEX"),
        ("0x", "not hex"),
        ("0xabc def", "whitespace"),
    ] {
        let q = Quote::new(U256::from(1u8), USDC, payee, BASE, "exact");
        refused(check(&p, &q, URL), Reason::PayeeNotAllowed, names);
    }
    let name = Quote::new(U256::from(1u8), USDC, "merchant", BASE, "exact");
    assert!(check(&p, &name, URL).is_ok(), "a payee that is a name is compared as written");
}

#[test]
fn a_payee_denied_or_not_allowed_refuses_hex_in_any_case() {
    let deny = policy("", &format!("[payees]\ndeny = [\"{}\"]", PAYEE.to_ascii_lowercase()));
    refused(check(&deny, &quote(1), URL), Reason::PayeeNotAllowed, "is denied");
    let allow = policy("", &format!("[payees]\nallow = [\"{}\", \"merchant\"]", PAYEE.to_ascii_uppercase()));
    assert!(check(&allow, &quote(1), URL).is_ok());
    let stranger = Quote::new(U256::from(1u8), USDC, "0x1111111111111111111111111111111111111111", BASE, "exact");
    refused(check(&allow, &stranger, URL), Reason::PayeeNotAllowed, "0x1111111111111111111111111111111111111111");
    let upper = Quote::new(U256::from(1u8), USDC, "MERCHANT", BASE, "exact");
    refused(check(&allow, &upper, URL), Reason::PayeeNotAllowed, "MERCHANT");
    let nobody = policy("", "[payees]\nallow = []");
    refused(check(&nobody, &quote(1), URL), Reason::PayeeNotAllowed, "not one the policy allows");
}

#[test]
fn an_amount_above_the_cap_refuses_and_a_deposit_counts_when_larger() {
    let p = policy("", "");
    assert!(check(&p, &quote(1_000_000), URL).is_ok());
    refused(check(&p, &quote(1_000_001), URL), Reason::AmountAboveCap, "1000001 (1.000001 USDC)");
    let r = check(&p, &quote(1_000_001), URL).unwrap_err();
    assert!(r.why.contains("the cap 1000000 (1 USDC)") && r.why.contains(USDC), "{}", r.why);
    let opening = quote(10).with_deposit(U256::from(2_500_000u64));
    refused(check(&p, &opening, URL), Reason::AmountAboveCap, "the deposit 2500000 (2.5 USDC)");
    assert!(check(&p, &quote(10).with_deposit(U256::from(5u8)), URL).is_ok());
    refused(check(&p, &quote(0).with_deposit(U256::MAX), URL), Reason::AmountAboveCap, &U256::MAX.to_string());
}

#[test]
fn an_authorisation_valid_too_long_or_without_an_end_refuses() {
    let p = policy("max_validity_seconds = 600", "");
    assert!(check(&p, &quote(1).with_window(Some(0), Some(NOW + 600)), URL).is_ok());
    assert!(check(&p, &quote(1).with_window(None, Some(NOW - 5)), URL).is_ok(), "an expired window is not long");
    refused(check(&p, &quote(1).with_window(Some(0), Some(NOW + 601)), URL), Reason::WindowTooLong, "601 s");
    // Counted from its start when that is later than now.
    assert!(check(&p, &quote(1).with_window(Some(NOW + 1000), Some(NOW + 1600)), URL).is_ok());
    refused(check(&p, &quote(1).with_window(Some(NOW + 1000), Some(NOW + 1700)), URL), Reason::WindowTooLong, "700 s");
    refused(check(&p, &quote(1), URL), Reason::WindowTooLong, "names no end");
    assert!(check(&policy("", ""), &quote(1), URL).is_ok(), "no maximum, no window needed");
}

const BUDGETS: &str = r#"
[[budgets]]
name = "usdc-day"
asset = "eip155:8453/0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"
window = "day"
limit = "50000000"

[[budgets]]
name = "usdc-hour-per-payee"
asset = "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
window = "hour"
limit = "3000000"
per = "payee"

[[budgets]]
name = "usdc-month-per-origin"
asset = "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
window = "month"
limit = "900000"
per = "origin"

[[budgets]]
name = "sepolia-day"
asset = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"
window = "day"
limit = "1"
"#;

#[test]
fn a_payment_claims_each_budget_of_its_asset_with_its_scope() {
    let p = policy("", BUDGETS);
    let allowed = check(&p, &quote(700_000), URL).unwrap();
    let key = format!("{BASE}/{USDC}");
    let amount = U256::from(700_000u64);
    assert_eq!(
        allowed.claims,
        vec![
            Claim::new("usdc-day", "", &key, 86_400, U256::from(50_000_000u64), amount),
            Claim::new(
                "usdc-hour-per-payee",
                PAYEE.to_ascii_lowercase(),
                &key,
                3_600,
                U256::from(3_000_000u64),
                amount
            ),
            Claim::new(
                "usdc-month-per-origin",
                "https://api.seller.example",
                &key,
                2_592_000,
                U256::from(900_000u64),
                amount
            ),
        ]
    );
    assert!(!allowed.needs_approval);
    // The claims' asset is the listed asset's, whatever case the quote writes it in.
    let lower = Quote::new(amount, USDC.to_ascii_lowercase(), PAYEE, BASE, "exact");
    assert_eq!(check(&p, &lower, URL).unwrap().claims, allowed.claims);
}

#[test]
fn a_payment_above_a_whole_budget_refuses_at_once() {
    let p = policy("", BUDGETS);
    refused(check(&p, &quote(900_001), URL), Reason::BudgetExhausted, "usdc-month-per-origin");
    let sepolia = Quote::new(U256::from(2u8), SEPOLIA_USDC, PAYEE, SEPOLIA, "exact");
    refused(check(&p, &sepolia, URL), Reason::BudgetExhausted, "sepolia-day");
    let within = Quote::new(U256::from(1u8), SEPOLIA_USDC, PAYEE, SEPOLIA, "exact");
    let claims = check(&p, &within, URL).unwrap().claims;
    assert_eq!(claims.iter().map(|c| c.budget.as_str()).collect::<Vec<_>>(), ["sepolia-day"]);
}

#[test]
fn a_per_origin_budget_needs_a_url_even_where_any_resource_is_allowed() {
    let text = toml("", BUDGETS).replacen(
        r#"resources = ["https://api.seller.example/v1/", "https://data.example/feed"]"#,
        r#"resources = ["*"]"#,
        1,
    );
    let p = Policy::from_toml_str(&text).unwrap();
    refused(check(&p, &quote(1), None), Reason::ResourceNotAllowed, "usdc-month-per-origin");
    let claims = check(&p, &quote(1), Some("https://other.example:8080/x")).unwrap().claims;
    assert_eq!(claims.get(2).map(|c| c.scope.as_str()), Some("https://other.example:8080"));
}

#[test]
fn above_the_approval_threshold_a_person_approves() {
    let p = policy(&format!("approval_above = {{ \"{BASE}/{USDC}\" = \"500000\" }}"), "");
    assert!(!check(&p, &quote(500_000), URL).unwrap().needs_approval);
    assert!(check(&p, &quote(500_001), URL).unwrap().needs_approval);
    assert!(check(&p, &quote(1).with_deposit(U256::from(600_000u64)), URL).unwrap().needs_approval);
    let sepolia = Quote::new(U256::from(4_000_000u64), SEPOLIA_USDC, PAYEE, SEPOLIA, "exact");
    assert!(!check(&p, &sepolia, URL).unwrap().needs_approval, "the threshold is per asset");
}

#[test]
fn the_cap_and_the_asset_info_read_the_listed_asset() {
    let p = policy("", "");
    assert_eq!(p.cap(BASE, &USDC.to_ascii_uppercase().replacen("0X", "0x", 1)), Some(U256::from(1_000_000u64)));
    assert_eq!(p.asset_info(SEPOLIA, SEPOLIA_USDC), Some(("USDC", 6)));
    assert_eq!(p.cap(SEPOLIA, USDC), None);
    assert_eq!(p.asset_info("eip155:1", USDC), None);
}

#[test]
fn a_policy_reads_back_what_it_writes_in_both_formats() {
    let p = policy(
        "max_validity_seconds = 60\napproval_above = { \"eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913\" = \"7\" }",
        &format!("[payees]\ndeny = [\"0xdead\"]\n{BUDGETS}"),
    );
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(Policy::from_json_str(&json).unwrap(), p);
    assert_eq!(serde_json::from_str::<Policy>(&json).unwrap(), p);
    assert_eq!(p.rules().budgets.len(), 4);
    // Deserializing validates.
    let bad = json.replace("\"50000000\"", "\"-5\"");
    let e = serde_json::from_str::<Policy>(&bad).unwrap_err().to_string();
    assert!(e.contains("budgets[0].limit") && e.contains("\"-5\""), "{e}");
}

#[test]
fn amounts_must_be_quoted_atomic_decimals_below_two_to_the_256() {
    let past = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    for bad in ["-1", "1.5", "1e6", "01", "", " 1", "0x10", past] {
        let text = toml("", "").replacen("cap = \"1000000\"", &format!("cap = \"{bad}\""), 1);
        match Policy::from_toml_str(&text) {
            Err(PolicyError::Invalid { member, problem }) => {
                assert_eq!((member.as_str(), problem), ("assets[0].cap", Problem::NotAnAmount(bad.to_owned())));
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let number = toml("", "").replacen("cap = \"1000000\"", "cap = 1000000", 1);
    match Policy::from_toml_str(&number) {
        Err(PolicyError::Syntax { format: Format::Toml, message }) => {
            assert!(message.contains("quoted decimal string"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let (member, problem) = invalid(&format!("approval_above = {{ \"{BASE}/{USDC}\" = \"1.0\" }}"), "");
    assert_eq!((member, problem), (format!("approval_above.\"{BASE}/{USDC}\""), Problem::NotAnAmount("1.0".into())));
}

#[test]
fn members_that_read_but_are_not_valid_are_named() {
    let budget = |name: &str, asset: &str, window: &str, per: &str| {
        format!("\n[[budgets]]\nname = \"{name}\"\nasset = \"{asset}\"\nwindow = \"{window}\"\nlimit = \"5\"\n{per}\n")
    };
    let day = budget("a", &format!("{BASE}/{USDC}"), "day", "");
    let cases: Vec<(String, String, &str, Problem)> = vec![
        (
            String::new(),
            format!("{day}{}", budget("a", &format!("{SEPOLIA}/{SEPOLIA_USDC}"), "day", "")),
            "budgets[1].name",
            Problem::DuplicateBudget(0),
        ),
        (
            String::new(),
            format!("{day}{}", budget("b", &format!("{BASE}/{}", USDC.to_ascii_lowercase()), "day", "")),
            "budgets[1]",
            Problem::OverlappingWindows("a".into()),
        ),
        (
            String::new(),
            budget("a", "eip155:8453/0xdead", "day", ""),
            "budgets[0].asset",
            Problem::UnlistedAsset("eip155:8453/0xdead".into()),
        ),
        (String::new(), budget("a", USDC, "day", ""), "budgets[0].asset", Problem::UnlistedAsset(USDC.into())),
        (String::new(), budget(" ", &format!("{BASE}/{USDC}"), "day", ""), "budgets[0].name", Problem::Empty),
        (
            "approval_above = { \"eip155:1/0xdead\" = \"1\" }".into(),
            String::new(),
            "approval_above.\"eip155:1/0xdead\"",
            Problem::UnlistedAsset("eip155:1/0xdead".into()),
        ),
        (
            format!(
                "approval_above = {{ \"{BASE}/{USDC}\" = \"1\", \"{BASE}/{}\" = \"2\" }}",
                USDC.to_ascii_lowercase()
            ),
            String::new(),
            "approval_above.\"eip155:8453/0x833589fcd6edb6e08f4c7c32d4f71b54bda02913\"",
            Problem::DuplicateThreshold(format!("{BASE}/{USDC}")),
        ),
        (
            String::new(),
            "[payees]\nallow = [\"0x0000000000000000000000000000000000000000\"]".into(),
            "payees.allow[0]",
            Problem::ZeroAddress("0x0000000000000000000000000000000000000000".into()),
        ),
        (String::new(), "[payees]\ndeny = [\"ok\", \"\"]".into(), "payees.deny[1]", Problem::Empty),
        (String::new(), "[payees]\ndeny = [\"0xzz\"]".into(), "payees.deny[0]", Problem::NotHex("0xzz".into())),
    ];
    for (top, tables, member, problem) in cases {
        assert_eq!(invalid(&top, &tables), (member.to_owned(), problem));
    }
    // Windows that differ in length or in what they are kept per do not overlap.
    let hour = budget("b", &format!("{BASE}/{USDC}"), "hour", "");
    let per = budget("c", &format!("{BASE}/{USDC}"), "day", "per = \"payee\"");
    assert!(Policy::from_toml_str(&toml("", &format!("{day}{hour}{per}"))).is_ok());
}

fn with_assets(resources: &str, networks: &str, asset: &str) -> Result<Policy, PolicyError> {
    Policy::from_toml_str(&format!("resources = {resources}\nnetworks = {networks}\n\n[[assets]]\n{asset}"))
}

#[test]
fn resources_networks_and_assets_are_validated() {
    let asset = format!("network = \"{BASE}\"\naddress = \"{USDC}\"\nsymbol = \"USDC\"\ndecimals = 6\ncap = \"1\"");
    let nets = format!("[\"{BASE}\"]");
    // A resource list of one value, refused as not a resource for `why`.
    let resource = |value: &str, why| {
        let problem = Problem::NotAResource { value: value.into(), why };
        (format!("[\"{value}\"]"), nets.clone(), asset.clone(), "resources[0]", problem)
    };
    let cases: Vec<(String, String, String, &str, Problem)> = vec![
        ("[\"*\", \"https://a.example/\"]".into(), nets.clone(), asset.clone(), "resources[1]", Problem::StarNotAlone),
        resource("/v1/", "not an absolute URL"),
        resource("ftp://a.example/", "not http or https"),
        resource("https://u:p@a.example/", "it names a user"),
        // A user alone, or a password alone, names a user as well.
        resource("https://u@a.example/", "it names a user"),
        resource("https://:p@a.example/", "it names a user"),
        resource("https://a.example/#top", "it has a query or fragment"),
        resource("https://a.example/?x=1", "it has a query or fragment"),
        ("[]".into(), "[\"eip155\"]".into(), asset.clone(), "networks[0]", Problem::NotANetwork("eip155".into())),
        ("[]".into(), "[\"EIP155:1\"]".into(), asset.clone(), "networks[0]", Problem::NotANetwork("EIP155:1".into())),
        (
            "[]".into(),
            "[\"eip155:1/2\"]".into(),
            asset.clone(),
            "networks[0]",
            Problem::NotANetwork("eip155:1/2".into()),
        ),
        (
            "[]".into(),
            "[\"eip155:1\"]".into(),
            asset.clone(),
            "assets[0].network",
            Problem::NetworkNotListed(BASE.into()),
        ),
        (
            "[]".into(),
            nets.clone(),
            asset.replace("decimals = 6", "decimals = 78"),
            "assets[0].decimals",
            Problem::Decimals(78),
        ),
        ("[]".into(), nets.clone(), asset.replace("\"USDC\"", "\"\""), "assets[0].symbol", Problem::Empty),
        (
            "[]".into(),
            nets.clone(),
            asset.replace(USDC, "0xUSDC"),
            "assets[0].address",
            Problem::NotHex("0xUSDC".into()),
        ),
        (
            "[]".into(),
            nets.clone(),
            format!("{asset}\n\n[[assets]]\n{}", asset.replace(USDC, &USDC.to_ascii_lowercase())),
            "assets[1]",
            Problem::DuplicateAsset(0),
        ),
    ];
    for (resources, networks, asset, member, problem) in cases {
        match with_assets(&resources, &networks, &asset) {
            Err(PolicyError::Invalid { member: m, problem: p }) => assert_eq!((m.as_str(), p), (member, problem)),
            other => panic!("{member}: {other:?}"),
        }
    }
    assert!(with_assets("[\"http://localhost:8080/x\"]", "[\"cloudflare:402\", \"eip155:8453\"]", &asset).is_ok());
    assert!(with_assets("[]", &nets, &asset.replace("decimals = 6", "decimals = 77")).is_ok());
}

#[test]
fn the_error_message_names_the_member() {
    let e = with_assets(
        "[]",
        "[\"eip155:8453\"]",
        "network = \"eip155:8453\"\naddress = \"0xab\"\nsymbol = \"X\"\ndecimals = 6\ncap = \"-1\"",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "policy member assets[0].cap: \"-1\" is not an amount: write a quoted decimal string of atomic units (digits \
         only, no sign, fraction, exponent or leading zero, below 2^256)"
    );
}

#[test]
fn unknown_and_missing_members_are_syntax_errors_naming_them() {
    for (text, names) in [
        (toml("colour = \"red\"", ""), "unknown field `colour`"),
        (toml("", "[payees]\nblock = []"), "unknown field `block`"),
        (toml("", "").replacen("decimals = 6\n", "", 1), "missing field `decimals`"),
        (toml("", "").replacen("symbol = \"USDC\"\n", "", 1), "missing field `symbol`"),
        (
            toml("", "[[budgets]]\nname = \"a\"\nasset = \"x\"\nwindow = \"week\"\nlimit = \"1\""),
            "unknown variant `week`",
        ),
        ("resources = [".to_owned(), "TOML parse error"),
    ] {
        match Policy::from_toml_str(&text) {
            Err(PolicyError::Syntax { format: Format::Toml, message }) => assert!(message.contains(names), "{message}"),
            other => panic!("{names}: {other:?}"),
        }
    }
    match Policy::from_json_str(r#"{"resources": [], "networks": [], "assets": [], "extra": 1}"#) {
        Err(PolicyError::Syntax { format: Format::Json, message }) => {
            assert!(message.contains("unknown field `extra`"))
        }
        other => panic!("{other:?}"),
    }
    assert!(Policy::from_json_str(r#"{"resources": [], "networks": [], "assets": []}"#).is_ok());
}

#[test]
fn an_unknown_amount_is_refused_unless_the_policy_hands_it_to_a_person() {
    let card = Quote::unknown_amount("", "", "card:visa-tap", "visa-tap");
    refused(check(&policy("", ""), &card, URL), Reason::NetworkNotAllowed, "card:visa-tap");
    let listed = |top: &str| {
        let networks = format!(r#"networks = ["card:visa-tap", "{BASE}", "#);
        let text = toml(top, "").replace(&format!(r#"networks = ["{BASE}", "#), &networks);
        Policy::from_toml_str(&text).unwrap()
    };
    refused(check(&listed(""), &card, URL), Reason::AmountUnknown, "names no amount");
    refused(check(&listed(r#"unknown_amount = "refuse""#), &card, URL), Reason::AmountUnknown, "visa-tap");
    let approve = listed(r#"unknown_amount = "approve""#);
    assert_eq!(check(&approve, &card, URL).unwrap(), Allowed::new(Vec::new()).because("unknown_amount = \"approve\""));
    refused(check(&approve, &card, Some("https://elsewhere.example/")), Reason::ResourceNotAllowed, "elsewhere");
    let windowed = listed("unknown_amount = \"approve\"\nmax_validity_seconds = 60");
    refused(check(&windowed, &card, URL), Reason::WindowTooLong, "");
    assert_eq!(approve.rules().unknown_amount, UnknownAmount::Approve);
    assert!(Policy::from_toml_str(&toml(r#"unknown_amount = "maybe""#, "")).is_err());
}

/// An asset the policy names by a name, not a `0x` address (a card's `USD`), is that asset written exactly: the same
/// name is allowed under its cap, another case of it is no asset the policy knows.
#[test]
fn an_asset_named_by_a_name_is_compared_as_written() {
    let p = policy(
        "",
        &format!("[[assets]]\nnetwork = \"{BASE}\"\naddress = \"USD\"\nsymbol = \"USD\"\ndecimals = 2\ncap = \"500\""),
    );
    let usd = |asset: &str| Quote::new(U256::from(100u8), asset, PAYEE, BASE, "exact");
    assert!(check(&p, &usd("USD"), URL).is_ok());
    refused(check(&p, &usd("usd"), URL), Reason::AssetNotAllowed, "usd");
}
