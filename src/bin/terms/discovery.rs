//! The seller's discovery document (LCP §2) beside the offer: `terms check` reads
//! `https://<origin>/.well-known/legal-context.json` of the URL's origin and shows it, saying plainly when the
//! `atrHash` it lists is not the H of the offer (the offer's H is what the gate compares with the bytes its link
//! serves; a listing is never a confirmation). Its `acceptanceRequired` reaches the spend policy's
//! `acceptance_required` rule, in `check` and, where the policy has that rule, in `pay`.
//!
//! The document is read over https only. Test builds (`loopback`) read it, for a URL on the `TERMS_LOOPBACK` address,
//! from the routed `https://<host>`, as they read the terms.

use serde_json::{Value, json};
use terms::AtrHash;
use terms::client::Plan;
use terms::discovery::{Discovered, DiscoveryError, Found};
use terms::safety::policy::Acceptance;

use super::{Fail, RequestArgs, Setup, client, outgoing, plan_code, print_plan};

/// What the URL's origin answered for its discovery document.
pub(super) type Read = Result<Found, DiscoveryError>;

/// Reads the discovery document of `url`'s origin.
pub(super) async fn read(url: &str) -> Read {
    let service = service(url);
    match fetch() {
        Ok(fetch) => terms::discovery::fetch(fetch.as_ref(), &service, None).await,
        Err(detail) => Err(DiscoveryError::Unfetchable { url: service, detail }),
    }
}

/// What the document says of signed acceptance, for the policy: `None` where no document was read.
fn acceptance(read: &Read) -> Option<bool> {
    match read {
        Ok(Found::Document(d)) => Some(d.document.acceptance_required == Some(true)),
        _ => None,
    }
}

/// `terms check`: the discovery document read, its `acceptanceRequired` given to the policy, the offer probed, and
/// both shown.
pub(super) async fn check(setup: &Setup, args: &RequestArgs, json: bool) -> Result<u8, Fail> {
    let found = read(&args.url).await;
    let client = client(setup, None, acceptance(&found)).await?;
    let plan = client.probe(outgoing(args)?).await.map_err(|e| Fail(3, e.to_string()))?;
    if json {
        let mut shown = serde_json::to_value(&plan).unwrap_or(Value::Null);
        if let Some(o) = shown.as_object_mut() {
            o.insert("discovery".to_owned(), to_json(&found, plan.h.as_ref()));
        }
        println!("{shown}");
        return Ok(plan_code(&plan));
    }
    let code = print_plan(&plan, false);
    print_text(&found, &plan);
    Ok(code)
}

/// `terms pay`: what the seller says of signed acceptance, read only where the policy has a rule that reads it.
pub(super) async fn for_pay(setup: &Setup, url: &str) -> Option<bool> {
    let rule = setup.policy.as_ref().map_or(Acceptance::Allow, |p| p.rules().acceptance_required);
    if rule == Acceptance::Allow {
        return None;
    }
    let found = read(url).await;
    if let Err(e) = &found {
        eprintln!("terms: the seller's discovery document was not read ({e}); it states no requirement");
    }
    acceptance(&found)
}

fn print_text(found: &Read, plan: &Plan) {
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

fn to_json(found: &Read, h: Option<&AtrHash>) -> Value {
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

/// The fetch the document is read with: https only, the client's hardened settings; in test builds routed as
/// `TERMS_LOOPBACK` says.
#[cfg(not(feature = "loopback"))]
fn fetch() -> Result<Box<dyn terms::Fetch>, String> {
    terms::http::HttpFetch::new().map(|f| Box::new(f) as Box<dyn terms::Fetch>).map_err(|e| e.to_string())
}

/// The URL whose origin's document is read.
#[cfg(not(feature = "loopback"))]
fn service(url: &str) -> String {
    url.to_owned()
}

#[cfg(feature = "loopback")]
fn fetch() -> Result<Box<dyn terms::Fetch>, String> {
    match super::loopback_route().map_err(|f| f.1)? {
        Some((host, addr)) => terms::http::LoopbackFetch::new()
            .and_then(|f| f.route(host, addr))
            .map(|f| Box::new(f) as Box<dyn terms::Fetch>)
            .map_err(|e| e.to_string()),
        None => terms::http::HttpFetch::new().map(|f| Box::new(f) as Box<dyn terms::Fetch>).map_err(|e| e.to_string()),
    }
}

/// A URL on the routed loopback address stands for the routed `https://<host>`, as the terms' links do.
#[cfg(feature = "loopback")]
fn service(url: &str) -> String {
    if let Ok(Some((host, addr))) = super::loopback_route()
        && let Some(rest) = url.strip_prefix(&format!("http://{addr}"))
    {
        return format!("https://{host}{rest}");
    }
    url.to_owned()
}
