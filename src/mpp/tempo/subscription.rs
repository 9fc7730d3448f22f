//! `mpp/subscription/tempo` (MPP's `subscription` on `tempo`): the challenge issues the seller an access key, and the
//! payer's root key signs a key authorization for it (the account keychain's, [`crate::rail::tempo::key_authorization`])
//! whose witness is H: a per-period limit of the request's amount of its currency, callable only as
//! `transferWithMemo` to its recipient, until `subscriptionExpires`. One step: the signer signs the authorization's
//! digest; the credential carries the signed authorization. The seller's server broadcasts the activation that
//! registers the key, and each later transfer under it; renewals are not read by the buyer.
//!
//! The challenge's id is the bare base64url of H ([`challenge_id_h`](crate::mpp::challenge)). As a channel, the key
//! authorization is the opening (its digest names the channel) and nothing is paid within it through the gate.
//!
//! Where the crate differs from the reference (integraledger-terms 0.4.0), by necessity: the request's `limit` is a
//! JSON number, as the reference writes it, only up to 2^64 - 1; a larger limit is written as a decimal string (a
//! JSON number that large is not exact in the crate's JSON, nor in a JavaScript signer's). The digest the signer signs
//! is the same.

use std::borrow::Cow;

use alloy_primitives::{Address, B256, U256};
use serde_json::{Map, Value, json};

use crate::codec::{hex_bytes, to_hex};
use crate::decline::{DeclineCode, Declined};
use crate::hash::AtrHash;
use crate::json::{Member, Object, safe_int};
use crate::mpp::MAX_CREDENTIAL_BYTES;
use crate::mpp::challenge::{Checked, Method, Parts};
use crate::mpp::credential::{Credential, Echoed, did_pkh, echoed_for};
use crate::mpp::network::network;
use crate::mpp::pieces::Piece;
use crate::mpp::values::{decimal_of, is_address, is_address_str, json_within, positive_int, unix_of};
use crate::pairing::{
    Advertised, Channel, ChannelKind, ChannelRef, ChooseContext, Chosen, Completion, InputSpec, Pairing, Quote,
    Unsigned, WithinArgs, WithinPlan,
};
use crate::rail::tempo::key_authorization::{
    KeyAuthorization, Limit, MAX_KEY_AUTHORIZATION_BYTES, Scope, SelectorRule, SignedKeyAuthorization,
};
use crate::rail::tempo::tip20::TRANSFER_WITH_MEMO_SELECTOR;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/subscription/tempo";
/// The pairing.
pub(crate) static PAIRING: SubscriptionTempo = SubscriptionTempo;

/// The Tempo subscription: `subscription` on `tempo`.
pub(crate) static SUBSCRIPTION: Method = Method { intent: "subscription", method: "tempo", offers: subscription };

static PIECE: Piece = Piece::evm(ID, &SUBSCRIPTION, &[]);

/// The payload type of a subscription's credential.
const KEY_AUTHORIZATION: &str = "keyAuthorization";
/// The longest root signature an answer may be: 8 KiB.
const MAX_SIGNATURE: usize = 8192;
/// Seconds of a day and of a week, the periods `periodUnit` names.
const DAY: u64 = 86_400;
const WEEK: u64 = 604_800;
/// The access key types Tempo defines, as it numbers them.
const KEY_TYPES: [(&str, u8); 3] = [("secp256k1", 0), ("p256", 1), ("webAuthn", 2)];

fn mpp(reason: Reason) -> Refusal {
    Refusal::mpp(reason)
}

/// A refusal in the `tempo` namespace.
const fn tempo(reason: Reason) -> Refusal {
    Refusal::new("tempo", reason)
}

/// The access key `methodDetails.accessKey` issues: its address, as written, and its key type as Tempo numbers it;
/// `mpp/access-key-malformed` for an address or a key type not of their form.
fn issued_key(d: &Object) -> Result<(&str, u8), Refusal> {
    let key = d.member("accessKey").and_then(Value::as_object);
    let address = key.and_then(|k| k.member("accessKeyAddress")).filter(|a| is_address(Some(a)));
    let kind = key.and_then(|k| k.member("keyType")).and_then(Value::as_str);
    let kind = kind.and_then(|k| KEY_TYPES.iter().find(|(name, _)| *name == k)).map(|(_, n)| *n);
    match (address.and_then(Value::as_str), kind) {
        (Some(address), Some(kind)) => Ok((address, kind)),
        _ => Err(mpp(Reason::AccessKeyMalformed)),
    }
}

