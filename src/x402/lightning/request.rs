//! x402 lnbtc's request binding (the reference's `pieces/_lnbtc_request.py`): the seller's node writes the invoice's
//! description hash as the request hash of the buyer's own request, so the buyer recomputes it from the request it
//! is about to send (the `request` input) and pays only an invoice for that request. The binding object is built from
//! the option's profile and parameters and the buyer's request; the request hash is the lower-case hex of SHA-256
//! over the UTF-8 of its RFC 8785 form. The option's `extra.requestHash` and the invoice's `h` must both equal it.
//!
//! The buyer's request:
//! - `http:1`: `{method, url, body?, headers?}`, `body` the content bytes as `0x` hex (absent is empty), `headers`
//!   the value of each header present by lower-case name.
//! - `mcp:1`: `{server, name, arguments?, meta?}`, `server` the MCP server's URI as the buyer's configuration spells
//!   it, `name` and `arguments` the `tools/call` params, `meta` its `params._meta`.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::codec::hex_bytes;
use crate::json::{Member, canonical};
use crate::rail::lightning::{Field, decode, invoice_h};
use crate::refusal::{Reason, Refusal};

const HTTP_DOMAIN: &str = "x402:exact:lnbtc:bolt11:http:1";
const MCP_DOMAIN: &str = "x402:exact:lnbtc:bolt11:mcp:1";
/// The `_meta` members a binding never names: the payment itself, and the progress token.
const EXCLUDED_META: [&str; 2] = ["x402/payment", "progressToken"];

fn ln(reason: Reason) -> Refusal {
    Refusal::new("ln", reason)
}

fn malformed() -> Refusal {
    ln(Reason::RequestBindingMalformed)
}

fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// SHA-256 of `0x01 || data` for a present value, of the single byte `0x00` for an absent one.
fn value_hash(data: Option<&[u8]>) -> String {
    match data {
        None => sha256_hex(&[0]),
        Some(d) => sha256_hex(&[&[1u8][..], d].concat()),
    }
}

/// 64 lower-case hex digits.
pub(crate) use crate::rail::lightning::is_hex32 as is_request_hash;

/// An HTTP token character (RFC 9110 `tchar`); lower-case letters only where `lower`.
fn is_tchar(b: u8, lower: bool) -> bool {
    b.is_ascii_digit()
        || b.is_ascii_lowercase()
        || (!lower && b.is_ascii_uppercase())
        || b"!#$%&'*+.^_`|~-".contains(&b)
}

fn is_token(text: &str, lower: bool) -> bool {
    !text.is_empty() && text.bytes().all(|b| is_tchar(b, lower))
}

/// Printable ASCII with no space, as the reference's URI forms require.
fn is_ascii_uri(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// An absolute http or https URL in ASCII syntax, with a host, no user information and no fragment, that the WHATWG
/// URL parser reads with no base.
fn is_target_uri(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://")) else { return false };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = rest.get(..authority_end).unwrap_or_default();
    is_ascii_uri(url)
        && !authority.is_empty()
        && !authority.contains(['#', '@'])
        && !rest.contains('#')
        && url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// An absolute URI in ASCII syntax, with no user information and no fragment, that the WHATWG URL parser reads with
/// no base.
fn is_absolute_uri(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once(':') else { return false };
    let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b));
    let userinfo = rest.strip_prefix("//").is_some_and(|r| {
        let end = r.find(['/', '?', '#']).unwrap_or(r.len());
        r.get(..end).is_some_and(|a| a.contains('@'))
    });
    is_ascii_uri(value) && scheme_ok && !rest.contains('#') && !userinfo && url::Url::parse(value).is_ok()
}

/// Strictly ascending by UTF-16 code units (RFC 8785's member order), so no name twice.
fn ascending(names: &[&str]) -> bool {
    let key = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    names.windows(2).all(|w| matches!(w, [a, b] if key(a) < key(b)))
}

/// The binding's names: a list of strings, each `ok`, strictly ascending.
fn names_of(list: Option<&Value>, ok: impl Fn(&str) -> bool) -> Result<Vec<&str>, Refusal> {
    let list = list.and_then(Value::as_array).ok_or_else(malformed)?;
    let names: Vec<&str> = list.iter().map(Value::as_str).collect::<Option<_>>().ok_or_else(malformed)?;
    if !names.iter().all(|n| ok(n)) || !ascending(&names) {
        return Err(malformed());
    }
    Ok(names)
}

/// A member of the request, or `default` where it is absent; `None` where it is present and not an object.
fn object_or_empty<'a>(
    request: &'a Map<String, Value>,
    key: &str,
    empty: &'a Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    match request.get(key) {
        None => Some(empty),
        Some(v) => v.as_object(),
    }
}

