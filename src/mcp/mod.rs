//! The gate as MCP tools, for an agent that pays through an MCP client: `atr_confirm`, `atr_finish`, `atr_check`,
//! `atr_channel_open` and `atr_channel_record_charge` always; `atr_agree` with an agreement signer or a signer (in a
//! build with the `x402` feature, which has the agreement exchange);
//! `atr_transact`, `atr_channel_within` and `atr_pay` (a paid fetch through [`crate::client`]) with a signer; with the host's journal, the read-only `atr_history` and
//! `atr_record` (and `atr_budget` beside a spend policy). Each tool call is one call into the gate; this module adds
//! the transport (rmcp), the JSON form of values, the input schemas, and the seals that make `chosen`, channel
//! openings and holds usable only as this process returned them.
//!
//! ```no_run
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::{Arc, OnceLock};
//! use terms::mcp::rmcp::ServiceExt as _;
//! use terms::http::PublicFetch;
//! use terms::mcp::{BuyerOptions, buyer_server};
//!
//! let server = buyer_server(BuyerOptions::new(Arc::new(PublicFetch::new()?)));
//! server.serve(terms::mcp::rmcp::transport::stdio()).await?.waiting().await?;
//! # Ok(()) }
//! ```

mod ledger;
mod pay;
mod schema;
mod seal;
mod stdio;
mod tools;

use std::fmt;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The rmcp crate the server is built on (its `ServiceExt` serves a [`BuyerServer`] over a transport).
pub use rmcp;

/// `atr_pay`'s default transport, public addresses only (it lives in [`crate::client`], which `terms gateway` shares).
pub use crate::client::PublicTransport;
pub use pay::MAX_PAY_BODY;
pub use schema::{BASE64_PATTERN, MAC_PATTERN};
pub use stdio::{MAX_DEPTH, MAX_LINE, serve_bounded, serve_stdio};

use crate::client::Transport;
use crate::fetch::Fetch;
use crate::gate::Options;
use crate::safety::journal::Journal;
use crate::safety::policy::Policy;
use crate::signer::Signer;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "integraledger-terms";

/// The server's version in `serverInfo`: this crate's.
pub(crate) const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every tool the server can offer, in the order it lists them (which ones it offers depends on the signers, the
/// journal and the policy).
pub const TOOL_NAMES: [&str; 12] = [
    "atr_confirm",
    "atr_finish",
    "atr_check",
    "atr_transact",
    "atr_agree",
    "atr_channel_open",
    "atr_channel_record_charge",
    "atr_channel_within",
    "atr_pay",
    "atr_budget",
    "atr_history",
    "atr_record",
];

/// What the server is built from: the fetch every tool that reaches the network uses, and the host's signers.
/// There is no way to give the server pairings of one's own: a pairing id in a tool call always names this build's
/// pairing of that id ([`crate::pairing()`]), so an agent that reads an id reads the protocol's rules for it.
#[derive(Clone)]
pub struct BuyerOptions {
    fetch: Arc<dyn Fetch>,
    signer: Option<Arc<dyn Signer>>,
    agreement_signer: Option<Arc<dyn Signer>>,
    gate: Options,
    store: Option<Arc<dyn Journal>>,
    policy: Option<Arc<Policy>>,
    journal_unavailable: Option<String>,
    /// `atr_pay`'s transport: the host's, or [`PublicTransport`] built on the first call.
    pay_transport: OnceLock<Arc<dyn Transport>>,
}

impl fmt::Debug for BuyerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuyerOptions")
            .field("signer", &self.signer.as_ref().map(|s| s.account().to_owned()))
            .field("agreement_signer", &self.agreement_signer.as_ref().map(|s| s.account().to_owned()))
            .field("gate", &self.gate)
            .field("journal", &self.store.is_some())
            .field("policy", &self.policy.is_some())
            .field("journal_unavailable", &self.journal_unavailable)
            .finish_non_exhaustive()
    }
}

impl BuyerOptions {
    /// No signer: the server offers the five tools that sign nothing.
    pub fn new(fetch: Arc<dyn Fetch>) -> Self {
        Self {
            fetch,
            signer: None,
            agreement_signer: None,
            gate: Options::new(),
            store: None,
            policy: None,
            journal_unavailable: None,
            pay_transport: OnceLock::new(),
        }
    }

    /// The host's wallet: adds `atr_transact`, `atr_agree` (with the `x402` feature) and `atr_channel_within`.
    #[must_use]
    pub fn signer(mut self, signer: Arc<dyn Signer>) -> Self {
        self.signer = Some(signer);
        self
    }

    /// The wallet that pays agreement payments, where it is not the signer: adds `atr_agree` (with the `x402`
    /// feature).
    #[must_use]
    pub fn agreement_signer(mut self, signer: Arc<dyn Signer>) -> Self {
        self.agreement_signer = Some(signer);
        self
    }

    /// The gate options every call starts from: its clock and payment ids. Each call sets its own inputs,
    /// approval, cancellation and agreement signer over them. Set the journal and the policy after these (with
    /// [`journal`](Self::journal) and [`policy`](Self::policy)), not inside them: the read-only tools need them too.
    #[must_use]
    pub fn gate_options(mut self, options: Options) -> Self {
        self.gate = options;
        if let Some(journal) = &self.store {
            self.gate = self.gate.journal(journal.clone()).approvals(journal.clone());
        }
        if let Some(policy) = &self.policy {
            self.gate = self.gate.policy(policy.clone());
        }
        self
    }

