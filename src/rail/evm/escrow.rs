//! The commerce-payments escrow (`AuthCaptureEscrow`): its canonical deployments and token collectors, its
//! `PaymentInfo`, the escrow's payment hash (with payer zero, x402's signature nonce), the salt commitment a bound
//! option uses, and the escrow terms an x402 `auth-capture` option fixes.

use alloy_primitives::aliases::{U48, U120};
use alloy_primitives::{Address, B256, U256, Uint, keccak256};
use alloy_sol_types::{SolStruct, SolValue, sol};
use serde_json::{Map, Value};

use super::codec::{chain_id_of, is_address, uint256_of};
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::refusal::{Reason, Refusal};

/// The zero address.
pub(crate) const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";
/// `keccak256` of the `PaymentInfo` type string, as the escrow hashes it.
pub const PAYMENT_INFO_TYPEHASH: &str = "0xae68ac7ce30c86ece8196b61a7c486d8f0061f575037fbd34e7fe4e2820c6591";
/// `keccak256("x402AuthCaptureSaltBinding(address receiverAuthorizer,address policy,uint256 saltNonce)")`.
pub const SALT_BINDING_TYPEHASH: &str = "0x8a2a7e41a0bda000ded071ff38b79401d2603e1826516ff2635b11fe9e30877f";

/// One deployment of the escrow: the escrow and its two token collectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Escrow {
    /// The escrow contract.
    pub escrow: &'static str,
    /// The ERC-3009 token collector (the `to` of a `ReceiveWithAuthorization`).
    pub eip3009_collector: &'static str,
    /// The Permit2 token collector (the Permit2 spender).
    pub permit2_collector: &'static str,
}

/// The escrow v1.1 deployment: what an option that names no escrow means.
pub(crate) const ESCROW_V1_1: Escrow = Escrow {
    escrow: "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c",
    eip3009_collector: "0x8612dfdc421f80336cd14E8EF9cb1E765dB5ab88",
    permit2_collector: "0xD69831Aed5bfe262067ec4c751f4F830EcdD446e",
};

/// The escrow v1.0 deployment.
pub(crate) const ESCROW_V1_0: Escrow = Escrow {
    escrow: "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff",
    eip3009_collector: "0x0E3dF9510de65469C4518D7843919c0b8C7A7757",
    permit2_collector: "0x992476B9Ee81d52a5BdA0622C333938D0Af0aB26",
};

sol! {
    /// The escrow's `PaymentInfo`: its EIP-712 struct hash is `keccak256(abi.encode(PAYMENT_INFO_TYPEHASH, info))`.
    #[allow(missing_docs)]
    #[derive(Debug, PartialEq, Eq)]
    struct PaymentInfo {
        address operator;
        address payer;
        address receiver;
        address token;
        uint120 maxAmount;
        uint48 preApprovalExpiry;
        uint48 authorizationExpiry;
        uint48 refundExpiry;
        uint16 minFeeBps;
        uint16 maxFeeBps;
        address feeReceiver;
        uint256 salt;
    }

    /// The salt commitment: its struct hash is `keccak256(abi.encode(SALT_BINDING_TYPEHASH, receiverAuthorizer,
    /// policy, saltNonce))`.
    #[allow(missing_docs, non_camel_case_types)]
    #[derive(Debug, PartialEq, Eq)]
    struct x402AuthCaptureSaltBinding {
        address receiverAuthorizer;
        address policy;
        uint256 saltNonce;
    }
}

/// The salt a bound option's payment carries: `keccak256(abi.encode(SALT_BINDING_TYPEHASH, receiverAuthorizer,
/// policy, h))`.
pub fn bind_salt(receiver_authorizer: Address, policy: Address, h: &AtrHash) -> AtrHash {
    let binding = x402AuthCaptureSaltBinding {
        receiverAuthorizer: receiver_authorizer,
        policy,
        saltNonce: U256::from_be_bytes(*h.as_bytes()),
    };
    AtrHash::from_bytes(binding.eip712_hash_struct().0)
}

