//! Option selection that is no one protocol's own: an option filter's verdict, the first option on the account's
//! network, and the readers of an option's timeout and amount. x402 and MPP both choose with them.

use serde_json::{Map, Value};

use crate::json::{Member, safe_int};
use crate::refusal::{Reason, Refusal};

/// What a pairing's option filter says of one option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Served {
    /// The pairing serves it.
    Yes,
    /// It is the pairing's, but cannot be paid: the reason.
    Refused(Refusal),
    /// It is another pairing's.
    NotMine,
}

/// A pairing's option filter.
pub(crate) type Filter = fn(&Map<String, Value>) -> Served;

/// The filter for the options `pairs` accepts: those `payable` also accepts are served, the rest refused
/// `<ns>/option-malformed`.
pub(crate) fn served_if(ns: &'static str, pairs: bool, payable: impl FnOnce() -> bool) -> Served {
    if !pairs {
        Served::NotMine
    } else if payable() {
        Served::Yes
    } else {
        Served::Refused(Refusal::new(ns, Reason::OptionMalformed))
    }
}

/// The first option, in the order given, whose `network` is the account's.
pub(crate) fn first_on_network<'a>(options: &[&'a Value], network: &str) -> Option<&'a Value> {
    options.iter().copied().find(|o| o.member("network").and_then(Value::as_str) == Some(network))
}

/// An option's `maxTimeoutSeconds` when it is a safe integer above zero (`60.0` is 60); `None` otherwise.
#[cfg_attr(not(feature = "x402"), allow(unreachable_pub, reason = "public as `x402::timeout_seconds`"))]
pub fn timeout_seconds(value: &Value) -> Option<u64> {
    safe_int(value).and_then(|s| u64::try_from(s).ok()).filter(|s| *s > 0)
}

/// An option's `amount` when it is the canonical decimal of a positive integer: digits only, no leading zero.
pub(crate) fn amount_of(value: &Value) -> Option<&str> {
    let s = value.as_str()?;
    let b = s.as_bytes();
    (matches!(b.first(), Some(b'1'..=b'9')) && b.iter().all(u8::is_ascii_digit)).then_some(s)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_first_option_on_the_network_is_chosen() {
        let (a, b, c) = (
            json!({"network": "eip155:1"}),
            json!({"network": "eip155:8453"}),
            json!({"network": "eip155:8453", "n": 2}),
        );
        assert_eq!(first_on_network(&[&a, &b, &c], "eip155:8453"), Some(&b));
        assert_eq!(first_on_network(&[&a], "eip155:8453"), None);
    }

    #[test]
    fn amounts_and_timeouts_are_read_strictly() {
        assert_eq!(amount_of(&json!("10000")), Some("10000"));
        for bad in [json!("0"), json!("010"), json!("1.5"), json!(""), json!(10)] {
            assert_eq!(amount_of(&bad), None, "{bad}");
        }
        assert_eq!(timeout_seconds(&json!(60.0)), Some(60));
        assert_eq!(timeout_seconds(&json!(0)), None);
        assert_eq!(timeout_seconds(&json!("60")), None);
        assert_eq!(served_if("mpp", true, || false), Served::Refused(Refusal::new("mpp", Reason::OptionMalformed)));
        assert_eq!(served_if("x402", false, || true), Served::NotMine);
    }
}
