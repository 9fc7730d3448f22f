//! The Solana rail: base58 keys, the legacy and v0 wire message (compact-u16 lengths, account order as
//! @solana/kit 8.4.0 writes it), program-derived and associated token addresses, and the instructions the Solana
//! pairings use (Memo, Token and Token-2022 `TransferChecked`, the compute budget). Pure and I/O-free: nothing here
//! fetches, hashes an ATR or signs.

pub mod address;
pub mod channel;
pub mod compile;
pub mod key;
pub mod program;
pub mod wire;

pub use address::{Pda, associated_token_address, find_pda, is_on_curve};
pub use compile::{Instruction, Role, Version, compile};
pub use key::Key;
pub use wire::{CompiledInstruction, Lookup, MAX_WIRE, Transaction, decode, signed_wire};

use crate::refusal::{Reason, Refusal};

/// The `svm` refusal every malformed buyer input gives: `svm/input-malformed`.
pub(crate) const fn input_malformed() -> Refusal {
    Refusal::new("svm", Reason::InputMalformed)
}
