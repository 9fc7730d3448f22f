//! `x402/batch-settlement/eip155`: a payment channel on the x402 batch-settlement contract. H is the salt of the
//! channel's configuration, the channel id is the EIP-712 hash of that configuration, the opening's token
//! authorization commits to the channel id, and every voucher signs it. So one comparison of the ATR, at the opening,
//! covers every later payment in the channel.

use std::borrow::Cow;

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_sol_types::{Eip712Domain, SolStruct, sol};
use serde_json::{Map, Value, json};

use crate::account::Account;
use crate::codec::{hex_bytes, to_hex};
use crate::decimal;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::pairing::{
    Advertised, Channel, ChannelKind, ChannelRef, ChooseContext, Chosen, Completion, Pairing, Unsigned,
};
use crate::rail::evm::eip3009::{Eip3009Token, eip3009_message, eip3009_typed_data};
use crate::rail::evm::{EIP712_DOMAIN, address_in, chain_id_of, is_address, object, types, uint256_of};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Signature, SigningRequest, TypedData};
use crate::x402::batch::{SCHEME, is_delay, is_hex_signature, payable, payload_of, u128_of};
use crate::x402::{
    Served, X402Payment, check_chosen, first_on_network, keep_document, read_with, served_if, timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/batch-settlement/eip155";
/// The pairing.
pub static PAIRING: BatchSettlement = BatchSettlement;

/// The batch-settlement channel contract (the EIP-712 domain's verifying contract).
pub const BATCH_SETTLEMENT: &str = "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003";
/// The collector an ERC-3009 deposit authorizes (`ReceiveWithAuthorization.to`).
pub const ERC3009_DEPOSIT_COLLECTOR: &str = "0x4020806089470a89826cB9fB1f4059150b550004";
/// The collector a Permit2 deposit authorizes (the permit's spender).
pub const PERMIT2_DEPOSIT_COLLECTOR: &str = "0x4020425FAf3B746C082C2f942b4E5159887B0005";
/// Uniswap's Permit2.
pub const PERMIT2: &str = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/// The channel contract's EIP-712 domain name.
pub const DOMAIN_NAME: &str = "x402 Batch Settlement";
/// The channel contract's EIP-712 domain version.
pub const DOMAIN_VERSION: &str = "1";

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

pub(super) fn malformed() -> Refusal {
    Refusal::x402(Reason::OptionMalformed)
}

pub(super) fn payload_malformed() -> Refusal {
    Refusal::x402(Reason::PayloadMalformed)
}

fn non_zero_address(value: &Value) -> bool {
    is_address(value) && value.as_str().is_some_and(|s| !s.eq_ignore_ascii_case(ZERO_ADDRESS))
}

/// Whether the value is `0x` and 64 hex digits in either case.
pub fn is_hash32(value: &Value) -> bool {
    value.as_str().is_some_and(|s| AtrHash::parse(s).is_some())
}

/// Whether the value is a channel configuration: five addresses, a withdraw delay below 2^40 and a 32-byte salt.
pub fn is_channel_config(config: &Value) -> bool {
    let Some(c) = config.as_object() else { return false };
    ADDRESSES.iter().all(|k| c.get(*k).is_some_and(is_address))
        && c.member("withdrawDelay").and_then(safe_int).is_some_and(|d| (0..U40_LIMIT).contains(&d))
        && c.member("salt").is_some_and(is_hash32)
}

/// Whether the channel contract's deposit takes the configuration: no zero payer, receiver, receiver authorizer or
/// token (`InvalidChannel`), and a withdraw delay from 900 to 2,592,000 seconds. A zero payer authorizer it takes:
/// the payer then signs the vouchers.
pub fn is_deposit_config(config: &Value) -> bool {
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
/// configuration that is not [`is_channel_config`] is `evm/field-malformed`.
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

/// Whether the option is this pairing's: scheme `batch-settlement` on an EIP-155 network; asset and payTo addresses,
/// a non-zero receiver authorizer, a withdraw delay in range, the token's EIP-712 name and version, and a known
/// transfer method and flow.
fn pairs(option: &Map<String, Value>) -> bool {
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    let member = |k: &str| option.member(k).unwrap_or(&Value::Null);
    let non_empty = |k: &str| extra.member(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    option.member("scheme").and_then(Value::as_str) == Some(SCHEME)
        && chain_id_of(member("network")).is_some()
        && is_address(member("asset"))
        && is_address(member("payTo"))
        && extra.member("receiverAuthorizer").is_some_and(non_zero_address)
        && extra.member("withdrawDelay").is_some_and(is_delay)
        && non_empty("name")
        && non_empty("version")
        && extra.member("assetTransferMethod").is_none_or(|m| m == "eip3009" || m == "permit2")
        && extra.member("paymentFlow").is_none_or(|f| f == "authorization")
}

/// What a build can pay: [`payable`], and a payTo and asset that are not the zero address (the deposit refuses a
/// configuration whose receiver or token is).
fn payable_here(option: &Map<String, Value>) -> bool {
    let member = |k: &str| option.member(k).unwrap_or(&Value::Null);
    payable(option) && non_zero_address(member("payTo")) && non_zero_address(member("asset"))
}

pub(super) fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable_here(option))
}

/// The pairing `x402/batch-settlement/eip155`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchSettlement;

fn is_address_text(s: &str) -> bool {
    is_address(&Value::String(s.to_owned()))
}

/// 32 fresh random bytes as `0x` hex: the deposit authorization's salt when the buyer gives none. When the operating
/// system's source fails, a hash of the payment's own fresh id and the time stands in: the salt must be unique, not
/// secret.
fn random_salt(reference: &str, now: u64) -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        use sha2::{Digest, Sha256};
        bytes = Sha256::new().chain_update(reference).chain_update(now.to_le_bytes()).finalize().into();
    }
    to_hex(&bytes)
}

