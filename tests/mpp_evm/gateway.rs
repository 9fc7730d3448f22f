//! `mpp/charge/usdc/gateway`: the burn intent a Circle Gateway client signs, whose salt is the `usdc` derivation.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::{Answer, SigningRequest};

use crate::support::vectors;
use crate::{Outcome, b2_choice, bound_of, code_of, eq, fail, finished, h, request_of, row, trials_of};

const GATEWAY: &str = "mpp/charge/usdc/gateway";
const G: &str = "mpp-charge-usdc-gateway.json";

pub fn trials(all: &mut Vec<Trial>) {
    trials_of(
        all,
        G,
        m5,
        &["M5"],
        &[
            ("M5.expectDomainSeparator", "a rail fact: tests/mpp_evm_rail"),
            ("M5.expectDigest", "a rail fact: tests/mpp_evm_rail"),
            ("M5.bareSignerSalt", "a rail fact: tests/mpp_evm_rail"),
            ("M5.otherRealmSalt", "a rail fact: tests/mpp_evm_rail (the bound's refusal of it is run)"),
        ],
    );
    all.push(Trial::test("ours::gateway: an answer that is not the client's object is refused", malformed_answers));
    all.push(Trial::test("peer::gateway: solana: accounts are read as the reference reads them", solana_accounts));
    all.push(Trial::test("ours::gateway: a network whose accounts it cannot read is refused unsigned", unreadable));
}

/// The reference's payments with a `solana:` account (`gateway_solana.json`, written by
/// `scripts/peer-gateway-solana.py` from M5): the recipient on Solana, and the burn from Solana. The crate chooses
/// the challenge for the account, builds the request, completes the reference's credential byte for byte from the
/// Gateway client's answer, and reads H back from it as the reference does.
fn solana_accounts() -> Outcome {
    let f = vectors(G);
    let peer: Value = serde_json::from_str(include_str!("gateway_solana.json")).unwrap();
    for name in ["toSolana", "fromSolana"] {
        let c = &peer[name];
        let chosen = crate::choose(
            GATEWAY,
            &json!([c["challenge"]]),
            c["account"].as_str().unwrap(),
            &json!({}),
            crate::now_of(&f),
        )
        .map_err(|e| fail(format!("{name}: choose: {e}")))?;
        let SigningRequest::GatewayBurnIntent { preimage } = request_of(GATEWAY, &chosen) else {
            return Err(fail("not a gateway-burn-intent request"));
        };
        eq("request hash", preimage.request_hash.as_str(), c["saltInput"]["requestHash"].as_str().unwrap())?;
        let got = finished(GATEWAY, &chosen, &[Answer::from(c["answer"].clone())]).map_err(|d| fail(d.detail))?;
        eq(name, got.clone(), c["presented"].clone())?;
        eq(name, bound_of(GATEWAY, &c["presented"]), Ok(c["bound"].as_str().unwrap().to_owned()))?;
        eq("h", h().to_hex(), c["bound"].as_str().unwrap().to_owned())?;
    }
    Ok(())
}

/// A Gateway payment on a network whose TransferSpec accounts the crate does not read (neither `eip155:` nor
/// `solana:`) is never handed to the wallet: the choice finds no payable option for an account there or a challenge
/// minting there, and a choice made elsewhere with such a destination is `mpp/gateway-unread` at the build, before
/// any request exists. The reference asks its wallet and then refuses the signed burn (`mpp/gateway-unread`).
fn unreadable() -> Outcome {
    let f = vectors(G);
    let peer: Value = serde_json::from_str(include_str!("gateway_solana.json")).unwrap();
    let now = crate::now_of(&f);
    let c = &peer["toSolana"];
    let mut request = request_json(&c["challenge"]);
    request["methodDetails"]["gateway"]["destinationNetwork"] = json!("stellar:pubnet");
    let challenge = crate::with_request(&c["challenge"], &request.to_string());
    let account = c["account"].as_str().unwrap();
    eq(
        "destination",
        crate::choose(GATEWAY, &json!([challenge]), account, &json!({}), now).map(drop),
        Err("mpp/no-payable-option".into()),
    )?;
    let mut chosen = crate::choose(GATEWAY, &json!([c["challenge"]]), account, &json!({}), now).map_err(fail)?;
    chosen.build_input.insert("challenge".into(), challenge);
    let built = crate::pairing(GATEWAY).build(&chosen, crate::ABC, &h()).map(drop).map_err(|r| r.code());
    eq("build", built, Err("mpp/gateway-unread".into()))?;
    let mut request = request_json(&c["challenge"]);
    request["methodDetails"]["gateway"]["acceptedSources"] = json!(["stellar:pubnet"]);
    let challenge = crate::with_request(&c["challenge"], &request.to_string());
    let got = crate::choose(
        GATEWAY,
        &json!([challenge]),
        "stellar:pubnet:GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ",
        &json!({}),
        now,
    );
    eq("source", got.map(drop), Err("mpp/no-payable-option".into()))
}

