//! `terms check URL`: the offer, the terms compared, the policy's verdict; nothing signed and no key needed.

use std::sync::Arc;

use serde_json::Value;
use terms::client::{Plan, Verdict};
use terms::{BoxFuture, Signer, SignerError, SigningRequest, Wallet};

use crate::setup::{Setup, client, not_sent, outgoing, wallet};
use crate::units::Assets;
use crate::{Fail, RequestArgs, discovery, exit};

/// Probes the URL and prints the plan. The payer is `account` where given (a wallet that cannot sign), else the
/// configuration's signer.
pub(crate) async fn run(setup: &Setup, args: &RequestArgs, account: Option<&str>, json: bool) -> Result<u8, Fail> {
    let payer: Arc<dyn Wallet> = match account {
        Some(a) => Arc::new(WatchOnly::new(a)?),
        None => wallet(&setup.config).map_err(|Fail(code, why)| {
            Fail(code, format!("{why}; `terms check` signs nothing: name the payer with --account 0x… instead"))
        })?,
    };
    let request = outgoing(args)?;
    // The seller's discovery document (LCP §2), read first: its `acceptanceRequired` reaches the policy.
    let found = discovery::read(setup, &args.url).await;
    let client = client(setup, payer, None, None, discovery::acceptance(&found)).await?;
    let plan = client.probe(request).await.map_err(|e| not_sent(&e))?;
    if json {
        let mut shown = serde_json::to_value(&plan).unwrap_or(Value::Null);
        if let Some(o) = shown.as_object_mut() {
            o.insert("discovery".to_owned(), discovery::to_json(&found, plan.h.as_ref()));
        }
        println!("{shown}");
        return Ok(code(&plan));
    }
    let code = print_plan(&plan, &setup.assets, false, None);
    discovery::print_text(&found, &plan);
    Ok(code)
}

/// An address on every EIP-155 network that signs nothing: `check` chooses the option for it.
#[derive(Debug)]
struct WatchOnly(String);

impl WatchOnly {
    fn new(address: &str) -> Result<Self, Fail> {
        let hex = address.strip_prefix("0x").unwrap_or("");
        if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Fail(exit::USAGE, format!("--account {address}: not a 0x address of 40 hex digits")));
        }
        Ok(Self(address.to_owned()))
    }
}

impl Wallet for WatchOnly {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        network.starts_with("eip155:").then(|| Arc::new(Watched(format!("{network}:{}", self.0))) as Arc<dyn Signer>)
    }
}

/// One account of a [`WatchOnly`] wallet.
struct Watched(String);

impl Signer for Watched {
    fn account(&self) -> &str {
        &self.0
    }
    fn sign<'a>(&'a self, _: &'a SigningRequest) -> BoxFuture<'a, Result<terms::Answer, SignerError>> {
        Box::pin(async { Err(SignerError::new("--account names an address to check for; it signs nothing")) })
    }
}

/// The exit code of a plan: 0 where it could be paid, else `do-not-retry`.
fn code(plan: &Plan) -> u8 {
    match (&plan.declined, &plan.policy) {
        (Some(_), _) | (_, Verdict::Refused { .. }) => exit::DO_NOT_RETRY,
        _ => exit::OK,
    }
}

/// How long a signed payment of the chosen option would stay valid, as the offer says.
fn validity(plan: &Plan) -> Option<String> {
    let offer = plan.offer.as_ref()?;
    let quote = plan.quote.as_ref()?;
    if let Some(accepts) = offer.get("accepts").and_then(Value::as_array) {
        let option = accepts.iter().find(|o| {
            o.get("network").and_then(Value::as_str) == Some(quote.network.as_str())
                && o.get("payTo").and_then(Value::as_str).is_some_and(|p| p.eq_ignore_ascii_case(&quote.payee))
        })?;
        let seconds = option.get("maxTimeoutSeconds").and_then(Value::as_u64)?;
        return Some(format!("from signing to {seconds} s later (the offer's maxTimeoutSeconds)"));
    }
    let expires = offer.as_array()?.iter().find_map(|c| c.get("expires").and_then(Value::as_str))?;
    Some(format!("until {expires} (the challenge's expiry)"))
}

/// Prints the plan; with `dry_run`'s purchase key, what would be signed. The exit code.
pub(crate) fn print_plan(plan: &Plan, assets: &Assets, json: bool, dry_run: Option<&str>) -> u8 {
    let code = code(plan);
    if json {
        println!("{}", serde_json::to_string(plan).unwrap_or_default());
        return code;
    }
    println!("status    {}", plan.status);
    if let Some(p) = &plan.pairing {
        println!("pairing   {p}");
    }
    if let Some(a) = &plan.account {
        println!("payer     {a}");
    }
    if let Some(q) = &plan.quote {
        println!("pays      {} on {} to {}", assets.show(&q.network, &q.asset, q.amount), q.network, q.payee);
        if q.asset != assets.symbol(&q.network, &q.asset) {
            println!("asset     {}", q.asset);
        }
    }
    if let (Some(h), Some(n)) = (&plan.h, plan.atr_bytes) {
        println!("terms     {n} bytes, SHA-256 {} = the offer's H", h.to_hex());
    }
    match &plan.policy {
        Verdict::NoPolicy => println!("policy    none"),
        Verdict::Allowed { needs_approval } => {
            println!("policy    allowed{}", if *needs_approval { " (needs approval)" } else { "" });
        }
        Verdict::Refused { code, why } => println!("policy    refused: {code} ({why})"),
        Verdict::NotAsked => println!("policy    configured; not asked, the offer was declined first"),
        _ => {}
    }
    if let Some(d) = &plan.declined {
        println!(
            "declined  {}: {}{}",
            d.code,
            d.detail,
            d.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        );
    }
    if let Some(key) = dry_run
        && plan.declined.is_none()
        && let Some(q) = &plan.quote
    {
        println!("would sign a payment of {} to {}", assets.show(&q.network, &q.asset, q.amount), q.payee);
        if let Some(window) = validity(plan) {
            println!("valid     {window}");
        }
        println!("purchase  {key}");
    }
    println!("signed    nothing");
    code
}
