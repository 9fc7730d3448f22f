//! `mpp/charge/evm/permit2`: MV6, MV6b, the plant and B6.

use alloy_primitives::{Address, B256, U256, keccak256};
use base64::Engine as _;
use serde_json::{Value, json};
use terms::TypedData;
use terms::rail::evm::charge::{self, PAYMENT_WITNESS};
use terms::rail::evm::permit2::{self, Permitted, WitnessTransfer};

use super::{affixed, b256, concatenated, digest_of, hex, lower, peer, recovers, request_of, sign, text, vectors};

// mpp/charge/evm/permit2

/// The Permit2 file's challenge (its B6 row's) with another request, and that request.
fn permit2_challenge(file: &Value, request: Option<&str>) -> (Value, Value) {
    let mut challenge = file["buyer"]["rows"][1]["input"]["presented"]["challenge"].clone();
    if let Some(r) = request {
        challenge["request"] = json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r));
    }
    let request = request_of(&challenge);
    (challenge, request)
}

/// MV6 (no splits) or MV6b (splits): the transfers, primary first, and the witness transfer's typed data for a
/// challenge hash.
fn permit2_typed(file: &Value, request: &Value, transfers: &[(String, U256)], challenge_hash: &B256) -> TypedData {
    let currency = text(&request["currency"]);
    let details = &request["methodDetails"];
    let permitted: Vec<Permitted<'_>> =
        transfers.iter().map(|(_, amount)| Permitted { token: currency, amount: *amount }).collect();
    let expires = vectors("mpp-charge-usdc-evm.json")["fixed"]["expiresUnix"].as_u64().unwrap();
    let transfer = WitnessTransfer {
        chain_id: details["chainId"].as_u64().unwrap(),
        permit2: text(&details["permit2Address"]),
        permitted: &permitted,
        batch: details.get("splits").is_some(),
        spender: text(&file["fixed"]["spender"]),
        nonce: U256::from_be_bytes(challenge_hash.0),
        deadline: expires,
    };
    let external_id = request.get("externalId").and_then(Value::as_str).unwrap_or("");
    let witness = charge::payment_witness(challenge_hash, external_id);
    permit2::witness_typed_data(&transfer, PAYMENT_WITNESS, &witness).unwrap()
}

fn single_transfer(request: &Value) -> Vec<(String, U256)> {
    vec![(hex(&request["recipient"]), text(&request["amount"]).parse().unwrap())]
}

fn batch_transfers(file: &Value) -> Vec<(String, U256)> {
    let details = file["MV6b"]["expectTransferDetails"].as_array().unwrap();
    details.iter().map(|t| (hex(&t["to"]), text(&t["requestedAmount"]).parse().unwrap())).collect()
}

#[test]
fn mv6_the_single_witness_transfer_from_the_files_challenge_hash() {
    let file = vectors("mpp-charge-evm-permit2.json");
    let mv6 = &file["MV6"];
    let (challenge, request) = permit2_challenge(&file, None);
    let old = concatenated(text(&challenge["id"]), text(&challenge["realm"]));
    let typed = permit2_typed(&file, &request, &single_transfer(&request), &old);
    let digest = digest_of(&typed);
    assert_eq!(lower(&digest), text(&mv6["expectDigest"]));
    let parts = permit2::eip712_parts(&typed).unwrap();
    assert_eq!(parts.digest, digest);
    assert!(affixed(&parts.domain_separator, &mv6["expectDomainSeparator"]));
    assert_eq!(sign(&file, &digest), text(&mv6["expectSignature"]));
}

