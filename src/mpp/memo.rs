//! What binds a signature to one challenge: the EVM challenge hash and MPP's attribution memo. Both are keccak-256,
//! which the core computes itself (the `sha3` crate), so the core depends on no chain crate.

use serde_json::Value;
use sha3::{Digest, Keccak256};

use crate::codec::hex_bytes;
use crate::json::to_js_string;
use crate::refusal::{Reason, Refusal};

fn keccak(bytes: &[u8]) -> [u8; 32] {
    Keccak256::digest(bytes).into()
}

/// The challenge hash of MPP's EVM charge: keccak-256 of the UTF-8 of `JSON.stringify([id, realm])`, the id and realm
/// framed as a JSON array of two strings (mppx from 0.13.1), so no two pairs share a preimage. The EIP-3009 nonce
/// and the Permit2 witness carry it.
///
/// ```
/// # #[cfg(feature = "mpp")] {
/// let hash = terms::mpp::challenge_hash("ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0.0", "api.seller.example");
/// assert_eq!(hash.len(), 32);
/// # }
/// ```
pub fn challenge_hash(id: &str, realm: &str) -> [u8; 32] {
    let framed = Value::Array(vec![Value::from(id), Value::from(realm)]);
    // Two strings always have a JSON.stringify form.
    keccak(to_js_string(&framed).unwrap_or_default().as_bytes())
}

/// The tag of an attribution memo: keccak-256("mpp"), its first four bytes.
fn tag() -> [u8; 4] {
    let k = keccak(b"mpp");
    [k[0], k[1], k[2], k[3]]
}

/// MPP's 32-byte attribution memo: keccak-256("mpp")[0..4], `0x01`, keccak-256(realm)[0..10], keccak-256(clientId)[0..10]
/// or ten zero bytes, then keccak-256(challengeId)[0..7], each over the string's UTF-8.
pub fn attribution_memo(realm: &str, challenge_id: &str, client_id: Option<&str>) -> [u8; 32] {
    let mut out = [0u8; 32];
    let (head, rest) = out.split_at_mut(4);
    head.copy_from_slice(&tag());
    let (version, rest) = rest.split_at_mut(1);
    version.copy_from_slice(&[0x01]);
    let (server, rest) = rest.split_at_mut(10);
    server.copy_from_slice(keccak(realm.as_bytes()).get(..10).unwrap_or(&[0; 10]));
    let (client, nonce) = rest.split_at_mut(10);
    if let Some(id) = client_id {
        client.copy_from_slice(keccak(id.as_bytes()).get(..10).unwrap_or(&[0; 10]));
    }
    nonce.copy_from_slice(keccak(challenge_id.as_bytes()).get(..7).unwrap_or(&[0; 7]));
    out
}

/// Checks a memo (`0x` and 64 hex digits) against the realm and challenge id: its tag, version, server id and nonce
/// (the client id is not read). `mpp/attribution-malformed` for a memo not of its form, `mpp/attribution-mismatch`
/// for another realm's or challenge's.
pub(crate) fn check_attribution(memo: &str, realm: &str, challenge_id: &str) -> Result<(), Refusal> {
    let got = hex_bytes(memo).filter(|b| b.len() == 32).ok_or(Refusal::mpp(Reason::AttributionMalformed))?;
    let expect = attribution_memo(realm, challenge_id, None);
    if got.get(..15) != expect.get(..15) || got.get(25..) != expect.get(25..) {
        return Err(Refusal::mpp(Reason::AttributionMismatch));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::to_hex;

    #[test]
    fn a_memo_checks_against_its_realm_and_challenge() {
        let memo = to_hex(&attribution_memo("api.seller.example", "id.0", Some("agent")));
        assert_eq!(check_attribution(&memo, "api.seller.example", "id.0"), Ok(()));
        assert_eq!(check_attribution(&memo, "other", "id.0").unwrap_err().code(), "mpp/attribution-mismatch");
        assert_eq!(
            check_attribution(&memo, "api.seller.example", "id.1").unwrap_err().code(),
            "mpp/attribution-mismatch"
        );
        assert_eq!(check_attribution("0x00", "r", "i").unwrap_err().code(), "mpp/attribution-malformed");
        let no_client = attribution_memo("r", "i", None);
        assert_eq!(no_client.get(15..25), Some(&[0u8; 10][..]));
        assert_eq!(no_client[4], 1);
    }
}
