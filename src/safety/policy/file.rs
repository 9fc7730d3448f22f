//! The policy as written: plain serde data, every member named, none unknown. [`Policy`](super::Policy) validates
//! it and keeps it beside the index its checks read.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A spend policy as written in its file (TOML or JSON). Every member is named; an unknown one is an error. Amounts
/// are quoted decimal strings of atomic units (`"1000000"`, not `1000000`), exactly as a quote writes them.
///
/// ```toml
/// resources = ["https://api.seller.example/v1/"]
/// networks = ["eip155:8453"]
/// max_validity_seconds = 3600
/// approval_above = { "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" = "5000000" }
/// unproven = "probation"
///
/// [[assets]]
/// network = "eip155:8453"
/// address = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
/// symbol = "USDC"
/// decimals = 6
/// cap = "1000000"
///
/// [payees]
/// deny = ["0x000000000000000000000000000000000000dEaD"]
///
/// [[budgets]]
/// name = "usdc-day"
/// asset = "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
/// window = "day"
/// limit = "50000000"
///
/// [probation]
/// caps = { "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" = "100000" }
///
/// [proof]
/// min_window_days = 30
/// min_calls = 1000
/// min_success = "0.99"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Rules {
    /// The resources the agent may buy: absolute `http`/`https` URL prefixes (the origin must match exactly; the path
    /// is a prefix on a segment boundary, or as written when it ends with `/`), or `["*"]` alone for any resource
    /// (then a payment that names no purchase is allowed too). Empty: none.
    pub resources: Vec<String>,
    /// The CAIP-2 networks payments may be on, compared exactly (`eip155:8453`). Empty: none.
    pub networks: Vec<String>,
    /// The longest a signed authorisation may be valid, in seconds, from now (or its start, if later) to its end.
    /// When set, a quote that names no end refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_validity_seconds: Option<u64>,
    /// Per asset (`<network>/<address>`, a listed asset): the amount above which a payment is handed back for a
    /// person's approval.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "amount_map")]
    pub approval_above: BTreeMap<String, String>,
    /// The assets payments may be in, each with its per-payment cap. Empty: none.
    pub assets: Vec<AssetRule>,
    /// The payees allowed and denied.
    #[serde(default, skip_serializing_if = "Payees::is_open")]
    pub payees: Payees,
    /// The budgets payments count against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<BudgetRule>,
    /// What a payment whose quote names no amount gets (a card or checkout charge, whose amount is the seller's
    /// processor's: [`Quote::amount_known`](crate::Quote::amount_known) `false`): refused (the default), or handed
    /// back for a person's approval.
    #[serde(default, skip_serializing_if = "UnknownAmount::is_refuse")]
    pub unknown_amount: UnknownAmount,
    /// What a payment to a seller the policy does not count as proven gets ([`Unproven`]): paid as any other (the
    /// default), paid within the lower caps of [`Rules::probation`], or refused. A seller is proven when the caller
    /// passed a verified attestation ([`SellerStanding`](crate::safety::SellerStanding)) whose figures meet every
    /// minimum of [`Rules::proof`].
    #[serde(default, skip_serializing_if = "Unproven::is_allow")]
    pub unproven: Unproven,
    /// The lower limits an unproven seller is paid within, with `unproven = "probation"` (and only then).
    #[serde(default, skip_serializing_if = "ProbationRule::is_empty")]
    pub probation: ProbationRule,
    /// The figures a seller's attestation must meet for the seller to count as proven, with `unproven` set to
    /// `"probation"` or `"refuse"` (and only then). Absent, any verified attestation proves.
    #[serde(default, skip_serializing_if = "ProofRule::is_empty")]
    pub proof: ProofRule,
    /// What a payment to a seller whose discovery document requires signed acceptance of its terms
    /// (`acceptanceRequired: true`, LCP §2.5) gets ([`Acceptance`]): paid as any other (the default), handed back
    /// for a person's approval, or refused.
    #[serde(default, skip_serializing_if = "Acceptance::is_allow")]
    pub acceptance_required: Acceptance,
}

