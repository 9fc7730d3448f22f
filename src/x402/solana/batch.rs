//! `x402/batch-settlement/solana`: a payment channel of the payment-channels program. The payer signs the v0
//! transaction that opens the channel with its deposit, whose two Memo instructions are H's LCP string (the option's
//! `extra.memo`) and x402's binding memo for the option's receiver authorizer, and its payer authorizer signs the
//! first voucher (`ed25519-raw`); both are one `batch`. Later vouchers sign the channel, which the opening bound, and
//! carry no H of their own.

use ruint::aliases::U256;
use serde_json::{Map, Value, json};

use super::{PayerInput, decimal_u64, is_solana_network, key_of, lcp_string, memo_length, solana_account};
use super::{static_nonce, svm, take_inputs, wire_of};
use crate::codec::{b64_encode, to_hex};
use crate::decimal;
use crate::hash::AtrHash;
use crate::json::{MAX_SAFE_INTEGER, Member, safe_int};
use crate::pairing::{
    Advertised, Channel, ChannelKind, ChannelRef, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType,
    Pairing, Quote, Unsigned,
};
use crate::rail::solana::channel::voucher_message;
use crate::rail::solana::channel::{CallKind, ChannelCall, Open, Parties, channel_address, channel_instruction};
use crate::rail::solana::{Key, Transaction, Version, compile, decode, is_on_curve, program, signed_wire};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::batch::{SCHEME, is_delay, payable, payload_of};
use crate::x402::{Served, X402Payment, check_chosen, first_on_network, keep_document, read_with, served_if};

/// The pairing id.
pub const ID: &str = "x402/batch-settlement/solana";
/// The pairing.
pub static PAIRING: BatchSolana = BatchSolana;

/// x402's receiver-authorizer binding memo: this prefix, then the base58 key.
pub const BINDING_MEMO_PREFIX: &str = "x402:batch-settlement:svm:rcvauth:v1:";
/// The compute unit limit a channel transaction sets when the buyer names none.
pub(super) const DEFAULT_UNIT_LIMIT: u32 = 200_000;

/// The inputs the opening takes beside the option.
pub(crate) const INPUTS: &[InputSpec] = &[
    InputSpec::required("payerAuthorizer", InputType::String, "The address whose key signs the channel's vouchers.")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("openSlot", InputType::String, "A recent slot (a u64 in decimal) the channel address names.")
        .with_format(InputFormat::Decimal),
    InputSpec::required("tokenProgram", InputType::String, "The mint's owner: Token's or Token-2022's program id.")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("recentBlockhash", InputType::String, "A recent blockhash (base58).")
        .with_format(InputFormat::NonEmpty)
        .unless_offered("extra.recentBlockhash"),
    InputSpec::required(
        "deposit",
        InputType::String,
        "What the opening locks, in atomic units, where the option names no minDeposit.",
    )
    .with_format(InputFormat::Decimal)
    .unless_offered("extra.minDeposit"),
    InputSpec::optional(
        "maxDeposit",
        InputType::String,
        "The most an opening may lock (above it, unpayable), whoever names the deposit.",
    )
    .with_format(InputFormat::Decimal),
    InputSpec::optional("salt", InputType::String, "The channel's salt, a u64 in decimal; random if absent.")
        .with_format(InputFormat::Decimal),
    InputSpec::optional("computeUnitLimit", InputType::Integer, "The compute unit limit (a u32); 200000 if absent."),
    InputSpec::optional(
        "computeUnitPrice",
        InputType::String,
        "The compute unit price in micro-lamports; 1 if absent.",
    )
    .with_format(InputFormat::Decimal),
];

