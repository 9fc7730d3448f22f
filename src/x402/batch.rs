//! What the x402 batch-settlement pairings share, whatever their rail: the scheme's name, the withdraw delay's range,
//! an option a build can pay, the payload of a presented payment, and amounts that fit the channel contracts' uint128.

use serde_json::{Map, Value};

use super::{Filter, accepted_by, amount_of, is_v2, timeout_seconds};
use crate::decimal;
use crate::json::{Member, safe_int};
use crate::refusal::{Reason, Refusal};

/// The scheme's name in an `accepts` entry.
pub(crate) const SCHEME: &str = "batch-settlement";
/// The shortest withdraw delay the channel contracts take, in seconds.
pub(crate) const MIN_DELAY: i64 = 900;
/// The longest withdraw delay the channel contracts take, in seconds (30 days).
pub(crate) const MAX_DELAY: i64 = 2_592_000;
/// The most digits an option's amount may have: every value below 2^128 fits in 39.
const MAX_AMOUNT_DIGITS: usize = 39;
/// The longest EVM signature a payment may carry, in bytes.
const MAX_SIGNATURE_BYTES: usize = 8192;

/// Whether the value is a JSON number holding an integer from 900 to 2,592,000 seconds (`900.0` is 900).
pub(crate) fn is_delay(value: &Value) -> bool {
    safe_int(value).is_some_and(|d| (MIN_DELAY..=MAX_DELAY).contains(&d))
}

/// A decimal string of 1 to 78 digits below 2^128, as the channel contracts' uint128 amounts take it.
pub(crate) fn u128_of(value: &Value) -> Option<u128> {
    decimal::parse(value.as_str()?).and_then(|n| u128::try_from(n).ok())
}

/// Whether a build can pay the option: an amount of `"0"` or a positive canonical decimal below 2^128 (the batch
/// schemes take a zero price), and a `maxTimeoutSeconds` that is a positive safe integer.
pub fn payable(option: &Map<String, Value>) -> bool {
    let amount = option.member("amount").unwrap_or(&Value::Null);
    let canonical = amount.as_str() == Some("0") || amount_of(amount).is_some();
    canonical
        && amount.as_str().is_some_and(|a| a.len() <= MAX_AMOUNT_DIGITS)
        && u128_of(amount).is_some()
        && option.member("maxTimeoutSeconds").and_then(timeout_seconds).is_some()
}

/// A presented payment's `accepted` and payload objects.
pub(crate) type Parts<'a> = (&'a Map<String, Value>, &'a Map<String, Value>);

/// A presented x402 v2 payment of the pairing: its `accepted`, held to the pairing's filter, and its payload object.
pub(crate) fn payload_of(p: &dyn Member, filter: Filter) -> Result<Parts<'_>, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    let accepted = accepted_by(p.member("accepted"), filter)?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    Ok((accepted, payload))
}

/// Whether the value is an EVM signature as a payment carries it: `0x` and 1 to 8192 bytes of hex.
pub(crate) fn is_hex_signature(value: &str) -> bool {
    value.len() > 2 && value.len() <= 2 + 2 * MAX_SIGNATURE_BYTES && crate::codec::is_hex(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn delays_and_amounts() {
        assert!(is_delay(&json!(900)) && is_delay(&json!(900.0)) && is_delay(&json!(2_592_000)));
        assert!(!is_delay(&json!(899)) && !is_delay(&json!(2_592_001)) && !is_delay(&json!("900")));
        assert!(!is_delay(&json!(900.5)) && !is_delay(&json!(true)));
        let max = "340282366920938463463374607431768211455";
        assert_eq!(u128_of(&json!(max)), Some(u128::MAX));
        assert_eq!(u128_of(&json!("340282366920938463463374607431768211456")), None);
        assert_eq!(u128_of(&json!("007")), Some(7));
        let option = |amount: &str| json!({"amount": amount, "maxTimeoutSeconds": 60}).as_object().unwrap().clone();
        assert!(payable(&option("0")) && payable(&option("1000")) && payable(&option(max)));
        assert!(!payable(&option("00")) && !payable(&option("01")) && !payable(&option("-1")));
        assert!(!payable(&option("340282366920938463463374607431768211456")));
        assert!(is_hex_signature("0x00") && !is_hex_signature("0x") && !is_hex_signature("0x0"));
        assert!(is_hex_signature(&format!("0x{}", "ab".repeat(8192))));
        assert!(!is_hex_signature(&format!("0x{}", "ab".repeat(8193))));
    }
}
