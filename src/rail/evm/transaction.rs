//! ERC-20 transfers as whole EIP-1559 transactions: the `transfer` calldata, the [`Call`] a signer is asked to sign
//! or broadcast, the transaction built from it with the signer's nonce and fees and its signing hash, and a signed
//! transaction read back (alloy's `TxEip1559` and EIP-2718 envelope, RLP through alloy-rlp) so that an answer for
//! another chain, nonce, token, recipient or amount is caught before it is carried; and the transaction hash a
//! signer that broadcast answers.

use alloy_consensus::transaction::RlpEcdsaEncodableTx;
use alloy_consensus::{SignableTransaction, Signed, TxEip1559};
use alloy_primitives::{Address, B256, Bytes, Signature, TxKind, U256};
use alloy_sol_types::{SolCall, sol};

use super::codec::is_address_text;
use super::request::Call;
use crate::codec::{hex_bytes, to_hex};
use crate::refusal::Reason;

/// The most bytes of a signed transaction an answer may hold (the reference's cap, 64 KiB).
pub const MAX_SIGNED_TRANSACTION_BYTES: usize = 65_536;

/// EIP-1559's transaction type: the first byte of its EIP-2718 envelope.
pub const EIP1559_TYPE: u8 = 0x02;

sol! {
    /// ERC-20's `transfer`.
    #[allow(missing_docs)]
    function transfer(address to, uint256 amount) external returns (bool);
}

/// The calldata of ERC-20 `transfer(to, amount)`: the selector `a9059cbb`, then the two ABI words.
pub fn transfer_calldata(to: Address, amount: U256) -> Vec<u8> {
    transferCall { to, amount }.abi_encode()
}

/// The call that moves `amount` of the ERC-20 `token` to `recipient`: to the token, the `transfer` calldata as `0x`
/// and lower-case hex. The token is kept as written; `None` when either is not `0x` and 40 hex digits.
pub fn erc20_transfer(token: &str, recipient: &str, amount: U256) -> Option<Call> {
    if !is_address_text(token) {
        return None;
    }
    let to = recipient.parse::<Address>().ok().filter(|_| is_address_text(recipient))?;
    Some(Call { to: token.to_owned(), data: to_hex(&transfer_calldata(to, amount)) })
}

/// What the signer picks for an EIP-1559 transaction: the account's nonce and the gas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fees {
    /// The account's transaction count.
    pub nonce: u64,
    /// The gas limit.
    pub gas_limit: u64,
    /// The most paid per gas, base fee and tip.
    pub max_fee_per_gas: u128,
    /// The most tip per gas.
    pub max_priority_fee_per_gas: u128,
}

/// The EIP-1559 transaction of a call on a chain with the signer's fees: no value, an empty access list. `None`
/// when the call's destination is not an address or its data not `0x` hex.
pub fn transaction(chain_id: u64, call: &Call, fees: &Fees) -> Option<TxEip1559> {
    let to = call.to.parse::<Address>().ok().filter(|_| is_address_text(&call.to))?;
    let input = Bytes::from(hex_bytes(&call.data)?);
    Some(TxEip1559 {
        chain_id,
        nonce: fees.nonce,
        gas_limit: fees.gas_limit,
        max_fee_per_gas: fees.max_fee_per_gas,
        max_priority_fee_per_gas: fees.max_priority_fee_per_gas,
        to: TxKind::Call(to),
        value: U256::ZERO,
        access_list: Default::default(),
        input,
    })
}

/// The hash the sender signs: `keccak256(0x02 ‖ rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gasLimit,
/// to, value, data, accessList]))`.
pub fn signing_hash(tx: &TxEip1559) -> B256 {
    tx.signature_hash()
}

/// The signed transaction's EIP-2718 bytes (what `eth_sendRawTransaction` takes), from a 65-byte `r ‖ s ‖ v`
/// signature (`v` 0, 1, 27 or 28); `None` for any other signature bytes.
pub fn encode_signed(tx: &TxEip1559, signature: &[u8]) -> Option<Vec<u8>> {
    let signature = Signature::from_raw(signature).ok()?;
    let mut out = Vec::with_capacity(tx.eip2718_encoded_length(&signature));
    tx.eip2718_encode(&signature, &mut out);
    Some(out)
}

