//! The seller's `Payment-Receipt`: unpadded base64url of a JSON object `{status: "success", method, timestamp,
//! reference, externalId?, …}`, where a method may add members of its own.

use serde_json::{Map, Value};

use crate::codec::b64u_decode;
use crate::json::{Member, within_depth};

use super::values::{MAX_DEPTH, unix_of};

/// The longest token read: 16 KiB, mpp-rs's cap on a receipt (and on any one token: a `WWW-Authenticate` value of
/// 8192 characters holds none longer).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// A seller's receipt, read.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Receipt {
    /// The payment method, e.g. `evm`.
    pub method: String,
    /// When the seller settled, as written (RFC 3339).
    pub timestamp: String,
    /// [`Receipt::timestamp`] in Unix seconds.
    pub timestamp_unix: i64,
    /// The method's reference to the payment (a transaction hash, a payment intent id…).
    pub reference: String,
    /// The seller's correlation reference, where the receipt carries one.
    pub external_id: Option<String>,
    /// Every other member, as written: the method's own.
    pub extensions: Map<String, Value>,
}

/// Why a `Payment-Receipt` value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// Longer than [`MAX_TOKEN_BYTES`].
    #[error("the receipt is longer than 16 KiB")]
    TooLong,
    /// Not canonical unpadded base64url.
    #[error("the receipt is not canonical unpadded base64url")]
    NotBase64Url,
    /// Not UTF-8 JSON nested at most 16 deep, holding an object.
    #[error("the receipt is not a JSON object within 16 levels")]
    NotJson,
    /// `status` is not `success`.
    #[error("the receipt's status is not success")]
    NotSuccess,
    /// A member MPP defines is missing or not of its form (`method`, `reference` a non-empty string; `timestamp` an
    /// RFC 3339 date-time; `externalId` a string where present).
    #[error("the receipt's {0} is missing or malformed")]
    Member(&'static str),
}

/// Reads a `Payment-Receipt` value (optional whitespace around the token is allowed).
pub fn read_receipt(value: &str) -> Result<Receipt, ReceiptError> {
    let token = value.trim_matches([' ', '\t']);
    if token.len() > MAX_TOKEN_BYTES {
        return Err(ReceiptError::TooLong);
    }
    let bytes = b64u_decode(token).ok_or(ReceiptError::NotBase64Url)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| ReceiptError::NotJson)?;
    let json = crate::json::parse(text).filter(|v| within_depth(v, MAX_DEPTH));
    let Some(Value::Object(mut map)) = json else { return Err(ReceiptError::NotJson) };
    if map.member("status").and_then(Value::as_str) != Some("success") {
        return Err(ReceiptError::NotSuccess);
    }
    let mut take = |key: &'static str| match map.shift_remove(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(ReceiptError::Member(key)),
    };
    let method = take("method")?;
    let reference = take("reference")?;
    let timestamp = take("timestamp")?;
    let timestamp_unix = unix_of(&timestamp).ok_or(ReceiptError::Member("timestamp"))?;
    let external_id = match map.shift_remove("externalId") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(ReceiptError::Member("externalId")),
    };
    map.shift_remove("status");
    Ok(Receipt { method, timestamp, timestamp_unix, reference, external_id, extensions: map })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::codec::b64u_encode;

    fn token(v: &Value) -> String {
        b64u_encode(serde_json::to_string(v).unwrap().as_bytes())
    }

    #[test]
    fn a_receipt_reads_with_its_extensions() {
        let v = json!({"status": "success", "method": "evm", "timestamp": "2026-09-21T14:14:20Z",
            "reference": "0xabc", "externalId": "order-1", "chainId": 84532});
        let r = read_receipt(&format!(" {} ", token(&v))).unwrap();
        assert_eq!((r.method.as_str(), r.reference.as_str(), r.timestamp_unix), ("evm", "0xabc", 1_790_000_060));
        assert_eq!(r.external_id.as_deref(), Some("order-1"));
        assert_eq!(Value::Object(r.extensions), json!({"chainId": 84532}));
    }

    #[test]
    fn a_bad_receipt_is_refused() {
        let ok = json!({"status": "success", "method": "evm", "timestamp": "2026-09-21T14:14:20Z", "reference": "r"});
        let with = |k: &str, v: Value| {
            let mut o = ok.clone();
            o[k] = v;
            read_receipt(&token(&o))
        };
        assert_eq!(with("status", json!("failed")), Err(ReceiptError::NotSuccess));
        assert_eq!(with("timestamp", json!("yesterday")), Err(ReceiptError::Member("timestamp")));
        assert_eq!(with("method", json!(1)), Err(ReceiptError::Member("method")));
        assert_eq!(with("externalId", json!(1)), Err(ReceiptError::Member("externalId")));
        assert_eq!(read_receipt(&format!("{}=", token(&ok))), Err(ReceiptError::NotBase64Url));
        assert_eq!(read_receipt("W10"), Err(ReceiptError::NotJson));
        let long = json!({"status": "success", "pad": "x".repeat(MAX_TOKEN_BYTES)});
        assert_eq!(read_receipt(&token(&long)), Err(ReceiptError::TooLong));
    }
}
