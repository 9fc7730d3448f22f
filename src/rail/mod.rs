//! Chain codecs shared by every protocol: a rail imports only the rail-free core, and a protocol's pairings on a
//! chain import that chain's rail.

pub mod evm;
#[cfg(feature = "lightning")]
pub mod lightning;
#[cfg(feature = "solana")]
pub mod solana;
#[cfg(feature = "stellar")]
pub mod stellar;
#[cfg(feature = "tempo")]
pub mod tempo;
#[cfg(feature = "xrpl")]
pub mod xrpl;