#[test]
fn mv6_the_specs_literal_witness_string_is_not_what_is_signed() {
    // The draft's literal type string has a space after the comma: its type hash and digest are the row's, and not
    // the canonical EIP-712 encoding the rail signs.
    let file = vectors("mpp-charge-evm-permit2.json");
    let mv6 = &file["MV6"];
    let literal = text(&mv6["literalWitnessString"]);
    let stub = "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";
    let literal_type_hash = keccak256(format!("{stub}{literal}"));
    assert!(affixed(&literal_type_hash, &mv6["expectLiteralTypeHash"]));
    let (challenge, request) = permit2_challenge(&file, None);
    let old = concatenated(text(&challenge["id"]), text(&challenge["realm"]));
    let typed = permit2_typed(&file, &request, &single_transfer(&request), &old);
    let parts = permit2::eip712_parts(&typed).unwrap();
    assert_ne!(parts.type_hash, literal_type_hash);
    // The literal's digest, every type hash taken from the literal itself.
    let witness_type =
        &literal[literal.find(")PaymentWitness(").unwrap() + 1..literal.find(")TokenPermissions(").unwrap() + 1];
    let word = |u: U256| B256::from(u.to_be_bytes::<32>());
    let token: Address = text(&request["currency"]).parse().unwrap();
    let permissions = keccak256(
        [keccak256("TokenPermissions(address token,uint256 amount)"), token.into_word(), word(U256::from(10_000u64))]
            .concat(),
    );
    let witness = keccak256([keccak256(witness_type), old, keccak256("")].concat());
    let spender: Address = text(&file["fixed"]["spender"]).parse().unwrap();
    let deadline = word(U256::from(vectors("mpp-charge-usdc-evm.json")["fixed"]["expiresUnix"].as_u64().unwrap()));
    let hashed = keccak256([literal_type_hash, permissions, spender.into_word(), old, deadline, witness].concat());
    let literal_digest = keccak256([&[0x19, 0x01][..], parts.domain_separator.as_slice(), hashed.as_slice()].concat());
    assert!(affixed(&literal_digest, &mv6["expectLiteralDigest"]));
    assert_ne!(literal_digest, parts.digest);
}

#[test]
fn mv6b_the_batch_witness_transfer_from_the_files_challenge_hash() {
    let file = vectors("mpp-charge-evm-permit2.json");
    let mv6b = &file["MV6b"];
    let (challenge, request) = permit2_challenge(&file, Some(text(&file["fixed"]["R_E6b"])));
    let transfers = batch_transfers(&file);
    // The primary transfer first, then the split: the amounts add up to the request's.
    assert_eq!(transfers[0].0, text(&request["recipient"]));
    assert_eq!(transfers[1].0, text(&request["methodDetails"]["splits"][0]["recipient"]));
    assert_eq!(transfers.iter().map(|t| t.1).sum::<U256>(), text(&request["amount"]).parse::<U256>().unwrap());
    let old = concatenated(text(&challenge["id"]), text(&challenge["realm"]));
    let typed = permit2_typed(&file, &request, &transfers, &old);
    assert_eq!(typed.primary_type, "PermitBatchWitnessTransferFrom");
    let digest = digest_of(&typed);
    assert_eq!(lower(&digest), text(&mv6b["expectDigest"]));
    let parts = permit2::eip712_parts(&typed).unwrap();
    assert_eq!(parts.digest, digest);
    assert_eq!(lower(&parts.type_hash), text(&mv6b["expectTypeHash"]));
    assert_eq!(sign(&file, &digest), text(&mv6b["expectSignature"]));
}

#[test]
fn mv6_superseded_the_witness_carries_the_json_framed_challenge_hash() {
    let file = vectors("mpp-charge-evm-permit2.json");
    let peer = peer();
    for (row, splits) in [("MV6", None), ("MV6b", Some(text(&file["fixed"]["R_E6b"])))] {
        let (challenge, request) = permit2_challenge(&file, splits);
        let hash = charge::challenge_hash(text(&challenge["id"]), text(&challenge["realm"]));
        assert_eq!(lower(&hash), text(&peer["challengeHash"]));
        let transfers = if splits.is_some() { batch_transfers(&file) } else { single_transfer(&request) };
        let typed = permit2_typed(&file, &request, &transfers, &hash);
        assert_eq!(serde_json::to_value(&typed).unwrap(), peer[row]["typedData"], "{row}");
        let digest = digest_of(&typed);
        assert_eq!(lower(&digest), text(&peer[row]["digest"]), "{row}");
        assert_eq!(permit2::eip712_parts(&typed).unwrap().digest, digest, "{row}");
        assert_eq!(sign(&file, &digest), text(&peer[row]["signature"]), "{row}");
    }
}