impl Pairing for BatchSettlement {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, filter)
    }

    /// The first option on the account's network; the payer authorizer (required) and the deposit authorization's
    /// salt (optional, else drawn here once and kept in the choice) from the buyer's inputs; the deposit from the
    /// option's `extra.minDeposit`, else the buyer's `deposit` input, and never above the buyer's `maxDeposit`.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::x402(Reason::NoPayableOption);
        let account = Account::parse(ctx.account)
            .filter(|a| a.namespace == "eip155" && is_address_text(&a.address))
            .ok_or_else(no_option)?;
        let (_, accepted) = first_on_network(read, &account.network).map_err(|_| no_option())?;
        let missing = || Refusal::x402(Reason::InputMissing);
        let authorizer = ctx.inputs.member("payerAuthorizer");
        if authorizer.is_some_and(|a| !is_address(a)) {
            return Err(missing());
        }
        let salt = ctx.inputs.member("authSalt");
        if salt.is_some_and(|s| !is_hash32(s)) {
            return Err(missing());
        }
        // The buyer's own cap on what the channel locks. A seller's `extra.minDeposit` decides the deposit, so
        // without a cap an offer could lock as much as the payer holds. Not in the reference (0.4.0), which has no
        // such input; malformed, it is refused as the reference refuses its other malformed optional inputs.
        let max_deposit = match ctx.inputs.member("maxDeposit") {
            None => None,
            Some(max) => Some(max.as_str().and_then(decimal::parse).ok_or_else(missing)?),
        };
        let authorizer = authorizer.ok_or_else(missing)?;
        let min_deposit = accepted.member("extra").and_then(Value::as_object).and_then(|e| e.member("minDeposit"));
        let deposit = match min_deposit {
            Some(min) => min.as_str().and_then(decimal::parse).ok_or_else(malformed)?,
            None => {
                ctx.inputs.member("deposit").and_then(Value::as_str).and_then(decimal::parse).ok_or_else(missing)?
            }
        };
        if max_deposit.is_some_and(|max| deposit > max) {
            return Err(Refusal::x402(Reason::DepositAboveMax));
        }
        let salt = salt.cloned().unwrap_or_else(|| Value::String(random_salt(ctx.reference, ctx.now)));
        let mut choice = Map::new();
        choice.insert("accepted".into(), accepted.clone());
        choice.insert("from".into(), Value::String(account.address));
        choice.insert("now".into(), Value::from(ctx.now));
        choice.insert("payerAuthorizer".into(), authorizer.clone());
        choice.insert("deposit".into(), Value::String(decimal::format(deposit)));
        choice.insert("authSalt".into(), salt);
        Ok(Chosen { pairing: ID.into(), choice, reference: ctx.reference.into(), agreement: None })
    }

    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        keep_document(chosen, doc);
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(build(&chosen.choice, h)?))
    }

    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        bound(presented)
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// The unsigned opening: the deposit's token authorization and the first voucher, signed as one `batch`.
#[derive(Debug, Clone)]
pub struct Opening {
    requests: Vec<SigningRequest>,
    required: Map<String, Value>,
    accepted: Value,
    config: Value,
    channel_id: String,
    amount: u128,
    deposit: u128,
    /// The deposit authorization without its signature.
    authorization: Authorization,
}

