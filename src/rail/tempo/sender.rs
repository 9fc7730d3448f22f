//! Who sent a signed 0x76 transaction, as Tempo recovers it: the signer of the sender's signature over keccak256 of
//! what the sender signed ([`TempoTransaction::sender_signed`]): secp256k1 by recovery (alloy-primitives on k256,
//! the low-s half only), P256 and WebAuthn by the public key they carry, a keychain signature (`0x04`) as the
//! account it names once its inner signature is read. A keychain signature of type `0x03` (refused by Tempo from its
//! T1C hardfork on) and any other type byte are not read, as in the reference.

use alloy_primitives::{Address, B256, Signature, U256, keccak256, uint};

use super::transaction::{TempoTransaction, TxError};

/// secp256k1's 65-byte signature (r, s, v).
const SECP256K1_LENGTH: usize = 65;
/// P256's signature after its type byte: r, s and the 64-byte public key.
const P256_LENGTH: usize = 129;
/// WebAuthn's shortest and longest signature after its type byte.
const WEBAUTHN: std::ops::RangeInclusive<usize> = 128..=2048;
/// P256's type byte.
const P256: u8 = 0x01;
/// WebAuthn's type byte.
const WEBAUTHN_TYPE: u8 = 0x02;
/// The keychain signature's type byte (its second version).
const KEYCHAIN_V2: u8 = 0x04;

/// Half the secp256k1 group order: a signature's `s` above it is not read.
const HALF_ORDER: U256 = uint!(0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0_U256);

impl TempoTransaction {
    /// What the sender signed: `0x76 ‖ rlp(every field before the sender's signature)`; when a fee payer has signed,
    /// `fee_token` written as `0x80` and the fee payer's signature as `0x00`.
    pub fn sender_signed(&self) -> Vec<u8> {
        self.encode_fields(false)
    }

    /// The sender (see the module's note); [`TxError::Malformed`] for a signature Tempo does not read.
    pub fn sender(&self) -> Result<Address, TxError> {
        let digest = keccak256(self.sender_signed());
        let signature = self.signature.as_ref();
        if signature.len() != SECP256K1_LENGTH && signature.first() == Some(&KEYCHAIN_V2) {
            let account = signature.get(1..21).ok_or(TxError::Malformed)?;
            let inner = signature.get(21..).ok_or(TxError::Malformed)?;
            let wrapped = keccak256([&[KEYCHAIN_V2][..], digest.as_slice(), account].concat());
            primitive_signer(inner, &wrapped)?;
            return Ok(Address::from_slice(account));
        }
        primitive_signer(signature, &digest)
    }

    /// keccak256 of what the sender signed and the sender's 20 bytes: the expiring nonce hash of Tempo's channel
    /// reserve.
    pub fn expiring_nonce_hash(&self, sender: Address) -> B256 {
        keccak256([self.sender_signed().as_slice(), sender.as_slice()].concat())
    }
}

/// The signer of a primitive Tempo signature over `digest`.
pub fn primitive_signer(signature: &[u8], digest: &B256) -> Result<Address, TxError> {
    if signature.len() == SECP256K1_LENGTH {
        let (rs, v) = signature.split_at(64);
        let parity = match v.first().copied().ok_or(TxError::Malformed)? {
            v @ (0 | 1) => v == 1,
            v @ (27 | 28) => v == 28,
            v @ 35.. => (v - 35) % 2 == 1,
            _ => return Err(TxError::Malformed),
        };
        let r = U256::from_be_slice(rs.get(..32).ok_or(TxError::Malformed)?);
        let s = U256::from_be_slice(rs.get(32..).ok_or(TxError::Malformed)?);
        if s > HALF_ORDER {
            return Err(TxError::Malformed);
        }
        let sig = Signature::new(r, s, parity);
        return sig.recover_address_from_prehash(digest).map_err(|_| TxError::Malformed);
    }
    let (kind, body) = signature.split_first().ok_or(TxError::Malformed)?;
    let key = match *kind {
        P256 if body.len() == P256_LENGTH => body.get(64..128),
        WEBAUTHN_TYPE if WEBAUTHN.contains(&body.len()) => body.get(body.len() - 64..),
        _ => None,
    };
    key.map(|xy| Address::from_word(keccak256(xy))).ok_or(TxError::Malformed)
}
