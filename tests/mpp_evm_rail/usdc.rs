//! `mpp/charge/usdc/evm` (M3, A1, the plant, B6) and `mpp/charge/usdc/gateway` (M5, B6).

use alloy_primitives::{U256, keccak256};
use base64::Engine as _;
use serde_json::{Value, json};
use terms::SigningRequest;
use terms::json::canonical;
use terms::rail::evm::charge;
use terms::rail::evm::eip3009::{self, Eip3009Token};
use terms::rail::evm::gateway::{self, SaltInput};

use super::{affixed, digest_of, hex, lower, peer, request_of, sign, text, vectors};

// mpp/charge/usdc/evm

#[test]
fn m3_the_usdc_request_hash_nonce_and_authorization() {
    let file = vectors("mpp-charge-usdc-evm.json");
    let (f, m3) = (&file["fixed"], &file["M3"]);
    let request_json = text(&m3["requestJson"]);
    let request_hash = charge::usdc_request_hash(request_json.as_bytes());
    assert_eq!(lower(&request_hash), text(&m3["expectRequestHash"]));
    let nonce = charge::usdc_nonce(text(&f["MV1"]), text(&f["realm"]), &request_hash);
    assert_eq!(lower(&nonce), text(&m3["expectNonce"]));
    assert_ne!(nonce, charge::usdc_nonce(text(&f["MV1"]), text(&f["otherRealm"]), &request_hash));
    let request: Value = serde_json::from_str(request_json).unwrap();
    let token = Eip3009Token {
        name: text(&f["tokenDomain"]["name"]),
        version: text(&f["tokenDomain"]["version"]),
        chain_id: request["methodDetails"]["evm"]["chainId"].as_u64().unwrap(),
        address: text(&request["currency"]),
    };
    let valid_before = f["expiresUnix"].as_u64().unwrap();
    let typed = eip3009::transfer_authorization(
        token,
        text(&f["payer"]),
        text(&request["recipient"]),
        text(&request["amount"]),
        valid_before,
        &nonce,
    )
    .unwrap();
    assert_eq!(typed.message["validBefore"], m3["expectValidBefore"]);
    let digest = digest_of(&typed);
    assert_eq!(lower(&digest), text(&m3["expectDigest"]));
    assert_eq!(eip3009::eip712_parts(&typed).unwrap().digest, digest);
    // The reference builds the same typed data and signs the same.
    let peer = peer();
    assert_eq!(serde_json::to_value(&typed).unwrap(), peer["M3"]["typedData"]);
    assert_eq!(sign(&file, &digest), text(&peer["M3"]["signature"]));
    // B6's payment is that authorization, signed with the payer key (RFC 6979), carrying that nonce.
    let b6 = &file["buyer"]["rows"][1]["input"]["presented"];
    assert_eq!(b6["payload"]["nonce"], m3["expectNonce"]);
    assert_eq!(sign(&file, &digest), text(&b6["payload"]["signature"]));
    let echoed = request_of(&b6["challenge"]);
    assert_eq!(canonical(&echoed).unwrap(), request_json);
    // The plant: the evm method's challenge hash is not the usdc nonce.
    assert_ne!(lower(&nonce), text(&file["plant"]["nonce"]));
    assert_ne!(charge::challenge_hash(text(&f["MV1"]), text(&f["realm"])), nonce);
}

#[test]
fn a1_the_usdc_drafts_example_and_the_request_hashs_written_form() {
    let file = vectors("mpp-charge-usdc-evm.json");
    let a1 = &file["A1"];
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text(&a1["request"])).unwrap();
    let request_hash = charge::usdc_request_hash(&bytes);
    assert_eq!(lower(&request_hash), text(&a1["expectRequestHash"]));
    let (id, realm) = (text(&a1["id"]), text(&a1["realm"]));
    let nonce = charge::usdc_nonce(id, realm, &request_hash);
    assert_eq!(lower(&nonce), text(&a1["expectNonce"]));
    // The request hash is written `0x` and lower case: without the prefix, or in upper case, it hashes elsewhere.
    let with = |written: String| {
        let preimage = json!({"id": id, "method": "usdc", "realm": realm, "intent": "charge", "requestHash": written});
        keccak256(canonical(&preimage).unwrap())
    };
    let digits = ::hex::encode(request_hash);
    assert_eq!(with(format!("0x{digits}")), nonce);
    assert!(affixed(&with(digits.clone()), &a1["withoutPrefix"]));
    assert!(affixed(&with(format!("0x{}", digits.to_uppercase())), &a1["upperCase"]));
}

// ---------------------------------------------------------------------------------------------------------------
// mpp/charge/usdc/gateway

