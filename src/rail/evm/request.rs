//! The payloads of the EVM signing requests that are not typed data: a contract call the signer signs as a whole
//! EIP-1559 transaction or broadcasts (`evm-call`), and the values a Circle Gateway client puts in a burn intent's
//! salt (`gateway-burn-intent`). Plain serde data, written as the reference writes them; building and reading the
//! transactions needs the `evm` feature ([`transaction`](super::transaction)).

use serde::{Deserialize, Serialize};

/// A contract call with no value: the destination and the calldata, e.g. an ERC-20 `transfer` of the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// The contract called, `0x` and 40 hex digits as the seller wrote it.
    pub to: String,
    /// The calldata, `0x` and lower-case hex.
    pub data: String,
}

/// What a Circle Gateway client is handed to sign a burn intent for a charge: the charge's values of the salt's
/// preimage. The client adds its own (source and destination networks, depositor, signer, destination recipient,
/// amount, fee), computes the salt ([`gateway_salt`](super::gateway::gateway_salt)), sets it as the TransferSpec's
/// `salt` and signs the burn intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayPreimage {
    /// The challenge id, as the seller wrote it.
    pub id: String,
    /// The challenge's realm.
    pub realm: String,
    /// keccak256 of the challenge's request bytes, `0x` and lower-case hex.
    #[serde(rename = "requestHash")]
    pub request_hash: String,
    /// The request's recipient.
    pub recipient: String,
}
