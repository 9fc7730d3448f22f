//! The seller's standing through the real gate: `transact` with the local key and an in-memory seller. A policy that
//! refuses unproven sellers declines `policy-refused`, `policy/seller-unproven`, before the link is fetched or the
//! signer asked, and pays once the options carry a proven standing; a policy on probation holds an unproven seller
//! to the probation cap. With the `contract` feature, the standing is read from a signed offer card and attestation.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::sync::Arc;

use serde_json::{Value, json};
use terms::safety::policy::Policy;
use terms::safety::{Attested, Purchase, SellerStanding};
use terms::{DeclineCode, FixedClock, Options, TransactOutcome, transact};

mod support;
use support::{CountingSigner, Reply, ScriptedFetch};

const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const NOW: u64 = 1_790_000_000;
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
/// 30 days.
const MONTH: u64 = 2_592_000;

/// A policy for USDC on Base Sepolia (cap 0.1 USDC), with `seller` (the seller rules) after the asset.
fn policy(unproven: &str, seller: &str) -> Arc<Policy> {
    rules_with(&format!("unproven = \"{unproven}\""), seller)
}

/// The same policy with `top` among its top-level members and `tables` after the asset.
fn rules_with(top: &str, tables: &str) -> Arc<Policy> {
    let text = format!(
        r#"
resources = ["https://api.seller.example/v1/"]
networks = ["eip155:84532"]
{top}

[[assets]]
network = "eip155:84532"
address = "{USDC}"
symbol = "USDC"
decimals = 6
cap = "100000"
{tables}
"#
    );
    Arc::new(Policy::from_toml_str(&text).unwrap())
}

const PROOF: &str = "\n[proof]\nmin_window_days = 30\nmin_calls = 1000\nmin_success = \"0.99\"\n";

fn offer(amount: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": amount, "asset": USDC,
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": H, "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}

/// The seller: the ATR at its link, as often as asked; `asked()` counts the fetches.
fn seller() -> ScriptedFetch {
    ScriptedFetch::new()
        .script_repeating(&format!("https://atr.seller.example/{H}"), vec![Reply::ok(support::hex(ATR))])
}

/// The local key; `count()` counts the signatures.
fn wallet() -> CountingSigner {
    CountingSigner::new(KEY, "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
}

fn pairing() -> &'static dyn terms::pairing::Pairing {
    terms::pairing("x402/exact/eip155/eip3009").unwrap()
}

fn options(policy: Arc<Policy>) -> Options {
    Options::new()
        .clock(FixedClock(NOW))
        .policy(policy)
        .purchase(Purchase::new("GET", "https://api.seller.example/v1/quote"))
}

fn attested(window: u64, calls: u64, ppm: u32) -> SellerStanding {
    SellerStanding::Attested(Attested::new(window, calls, ppm).unwrap())
}

/// The payment is declined with `detail` before the link is fetched or the signer asked; the explanation returned.
async fn declined_unfetched_unsigned(amount: &str, options: &Options, detail: &str) -> String {
    let (seller, wallet) = (seller(), wallet());
    let declined = transact(offer(amount), pairing(), &wallet, &seller, options).await.unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::PolicyRefused, detail));
    assert_eq!(seller.asked().len(), 0, "{detail}: the link was fetched");
    assert_eq!(wallet.count(), 0, "{detail}: the signer was asked");
    declined.cause.unwrap()
}

/// The payment is signed, once, after one fetch.
async fn signed(amount: &str, options: &Options) {
    let (seller, wallet) = (seller(), wallet());
    let done = transact(offer(amount), pairing(), &wallet, &seller, options).await.unwrap();
    let TransactOutcome::Signed(transacted) = done else { panic!("not signed: {done:?}") };
    assert!(transacted.signed.is_some());
    assert_eq!((seller.asked().len(), wallet.count()), (1, 1));
}

#[tokio::test]
async fn a_refuse_policy_declines_an_unproven_seller_before_any_signature_and_pays_a_proven_one() {
    let refuse = options(policy("refuse", PROOF));
    let why = declined_unfetched_unsigned("10000", &refuse, "policy/seller-unproven").await;
    assert!(why.contains("no verified attestation of the seller was given"), "{why}");
    // Given, but below a minimum: still unproven, and the decline says which figure.
    let short = refuse.clone().seller(attested(MONTH, 999, 990_000));
    let why = declined_unfetched_unsigned("10000", &short, "policy/seller-unproven").await;
    assert!(why.contains("its 999 calls are below min_calls = 1000"), "{why}");
    // Proven: paid.
    signed("10000", &refuse.clone().seller(attested(MONTH, 1000, 990_000))).await;
    // Proven does not lift the cap.
    let proven = refuse.seller(attested(MONTH, 1000, 990_000));
    declined_unfetched_unsigned("100001", &proven, "policy/amount-above-cap").await;
}

#[tokio::test]
async fn a_probation_policy_holds_an_unproven_seller_to_its_probation_cap() {
    let caps = format!("\n[probation]\ncaps = {{ \"eip155:84532/{USDC}\" = \"10000\" }}\n{PROOF}");
    let on_probation = options(policy("probation", &caps));
    signed("10000", &on_probation).await;
    let why = declined_unfetched_unsigned("10001", &on_probation, "policy/probation-cap").await;
    assert!(why.starts_with("the amount 10001 (0.010001 USDC) is above the probation cap 10000 (0.01 USDC)"), "{why}");
    signed("10001", &on_probation.clone().seller(attested(MONTH, 1000, 990_000))).await;
}

