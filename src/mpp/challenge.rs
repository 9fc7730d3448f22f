//! One challenge of the list as the buyer holds it: its shape, the id that carries H, its expiry, its `request` and
//! `opaque`, and the one filter each pairing holds a challenge to ([`check_challenge`], [`checked_for`]), as the
//! reference's `check_challenge` and `checked_for` do.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use serde_json::Value;

use crate::codec::{b64u_decode, b64u_encode};
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::refusal::{Reason, Refusal};

use super::MAX_CHALLENGES;
use super::values::{B64Json, unix_of};

/// MPP's challenge members, the only ones a credential echoes.
pub(crate) const MEMBERS: [&str; 10] =
    ["realm", "method", "intent", "request", "id", "expires", "digest", "description", "header", "opaque"];

/// The pairings whose build writes `expires` into what the payer signs (or whose method's draft requires it): a
/// challenge without `expires` offers none of them.
pub(crate) const NEEDS_EXPIRES: [&str; 10] = [
    "mpp/charge/evm/authorization",
    "mpp/charge/evm/permit2",
    "mpp/charge/tempo/memo",
    "mpp/charge/tempo/push",
    "mpp/charge/usdc/evm",
    "mpp/charge/stellar",
    "mpp/charge/nearintents",
    "mpp/charge/xrpl",
    "mpp/session/evm",
    "mpp/session/tempo",
];

static EMPTY: LazyLock<Object> = LazyLock::new(Object::new);

/// The challenge as an object of MPP's shape: `realm`, `method`, `intent` and `request` strings, and `id`, `expires`,
/// `digest`, `description`, `header` and `opaque` strings where present. `None` for anything else.
pub(crate) fn shape(c: &Value) -> Option<&Object> {
    let map = c.as_object()?;
    let required = ["realm", "method", "intent", "request"].iter().all(|k| map.member(k).is_some_and(Value::is_string));
    let optional = ["id", "expires", "digest", "description", "header", "opaque"]
        .iter()
        .all(|k| map.member(k).is_none_or(Value::is_string));
    (required && optional).then_some(map)
}

/// A string member of a challenge (empty when absent: read only after [`shape`]).
pub(crate) fn text<'a>(c: &'a Object, key: &str) -> &'a str {
    c.member(key).and_then(Value::as_str).unwrap_or_default()
}

/// The RFC 9530 `Content-Digest` of a request body, `sha-256=:<base64 of SHA-256>:`: what a challenge's `digest`
/// binds, so a buyer retrying with a credential sends the body the seller priced (the `digest` itself is echoed
/// unmodified, never recomputed into the credential).
///
/// ```
/// # #[cfg(feature = "mpp")] {
/// assert_eq!(terms::mpp::content_digest(b"{}"), "sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:");
/// # }
/// ```
pub fn content_digest(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("sha-256=:{}:", crate::codec::b64_encode(&Sha256::digest(body)))
}

/// The challenge id that carries H at `position` in the seller's list: unpadded base64url of H's 32 bytes, `.`, and
/// the position, 0 to 31 (`mpp/challenge-malformed` past 31).
///
/// ```
/// # #[cfg(feature = "mpp")] {
/// let h = terms::atr_hash(b"abc");
/// assert_eq!(terms::mpp::challenge_id(&h, 0).unwrap(), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0.0");
/// assert_eq!(terms::mpp::challenge_id(&h, 32).unwrap_err().code(), "mpp/challenge-malformed");
/// # }
/// ```
pub fn challenge_id(h: &AtrHash, position: usize) -> Result<String, Refusal> {
    if position >= MAX_CHALLENGES {
        return Err(Refusal::mpp(Reason::ChallengeMalformed));
    }
    Ok(format!("{}.{position}", b64u_encode(h.as_bytes())))
}

/// H from an id [`challenge_id`] writes (`base64url(H).position`, the position 0 to 31 without a leading zero), or
/// from the bare base64url of H (a Tempo subscription's id); anything else is `mpp/id-not-ours`.
pub fn challenge_h(id: &str) -> Result<AtrHash, Refusal> {
    let not_ours = || Refusal::mpp(Reason::IdNotOurs);
    let (body, position) = match id.split_once('.') {
        Some((body, position)) => (body, Some(position)),
        None => (id, None),
    };
    if let Some(p) = position {
        let canonical = matches!(p.as_bytes(), [b'0'] | [b'1'..=b'9'] | [b'1'..=b'9', b'0'..=b'9']);
        if !canonical || p.parse::<usize>().map_or(true, |n| n >= MAX_CHALLENGES) {
            return Err(not_ours());
        }
    }
    if body.len() != 43 {
        return Err(not_ours());
    }
    let bytes: [u8; 32] = b64u_decode(body).and_then(|b| b.try_into().ok()).ok_or_else(not_ours)?;
    Ok(AtrHash::from_bytes(bytes))
}

