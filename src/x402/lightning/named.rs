//! `x402/exact/lnbtc/invoice-named`'s proof: the invoice carries no H, so the ATR itself names the invoice in its
//! `x402` slot, and the buyer pays only an invoice that the bytes it compared name.

use std::fmt;

use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::hash::MAX_ATR_BYTES;

/// How many of the slot's `accepts` entries are read.
const MAX_ACCEPTS_READ: usize = 32;

/// Whether the ATR's bytes are one JSON object in the core's layout whose `x402` slot's `accepts` holds, among its
/// first 32 entries, an option whose `extra.invoice` is exactly the invoice. The object's first members are
/// `atrVersion`, `id` and `x402`, in that order, and no member name appears twice, so every JSON reader finds the
/// same `x402` slot. The text is strict UTF-8 with a leading byte-order mark kept, so an ATR that begins with one is
/// not one JSON object. Only that slot is read.
pub fn atr_names_invoice(atr: &[u8], invoice: &str) -> bool {
    if atr.len() > MAX_ATR_BYTES {
        return false;
    }
    let Ok(text) = std::str::from_utf8(atr) else { return false };
    let Some(Value::Object(parsed)) = crate::json::parse(text) else { return false };
    let Some(names) = member_names(text) else { return false };
    if names.get(..3) != Some(&["atrVersion".to_owned(), "id".to_owned(), "x402".to_owned()][..]) {
        return false;
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    if sorted.len() != names.len() {
        return false;
    }
    let accepts = parsed.get("x402").and_then(|s| s.get("accepts")).and_then(Value::as_array);
    accepts.is_some_and(|a| {
        a.iter()
            .take(MAX_ACCEPTS_READ)
            .any(|o| o.get("extra").and_then(|e| e.get("invoice")) == Some(&Value::from(invoice)))
    })
}

/// The member names of the JSON object the text holds, decoded, in the order written, a repeated name each time it
/// is written; `None` where the text is not one object.
fn member_names(text: &str) -> Option<Vec<String>> {
    struct Names;
    impl<'de> Visitor<'de> for Names {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut names = Vec::new();
            while let Some((name, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                names.push(name);
            }
            Ok(names)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let names = (&mut de).deserialize_map(Names).ok()?;
    de.end().ok()?;
    Some(names)
}