/// Whether the option is this pairing's: scheme `batch-settlement` on a Solana network, base58 keys for the asset,
/// the payee, `extra.feePayer` and `extra.receiverAuthorizer`, `extra.voucherSigner` absent or `client`, Token's or
/// Token-2022's `extra.tokenProgram`, a withdraw delay in range and not below a numeric `maxTimeoutSeconds`,
/// `extra.paymentFlow` absent or `authorization`, and `extra.memo` when present a string of at most 256 UTF-8 bytes.
fn pairs(option: &Map<String, Value>) -> bool {
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    if option.member("scheme").and_then(Value::as_str) != Some(SCHEME)
        || !option.member("network").is_some_and(is_solana_network)
        || key_of(option.member("asset")).is_none()
        || key_of(option.member("payTo")).is_none()
        || key_of(extra.get("feePayer")).is_none()
        || key_of(extra.get("receiverAuthorizer")).is_none()
        || extra.get("voucherSigner").is_some_and(|v| v != "client")
        || !key_of(extra.get("tokenProgram")).is_some_and(|k| program::is_token_program(&k))
    {
        return false;
    }
    let Some(delay) = extra.get("withdrawDelay").filter(|d| is_delay(d)).and_then(Value::as_f64) else { return false };
    // A maxTimeoutSeconds of another type is never converted to compare: the option is this pairing's, and payable
    // refuses it.
    if option.member("maxTimeoutSeconds").and_then(Value::as_f64).is_some_and(|t| delay < t) {
        return false;
    }
    extra.get("paymentFlow").is_none_or(|f| f == "authorization")
        && match extra.get("memo") {
            None => true,
            Some(Value::String(memo)) => memo_length(memo) <= super::MAX_MEMO,
            Some(_) => false,
        }
}

/// What a build can pay: [`payable`], with the amount below 2^64, the voucher's u64.
fn payable_here(option: &Map<String, Value>) -> bool {
    payable(option) && option.member("amount").and_then(Value::as_str).and_then(|a| a.parse::<u64>().ok()).is_some()
}

pub(super) fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable_here(option))
}

/// The pairing `x402/batch-settlement/solana`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchSolana;

x402_pairing!(
    BatchSolana,
    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
);

/// 8 fresh random bytes as a decimal u64: the channel's salt when the buyer gives none (a hash of the payment's own
/// fresh id and the time when the operating system's source fails: the salt must be unique, not secret).
fn random_salt(reference: &str, now: u64) -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new().chain_update(reference).chain_update(now.to_le_bytes()).finalize();
        for (b, d) in bytes.iter_mut().zip(digest.iter()) {
            *b = *d;
        }
    }
    u64::from_be_bytes(bytes).to_string()
}

/// Whether a string is a base58 address of 32 to 44 characters, as the reference's choose reads one.
fn is_address_text(value: &Value) -> bool {
    value.as_str().is_some_and(|s| (32..=44).contains(&s.len()) && bs58::decode(s).into_vec().is_ok())
}

/// A decimal string of at most 20 digits below 2^64.
fn is_u64_text(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s.len() <= 20) && decimal_u64(Some(value)).flatten().is_some()
}

/// The first option on the signer's cluster, as the choice `{accepted, payer, now, payerAuthorizer, openSlot,
/// tokenProgram, recentBlockhash, computeUnitLimit?, computeUnitPrice?, deposit, salt}` (the gate puts `required`, the
/// document, in): the deposit `extra.minDeposit` (`x402/option-malformed` unless a decimal) or the buyer's, never
/// above the buyer's `maxDeposit` (`x402/deposit-above-max`); the blockhash `extra.recentBlockhash` where the option
/// names one; the salt the buyer's or a random u64.
fn choose(read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, payer) = solana_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let missing = || Refusal::x402(Reason::InputMissing);
    let extra = accepted.member("extra").and_then(Value::as_object);
    let offered = extra.and_then(|e| e.get("recentBlockhash")).filter(|b| !b.is_null());
    let mut specs = vec![
        ("payerAuthorizer", false, super::Form::NonEmpty),
        ("openSlot", false, super::Form::Decimal),
        ("tokenProgram", false, super::Form::NonEmpty),
    ];
    if extra.is_none_or(|e| !e.contains_key("recentBlockhash")) {
        specs.push(("recentBlockhash", false, super::Form::NonEmpty));
    }
    specs.extend([("computeUnitLimit", true, super::Form::Uint), ("computeUnitPrice", true, super::Form::Decimal)]);
    let given = take_inputs(ctx.inputs, &specs)?;
    let salt = ctx.inputs.get("salt");
    if salt.is_some_and(|s| !s.as_str().is_some_and(|t| (1..=20).contains(&t.len()) && decimal::is_decimal(t))) {
        return Err(missing());
    }
    let blockhash = offered.or_else(|| given.get("recentBlockhash")).filter(|b| is_address_text(b));
    let blockhash = blockhash.ok_or_else(missing)?.clone();
    let authorizer_ok = given.get("payerAuthorizer").is_some_and(is_address_text);
    if !authorizer_ok || !given.get("openSlot").is_some_and(is_u64_text) || salt.is_some_and(|s| !is_u64_text(s)) {
        return Err(missing());
    }
    let min_deposit = extra.and_then(|e| e.get("minDeposit"));
    let deposit = match min_deposit {
        Some(min) => min.as_str().and_then(decimal::parse).ok_or(Refusal::x402(Reason::OptionMalformed))?,
        None => ctx.inputs.get("deposit").and_then(Value::as_str).and_then(decimal::parse).ok_or_else(missing)?,
    };
    // The buyer's own cap on what the channel locks, as the EVM opening takes it (not in the reference, 0.4.0).
    if let Some(max) = ctx.inputs.get("maxDeposit") {
        let max = max.as_str().and_then(decimal::parse).ok_or_else(missing)?;
        if deposit > max {
            return Err(Refusal::x402(Reason::DepositAboveMax));
        }
    }
    let mut choice = Map::with_capacity(12);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("payer".into(), Value::String(payer));
    choice.insert("now".into(), Value::from(ctx.now));
    choice.extend(given);
    choice.insert("recentBlockhash".into(), blockhash);
    choice.insert("deposit".into(), Value::String(decimal::format(deposit)));
    let salt = salt.cloned().unwrap_or_else(|| Value::String(random_salt(ctx.reference, ctx.now)));
    choice.insert("salt".into(), salt);
    Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// The opening's choice, checked in the reference's order: the deposit, salt, open slot and price as decimal strings
