//! The checks a buyer runs alone, with no I/O: a receipt's digests against what the buyer holds, a mandate chain
//! that only narrows, a presentation that is fresh and unexpired, a quote that still holds, a purchase the mandate
//! allows. Each takes `now` (Unix seconds, from the caller's [`Clock`](crate::Clock)) and never reads the system
//! time.
//!
//! Times are compared in whole seconds. "Past" a time means strictly after it: a document whose `expires` is now
//! still holds, one second later it does not.

use serde_json::Value;

use super::read::{Document, Signed};
use super::sign::unix;
use super::types::{Amount, KeyList, Link, Presentation, Quote, Receipt};
use super::{ContractError, MAX_CHAIN, MAX_CLOCK_SKEW, MAX_PRESENTATION_AGE};
use crate::hash::{AtrHash, atr_hash};

/// Written in a mismatch where one side has no digest at all (a receipt naming no mandate, a buyer holding none).
const NONE: &str = "(none)";

fn digest(member: &'static str, named: &str, held: &AtrHash) -> Result<(), ContractError> {
    // A malformed digest is never equal to anything, as the gate reads H.
    if AtrHash::parse(named).is_some_and(|n| n == *held) {
        Ok(())
    } else {
        Err(ContractError::DigestMismatch { member, named: named.to_owned(), held: held.to_hex() })
    }
}

/// Checks that the receipt's `output` is the SHA-256 of the body the buyer received, byte for byte: the seller
/// signed for exactly this answer.
pub fn check_output(receipt: &Receipt, body: &[u8]) -> Result<(), ContractError> {
    digest("output", &receipt.output, &atr_hash(body))
}

/// Checks that a terms digest a document names (a receipt's or a quote's `terms`, an offer card's `terms.digest`,
/// a challenge offer's `terms`) is the H the gate compared: the same SHA-256 of the same terms bytes, so an ATR and
/// a contract's terms are one check. Either case of hex digits reads; a malformed digest is a mismatch.
pub fn check_terms(named: &str, compared: &AtrHash) -> Result<(), ContractError> {
    digest("terms", named, compared)
}

/// The digest a receipt's `mandate` names for a presentation: SHA-256 of the RFC 8785 (JCS) form of the
/// presentation's JSON object exactly as presented, its `signature` member included (unlike the bytes the
/// signature covers), written as H. `NotJson` only for an object nested past the crate's cap, which reading
/// already refuses.
pub fn mandate_digest(presentation: &Signed<Presentation>) -> Result<AtrHash, ContractError> {
    crate::json::canonical(&Value::Object(presentation.object().clone()))
        .map(|text| atr_hash(text.as_bytes()))
        .ok_or_else(|| ContractError::NotJson("nested more than 64 levels".into()))
}

/// Checks the receipt's `mandate` against the presentation the buyer's agent made for the call
/// ([`mandate_digest`]), or against none: a receipt naming a mandate the buyer never presented, or naming none when
/// one was presented, is a `DigestMismatch` whose missing side reads `(none)`.
pub fn check_mandate(receipt: &Receipt, presented: Option<&Signed<Presentation>>) -> Result<(), ContractError> {
    let mismatch =
        |named: &str, held: String| ContractError::DigestMismatch { member: "mandate", named: named.to_owned(), held };
    match (receipt.mandate.as_deref(), presented) {
        (None, None) => Ok(()),
        (Some(named), Some(p)) => digest("mandate", named, &mandate_digest(p)?),
        (None, Some(p)) => Err(mismatch(NONE, mandate_digest(p)?.to_hex())),
        (Some(named), None) => Err(mismatch(named, NONE.to_owned())),
    }
}

/// `Expired(what)` once `now` is past `expires`.
fn not_past(expires: &str, now: u64, what: &'static str) -> Result<(), ContractError> {
    if i128::from(now) > i128::from(unix(expires)?) { Err(ContractError::Expired(what)) } else { Ok(()) }
}

