//! `terms-mcp`: the gate's MCP tools over stdio, with no signer and a fetch that connects only to public addresses.
//! Register it with an MCP client as a stdio server; it answers on stdout and writes nothing else there.
//!
//! `terms-mcp --config FILE` reads a TOML configuration file; its `journal = "…"` (a SQLite path or
//! `sqlite:///path`, or `postgres://…`) is the journal every payment of the server's gate is recorded in; a relative
//! path is relative to the file's folder, so the `terms` CLI's own config file opens the same journal. A journal
//! that cannot be opened stops the server before it serves, with the reason on stderr.

use std::process::ExitCode;
use std::sync::Arc;

use terms::http::PublicFetch;
use terms::mcp::{BuyerOptions, buyer_server};
use terms::safety::journal::{JournalConfig, JournalTarget};

/// The gate options of `--config FILE`, where one is given.
async fn configured() -> Result<terms::Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = terms::Options::new();
    while let Some(arg) = args.next() {
        if arg != "--config" {
            return Err(format!("unknown argument {arg:?} (the one argument is --config FILE)"));
        }
        let path = args.next().ok_or("--config needs a file")?;
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let target = JournalTarget::from_config_toml(&text).map_err(|e| format!("{path}: {e}"))?;
        // A relative SQLite path is the config file's folder's, as the CLI reads the same file.
        let folder = std::path::Path::new(&path).parent().unwrap_or_else(|| std::path::Path::new("."));
        if let Some(target) = target.map(|t| t.relative_to(folder)) {
            let journal = target.open(JournalConfig::default()).await.map_err(|e| format!("{path}: {e}"))?;
            options = options.journal(journal);
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let gate = match configured().await {
        Ok(options) => options,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            return ExitCode::FAILURE;
        }
    };
    let fetch = match PublicFetch::new() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("terms-mcp: cannot build the fetch: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = buyer_server(BuyerOptions::new(Arc::new(fetch)).gate_options(gate));
    match terms::mcp::serve_stdio(server).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
