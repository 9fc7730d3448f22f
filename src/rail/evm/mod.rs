//! EVM facts every protocol on an EIP-155 chain shares: addresses, chain ids, uint256 strings, EIP-712 typed data
//! and its parts, EIP-3009 authorizations, Permit2 transfers, the commerce-payments escrow, ERC-7710 delegations,
//! ERC-20 transfers as EIP-1559 transactions, Circle Gateway burn intents, the values the EVM charge methods derive
//! from a challenge's plain strings, and the EVM session escrow. A rail imports only the rail-free core, so x402 and
//! MPP pairings on EVM chains both build on it.

// The crate-internal builders are for the protocols on this rail: a build with the rail and none of them (`evm`
// without `x402`) has the public codecs and `TypedData::signing_hash`, and leaves the builders unused.
#![cfg_attr(not(feature = "x402"), allow(dead_code, unused_imports))]

#[cfg(feature = "evm")]
pub mod charge;
#[cfg(feature = "evm")]
pub mod delegation;
#[cfg(feature = "evm")]
pub mod eip3009;
#[cfg(feature = "evm")]
pub mod escrow;
#[cfg(feature = "evm")]
pub mod gateway;
#[cfg(feature = "evm")]
pub mod permit2;
pub mod request;
#[cfg(feature = "evm")]
pub mod session;
#[cfg(feature = "evm")]
pub mod transaction;
pub mod typed_data;

#[cfg(feature = "evm")]
mod codec;

#[cfg(feature = "evm")]
pub use codec::Eip712Parts;
#[cfg(feature = "evm")]
pub(crate) use codec::{EIP712_DOMAIN, address_in, object, types};
#[cfg(feature = "evm")]
pub(crate) use codec::{chain_id_of, is_address, is_address_text, uint256_of};
