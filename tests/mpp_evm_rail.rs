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

use alloy_primitives::{Address, B256, Signature, keccak256};
use base64::Engine as _;
use serde_json::Value;
use terms::{LocalSigner, TypedData};

#[path = "mpp_evm_rail/authorization.rs"]
mod authorization;
#[path = "mpp_evm_rail/call.rs"]
mod call;
#[path = "mpp_evm_rail/permit2.rs"]
mod permit2;
#[path = "mpp_evm_rail/usdc.rs"]
mod usdc;

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
