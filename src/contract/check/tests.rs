use std::collections::HashMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::*;
use crate::contract::{public_key_of, read, sign_object};

/// 2026-01-01T00:00:00Z.
const T0: u64 = 1_767_225_600;

fn link_value(who: &str, agent: &str) -> Map<String, Value> {
    let Value::Object(o) = json!({
        "who": who, "for": "alice", "agent": agent, "mark": "intent",
        "sellers": ["a.test", "b.test"], "verbs": ["translate", "summarize"],
        "per_month": "100", "per_task": "5", "currency": "USD",
        "until": "2026-02-01T00:00:00Z", "issued": "2025-12-31T00:00:00Z", "kid": "k1", "signature": "ed25519:x"
    }) else {
        unreachable!()
    };
    o
}

fn link(who: &str, agent: &str) -> Link {
    serde_json::from_value(Value::Object(link_value(who, agent))).unwrap()
}

/// alice → agent-1 → agent-2 → agent-3, every link as wide as the one above.
fn chain() -> Vec<Link> {
    vec![link("alice", "agent-1"), link("agent-1", "agent-2"), link("agent-2", "agent-3")]
}

/// A change to a link.
type Widen = Box<dyn Fn(&mut Link)>;

/// The error of a chain whose second link was changed by `widen`.
fn widened(widen: impl Fn(&mut Link)) -> ContractError {
    let mut links = chain();
    widen(&mut links[1]);
    check_chain(&links, T0).unwrap_err()
}

fn broken_at(e: &ContractError) -> (usize, &str) {
    match e {
        ContractError::ChainBroken { index, detail } => (*index, detail.as_str()),
        other => panic!("not ChainBroken: {other:?}"),
    }
}

#[test]
fn a_chain_whose_links_only_narrow_passes() {
    check_chain(&chain(), T0).unwrap();
    let mut links = chain();
    links[1].sellers = vec!["A.TEST".into()];
    links[1].verbs = vec!["translate".into()];
    links[1].per_month = Amount::parse("99.99").unwrap();
    links[1].per_task = Amount::parse("5.000").unwrap();
    links[1].until = "2026-01-31T23:59:59Z".into();
    links[2].sellers = vec!["a.test".into()];
    links[2].verbs = vec![];
    links[2].per_month = Amount::parse("1").unwrap();
    links[2].until = "2026-01-31T23:59:59Z".into();
    check_chain(&links, T0).unwrap();
    check_chain(&links[..1], T0).unwrap();
}

#[test]
fn each_wider_dimension_breaks_the_chain_at_its_link() {
    let cases: Vec<(&str, Widen)> = vec![
        ("seller `c.test`", Box::new(|l| l.sellers.push("c.test".into()))),
        ("Verb `search`", Box::new(|l| l.verbs.push("search".into()))),
        ("100.01 a month", Box::new(|l| l.per_month = Amount::parse("100.01").unwrap())),
        ("5.000001 a task", Box::new(|l| l.per_task = Amount::parse("5.000001").unwrap())),
        ("after the link above", Box::new(|l| l.until = "2026-02-01T00:00:01Z".into())),
        ("counts in `EUR`", Box::new(|l| l.currency = "EUR".into())),
        ("granted by `mallory`", Box::new(|l| l.who = "mallory".into())),
        ("is for `bob`", Box::new(|l| l.on_behalf_of = "bob".into())),
    ];
    for (want, widen) in cases {
        let e = widened(widen);
        let (index, detail) = broken_at(&e);
        assert_eq!(index, 1, "{want}");
        assert!(detail.contains(want), "{want}: {detail}");
        assert_eq!(e.code(), "contract/chain-broken");
    }
    // The third link granted by someone other than the second's agent breaks at index 2.
    let mut links = chain();
    links[2].who = "agent-1".into();
    assert_eq!(broken_at(&check_chain(&links, T0).unwrap_err()).0, 2);
}

