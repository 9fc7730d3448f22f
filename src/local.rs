//! An in-process secp256k1 signer for EIP-712 requests: a hot key, a test, an example.

use std::fmt;
use std::sync::Arc;

use alloy_primitives::Address;
use k256::ecdsa::SigningKey;

use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};

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
        Ok(EvmKey::from_hex(private_key)?.on_chain(chain_id))
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

/// A secp256k1 key not tied to one chain: the same key pays on every EIP-155 chain, and
/// [`EvmKey::on_chain`] gives its [`LocalSigner`] for one. As a [`Wallet`] it answers a signer for any
/// `eip155:<chain id>` network it is asked about, so one key pays an offer on Base and one on Ethereum alike.
#[derive(Clone)]
pub struct EvmKey {
    key: SigningKey,
    address: String,
}

impl fmt::Debug for EvmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvmKey").field("address", &self.address).finish_non_exhaustive()
    }
}

impl EvmKey {
    /// The key of a 32-byte private key (`0x` hex).
    pub fn from_hex(private_key: &str) -> Result<Self, SignerError> {
        let bytes = crate::codec::hex_bytes(private_key.trim()).ok_or_else(|| SignerError::new("not 0x hex"))?;
        let key = SigningKey::from_slice(&bytes).map_err(|_| SignerError::new("not a secp256k1 private key"))?;
        let address = Address::from_private_key(&key).to_checksum(None);
        Ok(Self { key, address })
    }

    /// The key's EIP-55 address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The key's signer on the chain `chain_id`: its account is `eip155:<chain_id>:<EIP-55 address>`.
    pub fn on_chain(&self, chain_id: u64) -> LocalSigner {
        LocalSigner { key: self.key.clone(), account: format!("eip155:{chain_id}:{}", self.address) }
    }
}

impl Wallet for EvmKey {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        Some(Arc::new(self.on_chain(crate::signer::eip155_chain(network)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

    #[test]
    fn one_key_answers_a_signer_on_every_eip155_chain_and_no_other_network() {
        let key = EvmKey::from_hex(KEY).unwrap();
        assert_eq!(key.address(), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        let base = key.on("eip155:8453").unwrap();
        assert_eq!(base.account(), "eip155:8453:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        assert_eq!(key.on("eip155:1").unwrap().account(), LocalSigner::from_hex(KEY, 1).unwrap().account());
        for other in ["solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "eip155:", "eip155:01", "eip155:-1", "eip155:x"] {
            assert!(key.on(other).is_none(), "{other}");
        }
        assert!(key.any().is_none());
        assert!(EvmKey::from_hex("0x12").is_err());
    }
}