/// The escrow's `getHash`: `keccak256(abi.encode(chainId, escrow, keccak256(abi.encode(PAYMENT_INFO_TYPEHASH,
/// info))))`. With payer zero it is x402's signature nonce.
pub fn payment_hash(chain_id: u64, escrow: Address, info: &PaymentInfo) -> B256 {
    keccak256((U256::from(chain_id), escrow, info.eip712_hash_struct()).abi_encode())
}

/// The escrow terms an `auth-capture` option fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    /// The chain.
    pub chain_id: u64,
    /// The escrow deployment.
    pub deployment: &'static Escrow,
    /// Whether the option binds a receiver authorizer or a policy: the payment's salt is then a commitment to H
    /// (and its `saltNonce` is H), else H itself.
    pub bound: bool,
    /// The receiver authorizer (zero when absent).
    pub receiver_authorizer: Address,
    /// The policy (zero when absent).
    pub policy: Address,
    /// `PaymentInfo.operator`: the capture authorizer.
    pub operator: Address,
    /// `PaymentInfo.receiver`: the option's `payTo`.
    pub receiver: Address,
    /// `PaymentInfo.token`: the option's `asset`.
    pub token: Address,
    /// `PaymentInfo.maxAmount`: the option's amount.
    pub max_amount: U120,
    /// `PaymentInfo.authorizationExpiry`: the capture deadline.
    pub authorization_expiry: U48,
    /// `PaymentInfo.refundExpiry`: the refund deadline.
    pub refund_expiry: U48,
    /// `PaymentInfo.minFeeBps`.
    pub min_fee_bps: u16,
    /// `PaymentInfo.maxFeeBps`.
    pub max_fee_bps: u16,
    /// `PaymentInfo.feeReceiver`: the fee recipient.
    pub fee_receiver: Address,
}

/// A non-negative safe integer, or its decimal string of at most 78 digits.
fn uint_member(value: Option<&Value>) -> Option<U256> {
    match value? {
        n @ Value::Number(_) => safe_int(n).and_then(|i| u64::try_from(i).ok()).map(U256::from),
        other => uint256_of(other),
    }
}

/// The value in a narrower unsigned type, when it fits.
fn fits<const BITS: usize, const LIMBS: usize>(value: U256) -> Option<Uint<BITS, LIMBS>> {
    (value.bit_len() <= BITS).then(|| Uint::saturating_from(value))
}

fn address_of(text: &str) -> Option<Address> {
    text.parse::<Address>().ok()
}

