//! The settlement read of a session opening: the token transfer it made, identified by a digest of the named
//! fields, and for an opening the payer broadcast itself (`hash`) the transaction, which must be the payer's own
//! `open` call to the escrow with salt H giving the credential's channel id. Pure: the caller reads the receipt, the
//! finality marks and the transaction (`eth_getTransactionReceipt`, `eth_getBlockByNumber("finalized" | "safe")`,
//! `eth_getTransactionByHash`) from a node of the channel's chain, and hands them here typed.

use alloy_primitives::{Address, B256, U256, b256};
use serde_json::{Value, json};

use super::channel::{OPEN_CALL_BYTES, OPEN_SELECTOR, channel_id};
use crate::hash::{AtrHash, atr_hash};

/// ERC-20's `Transfer(address,address,uint256)` event topic.
pub const TRANSFER_TOPIC: B256 = b256!("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");

/// The fields of a token transfer a digest covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferIdentity {
    /// The sender, the recipient and the amount.
    FromToValue,
    /// The sender and the recipient.
    FromTo,
}

impl TransferIdentity {
    /// The fields as the reference names them, e.g. `from,to`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::FromToValue => "from,to,value",
            Self::FromTo => "from,to",
        }
    }
}

/// SHA-256 over the fields given, in the order sender, recipient, amount: 20, 20 and 32 bytes, the amount a
/// big-endian uint256. It identifies a transfer in a receipt without naming its fields in the clear.
pub fn transfer_digest(from: Option<Address>, to: Option<Address>, value: Option<U256>) -> AtrHash {
    let mut bytes = Vec::with_capacity(72);
    if let Some(from) = from {
        bytes.extend_from_slice(from.as_slice());
    }
    if let Some(to) = to {
        bytes.extend_from_slice(to.as_slice());
    }
    if let Some(value) = value {
        bytes.extend_from_slice(&value.to_be_bytes::<32>());
    }
    atr_hash(&bytes)
}

/// A token transfer a payment made: the token's `Transfer` log whose named fields hash to the digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferLog {
    /// The token that emits the log.
    pub token: Address,
    /// The fields the digest covers.
    pub identity: TransferIdentity,
    /// [`transfer_digest`] of those fields.
    pub digest: AtrHash,
}

impl TransferLog {
    /// The transfer of `token` that `identity` names, its digest taken over the fields it names (the others are not
    /// read).
    pub fn new(
        token: Address,
        identity: TransferIdentity,
        from: Option<Address>,
        to: Option<Address>,
        value: Option<U256>,
    ) -> Self {
        let digest = match identity {
            TransferIdentity::FromToValue => transfer_digest(from, to, value),
            TransferIdentity::FromTo => transfer_digest(from, to, None),
        };
        Self { token, identity, digest }
    }

    /// Whether the log is this transfer: emitted by the token under [`TRANSFER_TOPIC`] with exactly three topics,
    /// the sender and the recipient the low 20 bytes of topics 1 and 2, the amount data word 0, and the named fields
    /// hashing to the digest.
    pub fn matches(&self, log: &Log) -> bool {
        let [topic0, from, to] = log.topics.as_slice() else { return false };
        let Some(word) = log.data.get(..32) else { return false };
        if log.address != self.token || *topic0 != TRANSFER_TOPIC {
            return false;
        }
        let (from, to) = (Address::from_word(*from), Address::from_word(*to));
        let value = U256::from_be_slice(word);
        let digest = match self.identity {
            TransferIdentity::FromToValue => transfer_digest(Some(from), Some(to), Some(value)),
            TransferIdentity::FromTo => transfer_digest(Some(from), Some(to), None),
        };
        digest == self.digest
    }
}

/// One log of a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    /// The emitting contract.
    pub address: Address,
    /// The topics, in order.
    pub topics: Vec<B256>,
    /// The data.
    pub data: Vec<u8>,
}

/// A transaction's receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Whether it succeeded (status 1); a reverted transaction moved nothing.
    pub succeeded: bool,
    /// The block that holds it.
    pub block_number: u64,
    /// Its logs.
    pub logs: Vec<Log>,
}

/// A transaction as `eth_getTransactionByHash` gives it: its sender, its recipient (`None` for a contract creation)
/// and its calldata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transaction {
    /// The sender: the account that signed it.
    pub from: Address,
    /// The recipient.
    pub to: Option<Address>,
    /// The calldata.
    pub input: Vec<u8>,
}

/// What a read of the chain gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read<T> {
    /// The value.
    Found(T),
    /// The node has none by that hash.
    NotFound,
    /// The read failed, or its answer cannot be read.
    Unreadable,
}

/// The chain's finality marks: the block numbers of the `finalized` and `safe` heads (`None` where the read failed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marks {
    /// The finalized head.
    pub finalized: Option<u64>,
    /// The safe head.
    pub safe: Option<u64>,
}

/// The highest finality mark a block has reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finality {
    /// At or below the finalized head.
    Finalized,
    /// At or below the safe head.
    Safe,
    /// Neither.
    Latest,
}

/// Why a read is not settled yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingWhy {
    /// The node has no such receipt or transaction (yet).
    NotFound,
    /// A read failed or its answer cannot be read.
    Unreadable,
}

/// Why a read will not settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedWhy {
    /// The transaction reverted.
    Reverted,
    /// The receipt holds no log of the transfer.
    TransferNotFound,
    /// The transaction is not the payer's own `open` call opening this channel.
    OpenCallNotFound,
}