/// The Gateway client's answer for M5: the file's values and B6's signature.
fn answer(f: &Value) -> Value {
    let m5 = &f["M5"];
    let p = &m5["payload"];
    let presented = &row(f, "B6")["input"]["presented"];
    json!({
        "source": m5["source"], "sourceNetwork": p["sourceNetwork"], "destinationNetwork": p["destinationNetwork"],
        "maxFee": p["maxFee"], "burnIntent": p["authorization"]["transfer"]["burnIntent"],
        "signature": presented["payload"]["authorization"]["transfer"]["signature"],
    })
}

fn m5(key_name: &str) -> Outcome {
    assert_eq!(key_name, "M5");
    let f = vectors(G);
    let m5 = &f["M5"];
    let chosen = b2_choice(&f);
    let SigningRequest::GatewayBurnIntent { preimage } = request_of(GATEWAY, &chosen) else {
        return Err(fail("not a gateway-burn-intent request"));
    };
    eq("request hash", preimage.request_hash.as_str(), m5["expectRequestHash"].as_str().unwrap())?;
    eq("id", preimage.id.as_str(), f["fixed"]["MV1"].as_str().unwrap())?;
    eq("realm", preimage.realm.as_str(), f["fixed"]["realm"].as_str().unwrap())?;
    eq("recipient", preimage.recipient.as_str(), m5["saltInput"]["recipient"].as_str().unwrap())?;
    let salt = m5["payload"]["authorization"]["transfer"]["burnIntent"]["spec"]["salt"].clone();
    eq("salt", salt, m5["expectSalt"].clone())?;
    let c = finished(GATEWAY, &chosen, &[Answer::from(answer(&f))]).map_err(|d| fail(d.detail))?;
    eq("credential", c.clone(), row(&f, "B6")["input"]["presented"].clone())?;
    eq("bound", bound_of(GATEWAY, &c), Ok(m5["expectBound"].as_str().unwrap().to_owned()))?;
    eq("h", h().to_hex(), m5["expectBound"].as_str().unwrap().to_owned())?;
    let mut other = c.clone();
    other["challenge"]["realm"] = f["fixed"]["otherRealm"].clone();
    eq("other realm", bound_of(GATEWAY, &other), Err(code_of(&m5["expectSaltRefusal"])))?;
    let mut set = c;
    set["payload"]["authorization"]["transfer"]["burnIntentSet"] = json!([]);
    eq("set", bound_of(GATEWAY, &set), Err(code_of(&m5["expectSetRefusal"])))?;
    // The account is chosen by the Gateway sources the challenge accepts, not by the destination.
    let b2 = &row(&f, "B2")["input"];
    let other_source = b2["account"].as_str().unwrap().replace("5042002", "84532");
    let got = crate::choose(GATEWAY, &b2["doc"], &other_source, &json!({}), crate::now_of(&f));
    eq("another source", got.map(drop), Err("mpp/no-payable-option".into()))?;
    let q = crate::pairing(GATEWAY).quote(&chosen).map_err(|r| fail(r.code()))?;
    eq(
        "quote",
        (q.amount.to_string(), q.asset, q.payee, q.network),
        (
            "25000000".to_owned(),
            "usdc".to_owned(),
            m5["saltInput"]["recipient"].as_str().unwrap().to_owned(),
            "eip155:84532".to_owned(),
        ),
    )
}

fn malformed_answers() -> Outcome {
    let f = vectors(G);
    let chosen = b2_choice(&f);
    let good = answer(&f);
    let mut cases = vec![json!("0x12"), json!(null)];
    for k in ["source", "sourceNetwork", "destinationNetwork", "maxFee", "burnIntent", "signature"] {
        let mut bad = good.clone();
        bad.as_object_mut().unwrap().shift_remove(k);
        cases.push(bad);
    }
    for bad in cases {
        let got = finished(GATEWAY, &chosen, &[Answer::from(bad.clone())]);
        let d = crate::decline_of(got, terms::DeclineCode::SignedNotBound)?;
        eq("detail", d.detail.as_str(), "mpp/credential-malformed")?;
    }
    Ok(())
}

/// A challenge's request, decoded (its members in their order, so written back it stays in its RFC 8785 form).
fn request_json(challenge: &Value) -> Value {
    use base64::Engine as _;
    let text = challenge["request"].as_str().unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap()).unwrap()
}
