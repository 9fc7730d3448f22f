//! An in-process XRPL signer (`xrpl-tx`, `xrpl-session-open`, `xrpl-claim`): a hot key, a test, an example. Keys
//! are ed25519 (XRPL's derivation from 16 bytes of entropy: the secret is SHA-512Half of the entropy, the public key
//! `ED` and the ed25519 key) or secp256k1 (a 32-byte secret; the public key compressed). The account is the
//! classic address of RIPEMD-160 of SHA-256 of the 33-byte public key.

use std::fmt;
use std::sync::Arc;

use ed25519_dalek::Signer as _;
use k256::ecdsa::signature::hazmat::PrehashSigner;
use ripemd::{Digest as _, Ripemd160};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::rail::xrpl::{self, Tx, fields};
use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};

#[derive(Clone)]
enum Secret {
    Ed25519(ed25519_dalek::SigningKey),
    Secp256k1(k256::ecdsa::SigningKey),
}

/// An XRPL key not tied to one network. Its [`XrplSigner`] for an `xrpl:<id>` network signs `xrpl-tx` requests
/// (answered with the signed blob, upper-case hex without `0x`), `xrpl-session-open` requests (answered
/// `{signedBlob, claimSignature}`: the PaymentChannelCreate signed and the first claim's signature) and `xrpl-claim`
/// requests `{channelId, drops, bytes}` (answered with the signature, upper-case hex); it refuses every other kind.
#[derive(Clone)]
pub struct XrplKey {
    secret: Secret,
    public: [u8; 33],
    address: String,
}

impl fmt::Debug for XrplKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XrplKey").field("address", &self.address).finish_non_exhaustive()
    }
}

fn hex_of(text: &str) -> Result<Vec<u8>, SignerError> {
    let text = text.trim();
    hex::decode(text.strip_prefix("0x").unwrap_or(text)).map_err(|_| SignerError::new("not hex"))
}

impl XrplKey {
    fn with(secret: Secret, public: [u8; 33]) -> Self {
        let id: [u8; 20] = Ripemd160::digest(Sha256::digest(public)).into();
        Self { secret, public, address: xrpl::encode_account(&id) }
    }

    /// The ed25519 key XRPL derives from 16 bytes of entropy (`0x` hex or bare hex).
    pub fn ed25519_from_entropy_hex(entropy: &str) -> Result<Self, SignerError> {
        let entropy: [u8; 16] = hex_of(entropy)?.try_into().map_err(|_| SignerError::new("not 16 bytes of entropy"))?;
        let seed = xrpl::sha512_half(&[&entropy]);
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        let mut public = [0xED; 33];
        public[1..].copy_from_slice(key.verifying_key().as_bytes());
        Ok(Self::with(Secret::Ed25519(key), public))
    }

    /// The secp256k1 key of a 32-byte secret (`0x` hex or bare hex).
    pub fn secp256k1_from_secret_hex(secret: &str) -> Result<Self, SignerError> {
        let key = k256::ecdsa::SigningKey::from_slice(&hex_of(secret)?)
            .map_err(|_| SignerError::new("not a secp256k1 secret"))?;
        let point = key.verifying_key().to_encoded_point(true);
        let public: [u8; 33] = point.as_bytes().try_into().map_err(|_| SignerError::new("not a compressed point"))?;
        Ok(Self::with(Secret::Secp256k1(key), public))
    }

    /// The key's classic address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The 33-byte public key (`ED` and the ed25519 key, or the compressed secp256k1 point).
    pub fn public_key(&self) -> &[u8; 33] {
        &self.public
    }

    /// The key's signer on `xrpl:<id>`; its account is `<network>:<address>`. `None` for another network.
    pub fn on_network(&self, network: &str) -> Option<XrplSigner> {
        xrpl::network_id(network)?;
        Some(XrplSigner { key: self.clone(), account: format!("{network}:{}", self.address) })
    }

    /// The signature of `message`: ed25519 over the message itself, secp256k1 ECDSA (DER, low S) over its
    /// SHA-512Half, as XRPL signs.
    pub fn sign_bytes(&self, message: &[u8]) -> Result<Vec<u8>, SignerError> {
        match &self.secret {
            Secret::Ed25519(key) => Ok(key.sign(message).to_bytes().to_vec()),
            Secret::Secp256k1(key) => {
                let digest = xrpl::sha512_half(&[message]);
                let signature: k256::ecdsa::Signature =
                    key.sign_prehash(&digest).map_err(|_| SignerError::new("secp256k1 signing failed"))?;
                let signature = signature.normalize_s().unwrap_or(signature);
                Ok(signature.to_der().as_bytes().to_vec())
            }
        }
    }

