//! An in-process ed25519 signer for Stellar requests (`stellar-auth`): a hot key, a test, an example.

use std::fmt;
use std::sync::Arc;

use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::rail::stellar::{Network, Strkey};
use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};

/// An ed25519 key not tied to one Stellar network. Its [`StellarSigner`] for `stellar:pubnet` or `stellar:testnet`
/// signs `stellar-auth` requests: the ed25519 signature of SHA-256 of the request's `preimage` (a Soroban
/// authorization entry's `HashIdPreimage`), answered as `0x` hex of its 64 bytes. It refuses every other kind.
#[derive(Clone)]
pub struct StellarKey {
    key: SigningKey,
    address: String,
}

impl fmt::Debug for StellarKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StellarKey").field("address", &self.address).finish_non_exhaustive()
    }
}

impl StellarKey {
    /// The key of a 32-byte ed25519 seed (`0x` hex or bare hex).
    pub fn from_seed_hex(seed: &str) -> Result<Self, SignerError> {
        let seed = seed.trim();
        let bytes = hex::decode(seed.strip_prefix("0x").unwrap_or(seed)).map_err(|_| SignerError::new("not hex"))?;
        let seed: [u8; 32] = bytes.try_into().map_err(|_| SignerError::new("not a 32-byte ed25519 seed"))?;
        let key = SigningKey::from_bytes(&seed);
        let address = Strkey::Account(key.verifying_key().to_bytes()).to_text();
        Ok(Self { key, address })
    }

    /// The key's account, a G strkey.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The key's signer on `stellar:pubnet` or `stellar:testnet`; its account is `<network>:<address>`. `None` for
    /// any other network.
    pub fn on_network(&self, network: &str) -> Option<StellarSigner> {
        Network::parse(network)?;
        Some(StellarSigner { key: self.clone(), account: format!("{network}:{}", self.address) })
    }

    /// The 64-byte ed25519 signature of SHA-256 of `preimage`, as a Soroban address credential's signature is.
    pub fn sign_preimage(&self, preimage: &[u8]) -> [u8; 64] {
        self.key.sign(&Sha256::digest(preimage)).to_bytes()
    }
}

impl Wallet for StellarKey {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        Some(Arc::new(self.on_network(network)?))
    }
}

/// A [`StellarKey`] on one network: the [`Signer`] a Stellar pairing's request goes to.
#[derive(Clone, Debug)]
pub struct StellarSigner {
    key: StellarKey,
    account: String,
}

impl StellarSigner {
    fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        let SigningRequest::StellarAuth(fields) = request else {
            return Err(SignerError::new(format!(
                "the local Stellar signer does not sign {} requests",
                request.kind()
            )));
        };
        let text = fields.get("preimage").and_then(Value::as_str).ok_or_else(|| SignerError::new("no preimage"))?;
        let preimage = crate::codec::hex_bytes(text).ok_or_else(|| SignerError::new("the preimage is not 0x hex"))?;
        Ok(Value::String(crate::codec::to_hex(&self.key.sign_preimage(&preimage))))
    }
}

impl Signer for StellarSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = self.answer(request).map(Answer::new);
        Box::pin(async move { answer })
    }
}
