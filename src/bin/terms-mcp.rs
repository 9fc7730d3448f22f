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

use std::process::ExitCode;
use std::sync::Arc;

use terms::http::PublicFetch;
use terms::mcp::{BuyerOptions, buyer_server};
use terms::safety::journal::JournalConfig;

/// The server's options, from `--config FILE` where one is given.
async fn configured(mut options: BuyerOptions) -> Result<BuyerOptions, String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg != "--config" {
            return Err(format!("unknown argument {arg:?} (the one argument is --config FILE)"));
        }
        let path = args.next().ok_or("--config needs a file")?;
        let config = terms::config::read(std::path::Path::new(&path)).map_err(|e| e.0)?;
        if let Some(policy) = config.load_policy().map_err(|e| format!("{path}: policy: {e}"))? {
            options = options.policy(Arc::new(policy));
        }
        if config.names_a_signer() {
            options = options.signer(config.signer().map_err(|e| format!("{path}: {e}"))?);
        }
        if let Some(target) = &config.journal {
            match terms::config::open_journal(target, JournalConfig::default()).await {
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

#[tokio::main]
async fn main() -> ExitCode {
    let fetch = match PublicFetch::new() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("terms-mcp: cannot build the fetch: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = match configured(BuyerOptions::new(Arc::new(fetch))).await {
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