#[test]
fn eight_links_pass_and_nine_are_too_long() {
    let agents: Vec<String> = (0..=9).map(|i| format!("agent-{i}")).collect();
    let links: Vec<Link> = agents.windows(2).map(|w| link(&w[0], &w[1])).collect();
    assert_eq!(links.len(), 9);
    check_chain(&links[..MAX_CHAIN], T0).unwrap();
    assert_eq!(check_chain(&links, T0), Err(ContractError::ChainTooLong(9)));
    assert!(matches!(check_chain(&[], T0), Err(ContractError::ChainBroken { index: 0, .. })));
}

#[test]
fn a_link_holds_until_its_until_and_not_a_second_later() {
    let until = T0 + 31 * 86_400; // 2026-02-01T00:00:00Z
    let mut links = chain();
    links[2].until = "2026-01-15T00:00:00Z".into();
    check_chain(&chain(), until).unwrap();
    assert_eq!(check_chain(&chain(), until + 1), Err(ContractError::Expired("mandate link")));
    let until_2 = T0 + 14 * 86_400;
    check_chain(&links, until_2).unwrap();
    assert_eq!(check_chain(&links, until_2 + 1), Err(ContractError::Expired("mandate link")));
    links[0].until = "2026-02-30T00:00:00Z".into();
    assert_eq!(check_chain(&links, T0), Err(ContractError::Time("2026-02-30T00:00:00Z".into())));
}

fn presentation_at(present: &str, expires: &str) -> Presentation {
    serde_json::from_value(json!({
        "contract": "1.0", "chain": [Value::Object(link_value("alice", "agent-1"))], "present": present,
        "status": "https://status.test/m/1", "expires": expires, "kid": "k1", "signature": "ed25519:x"
    }))
    .unwrap()
}

#[test]
fn a_presentation_is_stale_past_five_minutes_and_past_the_skew() {
    let p = presentation_at("2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z");
    check_fresh(&p, T0).unwrap();
    check_fresh(&p, T0 + MAX_PRESENTATION_AGE).unwrap();
    assert_eq!(check_fresh(&p, T0 + MAX_PRESENTATION_AGE + 1), Err(ContractError::Stale(p.present.clone())));
    check_fresh(&p, T0 - MAX_CLOCK_SKEW).unwrap();
    assert_eq!(check_fresh(&p, T0 - MAX_CLOCK_SKEW - 1), Err(ContractError::Stale(p.present.clone())));
    assert_eq!(check_fresh(&p, 0), Err(ContractError::Stale(p.present.clone())));
    assert_eq!(check_fresh(&p, u64::MAX), Err(ContractError::Stale(p.present.clone())));
}

#[test]
fn a_presentation_and_a_quote_expire_one_second_past_their_expires() {
    let p = presentation_at("2026-01-01T00:58:00Z", "2026-01-01T01:00:00Z");
    let expires = T0 + 3600;
    check_fresh(&p, expires).unwrap();
    assert_eq!(check_fresh(&p, expires + 1), Err(ContractError::Expired("mandate presentation")));
    let quote: Quote = serde_json::from_value(json!({
        "contract": "1.0", "id": "q1", "seller": "a.test", "verb": "translate", "price": "0.01", "currency": "USD",
        "input": format!("0x{}", "11".repeat(32)), "terms": format!("0x{}", "22".repeat(32)),
        "issued": "2026-01-01T00:00:00Z", "expires": "2026-01-01T01:00:00+01:00", "kid": "k1", "signature": "ed25519:x"
    }))
    .unwrap();
    // +01:00: the quote ends at 00:00:00Z.
    check_quote(&quote, T0).unwrap();
    assert_eq!(check_quote(&quote, T0 + 1), Err(ContractError::Expired("quote")));
    let mut bad = quote;
    bad.expires = "tomorrow".into();
    assert_eq!(check_quote(&bad, T0), Err(ContractError::Time("tomorrow".into())));
}