/// H from a challenge's id in the form its intent and method take: the bare base64url of H for a Tempo subscription,
/// `base64url(H).position` for every other challenge. Any other id, or none, is `mpp/id-not-ours`.
pub(crate) fn challenge_id_h(c: &Object) -> Result<AtrHash, Refusal> {
    let Some(id) = c.member("id").and_then(Value::as_str) else { return Err(Refusal::mpp(Reason::IdNotOurs)) };
    let subscription = text(c, "intent") == "subscription" && text(c, "method") == "tempo";
    if id.contains('.') == subscription {
        return Err(Refusal::mpp(Reason::IdNotOurs));
    }
    challenge_h(id)
}

/// The challenge as a credential echoes it: MPP's members only, in the challenge's own order. Borrowed when the
/// challenge has no other member (the common case: the echo copies nothing).
pub(crate) fn snapshot(c: &Value) -> Cow<'_, Value> {
    match c.as_object() {
        Some(map) if map.keys().all(|k| MEMBERS.contains(&k.as_str())) => Cow::Borrowed(c),
        Some(map) => Cow::Owned(Value::Object(
            map.iter().filter(|(k, _)| MEMBERS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        )),
        None => Cow::Owned(Value::Object(Object::new())),
    }
}

/// What a method's filter reads: the challenge, its decoded `request`, and `request.methodDetails` (empty when
/// absent).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    /// The challenge.
    pub(crate) challenge: &'a Object,
    /// Its decoded `request`.
    pub(crate) request: &'a Object,
    /// `request.methodDetails`, or an empty map.
    pub(crate) details: &'a Object,
}

/// A method's filter: the pairings, in the order offered, that a challenge of its intent and method offers, or the
/// refusal the reference gives the challenge.
pub(crate) type Offers = fn(&Parts<'_>) -> Result<Vec<&'static str>, Refusal>;

/// One (intent, method) of MPP and its filter. A pairing names the method its challenges are of; the filters of the
/// chain-free methods are in [`super::methods`], and a rail's pairing writes its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Method {
    /// The intent, e.g. `charge`.
    pub(crate) intent: &'static str,
    /// The method, e.g. `evm`.
    pub(crate) method: &'static str,
    /// The filter.
    pub(crate) offers: Offers,
}

/// A challenge held to its method's filter: the challenge (borrowed), its decoded `request`, its `expires` in Unix
/// seconds (`None` when it carries none), and the pairings it offers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Checked<'a> {
    value: &'a Value,
    challenge: &'a Object,
    request: Arc<Object>,
    expires: Option<i64>,
    pairings: Vec<&'static str>,
}

impl<'a> Checked<'a> {
    /// The challenge as given, as a JSON value.
    pub(crate) const fn value(&self) -> &'a Value {
        self.value
    }

    /// The challenge as given.
    pub(crate) const fn challenge(&self) -> &'a Object {
        self.challenge
    }

    /// A string member of the challenge (`id`, `realm`, `opaque`…), empty when absent.
    pub(crate) fn text(&self, key: &str) -> &'a str {
        text(self.challenge, key)
    }

    /// The `request` parameter as the challenge carries it: the raw text stays the source of truth.
    pub(crate) fn raw_request(&self) -> B64Json<'a> {
        B64Json::new(self.text("request"))
    }

    /// The decoded `request`.
    pub(crate) fn request(&self) -> &Object {
        &self.request
    }

    /// `request.methodDetails`, or an empty map (the filter has refused one that is not an object).
    pub(crate) fn details(&self) -> &Object {
        details_of(&self.request)
    }

    /// `expires` in Unix seconds, `None` when the challenge carries none.
    pub(crate) const fn expires(&self) -> Option<i64> {
        self.expires
    }

    /// `expires` for a pairing whose build writes it: `mpp/expires-required` when the challenge carries none.
    pub(crate) fn expires_required(&self) -> Result<i64, Refusal> {
        self.expires.ok_or(Refusal::mpp(Reason::ExpiresRequired))
    }

    /// Whether the challenge has expired at `now` (Unix seconds): it carries `expires` and `now` is at or past it.
    pub(crate) fn expired_at(&self, now: u64) -> bool {
        self.expires.is_some_and(|at| i128::from(at) <= i128::from(now))
    }

    /// The pairings the challenge offers, in the order offered.
    pub(crate) fn pairings(&self) -> &[&'static str] {
        &self.pairings
    }

    /// Whether the challenge offers the pairing.
    pub(crate) fn offers(&self, pairing: &str) -> bool {
        self.pairings.contains(&pairing)
    }
}

/// `request.methodDetails` when it is an object, else an empty map.
pub(crate) fn details_of(request: &Object) -> &Object {
    request.member("methodDetails").and_then(Value::as_object).unwrap_or(&EMPTY)
}

