//! A 402's offer, read: x402 v2's `PAYMENT-REQUIRED` header, or (with `mpp`) MPP's `WWW-Authenticate: Payment`
//! challenges; and the pairing and signer that pay it, the first in the offer's own order.
//!
//! An x402 v1 answer (its requirements in the body with `x402Version: 1`, or a `PAYMENT-REQUIRED` of version 1) and
//! one with the legacy `X-PAYMENT…` header names decline `offer-unreadable`, `x402/not-v2`: the client never guesses
//! at an older wire. A 402 with none of these declines `offer-unreadable`, `client/no-offer` (ours).

use std::sync::Arc;

use serde_json::Value;

use super::types::Incoming;
use crate::decline::{DeclineCode, Declined};
use crate::pairing::Pairing;
use crate::refusal::{Reason, Refusal};
use crate::registry::{Protocol, entry};
use crate::signer::{Signer, Wallet};

/// The x402 v2 header of the offer.
pub(crate) const PAYMENT_REQUIRED: &str = "payment-required";
/// The x402 v2 header the payment goes in.
pub(crate) const PAYMENT_SIGNATURE: &str = "PAYMENT-SIGNATURE";
/// The x402 v2 header of the settlement response.
pub(crate) const PAYMENT_RESPONSE: &str = "payment-response";
/// MPP's header of the challenges.
pub(crate) const WWW_AUTHENTICATE: &str = "www-authenticate";
/// MPP's header the credential goes in.
pub(crate) const AUTHORIZATION: &str = "Authorization";
/// MPP's header of the receipt.
pub(crate) const PAYMENT_RECEIPT: &str = "payment-receipt";

/// The protocol of an offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// x402 v2.
    X402,
    /// MPP.
    Mpp,
}

impl Wire {
    /// The header a payment of this wire goes in.
    pub(crate) const fn payment_header(self) -> &'static str {
        match self {
            Self::X402 => PAYMENT_SIGNATURE,
            Self::Mpp => AUTHORIZATION,
        }
    }
}

/// The offer of a 402: its document (the x402 `PAYMENT-REQUIRED` object, or MPP's challenge list) and its wire.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    pub(crate) wire: Wire,
    pub(crate) doc: Value,
}

/// A decline of the offer's reading: `offer-unreadable` with a refusal code.
fn unreadable(refusal: Refusal, cause: impl std::fmt::Display) -> Declined {
    Declined::new(DeclineCode::OfferUnreadable, refusal.code()).with_cause(cause)
}

/// Reads the offer of a 402 answer.
pub(crate) fn read(answer: &Incoming) -> Result<Offer, Declined> {
    if let Some(header) = answer.header(PAYMENT_REQUIRED) {
        return read_x402(&header);
    }
    let challenges = answer.all(WWW_AUTHENTICATE);
    if challenges.iter().any(|v| names_payment(v)) {
        return read_mpp(&challenges);
    }
    if let Some((name, _)) = answer.headers.iter().find(|(n, _)| n.to_ascii_lowercase().starts_with("x-payment")) {
        return Err(unreadable(
            Refusal::x402(Reason::NotV2),
            format!("the 402 uses the legacy x402 v1 header name {name}; this client reads x402 v2 only"),
        ));
    }
    let version = crate::json::parse(&String::from_utf8_lossy(&answer.body))
        .and_then(|v| v.get("x402Version").and_then(Value::as_u64));
    if let Some(version) = version {
        return Err(unreadable(
            Refusal::x402(Reason::NotV2),
            format!("the 402's body is an x402 version {version} answer with no PAYMENT-REQUIRED header"),
        ));
    }
    Err(unreadable(
        Refusal::new("client", Reason::NoOffer),
        "the 402 carries no PAYMENT-REQUIRED header and no WWW-Authenticate: Payment challenge",
    ))
}

/// Whether a `WWW-Authenticate` value names the `Payment` scheme (as its first word or after a comma).
fn names_payment(value: &str) -> bool {
    value.split(',').any(|part| {
        part.trim_start().split([' ', '\t']).next().is_some_and(|scheme| scheme.eq_ignore_ascii_case("payment"))
    })
}