/// A signed transaction that cannot be read as one EIP-1559 transaction: not `0x` hex, empty or over
/// [`MAX_SIGNED_TRANSACTION_BYTES`], of another type, not canonical RLP, or with bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// A signed EIP-1559 transaction read back from its EIP-2718 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedTransaction {
    signed: Signed<TxEip1559>,
}

impl SignedTransaction {
    /// Reads the EIP-2718 bytes of one signed EIP-1559 transaction, and nothing after it.
    pub fn decode(raw: &[u8]) -> Result<Self, Unreadable> {
        if raw.is_empty() || raw.len() > MAX_SIGNED_TRANSACTION_BYTES {
            return Err(Unreadable);
        }
        let mut rest = raw;
        let signed = Signed::<TxEip1559>::eip2718_decode(&mut rest).map_err(|_| Unreadable)?;
        if !rest.is_empty() {
            return Err(Unreadable);
        }
        Ok(Self { signed })
    }

    /// Reads a signer's answer: `0x` and the hex of the transaction's EIP-2718 bytes.
    pub fn decode_hex(answer: &str) -> Result<Self, Unreadable> {
        if answer.len() > 2 + 2 * MAX_SIGNED_TRANSACTION_BYTES {
            return Err(Unreadable);
        }
        Self::decode(&hex_bytes(answer).ok_or(Unreadable)?)
    }

    /// The transaction, without its signature.
    pub fn transaction(&self) -> &TxEip1559 {
        self.signed.tx()
    }

    /// The signature.
    pub fn signature(&self) -> &Signature {
        self.signed.signature()
    }

    /// The transaction hash, `keccak256` of the EIP-2718 bytes: what a block explorer and a receipt name.
    pub fn hash(&self) -> B256 {
        *self.signed.hash()
    }

    /// The hash the sender signed ([`signing_hash`]).
    pub fn signing_hash(&self) -> B256 {
        self.signed.signature_hash()
    }

    /// Whether this is the transaction asked for: on `chain_id`, calling exactly `call` (its destination, the same
    /// address in any case, and its calldata, byte for byte) with no value, and, where the buyer named one, with
    /// that nonce. The first difference, in that order, is the answer.
    pub fn check(&self, chain_id: u64, call: &Call, nonce: Option<u64>) -> Result<(), Mismatch> {
        let tx = self.transaction();
        if tx.chain_id != chain_id {
            return Err(Mismatch::ChainId);
        }
        if nonce.is_some_and(|n| n != tx.nonce) {
            return Err(Mismatch::Nonce);
        }
        let to = call.to.parse::<Address>().ok().filter(|_| is_address_text(&call.to));
        let data = hex_bytes(&call.data);
        let same_call = matches!((tx.to, to), (TxKind::Call(a), Some(b)) if a == b)
            && data.is_some_and(|d| d.as_slice() == tx.input.as_ref())
            && tx.value.is_zero();
        if !same_call {
            return Err(Mismatch::Call);
        }
        Ok(())
    }
}

/// How a signed transaction differs from the one asked for ([`SignedTransaction::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// It is for another chain: `chain-mismatch`.
    ChainId,
    /// It has another nonce than the buyer named: `nonce-mismatch`.
    Nonce,
    /// It calls another contract, with other calldata (another recipient or amount), or moves value:
    /// `call-mismatch`.
    Call,
}

impl Mismatch {
    /// The refusal reason, in the rail's namespace (`evm/chain-mismatch`, as the reference writes the first).
    pub const fn reason(self) -> Reason {
        match self {
            Self::ChainId => Reason::ChainMismatch,
            Self::Nonce => Reason::NonceMismatch,
            Self::Call => Reason::CallMismatch,
        }
    }
}

/// The transaction hash a signer that broadcast answers: `0x` and 64 hex digits in either case, else `None`, an
/// answer the gate cannot carry as the payment (while money may have moved).
pub fn transaction_hash(answer: &str) -> Option<B256> {
    let digits = answer.strip_prefix("0x")?;
    if digits.len() != 64 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    answer.parse().ok()
}
