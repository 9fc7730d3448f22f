//! `terms gateway`: a local paying proxy for tools that cannot link the crate (curl, a Python script, an agent's
//! HTTP tool). It listens on a loopback address and forwards `http://127.0.0.1:8402/https://seller.example/path?q` to
//! the seller named in the path, with the request's method, headers (minus hop-by-hop ones and its own token
//! header) and body, paying a 402 as `terms pay` does: the same policy, journal, key, purchase keys and approval
//! queue. It answers with the seller's response plus the `Terms-*` receipt headers (`answer.rs`).
//!
//! What it refuses (`request.rs`): a peer that is not on this machine, a `Host` that is not a loopback name (DNS
//! rebinding), a browser's cross-site request, a missing or wrong operator token where one is configured, a seller
//! that is not https, a seller on a loopback, private or other non-public address (the public-address rule of
//! `terms-mcp`'s fetch; only the `--local-seller` host goes to this machine), and a body over 1 MiB.

mod answer;
mod request;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use clap::Args;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use terms::Fetch;
use terms::client::{Client, LocalSellerTransport, PublicTransport};
use terms::http::{LocalSellerFetch, PublicFetch};

use crate::setup::{Setup, builder, journal, wallet};
use crate::{Fail, exit};

/// The header a caller names the operator token in, where one is configured (never forwarded).
pub(crate) const TOKEN_HEADER: &str = "terms-gateway-token";

/// How long a connection may take to send a request's headers before it is closed.
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// `terms gateway`'s flags.
#[derive(Args, Debug)]
pub(crate) struct GatewayArgs {
    /// The loopback address and port to listen on (`127.0.0.1:0` picks a free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:8402", value_name = "ADDRESS")]
    listen: String,
    /// Require this operator token in the `Terms-Gateway-Token` header of every request. Other users of the
    /// machine can read a command line: prefer `gateway_token_env` in the configuration (an environment variable's
    /// name).
    #[arg(long)]
    token: Option<String>,
}

/// What every request is served with.
pub(crate) struct Gateway {
    pub(crate) client: Client,
    /// The terms' fetch, which the seller's discovery document is read with too.
    pub(crate) fetch: Arc<dyn Fetch>,
    pub(crate) token: Option<String>,
    /// The `--local-seller` host, whose URLs go to this machine.
    pub(crate) local_host: Option<String>,
    pub(crate) setup: Setup,
}

/// Runs the gateway until the process is stopped.
pub(crate) async fn run(setup: Setup, args: &GatewayArgs) -> Result<u8, Fail> {
    let listen: SocketAddr = args
        .listen
        .parse()
        .map_err(|_| Fail(exit::USAGE, format!("--listen {}: not an IP address and port", args.listen)))?;
    if !listen.ip().is_loopback() {
        return Err(Fail(
            exit::USAGE,
            format!("--listen {listen}: not a loopback address; the gateway serves this machine only"),
        ));
    }
    let token = token(args, &setup)?;
    let wallet = wallet(&setup.config)?;
    let journal = journal(&setup).await?;
    let (fetch, transport): (Arc<dyn Fetch>, Box<dyn terms::client::Transport>) = match &setup.local {
        Some((host, addr)) => (
            Arc::new(LocalSellerFetch::new(host.clone(), *addr).map_err(|e| Fail(exit::INTERNAL, e.to_string()))?),
            Box::new(LocalSellerTransport::new(host.clone(), *addr).map_err(|e| Fail(exit::INTERNAL, e.0))?),
        ),
        None => (
            Arc::new(PublicFetch::new().map_err(|e| Fail(exit::INTERNAL, e.to_string()))?),
            Box::new(PublicTransport::new().map_err(|e| Fail(exit::INTERNAL, e.0))?),
        ),
    };
    let client = builder(&setup, wallet, None, Some(journal), None)
        .fetch(fetch.clone())
        .transport(Boxed(transport))
        .max_body(request::MAX_REQUEST_BODY)
        .build()
        .map_err(|e| Fail(exit::INTERNAL, e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| Fail(exit::USAGE, format!("--listen {listen}: {e}")))?;
    let bound = listener.local_addr().map_err(|e| Fail(exit::INTERNAL, e.to_string()))?;
    if setup.policy.is_none() {
        eprintln!("terms gateway: no spend policy limits these payments (name one with `policy` in the configuration)");
    }
    let local_host = setup.local.as_ref().map(|(h, _)| h.clone());
    let guarded = if token.is_some() { "the Terms-Gateway-Token header required" } else { "no token" };
    eprintln!("terms gateway: listening on http://{bound}/ ({guarded}); forward with http://{bound}/https://HOST/PATH");
    let gateway = Arc::new(Gateway { client, fetch, token, local_host, setup });
    serve(listener, gateway).await
}

/// The operator token: `--token`, else the variable the configuration's `gateway_token_env` names.
fn token(args: &GatewayArgs, setup: &Setup) -> Result<Option<String>, Fail> {
    let token = match (&args.token, &setup.config.gateway_token_env) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(var)) => Some(std::env::var(var).map_err(|_| {
            Fail(exit::USAGE, format!("gateway_token_env names {var}, which is not set (or not UTF-8)"))
        })?),
        (None, None) => None,
    };
    if let Some(t) = &token
        && (t.len() < 16 || !t.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(Fail(exit::USAGE, "the gateway token must be at least 16 visible ASCII characters".into()));
    }
    Ok(token)
}

async fn serve(listener: tokio::net::TcpListener, gateway: Arc<Gateway>) -> Result<u8, Fail> {
    loop {
        let (socket, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("terms gateway: accept: {e}");
                continue;
            }
        };
        if !is_local(peer.ip()) {
            // Never reached through a loopback listener; kept so that no other listener can widen who pays.
            eprintln!("terms gateway: refused a connection from {peer}: not this machine");
            continue;
        }
        let gateway = gateway.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let gateway = gateway.clone();
                async move { Ok::<_, std::convert::Infallible>(request::handle(&gateway, peer, req).await) }
            });
            let _ = http1::Builder::new()
                .keep_alive(true)
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}

/// Whether a peer is this machine: a loopback address, IPv4-mapped ones included.
fn is_local(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// The transport behind a box (the builder takes one by value).
#[derive(Debug)]
struct Boxed(Box<dyn terms::client::Transport>);

impl terms::client::Transport for Boxed {
    fn send<'a>(
        &'a self,
        request: &'a terms::client::Outgoing,
    ) -> terms::BoxFuture<'a, Result<terms::client::Incoming, terms::client::TransportError>> {
        self.0.send(request)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::is_local;

    #[test]
    fn only_loopback_peers_are_local() {
        for local in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            assert!(is_local(local.parse().unwrap()), "{local}");
        }
        for remote in ["10.0.0.1", "192.168.1.2", "8.8.8.8", "::ffff:10.0.0.1", "fe80::1", "0.0.0.0"] {
            assert!(!is_local(remote.parse().unwrap()), "{remote}");
        }
    }
}
