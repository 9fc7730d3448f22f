//! The payment as it is sent: the JSON text of the payment the pairing read H back from, written once.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::codec::b64_encode;
use crate::json::{exact_is_js, exact_string, read_exact, to_js_string};

/// A payment in its protocol's JSON form, held as compact JSON text in the order the pairing wrote its members. The
/// gate writes it once, after the pairing read H back from the payment, so what a caller sends is the payment that
/// was checked, and a payment that echoes most of the seller's offer is not copied member by member to get there.
///
/// The text reads back as exactly the value it was written from ([`Payment::to_value`]): every number as it was
/// parsed, any nesting. It serialises as that value (not as a string), so `Finished` and `Transacted` keep the
/// reference's shape.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Payment(String);

impl Payment {
    /// The payment for a JSON value.
    pub fn from_value(value: &Value) -> Self {
        Self(exact_string(value))
    }

    /// Text the crate wrote with [`crate::json::exact_object`] or [`exact_string`].
    #[cfg_attr(
        not(any(feature = "x402", feature = "mpp")),
        allow(dead_code, reason = "only the x402 and MPP payment writers write exact text")
    )]
    pub(crate) fn from_exact_text(text: String) -> Self {
        Self(text)
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The JSON text, owned.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The payment as a JSON value: the value it was written from.
    pub fn to_value(&self) -> Value {
        // Every Payment holds text the crate wrote from a value, which reads back.
        read_exact(&self.0).unwrap_or(Value::Null)
    }

    /// The value of the x402 `PAYMENT-SIGNATURE` header: padded standard base64 of the text JSON.stringify writes for
    /// the payment. `None` when the payment nests more than 64 levels, which the protocols' JSON readers refuse.
    pub fn header(&self) -> Option<String> {
        self.js_text().map(|text| b64_encode(text.as_bytes()))
    }

    /// The value of MPP's `Authorization` header for a credential: `Payment `, then unpadded base64url of the text
    /// JSON.stringify writes for it (the twin of [`Payment::header`]). `None` when the credential nests more than 64
    /// levels, which no MPP pairing builds.
    #[cfg(feature = "mpp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mpp")))]
    pub fn authorization(&self) -> Option<String> {
        self.js_text().map(|text| format!("Payment {}", crate::codec::b64u_encode(text.as_bytes())))
    }

    /// The text JSON.stringify writes for the payment: its own text where that is already it (the common case, which
    /// skips reading the text back and writing it again), else the value written anew.
    fn js_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        if exact_is_js(&self.0) {
            return Some(std::borrow::Cow::Borrowed(&self.0));
        }
        to_js_string(&self.to_value()).map(std::borrow::Cow::Owned)
    }
}

impl fmt::Debug for Payment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Payment").field(&self.0).finish()
    }
}

impl fmt::Display for Payment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Payment {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Payment {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|v| Self::from_value(&v))
    }
}

