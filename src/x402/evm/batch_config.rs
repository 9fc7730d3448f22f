//! The x402 batch-settlement contract on EIP-155 chains: its addresses and EIP-712 domain, the channel's
//! configuration and the channel id hashed from it, the ERC-3009 deposit's nonce, and the voucher the payer
//! authorizer signs. [`batch_settlement`](super::batch_settlement) builds and reads its payments with them.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{Eip712Domain, SolStruct, sol};
use serde_json::{Value, json};

use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::rail::evm::{EIP712_DOMAIN, address_in, is_address, object, types};
use crate::refusal::{Reason, Refusal};
use crate::signer::TypedData;
use crate::x402::batch::is_delay;

/// The batch-settlement channel contract (the EIP-712 domain's verifying contract).
pub(crate) const BATCH_SETTLEMENT: &str = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
/// The collector an ERC-3009 deposit authorizes (`ReceiveWithAuthorization.to`).
pub const ERC3009_DEPOSIT_COLLECTOR: &str = "0x4020806089470a89826cB9fB1f4059150b550004";
/// The collector a Permit2 deposit authorizes (the permit's spender).
pub(crate) const PERMIT2_DEPOSIT_COLLECTOR: &str = "0x4020425FAf3B746C082C2f942b4E5159887B0005";
/// Uniswap's Permit2.
pub const PERMIT2: &str = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/// The channel contract's EIP-712 domain name.
pub(crate) const DOMAIN_NAME: &str = "x402 Batch Settlement";
/// The channel contract's EIP-712 domain version.
pub(crate) const DOMAIN_VERSION: &str = "1";

const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
const U40_LIMIT: i64 = 1 << 40;
const ADDRESSES: [&str; 5] = ["payer", "payerAuthorizer", "receiver", "receiverAuthorizer", "token"];

sol! {
    /// The channel's configuration, whose EIP-712 hash is the channel id.
    #[allow(missing_docs)]
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }
}

pub(super) fn non_zero_address(value: &Value) -> bool {
    is_address(value) && value.as_str().is_some_and(|s| !s.eq_ignore_ascii_case(ZERO_ADDRESS))
}

/// Whether the value is `0x` and 64 hex digits in either case.
pub(crate) fn is_hash32(value: &Value) -> bool {
    value.as_str().is_some_and(|s| AtrHash::parse(s).is_some())
}

/// Whether the value is a channel configuration: five addresses, a withdraw delay below 2^40 and a 32-byte salt.
pub(crate) fn is_channel_config(config: &Value) -> bool {
    let Some(c) = config.as_object() else { return false };
    ADDRESSES.iter().all(|k| c.get(*k).is_some_and(is_address))
        && c.member("withdrawDelay").and_then(safe_int).is_some_and(|d| (0..U40_LIMIT).contains(&d))
        && c.member("salt").is_some_and(is_hash32)
}

/// Whether the channel contract's deposit takes the configuration: no zero payer, receiver, receiver authorizer or
/// token (`InvalidChannel`), and a withdraw delay from 900 to 2,592,000 seconds. A zero payer authorizer it takes:
/// the payer then signs the vouchers.
pub(crate) fn is_deposit_config(config: &Value) -> bool {
    is_channel_config(config)
        && ["payer", "receiver", "receiverAuthorizer", "token"]
            .iter()
            .all(|k| config.get(*k).is_some_and(non_zero_address))
        && config.member("withdrawDelay").is_some_and(is_delay)
}

/// The EIP-712 values of a channel id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelIdParts {
    /// The channel contract's domain separator on the chain.
    pub domain_separator: B256,
    /// hashStruct(config).
    pub struct_hash: B256,
    /// The channel id: the EIP-712 signing hash of the configuration.
    pub channel_id: B256,
}

/// The channel contract's EIP-712 domain on a chain.
pub fn domain(chain_id: u64) -> Eip712Domain {
    Eip712Domain::new(
        Some(DOMAIN_NAME.into()),
        Some(DOMAIN_VERSION.into()),
        Some(U256::from(chain_id)),
        BATCH_SETTLEMENT.parse::<Address>().ok(),
        None,
    )
}

/// The channel id of a configuration on a chain, and the values it is hashed from: `keccak256(0x1901 ‖
/// domainSeparator ‖ hashStruct(ChannelConfig))`. A chain id outside 1 … 2^53 − 1 is `evm/network-malformed`; a
/// configuration that is not `is_channel_config` is `evm/field-malformed`.
pub fn channel_id_parts(chain_id: u64, config: &Value) -> Result<ChannelIdParts, Refusal> {
    if chain_id == 0 || chain_id > crate::json::MAX_SAFE_INTEGER as u64 {
        return Err(Refusal::evm(Reason::NetworkMalformed));
    }
    let field = || Refusal::evm(Reason::FieldMalformed);
    if !is_channel_config(config) {
        return Err(field());
    }
    let address = |k: &str| address_in(config.get(k));
    let delay =
        config.member("withdrawDelay").and_then(safe_int).and_then(|d| u64::try_from(d).ok()).ok_or_else(field)?;
    let config = ChannelConfig {
        payer: address("payer").ok_or_else(field)?,
        payerAuthorizer: address("payerAuthorizer").ok_or_else(field)?,
        receiver: address("receiver").ok_or_else(field)?,
        receiverAuthorizer: address("receiverAuthorizer").ok_or_else(field)?,
        token: address("token").ok_or_else(field)?,
        withdrawDelay: alloy_primitives::aliases::U40::from(delay),
        salt: config.member("salt").and_then(Value::as_str).and_then(|s| s.parse::<B256>().ok()).ok_or_else(field)?,
    };
    let domain = domain(chain_id);
    Ok(ChannelIdParts {
        domain_separator: domain.separator(),
        struct_hash: config.eip712_hash_struct(),
        channel_id: config.eip712_signing_hash(&domain),
    })
}

/// The channel id of a configuration on a chain, as `0x` and lower-case hex.
pub fn channel_id(chain_id: u64, config: &Value) -> Result<String, Refusal> {
    channel_id_parts(chain_id, config).map(|p| p.channel_id.to_string())
}

/// The ERC-3009 deposit's nonce: `keccak256(abi.encode(bytes32 channelId, uint256 authSalt))`.
pub fn deposit_nonce(channel_id: &str, auth_salt: &str) -> Result<String, Refusal> {
    let word = |s: &str| AtrHash::parse(s).map(|h| *h.as_bytes());
    let (Some(id), Some(salt)) = (word(channel_id), word(auth_salt)) else {
        return Err(Refusal::evm(Reason::FieldMalformed));
    };
    Ok(keccak256([id, salt].concat()).to_string())
}

/// The voucher the payer authorizer signs, `Voucher(bytes32 channelId, uint128 maxClaimableAmount)`, under the
/// channel contract's domain, the amount as a decimal string.
pub fn voucher_typed_data(chain_id: u64, channel_id: &str, max_claimable: u128) -> TypedData {
    TypedData {
        domain: object(json!({
            "name": DOMAIN_NAME,
            "version": DOMAIN_VERSION,
            "chainId": chain_id,
            "verifyingContract": BATCH_SETTLEMENT,
        })),
        types: types(&[
            ("EIP712Domain", EIP712_DOMAIN),
            ("Voucher", &[("channelId", "bytes32"), ("maxClaimableAmount", "uint128")]),
        ]),
        primary_type: "Voucher".into(),
        message: object(json!({"channelId": channel_id, "maxClaimableAmount": max_claimable.to_string()})),
    }
}
