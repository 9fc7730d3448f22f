//! The pieces of a vector file every row-driven test reads: a buyer row by name, and an MPP challenge's `request`
//! member in both directions (base64url of the RFC 8785 form, as a seller writes it).
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

/// The file's buyer row named `name`.
pub fn row<'a>(f: &'a Value, name: &str) -> &'a Value {
    f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()
}

/// base64url, unpadded, of the value's RFC 8785 form.
pub fn b64u_json(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(terms::json::canonical(v).unwrap())
}

/// A challenge's `request`, decoded.
pub fn request_of(c: &Value) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(c["request"].as_str().unwrap()).unwrap()).unwrap()
}
