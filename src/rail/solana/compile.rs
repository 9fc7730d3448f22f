//! Compiling instructions into a legacy or v0 message with the account order of @solana/kit 8.4.0.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::key::Key;
use super::wire::push_compact;
use crate::refusal::Refusal;

/// An account's role in an instruction: bit 0 writable, bit 1 signer, as @solana/kit writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read-only, not a signer.
    Readonly = 0,
    /// Writable, not a signer.
    Writable = 1,
    /// A read-only signer.
    ReadonlySigner = 2,
    /// A writable signer.
    WritableSigner = 3,
}

const WRITABLE: u8 = 1;
const SIGNER: u8 = 2;

/// One instruction before compiling: a program, its accounts with their roles, its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The program called.
    pub program: Key,
    /// The accounts, in the order the program reads them.
    pub accounts: Vec<(Key, Role)>,
    /// The instruction's data.
    pub data: Vec<u8>,
}

/// The message version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// A legacy message (no version prefix, no lookup tables).
    Legacy,
    /// A v0 message with no address table lookups.
    V0,
}

/// The sort key of an alphanumeric ASCII string under `Intl.Collator("en", {caseFirst: "lower"})`, as @solana/kit
/// orders addresses: digits before letters and letters alphabetical ignoring case first, then lower case before
/// upper case from the left.
fn collate(a: &str, b: &str) -> Ordering {
    let primary = |c: u8| if c.is_ascii_digit() { c - b'0' } else { 10 + c.to_ascii_lowercase() - b'a' };
    let first = a.bytes().map(primary).cmp(b.bytes().map(primary));
    first.then_with(|| a.bytes().map(|c| c.is_ascii_uppercase()).cmp(b.bytes().map(|c| c.is_ascii_uppercase())))
}

/// The message bytes for `instructions` under `fee_payer` and `recent_blockhash`. The fee payer is the first
/// account; the others follow signers before non-signers, writable before read-only, and by base58 address in
/// collation order within each class; an account's roles across instructions are joined. A program that is the
/// fee payer or writable, and @solana/kit's limits (more than 64 accounts, 12 signers or 64 instructions, an
/// instruction naming more than 255 accounts, data past 65,535 bytes) are `svm/input-malformed`.
pub fn compile(
    version: Version,
    fee_payer: &Key,
    recent_blockhash: &Key,
    instructions: &[Instruction],
) -> Result<Vec<u8>, Refusal> {
    let bad = super::input_malformed;
    let mut roles: HashMap<Key, u8> = HashMap::from([(*fee_payer, WRITABLE | SIGNER)]);
    let mut invoked: Vec<Key> = Vec::new();
    for ix in instructions {
        if ix.program == *fee_payer || roles.get(&ix.program).is_some_and(|r| r & WRITABLE != 0) {
            return Err(bad());
        }
        roles.entry(ix.program).or_insert(0);
        invoked.push(ix.program);
        for (address, role) in &ix.accounts {
            if address == fee_payer {
                continue;
            }
            let merged = roles.get(address).copied().unwrap_or(0) | *role as u8;
            if merged & WRITABLE != 0 && invoked.contains(address) {
                return Err(bad());
            }
            roles.insert(*address, merged);
        }
    }
    let mut others: Vec<(Key, u8, String)> =
        roles.iter().filter(|(k, _)| *k != fee_payer).map(|(k, r)| (*k, *r, k.to_base58())).collect();
    others.sort_by(|a, b| {
        let class = |r: u8| (r & SIGNER == 0, r & WRITABLE == 0);
        class(a.1).cmp(&class(b.1)).then_with(|| collate(&a.2, &b.2))
    });
    let mut ordered: Vec<(Key, u8)> = vec![(*fee_payer, WRITABLE | SIGNER)];
    ordered.extend(others.into_iter().map(|(k, r, _)| (k, r)));
    let signers = ordered.iter().filter(|(_, r)| r & SIGNER != 0).count();
    if ordered.len() > 64
        || signers > 12
        || instructions.len() > 64
        || instructions.iter().any(|ix| ix.accounts.len() > 255 || ix.data.len() > 0xffff)
    {
        return Err(bad());
    }
    let readonly_signers = ordered.iter().filter(|(_, r)| *r == SIGNER).count();
    let readonly_unsigned = ordered.iter().filter(|(_, r)| *r == 0).count();
    let index: HashMap<Key, u8> = ordered.iter().zip(0u8..).map(|((k, _), i)| (*k, i)).collect();
    let at = |k: &Key| index.get(k).copied().ok_or_else(bad);
    let mut out = Vec::new();
    if version == Version::V0 {
        out.push(0x80);
    }
    // Each count is bounded above (64 accounts, 12 signers), so the casts cannot truncate.
    out.extend([signers as u8, readonly_signers as u8, readonly_unsigned as u8]);
    push_compact(&mut out, ordered.len() as u16);
    for (key, _) in &ordered {
        out.extend_from_slice(key.as_bytes());
    }
    out.extend_from_slice(recent_blockhash.as_bytes());
    push_compact(&mut out, instructions.len() as u16);
    for ix in instructions {
        out.push(at(&ix.program)?);
        push_compact(&mut out, ix.accounts.len() as u16);
        for (key, _) in &ix.accounts {
            out.push(at(key)?);
        }
        push_compact(&mut out, ix.data.len() as u16);
        out.extend_from_slice(&ix.data);
    }
    if version == Version::V0 {
        push_compact(&mut out, 0);
    }
    Ok(out)
}