/// What a payment to a seller that requires signed acceptance gets ([`Rules::acceptance_required`]), written
/// `"allow"`, `"approve"` or `"refuse"`. The rule reads what the caller read from the seller's discovery document
/// ([`Spend::acceptance_required`](crate::safety::Spend::acceptance_required)); a seller whose document does not say
/// `true`, or whose document the caller did not read, states no requirement (LCP §2 makes the document and the
/// member optional), and the rule lets its payments through. The default, `"allow"`, is ours: every policy written
/// before the rule keeps its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Acceptance {
    /// Paid as any other: the requirement is not read. The default.
    #[default]
    Allow,
    /// Allowed only once a person approves it (a person decides whether to accept the terms as the seller asks).
    Approve,
    /// Refused, `policy/acceptance-required`, whatever the amount.
    Refuse,
}

impl Acceptance {
    fn is_allow(&self) -> bool {
        *self == Self::Allow
    }

    /// As written, e.g. `approve`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Approve => "approve",
            Self::Refuse => "refuse",
        }
    }
}

/// What a payment to an unproven seller gets ([`Rules::unproven`]), written `"allow"`, `"probation"` or `"refuse"`.
///
/// The default, `"allow"`, is ours: the seller's standing is new to the policy, and with it every policy written
/// before keeps exactly the meaning it had (a buyer who never passes a standing sees no change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Unproven {
    /// Paid as a proven seller is: the standing is not read. The default.
    #[default]
    Allow,
    /// Paid within [`ProbationRule::caps`] instead of the assets' caps; above one, refused `policy/probation-cap`.
    Probation,
    /// Refused, `policy/seller-unproven`, whatever the amount.
    Refuse,
}

impl Unproven {
    fn is_allow(&self) -> bool {
        *self == Self::Allow
    }

    /// As written, e.g. `probation`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Probation => "probation",
            Self::Refuse => "refuse",
        }
    }
}

/// The lower limits an unproven seller is paid within ([`Rules::probation`]).
///
/// ```toml
/// unproven = "probation"
///
/// [probation]
/// caps = { "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" = "100000" }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProbationRule {
    /// Per asset (`<network>/<address>`, a listed asset): the most one payment to an unproven seller may move, in
    /// atomic units, at most the asset's `cap`. With `unproven = "probation"` every listed asset has one (`"0"` pays
    /// an unproven seller nothing in it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "amount_map")]
    pub caps: BTreeMap<String, String>,
}

impl ProbationRule {
    /// Whether nothing is written.
    pub fn is_empty(&self) -> bool {
        self.caps.is_empty()
    }
}

/// The minimum figures of a seller's attestation for the seller to count as proven ([`Rules::proof`]). A figure not
/// written has no minimum; an attestation below any written one leaves the seller unproven.
///
/// ```toml
/// [proof]
/// min_window_days = 30
/// min_calls = 1000
/// min_success = "0.99"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProofRule {
    /// The shortest window the attestation may cover, in days of 86,400 seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_window_days: Option<u64>,
    /// The fewest calls it may have seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_calls: Option<u64>,
    /// The lowest share of them that may have succeeded: a quoted decimal from `"0"` to `"1"` with at most six
    /// places (`"0.99"`), exact as parts per million; a number is not read.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "rate")]
    pub min_success: Option<String>,
}

impl ProofRule {
    /// Whether nothing is written.
    pub fn is_empty(&self) -> bool {
        self.min_window_days.is_none() && self.min_calls.is_none() && self.min_success.is_none()
    }
}

/// What a payment of an unknown amount gets ([`Rules::unknown_amount`]), written `"refuse"` or `"approve"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum UnknownAmount {
    /// Refused, `policy/amount-unknown`: no cap or budget can hold an amount no one named.
    #[default]
    Refuse,
    /// Allowed only once a person approves it, after the resource, network and window rules; the asset, payee, cap
    /// and budget rules are not applied (the quote names none of them), and no budget counts it.
    Approve,
}