fn http_binding(
    params: &Map<String, Value>,
    request: &Map<String, Value>,
    resource_url: Option<&Value>,
) -> Result<Value, Refusal> {
    if params.len() != 1 || !params.contains_key("headers") {
        return Err(malformed());
    }
    let names = names_of(params.get("headers"), |n| is_token(n, true) && n != "payment-signature")?;
    let method = request.get("method").and_then(Value::as_str).filter(|m| is_token(m, false));
    let url = request.get("url").and_then(Value::as_str).filter(|u| is_target_uri(u));
    let (Some(method), Some(url)) = (method, url) else { return Err(malformed()) };
    if resource_url.and_then(Value::as_str) != Some(url) {
        return Err(ln(Reason::RequestResourceMismatch));
    }
    let content = match request.get("body") {
        None => Vec::new(),
        Some(b) => b.as_str().and_then(hex_bytes).ok_or_else(malformed)?,
    };
    let empty = Map::new();
    let given = object_or_empty(request, "headers", &empty).ok_or_else(malformed)?;
    let mut bound = Vec::with_capacity(names.len());
    for name in names {
        let hash = match given.get(name) {
            None => value_hash(None),
            Some(v) => {
                let v = v.as_str().filter(|v| v.bytes().all(|b| b == b'\t' || (0x20..=0x7e).contains(&b)));
                let v = v.ok_or_else(malformed)?;
                value_hash(Some(v.trim_matches([' ', '\t']).as_bytes()))
            }
        };
        bound.push(json!({"name": name, "valueHash": hash}));
    }
    Ok(json!({"domain": HTTP_DOMAIN, "method": method, "url": url, "bodyHash": sha256_hex(&content), "headers": bound}))
}

fn mcp_binding(params: &Map<String, Value>, request: &Map<String, Value>) -> Result<Value, Refusal> {
    if params.len() != 2 || !params.contains_key("server") || !params.contains_key("metadata") {
        return Err(malformed());
    }
    let names = names_of(params.get("metadata"), |n| !n.is_empty() && !EXCLUDED_META.contains(&n))?;
    let server = request.get("server").and_then(Value::as_str).filter(|s| is_absolute_uri(s)).ok_or_else(malformed)?;
    if params.get("server").and_then(Value::as_str) != Some(server) {
        return Err(ln(Reason::RequestServerMismatch));
    }
    let name = request.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or_else(malformed)?;
    let empty = Map::new();
    let arguments = object_or_empty(request, "arguments", &empty).ok_or_else(malformed)?;
    let given = object_or_empty(request, "meta", &empty).ok_or_else(malformed)?;
    let mut bound = Vec::with_capacity(names.len());
    for n in names {
        let hash = match given.get(n) {
            None => value_hash(None),
            Some(v) => value_hash(Some(canonical(v).ok_or_else(malformed)?.as_bytes())),
        };
        bound.push(json!({"name": n, "valueHash": hash}));
    }
    Ok(json!({
        "domain": MCP_DOMAIN, "server": server, "method": "tools/call", "name": name,
        "arguments": arguments, "metadata": bound,
    }))
}

/// The binding object of the buyer's own request under a profile and its parameters, the profile being the one the
/// request's transport uses: `http:1` for an HTTP request, `mcp:1` for a `tools/call` (a request with `server`).
fn binding_of(
    profile: Option<&Value>,
    params: Option<&Value>,
    request: &Value,
    resource_url: Option<&Value>,
) -> Result<Value, Refusal> {
    let (Some(params), Some(request)) = (params.and_then(Value::as_object), request.as_object()) else {
        return Err(malformed());
    };
    let is_mcp = request.contains_key("server");
    match profile.and_then(Value::as_str) {
        Some("http:1") if !is_mcp => http_binding(params, request, resource_url),
        Some("mcp:1") if is_mcp => mcp_binding(params, request),
        _ => Err(ln(Reason::RequestProfileMismatch)),
    }
}

/// The request hash of the buyer's own request under the option's profile, when the option's `extra.requestHash`
/// (64 lower-case hex digits, else `ln/request-binding-malformed`) and the invoice's description hash both equal it
/// (`ln/request-hash-mismatch`); the binding's and the invoice's own refusals otherwise, in the reference's order.
pub(crate) fn check_request_hash(
    option: &Value,
    resource_url: Option<&Value>,
    request: &Value,
) -> Result<String, Refusal> {
    let extra = option.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    let wanted =
        extra.get("requestHash").and_then(Value::as_str).filter(|h| is_request_hash(h)).ok_or_else(malformed)?;
    let binding =
        binding_of(extra.get("requestBindingProfile"), extra.get("requestBindingParams"), request, resource_url)?;
    let computed = sha256_hex(canonical(&binding).ok_or_else(malformed)?.as_bytes());
    if computed != wanted {
        return Err(ln(Reason::RequestHashMismatch));
    }
    let invoice = extra.get("invoice").and_then(Value::as_str).ok_or(ln(Reason::InvoiceMalformed))?;
    let d = invoice_h(&decode(invoice)?, Field::H)?;
    if hex::encode(d.as_bytes()) != computed {
        return Err(ln(Reason::RequestHashMismatch));
    }
    Ok(computed)
}
