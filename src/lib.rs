// The README's examples call the x402 decoder and the http fetch: it is the crate's page where they are built (the
// defaults, and docs.rs's every feature), and a line pointing to it elsewhere.
#![cfg_attr(all(feature = "x402", feature = "http"), doc = include_str!("../README.md"))]
#![cfg_attr(
    not(all(feature = "x402", feature = "http")),
    doc = "A buyer-side gate for the Legal Context Protocol: never sign a payment that does not carry the SHA-256 of \
           the terms bytes received. The crate's page is its README, built with the `x402` and `http` features."
)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

pub mod a2a;
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
mod account;
#[cfg(feature = "x402")]
mod agreement;
#[cfg(feature = "alloy-signer")]
#[cfg_attr(docsrs, doc(cfg(feature = "alloy-signer")))]
pub mod alloy;
#[cfg(feature = "card")]
#[cfg_attr(docsrs, doc(cfg(feature = "card")))]
pub mod card;
#[cfg(feature = "checkout")]
mod checkout;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
mod codec;
#[cfg(feature = "host")]
#[cfg_attr(docsrs, doc(cfg(feature = "host")))]
pub mod config;
#[cfg(feature = "contract")]
#[cfg_attr(docsrs, doc(cfg(feature = "contract")))]
pub mod contract;
mod decimal;
mod decline;
pub mod discovery;
mod env;
mod fetch;
mod gate;
mod hash;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
#[cfg(any(feature = "card", feature = "checkout"))]
#[cfg_attr(
    not(all(feature = "card", feature = "checkout")),
    allow(
        dead_code,
        reason = "the card and checkout pairings call the reader; a build with one family uses part of it"
    )
)]
mod jose;
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
pub mod json;
mod legal_context;
pub mod link;
#[cfg(feature = "local-signer")]
mod local;
#[cfg(all(feature = "local-signer", feature = "solana"))]
mod local_ed25519;
#[cfg(all(feature = "local-signer", feature = "stellar"))]
mod local_stellar;
#[cfg(all(feature = "local-signer", feature = "xrpl"))]
mod local_xrpl;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
#[cfg(feature = "mpp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpp")))]
pub mod mpp;
pub mod pairing;
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
mod payment;
pub mod rail;
mod refusal;
mod registry;
#[cfg_attr(
    not(any(feature = "mpp", feature = "contract")),
    allow(dead_code, reason = "the reader of MPP's and the contract's times")
)]
mod rfc3339;
pub mod safety;
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
mod select;
mod signer;
mod transact;
#[cfg(feature = "x402")]
#[cfg_attr(docsrs, doc(cfg(feature = "x402")))]
#[cfg_attr(
    not(all(feature = "x402", feature = "evm")),
    allow(dead_code, reason = "helpers of the pairings; a build with fewer families uses fewer of them")
)]
pub mod x402;

// The reference pages under docs/ hold code moved out of the README: built and run as doctests, as the README's are.
#[cfg(all(doctest, feature = "x402", feature = "http"))]
#[doc = include_str!("../docs/api.md")]
#[doc = include_str!("../docs/policies.md")]
#[doc = include_str!("../docs/fleets.md")]
#[doc = include_str!("../docs/contract.md")]
#[doc = include_str!("../docs/sellers.md")]
struct DocsPages;

#[cfg(feature = "x402")]
#[cfg_attr(docsrs, doc(cfg(feature = "x402")))]
pub use agreement::{agree, retry_seconds};
pub use decline::{DeclineCode, Declined, Moved};
pub use env::{Clock, CountingIds, FixedClock, Ids, RandomIds, SystemClock};
pub use fetch::{Body, Fetch, FetchError, Request, Response};
pub use gate::{Agreement, AgreementReceipt, ToApprove};
pub use gate::{
    AgreementPayment, Checked, Confirmed, Document, Finish, Finished, Next, Options, Within, check, check_landed,
    confirm, finish, open_channel, record_charge, within,
};
pub use hash::{AtrHash, MAX_ATR_BYTES, NotAHash, atr_hash, hash_equals};
#[cfg(feature = "local-signer")]
#[cfg_attr(docsrs, doc(cfg(feature = "local-signer")))]
pub use local::{EvmKey, LocalSigner};
#[cfg(all(feature = "local-signer", feature = "solana"))]
pub use local_ed25519::{SolanaKey, SolanaSigner};
#[cfg(all(feature = "local-signer", feature = "stellar"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "local-signer", feature = "stellar"))))]
pub use local_stellar::{StellarKey, StellarSigner};
#[cfg(all(feature = "local-signer", feature = "xrpl"))]
pub use local_xrpl::{XrplKey, XrplSigner};
pub use pairing::{ChannelHold, Chosen, InputSpec, Pairing, Quote, Refund};
pub use payment::Payment;
pub use refusal::{Reason, Refusal};
pub use registry::{Entry, Protocol, REGISTRY, built_ids, entry, pairing, pairing_for, x402_pairings};
/// The 256-bit unsigned integer of amounts in atomic units ([`Quote`], budgets, caps).
pub use ruint::aliases::U256;
pub use signer::{
    Answer, BoxFuture, Fields, OneAccount, Signer, SignerError, SigningRequest, TypedData, TypedField, Wallet,
    network_of,
};
pub use tokio_util::sync::CancellationToken;
pub use transact::{ApproveSpend, PendingApproval, Resent, TransactOutcome, Transacted, transact};
#[cfg(feature = "x402")]
#[cfg_attr(docsrs, doc(cfg(feature = "x402")))]
pub use x402::{HeaderError, decode_payment_required};
