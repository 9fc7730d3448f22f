//! The case's deterministic environment: the payment ids and the fetch answering each URL from the case's routes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use terms::BoxFuture;
use terms::{Body, Fetch, FetchError, Ids, Request, Response};

/// Payment ids `r<seq>x<n>`, 32 characters, n counting from 1 within one case: the peer runner patches the
/// reference's `_ref` with the same sequence.
pub(crate) struct SeqIds {
    pub(crate) seq: u64,
    pub(crate) n: AtomicU64,
}

impl Ids for SeqIds {
    fn next_id(&self) -> String {
        let n = self.n.fetch_add(1, Ordering::Relaxed) + 1;
        format!("r{:010}x{n:020}", self.seq)
    }
}

/// The routes of one case, and the `PAYMENT-SIGNATURE` values sent to them.
#[derive(Clone)]
pub(crate) struct Routes {
    pub(crate) routes: Arc<Map<String, Value>>,
    pub(crate) paid: Arc<Mutex<Vec<String>>>,
}

fn body_of(spec: &Value) -> Vec<u8> {
    if let Some(hex) = spec.get("hex").and_then(Value::as_str) {
        return hex::decode(hex).unwrap_or_default();
    }
    if let Some([byte, count]) = spec.get("fill").and_then(Value::as_array).map(Vec::as_slice) {
        let byte = byte.as_str().and_then(|b| hex::decode(b).ok()).unwrap_or_default();
        return byte.repeat(usize::try_from(count.as_u64().unwrap_or(0)).unwrap_or(0));
    }
    Vec::new()
}

impl Fetch for Routes {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let paid = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("payment-signature"));
        if let Some((_, value)) = paid
            && let Ok(mut sent) = self.paid.lock()
        {
            sent.push((*value).to_owned());
        }
        let reply = self.routes.get(request.url).and_then(|r| r.get(if paid.is_some() { "paid" } else { "unpaid" }));
        let answer = match reply {
            Some(reply) if reply.get("error") != Some(&Value::Bool(true)) => {
                let status = reply.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
                let headers = reply
                    .get("headers")
                    .and_then(Value::as_array)
                    .map(|hs| {
                        hs.iter()
                            .filter_map(|h| {
                                let pair = h.as_array()?;
                                Some((pair.first()?.as_str()?.to_owned(), pair.get(1)?.as_str()?.to_owned()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let body = body_of(reply.get("body").unwrap_or(&Value::Null));
                match status {
                    Some(status) => Ok(Response::new(status, headers, Body::from_bytes(body))),
                    None => Err(FetchError::new("no status")),
                }
            }
            _ => Err(FetchError::new("no route")),
        };
        Box::pin(async move { answer })
    }
}
