//! The seals on `chosen`, channel openings and holds: each refusal, acceptance of a reordered value, and a
//! restarted server refusing what the earlier process returned. The agreement runs on the real
//! `x402/exact/eip155/erc7710`, channels on the real `x402/batch-settlement/eip155` (the batch-settlement vector
//! file's EVM option, payer authorizer and deposit).

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Map, Value, json};
use terms::SigningRequest;
use terms::mcp::{BuyerOptions, buyer_server};

use crate::common::*;
use crate::support::{CountingSigner, ScriptedFetch};
use crate::tools::sign;

const HOLD_UNVERIFIED: &str =
    "The hold is not one this server process returned, unchanged. Pass back the latest hold exactly as returned.";
const OPENING_UNVERIFIED: &str = "The opening is not one this server process returned, unchanged. Pass the signed opening and its mac exactly as returned.";
const CHOSEN_UNVERIFIED: &str = "The chosen payment is not one this server process returned, unchanged. Pass chosen exactly as atr_confirm returned it.";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::chosen_seal_refusals", || Ok(run(chosen_refusals()))),
        Trial::test("mcp::channel_flow_and_opening_refusals", || Ok(run(channel_flow()))),
        Trial::test("mcp::hold_refusals", || Ok(run(hold_refusals()))),
        Trial::test("mcp::restarted_server_refuses_old_seals", || Ok(run(restart()))),
        Trial::test("mcp::finish_verifies_chosen_seal_on_every_pairing", || Ok(run(finish_verifies_chosen()))),
    ]
}

fn edited(v: &Value, f: impl FnOnce(&mut Map<String, Value>)) -> Value {
    let mut m = v.as_object().unwrap().clone();
    f(&mut m);
    Value::Object(m)
}

fn reordered(v: &Value) -> Value {
    Value::Object(v.as_object().unwrap().clone().into_iter().rev().collect())
}

fn assert_decline(r: &rmcp::model::CallToolResult, code: &str, detail: &str) {
    let (got, v) = declined(r);
    assert_eq!(got, code, "{v}");
    assert_eq!(v["decline"]["detail"], detail);
}

async fn chosen_refusals() {
    let fetch = seller();
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(fetch.clone())).signer(Arc::new(wallet.clone())))).await;
    let c =
        ok(&call(&client, "atr_confirm", json!({"pairing": ERC7710, "document": erc7710_doc(), "account": account()}))
            .await);
    let chosen = c["chosen"].clone();
    let atr = c["atr"]["base64"].clone();
    let other_mac = {
        let plain = ok(&call(
            &client,
            "atr_confirm",
            json!({"pairing": "x402/exact/eip155/eip3009", "document": doc(), "account": account()}),
        )
        .await);
        plain["chosen"]["mac"].clone()
    };
    let fetches = fetch.asked().len();
    let edits: Vec<(&str, Value)> = vec![
        (
            "agreement changed",
            edited(&chosen, |m| {
                m.insert("agreement".into(), json!("https://elsewhere.example/a"));
            }),
        ),
        (
            "agreement removed",
            edited(&chosen, |m| {
                m.shift_remove("agreement");
            }),
        ),
        (
            "member added",
            edited(&chosen, |m| {
                m.insert("extra".into(), json!(1));
            }),
        ),
        (
            "choice edited",
            edited(&chosen, |m| {
                m["choice"]["accepted"]["amount"] = json!("1");
            }),
        ),
        (
            "ref edited",
            edited(&chosen, |m| {
                m.insert("ref".into(), json!("ref-0000000000000000000000000999"));
            }),
        ),
        (
            "mac removed",
            edited(&chosen, |m| {
                m.shift_remove("mac");
            }),
        ),
        (
            "mac changed",
            edited(&chosen, |m| {
                m.insert("mac".into(), json!(format!("0x{}", "00".repeat(32))));
            }),
        ),
        (
            "mac of another chosen",
            edited(&chosen, |m| {
                m.insert("mac".into(), other_mac.clone());
            }),
        ),
        (
            "mac not a string",
            edited(&chosen, |m| {
                m.insert("mac".into(), json!(7));
            }),
        ),
        (
            "hand-built",
            json!({"pairing": ERC7710, "choice": chosen["choice"], "ref": chosen["ref"], "agreement": chosen["agreement"]}),
        ),
    ];
    for (what, bad) in edits {
        let r = call(&client, "atr_agree", json!({"atr": atr, "chosen": bad})).await;
        let (code, v) = declined(&r);
        assert_eq!(code, "chosen-unverified", "{what}: {v}");
        assert_eq!(v["decline"]["detail"], CHOSEN_UNVERIFIED);
    }
    assert_eq!(fetch.asked().len(), fetches, "nothing fetched for an unverified chosen");
    assert_eq!(wallet.count(), 0);
    // A verified chosen that names no agreement URL.
    let plain = ok(&call(
        &client,
        "atr_confirm",
        json!({"pairing": "x402/exact/eip155/eip3009", "document": doc(), "account": account()}),
    )
    .await);
    let r = call(&client, "atr_agree", json!({"atr": atr, "chosen": plain["chosen"]})).await;
    assert_decline(&r, "offer-unreadable", "The chosen payment names no agreement URL.");
    // Reordered members verify: the agreement URL (not scripted here) is then asked.
    let r = call(&client, "atr_agree", json!({"atr": atr, "chosen": reordered(&chosen)})).await;
    assert_eq!(declined(&r).0, "agreement-failed", "verified, then the unscripted URL fails");
    assert_eq!(fetch.asked_of(&agreement_url()).len(), 1);
    assert_eq!(wallet.count(), 0);
}

