//! The filters of the MPP methods that need no chain crate: the EVM charge and session, `usdc`, NEAR Intents, card
//! and Stripe. Each names the pairings a challenge of its intent and method offers, in the order offered, or gives
//! the refusal the reference gives; a pairing holds its challenges to its method's filter through
//! [`checked_for`](super::challenge::checked_for). A rail's pairing (Tempo, Solana, XRPL, Stellar, Hedera,
//! Lightning) writes its method's filter beside its build, as a [`Method`].

use ruint::aliases::U256;
use serde_json::Value;

use crate::json::{Member, Object, js_length};
use crate::refusal::{Reason, Refusal};

use super::challenge::{Method, Parts};
use super::values::{B64Json, decimal_of, has, is_address, is_caip2, positive_int};

/// The EVM charge: `charge` on `evm`.
pub(crate) static EVM_CHARGE: Method = Method { intent: "charge", method: "evm", offers: evm_charge };
/// The EVM session: `session` on `evm`.
pub(crate) static EVM_SESSION: Method = Method { intent: "session", method: "evm", offers: evm_session };
/// Circle's USDC charge: `charge` on `usdc`, one profile of `evm`, `solana`, `stacks`, `gateway`.
pub(crate) static USDC_CHARGE: Method = Method { intent: "charge", method: "usdc", offers: usdc_charge };
/// The NEAR Intents charge: `charge` on `nearintents`.
pub(crate) static NEAR_INTENTS_CHARGE: Method =
    Method { intent: "charge", method: "nearintents", offers: near_intents_charge };
/// The card charge: `charge` on `card`.
pub(crate) static CARD_CHARGE: Method = Method { intent: "charge", method: "card", offers: card_charge };
/// The Stripe charge: `charge` on `stripe`.
pub(crate) static STRIPE_CHARGE: Method = Method { intent: "charge", method: "stripe", offers: stripe_charge };
/// The Stripe subscription: `subscription` on `stripe`.
pub(crate) static STRIPE_SUBSCRIPTION: Method =
    Method { intent: "subscription", method: "stripe", offers: stripe_subscription };

/// The methods of this file, each once.
const METHODS: [&Method; 7] =
    [&EVM_CHARGE, &EVM_SESSION, &USDC_CHARGE, &NEAR_INTENTS_CHARGE, &CARD_CHARGE, &STRIPE_CHARGE, &STRIPE_SUBSCRIPTION];

/// The networks, in document order and each once, of the challenges that offer `pairing` (held to their method's
/// filter, among the methods of this file): what [`pairing_for`](crate::pairing_for) compares with an account's
/// network. A challenge of a rail's own method (Tempo, Solana, …) names none here.
pub(crate) fn offered_networks(challenges: &[&Value], pairing: &str) -> Vec<String> {
    let mut networks: Vec<String> = Vec::new();
    for c in challenges {
        let text = |k: &str| c.get(k).and_then(Value::as_str);
        let Some(method) =
            METHODS.iter().find(|m| text("intent") == Some(m.intent) && text("method") == Some(m.method))
        else {
            continue;
        };
        if !super::challenge::check_challenge(c, method).is_ok_and(|checked| checked.offers(pairing)) {
            continue;
        }
        if let Ok(n) = super::network(c)
            && !networks.contains(&n)
        {
            networks.push(n);
        }
    }
    networks
}

const EVM_PERMIT2: &str = "mpp/charge/evm/permit2";
const EVM_TYPES: [(&str, &str); 4] = [
    ("permit2", EVM_PERMIT2),
    ("authorization", "mpp/charge/evm/authorization"),
    ("transaction", "mpp/charge/evm/transaction"),
    ("hash", "mpp/charge/evm/hash"),
];
const EVM_MAX_SPLITS: usize = 10;

fn refuse(reason: Reason) -> Result<Vec<&'static str>, Refusal> {
    Err(Refusal::mpp(reason))
}