/// The checks every method shares, after the shape and the method: `expires`, where present, an RFC 3339 date-time
/// (`mpp/expires-required`); `request` base64url JSON within its bounds (`mpp/request-malformed`); `opaque`, where
/// present, a flat map of strings (`mpp/opaque-malformed`; the LCP members the seller's placement writes are allowed);
/// `methodDetails`, where present, an object (`mpp/request-malformed`).
pub(crate) fn common(c: &Object) -> Result<(Arc<Object>, Option<i64>), Refusal> {
    let expires = match c.member("expires").and_then(Value::as_str) {
        Some(text) => Some(unix_of(text).ok_or(Refusal::mpp(Reason::ExpiresRequired))?),
        None => None,
    };
    let request = B64Json::new(text(c, "request")).object().ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    if c.member("opaque").and_then(Value::as_str).is_some_and(|opaque| !B64Json::new(opaque).is_string_map()) {
        return Err(Refusal::mpp(Reason::OpaqueMalformed));
    }
    if request.member("methodDetails").is_some_and(|d| !d.is_object()) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    Ok((request, expires))
}

/// A challenge, as the seller placed it, held to `method`'s filter: its shape (`mpp/challenge-malformed`), its intent
/// and method (`mpp/not-this-pairing` for another), the [`common`] checks, then the filter. Without `expires` the
/// pairings of [`NEEDS_EXPIRES`] are left out, and a challenge the filter names pairings for but is left with none is
/// `mpp/expires-required`.
pub(crate) fn check_challenge<'a>(c: &'a Value, method: &Method) -> Result<Checked<'a>, Refusal> {
    let challenge = shape(c).ok_or(Refusal::mpp(Reason::ChallengeMalformed))?;
    if text(challenge, "intent") != method.intent || text(challenge, "method") != method.method {
        return Err(Refusal::mpp(Reason::NotThisPairing));
    }
    let (request, expires) = common(challenge)?;
    let named = (method.offers)(&Parts { challenge, request: &request, details: details_of(&request) })?;
    let pairings: Vec<&'static str> = if expires.is_some() {
        named.clone()
    } else {
        named.iter().copied().filter(|p| !NEEDS_EXPIRES.contains(p)).collect()
    };
    if pairings.is_empty() && !named.is_empty() {
        return Err(Refusal::mpp(Reason::ExpiresRequired));
    }
    Ok(Checked { value: c, challenge, request, expires, pairings })
}

/// [`check_challenge`], and the challenge must offer `pairing` (`mpp/not-this-pairing` otherwise: another credential
/// type, mode or profile, or no `expires` where the pairing needs it). Every build holds its chosen challenge, and
/// every bound its echoed one, through this one step.
pub(crate) fn checked_for<'a>(c: &'a Value, pairing: &str, method: &Method) -> Result<Checked<'a>, Refusal> {
    let checked = check_challenge(c, method)?;
    if checked.offers(pairing) { Ok(checked) } else { Err(Refusal::mpp(Reason::NotThisPairing)) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hash::atr_hash;

    #[test]
    fn ids_carry_h_and_a_position() {
        let h = atr_hash(b"abc");
        for position in [0, 9, 10, 31] {
            let id = challenge_id(&h, position).unwrap();
            assert_eq!(challenge_h(&id), Ok(h));
        }
        let body = b64u_encode(h.as_bytes());
        assert_eq!(challenge_h(&body), Ok(h));
        for bad in ["00", "01", "32", "99", "", "1a", "+1", "100"] {
            assert_eq!(challenge_h(&format!("{body}.{bad}")).unwrap_err().code(), "mpp/id-not-ours", "{bad}");
        }
        assert!(challenge_h(&format!("{body}=.0")).is_err());
        assert!(challenge_h(&h.to_hex()).is_err());
        // The last character's two spare bits must be zero.
        let mut loose = body;
        loose.pop();
        loose.push('1');
        assert!(challenge_h(&loose).is_err());
    }

    #[test]
    fn the_id_form_follows_intent_and_method() {
        let h = atr_hash(b"abc");
        let bare = b64u_encode(h.as_bytes());
        let with = challenge_id(&h, 0).unwrap();
        let c = |id: &str, intent: &str, method: &str| json!({"id": id, "intent": intent, "method": method});
        let id_h = |v: Value| challenge_id_h(v.as_object().unwrap());
        assert_eq!(id_h(c(&bare, "subscription", "tempo")), Ok(h));
        assert!(id_h(c(&with, "subscription", "tempo")).is_err());
        assert_eq!(id_h(c(&with, "charge", "evm")), Ok(h));
        assert!(id_h(c(&bare, "charge", "evm")).is_err());
        assert!(id_h(json!({"intent": "charge"})).is_err());
    }

    #[test]
    fn a_snapshot_keeps_mpp_members_only() {
        let c = json!({"z": 1, "id": "a", "realm": "r"});
        let s = snapshot(&c);
        assert!(matches!(s, Cow::Owned(_)));
        assert_eq!(s.into_owned(), json!({"id": "a", "realm": "r"}));
        let c = json!({"id": "a", "opaque": "e30"});
        assert!(matches!(snapshot(&c), Cow::Borrowed(_)));
    }
}
