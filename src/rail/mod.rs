//! The payment rails, one module per chain family.

pub mod evm;
