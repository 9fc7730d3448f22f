//! The checks of one payment against the index: resource, network, seller, acceptance, unknown amount, asset, payee,
//! cap (and the probation cap), window, budgets, approval, in that order, the first refusal returned.

use std::borrow::Cow;

use ruint::aliases::U256;
use url::Url;

use super::compile::{Asset, Compiled, address_problem, normal};
use super::file::{Acceptance, Per, Unproven};
use crate::gate::{Allowed, Attested, Claim, PolicyRefusal, Purchase, SellerStanding, Spend};
use crate::pairing::Quote;
use crate::refusal::Reason;

fn refuse<T>(reason: Reason, why: String) -> Result<T, PolicyRefusal> {
    Err(PolicyRefusal::new(reason, why))
}

/// An amount for people: its atomic units, and in the asset's units with its symbol (`2500000 (2.5 USDC)`).
fn show(amount: U256, asset: &Asset) -> String {
    let digits = amount.to_string();
    let decimals = usize::from(asset.decimals);
    let padded = if digits.len() <= decimals { format!("{digits:0>width$}", width = decimals + 1) } else { digits };
    let units = match padded.split_at_checked(padded.len().saturating_sub(decimals)) {
        Some((whole, fraction)) if !fraction.trim_end_matches('0').is_empty() => {
            format!("{whole}.{}", fraction.trim_end_matches('0'))
        }
        Some((whole, _)) => whole.to_owned(),
        None => padded.clone(),
    };
    format!("{amount} ({units} {})", asset.symbol)
}

