//! What the two channel examples share: the stand-in seller's terms served from memory at their link, and the line
//! each step prints. Each example writes its own chain's offer around these terms.

use serde_json::Value;
use terms::pairing::ChannelHold;
use terms::{AtrHash, Body, BoxFuture, Fetch, FetchError, Request, Response, atr_hash};

/// The stand-in seller's terms: one ATR for the whole channel.
pub(crate) struct Terms {
    /// The ATR's bytes, as the link serves them.
    pub(crate) atr: Vec<u8>,
}

impl Terms {
    /// The seller's terms for a channel billed per request.
    pub(crate) fn per_request() -> Self {
        Self { atr: br#"{"atrVersion":"1","seller":{"note":"Per-request quotes, billed in a channel."}}"#.to_vec() }
    }

    /// H, the SHA-256 of the ATR.
    pub(crate) fn h(&self) -> AtrHash {
        atr_hash(&self.atr)
    }

    /// The https link the ATR is served at.
    pub(crate) fn link(&self) -> String {
        format!("https://atr.seller.example/{}", self.h())
    }
}

impl Fetch for Terms {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != self.link() {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            Ok(Response::new(200, vec![], Body::from_bytes(self.atr.clone())))
        })
    }
}

/// The cumulative amount a voucher signs.
pub(crate) fn cumulative(payment: &Value) -> &str {
    payment.pointer("/payload/voucher/maxClaimableAmount").and_then(Value::as_str).unwrap_or("?")
}

/// One step: what was signed, and the hold after it.
pub(crate) fn show(step: &str, payment: &Value, hold: &ChannelHold) {
    let kind = payment.pointer("/payload/type").and_then(Value::as_str).unwrap_or("?");
    println!(
        "{step:<24} {kind:<8} signed cumulative {:>5}   hold: charged {:>5}, signedMax {:>5}",
        cumulative(payment),
        hold.charged,
        hold.signed_max
    );
}