fn receipt(output: &str, terms: &str, mandate: Option<&str>) -> Receipt {
    let mut r = json!({
        "contract": "1.0", "id": "r1", "seller": "a.test", "verb": "translate", "version": "1", "price": "0.01",
        "currency": "USD", "paid": "0.01", "terms": terms, "output": output,
        "definition": format!("0x{}", "33".repeat(32)), "kind": "call", "time": "2026-01-01T00:00:00Z",
        "kid": "k1", "signature": "ed25519:x"
    });
    if let Some(m) = mandate {
        r["mandate"] = json!(m);
    }
    serde_json::from_value(r).unwrap()
}

#[test]
fn the_output_and_terms_digests_match_the_bytes_held() {
    let body = b"{\"text\":\"bonjour\"}";
    let h = crate::atr_hash(body);
    let r = receipt(&h.to_hex(), &h.to_hex(), None);
    check_output(&r, body).unwrap();
    // Upper-case hex reads as the gate reads H.
    check_output(&receipt(&format!("0x{}", h.to_hex()[2..].to_uppercase()), "", None), body).unwrap();
    let e = check_output(&r, b"{\"text\":\"bonjour\"} ").unwrap_err();
    assert_eq!(
        e,
        ContractError::DigestMismatch {
            member: "output",
            named: h.to_hex(),
            held: crate::atr_hash(b"{\"text\":\"bonjour\"} ").to_hex()
        }
    );
    check_terms(&r.terms, &h).unwrap();
    let other = crate::atr_hash(b"other terms");
    assert!(matches!(check_terms(&r.terms, &other), Err(ContractError::DigestMismatch { member: "terms", .. })));
    for malformed in ["", "0x", &h.to_hex()[2..], &format!("{}0", h.to_hex())] {
        assert!(
            matches!(check_terms(malformed, &h), Err(ContractError::DigestMismatch { member: "terms", .. })),
            "{malformed}"
        );
    }
}

const PERSON: [u8; 32] = [1; 32];
const AGENT_1: [u8; 32] = [2; 32];
const AGENT_2: [u8; 32] = [3; 32];

fn keys_of(seed: &[u8; 32]) -> KeyList {
    serde_json::from_value(json!({"contract": "1.0", "keys": [{
        "kid": "k1", "alg": "ed25519", "key": public_key_of(seed), "from": "2020-01-01T00:00:00Z"
    }]}))
    .unwrap()
}

fn signed(mut object: Map<String, Value>, seed: &[u8; 32]) -> Map<String, Value> {
    object.remove("signature");
    let signature = sign_object(&object, seed).unwrap();
    object.insert("signature".into(), Value::String(signature));
    object
}

/// alice → agent-1 → agent-2, each link signed by its `who`, presented by agent-2 at T0; `change` edits the
/// objects before they are signed.
fn presentation(change: impl Fn(&mut Vec<Map<String, Value>>)) -> Signed<Presentation> {
    let mut links = vec![link_value("alice", "agent-1"), link_value("agent-1", "agent-2")];
    change(&mut links);
    let links: Vec<Value> = links
        .into_iter()
        .zip([&PERSON, &AGENT_1].into_iter().chain(std::iter::repeat(&AGENT_2)))
        .map(|(l, seed)| Value::Object(signed(l, seed)))
        .collect();
    let Value::Object(p) = json!({
        "contract": "1.0", "chain": links, "present": "2026-01-01T00:00:00Z",
        "status": "https://status.test/m/1", "expires": "2026-01-01T01:00:00Z", "kid": "k1"
    }) else {
        unreachable!()
    };
    let bytes = serde_json::to_vec(&Value::Object(signed(p, &AGENT_2))).unwrap();
    read::<Presentation>(&bytes).unwrap()
}

