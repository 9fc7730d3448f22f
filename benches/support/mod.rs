//! What the gate benches share: the quickstart ATR, its H, the payer's key, and a fetch that serves the ATR from
//! memory, so a bench times the gate and not a socket.

use terms::BoxFuture;
use terms::{Body, Fetch, FetchError, Request, Response};

/// The quickstart ATR, as hex (the same bytes `scripts/peer_bench.py` serves the reference).
pub(crate) const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
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
