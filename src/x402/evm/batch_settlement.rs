//! `x402/batch-settlement/eip155`: a payment channel on the x402 batch-settlement contract. H is the salt of the
//! channel's configuration, the channel id is the EIP-712 hash of that configuration, the opening's token
//! authorization commits to the channel id, and every voucher signs it. So one comparison of the ATR, at the opening,
//! covers every later payment in the channel.

use std::borrow::Cow;

use alloy_primitives::U256;
use serde_json::{Map, Value, json};

pub use super::batch_config::{
    ChannelConfig, ChannelIdParts, ERC3009_DEPOSIT_COLLECTOR, PERMIT2, channel_id, channel_id_parts, deposit_nonce,
    domain, voucher_typed_data,
};
pub(crate) use super::batch_config::{PERMIT2_DEPOSIT_COLLECTOR, is_deposit_config, is_hash32};

use super::batch_config::non_zero_address;
use crate::account::Account;
use crate::codec::{hex_bytes, to_hex};
use crate::decimal;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::pairing::{
    Advertised, Channel, ChannelKind, ChannelRef, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType,
    Pairing, Quote, Unsigned,
};
use crate::rail::evm::eip3009::{Eip3009Token, eip3009_message, eip3009_typed_data};
use crate::rail::evm::{chain_id_of, is_address, object, types, uint256_of};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest, TypedData};
use crate::x402::batch::{SCHEME, is_delay, is_hex_signature, payable, payload_of, u128_of};
use crate::x402::{
    Served, X402Payment, check_chosen, first_on_network, keep_document, read_with, served_if, timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/batch-settlement/eip155";
/// The pairing.
pub static PAIRING: BatchSettlement = BatchSettlement;

const PAYER_AUTHORIZER: InputSpec =
    InputSpec::required("payerAuthorizer", InputType::String, "The address whose key signs the channel's vouchers.")
        .with_format(InputFormat::Hex(20));
const AUTH_SALT: InputSpec = InputSpec::optional(
    "authSalt",
    InputType::String,
    "The deposit authorization's salt, never reused; fresh if absent.",
)
.with_format(InputFormat::Hex(32));
const DEPOSIT: InputSpec = InputSpec::required(
    "deposit",
    InputType::String,
    "What the opening locks, in atomic units, where the option names no minDeposit.",
)
.with_format(InputFormat::Decimal)
.unless_offered("extra.minDeposit");
const MAX_DEPOSIT: InputSpec = InputSpec::optional(
    "maxDeposit",
    InputType::String,
    "The most an opening may lock (above it, unpayable), whoever names the deposit.",
)
.with_format(InputFormat::Decimal);

/// The buyer's inputs an opening takes.
pub(crate) const INPUTS: [InputSpec; 4] = [PAYER_AUTHORIZER, AUTH_SALT, DEPOSIT, MAX_DEPOSIT];

pub(super) fn malformed() -> Refusal {
    Refusal::x402(Reason::OptionMalformed)
}

pub(super) fn payload_malformed() -> Refusal {
    Refusal::x402(Reason::PayloadMalformed)
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

    /// The first option on the account's network; the payer authorizer and the deposit authorization's salt (else
    /// drawn here once and kept in the choice) from the buyer's inputs; the deposit from the option's
    /// `extra.minDeposit`, else the buyer's `deposit` input, and never above the buyer's `maxDeposit`. The inputs'
    /// forms were held to `INPUTS` before the choice ([`check_inputs`](crate::pairing::check_inputs)); what is
    /// checked here needs the option.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::x402(Reason::NoPayableOption);
        let account = Account::parse(ctx.account)
            .filter(|a| a.namespace == "eip155" && is_address_text(&a.address))
            .ok_or_else(no_option)?;
        let (_, accepted) = first_on_network(read, &account.network).map_err(|_| no_option())?;
        let missing = || Refusal::x402(Reason::InputMissing);
        let input = |spec: &InputSpec| ctx.inputs.member(spec.name);
        // Read as the specs hold them; a value they would refuse is refused as they refuse it, never passed over.
        let decimal_of = |spec: &InputSpec, v: &Value| {
            Some(v).filter(|v| spec.accepts(v)).and_then(Value::as_str).and_then(decimal::parse).ok_or_else(missing)
        };
        let authorizer = input(&PAYER_AUTHORIZER).ok_or_else(missing)?;
        // The buyer's own cap on what the channel locks. A seller's `extra.minDeposit` decides the deposit, so
        // without a cap an offer could lock as much as the payer holds. Not in the reference (0.4.0), which has no
        // such input; malformed, it is refused as the reference refuses its other malformed optional inputs.
        let max_deposit = input(&MAX_DEPOSIT).map(|max| decimal_of(&MAX_DEPOSIT, max)).transpose()?;
        let min_deposit = accepted.member("extra").and_then(Value::as_object).and_then(|e| e.member("minDeposit"));
        let deposit = match min_deposit {
            Some(min) => min.as_str().and_then(decimal::parse).ok_or_else(malformed)?,
            None => decimal_of(&DEPOSIT, input(&DEPOSIT).ok_or_else(missing)?)?,
        };
        if max_deposit.is_some_and(|max| deposit > max) {
            return Err(Refusal::x402(Reason::DepositAboveMax));
        }
        let salt = input(&AUTH_SALT).cloned().unwrap_or_else(|| Value::String(random_salt(ctx.reference, ctx.now)));
        let mut choice = Map::new();
        choice.insert("accepted".into(), accepted.clone());
        choice.insert("from".into(), Value::String(account.address));
        choice.insert("now".into(), Value::from(ctx.now));
        choice.insert("payerAuthorizer".into(), authorizer.clone());
        choice.insert("deposit".into(), Value::String(decimal::format(deposit)));
        choice.insert("authSalt".into(), salt);
        Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &INPUTS
    }

    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        quote(&chosen.build_input)
    }

    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        keep_document(chosen, doc);
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(build(&chosen.build_input, h)?))
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

