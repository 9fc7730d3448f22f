//! `terms-mcp`: the gate's MCP tools over stdio, with a fetch that connects only to public addresses.
//! Register it with an MCP client as a stdio server; it answers on stdout and writes nothing else there.
//!
//! `terms-mcp --config FILE` reads the `terms` CLI's configuration file ([`terms::config`]), the same keys alike:
//! - `journal = "…"` (a SQLite path or `sqlite:///path`, or `postgres://…`; a relative path is the file's folder's):
//!   every payment a tool signs is recorded there, and `atr_history` and `atr_record` read it. A path with no file
//!   yet is a new journal; an existing file of 0 bytes is no journal ([`terms::config::open_journal`]). A journal
//!   that cannot be opened does not stop the server: it serves, and every tool that signs declines `journal-failed`
//!   (`journal/unavailable`, the reason as the cause) and signs nothing; the reason is also written on stderr.
//! - `policy = "…"`: the spend policy checked before the signer is asked; `atr_budget` shows its budgets. A policy
//!   file that cannot be read stops the server (a host that named a policy never spends without it).
//! - `key_env`, `key_file`, or `signer_command` with `signer_address` and `signer_timeout`: the signer, on the one
//!   network `network = "eip155:…"` names. With it the server offers `atr_transact`, `atr_agree`,
//!   `atr_channel_within` and `atr_pay` (whose URL is held to the same public-address rule as the fetch). A `key_env` whose variable is not set is no signer.
//!
//! `--local-seller HOST=ADDRESS` (e.g. `seller.test=127.0.0.1:8402`), for trying a seller on this machine: the terms
//! links and `atr_pay` URLs `https://HOST/…` go to `http://ADDRESS/…`, which must be a loopback address; every other
//! link and URL keeps the public-address rule. It is read from the command line only, never from the file.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use terms::client::LocalSellerTransport;
use terms::http::{LocalSellerFetch, LoopbackFetch, PublicFetch};
use terms::mcp::{BuyerOptions, buyer_server};
use terms::safety::journal::JournalConfig;
use terms::{Fetch, FetchError};

/// The command line: `--config FILE` and `--local-seller HOST=ADDRESS`, each at most once.
#[derive(Default)]
struct Flags {
    config: Option<String>,
    local: Option<(String, SocketAddr)>,
}

fn flags() -> Result<Flags, String> {
    let mut flags = Flags::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => flags.config = Some(args.next().ok_or("--config needs a file")?),
            "--local-seller" => {
                let spec = args.next().ok_or("--local-seller needs HOST=ADDRESS")?;
                flags.local = Some(LoopbackFetch::route_spec(&spec).map_err(|e| format!("--local-seller {e}"))?);
            }
            _ => {
                return Err(format!(
                    "unknown argument {arg:?} (the arguments are --config FILE, --local-seller HOST=ADDRESS)"
                ));
            }
        }
    }
    Ok(flags)
}

/// The server's options, from `--config FILE` where one is given.
async fn configured(mut options: BuyerOptions, flags: &Flags) -> Result<BuyerOptions, String> {
    if let Some((host, addr)) = &flags.local {
        let transport = LocalSellerTransport::new(host.clone(), *addr).map_err(|e| e.to_string())?;
        options = options.pay_transport(Arc::new(transport));
    }
    if let Some(path) = &flags.config {
        let config = terms::config::read(std::path::Path::new(path)).map_err(|e| e.0)?;
        if let Some(policy) = config.load_policy().map_err(|e| format!("{path}: policy: {e}"))? {
            options = options.policy(Arc::new(policy));
        }
        if config.names_a_signer() {
            options = options.signer(config.signer().map_err(|e| format!("{path}: {e}"))?);
        }
        if let Some(target) = &config.journal {
            // A purchase whose nonce the payer already used (a seller's static ATR) is refused before it is signed.
            let journal_config = JournalConfig { one_nonce_per_payer: true, ..JournalConfig::default() };
            match terms::config::open_journal(target, journal_config).await {
                Ok(journal) => options = options.journal(journal),
                Err(e) => {
                    let why = format!("{path}: the journal cannot be opened: {e}");
                    eprintln!("terms-mcp: {why}; the tools that sign decline until it can");
                    options = options.journal_unavailable(why);
                }
            }
        }
    }
    Ok(options)
}

/// The terms' fetch: public addresses only, or with `--local-seller` that host's links from loopback.
fn fetch(flags: &Flags) -> Result<Arc<dyn Fetch>, FetchError> {
    match &flags.local {
        None => Ok(Arc::new(PublicFetch::new()?)),
        Some((host, addr)) => Ok(Arc::new(LocalSellerFetch::new(host.clone(), *addr)?)),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let flags = match flags() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            return ExitCode::from(2);
        }
    };
    let fetch = match fetch(&flags) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("terms-mcp: cannot build the fetch: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = match configured(BuyerOptions::new(fetch), &flags).await {
        Ok(options) => options,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    match terms::mcp::serve_stdio(buyer_server(options)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
