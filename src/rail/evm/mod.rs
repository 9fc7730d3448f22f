//! The EVM rail: what an EIP-155 chain signs and settles.

pub mod typed_data;
