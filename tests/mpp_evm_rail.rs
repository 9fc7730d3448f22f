//! The EVM rail's facts behind MPP's six EVM charge pairings, from the vector files' own rows
//! (`mpp-charge-evm-{authorization,permit2,transaction,hash}.json`, `mpp-charge-usdc-{evm,gateway}.json`) and, where a
//! file predates the reference's challenge-hash rule, from what the reference builds (`tests/mpp_evm_rail/peer.json`,
//! written by `scripts/peer-mpp-evm-rail.py`).
//!
//! Superseded rows (NOTES.md: trust the peer). The `evm` method's challenge hash is keccak256 of the JSON array
//! `[id, realm]` (mppx 0.13.1 on, integraledger-terms 0.4.0); the authorization and Permit2 files were written when it
//! was keccak256 of id and realm concatenated. So MV5's `expectNonce`, `expectDigest` and `expectSignature`, MV6's and
//! MV6b's `expectDigest` and `expectSignature`, the Permit2 `plant.challengeHashOfPosition1` and both B6 payments hold
//! the old derivation. Each is checked twice here: the rail's EIP-712 machinery reproduces the file's digest and
//! signature from the file's own nonce (which is shown to be the old concatenation), and the rail's challenge hash,
//! digest and signature are the reference's. The files' B6 rows then decline `signed-not-bound` in the pairings, as
//! the reference does.
//!
//! Not run here, as not rail facts: every B2 row and the B6 verdicts (the gate and the pairings), `expectSource`,
//! `expectPairings`, `expectAuthorizationOnly`, `expectSplitsCallTypes`, `expectBound*`, `expectClaims`,
//! `expectNotJcs`, `expectSaltRefusal`, `expectSetRefusal` (the MPP core and the pairings), and the seller's side:
//! MV5's `expectTransferDigest` and `expectAuthorizationUsedTopic`, MV6b's `expectPrimaryIdentity` and
//! `splitOnlyReceipt`, MV12's `expectReference`, `expectSettled`, `expectOtherEmitter`, `expectReverted`, `guard`
//! and `expectBlocked` (receipts and logs a verifier reads).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use alloy_primitives::{Address, B256, Signature, U256, keccak256};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use terms::json::canonical;
use terms::rail::evm::charge::{self, PAYMENT_WITNESS};
use terms::rail::evm::eip3009::{self, Eip3009Token};
use terms::rail::evm::gateway::{self, SaltInput};
use terms::rail::evm::permit2::{self, Permitted, WitnessTransfer};
use terms::rail::evm::request::Call;
use terms::rail::evm::transaction::{self, Fees, Mismatch, SignedTransaction};
use terms::{LocalSigner, Reason, SigningRequest, TypedData};

