//! TIP-20, Tempo's token standard: `transfer(to, amount)` and `transferWithMemo(to, amount, memo)` calldata (ABI
//! words through alloy-sol-types), the `TransferWithMemo` event's topic, and a charge with split payments as the
//! calls of one transaction (draft-tempo-charge: the primary recipient receives the amount less the splits, calls
//! in array order, a split with a memo by `transferWithMemo`).

use alloy_primitives::{Address, B256, U256};
use alloy_sol_types::{SolCall, SolEvent, sol};

use super::transaction::TempoCall;

sol! {
    /// TIP-20's `transfer`.
    #[allow(missing_docs)]
    function transfer(address to, uint256 amount) external returns (bool);
    /// TIP-20's `transferWithMemo`.
    #[allow(missing_docs)]
    function transferWithMemo(address to, uint256 amount, bytes32 memo) external;
    /// TIP-20's `TransferWithMemo` event: the memo is its fourth topic.
    #[allow(missing_docs)]
    event TransferWithMemo(address indexed from, address indexed to, uint256 amount, bytes32 indexed memo);
}

/// The most splits a charge may carry (the reference's cap).
pub const MAX_SPLITS: usize = 10;

/// The 4-byte selector of `transferWithMemo(address,uint256,bytes32)`.
pub const TRANSFER_WITH_MEMO_SELECTOR: [u8; 4] = transferWithMemoCall::SELECTOR;

/// The topic of `TransferWithMemo(address,address,uint256,bytes32)`: keccak256 of its signature.
pub const TRANSFER_WITH_MEMO_TOPIC: B256 = TransferWithMemo::SIGNATURE_HASH;

/// The calldata of `transfer(to, amount)`: the selector `a9059cbb`, then the two ABI words.
pub fn transfer_calldata(to: Address, amount: U256) -> Vec<u8> {
    transferCall { to, amount }.abi_encode()
}

/// The calldata of `transferWithMemo(to, amount, memo)`: the selector `95777d59`, then the three ABI words.
pub fn transfer_with_memo_calldata(to: Address, amount: U256, memo: B256) -> Vec<u8> {
    transferWithMemoCall { to, amount, memo }.abi_encode()
}

/// The memo of `transferWithMemo` calldata, once its recipient and amount are `to` and `amount`; `None` for other
/// calldata (another selector, length, recipient or amount).
pub fn memo_of(calldata: &[u8], to: Address, amount: U256) -> Option<B256> {
    let call = transferWithMemoCall::abi_decode_validate(calldata).ok()?;
    (call.to == to && call.amount == amount && calldata.len() == 100).then_some(call.memo)
}

/// One split of a charge: its recipient, amount and optional memo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Who receives it.
    pub recipient: Address,
    /// How much, in the token's atomic units.
    pub amount: U256,
    /// The memo it carries, by `transferWithMemo`.
    pub memo: Option<B256>,
}

/// Why a split list is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// An empty list, or more than [`MAX_SPLITS`].
    Count,
    /// A split of zero.
    Zero,
    /// The splits sum to the amount or more (nothing left, or less than nothing, for the primary recipient).
    Sum,
}

/// What the primary recipient receives: the amount less the splits, refused when the list is empty or longer than
/// [`MAX_SPLITS`], a split is zero, or the splits sum to the amount or more (no overflow past 2^256).
pub fn primary_amount(amount: U256, splits: &[Split]) -> Result<U256, SplitError> {
    if splits.is_empty() || splits.len() > MAX_SPLITS {
        return Err(SplitError::Count);
    }
    let mut sum = U256::ZERO;
    for s in splits {
        if s.amount.is_zero() {
            return Err(SplitError::Zero);
        }
        sum = sum.checked_add(s.amount).ok_or(SplitError::Sum)?;
    }
    amount.checked_sub(sum).filter(|p| !p.is_zero()).ok_or(SplitError::Sum)
}

/// The calls of a charge of `amount` of `token` to `recipient` with the attribution `memo`: first
/// `transferWithMemo` of the primary amount to the recipient, then each split in array order (`transferWithMemo`
/// with its memo, `transfer` without one). No splits is the one call of the whole amount.
pub fn charge_calls(
    token: Address,
    recipient: Address,
    amount: U256,
    memo: B256,
    splits: &[Split],
) -> Result<Vec<TempoCall>, SplitError> {
    let primary = if splits.is_empty() { amount } else { primary_amount(amount, splits)? };
    let call = |input: Vec<u8>| TempoCall { to: Some(token), value: U256::ZERO, input: input.into() };
    let mut calls = Vec::with_capacity(1 + splits.len());
    calls.push(call(transfer_with_memo_calldata(recipient, primary, memo)));
    for s in splits {
        calls.push(call(match s.memo {
            Some(m) => transfer_with_memo_calldata(s.recipient, s.amount, m),
            None => transfer_calldata(s.recipient, s.amount),
        }));
    }
    Ok(calls)
}
