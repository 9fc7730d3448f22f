//! The CAIP-2 network a challenge pays on, as each MPP method defines it, with the method's default where it names
//! one: what a pairing's choose compares with the account's network. The network is read from the challenge alone,
//! after the checks every method shares ([`common`]); a method's own filter is the pairing's to apply first.

use serde_json::Value;

use crate::json::{Member, Object};
use crate::refusal::{Reason, Refusal};

use super::challenge::{common, details_of, shape, text};
use super::methods::usdc_profile;
use super::values::{has, is_address, is_caip2, positive_int};

/// The chain a Tempo charge names none: Tempo's (draft-tempo-charge).
pub(crate) const TEMPO_DEFAULT_CHAIN: u64 = 42431;
/// The chain a Tempo v1 session names none: v1's.
pub(crate) const TEMPO_V1_DEFAULT_CHAIN: u64 = 4217;

/// MPP Solana's network names and their CAIP-2 ids; localnet has none.
const SOLANA_NETWORKS: [(&str, Option<&str>); 3] = [
    ("mainnet", Some("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp")),
    ("devnet", Some("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")),
    ("localnet", None),
];
/// MPP XRPL's network names and their CAIP-2 ids.
const XRPL_NETWORKS: [(&str, &str); 3] = [("mainnet", "xrpl:0"), ("testnet", "xrpl:1"), ("devnet", "xrpl:2")];

/// The intents and methods MPP serves.
const SERVED: [(&str, &str); 19] = [
    ("charge", "evm"),
    ("charge", "tempo"),
    ("session", "evm"),
    ("session", "tempo"),
    ("subscription", "tempo"),
    ("charge", "lightning"),
    ("session", "lightning"),
    ("charge", "hedera"),
    ("charge", "solana"),
    ("charge", "stellar"),
    ("charge", "xrpl"),
    ("charge", "nearintents"),
    ("session", "hedera"),
    ("session", "solana"),
    ("session", "xrpl"),
    ("charge", "card"),
    ("charge", "stripe"),
    ("subscription", "stripe"),
    ("charge", "usdc"),
];

/// The CAIP-2 network a challenge pays on, read from its intent, method and `methodDetails` as each method defines
/// it: `eip155:<chainId>` for the EVM and Tempo methods (a Tempo charge's default 42431, a Tempo v1 session's 4217),
/// the Solana, XRPL, Hedera and Stellar names, NEAR Intents' `originNetwork`, and the `usdc` profile's chain. A
/// method that names no network (card, Stripe, Lightning, the Gateway profile) is `mpp/network-unnamed`; an intent
/// and method MPP does not serve is `mpp/not-this-pairing`; a challenge the shared checks refuse gets their refusal.
///
/// ```
/// # #[cfg(feature = "mpp")] {
/// use serde_json::json;
/// // `e30` is base64url of `{}`.
/// let card = json!({"realm": "r", "method": "card", "intent": "charge", "request": "e30"});
/// assert_eq!(terms::mpp::network(&card).unwrap_err().code(), "mpp/network-unnamed");
/// # }
/// ```
pub fn network(challenge: &Value) -> Result<String, Refusal> {
    let c = shape(challenge).ok_or(Refusal::mpp(Reason::ChallengeMalformed))?;
    let (intent, method) = (text(c, "intent"), text(c, "method"));
    if !SERVED.contains(&(intent, method)) {
        return Err(Refusal::mpp(Reason::NotThisPairing));
    }
    let (request, _) = common(c)?;
    let d = details_of(&request);
    let malformed = || Refusal::mpp(Reason::RequestMalformed);
    match (intent, method) {
        ("charge", "evm") => positive_int(d.member("chainId")).map(eip155).ok_or_else(malformed),
        ("charge", "tempo") => match d.member("chainId") {
            None => Ok(eip155(TEMPO_DEFAULT_CHAIN)),
            chain => positive_int(chain).map(eip155).ok_or_else(malformed),
        },
        ("session" | "subscription", "evm" | "tempo") => session_chain(intent, method, d).map(eip155),
        ("charge" | "session", "solana") => solana_network(d, intent == "session"),
        ("charge" | "session", "xrpl") => xrpl_network(d),
        ("charge", "hedera") => match d.member("chainId") {
            Some(chain) => hedera_network(chain),
            None => Err(Refusal::new("hedera", Reason::ChainIdUnnamed)),
        },
        ("session", "hedera") => {
            hedera_network(d.member("chainId").filter(|c| !c.is_null()).unwrap_or(&Value::from(295)))
        }
        ("charge", "stellar") => match d.member("network").and_then(Value::as_str) {
            Some(n @ ("stellar:pubnet" | "stellar:testnet")) => Ok(n.to_owned()),
            _ => Err(Refusal::new("stellar", Reason::OptionMalformed)),
        },
        ("charge", "nearintents") => match d.member("originNetwork") {
            n if is_caip2(n) => Ok(n.and_then(Value::as_str).unwrap_or_default().to_owned()),
            _ => Err(malformed()),
        },
        ("charge", "usdc") => {
            let (kind, profile) = usdc_profile(d)?;
            match kind {
                "evm" => positive_int(profile.member("chainId")).map(eip155).ok_or_else(malformed),
                "stacks" => match profile.member("chainId").and_then(Value::as_str) {
                    Some(c) if !c.is_empty() && c.len() <= 10 && c.bytes().all(|b| b.is_ascii_digit()) => {
                        if c.len() > 1 && c.starts_with('0') { Err(malformed()) } else { Ok(format!("stacks:{c}")) }
                    }
                    _ => Err(malformed()),
                },
                "solana" => solana_network(profile, true),
                _ => Err(Refusal::mpp(Reason::NetworkUnnamed)),
            }
        }
        _ => Err(Refusal::mpp(Reason::NetworkUnnamed)),
    }
}

