//! What the Solana tests read back from a decoded message: its instructions with each account's role, as the header's
//! counts give it.
#![allow(dead_code, unreachable_pub, missing_docs, clippy::unwrap_used, clippy::indexing_slicing)]

use terms::rail::solana::{Instruction, Role, Transaction};

/// A decoded message's instructions, each account's role read from the header.
pub fn instructions_of(tx: &Transaction) -> Vec<Instruction> {
    let role_of = |i: usize| {
        let signer = i < usize::from(tx.required_signatures);
        let writable = if signer {
            i < usize::from(tx.required_signatures - tx.readonly_signed)
        } else {
            i < tx.keys.len() - usize::from(tx.readonly_unsigned)
        };
        match (signer, writable) {
            (false, false) => Role::Readonly,
            (false, true) => Role::Writable,
            (true, false) => Role::ReadonlySigner,
            (true, true) => Role::WritableSigner,
        }
    };
    tx.instructions
        .iter()
        .map(|ix| Instruction {
            program: *tx.program_of(ix).unwrap(),
            accounts: ix.accounts.iter().map(|&i| (tx.keys[usize::from(i)], role_of(usize::from(i)))).collect(),
            data: ix.data.clone(),
        })
        .collect()
}
