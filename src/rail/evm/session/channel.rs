//! The channel: its parameters, the id that commits to them, the nonce an EIP-3009 opening signs, and the two calls a
//! payer who opens the channel itself broadcasts (the token's `approve`, then the escrow's `open`).

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{SolCall, SolValue};
use serde_json::{Value, json};

use super::abi::{approveCall, openCall};
use crate::codec::to_hex;
use crate::hash::AtrHash;
use crate::rail::evm::is_address_text;

/// The escrow's `open(address payee, address token, uint128 deposit, bytes32 salt, address authorizedSigner)`
/// selector, `0xc79ea485`.
pub const OPEN_SELECTOR: [u8; 4] = openCall::SELECTOR;
/// The length of an `open` call: the selector and five words.
pub const OPEN_CALL_BYTES: usize = 4 + 5 * 32;
/// ERC-20's `approve(address,uint256)` selector, `0x095ea7b3`.
pub const APPROVE_SELECTOR: [u8; 4] = approveCall::SELECTOR;

const ZERO_TEXT: &str = "0x0000000000000000000000000000000000000000";

/// An EVM address as the seller or the buyer wrote it, and its 20 bytes. What a hash or a call takes is the bytes;
/// what the signer is shown is the spelling, echoed unchanged (the reference echoes it, and the differential compares
/// requests byte for byte). Two addresses are equal when their bytes are, whatever their spelling.
#[derive(Debug, Clone, Copy)]
pub struct EvmAddress<'a> {
    text: &'a str,
    bytes: Address,
}

impl<'a> EvmAddress<'a> {
    /// The zero address. As a channel's authorized signer it means the payer signs the vouchers.
    pub const ZERO: EvmAddress<'static> = EvmAddress { text: ZERO_TEXT, bytes: Address::ZERO };

    /// `0x` and 40 hex digits in either case, read without an EIP-55 check (as the reference reads addresses);
    /// `None` for any other text.
    pub fn parse(text: &'a str) -> Option<Self> {
        if !is_address_text(text) {
            return None;
        }
        Some(Self { text, bytes: text.parse::<Address>().ok()? })
    }

    /// [`EvmAddress::parse`] of a JSON string; `None` for any other value.
    pub fn of(value: &'a Value) -> Option<Self> {
        Self::parse(value.as_str()?)
    }

    /// The address as written.
    pub const fn text(&self) -> &'a str {
        self.text
    }

    /// The 20 bytes.
    pub const fn bytes(&self) -> Address {
        self.bytes
    }
}

impl PartialEq for EvmAddress<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for EvmAddress<'_> {}

/// What an EVM session channel's id commits to (draft-evm-session-00): the payer, the payee and the token, the salt
/// (H, for a channel opened under an ATR), the key that signs its vouchers (zero: the payer's), the escrow and the
/// chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionChannel<'a> {
    /// The account whose deposit funds the channel.
    pub payer: EvmAddress<'a>,
    /// The seller: the request's `recipient`.
    pub payee: EvmAddress<'a>,
    /// The token: the request's `currency`.
    pub token: EvmAddress<'a>,
    /// The channel's salt.
    pub salt: AtrHash,
    /// The key that signs the vouchers; zero for the payer's own.
    pub authorized_signer: EvmAddress<'a>,
    /// The escrow contract: `methodDetails.escrowContract`.
    pub escrow: EvmAddress<'a>,
    /// The chain: `methodDetails.chainId`.
    pub chain_id: u64,
}

/// `keccak256(abi.encode(payer, payee, token, salt, authorizedSigner, escrow, chainId))`: also the channel id of
/// Tempo's v1 session escrow, read from an opening transaction's sender and call.
pub fn channel_id(
    payer: Address,
    payee: Address,
    token: Address,
    salt: B256,
    authorized_signer: Address,
    escrow: Address,
    chain_id: u64,
) -> B256 {
    keccak256((payer, payee, token, salt, authorized_signer, escrow, U256::from(chain_id)).abi_encode())
}

impl SessionChannel<'_> {
    fn salt_word(&self) -> B256 {
        B256::from(*self.salt.as_bytes())
    }

    /// The channel id: `keccak256(abi.encode(payer, payee, token, salt, authorizedSigner, escrow, chainId))`. Every
    /// voucher signs it, so a channel salted with H commits every voucher to H.
    pub fn id(&self) -> B256 {
        channel_id(
            self.payer.bytes,
            self.payee.bytes,
            self.token.bytes,
            self.salt_word(),
            self.authorized_signer.bytes,
            self.escrow.bytes,
            self.chain_id,
        )
    }

    /// The nonce of the opening's EIP-3009 authorization: `keccak256(abi.encode(payer, payee, token, salt,
    /// authorizedSigner))`, MPP's hash over the channel's parameters and its salt.
    pub fn authorization_nonce(&self) -> B256 {
        let words =
            (self.payer.bytes, self.payee.bytes, self.token.bytes, self.salt_word(), self.authorized_signer.bytes);
        keccak256(words.abi_encode())
    }

    /// The escrow's `open(payee, token, deposit, salt, authorizedSigner)` calldata: [`OPEN_CALL_BYTES`] bytes, H as its
    /// fourth word. The payer is not in it: the escrow takes the caller.
    pub fn open_call(&self, deposit: u128) -> Vec<u8> {
        openCall {
            payee: self.payee.bytes,
            token: self.token.bytes,
            deposit,
            salt: self.salt_word(),
            authorizedSigner: self.authorized_signer.bytes,
        }
        .abi_encode()
    }

    /// The token's `approve(escrow, deposit)` calldata, which lets the escrow pull the deposit.
    pub fn approve_call(&self, deposit: u128) -> Vec<u8> {
        approveCall { spender: self.escrow.bytes, amount: U256::from(deposit) }.abi_encode()
    }

    /// The two calls a payer who opens the channel itself signs and broadcasts, in order: the token's `approve` of
    /// the deposit to the escrow, then the escrow's `open`.
    pub fn hash_opening_calls(&self, deposit: u128) -> [Call<'_>; 2] {
        [
            Call { to: self.token, data: self.approve_call(deposit) },
            Call { to: self.escrow, data: self.open_call(deposit) },
        ]
    }
}

/// A contract call: the contract, and the calldata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call<'a> {
    /// The contract called, as written.
    pub to: EvmAddress<'a>,
    /// The calldata.
    pub data: Vec<u8>,
}

impl Call<'_> {
    /// The call as a signing request writes it: `{to, data}`, the address as written and the data as `0x`
    /// lower-case hex.
    pub fn to_json(&self) -> Value {
        json!({"to": self.to.text, "data": to_hex(&self.data)})
    }
}
