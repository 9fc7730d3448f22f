//! The payment-channels program the Solana channel pairings open and pay through: the channel's program-derived
//! address, its `open`, `top_up` and `request_close` instructions with their accounts in the program's order, the
//! reading of a transaction's one channel instruction, and the 50 bytes a voucher signs.

use super::address::{associated_token_address, find_pda};
use super::compile::{Instruction, Role};
use super::key::Key;
use super::program::{ATA_PROGRAM, SYSTEM, b58};
use super::wire::Transaction;
use crate::refusal::{Reason, Refusal};

/// The payment-channels program.
pub const PAYMENT_CHANNELS: Key = Key(b58("CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX"));
/// The rent sysvar, which `open` names.
pub const RENT_SYSVAR: Key = Key(b58("SysvarRent111111111111111111111111111111111"));

/// The share of a channel's one recipient, in basis points: all of it.
const FULL_SHARE: u16 = 10_000;

/// The channel's program-derived address: seeds `"channel"`, payer, payee, mint, authorized signer, the salt and the
/// open slot (u64 little-endian), under [`PAYMENT_CHANNELS`].
pub fn channel_address(
    payer: &Key,
    payee: &Key,
    mint: &Key,
    signer: &Key,
    salt: u64,
    open_slot: u64,
) -> Result<Key, Refusal> {
    let (salt, slot) = (salt.to_le_bytes(), open_slot.to_le_bytes());
    let seeds: [&[u8]; 7] =
        [b"channel", payer.as_bytes(), payee.as_bytes(), mint.as_bytes(), signer.as_bytes(), &salt, &slot];
    Ok(find_pda(&seeds, &PAYMENT_CHANNELS)?.address)
}

/// The program's event authority: the address of the seed `"event_authority"`.
pub fn event_authority() -> Result<Key, Refusal> {
    Ok(find_pda(&[b"event_authority"], &PAYMENT_CHANNELS)?.address)
}

/// What an `open` writes beside the channel: the authorized signer, the salt, the deposit, the grace period, the
/// open slot and the one recipient, who takes the whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Open {
    /// The channel's address.
    pub channel: Key,
    /// The key whose vouchers the channel honours.
    pub signer: Key,
    /// The channel's salt.
    pub salt: u64,
    /// What the payer locks in the channel, in the mint's base units.
    pub deposit: u64,
    /// The seconds the payee has to settle after a close is requested.
    pub grace_period: u32,
    /// The slot the channel's address was derived with.
    pub open_slot: u64,
    /// The one recipient.
    pub recipient: Key,
}

impl Open {
    /// The instruction's 67 bytes of data: `01 ‖ salt ‖ deposit ‖ gracePeriod (u32) ‖ openSlot ‖ 1 (u32) ‖
    /// recipient ‖ 10000 (u16)`, little-endian.
    pub fn data(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(67);
        out.push(1);
        out.extend_from_slice(&self.salt.to_le_bytes());
        out.extend_from_slice(&self.deposit.to_le_bytes());
        out.extend_from_slice(&self.grace_period.to_le_bytes());
        out.extend_from_slice(&self.open_slot.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(self.recipient.as_bytes());
        out.extend_from_slice(&FULL_SHARE.to_le_bytes());
        out
    }
}

/// One payment-channels instruction a buyer builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelCall {
    /// Opens a channel and locks the deposit.
    Open(Open),
    /// Adds `amount` to the channel at `channel`.
    TopUp {
        /// The channel's address.
        channel: Key,
        /// What is added, in the mint's base units.
        amount: u64,
    },
    /// Asks the channel at `channel` to close.
    RequestClose {
        /// The channel's address.
        channel: Key,
    },
}

/// The parties of a channel instruction: the payer who signs, the fee payer (also the open's rent payer and payee),
/// the mint and its token program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parties {
    /// The payer, who signs.
    pub payer: Key,
    /// The fee payer.
    pub fee_payer: Key,
    /// The mint.
    pub mint: Key,
    /// Token or Token-2022.
    pub token_program: Key,
}

