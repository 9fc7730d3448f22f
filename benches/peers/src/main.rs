//! The client's speed beside its peers, on one loopback seller with one key.
//!
//! - `peers seller` serves the stand-in seller (`examples/support/seller.rs`) on `127.0.0.1:0`, prints its address
//!   on one line, and serves until killed. Its `/open` path answers 402 with the same offer as `/report` (one
//!   EIP-3009 USDC option on Base Sepolia, the legal context and payment-identifier extensions), checks each payment's
//!   EIP-3009 signature as a facilitator would, and answers 200 with a `PAYMENT-RESPONSE`.
//! - `peers bench <client> <address> [requests] [concurrency]` pays `requests` paid requests (default 400) from
//!   `concurrency` tasks (default 4) after 20 to warm up, each a fresh 402 paid in full, and prints one JSON line:
//!   the client, requests, concurrency, paid requests per second, p50 and p99 in milliseconds, and the client's CPU
//!   time per paid request. The clients: `terms`, `terms-atr-in-memory`, `x402-reqwest`, `x402-reqwest-and-terms`.
//!
//! `terms::client` does per request what it always does: reads the offer, fetches the terms (ATR) once and compares
//! them with the H the offer advertises, builds the payment carrying H, reads H back from it, sends it, and reads
//! the settlement. Its terms and its paid requests go on one hardened reqwest client, as the client's defaults do.
//! `x402-reqwest` reads the offer, signs, and sends. Both sign with Anvil's published key #0.
//! `terms-atr-in-memory` is `terms::client` with the terms served from memory instead of over loopback: the same
//! gate, two HTTP exchanges a payment as the peers have. `x402-reqwest-and-terms` is `x402-reqwest` with a plain GET
//! of the seller's terms before each payment, on the same client (the bytes' length checked, nothing compared): three
//! exchanges and none of the gate's work, the least that reading the terms over the same stack adds to the peer.

#[path = "../../../examples/support/seller.rs"]
#[allow(dead_code, missing_docs, clippy::all)]
mod seller;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// One paid request, its status checked; the time it took.
trait Payer: Send + Sync + 'static {
    fn pay(&self, url: &str) -> impl std::future::Future<Output = Result<Duration, Failure>> + Send;
}

struct Terms(terms::client::Client);

impl Payer for Terms {
    async fn pay(&self, url: &str) -> Result<Duration, Failure> {
        let started = Instant::now();
        let outcome = self.0.send(terms::client::Outgoing::new("GET", url)).await?;
        let reply = outcome.reply().ok_or_else(|| format!("no answer: {outcome:?}"))?;
        if reply.status != 200 || reply.paid.is_none() || !reply.is_success() {
            return Err(format!("not paid: {outcome:?}").into());
        }
        Ok(started.elapsed())
    }
}

/// The seller's terms served from memory: `terms::client` without its third HTTP exchange, to tell the exchange's
/// cost from the gate's (the bytes are the seller's, so the comparison with H is the same).
struct InMemory;

impl terms::Fetch for InMemory {
    fn get<'a>(
        &'a self,
        _request: terms::Request<'a>,
    ) -> terms::BoxFuture<'a, Result<terms::Response, terms::FetchError>> {
        Box::pin(async { Ok(terms::Response::new(200, vec![], terms::Body::from_bytes(seller::ATR))) })
    }
}

/// `x402-reqwest`, and with `Some(link)` the terms fetched first on the same client (their bytes only read, not
/// compared): the least a client that reads the terms of each payment adds to the peer's work.
struct X402Reqwest(reqwest_middleware::ClientWithMiddleware, Option<String>);

impl Payer for X402Reqwest {
    async fn pay(&self, url: &str) -> Result<Duration, Failure> {
        let started = Instant::now();
        if let Some(link) = &self.1 {
            let terms = self.0.get(link).send().await?;
            if terms.status() != 200 || terms.bytes().await?.len() != seller::ATR.len() {
                return Err("the terms were not served".into());
            }
        }
        let response = self.0.get(url).send().await?;
        let status = response.status();
        let settled = response.headers().contains_key("payment-response");
        let required = response.headers().get("payment-required").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = response.bytes().await?;
        if status != 200 || !settled {
            let why = required.and_then(|r| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, r).ok());
            let why = why.map(|w| String::from_utf8_lossy(&w).into_owned()).unwrap_or_default();
            return Err(format!("not paid: {status}: {} {why}", String::from_utf8_lossy(&body)).into());
        }
        Ok(started.elapsed())
    }
}

