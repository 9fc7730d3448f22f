//! The filters of `charge` on `solana` and of `usdc`'s Solana profile: what the build reads of the request, in the
//! form it builds with, as the reference's `_mpp_checks.solana_charge_pairings` checks it.

use serde_json::Value;

use crate::json::{Member, Object};
use crate::mpp::challenge::{Method, Parts};
use crate::mpp::network::solana_network;
use crate::mpp::values::has;
use crate::rail::solana::{Key, program};
use crate::refusal::{Reason, Refusal};

/// The Solana charge: `charge` on `solana`.
pub(crate) static SOLANA_CHARGE: Method = Method { intent: "charge", method: "solana", offers: solana_charge };
/// The most UTF-8 bytes of an `externalId`, which the payer signs as a memo.
const MAX_EXTERNAL_ID: usize = 566;

/// A base58 key of 32 bytes.
fn is_key(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).and_then(Key::parse).is_some()
}

/// `methodDetails.network` a name MPP Solana defines, where present (localnet too, which has no CAIP-2 id: the
/// filter takes it, the network read refuses it), else `svm/network-malformed`; absent is mainnet unless `required`.
fn network_named(d: &Object, required: bool) -> Result<(), Refusal> {
    match solana_network(d, required) {
        Err(r) if r.code() == "svm/network-malformed" => Err(r),
        _ => Ok(()),
    }
}

/// An integer from 0 to 255 as a JSON number reads (8 and 8.0 alike).
fn is_byte(value: &Value) -> bool {
    value.as_u64().is_some_and(|n| n <= 255)
        || value.as_f64().is_some_and(|f| f.fract() == 0.0 && (0.0..=255.0).contains(&f))
}

/// `amount` a positive u64 in 1 to 78 decimal digits, `currency` `sol` or a key, `recipient` a key, `externalId`
/// absent or a string of at most 566 UTF-8 bytes, `feePayer` absent or a boolean and, when true, a key
/// `feePayerKey` (`mpp/request-malformed`); then what the build reads of the details in place of the buyer's inputs
/// (`svm/input-malformed`): no `splits` and no confidential transfer, which it does not build, a string
/// `recentBlockhash` a key and, for a mint, a number `decimals` a byte and a string `tokenProgram` Token's or
/// Token-2022's.
fn solana_checks(r: &Object, d: &Object) -> Result<(), Refusal> {
    network_named(d, false)?;
    let malformed = || Refusal::mpp(Reason::RequestMalformed);
    let amount = r.member("amount").and_then(Value::as_str).filter(|a| crate::decimal::is_decimal(a));
    if amount.and_then(|a| a.trim_start_matches('0').parse::<u64>().ok()).is_none_or(|n| n == 0) {
        return Err(malformed());
    }
    let currency = r.member("currency");
    if !(currency.and_then(Value::as_str) == Some("sol") || is_key(currency)) || !is_key(r.member("recipient")) {
        return Err(malformed());
    }
    if has(r, "externalId") && r.member("externalId").and_then(Value::as_str).is_none_or(|e| e.len() > MAX_EXTERNAL_ID)
    {
        return Err(malformed());
    }
    if has(d, "feePayer") && !d.member("feePayer").is_some_and(Value::is_boolean) {
        return Err(malformed());
    }
    if d.member("feePayer") == Some(&Value::Bool(true)) && !is_key(d.member("feePayerKey")) {
        return Err(malformed());
    }
    let bad = || Refusal::new("svm", Reason::InputMalformed);
    if has(d, "splits") || d.member("confidential") == Some(&Value::Bool(true)) {
        return Err(bad());
    }
    if d.member("recentBlockhash").is_some_and(Value::is_string) && !is_key(d.member("recentBlockhash")) {
        return Err(bad());
    }
    if currency.and_then(Value::as_str) != Some("sol") {
        if d.member("decimals").is_some_and(|v| v.is_number() && !is_byte(v)) {
            return Err(bad());
        }
        let token = d.member("tokenProgram").filter(|v| v.is_string());
        if token.is_some_and(|t| !t.as_str().and_then(Key::parse).is_some_and(|k| program::is_token_program(&k))) {
            return Err(bad());
        }
    }
    Ok(())
}

/// `charge` on `solana`: [`solana_checks`] over the request and `methodDetails`.
fn solana_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    solana_checks(p.request, p.details)?;
    Ok(vec![super::SOLANA])
}

/// `usdc`'s Solana profile, after the method's own checks ([`crate::mpp::methods`]): its network, which is required,
/// and [`solana_checks`] over the request and the profile's details.
pub(crate) fn usdc_profile_checks(r: &Object, profile: &Object) -> Result<(), Refusal> {
    network_named(profile, true)?;
    solana_checks(r, profile)
}
