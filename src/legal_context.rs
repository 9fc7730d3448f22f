//! The structured legal context every carrier of H and its link shares (LCP §8.1): `{type: "sha256", value: H,
//! legalContextUrl: link}`, the link in either spelling (`legal_context_url` too), read as the reference's
//! `fromLegalContext` reads it. x402's `extensions.legalContext.info` and A2A's task metadata hold it.

use serde_json::{Map, Value};

use crate::hash::AtrHash;
use crate::json::Member;
use crate::link::{is_https_link, is_other_scheme_link};

/// A member read the way the reference reads it: JSON `null` counts as absent.
fn present<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// The one link a legal context names, in either spelling; `Err` when both are present and differ.
pub(crate) fn either_spelling<'a>(
    info: &'a Map<String, Value>,
    camel: &str,
    snake: &str,
) -> Result<Option<&'a Value>, ()> {
    if info.contains_key(camel) && info.contains_key(snake) && info.get(camel) != info.get(snake) {
        return Err(());
    }
    Ok(present(info, camel).or_else(|| present(info, snake)))
}

/// H and the link of a legal context's `info`: type `sha256`, a 32-byte hash and an https link in either spelling.
pub(crate) fn legal_context_info(info: &Value) -> Option<(AtrHash, String)> {
    let info = info.as_object()?;
    if info.member("type").and_then(Value::as_str) != Some("sha256") {
        return None;
    }
    let h = AtrHash::parse(info.member("value")?.as_str()?)?;
    let link = either_spelling(info, "legalContextUrl", "legal_context_url").ok()??.as_str()?;
    is_https_link(link).then(|| (h, link.to_owned()))
}

/// Whether `info` would decode but for its one link being a link of another scheme.
pub(crate) fn hash_with_non_https_link(info: &Value) -> bool {
    let Some(info) = info.as_object() else { return false };
    if info.member("type").and_then(Value::as_str) != Some("sha256")
        || info.member("value").and_then(Value::as_str).and_then(AtrHash::parse).is_none()
    {
        return false;
    }
    matches!(
        either_spelling(info, "legalContextUrl", "legal_context_url"),
        Ok(Some(Value::String(link))) if is_other_scheme_link(link)
    )
}