/// A period of `periodCount` days or weeks as `periodUnit` names, in seconds; `None` past 2^64 - 1 (the key
/// authorization's period is a uint64) or for a count or unit not of their form.
fn period_of(r: &Object) -> Option<u64> {
    let unit = match r.member("periodUnit").and_then(Value::as_str) {
        Some("day") => DAY,
        Some("week") => WEEK,
        _ => return None,
    };
    let count = r.member("periodCount").and_then(Value::as_str)?;
    let form = (1..=16).contains(&count.len()) && !count.starts_with('0') && count.bytes().all(|b| b.is_ascii_digit());
    form.then(|| count.parse::<u64>().ok()).flatten()?.checked_mul(unit)
}

/// `subscription` on `tempo`: an access key of its form ([`issued_key`]); `subscriptionExpires` an RFC 3339
/// date-time from 1970 (`mpp/request-malformed`); `chainId` a positive safe integer (`mpp/chain-id-required`);
/// `currency` and `recipient` addresses and `amount` a decimal below 2^256; and a period of 1 to 10^16 - 1 days or
/// weeks below 2^64 seconds (`mpp/request-malformed`), in the reference's order.
fn subscription(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    issued_key(d)?;
    if expiry_of(r).is_none() {
        return Err(mpp(Reason::RequestMalformed));
    }
    if positive_int(d.member("chainId")).is_none() {
        return Err(mpp(Reason::ChainIdRequired));
    }
    let paid = is_address(r.member("currency")) && is_address(r.member("recipient"));
    if !paid || decimal_of(r.member("amount")).is_none() || period_of(r).is_none() {
        return Err(mpp(Reason::RequestMalformed));
    }
    Ok(vec![ID])
}

/// `subscriptionExpires` in Unix seconds, where it is a date-time from 1970.
fn expiry_of(r: &Object) -> Option<u64> {
    r.member("subscriptionExpires").and_then(Value::as_str).and_then(unix_of).and_then(|t| u64::try_from(t).ok())
}

/// An address of the challenge (`0x` and 40 hex digits, either case).
fn parse_address(text: &str) -> Option<Address> {
    is_address_str(text).then(|| text.parse().ok()).flatten()
}

/// What the subscription's key authorization grants, read once from the held challenge: what the quote reports and
/// the build signs (with H as the witness).
struct Grant<'c> {
    chain_id: u64,
    key_type: u8,
    key_id: &'c str,
    expiry: u64,
    currency: &'c str,
    recipient: &'c str,
    limit: U256,
    period: u64,
}

impl<'c> Grant<'c> {
    /// The grant of a challenge its filter took (`mpp/request-malformed` should a value not read again).
    fn of(c: &'c Checked<'_>) -> Result<Self, Refusal> {
        let (r, d) = (c.request(), c.details());
        let (key_id, key_type) = issued_key(d)?;
        let malformed = || mpp(Reason::RequestMalformed);
        let text = |k: &str| r.member(k).and_then(Value::as_str).filter(|a| is_address_str(a));
        Ok(Self {
            chain_id: positive_int(d.member("chainId")).ok_or(mpp(Reason::ChainIdRequired))?,
            key_type,
            key_id,
            expiry: expiry_of(r).ok_or_else(malformed)?,
            currency: text("currency").ok_or_else(malformed)?,
            recipient: text("recipient").ok_or_else(malformed)?,
            limit: decimal_of(r.member("amount")).ok_or_else(malformed)?,
            period: period_of(r).ok_or_else(malformed)?,
        })
    }

    /// The key authorization with `witness`.
    fn authorization(&self, witness: B256) -> Result<KeyAuthorization, Refusal> {
        let address = |a: &str| parse_address(a).ok_or(mpp(Reason::RequestMalformed));
        let (token, recipient) = (address(self.currency)?, address(self.recipient)?);
        Ok(KeyAuthorization {
            chain_id: self.chain_id,
            key_type: self.key_type,
            key_id: address(self.key_id)?,
            expiry: self.expiry,
            limits: vec![Limit { token, limit: self.limit, period: self.period }],
            allowed_calls: vec![Scope {
                target: token,
                selector_rules: vec![SelectorRule {
                    selector: TRANSFER_WITH_MEMO_SELECTOR,
                    recipients: vec![recipient],
                }],
            }],
            witness,
        })
    }

