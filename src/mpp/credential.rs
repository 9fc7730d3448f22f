//! The credential: `{challenge, source?, payload}`, the echoed challenge exactly as the seller wrote it (MPP's
//! members only, `request` and `opaque` as raw text), written once as the `Authorization: Payment` value
//! ([`Payment::authorization`](crate::Payment::authorization)); and the reading every MPP bound starts from: the
//! credential's shape and bounds, and H from its echoed challenge.

use std::borrow::Cow;

use serde_json::Value;

use crate::codec::b64u_decode;
use crate::hash::AtrHash;
use crate::json::{Member, Object, exact_object, js_length};
use crate::pairing::{Completed, Completion};
use crate::payment::Payment;
use crate::refusal::{Reason, Refusal};

use super::challenge::{Checked, Method, challenge_id_h, checked_for, shape, text};
use super::legal::from_lcp_string;
use super::values::{B64Json, MAX_DEPTH, json_within, measure};

/// The largest credential, as MPP counts JSON: 64 KiB.
pub const MAX_CREDENTIAL_BYTES: usize = 65_536;

/// A credential a pairing completed: the echoed challenge (borrowed from the choice where it holds MPP's members
/// only), the payer's `source` (a `did:pkh`), and the payload. Read member by member by the pairing's bound, then
/// written once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Credential<'a> {
    challenge: Cow<'a, Value>,
    source: Option<Value>,
    payload: Value,
}

impl<'a> Credential<'a> {
    /// The credential echoing `challenge` (a [`snapshot`](super::challenge::snapshot)), with `source` where the
    /// pairing names the payer, and `payload`, measured as bound measures every credential: over 64 KiB or 16
    /// levels it is `mpp/credential-malformed`, so no build completes a credential its bound would refuse.
    pub(crate) fn new(challenge: Cow<'a, Value>, source: Option<String>, payload: Value) -> Result<Self, Refusal> {
        let credential = Self { challenge, source: source.map(Value::String), payload };
        if !credential_within(&credential) {
            return Err(Refusal::mpp(Reason::CredentialMalformed));
        }
        Ok(credential)
    }

    fn entries(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        [("challenge", Some(&*self.challenge)), ("source", self.source.as_ref()), ("payload", Some(&self.payload))]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
    }

    /// The credential as a JSON value.
    pub(crate) fn to_value(&self) -> Value {
        Value::Object(self.entries().map(|(k, v)| (k.to_owned(), v.clone())).collect())
    }

    /// The payload, the credential set aside.
    pub(crate) fn into_payload(self) -> Value {
        self.payload
    }

    /// The completion that hands this credential to the gate.
    pub(crate) fn completion(self) -> Completion<'a> {
        Completion::Payment { payment: Box::new(self), landed: None }
    }
}

impl Member for Credential<'_> {
    fn member(&self, key: &str) -> Option<&Value> {
        self.entries().find_map(|(k, v)| (k == key).then_some(v))
    }
}

impl Completed for Credential<'_> {
    fn write(&self) -> Payment {
        Payment::from_exact_text(exact_object(self.entries()))
    }

    fn to_value(&self) -> Value {
        Credential::to_value(self)
    }
}

/// Whether a credential read member by member fits MPP's bounds: the whole value where the reader holds one, else
/// its three members.
fn credential_within(c: &dyn Member) -> bool {
    if let Some(whole) = c.as_value() {
        return json_within(whole, MAX_CREDENTIAL_BYTES);
    }
    let members = ["challenge", "source", "payload"].map(|k| (k, c.member(k)));
    let deep_enough = members.iter().all(|(_, v)| v.is_none_or(|v| crate::json::within_depth(v, MAX_DEPTH - 1)));
    let left = members.iter().try_fold(MAX_CREDENTIAL_BYTES.checked_sub(2), |left, (k, v)| match v {
        Some(v) => Some(left.and_then(|l| l.checked_sub(js_length(k) + 3)).and_then(|l| measure(v, l))),
        None => Some(left),
    });
    deep_enough && left.flatten().is_some()
}

