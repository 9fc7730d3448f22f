//! A whole channel's life through the tools on this build's `x402/batch-settlement/eip155`, from the batch-settlement
//! vector file's EVM option: open through `atr_transact`, keep the sealed hold, record charges, pay in the channel,
//! refund part, close; an edited hold or another document's hash signs nothing.

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::json;
use terms::mcp::buyer_server;

use crate::common::*;

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("mcp::real_batch_settlement_channel_through_the_tools", || Ok(run(flow())))]
}

async fn flow() {
    let wallet = signer();
    let client = connect(buyer_server(server_options(Arc::new(seller())).signer(Arc::new(wallet.clone())))).await;
    let h = h_of_a();
    let price: u128 = evm()["option"]["amount"].as_str().unwrap().parse().unwrap();
    let deposit: u128 = evm()["deposit"].as_str().unwrap().parse().unwrap();

    let opened = ok(&call(
        &client,
        "atr_transact",
        json!({"pairing": BATCH, "document": channel_doc(None), "inputs": channel_inputs()}),
    )
    .await);
    assert_eq!(opened["atrHash"], h);
    assert_eq!(opened["signed"]["payload"]["type"], "deposit");
    let mut config = evm()["config"].clone();
    config["salt"] = json!(h);
    assert_eq!(opened["signed"]["payload"]["channelConfig"], config, "the vectors' channel, salted with H");
    assert_eq!(opened["signed"]["payload"]["channelConfig"]["salt"], h, "the channel is salted with H");
    assert_eq!(opened["signed"]["payload"]["deposit"]["amount"], deposit.to_string());
    assert_eq!(wallet.count(), 1, "one batch: the deposit's authorization and the first voucher");
    let mac = opened["mac"].clone();
    assert!(mac.is_string(), "the opening carries its mac");
    let mut open = json!({"pairing": BATCH, "atr": opened["atr"]["base64"], "signed": opened["signed"], "mac": mac});
    if let Some(landed) = opened.get("landed") {
        open["landed"] = landed.clone();
    }
    // The raised opening is refused before the gate.
    let mut raised = open.clone();
    raised["signed"]["payload"]["voucher"]["maxClaimableAmount"] = json!("99999999");
    assert_eq!(declined(&call(&client, "atr_channel_open", raised).await).0, "opening-unverified");
    let held = ok(&call(&client, "atr_channel_open", open).await);
    assert_eq!(held["atrHash"], h);
    let mut hold = held["hold"].clone();
    assert_eq!(hold["pairing"], BATCH);
    assert_eq!(hold["charged"], "0");
    assert_eq!(hold["signedMax"], price.to_string());

    hold = ok(&call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": price.to_string()})).await)
        ["hold"]
        .clone();
    let over =
        call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": (deposit + 1).to_string()})).await;
    assert_eq!(declined(&over).0, "offer-unreadable");
    let calls = wallet.count();
    let mut edited = hold.clone();
    edited["signedMax"] = json!(deposit.to_string());
    let r = call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": edited, "document": channel_doc(Some("250"))}),
    )
    .await;
    assert_eq!(declined(&r).0, "hold-unverified");
    assert_eq!(wallet.count(), calls, "nothing signed for an edited hold");

    let paid = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": hold, "document": channel_doc(Some("250"))}),
    )
    .await);
    let cumulative = (price + 250).to_string();
    assert_eq!(paid["atrHash"], h);
    assert_eq!(paid["signed"]["payload"]["voucher"]["maxClaimableAmount"], cumulative);
    assert_eq!(paid["hold"]["signedMax"], cumulative);
    hold = ok(&call(&client, "atr_channel_record_charge", json!({"hold": paid["hold"], "charged": cumulative})).await)
        ["hold"]
        .clone();
    // A refund of part: a refund payload carrying the amount, the voucher at the recorded charge.
    let part = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": hold, "document": channel_doc(Some("250")), "refund": {"amount": "100"}}),
    )
    .await);
    assert_eq!(part["signed"]["payload"]["type"], "refund");
    assert_eq!(part["signed"]["payload"]["amount"], "100");
    assert_eq!(part["signed"]["payload"]["voucher"]["maxClaimableAmount"], cumulative);
    let closed = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": BATCH, "hold": part["hold"], "document": channel_doc(Some("250")), "refund": {}}),
    )
    .await);
    assert_eq!(closed["signed"]["payload"]["type"], "refund");
    assert!(closed["signed"]["payload"].get("amount").is_none(), "the close names no amount");
    assert_eq!(
        closed["signed"]["payload"]["voucher"]["maxClaimableAmount"], cumulative,
        "the close claims the recorded charge"
    );
    // Another document's hash: declined before anything is signed.
    let calls = wallet.count();
    let mut other = channel_doc(Some("250"));
    other["extensions"]["legalContext"]["info"]["value"] = json!(terms::atr_hash(&bytes("C")).to_hex());
    let r =
        call(&client, "atr_channel_within", json!({"pairing": BATCH, "hold": closed["hold"], "document": other})).await;
    let (code, v) = declined(&r);
    assert_eq!(code, "hash-mismatch");
    assert_eq!(
        v["decline"]["detail"],
        "The challenge advertises another ATR's hash than the one this channel opened for."
    );
    assert_eq!(wallet.count(), calls, "nothing signed for another document's hash");
}