/// Checks a presentation's times: `Stale` when its `present` is more than [`MAX_PRESENTATION_AGE`] seconds before
/// `now`, or more than [`MAX_CLOCK_SKEW`] seconds after it (exactly 300 s old, or exactly 30 s ahead, passes);
/// `Expired` once `now` is past its `expires`.
pub fn check_fresh(presentation: &Presentation, now: u64) -> Result<(), ContractError> {
    let present = i128::from(unix(&presentation.present)?);
    let now_ = i128::from(now);
    if now_ - present > i128::from(MAX_PRESENTATION_AGE) || present - now_ > i128::from(MAX_CLOCK_SKEW) {
        return Err(ContractError::Stale(presentation.present.clone()));
    }
    not_past(&presentation.expires, now, Presentation::NAME)
}

/// Checks that a quote still holds: `Expired` once `now` is past its `expires`.
pub fn check_quote(quote: &Quote, now: u64) -> Result<(), ContractError> {
    not_past(&quote.expires, now, Quote::NAME)
}

/// Whether a seller host is in a list: hosts compare without regard to ASCII case.
fn has_seller(sellers: &[String], seller: &str) -> bool {
    sellers.iter().any(|s| s.eq_ignore_ascii_case(seller))
}

/// Checks the rules of a mandate chain, signatures aside: at most [`MAX_CHAIN`] links (`ChainTooLong`), at least
/// one, and each link below the first granted by the agent of the link above (`who` = the above's `agent`), for the
/// same person (`for`), in the same currency, and no wider: its sellers (compared without regard to ASCII case) and
/// Verbs each a subset of the above's, its `per_month` and `per_task` no larger, its `until` no later, and issued no
/// earlier than the link above (a grant cannot predate the grant it derives from) and no later than now (with
/// [`MAX_CLOCK_SKEW`]). Any of these is `ChainBroken` with the link's index. A link past its `until` at `now` is
/// `Expired`.
pub fn check_chain(chain: &[Link], now: u64) -> Result<(), ContractError> {
    if chain.len() > MAX_CHAIN {
        return Err(ContractError::ChainTooLong(chain.len()));
    }
    if chain.is_empty() {
        return Err(ContractError::ChainBroken { index: 0, detail: "is missing: the chain is empty".into() });
    }
    let mut above: Option<(&Link, i64, i64)> = None;
    for (index, link) in chain.iter().enumerate() {
        let until = unix(&link.until)?;
        let issued = unix(&link.issued)?;
        let broken = |detail| ContractError::ChainBroken { index, detail };
        if i128::from(issued) > i128::from(now) + i128::from(MAX_CLOCK_SKEW) {
            return Err(broken(format!("was issued at {}, after now", link.issued)));
        }
        if let Some((up, up_issued, up_until)) = above {
            if issued < up_issued {
                return Err(broken(format!("was issued at {}, before the link above it ({})", link.issued, up.issued)));
            }
            no_wider(link, until, up, up_until).map_err(broken)?;
        }
        above = Some((link, issued, until));
    }
    chain.iter().try_for_each(|link| not_past(&link.until, now, Link::NAME))
}

/// Why `link` does not follow from `up`, the link above it, if it does not.
fn no_wider(link: &Link, until: i64, up: &Link, up_until: i64) -> Result<(), String> {
    if link.who != up.agent {
        return Err(format!("is granted by `{}`, not by `{}`, the agent of the link above", link.who, up.agent));
    }
    if link.on_behalf_of != up.on_behalf_of {
        return Err(format!("is for `{}`, the link above for `{}`", link.on_behalf_of, up.on_behalf_of));
    }
    if link.currency != up.currency {
        return Err(format!("counts in `{}`, the link above in `{}`", link.currency, up.currency));
    }
    if let Some(seller) = link.sellers.iter().find(|s| !has_seller(&up.sellers, s)) {
        return Err(format!("allows the seller `{seller}`, which the link above does not"));
    }
    if let Some(verb) = link.verbs.iter().find(|v| !up.verbs.contains(v)) {
        return Err(format!("allows the Verb `{verb}`, which the link above does not"));
    }
    if link.per_month > up.per_month {
        return Err(format!("allows {} a month, more than the {} of the link above", link.per_month, up.per_month));
    }
    if link.per_task > up.per_task {
        return Err(format!("allows {} a task, more than the {} of the link above", link.per_task, up.per_task));
    }
    if until > up_until {
        return Err(format!("ends at {}, after the link above ({})", link.until, up.until));
    }
    Ok(())
}

