//! Seals: an HMAC-SHA-256 `mac` on each value the tools hand out and take back (`chosen`, a channel opening, a
//! hold), so that a value is used only as this server process returned it. An agent copies these values through
//! its context; the seal turns an edited or invented value into a decline instead of a payment built from it.
//!
//! The key is 64 random bytes made on first use and kept in a process-wide static: never exported, logged or
//! returned, so a seal verifies in the process that made it (in any server instance there) and nowhere else. The
//! message is `label "\n" JCS(members)`: RFC 8785 makes member order and number spelling irrelevant, and the label
//! keeps a hold's mac from passing as an opening's.

use std::sync::OnceLock;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use crate::json::within_depth;

/// What a seal is on; part of the message, so one kind's mac never verifies as another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Label {
    /// `chosen` from `atr_confirm`.
    Chosen,
    /// A channel opening from `atr_finish` or `atr_transact`.
    Opening,
    /// A channel hold.
    Hold,
}

impl Label {
    fn as_str(self) -> &'static str {
        match self {
            Self::Chosen => "chosen",
            Self::Opening => "opening",
            Self::Hold => "hold",
        }
    }
}

/// The member a seal is written in.
pub(crate) const MAC: &str = "mac";

/// The deepest value sealed: a hold (one level) around an opening the gate caps at 64, and a margin.
const MAX_SEALED_DEPTH: usize = 72;

/// The key. No `Debug`, no accessor: it leaves this module only as an HMAC state.
struct Key([u8; 64]);

static KEY: OnceLock<Option<Key>> = OnceLock::new();

fn key() -> Option<&'static Key> {
    KEY.get_or_init(|| {
        let mut bytes = [0u8; 64];
        getrandom::fill(&mut bytes).ok()?;
        Some(Key(bytes))
    })
    .as_ref()
}

/// The sealing failed: no random key could be made, or the value has no canonical form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsealable;

fn state(label: Label, members: &Map<String, Value>) -> Option<Hmac<Sha256>> {
    let value = Value::Object(members.clone());
    if !within_depth(&value, MAX_SEALED_DEPTH) {
        return None;
    }
    let canonical = serde_json_canonicalizer::to_string(&value).ok()?;
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&key()?.0).ok()?;
    mac.update(label.as_str().as_bytes());
    mac.update(b"\n");
    mac.update(canonical.as_bytes());
    Some(mac)
}

/// The mac of the members, as `0x` and 64 lower-case hex digits.
pub(crate) fn mac_of(label: Label, members: &Map<String, Value>) -> Result<String, Unsealable> {
    let tag = state(label, members).ok_or(Unsealable)?.finalize().into_bytes();
    Ok(crate::codec::to_hex(&tag))
}

/// The members with their mac added as the last member.
pub(crate) fn seal(label: Label, mut members: Map<String, Value>) -> Result<Map<String, Value>, Unsealable> {
    members.shift_remove(MAC);
    let mac = mac_of(label, &members)?;
    members.insert(MAC.to_owned(), Value::String(mac));
    Ok(members)
}

/// Whether the text has a mac's form: `0x` and 64 lower-case hex digits.
pub(crate) fn is_mac_form(text: &str) -> bool {
    text.strip_prefix("0x").is_some_and(|d| d.len() == 64 && d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// Whether `mac` is the seal of the members, compared in constant time.
pub(crate) fn verifies(label: Label, members: &Map<String, Value>, mac: &str) -> bool {
    if !is_mac_form(mac) {
        return false;
    }
    let Some(tag) = crate::codec::hex_bytes(mac) else { return false };
    state(label, members).is_some_and(|state| state.verify_slice(&tag).is_ok())
}

/// The members of a sealed value without its mac, when the mac verifies.
pub(crate) fn unseal(label: Label, value: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mac = value.get(MAC)?.as_str()?;
    let mut members = value.clone();
    members.shift_remove(MAC);
    verifies(label, &members, mac).then_some(members)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_seal_verifies_only_unchanged_and_under_its_label() {
        let sealed = seal(Label::Hold, obj(json!({"b": 1, "a": [1, 2.0, "x"]}))).unwrap();
        let mac = sealed[MAC].as_str().unwrap().to_owned();
        assert!(is_mac_form(&mac));
        assert!(unseal(Label::Hold, &sealed).is_some());
        assert!(unseal(Label::Opening, &sealed).is_none());
        assert!(unseal(Label::Chosen, &sealed).is_none());
        // Member order and integral fractions do not count; every other change does.
        let reordered = obj(json!({"mac": mac, "a": [1.0, 2, "x"], "b": 1}));
        assert!(unseal(Label::Hold, &reordered).is_some());
        assert!(unseal(Label::Hold, &obj(json!({"mac": mac, "a": [1, 2, "x"], "b": 2}))).is_none());
        assert!(unseal(Label::Hold, &obj(json!({"mac": mac, "a": [1, 2, "x"]}))).is_none());
        assert!(unseal(Label::Hold, &obj(json!({"mac": mac, "a": [1, 2, "x"], "b": 1, "c": 0}))).is_none());
        assert!(unseal(Label::Hold, &obj(json!({"a": [1, 2, "x"], "b": 1}))).is_none());
        assert!(
            unseal(Label::Hold, &obj(json!({"mac": mac.to_uppercase().replace("0X", "0x"), "a": [1, 2, "x"], "b": 1})))
                .is_none()
        );
    }
}