fn key_book() -> HashMap<String, KeyList> {
    HashMap::from([
        ("alice".to_owned(), keys_of(&PERSON)),
        ("agent-1".to_owned(), keys_of(&AGENT_1)),
        ("agent-2".to_owned(), keys_of(&AGENT_2)),
    ])
}

#[test]
fn a_presentation_verifies_link_by_link_and_as_a_whole() {
    let book = key_book();
    let keys = |who: &str| book.get(who);
    check_presentation(&presentation(|_| {}), keys, T0).unwrap();
    // A link signed, then widened: its signature no longer holds... but the wider rule is found first.
    let mut wider = presentation(|_| {}).object().clone();
    wider["chain"][1]["per_task"] = json!("6");
    let wider = read::<Presentation>(&serde_json::to_vec(&Value::Object(wider)).unwrap()).unwrap();
    assert!(matches!(check_presentation(&wider, keys, T0), Err(ContractError::ChainBroken { index: 1, .. })));
    // A link narrowed after it was signed: the rules pass, its signature does not.
    let mut narrowed = presentation(|_| {}).object().clone();
    narrowed["chain"][1]["per_task"] = json!("4");
    let narrowed = read::<Presentation>(&serde_json::to_vec(&Value::Object(narrowed)).unwrap()).unwrap();
    assert_eq!(check_presentation(&narrowed, keys, T0), Err(ContractError::SignatureInvalid));
    // A signer the caller holds no keys for.
    let without = |who: &str| if who == "agent-1" { None } else { book.get(who) };
    let p = presentation(|links| links[1]["kid"] = json!("agent-1-key"));
    assert_eq!(check_presentation(&p, without, T0), Err(ContractError::KeyUnknown("agent-1-key".into())));
    // The presentation signed by someone other than the last link's agent.
    let swapped = |who: &str| if who == "agent-2" { book.get("agent-1") } else { book.get(who) };
    assert_eq!(check_presentation(&presentation(|_| {}), swapped, T0), Err(ContractError::SignatureInvalid));
    // Stale before any signature is checked.
    let p = presentation(|_| {});
    assert_eq!(check_presentation(&p, |_| None, T0 + 301), Err(ContractError::Stale(p.doc().present.clone())));
}

#[test]
fn a_presentation_of_nine_links_is_refused_before_its_signatures() {
    let p = presentation(|links| {
        for i in 2..9 {
            links.push(link_value(&format!("agent-{i}"), &format!("agent-{}", i + 1)));
        }
    });
    assert_eq!(p.doc().chain.len(), 9);
    assert_eq!(check_presentation(&p, |_| None, T0), Err(ContractError::ChainTooLong(9)));
}

#[test]
fn the_mandate_digest_is_sha256_of_the_presented_object_in_rfc_8785() {
    let p = presentation(|_| {});
    let jcs = serde_json_canonicalizer::to_string(&Value::Object(p.object().clone())).unwrap();
    assert!(jcs.contains("\"signature\":\"ed25519:"));
    let want = format!("0x{}", hex::encode(Sha256::digest(jcs.as_bytes())));
    assert_eq!(mandate_digest(&p).unwrap().to_hex(), want);
    let body = b"ok";
    let output = crate::atr_hash(body).to_hex();
    check_mandate(&receipt(&output, &output, Some(&want)), Some(&p)).unwrap();
    check_mandate(&receipt(&output, &output, None), None).unwrap();
    let other = presentation(|links| links[1]["per_task"] = json!("4"));
    assert_eq!(
        check_mandate(&receipt(&output, &output, Some(&want)), Some(&other)),
        Err(ContractError::DigestMismatch {
            member: "mandate",
            named: want.clone(),
            held: mandate_digest(&other).unwrap().to_hex()
        })
    );
    assert_eq!(
        check_mandate(&receipt(&output, &output, None), Some(&p)),
        Err(ContractError::DigestMismatch { member: "mandate", named: "(none)".into(), held: want.clone() })
    );
    assert_eq!(
        check_mandate(&receipt(&output, &output, Some(&want)), None),
        Err(ContractError::DigestMismatch { member: "mandate", named: want, held: "(none)".into() })
    );
}

