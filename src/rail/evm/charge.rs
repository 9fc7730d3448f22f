//! The values EVM charge methods derive from a challenge's plain strings, which the signed payment then carries:
//! the `evm` method's challenge hash (the EIP-3009 nonce and the Permit2 witness's `challengeHash`), and the `usdc`
//! method's request hash and EIP-3009 nonce. The rail knows no challenge: the id, the realm and the request bytes
//! are handed in as the seller wrote them.

use alloy_primitives::{B256, keccak256};
use serde_json::{Map, Value};

use super::permit2::Witness;
use super::typed_data::TypedField;
use crate::codec::to_hex;
use crate::json::{canonical, to_js_string};

/// The name of the witness struct of the `evm` method's Permit2 credential.
pub const PAYMENT_WITNESS: &str = "PaymentWitness";

/// The `evm` method's challenge hash: keccak256 of the UTF-8 of `JSON.stringify([id, realm])`, the id and the
/// realm framed as a JSON array of two strings (mppx 0.13.1 on), so that no two pairs share a preimage. It is the
/// nonce of the method's EIP-3009 authorization and the `challengeHash` of its Permit2 witness.
pub fn challenge_hash(id: &str, realm: &str) -> B256 {
    let pair = Value::Array(vec![Value::from(id), Value::from(realm)]);
    // Two strings are two levels deep, far within what the writer takes: it always writes them.
    keccak256(to_js_string(&pair).unwrap_or_default().as_bytes())
}

/// The witness of the `evm` method's Permit2 credential, `PaymentWitness(bytes32 challengeHash,string externalId)`:
/// the challenge hash and the request's `externalId` (the empty string when it has none).
pub fn payment_witness(challenge_hash: &B256, external_id: &str) -> Witness {
    let mut value = Map::with_capacity(2);
    value.insert("challengeHash".into(), to_hex(challenge_hash.as_slice()).into());
    value.insert("externalId".into(), external_id.into());
    Witness {
        fields: vec![TypedField::new("challengeHash", "bytes32"), TypedField::new("externalId", "string")],
        value,
    }
}

/// The `usdc` method's request hash: keccak256 of the challenge's request bytes as received (the base64url-decoded
/// `request`, which the protocol has checked is the RFC 8785 form of its own parse).
pub fn usdc_request_hash(request: &[u8]) -> B256 {
    keccak256(request)
}

/// keccak256 of the UTF-8 of the RFC 8785 form of a map of strings.
pub(crate) fn keccak_jcs(members: &[(&str, &str)]) -> B256 {
    let map: Map<String, Value> = members.iter().map(|(k, v)| ((*k).to_owned(), Value::from(*v))).collect();
    // A flat map of strings always has an RFC 8785 form.
    keccak256(canonical(&Value::Object(map)).unwrap_or_default().as_bytes())
}

/// The `usdc` method's EIP-3009 nonce: keccak256 of the RFC 8785 form of `{id, method: "usdc", realm, intent:
/// "charge", requestHash}`, the request hash as `0x` and lower-case hex.
pub fn usdc_nonce(id: &str, realm: &str, request_hash: &B256) -> B256 {
    let request_hash = to_hex(request_hash.as_slice());
    keccak_jcs(&[
        ("id", id),
        ("method", "usdc"),
        ("realm", realm),
        ("intent", "charge"),
        ("requestHash", &request_hash),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_hash_frames_id_and_realm_as_a_json_array() {
        // The JSON framing is not the concatenation the method's first draft hashed, and escapes what JSON escapes.
        let (id, realm) = ("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0.0", "api.seller.example");
        assert_eq!(challenge_hash(id, realm), keccak256(format!("[\"{id}\",\"{realm}\"]")));
        assert_ne!(challenge_hash(id, realm), keccak256(format!("{id}{realm}")));
        assert_eq!(challenge_hash("a\"b", "c\nd"), keccak256("[\"a\\\"b\",\"c\\nd\"]"));
        assert_ne!(challenge_hash("ab", "c"), challenge_hash("a", "bc"));
    }

    #[test]
    fn the_usdc_nonce_is_the_keccak_of_its_sorted_members() {
        let h = B256::repeat_byte(0xAB);
        let text = format!(
            "{{\"id\":\"i\",\"intent\":\"charge\",\"method\":\"usdc\",\"realm\":\"r\",\"requestHash\":\"0x{}\"}}",
            "ab".repeat(32)
        );
        assert_eq!(usdc_nonce("i", "r", &h), keccak256(text));
    }

    #[test]
    fn the_payment_witness_writes_the_hash_in_lower_case_hex() {
        let w = payment_witness(&B256::repeat_byte(0xAB), "");
        assert_eq!(w.value["challengeHash"], format!("0x{}", "ab".repeat(32)));
        assert_eq!(w.value["externalId"], "");
        assert_eq!(
            w.fields.iter().map(|f| (f.name.as_ref(), f.ty.as_ref())).collect::<Vec<_>>(),
            [("challengeHash", "bytes32"), ("externalId", "string")]
        );
    }
}