/// A rate in parts per million as a decimal from 0 to 1 (`990000` is `0.99`).
fn rate(ppm: u32) -> String {
    let (whole, fraction) = (ppm / 1_000_000, ppm % 1_000_000);
    if fraction == 0 {
        return whole.to_string();
    }
    let fraction = format!("{fraction:06}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

fn http_url(text: &str) -> Option<Url> {
    Url::parse(text).ok().filter(|u| matches!(u.scheme(), "http" | "https"))
}

impl Compiled {
    /// The payment against every rule: allowed with its claims (and whether a person must approve it), or the first
    /// rule's refusal.
    pub(super) fn check(&self, spend: &Spend<'_>) -> Result<Allowed, PolicyRefusal> {
        let quote = spend.quote;
        let url = self.resource(spend.purchase)?;
        if !self.networks.contains(&quote.network) {
            let why = format!("network {:?} is not one the policy allows ({:?})", quote.network, self.networks);
            return refuse(Reason::NetworkNotAllowed, why);
        }
        let unproven = self.unproven(&spend.seller);
        if let Some(why) = &unproven
            && self.unproven == Unproven::Refuse
        {
            let why = format!(
                "the seller is unproven ({why}), and the policy refuses unproven sellers (unproven = \"refuse\")"
            );
            return refuse(Reason::SellerUnproven, why);
        }
        let approve_acceptance = self.acceptance(spend.acceptance_required)?;
        if !quote.amount_known {
            if self.unknown_amount == super::UnknownAmount::Refuse {
                let why = format!(
                    "the {} payment on {} names no amount, and the policy refuses an unknown amount \
                     (unknown_amount = \"refuse\")",
                    quote.scheme, quote.network
                );
                return refuse(Reason::AmountUnknown, why);
            }
            self.window(quote, spend.now)?;
            return Ok(Allowed::new(Vec::new()).because("unknown_amount = \"approve\""));
        }
        let Some(asset) = self.assets.iter().find(|a| a.is(&quote.network, &quote.asset)) else {
            let why = format!("asset {:?} on {} is not one the policy lists", quote.asset, quote.network);
            return refuse(Reason::AssetNotAllowed, why);
        };
        let payee = self.payee(&quote.payee)?;
        let (amount, what) = match quote.deposit {
            Some(deposit) if deposit > quote.amount => (deposit, "the deposit"),
            _ => (quote.amount, "the amount"),
        };
        if amount > asset.cap {
            let why =
                format!("{what} {} is above the cap {} for {}", show(amount, asset), show(asset.cap, asset), asset.key);
            return refuse(Reason::AmountAboveCap, why);
        }
        if let Some(why) = &unproven
            && self.unproven == Unproven::Probation
        {
            // Every asset has a probation cap under probation (validated); none would hold nothing.
            let cap = asset.probation_cap.unwrap_or(U256::ZERO);
            if amount > cap {
                let why = format!(
                    "{what} {} is above the probation cap {} for {} while the seller is unproven ({why})",
                    show(amount, asset),
                    show(cap, asset),
                    asset.key
                );
                return refuse(Reason::ProbationCap, why);
            }
        }
        self.window(quote, spend.now)?;
        let mut origin: Option<String> = None;
        let mut claims = Vec::with_capacity(asset.budgets.len());
        for budget in &asset.budgets {
            if amount > budget.limit {
                let why = format!(
                    "{what} {} is above the whole of budget {:?} ({} a {} s window)",
                    show(amount, asset),
                    budget.name,
                    show(budget.limit, asset),
                    budget.window
                );
                return refuse(Reason::BudgetExhausted, why);
            }
            let scope = match budget.per {
                None => String::new(),
                Some(Per::Payee) => payee.clone().into_owned(),
                Some(Per::Origin) => match &origin {
                    Some(origin) => origin.clone(),
                    None => {
                        let found = Self::origin(url.as_ref(), spend.purchase, &budget.name)?;
                        origin.insert(found).clone()
                    }
                },
            };
            claims.push(Claim::new(budget.name.clone(), scope, asset.key.clone(), budget.window, budget.limit, amount));
        }
        let allowed = Allowed::new(claims);
        Ok(match asset.approval_above {
            Some(above) if amount > above => {
                allowed.because(format!("approval_above.{:?} = \"{above}\" ({what} {amount})", asset.key))
            }
            _ if approve_acceptance => allowed.because("acceptance_required = \"approve\""),
            _ => allowed,
        })
    }

    /// The acceptance rule: `Ok(true)` when a person must approve the payment because the seller requires signed
    /// acceptance (`acceptance_required = "approve"`), refused under `"refuse"`; `Ok(false)` otherwise.
    fn acceptance(&self, required: Option<bool>) -> Result<bool, PolicyRefusal> {
        if required != Some(true) {
            return Ok(false);
        }
        match self.acceptance {
            Acceptance::Allow => Ok(false),
            Acceptance::Approve => Ok(true),
            Acceptance::Refuse => refuse(
                Reason::AcceptanceRequired,
                "the seller's discovery document requires signed acceptance of its terms (acceptanceRequired), and \
                 the policy refuses such a seller (acceptance_required = \"refuse\")"
                    .to_owned(),
            ),
        }
    }

    /// Why the seller is not proven, or `None` when it is (or when the policy does not read the standing): a proven
    /// seller's standing is attested with figures meeting every minimum of the policy's `proof`.
    fn unproven(&self, seller: &SellerStanding) -> Option<String> {
        if self.unproven == Unproven::Allow {
            return None;
        }
        let SellerStanding::Attested(attested) = seller else {
            return Some("no verified attestation of the seller was given".to_owned());
        };
        let short = self.short(attested);
        (!short.is_empty()).then(|| format!("its attestation falls short of the policy's proof: {}", short.join("; ")))
    }

    /// Each figure of the attestation below the policy's minimum, said.
    fn short(&self, attested: &Attested) -> Vec<String> {
        let mut short = Vec::new();
        let proof = &self.proof;
        if let Some(days) = proof.window_days {
            let least = u128::from(days) * 86_400;
            if u128::from(attested.window_seconds()) < least {
                let window = attested.window_seconds();
                short.push(format!("its window of {window} s is below min_window_days = {days} ({least} s)"));
            }
        }
        if let Some(least) = proof.calls
            && attested.calls() < least
        {
            short.push(format!("its {} calls are below min_calls = {least}", attested.calls()));
        }
        if let Some((least, written)) = &proof.success
            && attested.success_ppm() < *least
        {
            let rate = rate(attested.success_ppm());
            short.push(format!("its success rate {rate} is below min_success = \"{written}\""));
        }
        short
    }

    /// The purchase's URL under an allowed prefix: the URL parsed (`None` where any resource is allowed).
    fn resource(&self, purchase: Option<&Purchase>) -> Result<Option<Url>, PolicyRefusal> {
        if self.any_resource {
            return Ok(None);
        }
        let Some(purchase) = purchase else {
            let why = "the payment names no purchase, and the policy allows only the resources it lists".to_owned();
            return refuse(Reason::ResourceNotAllowed, why);
        };
        let Some(url) = http_url(&purchase.url) else {
            return refuse(Reason::ResourceNotAllowed, format!("resource {:?} is not an http(s) URL", purchase.url));
        };
        if self.prefixes.iter().any(|p| p.covers(&url)) {
            return Ok(Some(url));
        }
        refuse(Reason::ResourceNotAllowed, format!("resource {:?} is under no prefix the policy allows", url.as_str()))
    }

    /// The origin a per-origin budget is kept under.
    fn origin(url: Option<&Url>, purchase: Option<&Purchase>, budget: &str) -> Result<String, PolicyRefusal> {
        if let Some(url) = url {
            return Ok(url.origin().ascii_serialization());
        }
        match purchase.and_then(|p| http_url(&p.url)) {
            Some(url) => Ok(url.origin().ascii_serialization()),
            None => {
                let why = format!("budget {budget:?} is kept per origin, and the payment names no http(s) URL");
                refuse(Reason::ResourceNotAllowed, why)
            }
        }
    }

    /// The payee, well formed, not denied and allowed: in the form it is compared in.
    fn payee<'q>(&self, payee: &'q str) -> Result<Cow<'q, str>, PolicyRefusal> {
        if let Some(problem) = address_problem(payee, true) {
            return refuse(Reason::PayeeNotAllowed, format!("the payee {problem}"));
        }
        let compared = normal(payee);
        if self.deny.contains(compared.as_ref()) {
            return refuse(Reason::PayeeNotAllowed, format!("payee {payee:?} is denied"));
        }
        match &self.allow {
            Some(allow) if !allow.contains(compared.as_ref()) => {
                refuse(Reason::PayeeNotAllowed, format!("payee {payee:?} is not one the policy allows"))
            }
            _ => Ok(compared),
        }
    }

    /// The signed authorisation's window within the policy's maximum.
    fn window(&self, quote: &Quote, now: u64) -> Result<(), PolicyRefusal> {
        let Some(max) = self.max_validity else {
            return Ok(());
        };
        let Some(before) = quote.valid_before else {
            let why = format!("the quote names no end to its authorisation, and the policy allows at most {max} s");
            return refuse(Reason::WindowTooLong, why);
        };
        let from = quote.valid_after.unwrap_or(0).max(now);
        let length = before.saturating_sub(from);
        if length > max {
            let why =
                format!("the authorisation is valid {length} s (from {from} to {before}), above the policy's {max} s");
            return refuse(Reason::WindowTooLong, why);
        }
        Ok(())
    }
}