/// `charge` on `evm`: `chainId` a positive safe integer, `currency` and `recipient` addresses, `amount` a decimal
/// below 2^256 (`mpp/request-malformed`); the credential types listed (each once; absent: `transaction`, `hash`;
/// empty or unknown: `mpp/credential-types`); `splits`, where present, 1 to 10 of an address and a decimal
/// (`mpp/splits-malformed`), which leave Permit2 alone. Where Permit2 is offered and the challenge carries `expires`:
/// `permit2Address` an address and `externalId` a string where present (`mpp/request-malformed`), and an amount above
/// the splits' sum, else Permit2 is left out (`mpp/input-malformed` when nothing is left).
fn evm_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let Some(amount) = decimal_of(r.member("amount")) else { return refuse(Reason::RequestMalformed) };
    if positive_int(d.member("chainId")).is_none()
        || !is_address(r.member("currency"))
        || !is_address(r.member("recipient"))
    {
        return refuse(Reason::RequestMalformed);
    }
    let mut listed: Vec<&'static str> = Vec::new();
    match d.member("credentialTypes") {
        None => listed.extend(["mpp/charge/evm/transaction", "mpp/charge/evm/hash"]),
        Some(Value::Array(types)) if !types.is_empty() => {
            for t in types {
                let pairing = EVM_TYPES.iter().find(|(name, _)| t.as_str() == Some(*name)).map(|(_, p)| *p);
                let Some(pairing) = pairing else { return refuse(Reason::CredentialTypes) };
                if !listed.contains(&pairing) {
                    listed.push(pairing);
                }
            }
        }
        Some(_) => return refuse(Reason::CredentialTypes),
    }
    let mut split_sum = U256::ZERO;
    if let Some(splits) = d.member("splits") {
        let Some(splits) = splits.as_array().filter(|s| (1..=EVM_MAX_SPLITS).contains(&s.len())) else {
            return refuse(Reason::SplitsMalformed);
        };
        for s in splits {
            let amount = decimal_of(s.member("amount")).filter(|_| is_address(s.member("recipient")));
            let Some(amount) = amount else { return refuse(Reason::SplitsMalformed) };
            split_sum = split_sum.saturating_add(amount);
        }
        listed.retain(|p| *p == EVM_PERMIT2);
    }
    if listed.is_empty() {
        return refuse(Reason::CredentialTypes);
    }
    if listed.contains(&EVM_PERMIT2) && p.challenge.contains_key("expires") {
        if has(d, "permit2Address") && !is_address(d.member("permit2Address")) {
            return refuse(Reason::RequestMalformed);
        }
        if r.member("externalId").is_some_and(|e| !e.is_string()) {
            return refuse(Reason::RequestMalformed);
        }
        if amount <= split_sum {
            listed.retain(|p| *p != EVM_PERMIT2);
            if listed.is_empty() {
                return refuse(Reason::InputMalformed);
            }
        }
    }
    Ok(listed)
}

/// `session` on `evm`: no channel named yet (`mpp/channel-named`), an escrow address (`mpp/escrow-malformed`), a
/// positive `chainId` (`mpp/chain-id-required`), `currency` and `recipient` addresses (`mpp/request-malformed`),
/// `credentialTypes` absent or a non-empty list of `permit2`, `authorization`, `hash` (`mpp/credential-types`), and a
/// `permit2Contract` that is an address where Permit2 is listed and it is present.
fn evm_session(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    if has(d, "channelId") || has(d, "sessionSnapshot") {
        return refuse(Reason::ChannelNamed);
    }
    if !is_address(d.member("escrowContract")) {
        return refuse(Reason::EscrowMalformed);
    }
    if positive_int(d.member("chainId")).is_none() {
        return refuse(Reason::ChainIdRequired);
    }
    if !is_address(r.member("currency")) || !is_address(r.member("recipient")) {
        return refuse(Reason::RequestMalformed);
    }
    let types = d.member("credentialTypes");
    if let Some(types) = types {
        let known = |t: &Value| matches!(t.as_str(), Some("permit2" | "authorization" | "hash"));
        if !types.as_array().is_some_and(|t| !t.is_empty() && t.iter().all(known)) {
            return refuse(Reason::CredentialTypes);
        }
    }
    let permit2 = types.and_then(Value::as_array).is_some_and(|t| t.iter().any(|t| t.as_str() == Some("permit2")));
    if permit2 && has(d, "permit2Contract") && !is_address(d.member("permit2Contract")) {
        return refuse(Reason::RequestMalformed);
    }
    Ok(vec!["mpp/session/evm"])
}

/// The profiles `usdc`'s `methodDetails.type` names, and the pairing each one is.
const USDC_PROFILES: [(&str, &str); 4] = [
    ("evm", "mpp/charge/usdc/evm"),
    ("solana", "mpp/charge/usdc/solana"),
    ("stacks", "mpp/charge/usdc/stacks"),
    ("gateway", "mpp/charge/usdc/gateway"),
];

/// The active `usdc` profile: `methodDetails.type` names one, `methodDetails` holds that profile's details object
/// and no other profile's (`mpp/usdc-profile`).
pub(crate) fn usdc_profile(d: &Object) -> Result<(&'static str, &Object), Refusal> {
    let kind = d.member("type").and_then(Value::as_str);
    let Some((kind, _)) = USDC_PROFILES.iter().find(|(name, _)| Some(*name) == kind) else {
        return Err(Refusal::mpp(Reason::UsdcProfile));
    };
    let Some(details) = d.member(kind).and_then(Value::as_object) else {
        return Err(Refusal::mpp(Reason::UsdcProfile));
    };
    if USDC_PROFILES.iter().any(|(other, _)| other != kind && has(d, other)) {
        return Err(Refusal::mpp(Reason::UsdcProfile));
    }
    Ok((kind, details))
}

