//! `mpp/charge/evm/authorization`: MV5 and B6.

use alloy_primitives::{B256, U256};

use super::{affixed, b256};
use super::{concatenated, digest_of, lower, peer, recovers, request_of, sign, text, vectors};
use serde_json::Value;
use terms::TypedData;
use terms::rail::evm::charge;
use terms::rail::evm::eip3009::{self, Eip3009Token};

// mpp/charge/evm/authorization

/// MV5's authorization from the challenge of the file's B6 row, the token domain and the challenge's expiry.
fn mv5_typed(file: &Value, nonce: &B256) -> TypedData {
    let challenge = &file["buyer"]["rows"][1]["input"]["presented"]["challenge"];
    let request = request_of(challenge);
    let usdc = vectors("mpp-charge-usdc-evm.json");
    assert_eq!(challenge["expires"], usdc["fixed"]["expires"]);
    let token = Eip3009Token {
        name: text(&file["fixed"]["tokenDomain"]["name"]),
        version: text(&file["fixed"]["tokenDomain"]["version"]),
        chain_id: request["methodDetails"]["chainId"].as_u64().unwrap(),
        address: text(&request["currency"]),
    };
    let (payer, to, amount) = (text(&file["fixed"]["payer"]), text(&request["recipient"]), text(&request["amount"]));
    let valid_before = usdc["fixed"]["expiresUnix"].as_u64().unwrap();
    eip3009::transfer_authorization(token, payer, to, amount, valid_before, nonce).unwrap()
}

#[test]
fn mv5_the_authorization_digest_domain_and_signature_from_the_files_nonce() {
    let file = vectors("mpp-charge-evm-authorization.json");
    let mv5 = &file["MV5"];
    let nonce = b256(&mv5["expectNonce"]);
    let typed = mv5_typed(&file, &nonce);
    assert_eq!(typed.message["validBefore"], mv5["expectValidBefore"]);
    assert_eq!(typed.message["nonce"], mv5["expectNonce"]);
    let digest = digest_of(&typed);
    assert_eq!(lower(&digest), text(&mv5["expectDigest"]));
    let parts = eip3009::eip712_parts(&typed).unwrap();
    assert_eq!(parts.digest, digest, "sol! static struct and dyn-abi JSON agree");
    assert!(affixed(&parts.domain_separator, &mv5["expectDomainSeparator"]));
    assert_eq!(sign(&file, &digest), text(&mv5["expectSignature"]));
}

#[test]
fn mv5_superseded_the_nonce_is_the_json_framed_challenge_hash() {
    // The file's nonce (and mpp-challenge.json's MV2) is the concatenation; the reference frames [id, realm].
    let file = vectors("mpp-charge-evm-authorization.json");
    let peer = peer();
    let challenge = &file["buyer"]["rows"][1]["input"]["presented"]["challenge"];
    let (id, realm) = (text(&challenge["id"]), text(&challenge["realm"]));
    assert_eq!(lower(&concatenated(id, realm)), text(&file["MV5"]["expectNonce"]));
    let hash = charge::challenge_hash(id, realm);
    assert_eq!(lower(&hash), text(&peer["challengeHash"]));
    assert_ne!(lower(&hash), text(&file["MV5"]["expectNonce"]));
    // Another realm gives another hash: the pairing's bound refuses it (`mpp/nonce-not-challenge-hash`).
    let other = charge::challenge_hash(id, text(&file["fixed"]["otherRealm"]));
    assert_eq!(lower(&other), text(&peer["challengeHashOtherRealm"]));
    assert_ne!(other, hash);
    // The reference's build: the same typed data (its integers written as decimal strings), digest and signature.
    let typed = mv5_typed(&file, &hash);
    assert_eq!(serde_json::to_value(&typed).unwrap(), peer["MV5"]["typedData"]);
    let digest = digest_of(&typed);
    assert_eq!(lower(&digest), text(&peer["MV5"]["digest"]));
    assert_eq!(sign(&file, &digest), text(&peer["MV5"]["signature"]));
}

#[test]
fn b6_authorization_the_payment_is_signed_by_the_payer_over_the_old_nonce() {
    let file = vectors("mpp-charge-evm-authorization.json");
    let presented = &file["buyer"]["rows"][1]["input"]["presented"];
    let p = &presented["payload"];
    let request = request_of(&presented["challenge"]);
    let token = Eip3009Token {
        name: "USDC",
        version: "2",
        chain_id: request["methodDetails"]["chainId"].as_u64().unwrap(),
        address: text(&request["currency"]),
    };
    assert_eq!(token.name, text(&file["fixed"]["tokenDomain"]["name"]));
    assert_eq!(token.version, text(&file["fixed"]["tokenDomain"]["version"]));
    assert_eq!(p["validAfter"], "0");
    let valid_before = text(&p["validBefore"]).parse().unwrap();
    let nonce = b256(&p["nonce"]);
    let typed = eip3009::transfer_authorization(
        token,
        text(&p["from"]),
        text(&p["to"]),
        text(&p["value"]),
        valid_before,
        &nonce,
    )
    .unwrap();
    assert!(recovers(text(&p["signature"]), &digest_of(&typed), text(&file["fixed"]["payer"])));
    // Its nonce is not the rail's challenge hash of its echoed challenge: the reference's B6 verdict.
    let challenge = &presented["challenge"];
    assert_ne!(nonce, charge::challenge_hash(text(&challenge["id"]), text(&challenge["realm"])));
}

#[test]
fn the_authorization_builder_refuses_what_the_rail_cannot_sign() {
    let token = Eip3009Token {
        name: "USDC",
        version: "2",
        chain_id: 84532,
        address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    };
    let (a, b, n) =
        ("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", B256::ZERO);
    let code = |r: Result<TypedData, terms::Refusal>| r.unwrap_err().code();
    assert_eq!(
        code(eip3009::transfer_authorization(Eip3009Token { chain_id: 0, ..token }, a, b, "1", 1, &n)),
        "evm/network-malformed"
    );
    let past = Eip3009Token { chain_id: 1 << 53, ..token };
    assert_eq!(code(eip3009::transfer_authorization(past, a, b, "1", 1, &n)), "evm/network-malformed");
    for amount in ["", "-1", "1.0", "0x10", &"1".repeat(79), &U256::MAX.to_string().replace('5', "6")] {
        assert_eq!(
            code(eip3009::transfer_authorization(token, a, b, amount, 1, &n)),
            "evm/amount-malformed",
            "{amount}"
        );
    }
    assert_eq!(code(eip3009::transfer_authorization(token, "0x1234", b, "1", 1, &n)), "evm/field-malformed");
    let bad_token = Eip3009Token { address: "036CbD53842c5426634e7929541eC2318f3dCF7e", ..token };
    assert_eq!(code(eip3009::transfer_authorization(bad_token, a, b, "1", 1, &n)), "evm/field-malformed");
    assert!(eip3009::transfer_authorization(token, a, b, &U256::MAX.to_string(), u64::MAX, &n).is_ok());
}