fn eip155(chain: u64) -> String {
    format!("eip155:{chain}")
}

/// The chain of an EVM or Tempo session or a Tempo subscription: `chainId`, or on a Tempo session of protocol v1
/// (or none named) 4217 where it names none. A Tempo session's `sessionProtocol` is absent, `v1` or `v2`
/// (`mpp/session-protocol`); a v2 session without `chainId` or `escrowContract`, and any other missing or malformed
/// `chainId`, is `mpp/chain-id-required`; a session's escrow must be an address (`mpp/escrow-malformed`).
pub(crate) fn session_chain(intent: &str, method: &str, d: &Object) -> Result<u64, Refusal> {
    let tempo_session = intent == "session" && method == "tempo";
    let protocol = d.member("sessionProtocol");
    if tempo_session && protocol.is_some_and(|p| !matches!(p.as_str(), Some("v1" | "v2"))) {
        return Err(Refusal::mpp(Reason::SessionProtocol));
    }
    let v2 = protocol.and_then(Value::as_str) == Some("v2");
    if tempo_session && v2 && (!has(d, "chainId") || !has(d, "escrowContract")) {
        return Err(Refusal::mpp(Reason::ChainIdRequired));
    }
    let chain = match positive_int(d.member("chainId")) {
        None if tempo_session && !v2 && !has(d, "chainId") => TEMPO_V1_DEFAULT_CHAIN,
        None => return Err(Refusal::mpp(Reason::ChainIdRequired)),
        Some(chain) => chain,
    };
    if intent == "session" && !is_address(d.member("escrowContract")) {
        return Err(Refusal::mpp(Reason::EscrowMalformed));
    }
    Ok(chain)
}

/// MPP Solana's `methodDetails.network`: absent is mainnet unless `required`; a name MPP Solana does not define is
/// `svm/network-malformed`; localnet, which has no CAIP-2 id, is `svm/network-undeclared`.
pub(crate) fn solana_network(d: &Object, required: bool) -> Result<String, Refusal> {
    let name = match d.member("network") {
        None if !required => "mainnet",
        n => n.and_then(Value::as_str).unwrap_or_default(),
    };
    match SOLANA_NETWORKS.iter().find(|(n, _)| *n == name) {
        Some((_, Some(caip2))) => Ok((*caip2).to_owned()),
        Some((_, None)) => Err(Refusal::new("svm", Reason::NetworkUndeclared)),
        None => Err(Refusal::new("svm", Reason::NetworkMalformed)),
    }
}

/// MPP XRPL's `methodDetails.network`, which has no default: `xrpl/network-missing`, `xrpl/network-malformed`.
pub(crate) fn xrpl_network(d: &Object) -> Result<String, Refusal> {
    let Some(name) = d.member("network") else { return Err(Refusal::new("xrpl", Reason::NetworkMissing)) };
    XRPL_NETWORKS
        .iter()
        .find(|(n, _)| name.as_str() == Some(*n))
        .map(|(_, caip2)| (*caip2).to_owned())
        .ok_or(Refusal::new("xrpl", Reason::NetworkMalformed))
}

/// A Hedera `chainId`: 295 is `hedera:mainnet`, 296 `hedera:testnet`; anything else `hedera/chain-id-unnamed`.
fn hedera_network(chain: &Value) -> Result<String, Refusal> {
    match crate::json::safe_int(chain) {
        Some(295) => Ok("hedera:mainnet".to_owned()),
        Some(296) => Ok("hedera:testnet".to_owned()),
        _ => Err(Refusal::new("hedera", Reason::ChainIdUnnamed)),
    }
}