/// The credential's shape and bounds, which every MPP bound checks first: an object with no `refused` member, an
/// echoed challenge of MPP's shape with a string `id`, a string `source` where present, a payload object, within 64
/// KiB and 16 levels. Anything else is `mpp/credential-malformed`.
pub(crate) fn credential_shape(c: &dyn Member) -> Result<(&Object, &Object), Refusal> {
    let malformed = || Refusal::mpp(Reason::CredentialMalformed);
    if c.as_value().is_some_and(|v| !v.is_object()) || c.member("refused").is_some() {
        return Err(malformed());
    }
    let challenge = c.member("challenge").and_then(shape).ok_or_else(malformed)?;
    let payload = c.member("payload").and_then(Value::as_object).ok_or_else(malformed)?;
    if !challenge.member("id").is_some_and(Value::is_string) || c.member("source").is_some_and(|s| !s.is_string()) {
        return Err(malformed());
    }
    if !credential_within(c) {
        return Err(malformed());
    }
    Ok((challenge, payload))
}

/// H from an echoed challenge: its id derives from H in the form its intent and method take (`mpp/id-not-ours`), its
/// `opaque` is present (`mpp/opaque-not-this-hash`), a map of strings (`mpp/opaque-malformed`) whose `legalContext`
/// names that H (`mpp/opaque-not-this-hash`), and its `request` decodes (`mpp/request-malformed`).
pub(crate) fn echoed_h(challenge: &Object) -> Result<AtrHash, Refusal> {
    let h = challenge_id_h(challenge)?;
    let Some(opaque) = challenge.member("opaque").and_then(Value::as_str) else {
        return Err(Refusal::mpp(Reason::OpaqueNotThisHash));
    };
    let present = B64Json::new(opaque).string_map().ok_or(Refusal::mpp(Reason::OpaqueMalformed))?;
    let lc = present.member("legalContext").and_then(Value::as_str).and_then(from_lcp_string);
    if lc != Some(h) {
        return Err(Refusal::mpp(Reason::OpaqueNotThisHash));
    }
    if !B64Json::new(text(challenge, "request")).decodes() {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    Ok(h)
}

/// A credential's echoed challenge, held for its pairing.
#[derive(Debug, Clone)]
pub(crate) struct Echoed<'a> {
    /// H, from the echoed challenge's id and opaque.
    pub(crate) h: AtrHash,
    /// The echoed challenge, held to the pairing's filter.
    pub(crate) checked: Checked<'a>,
    /// The payload.
    pub(crate) payload: &'a Object,
    /// The `source`, where the credential names one.
    pub(crate) source: Option<&'a str>,
}

/// The echoed challenge of a credential for `pairing`, the start of every MPP bound: [`credential_shape`], then
/// [`echoed_h`], then the challenge held to the pairing's filter ([`checked_for`]: another intent or method, or a
/// challenge that does not offer the pairing, is `mpp/not-this-pairing`).
pub(crate) fn echoed_for<'a>(c: &'a dyn Member, pairing: &str, method: &Method) -> Result<Echoed<'a>, Refusal> {
    let (challenge, payload) = credential_shape(c)?;
    let h = echoed_h(challenge)?;
    let value = c.member("challenge").ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
    let checked = checked_for(value, pairing, method)?;
    let source = c.member("source").and_then(Value::as_str);
    Ok(Echoed { h, checked, payload, source })
}

/// A payer's `source`: `did:pkh:eip155:<chain>:<address>`, the chain as the challenge names it.
pub(crate) fn did_pkh(chain: u64, address: &str) -> String {
    format!("did:pkh:eip155:{chain}:{address}")
}

/// The chain and the lower-case address of a `did:pkh:eip155:<chain>:0x<40 hex>` source (the chain 1 to 16 digits,
/// no leading zero), or `None`.
pub(crate) fn did_pkh_address(source: &str) -> Option<(u64, String)> {
    let rest = source.strip_prefix("did:pkh:eip155:")?;
    let (chain, address) = rest.split_once(':')?;
    let chain_ok =
        (1..=16).contains(&chain.len()) && !chain.starts_with('0') && chain.bytes().all(|b| b.is_ascii_digit());
    if !chain_ok || !super::values::is_address_str(address) {
        return None;
    }
    Some((chain.parse().ok()?, address.to_ascii_lowercase()))
}