/// Checks a mandate presentation whole, cheapest first: at most [`MAX_CHAIN`] links, fresh and unexpired
/// ([`check_fresh`]), the chain's rules ([`check_chain`]), an `expires` no later than the last link's `until`, then every link's signature under the key list of its
/// `who`, and the presentation's own signature under the key list of the presenting agent (the last link's
/// `agent`). `keys` answers a signer's key list by its name (a person's or an agent's, as the links write them);
/// a signer it has no list for is `KeyUnknown` with the document's `kid`. A signature that fails is the error
/// [`Signed::verify`] gives.
pub fn check_presentation<'k, F>(presentation: &Signed<Presentation>, keys: F, now: u64) -> Result<(), ContractError>
where
    F: Fn(&str) -> Option<&'k KeyList>,
{
    let doc = presentation.doc();
    if doc.chain.len() > MAX_CHAIN {
        return Err(ContractError::ChainTooLong(doc.chain.len()));
    }
    check_fresh(doc, now)?;
    check_chain(&doc.chain, now)?;
    // The presentation may not outlive the narrowest grant it presents.
    if let Some((index, last)) = doc.chain.iter().enumerate().next_back()
        && unix(&doc.expires)? > unix(&last.until)?
    {
        let detail = format!("ends at {}, before the presentation's expires ({})", last.until, doc.expires);
        return Err(ContractError::ChainBroken { index, detail });
    }
    for link in presentation.links()? {
        let list = keys(&link.doc().who).ok_or_else(|| ContractError::KeyUnknown(link.doc().kid.clone()))?;
        link.verify(list)?;
    }
    let agent = doc.chain.last().map_or("", |l| l.agent.as_str());
    let list = keys(agent).ok_or_else(|| ContractError::KeyUnknown(doc.kid.clone()))?;
    presentation.verify(list)
}

/// Checks that a presentation's chain allows one purchase, against its last link (the narrowest, once
/// [`check_presentation`] has passed): the seller host among its sellers (without regard to ASCII case), the Verb
/// among its Verbs, the same currency, and a price no larger than its `per_task` nor its `per_month`. What was
/// already spent this month is not known here: the caller's budget holds the month's total. Anything else is
/// `OutsideMandate`; an empty chain is `ChainBroken`.
pub fn check_purchase(
    presentation: &Presentation,
    seller: &str,
    verb: &str,
    price: &Amount,
    currency: &str,
) -> Result<(), ContractError> {
    let Some(last) = presentation.chain.last() else {
        return Err(ContractError::ChainBroken { index: 0, detail: "is missing: the chain is empty".into() });
    };
    let outside = |detail: String| Err(ContractError::OutsideMandate(detail));
    if !has_seller(&last.sellers, seller) {
        return outside(format!("the seller `{seller}` is not among its sellers"));
    }
    if !last.verbs.iter().any(|v| v == verb) {
        return outside(format!("the Verb `{verb}` is not among its Verbs"));
    }
    if last.currency != currency {
        return outside(format!("the price is in `{currency}`, the mandate counts in `{}`", last.currency));
    }
    if *price > last.per_task {
        return outside(format!("{price} is more than the {} a task it allows", last.per_task));
    }
    if *price > last.per_month {
        return outside(format!("{price} is more than the {} a month it allows", last.per_month));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