/// where given (`x402/choice-malformed`), then the payer's inputs, a deposit in `1..2^64`, a payer authorizer that is
/// a point on the curve (the program's open refuses an authorized signer off it), a u64 salt and an open slot of at
/// most 2^53 - 1 (`svm/input-malformed`), then the document and option.
#[derive(Debug, Clone)]
struct OpeningChoice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Value,
    input: PayerInput,
    deposit: u64,
    authorizer: Key,
    salt: u64,
    open_slot: u64,
    asset: Key,
    pay_to: Key,
    fee_payer: Key,
    receiver_authorizer: Key,
    offered_program: Option<Key>,
    withdraw_delay: &'a Value,
    amount: u64,
    memo: Option<&'a str>,
    network: &'a str,
}

fn opening_choice(choice: &Map<String, Value>) -> Result<OpeningChoice<'_>, Refusal> {
    let revive = |key: &str| match choice.get(key) {
        None => Ok(None),
        Some(v) => decimal_u64(Some(v)).map(Some).ok_or(Refusal::x402(Reason::ChoiceMalformed)),
    };
    let (deposit, salt, open_slot) = (revive("deposit")?, revive("salt")?, revive("openSlot")?);
    let bad = || svm(Reason::InputMalformed);
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let input = PayerInput::of(choice, DEFAULT_UNIT_LIMIT)?;
    let deposit = deposit.flatten().filter(|d| *d > 0).ok_or_else(bad)?;
    let authorizer = key_of(choice.get("payerAuthorizer")).filter(|k| is_on_curve(k.as_bytes())).ok_or_else(bad)?;
    let salt = salt.flatten().ok_or_else(bad)?;
    let open_slot = open_slot.flatten().filter(|s| *s <= MAX_SAFE_INTEGER as u64).ok_or_else(bad)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    Ok(OpeningChoice {
        required,
        accepted: choice.member("accepted").ok_or_else(malformed)?,
        input,
        deposit,
        authorizer,
        salt,
        open_slot,
        asset: key_of(accepted.member("asset")).ok_or_else(malformed)?,
        pay_to: key_of(accepted.member("payTo")).ok_or_else(malformed)?,
        fee_payer: key_of(extra.get("feePayer")).ok_or_else(malformed)?,
        receiver_authorizer: key_of(extra.get("receiverAuthorizer")).ok_or_else(malformed)?,
        offered_program: key_of(extra.get("tokenProgram")),
        withdraw_delay: extra.get("withdrawDelay").ok_or_else(malformed)?,
        amount: accepted.member("amount").and_then(Value::as_str).and_then(|a| a.parse().ok()).ok_or_else(malformed)?,
        memo: extra.get("memo").and_then(Value::as_str),
        network: accepted.member("network").and_then(Value::as_str).unwrap_or_default(),
    })
}

impl OpeningChoice<'_> {
    /// The option's memo must be H's LCP string (`svm/carrier-mismatch`), then the token program the buyer read must
    /// be the one the option names (`svm/input-malformed`).
    fn carries(&self, h: &AtrHash) -> Result<String, Refusal> {
        let memo = lcp_string(h);
        if self.memo != Some(memo.as_str()) {
            return Err(svm(Reason::CarrierMismatch));
        }
        if self.offered_program != Some(self.input.token_program) {
            return Err(svm(Reason::InputMalformed));
        }
        Ok(memo)
    }
}