#[cfg(feature = "x402")]
fn read_x402(header: &str) -> Result<Offer, Declined> {
    let doc = crate::x402::decode_payment_required(header.trim())
        .map_err(|e| unreadable(Refusal::x402(Reason::HeaderMalformed), format!("PAYMENT-REQUIRED: {e}")))?;
    if !crate::x402::is_v2(&doc) {
        let version = doc.get("x402Version").map_or_else(|| "no version".to_owned(), Value::to_string);
        return Err(unreadable(Refusal::x402(Reason::NotV2), format!("PAYMENT-REQUIRED is x402Version {version}")));
    }
    Ok(Offer { wire: Wire::X402, doc })
}

#[cfg(not(feature = "x402"))]
fn read_x402(_header: &str) -> Result<Offer, Declined> {
    Err(Declined::new(DeclineCode::PairingNotSupported, "This build has no x402 (the `x402` feature is off)."))
}

#[cfg(feature = "mpp")]
fn read_mpp(values: &[&str]) -> Result<Offer, Declined> {
    let doc = crate::mpp::decode_challenges(values).map_err(|e| unreadable(e.refusal(), e))?;
    Ok(Offer { wire: Wire::Mpp, doc })
}

#[cfg(not(feature = "mpp"))]
fn read_mpp(_values: &[&str]) -> Result<Offer, Declined> {
    Err(Declined::new(DeclineCode::PairingNotSupported, "This build has no MPP (the `mpp` feature is off)."))
}