/// confirm → sign → finish (with the opening mac) → open: the hold, on the real channel pairing.
async fn opened(client: &Client, wallet: &CountingSigner) -> (Value, Value, Value) {
    let confirm =
        json!({"pairing": BATCH, "document": channel_doc(None), "account": account(), "inputs": channel_inputs()});
    let c = ok(&call(client, "atr_confirm", confirm).await);
    assert_eq!(c["request"]["kind"], "batch", "the deposit's authorization and the first voucher");
    let answer = sign(wallet, &c["request"]).await;
    let atr = c["atr"]["base64"].clone();
    let f = ok(&call(
        client,
        "atr_finish",
        json!({"pairing": BATCH, "atr": atr, "chosen": c["chosen"], "signature": answer}),
    )
    .await);
    assert!(f["mac"].as_str().is_some(), "an opening carries its mac");
    assert_eq!(f["signed"]["payload"]["channelConfig"]["salt"], h_of_a(), "the channel is salted with H");
    let o = ok(&call(
        client,
        "atr_channel_open",
        json!({"pairing": BATCH, "atr": atr, "signed": f["signed"], "mac": f["mac"]}),
    )
    .await);
    assert_eq!(o["atrHash"], h_of_a());
    (c, f, o["hold"].clone())
}

/// H as the channel pairing reads it from an in-channel payment (its configuration's salt, once the configuration
/// hashes to the voucher's channel id).
fn h_within(signed: &Value) -> String {
    let pairing = terms::pairing(BATCH).unwrap();
    pairing.channel().unwrap().bound_within(signed).unwrap().to_hex()
}

fn amount(v: &Value) -> u128 {
    v.as_str().unwrap().parse().unwrap()
}

