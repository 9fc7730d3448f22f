#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

pub mod account;
pub mod codec;
pub mod decimal;
mod decline;
pub mod env;
pub mod fetch;
mod gate;
mod hash;
#[cfg(feature = "http")]
pub mod http;
pub mod json;
pub mod link;
#[cfg(feature = "local-signer")]
pub mod local;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod pairing;
mod payment;
mod refusal;
pub mod signer;
pub mod x402;

pub use decline::{DeclineCode, Declined, Moved};
pub use env::{Clock, FixedClock, Ids, RandomIds, SystemClock};
pub use fetch::{Body, Fetch, FetchError, Request, Response};
pub use gate::{
    Agreement, AgreementPayment, AgreementReceipt, Checked, Confirmed, Finish, Finished, Next, Options, ToApprove,
    Transacted, Transaction, Within, agree, check, check_landed, confirm, finish, open_channel, record_charge,
    retry_seconds, transact, within,
};
pub use hash::{AtrHash, MAX_ATR_BYTES, NotAHash, atr_hash, hash_equals};
pub use pairing::{ChannelHold, Chosen, Document, Pairing, Refund, pairing};
pub use payment::Payment;
pub use refusal::{Reason, Refusal};
pub use signer::{Signature, Signer, SignerError, SigningRequest, TypedData};
pub use tokio_util::sync::CancellationToken;