/// `charge` on `usdc`: the active profile, `amount` a positive integer without a leading zero and `recipient` a
/// string (`mpp/request-malformed`), then what each profile's build reads. EVM: a positive `chainId` and address
/// `currency` and `recipient`; EVM and Gateway hash the request as received, so it must be in its RFC 8785 form
/// (`mpp/request-not-jcs`). Stacks: the chain id and token contract of their forms. Solana (with the `solana` feature):
/// the profile's network, which is required, and the Solana charge's checks on the request and the profile.
fn usdc_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let (kind, profile) = usdc_profile(d)?;
    let positive = r.member("amount").and_then(Value::as_str).is_some_and(|a| {
        matches!(a.as_bytes().first(), Some(b'1'..=b'9')) && a.len() <= 78 && a.bytes().all(|b| b.is_ascii_digit())
    });
    if !positive || !r.member("recipient").is_some_and(Value::is_string) {
        return refuse(Reason::RequestMalformed);
    }
    let jcs = || B64Json::new(super::challenge::text(p.challenge, "request")).is_jcs_of(r);
    match kind {
        "evm" => {
            if positive_int(profile.member("chainId")).is_none()
                || !is_address(r.member("currency"))
                || !is_address(r.member("recipient"))
            {
                return refuse(Reason::RequestMalformed);
            }
            if jcs() { Ok(vec!["mpp/charge/usdc/evm"]) } else { refuse(Reason::RequestNotJcs) }
        }
        "gateway" => {
            if jcs() {
                Ok(vec!["mpp/charge/usdc/gateway"])
            } else {
                refuse(Reason::RequestNotJcs)
            }
        }
        "stacks" => {
            let chain = profile.member("chainId").and_then(Value::as_str);
            let chain_ok = chain.is_some_and(|c| {
                (c == "0" || (matches!(c.as_bytes().first(), Some(b'1'..=b'9')) && c.len() <= 10))
                    && c.bytes().all(|b| b.is_ascii_digit())
                    && c.parse::<u64>().is_ok_and(|n| n <= 0xFFFF_FFFF)
            });
            let address = profile.member("contractAddress").and_then(Value::as_str).is_some_and(|a| {
                a.starts_with('S')
                    && (39..=41).contains(&a.len())
                    && a.bytes().skip(1).all(|b| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&b))
            });
            let name = profile.member("contractName").and_then(Value::as_str).is_some_and(|n| {
                js_length(n) <= 128
                    && n.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                    && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
            if chain_ok && address && name {
                Ok(vec!["mpp/charge/usdc/stacks"])
            } else {
                refuse(Reason::RequestMalformed)
            }
        }
        _ => {
            // With the Solana rail, the profile's network and what the build reads of it, as the reference's filter
            // checks them for every usdc pairing; without it, the profile's shape alone (no pairing pays it).
            #[cfg(feature = "solana")]
            super::solana::usdc_profile_checks(r, profile)?;
            Ok(vec!["mpp/charge/usdc/solana"])
        }
    }
}

/// Whether `externalId`, where H rides for several methods, is absent or a string.
fn external_id_ok(r: &Object) -> bool {
    r.member("externalId").is_none_or(Value::is_string)
}

/// `charge` on `nearintents`: `methodDetails.originNetwork` a CAIP-2 id (the network the buyer deposits on) and
/// `externalId` absent or a string (`mpp/request-malformed`).
fn near_intents_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    if !is_caip2(p.details.member("originNetwork")) || !external_id_ok(p.request) {
        return refuse(Reason::RequestMalformed);
    }
    Ok(vec!["mpp/charge/nearintents"])
}

/// `charge` on `card`: `externalId`, the member that carries H, absent or a string (`mpp/request-malformed`).
fn card_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    if !external_id_ok(p.request) {
        return refuse(Reason::RequestMalformed);
    }
    Ok(vec!["mpp/charge/card"])
}

/// Stripe's bounds on a `metadata` map, absent allowed: an object of at most 50 members, each name 1 to 40 UTF-16
/// code units without `[` or `]`, each value a string of at most 500 (`mpp/metadata-malformed`).
fn stripe_metadata(d: &Object) -> Result<(), Refusal> {
    let Some(m) = d.member("metadata") else { return Ok(()) };
    let ok = m.as_object().is_some_and(|m| {
        m.len() <= 50
            && m.iter().all(|(k, v)| {
                (1..=40).contains(&js_length(k))
                    && !k.contains(['[', ']'])
                    && v.as_str().is_some_and(|v| js_length(v) <= 500)
            })
    });
    if ok { Ok(()) } else { Err(Refusal::mpp(Reason::MetadataMalformed)) }
}

/// `charge` on `stripe`: `methodDetails.metadata`, which holds the member that carries H, within Stripe's bounds.
fn stripe_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    stripe_metadata(p.details).map(|()| vec!["mpp/charge/stripe"])
}

/// `subscription` on `stripe`: as [`stripe_charge`].
fn stripe_subscription(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    stripe_metadata(p.details).map(|()| vec!["mpp/subscription/stripe"])
}
