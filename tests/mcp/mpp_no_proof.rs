//! The MPP pairings whose payment is no public proof of H (`mpp/charge/card`, `mpp/charge/stripe`,
//! `mpp/subscription/stripe`, `mpp/charge/nearintents`) through the tools over stdio: each file's challenge placed
//! for buyer.json's ATR A, with A's link and buyer.json's agreement URL, as a seller places it; the agreement exchange
//! of buyer.json's BA1 row at that URL on the loopback seller. atr_confirm names the agreement and gives nothing to
//! sign, atr_agree pays it once approved, atr_confirm with the receipt says there is nothing to sign (the payment is
//! the seller's flow); atr_transact does it in two calls. A challenge carrying another H is declined before the
//! wallet is asked or the agreement URL is reached.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::AtrHash;

use crate::common::Answer as HttpAnswer;
use crate::common::*;
use crate::mpp::{Mpp, b64u_json, file_row};
use crate::support::vectors;

const FILES: [&str; 4] =
    ["mpp-charge-card.json", "mpp-charge-stripe.json", "mpp-subscription-stripe.json", "mpp-charge-nearintents.json"];

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::mpp_charge_card_agreement_by_hand_over_stdio", || Ok(run(by_hand(FILES[0])))),
        Trial::test("mcp::mpp_charge_nearintents_agreement_by_hand_over_stdio", || Ok(run(by_hand(FILES[3])))),
        Trial::test("mcp::mpp_no_proof_transact_in_two_calls_over_stdio", || Ok(run(transact_each()))),
        Trial::test("mcp::mpp_no_proof_challenge_of_another_h_over_stdio", || Ok(run(another_h()))),
    ]
}

fn decoded(text: &Value) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text.as_str().unwrap()).unwrap()).unwrap()
}

fn h_of(bytes: &[u8]) -> AtrHash {
    terms::atr_hash(bytes)
}

/// The file's B2 challenge placed again for `h`, as a seller places it: its id carries `h` at position 0, its
/// `opaque` names `h`, `link` and buyer.json's agreement URL, and every string of its request that was the file's
/// legal context (`fixed.L`, the carrier: `externalId`, a metadata member) is `h`'s.
fn placed_for(f: &Value, h: &AtrHash, link: &str) -> Value {
    fn carry(v: &mut Value, old: &str, new: &str) {
        match v {
            Value::String(s) if s == old => *s = new.to_owned(),
            Value::Array(a) => a.iter_mut().for_each(|x| carry(x, old, new)),
            Value::Object(m) => m.values_mut().for_each(|x| carry(x, old, new)),
            _ => {}
        }
    }
    let lcp = format!("lcp:sha256:{}", h.to_hex());
    let mut c = file_row(f, "B2")["input"]["doc"][0].clone();
    let mut request = decoded(&c["request"]);
    carry(&mut request, f["fixed"]["L"].as_str().unwrap(), &lcp);
    let opaque = json!({"legalContext": lcp, "legalContextUrl": link, "legalContextAgreementUrl": agreement_url()});
    c["request"] = json!(b64u_json(&request));
    c["id"] = json!(terms::mpp::challenge_id(h, 0).unwrap());
    c["opaque"] = json!(b64u_json(&opaque));
    c
}

/// The document for A: the file's challenge placed for A's hash at D's link.
fn for_a(f: &Value) -> Value {
    json!([placed_for(f, &h_of(&bytes("A")), &link())])
}

/// BA1's steps at the agreement URL: the 402 with buyer.json's agreement request, then each later answer.
fn ba1() -> Value {
    row("BA1")
}

fn ba1_answers() -> Vec<HttpAnswer> {
    ba1()["input"]["agreement"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| match step["status"].as_u64().unwrap() {
            402 => payment_required(step["paymentRequired"].as_str().unwrap()),
            200 => receipt_answer(step["body"].as_str().unwrap()),
            other => {
                let a = HttpAnswer::new(other as u16);
                match step["retryAfter"].as_str() {
                    Some(r) => a.header("Retry-After", r),
                    None => a,
                }
            }
        })
        .collect()
}

/// The helper against a seller serving A at D's link and BA1's steps at the agreement URL.
async fn start() -> Mpp {
    let mpp = Mpp::start(&[(link(), bytes("A"))]).await;
    mpp.seller.route(&Loopback::path_of(&agreement_url()), ba1_answers());
    mpp
}