async fn channel_flow() {
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(seller())).signer(Arc::new(wallet.clone())))).await;
    let (c, f, hold) = opened(&client, &wallet).await;
    let keys: Vec<&str> = hold.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["pairing", "network", "channel", "h", "atr", "opening", "charged", "signedMax", "mac"]);
    assert_eq!(hold["pairing"], BATCH);
    assert_eq!(hold["charged"], "0");
    assert_eq!(hold["h"], h_of_a());
    let price = amount(&evm()["option"]["amount"]);
    assert_eq!(hold["signedMax"], price.to_string(), "the first voucher signs the option's amount");
    assert_eq!(hold["channel"], f["signed"]["payload"]["voucher"]["channelId"]);
    assert_eq!(hold["opening"], f["signed"]);
    let atr = c["atr"]["base64"].clone();

    // Opening refusals, before the gate: nothing is kept.
    let zero = format!("0x{}", "00".repeat(32));
    let mut raised = f["signed"].clone();
    raised["payload"]["voucher"]["maxClaimableAmount"] = json!("99999999");
    let mut deposit_raised = f["signed"].clone();
    deposit_raised["payload"]["deposit"]["amount"] = json!("99999999");
    let bad: Vec<(&str, Value)> = vec![
        (
            "another pairing",
            json!({"pairing": "x402/batch-settlement/solana", "atr": atr, "signed": f["signed"], "mac": f["mac"]}),
        ),
        ("zero mac", json!({"pairing": BATCH, "atr": atr, "signed": f["signed"], "mac": zero})),
        ("a hold's mac", json!({"pairing": BATCH, "atr": atr, "signed": f["signed"], "mac": hold["mac"]})),
        ("a chosen's mac", json!({"pairing": BATCH, "atr": atr, "signed": f["signed"], "mac": c["chosen"]["mac"]})),
        ("raised opening", json!({"pairing": BATCH, "atr": atr, "signed": raised, "mac": f["mac"]})),
        ("raised deposit", json!({"pairing": BATCH, "atr": atr, "signed": deposit_raised, "mac": f["mac"]})),
        ("landed added", json!({"pairing": BATCH, "atr": atr, "signed": f["signed"], "mac": f["mac"], "landed": {}})),
    ];
    for (what, args) in bad {
        let r = call(&client, "atr_channel_open", args).await;
        assert_eq!(declined(&r).0, "opening-unverified", "{what}");
        assert_eq!(declined(&r).1["decline"]["detail"], OPENING_UNVERIFIED);
        assert!(declined(&r).1.get("hold").is_none());
    }
    // A verified opening against other bytes: declined by the gate, no hold.
    let r = call(
        &client,
        "atr_channel_open",
        json!({"pairing": BATCH, "atr": b64(&bytes("C")), "signed": f["signed"], "mac": f["mac"]}),
    )
    .await;
    let (code, v) = declined(&r);
    assert_eq!(code, "signed-not-bound");
    assert!(v.get("hold").is_none());
    // A reordered opening verifies.
    let r = call(
        &client,
        "atr_channel_open",
        json!({"pairing": BATCH, "atr": atr, "signed": reordered(&f["signed"]), "mac": f["mac"]}),
    )
    .await;
    assert_eq!(ok(&r)["hold"]["h"], h_of_a());

    // finish on a channel pairing uses only a sealed chosen.
    let answer = wallet.answers()[0].clone();
    let unsealed = edited(&c["chosen"], |m| {
        m.shift_remove("mac");
    });
    let r = call(&client, "atr_finish", json!({"pairing": BATCH, "atr": atr, "chosen": unsealed, "signature": answer}))
        .await;
    assert_decline(&r, "chosen-unverified", CHOSEN_UNVERIFIED);
    // The wallet's answer to the opening's batch is one list, and finishes to the same opening; wrapped as a list of
    // step answers it completes nothing, as the reference's batch piece reads it.
    let again = json!({"pairing": BATCH, "atr": atr, "chosen": c["chosen"], "signature": answer});
    assert_eq!(ok(&call(&client, "atr_finish", again.clone()).await)["signed"], f["signed"]);
    let mut wrapped = again;
    wrapped["signature"] = json!([answer]);
    assert_decline(&call(&client, "atr_finish", wrapped).await, "signed-not-bound", "x402/signature-malformed");

    // Record, within, record.
    let r = call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": (price + 1).to_string()})).await;
    assert_decline(&r, "offer-unreadable", "The charged amount is above the largest amount signed in the channel.");
    let hold = ok(
        &call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": price.to_string()})).await
    )["hold"]
        .clone();
    assert_eq!(hold["charged"], price.to_string());
    let calls = wallet.count();
    let w = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": hold, "document": channel_doc(Some("250"))}),
    )
    .await);
    assert_eq!(wallet.count(), calls + 1);
    match wallet.calls().last().unwrap() {
        SigningRequest::Batch { requests } => match requests.as_slice() {
            [SigningRequest::Eip712 { typed_data }] => assert_eq!(typed_data.primary_type, "Voucher"),
            other => panic!("not one voucher: {other:?}"),
        },
        other => panic!("not a batch: {other:?}"),
    }
    let cumulative = (price + 250).to_string();
    assert_eq!(w["hold"]["signedMax"], cumulative);
    assert_eq!(w["signed"]["payload"]["type"], "voucher");
    assert_eq!(w["signed"]["payload"]["voucher"]["maxClaimableAmount"], cumulative);
    assert_eq!(w["signed"]["payload"]["voucher"]["channelId"], hold["channel"]);
    assert_eq!(w["signed"]["payload"]["voucher"]["signature"], wallet.answers().last().unwrap()[0]);
    assert_eq!(h_within(&w["signed"]), h_of_a());
    assert_eq!(w["atrHash"], h_of_a());
    let r = ok(&call(&client, "atr_channel_record_charge", json!({"hold": w["hold"], "charged": "1100"})).await);
    assert_eq!(r["hold"]["charged"], "1100");
    assert_eq!(r["atrHash"], h_of_a());
    let below = call(&client, "atr_channel_record_charge", json!({"hold": r["hold"], "charged": "1099"})).await;
    assert_eq!(declined(&below).0, "offer-unreadable");
    let w2 = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": r["hold"], "document": channel_doc(Some("5"))}),
    )
    .await);
    assert_eq!(w2["signed"]["payload"]["voucher"]["maxClaimableAmount"], "1105", "the recorded charge plus the price");
    assert_eq!(w2["hold"]["signedMax"], cumulative, "the largest amount signed stays");
    assert_eq!(w2["hold"]["charged"], "1100");
}

