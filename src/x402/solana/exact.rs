//! `x402/exact/solana`: H rides as the option's `extra.memo` in LCP string form, which the payer writes as the one
//! Memo instruction of the v0 transaction it signs (compute budget, `TransferChecked` from its associated token
//! account to the payee's, then the memo). The seller's facilitator, the option's `feePayer`, co-signs and sends it.

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::{PayerInput, buyer_inputs, carrier, is_solana_network, key_of, lcp_string, memo_length, solana_account};
use super::{static_nonce, svm, wire_of};
use crate::codec::{b64_encode, to_hex};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, InputType, Pairing, Quote, Unsigned};
use crate::rail::solana::program::{self, TransferChecked};
use crate::rail::solana::{Key, Version, associated_token_address, compile, decode, signed_wire};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::{
    Served, X402Payment, accepted_by, amount_of, check_chosen, first_on_network, is_v2, keep_document, read_with,
    served_if, timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/exact/solana";
/// The pairing.
pub static PAIRING: ExactSolana = ExactSolana;

/// The inputs the build takes beside the option.
pub(crate) const INPUTS: &[InputSpec] = &[
    InputSpec::required("decimals", InputType::Integer, "The mint's decimals (0 to 255)."),
    InputSpec::required("tokenProgram", InputType::String, "The mint's owner: Token's or Token-2022's program id.")
        .with_format(crate::pairing::InputFormat::NonEmpty),
    InputSpec::required("recentBlockhash", InputType::String, "A recent blockhash (base58).")
        .with_format(crate::pairing::InputFormat::NonEmpty)
        .unless_offered("extra.recentBlockhash"),
    InputSpec::optional("computeUnitLimit", InputType::Integer, "The compute unit limit (a u32); 40000 if absent."),
    InputSpec::optional(
        "computeUnitPrice",
        InputType::String,
        "The compute unit price in micro-lamports; 1 if absent.",
    )
    .with_format(crate::pairing::InputFormat::Decimal),
];

/// Whether the option is this pairing's: scheme `exact` on a Solana network, base58 keys for the asset, the payee
/// and `extra.feePayer`, and `extra.memo`, when present, a string of at most 256 UTF-8 bytes.
fn pairs(option: &Map<String, Value>) -> bool {
    if option.member("scheme").and_then(Value::as_str) != Some("exact")
        || !option.member("network").is_some_and(is_solana_network)
        || key_of(option.member("asset")).is_none()
        || key_of(option.member("payTo")).is_none()
    {
        return false;
    }
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    if key_of(extra.member("feePayer")).is_none() {
        return false;
    }
    match extra.get("memo") {
        None => true,
        Some(Value::String(memo)) => memo_length(memo) <= super::MAX_MEMO,
        Some(_) => false,
    }
}

/// The option's amount as a u64, when it is a positive decimal of at most 20 digits below 2^64.
pub(super) fn amount_u64(option: &Map<String, Value>) -> Option<u64> {
    let amount = amount_of(option.member("amount")?)?;
    if amount.len() > 20 {
        return None;
    }
    amount.parse().ok()
}

/// Whether build can pay the option: a u64 amount and a time bound.
pub(super) fn payable(option: &Map<String, Value>) -> bool {
    amount_u64(option).is_some() && option.member("maxTimeoutSeconds").and_then(timeout_seconds).is_some()
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable(option))
}

/// The pairing `x402/exact/solana`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactSolana;

x402_pairing!(ExactSolana);

/// The first option on the account's network, as the choice `{accepted, payer, decimals, tokenProgram,
/// recentBlockhash, computeUnitLimit?, computeUnitPrice?}` (the gate puts `required`, the document, in).
fn choose(read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, payer) = solana_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let mut choice = Map::with_capacity(7);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("payer".into(), Value::String(payer));
    choice.extend(buyer_inputs(accepted, ctx.inputs)?);
    Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// The choice, checked: the payer's inputs, then the document and option, in the reference's order.
#[derive(Debug, Clone)]
struct Choice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Value,
    input: PayerInput,
    decimals: u8,
    network: &'a str,
    asset: Key,
    pay_to: Key,
    fee_payer: Key,
    amount: u64,
    memo: Option<&'a str>,
}

