//! Amounts for people: `0.01 USDC (10000)` wherever the asset's decimals are known (the policy's assets, then the
//! built-in table of well-known assets), and `--max` in atomic units (`10000`) or in the asset's units
//! (`0.01USDC`, `0.01 USDC`).

use terms::U256;
use terms::safety::policy::Policy;

use crate::known_assets::KNOWN_ASSETS;

/// One asset whose symbol and decimals are known.
#[derive(Debug, Clone)]
struct Known {
    network: String,
    address: String,
    symbol: String,
    decimals: u8,
}

/// The assets whose symbol and decimals are known: the policy's first, then the built-in table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Assets(Vec<Known>);

/// Whether two asset names are the same: `0x`-hex case-insensitively (as the policy compares them), else exactly.
fn same(a: &str, b: &str) -> bool {
    if a.starts_with("0x") || a.starts_with("0X") { a.eq_ignore_ascii_case(b) } else { a == b }
}

impl Assets {
    /// The policy's assets, then the built-in ones.
    pub(crate) fn of(policy: Option<&Policy>) -> Self {
        let mut all: Vec<Known> = policy
            .map(|p| p.rules().assets.iter())
            .into_iter()
            .flatten()
            .map(|a| Known {
                network: a.network.clone(),
                address: a.address.clone(),
                symbol: a.symbol.clone(),
                decimals: a.decimals,
            })
            .collect();
        all.extend(KNOWN_ASSETS.iter().map(|(network, address, symbol, decimals)| Known {
            network: (*network).to_owned(),
            address: (*address).to_owned(),
            symbol: (*symbol).to_owned(),
            decimals: *decimals,
        }));
        Self(all)
    }

    fn find(&self, network: &str, asset: &str) -> Option<&Known> {
        self.0.iter().find(|k| k.network == network && same(&k.address, asset))
    }

    /// The asset's symbol, or the asset as named where it is not known.
    pub(crate) fn symbol<'a>(&'a self, network: &str, asset: &'a str) -> &'a str {
        self.find(network, asset).map_or(asset, |k| k.symbol.as_str())
    }

    /// `0.01 USDC (10000)` where the asset is known; else `10000 of <asset>`.
    pub(crate) fn show(&self, network: &str, asset: &str, amount: U256) -> String {
        match self.find(network, asset) {
            Some(k) => format!("{} {} ({amount})", decimal(amount, k.decimals), k.symbol),
            None => format!("{amount} of {asset}"),
        }
    }

    /// The decimals of every known asset of this symbol (case-insensitive).
    fn decimals_of(&self, symbol: &str) -> Vec<u8> {
        self.0.iter().filter(|k| k.symbol.eq_ignore_ascii_case(symbol)).map(|k| k.decimals).collect()
    }
}

/// `amount` atomic units in units of `decimals` decimals: `10000`, 6 → `0.01`; `2500000`, 6 → `2.5`.
pub(crate) fn decimal(amount: U256, decimals: u8) -> String {
    let digits = amount.to_string();
    let d = usize::from(decimals);
    if d == 0 {
        return digits;
    }
    let padded = format!("{digits:0>width$}", width = d + 1);
    let (whole, fraction) = padded.split_at(padded.len() - d);
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() { whole.to_owned() } else { format!("{whole}.{fraction}") }
}

/// Unix seconds as RFC 3339 in UTC (`2026-12-07T16:40:00Z`): the days counted to a civil date (H. Hinnant's
/// `civil_from_days`).
pub(crate) fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `--max`: atomic units, or an amount in a known asset's units.
#[derive(Debug, Clone)]
pub(crate) struct Max {
    /// As written.
    pub(crate) text: String,
    kind: MaxKind,
}

#[derive(Debug, Clone)]
enum MaxKind {
    Atomic(U256),
    Units { whole: String, fraction: String, symbol: String },
}

