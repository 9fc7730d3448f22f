//! The client as a [`reqwest-middleware`](reqwest_middleware) layer (feature `client-middleware`), for a caller who
//! already has a middleware stack.
//!
//! [`PayMiddleware`] passes each request down the rest of the stack. A 402 answer is paid as [`Client::send`]
//! pays it (the offer read, the policy checked, the terms fetched once and compared with H, the payment built
//! carrying H and read back, the journal told), and the paid request and its bounded re-sends of the same bytes go
//! down the rest of the stack too, each with a copy of the request's extensions. What comes back up is the paid
//! request's answer, or the 402 itself when nothing was paid (the gate declined, the policy refused, an approval is
//! needed), and in both the call's [`Outcome`] is in the response's extensions:
//! `response.extensions().get::<Outcome>()`. A payment sent and never answered is the error
//! [`PaymentError::Lost`]: the caller re-sends the same payment later (the journal holds it), never a new one.
//!
//! A request whose body is a stream is passed down untouched, and a 402 to it is returned as it came: a paid
//! re-send must be the same bytes, and a stream cannot be held. The layer sits below any retry layer of the
//! caller's that could re-send a request on its own (a retry above it would ask the client again, and the journal
//! answers with the same payment).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # #[cfg(feature = "local-signer")] {
//! use terms::client::{Client, Outcome, PayMiddleware};
//! let key = terms::EvmKey::from_hex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")?;
//! let pay = PayMiddleware::new(Client::builder(key).build()?);
//! let http = reqwest_middleware::ClientBuilder::new(reqwest::Client::new()).with(pay).build();
//! let response = http.get("https://api.seller.example/report").send().await?;
//! let outcome = response.extensions().get::<Outcome>();
//! println!("{} {:?}", response.status(), outcome.and_then(Outcome::paid).map(|p| &p.h));
//! # }
//! # Ok(()) }
//! ```

use std::fmt;

use http::Extensions;
use reqwest_middleware::{Error, Middleware, Next};

use super::transport::{MAX_RESPONSE_BYTES, Transport, TransportError, read};
use super::types::{ClientError, Incoming, Lost, Outcome, Outgoing};
use super::{Client, flow};
use crate::http::with_sources;
use crate::signer::BoxFuture;

/// The [`Client`] as a `reqwest-middleware` layer (see the module's documentation).
#[derive(Debug, Clone)]
pub struct PayMiddleware {
    client: Client,
    max_response: usize,
}

impl PayMiddleware {
    /// The layer paying with `client` (its wallet, policy, journal, fetch of the terms, limits and waits; its own
    /// transport is not used: requests go down the stack).
    pub fn new(client: Client) -> Self {
        Self { client, max_response: MAX_RESPONSE_BYTES }
    }

    /// With another cap on the body read of a 402 and of a paid request's answer, in bytes (default
    /// [`MAX_RESPONSE_BYTES`]).
    #[must_use]
    pub fn max_response(mut self, bytes: usize) -> Self {
        self.max_response = bytes;
        self
    }
}

/// Why the layer answers with an error rather than a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PaymentError {
    /// The payment was sent and no answer came, after the client's re-sends of the same bytes: the charge is
    /// unknown, and the recovery is to re-send the same payment (the journal holds it).
    #[error("the payment was sent and no answer came: {}", .0.cause)]
    Lost(Box<Lost>),
    /// The client could not pay the 402 at all (a request it cannot hold or send); nothing was paid.
    #[error(transparent)]
    Client(ClientError),
    /// The 402's body could not be read whole; nothing was paid.
    #[error("the 402 could not be read: {0}")]
    Unread(TransportError),
}

#[async_trait::async_trait]
impl Middleware for PayMiddleware {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let Some(request) = outgoing(&req) else { return next.run(req, extensions).await };
        let first = next.clone().run(req, extensions).await?;
        if first.status().as_u16() != 402 {
            return Ok(first);
        }
        let url = first.url().clone();
        let answer = read(first, self.max_response).await.map_err(|e| Error::middleware(PaymentError::Unread(e)))?;
        let via = Via { next, extensions: extensions.clone(), max_response: self.max_response };
        let options = self.client.options();
        let outcome = flow::pay(&self.client, &via, request, answer.clone(), options)
            .await
            .map_err(|e| Error::middleware(PaymentError::Client(e)))?;
        match outcome {
            Outcome::Lost(lost) => Err(Error::middleware(PaymentError::Lost(Box::new(lost)))),
            Outcome::Answered(ref reply) => {
                let (status, headers, body) = (reply.status, reply.headers.clone(), reply.body.clone());
                response(status, &headers, body, url, outcome)
            }
            _ => response(answer.status, &answer.headers, answer.body, url, outcome),
        }
    }
}

/// The request as the client holds it; `None` for a body that is a stream, or a header value that is not text.
fn outgoing(req: &reqwest::Request) -> Option<Outgoing> {
    let mut request = Outgoing::new(req.method().as_str(), req.url().as_str());
    for (name, value) in req.headers() {
        request = request.header(name.as_str(), value.to_str().ok()?);
    }
    match req.body() {
        None => Some(request),
        Some(body) => Some(request.body(bytes::Bytes::copy_from_slice(body.as_bytes()?))),
    }
}

/// A response carrying the call's outcome in its extensions.
fn response(
    status: u16,
    headers: &[(String, String)],
    body: bytes::Bytes,
    url: reqwest::Url,
    outcome: Outcome,
) -> reqwest_middleware::Result<reqwest::Response> {
    use reqwest::ResponseBuilderExt as _;
    let mut builder = http::Response::builder().status(status).url(url);
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let mut built = builder.body(body).map_err(Error::middleware)?;
    built.extensions_mut().insert(outcome);
    Ok(reqwest::Response::from(built))
}

/// The rest of the stack as the client's transport: each send goes down it with a copy of the request's extensions.
struct Via<'a> {
    next: Next<'a>,
    extensions: Extensions,
    max_response: usize,
}

impl fmt::Debug for Via<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Via").field("max_response", &self.max_response).finish_non_exhaustive()
    }
}

impl Transport for Via<'_> {
    fn send<'b>(&'b self, request: &'b Outgoing) -> BoxFuture<'b, Result<Incoming, TransportError>> {
        Box::pin(async move {
            let req = to_request(request)?;
            let mut extensions = self.extensions.clone();
            let answer =
                self.next.clone().run(req, &mut extensions).await.map_err(|e| TransportError(with_sources(&e)))?;
            read(answer, self.max_response).await
        })
    }
}

/// The client's request as reqwest's.
fn to_request(request: &Outgoing) -> Result<reqwest::Request, TransportError> {
    let bad = |what: &str, e: &dyn fmt::Display| TransportError(format!("the request's {what} does not parse: {e}"));
    let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|e| bad("method", &e))?;
    let url = reqwest::Url::parse(&request.url).map_err(|e| bad("URL", &e))?;
    let mut req = reqwest::Request::new(method, url);
    for (name, value) in &request.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad("header name", &e))?;
        let value = reqwest::header::HeaderValue::from_str(value).map_err(|e| bad("header value", &e))?;
        req.headers_mut().append(name, value);
    }
    if !request.body.is_empty() {
        *req.body_mut() = Some(request.body.clone().into());
    }
    Ok(req)
}