impl PartialEq<Value> for Payment {
    fn eq(&self, other: &Value) -> bool {
        self.to_value() == *other
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_text_reads_back_as_the_value_it_was_written_from() {
        let value = json!({
            "z": 1.0, "a": -0.0, "big": 18_446_744_073_709_551_615u64, "neg": -9_007_199_254_740_993i64,
            "tiny": 5e-324, "exp": 1e21, "text": "caf\u{e9} \"q\" \\ \n \u{1}", "2": [], "1": {}, "list": [null, true, 0.1]
        });
        let payment = Payment::from_value(&value);
        let back = payment.to_value();
        assert_eq!(back, value);
        // Member order and number forms are kept, which `==` on values does not show.
        assert_eq!(serde_json::to_string(&back).unwrap(), serde_json::to_string(&value).unwrap());
        assert_eq!(payment.as_str(), serde_json::to_string(&value).unwrap());
    }

    #[test]
    fn any_nesting_reads_back_and_only_the_header_has_a_limit() {
        let deep = |levels: usize| (0..levels).fold(json!("x"), |inner, _| json!({ "a": inner }));
        let payment = Payment::from_value(&deep(200));
        assert_eq!(payment.to_value(), deep(200));
        assert_eq!(payment.header(), None);
        assert!(Payment::from_value(&deep(63)).header().is_some());
    }

    #[test]
    fn the_header_is_base64_of_the_json_stringify_text() {
        let payment = Payment::from_value(&json!({"x402Version": 2, "n": 60.0, "s": "Caf\u{e9}"}));
        assert_eq!(payment.as_str(), r#"{"x402Version":2,"n":60.0,"s":"Café"}"#);
        let header = payment.header().unwrap();
        assert_eq!(crate::codec::b64_decode(&header).unwrap(), r#"{"x402Version":2,"n":60,"s":"Café"}"#.as_bytes());
    }

    /// The header as written the long way: the value read back and written as JSON.stringify writes it.
    fn written_again(payment: &Payment) -> Option<String> {
        to_js_string(&payment.to_value()).map(|text| b64_encode(text.as_bytes()))
    }

    #[test]
    fn a_payment_of_strings_and_small_integers_is_sent_as_its_own_text() {
        let value = json!({"x402Version": 2, "accepted": {"amount": "1000", "maxTimeoutSeconds": 60, "n": -7, "z": 0},
            "payload": {"signature": "0xab\"\\\u{1}", "list": [[], {}, null, true, false, 9_007_199_254_740_992u64]}});
        let payment = Payment::from_value(&value);
        assert!(exact_is_js(payment.as_str()), "{}", payment.as_str());
        assert_eq!(payment.header(), written_again(&payment));
    }

    #[test]
    fn a_number_either_writer_writes_otherwise_is_written_again() {
        for value in [
            json!({"n": 60.0}),
            json!({"n": 0.5}),
            json!({"n": -0.0}),
            json!({"n": 1e21}),
            json!({"n": 9_007_199_254_740_993u64}),
            json!({"n": -9_007_199_254_740_993i64}),
            json!([u64::MAX]),
        ] {
            let payment = Payment::from_value(&value);
            assert!(!exact_is_js(payment.as_str()), "{value}");
            assert_eq!(payment.header(), written_again(&payment), "{value}");
        }
        // A number-like string is a string.
        assert!(exact_is_js(Payment::from_value(&json!({"n": "60.0", "1e21": "-0"})).as_str()));
        // Past the depth limit neither is written.
        let deep = (0..65).fold(json!(1), |inner, _| json!([inner]));
        assert!(!exact_is_js(Payment::from_value(&deep).as_str()));
        assert!(exact_is_js(Payment::from_value(&deep[0]).as_str()));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 2_000, ..Default::default() })]
        #[test]
        fn the_header_is_the_same_however_it_is_written(value in values()) {
            let payment = Payment::from_value(&value);
            proptest::prop_assert_eq!(payment.header(), written_again(&payment));
            #[cfg(feature = "mpp")]
            proptest::prop_assert_eq!(
                payment.authorization(),
                to_js_string(&value).map(|t| format!("Payment {}", crate::codec::b64u_encode(t.as_bytes())))
            );
        }
    }

    /// Values with numbers at and around the edges the writers part on, strings a scan for numbers could misread,
    /// and nesting.
    fn values() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let edge = 1i64 << 53;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-edge - 2..-edge + 2).prop_map(|n| json!(n)),
            (edge - 2..edge + 2).prop_map(|n| json!(n)),
            (-1000i64..1000).prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            "[-0-9.eE\"\\\\{}\\[\\]a-z]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[-0-9a-z\"]{0,4}", inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    #[test]
    fn it_serialises_as_the_payment_value() {
        let value = json!({"x402Version": 2, "payload": {"signature": "0x00"}});
        let payment = Payment::from_value(&value);
        assert_eq!(serde_json::to_value(&payment).unwrap(), value);
        let again: Payment = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(again, payment);
        assert!(payment == value);
    }
}