fn approval(approve: &Value) -> Value {
    let o = &approve["option"];
    json!({"amount": o["amount"], "asset": o["asset"], "payTo": o["payTo"], "network": o["network"]})
}

/// The agreement payments the seller received at the agreement URL: BA1's count, one payment re-sent, never
/// re-signed: an EIP-3009 authorization of BA1's message (nonce H) with BA1's signature.
fn assert_agreement_paid(mpp: &Mpp) {
    let path = Loopback::path_of(&agreement_url());
    let sent: Vec<String> = mpp.seller.seen(&path).into_iter().filter_map(|s| s.payment).collect();
    assert_eq!(json!(sent.len()), ba1()["expect"]["paidRequests"]);
    assert!(sent.windows(2).all(|w| w[0] == w[1]), "the same payment re-sent");
    let payment: Value = serde_json::from_slice(&STANDARD.decode(&sent[0]).unwrap()).unwrap();
    let authorization = &payment["payload"]["authorization"];
    for (k, v) in ba1()["expect"]["agreementMessage"].as_object().unwrap() {
        assert_eq!(&authorization[k], v, "authorization.{k}");
    }
    assert_eq!(payment["payload"]["signature"], ba1()["expect"]["agreementSignature"]);
    assert_eq!(mpp.asked(), ["eip712/TransferWithAuthorization"], "the wallet signed the agreement payment only");
}

/// By hand, with the file's own account: atr_confirm names the agreement URL and gives no request; atr_agree shows
/// the payment to approve (BA1's approval, buyer.json's request; nothing signed or paid), then pays it once with the
/// approval and gives buyer.json's receipt; atr_confirm with that receipt gives `request: null` (nothing to sign: the
/// payment is the seller's flow), and with another hash's receipt declines.
async fn by_hand(name: &str) {
    let f = vectors(name);
    let mpp = start().await;
    let pairing = file_row(&f, "B2")["pairing"].clone();
    let confirm = json!({"pairing": pairing, "document": for_a(&f), "account": file_row(&f, "B2")["input"]["account"]});
    let c = ok(&mpp.call("atr_confirm", confirm.clone()).await);
    assert_eq!(c["atrHash"], h_of_a());
    assert_eq!(c["atr"]["base64"], b64(&bytes("A")));
    assert_eq!((&c["chosen"]["pairing"], &c["chosen"]["agreement"]), (&pairing, &json!(agreement_url())));
    assert!(c.get("request").is_none(), "nothing to sign before the agreement's receipt");
    assert_eq!(mpp.fetched(&link()), 1);

    let agree = json!({"atr": c["atr"]["base64"], "chosen": c["chosen"]});
    let first = ok(&mpp.call("atr_agree", agree.clone()).await);
    assert_eq!(first["atrHash"], h_of_a());
    assert_eq!(approval(&first["approve"]), ba1()["expect"]["approval"]);
    assert_eq!(first["approve"]["url"], agreement_url());
    assert_eq!(first["approve"]["required"], agreement("required"));
    assert!(mpp.asked().is_empty(), "nothing signed before the approval");
    assert_eq!(mpp.seller.paid(&Loopback::path_of(&agreement_url())), 0, "nothing paid before the approval");
    let mut approved = agree.clone();
    approved["approved"] = first["approve"].clone();
    let paid = ok(&mpp.call("atr_agree", approved).await);
    let receipt = agreement(ba1()["expect"]["receipt"].as_str().unwrap());
    assert_eq!(paid["receipt"], receipt);
    assert_eq!(paid["atrHash"], h_of_a());
    assert_agreement_paid(&mpp);

    let mut with = confirm.clone();
    with["receipt"] = receipt;
    let c2 = ok(&mpp.call("atr_confirm", with).await);
    assert_eq!(c2["atrHash"], h_of_a());
    assert_eq!(c2["request"], Value::Null, "nothing to sign: the payment is the seller's flow");
    assert_eq!(c2["chosen"]["agreement"], agreement_url());
    let mut other = confirm;
    other["receipt"] = agreement("receiptOtherHash");
    let (code, v) = declined(&mpp.call("atr_confirm", other).await);
    assert_eq!(code, "agreement-failed");
    assert!(v.get("request").is_none());
    assert_eq!(mpp.asked().len(), 1, "the wallet signed nothing more");
    mpp.client.cancel().await.unwrap();
}

