//! MPP's pairings on the EVM rail (`cfg(all(feature = "mpp", feature = "evm"))`): the session `mpp/session/evm`,
//! an escrow channel salted with H, opened with a deposit and a first voucher and paid within by later vouchers.

pub(crate) mod session;
mod session_channel;