impl Terms {
    /// The terms of an `auth-capture` option, or `x402/option-malformed`: `captureAuthorizer` and `feeRecipient`
    /// addresses, `receiverAuthorizer` and `policy` addresses when present (absent or `null` reads as the zero
    /// address), the amount below 2^120, `captureDeadline` and `refundDeadline` below 2^48, `minFeeBps` and
    /// `maxFeeBps` at most 65,535; a `paymentFlow` of `authorization` (the escrow's charge) needs a non-zero receiver
    /// authorizer.
    pub fn of(option: &Map<String, Value>) -> Result<Self, Refusal> {
        let malformed = || Refusal::x402(Reason::OptionMalformed);
        let extra = option.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
        let deployment = deployment_of(extra).ok_or_else(malformed)?;
        let address = |key: &str, fallback: Option<&'static str>| -> Option<Address> {
            let value = match extra.get(key) {
                None | Some(Value::Null) => Value::String(fallback?.to_owned()),
                Some(v) => v.clone(),
            };
            value.as_str().filter(|_| is_address(&value)).and_then(address_of)
        };
        let operator = address("captureAuthorizer", None).ok_or_else(malformed)?;
        let fee_receiver = address("feeRecipient", None).ok_or_else(malformed)?;
        let receiver_authorizer = address("receiverAuthorizer", Some(ZERO_ADDRESS)).ok_or_else(malformed)?;
        let policy = address("policy", Some(ZERO_ADDRESS)).ok_or_else(malformed)?;
        let authorization_expiry = uint_member(extra.member("captureDeadline")).and_then(fits).ok_or_else(malformed)?;
        let refund_expiry = uint_member(extra.member("refundDeadline")).and_then(fits).ok_or_else(malformed)?;
        let max_amount = option.member("amount").and_then(uint256_of).and_then(fits).ok_or_else(malformed)?;
        let fee =
            |key: &str| uint_member(extra.get(key)).filter(|v| v.bit_len() <= 16).map(|v| v.saturating_to::<u16>());
        let min_fee_bps = fee("minFeeBps").ok_or_else(malformed)?;
        let max_fee_bps = fee("maxFeeBps").ok_or_else(malformed)?;
        if extra.member("paymentFlow").is_some_and(|f| f == "authorization") && receiver_authorizer.is_zero() {
            return Err(malformed());
        }
        let chain_id = chain_id_of(option.member("network").unwrap_or(&Value::Null)).ok_or_else(malformed)?;
        let member = |key: &str| option.get(key).and_then(Value::as_str).and_then(address_of);
        Ok(Self {
            chain_id,
            deployment,
            bound: !receiver_authorizer.is_zero() || !policy.is_zero(),
            receiver_authorizer,
            policy,
            operator,
            receiver: member("payTo").ok_or_else(malformed)?,
            token: member("asset").ok_or_else(malformed)?,
            max_amount,
            authorization_expiry,
            refund_expiry,
            min_fee_bps,
            max_fee_bps,
            fee_receiver,
        })
    }

    /// The `PaymentInfo` these terms fix for a payer, a salt and a pre-approval expiry.
    pub fn info(&self, payer: Address, salt: &AtrHash, pre_approval_expiry: U48) -> PaymentInfo {
        PaymentInfo {
            operator: self.operator,
            payer,
            receiver: self.receiver,
            token: self.token,
            maxAmount: self.max_amount,
            preApprovalExpiry: pre_approval_expiry,
            authorizationExpiry: self.authorization_expiry,
            refundExpiry: self.refund_expiry,
            minFeeBps: self.min_fee_bps,
            maxFeeBps: self.max_fee_bps,
            feeReceiver: self.fee_receiver,
            salt: U256::from_be_bytes(*salt.as_bytes()),
        }
    }

    /// The salt the payment carries for H: the commitment to H when the option is bound, H itself otherwise.
    pub fn salt_for(&self, h: &AtrHash) -> AtrHash {
        if self.bound { bind_salt(self.receiver_authorizer, self.policy, h) } else { *h }
    }

    /// The signature nonce: the escrow's payment hash with payer zero, for a salt and a pre-approval expiry;
    /// `None` for an expiry of 2^48 or more, which no `PaymentInfo` holds.
    pub fn signature_nonce(&self, salt: &AtrHash, pre_approval_expiry: u64) -> Option<AtrHash> {
        let escrow = address_of(self.deployment.escrow)?;
        let info = self.info(Address::ZERO, salt, U48::try_from(pre_approval_expiry).ok()?);
        Some(AtrHash::from_bytes(payment_hash(self.chain_id, escrow, &info).0))
    }
}

/// The escrow deployment an auth-capture option names: absent or v1.1's escrow gives v1.1, v1.0's gives v1.0.
pub(crate) fn deployment_of(extra: &Map<String, Value>) -> Option<&'static Escrow> {
    let Some(named) = extra.member("authCaptureEscrow") else { return Some(&ESCROW_V1_1) };
    let named = named.as_str()?;
    [&ESCROW_V1_1, &ESCROW_V1_0].into_iter().find(|d| named.eq_ignore_ascii_case(d.escrow))
}