fn choice_of(choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let input = PayerInput::of(choice, super::DEFAULT_UNIT_LIMIT)?;
    let decimals = super::decimals_of(choice)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    Ok(Choice {
        required,
        accepted: choice.member("accepted").ok_or_else(malformed)?,
        input,
        decimals,
        network: accepted.member("network").and_then(Value::as_str).unwrap_or_default(),
        asset: key_of(accepted.member("asset")).ok_or_else(malformed)?,
        pay_to: key_of(accepted.member("payTo")).ok_or_else(malformed)?,
        fee_payer: key_of(extra.member("feePayer")).ok_or_else(malformed)?,
        amount: amount_u64(accepted).ok_or_else(malformed)?,
        memo: extra.get("memo").and_then(Value::as_str),
    })
}

/// What the buyer would pay for a choice: the option's amount of the mint to payTo. The blockhash bounds the
/// transaction's life on chain; the quote names no time window. An option whose `extra.memo` is not an LCP string
/// in lower-case hex is `svm/carrier-mismatch`, as every build of it is.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(choice)?;
    // An option whose memo is no H's LCP string is one no build pays, whatever the ATR.
    let lcp = c.memo.and_then(|m| m.strip_prefix("lcp:sha256:")).and_then(AtrHash::parse);
    if lcp.is_none_or(|h| c.memo != Some(lcp_string(&h).as_str())) {
        return Err(svm(Reason::CarrierMismatch));
    }
    Ok(Quote::new(U256::from(c.amount), c.asset.to_base58(), c.pay_to.to_base58(), c.network, "exact"))
}

/// The unsigned payment: the v0 message the payer signs, and what its signature completes.
#[derive(Debug, Clone)]
pub struct Transfer<'a> {
    choice: Choice<'a>,
    message: Vec<u8>,
}

impl Transfer<'_> {
    /// The message bytes the payer signs.
    pub fn message(&self) -> &[u8] {
        &self.message
    }
}

/// The message for a choice whose option's `extra.memo` is H's LCP string (`svm/carrier-mismatch` otherwise):
/// SetComputeUnitLimit, SetComputeUnitPrice, `TransferChecked` of the amount from the payer's associated token
/// account to the payee's, and the one v3 Memo, compiled as v0 under the option's fee payer.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Transfer<'a>, Refusal> {
    let c = choice_of(choice)?;
    let memo = lcp_string(h);
    if c.memo != Some(memo.as_str()) {
        return Err(svm(Reason::CarrierMismatch));
    }
    let i = &c.input;
    let transfer = TransferChecked {
        token_program: i.token_program,
        source: associated_token_address(&i.payer, &i.token_program, &c.asset)?,
        mint: c.asset,
        destination: associated_token_address(&c.pay_to, &i.token_program, &c.asset)?,
        authority: i.payer,
        amount: c.amount,
        decimals: c.decimals,
    };
    let instructions = [
        program::set_compute_unit_limit(i.unit_limit),
        program::set_compute_unit_price(i.unit_price),
        transfer.instruction(),
        program::memo(&memo),
    ];
    let message = compile(Version::V0, &c.fee_payer, &i.recent_blockhash, &instructions)?;
    Ok(Transfer { choice: c, message })
}

impl Unsigned for Transfer<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("message".into(), Value::String(to_hex(&self.message)));
        Ok(Some(SigningRequest::SolanaMessage(fields)))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let signature = super::signature64(answers)?;
        let wire = signed_wire(&self.message, &self.choice.input.payer, &signature)?;
        let mut payload = Map::with_capacity(1);
        payload.insert("transaction".into(), Value::String(b64_encode(&wire)));
        let (required, accepted) = (self.choice.required, self.choice.accepted);
        Ok(X402Payment::for_chosen(required, accepted, Value::Object(payload), chosen)?.completion())
    }
}

/// Reads H back: the one memo of the transaction the payer signed, which must be the option's `extra.memo`, from a
/// payment whose `accepted` the filter serves. Neither signature is verified here.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    let accepted = accepted_by(p.member("accepted"), filter)?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    let tx = decode(&wire_of(payload.get("transaction"))?)?;
    static_nonce(&tx)?;
    let (h, memo) = carrier(&tx)?;
    let offered = accepted.member("extra").and_then(|e| e.member("memo")).and_then(Value::as_str);
    if offered != Some(memo) {
        return Err(svm(Reason::CarrierMismatch));
    }
    Ok(h)
}
