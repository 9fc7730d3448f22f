//! The buyer's spend policy, read from a file: which resources, networks, assets and payees a payment may name, the
//! most one payment may move, the budgets it counts against, the longest its authorisation may be valid, the
//! amount above which a person approves it, and what a seller of unproven standing gets. [`Policy`] is the
//! [`SpendPolicy`] the gate asks before anything is fetched or signed.
//!
//! ```
//! use terms::safety::policy::Policy;
//!
//! let policy = Policy::from_toml_str(r#"
//!     resources = ["https://api.seller.example/v1/"]
//!     networks = ["eip155:8453"]
//!
//!     [[assets]]
//!     network = "eip155:8453"
//!     address = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
//!     symbol = "USDC"
//!     decimals = 6
//!     cap = "1000000"
//! "#)?;
//! assert_eq!(policy.asset_info("eip155:8453", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"), Some(("USDC", 6)));
//! # Ok::<(), terms::safety::policy::PolicyError>(())
//! ```
//!
//! # The rules
//!
//! A payment is checked in this order, and the first rule it breaks refuses it (`policy-refused`,
//! `policy/<reason>`); every rule fails closed.
//!
//! - **resource** (`resource-not-allowed`): the purchase's URL must be `http`/`https` and under a listed prefix: the
//!   same scheme, host and port, and a path that starts with the prefix's on a segment boundary (`/v1` covers `/v1`
//!   and `/v1/a`, not `/v10`), or anywhere after it when the prefix ends with `/`. The URL is parsed first, so
//!   `/v1/../admin` is `/admin`. A payment that names no purchase refuses. `resources = ["*"]` turns the rule off:
//!   any URL, and no purchase at all.
//! - **network** (`network-not-allowed`): the quote's CAIP-2 network, exactly as listed.
//! - **seller** (`seller-unproven`, ours): with `unproven = "refuse"`, a payment to a seller the policy does not count
//!   as proven refuses, whatever it pays (before the amount is read: a charge of unknown amount too).
//! - **acceptance** (`acceptance-required`, ours): with `acceptance_required = "refuse"`, a payment to a seller whose
//!   discovery document says `acceptanceRequired: true`
//!   ([`Options::acceptance_required`](crate::Options::acceptance_required), read with
//!   [`discovery::fetch`](crate::discovery::fetch)) refuses, whatever it pays; with `"approve"` it is allowed only
//!   once a person approves it (every later rule still applies). A document not read, or one that does not say
//!   `true`, states no requirement. The default, `"allow"`, reads nothing.
//! - **unknown amount** (`amount-unknown`): a quote that names no amount (a card or checkout charge) is refused, or,
//!   with `unknown_amount = "approve"`, allowed only once a person approves it (after the window rule; no asset,
//!   payee, cap or budget rule applies, as the quote names none).
//! - **asset** (`asset-not-allowed`): the quote's network and asset must be a listed asset (`0x`-hex compared
//!   case-insensitively).
//! - **payee** (`payee-not-allowed`): an empty payee, one with whitespace, a malformed `0x` one and an all-zero `0x`
//!   one (the zero address) refuse; then one denied, or not allowed where `payees.allow` is present.
//! - **amount** (`amount-above-cap`): the money that can move must be within the asset's `cap`. For a channel opening
//!   that is the larger of the amount and the deposit; the budgets and the approval threshold read the same value.
//! - **probation** (`probation-cap`, ours): with `unproven = "probation"`, a payment to an unproven seller must be
//!   within the asset's probation cap as well. It comes after the cap, so the two codes tell the agent apart what no
//!   standing would pay (`amount-above-cap`) from what a proven seller would be paid (`probation-cap`).
//! - **window** (`window-too-long`): with `max_validity_seconds` set, the authorisation's end (`valid_before`) less
//!   its start or now, whichever is later, must be within it; a quote that names no end refuses.
//! - **budget** (`budget-exhausted`): a payment above the whole limit of one of its asset's budgets refuses here;
//!   otherwise each budget becomes a [`Claim`](crate::safety::Claim) (scoped `""`, or to the payee, lowercased when
//!   `0x`-hex, or to the URL's origin) that the journal reserves against what its window already holds.
//! - **approval**: above `approval_above` for its asset, the payment is allowed only once a person approves it.
//!
//! # The seller's standing
//!
//! What the buyer verified about the seller reaches the policy as a [`SellerStanding`](super::SellerStanding),
//! given with [`Options::seller`](crate::Options::seller) and read by every payment of the purchase (the payment,
//! its agreement payment, a channel's vouchers): [`Unproven`](super::SellerStanding::Unproven) (the default, when
//! none is given), or [`Attested`](super::Attested) with a verifier's figures. The gate does not verify it; the
//! caller does (with the `contract` feature, `terms::contract::standing` reads it from an offer card and the
//! verifier's attestation, both verified). These choices are ours:
//!
//! - `unproven = "allow" | "probation" | "refuse"`. The default is `"allow"`, which does not read the standing, so
//!   every policy written before the rule keeps its meaning.
//! - A seller is **proven** when its standing is attested with figures that meet every minimum of `[proof]`:
//!   `min_window_days` (days of 86,400 s, against the window's length in seconds, exactly), `min_calls`, and
//!   `min_success`, a quoted decimal from `"0"` to `"1"` with at most six places, compared exactly as parts per
//!   million (an attestation's rate is kept so, never a float). A minimum not written is none; with no `[proof]`,
//!   any attestation proves. An attestation below a minimum leaves the seller unproven, and the refusal says which
//!   figures fell short.
//! - `[probation]` `caps` are per asset (`"<network>/<address>" = "<atomic amount>"`, as `approval_above`), each of
//!   a listed asset and not above its cap. With `unproven = "probation"` every listed asset has one (`"0"` pays an
//!   unproven seller nothing in it), so no asset falls back to its full cap by omission. Probation lowers the
//!   per-payment cap only: the budgets and the approval threshold stay; a payment of unknown amount is refused or
//!   handed to a person as `unknown_amount` says, as no cap can hold it.
//! - A rule that could never apply does not load: probation caps without `unproven = "probation"`, and `[proof]`
//!   with `unproven = "allow"` (a policy that reads as stricter than it is lets another payment through).

