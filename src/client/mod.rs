//! The client that pays a 402 end to end (feature `client`).
//!
//! [`Client::send`] sends a request; on a 402 it reads the offer (x402 v2 `PAYMENT-REQUIRED`; with the `mpp`
//! feature MPP's `WWW-Authenticate: Payment`), picks the first option of the offer, in its own order, that a
//! built pairing pays from the wallet's account on the option's network, and runs [`transact`](crate::transact)
//! with the client's spend policy and journal: the policy is checked, the terms (ATR) are fetched once and compared
//! with the H the offer advertises, the payment is built carrying H and returned only when the pairing reads H
//! back, and the journal records every step. It then re-sends the same method, URL, headers and body, with the
//! purchase's `Idempotency-Key` and the payment (`PAYMENT-SIGNATURE`, or `Authorization: Payment`), reads the
//! settlement (`PAYMENT-RESPONSE` or `Payment-Receipt`), tells the journal, and returns the answer with the
//! settlement, the four states and the [`Recovery`](crate::safety::recovery::Recovery) ([`Outcome`]).
//!
//! Once a payment is sent, a timeout, a reset or a 5xx re-sends the identical payment, at most
//! [`MAX_RESENDS`] times, waiting the seller's `Retry-After` (delta-seconds, or an HTTP-date read against the gate
//! options' clock; else a doubling backoff), never a new one. A 402 answering a sent payment is a settlement failure, with the seller's `errorReason`, and is never a
//! reason to sign again. A redirect is never followed: a 3xx answering a paid request is an answer
//! (`operator-review`). Every wait is on `tokio::time`.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! # #[cfg(feature = "local-signer")] {
//! use terms::client::{Client, Outgoing};
//! let key = terms::EvmKey::from_hex("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")?;
//! let client = Client::builder(key).build()?;
//! let outcome = client.send(Outgoing::new("GET", "https://api.seller.example/report")).await?;
//! println!("{:?}", outcome.recovery());
//! # }
//! # Ok(()) }
//! ```

mod flow;
#[cfg(feature = "client-middleware")]
mod middleware;
mod offer;
mod probe;
mod public;
mod retry;
mod settle;
mod transport;
mod types;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "client-middleware")]
pub use middleware::{PayMiddleware, PaymentError};
pub use probe::{Plan, Verdict};
#[cfg(feature = "loopback")]
pub use public::LocalSellerTransport;
pub use public::PublicTransport;
pub use transport::{MAX_RESPONSE_BYTES, ReqwestTransport, Transport, TransportError};
pub use types::{
    ClientError, Incoming, Lost, Outcome, Outgoing, Refused, Reply, Sent, Settlement, SettlementResponse, States,
};

use crate::fetch::Fetch;
use crate::gate::{ApprovalQueue, Options, SpendJournal, SpendPolicy};
use crate::signer::{OneAccount, Signer, Wallet};

/// The most times a sent payment is re-sent after a timeout, a reset or a 5xx.
pub const MAX_RESENDS: u32 = 3;
/// The largest request body the client holds to re-send by default: 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The client's limits and waits.
#[derive(Debug, Clone, Copy)]
struct Config {
    max_body: usize,
    max_resends: u32,
    timeout: Option<Duration>,
    backoff: Duration,
    max_wait: Duration,
}

/// The client: a wallet, the gate's options (spend policy, journal, clock, ids), the fetch of the terms and the
/// transport of the requests. Cheap to clone; share one across tasks.
#[derive(Clone)]
pub struct Client {
    wallet: Arc<dyn Wallet>,
    transport: Arc<dyn Transport>,
    fetch: Arc<dyn Fetch>,
    options: Options,
    config: Config,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("wallet", &self.wallet)
            .field("transport", &self.transport)
            .field("options", &self.options)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder for a client paying from `wallet` (a [`Wallet`], e.g. [`EvmKey`](crate::EvmKey)).
    pub fn builder(wallet: impl Wallet + 'static) -> ClientBuilder {
        ClientBuilder::new(Arc::new(wallet))
    }

    /// A builder for a client paying from one signer's account.
    pub fn for_signer(signer: impl Signer + 'static) -> ClientBuilder {
        ClientBuilder::new(Arc::new(OneAccount(Arc::new(signer))))
    }

    /// Sends the request and, on a 402, pays it (see the module's documentation). `Err` only when nothing could be
    /// sent or the unpaid request got no answer: nothing was paid.
    pub async fn send(&self, request: Outgoing) -> Result<Outcome, ClientError> {
        flow::send(self, request, &self.options).await
    }

    /// [`Client::send`] with other gate options for this call (an approved payment, the buyer's inputs), built
    /// from the client's own ([`Client::options`]).
    pub async fn send_with(&self, request: Outgoing, options: &Options) -> Result<Outcome, ClientError> {
        flow::send(self, request, options).await
    }

