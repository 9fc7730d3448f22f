//! `x402/upto/solana`: a one-request payment channel. The payer signs the v0 transaction that opens a channel of the
//! payment-channels program escrowing the option's amount (the most the seller may settle), and H rides as the
//! option's `extra.memo` in LCP string form, the transaction's one Memo instruction. The seller's facilitator, the
//! option's `feePayer`, co-signs and sends the opening, and settles what was used in a later transaction.

use ruint::aliases::U256;
use serde_json::{Map, Value, json};

use super::exact::{amount_u64, payable};
use super::{Form, PayerInput, carrier, is_solana_network, key_of, lcp_string, memo_length, solana_account};
use super::{decimal_u64, signature64, static_nonce, svm, take_inputs, wire_of};
use crate::codec::{b64_encode, to_hex};
use crate::hash::AtrHash;
use crate::json::{MAX_SAFE_INTEGER, Member, safe_int};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, InputType, Pairing, Quote, Unsigned};
use crate::rail::solana::channel::{CallKind, ChannelCall, Open, Parties, channel_address, channel_instruction};
use crate::rail::solana::{Key, Version, compile, decode, program, signed_wire};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::{
    Served, X402Payment, accepted_by, check_chosen, first_on_network, is_v2, keep_document, read_with, served_if,
    timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/upto/solana";
/// The pairing.
pub static PAIRING: UptoSolana = UptoSolana;

/// The compute unit limit the opening sets when the buyer names none.
const DEFAULT_UNIT_LIMIT: u32 = 200_000;

/// The inputs the build takes beside the option.
pub(crate) const INPUTS: &[InputSpec] = &[
    InputSpec::optional("nonce", InputType::String, "The channel's salt, a u64 in decimal; random if absent.")
        .with_format(crate::pairing::InputFormat::Decimal),
    InputSpec::required("openSlot", InputType::String, "A recent slot (a u64 in decimal) the channel address names.")
        .with_format(crate::pairing::InputFormat::Decimal),
    InputSpec::required("tokenProgram", InputType::String, "The mint's owner: Token's or Token-2022's program id.")
        .with_format(crate::pairing::InputFormat::NonEmpty),
    InputSpec::required("recentBlockhash", InputType::String, "A recent blockhash (base58).")
        .with_format(crate::pairing::InputFormat::NonEmpty),
    InputSpec::optional("computeUnitLimit", InputType::Integer, "The compute unit limit (a u32); 200000 if absent."),
    InputSpec::optional(
        "computeUnitPrice",
        InputType::String,
        "The compute unit price in micro-lamports; 1 if absent.",
    )
    .with_format(crate::pairing::InputFormat::Decimal),
];

/// Whether the option is this pairing's: scheme `upto` on a Solana network, base58 keys for the asset, the payee,
/// `extra.feePayer` and `extra.receiverAuthorizer`, a positive `extra.withdrawDelay`, Token's or Token-2022's
/// `extra.tokenProgram`, `extra.memo` when present a string of at most 256 UTF-8 bytes, and `extra.paymentFlow`
/// absent or `escrow`.
fn pairs(option: &Map<String, Value>) -> bool {
    if option.member("scheme").and_then(Value::as_str) != Some("upto")
        || !option.member("network").is_some_and(is_solana_network)
        || key_of(option.member("asset")).is_none()
        || key_of(option.member("payTo")).is_none()
    {
        return false;
    }
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    let delay = extra.get("withdrawDelay").and_then(safe_int);
    let memo_ok = match extra.get("memo") {
        None => true,
        Some(Value::String(memo)) => memo_length(memo) <= super::MAX_MEMO,
        Some(_) => false,
    };
    key_of(extra.get("feePayer")).is_some()
        && key_of(extra.get("receiverAuthorizer")).is_some()
        && delay.is_some_and(|d| d > 0)
        && key_of(extra.get("tokenProgram")).is_some_and(|k| program::is_token_program(&k))
        && memo_ok
        && extra.get("paymentFlow").is_none_or(|f| f.as_str() == Some("escrow"))
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable(option))
}

/// The pairing `x402/upto/solana`.
#[derive(Debug, Clone, Copy, Default)]
pub struct UptoSolana;

x402_pairing!(UptoSolana);

/// 8 fresh random bytes as a u64: the channel's salt when the buyer gives none. When the operating system's source
/// fails, a hash of the payment's own fresh id and the time stands in: the salt must be unique, not secret.
fn random_nonce(reference: &str, now: u64) -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new().chain_update(reference).chain_update(now.to_le_bytes()).finalize();
        for (b, d) in bytes.iter_mut().zip(digest.iter()) {
            *b = *d;
        }
    }
    u64::from_le_bytes(bytes)
}