    /// The authorization as the request hands it to the signer: addresses as the challenge writes them, integers as
    /// JSON numbers (a limit past 2^64 - 1 as a decimal string, see the module's note), the witness lower-case.
    fn to_json(&self, witness: &AtrHash) -> Value {
        let limit = u64::try_from(self.limit).map_or_else(|_| Value::from(self.limit.to_string()), Value::from);
        json!({
            "chainId": self.chain_id,
            "keyType": self.key_type,
            "keyId": self.key_id,
            "expiry": self.expiry,
            "limits": [{"token": self.currency, "limit": limit, "period": self.period}],
            "allowedCalls": [{
                "target": self.currency,
                "selectorRules": [{"selector": to_hex(&TRANSFER_WITH_MEMO_SELECTOR), "recipients": [self.recipient]}],
            }],
            "witness": witness.to_hex(),
        })
    }
}

/// The pairing `mpp/subscription/tempo`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SubscriptionTempo;

impl Pairing for SubscriptionTempo {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    /// The first challenge offering the subscription on the account's chain.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        PIECE.choose(read, ctx)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    /// What the key authorization lets the seller take: at most the request's `amount` of its `currency` to its
    /// `recipient` each period, on the challenge's chain, until `subscriptionExpires` (the authorization's expiry:
    /// what is signed stays valid until then, whatever the challenge's own `expires`).
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let held = PIECE.held(chosen)?;
        let grant = Grant::of(&held.checked)?;
        let network = network(held.checked.value())?;
        let quote = Quote::new(grant.limit, grant.currency, grant.recipient, network, held.checked.text("intent"));
        Ok(quote.with_window(None, Some(grant.expiry)))
    }

    /// The `tempo-key-authorization` request `{authorization, digest}`: the grant with H as the witness, and keccak256
    /// of its RLP, which the payer's root key signs.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let held = PIECE.offer(chosen, h)?;
        let grant = Grant::of(&held.checked)?;
        let authorization = grant.authorization(B256::from(*h.as_bytes()))?;
        let unsigned = authorization.encode().map_err(|_| tempo(Reason::KeyAuthorizationMalformed))?;
        let mut fields = Fields::new();
        fields.insert("authorization".into(), grant.to_json(h));
        fields.insert("digest".into(), Value::from(to_hex(alloy_primitives::keccak256(&unsigned).as_slice())));
        let source = did_pkh(grant.chain_id, held.payer().unwrap_or_default());
        let request = SigningRequest::TempoKeyAuthorization(fields);
        Ok(Box::new(Authorizing { request, authorization, unsigned, echo: held.echo, source }))
    }

    /// H, once the credential's key authorization has H as its witness and authorizes the challenge's issued key
    /// ([`witnessed`]).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        witnessed(presented).map(|e| e.h)
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// The built request, and what its one answer, the root key's signature, completes.
#[derive(Debug)]
struct Authorizing<'a> {
    request: SigningRequest,
    authorization: KeyAuthorization,
    unsigned: Vec<u8>,
    echo: Cow<'a, Value>,
    source: String,
}

impl Unsigned for Authorizing<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The credential `{challenge, source, payload: {type: "keyAuthorization", signature}}`, the signature the
    /// signed authorization `rlp([authorization, root signature])`. The root signature is `0x` and 1 to 8192 bytes of
    /// hex (`mpp/credential-malformed`); the credential is measured first, as bound measures it
    /// (`mpp/credential-malformed`), and then a signed authorization over its 8192 bytes is
    /// `tempo/key-authorization-malformed`, in the reference's order.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || mpp(Reason::CredentialMalformed);
        let answer = answers.first().and_then(Answer::as_str).ok_or_else(malformed)?;
        let root = hex_bytes(answer).filter(|b| (1..=MAX_SIGNATURE).contains(&b.len())).ok_or_else(malformed)?;
        let signed = self.authorization.encode_signed(&root);
        let carried = match &signed {
            Ok(bytes) => Cow::Borrowed(bytes.as_slice()),
            Err(_) => Cow::Owned(rlp_pair(&self.unsigned, &root)),
        };
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), KEY_AUTHORIZATION.into());
        payload.insert("signature".into(), to_hex(&carried).into());
        let credential = Credential::new(Cow::Borrowed(&*self.echo), Some(self.source.clone()), payload.into())?;
        signed.map_err(|_| tempo(Reason::KeyAuthorizationMalformed))?;
        Ok(credential.completion())
    }
}

