//! XRPL classic addresses: base58 in the XRPL alphabet of a version byte 0, the 20-byte AccountID and a 4-byte
//! checksum, the first 4 bytes of the double SHA-256 of the two.

use sha2::{Digest, Sha256};

/// The longest classic address, in characters.
const MAX_ADDRESS: usize = 35;

fn checksum(payload: &[u8]) -> [u8; 4] {
    let digest = Sha256::digest(Sha256::digest(payload));
    let mut out = [0u8; 4];
    out.copy_from_slice(digest.get(..4).unwrap_or(&[0; 4]));
    out
}

/// The classic address of a 20-byte AccountID.
pub fn encode_account(account_id: &[u8; 20]) -> String {
    let mut payload = Vec::with_capacity(25);
    payload.push(0);
    payload.extend_from_slice(account_id);
    let sum = checksum(&payload);
    payload.extend_from_slice(&sum);
    bs58::encode(payload).with_alphabet(bs58::Alphabet::RIPPLE).into_string()
}

/// The 20-byte AccountID of a classic address, `None` when it does not decode in the XRPL alphabet to 25 bytes of
/// version 0 or its checksum fails.
pub fn account_id(address: &str) -> Option<[u8; 20]> {
    if address.is_empty() || address.len() > MAX_ADDRESS {
        return None;
    }
    let raw = bs58::decode(address).with_alphabet(bs58::Alphabet::RIPPLE).into_vec().ok()?;
    let [0, body @ .., s0, s1, s2, s3] = raw.as_slice() else { return None };
    let id: [u8; 20] = body.try_into().ok()?;
    let mut payload = [0u8; 21];
    payload.get_mut(1..)?.copy_from_slice(&id);
    (checksum(&payload) == [*s0, *s1, *s2, *s3]).then_some(id)
}

/// Whether a text is a classic address whose checksum holds.
pub fn is_address(address: &str) -> bool {
    account_id(address).is_some()
}
