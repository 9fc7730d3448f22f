//! Reading a document from its bytes: JSON within the crate's nesting cap and size cap, no member twice in any
//! object, a `contract` version this crate reads, then the typed shape. The object as received is kept beside the
//! typed value: the signature is checked over it, not over a value written back.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ContractError;
use super::types::{Attestation, Challenge, KeyList, Link, OfferCard, Presentation, Quote, Receipt};

/// The most bytes a contract document may have: every document of the contract is a few kilobytes.
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// One of the signed documents: its name (for messages), the key that signed it and when.
pub trait Document: Serialize + DeserializeOwned + sealed::Sealed {
    /// The document's name in messages (`receipt`).
    const NAME: &'static str;
    /// The id of the key that signed it.
    fn kid(&self) -> &str;
    /// When it was signed (RFC 3339): the time the key must have been valid at.
    fn signed_at(&self) -> &str;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! document {
    ($type:ty, $name:literal, $at:ident) => {
        impl sealed::Sealed for $type {}
        impl Document for $type {
            const NAME: &'static str = $name;
            fn kid(&self) -> &str {
                &self.kid
            }
            fn signed_at(&self) -> &str {
                &self.$at
            }
        }
    };
}

document!(OfferCard, "offer card", issued);
document!(Quote, "quote", issued);
document!(Presentation, "mandate presentation", present);
document!(Challenge, "payment challenge", issued);
document!(Receipt, "receipt", time);
document!(Attestation, "attestation", issued);
document!(Link, "mandate link", issued);

/// A document as read: the typed value, and the JSON object exactly as received (which the signature covers).
/// Reading checks its shape and version only; [`Signed::verify`] checks the signature.
#[derive(Debug, Clone, PartialEq)]
pub struct Signed<T> {
    doc: T,
    object: Map<String, Value>,
}

impl<T: Document> Signed<T> {
    /// The typed document.
    pub const fn doc(&self) -> &T {
        &self.doc
    }

    /// The JSON object as received.
    pub const fn object(&self) -> &Map<String, Value> {
        &self.object
    }

    /// The typed document, the received object dropped.
    pub fn into_doc(self) -> T {
        self.doc
    }

    /// A document from an object already read (a link inside a presentation): its shape, no version (a link has
    /// none of its own).
    pub(crate) fn from_object(object: Map<String, Value>) -> Result<Self, ContractError> {
        let doc = T::deserialize(Value::Object(object.clone())).map_err(|e| ContractError::malformed(T::NAME, e))?;
        Ok(Self { doc, object })
    }
}

impl Signed<Presentation> {
    /// The chain's links, each with the object it was signed as.
    pub fn links(&self) -> Result<Vec<Signed<Link>>, ContractError> {
        let Some(Value::Array(chain)) = self.object.get("chain") else {
            return Err(ContractError::malformed(Presentation::NAME, "`chain` is not a list"));
        };
        chain
            .iter()
            .map(|link| match link {
                Value::Object(o) => Signed::from_object(o.clone()),
                _ => Err(ContractError::malformed(Link::NAME, "a link is not an object")),
            })
            .collect()
    }
}

/// Reads a document from its bytes: at most [`MAX_DOCUMENT_BYTES`], UTF-8 JSON nested at most 64 levels, an object
/// with no member twice at any depth, a `contract` member that is `1` or `1.<minor>`, and the document's shape.
/// The signature is not checked here.
pub fn read<T: Document>(bytes: &[u8]) -> Result<Signed<T>, ContractError> {
    let object = read_object(bytes)?;
    check_version(&object)?;
    let doc = T::deserialize(Value::Object(object.clone())).map_err(|e| ContractError::malformed(T::NAME, e))?;
    Ok(Signed { doc, object })
}

/// Reads a signer's key list from its bytes, with the same rules as [`read`], and no `kid` listed twice (which of
/// two keys a document's `kid` names could not be told). Each key's `alg`, bytes and dates are checked when a
/// document names it ([`Signed::verify`]): a list may carry a key this crate cannot use beside those it can.
pub fn read_keys(bytes: &[u8]) -> Result<KeyList, ContractError> {
    let object = read_object(bytes)?;
    check_version(&object)?;
    let list = KeyList::deserialize(Value::Object(object)).map_err(|e| ContractError::malformed("key list", e))?;
    let mut seen = HashSet::new();
    if let Some(twice) = list.keys.iter().find(|k| !seen.insert(k.kid.as_str())) {
        return Err(ContractError::malformed("key list", format_args!("the kid `{}` is listed twice", twice.kid)));
    }
    Ok(list)
}

pub(super) fn read_object(bytes: &[u8]) -> Result<Map<String, Value>, ContractError> {
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(ContractError::NotJson(format!("{} bytes, more than {MAX_DOCUMENT_BYTES}", bytes.len())));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| ContractError::NotJson("not UTF-8".into()))?;
    if !crate::json::text_within_depth(text) {
        return Err(ContractError::NotJson("nested more than 64 levels".into()));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let repeated = Cell::new(None);
    let value = Unique(&repeated).deserialize(&mut de).map_err(|e| match repeated.take() {
        Some(name) => ContractError::DuplicateMember(name),
        None => ContractError::NotJson(e.to_string()),
    })?;
    de.end().map_err(|e| ContractError::NotJson(e.to_string()))?;
    match value {
        Value::Object(o) => Ok(o),
        _ => Err(ContractError::NotJson("not an object".into())),
    }
}

fn check_version(object: &Map<String, Value>) -> Result<(), ContractError> {
    let version = object.get("contract");
    let text = version.and_then(Value::as_str);
    let readable = text.is_some_and(|t| {
        t == "1"
            || t.strip_prefix("1.").is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
    });
    if readable {
        Ok(())
    } else {
        Err(ContractError::Version(version.map_or_else(|| "(none)".to_owned(), Value::to_string)))
    }
}

/// A JSON value read with every object's member names checked for repeats: the first name found twice is put in
/// the cell (and the read fails), so the name is the one in the text whatever it holds. (Not the error's message:
/// serde_json takes a message ending in ` at line L column C` for a position, and a name can end so.)
#[derive(Clone, Copy)]
struct Unique<'a>(&'a Cell<Option<String>>);

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("a number out of range"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                self.0.set(Some(name));
                return Err(de::Error::custom("a member appears twice"));
            }
            let v = map.next_value_seed(self)?;
            object.insert(name, v);
        }
        Ok(Value::Object(object))
    }
}
