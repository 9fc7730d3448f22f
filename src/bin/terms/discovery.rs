//! The seller's discovery document (LCP §2) beside the offer: `terms check` reads
//! `https://<origin>/.well-known/legal-context.json` of the URL's origin and shows it, saying plainly when the
//! `atrHash` it lists is not the H of the offer (the offer's H is what the gate compares with the bytes its link
//! serves; a listing is never a confirmation). Its `acceptanceRequired` reaches the spend policy's
//! `acceptance_required` rule, in `check` and, where the policy has that rule, in `pay`.
//!
//! The document is read over https only. With `--local-seller HOST=ADDRESS` it is read, for a URL on that address,
//! from the routed `https://HOST`, as the terms are.

use serde_json::{Value, json};
use terms::AtrHash;
use terms::client::Plan;
use terms::discovery::{Discovered, DiscoveryError, Found};
use terms::safety::policy::Acceptance;

use crate::setup::Setup;

/// What the URL's origin answered for its discovery document.
pub(super) type Read = Result<Found, DiscoveryError>;

/// Reads the discovery document of `url`'s origin.
pub(super) async fn read(setup: &Setup, url: &str) -> Read {
    let service = service(setup, url);
    match fetch(setup) {
        Ok(fetch) => terms::discovery::fetch(fetch.as_ref(), &service, None).await,
        Err(detail) => Err(DiscoveryError::Unfetchable { url: service, detail }),
    }
}

/// What the document says of signed acceptance, for the policy: `None` where no document was read.
pub(super) fn acceptance(read: &Read) -> Option<bool> {
    match read {
        Ok(Found::Document(d)) => Some(d.document.acceptance_required == Some(true)),
        _ => None,
    }
}

/// `terms pay`: what the seller says of signed acceptance, read only where the policy has a rule that reads it.
pub(super) async fn for_pay(setup: &Setup, url: &str) -> Option<bool> {
    if !reads_acceptance(setup) {
        return None;
    }
    said(read(setup, url).await)
}

/// `terms gateway`: as [`for_pay`], the document read with the gateway's fetch (public addresses only, or the
/// `--local-seller` host) from the seller's own https origin.
pub(super) async fn for_gateway(setup: &Setup, fetch: &dyn terms::Fetch, url: &str) -> Option<bool> {
    if !reads_acceptance(setup) {
        return None;
    }
    said(terms::discovery::fetch(fetch, url, None).await)
}

/// Whether the policy has a rule that reads the seller's acceptance requirement.
fn reads_acceptance(setup: &Setup) -> bool {
    setup.policy.as_ref().map_or(Acceptance::Allow, |p| p.rules().acceptance_required) != Acceptance::Allow
}

/// What a read says of acceptance, a read that failed said on stderr.
fn said(found: Read) -> Option<bool> {
    if let Err(e) = &found {
        eprintln!("terms: the seller's discovery document was not read ({e}); it states no requirement");
    }
    acceptance(&found)
}

pub(super) fn print_text(found: &Read, plan: &Plan) {
    let doc = match found {
        Ok(Found::Document(doc)) => doc,
        Ok(Found::NotServed { url, status }) => return println!("discovery none: {url} answered {status}"),
        Ok(Found::NotModified { url }) => return println!("discovery {url} not modified"),
        Ok(_) => return println!("discovery none"),
        Err(e) => return println!("discovery not read: {} ({e})", e.code()),
    };
    println!("discovery {}", doc.url);
    println!("  terms     {}", doc.document.terms);
    match (doc.document.atr_hash, plan.h) {
        (None, _) => println!("  atrHash   none listed"),
        (Some(listed), None) => println!("  atrHash   {listed} (no offer H to compare)"),
        (Some(listed), Some(h)) if doc.differs_from(&h).is_none() => println!("  atrHash   {listed} = the offer's H"),
        (Some(listed), Some(h)) => println!(
            "  atrHash   {listed} DIFFERS from the offer's H {h}: the gate compares the offer's H with the bytes its \
             link serves; a discovery listing is never a confirmation"
        ),
    }
    let acceptance = match doc.document.acceptance_required {
        Some(true) => "required: the seller asks for signed acceptance of its terms before transacting",
        Some(false) => "not required",
        None => "not stated",
    };
    println!("  acceptance {acceptance}");
    if !doc.ignored.is_empty() {
        println!("  ignored   {}", doc.ignored.join(", "));
    }
}

pub(super) fn to_json(found: &Read, h: Option<&AtrHash>) -> Value {
    match found {
        Ok(Found::Document(doc)) => document_json(doc, h),
        Ok(Found::NotServed { url, status }) => json!({"url": url, "served": false, "status": status}),
        Ok(Found::NotModified { url }) => json!({"url": url, "served": true, "notModified": true}),
        Ok(_) => json!({"served": false}),
        Err(e) => json!({"error": {"code": e.code(), "detail": e.to_string()}}),
    }
}

fn document_json(doc: &Discovered, h: Option<&AtrHash>) -> Value {
    // `atrHashMatchesOffer`: null where the document lists no hash or there is no offer H to compare.
    let matches = match (doc.document.atr_hash, h) {
        (Some(_), Some(h)) => json!(doc.differs_from(h).is_none()),
        _ => Value::Null,
    };
    json!({
        "url": doc.url,
        "served": true,
        "document": doc.document,
        "ignored": doc.ignored,
        "etag": doc.etag,
        "atrHashMatchesOffer": matches,
    })
}

/// The fetch the document is read with: https only, the client's hardened settings; with `--local-seller`, that
/// host's links from the seller on loopback.
fn fetch(setup: &Setup) -> Result<Box<dyn terms::Fetch>, String> {
    match &setup.local {
        Some((host, addr)) => terms::http::LoopbackFetch::new()
            .and_then(|f| f.route(host.clone(), *addr))
            .map(|f| Box::new(f) as Box<dyn terms::Fetch>)
            .map_err(|e| e.to_string()),
        None => terms::http::HttpFetch::new().map(|f| Box::new(f) as Box<dyn terms::Fetch>).map_err(|e| e.to_string()),
    }
}

/// A URL on the `--local-seller` address stands for the routed `https://HOST`, as the terms' links do.
fn service(setup: &Setup, url: &str) -> String {
    if let Some((host, addr)) = &setup.local
        && let Some(rest) = url.strip_prefix(&format!("http://{addr}"))
    {
        return format!("https://{host}{rest}");
    }
    url.to_owned()
}
