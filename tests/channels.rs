//! Channels end to end with the x402 batch-settlement pairing on EIP-155, and the Cloudflare batch pairing through its
//! agreement exchange: `transact` with local keys, `check` and `bound_within` reading H back from every payment, and
//! every input the peer (integraledger-terms 0.4.0) refuses, each with its code, detail and signer calls. The expected
//! declines are the peer's, run on the same inputs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use support::{CountingSigner, Reply, ScriptedFetch, paused, vectors};
use terms::CountingIds;
use terms::json::Member;
use terms::pairing::{
    Advertised, Batch, Channel, ChannelHold, ChannelKind, ChooseContext, Refund, Unsigned, WithinArgs, WithinPlan,
};
use terms::x402::cloudflare;
use terms::x402::evm::batch_settlement as evm;
use terms::{
    AtrHash, Chosen, Declined, FixedClock, Options, Pairing, Refusal, TransactOutcome, Transacted, Within, check,
    open_channel, record_charge, transact, within,
};

const ABC: &[u8] = b"abc";

fn file() -> Value {
    vectors("x402-batch-settlement.json")
}

fn evm_fixed() -> Value {
    file()["fixed"]["evm"].clone()
}

fn row(name: &str, pairing: &str) -> Value {
    file()["buyer"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name && r["pairing"] == pairing)
        .unwrap()
        .clone()
}

/// The seller's offer: the eip155 B2 row's document (it advertises H = SHA-256("abc")).
fn doc() -> Value {
    row("B2", evm::ID)["input"]["doc"].clone()
}

fn link(doc: &Value) -> String {
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"].as_str().unwrap().to_owned()
}

fn h() -> AtrHash {
    terms::atr_hash(ABC)
}

fn inputs() -> Map<String, Value> {
    row("B2", evm::ID)["input"]["inputs"].as_object().unwrap().clone()
}

fn options_with(inputs: Map<String, Value>) -> Options {
    Options::new().clock(FixedClock(evm_fixed()["now"].as_u64().unwrap())).ids(CountingIds::default()).inputs(inputs)
}

fn account() -> String {
    row("B2", evm::ID)["input"]["account"].as_str().unwrap().to_owned()
}

/// The payer (Anvil #0) signs the deposit; the payer authorizer (Anvil #1) signs every voucher.
fn wallet() -> CountingSigner {
    let e = evm_fixed();
    CountingSigner::new(e["payerKey"].as_str().unwrap(), &account())
        .with_voucher_key(e["payerAuthorizerKey"].as_str().unwrap())
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(evm::ID).unwrap()
}

fn transact_with(doc: &Value, signer: &CountingSigner, options: &Options) -> Result<TransactOutcome, Declined> {
    let fetch = ScriptedFetch::new().script(&link(doc), vec![Reply::ok(ABC)]);
    paused().block_on(transact(doc, pairing(), signer, &fetch, options))
}

fn signed(t: TransactOutcome) -> Transacted {
    match t {
        TransactOutcome::Signed(s) => s,
        other => panic!("not signed: {other:?}"),
    }
}

/// The opening, as transact signs it, and its hold with the first request's charge recorded.
fn opened() -> (Value, ChannelHold) {
    let t = signed(transact_with(&doc(), &wallet(), &options_with(inputs())).unwrap());
    let opening = t.signed.unwrap().to_value();
    let hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    (opening, record_charge(&hold, "1000").unwrap())
}

fn run_within(
    doc: &Value,
    hold: &ChannelHold,
    p: &dyn Pairing,
    signer: &CountingSigner,
    refund: Option<&Refund>,
) -> Result<Within, Declined> {
    paused().block_on(within(doc, hold, p, signer, refund, &Options::new().ids(CountingIds::default())))
}

#[track_caller]
fn declined<T: std::fmt::Debug>(got: &Result<T, Declined>, code: &str, detail: &str) {
    match got {
        Ok(v) => panic!("expected {code} ({detail}), got {v:?}"),
        Err(d) => assert_eq!((d.code.as_str(), d.detail.as_str()), (code, detail)),
    }
}

fn kind(payment: &Value) -> ChannelKind {
    pairing().channel().unwrap().kind(payment, None).unwrap()
}

// ---------------------------------------------------------------------------------------------------------------
// transact, open, within, record_charge, close