/// A settlement read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Settled in a block, at the highest finality mark it reached.
    Settled {
        /// The finality reached.
        finality: Finality,
        /// The block that holds the transaction.
        block_number: u64,
    },
    /// Not settled yet.
    Pending(PendingWhy),
    /// Will not settle.
    Failed(FailedWhy),
}

impl Status {
    /// The status as the reference writes it: `{state: "settled", finality, blockNumber}` (the block a decimal
    /// string), `{state: "pending", why}` or `{state: "failed", why}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Settled { finality, block_number } => {
                let finality = match finality {
                    Finality::Finalized => "finalized",
                    Finality::Safe => "safe",
                    Finality::Latest => "latest",
                };
                json!({"state": "settled", "finality": finality, "blockNumber": block_number.to_string()})
            }
            Self::Pending(why) => {
                let why = match why {
                    PendingWhy::NotFound => "not-found",
                    PendingWhy::Unreadable => "unreadable",
                };
                json!({"state": "pending", "why": why})
            }
            Self::Failed(why) => {
                let why = match why {
                    FailedWhy::Reverted => "reverted",
                    FailedWhy::TransferNotFound => "transfer-not-found",
                    FailedWhy::OpenCallNotFound => "open-call-not-found",
                };
                json!({"state": "failed", "why": why})
            }
        }
    }
}

/// The receipt read against the transfer the payment made: no receipt is pending `not-found`, an unreadable read
/// pending `unreadable`, a revert failed `reverted`, a receipt with no log of the transfer failed
/// `transfer-not-found`; otherwise settled at the receipt's block, `finalized` where the finalized head is at or above
/// it, else `safe` where the safe head is, else `latest`.
pub fn receipt_status(transfer: &TransferLog, receipt: Read<&Receipt>, marks: Marks) -> Status {
    let receipt = match receipt {
        Read::Found(r) => r,
        Read::NotFound => return Status::Pending(PendingWhy::NotFound),
        Read::Unreadable => return Status::Pending(PendingWhy::Unreadable),
    };
    if !receipt.succeeded {
        return Status::Failed(FailedWhy::Reverted);
    }
    if !receipt.logs.iter().any(|l| transfer.matches(l)) {
        return Status::Failed(FailedWhy::TransferNotFound);
    }
    let at = receipt.block_number;
    let finality = if marks.finalized.is_some_and(|f| f >= at) {
        Finality::Finalized
    } else if marks.safe.is_some_and(|s| s >= at) {
        Finality::Safe
    } else {
        Finality::Latest
    };
    Status::Settled { finality, block_number: at }
}

/// The open call a `hash` opening's transaction must be (draft-evm-session-00 names no opening event, so the call
/// itself is read): to the escrow, `open(payee, token, deposit, salt, authorizedSigner)` with salt `h`, whose sender,
/// payee, token and authorized signer give `channel` with `h`, the escrow and the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenCall {
    /// The escrow.
    pub escrow: Address,
    /// The channel the credential names.
    pub channel: B256,
    /// The salt, H.
    pub h: AtrHash,
    /// The chain.
    pub chain_id: u64,
}

/// An ABI address word: 12 zero bytes, then the address.
fn address_word(word: &[u8]) -> Option<Address> {
    let (pad, address) = word.split_at_checked(12)?;
    (word.len() == 32 && pad.iter().all(|b| *b == 0)).then(|| Address::from_slice(address))
}

impl OpenCall {
    /// Whether the transaction is this open call: sent to the escrow with exactly [`OPEN_CALL_BYTES`] of calldata
    /// under [`OPEN_SELECTOR`], its salt word `h`, its payee, token and authorized signer words addresses, and the
    /// channel id over the transaction's sender (the payer is the account that signed the call, not the credential's
    /// `source`), those three, `h`, the escrow and the chain equal to `channel`. The deposit is not read.
    pub fn is_made_by(&self, tx: &Transaction) -> bool {
        let input = tx.input.as_slice();
        if tx.to != Some(self.escrow) || input.len() != OPEN_CALL_BYTES || input.get(..4) != Some(&OPEN_SELECTOR[..]) {
            return false;
        }
        let word = |i: usize| input.get(4 + 32 * i..4 + 32 * (i + 1)).unwrap_or_default();
        let salt = B256::from(*self.h.as_bytes());
        let (Some(payee), Some(token), Some(signer)) =
            (address_word(word(0)), address_word(word(1)), address_word(word(4)))
        else {
            return false;
        };
        word(3) == salt.as_slice()
            && channel_id(tx.from, payee, token, salt, signer, self.escrow, self.chain_id) == self.channel
    }
}

/// A `hash` opening's settlement read: [`receipt_status`] on the payer-to-escrow transfer, then, once settled, the
/// transaction: none by that hash is pending `not-found`, an unreadable read pending `unreadable`, and any
/// transaction that is not [`OpenCall::is_made_by`] (a plain token transfer to the escrow, another channel's
/// opening, another sender's, a call to the token, a cut calldata) failed `open-call-not-found`.
pub fn hash_opening_status(
    transfer: &TransferLog,
    opens: &OpenCall,
    receipt: Read<&Receipt>,
    marks: Marks,
    transaction: Read<&Transaction>,
) -> Status {
    let settled = receipt_status(transfer, receipt, marks);
    if !matches!(settled, Status::Settled { .. }) {
        return settled;
    }
    match transaction {
        Read::Found(tx) if opens.is_made_by(tx) => settled,
        Read::Found(_) => Status::Failed(FailedWhy::OpenCallNotFound),
        Read::NotFound => Status::Pending(PendingWhy::NotFound),
        Read::Unreadable => Status::Pending(PendingWhy::Unreadable),
    }
}
