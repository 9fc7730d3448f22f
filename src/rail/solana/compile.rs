//! Compiling instructions into a legacy or v0 message with the account order of @solana/kit 8.4.0.

use std::cmp::Ordering;

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
fn collate(a: &[u8], b: &[u8]) -> Ordering {
    let primary = |c: &u8| if c.is_ascii_digit() { c - b'0' } else { 10 + c.to_ascii_lowercase() - b'a' };
    let first = a.iter().map(primary).cmp(b.iter().map(primary));
    first.then_with(|| a.iter().map(u8::is_ascii_uppercase).cmp(b.iter().map(u8::is_ascii_uppercase)))
}

/// A key's base58 text on the stack: the sort reads each account's text many times.
struct Base58 {
    text: [u8; 44],
    len: usize,
}

impl Base58 {
    fn of(key: &Key) -> Self {
        let mut text = [0u8; 44];
        let len = key.write_base58(&mut text);
        Self { text, len }
    }

    fn text(&self) -> &[u8] {
        self.text.get(..self.len).unwrap_or_default()
    }
}

/// The role an account has been given so far, if it has one.
fn role_of(roles: &[(Key, u8)], key: &Key) -> Option<u8> {
    roles.iter().find(|(k, _)| k == key).map(|(_, r)| *r)
}

/// Sets an account's role (which the caller has joined with any role before), adding the account where new.
fn merge(roles: &mut Vec<(Key, u8)>, key: Key, role: u8) {
    match roles.iter_mut().find(|(k, _)| *k == key) {
        Some((_, r)) => *r = role,
        None => roles.push((key, role)),
    }
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
    // A message names at most 64 accounts, so a list searched in order is cheaper than a hashed map (and keeps the
    // build free of a hasher's per-call seeding).
    let mut roles: Vec<(Key, u8)> = vec![(*fee_payer, WRITABLE | SIGNER)];
    let mut invoked: Vec<Key> = Vec::new();
    for ix in instructions {
        if ix.program == *fee_payer || role_of(&roles, &ix.program).is_some_and(|r| r & WRITABLE != 0) {
            return Err(bad());
        }
        if role_of(&roles, &ix.program).is_none() {
            roles.push((ix.program, 0));
        }
        invoked.push(ix.program);
        for (address, role) in &ix.accounts {
            if address == fee_payer {
                continue;
            }
            let merged = role_of(&roles, address).unwrap_or(0) | *role as u8;
            if merged & WRITABLE != 0 && invoked.contains(address) {
                return Err(bad());
            }
            merge(&mut roles, *address, merged);
        }
    }
    // The fee payer stays first; the others sort by class, then by their base58 text, written once each.
    let mut others: Vec<(Key, u8, Base58)> = roles.iter().skip(1).map(|(k, r)| (*k, *r, Base58::of(k))).collect();
    others.sort_by(|a, b| {
        let class = |r: u8| (r & SIGNER == 0, r & WRITABLE == 0);
        class(a.1).cmp(&class(b.1)).then_with(|| collate(a.2.text(), b.2.text()))
    });
    roles.truncate(1);
    roles.extend(others.into_iter().map(|(k, r, _)| (k, r)));
    let ordered = roles;
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
    // At most 64 accounts (checked above), so an index fits a u8.
    let at = |k: &Key| ordered.iter().position(|(o, _)| o == k).and_then(|i| u8::try_from(i).ok()).ok_or_else(bad);
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
