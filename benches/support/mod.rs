//! What the gate benches share: the quickstart ATR, its H, the x402 offer that advertises it, the payer's key, and a
//! fetch that serves the ATR from memory, so a bench times the gate and not a socket.

use serde_json::{Value, json};
use terms::BoxFuture;
use terms::{Body, Fetch, FetchError, Request, Response};

/// The quickstart ATR, as hex (the same bytes `scripts/peer_bench.py` serves the reference).
pub(crate) const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
/// The SHA-256 of [`ATR`], as the offer advertises it.
pub(crate) const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
/// Anvil's first key: the payer on both sides.
pub(crate) const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// The clock both sides are pinned to.
pub(crate) const NOW: u64 = 1_790_000_000;

/// Serves the ATR from memory.
pub(crate) struct Memory(pub(crate) bytes::Bytes);

impl Memory {
    /// The quickstart ATR.
    pub(crate) fn atr() -> Self {
        Self(hex::decode(ATR).unwrap().into())
    }
}

impl Fetch for Memory {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let body = self.0.clone();
        Box::pin(async move { Ok(Response::new(200, vec![], Body::from_bytes(body))) })
    }
}

/// The quickstart's x402 v2 offer: one EIP-3009 option on Base Sepolia, its legal context advertising [`H`].
#[allow(dead_code, reason = "the MPP bench builds its own challenge")]
pub(crate) fn offer() -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact", "network": "eip155:84532", "amount": "10000",
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60, "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": H, "legalContextUrl": format!("https://atr.seller.example/{H}")
        }}}
    })
}
