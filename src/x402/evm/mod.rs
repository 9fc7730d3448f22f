//! The x402 pairings on EIP-155 chains. H rides in a field the payer signs: the EIP-3009 nonce, the Permit2 nonce,
//! a delegation salt, an escrow salt (to which the signed nonce commits) or a channel salt; at ERC-7710's unsigned
//! level it rides nowhere the payer signs, so the agreement payment is the proof. The EVM pieces they build on
//! (EIP-3009, Permit2, the escrow, delegations) are the rail's, [`crate::rail::evm`]; [`family`] holds what the x402
//! pairings beside EIP-3009 share.

pub mod auth_capture_eip3009;
pub mod auth_capture_permit2;
pub mod batch_channel;
mod batch_config;
pub mod batch_settlement;
pub mod eip3009;
pub mod erc7710;
pub mod erc7710_salt;
pub mod exact_permit2;
pub mod family;
pub mod upto_permit2;