#[test]
fn a_purchase_is_held_to_the_last_link() {
    let mut p = presentation_at("2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z");
    p.chain.push(link("agent-1", "agent-2"));
    p.chain[1].sellers = vec!["a.test".into()];
    p.chain[1].per_month = Amount::parse("3").unwrap();
    let price = |s: &str| Amount::parse(s).unwrap();
    check_purchase(&p, "A.test", "translate", &price("3.0"), "USD").unwrap();
    let outside = |p: &Presentation, seller: &str, verb: &str, amount: &str, currency: &str| match check_purchase(
        p,
        seller,
        verb,
        &price(amount),
        currency,
    ) {
        Err(ContractError::OutsideMandate(detail)) => detail,
        other => panic!("not OutsideMandate: {other:?}"),
    };
    assert!(outside(&p, "b.test", "translate", "1", "USD").contains("seller `b.test`"));
    assert!(outside(&p, "a.test", "search", "1", "USD").contains("Verb `search`"));
    assert!(outside(&p, "a.test", "translate", "1", "EUR").contains("`EUR`"));
    assert!(outside(&p, "a.test", "translate", "3.01", "USD").contains("a month"));
    p.chain[1].per_month = Amount::parse("100").unwrap();
    check_purchase(&p, "a.test", "translate", &price("5"), "USD").unwrap();
    assert!(outside(&p, "a.test", "translate", "5.01", "USD").contains("a task"));
    p.chain.clear();
    assert!(matches!(
        check_purchase(&p, "a.test", "translate", &price("1"), "USD"),
        Err(ContractError::ChainBroken { index: 0, .. })
    ));
}

#[test]
fn a_link_is_issued_no_earlier_than_the_link_above_and_not_after_now() {
    // Issued at the same instant as the link above: a grant made at once passes.
    let mut links = chain();
    links[2].issued = "2025-12-31T00:00:00Z".into();
    check_chain(&links, T0).unwrap();
    // One second before the link above it derives from: broken at that link.
    links[2].issued = "2025-12-30T23:59:59Z".into();
    let e = check_chain(&links, T0).unwrap_err();
    assert_eq!(broken_at(&e).0, 2);
    assert!(broken_at(&e).1.contains("before the link above it"), "{e}");
    // Issued after now: within the clock skew passes, one second past it breaks.
    let mut links = chain();
    links[1].issued = "2026-01-01T00:00:30Z".into();
    links[2].issued = "2026-01-01T00:00:30Z".into();
    check_chain(&links, T0).unwrap();
    links[2].issued = "2026-01-01T00:00:31Z".into();
    let e = check_chain(&links, T0).unwrap_err();
    assert_eq!(broken_at(&e).0, 2);
    assert!(broken_at(&e).1.contains("after now"), "{e}");
    // An issued time that is not RFC 3339 is refused as such.
    let mut links = chain();
    links[0].issued = "yesterday".into();
    assert_eq!(check_chain(&links, T0), Err(ContractError::Time("yesterday".into())));
}

#[test]
fn a_presentation_may_not_outlive_its_last_link() {
    let book = key_book();
    let keys = |who: &str| book.get(who);
    // The presentation's expires (01:00) equal to the last link's until passes; a second earlier breaks it.
    let at_end = presentation(|links| links[1]["until"] = json!("2026-01-01T01:00:00Z"));
    check_presentation(&at_end, keys, T0).unwrap();
    let short = presentation(|links| links[1]["until"] = json!("2026-01-01T00:59:59Z"));
    let e = check_presentation(&short, keys, T0).unwrap_err();
    assert_eq!(broken_at(&e).0, 1);
    assert!(broken_at(&e).1.contains("before the presentation's expires"), "{e}");
}