    /// The signed blob of a transaction's JSON: its `SigningPubKey` set to this key, its signature over `STX\0` and
    /// the unsigned bytes added as `TxnSignature`.
    pub fn sign_tx(&self, tx: &Map<String, Value>) -> Result<Vec<u8>, SignerError> {
        let mut tx = Tx::from_json(tx).map_err(|e| SignerError::new(e.to_string()))?;
        tx.set_blob(fields::SIGNING_PUB_KEY, &self.public);
        let signature = self.sign_bytes(&xrpl::signing_bytes(&tx.encode()))?;
        tx.set_blob(fields::TXN_SIGNATURE, &signature);
        Ok(tx.encode())
    }
}

impl Wallet for XrplKey {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        Some(Arc::new(self.on_network(network)?))
    }
}

/// An [`XrplKey`] on one network: the [`Signer`] an XRPL pairing's request goes to.
#[derive(Clone, Debug)]
pub struct XrplSigner {
    key: XrplKey,
    account: String,
}

impl XrplSigner {
    /// The signed blob of the request's `txJson`, whose `Account` must be this key's.
    fn signed_tx(&self, fields: &Map<String, Value>) -> Result<Vec<u8>, SignerError> {
        let tx = fields.get("txJson").and_then(Value::as_object).ok_or_else(|| SignerError::new("no txJson"))?;
        if tx.get("Account").and_then(Value::as_str) != Some(self.key.address()) {
            return Err(SignerError::new("the transaction's Account is not this key's"));
        }
        self.key.sign_tx(tx)
    }

    /// The signature, upper-case hex, of a claim `{channelId, drops, bytes}`: the bytes must be the claim's own
    /// (`CLM\0`, the channel id, the drops), so nothing is signed that was not read.
    fn claim_signature(&self, claim: &Map<String, Value>) -> Result<String, SignerError> {
        let channel = claim.get("channelId").and_then(Value::as_str).and_then(|c| hex::decode(c).ok());
        let channel: [u8; 32] = channel
            .and_then(|c| c.try_into().ok())
            .ok_or_else(|| SignerError::new("the claim's channel id is not 64 hex digits"))?;
        let drops = claim.get("drops").and_then(Value::as_u64);
        let drops = drops.ok_or_else(|| SignerError::new("the claim's drops are not a u64"))?;
        let bytes = xrpl::claim_bytes(&channel, drops);
        let given = claim.get("bytes").and_then(Value::as_str).and_then(|b| hex_of(b).ok());
        if given.as_deref() != Some(&bytes[..]) {
            return Err(SignerError::new("the claim's bytes are not its channel id and drops"));
        }
        Ok(hex::encode_upper(self.key.sign_bytes(&bytes)?))
    }

    fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        let no_members = || SignerError::new("the request carries no members");
        let fields = || request.fields().ok_or_else(no_members);
        match request {
            SigningRequest::XrplTx(_) => Ok(Value::String(hex::encode_upper(self.signed_tx(fields()?)?))),
            SigningRequest::XrplSessionOpen(_) => {
                let fields = fields()?;
                let claim = fields.get("claim").and_then(Value::as_object);
                let claim = claim.ok_or_else(|| SignerError::new("the opening carries no first claim"))?;
                let mut out = Map::with_capacity(2);
                out.insert("signedBlob".into(), Value::String(hex::encode_upper(self.signed_tx(fields)?)));
                out.insert("claimSignature".into(), Value::String(self.claim_signature(claim)?));
                Ok(Value::Object(out))
            }
            SigningRequest::XrplClaim(_) => Ok(Value::String(self.claim_signature(fields()?)?)),
            // A claim in a session, handed as a batch of its one request: one answer per request, in order.
            SigningRequest::Batch { requests } => {
                requests.iter().map(|r| self.answer(r)).collect::<Result<Vec<_>, _>>().map(Value::Array)
            }
            other => Err(SignerError::new(format!("the local XRPL signer does not sign {} requests", other.kind()))),
        }
    }
}

impl Signer for XrplSigner {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        let answer = self.answer(request).map(Answer::new);
        Box::pin(async move { answer })
    }
}