#[test]
fn a_channel_opens_pays_and_closes_under_one_atr() {
    let signer = wallet();
    let t = signed(transact_with(&doc(), &signer, &options_with(inputs())).unwrap());
    assert_eq!(signer.count(), 1, "the opening is one batch");
    let requests = match &signer.calls()[0] {
        terms::SigningRequest::Batch { requests } => requests.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(requests.len(), 2);
    let opening = t.signed.unwrap().to_value();
    assert_eq!(check(ABC, &opening, pairing()).unwrap().h, h());
    declined(
        &check(b"abd", &opening, pairing()),
        "signed-not-bound",
        "The pairing does not read the hash of the compared bytes from the payment.",
    );

    let hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    let e = file();
    // The hold is the peer's plain JSON, member for member and in its order, so either gate can take it back.
    let b6 = row("B6", evm::ID);
    let eb6 = &e["EB6"];
    let want = json!({
        "pairing": evm::ID,
        "network": eb6["expectRef"]["network"],
        "channel": eb6["expectRef"]["channel"],
        "h": eb6["expectBound"],
        "atr": b64_encode(ABC),
        "opening": b6["input"]["presented"],
        "charged": "0",
        "signedMax": e["EB2"]["maxClaimableAmount"],
    });
    assert_eq!(serde_json::to_string(&hold).unwrap(), want.to_string());
    assert_eq!(serde_json::from_value::<ChannelHold>(want).unwrap(), hold);
    assert_eq!(hold.channel, e["EB1"]["channelId"].as_str().unwrap());
    assert_eq!((hold.charged.as_str(), hold.signed_max.as_str()), ("0", "1000"));
    assert_eq!(hold.h, h().to_hex());
    assert_eq!(hold.atr, "YWJj");
    assert_eq!(kind(&opening), ChannelKind::Open);

    let channel = pairing().channel().unwrap();
    let mut hold = record_charge(&hold, "1000").unwrap();
    for want in ["2000", "3000"] {
        let signer = wallet();
        let w = run_within(&doc(), &hold, pairing(), &signer, None).unwrap();
        assert_eq!(signer.count(), 1);
        assert_eq!(w.signed["payload"]["voucher"]["maxClaimableAmount"], want);
        assert_eq!(w.hold.signed_max, want);
        assert_eq!(w.hold.charged, hold.charged, "within never records a charge");
        assert_eq!(kind(&w.signed), ChannelKind::Within);
        assert_eq!(channel.bound_within(&w.signed).unwrap(), h());
        assert_eq!(channel.channel_ref(&w.signed, None).unwrap().channel, hold.channel);
        // The voucher signs the channel, not H: check reads H from the opening only, as the peer's does.
        declined(
            &check(ABC, &w.signed, pairing()),
            "signed-not-bound",
            "The pairing does not read the hash of the compared bytes from the payment.",
        );
        hold = record_charge(&w.hold, want).unwrap();
    }

    let partial = run_within(&doc(), &hold, pairing(), &wallet(), Some(&Refund::partial("2500"))).unwrap();
    assert_eq!(kind(&partial.signed), ChannelKind::Within);
    assert_eq!(partial.signed["payload"]["type"], "refund");
    assert_eq!(partial.signed["payload"]["amount"], "2500");
    assert_eq!(partial.signed["payload"]["voucher"]["maxClaimableAmount"], "3000");
    assert_eq!(partial.hold, hold, "a refund signs the recorded charge: nothing changes");
    // A held amount written with leading zeros (as a caller may have stored it) comes back canonical.
    let mut padded = serde_json::to_value(&hold).unwrap();
    padded["signedMax"] = json!("03000");
    let padded: ChannelHold = serde_json::from_value(padded).unwrap();
    let again = run_within(&doc(), &padded, pairing(), &wallet(), Some(&Refund::partial("2500"))).unwrap();
    assert_eq!(again.hold.signed_max, "3000");
    // A refund signs the recorded charge, below the largest amount signed since: the hold keeps the larger.
    let ahead = run_within(&doc(), &hold, pairing(), &wallet(), None).unwrap();
    assert_eq!(ahead.hold.signed_max, "4000");
    let refund = run_within(&doc(), &ahead.hold, pairing(), &wallet(), Some(&Refund::partial("2500"))).unwrap();
    assert_eq!(refund.signed["payload"]["voucher"]["maxClaimableAmount"], "3000");
    assert_eq!(refund.hold.signed_max, "4000");

    let close = run_within(&doc(), &hold, pairing(), &wallet(), Some(&Refund::close())).unwrap();
    assert_eq!(kind(&close.signed), ChannelKind::Close);
    assert!(close.signed["payload"].get("amount").is_none());
    assert_eq!(close.signed["payload"]["voucher"]["maxClaimableAmount"], "3000");
    assert_eq!(channel.bound_within(&close.signed).unwrap(), h());
}

#[test]
fn the_opening_is_signed_by_both_keys_and_the_vouchers_by_the_authorizer() {
    let e = evm_fixed();
    let t = signed(transact_with(&doc(), &wallet(), &options_with(inputs())).unwrap());
    let payload = &t.signed.unwrap().to_value()["payload"];
    let eb = file();
    assert_eq!(payload["voucher"]["signature"], eb["EB2"]["signature"]);
    assert_eq!(payload["deposit"]["authorization"]["erc3009Authorization"]["signature"], eb["EB3"]["signature"]);
    assert_eq!(payload["channelConfig"]["payerAuthorizer"], e["payerAuthorizer"]);
}

#[test]
fn a_payment_identifier_is_written_after_signing_never_in_the_trial_completion() {
    let (_, hold) = opened();
    let mut d = doc();
    d["extensions"]["payment-identifier"] = json!({"info": {}});
    let w = run_within(&d, &hold, pairing(), &wallet(), None).unwrap();
    assert_eq!(w.signed["extensions"]["payment-identifier"]["info"]["id"], "ref-0000000000000000000000000001");
    // An id the seller already wrote is unwritable: the peer signs, then drops the payment.
    d["extensions"]["payment-identifier"] = json!({"info": {"id": "x"}});
    let signer = wallet();
    declined(
        &run_within(&d, &hold, pairing(), &signer, None),
        "signed-not-bound",
        "x402/payment-identifier-unwritable",
    );
    assert_eq!(signer.count(), 1);
}

// ---------------------------------------------------------------------------------------------------------------
// Cloudflare: the agreement payment, then the build that is itself the payment.

#[test]
fn cloudflare_pays_the_agreement_then_returns_its_build() {
    let buyer = vectors("buyer.json");
    let f = &buyer["fixed"];
    let atr = hex::decode(f["A"].as_str().unwrap()).unwrap();
    let url = f["agreement"]["url"].as_str().unwrap().to_owned();
    let mut d = row("B2", cloudflare::ID)["input"]["doc"].clone();
    d["extensions"]["legalContext"]["info"] = f["D"]["extensions"]["legalContext"]["info"].clone();
    d["extensions"]["legalContext"]["info"]["legalContextAgreementUrl"] = json!(url);
    let required = terms::json::to_js_string(&f["agreement"]["required"]).unwrap();
    let receipt = terms::json::to_js_string(&f["agreement"]["receipt"]).unwrap();
    let fetch = ScriptedFetch::new().script_repeating(&link(&d), vec![Reply::ok(atr.clone())]).script(
        &url,
        vec![
            Reply::status(402).with_header("PAYMENT-REQUIRED", &b64_encode(required.as_bytes())),
            Reply::ok(receipt.into_bytes()),
        ],
    );
    let agent = CountingSigner::new(
        f["payerKey"].as_str().unwrap(),
        row("B2", cloudflare::ID)["input"]["account"].as_str().unwrap(),
    );
    let evm_payer = CountingSigner::new(f["payerKey"].as_str().unwrap(), f["account"].as_str().unwrap());
    let options =
        Options::new().clock(FixedClock(f["now"].as_u64().unwrap())).agreement_signer(Arc::new(evm_payer.clone()));
    let p = terms::pairing(cloudflare::ID).unwrap();
    let first = paused().block_on(transact(&d, p, &agent, &fetch, &options)).unwrap();
    let TransactOutcome::ToApprove(approve) = first else { panic!("{first:?}") };
    assert_eq!(evm_payer.count() + agent.count(), 0, "nothing is signed before the approval");
    let done = signed(paused().block_on(transact(&d, p, &agent, &fetch, &options.approved(approve.approve))).unwrap());
    assert_eq!(agent.count(), 0, "the build is the payment: the agent's signer is never handed anything");
    assert_eq!(evm_payer.count(), 1, "one agreement payment");
    assert_eq!(serde_json::to_value(&done.agreement).unwrap(), f["agreement"]["receipt"]);
    let payment = done.signed.unwrap().to_value();
    // The peer's payment for the same exchange, member for member and in its order.
    let want = json!({
        "x402Version": 2,
        "payload": {"amount": d["accepts"][0]["amount"], "asset": d["accepts"][0]["asset"]},
        "accepted": d["accepts"][0],
        "extensions": d["extensions"],
    });
    assert_eq!(payment.to_string(), want.to_string());
    assert_eq!(check(&atr, &payment, p).unwrap().h, terms::atr_hash(&atr));
    declined(
        &check(ABC, &payment, p),
        "signed-not-bound",
        "The pairing does not read the hash of the compared bytes from the payment.",
    );
    declined(&open_channel(&atr, &payment, p, None), "pairing-not-supported", "The pairing has no channel.");
    let (_, hold) = opened();
    declined(&run_within(&doc(), &hold, p, &agent, None), "pairing-not-supported", "The pairing has no channel.");
}

#[test]
fn cloudflare_needs_an_agent_account_and_an_agreement_url() {
    let d = row("B2", cloudflare::ID)["input"]["doc"].clone();
    let p = terms::pairing(cloudflare::ID).unwrap();
    let fetch = ScriptedFetch::new().script(&link(&d), vec![Reply::ok(ABC)]);
    let agent = CountingSigner::new(evm_fixed()["payerKey"].as_str().unwrap(), "cloudflare:402:agent.example");
    declined(
        &paused().block_on(transact(&d, p, &agent, &fetch, &Options::new())),
        "agreement-not-offered",
        "The pairing's payment carries no public proof and the offer names no agreement URL.",
    );
    for account in [account().as_str(), "cloudflare:403:agent", "cloudflare:402:a/b"] {
        let signer = CountingSigner::new(evm_fixed()["payerKey"].as_str().unwrap(), account);
        let fetch = ScriptedFetch::new();
        declined(
            &paused().block_on(transact(&d, p, &signer, &fetch, &Options::new())),
            "no-payable-option",
            "x402/no-payable-option",
        );
        assert!(fetch.asked().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The opening's inputs, as the peer refuses them.

#[test]
fn the_opening_refuses_what_the_peer_refuses() {
    let with = |changes: &[(&str, Option<Value>)]| {
        let mut i = inputs();
        for (k, v) in changes {
            match v {
                Some(v) => drop(i.insert((*k).into(), v.clone())),
                None => drop(i.remove(*k)),
            }
        }
        i
    };
    let cases: Vec<(Map<String, Value>, &str, &str)> = vec![
        (with(&[("payerAuthorizer", None)]), "no-payable-option", "x402/input-missing"),
        (with(&[("payerAuthorizer", Some(Value::Null))]), "no-payable-option", "x402/input-missing"),
        (with(&[("payerAuthorizer", Some(json!("0x1234")))]), "no-payable-option", "x402/input-missing"),
        (with(&[("authSalt", Some(json!("0x01")))]), "no-payable-option", "x402/input-missing"),
        (with(&[("deposit", None)]), "no-payable-option", "x402/input-missing"),
        (with(&[("deposit", Some(json!("1.5")))]), "no-payable-option", "x402/input-missing"),
        (with(&[("deposit", Some(json!(100_000)))]), "no-payable-option", "x402/input-missing"),
        (with(&[("deposit", Some(json!("0")))]), "offer-unreadable", "x402/option-malformed"),
        (
            with(&[("deposit", Some(json!("340282366920938463463374607431768211456")))]),
            "offer-unreadable",
            "x402/option-malformed",
        ),
    ];
    for (i, code, detail) in cases {
        let signer = wallet();
        declined(&transact_with(&doc(), &signer, &options_with(i)), code, detail);
        assert_eq!(signer.count(), 0);
    }
    let mut odd = doc();
    odd["accepts"][0]["extra"]["minDeposit"] = json!("abc");
    declined(&transact_with(&odd, &wallet(), &options_with(inputs())), "no-payable-option", "x402/option-malformed");
    let mut zero = doc();
    zero["accepts"][0]["amount"] = json!("0");
    declined(&transact_with(&zero, &wallet(), &options_with(inputs())), "offer-unreadable", "x402/option-malformed");
    let e = evm_fixed();
    for (account, code, detail) in [
        ("eip155:84532:0x0000000000000000000000000000000000000000", "offer-unreadable", "x402/option-malformed"),
        (
            "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:AKnL4NNf3DGWZJS6cPknBuEGnVsV4A4m5tgebLHaRSZ9",
            "no-payable-option",
            "x402/no-payable-option",
        ),
        ("eip155:8453:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "no-payable-option", "x402/no-payable-option"),
    ] {
        let signer = CountingSigner::new(e["payerKey"].as_str().unwrap(), account);
        declined(&transact_with(&doc(), &signer, &options_with(inputs())), code, detail);
        assert_eq!(signer.count(), 0);
    }
}

#[test]
fn the_opening_takes_what_the_peer_takes() {
    // No auth salt: one is drawn; a deposit with leading zeros is read by its value; extra.minDeposit wins.
    let no_salt = {
        let mut i = inputs();
        i.remove("authSalt");
        i
    };
    let t = signed(transact_with(&doc(), &wallet(), &options_with(no_salt)).unwrap());
    let salt =
        t.signed.as_ref().unwrap().to_value()["payload"]["deposit"]["authorization"]["erc3009Authorization"]["salt"]
            .clone();
    assert!(salt.as_str().and_then(AtrHash::parse).is_some() && salt != evm_fixed()["authSalt"]);
    let mut zeros = inputs();
    zeros.insert("deposit".into(), json!("007"));
    let t = signed(transact_with(&doc(), &wallet(), &options_with(zeros)).unwrap());
    assert_eq!(t.signed.unwrap().to_value()["payload"]["deposit"]["amount"], "7");
    let mut min = doc();
    min["accepts"][0]["extra"]["minDeposit"] = json!("5000");
    let t = signed(transact_with(&min, &wallet(), &options_with(inputs())).unwrap());
    assert_eq!(t.signed.unwrap().to_value()["payload"]["deposit"]["amount"], "5000");
}

/// `maxDeposit` is the buyer's cap on the deposit, whoever names it (the option's `extra.minDeposit` or the buyer's
/// `deposit`). Above it the offer is not payable: declined at choice, before the link is fetched or a key is asked.
#[test]
fn the_deposit_never_exceeds_the_buyers_maximum() {
    let capped = |max: Value| {
        let mut i = inputs();
        i.insert("maxDeposit".into(), max);
        i
    };
    let mut min = doc();
    min["accepts"][0]["extra"]["minDeposit"] = json!("5000");
    let (deposit_input, minimum) = (inputs()["deposit"].as_str().unwrap().to_owned(), "5000");
    for (offer, max) in [(&min, "4999"), (&doc(), decimal_below(&deposit_input).as_str())] {
        let signer = wallet();
        let fetch = ScriptedFetch::new().script(&link(offer), vec![Reply::ok(ABC)]);
        let got = paused().block_on(transact(offer, pairing(), &signer, &fetch, &options_with(capped(json!(max)))));
        declined(&got, "no-payable-option", "x402/deposit-above-max");
        assert_eq!((signer.count(), fetch.asked().len()), (0, 0));
    }
    for (offer, max, deposit) in [(&min, minimum, minimum), (&doc(), deposit_input.as_str(), deposit_input.as_str())] {
        let t = signed(transact_with(offer, &wallet(), &options_with(capped(json!(max)))).unwrap());
        assert_eq!(t.signed.unwrap().to_value()["payload"]["deposit"]["amount"], deposit);
    }
    for malformed in [json!("1.5"), json!(5000), json!("-1"), Value::Null] {
        let signer = wallet();
        declined(
            &transact_with(&min, &signer, &options_with(capped(malformed))),
            "no-payable-option",
            "x402/input-missing",
        );
        assert_eq!(signer.count(), 0);
    }
}

/// One less than a positive decimal.
fn decimal_below(decimal: &str) -> String {
    (decimal.parse::<u128>().unwrap() - 1).to_string()
}

#[test]
fn the_opening_drops_a_batch_answered_wrongly() {
    let sig = file()["EB2"]["signature"].clone();
    for answer in [json!([sig]), json!([sig, sig, sig]), json!([1, 2]), json!(sig)] {
        let signer = wallet().answering(answer);
        declined(
            &transact_with(&doc(), &signer, &options_with(inputs())),
            "signed-not-bound",
            "x402/signature-malformed",
        );
        assert_eq!(signer.count(), 1);
    }
    let signer = wallet().rejecting();
    declined(&transact_with(&doc(), &signer, &options_with(inputs())), "signer-failed", "The signer did not sign.");
    assert_eq!(signer.count(), 1);
}

// ---------------------------------------------------------------------------------------------------------------
// within: the challenge.

fn within_declines(d: &Value, hold: &ChannelHold, refund: Option<&Refund>, code: &str, detail: &str) {
    let signer = wallet();
    declined(&run_within(d, hold, pairing(), &signer, refund), code, detail);
    assert_eq!(signer.count(), 0, "{detail}: the signer was called");
}

#[test]
fn a_challenge_for_another_atr_network_or_amount_is_declined_unsigned() {
    let (_, hold) = opened();
    let mut other_h = doc();
    other_h["extensions"]["legalContext"]["info"]["value"] = file()["fixed"]["Hprime"].clone();
    within_declines(
        &other_h,
        &hold,
        None,
        "hash-mismatch",
        "The challenge advertises another ATR's hash than the one this channel opened for.",
    );
    let mut other_network = doc();
    other_network["accepts"][0]["network"] = json!("eip155:8453");
    within_declines(&other_network, &hold, None, "no-payable-option", "x402/no-payable-option");
    // The pairing's read serves no option whose amount is not a decimal, so the read refuses (as the peer's does).
    let mut not_decimal = doc();
    not_decimal["accepts"][0]["amount"] = json!("1e3");
    within_declines(&not_decimal, &hold, None, "offer-unreadable", "x402/no-payable-option");
    // The first option on the held network is taken, whatever comes before it.
    let mut two = doc();
    let mut elsewhere = two["accepts"][0].clone();
    elsewhere["network"] = json!("eip155:8453");
    elsewhere["amount"] = json!("7");
    two["accepts"] = json!([elsewhere, doc()["accepts"][0]]);
    assert_eq!(run_within(&two, &hold, pairing(), &wallet(), None).unwrap().hold.signed_max, "2000");
    // A zero price signs the recorded charge again.
    let mut free = doc();
    free["accepts"][0]["amount"] = json!("0");
    assert_eq!(
        run_within(&free, &hold, pairing(), &wallet(), None).unwrap().signed["payload"]["voucher"]["maxClaimableAmount"],
        "1000"
    );
    // A cumulative amount past the contract's uint128.
    let most = "340282366920938463463374607431768211455".to_owned();
    let full = ChannelHold { charged: most.clone(), signed_max: most, ..hold };
    within_declines(&doc(), &full, None, "offer-unreadable", "x402/option-malformed");
}

#[test]
fn refunds_take_a_decimal_amount_the_contract_takes() {
    let (_, hold) = opened();
    within_declines(&doc(), &hold, Some(&Refund::partial("x")), "no-payable-option", "x402/input-missing");
    within_declines(&doc(), &hold, Some(&Refund::partial("1".repeat(79))), "no-payable-option", "x402/input-missing");
    within_declines(&doc(), &hold, Some(&Refund::partial("0")), "offer-unreadable", "x402/option-malformed");
    within_declines(
        &doc(),
        &hold,
        Some(&Refund::partial("340282366920938463463374607431768211456")),
        "offer-unreadable",
        "x402/option-malformed",
    );
    let w = run_within(&doc(), &hold, pairing(), &wallet(), Some(&Refund::partial("0500"))).unwrap();
    assert_eq!(w.signed["payload"]["amount"], "500");
}

#[test]
fn a_batch_answered_wrongly_in_the_channel_is_dropped() {
    let (_, hold) = opened();
    let sig = file()["EB2"]["signature"].clone();
    for answer in [json!([]), json!([sig, sig]), json!([1]), json!(sig), json!({"0": sig})] {
        let signer = wallet().answering(answer.clone());
        declined(
            &run_within(&doc(), &hold, pairing(), &signer, None),
            "signed-not-bound",
            "The signer's answer did not complete the payment.",
        );
        assert_eq!(signer.count(), 1, "{answer}");
    }
    let signer = wallet().answering(json!(["0xzz"]));
    declined(&run_within(&doc(), &hold, pairing(), &signer, None), "signed-not-bound", "x402/signature-malformed");
    let signer = wallet().rejecting();
    declined(&run_within(&doc(), &hold, pairing(), &signer, None), "signer-failed", "The signer did not sign.");
    assert_eq!(signer.count(), 1);
}

// ---------------------------------------------------------------------------------------------------------------
// within: the hold.

#[test]
fn a_hold_with_any_member_changed_is_declined_unsigned() {
    let (_, hold) = opened();
    let file = file();
    let hprime = file["fixed"]["Hprime"].as_str().unwrap().to_owned();
    let with = |f: &dyn Fn(&mut ChannelHold)| {
        let mut h = hold.clone();
        f(&mut h);
        h
    };
    let opening_with = |from: &str, to: &str| {
        with(&|h: &mut ChannelHold| h.opening = serde_json::from_str(&h.opening.to_string().replace(from, to)).unwrap())
    };
    let malformed = ("signed-not-bound", "The channel hold is malformed.");
    let not_named = ("signed-not-bound", "The held opening does not name the held channel.");
    let not_read = ("signed-not-bound", "The pairing does not read the held ATR's hash from the held opening.");
    let other_hash = ("hash-mismatch", "The held ATR does not hash to the held hash.");
    let unreadable = ("signed-not-bound", "The held ATR is unreadable.");
    let cases: Vec<(&str, ChannelHold, (&str, &str))> = vec![
        (
            "pairing",
            with(&|h| h.pairing = "x402/batch-settlement/solana".into()),
            ("pairing-not-supported", "The hold is not for the pairing x402/batch-settlement/eip155."),
        ),
        ("network", with(&|h| h.network = "eip155:8453".into()), not_named),
        ("channel", with(&|h| h.channel = format!("0x{}", "11".repeat(32))), not_named),
        ("h", with(&|h| h.h.clone_from(&hprime)), other_hash),
        ("h not a hash", with(&|h| h.h = "abc".into()), other_hash),
        ("atr of other bytes", with(&|h| h.atr = b64_encode(b"abd")), other_hash),
        ("atr not canonical", with(&|h| h.atr = "YWJk=".into()), unreadable),
        ("atr unpadded", with(&|h| h.atr = "YWJjZA".into()), unreadable),
        ("charged", with(&|h| h.charged = "x".into()), malformed),
        ("charged empty", with(&|h| h.charged = String::new()), malformed),
        // Where the peer accepts a charge above the signed maximum, the crate declines it (a deliberate difference).
        ("charged above signedMax", with(&|h| h.charged = "5000".into()), malformed),
        ("signedMax of 79 digits", with(&|h| h.signed_max = "1".repeat(79)), malformed),
        ("signedMax negative", with(&|h| h.signed_max = "-1".into()), malformed),
        ("opening not an object", with(&|h| h.opening = json!([])), malformed),
        ("landed not an object", with(&|h| h.landed = Some(json!([]))), malformed),
        ("opening salted with H'", opening_with(&hold.h, &hprime), not_read),
        (
            "opening to another receiver",
            opening_with("0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "0x209693Bc6afc0C5328bA36FaF03C514EF312287D"),
            not_read,
        ),
        ("opening of a voucher", with(&|h| h.opening["payload"]["type"] = json!("voucher")), not_read),
    ];
    for (name, h, (code, detail)) in cases {
        let signer = wallet();
        let got = run_within(&doc(), &h, pairing(), &signer, None);
        assert!(matches!(&got, Err(d) if (d.code.as_str(), d.detail.as_str()) == (code, detail)), "{name}: {got:?}");
        assert_eq!(signer.count(), 0, "{name}");
    }
    // What the peer takes: an upper-case h, an empty landed object, a 78-digit signedMax.
    for h in [
        with(&|h| h.h = h.h.to_uppercase().replacen("0X", "0x", 1)),
        with(&|h| h.landed = Some(json!({}))),
        with(&|h| h.signed_max = "1".repeat(78)),
    ] {
        let w = run_within(&doc(), &h, pairing(), &wallet(), None).unwrap();
        assert_eq!(w.hold.pairing, hold.pairing);
    }
}

#[test]
fn record_charge_stays_between_the_recorded_charge_and_the_signed_maximum() {
    let (_, hold) = opened();
    let unreadable = "offer-unreadable";
    declined(&record_charge(&hold, "999"), unreadable, "The charged amount is below the charge already recorded.");
    declined(
        &record_charge(&hold, "1001"),
        unreadable,
        "The charged amount is above the largest amount signed in the channel.",
    );
    declined(&record_charge(&hold, "1e3"), unreadable, "The charged amount is not a decimal.");
    declined(&record_charge(&hold, &"1".repeat(79)), unreadable, "The charged amount is not a decimal.");
    assert_eq!(record_charge(&hold, "0001000").unwrap().charged, "1000");
    let bad = ChannelHold { charged: "2000".into(), ..hold.clone() };
    declined(&record_charge(&bad, "2000"), "signed-not-bound", "The channel hold is malformed.");
    // Amounts are big integers: 78 digits compare and add exactly.
    let big = ChannelHold { charged: "9".repeat(77), signed_max: format!("1{}", "0".repeat(77)), ..hold };
    assert_eq!(record_charge(&big, &format!("1{}", "0".repeat(77))).unwrap().charged, format!("1{}", "0".repeat(77)));
    declined(
        &record_charge(&big, &format!("1{}1", "0".repeat(76))),
        unreadable,
        "The charged amount is above the largest amount signed in the channel.",
    );
}

#[test]
fn open_channel_takes_only_an_opening_of_the_compared_bytes() {
    let (opening, _) = opened();
    declined(
        &open_channel(b"abd", &opening, pairing(), None),
        "signed-not-bound",
        "The pairing does not read the hash of the compared bytes from the opening.",
    );
    let mut voucher = opening.clone();
    voucher["payload"]["type"] = json!("voucher");
    declined(&open_channel(ABC, &voucher, pairing(), None), "signed-not-bound", "The payment does not open a channel.");
    declined(
        &open_channel(ABC, &opening, pairing(), Some(&json!([]))),
        "signed-not-bound",
        "The landed receipt is not a JSON object beside the opening.",
    );
    // A landed receipt needs an opening that is an object beside it; an object receipt beside an object opening is
    // kept with the hold.
    declined(
        &open_channel(ABC, &json!([opening]), pairing(), Some(&json!({}))),
        "signed-not-bound",
        "The landed receipt is not a JSON object beside the opening.",
    );
    let landed = json!({ "transaction": "0xfeed" });
    let hold = open_channel(ABC, &opening, pairing(), Some(&landed)).unwrap();
    assert_eq!(hold.landed.as_ref(), Some(&landed));
    // Past the JSON depth the gate keeps, in a member the pairing does not read: the opening, or the receipt beside it.
    let deep = (0..terms::json::MAX_JSON_DEPTH).fold(json!(1), |inner, _| json!([inner]));
    let mut deep_opening = opening.clone();
    deep_opening["deep"] = deep.clone();
    declined(&open_channel(ABC, &deep_opening, pairing(), None), "signed-not-bound", "The opening is not plain JSON.");
    declined(
        &open_channel(ABC, &opening, pairing(), Some(&json!({ "deep": deep }))),
        "signed-not-bound",
        "The read held for the opening is not plain JSON.",
    );
    let big = vec![b'a'; terms::MAX_ATR_BYTES + 1];
    assert_eq!(open_channel(&big, &opening, pairing(), None).unwrap_err().code.as_str(), "atr-too-large");
    // At the cap the bytes are read, and refused only because the opening carries another hash.
    let at_cap = vec![b'a'; terms::MAX_ATR_BYTES];
    declined(
        &open_channel(&at_cap, &opening, pairing(), None),
        "signed-not-bound",
        "The pairing does not read the hash of the compared bytes from the opening.",
    );
}

// ---------------------------------------------------------------------------------------------------------------
// The gate's own checks around the pairing: the would-be channel before signing, the signed voucher after.

/// The EVM pairing, with its in-channel build changed: `hold` edits the hold the build reads (a challenge that
/// would move the payment to another channel), `signed` edits the signed payment only (a signer or build that
/// returns something else than what was planned).
#[derive(Debug)]
struct Altered {
    hold: fn(&mut ChannelHold),
    signed: fn(&mut Value),
}

struct AlteredBatch {
    inner: Box<dyn Batch>,
    signed: fn(&mut Value),
}

impl Batch for AlteredBatch {
    fn requests(&self) -> &[terms::SigningRequest] {
        self.inner.requests()
    }
    fn complete(&self, answers: &[String], reference: Option<&str>) -> Result<Value, Refusal> {
        let mut payment = self.inner.complete(answers, reference)?;
        if reference.is_some() {
            (self.signed)(&mut payment);
        }
        Ok(payment)
    }
}

impl Pairing for Altered {
    fn id(&self) -> &'static str {
        evm::ID
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        evm::PAIRING.read(doc)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        evm::PAIRING.choose(read, ctx)
    }
    fn inputs(&self) -> &'static [terms::InputSpec] {
        evm::PAIRING.inputs()
    }
    fn quote(&self, chosen: &Chosen) -> Result<terms::Quote, Refusal> {
        evm::PAIRING.quote(chosen)
    }
    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        evm::PAIRING.keep_document(chosen, doc);
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        evm::PAIRING.build(chosen, atr, h)
    }
    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        evm::PAIRING.bound(presented, landed)
    }
    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

impl Channel for Altered {
    fn kind(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        evm::PAIRING.kind(payment, landed)
    }
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<terms::pairing::ChannelRef, Refusal> {
        evm::PAIRING.channel_ref(payment, landed)
    }
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        evm::PAIRING.bound_within(payment)
    }
    fn signed_max(&self, opening: &Value) -> String {
        evm::PAIRING.signed_max(opening)
    }
    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        let mut hold = args.hold.clone();
        (self.hold)(&mut hold);
        let plan = evm::PAIRING.plan_within(&WithinArgs { hold: &hold, ..*args })?;
        Ok(WithinPlan { batch: Box::new(AlteredBatch { inner: plan.batch, signed: self.signed }), ..plan })
    }
}

/// Another receiver in the same configuration (still salted with H), and its channel id.
fn other_receiver(config: &mut Value) {
    config["receiver"] = json!("0x209693Bc6afc0C5328bA36FaF03C514EF312287D");
}

#[test]
fn a_challenge_for_another_channel_is_declined_before_the_signer() {
    let (_, hold) = opened();
    let p = Altered { hold: |h| other_receiver(&mut h.opening["payload"]["channelConfig"]), signed: |_| {} };
    let signer = wallet();
    declined(
        &run_within(&doc(), &hold, &p, &signer, None),
        "no-payable-option",
        "The challenge asks for a payment in a channel this hold did not open.",
    );
    assert_eq!(signer.count(), 0);
    // Unchanged, the same stand-in pays: the decline above is the channel check's.
    let same = Altered { hold: |_| {}, signed: |_| {} };
    assert!(run_within(&doc(), &hold, &same, &wallet(), None).is_ok());
}

#[test]
fn a_signed_voucher_of_another_kind_hash_or_channel_is_dropped() {
    let (_, hold) = opened();
    type Tamper = fn(&mut Value);
    let cases: [(Tamper, &str); 4] = [
        (|p| p["payload"]["type"] = json!("deposit"), "The signed payment is not a within payment."),
        (
            |p| {
                let hprime = vectors("x402-batch-settlement.json")["fixed"]["Hprime"].clone();
                p["payload"]["channelConfig"]["salt"] = hprime;
                let id = evm::channel_id(84_532, &p["payload"]["channelConfig"]).unwrap();
                p["payload"]["voucher"]["channelId"] = json!(id);
            },
            "The signed voucher does not commit to the held ATR's hash.",
        ),
        (
            |p| p["payload"]["voucher"]["channelId"] = json!(format!("0x{}", "11".repeat(32))),
            "The signed voucher does not commit to the held ATR's hash.",
        ),
        (
            |p| {
                other_receiver(&mut p["payload"]["channelConfig"]);
                let id = evm::channel_id(84_532, &p["payload"]["channelConfig"]).unwrap();
                p["payload"]["voucher"]["channelId"] = json!(id);
            },
            "The signed voucher does not name the held channel.",
        ),
    ];
    for (signed, detail) in cases {
        let p = Altered { hold: |_| {}, signed };
        let signer = wallet();
        declined(&run_within(&doc(), &hold, &p, &signer, None), "signed-not-bound", detail);
        assert_eq!(signer.count(), 1, "{detail}");
    }
    // A close must close: a refund signed as a voucher is dropped.
    let p = Altered { hold: |_| {}, signed: |p| p["payload"]["type"] = json!("voucher") };
    declined(
        &run_within(&doc(), &hold, &p, &wallet(), Some(&Refund::close())),
        "signed-not-bound",
        "The signed payment is not a close payment.",
    );
}

/// The EVM pairing with a read that serves every option as written, to reach the shared x402 in-channel reading with
/// amounts the EVM filter would never serve (the Solana pairing's filter will be another).
#[derive(Debug)]
struct Unfiltered;

impl Pairing for Unfiltered {
    fn id(&self) -> &'static str {
        evm::ID
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let priced = doc_with_amount(doc, "1000");
        let read = evm::PAIRING.read(&priced)?;
        let offer =
            terms::pairing::Offer::X402 { required: doc, options: doc["accepts"].as_array().unwrap().iter().collect() };
        Ok(Advertised { h: read.h, link: read.link, offer, agreement: read.agreement })
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        evm::PAIRING.choose(read, ctx)
    }
    fn inputs(&self) -> &'static [terms::InputSpec] {
        evm::PAIRING.inputs()
    }
    fn quote(&self, chosen: &Chosen) -> Result<terms::Quote, Refusal> {
        evm::PAIRING.quote(chosen)
    }
    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        evm::PAIRING.keep_document(chosen, doc);
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        evm::PAIRING.build(chosen, atr, h)
    }
    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        evm::PAIRING.bound(presented, landed)
    }
    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

