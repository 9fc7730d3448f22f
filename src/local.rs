//! An in-process secp256k1 signer for EIP-712 requests: a hot key, a test, an example.

use std::fmt;

use alloy_primitives::Address;
use k256::ecdsa::SigningKey;

use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest};

/// A signer holding one secp256k1 key. It signs `eip712` requests (and `batch` requests of them, in order) and
/// refuses every other kind.
pub struct LocalSigner {
    key: SigningKey,
    account: String,
}

impl fmt::Debug for LocalSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSigner").field("account", &self.account).finish_non_exhaustive()
    }
}

impl LocalSigner {
    /// A signer for a 32-byte private key (`0x` hex) on the chain `chain_id`; its account is
    /// `eip155:<chain_id>:<EIP-55 address>`.
    pub fn from_hex(private_key: &str, chain_id: u64) -> Result<Self, SignerError> {
        let bytes = crate::codec::hex_bytes(private_key).ok_or_else(|| SignerError::new("not 0x hex"))?;
        let key = SigningKey::from_slice(&bytes).map_err(|_| SignerError::new("not a secp256k1 private key"))?;
        let address = Address::from_private_key(&key);
        Ok(Self { key, account: format!("eip155:{chain_id}:{}", address.to_checksum(None)) })
    }

    /// The key's address.
    pub fn address(&self) -> Address {
        Address::from_private_key(&self.key)
    }

    /// A 65-byte `r ‖ s ‖ v` signature (v = 27 or 28) over a 32-byte digest, as `0x` hex.
    pub fn sign_digest(&self, digest: &[u8; 32]) -> Result<String, SignerError> {
        let (signature, recovery) = self.key.sign_prehash_recoverable(digest).map_err(SignerError::new)?;
        let mut bytes = signature.to_bytes().to_vec();
        bytes.push(27 + recovery.to_byte());
        Ok(crate::codec::to_hex(&bytes))
    }

    fn answer(&self, request: &SigningRequest) -> Result<serde_json::Value, SignerError> {
        match request {
            SigningRequest::Eip712 { typed_data } => {
                let digest = typed_data.signing_hash().ok_or_else(|| SignerError::new("typed data does not hash"))?;
                Ok(serde_json::Value::String(self.sign_digest(&digest.0)?))
            }
            SigningRequest::Batch { requests } => {
                requests.iter().map(|r| self.answer(r)).collect::<Result<Vec<_>, _>>().map(serde_json::Value::Array)
            }
            other => Err(SignerError::new(format!("the local signer does not sign {} requests", other.kind()))),
        }
    }
}

impl Signer for LocalSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = self.answer(request).map(Answer::new);
        Box::pin(async move { answer })
    }
}