impl UnknownAmount {
    fn is_refuse(&self) -> bool {
        *self == Self::Refuse
    }
}

/// An asset payments may be in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AssetRule {
    /// Its CAIP-2 network, one of [`Rules::networks`].
    pub network: String,
    /// Its address as the quote names it (a token contract, or a currency code); `0x`-hex is compared
    /// case-insensitively, anything else exactly.
    pub address: String,
    /// Its symbol (`USDC`), for people.
    pub symbol: String,
    /// Its decimals (6 for USDC), at most 77.
    pub decimals: u8,
    /// The most one payment may move, in atomic units.
    #[serde(deserialize_with = "amount")]
    pub cap: String,
}

/// The payees allowed and denied. `0x`-hex is compared case-insensitively, anything else exactly. An empty payee,
/// a malformed `0x` one and an all-zero one (the zero address) always refuse.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Payees {
    /// When present, only these (and `[]` allows none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Never these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

impl Payees {
    fn is_open(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }
}

/// A budget: what payments in one asset may move together in a rolling window, over the asset or per payee or per
/// origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BudgetRule {
    /// Its name, unique in the policy.
    pub name: String,
    /// The asset it counts, `<network>/<address>` of a listed asset.
    pub asset: String,
    /// The rolling window.
    pub window: Window,
    /// What the window may hold, in atomic units.
    #[serde(deserialize_with = "amount")]
    pub limit: String,
    /// Kept per payee or per origin; absent, one budget over all of the asset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<Per>,
}

/// A budget's rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Window {
    /// 3,600 seconds.
    Hour,
    /// 86,400 seconds.
    Day,
    /// 2,592,000 seconds (30 days).
    Month,
}

impl Window {
    /// The window's length in seconds.
    pub const fn seconds(self) -> u64 {
        match self {
            Self::Hour => 3_600,
            Self::Day => 86_400,
            Self::Month => 2_592_000,
        }
    }

    /// The window as written, e.g. `day`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Month => "month",
        }
    }
}

/// What a budget is kept per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Per {
    /// One budget per payee (its `0x`-hex lowercased).
    Payee,
    /// One budget per origin of the purchase's URL (`https://api.seller.example`).
    Origin,
}

impl Per {
    /// As written, e.g. `payee`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Payee => "payee",
            Self::Origin => "origin",
        }
    }
}

const AMOUNT_TEXT: &str = "an amount: a quoted decimal string of atomic units, e.g. \"1000000\" (numbers are not read)";

struct AmountText;

impl Visitor<'_> for AmountText {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(AMOUNT_TEXT)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<String, E> {
        Ok(text.to_owned())
    }
}

/// An amount's text: a string, and nothing else (a number is an error that says to quote it). Its digits are
/// checked when the policy is validated, so the error names the member.
fn amount<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    deserializer.deserialize_str(AmountText)
}

const RATE_TEXT: &str = "a success rate: a quoted decimal from \"0\" to \"1\", e.g. \"0.99\" (numbers are not read)";

struct RateText;

impl Visitor<'_> for RateText {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(RATE_TEXT)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Option<String>, E> {
        Ok(Some(text.to_owned()))
    }
}

/// A success rate's text: a string, and nothing else (a number is an error that says to quote it, as an amount's
/// is: a float would not keep `0.99` exactly). Its form is checked when the policy is validated.
fn rate<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_str(RateText)
}

#[derive(Deserialize)]
#[serde(transparent)]
struct Amount(#[serde(deserialize_with = "amount")] String);

fn amount_map<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    let map = BTreeMap::<String, Amount>::deserialize(deserializer)?;
    Ok(map.into_iter().map(|(k, Amount(v))| (k, v)).collect())
}
