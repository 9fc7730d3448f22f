//! Tempo's session escrows (draft-tempo-session-00). The v1 escrow ("Tempo Stream Channel") is the EVM session
//! escrow's contract: its `open` call and its channel id are the EVM rail's. The v2 escrow, TIP-1034's TIP-20 channel
//! reserve ("TIP20 Channel Reserve"), takes an operator and a `uint96` deposit, and its channel id commits to a
//! descriptor: the payer, payee, operator, token, salt and authorized signer, and the expiring nonce hash of the
//! transaction that opened it ([`TempoTransaction::expiring_nonce_hash`](super::transaction::TempoTransaction)), so
//! the id names one opening transaction.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::SolValue;

/// The v1 escrow's EIP-712 domain name, over `Voucher(bytes32 channelId, uint128 cumulativeAmount)`.
pub const V1_VOUCHER_DOMAIN: &str = "Tempo Stream Channel";
/// The v2 escrow's EIP-712 domain name, over `Voucher(bytes32 channelId, uint96 cumulativeAmount)`.
pub const V2_VOUCHER_DOMAIN: &str = "TIP20 Channel Reserve";
/// The v2 escrow's `open(address payee, address operator, address token, uint96 deposit, bytes32 salt, address
/// authorizedSigner)` selector.
pub const OPEN_V2_SELECTOR: [u8; 4] = [0xed, 0xc5, 0x3b, 0x00];
/// The length of a v2 `open` call: the selector and six words.
pub const OPEN_V2_CALL_BYTES: usize = 4 + 6 * 32;
/// The word of a v2 `open` call that holds the salt (after the selector, from 0).
pub const OPEN_V2_SALT_WORD: usize = 4;
/// The largest v2 deposit and voucher amount, exclusive: `uint96`.
pub const V2_AMOUNT_LIMIT: u128 = 1 << 96;

/// The v2 escrow's `open` calldata: [`OPEN_V2_CALL_BYTES`] bytes, the salt its fifth word. `None` for a deposit that
/// is not below 2^96. The payer is not in it: the escrow takes the caller.
pub fn open_v2_call(
    payee: Address,
    operator: Address,
    token: Address,
    deposit: u128,
    salt: B256,
    authorized_signer: Address,
) -> Option<Vec<u8>> {
    if deposit >= V2_AMOUNT_LIMIT {
        return None;
    }
    let words = (payee, operator, token, U256::from(deposit), salt, authorized_signer).abi_encode();
    Some([&OPEN_V2_SELECTOR[..], &words].concat())
}

/// What a v2 channel id commits to, beside the escrow and the chain: the payload's `descriptor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    /// The account that opened the channel: the opening transaction's sender.
    pub payer: Address,
    /// The seller.
    pub payee: Address,
    /// The operator the challenge names (zero where it names none).
    pub operator: Address,
    /// The TIP-20 token.
    pub token: Address,
    /// The salt: H, for a channel opened under an ATR.
    pub salt: B256,
    /// The key that signs the vouchers; zero for the payer's own.
    pub authorized_signer: Address,
    /// The opening transaction's expiring nonce hash under the payer.
    pub expiring_nonce_hash: B256,
}

impl Descriptor {
    /// `keccak256(abi.encode(payer, payee, operator, token, salt, authorizedSigner, expiringNonceHash, escrow,
    /// chainId))`.
    pub fn channel_id(&self, escrow: Address, chain_id: u64) -> B256 {
        let words = (
            self.payer,
            self.payee,
            self.operator,
            self.token,
            self.salt,
            self.authorized_signer,
            self.expiring_nonce_hash,
            escrow,
            U256::from(chain_id),
        );
        keccak256(words.abi_encode())
    }
}