/// The pairing that pays an offer, the signer that pays it, and the network of the option (where it names one).
pub(crate) type Choice = (&'static dyn Pairing, Arc<dyn Signer>, Option<String>);

/// The pairing and signer that pay the offer: for each option in the document's order, the wallet's signer on the
/// option's network, and the first built pairing (in registry order, which for an option is its scheme, network and
/// transfer method: one pairing serves it) that pays it from that signer's account. `no-payable-option` when none
/// does, with the networks offered as the cause.
pub(crate) fn choose(offer: &mut Offer, wallet: &dyn Wallet) -> Result<Choice, Declined> {
    let networks: Vec<Option<String>> = options(offer).iter().map(|o| network(offer.wire, o)).collect();
    // x402's options are taken out of the document and put back one at a time, so that each is read as an offer of
    // that option alone without copying the rest of the document for each.
    let mut all = match offer.wire {
        Wire::X402 => offer.doc.get_mut("accepts").and_then(Value::as_array_mut).map(std::mem::take),
        Wire::Mpp => None,
    };
    let mut offered: Vec<String> = Vec::new();
    let (mut last, mut chosen) = (None, None);
    for (index, network) in networks.into_iter().enumerate() {
        let signer = match &network {
            Some(n) => wallet.on(n),
            None => wallet.any(),
        };
        if let Some(n) = &network
            && !offered.contains(n)
        {
            offered.push(n.clone());
        }
        let Some(signer) = signer else { continue };
        let found = match &mut all {
            Some(all) => {
                one_option(&mut offer.doc, all, index, |doc| crate::registry::pairing_for(doc, signer.account()))
            }
            None => crate::registry::pairing_for(&offer.doc, signer.account()),
        };
        match found {
            Ok(pairing) if wire_of(pairing) == Some(offer.wire) => {
                chosen = Some((pairing, signer, network));
                break;
            }
            Ok(_) => {}
            Err(declined) => last = Some(declined),
        }
    }
    if let (Some(all), Some(accepts)) = (all, offer.doc.get_mut("accepts")) {
        *accepts = Value::Array(all);
    }
    if let Some(choice) = chosen {
        return Ok(choice);
    }
    let declined = Declined::new(
        DeclineCode::NoPayableOption,
        "No pairing of this build pays an option of the offer from the wallet's accounts.",
    );
    Err(match last {
        // The offer itself cannot be read (a terms link that is not https): that decline, as the gate gives it.
        Some(d) if d.code == DeclineCode::OfferUnreadable => d,
        Some(d) => declined.with_cause(d.cause.unwrap_or(d.detail)),
        None => {
            declined.with_cause(format!("the wallet pays on none of the networks offered: [{}]", offered.join(", ")))
        }
    })
}

/// The wire a pairing's payment goes on.
pub(crate) fn wire_of(pairing: &dyn Pairing) -> Option<Wire> {
    match entry(pairing.id())?.protocol {
        Protocol::X402 => Some(Wire::X402),
        Protocol::Mpp => Some(Wire::Mpp),
        _ => None,
    }
}

/// The options of the offer, in its order: x402's `accepts`, MPP's challenges.
fn options(offer: &Offer) -> &[Value] {
    let list = match offer.wire {
        Wire::X402 => offer.doc.get("accepts"),
        Wire::Mpp => Some(&offer.doc),
    };
    list.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The CAIP-2 network an option pays on, where it names one.
fn network(wire: Wire, option: &Value) -> Option<String> {
    match wire {
        Wire::X402 => option.get("network").and_then(Value::as_str).map(str::to_owned),
        #[cfg(feature = "mpp")]
        Wire::Mpp => crate::mpp::network(option).ok(),
        #[cfg(not(feature = "mpp"))]
        Wire::Mpp => None,
    }
}

/// Runs `read` on the x402 document with `accepts` holding only the option at `index` of `all` (the options taken
/// out of it), and puts the option back in `all`: the document is the offer of that option alone, as a pairing reads
/// one, and nothing is copied. (An MPP challenge's id names its place in the list, and the pairing's own choice
/// takes the challenge for the account: MPP's list is read whole.)
fn one_option<R>(doc: &mut Value, all: &mut [Value], index: usize, read: impl FnOnce(&Value) -> R) -> R {
    let (Some(slot), Some(accepts)) = (all.get_mut(index), doc.get_mut("accepts")) else { return read(doc) };
    *accepts = Value::Array(vec![std::mem::take(slot)]);
    let result = read(doc);
    if let Some(Value::Array(one)) = doc.get_mut("accepts")
        && let Some(option) = one.pop()
    {
        *slot = option;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(headers: &[(&str, &str)], body: &str) -> Incoming {
        Incoming {
            status: 402,
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: bytes::Bytes::copy_from_slice(body.as_bytes()),
        }
    }

    #[test]
    fn a_402_with_no_payment_header_is_no_offer() {
        let d = read(&answer(&[("content-type", "text/plain")], "pay me")).unwrap_err();
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, "client/no-offer"));
        // A WWW-Authenticate of another scheme is no offer either.
        let d = read(&answer(&[("WWW-Authenticate", r#"Bearer realm="x""#)], "")).unwrap_err();
        assert_eq!(d.detail, "client/no-offer");
    }

    #[test]
    fn an_x402_v1_body_or_legacy_header_names_decline_not_v2() {
        let d = read(&answer(&[], r#"{"x402Version":1,"accepts":[]}"#)).unwrap_err();
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, "x402/not-v2"));
        let d = read(&answer(&[("X-PAYMENT-REQUIRED", "e30=")], "")).unwrap_err();
        assert_eq!(d.detail, "x402/not-v2");
        assert!(d.cause.unwrap().contains("X-PAYMENT-REQUIRED"));
    }

    #[cfg(feature = "x402")]
    #[test]
    fn a_payment_required_that_is_not_base64_json_or_v2_declines() {
        use crate::codec::b64_encode;
        for (header, detail) in [
            ("%%%not base64", "x402/header-malformed"),
            (b64_encode(b"not json").as_str(), "x402/header-malformed"),
            (b64_encode(b"[1,2]").as_str(), "x402/header-malformed"),
            (b64_encode(br#"{"x402Version":1,"accepts":[]}"#).as_str(), "x402/not-v2"),
        ] {
            let d = read(&answer(&[("PAYMENT-REQUIRED", header)], "")).unwrap_err();
            assert_eq!((d.code, d.detail.as_str()), (DeclineCode::OfferUnreadable, detail), "{header}");
        }
    }

    #[test]
    fn the_payment_scheme_is_found_beside_others() {
        assert!(names_payment(r#"Payment id="a""#));
        assert!(names_payment(r#"Bearer realm="x", Payment id="a""#));
        assert!(names_payment("payment"));
        assert!(!names_payment(r#"Bearer realm="Payment""#));
        assert!(!names_payment(r#"Paymentx id="a""#));
    }
}
