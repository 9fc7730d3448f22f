//! The wire transaction: compact-u16 lengths, the signature slots, and the legacy or v0 message after them.

#[cfg(any(feature = "x402", feature = "mpp"))]
use serde_json::Value;

use super::key::Key;
use crate::refusal::{Reason, Refusal};

/// The largest wire transaction the network takes, in bytes.
pub const MAX_WIRE: usize = 1232;

const fn malformed() -> Refusal {
    Refusal::new("svm", Reason::TxMalformed)
}

/// Appends `value` as Solana's compact-u16 (seven bits a byte, low first).
pub fn push_compact(out: &mut Vec<u8>, value: u16) {
    let mut value = value;
    loop {
        let low = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn byte(&mut self) -> Option<u8> {
        let value = *self.data.get(self.at)?;
        self.at += 1;
        Some(value)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.data.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn key(&mut self) -> Option<Key> {
        let bytes: [u8; 32] = self.take(32)?.try_into().ok()?;
        Some(Key(bytes))
    }

    /// A compact-u16 in its shortest form only: a trailing zero byte or a value past 0xFFFF is no length.
    fn compact(&mut self) -> Option<usize> {
        let mut value = 0usize;
        for i in 0..3 {
            let c = self.byte()?;
            value |= usize::from(c & 0x7f) << (7 * i);
            if c & 0x80 == 0 {
                if (i > 0 && c == 0) || value > 0xffff {
                    return None;
                }
                return Some(value);
            }
        }
        None
    }
}

/// One instruction as a message holds it: indexes into the message's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledInstruction {
    /// The program's index.
    pub program: u8,
    /// The accounts' indexes, in order.
    pub accounts: Vec<u8>,
    /// The instruction's data.
    pub data: Vec<u8>,
}

/// One address table lookup of a v0 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The table's address.
    pub table: Key,
    /// The indexes it loads writable.
    pub writable: Vec<u8>,
    /// The indexes it loads read-only.
    pub readonly: Vec<u8>,
}

/// A decoded wire transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// The signature slots, in signer order (zeros where a signer has not signed).
    pub signatures: Vec<[u8; 64]>,
    /// Exactly the bytes every signer signs.
    pub message: Vec<u8>,
    /// Whether the message is v0 (else legacy).
    pub versioned: bool,
    /// How many leading keys sign.
    pub required_signatures: u8,
    /// How many of the signers are read-only.
    pub readonly_signed: u8,
    /// How many of the non-signers are read-only.
    pub readonly_unsigned: u8,
    /// The static account keys, in order.
    pub keys: Vec<Key>,
    /// The recent blockhash (or durable nonce).
    pub blockhash: Key,
    /// The instructions, in order.
    pub instructions: Vec<CompiledInstruction>,
    /// The address table lookups; none for a legacy message.
    pub lookups: Vec<Lookup>,
}

impl Transaction {
    /// The key an instruction's program index names among the static keys, if any.
    pub fn program_of(&self, ix: &CompiledInstruction) -> Option<&Key> {
        self.keys.get(usize::from(ix.program))
    }

    /// The signers' keys, in slot order.
    pub fn signers(&self) -> &[Key] {
        self.keys.get(..usize::from(self.required_signatures)).unwrap_or(&[])
    }
}

/// A legacy or v0 wire transaction of at most [`MAX_WIRE`] bytes, decoded. Bytes that are not exactly one
/// well-formed transaction are `svm/tx-malformed` (trailing bytes too), as is a v0 lookup that loads no account,
/// which the runtime's sanitize refuses; a longer wire is `svm/tx-too-large`.
pub fn decode(wire: &[u8]) -> Result<Transaction, Refusal> {
    if wire.is_empty() {
        return Err(malformed());
    }
    if wire.len() > MAX_WIRE {
        return Err(Refusal::new("svm", Reason::TxTooLarge));
    }
    read(wire).ok_or_else(malformed)?
}