async fn hold_refusals() {
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(seller())).signer(Arc::new(wallet.clone())))).await;
    let (_, _, hold) = opened(&client, &wallet).await;
    let hold = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": hold, "document": channel_doc(Some("10"))}),
    )
    .await)["hold"]
        .clone();
    let calls = wallet.count();
    let mut bad: Vec<(String, Value)> = vec![
        (
            "charged edited".into(),
            edited(&hold, |m| {
                m.insert("charged".into(), json!("5"));
            }),
        ),
        (
            "charged and signedMax edited".into(),
            edited(&hold, |m| {
                m.insert("charged".into(), json!("1000"));
                m.insert("signedMax".into(), json!("1000"));
            }),
        ),
        (
            "member added".into(),
            edited(&hold, |m| {
                m.insert("landed".into(), json!({}));
            }),
        ),
        (
            "mac removed".into(),
            edited(&hold, |m| {
                m.shift_remove("mac");
            }),
        ),
        (
            "mac upper-case".into(),
            edited(&hold, |m| {
                let up = m["mac"].as_str().unwrap().to_uppercase().replacen("0X", "0x", 1);
                m.insert("mac".into(), json!(up));
            }),
        ),
    ];
    for key in hold.as_object().unwrap().keys().filter(|k| *k != "mac") {
        bad.push((
            format!("{key} removed"),
            edited(&hold, |m| {
                m.shift_remove(key);
            }),
        ));
        bad.push((
            format!("{key} changed"),
            edited(&hold, |m| {
                let old = m[key].clone();
                m.insert(key.clone(), json!({"was": old}));
            }),
        ));
    }
    for (what, h) in bad {
        let r = call(
            &client,
            "atr_channel_within",
            json!({"pairing": BATCH, "hold": h, "document": channel_doc(Some("1"))}),
        )
        .await;
        assert_decline(&r, "hold-unverified", HOLD_UNVERIFIED);
        let r = call(&client, "atr_channel_record_charge", json!({"hold": h, "charged": "1"})).await;
        let (code, v) = declined(&r);
        assert_eq!(code, "hold-unverified", "{what}");
        assert!(v.get("hold").is_none());
    }
    assert_eq!(wallet.count(), calls, "the signer is never called for an unverified hold");
    // Reordered: accepted.
    let r = ok(&call(&client, "atr_channel_record_charge", json!({"hold": reordered(&hold), "charged": "10"})).await);
    assert_eq!(r["hold"]["charged"], "10");
    // Another server instance in this process accepts it too: the key is the process's.
    let other = connect(buyer_server(BuyerOptions::new(Arc::new(ScriptedFetch::new())))).await;
    let r = ok(&call(&other, "atr_channel_record_charge", json!({"hold": hold, "charged": "3"})).await);
    assert_eq!(r["hold"]["charged"], "3");
}

