#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The local ed25519 signer against x402-exact-solana.json: the payer's seed signs V2's message to the signature in
//! V2's wire, the fee payer's seed to the one in V4's landed wire; `ed25519-raw` for another key is refused.

use base64::Engine as _;
use serde_json::{Value, json};
use terms::rail::solana::decode;
use terms::{Signer, SigningRequest, Wallet};
use terms::{SolanaKey, SolanaSigner};

fn vectors() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/x402-exact-solana.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn wire(v: &Value) -> terms::rail::solana::Transaction {
    decode(&base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap()).unwrap()
}

fn request(value: Value) -> SigningRequest {
    serde_json::from_value(value).unwrap()
}

fn signer(v: &Value, seed: &str) -> SolanaSigner {
    let key = SolanaKey::from_seed_hex(v["fixed"][seed].as_str().unwrap()).unwrap();
    key.on_network(v["fixed"]["option"]["network"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn the_seeds_sign_the_vectors_wires() {
    let v = vectors();
    let fixed = &v["fixed"];
    let payer = signer(&v, "payerSeed");
    let network = fixed["option"]["network"].as_str().unwrap();
    assert_eq!(payer.account(), format!("{network}:{}", fixed["payer"].as_str().unwrap()));
    let tx = wire(&v["V2"]["wireBase64"]);
    let message = format!("0x{}", hex::encode(&tx.message));
    let answer = payer.sign(&request(json!({"kind": "solana-message", "message": message}))).await.unwrap();
    assert_eq!(answer.as_json(), &Value::String(format!("0x{}", hex::encode(tx.signatures[1]))));
    // The fee payer's seed gives the signature V4's landed wire holds in slot 0.
    let fee_payer = signer(&v, "feePayerSeed");
    let landed = wire(&v["V4"]["landedWireBase64"]);
    assert_eq!(landed.message, tx.message);
    let answer = fee_payer.sign(&request(json!({"kind": "solana-message", "message": message}))).await.unwrap();
    assert_eq!(answer.as_json(), &Value::String(format!("0x{}", hex::encode(landed.signatures[0]))));
}

#[tokio::test]
async fn ed25519_raw_answers_base58_for_its_own_key_only() {
    let v = vectors();
    let fixed = &v["fixed"];
    let payer = signer(&v, "payerSeed");
    let tx = wire(&v["V2"]["wireBase64"]);
    let message = format!("0x{}", hex::encode(&tx.message));
    let raw = json!({"kind": "ed25519-raw", "message": message, "signer": fixed["payer"]});
    let answer = payer.sign(&request(raw.clone())).await.unwrap();
    let signature = bs58::decode(answer.as_str().unwrap()).into_vec().unwrap();
    assert_eq!(signature, tx.signatures[1]);
    // A batch answers in order.
    let batch = json!({"kind": "batch", "requests": [{"kind": "solana-message", "message": message}, raw]});
    let answers = payer.sign(&request(batch)).await.unwrap();
    assert_eq!(answers.as_json().as_array().unwrap().len(), 2);
    assert_eq!(answers.as_json()[1], *answer.as_json());
    // Inside a batch (a batch-settlement opening) the solana-message is answered in base58 too.
    let first = bs58::decode(answers.as_json()[0].as_str().unwrap()).into_vec().unwrap();
    assert_eq!(first, tx.signatures[1]);
    // Another key's ed25519-raw, a message that is not hex, and an EVM request are refused.
    let other = json!({"kind": "ed25519-raw", "message": message, "signer": fixed["feePayer"]});
    assert!(payer.sign(&request(other)).await.is_err());
    assert!(payer.sign(&request(json!({"kind": "solana-message", "message": "zz"}))).await.is_err());
    assert!(payer.sign(&request(json!({"kind": "erc7710"}))).await.is_err());
}

#[test]
fn the_key_pays_on_solana_networks_only() {
    let v = vectors();
    let key = SolanaKey::from_seed_hex(v["fixed"]["payerSeed"].as_str().unwrap()).unwrap();
    assert_eq!(key.address(), v["fixed"]["payer"].as_str().unwrap());
    assert!(key.on(v["fixed"]["option"]["network"].as_str().unwrap()).is_some());
    for other in ["eip155:8453", "solana:", "solana:not-base58!", "solana"] {
        assert!(key.on(other).is_none(), "{other}");
    }
    assert!(SolanaKey::from_seed_hex("0x12").is_err());
}