/// `rlp([unsigned, signature])` whatever its length: what the credential carries, to be measured.
fn rlp_pair(unsigned: &[u8], signature: &[u8]) -> Vec<u8> {
    use alloy_rlp::{Encodable, Header};
    let mut body = unsigned.to_vec();
    signature.encode(&mut body);
    let mut out = Vec::with_capacity(body.len() + 9);
    Header { list: true, payload_length: body.len() }.encode(&mut out);
    out.extend_from_slice(&body);
    out
}

/// The signed key authorization a payload's `signature` carries: a string (`tempo/key-authorization-malformed`) of
/// `0x` hex of at most 8192 bytes reading as one ([`SignedKeyAuthorization::decode`]).
fn signed_of(payload: &Object) -> Result<SignedKeyAuthorization, Refusal> {
    let bad = || tempo(Reason::KeyAuthorizationMalformed);
    let text = payload.member("signature").and_then(Value::as_str).ok_or_else(bad)?;
    if text.len() > 2 + 2 * MAX_KEY_AUTHORIZATION_BYTES {
        return Err(bad());
    }
    let bytes = hex_bytes(text).ok_or_else(bad)?;
    SignedKeyAuthorization::decode(&bytes).map_err(|_| bad())
}

/// Whether the key authorization authorizes the key the challenge issued ([`issued_key`], whose refusal it gives): its
/// key id and key type are the challenge's, and its chain id is `methodDetails.chainId` (`tempo/key-not-authorized`
/// otherwise), so the activation and every payment under the key are read under that one key.
fn authorized(k: &SignedKeyAuthorization, d: &Object) -> Result<(), Refusal> {
    let (key_id, key_type) = issued_key(d)?;
    let same_key = parse_address(key_id) == Some(k.key_id) && k.key_type == U256::from(key_type);
    let chain = d.member("chainId").and_then(safe_int).and_then(|c| u64::try_from(c).ok());
    if same_key && chain.is_some_and(|c| U256::from(c) == k.chain_id) {
        Ok(())
    } else {
        Err(tempo(Reason::KeyNotAuthorized))
    }
}

/// The echoed challenge, once the credential is held for the subscription
/// ([`echoed_for`]), its payload is of type `keyAuthorization` (`mpp/not-an-opening`), its signed authorization reads
/// ([`signed_of`]) with a witness (`tempo/no-witness`) that is H (`tempo/witness-not-bound`), and it authorizes the
/// challenge's issued key ([`authorized`]). The expiry, limits and calls are not compared with the challenge, as in
/// the reference: the chain enforces what was signed.
fn witnessed(presented: &dyn Member) -> Result<Echoed<'_>, Refusal> {
    let e = echoed_for(presented, ID, &SUBSCRIPTION)?;
    if e.payload.member("type").and_then(Value::as_str) != Some(KEY_AUTHORIZATION) {
        return Err(mpp(Reason::NotAnOpening));
    }
    let k = signed_of(e.payload)?;
    let witness = k.witness.ok_or(tempo(Reason::NoWitness))?;
    if witness.0 != *e.h.as_bytes() {
        return Err(tempo(Reason::WitnessNotBound));
    }
    authorized(&k, e.checked.details())?;
    Ok(e)
}

/// A payment's payload, once the payment is within MPP's bounds (`mpp/credential-malformed`, as every credential is
/// measured before it is read) and an object with an object `payload` (`mpp/credential-malformed`).
fn payload_of(payment: &Value) -> Result<&Object, Refusal> {
    if !json_within(payment, MAX_CREDENTIAL_BYTES) {
        return Err(mpp(Reason::CredentialMalformed));
    }
    payment.get("payload").and_then(Value::as_object).ok_or(mpp(Reason::CredentialMalformed))
}

