//! Unit tests of the seller rules: `unproven` in each of its values, the probation caps, the proof minimums at and
//! one below each figure, their validation errors, and their round trip through JSON and TOML.

use ruint::aliases::U256;

use super::*;
use crate::pairing::Quote;
use crate::refusal::Reason;
use crate::safety::{Attested, Purchase, Role, SellerStanding};

use super::tests::{BASE, NOW, PAYEE, SEPOLIA, SEPOLIA_USDC, USDC, invalid, policy, toml};

const URL: &str = "https://api.seller.example/v1/forecast";
/// 30 days.
const MONTH: u64 = 2_592_000;

/// Probation caps of 0.1 USDC on Base and 0.5 on Base Sepolia.
fn probation() -> String {
    format!("\n[probation]\ncaps = {{ \"{BASE}/{USDC}\" = \"100000\", \"{SEPOLIA}/{SEPOLIA_USDC}\" = \"500000\" }}\n")
}

const PROOF: &str = "\n[proof]\nmin_window_days = 30\nmin_calls = 1000\nmin_success = \"0.99\"\n";

fn syntax(text: &str, json: bool) -> String {
    let read = if json { Policy::from_json_str(text) } else { Policy::from_toml_str(text) };
    match read {
        Err(PolicyError::Syntax { message, .. }) => message,
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

fn quote(amount: u64) -> Quote {
    Quote::new(U256::from(amount), USDC, PAYEE, BASE, "exact")
}

fn check(policy: &Policy, quote: &Quote, seller: SellerStanding) -> Result<Allowed, PolicyRefusal> {
    let purchase = Purchase::new("GET", URL);
    let spend =
        Spend::new("x402/exact/eip155/eip3009", "eip155:8453:0xabc", quote, Some(&purchase), Role::Payment, NOW)
            .with_seller(seller);
    policy.check(&spend)
}

fn attested(window: u64, calls: u64, ppm: u32) -> SellerStanding {
    SellerStanding::Attested(Attested::new(window, calls, ppm).unwrap())
}

/// Exactly at every minimum of [`PROOF`].
fn proven() -> SellerStanding {
    attested(MONTH, 1000, 990_000)
}

#[track_caller]
fn refused(result: Result<Allowed, PolicyRefusal>, reason: Reason) -> String {
    match result {
        Err(refusal) => {
            assert_eq!(refusal.reason, reason, "{}", refusal.why);
            refusal.why
        }
        Ok(allowed) => panic!("expected {reason}, allowed {allowed:?}"),
    }
}

#[test]
fn allow_is_the_default_and_reads_no_standing() {
    let unwritten = policy("", "");
    assert_eq!(unwritten.rules().unproven, Unproven::Allow);
    assert_eq!(unwritten, policy(r#"unproven = "allow""#, ""), "allow, written or not, is one policy");
    for seller in [SellerStanding::Unproven, attested(0, 0, 0), proven()] {
        assert_eq!(check(&unwritten, &quote(1_000_000), seller).unwrap(), Allowed::new(Vec::new()));
    }
    // Written back, a policy that does not name the rule still does not.
    let json = serde_json::to_string(&unwritten).unwrap();
    assert!(!json.contains("unproven") && !json.contains("probation") && !json.contains("proof"), "{json}");
}

#[test]
fn refuse_refuses_an_unproven_seller_whatever_it_pays() {
    let refuse = policy(r#"unproven = "refuse""#, "");
    let why = refused(check(&refuse, &quote(1), SellerStanding::Unproven), Reason::SellerUnproven);
    assert_eq!(
        why,
        "the seller is unproven (no verified attestation of the seller was given), and the policy refuses unproven \
         sellers (unproven = \"refuse\")"
    );
    assert_eq!(PolicyRefusal::new(Reason::SellerUnproven, why).declined().detail, "policy/seller-unproven");
    // Before the amount is read: a charge of unknown amount, or an unlisted asset, is refused as unproven.
    let card = Quote::unknown_amount("", "", BASE, "exact");
    refused(check(&refuse, &card, SellerStanding::Unproven), Reason::SellerUnproven);
    let other_asset = Quote::new(U256::from(1u8), "0x0000000000000000000000000000000000000001", PAYEE, BASE, "exact");
    refused(check(&refuse, &other_asset, SellerStanding::Unproven), Reason::SellerUnproven);
    // After the resource and the network.
    let elsewhere = Quote::new(U256::from(1u8), USDC, PAYEE, "eip155:1", "exact");
    refused(check(&refuse, &elsewhere, SellerStanding::Unproven), Reason::NetworkNotAllowed);
    // With no [proof], any attestation proves, even one of no calls.
    assert!(check(&refuse, &quote(1_000_000), attested(0, 0, 0)).is_ok());
    refused(check(&refuse, &quote(1_000_001), attested(0, 0, 0)), Reason::AmountAboveCap);
}

#[test]
fn probation_holds_an_unproven_seller_to_the_probation_cap() {
    let budget =
        format!("\n[[budgets]]\nname = \"day\"\nasset = \"{BASE}/{USDC}\"\nwindow = \"day\"\nlimit = \"9000000\"\n");
    let on_probation = policy(r#"unproven = "probation""#, &format!("{budget}{}", probation()));
    assert_eq!(on_probation.rules().unproven, Unproven::Probation);
    // At the probation cap: paid, and counted against the budget as any payment is.
    let allowed = check(&on_probation, &quote(100_000), SellerStanding::Unproven).unwrap();
    assert_eq!(allowed.claims.len(), 1);
    assert_eq!(allowed.claims[0].amount, U256::from(100_000u64));
    // One unit above it: refused with its own code, and why.
    let why = refused(check(&on_probation, &quote(100_001), SellerStanding::Unproven), Reason::ProbationCap);
    assert_eq!(
        why,
        format!(
            "the amount 100001 (0.100001 USDC) is above the probation cap 100000 (0.1 USDC) for {BASE}/{USDC} while \
             the seller is unproven (no verified attestation of the seller was given)"
        )
    );
    assert_eq!(PolicyRefusal::new(Reason::ProbationCap, why).declined().detail, "policy/probation-cap");
    // The same payment to a proven seller is paid, up to the asset's own cap.
    assert!(check(&on_probation, &quote(100_001), attested(0, 0, 0)).is_ok());
    assert!(check(&on_probation, &quote(1_000_000), attested(0, 0, 0)).is_ok());
    // Above the asset's cap no standing helps, and the code says so.
    refused(check(&on_probation, &quote(1_000_001), SellerStanding::Unproven), Reason::AmountAboveCap);
    refused(check(&on_probation, &quote(1_000_001), attested(0, 0, 0)), Reason::AmountAboveCap);
    // Each asset has its own probation cap; a channel's deposit is held to it as to the cap.
    let sepolia = |amount: u64| Quote::new(U256::from(amount), SEPOLIA_USDC, PAYEE, SEPOLIA, "exact");
    assert!(check(&on_probation, &sepolia(500_000), SellerStanding::Unproven).is_ok());
    refused(check(&on_probation, &sepolia(500_001), SellerStanding::Unproven), Reason::ProbationCap);
    let deposit = quote(1).with_deposit(U256::from(100_001u64));
    let why = refused(check(&on_probation, &deposit, SellerStanding::Unproven), Reason::ProbationCap);
    assert!(why.starts_with("the deposit 100001 "), "{why}");
    // A payment of unknown amount is not held by a cap: refused as unknown_amount says.
    let card = Quote::unknown_amount("", "", BASE, "exact");
    refused(check(&on_probation, &card, SellerStanding::Unproven), Reason::AmountUnknown);
}

#[test]
fn each_figure_one_below_its_minimum_leaves_the_seller_unproven_and_at_it_proves() {
    let refuse = policy(r#"unproven = "refuse""#, PROOF);
    assert!(check(&refuse, &quote(1_000_000), proven()).is_ok(), "exactly at every minimum");
    assert!(check(&refuse, &quote(1), attested(u64::MAX, u64::MAX, Attested::WHOLE)).is_ok());
    let short = [
        (attested(MONTH - 1, 1000, 990_000), "its window of 2591999 s is below min_window_days = 30 (2592000 s)"),
        (attested(MONTH, 999, 990_000), "its 999 calls are below min_calls = 1000"),
        (attested(MONTH, 1000, 989_999), "its success rate 0.989999 is below min_success = \"0.99\""),
    ];
    for (seller, figure) in short {
        let why = refused(check(&refuse, &quote(1), seller), Reason::SellerUnproven);
        assert_eq!(
            why,
            format!(
                "the seller is unproven (its attestation falls short of the policy's proof: {figure}), and the \
                 policy refuses unproven sellers (unproven = \"refuse\")"
            )
        );
    }
    // Every figure that falls short is named.
    let why = refused(check(&refuse, &quote(1), attested(86_400, 5, 500_000)), Reason::SellerUnproven);
    assert!(
        why.contains(
            "its window of 86400 s is below min_window_days = 30 (2592000 s); its 5 calls are below min_calls = \
             1000; its success rate 0.5 is below min_success = \"0.99\""
        ),
        "{why}"
    );
    // Under probation, a seller below the minimums is on probation.
    let on_probation = policy(r#"unproven = "probation""#, &format!("{}{PROOF}", probation()));
    assert!(check(&on_probation, &quote(1_000_000), proven()).is_ok());
    let why = refused(check(&on_probation, &quote(100_001), attested(MONTH, 999, 990_000)), Reason::ProbationCap);
    assert!(
        why.ends_with("(its attestation falls short of the policy's proof: its 999 calls are below min_calls = 1000)"),
        "{why}"
    );
    assert!(check(&on_probation, &quote(100_000), attested(MONTH, 999, 990_000)).is_ok());
}

#[test]
fn a_minimum_not_written_is_none() {
    let calls_only = policy(r#"unproven = "refuse""#, "\n[proof]\nmin_calls = 10\n");
    assert!(check(&calls_only, &quote(1), attested(0, 10, 0)).is_ok());
    refused(check(&calls_only, &quote(1), attested(u64::MAX, 9, Attested::WHOLE)), Reason::SellerUnproven);
    let perfect = policy(r#"unproven = "refuse""#, "\n[proof]\nmin_success = \"1\"\n");
    assert!(check(&perfect, &quote(1), attested(0, 0, Attested::WHOLE)).is_ok());
    refused(check(&perfect, &quote(1), attested(0, 0, Attested::WHOLE - 1)), Reason::SellerUnproven);
    let a_long_window = policy(r#"unproven = "refuse""#, &format!("\n[proof]\nmin_window_days = {}\n", u64::MAX));
    let why = refused(check(&a_long_window, &quote(1), attested(u64::MAX, 0, 0)), Reason::SellerUnproven);
    assert!(why.contains(&format!("({} s)", u128::from(u64::MAX) * 86_400)), "no overflow: {why}");
}

#[test]
fn json_policies_read_each_value_as_toml_does() {
    let json = |unproven: &str, rest: &str| {
        format!(
            r#"{{"resources": ["https://api.seller.example/v1/", "https://data.example/feed"],
            "networks": ["{BASE}", "{SEPOLIA}"],
            "assets": [
              {{"network": "{BASE}", "address": "{USDC}", "symbol": "USDC", "decimals": 6, "cap": "1000000"}},
              {{"network": "{SEPOLIA}", "address": "{SEPOLIA_USDC}", "symbol": "USDC", "decimals": 6, "cap": "5000000"}}
            ],
            "unproven": "{unproven}"{rest}}}"#
        )
    };
    let allow = Policy::from_json_str(&json("allow", "")).unwrap();
    assert_eq!(allow, policy("", ""));
    let refuse = Policy::from_json_str(&json(
        "refuse",
        r#", "proof": {"min_calls": 1000, "min_success": "0.99", "min_window_days": 30}"#,
    ))
    .unwrap();
    assert_eq!(refuse, policy(r#"unproven = "refuse""#, PROOF));
    refused(check(&refuse, &quote(1), attested(MONTH, 1000, 989_999)), Reason::SellerUnproven);
    let caps =
        format!(r#", "probation": {{"caps": {{"{BASE}/{USDC}": "100000", "{SEPOLIA}/{SEPOLIA_USDC}": "500000"}}}}"#);
    let on_probation = Policy::from_json_str(&json("probation", &caps)).unwrap();
    assert_eq!(on_probation, policy(r#"unproven = "probation""#, &probation()));
    refused(check(&on_probation, &quote(100_001), SellerStanding::Unproven), Reason::ProbationCap);
    assert!(check(&on_probation, &quote(100_001), proven()).is_ok());
}

#[test]
fn the_seller_rules_round_trip_through_json() {
    // (The TOML writer is not built with the crate; the fuzz crate's `policy` target writes every policy it reads
    // back as TOML and as JSON, and reads it again.)
    let written = policy(r#"unproven = "probation""#, &format!("{}{PROOF}", probation()));
    let json = serde_json::to_string(&written).unwrap();
    assert!(json.contains(r#""unproven":"probation""#) && json.contains(r#""min_success":"0.99""#), "{json}");
    let again = Policy::from_json_str(&json).unwrap();
    assert_eq!(again, written);
    assert_eq!(again.rules().proof.min_window_days, Some(30));
    assert_eq!(again.rules().probation.caps.len(), 2);
    let refuse = policy(r#"unproven = "refuse""#, "\n[proof]\nmin_success = \"0.5\"\n");
    let json = serde_json::to_string(&refuse).unwrap();
    assert!(!json.contains("probation") && !json.contains("min_calls"), "{json}");
    assert_eq!(Policy::from_json_str(&json).unwrap(), refuse);
}

#[test]
fn a_probation_cap_must_name_a_listed_asset_within_its_cap() {
    let top = r#"unproven = "probation""#;
    let caps = |entries: &str| format!("\n[probation]\ncaps = {{ {entries} }}\n");
    let both = |base: &str| caps(&format!("\"{BASE}/{USDC}\" = \"{base}\", \"{SEPOLIA}/{SEPOLIA_USDC}\" = \"1\""));
    let unlisted = format!("eip155:1/{USDC}");
    assert_eq!(
        invalid(top, &caps(&format!("\"{unlisted}\" = \"1\""))),
        (format!("probation.caps.{unlisted:?}"), Problem::UnlistedAsset(unlisted))
    );
    let member = format!("probation.caps.{:?}", format!("{BASE}/{USDC}"));
    assert_eq!(
        invalid(top, &both("1000001")),
        (member.clone(), Problem::ProbationAboveCap { probation: "1000001".into(), cap: "1000000".into() })
    );
    let e = Policy::from_toml_str(&toml(top, &both("1000001"))).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "policy member {member}: the probation cap 1000001 is above the asset's cap 1000000: probation only \
             lowers a cap"
        )
    );
    assert_eq!(policy(top, &both("1000000")).cap(BASE, USDC), Some(U256::from(1_000_000u64)), "at the cap loads");
    assert_eq!(invalid(top, &both("0.5")), (member, Problem::NotAnAmount("0.5".into())));
    assert!(Policy::from_toml_str(&toml(top, &both("1").replace("\"1\" }", "1 }"))).is_err(), "a number");
    let twice = caps(&format!(
        "\"{BASE}/{USDC}\" = \"1\", \"{BASE}/{}\" = \"2\", \"{SEPOLIA}/{SEPOLIA_USDC}\" = \"1\"",
        USDC.to_ascii_lowercase()
    ));
    let (member, problem) = invalid(top, &twice);
    assert_eq!(problem, Problem::DuplicateProbationCap(format!("{BASE}/{USDC}")));
    assert_eq!(member, format!("probation.caps.{:?}", format!("{BASE}/{}", USDC.to_ascii_lowercase())));
    // Under probation every listed asset has a probation cap.
    assert_eq!(
        invalid(top, &caps(&format!("\"{BASE}/{USDC}\" = \"1\""))),
        ("probation.caps".into(), Problem::ProbationCapMissing(format!("{SEPOLIA}/{SEPOLIA_USDC}")))
    );
    assert_eq!(invalid(top, ""), ("probation.caps".into(), Problem::ProbationCapMissing(format!("{BASE}/{USDC}"))));
    // "0" pays an unproven seller nothing in the asset.
    let nothing = policy(top, &both("0"));
    refused(check(&nothing, &quote(1), SellerStanding::Unproven), Reason::ProbationCap);
}

#[test]
fn a_rule_that_would_never_apply_does_not_load() {
    assert_eq!(invalid("", &probation()), ("probation".into(), Problem::ProbationUnused("allow")));
    assert_eq!(
        invalid(r#"unproven = "refuse""#, &probation()),
        ("probation".into(), Problem::ProbationUnused("refuse"))
    );
    assert_eq!(invalid("", PROOF), ("proof".into(), Problem::ProofUnused));
    assert_eq!(invalid(r#"unproven = "allow""#, PROOF), ("proof".into(), Problem::ProofUnused));
    let e = Policy::from_toml_str(&toml("", PROOF)).unwrap_err().to_string();
    assert_eq!(
        e,
        "policy member proof: proof minimums are read only with unproven = \"probation\" or \"refuse\", and the \
         policy says \"allow\""
    );
}

#[test]
fn min_success_is_a_quoted_decimal_from_zero_to_one() {
    let top = r#"unproven = "refuse""#;
    let with = |rate: &str| format!("\n[proof]\nmin_success = {rate}\n");
    assert_eq!(invalid(top, &with("\"1.5\"")), ("proof.min_success".into(), Problem::NotARate("1.5".into())));
    for bad in ["1.0000001", "1.000001", "0.9999999", "-0.5", ".5", "1.", "", "2", "01", "0.5e1", " 0.5", "0,5"] {
        assert_eq!(
            invalid(top, &with(&format!("{bad:?}"))),
            ("proof.min_success".into(), Problem::NotARate(bad.into())),
            "{bad:?}"
        );
    }
    for (good, ppm) in [("0", 0), ("1", 1_000_000), ("1.000000", 1_000_000), ("0.5", 500_000), ("0.000001", 1)] {
        let loaded = policy(top, &with(&format!("{good:?}")));
        assert_eq!(loaded.rules().proof.min_success.as_deref(), Some(good));
        assert_eq!(compile::ppm(good), Some(ppm), "{good}");
    }
    let e = Policy::from_toml_str(&toml(top, &with("\"1.5\""))).unwrap_err().to_string();
    assert_eq!(
        e,
        "policy member proof.min_success: \"1.5\" is not a success rate: write a quoted decimal from \"0\" to \"1\" \
         with at most six places, e.g. \"0.99\""
    );
    // A number is not read: a float would not keep 0.99 exactly.
    assert!(syntax(&toml(top, &with("0.99")), false).contains("quoted decimal"));
    let json =
        r#"{"resources": [], "networks": [], "assets": [], "unproven": "refuse", "proof": {"min_success": 0.99}}"#;
    assert!(syntax(json, true).contains("quoted decimal"));
}

#[test]
fn unknown_members_and_values_of_the_seller_rules_are_syntax_errors() {
    assert!(syntax(&toml(r#"unproven = "maybe""#, ""), false).contains("unknown variant `maybe`"));
    let top = r#"unproven = "refuse""#;
    assert!(syntax(&toml(top, "\n[proof]\nmin_rating = 4\n"), false).contains("unknown field `min_rating`"));
    assert!(syntax(&toml(top, "\n[proof]\nmin_calls = -1\n"), false).contains("min_calls"));
    let probation_budget = format!("{}budgets = []\n", probation());
    let message = syntax(&toml(r#"unproven = "probation""#, &probation_budget), false);
    assert!(message.contains("unknown field `budgets`"), "{message}");
    let json = r#"{"resources": [], "networks": [], "assets": [], "unproven": "refuse", "proof": {"window": 30}}"#;
    assert!(syntax(json, true).contains("unknown field `window`"));
}
