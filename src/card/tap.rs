//! Visa TAP: the agent sends H in an `lcp-hash` field and lists that field among the covered components of its
//! `agent-payer-auth` message signature (RFC 9421). The buyer's read-back holds the request's `Signature-Input` and
//! `Signature` to their form and reads the one `lcp-hash` line; no signature, key, window or nonce is verified (the
//! seller's recognition does that).

use serde_json::{Map, Value};

use super::sfv::{Bare, Member as SfvMember, SfvError, parse_dictionary};
use super::{card, is_object};
use crate::hash::AtrHash;
use crate::json::{Member, js_length};
use crate::refusal::{Reason, Refusal};

/// The field, and the covered component, that carries H.
pub(super) const TAP_FIELD: &str = "lcp-hash";
/// The tag of the signature that authorizes the payment.
const PAYER_TAG: &str = "agent-payer-auth";
/// The longest `Signature-Input` or `Signature` read, in UTF-16 code units.
const MAX_TAP_FIELD: usize = 8192;
/// The most members either dictionary may write.
const MAX_TAP_MEMBERS: usize = 16;
/// The most components an inner list may write.
const MAX_TAP_COMPONENTS: usize = 32;
/// The longest `lcp-hash` line read.
const MAX_TAP_HASH_LINE: usize = 256;

/// The field for the agent's signer to add and list in its `agent-payer-auth` signature.
pub(super) fn build(h: &AtrHash) -> Map<String, Value> {
    let mut field = Map::with_capacity(3);
    field.insert("field".into(), Value::String(TAP_FIELD.into()));
    field.insert("value".into(), Value::String(h.to_hex()));
    field.insert("component".into(), Value::String(TAP_FIELD.into()));
    field
}

/// Whether no parameter is a Byte Sequence.
fn plain(params: &super::sfv::Params) -> bool {
    params.values().all(|v| !matches!(v, Bare::Bytes(_)))
}

/// A dictionary read with TAP's bounds: `card/too-large` past them, `malformed` when it is not one.
fn dictionary(text: Option<&Value>, malformed: Reason) -> Result<indexmap::IndexMap<String, SfvMember>, Refusal> {
    let text = text.and_then(Value::as_str).ok_or(card(malformed))?;
    if js_length(text) > MAX_TAP_FIELD {
        return Err(card(Reason::TooLarge));
    }
    parse_dictionary(text, MAX_TAP_MEMBERS, MAX_TAP_COMPONENTS).map_err(|e| match e {
        SfvError::TooLarge => card(Reason::TooLarge),
        SfvError::Malformed => card(malformed),
    })
}

/// Whether a member is tagged with the String `agent-payer-auth`.
fn is_payer(member: &SfvMember) -> bool {
    matches!(member.params().get("tag"), Some(Bare::String(tag)) if tag == PAYER_TAG)
}

/// The hash from a TAP payment `{signatureInput, signature, lcpHash}`: the one `lcp-hash` line, when every
/// `agent-payer-auth` signature lists `"lcp-hash"` without parameters and one of them has its `Signature` member, so
/// whichever payer signature the seller's recognition verifies covers the hash.
pub(super) fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_object(presented) {
        return Err(card(Reason::TapSignatureInputMalformed));
    }
    // Signature-Input: every member an Inner List of Strings, every parameter plain.
    let inputs = dictionary(presented.member("signatureInput"), Reason::TapSignatureInputMalformed)?;
    let well_formed = inputs.values().all(|m| match m {
        SfvMember::InnerList(items, params) => {
            plain(params) && items.iter().all(|it| matches!(it.bare, Bare::String(_)) && plain(&it.params))
        }
        SfvMember::Item(_) => false,
    });
    if !well_formed {
        return Err(card(Reason::TapSignatureInputMalformed));
    }
    // Signature: every member a Byte Sequence.
    let signatures = dictionary(presented.member("signature"), Reason::TapSignatureMalformed)?;
    if !signatures.values().all(|m| matches!(m, SfvMember::Item(it) if matches!(it.bare, Bare::Bytes(_)))) {
        return Err(card(Reason::TapSignatureMalformed));
    }

    let payers: Vec<(&String, &SfvMember)> = inputs.iter().filter(|(_, m)| is_payer(m)).collect();
    if payers.is_empty() {
        return Err(card(Reason::TapNoPayerSignature));
    }
    let covers = |m: &SfvMember| match m {
        SfvMember::InnerList(items, _) => {
            items.iter().any(|it| matches!(&it.bare, Bare::String(s) if s == TAP_FIELD) && it.params.is_empty())
        }
        SfvMember::Item(_) => false,
    };
    if !payers.iter().all(|(_, m)| covers(m)) {
        return Err(card(Reason::TapHashNotCovered));
    }
    if !payers.iter().any(|(label, _)| signatures.contains_key(label.as_str())) {
        return Err(card(Reason::TapSignatureMissing));
    }

    let lines = presented.member("lcpHash").and_then(Value::as_array).ok_or(card(Reason::TapFieldMalformed))?;
    let line = match lines.as_slice() {
        [] => return Err(card(Reason::TapFieldMissing)),
        [line] => line.as_str().ok_or(card(Reason::TapFieldMalformed))?,
        _ => return Err(card(Reason::TapFieldRepeated)),
    };
    if js_length(line) > MAX_TAP_HASH_LINE {
        return Err(card(Reason::TooLarge));
    }
    AtrHash::parse(line.trim_matches([' ', '\t'])).ok_or(card(Reason::TapFieldMalformed))
}