mod check;
mod compile;
mod error;
mod file;

#[cfg(test)]
mod acceptance_tests;
#[cfg(test)]
mod seller_tests;
#[cfg(test)]
mod tests;

use std::path::Path;

use ruint::aliases::U256;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use error::{Format, PolicyError, Problem};
pub use file::{
    Acceptance, AssetRule, BudgetRule, Payees, Per, ProbationRule, ProofRule, Rules, UnknownAmount, Unproven, Window,
};

use super::{Allowed, PolicyRefusal, Spend, SpendPolicy};
use compile::{Compiled, compile};

/// A validated spend policy: the [`Rules`] as written, and the index its checks read (built once, when it loads).
/// It serializes as its rules, and deserializes through [`Policy::from_rules`]'s validation.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Rules,
    compiled: Compiled,
}

impl Policy {
    /// The rules, validated.
    pub fn from_rules(rules: Rules) -> Result<Self, PolicyError> {
        let compiled = compile(&rules)?;
        Ok(Self { rules, compiled })
    }

    /// A policy from TOML text.
    pub fn from_toml_str(text: &str) -> Result<Self, PolicyError> {
        let rules = toml::from_str(text)
            .map_err(|e: toml::de::Error| PolicyError::Syntax { format: Format::Toml, message: e.to_string() })?;
        Self::from_rules(rules)
    }

    /// A policy from JSON text.
    pub fn from_json_str(text: &str) -> Result<Self, PolicyError> {
        let rules = serde_json::from_str(text)
            .map_err(|e| PolicyError::Syntax { format: Format::Json, message: e.to_string() })?;
        Self::from_rules(rules)
    }

    /// A policy from a file, read as TOML or JSON by its extension (`.toml`, `.json`, in any case); any other
    /// extension is an error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let path = path.as_ref();
        let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let format = match extension.as_deref() {
            Some("toml") => Format::Toml,
            Some("json") => Format::Json,
            _ => return Err(PolicyError::Extension { path: path.to_owned() }),
        };
        let text =
            std::fs::read_to_string(path).map_err(|source| PolicyError::Read { path: path.to_owned(), source })?;
        match format {
            Format::Toml => Self::from_toml_str(&text),
            Format::Json => Self::from_json_str(&text),
        }
    }

    /// The rules as written.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The per-payment cap of an asset, in atomic units; `None` for an asset the policy does not list.
    pub fn cap(&self, network: &str, asset: &str) -> Option<U256> {
        self.asset(network, asset).map(|a| a.cap)
    }

    /// The symbol and decimals of an asset; `None` for an asset the policy does not list.
    pub fn asset_info(&self, network: &str, asset: &str) -> Option<(&str, u8)> {
        self.asset(network, asset).map(|a| (a.symbol.as_str(), a.decimals))
    }

    fn asset(&self, network: &str, asset: &str) -> Option<&compile::Asset> {
        self.compiled.assets.iter().find(|a| a.is(network, asset))
    }
}

impl SpendPolicy for Policy {
    fn check(&self, spend: &Spend<'_>) -> Result<Allowed, PolicyRefusal> {
        self.compiled.check(spend)
    }
}

impl PartialEq for Policy {
    fn eq(&self, other: &Self) -> bool {
        self.rules == other.rules
    }
}

impl Eq for Policy {}

impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.rules.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_rules(Rules::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}