/// atr_transact in two calls, for each file whose B2 account is the helper's wallet's (card and both Stripe
/// pairings, whose choice reads no account: NEAR Intents pays from another chain's account, and is run by hand): the
/// first returns the agreement payment to approve with the ATR and signs nothing; the second, with `approved`, pays
/// the agreement and returns its receipt beside `signed: null`.
async fn transact_each() {
    let mut ran = 0;
    for name in FILES {
        let f = vectors(name);
        let b2 = file_row(&f, "B2");
        if b2["input"]["account"] != json!(account()) {
            continue;
        }
        ran += 1;
        let mpp = start().await;
        let args = json!({"pairing": b2["pairing"], "document": for_a(&f)});
        let first = ok(&mpp.call("atr_transact", args.clone()).await);
        assert_eq!(first["atrHash"], h_of_a(), "{name}");
        assert_eq!(first["atr"]["base64"], b64(&bytes("A")));
        assert_eq!(approval(&first["approve"]), ba1()["expect"]["approval"]);
        assert!(first.get("signed").is_none() && mpp.asked().is_empty(), "nothing signed before the approval");
        let mut approved = args;
        approved["approved"] = first["approve"].clone();
        let done = ok(&mpp.call("atr_transact", approved).await);
        assert_eq!(done["atrHash"], h_of_a());
        assert_eq!(done["signed"], Value::Null, "{name}: the pairing's payment is the seller's flow");
        assert_eq!(done["agreement"], agreement(ba1()["expect"]["receipt"].as_str().unwrap()));
        assert!(done.get("mac").is_none());
        assert_agreement_paid(&mpp);
        mpp.client.cancel().await.unwrap();
    }
    assert_eq!(ran, 3, "card, Stripe charge, Stripe subscription");
}

/// Each file's challenge placed for buyer.json's C while the link serves A: hash-mismatch in atr_confirm and
/// atr_transact, the wallet never asked and the agreement URL never reached; its id alone carrying C's hash (the
/// opaque naming A's): not the seller's legal context, nothing fetched.
async fn another_h() {
    for name in FILES {
        let f = vectors(name);
        let b2 = file_row(&f, "B2");
        let mpp = start().await;
        let planted = placed_for(&f, &h_of(&bytes("C")), &link());
        let confirm =
            |doc: Value| json!({"pairing": b2["pairing"], "document": doc, "account": b2["input"]["account"]});
        let transact = |doc: Value| json!({"pairing": b2["pairing"], "document": doc});
        // atr_transact chooses for the wallet's account: NEAR Intents' payer is on another chain (run by confirm).
        let with_transact = b2["input"]["account"] == json!(account());
        let calls = |doc: Value| {
            let mut calls = vec![("atr_confirm", confirm(json!([doc])))];
            if with_transact {
                calls.push(("atr_transact", transact(json!([doc]))));
            }
            calls
        };
        for (tool, args) in calls(planted.clone()) {
            let (code, v) = declined(&mpp.call(tool, args).await);
            assert_eq!(code, "hash-mismatch", "{name} {tool}");
            assert!(v.get("chosen").is_none() && v.get("approve").is_none() && v.get("moved").is_none());
        }
        let fetches = if with_transact { 2 } else { 1 };
        assert_eq!(mpp.fetched(&link()), fetches, "one fetch per call");
        let mut id_alone = planted;
        id_alone["opaque"] = for_a(&f)[0]["opaque"].clone();
        for (tool, args) in calls(id_alone) {
            let (code, v) = declined(&mpp.call(tool, args).await);
            assert_eq!((code.as_str(), &v["decline"]["detail"]), ("offer-unreadable", &json!("mpp/no-legal-context")));
        }
        assert_eq!(mpp.fetched(&link()), fetches, "nothing fetched for the id alone");
        assert!(mpp.asked().is_empty(), "{name}: the wallet was never asked");
        assert!(mpp.seller.seen(&Loopback::path_of(&agreement_url())).is_empty(), "the agreement URL never reached");
        mpp.client.cancel().await.unwrap();
    }
}
