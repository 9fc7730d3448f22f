//! `terms-mcp`: the gate's MCP tools over stdio, with no signer and a fetch that connects only to public addresses.
//! Register it with an MCP client as a stdio server; it answers on stdout and writes nothing else there.

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use terms::http::PublicFetch;
use terms::mcp::{BuyerOptions, buyer_server};

#[tokio::main]
async fn main() -> ExitCode {
    let fetch = match PublicFetch::new() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("terms-mcp: cannot build the fetch: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = buyer_server(BuyerOptions::new(Arc::new(fetch)));
    let running = match server.serve(rmcp::transport::stdio()).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("terms-mcp: the client left before the session began: {e}");
            return ExitCode::FAILURE;
        }
    };
    match running.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terms-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}