fn load(path: &str) -> Value {
    let path = format!("{}/tests/{path}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("vector file")).expect("vector JSON")
}

fn vectors(name: &str) -> Value {
    load(&format!("vectors/{name}"))
}

fn peer() -> Value {
    load("mpp_evm_rail/peer.json")
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn b256(v: &Value) -> B256 {
    text(v).parse().unwrap()
}

fn hex(v: &Value) -> String {
    text(v).to_owned()
}

fn lower(b: &B256) -> String {
    format!("0x{}", ::hex::encode(b))
}

/// A row's `{prefix, suffix}` of a truncated value.
fn affixed(b: &B256, row: &Value) -> bool {
    let s = lower(b);
    s.starts_with(text(&row["prefix"])) && s.ends_with(text(&row["suffix"]))
}

fn signer(file: &Value) -> LocalSigner {
    LocalSigner::from_hex(text(&file["fixed"]["payerKey"]), 1).unwrap()
}

fn sign(file: &Value, digest: &B256) -> String {
    signer(file).sign_digest(&digest.0).unwrap()
}

fn recovers(signature: &str, digest: &B256, payer: &str) -> bool {
    let sig: Signature = signature.parse().unwrap();
    sig.recover_address_from_prehash(digest).unwrap() == payer.parse::<Address>().unwrap()
}

/// The decoded request (base64url of JSON) of a challenge.
fn request_of(challenge: &Value) -> Value {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text(&challenge["request"])).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The payer signs typed data: the rail's digest (alloy-dyn-abi from the JSON) and the local key's signature.
fn digest_of(typed: &TypedData) -> B256 {
    typed.signing_hash().expect("typed data hashes")
}

/// The old `evm` challenge hash the files were written with: keccak256 of id and realm concatenated.
fn concatenated(id: &str, realm: &str) -> B256 {
    keccak256(format!("{id}{realm}"))
}

// ---------------------------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------------------------
// mpp/charge/evm/transaction and mpp/charge/evm/hash

struct Mv11 {
    file: Value,
    chain_id: u64,
    call: Call,
    fees: Fees,
}

fn mv11() -> Mv11 {
    let file = vectors("mpp-charge-evm-transaction.json");
    let request: Value = serde_json::from_str(text(&file["fixed"]["R_ENoTypes"])).unwrap();
    let t = &file["MV11"]["transaction"];
    let call = transaction::erc20_transfer(
        text(&request["currency"]),
        text(&request["recipient"]),
        text(&request["amount"]).parse().unwrap(),
    )
    .unwrap();
    assert_eq!(call.to, text(&t["to"]));
    let fees = Fees {
        nonce: t["nonce"].as_u64().unwrap(),
        gas_limit: t["gas"].as_u64().unwrap(),
        max_fee_per_gas: text(&t["maxFeePerGas"]).parse().unwrap(),
        max_priority_fee_per_gas: text(&t["maxPriorityFeePerGas"]).parse().unwrap(),
    };
    let chain_id = t["chainId"].as_u64().unwrap();
    assert_eq!(request["methodDetails"]["chainId"].as_u64(), Some(chain_id));
    Mv11 { file, chain_id, call, fees }
}

/// The Anvil key's signed transaction of a call.
fn signed_raw(m: &Mv11, chain_id: u64, call: &Call, fees: &Fees) -> Vec<u8> {
    let tx = transaction::transaction(chain_id, call, fees).unwrap();
    let signature = sign(&m.file, &transaction::signing_hash(&tx));
    transaction::encode_signed(&tx, &::hex::decode(&signature[2..]).unwrap()).unwrap()
}

#[test]
fn mv11_the_transfer_calldata_and_the_signed_transaction() {
    let m = mv11();
    let mv11 = &m.file["MV11"];
    assert_eq!(m.call.data, text(&mv11["expectCalldata"]));
    let raw = signed_raw(&m, m.chain_id, &m.call, &m.fees);
    assert_eq!(raw.len() as u64, mv11["expectRawLength"].as_u64().unwrap());
    assert_eq!(format!("0x{}", ::hex::encode(Sha256::digest(&raw))), text(&mv11["expectRawSha256"]));
    let signed = SignedTransaction::decode(&raw).unwrap();
    assert_eq!(lower(&signed.hash()), text(&mv11["expectTxHash"]));
    assert_eq!(signed.check(m.chain_id, &m.call, Some(m.fees.nonce)), Ok(()));
    assert_eq!(signed.check(m.chain_id, &m.call, None), Ok(()));
    let payer: Address = text(&m.file["fixed"]["payer"]).parse().unwrap();
    assert_eq!(signed.signature().recover_address_from_prehash(&signed.signing_hash()).unwrap(), payer);
    // H is nowhere in what the payer signs (expectHOccurrences).
    let h = b256(&m.file["buyer"]["rows"][0]["advertised"]);
    let occurrences = raw.windows(32).filter(|w| *w == h.as_slice()).count();
    assert_eq!(occurrences as u64, mv11["expectHOccurrences"].as_u64().unwrap());
    // The signer's answer as hex reads the same.
    let answer = format!("0x{}", ::hex::encode(&raw));
    assert_eq!(SignedTransaction::decode_hex(&answer).unwrap(), signed);
    assert_eq!(SignedTransaction::decode_hex(&answer.to_uppercase().replacen("0X", "0x", 1)).unwrap(), signed);
}

#[test]
fn mv11_the_request_is_the_references_evm_call() {
    let m = mv11();
    let peer = peer();
    for (broadcast, which) in [(false, "transaction"), (true, "hash")] {
        let request = SigningRequest::EvmCall { chain_id: m.chain_id, call: m.call.clone(), broadcast };
        assert_eq!(request.to_json(), peer["MV11"][which], "{which}");
        assert_eq!(serde_json::to_string(&request).unwrap(), serde_json::to_string(&peer["MV11"][which]).unwrap());
        assert_eq!(request.broadcasts(), broadcast);
    }
}

#[test]
fn an_answer_for_another_chain_nonce_token_recipient_or_amount_is_caught() {
    let m = mv11();
    let signed =
        |chain_id, call: &Call, fees: &Fees| SignedTransaction::decode(&signed_raw(&m, chain_id, call, fees)).unwrap();
    let check = |s: &SignedTransaction| s.check(m.chain_id, &m.call, Some(m.fees.nonce));
    assert_eq!(check(&signed(m.chain_id + 1, &m.call, &m.fees)), Err(Mismatch::ChainId));
    assert_eq!(check(&signed(m.chain_id, &m.call, &Fees { nonce: 1, ..m.fees })), Err(Mismatch::Nonce));
    // Without a nonce the buyer named, any nonce is the signer's.
    assert_eq!(signed(m.chain_id, &m.call, &Fees { nonce: 7, ..m.fees }).check(m.chain_id, &m.call, None), Ok(()));
    let amount = U256::from(10_000u64);
    let recipient = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
    let other_recipient =
        transaction::erc20_transfer(&m.call.to, "0x8Ba1f109551bD432803012645Ac136ddd64DBA72", amount).unwrap();
    let other_amount = transaction::erc20_transfer(&m.call.to, recipient, amount + U256::from(1u8)).unwrap();
    let other_token = Call { to: "0x0000000000000000000000000000000000000001".into(), data: m.call.data.clone() };
    for call in [other_recipient, other_amount, other_token] {
        assert_eq!(check(&signed(m.chain_id, &call, &m.fees)), Err(Mismatch::Call), "{call:?}");
    }
    // The destination compares as an address, in any case.
    let lower_case = Call { to: m.call.to.to_lowercase(), data: m.call.data.clone() };
    assert_eq!(signed(m.chain_id, &lower_case, &m.fees).check(m.chain_id, &m.call, None), Ok(()));
    // Each mismatch has its reason in the rail's namespace.
    let codes: Vec<String> = [Mismatch::ChainId, Mismatch::Nonce, Mismatch::Call]
        .into_iter()
        .map(|x| terms::Refusal::evm(x.reason()).code())
        .collect();
    assert_eq!(codes, ["evm/chain-mismatch", "evm/nonce-mismatch", "evm/call-mismatch"]);
    assert_eq!(Mismatch::Call.reason(), Reason::CallMismatch);
}

#[test]
fn a_signed_transaction_that_is_not_one_eip1559_transaction_is_unreadable() {
    let m = mv11();
    let raw = signed_raw(&m, m.chain_id, &m.call, &m.fees);
    let mut trailing = raw.clone();
    trailing.push(0);
    let mut legacy_type = raw.clone();
    legacy_type[0] = 0x01;
    let mut cut = raw.clone();
    cut.truncate(raw.len() - 1);
    let oversized = vec![0x02; transaction::MAX_SIGNED_TRANSACTION_BYTES + 1];
    for bad in [&trailing[..], &legacy_type, &cut, &raw[1..], &[], &[0x02], &oversized] {
        assert_eq!(
            SignedTransaction::decode(bad),
            Err(transaction::Unreadable),
            "{}",
            ::hex::encode(&bad[..bad.len().min(8)])
        );
    }
    for bad in
        ["", "0x", "02f8", "0x0", "0xzz", &format!("0x{}", "00".repeat(transaction::MAX_SIGNED_TRANSACTION_BYTES + 1))]
    {
        assert!(SignedTransaction::decode_hex(bad).is_err(), "{}", &bad[..bad.len().min(8)]);
    }
    // A call that is not an address and hex data builds no transaction; a signature that is not 65 bytes signs none.
    assert!(transaction::transaction(1, &Call { to: "0x12".into(), data: "0x".into() }, &m.fees).is_none());
    assert!(transaction::transaction(1, &Call { to: m.call.to.clone(), data: "0xabc".into() }, &m.fees).is_none());
    let tx = transaction::transaction(m.chain_id, &m.call, &m.fees).unwrap();
    assert!(transaction::encode_signed(&tx, &[0u8; 64]).is_none());
    assert!(transaction::erc20_transfer("0x12", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", U256::ZERO).is_none());
    assert!(transaction::erc20_transfer(&m.call.to, "209693Bc6afc0C5328bA36FaF03C514EF312287C", U256::ZERO).is_none());
}

#[test]
fn mv12_the_broadcast_answer_is_a_32_byte_hash_and_nothing_else() {
    let file = vectors("mpp-charge-evm-hash.json");
    let hash = text(&file["MV12"]["hash"]);
    assert_eq!(transaction::transaction_hash(hash).map(|h| lower(&h)), Some(hash.to_owned()));
    // MV12's hash is MV11's transaction: what the signer broadcast.
    assert_eq!(hash, text(&vectors("mpp-charge-evm-transaction.json")["MV11"]["expectTxHash"]));
    assert!(transaction::transaction_hash(&hash.to_uppercase().replacen("0X", "0x", 1)).is_some());
    let raw = signed_raw(&mv11(), 84532, &mv11().call, &mv11().fees);
    let not_hashes = [
        String::new(),
        hash[2..].to_owned(),
        format!("{hash}00"),
        hash[..65].to_owned(),
        format!("0X{}", &hash[2..]),
        format!("{}g", &hash[..65]),
        format!(" {hash}"),
        format!("0x{}", ::hex::encode(&raw)),
    ];
    for bad in &not_hashes {
        assert_eq!(transaction::transaction_hash(bad), None, "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------------------------
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
