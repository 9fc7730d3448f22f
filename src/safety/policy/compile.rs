//! Validating [`Rules`] into the index the checks read: amounts parsed, addresses lowercased, URL prefixes parsed,
//! budgets hung on their assets. Built once, at load; a check then only compares.

use std::borrow::Cow;
use std::collections::HashSet;

use ruint::aliases::U256;
use url::Url;

use super::error::{PolicyError, Problem};
use super::file::{Per, Rules, Unproven};
use crate::pairing::parse_atomic;

/// The validated policy, indexed for its checks.
#[derive(Debug, Clone)]
pub(super) struct Compiled {
    /// `resources = ["*"]`.
    pub(super) any_resource: bool,
    pub(super) prefixes: Vec<Prefix>,
    pub(super) networks: Vec<String>,
    pub(super) assets: Vec<Asset>,
    /// Normalized ([`normal`]).
    pub(super) allow: Option<HashSet<String>>,
    /// Normalized ([`normal`]).
    pub(super) deny: HashSet<String>,
    pub(super) max_validity: Option<u64>,
    pub(super) unknown_amount: super::UnknownAmount,
    pub(super) unproven: Unproven,
    pub(super) proof: Minimums,
    pub(super) acceptance: super::Acceptance,
}

/// The minimum figures of an attestation that proves a seller; `None`, no minimum.
#[derive(Debug, Clone, Default)]
pub(super) struct Minimums {
    pub(super) window_days: Option<u64>,
    pub(super) calls: Option<u64>,
    /// Parts per million, and as written.
    pub(super) success: Option<(u32, String)>,
}

