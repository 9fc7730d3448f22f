//! ES256 (ECDSA on P-256 with SHA-256, RFC 7518 §3.4) over a compact JWS, under an EC P-256 public JWK, on `p256`.

use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::{EncodedPoint, FieldBytes};

use crate::codec::b64u_decode;

/// Why an ES256 check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Es256Error {
    /// A coordinate that is not canonical base64url of exactly 32 bytes (RFC 7518 §6.2.1.2-3), or a point not on
    /// P-256.
    KeyMalformed,
    /// No signature segment, one not canonical base64url of 64 bytes (`r || s`), or one that does not verify.
    SignatureInvalid,
}

/// Checks the ES256 signature of a compact JWS over its ASCII `header.payload`, under the public key whose JWK
/// coordinates are `x` and `y`.
pub(crate) fn verify(jws: &str, x: &str, y: &str) -> Result<(), Es256Error> {
    let coordinate = |c: &str| {
        let bytes = <[u8; 32]>::try_from(b64u_decode(c)?.as_slice()).ok()?;
        Some(FieldBytes::from(bytes))
    };
    let (Some(x), Some(y)) = (coordinate(x), coordinate(y)) else { return Err(Es256Error::KeyMalformed) };
    let point = EncodedPoint::from_affine_coordinates(&x, &y, false);
    let key = VerifyingKey::from_encoded_point(&point).map_err(|_| Es256Error::KeyMalformed)?;
    let Some((signed, signature)) = jws.rsplit_once('.') else { return Err(Es256Error::SignatureInvalid) };
    let signature = b64u_decode(signature)
        .filter(|s| s.len() == 64)
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or(Es256Error::SignatureInvalid)?;
    key.verify(signed.as_bytes(), &signature).map_err(|_| Es256Error::SignatureInvalid)
}