/// What the buyer would pay for an opening: the first voucher's claim (the option's amount) of the asset to payTo,
/// and the deposit the channel locks. The vouchers name no time bound (`expiresAt` 0).
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = opening_choice(choice)?;
    let lcp = c.memo.and_then(|m| m.strip_prefix("lcp:sha256:")).and_then(AtrHash::parse);
    c.carries(&lcp.ok_or(svm(Reason::CarrierMismatch))?)?;
    let quote = Quote::new(U256::from(c.amount), c.asset.to_base58(), c.pay_to.to_base58(), c.network, SCHEME);
    Ok(quote.with_deposit(U256::from(c.deposit)))
}

/// The unsigned opening: the open transaction's message for the payer, then the first voucher for the payer
/// authorizer, signed as one `batch`.
#[derive(Debug, Clone)]
pub struct Opening<'a> {
    choice: OpeningChoice<'a>,
    channel: Key,
    config: Value,
    message: Vec<u8>,
    requests: Vec<SigningRequest>,
}

impl Opening<'_> {
    /// The two requests, in order.
    pub fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }

    /// The channel the opening makes.
    pub fn channel(&self) -> Key {
        self.channel
    }
}

/// An `ed25519-raw` request: `message` for `signer` to sign.
pub(super) fn ed25519_raw(message: &[u8], signer: &Key) -> SigningRequest {
    let mut fields = Map::with_capacity(2);
    fields.insert("message".into(), Value::String(to_hex(message)));
    fields.insert("signer".into(), Value::String(signer.to_base58()));
    SigningRequest::Ed25519Raw(fields)
}

/// A `solana-message` request for `message`.
pub(super) fn solana_message(message: &[u8]) -> SigningRequest {
    let mut fields = Map::with_capacity(1);
    fields.insert("message".into(), Value::String(to_hex(message)));
    SigningRequest::SolanaMessage(fields)
}

/// Builds the opening from a choice whose option's `extra.memo` is H's LCP string: SetComputeUnitLimit,
/// SetComputeUnitPrice, the payment-channels `open` of the deposit under the payer authorizer with the option's
/// withdraw delay as the grace period, then two v3 Memo instructions, `extra.memo` and x402's binding memo for
/// `extra.receiverAuthorizer`; and the first voucher for the option's amount, expiring at 0.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Opening<'a>, Refusal> {
    let c = opening_choice(choice)?;
    let memo = c.carries(h)?;
    let i = &c.input;
    let channel = channel_address(&i.payer, &c.fee_payer, &c.asset, &c.authorizer, c.salt, c.open_slot)?;
    let grace_period =
        safe_int(c.withdraw_delay).and_then(|d| u32::try_from(d).ok()).ok_or(svm(Reason::InputMalformed))?;
    let open = Open {
        channel,
        signer: c.authorizer,
        salt: c.salt,
        deposit: c.deposit,
        grace_period,
        open_slot: c.open_slot,
        recipient: c.pay_to,
    };
    let parties = Parties { payer: i.payer, fee_payer: c.fee_payer, mint: c.asset, token_program: i.token_program };
    let binding = format!("{BINDING_MEMO_PREFIX}{}", c.receiver_authorizer);
    let instructions = [
        program::set_compute_unit_limit(i.unit_limit),
        program::set_compute_unit_price(i.unit_price),
        ChannelCall::Open(open).instruction(&parties)?,
        program::memo(&memo),
        program::memo(&binding),
    ];
    let message = compile(Version::V0, &c.fee_payer, &i.recent_blockhash, &instructions)?;
    let voucher = voucher_message(&channel, c.amount, 0);
    let config = json!({
        "payer": i.payer.to_base58(),
        "payerAuthorizer": c.authorizer.to_base58(),
        "receiver": c.pay_to.to_base58(),
        "receiverAuthorizer": c.receiver_authorizer.to_base58(),
        "token": c.asset.to_base58(),
        "withdrawDelay": c.withdraw_delay,
        "salt": c.salt.to_string(),
        "openSlot": c.open_slot,
    });
    let requests = vec![solana_message(&message), ed25519_raw(&voucher, &c.authorizer)];
    Ok(Opening { choice: c, channel, config, message, requests })
}