/// The first option on the account's network, as the choice `{accepted, payer, now, nonce, openSlot, tokenProgram,
/// recentBlockhash, computeUnitLimit?, computeUnitPrice?}` (the gate puts `required`, the document, in). A nonce or
/// open slot past u64 is `x402/input-missing`.
fn choose(read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, payer) = solana_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let given = take_inputs(
        ctx.inputs,
        &[
            ("nonce", true, Form::Decimal),
            ("openSlot", false, Form::Decimal),
            ("tokenProgram", false, Form::NonEmpty),
            ("recentBlockhash", false, Form::NonEmpty),
            ("computeUnitLimit", true, Form::Uint),
            ("computeUnitPrice", true, Form::Decimal),
        ],
    )?;
    let missing = || Refusal::x402(Reason::InputMissing);
    if let Some(nonce) = given.get("nonce") {
        decimal_u64(Some(nonce)).flatten().ok_or_else(missing)?;
    }
    decimal_u64(given.get("openSlot")).flatten().ok_or_else(missing)?;
    let mut choice = Map::with_capacity(10);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("payer".into(), Value::String(payer));
    choice.insert("now".into(), Value::from(ctx.now));
    choice.extend(given);
    if !choice.contains_key("nonce") {
        choice.insert("nonce".into(), Value::String(random_nonce(ctx.reference, ctx.now).to_string()));
    }
    Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// The choice, checked in the reference's order: the nonce and open slot as decimal strings
/// (`x402/choice-malformed`), the payer's inputs, the nonce, open slot (at most 2^53 - 1, as the payment carries it
/// as a JSON number) and time (`svm/input-malformed`), then the document and option, then the choice's token program
/// against the option's.
#[derive(Debug, Clone)]
struct Choice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Value,
    input: PayerInput,
    now: u64,
    nonce: u64,
    open_slot: u64,
    network: &'a str,
    asset: Key,
    pay_to: Key,
    fee_payer: Key,
    signer: Key,
    grace_period: Option<u32>,
    amount: u64,
    timeout: u64,
    valid_after: Option<i64>,
    memo: Option<&'a str>,
    offered_program: Option<Key>,
}

fn choice_of(choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let revive = || Refusal::x402(Reason::ChoiceMalformed);
    let bad = || svm(Reason::InputMalformed);
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let nonce = decimal_u64(choice.get("nonce")).ok_or_else(revive)?;
    let open_slot = decimal_u64(choice.get("openSlot")).ok_or_else(revive)?;
    let input = PayerInput::of(choice, DEFAULT_UNIT_LIMIT)?;
    let now = choice.get("now").and_then(safe_int).and_then(|n| u64::try_from(n).ok()).ok_or_else(bad)?;
    let nonce = nonce.ok_or_else(bad)?;
    let open_slot = open_slot.filter(|s| *s <= MAX_SAFE_INTEGER as u64).ok_or_else(bad)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    let timeout = accepted.member("maxTimeoutSeconds").and_then(timeout_seconds).ok_or_else(malformed)?;
    Ok(Choice {
        required,
        accepted: choice.member("accepted").ok_or_else(malformed)?,
        input,
        now,
        nonce,
        open_slot,
        network: accepted.member("network").and_then(Value::as_str).unwrap_or_default(),
        asset: key_of(accepted.member("asset")).ok_or_else(malformed)?,
        pay_to: key_of(accepted.member("payTo")).ok_or_else(malformed)?,
        fee_payer: key_of(extra.get("feePayer")).ok_or_else(malformed)?,
        signer: key_of(extra.get("receiverAuthorizer")).ok_or_else(malformed)?,
        grace_period: extra.get("withdrawDelay").and_then(safe_int).and_then(|d| u32::try_from(d).ok()),
        amount: amount_u64(accepted).ok_or_else(malformed)?,
        timeout,
        valid_after: extra.get("validAfter").and_then(safe_int),
        memo: extra.get("memo").and_then(Value::as_str),
        offered_program: key_of(extra.get("tokenProgram")),
    })
}

impl Choice<'_> {
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

    /// The first second the payment is valid: the option's `extra.validAfter` when it is a safe integer, else now.
    fn valid_after(&self) -> i64 {
        self.valid_after.unwrap_or(self.now as i64)
    }

    /// When the payment expires: now plus the option's `maxTimeoutSeconds`.
    fn expires_at(&self) -> u64 {
        self.now.saturating_add(self.timeout)
    }
}