#[derive(Debug, Clone)]
enum Authorization {
    Erc3009 { valid_before: String, salt: String },
    Permit2 { payer: String, token: String, nonce: String, deadline: String },
}

impl Opening {
    /// The two requests, in order: the deposit's token authorization, then the first voucher.
    pub fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The channel id the opening commits to.
    pub fn channel_id(&self) -> &str {
        &self.channel_id
    }
}

pub(super) fn eip712(typed_data: TypedData) -> SigningRequest {
    SigningRequest::Eip712 { typed_data }
}

/// Builds the opening from a choice `{required, accepted, from, now, payerAuthorizer, deposit, authSalt}`: a channel
/// configuration salted with H, its channel id, the deposit's authorization (ERC-3009 `ReceiveWithAuthorization` to
/// the deposit collector with nonce `keccak256(channelId, authSalt)`, or a Permit2 witness transfer committing to the
/// channel id) valid until now + maxTimeoutSeconds, and the first voucher for the option's amount.
///
/// An option whose amount is `"0"` is `x402/option-malformed` here though the filter serves it: on a fresh channel the
/// first voucher would claim nothing, which the scheme's facilitator refuses, so a zero price is paid by a later
/// voucher, never by an opening.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Opening, Refusal> {
    let deposit = match choice.member("deposit") {
        None => None,
        Some(d) => Some(d.as_str().and_then(decimal::parse).ok_or(Refusal::x402(Reason::ChoiceMalformed))?),
    };
    let member = |k: &str| choice.member(k).unwrap_or(&Value::Null);
    if !is_address(member("from")) || !is_address(member("payerAuthorizer")) || !is_hash32(member("authSalt")) {
        return Err(malformed());
    }
    let deposit = deposit.and_then(|d| u128::try_from(d).ok()).filter(|d| *d >= 1).ok_or_else(malformed)?;
    let now = choice.member("now").and_then(safe_int).and_then(|n| u64::try_from(n).ok()).ok_or_else(malformed)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let amount = accepted.member("amount").and_then(u128_of).filter(|a| *a > 0).ok_or_else(malformed)?;
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    let delay = extra.member("withdrawDelay").and_then(safe_int).ok_or_else(malformed)?;
    let text = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let payer = text(choice, "from");
    let config = json!({
        "payer": payer,
        "payerAuthorizer": text(choice, "payerAuthorizer"),
        "receiver": text(accepted, "payTo"),
        "receiverAuthorizer": text(extra, "receiverAuthorizer"),
        "token": text(accepted, "asset"),
        "withdrawDelay": delay,
        "salt": h.to_hex(),
    });
    if !is_deposit_config(&config) {
        return Err(malformed());
    }
    let chain_id = accepted.member("network").and_then(chain_id_of).ok_or_else(malformed)?;
    let channel_id = channel_id(chain_id, &config)?;
    let timeout = accepted.member("maxTimeoutSeconds").and_then(timeout_seconds).ok_or_else(malformed)?;
    let deadline = now.checked_add(timeout).ok_or_else(malformed)?.to_string();
    let auth_salt = text(choice, "authSalt");
    let token = text(accepted, "asset");
    let (token_auth, authorization) = if extra.member("assetTransferMethod").is_some_and(|m| m == "permit2") {
        let digits = auth_salt.get(2..).unwrap_or_default();
        let nonce = U256::from_str_radix(digits, 16).map_err(|_| malformed())?.to_string();
        let typed = TypedData {
            domain: object(json!({"name": "Permit2", "chainId": chain_id, "verifyingContract": PERMIT2})),
            types: types(&[
                ("EIP712Domain", &[("name", "string"), ("chainId", "uint256"), ("verifyingContract", "address")]),
                ("TokenPermissions", &[("token", "address"), ("amount", "uint256")]),
                (
                    "PermitWitnessTransferFrom",
                    &[
                        ("permitted", "TokenPermissions"),
                        ("spender", "address"),
                        ("nonce", "uint256"),
                        ("deadline", "uint256"),
                        ("witness", "DepositWitness"),
                    ],
                ),
                ("DepositWitness", &[("channelId", "bytes32")]),
            ]),
            primary_type: "PermitWitnessTransferFrom".into(),
            message: object(json!({
                "permitted": {"token": token, "amount": deposit.to_string()},
                "spender": PERMIT2_DEPOSIT_COLLECTOR,
                "nonce": nonce,
                "deadline": deadline,
                "witness": {"channelId": channel_id},
            })),
        };
        (typed, Authorization::Permit2 { payer, token, nonce, deadline })
    } else {
        let nonce = deposit_nonce(&channel_id, &auth_salt)?;
        let (name, version) = (text(extra, "name"), text(extra, "version"));
        let domain = Eip3009Token { name: &name, version: &version, chain_id, address: &token };
        let message = eip3009_message(&payer, ERC3009_DEPOSIT_COLLECTOR, deposit.to_string(), deadline.clone(), nonce);
        let typed = eip3009_typed_data("ReceiveWithAuthorization", domain, message);
        (typed, Authorization::Erc3009 { valid_before: deadline, salt: auth_salt })
    };
    let requests = vec![eip712(token_auth), eip712(voucher_typed_data(chain_id, &channel_id, amount))];
    Ok(Opening {
        requests,
        required: required.clone(),
        accepted: Value::Object(accepted.clone()),
        config,
        channel_id,
        amount,
        deposit,
        authorization,
    })
}

