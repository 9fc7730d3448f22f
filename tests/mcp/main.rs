//! The MCP server end to end: the real `terms-mcp` binary over stdio, a helper process of this test binary serving
//! `buyer_server` with a local wallet (started with `TERMS_MCP_TEST_SERVER=1`; with `=mpp`, the payer's wallet and a
//! fetch to the test's loopback seller, for the MPP pairings), and in-process servers over an in-memory duplex, all
//! driven by rmcp's own client or by raw JSON-RPC lines. Plus the public-address-only fetch against a loopback
//! listener that counts connections.
#![allow(unreachable_pub, missing_docs)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, clippy::unit_arg)]

mod agreement;
mod approvals;
mod common;
mod fetch;
mod host;
mod limits;
#[cfg(feature = "mpp")]
mod mpp;
#[cfg(feature = "mpp")]
mod mpp_no_proof;
#[cfg(feature = "mpp")]
mod mpp_session;
mod pay;
mod real_channel;
mod schemas;
mod seals;
#[path = "../../examples/support/seller.rs"]
mod seller;
#[path = "../support/mod.rs"]
mod support;
mod tools;

use libtest_mimic::{Arguments, Trial};

/// Set in a child's environment: serve the test server over stdio instead of running the tests.
pub const HELPER_ENV: &str = "TERMS_MCP_TEST_SERVER";

fn main() {
    match std::env::var(HELPER_ENV).as_deref() {
        #[cfg(feature = "mpp")]
        Ok(mpp::MPP_HELPER) => return mpp::serve_helper(),
        Ok(_) => return common::serve_helper(),
        Err(_) => {}
    }
    let mut trials: Vec<Trial> = Vec::new();
    trials.extend(tools::trials());
    trials.extend(agreement::trials());
    trials.extend(approvals::trials());
    trials.extend(seals::trials());
    trials.extend(fetch::trials());
    trials.extend(host::trials());
    trials.extend(limits::trials());
    trials.extend(pay::trials());
    trials.extend(real_channel::trials());
    trials.extend(schemas::trials());
    #[cfg(feature = "mpp")]
    trials.extend(mpp::trials());
    #[cfg(feature = "mpp")]
    trials.extend(mpp_session::trials());
    #[cfg(feature = "mpp")]
    trials.extend(mpp_no_proof::trials());
    libtest_mimic::run(&Arguments::from_args(), trials).exit();
}
