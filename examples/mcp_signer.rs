//! The MCP tools with a host wallet: `buyer_server` served over stdio with a local key, so all nine tools are
//! offered. The seller is the quickstart's in-memory stand-in (the 138-byte ATR of the conformance vectors at its
//! link), so `atr_transact` over the quickstart's offer signs a real EIP-3009 payment without any network; the key
//! is Anvil's published development key #0, never a real one.
//!
//! An MCP client starts it as a stdio server: `cargo run --example mcp_signer`. Started with no client on its
//! input, it says so and ends.

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use terms::BoxFuture;
use terms::LocalSigner;
use terms::mcp::{BuyerOptions, buyer_server};
use terms::{Body, Fetch, FetchError, Request, Response};

/// The seller's ATR: 138 bytes the gate never parses.
const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
const LINK: &str = "https://atr.seller.example/0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
/// Anvil's published development key #0.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/// The stand-in seller: serves the ATR at its link, and nothing else.
struct Seller;

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != LINK {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            let atr = hex::decode(ATR).map_err(FetchError::new)?;
            Ok(Response::new(200, vec![("content-type".into(), "application/json".into())], Body::from_bytes(atr)))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let wallet = match LocalSigner::from_hex(ANVIL_KEY_0, 84_532) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("mcp_signer: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = buyer_server(BuyerOptions::new(Arc::new(Seller)).signer(Arc::new(wallet)));
    match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcp_signer: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("mcp_signer: no MCP client on standard input ({e}); run it from an MCP client.");
            ExitCode::SUCCESS
        }
    }
}
