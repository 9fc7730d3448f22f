//! The programs the Solana pairings call, and the instructions they build for them.

use super::compile::{Instruction, Role};
use super::key::Key;

const fn key(bytes: [u8; 32]) -> Key {
    Key(bytes)
}

/// Decodes a base58 program id at compile time (the ids below are constants, checked by the tests). Only the
/// constants below call it, so an index out of range would be a build error, never a panic at run time.
#[allow(clippy::indexing_slicing)]
pub(super) const fn b58(text: &str) -> [u8; 32] {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let text = text.as_bytes();
    // Big-endian base-256 accumulator, 32 bytes wide: every id below decodes to exactly 32 bytes.
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < text.len() {
        let mut digit = 0;
        while ALPHABET[digit] != text[i] {
            digit += 1;
        }
        let mut carry = digit as u32;
        let mut j = 32;
        while j > 0 {
            j -= 1;
            let v = out[j] as u32 * 58 + carry;
            out[j] = (v & 0xff) as u8;
            carry = v >> 8;
        }
        i += 1;
    }
    out
}

/// The System program.
pub const SYSTEM: Key = key([0; 32]);
/// The SPL Token program.
pub const TOKEN: Key = key(b58("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"));
/// The Token-2022 program.
pub const TOKEN_2022: Key = key(b58("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"));
/// The compute budget program.
pub const COMPUTE_BUDGET: Key = key(b58("ComputeBudget111111111111111111111111111111"));
/// The associated token account program.
pub const ATA_PROGRAM: Key = key(b58("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"));
/// The Memo program, v3 (the one the builders call).
pub const MEMO_V3: Key = key(b58("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"));
/// The other Memo program id the readers take (the reference calls it v4).
pub const MEMO_V4: Key = key(b58("Memo4c2pN8afCj432Lb7RMVKi9PbQnnW7ewFFaV3oAH"));

/// Whether `program` is Token or Token-2022.
pub fn is_token_program(program: &Key) -> bool {
    *program == TOKEN || *program == TOKEN_2022
}

/// Whether `program` is a Memo program (v3 or v4).
pub fn is_memo_program(program: &Key) -> bool {
    *program == MEMO_V3 || *program == MEMO_V4
}

/// `SetComputeUnitLimit(limit)`.
pub fn set_compute_unit_limit(limit: u32) -> Instruction {
    let mut data = vec![2];
    data.extend_from_slice(&limit.to_le_bytes());
    Instruction { program: COMPUTE_BUDGET, accounts: Vec::new(), data }
}

/// `SetComputeUnitPrice(micro_lamports)`.
pub fn set_compute_unit_price(price: u64) -> Instruction {
    let mut data = vec![3];
    data.extend_from_slice(&price.to_le_bytes());
    Instruction { program: COMPUTE_BUDGET, accounts: Vec::new(), data }
}

/// The System program's `Transfer` of `lamports` from `from` (a writable signer) to `to` (writable).
pub fn system_transfer(from: &Key, to: &Key, lamports: u64) -> Instruction {
    let mut data = 2u32.to_le_bytes().to_vec();
    data.extend_from_slice(&lamports.to_le_bytes());
    Instruction { program: SYSTEM, accounts: vec![(*from, Role::WritableSigner), (*to, Role::Writable)], data }
}

/// A v3 Memo instruction whose data is `memo`'s UTF-8 bytes, naming no account.
pub fn memo(memo: &str) -> Instruction {
    Instruction { program: MEMO_V3, accounts: Vec::new(), data: memo.as_bytes().to_vec() }
}

/// The token accounts and amount of a `TransferChecked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferChecked {
    /// Token or Token-2022.
    pub token_program: Key,
    /// The source token account.
    pub source: Key,
    /// The mint.
    pub mint: Key,
    /// The destination token account.
    pub destination: Key,
    /// The source account's owner, who signs.
    pub authority: Key,
    /// The amount in the mint's base units.
    pub amount: u64,
    /// The mint's decimals.
    pub decimals: u8,
}

impl TransferChecked {
    /// The instruction: data `12 ‖ amount (u64 LE) ‖ decimals`, accounts source (writable), mint, destination
    /// (writable), authority (signer).
    pub fn instruction(&self) -> Instruction {
        let mut data = vec![12];
        data.extend_from_slice(&self.amount.to_le_bytes());
        data.push(self.decimals);
        Instruction {
            program: self.token_program,
            accounts: vec![
                (self.source, Role::Writable),
                (self.mint, Role::Readonly),
                (self.destination, Role::Writable),
                (self.authority, Role::ReadonlySigner),
            ],
            data,
        }
    }

    /// The `TransferChecked` a compiled instruction's data and accounts spell, with the accounts resolved through
    /// `keys`; `None` if it is not one (wrong tag, length or account count, or an index past the keys).
    pub fn read(program: Key, accounts: &[u8], data: &[u8], keys: &[Key]) -> Option<Self> {
        let [12, amount @ .., decimals] = data else { return None };
        let amount = u64::from_le_bytes(<[u8; 8]>::try_from(amount).ok()?);
        let [source, mint, destination, authority] = accounts else { return None };
        let at = |i: &u8| keys.get(usize::from(*i)).copied();
        Some(Self {
            token_program: program,
            source: at(source)?,
            mint: at(mint)?,
            destination: at(destination)?,
            authority: at(authority)?,
            amount,
            decimals: *decimals,
        })
    }
}
