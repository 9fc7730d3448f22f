//! The legal context an MPP challenge list advertises: the challenges whose `opaque` carries the three LCP members
//! (`legalContext` = `lcp:sha256:` and H, `legalContextUrl`, and optionally `legalContextAgreementUrl`) and whose id
//! derives from that H. This is every MPP pairing's `read`.

use serde_json::Value;

use crate::hash::AtrHash;
use crate::json::{Member, js_length};
use crate::link::{MAX_LINK_CHARS, is_https_link, is_other_scheme_link, link_reason};
use crate::pairing::{Advertised, Offer};
use crate::refusal::{Reason, Refusal};

use super::MAX_CHALLENGES;
use super::challenge::{challenge_id_h, shape};
use super::values::B64Json;

/// The prefix of H in `legalContext`.
pub(crate) const LCP_PREFIX: &str = "lcp:sha256:";

/// H from `lcp:sha256:0x…` (64 hex digits in either case), or `None`.
pub(crate) fn from_lcp_string(value: &str) -> Option<AtrHash> {
    value.strip_prefix(LCP_PREFIX).and_then(AtrHash::parse)
}

/// An https link of at most 2048 UTF-16 code units.
fn is_link(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|v| js_length(v) <= MAX_LINK_CHARS && is_https_link(v))
}

/// The buyer's reading of a challenge list (the JSON [`decode_challenges`](super::decode_challenges) writes, or the
/// list the seller's document is): the challenges whose `opaque` carries an LCP hash and an https link and whose id
/// derives from that hash, in document order, as [`Offer::Challenges`], with H, the link, and their agreement URL
/// where one is present.
///
/// A list that is not an array of at most 32 is `mpp/challenge-malformed`; two such challenges naming another H,
/// link or agreement URL are `mpp/legal-context-conflict`; an agreement URL that is not a link is
/// `mpp/link-not-https` (a URL of another scheme) or `mpp/legal-context-malformed`. With no challenge read, a link of
/// another scheme in a challenge whose id derives from its hash is `mpp/link-not-https`, any other failing link
/// there `mpp/legal-context-malformed`, and otherwise `mpp/no-legal-context`.
pub fn read(doc: &Value) -> Result<Advertised<'_>, Refusal> {
    let Some(list) = doc.as_array().filter(|l| l.len() <= MAX_CHALLENGES) else {
        return Err(Refusal::mpp(Reason::ChallengeMalformed));
    };
    let mut found: Option<(AtrHash, String)> = None;
    let mut agreement: Option<String> = None;
    let mut challenges: Vec<&Value> = Vec::new();
    let (mut not_https, mut malformed_link) = (false, false);
    for c in list {
        let Some(map) = shape(c) else { continue };
        let Some(present) = map.member("opaque").and_then(Value::as_str).and_then(|o| B64Json::new(o).string_map())
        else {
            continue;
        };
        let Some(lc) = present.member("legalContext").and_then(Value::as_str).and_then(from_lcp_string) else {
            continue;
        };
        if challenge_id_h(map) != Ok(lc) {
            continue;
        }
        let url = present.member("legalContextUrl");
        let Some(link) = is_link(url) else {
            if url.and_then(Value::as_str).is_some_and(is_other_scheme_link) {
                not_https = true;
            } else {
                malformed_link = true;
            }
            continue;
        };
        if found.as_ref().is_some_and(|(h, l)| *h != lc || l != link) {
            return Err(Refusal::mpp(Reason::LegalContextConflict));
        }
        if let Some(a) = present.member("legalContextAgreementUrl") {
            let Some(a) = is_link(Some(a)) else {
                return Err(Refusal::mpp(a.as_str().map_or(Reason::LegalContextMalformed, link_reason)));
            };
            if agreement.as_deref().is_some_and(|known| known != a) {
                return Err(Refusal::mpp(Reason::LegalContextConflict));
            }
            agreement = Some(a.to_owned());
        }
        found = Some((lc, link.to_owned()));
        challenges.push(c);
    }
    let Some((h, link)) = found else {
        let reason = if not_https {
            Reason::LinkNotHttps
        } else if malformed_link {
            Reason::LegalContextMalformed
        } else {
            Reason::NoLegalContext
        };
        return Err(Refusal::mpp(reason));
    };
    Ok(Advertised { h, link, offer: Offer::Challenges(challenges), agreement })
}