/// A batch's answers as strings, one per request (`x402/signature-malformed` otherwise), each a base58 ed25519
/// signature of 64 bytes in at most 90 characters (`svm/input-malformed` otherwise).
pub(super) fn batch_signatures(answers: &[Answer], count: usize) -> Result<Vec<[u8; 64]>, Refusal> {
    let malformed = || Refusal::x402(Reason::SignatureMalformed);
    let [answer] = answers else { return Err(malformed()) };
    let list = answer.as_json().as_array().filter(|l| l.len() == count).ok_or_else(malformed)?;
    let texts = list.iter().map(Value::as_str).collect::<Option<Vec<_>>>().ok_or_else(malformed)?;
    texts.iter().map(|t| signature_bytes(t).ok_or(svm(Reason::InputMalformed))).collect()
}

/// The 64 bytes of a base58 ed25519 signature of at most 90 characters.
pub(super) fn signature_bytes(text: &str) -> Option<[u8; 64]> {
    if text.len() > 90 {
        return None;
    }
    bs58::decode(text).into_vec().ok()?.try_into().ok()
}

/// The voucher a payment carries: the channel, the cumulative amount, expiry 0, the base58 signature.
pub(super) fn voucher_json(channel: &Key, max_claimable: u64, signature: &[u8; 64]) -> Value {
    json!({
        "channelId": channel.to_base58(),
        "maxClaimableAmount": max_claimable.to_string(),
        "expiresAt": 0,
        "signature": bs58::encode(signature).into_string(),
    })
}

impl Unsigned for Opening<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Batch { requests: self.requests.clone() }))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let sigs = batch_signatures(answers, self.requests.len())?;
        let [tx_sig, voucher_sig] = sigs.as_slice() else { return Err(svm(Reason::InputMalformed)) };
        let c = &self.choice;
        let wire = signed_wire(&self.message, &c.input.payer, tx_sig)?;
        let payload = json!({
            "type": "deposit",
            "channelConfig": self.config,
            "voucher": voucher_json(&self.channel, c.amount, voucher_sig),
            "deposit": {"amount": c.deposit.to_string(), "transaction": b64_encode(&wire)},
        });
        Ok(X402Payment::for_chosen(c.required, c.accepted, payload, chosen)?.completion())
    }
}

/// A channel configuration as the program's open takes it, its members in their rail forms.
#[derive(Debug, Clone, Copy)]
pub(super) struct Config {
    pub(super) payer: Key,
    pub(super) payer_authorizer: Key,
    pub(super) token: Key,
    pub(super) salt: u64,
    pub(super) open_slot: u64,
}

/// The configuration a payment or hold carries: base58 keys, a payer authorizer on the curve, a receiver authorizer
/// absent or a key, a withdraw delay in `1..2^32`, a decimal u64 salt and an open slot that is a non-negative safe
/// integer; `x402/payload-malformed` otherwise.
pub(super) fn config_of(value: Option<&Value>) -> Result<Config, Refusal> {
    let bad = || Refusal::x402(Reason::PayloadMalformed);
    let c = value.and_then(Value::as_object).ok_or_else(bad)?;
    let delay = c.get("withdrawDelay").and_then(safe_int).filter(|d| (1..1 << 32).contains(d));
    let salt = c.get("salt").filter(|s| is_u64_text(s)).and_then(|s| decimal_u64(Some(s))).flatten();
    let open_slot = c.get("openSlot").and_then(safe_int).and_then(|s| u64::try_from(s).ok());
    let authorizer = key_of(c.get("payerAuthorizer")).filter(|k| is_on_curve(k.as_bytes()));
    if key_of(c.get("receiver")).is_none()
        || c.get("receiverAuthorizer").is_some_and(|r| key_of(Some(r)).is_none())
        || delay.is_none()
    {
        return Err(bad());
    }
    Ok(Config {
        payer: key_of(c.get("payer")).ok_or_else(bad)?,
        payer_authorizer: authorizer.ok_or_else(bad)?,
        token: key_of(c.get("token")).ok_or_else(bad)?,
        salt: salt.ok_or_else(bad)?,
        open_slot: open_slot.ok_or_else(bad)?,
    })
}

impl Config {
    /// The channel's address under the option's fee payer.
    pub(super) fn channel(&self, fee_payer: &Key) -> Result<Key, Refusal> {
        channel_address(&self.payer, fee_payer, &self.token, &self.payer_authorizer, self.salt, self.open_slot)
    }
}