async fn run<P: Payer>(name: &str, payer: P, url: String, requests: usize, concurrency: usize) -> Result<(), Failure> {
    for _ in 0..20 {
        payer.pay(&url).await?;
    }
    let payer = Arc::new(payer);
    let next = Arc::new(AtomicUsize::new(0));
    let cpu_before = cpu_seconds()?;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (payer, next, url) = (payer.clone(), next.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                took.push(payer.pay(&url).await?);
            }
            Ok::<_, Failure>(took)
        }));
    }
    let mut took = Vec::with_capacity(requests);
    for task in tasks {
        took.extend(task.await??);
    }
    let wall = started.elapsed();
    let cpu = cpu_seconds()? - cpu_before;
    took.sort();
    let at = |q: f64| {
        let i = ((took.len() as f64 * q).ceil() as usize).clamp(1, took.len()) - 1;
        took[i].as_secs_f64() * 1000.0
    };
    let line = serde_json::json!({
        "client": name, "requests": took.len(), "concurrency": concurrency,
        "per_second": (took.len() as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
        "p50_ms": (at(0.50) * 1000.0).round() / 1000.0, "p99_ms": (at(0.99) * 1000.0).round() / 1000.0,
        "cpu_us_per_request": (cpu / took.len() as f64 * 1e6).round(),
    });
    println!("{line}");
    Ok(())
}

/// The CPU time this process (the client alone: the seller is another process) has used, user and system, from
/// `/proc/self/stat` (Linux; clock ticks, so measure enough requests for the 10 ms tick not to matter).
fn cpu_seconds() -> Result<f64, Failure> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').ok_or("no command name in /proc/self/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).ok_or("short /proc/self/stat")?.parse::<f64>().map_err(Failure::from);
    // USER_HZ: 100 on x86-64 and aarch64 Linux.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match arg(0) {
        Some("seller") => {
            let seller = seller::Seller::start().await;
            println!("{}", seller.addr);
            std::future::pending::<()>().await;
            Ok(())
        }
        Some("bench") => {
            let (Some(client), Some(addr)) = (arg(1), arg(2)) else { return Err(usage()) };
            let addr: std::net::SocketAddr = addr.parse()?;
            let requests = arg(3).map(str::parse).transpose()?.unwrap_or(400);
            let concurrency = arg(4).map(str::parse).transpose()?.unwrap_or(4);
            let url = format!("http://{addr}/open");
            match client {
                "terms" => {
                    // One hardened client for the terms and the paid requests, as the client's defaults share one.
                    let http = terms::http::HttpFetch::builder().build()?;
                    let fetch = terms::http::LoopbackFetch::from_client(http.clone()).route(seller::HOST, addr)?;
                    let transport = terms::client::ReqwestTransport::from_client(http);
                    let key = terms::EvmKey::from_hex(seller::KEY)?;
                    let client = terms::client::Client::builder(key).fetch(fetch).transport(transport).build()?;
                    run("terms::client", Terms(client), url, requests, concurrency).await
                }
                "terms-atr-in-memory" => {
                    let key = terms::EvmKey::from_hex(seller::KEY)?;
                    let client = terms::client::Client::builder(key).fetch(InMemory).build()?;
                    run("terms (ATR in memory)", Terms(client), url, requests, concurrency).await
                }
                "x402-reqwest" | "x402-reqwest-and-terms" => {
                    use x402_reqwest::{ReqwestWithPayments as _, ReqwestWithPaymentsBuild as _};
                    let signer: Arc<alloy_signer_local::PrivateKeySigner> = Arc::new(seller::KEY.parse()?);
                    let x402 =
                        x402_reqwest::X402Client::new().register(x402_chain_eip155::V2Eip155ExactClient::new(signer));
                    let http = reqwest::Client::builder().build()?.with_payments(x402).build();
                    if client == "x402-reqwest" {
                        run("x402-reqwest", X402Reqwest(http, None), url, requests, concurrency).await
                    } else {
                        let link = format!("http://{addr}/atr/{}", seller::h().trim_start_matches("0x"));
                        run("x402-reqwest and the terms", X402Reqwest(http, Some(link)), url, requests, concurrency)
                            .await
                    }
                }
                _ => Err(usage()),
            }
        }
        _ => Err(usage()),
    }
}

fn usage() -> Failure {
    concat!(
        "usage: peers seller | peers bench <terms|terms-atr-in-memory|x402-reqwest|x402-reqwest-and-terms> <address> ",
        "[requests] [concurrency]"
    )
    .into()
}
