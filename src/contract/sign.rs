//! Signatures: Ed25519 over the RFC 8785 form of a document's object without its `signature` member, written
//! `ed25519:` and the unpadded base64url of the 64 bytes, checked with the key its `kid` names in the signer's
//! [`KeyList`], at the time the document says it was signed.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde_json::{Map, Value};

use super::ContractError;
use super::read::{Document, Signed};
use super::types::{KeyList, PublishedKey};

/// The prefix of every signature.
const PREFIX: &str = "ed25519:";

/// The bytes a document's signature covers: the RFC 8785 form of its object without its `signature` member.
pub fn signing_bytes(object: &Map<String, Value>) -> Result<Vec<u8>, ContractError> {
    let mut unsigned = object.clone();
    unsigned.remove("signature");
    crate::json::canonical(&Value::Object(unsigned))
        .map(String::into_bytes)
        .ok_or_else(|| ContractError::NotJson("nested more than 64 levels".into()))
}

/// The signature of the object by the 32-byte Ed25519 secret key `secret`, written as the `signature` member
/// carries it. For sellers and verifiers that sign, and for tests.
pub fn sign_object(object: &Map<String, Value>, secret: &[u8; 32]) -> Result<String, ContractError> {
    let bytes = signing_bytes(object)?;
    let signature = SigningKey::from_bytes(secret).sign(&bytes);
    Ok(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(signature.to_bytes())))
}

/// The public key of a 32-byte Ed25519 secret key, written as a [`PublishedKey`] writes it (unpadded base64url).
pub fn public_key_of(secret: &[u8; 32]) -> String {
    URL_SAFE_NO_PAD.encode(SigningKey::from_bytes(secret).verifying_key().to_bytes())
}

/// The 64 signature bytes of a `signature` member, or `SignatureMalformed`.
pub fn parse_signature(text: &str) -> Result<Signature, ContractError> {
    let encoded = text.strip_prefix(PREFIX).ok_or(ContractError::SignatureMalformed)?;
    let bytes = URL_SAFE_NO_PAD.decode(encoded).map_err(|_| ContractError::SignatureMalformed)?;
    // The engine accepts trailing bits that a canonical encoding leaves zero; writing back must give the same text.
    if URL_SAFE_NO_PAD.encode(&bytes) != encoded {
        return Err(ContractError::SignatureMalformed);
    }
    let bytes: [u8; 64] = bytes.try_into().map_err(|_| ContractError::SignatureMalformed)?;
    Ok(Signature::from_bytes(&bytes))
}

impl KeyList {
    /// The key `kid`, if listed.
    pub fn key(&self, kid: &str) -> Option<&PublishedKey> {
        self.keys.iter().find(|k| k.kid == kid)
    }
}

impl PublishedKey {
    /// Whether the key was valid at `at` (Unix seconds, a whole second): at or after `from`, and before `until` where
    /// it is retired. The key's dates are compared with their fractions of a second.
    pub fn valid_at(&self, at: i64) -> Result<bool, ContractError> {
        self.valid_at_instant((at, 0))
    }

    /// Whether the key was valid at the instant `at` (Unix seconds and nanoseconds).
    fn valid_at_instant(&self, at: (i64, u32)) -> Result<bool, ContractError> {
        let from = instant(&self.from)?;
        let until = self.until.as_deref().map(instant).transpose()?;
        Ok(from <= at && until.is_none_or(|u| at < u))
    }

    fn verifying_key(&self) -> Result<VerifyingKey, ContractError> {
        let malformed =
            || ContractError::malformed("key list", format!("key `{}` is not an Ed25519 public key", self.kid));
        if self.alg != "ed25519" {
            return Err(malformed());
        }
        let bytes = URL_SAFE_NO_PAD.decode(&self.key).map_err(|_| malformed())?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| malformed())?;
        VerifyingKey::from_bytes(&bytes).map_err(|_| malformed())
    }
}

impl<T: Document> Signed<T> {
    /// Checks the signature: the `kid` is in `keys`, the key was valid at the document's signing time, and the
    /// signature verifies (strictly: no small-order key, no non-canonical `R` or `s`) over the document's bytes.
    pub fn verify(&self, keys: &KeyList) -> Result<(), ContractError> {
        let doc = self.doc();
        let signature = match self.object().get("signature") {
            Some(Value::String(s)) => parse_signature(s)?,
            _ => return Err(ContractError::SignatureMalformed),
        };
        let key = keys.key(doc.kid()).ok_or_else(|| ContractError::KeyUnknown(doc.kid().to_owned()))?;
        let at = instant(doc.signed_at())?;
        if !key.valid_at_instant(at)? {
            return Err(ContractError::KeyNotValid { kid: key.kid.clone(), at: doc.signed_at().to_owned() });
        }
        let bytes = signing_bytes(self.object())?;
        key.verifying_key()?.verify_strict(&bytes, &signature).map_err(|_| ContractError::SignatureInvalid)
    }
}

/// An RFC 3339 time as Unix seconds, or `Time`.
pub(crate) fn unix(text: &str) -> Result<i64, ContractError> {
    crate::rfc3339::unix_of(text).ok_or_else(|| ContractError::Time(text.to_owned()))
}

/// An RFC 3339 time as Unix seconds and the nanoseconds of its fraction, or `Time`: a key retired at `…:00.5Z` did
/// not sign at `…:00.7Z`, though both are the same whole second.
pub(crate) fn instant(text: &str) -> Result<(i64, u32), ContractError> {
    crate::rfc3339::instant_of(text).ok_or_else(|| ContractError::Time(text.to_owned()))
}