/// A payload's transaction: `deposit.transaction` where the payload has a deposit object, else its `transaction`;
/// `None` where it names none.
fn tx_of(payload: &Map<String, Value>) -> Option<Result<Transaction, Refusal>> {
    let text = match payload.get("deposit").and_then(Value::as_object) {
        Some(deposit) => deposit.get("transaction")?,
        None => payload.get("transaction")?,
    };
    Some(wire_of(Some(text)).and_then(|w| decode(&w)))
}

/// What a payload does in its channel: a voucher is within, a refund closes, a deposit opens when its channel
/// instruction is an open and is within when it is a top-up (`x402/payload-malformed` with no transaction that
/// decodes, the channel instruction's refusal when it does not read); anything else is `x402/channel-kind-unknown`.
pub(super) fn payload_kind(payload: &Map<String, Value>) -> Result<ChannelKind, Refusal> {
    match payload.get("type").and_then(Value::as_str) {
        Some("voucher") => Ok(ChannelKind::Within),
        Some("refund") => Ok(ChannelKind::Close),
        Some("deposit") => {
            let tx = tx_of(payload).and_then(Result::ok).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
            match channel_instruction(&tx)?.kind {
                CallKind::Open => Ok(ChannelKind::Open),
                CallKind::TopUp => Ok(ChannelKind::Within),
                CallKind::RequestClose => Err(Refusal::x402(Reason::ChannelKindUnknown)),
            }
        }
        _ => Err(Refusal::x402(Reason::ChannelKindUnknown)),
    }
}

/// The channel of a payment's configuration under the option's fee payer, which must be its voucher's channel id and
/// its transaction's channel account (`svm/channel-id-mismatch`).
pub(super) fn channel_of(presented: &dyn Member) -> Result<ChannelRef, Refusal> {
    let (accepted, payload) = payload_of(presented, filter)?;
    let config = config_of(payload.get("channelConfig"))?;
    let fee_payer = accepted.member("extra").and_then(|e| key_of(e.member("feePayer")));
    let channel = config.channel(&fee_payer.ok_or(Refusal::x402(Reason::OptionMalformed))?)?;
    let mismatch = || svm(Reason::ChannelIdMismatch);
    let named = channel.to_base58();
    if payload.get("voucher").is_some_and(|v| v.member("channelId").and_then(Value::as_str) != Some(named.as_str())) {
        return Err(mismatch());
    }
    if let Some(tx) = tx_of(payload)
        && channel_instruction(&tx?)?.channel != channel
    {
        return Err(mismatch());
    }
    let network = accepted.member("network").and_then(Value::as_str).unwrap_or_default();
    Ok(ChannelRef { network: network.to_owned(), channel: channel.to_base58() })
}

/// Reads H back from an opening: a deposit whose transaction's one channel instruction is an open, whose memos are
/// exactly one binding memo and one other, the LCP string of H equal to the option's `extra.memo`, and whose channel
/// the configuration names. No signature is verified here.
pub fn bound(presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let (accepted, payload) = payload_of(presented, filter)?;
    if payload.get("type").and_then(Value::as_str) != Some("deposit") {
        return Err(Refusal::x402(Reason::NotAnOpening));
    }
    let tx = tx_of(payload).ok_or(Refusal::x402(Reason::PayloadMalformed))??;
    static_nonce(&tx)?;
    if channel_instruction(&tx)?.kind != CallKind::Open {
        return Err(Refusal::x402(Reason::NotAnOpening));
    }
    let (h, memo) = opening_carrier(&tx)?;
    if accepted.member("extra").and_then(|e| e.member("memo")).and_then(Value::as_str) != Some(memo) {
        return Err(svm(Reason::CarrierMismatch));
    }
    channel_of(presented)?;
    Ok(h)
}

/// The opening's memos: exactly one receiver-authorizer binding memo (its key not read) and exactly one other, which
/// carries H (`svm/memo-count` for any other count).
fn opening_carrier(tx: &Transaction) -> Result<(AtrHash, &str), Refusal> {
    let memos: Vec<_> =
        tx.instructions.iter().filter(|ix| tx.program_of(ix).is_some_and(program::is_memo_program)).collect();
    let mut others = memos.iter().filter(|ix| !ix.data.starts_with(BINDING_MEMO_PREFIX.as_bytes()));
    let (Some(other), None, 2) = (others.next(), others.next(), memos.len()) else {
        return Err(svm(Reason::MemoCount));
    };
    super::memo_carrier(&other.data)
}