#[test]
fn m5_the_gateway_salt_burn_intent_and_signature() {
    let file = vectors("mpp-charge-usdc-gateway.json");
    let (f, m5) = (&file["fixed"], &file["M5"]);
    let request_hash = charge::usdc_request_hash(text(&m5["requestJson"]).as_bytes());
    assert_eq!(lower(&request_hash), text(&m5["expectRequestHash"]));
    let s = &m5["saltInput"];
    let input = SaltInput {
        id: text(&f["MV1"]),
        realm: text(&f["realm"]),
        request_hash: &request_hash,
        source_network: text(&s["sourceNetwork"]),
        destination_network: text(&s["destinationNetwork"]),
        source_depositor: text(&s["sourceDepositor"]),
        source_signer: text(&s["sourceSigner"]),
        recipient: text(&s["recipient"]),
        destination_recipient: text(&s["destinationRecipient"]),
        amount: text(&s["amount"]),
        max_fee: text(&s["maxFee"]),
    };
    let salt = gateway::gateway_salt(&input);
    assert_eq!(lower(&salt), text(&m5["expectSalt"]));
    assert!(affixed(
        &gateway::gateway_salt(&SaltInput { realm: text(&f["otherRealm"]), ..input }),
        &m5["otherRealmSalt"]
    ));
    let bare = SaltInput { source_signer: text(&m5["bareSignerSalt"]["sourceSigner"]), ..input };
    assert!(affixed(&gateway::gateway_salt(&bare), &m5["bareSignerSalt"]));

    // The burn intent of the credential's payload: its salt is the derivation, its domain separator and digest the
    // row's, its JSON form the payload's, and the payer key's signature of its digest is B6's.
    let payload = &m5["payload"];
    assert_eq!(payload["authorization"]["format"], gateway::FORMAT);
    let json_form = &payload["authorization"]["transfer"]["burnIntent"];
    let intent = gateway::burn_intent_of(json_form).unwrap();
    assert_eq!(intent.spec.salt, salt);
    assert_eq!(&gateway::burn_intent_json(&intent), json_form);
    let parts = gateway::eip712_parts(&intent);
    assert_eq!(lower(&parts.domain_separator), text(&m5["expectDomainSeparator"]));
    assert!(affixed(&parts.digest, &m5["expectDigest"]));
    assert_eq!(gateway::signing_hash(&intent), parts.digest);
    assert_eq!(digest_of(&gateway::typed_data(&intent)), parts.digest, "dyn-abi JSON and sol! static struct agree");
    let b6 = &file["buyer"]["rows"][1]["input"]["presented"];
    let transfer = &b6["payload"]["authorization"]["transfer"];
    assert_eq!(transfer["burnIntent"], *json_form);
    for member in ["type", "sourceNetwork", "destinationNetwork", "maxFee"] {
        assert_eq!(b6["payload"][member], payload[member], "{member}");
    }
    assert_eq!(sign(&file, &parts.digest), text(&transfer["signature"]));

    // The salt's preimage read back from the credential, as the pairing's bound reads it.
    let spec = &json_form["spec"];
    let (source, destination) = (text(&payload["sourceNetwork"]), text(&payload["destinationNetwork"]));
    assert_eq!(gateway::account_of(source, text(&spec["sourceSigner"])).as_deref(), Some(input.source_signer));
    assert_eq!(
        gateway::account_of(destination, text(&spec["destinationRecipient"])).as_deref(),
        Some(input.destination_recipient)
    );
    assert_eq!(gateway::amount_of(&spec["value"]).as_deref(), Some(input.amount));
    assert_eq!(gateway::amount_of(&json_form["maxFee"]).as_deref(), Some(input.max_fee));
    assert_eq!(text(&b6["source"]), input.source_depositor);
    let depositor = gateway::address_word(text(&f["payer"])).unwrap();
    assert_eq!(intent.spec.sourceDepositor, depositor);
    assert_eq!(intent.spec.sourceSigner, depositor);
}

#[test]
fn m5_the_request_is_the_references_gateway_preimage() {
    let file = vectors("mpp-charge-usdc-gateway.json");
    let peer = peer();
    let challenge = &file["buyer"]["rows"][1]["input"]["presented"]["challenge"];
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text(&challenge["request"])).unwrap();
    let preimage = terms::rail::evm::request::GatewayPreimage {
        id: hex(&challenge["id"]),
        realm: hex(&challenge["realm"]),
        request_hash: lower(&charge::usdc_request_hash(&bytes)),
        recipient: hex(&request_of(challenge)["recipient"]),
    };
    let request = SigningRequest::GatewayBurnIntent { preimage };
    assert_eq!(request.to_json(), peer["M5"]["request"]);
    assert!(!request.broadcasts());
}

#[test]
fn a_burn_intent_that_is_not_of_its_form_does_not_read() {
    let file = vectors("mpp-charge-usdc-gateway.json");
    let good = file["M5"]["payload"]["authorization"]["transfer"]["burnIntent"].clone();
    let mutations: &[(&str, Value)] = &[
        ("/maxFee", json!("-1")),
        ("/maxBlockHeight", json!(U256::MAX.to_string() + "0")),
        ("/spec/version", json!(4_294_967_296_u64)),
        ("/spec/sourceDomain", json!(-1)),
        ("/spec/salt", json!("0x1234")),
        ("/spec/sourceSigner", json!("f39fd6e51aad88f6f4ce6ab8827279cfffb92266")),
        ("/spec/hookData", json!("0xabc")),
        ("/spec/hookData", json!(format!("0x{}", "00".repeat(gateway::MAX_HOOK_DATA_BYTES + 1)))),
        ("/spec/value", json!(null)),
        ("/spec", json!([])),
    ];
    for (pointer, value) in mutations {
        let mut bad = good.clone();
        *bad.pointer_mut(pointer).unwrap() = value.clone();
        assert!(gateway::burn_intent_of(&bad).is_none(), "{pointer}");
    }
    // A value as a safe integer reads as its decimal, and the intent keeps its digest.
    let mut number = good.clone();
    number["spec"]["value"] = json!(25_000_000);
    assert_eq!(gateway::burn_intent_of(&number), gateway::burn_intent_of(&good));
}