/// What the buyer would pay for a choice: at most the option's amount of the mint to payTo, all of it locked in the
/// channel the opening makes, from the option's `extra.validAfter` (else now) until now plus `maxTimeoutSeconds`. An
/// option whose `extra.memo` is not H's LCP string in lower-case hex for any H is `svm/carrier-mismatch`, as every
/// build of it is.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(choice)?;
    let lcp = c.memo.and_then(|m| m.strip_prefix("lcp:sha256:")).and_then(AtrHash::parse);
    c.carries(&lcp.ok_or(svm(Reason::CarrierMismatch))?)?;
    let valid_after = u64::try_from(c.valid_after()).ok();
    let quote = Quote::new(U256::from(c.amount), c.asset.to_base58(), c.pay_to.to_base58(), c.network, "upto");
    Ok(quote.with_deposit(U256::from(c.amount)).with_window(valid_after, Some(c.expires_at())))
}

/// The unsigned opening: the v0 message the payer signs, and what its signature completes.
#[derive(Debug, Clone)]
pub struct Opening<'a> {
    choice: Choice<'a>,
    channel: Key,
    message: Vec<u8>,
}

impl Opening<'_> {
    /// The message bytes the payer signs.
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// The channel the opening makes.
    pub fn channel(&self) -> Key {
        self.channel
    }
}

/// The opening for a choice whose option's `extra.memo` is H's LCP string (`svm/carrier-mismatch` otherwise):
/// SetComputeUnitLimit, SetComputeUnitPrice, the payment-channels `open` of a channel whose salt is the nonce,
/// escrowing the option's amount for payTo with the option's receiverAuthorizer as the voucher signer and its
/// withdrawDelay as the grace period, then the one v3 Memo, compiled as v0 under the option's fee payer.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Opening<'a>, Refusal> {
    let c = choice_of(choice)?;
    let memo = c.carries(h)?;
    let i = &c.input;
    let channel = channel_address(&i.payer, &c.fee_payer, &c.asset, &c.signer, c.nonce, c.open_slot)?;
    let open = Open {
        channel,
        signer: c.signer,
        salt: c.nonce,
        deposit: c.amount,
        grace_period: c.grace_period.ok_or(svm(Reason::InputMalformed))?,
        open_slot: c.open_slot,
        recipient: c.pay_to,
    };
    let parties = Parties { payer: i.payer, fee_payer: c.fee_payer, mint: c.asset, token_program: i.token_program };
    let instructions = [
        program::set_compute_unit_limit(i.unit_limit),
        program::set_compute_unit_price(i.unit_price),
        ChannelCall::Open(open).instruction(&parties)?,
        program::memo(&memo),
    ];
    let message = compile(Version::V0, &c.fee_payer, &i.recent_blockhash, &instructions)?;
    Ok(Opening { choice: c, channel, message })
}

impl Unsigned for Opening<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("message".into(), Value::String(to_hex(&self.message)));
        Ok(Some(SigningRequest::SolanaMessage(fields)))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let signature = signature64(answers)?;
        let c = &self.choice;
        let wire = signed_wire(&self.message, &c.input.payer, &signature)?;
        let amount = c.amount.to_string();
        let payload = json!({
            "from": c.input.payer.to_base58(),
            "maxAmount": amount,
            "expiresAt": c.expires_at(),
            "validAfter": c.valid_after(),
            "nonce": c.nonce.to_string(),
            "openSlot": c.open_slot,
            "channelId": self.channel.to_base58(),
            "deposit": amount,
            "authorizedSigner": c.signer.to_base58(),
            "openTransaction": b64_encode(&wire),
        });
        Ok(X402Payment::for_chosen(c.required, c.accepted, payload, chosen)?.completion())
    }
}

/// Reads H back: the one memo of the opening the payer signed, which must be the option's `extra.memo`, from a
/// payment whose `accepted` the filter serves; a transaction whose one payment-channels instruction is not an `open`,
/// or that has none, is `x402/not-an-opening`. Neither signature is verified here.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    let accepted = accepted_by(p.member("accepted"), filter)?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    let tx = decode(&wire_of(payload.get("openTransaction"))?)?;
    static_nonce(&tx)?;
    let (h, memo) = carrier(&tx)?;
    let offered = accepted.member("extra").and_then(|e| e.member("memo")).and_then(Value::as_str);
    if offered != Some(memo) {
        return Err(svm(Reason::CarrierMismatch));
    }
    match channel_instruction(&tx) {
        Ok(read) if read.kind == CallKind::Open => Ok(h),
        _ => Err(Refusal::x402(Reason::NotAnOpening)),
    }
}