/// The answers of a batch as a list of strings, one per request; `x402/signature-malformed` for anything else.
fn batch_answers(answers: &[Signature], count: usize) -> Result<Vec<&str>, Refusal> {
    let malformed = || Refusal::x402(Reason::SignatureMalformed);
    let [answer] = answers else { return Err(malformed()) };
    let list = answer.as_json().as_array().filter(|l| l.len() == count).ok_or_else(malformed)?;
    list.iter().map(Value::as_str).collect::<Option<Vec<_>>>().ok_or_else(malformed)
}

impl Unsigned for Opening {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Batch { requests: self.requests.clone() }))
    }

    fn complete(&self, answers: &[Signature], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let list = batch_answers(answers, self.requests.len())?;
        let [deposit_sig, voucher_sig] = list.as_slice() else {
            return Err(Refusal::x402(Reason::SignatureMalformed));
        };
        if !is_hex_signature(deposit_sig) || !is_hex_signature(voucher_sig) {
            return Err(Refusal::x402(Reason::SignatureMalformed));
        }
        let authorization = match &self.authorization {
            Authorization::Erc3009 { valid_before, salt } => json!({"erc3009Authorization": {
                "validAfter": "0",
                "validBefore": valid_before,
                "salt": salt,
                "signature": deposit_sig,
            }}),
            Authorization::Permit2 { payer, token, nonce, deadline } => json!({"permit2Authorization": {
                "from": payer,
                "permitted": {"token": token, "amount": self.deposit.to_string()},
                "spender": PERMIT2_DEPOSIT_COLLECTOR,
                "nonce": nonce,
                "deadline": deadline,
                "witness": {"channelId": self.channel_id},
                "signature": deposit_sig,
            }}),
        };
        let payload = json!({
            "type": "deposit",
            "channelConfig": self.config,
            "voucher": {
                "channelId": self.channel_id,
                "maxClaimableAmount": self.amount.to_string(),
                "signature": voucher_sig,
            },
            "deposit": {"amount": self.deposit.to_string(), "authorization": authorization},
        });
        Ok(X402Payment::for_chosen(&self.required, &self.accepted, payload, chosen)?.completion())
    }
}