    /// Pays the 402 `answer` the request already got (a middleware that saw it first), without sending the unpaid
    /// request again.
    pub async fn pay(&self, request: Outgoing, answer: Incoming) -> Result<Outcome, ClientError> {
        flow::pay(self, self.transport.as_ref(), request, answer, &self.options).await
    }

    /// The gate options every call starts from.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    wallet: Arc<dyn Wallet>,
    transport: Option<Arc<dyn Transport>>,
    fetch: Option<Arc<dyn Fetch>>,
    options: Options,
    config: Config,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("wallet", &self.wallet)
            .field("transport", &self.transport)
            .field("options", &self.options)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    fn new(wallet: Arc<dyn Wallet>) -> Self {
        Self {
            wallet,
            transport: None,
            fetch: None,
            options: Options::new(),
            config: Config {
                max_body: MAX_BODY_BYTES,
                max_resends: MAX_RESENDS,
                timeout: Some(Duration::from_secs(30)),
                backoff: Duration::from_secs(1),
                max_wait: Duration::from_secs(60),
            },
        }
    }

    /// The gate options every call starts from (clock, ids, inputs, agreement signer); the policy and journal
    /// set here or with [`ClientBuilder::policy`] and [`ClientBuilder::journal`].
    #[must_use]
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The spend policy every payment is checked against.
    #[must_use]
    pub fn policy(mut self, policy: Arc<dyn SpendPolicy>) -> Self {
        self.options = self.options.policy(policy);
        self
    }

    /// The journal every payment is recorded in.
    #[must_use]
    pub fn journal(mut self, journal: Arc<dyn SpendJournal>) -> Self {
        self.options = self.options.journal(journal);
        self
    }

    /// The approval queue a payment above the policy's approval threshold waits in for a person (e.g. the journal,
    /// which keeps one): the same request sent again pays it once a person approved it.
    #[must_use]
    pub fn approvals(mut self, queue: Arc<dyn ApprovalQueue>) -> Self {
        self.options = self.options.approvals(queue);
        self
    }

    /// The fetch of the terms (default: [`HttpFetch`](crate::http::HttpFetch), https only, on the same hardened
    /// client as the default transport, so that a seller's terms and its paid requests share connections).
    #[must_use]
    pub fn fetch(mut self, fetch: impl Fetch + 'static) -> Self {
        self.fetch = Some(Arc::new(fetch));
        self
    }

    /// The transport of the requests (default: [`ReqwestTransport`]).
    #[must_use]
    pub fn transport(mut self, transport: impl Transport + 'static) -> Self {
        self.transport = Some(Arc::new(transport));
        self
    }

    /// The deadline of each send, the answer's body read (default 30 s); `None` for none.
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// The first wait before a re-send where the seller names none, doubled each time (default 1 s).
    #[must_use]
    pub fn backoff(mut self, backoff: Duration) -> Self {
        self.config.backoff = backoff;
        self
    }

    /// The longest wait before a re-send (default 60 s): a seller's `Retry-After` beyond it ends the re-sends, and
    /// the outcome is `resend-same-payment` for the caller to do later.
    #[must_use]
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.config.max_wait = wait;
        self
    }

    /// How many times a sent payment is re-sent, at most [`MAX_RESENDS`] (default).
    #[must_use]
    pub fn max_resends(mut self, resends: u32) -> Self {
        self.config.max_resends = resends.min(MAX_RESENDS);
        self
    }

    /// The largest request body the client holds to re-send (default [`MAX_BODY_BYTES`]); a larger one is refused
    /// before anything is sent.
    #[must_use]
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.config.max_body = bytes;
        self
    }

    /// The client.
    pub fn build(self) -> Result<Client, ClientError> {
        // Both defaults share one hardened reqwest client: the terms and the paid requests to one seller go on the
        // same connections (one fewer connection, and its task kept warm), and the fetch checks https itself.
        let shared = match (&self.transport, &self.fetch) {
            (None, None) => Some(
                crate::http::HttpFetch::builder()
                    .build()
                    .map_err(|e| ClientError::Request(crate::http::with_sources(&e)))?,
            ),
            _ => None,
        };
        let transport: Arc<dyn Transport> = match (self.transport, &shared) {
            (Some(t), _) => t,
            (None, Some(client)) => Arc::new(ReqwestTransport::from_client(client.clone())),
            (None, None) => Arc::new(ReqwestTransport::new().map_err(|e| ClientError::Request(e.0))?),
        };
        let fetch: Arc<dyn Fetch> = match (self.fetch, shared) {
            (Some(f), _) => f,
            (None, Some(client)) => Arc::new(crate::http::HttpFetch::https_only_over(client)),
            (None, None) => Arc::new(crate::http::HttpFetch::new().map_err(|e| ClientError::Request(e.to_string()))?),
        };
        Ok(Client { wallet: self.wallet, transport, fetch, options: self.options, config: self.config })
    }
}