async fn restart() {
    // The first process: a hold, and an opening with its mac.
    let first = spawn(helper()).await;
    let transact = json!({"pairing": BATCH, "document": channel_doc(None), "inputs": channel_inputs()});
    let t = ok(&call(&first, "atr_transact", transact.clone()).await);
    assert!(t.get("landed").is_none(), "an EVM opening lands nothing beside it");
    let atr = t["atr"]["base64"].clone();
    let opening = json!({"pairing": BATCH, "atr": atr, "signed": t["signed"], "mac": t["mac"]});
    let hold = ok(&call(&first, "atr_channel_open", opening.clone()).await)["hold"].clone();
    let c =
        ok(&call(&first, "atr_confirm", json!({"pairing": ERC7710, "document": erc7710_doc(), "account": account()}))
            .await);
    assert_eq!(
        ok(&call(&first, "atr_channel_record_charge", json!({"hold": hold, "charged": "0"})).await)["atrHash"],
        h_of_a()
    );
    let within = json!({"pairing": BATCH, "hold": hold, "document": channel_doc(Some("1"))});
    assert_eq!(ok(&call(&first, "atr_channel_within", within.clone()).await)["atrHash"], h_of_a());
    first.cancel().await.unwrap();

    // A restarted server: a new process, a new key.
    let second = spawn(helper()).await;
    assert_decline(
        &call(&second, "atr_channel_record_charge", json!({"hold": hold, "charged": "0"})).await,
        "hold-unverified",
        HOLD_UNVERIFIED,
    );
    assert_decline(&call(&second, "atr_channel_within", within).await, "hold-unverified", HOLD_UNVERIFIED);
    assert_decline(&call(&second, "atr_channel_open", opening).await, "opening-unverified", OPENING_UNVERIFIED);
    assert_decline(
        &call(&second, "atr_agree", json!({"atr": atr, "chosen": c["chosen"]})).await,
        "chosen-unverified",
        CHOSEN_UNVERIFIED,
    );
    // And this process (a third key) refuses them as well.
    let here = connect(buyer_server(BuyerOptions::new(Arc::new(ScriptedFetch::new())))).await;
    assert_decline(
        &call(&here, "atr_channel_record_charge", json!({"hold": hold, "charged": "0"})).await,
        "hold-unverified",
        HOLD_UNVERIFIED,
    );
    // The restarted server opens a channel of its own: it refuses only what another process sealed.
    let t = ok(&call(&second, "atr_transact", transact).await);
    let opening = json!({"pairing": BATCH, "atr": t["atr"]["base64"], "signed": t["signed"], "mac": t["mac"]});
    assert_eq!(ok(&call(&second, "atr_channel_open", opening).await)["hold"]["h"], h_of_a());
    second.cancel().await.unwrap();
}

/// `atr_finish` on a pairing without a channel verifies the seal on `chosen` as well: a flipped mac, a consistent
/// edit (amount and payee changed in both `accepted` and `required`) and a chosen from another server process are
/// declined `chosen-unverified` before anything is built; the unchanged chosen finishes.
async fn finish_verifies_chosen() {
    const EIP3009: &str = "x402/exact/eip155/eip3009";
    let client = connect(buyer_server(server_options(Arc::new(seller())))).await;
    let c =
        ok(&call(&client, "atr_confirm", json!({"pairing": EIP3009, "document": doc(), "account": account()})).await);
    let atr = c["atr"]["base64"].clone();
    let answer = sign(&signer(), &c["request"]).await;
    let finish = |chosen: Value| json!({"pairing": EIP3009, "atr": atr, "chosen": chosen, "signature": answer});
    let chosen = c["chosen"].clone();
    let flipped = edited(&chosen, |m| {
        let mac = m["mac"].as_str().unwrap().to_owned();
        let last = if mac.ends_with('0') { "1" } else { "0" };
        m.insert("mac".into(), json!(format!("{}{last}", &mac[..mac.len() - 1])));
    });
    let consistent = edited(&chosen, |m| {
        for side in ["accepted", "required"] {
            if m["choice"].get(side).is_some() {
                m["choice"][side]["amount"] = json!("1");
                m["choice"][side]["payTo"] = json!("0x000000000000000000000000000000000000dEaD");
            }
        }
    });
    assert_ne!(consistent["choice"], chosen["choice"], "the edit changes the choice");
    let other = spawn(helper()).await;
    let elsewhere = ok(&call(
        &other,
        "atr_confirm",
        json!({"pairing": EIP3009, "document": doc(), "account": account()}),
    )
    .await)["chosen"]
        .clone();
    other.cancel().await.unwrap();
    for (what, bad) in [("flipped mac", flipped), ("consistent edit", consistent), ("another process", elsewhere)] {
        let r = call(&client, "atr_finish", finish(bad)).await;
        let (code, v) = declined(&r);
        assert_eq!(code, "chosen-unverified", "{what}: {v}");
        assert_eq!(v["decline"]["detail"], CHOSEN_UNVERIFIED, "{what}");
    }
    let f = ok(&call(&client, "atr_finish", finish(chosen)).await);
    assert_eq!(f["atrHash"], h_of_a());
}