#[test]
fn plant_superseded_the_challenge_at_position_1_hashes_apart() {
    let file = vectors("mpp-charge-evm-permit2.json");
    let peer = peer();
    let (challenge, _) = permit2_challenge(&file, None);
    let (id, realm) = (text(&challenge["id"]), text(&challenge["realm"]));
    let id1 = format!("{}.1", &id[..id.rfind('.').unwrap()]);
    assert_eq!(lower(&concatenated(&id1, realm)), text(&file["plant"]["challengeHashOfPosition1"]));
    let hash1 = charge::challenge_hash(&id1, realm);
    assert_eq!(lower(&hash1), text(&peer["challengeHashOfPosition1"]));
    assert_ne!(hash1, charge::challenge_hash(id, realm));
}

#[test]
fn b6_permit2_the_payment_is_signed_by_the_payer_over_the_old_witness() {
    let file = vectors("mpp-charge-evm-permit2.json");
    let presented = &file["buyer"]["rows"][1]["input"]["presented"];
    let p = &presented["payload"];
    let request = request_of(&presented["challenge"]);
    let witness_hash = b256(&p["witness"]["challengeHash"]);
    assert_eq!(text(&p["permit"]["nonce"]).parse::<U256>().unwrap(), U256::from_be_bytes(witness_hash.0));
    let transfers: Vec<(String, U256)> = p["transferDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (hex(&t["to"]), text(&t["requestedAmount"]).parse().unwrap()))
        .collect();
    let typed = permit2_typed(&file, &request, &transfers, &witness_hash);
    assert_eq!(typed.message["deadline"], p["permit"]["deadline"]);
    assert!(recovers(text(&p["signature"]), &digest_of(&typed), text(&file["fixed"]["payer"])));
    let challenge = &presented["challenge"];
    assert_ne!(witness_hash, charge::challenge_hash(text(&challenge["id"]), text(&challenge["realm"])));
}

#[test]
fn the_witness_transfer_builder_refuses_malformed_shapes() {
    let token = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    let one = [Permitted { token, amount: U256::from(1u8) }];
    let many = vec![Permitted { token, amount: U256::from(1u8) }; permit2::MAX_BATCH + 1];
    let base = WitnessTransfer {
        chain_id: 84532,
        permit2: permit2::PERMIT2,
        permitted: &one,
        batch: false,
        spender: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        nonce: U256::ZERO,
        deadline: 1,
    };
    let witness = charge::payment_witness(&B256::ZERO, "");
    let refused = |t: &WitnessTransfer<'_>, name: &str| {
        permit2::witness_typed_data(t, name, &witness).map(|_| ()).map_err(|r| r.code())
    };
    assert_eq!(refused(&base, PAYMENT_WITNESS), Ok(()));
    assert_eq!(refused(&WitnessTransfer { permitted: &one, batch: true, ..base.clone() }, PAYMENT_WITNESS), Ok(()));
    let network = Err("evm/network-malformed".to_owned());
    assert_eq!(refused(&WitnessTransfer { chain_id: 0, ..base.clone() }, PAYMENT_WITNESS), network);
    assert_eq!(refused(&WitnessTransfer { chain_id: 1 << 53, ..base.clone() }, PAYMENT_WITNESS), network);
    let bad = Err("evm/field-malformed".to_owned());
    assert_eq!(refused(&WitnessTransfer { permitted: &[], batch: true, ..base.clone() }, PAYMENT_WITNESS), bad);
    assert_eq!(refused(&WitnessTransfer { permitted: &many, batch: true, ..base.clone() }, PAYMENT_WITNESS), bad);
    assert_eq!(refused(&WitnessTransfer { permitted: &many[..2], ..base.clone() }, PAYMENT_WITNESS), bad);
    assert_eq!(refused(&WitnessTransfer { permit2: "0x00", ..base.clone() }, PAYMENT_WITNESS), bad);
    assert_eq!(refused(&WitnessTransfer { spender: "spender", ..base.clone() }, PAYMENT_WITNESS), bad);
    for name in
        ["paymentWitness", "TokenPermissions", "PermitWitness", "", "Payment Witness", &format!("P{}", "a".repeat(64))]
    {
        assert_eq!(refused(&base, name), bad, "{name}");
    }
}
