//! The bad input of issue 16 for `mpp/session/tempo`. Each code was confirmed on the reference with the same input
//! (integraledger-terms 0.4.0: `_tempo_bound`, `_tempo_bound_within`, `_tempo_build`, `_tempo_build_within` of
//! `bindings/mpp_session.py`), its answer quoted beside the case.

use serde_json::json;

use super::*;

#[test]
fn a_voucher_for_another_channel_is_refused() {
    // The gate declines a challenge naming another channel before the signer is called.
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let wallet = Wallet::new();
    let other = format!("0x{}", "11".repeat(32));
    let got = run_within(&json!([seller_challenge("100", Some(&other), None)]), &hold, &wallet, None);
    declined(&got, "no-payable-option", "The challenge names a channel this hold did not open.");
    assert_eq!(wallet.calls().len(), 0);
    // A v2 voucher naming another channel than its descriptor gives. The reference:
    // _tempo_bound_within(voucher) -> Refusal(code='tempo/descriptor-mismatch'); with the held channel, H.
    let mut voucher = json!({
        "challenge": seller_challenge("100", Some(&hold.channel), None),
        "payload": {
            "action": "voucher",
            "channelId": other,
            "cumulativeAmount": "100",
            "signature": format!("0x{}", "11".repeat(65)),
            "descriptor": presented()["payload"]["descriptor"],
        },
    });
    assert_eq!(channel().bound_within(&voucher).unwrap_err().code(), "tempo/descriptor-mismatch");
    voucher["payload"]["channelId"] = json!(hold.channel);
    assert_eq!(channel().bound_within(&voucher), Ok(h()));
}

#[test]
fn an_opening_whose_salt_is_not_h_is_refused() {
    // B6's wire with the first byte of its salt word flipped and re-signed with the payer's key; the reference's
    // `_tempo_bound`: Refusal(code='tempo/salt-not-bound'). (plant1 is H2 in its place; TS4's expectMismatch a
    // descriptor naming H2.)
    let mut tx = b6_tx();
    let mut input = tx.calls[0].input.to_vec();
    input[4 + 4 * 32] ^= 1;
    tx.calls[0].input = input.into();
    resign(&payer_key(), &mut tx);
    assert_eq!(bound_of(&with_tx(presented(), &tx)), Err("tempo/salt-not-bound".into()));
}

#[test]
fn a_transaction_for_another_chain_or_escrow_is_refused() {
    // Each wire below is B6's changed and re-signed with the payer's key (eth_account's unsafe_sign_hash over keccak256
    // of what the sender signs), then bound on the reference (`_tempo_bound`). Chain id 4217:
    // Refusal(code='tempo/tx-malformed').
    let mut tx = b6_tx();
    tx.chain_id = 4217;
    resign(&payer_key(), &mut tx);
    assert_eq!(bound_of(&with_tx(presented(), &tx)), Err("tempo/tx-malformed".into()));
    // The call sent to escrowV1: Refusal(code='tempo/open-not-found').
    let mut tx = b6_tx();
    tx.calls[0].to = Some(fixed("escrowV1").parse().unwrap());
    resign(&payer_key(), &mut tx);
    assert_eq!(bound_of(&with_tx(presented(), &tx)), Err("tempo/open-not-found".into()));
    // B6 with its challenge naming escrowV1: Refusal(code='tempo/open-not-found').
    let mut p = presented();
    let mut request = request_of(&p["challenge"]);
    request["methodDetails"]["escrowContract"] = json!(fixed("escrowV1"));
    p["challenge"] = with_request(p["challenge"].clone(), &request);
    assert_eq!(bound_of(&p), Err("tempo/open-not-found".into()));
    // Two open calls to the escrow: Refusal(code='tempo/open-ambiguous').
    let mut tx = b6_tx();
    tx.calls.push(tx.calls[0].clone());
    resign(&payer_key(), &mut tx);
    assert_eq!(bound_of(&with_tx(presented(), &tx)), Err("tempo/open-ambiguous".into()));
}

#[test]
fn amounts_past_their_width_are_refused() {
    let link = pairing().read(&b2()["doc"]).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    let account = b2()["account"].as_str().unwrap().to_owned();
    let c =
        paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&b2_inputs()))).unwrap();
    let two_256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    let two_96 = "79228162514264337593543950336";
    let below_96 = "79228162514264337593543950335";
    // The reference: _tempo_build with deposit 2^256 and 2^96 -> Refusal(code='mpp/input-malformed'); 2^96 - 1 builds.
    for (deposit, code) in
        [(two_256, Some("mpp/input-malformed")), (two_96, Some("mpp/input-malformed")), (below_96, None)]
    {
        let mut chosen = c.chosen.clone();
        chosen.build_input.insert("deposit".into(), json!(deposit));
        assert_eq!(pairing().build(&chosen, ABC, &h()).err().map(|r| r.code()).as_deref(), code, "{deposit}");
    }
    // The reference: _tempo_build_within with cumulativeAmount 2^256 and 2^96 -> Refusal(code='mpp/input-malformed');
    // 2^96 - 1 builds. Here the cumulative amount is the charge plus the request's amount, declined before the signer.
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let wallet = Wallet::new();
    for amount in [two_256, two_96] {
        let got = run_within(&json!([seller_challenge(amount, Some(&hold.channel), None)]), &hold, &wallet, None);
        declined(&got, "offer-unreadable", "mpp/input-malformed");
    }
    assert_eq!(wallet.calls().len(), 0);
    let paid = run_within(&json!([seller_challenge(below_96, Some(&hold.channel), None)]), &hold, &wallet, None);
    assert_eq!(paid.unwrap().signed["payload"]["cumulativeAmount"], json!(below_96));
}

#[test]
fn a_credential_type_or_token_domain_of_another_form_is_input_missing() {
    // The reference's session piece reads both optional inputs for the Tempo session too (its Tempo build takes
    // neither): integraledger-terms 0.4.0 `confirm` of B2 with `credentialType` 5 or "x", or `tokenDomain` "USDC" or
    // [] -> Declined(code='no-payable-option', detail='mpp/input-missing'); with `credentialType` "hash" it confirms.
    let account = b2()["account"].as_str().unwrap().to_owned();
    for (name, value, refused) in [
        ("credentialType", json!(5), true),
        ("credentialType", json!("x"), true),
        ("tokenDomain", json!("USDC"), true),
        ("tokenDomain", json!([]), true),
        ("credentialType", json!("hash"), false),
        ("tokenDomain", json!({"name": "USDC", "version": "2"}), false),
    ] {
        let link = pairing().read(&b2()["doc"]).unwrap().link;
        let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
        let mut inputs = b2_inputs();
        inputs.insert(name.into(), value.clone());
        let got = paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&inputs)));
        if refused {
            declined(&got, "no-payable-option", "mpp/input-missing");
        } else {
            assert!(got.is_ok(), "{name} = {value}: {got:?}");
        }
    }
}