impl ChannelCall {
    /// The instruction, with its accounts in the program's order.
    pub fn instruction(&self, p: &Parties) -> Result<Instruction, Refusal> {
        let ata = |owner: &Key| associated_token_address(owner, &p.token_program, &p.mint);
        let (accounts, data) = match self {
            Self::Open(open) => {
                let accounts = vec![
                    (p.payer, Role::WritableSigner),
                    (p.fee_payer, Role::WritableSigner),
                    (p.fee_payer, Role::Readonly),
                    (p.mint, Role::Readonly),
                    (open.signer, Role::Readonly),
                    (open.channel, Role::Writable),
                    (ata(&p.payer)?, Role::Writable),
                    (ata(&open.channel)?, Role::Writable),
                    (p.token_program, Role::Readonly),
                    (SYSTEM, Role::Readonly),
                    (RENT_SYSVAR, Role::Readonly),
                    (ATA_PROGRAM, Role::Readonly),
                    (event_authority()?, Role::Readonly),
                    (PAYMENT_CHANNELS, Role::Readonly),
                ];
                (accounts, open.data())
            }
            Self::TopUp { channel, amount } => {
                let accounts = vec![
                    (p.payer, Role::WritableSigner),
                    (*channel, Role::Writable),
                    (ata(&p.payer)?, Role::Writable),
                    (ata(channel)?, Role::Writable),
                    (p.mint, Role::Readonly),
                    (p.token_program, Role::Readonly),
                ];
                let mut data = vec![3];
                data.extend_from_slice(&amount.to_le_bytes());
                (accounts, data)
            }
            Self::RequestClose { channel } => {
                (vec![(p.payer, Role::ReadonlySigner), (*channel, Role::Writable)], vec![5])
            }
        };
        Ok(Instruction { program: PAYMENT_CHANNELS, accounts, data })
    }
}

/// The kind of a channel instruction read back from a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `open` (discriminator 1, 14 accounts, the channel fifth from zero).
    Open,
    /// `top_up` (discriminator 3, 6 accounts, the channel at 1).
    TopUp,
    /// `request_close` (discriminator 5, 2 accounts, the channel at 1).
    RequestClose,
}

/// A transaction's one payment-channels instruction: its kind, the channel it names, and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelRead<'a> {
    /// The kind, by the discriminator.
    pub kind: CallKind,
    /// The channel account it names.
    pub channel: Key,
    /// The instruction's data.
    pub data: &'a [u8],
}

/// The transaction's one top-level payment-channels instruction: none is `svm/no-channel-instruction`; two or more,
/// an unknown discriminator, another account count or a channel index past the static keys `svm/channel-instruction`.
pub fn channel_instruction(tx: &Transaction) -> Result<ChannelRead<'_>, Refusal> {
    let bad = || Refusal::new("svm", Reason::ChannelInstruction);
    let mut found = tx.instructions.iter().filter(|ix| tx.program_of(ix) == Some(&PAYMENT_CHANNELS));
    let ix = found.next().ok_or(Refusal::new("svm", Reason::NoChannelInstruction))?;
    if found.next().is_some() {
        return Err(bad());
    }
    let (kind, count, at) = match ix.data.first() {
        Some(1) => (CallKind::Open, 14, 5),
        Some(3) => (CallKind::TopUp, 6, 1),
        Some(5) => (CallKind::RequestClose, 2, 1),
        _ => return Err(bad()),
    };
    if ix.accounts.len() != count {
        return Err(bad());
    }
    let index = ix.accounts.get(at).ok_or_else(bad)?;
    let channel = *tx.keys.get(usize::from(*index)).ok_or_else(bad)?;
    Ok(ChannelRead { kind, channel, data: &ix.data })
}

/// The 50 bytes a channel voucher signs: `56 01 ‖ channel ‖ cumulative (u64) ‖ expiresAt (i64)`, little-endian.
pub fn voucher_message(channel: &Key, cumulative: u64, expires_at: i64) -> [u8; 50] {
    let mut out = [0u8; 50];
    let parts: [&[u8]; 4] = [&[0x56, 0x01], channel.as_bytes(), &cumulative.to_le_bytes(), &expires_at.to_le_bytes()];
    let mut at = 0;
    for part in parts {
        for (slot, byte) in out.iter_mut().skip(at).zip(part) {
            *slot = *byte;
        }
        at += part.len();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{Key, voucher_message};

    #[test]
    fn the_voucher_message_is_its_parts_in_order() {
        let m = voucher_message(&Key([9; 32]), 0x0102, -1);
        assert_eq!(&m[..2], &[0x56, 0x01]);
        assert_eq!(&m[2..34], &[9; 32]);
        assert_eq!(&m[34..42], &0x0102u64.to_le_bytes());
        assert_eq!(&m[42..], &[0xff; 8]);
    }
}