impl Channel for Unfiltered {
    fn kind(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        evm::PAIRING.kind(payment, landed)
    }
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<terms::pairing::ChannelRef, Refusal> {
        evm::PAIRING.channel_ref(payment, landed)
    }
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        evm::PAIRING.bound_within(payment)
    }
    fn signed_max(&self, opening: &Value) -> String {
        evm::PAIRING.signed_max(opening)
    }
    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        terms::x402::channel::plan_within(self, args, |offer| {
            Ok(Box::new(terms::x402::evm::batch_channel::build_within(offer, args.h)?) as Box<dyn Batch>)
        })
    }
}

fn doc_with_amount(doc: &Value, amount: &str) -> Value {
    let mut d = doc.clone();
    d["accepts"][0]["amount"] = json!(amount);
    d
}

#[test]
fn an_option_amount_that_is_not_a_decimal_is_unreadable() {
    let (_, hold) = opened();
    for amount in [json!("1e3"), json!("1".repeat(79)), json!(1000), json!("-1"), json!("")] {
        let mut d = doc();
        d["accepts"][0]["amount"] = amount.clone();
        let signer = wallet();
        declined(&run_within(&d, &hold, &Unfiltered, &signer, None), "offer-unreadable", "x402/option-malformed");
        assert_eq!(signer.count(), 0, "{amount}");
    }
    // A decimal the contract cannot take (the sum past 2^128) reaches the build, which refuses it.
    let signer = wallet();
    let d = doc_with_amount(&doc(), &"9".repeat(78));
    declined(&run_within(&d, &hold, &Unfiltered, &signer, None), "offer-unreadable", "x402/option-malformed");
    // The shared reading itself: the same amount the EVM read serves signs charged + amount.
    let w = run_within(&doc(), &hold, &Unfiltered, &wallet(), None).unwrap();
    assert_eq!(w.hold.signed_max, "2000");
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

// ---------------------------------------------------------------------------------------------------------------
// within, under a spend policy and a journal

/// The spend policy of these tests: any resource, Base Sepolia, its USDC capped at 5000; `top` among the top-level
/// members, `tables` after the asset.
fn sepolia_policy(top: &str, tables: &str) -> terms::safety::policy::Policy {
    terms::safety::policy::Policy::from_toml_str(&format!(
        r#"
resources = ["*"]
networks = ["eip155:84532"]
{top}

[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "5000"

{tables}
"#
    ))
    .unwrap()
}

/// Above the policy's approval threshold a voucher's increase declines `policy/approval-required` before the signer
/// is asked: `within` answers a seller mid-channel and hands nothing back, so only an approval passed in lets it sign.
#[test]
fn a_voucher_above_the_approval_threshold_is_refused_without_an_approval() {
    let usdc = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    let policy = sepolia_policy(&format!("approval_above = {{ \"{usdc}\" = \"500\" }}"), "");
    let options = Options::new().clock(FixedClock(evm_fixed()["now"].as_u64().unwrap())).policy(Arc::new(policy));
    let (_, hold) = opened();
    let signer = wallet();
    let got = paused().block_on(within(&doc(), &hold, pairing(), &signer, None, &options));
    declined(&got, "policy-refused", "policy/approval-required");
    assert_eq!(signer.count(), 0, "a voucher above the threshold was signed without an approval");
}

/// A voucher's increase over the hold's largest signed amount counts against the budget: the first (1000 more)
/// passes a budget of 1500, the second is refused before the signer is asked, and the first, asked again, is the
/// same voucher re-sent from the journal, not signed twice.
#[test]
fn a_vouchers_increase_counts_against_the_budget_and_a_voucher_is_signed_once() {
    use terms::safety::journal::SqliteJournal;
    let budget = "[[budgets]]\nname = \"channel-day\"\nasset = \"eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e\"\n\
                  window = \"day\"\nlimit = \"1500\"";
    let policy = sepolia_policy("", budget);
    let dir = std::env::temp_dir().join(format!("terms-channels-voucher-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.join("j.db")).unwrap());
    let options = Options::new()
        .clock(FixedClock(evm_fixed()["now"].as_u64().unwrap()))
        .policy(Arc::new(policy))
        .journal(journal);
    let (_, hold) = opened();
    let run = |hold: &ChannelHold, signer: &CountingSigner| {
        paused().block_on(within(&doc(), hold, pairing(), signer, None, &options))
    };
    let signer = wallet();
    let first = run(&hold, &signer).unwrap();
    assert_eq!((signer.count(), first.hold.signed_max.as_str()), (1, "2000"));
    // The seller charges the first voucher's amount; the next voucher signs 1000 more.
    let charged = record_charge(&first.hold, "2000").unwrap();
    let second = run(&charged, &signer);
    declined(&second, "policy-refused", "policy/budget-exhausted");
    assert_eq!(signer.count(), 1, "the refused voucher was signed");
    let again = run(&hold, &signer).unwrap();
    assert_eq!(again, first, "the same voucher, asked again, is not the one the journal holds");
    assert_eq!(signer.count(), 1, "the same voucher was signed twice");
    std::fs::remove_dir_all(&dir).ok();
}