/// An allowed resource prefix, parsed.
#[derive(Debug, Clone)]
pub(super) struct Prefix {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

impl Prefix {
    /// Whether the URL is under this prefix: the same scheme, host and port, and a path starting with the prefix's,
    /// on a segment boundary unless the prefix ends with `/`.
    pub(super) fn covers(&self, url: &Url) -> bool {
        url.scheme() == self.scheme
            && url.host_str() == Some(self.host.as_str())
            && url.port_or_known_default() == Some(self.port)
            && url
                .path()
                .strip_prefix(self.path.as_str())
                .is_some_and(|rest| self.path.ends_with('/') || rest.is_empty() || rest.starts_with('/'))
    }
}

/// A listed asset with its cap, approval threshold and budgets.
#[derive(Debug, Clone)]
pub(super) struct Asset {
    pub(super) network: String,
    /// Normalized ([`normal`]).
    pub(super) address: String,
    /// `<network>/<address>` as the policy writes it: the claims' asset.
    pub(super) key: String,
    pub(super) symbol: String,
    pub(super) decimals: u8,
    pub(super) cap: U256,
    pub(super) approval_above: Option<U256>,
    /// The cap for an unproven seller, with `unproven = "probation"` (then every asset has one).
    pub(super) probation_cap: Option<U256>,
    pub(super) budgets: Vec<Budget>,
}

impl Asset {
    /// Whether the asset is this one: the network exactly, the address by [`same`].
    pub(super) fn is(&self, network: &str, address: &str) -> bool {
        self.network == network && same(&self.address, address)
    }
}

/// A budget, on its asset.
#[derive(Debug, Clone)]
pub(super) struct Budget {
    pub(super) name: String,
    pub(super) window: u64,
    pub(super) limit: U256,
    pub(super) per: Option<Per>,
}

/// Whether the text is `0x` (or `0X`) and one or more hex digits.
pub(super) fn is_hex(text: &str) -> bool {
    text.strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The form an address is compared in: `0x`-hex lowercased, anything else as written.
pub(super) fn normal(text: &str) -> Cow<'_, str> {
    if is_hex(text) && text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// Whether two addresses are the same: `0x`-hex case-insensitively, anything else exactly.
pub(super) fn same(a: &str, b: &str) -> bool {
    if is_hex(a) && is_hex(b) { a.eq_ignore_ascii_case(b) } else { a == b }
}

/// What is wrong with an address (an asset's or a payee's), if anything: empty, whitespace or control characters,
/// `0x` but not hex, or (where `zero` refuses) all zeros.
pub(super) fn address_problem(text: &str, zero: bool) -> Option<Problem> {
    if text.is_empty() {
        return Some(Problem::Empty);
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some(Problem::Whitespace(text.to_owned()));
    }
    let digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    match digits {
        Some(_) if !is_hex(text) => Some(Problem::NotHex(text.to_owned())),
        Some(d) if zero && d.bytes().all(|b| b == b'0') => Some(Problem::ZeroAddress(text.to_owned())),
        _ => None,
    }
}

fn all(text: &str, len: std::ops::RangeInclusive<usize>, ok: impl Fn(u8) -> bool) -> bool {
    len.contains(&text.len()) && text.bytes().all(ok)
}

/// CAIP-2, `namespace:reference`: `[-a-z0-9]{3,32}` (CAIP-2 says at most 8; `cloudflare:402` has 10) and
/// `[-_a-zA-Z0-9]{1,32}`.
pub(super) fn is_network(text: &str) -> bool {
    text.split_once(':').is_some_and(|(ns, reference)| {
        all(ns, 3..=32, |b| b == b'-' || b.is_ascii_lowercase() || b.is_ascii_digit())
            && all(reference, 1..=32, |b| b == b'-' || b == b'_' || b.is_ascii_alphanumeric())
    })
}

fn atomic(member: String, text: &str) -> Result<U256, PolicyError> {
    parse_atomic(text).ok_or_else(|| PolicyError::invalid(member, Problem::NotAnAmount(text.to_owned())))
}

/// A success rate in parts per million: `0` or `1`, then optionally a point and one to six digits, at most 1.
pub(super) fn ppm(text: &str) -> Option<u32> {
    let (whole, fraction) = match text.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.len() <= 6 && f.bytes().all(|b| b.is_ascii_digit()) => (w, f),
        Some(_) => return None,
        None => (text, ""),
    };
    let whole: u32 = match whole {
        "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let fraction = fraction.bytes().chain(std::iter::repeat(b'0')).take(6);
    let fraction = fraction.fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
    let value = whole * 1_000_000 + fraction;
    (value <= 1_000_000).then_some(value)
}

/// The probation caps on their assets, and the seller rules' members checked against `unproven`.
fn seller_rules(rules: &Rules, assets: &mut [Asset]) -> Result<Minimums, PolicyError> {
    let mut seen: Vec<Option<&String>> = vec![None; assets.len()];
    for (reference, written) in &rules.probation.caps {
        let member = format!("probation.caps.{reference:?}");
        let Some(i) = listed(assets, reference) else {
            return Err(PolicyError::invalid(member, Problem::UnlistedAsset(reference.clone())));
        };
        let cap = atomic(member.clone(), written)?;
        if let Some(Some(first)) = seen.get(i) {
            return Err(PolicyError::invalid(member, Problem::DuplicateProbationCap(String::clone(first))));
        }
        if let (Some(asset), Some(seen)) = (assets.get_mut(i), seen.get_mut(i)) {
            if cap > asset.cap {
                let problem = Problem::ProbationAboveCap { probation: written.clone(), cap: asset.cap.to_string() };
                return Err(PolicyError::invalid(member, problem));
            }
            asset.probation_cap = Some(cap);
            *seen = Some(reference);
        }
    }
    match rules.unproven {
        Unproven::Probation => {
            if let Some(bare) = assets.iter().find(|a| a.probation_cap.is_none()) {
                return Err(PolicyError::invalid("probation.caps", Problem::ProbationCapMissing(bare.key.clone())));
            }
        }
        other if !rules.probation.is_empty() => {
            return Err(PolicyError::invalid("probation", Problem::ProbationUnused(other.as_str())));
        }
        _ => {}
    }
    if rules.unproven == Unproven::Allow && !rules.proof.is_empty() {
        return Err(PolicyError::invalid("proof", Problem::ProofUnused));
    }
    let success = match &rules.proof.min_success {
        None => None,
        Some(text) => match ppm(text) {
            Some(value) => Some((value, text.clone())),
            None => return Err(PolicyError::invalid("proof.min_success", Problem::NotARate(text.clone()))),
        },
    };
    Ok(Minimums { window_days: rules.proof.min_window_days, calls: rules.proof.min_calls, success })
}

fn prefix(member: &str, text: &str) -> Result<Prefix, PolicyError> {
    let bad = |why| PolicyError::invalid(member, Problem::NotAResource { value: text.to_owned(), why });
    let url = Url::parse(text).map_err(|_| bad("not an absolute URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("not http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("it names a user"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("it has a query or fragment"));
    }
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err(bad("no host"));
    };
    Ok(Prefix { scheme: url.scheme().to_owned(), host: host.to_owned(), port, path: url.path().to_owned() })
}

/// The listed asset an asset reference (`<network>/<address>`) names: its index.
fn listed(assets: &[Asset], reference: &str) -> Option<usize> {
    let (network, address) = reference.split_once('/')?;
    assets.iter().position(|a| a.is(network, address))
}

fn payees(member: &str, list: &[String]) -> Result<HashSet<String>, PolicyError> {
    list.iter()
        .enumerate()
        .map(|(i, p)| match address_problem(p, true) {
            Some(problem) => Err(PolicyError::invalid(format!("{member}[{i}]"), problem)),
            None => Ok(normal(p).into_owned()),
        })
        .collect()
}

/// Validates the rules and builds their index.
pub(super) fn compile(rules: &Rules) -> Result<Compiled, PolicyError> {
    let star = rules.resources.iter().any(|r| r == "*");
    if star && rules.resources.len() > 1 {
        let at = rules.resources.iter().position(|r| r != "*").unwrap_or(0);
        return Err(PolicyError::invalid(format!("resources[{at}]"), Problem::StarNotAlone));
    }
    let prefixes = if star {
        Vec::new()
    } else {
        let each = rules.resources.iter().enumerate();
        each.map(|(i, r)| prefix(&format!("resources[{i}]"), r)).collect::<Result<_, _>>()?
    };
    for (i, n) in rules.networks.iter().enumerate() {
        if !is_network(n) {
            return Err(PolicyError::invalid(format!("networks[{i}]"), Problem::NotANetwork(n.clone())));
        }
    }

    let mut assets: Vec<Asset> = Vec::with_capacity(rules.assets.len());
    for (i, a) in rules.assets.iter().enumerate() {
        let at = |m: &str| format!("assets[{i}].{m}");
        if !is_network(&a.network) {
            return Err(PolicyError::invalid(at("network"), Problem::NotANetwork(a.network.clone())));
        }
        if !rules.networks.contains(&a.network) {
            return Err(PolicyError::invalid(at("network"), Problem::NetworkNotListed(a.network.clone())));
        }
        if let Some(problem) = address_problem(&a.address, false) {
            return Err(PolicyError::invalid(at("address"), problem));
        }
        if a.symbol.trim().is_empty() {
            return Err(PolicyError::invalid(at("symbol"), Problem::Empty));
        }
        if a.decimals > 77 {
            return Err(PolicyError::invalid(at("decimals"), Problem::Decimals(a.decimals)));
        }
        let cap = atomic(at("cap"), &a.cap)?;
        if let Some(first) = assets.iter().position(|b| b.is(&a.network, &a.address)) {
            return Err(PolicyError::invalid(format!("assets[{i}]"), Problem::DuplicateAsset(first)));
        }
        assets.push(Asset {
            network: a.network.clone(),
            address: normal(&a.address).into_owned(),
            key: format!("{}/{}", a.network, a.address),
            symbol: a.symbol.clone(),
            decimals: a.decimals,
            cap,
            approval_above: None,
            probation_cap: None,
            budgets: Vec::new(),
        });
    }

    let mut thresholds: Vec<Option<&String>> = vec![None; assets.len()];
    for (reference, above) in &rules.approval_above {
        let member = format!("approval_above.{reference:?}");
        let Some(i) = listed(&assets, reference) else {
            return Err(PolicyError::invalid(member, Problem::UnlistedAsset(reference.clone())));
        };
        let above = atomic(member.clone(), above)?;
        if let Some(Some(first)) = thresholds.get(i) {
            return Err(PolicyError::invalid(member, Problem::DuplicateThreshold(String::clone(first))));
        }
        if let (Some(asset), Some(seen)) = (assets.get_mut(i), thresholds.get_mut(i)) {
            asset.approval_above = Some(above);
            *seen = Some(reference);
        }
    }

    for (i, b) in rules.budgets.iter().enumerate() {
        let at = |m: &str| format!("budgets[{i}].{m}");
        if b.name.trim().is_empty() {
            return Err(PolicyError::invalid(at("name"), Problem::Empty));
        }
        if let Some(first) = rules.budgets.iter().position(|o| o.name == b.name).filter(|&f| f < i) {
            return Err(PolicyError::invalid(at("name"), Problem::DuplicateBudget(first)));
        }
        let limit = atomic(at("limit"), &b.limit)?;
        let asset = listed(&assets, &b.asset).and_then(|k| assets.get_mut(k));
        let Some(asset) = asset else {
            return Err(PolicyError::invalid(at("asset"), Problem::UnlistedAsset(b.asset.clone())));
        };
        let window = b.window.seconds();
        if let Some(other) = asset.budgets.iter().find(|o| o.window == window && o.per == b.per) {
            return Err(PolicyError::invalid(format!("budgets[{i}]"), Problem::OverlappingWindows(other.name.clone())));
        }
        asset.budgets.push(Budget { name: b.name.clone(), window, limit, per: b.per });
    }

    let proof = seller_rules(rules, &mut assets)?;
    let allow = rules.payees.allow.as_deref().map(|list| payees("payees.allow", list)).transpose()?;
    let deny = payees("payees.deny", &rules.payees.deny)?;
    Ok(Compiled {
        any_resource: star,
        prefixes,
        networks: rules.networks.clone(),
        assets,
        allow,
        deny,
        max_validity: rules.max_validity_seconds,
        unknown_amount: rules.unknown_amount,
        unproven: rules.unproven,
        proof,
        acceptance: rules.acceptance_required,
    })
}
