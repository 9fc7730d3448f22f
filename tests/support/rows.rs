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

/// Unix seconds of an RFC 3339 `YYYY-MM-DDTHH:MM:SSZ` (days from the civil calendar).
pub fn unix_of(text: &str) -> u64 {
    let n = |a: usize, b: usize| text[a..b].parse::<i64>().unwrap();
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    u64::try_from(days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19)).unwrap()
}