impl Max {
    /// Reads `--max`; an unknown symbol, or more decimals than every known asset of the symbol has, is refused.
    pub(crate) fn parse(text: &str, assets: &Assets) -> Result<Self, String> {
        let trimmed = text.trim();
        let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
        let (number, symbol) = trimmed.split_at(split);
        let symbol = symbol.trim();
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(fraction) || (number.contains('.') && fraction.is_empty()) {
            return Err(format!("--max {text}: not an amount (10000 atomic units, or 0.01USDC)"));
        }
        if symbol.is_empty() {
            if !fraction.is_empty() {
                return Err(format!("--max {text}: an amount with decimals needs its asset's symbol (0.01USDC)"));
            }
            let atomic = whole.parse::<U256>().map_err(|_| format!("--max {text}: too large"))?;
            return Ok(Self { text: text.to_owned(), kind: MaxKind::Atomic(atomic) });
        }
        let decimals = assets.decimals_of(symbol);
        let Some(most) = decimals.iter().max() else {
            return Err(format!(
                "--max {text}: {symbol} is not an asset the policy or the built-in table knows; give the amount in \
                 atomic units"
            ));
        };
        if fraction.len() > usize::from(*most) {
            return Err(format!("--max {text}: {symbol} has {most} decimals, not {}", fraction.len()));
        }
        let kind = MaxKind::Units { whole: whole.to_owned(), fraction: fraction.to_owned(), symbol: symbol.to_owned() };
        Ok(Self { text: text.to_owned(), kind })
    }

    /// The cap in the atomic units of the payment's asset; why not, where the cap is in another asset.
    pub(crate) fn atomic(&self, assets: &Assets, network: &str, asset: &str) -> Result<U256, String> {
        let (whole, fraction, symbol) = match &self.kind {
            MaxKind::Atomic(n) => return Ok(*n),
            MaxKind::Units { whole, fraction, symbol } => (whole, fraction, symbol),
        };
        let known = assets.find(network, asset).filter(|k| k.symbol.eq_ignore_ascii_case(symbol)).ok_or_else(|| {
            format!("the cap is in {symbol}; this payment is in {} on {network}", assets.symbol(network, asset))
        })?;
        let d = usize::from(known.decimals);
        if fraction.len() > d {
            return Err(format!("{symbol} on {network} has {d} decimals"));
        }
        format!("{whole}{fraction:0<d$}").parse::<U256>().map_err(|_| "too large".to_owned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_and_show_in_the_assets_units() {
        let assets = Assets::of(None);
        let usdc = ("eip155:84532", "0x036cbd53842c5426634e7929541ec2318f3dcf7e");
        assert_eq!(assets.show(usdc.0, usdc.1, U256::from(10_000u32)), "0.01 USDC (10000)");
        assert_eq!(assets.show(usdc.0, usdc.1, U256::from(2_500_000u32)), "2.5 USDC (2500000)");
        assert_eq!(assets.show(usdc.0, usdc.1, U256::from(0u32)), "0 USDC (0)");
        assert_eq!(assets.show("eip155:1", usdc.1, U256::from(7u32)), format!("7 of {}", usdc.1));
        for (text, atomic) in [("0.01USDC", 10_000u32), ("0.01 usdc", 10_000), ("1USDC", 1_000_000), ("5000", 5000)] {
            let max = Max::parse(text, &assets).unwrap();
            assert_eq!(max.atomic(&assets, usdc.0, usdc.1).unwrap(), U256::from(atomic), "{text}");
        }
        for bad in ["0.0000001USDC", "1DOGE", "0.5", "", "USDC", "1.USDC", "-1", "1e6"] {
            assert!(Max::parse(bad, &assets).is_err(), "{bad}");
        }
        let cap = Max::parse("1USDC", &assets).unwrap();
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_746_410), "2026-12-08T16:13:30Z");
        assert!(cap.atomic(&assets, "eip155:1", "0xdead").unwrap_err().contains("the cap is in USDC"));
    }
}