    /// The host's journal: every step of every payment a tool signs is recorded in it before and after the signer
    /// is asked, and `atr_history` and `atr_record` read it back. A payment `atr_pay` makes above the policy's
    /// approval threshold waits in its approval queue for a person (`pending-approval`); no tool decides it.
    #[must_use]
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.gate = self.gate.journal(journal.clone()).approvals(journal.clone());
        self.store = Some(journal);
        self
    }

    /// The host's spend policy: checked before the signer is asked, by every tool that signs; `atr_budget` shows
    /// its budgets (with a journal). No tool writes it.
    #[must_use]
    pub fn policy(mut self, policy: Arc<Policy>) -> Self {
        self.gate = self.gate.policy(policy.clone());
        self.policy = Some(policy);
        self
    }

    /// The transport `atr_pay` sends on, in place of [`PublicTransport`] (a host with its own network policy; tests
    /// against a seller on loopback). `atr_pay` still refuses a URL that is not https or names an address that is
    /// not public before it reaches the transport; a host name is vetted only by the transport.
    #[must_use]
    pub fn pay_transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.pay_transport = OnceLock::from(transport);
        self
    }

    /// The host named a journal that could not be opened (`why`): the server serves, and every tool that signs
    /// declines `journal-failed` (`journal/unavailable`, with `why` as the cause) and signs nothing.
    #[must_use]
    pub fn journal_unavailable(mut self, why: impl Into<String>) -> Self {
        self.journal_unavailable = Some(why.into());
        self
    }
}

/// The MCP server: an rmcp [`ServerHandler`] whose tools call the gate. Cheap to clone.
#[derive(Clone)]
pub struct BuyerServer {
    options: Arc<BuyerOptions>,
}

impl fmt::Debug for BuyerServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuyerServer").field("tools", &self.tool_names()).finish()
    }
}

/// The server with its tools registered. Serve it with rmcp, e.g. `server.serve(rmcp::transport::stdio())`.
pub fn buyer_server(options: BuyerOptions) -> BuyerServer {
    BuyerServer { options: Arc::new(options) }
}

impl BuyerServer {
    fn offers(&self, name: &str) -> bool {
        let o = &self.options;
        match name {
            "atr_transact" | "atr_channel_within" | "atr_pay" => o.signer.is_some(),
            "atr_agree" => cfg!(feature = "x402") && (o.signer.is_some() || o.agreement_signer.is_some()),
            "atr_history" | "atr_record" => o.store.is_some(),
            "atr_budget" => o.store.is_some() && o.policy.is_some(),
            other => TOOL_NAMES.contains(&other),
        }
    }

    /// The names of the tools this server offers, in listing order.
    pub(crate) fn tool_names(&self) -> Vec<&'static str> {
        TOOL_NAMES.iter().copied().filter(|n| self.offers(n)).collect()
    }

    /// The tools this server offers, as `tools/list` gives them.
    pub fn tools(&self) -> Vec<Tool> {
        self.tool_names().into_iter().filter_map(tools::definition).collect()
    }

    /// Calls a tool without a transport: what `tools/call` does. `None` for a tool this server does not offer.
    /// `cancel` ends an agreement exchange of `atr_transact` or `atr_agree`, as a client's
    /// `notifications/cancelled` does.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        cancel: CancellationToken,
    ) -> Option<CallToolResult> {
        self.call_from(name, arguments, cancel, None).await
    }

    /// [`BuyerServer::call`] from the agent `agent` (an MCP client's `clientInfo` name and version), which an
    /// approval it queues records.
    pub async fn call_from(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        cancel: CancellationToken,
        agent: Option<&str>,
    ) -> Option<CallToolResult> {
        if !self.offers(name) {
            return None;
        }
        let arguments = arguments.unwrap_or_default();
        let from;
        let options = match agent {
            None => &*self.options,
            Some(agent) => {
                let mut with = (*self.options).clone();
                with.gate = with.gate.agent(agent);
                from = with;
                &from
            }
        };
        Some(match tools::run(options, name, &arguments, cancel).await {
            Ok(v) => result(v, false),
            Err(tools::Fail::Result(v)) => result(v, true),
            Err(tools::Fail::Invalid(why)) => {
                result(json!({"invalid": {"argument": why.argument, "reason": why.reason}}), true)
            }
        })
    }
}

/// A tool result: the value as `structuredContent` and as the JSON text of the one content block; `isError` only
/// on a decline or a schema failure.
fn result(value: Value, is_error: bool) -> CallToolResult {
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut r = CallToolResult::default();
    r.content = vec![ContentBlock::text(text)];
    r.structured_content = Some(value);
    r.is_error = is_error.then_some(true);
    r
}

impl ServerHandler for BuyerServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, SERVER_VERSION))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let agent = context.peer.peer_info().map(|i| format!("{} {}", i.client_info.name, i.client_info.version));
        match self.call_from(&request.name, request.arguments, context.ct.clone(), agent.as_deref()).await {
            Some(r) => Ok(r.into()),
            None => Err(ErrorData::invalid_params(format!("tool not found: {}", request.name), None)),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.offers(name).then(|| tools::definition(name)).flatten()
    }
}