impl Channel for SubscriptionTempo {
    /// A key authorization opens; any other payload type is `mpp/session-action`.
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        match payload_of(payment)?.member("type").and_then(Value::as_str) {
            Some(KEY_AUTHORIZATION) => Ok(ChannelKind::Open),
            _ => Err(mpp(Reason::SessionAction)),
        }
    }

    /// The challenge's network, `eip155:<chainId>`, and the key authorization's digest, lower-case, once the opening
    /// is held as bound holds it ([`echoed_for`]) and authorizes the challenge's issued key. The witness is bound's to
    /// read.
    fn channel_ref(&self, payment: &Value, landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        self.kind(payment, landed)?;
        let e = echoed_for(payment, ID, &SUBSCRIPTION)?;
        let network = network(e.checked.value())?;
        let k = signed_of(e.payload)?;
        authorized(&k, e.checked.details())?;
        Ok(ChannelRef { network, channel: to_hex(k.digest.as_slice()) })
    }

    /// Never: the seller's transfers under the key carry no H (`mpp/not-bound-within`).
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        if !json_within(payment, MAX_CREDENTIAL_BYTES) {
            return Err(mpp(Reason::CredentialMalformed));
        }
        Err(mpp(Reason::NotBoundWithin))
    }

    /// `"0"`: a key authorization carries no voucher.
    fn signed_max(&self, _opening: &Value) -> String {
        "0".to_owned()
    }

    /// Nothing is paid within a subscription through the gate: the seller's server transfers under the key.
    fn plan_within(&self, _args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        Err(Declined::new(DeclineCode::PairingNotSupported, format!("The pairing {ID} has no in-channel payment.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(request: &Value) -> Result<Vec<&'static str>, Refusal> {
        let challenge = Map::new();
        let request = request.as_object().cloned().unwrap_or_default();
        let details = request.member("methodDetails").and_then(Value::as_object).cloned().unwrap_or_default();
        subscription(&Parts { challenge: &challenge, request: &request, details: &details })
    }

    #[test]
    fn the_filter_reads_the_period_and_expiry_as_the_reference() {
        let base = json!({
            "amount": "1", "currency": format!("0x{}", "2".repeat(40)), "recipient": format!("0x{}", "3".repeat(40)),
            "periodCount": "30", "periodUnit": "day", "subscriptionExpires": "2026-12-20T00:00:00Z",
            "methodDetails": {"chainId": 42431, "accessKey": {"accessKeyAddress": format!("0x{}", "4".repeat(40)),
                "keyType": "p256"}},
        });
        assert_eq!(parts_of(&base), Ok(vec![ID]));
        let with = |k: &str, v: Value| {
            let mut r = base.clone();
            r[k] = v;
            parts_of(&r).map_err(|r| r.code())
        };
        let malformed = Err("mpp/request-malformed".to_owned());
        // 2^64 / 604800 is 30500568904943.6: the first count of weeks past a uint64 period.
        assert_eq!(with("periodUnit", json!("week")).map(|_| ()), Ok(()));
        assert_eq!(with("periodCount", json!("30500568904943")).map(|_| ()), Ok(()));
        let mut r = base.clone();
        r["periodUnit"] = json!("week");
        r["periodCount"] = json!("30500568904944");
        assert_eq!(parts_of(&r).map_err(|r| r.code()), malformed);
        for bad in [json!("0"), json!("030"), json!(30), json!("1".repeat(17)), json!("")] {
            assert_eq!(with("periodCount", bad.clone()), malformed, "{bad}");
        }
        assert_eq!(with("periodUnit", json!("month")), malformed);
        assert_eq!(with("subscriptionExpires", json!("1969-12-31T23:59:59Z")), malformed);
        assert_eq!(with("subscriptionExpires", json!(1_797_724_800)), malformed);
        let mut r = base.clone();
        r["methodDetails"]["accessKey"]["keyType"] = json!("ed25519");
        assert_eq!(parts_of(&r).map_err(|r| r.code()), Err("mpp/access-key-malformed".to_owned()));
        let mut r = base.clone();
        r["methodDetails"]["chainId"] = json!("42431");
        assert_eq!(parts_of(&r).map_err(|r| r.code()), Err("mpp/chain-id-required".to_owned()));
    }
}
