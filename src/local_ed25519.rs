//! An in-process ed25519 signer for Solana requests (`solana-message`, `ed25519-raw`): a hot key, a test, an example.

use std::fmt;
use std::sync::Arc;

use ed25519_dalek::{Signer as _, SigningKey};
use serde_json::Value;

use crate::rail::solana::Key;
use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};

/// An ed25519 key not tied to one cluster. Its [`SolanaSigner`] for a `solana:<genesis>` network signs
/// `solana-message` requests (answered as `0x` hex of the 64-byte signature), `ed25519-raw` requests naming this key
/// as `signer` (answered in base58), and `batch` requests of them in order; it refuses every other kind.
#[derive(Clone)]
pub struct SolanaKey {
    key: SigningKey,
    address: String,
}

impl fmt::Debug for SolanaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SolanaKey").field("address", &self.address).finish_non_exhaustive()
    }
}

impl SolanaKey {
    /// The key of a 32-byte ed25519 seed (`0x` hex or bare hex).
    pub fn from_seed_hex(seed: &str) -> Result<Self, SignerError> {
        let seed = seed.trim();
        let bytes = hex::decode(seed.strip_prefix("0x").unwrap_or(seed)).map_err(|_| SignerError::new("not hex"))?;
        let seed: [u8; 32] = bytes.try_into().map_err(|_| SignerError::new("not a 32-byte ed25519 seed"))?;
        let key = SigningKey::from_bytes(&seed);
        let address = Key(key.verifying_key().to_bytes()).to_base58();
        Ok(Self { key, address })
    }

    /// The key's base58 public key, its Solana address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The key's signer on the network `network` (`solana:<genesis hash prefix>`); its account is
    /// `<network>:<address>`. `None` for a network that is not a Solana one.
    pub fn on_network(&self, network: &str) -> Option<SolanaSigner> {
        let reference = network.strip_prefix("solana:")?;
        let well_formed = (1..=32).contains(&reference.len()) && reference.bytes().all(|c| c.is_ascii_alphanumeric());
        well_formed.then(|| SolanaSigner { key: self.clone(), account: format!("{network}:{}", self.address) })
    }

    /// The 64-byte ed25519 signature of `message`.
    pub fn sign_bytes(&self, message: &[u8]) -> [u8; 64] {
        self.key.sign(message).to_bytes()
    }
}

impl Wallet for SolanaKey {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        Some(Arc::new(self.on_network(network)?))
    }
}

/// A [`SolanaKey`] on one network: the [`Signer`] a Solana pairing's request goes to.
#[derive(Clone, Debug)]
pub struct SolanaSigner {
    key: SolanaKey,
    account: String,
}

/// The bytes of a request's `message` member, `0x` lowercase hex as the gate hands byte strings to a signer.
fn message_of(request: &SigningRequest) -> Result<Vec<u8>, SignerError> {
    let fields = request.fields().ok_or_else(|| SignerError::new("the request carries no members"))?;
    let text = fields.get("message").and_then(Value::as_str).ok_or_else(|| SignerError::new("no message"))?;
    crate::codec::hex_bytes(text).ok_or_else(|| SignerError::new("the message is not 0x hex"))
}

impl SolanaSigner {
    fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::SolanaMessage(_) => {
                let signature = self.key.sign_bytes(&message_of(request)?);
                Ok(Value::String(crate::codec::to_hex(&signature)))
            }
            SigningRequest::Ed25519Raw(fields) => {
                if fields.get("signer").and_then(Value::as_str) != Some(self.key.address()) {
                    return Err(SignerError::new("the ed25519-raw request names another signer"));
                }
                let signature = self.key.sign_bytes(&message_of(request)?);
                Ok(Value::String(bs58::encode(signature).into_string()))
            }
            // Inside a batch (a batch-settlement opening), a solana-message is answered in base58, as the
            // ed25519-raw beside it.
            SigningRequest::Batch { requests } => requests
                .iter()
                .map(|r| match r {
                    SigningRequest::SolanaMessage(_) => {
                        let signature = self.key.sign_bytes(&message_of(r)?);
                        Ok(Value::String(bs58::encode(signature).into_string()))
                    }
                    other => self.answer(other),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            other => Err(SignerError::new(format!("the local ed25519 signer does not sign {} requests", other.kind()))),
        }
    }
}

impl Signer for SolanaSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = self.answer(request).map(Answer::new);
        Box::pin(async move { answer })
    }
}