/// Why an `Authorization: Payment` value could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// Not the `Payment` scheme, one space or more, and one token.
    #[error("not a Payment credential")]
    NotPayment,
    /// Longer than a 64 KiB credential's base64url.
    #[error("the credential is longer than 64 KiB")]
    TooLong,
    /// The token is not canonical unpadded base64url.
    #[error("the credential is not canonical unpadded base64url")]
    NotBase64Url,
    /// Not UTF-8 JSON nested at most 16 deep, holding an object.
    #[error("the credential is not a JSON object within 16 levels")]
    NotJson,
}

/// Reads an `Authorization: Payment <token>` value (the scheme in either case) back into the credential's JSON, the
/// inverse of [`Payment::authorization`](crate::Payment::authorization): what a presented credential is handed to
/// a pairing's bound as. The credential's own shape is the bound's to check.
pub fn decode_credential(value: &str) -> Result<Value, CredentialError> {
    let value = value.trim_matches([' ', '\t']);
    let (scheme, token) = value.split_once(' ').ok_or(CredentialError::NotPayment)?;
    let token = token.trim_start_matches(' ');
    if !scheme.eq_ignore_ascii_case("payment") || token.is_empty() || token.contains([' ', ',']) {
        return Err(CredentialError::NotPayment);
    }
    if token.len() > (MAX_CREDENTIAL_BYTES * 4).div_ceil(3) {
        return Err(CredentialError::TooLong);
    }
    let bytes = b64u_decode(token).ok_or(CredentialError::NotBase64Url)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| CredentialError::NotJson)?;
    let json = crate::json::parse(text).filter(|v| v.is_object() && crate::json::within_depth(v, MAX_DEPTH));
    json.ok_or(CredentialError::NotJson)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn did_pkh_reads_its_chain_and_address() {
        let a = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
        assert_eq!(did_pkh_address(&did_pkh(84532, a)), Some((84532, a.to_ascii_lowercase())));
        for bad in
            ["did:pkh:eip155:084532:", "did:pkh:eip155::", "did:pkh:solana:1:", "did:pkh:eip155:12345678901234567:"]
        {
            assert_eq!(did_pkh_address(&format!("{bad}{a}")), None, "{bad}");
        }
    }

    #[test]
    fn the_shape_is_checked_member_by_member() {
        let c = json!({"challenge": {"id": "a", "realm": "r", "method": "m", "intent": "i", "request": "e30"}, "payload": {}});
        assert!(credential_shape(&c).is_ok());
        for bad in [
            json!({"challenge": c["challenge"], "payload": []}),
            json!({"challenge": c["challenge"], "payload": {}, "source": 1}),
            json!({"challenge": c["challenge"], "payload": {}, "refused": true}),
            json!({"challenge": {"realm": "r", "method": "m", "intent": "i", "request": "e30"}, "payload": {}}),
            json!({"challenge": c["challenge"], "payload": {"big": "x".repeat(MAX_CREDENTIAL_BYTES)}}),
        ] {
            assert_eq!(credential_shape(&bad).unwrap_err().code(), "mpp/credential-malformed", "{bad}");
        }
        let built = Credential::new(Cow::Borrowed(&c["challenge"]), None, json!({})).unwrap();
        assert!(credential_shape(&built).is_ok());
        assert_eq!(built.write().to_value(), c);
        let big = json!({"big": "x".repeat(MAX_CREDENTIAL_BYTES)});
        assert!(Credential::new(Cow::Borrowed(&c["challenge"]), None, big).is_err());
    }

    #[test]
    fn an_authorization_value_reads_back() {
        let c = json!({"challenge": {"id": "a"}, "payload": {"n": 1}});
        let header = Payment::from_value(&c).authorization().unwrap();
        assert!(header.starts_with("Payment ") && !header.contains('='));
        assert_eq!(decode_credential(&header), Ok(c.clone()));
        assert_eq!(decode_credential(&header.replacen("Payment", "payment", 1)), Ok(c));
        assert_eq!(decode_credential("Bearer abc"), Err(CredentialError::NotPayment));
        assert_eq!(decode_credential("Payment"), Err(CredentialError::NotPayment));
        assert_eq!(decode_credential("Payment e30="), Err(CredentialError::NotBase64Url));
        assert_eq!(decode_credential("Payment W10"), Err(CredentialError::NotJson));
        let long = format!("Payment {}", "A".repeat(87_383));
        assert_eq!(decode_credential(&long), Err(CredentialError::TooLong));
    }
}
