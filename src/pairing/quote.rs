//! What a buyer would pay: a pairing's [`Quote`] of a choice. A policy reads this and nothing else, and the pairing
//! reads it from the same parsed values its build signs, so what the policy checks is what is built.

use ruint::aliases::U256;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What the buyer would pay for a [`Chosen`](super::Chosen), as [`Pairing::quote`](super::Pairing::quote) reads it
/// from the choice: the amount, of which asset, to whom, on which network, under which scheme, and the time window
/// the signed payment names. Serialized with camelCase members, amounts as decimal strings, absent members left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Quote {
    /// The amount in the asset's atomic units (for USDC, millionths): what the signed payment authorizes. For an
    /// `upto` payment the most the seller may settle; for a channel opening the first voucher's claim (the deposit is
    /// [`Quote::deposit`]).
    #[serde(serialize_with = "decimal", deserialize_with = "read_decimal")]
    pub amount: U256,
    /// The asset as the option names it: a token contract address, or a currency code (`USD`).
    pub asset: String,
    /// The payee as the option names it (its `payTo`): an address, or a name (`merchant`).
    pub payee: String,
    /// The network as the option names it, CAIP-2 (`eip155:8453`, `cloudflare:402`).
    pub network: String,
    /// The x402 scheme (`exact`, `upto`, `auth-capture`, `batch-settlement`) or the MPP intent.
    pub scheme: String,
    /// What a channel opening locks in the channel, in the asset's atomic units; `None` for a payment that opens no
    /// channel.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "optional_decimal",
        deserialize_with = "read_optional_decimal"
    )]
    pub deposit: Option<U256>,
    /// The first second the signed payment is valid, Unix seconds (EIP-3009's and the x402 Permit2 witness's
    /// `validAfter`); `None` where what is signed names none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_after: Option<u64>,
    /// The time bound the signed payment names, Unix seconds: the choice's `now` plus the option's
    /// `maxTimeoutSeconds`, as the build writes it (EIP-3009's `validBefore`, valid strictly before it; Permit2's
    /// `deadline`, valid up to it). `None` where what is signed names none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_before: Option<u64>,
    /// Whether the offer names the amount. `false` for a checkout that names none (a card charge's amount is the
    /// seller's processor's to set): `amount` is then zero and means nothing, and a spend policy treats the payment as
    /// its `unknown_amount` rule says. Written `amountKnown: false`, and left out when `true`.
    #[serde(default = "known", skip_serializing_if = "is_known")]
    pub amount_known: bool,
}

fn known() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref, reason = "serde's skip_serializing_if passes a reference")]
fn is_known(known: &bool) -> bool {
    *known
}

impl Quote {
    /// A quote of `amount` of `asset` to `payee` on `network` under `scheme`, with no deposit and no time window.
    pub fn new(
        amount: U256,
        asset: impl Into<String>,
        payee: impl Into<String>,
        network: impl Into<String>,
        scheme: impl Into<String>,
    ) -> Self {
        Self {
            amount,
            asset: asset.into(),
            payee: payee.into(),
            network: network.into(),
            scheme: scheme.into(),
            deposit: None,
            valid_after: None,
            valid_before: None,
            amount_known: true,
        }
    }

    /// A quote of an amount the offer does not name (a card checkout's), of `asset` to `payee` on `network` under
    /// `scheme`: `amount` zero and [`Quote::amount_known`] `false`.
    pub fn unknown_amount(
        asset: impl Into<String>,
        payee: impl Into<String>,
        network: impl Into<String>,
        scheme: impl Into<String>,
    ) -> Self {
        Self { amount_known: false, ..Self::new(U256::ZERO, asset, payee, network, scheme) }
    }

    /// The quote with the deposit a channel opening locks.
    #[must_use]
    pub fn with_deposit(mut self, deposit: U256) -> Self {
        self.deposit = Some(deposit);
        self
    }

    /// The quote with the time window the signed payment names.
    #[must_use]
    pub fn with_window(mut self, valid_after: Option<u64>, valid_before: Option<u64>) -> Self {
        self.valid_after = valid_after;
        self.valid_before = valid_before;
        self
    }
}

fn decimal<S: Serializer>(value: &U256, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// An amount in atomic units as the quote writes it: a decimal string of digits, no sign, no fraction, no leading
/// zero, at most 2^256 - 1.
pub(crate) fn parse_atomic(text: &str) -> Option<U256> {
    let canonical =
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse::<U256>().ok()).flatten()
}

/// Serde for an amount in atomic units written as a decimal string: `#[serde(with = "crate::pairing::atomic")]`.
pub(crate) mod atomic {
    use ruint::aliases::U256;
    use serde::{Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(value: &U256, serializer: S) -> Result<S::Ok, S::Error> {
        super::decimal(value, serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<U256, D::Error> {
        super::read_decimal(deserializer)
    }
}

fn read_decimal<'de, D: Deserializer<'de>>(deserializer: D) -> Result<U256, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_atomic(&text)
        .ok_or_else(|| serde::de::Error::custom("an amount is a decimal string of atomic units below 2^256"))
}

fn read_optional_decimal<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<U256>, D::Error> {
    read_decimal(deserializer).map(Some)
}

fn optional_decimal<S: Serializer>(value: &Option<U256>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => decimal(v, serializer),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_quote_serializes_amounts_as_decimals_and_leaves_out_what_it_lacks() {
        let q = Quote::new(U256::from(10_000u64), "0xA", "0xB", "eip155:84532", "exact");
        assert_eq!(
            serde_json::to_value(&q).unwrap(),
            json!({"amount": "10000", "asset": "0xA", "payee": "0xB", "network": "eip155:84532", "scheme": "exact"})
        );
        let q = q.with_deposit(U256::MAX).with_window(Some(0), Some(1_790_000_060));
        let v = serde_json::to_value(&q).unwrap();
        assert_eq!(v["deposit"], U256::MAX.to_string());
        assert_eq!((v["validAfter"].clone(), v["validBefore"].clone()), (json!(0), json!(1_790_000_060)));
        assert_eq!(serde_json::from_value::<Quote>(v).unwrap(), q, "a quote reads back what it writes");
        let unknown = Quote::unknown_amount("", "", "card", "visa-tap");
        let v = serde_json::to_value(&unknown).unwrap();
        assert_eq!(
            v,
            json!({"amount": "0", "asset": "", "payee": "", "network": "card", "scheme": "visa-tap",
            "amountKnown": false})
        );
        assert_eq!(serde_json::from_value::<Quote>(v).unwrap(), unknown);
    }

    #[test]
    fn an_atomic_amount_is_digits_below_two_to_the_256() {
        assert_eq!(parse_atomic("0"), Some(U256::ZERO));
        assert_eq!(parse_atomic(&U256::MAX.to_string()), Some(U256::MAX));
        let past = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
        for bad in ["", "-1", "1.5", "01", "+1", " 1", "1e3", "0x10", past] {
            assert_eq!(parse_atomic(bad), None, "{bad:?}");
        }
    }
}
