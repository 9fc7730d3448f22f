//! The six documents as plain serde data. Every member the contract names is typed; any other member is kept in
//! `extra`, in the order it came, so a document read and written back is the document that was signed.
//!
//! Times are RFC 3339 texts, checked where a rule reads them ([`super::check`]); digests are written as the gate
//! writes H (`0x` and 64 hex digits: the SHA-256 of the exact bytes), so a contract's terms digest and an ATR's H
//! are compared as one value; amounts are [`Amount`]s.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Members a document does not name, kept as they came.
pub type Extra = Map<String, Value>;

/// A non-negative decimal amount as the contract writes it: digits, then optionally a point and more digits
/// (`"12"`, `"0.002"`), at most 78 digits in all. Compared by value, so `"1.50"` equals `"1.5"`; written back
/// exactly as read.
#[derive(Debug, Clone)]
pub struct Amount {
    text: String,
    /// The digits before the point, leading zeros removed.
    whole: String,
    /// The digits after the point, trailing zeros removed.
    fraction: String,
}

impl Amount {
    /// The amount written `text`, or `None` when it is not a plain decimal.
    pub fn parse(text: &str) -> Option<Self> {
        let (whole, fraction) = match text.split_once('.') {
            Some((w, f)) => (w, Some(f)),
            None => (text, None),
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || fraction.is_some_and(|f| !digits(f)) || whole.len() + fraction.map_or(0, str::len) > 78 {
            return None;
        }
        let trimmed = whole.trim_start_matches('0');
        Some(Self {
            text: text.to_owned(),
            whole: trimmed.to_owned(),
            fraction: fraction.unwrap_or("").trim_end_matches('0').to_owned(),
        })
    }

    /// The amount as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl PartialEq for Amount {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Amount {}

impl PartialOrd for Amount {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Amount {
    fn cmp(&self, other: &Self) -> Ordering {
        // Without leading zeros a longer whole part is larger; of two as long, the digits decide, and then the
        // fractions, digit by digit (trailing zeros were dropped, so a longer equal prefix is larger).
        self.whole
            .len()
            .cmp(&other.whole.len())
            .then_with(|| self.whole.cmp(&other.whole))
            .then_with(|| self.fraction.cmp(&other.fraction))
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a decimal amount")))
    }
}

/// The offer card a seller serves at `/.well-known/agents.json`: who sells, at what rates, under which terms, how
/// to pay, and the record a verifier attested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferCard {
    /// The contract version (`"1.0"`).
    pub contract: String,
    /// The seller.
    pub seller: Seller,
    /// What each Verb costs.
    pub rates: Vec<Rate>,
    /// The https URL that answers a [`Quote`] for one call or order.
    pub quote: String,
    /// The terms every purchase is under.
    pub terms: Terms,
    /// The ways to pay, as the seller writes them (each an object with a `kind`, e.g. `x402`, `mpp`, `checkout`).
    pub pay: Vec<Value>,
    /// The verifier's record of the seller, where one has attested it; a card without it is unproven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// The https URL of the seller's keys (`/.well-known/receipt-keys`).
    pub keys: String,
    /// When the card was signed (RFC 3339).
    pub issued: String,
    /// The id of the key that signed it.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The seller an offer card describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seller {
    /// The host the card is served from and the documents name (`api.seller.example`).
    pub host: String,
    /// How far the seller's identity was verified, as the card writes it (`none`, `domain`, `organization`).
    pub verification: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One Verb's rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// The Verb (`translate`).
    pub name: String,
    /// The price of one unit.
    pub price: Amount,
    /// The currency (`USD`, or an asset's id).
    pub currency: String,
    /// What one unit is (`call`, `1k-tokens`, `order`).
    pub unit: String,
    /// What a call that fails costs (`free`, `full`, or an amount), as the card writes it.
    pub miss: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The terms of every purchase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Terms {
    /// SHA-256 of the terms' exact bytes, written as H (`0x` and 64 hex digits).
    pub digest: String,
    /// The refund rule, as the seller writes it.
    pub refund: String,
    /// The license of what is bought.
    pub license: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A verifier's record of a seller, as the offer card repeats it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proof {
    /// The verifier (its host).
    pub by: String,
    /// The period the record covers.
    pub window: Window,
    /// How many calls it saw.
    pub calls: u64,
    /// The share of them that succeeded, from 0 to 1.
    pub success: f64,
    /// The https URL of the verifier's signed [`Attestation`]; the card's figures count only once it verifies.
    pub signed: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A period, from one RFC 3339 time to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Its start.
    pub from: String,
    /// Its end.
    pub until: String,
}

/// A seller's price for one call or order, answered by the card's quote endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quote {
    /// The contract version.
    pub contract: String,
    /// The quote's id.
    pub id: String,
    /// The seller's host.
    pub seller: String,
    /// The Verb quoted.
    pub verb: String,
    /// The price.
    pub price: Amount,
    /// Its currency.
    pub currency: String,
    /// SHA-256 of the input the price is for, written as H.
    pub input: String,
    /// SHA-256 of the terms, written as H.
    pub terms: String,
    /// When it was signed (RFC 3339).
    pub issued: String,
    /// After this time (RFC 3339) the price no longer holds.
    pub expires: String,
    /// The id of the key that signed it.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a link of a mandate chain marks: an intent, a purchase, or the person's presence or absence when it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mark {
    /// An intent mandate: what may be bought.
    Intent,
    /// A purchase mandate: one purchase.
    Purchase,
    /// Made with the person present.
    Present,
    /// Made with the person absent.
    Absent,
}

/// One link of a mandate chain: `who` grants `agent` the right to buy for `for`, within these bounds. The first
/// link is the person's own; each later one is granted by the agent of the one above it, and may only narrow it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Who grants (a person, or the agent of the link above).
    pub who: String,
    /// On whose behalf.
    #[serde(rename = "for")]
    pub on_behalf_of: String,
    /// To which agent.
    pub agent: String,
    /// What it marks.
    pub mark: Mark,
    /// The seller hosts it allows.
    pub sellers: Vec<String>,
    /// The Verbs it allows.
    pub verbs: Vec<String>,
    /// The most spent in a calendar month.
    pub per_month: Amount,
    /// The most spent on one task.
    pub per_task: Amount,
    /// The currency of both amounts.
    pub currency: String,
    /// When it ends (RFC 3339).
    pub until: String,
    /// When `who` signed it (RFC 3339).
    pub issued: String,
    /// The id of `who`'s key that signed the link.
    pub kid: String,
    /// `ed25519:` and the base64url signature of the link, without its `signature` member.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An agent's presentation of its mandate chain to a seller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presentation {
    /// The contract version.
    pub contract: String,
    /// The chain, the person's link first.
    pub chain: Vec<Link>,
    /// When it was presented (RFC 3339); a presentation older than five minutes is refused.
    pub present: String,
    /// The https URL that answers whether the mandate is `active` or `revoked`.
    pub status: String,
    /// When it ends (RFC 3339).
    pub expires: String,
    /// The id of the presenting agent's key.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The body of a 402 answered as `application/problem+json` by a seller of the contract: the problem's members and
/// the offers that would settle it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    /// The contract version.
    pub contract: String,
    /// The problem's type URI.
    #[serde(rename = "type")]
    pub kind: String,
    /// The problem's title.
    pub title: String,
    /// The HTTP status, 402.
    pub status: u16,
    /// What would settle it.
    pub offers: Vec<Offer>,
    /// When it was signed (RFC 3339).
    pub issued: String,
    /// The id of the key that signed it.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One offer of a challenge, told apart by its `kind`. A kind this crate does not know is kept whole as
/// [`Offer::Other`], so a challenge of a later minor version that adds one still reads (and its signature, over the
/// object as received, still verifies); an offer with no `kind` string is malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// `kind` `challenge`: pay for this call.
    Challenge(PayOffer),
    /// `kind` `checkout`: buy a pack of calls at a checkout page.
    Checkout(CheckoutOffer),
    /// Another `kind`, kept as it came (its `kind` member included).
    Other(Extra),
}

impl Serialize for Offer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (kind, value) = match self {
            Self::Challenge(o) => ("challenge", serde_json::to_value(o)),
            Self::Checkout(o) => ("checkout", serde_json::to_value(o)),
            Self::Other(o) => return o.serialize(serializer),
        };
        let Value::Object(members) = value.map_err(serde::ser::Error::custom)? else {
            return Err(serde::ser::Error::custom("an offer writes as an object"));
        };
        let mut map = serializer.serialize_map(Some(members.len() + 1))?;
        map.serialize_entry("kind", kind)?;
        for (name, v) in &members {
            map.serialize_entry(name, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Offer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut members = Extra::deserialize(deserializer)?;
        let kind = match members.get("kind") {
            Some(Value::String(k)) => k.clone(),
            _ => return Err(D::Error::custom("an offer has no `kind` string")),
        };
        match kind.as_str() {
            "challenge" => {
                members.shift_remove("kind");
                PayOffer::deserialize(Value::Object(members)).map(Self::Challenge).map_err(D::Error::custom)
            }
            "checkout" => {
                members.shift_remove("kind");
                CheckoutOffer::deserialize(Value::Object(members)).map(Self::Checkout).map_err(D::Error::custom)
            }
            _ => Ok(Self::Other(members)),
        }
    }
}

/// An offer to pay for this call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayOffer {
    /// The offer's id.
    pub id: String,
    /// The price.
    pub price: Amount,
    /// Its currency.
    pub currency: String,
    /// SHA-256 of the terms, written as H.
    pub terms: String,
    /// The ways to pay, as the seller writes them.
    pub pay: Vec<Value>,
    /// When the offer ends (RFC 3339).
    pub expires: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An offer to buy a pack of calls at a checkout page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutOffer {
    /// The pack, as the seller names it.
    pub pack: String,
    /// The https URL of the checkout.
    pub url: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A seller's receipt for one call or order, served at `/receipts/{id}` and named by the answer's `X-Receipt-Id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The contract version.
    pub contract: String,
    /// The receipt's id.
    pub id: String,
    /// The seller's host.
    pub seller: String,
    /// The Verb called.
    pub verb: String,
    /// The Verb's version.
    pub version: String,
    /// The price.
    pub price: Amount,
    /// Its currency.
    pub currency: String,
    /// What was paid (the amount, in `currency`).
    pub paid: Amount,
    /// SHA-256 of the terms, written as H.
    pub terms: String,
    /// SHA-256 of the RFC 8785 form of the mandate presentation the call was made under, written as H; absent for a
    /// call made under none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mandate: Option<String>,
    /// SHA-256 of the body answered, written as H.
    pub output: String,
    /// SHA-256 of the Verb's definition, written as H.
    pub definition: String,
    /// `call` or `order`.
    pub kind: String,
    /// The seller's grade of the answer, as it writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<String>,
    /// The https URLs of the receipts of the calls this one made in turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<String>,
    /// When the call was answered and the receipt signed (RFC 3339).
    pub time: String,
    /// The id of the key that signed it.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A verifier's signed record of a seller's calls over a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attestation {
    /// The contract version.
    pub contract: String,
    /// The verifier's host.
    pub verifier: String,
    /// The seller's host.
    pub subject: String,
    /// What the verifier checked (`receipts`, `outputs`, `terms`, …).
    pub checked: Vec<String>,
    /// The period it covers.
    pub window: Window,
    /// How many calls it saw in all.
    pub calls: u64,
    /// The result per Verb.
    pub results: Vec<VerbResult>,
    /// When it was signed (RFC 3339).
    pub issued: String,
    /// The id of the verifier's key that signed it.
    pub kid: String,
    /// `ed25519:` and the base64url signature.
    pub signature: String,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One Verb's result in an attestation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerbResult {
    /// The Verb.
    pub verb: String,
    /// Its calls.
    pub calls: u64,
    /// The share that succeeded, from 0 to 1.
    pub success: f64,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A signer's published keys, at `/.well-known/receipt-keys` for a seller (a verifier publishes its own).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyList {
    /// The contract version.
    pub contract: String,
    /// The keys, current and retired.
    pub keys: Vec<PublishedKey>,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One published key and the dates it may sign within.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedKey {
    /// Its id, named by the documents' `kid`.
    pub kid: String,
    /// `ed25519`.
    pub alg: String,
    /// The 32-byte public key, base64url without padding.
    pub key: String,
    /// From when it signs (RFC 3339).
    pub from: String,
    /// When it was retired (RFC 3339): it still verifies what it signed before, and nothing signed at or after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Members the contract does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Amount, Challenge, Offer};

    #[test]
    fn an_offer_of_an_unknown_kind_is_kept_and_one_with_no_kind_is_refused() {
        let challenge = json!({
            "contract": "1.3", "type": "https://seller.test/problems/pay", "title": "Pay", "status": 402,
            "offers": [
                {"kind": "checkout", "pack": "1,000 calls", "url": "https://seller.test/buy", "note": "kept"},
                {"kind": "subscription", "plan": "monthly", "price": "9"}
            ],
            "issued": "2026-01-01T00:00:00Z", "kid": "k1", "signature": "ed25519:x"
        });
        let read: Challenge = serde_json::from_value(challenge.clone()).unwrap();
        let Offer::Checkout(checkout) = &read.offers[0] else { panic!("{:?}", read.offers[0]) };
        assert_eq!((checkout.pack.as_str(), &checkout.extra["note"]), ("1,000 calls", &json!("kept")));
        let Offer::Other(other) = &read.offers[1] else { panic!("{:?}", read.offers[1]) };
        assert_eq!(other["kind"], json!("subscription"));
        assert_eq!(serde_json::to_value(&read).unwrap(), challenge, "written back as read");
        for offer in [json!({"pack": "p", "url": "https://seller.test/buy"}), json!({"kind": 7}), json!("checkout")] {
            let mut bad = challenge.clone();
            bad["offers"][0] = offer.clone();
            assert!(serde_json::from_value::<Challenge>(bad).is_err(), "{offer}");
        }
        // A known kind missing a member it requires is refused, not kept as another kind.
        let mut bad = challenge;
        bad["offers"][0] = json!({"kind": "challenge", "id": "c-1"});
        assert!(serde_json::from_value::<Challenge>(bad).is_err());
    }

    #[test]
    fn amounts_compare_by_value_and_refuse_what_is_not_a_plain_decimal() {
        let a = |s: &str| Amount::parse(s).unwrap();
        assert_eq!(a("1.50"), a("1.5"));
        assert_eq!(a("007"), a("7.000"));
        assert!(a("0.002") < a("0.01"));
        assert!(a("10") > a("9.999"));
        assert!(a("2") > a("1.9999999"));
        assert_eq!(a("1.50").as_str(), "1.50");
        for bad in ["", ".", "1.", ".5", "-1", "+1", "1e3", "1,5", " 1", "0x10", "1.2.3", "١"] {
            assert!(Amount::parse(bad).is_none(), "{bad:?} read as an amount");
        }
        assert!(Amount::parse(&"9".repeat(78)).is_some());
        assert!(Amount::parse(&"9".repeat(79)).is_none());
        assert!(Amount::parse(&format!("{}.{}", "9".repeat(40), "9".repeat(39))).is_none());
    }
}