/// The choice of an opening, checked: what the build signs and the quote reports, read once. Only the channel's salt
/// (H), and so the channel id, is not in it.
#[derive(Debug, Clone)]
struct OpeningChoice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Map<String, Value>,
    extra: &'a Map<String, Value>,
    payer: &'a str,
    payer_authorizer: &'a str,
    auth_salt: &'a str,
    /// The first voucher's amount: the option's, above 0 and below 2^128.
    amount: u128,
    /// What the deposit locks, above 0 and below 2^128.
    deposit: u128,
    delay: i64,
    chain_id: u64,
    /// now + maxTimeoutSeconds: the deposit authorization's validBefore or deadline.
    deadline: u64,
    /// Whether the deposit is authorized with Permit2 (else ERC-3009).
    permit2: bool,
}

impl OpeningChoice<'_> {
    /// The channel's configuration, salted with `salt`.
    fn config(&self, salt: &AtrHash) -> Value {
        let text = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        json!({
            "payer": self.payer,
            "payerAuthorizer": self.payer_authorizer,
            "receiver": text(self.accepted, "payTo"),
            "receiverAuthorizer": text(self.extra, "receiverAuthorizer"),
            "token": text(self.accepted, "asset"),
            "withdrawDelay": self.delay,
            "salt": salt.to_hex(),
        })
    }

    fn text(&self, key: &str) -> &str {
        self.accepted.get(key).and_then(Value::as_str).unwrap_or_default()
    }
}

/// The checks the build makes on a choice `{required, accepted, from, now, payerAuthorizer, deposit, authSalt}`
/// before H is in it, and the values it reads: the channel's configuration must be one the deposit takes (whatever
/// its salt: the check reads only the salt's form, which every H has).
fn opening_choice(choice: &Map<String, Value>) -> Result<OpeningChoice<'_>, Refusal> {
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
    let chain_id = accepted.member("network").and_then(chain_id_of).ok_or_else(malformed)?;
    let timeout = accepted.member("maxTimeoutSeconds").and_then(timeout_seconds).ok_or_else(malformed)?;
    let deadline = now.checked_add(timeout).ok_or_else(malformed)?;
    let text = |k: &str| choice.get(k).and_then(Value::as_str).unwrap_or_default();
    let opening = OpeningChoice {
        required,
        accepted,
        extra,
        payer: text("from"),
        payer_authorizer: text("payerAuthorizer"),
        auth_salt: text("authSalt"),
        amount,
        deposit,
        delay,
        chain_id,
        deadline,
        permit2: extra.member("assetTransferMethod").is_some_and(|m| m == "permit2"),
    };
    if !is_deposit_config(&opening.config(&AtrHash::from_bytes([0; 32]))) {
        return Err(malformed());
    }
    Ok(opening)
}

/// What the buyer would pay for an opening: the first voucher's claim (the option's amount) of the asset to payTo,
/// and the deposit the channel locks, the deposit's authorization valid until now + maxTimeoutSeconds (ERC-3009's
/// from 0).
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = opening_choice(choice)?;
    let quote = Quote::new(U256::from(c.amount), c.text("asset"), c.text("payTo"), c.text("network"), SCHEME);
    let valid_after = (!c.permit2).then_some(0);
    Ok(quote.with_deposit(U256::from(c.deposit)).with_window(valid_after, Some(c.deadline)))
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
    let c = opening_choice(choice)?;
    let (chain_id, deposit) = (c.chain_id, c.deposit);
    let config = c.config(h);
    let channel_id = channel_id(chain_id, &config)?;
    let deadline = c.deadline.to_string();
    let (payer, auth_salt, token) = (c.payer.to_owned(), c.auth_salt.to_owned(), c.text("asset").to_owned());
    let (token_auth, authorization) = if c.permit2 {
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
        let text = |k: &str| c.extra.get(k).and_then(Value::as_str).unwrap_or_default();
        let domain = Eip3009Token { name: text("name"), version: text("version"), chain_id, address: &token };
        let message = eip3009_message(&payer, ERC3009_DEPOSIT_COLLECTOR, deposit.to_string(), deadline.clone(), nonce);
        let typed = eip3009_typed_data("ReceiveWithAuthorization", domain, message);
        (typed, Authorization::Erc3009 { valid_before: deadline, salt: auth_salt })
    };
    let requests = vec![eip712(token_auth), eip712(voucher_typed_data(chain_id, &channel_id, c.amount))];
    Ok(Opening {
        requests,
        required: c.required.clone(),
        accepted: Value::Object(c.accepted.clone()),
        config,
        channel_id,
        amount: c.amount,
        deposit,
        authorization,
    })
}

/// The answers of a batch as a list of strings, one per request; `x402/signature-malformed` for anything else.
fn batch_answers(answers: &[Answer], count: usize) -> Result<Vec<&str>, Refusal> {
    let malformed = || Refusal::x402(Reason::SignatureMalformed);
    let [answer] = answers else { return Err(malformed()) };
    let list = answer.as_json().as_array().filter(|l| l.len() == count).ok_or_else(malformed)?;
    list.iter().map(Value::as_str).collect::<Option<Vec<_>>>().ok_or_else(malformed)
}

impl Unsigned for Opening {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Batch { requests: self.requests.clone() }))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
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
