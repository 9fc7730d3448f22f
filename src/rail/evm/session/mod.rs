//! The EVM session escrow (draft-evm-session-00, MPP's `session` on `evm`): a payment channel whose salt is H.
//!
//! The payer opens the channel with a deposit, by one of three fundings ([`Funding`]): the `approve` and `open` calls
//! it broadcasts itself, an EIP-3009 `ReceiveWithAuthorization` whose nonce commits to the channel's parameters and
//! its salt, or a Permit2 witness transfer whose witness carries the salt. The channel id,
//! `keccak256(abi.encode(payer, payee, token, salt, authorizedSigner, escrow, chainId))`, commits to H, and every
//! voucher (`Voucher(bytes32 channelId, uint128 cumulativeAmount)` under the escrow's domain) signs that id. So one
//! comparison of the ATR, at the opening, covers every later payment in the channel.
//!
//! Here are the chain's facts, each a pure function of typed inputs: the channel and its id ([`SessionChannel`]), the
//! calls and the typed data the payer signs, the request's terms ([`SessionTerms`], [`SessionParams`]), what a
//! credential's payload does in its channel ([`kind_of`], [`channel_of`], [`signed_max`], [`bound_within`]), the
//! opening's read-back of H ([`bound_opening`]), and the settlement read of an opening ([`hash_opening_status`]).
//! Refusals are [`Reason`](crate::Reason) values; the protocol's pairing puts them in its namespace.

mod channel;
mod landed;
mod payload;
mod terms;
mod typed;

#[cfg(test)]
mod tests;

pub use channel::{
    APPROVE_SELECTOR, Call, EvmAddress, OPEN_CALL_BYTES, OPEN_SELECTOR, SessionChannel,
    channel_id as session_channel_id,
};
pub use landed::{
    FailedWhy, Finality, Log, Marks, OpenCall, PendingWhy, Read, Receipt, Status, TRANSFER_TOPIC, Transaction,
    TransferIdentity, TransferLog, hash_opening_status, receipt_status, transfer_digest,
};
pub use payload::{
    Funded, Opened, SessionKind, bound_opening, bound_within, channel_of, kind_of, signed_max, voucher_payload,
};
pub use terms::{Funding, SessionParams, SessionTerms, named_channel};
pub use typed::{
    ESCROW_DOMAIN_NAME, ESCROW_DOMAIN_VERSION, OPEN_WITNESS_TYPE, TokenDomain, VoucherDomain,
    escrow_voucher_typed_data, voucher_parts, voucher_typed_data,
};

/// The escrow's calls and the structs the payer signs, as `sol!` static definitions: the source of the calldata and of
/// the EIP-712 parts that cross-check the typed data built as JSON.
#[allow(missing_docs, unreachable_pub)]
mod abi {
    alloy_sol_types::sol! {
        function open(address payee, address token, uint128 deposit, bytes32 salt, address authorizedSigner);
        function approve(address spender, uint256 amount);

        struct Voucher {
            bytes32 channelId;
            uint128 cumulativeAmount;
        }

        struct ReceiveWithAuthorization {
            address from;
            address to;
            uint256 value;
            uint256 validAfter;
            uint256 validBefore;
            bytes32 nonce;
        }

        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        struct ChannelOpenWitness {
            address payee;
            bytes32 salt;
            address authorizedSigner;
        }

        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            ChannelOpenWitness witness;
        }
    }
}