/// The payload's kind in its channel: a deposit opens, a voucher is within, a refund without an amount closes and one
/// with an amount (a positive decimal below 2^128, as the contract's refund takes) is within.
pub(super) fn payload_kind(payload: &Map<String, Value>) -> Result<ChannelKind, Refusal> {
    match payload.member("type").and_then(Value::as_str) {
        Some("deposit") => Ok(ChannelKind::Open),
        Some("voucher") => Ok(ChannelKind::Within),
        Some("refund") => match payload.member("amount") {
            None => Ok(ChannelKind::Close),
            Some(a) if u128_of(a).is_some_and(|a| a > 0) => Ok(ChannelKind::Within),
            Some(_) => Err(payload_malformed()),
        },
        _ => Err(Refusal::x402(Reason::ChannelKindUnknown)),
    }
}

/// The channel of a payment's configuration, which must equal its voucher's channel id (`x402/channel-id-mismatch`),
/// lower-case. A configuration the channel contract's deposit refuses is `x402/payload-malformed`.
pub(super) fn channel_of(presented: &dyn Member) -> Result<(ChannelRef, &Map<String, Value>), Refusal> {
    let (accepted, payload) = payload_of(presented, filter)?;
    let config = payload.member("channelConfig").unwrap_or(&Value::Null);
    if !is_deposit_config(config) {
        return Err(payload_malformed());
    }
    let voucher_id = payload
        .member("voucher")
        .and_then(Value::as_object)
        .and_then(|v| v.member("channelId"))
        .and_then(Value::as_str)
        .ok_or_else(payload_malformed)?;
    let network = accepted.member("network").and_then(Value::as_str).unwrap_or_default();
    let chain_id = chain_id_of(&Value::String(network.to_owned())).ok_or_else(payload_malformed)?;
    let id = channel_id(chain_id, config)?;
    if hex_bytes(voucher_id).is_none_or(|v| hex_bytes(&id).is_none_or(|i| i != v)) {
        return Err(Refusal::x402(Reason::ChannelIdMismatch));
    }
    Ok((ChannelRef { network: network.to_owned(), channel: id }, payload))
}

pub(super) fn salt_of(payload: &Map<String, Value>) -> Result<AtrHash, Refusal> {
    payload
        .member("channelConfig")
        .and_then(|c| c.member("salt"))
        .and_then(Value::as_str)
        .and_then(AtrHash::parse)
        .ok_or_else(payload_malformed)
}

/// The opening's deposit: an amount that is a positive decimal below 2^128, and exactly one of the ERC-3009 and
/// Permit2 authorizations, its time bound a decimal below 2^256.
fn check_deposit(payload: &Map<String, Value>) -> Result<(), Refusal> {
    let deposit = payload.member("deposit").and_then(Value::as_object).ok_or_else(payload_malformed)?;
    if deposit.member("amount").and_then(u128_of).is_none_or(|a| a == 0) {
        return Err(payload_malformed());
    }
    let unauthorized = || Refusal::x402(Reason::DepositAuthorization);
    let authorization = deposit.member("authorization").and_then(Value::as_object).ok_or_else(unauthorized)?;
    let below_2_256 = |v: Option<&Value>| v.and_then(uint256_of).is_some();
    match (authorization.member("erc3009Authorization"), authorization.member("permit2Authorization")) {
        (Some(e), None) => (below_2_256(e.member("validBefore")) && e.member("salt").is_some_and(is_hash32))
            .then_some(())
            .ok_or_else(payload_malformed),
        (None, Some(p)) => below_2_256(p.member("deadline")).then_some(()).ok_or_else(payload_malformed),
        _ => Err(unauthorized()),
    }
}

/// Reads H back from an opening: the configuration's salt, once the deposit is one the contract takes and the
/// configuration hashes to the voucher's channel id. No signature is verified here.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let (_, payload) = payload_of(presented, filter)?;
    if payload.member("type").and_then(Value::as_str) != Some("deposit") {
        return Err(Refusal::x402(Reason::NotAnOpening));
    }
    if !is_deposit_config(payload.member("channelConfig").unwrap_or(&Value::Null)) {
        return Err(payload_malformed());
    }
    check_deposit(payload)?;
    let (_, payload) = channel_of(presented)?;
    salt_of(payload)
}