fn read(wire: &[u8]) -> Option<Result<Transaction, Refusal>> {
    let mut c = Cursor { data: wire, at: 0 };
    let count = c.compact()?;
    let mut signatures = Vec::with_capacity(count.min(MAX_WIRE / 64));
    for _ in 0..count {
        signatures.push(<[u8; 64]>::try_from(c.take(64)?).ok()?);
    }
    let start = c.at;
    let first = c.byte()?;
    let versioned = first & 0x80 != 0;
    if versioned && first & 0x7f != 0 {
        return Some(Err(malformed()));
    }
    let required = if versioned { c.byte()? } else { first };
    let readonly_signed = c.byte()?;
    let readonly_unsigned = c.byte()?;
    let n_keys = c.compact()?;
    let mut keys = Vec::with_capacity(n_keys.min(MAX_WIRE / 32));
    for _ in 0..n_keys {
        keys.push(c.key()?);
    }
    let required_n = usize::from(required);
    if required == 0 || required_n > n_keys || count != required_n {
        return Some(Err(malformed()));
    }
    if readonly_signed >= required || usize::from(readonly_unsigned) > n_keys - required_n {
        return Some(Err(malformed()));
    }
    let blockhash = c.key()?;
    let n_ix = c.compact()?;
    let mut instructions = Vec::new();
    for _ in 0..n_ix {
        let program = c.byte()?;
        let n = c.compact()?;
        let accounts = c.take(n)?.to_vec();
        let n = c.compact()?;
        let data = c.take(n)?.to_vec();
        instructions.push(CompiledInstruction { program, accounts, data });
    }
    let mut lookups = Vec::new();
    if versioned {
        for _ in 0..c.compact()? {
            let table = c.key()?;
            let n = c.compact()?;
            let writable = c.take(n)?.to_vec();
            let n = c.compact()?;
            let readonly = c.take(n)?.to_vec();
            if writable.is_empty() && readonly.is_empty() {
                return Some(Err(malformed()));
            }
            lookups.push(Lookup { table, writable, readonly });
        }
    }
    if c.at != wire.len() {
        return Some(Err(malformed()));
    }
    Some(Ok(Transaction {
        signatures,
        message: wire.get(start..)?.to_vec(),
        versioned,
        required_signatures: required,
        readonly_signed,
        readonly_unsigned,
        keys,
        blockhash,
        instructions,
        lookups,
    }))
}

/// The wire for a message and one signer's 64-byte signature: one slot per required signer, the signature in the
/// signer's slot and zeros in every other, then the message. A message that does not decode is `svm/tx-malformed`;
/// a signer the message does not name as one is `svm/input-malformed`.
pub fn signed_wire(message: &[u8], signer: &Key, signature: &[u8; 64]) -> Result<Vec<u8>, Refusal> {
    let first = *message.first().ok_or_else(malformed)?;
    let required = if first & 0x80 != 0 { *message.get(1).ok_or_else(malformed)? } else { first };
    let mut wire = Vec::with_capacity(3 + 64 * usize::from(required) + message.len());
    push_compact(&mut wire, u16::from(required));
    let head = wire.len();
    wire.resize(head + 64 * usize::from(required), 0);
    wire.extend_from_slice(message);
    let decoded = decode(&wire)?;
    let slot = decoded.signers().iter().position(|k| k == signer).ok_or_else(super::input_malformed)?;
    let at = head + 64 * slot;
    wire.get_mut(at..at + 64).ok_or_else(malformed)?.copy_from_slice(signature);
    Ok(wire)
}

/// The wire a payment's `transaction` member holds: canonical padded standard base64 of at most [`MAX_WIRE`] bytes
/// (`svm/tx-too-large` past it, measured first on the text's UTF-16 length), else `svm/tx-malformed`.
#[cfg(any(feature = "x402", feature = "mpp"))]
pub(crate) fn wire_of(text: Option<&Value>) -> Result<Vec<u8>, Refusal> {
    let text = text.and_then(Value::as_str).filter(|t| !t.is_empty()).ok_or(malformed())?;
    if crate::json::js_length(text) > MAX_WIRE.div_ceil(3) * 4 + 4 {
        return Err(Refusal::new("svm", Reason::TxTooLarge));
    }
    let wire = crate::codec::b64_decode(text).ok_or(malformed())?;
    if wire.len() > MAX_WIRE {
        return Err(Refusal::new("svm", Reason::TxTooLarge));
    }
    Ok(wire)
}

/// `svm/nonce-account-not-static` when the first instruction is the System program's `AdvanceNonceAccount` and its
/// nonce account is an address table entry (past the static keys): the message alone cannot show which nonce
/// account it uses.
#[cfg(any(feature = "x402", feature = "mpp"))]
pub(crate) fn static_nonce(tx: &Transaction) -> Result<(), Refusal> {
    let Some(first) = tx.instructions.first() else { return Ok(()) };
    let advance =
        tx.program_of(first) == Some(&super::program::SYSTEM) && first.data.get(..4) == Some(&[4, 0, 0, 0][..]);
    let beyond = first.accounts.first().is_some_and(|i| usize::from(*i) >= tx.keys.len());
    if advance && beyond { Err(Refusal::new("svm", Reason::NonceAccountNotStatic)) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{Cursor, push_compact};

    #[test]
    fn compact_u16_round_trips_and_only_its_shortest_form_reads() {
        for value in [0u16, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0xffff] {
            let mut out = Vec::new();
            push_compact(&mut out, value);
            let mut c = Cursor { data: &out, at: 0 };
            assert_eq!(c.compact(), Some(usize::from(value)));
            assert_eq!(c.at, out.len());
        }
        for bad in [&[0x80u8, 0x00][..], &[0xff, 0xff, 0x04], &[0x80, 0x80, 0x80], &[0x80]] {
            assert_eq!(Cursor { data: bad, at: 0 }.compact(), None);
        }
    }
}