/// The seller's discovery document requires signed acceptance (`acceptanceRequired: true`, passed as
/// `Options::acceptance_required`): a policy that refuses such a seller declines before the link is fetched or the
/// signer asked; one that hands it to a person returns it for approval, nothing signed; without the rule, or with
/// the document saying `false`, it is paid.
#[tokio::test]
async fn a_seller_that_requires_acceptance_is_refused_or_handed_to_a_person_as_the_policy_says() {
    let refuse = options(rules_with("acceptance_required = \"refuse\"", "")).acceptance_required(true);
    let why = declined_unfetched_unsigned("10000", &refuse, "policy/acceptance-required").await;
    assert!(why.contains("acceptanceRequired"), "{why}");
    signed("10000", &refuse.clone().acceptance_required(false)).await;

    let approve = options(rules_with("acceptance_required = \"approve\"", "")).acceptance_required(true);
    let (seller, wallet) = (seller(), wallet());
    let done = transact(offer("10000"), pairing(), &wallet, &seller, &approve).await.unwrap();
    assert!(matches!(done, TransactOutcome::ApproveSpend(_)), "{done:?}");
    assert_eq!(wallet.count(), 0, "nothing signed before a person approves");
    signed("10000", &options(policy("allow", "")).acceptance_required(true)).await;
}

#[tokio::test]
async fn without_a_seller_rule_the_standing_changes_nothing() {
    let plain = options(policy("allow", ""));
    signed("100000", &plain).await;
    signed("100000", &plain.clone().seller(attested(0, 0, 0))).await;
    declined_unfetched_unsigned("100001", &plain, "policy/amount-above-cap").await;
}

/// The standing read from the signed agent contract's documents, each signed and verified under its signer's keys.
#[cfg(feature = "contract")]
mod contract {
    use serde_json::{Map, Value, json};
    use terms::contract::{Attestation, KeyList, OfferCard, Signed, Uncounted, public_key_of, read, read_keys};
    use terms::contract::{sign_object, standing};

    use super::*;

    const SELLER_SECRET: [u8; 32] = [7; 32];
    const VERIFIER_SECRET: [u8; 32] = [9; 32];

    fn keys(kid: &str, secret: &[u8; 32]) -> KeyList {
        let list = json!({"contract": "1.0", "keys": [
            {"kid": kid, "alg": "ed25519", "key": public_key_of(secret), "from": "2026-01-01T00:00:00Z"}
        ]});
        read_keys(list.to_string().as_bytes()).unwrap()
    }

    fn signed_bytes(document: Value, secret: &[u8; 32]) -> Vec<u8> {
        let mut object: Map<String, Value> = document.as_object().unwrap().clone();
        object.insert("signature".into(), json!(sign_object(&object, secret).unwrap()));
        Value::Object(object).to_string().into_bytes()
    }

    fn card(calls: u64) -> Signed<OfferCard> {
        let card = json!({
            "contract": "1.0",
            "seller": {"host": "api.seller.example", "verification": "domain"},
            "rates": [{"name": "quote", "price": "0.01", "currency": "USD", "unit": "call", "miss": "free"}],
            "quote": "https://api.seller.example/quote",
            "terms": {"digest": H, "refund": "none", "license": "use"},
            "pay": [{"kind": "x402"}],
            "proof": {
                "by": "verifier.example",
                "window": {"from": "2026-06-01T00:00:00Z", "until": "2026-07-01T00:00:00Z"},
                "calls": calls, "success": 0.995,
                "signed": "https://verifier.example/attestations/api.seller.example"
            },
            "keys": "https://api.seller.example/.well-known/receipt-keys",
            "issued": "2026-07-02T00:00:00Z",
            "kid": "s1"
        });
        let card: Signed<OfferCard> = read(&signed_bytes(card, &SELLER_SECRET)).unwrap();
        card.verify(&keys("s1", &SELLER_SECRET)).unwrap();
        card
    }

    fn attestation() -> Signed<Attestation> {
        let attestation = json!({
            "contract": "1.0",
            "verifier": "verifier.example",
            "subject": "api.seller.example",
            "checked": ["receipts"],
            "window": {"from": "2026-06-01T00:00:00Z", "until": "2026-07-01T00:00:00Z"},
            "calls": 2000,
            "results": [{"verb": "quote", "calls": 2000, "success": 0.995}],
            "issued": "2026-07-01T01:00:00Z",
            "kid": "v1"
        });
        let attestation: Signed<Attestation> = read(&signed_bytes(attestation, &VERIFIER_SECRET)).unwrap();
        attestation.verify(&keys("v1", &VERIFIER_SECRET)).unwrap();
        attestation
    }

    #[tokio::test]
    async fn a_verified_card_and_attestation_prove_the_seller_to_the_gate() {
        let refuse = options(policy("refuse", PROOF));
        let proven = standing(&card(2000), Some(&attestation())).unwrap();
        assert_eq!(proven, attested(MONTH, 2000, 995_000));
        signed("10000", &refuse.clone().seller(proven)).await;
        // A card claiming more calls than its attestation counts is unproven: declined, unsigned.
        let boast = standing(&card(5000), Some(&attestation()));
        assert_eq!(boast, Err(Uncounted::Calls { card: 5000, attestation: 2000 }));
        let unproven = refuse.seller(boast.unwrap_or_default());
        declined_unfetched_unsigned("10000", &unproven, "policy/seller-unproven").await;
    }
}
