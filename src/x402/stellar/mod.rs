//! `x402/exact/stellar`: H's first 8 bytes ride as the muxed id of the option's `payTo` (an M account), which the
//! payer signs as the `to` of the Soroban `transfer` its authorization entry signs; the full H rides in the
//! challenge's `extensions.legalContext`. The buyer hands in the envelope its wallet simulated and the current
//! ledger; the payer signs the entry's preimage (`stellar-auth`), and the seller's facilitator, which sponsors the
//! fee, submits the transaction.

use ruint::aliases::U256;
use serde_json::{Map, Value};

use crate::account::Account;
use crate::codec::hex_bytes;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType};
use crate::pairing::{Pairing, Quote, Unsigned};
use crate::rail::stellar::{self, Signing, Strkey, is_network, muxed_id, read_signed_transfer, signing_for};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::{
    Served, X402Payment, accepted_by, amount_of, check_chosen, first_on_network, is_v2, keep_document,
    legal_context_of, read_with, served_if, timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/exact/stellar";
/// The pairing.
pub static PAIRING: ExactStellar = ExactStellar;

/// The inputs the build takes beside the option.
pub(crate) const INPUTS: &[InputSpec] = &[
    InputSpec::required("simulatedXdr", InputType::String, "The wallet's simulated transfer (base64 XDR).")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("currentLedger", InputType::Integer, "The current ledger."),
];

/// The most ledgers the entry's expiration may reach: a u32.
const MAX_LEDGER: u64 = u32::MAX as u64;
/// 2^127: an amount must be below it (a SEP-41 transfer takes an i128).
const I128_LIMIT: &str = "170141183460469231731687303715884105728";

/// Whether the option is this pairing's: scheme `exact` on a Stellar network, a contract asset, a G or M `payTo`,
/// and `extra.areFeesSponsored` true.
fn pairs(option: &Map<String, Value>) -> bool {
    let text = |k: &str| option.member(k).and_then(Value::as_str);
    option.member("scheme").and_then(Value::as_str) == Some("exact")
        && option.member("network").is_some_and(is_network)
        && text("asset").and_then(stellar::strkey::contract).is_some()
        && text("payTo").is_some_and(stellar::strkey::is_payee)
        && option.member("extra").and_then(|e| e.member("areFeesSponsored")) == Some(&Value::Bool(true))
}

/// The option's amount, when it is a positive i128 in canonical decimal.
fn amount_i128(option: &Map<String, Value>) -> Option<i128> {
    let amount = amount_of(option.member("amount")?)?;
    let below = amount.len() < I128_LIMIT.len() || (amount.len() == I128_LIMIT.len() && amount < I128_LIMIT);
    below.then(|| amount.parse().ok()).flatten()
}

/// The ledgers an entry of this option lives: `ceil(maxTimeoutSeconds / 5)`, for a positive timeout whose ledgers
/// fit a u32.
fn ledgers(option: &Map<String, Value>) -> Option<u64> {
    let timeout = option.member("maxTimeoutSeconds").and_then(timeout_seconds)?;
    Some(timeout.div_ceil(5)).filter(|l| *l <= MAX_LEDGER)
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || amount_i128(option).is_some() && ledgers(option).is_some())
}

/// The pairing `x402/exact/stellar`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactStellar;

/// The Stellar account a signer's CAIP-10 account names: its network and its G address (56 characters of the
/// base32 alphabet); `None` for any other account.
fn stellar_account(account: &str) -> Option<(String, String)> {
    let a = Account::parse(account)?;
    let form = a.address.len() == 56
        && a.address.starts_with('G')
        && a.address.bytes().all(|b| matches!(b, b'A'..=b'Z' | b'2'..=b'7'));
    (a.namespace == "stellar" && form).then_some((a.network, a.address))
}

/// The first option on the account's network, as the choice `{accepted, payer, simulatedXdr, currentLedger}` (the
/// gate puts `required`, the document, in).
fn choose(read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, payer) = stellar_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let mut choice = Map::with_capacity(5);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("payer".into(), Value::String(payer));
    choice.extend(stellar::buyer_inputs(ctx.inputs, "x402")?);
    Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// What the buyer would pay for a choice: the option's amount of the asset to `payTo`, once the simulated envelope
/// pays exactly that (the build's checks with no H: `payTo` must be an M account, and every other check of the build
/// holds). The entry's expiration is a ledger, so the quote names no time window.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let (_, _, accepted) = signing_of(choice, None)?;
    let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let amount = amount_i128(accepted).ok_or(Refusal::x402(Reason::OptionMalformed))?;
    let amount = U256::from(u128::try_from(amount).map_err(|_| Refusal::x402(Reason::OptionMalformed))?);
    Ok(Quote::new(amount, text("asset"), text("payTo"), text("network"), "exact"))
}

/// The unsigned payment: the entry's preimage the payer signs, and the envelope its signature completes.
#[derive(Debug)]
pub struct Authorization<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Value,
    signing: Signing,
}

impl Authorization<'_> {
    /// The preimage the payer signs (its SHA-256).
    pub fn preimage(&self) -> &[u8] {
        &self.signing.preimage
    }
}

/// A signing with the document and option it pays.
type Signed<'a> = (Signing, &'a Map<String, Value>, &'a Map<String, Value>);

/// The signing of a choice, from the buyer's simulated envelope, with the entry's expiration at `currentLedger +
/// ceil(maxTimeoutSeconds / 5)`. In the reference's order: the current ledger (`stellar/tx-malformed`) and the payer
/// (a G, C or M strkey, else `stellar/payer-mismatch`); the document and option; `payTo` an M account whose id is
/// `carrier` where one is given (`stellar/carrier-mismatch`); the envelope's form and its one transfer; that the
/// signed `to` is `payTo` (`stellar/carrier-mismatch`), that the operation invokes exactly the signed invocation
/// (`stellar/not-one-transfer`), then its asset, amount and `from` against the option's asset and amount and the
/// payer (`stellar/asset-mismatch`, `amount-mismatch`, `payer-mismatch`).
fn signing_of(choice: &Map<String, Value>, carrier: Option<u64>) -> Result<Signed<'_>, Refusal> {
    let ledger = choice.get("currentLedger").and_then(safe_int).filter(|n| *n >= 0);
    let ledger = ledger.ok_or(stellar::stellar(Reason::TxMalformed))?;
    let payer = choice.get("payer").and_then(Value::as_str).filter(|p| Strkey::parse(p).is_some());
    let payer = payer.ok_or(stellar::stellar(Reason::PayerMismatch))?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let pay_to = text("payTo");
    let id = stellar::strkey::muxed(pay_to).map(|(_, id)| id);
    if id.is_none() || carrier.is_some_and(|c| id != Some(c)) {
        return Err(stellar::stellar(Reason::CarrierMismatch));
    }
    let ledgers = ledgers(accepted).ok_or(Refusal::x402(Reason::OptionMalformed))?;
    let expiration = i128::from(ledger) + i128::from(ledgers);
    let signing = signing_for(choice.get("simulatedXdr"), Some(text("network")), expiration, false)?;
    signing.pays(pay_to, text("asset"), amount_i128(accepted), payer)?;
    Ok((signing, required, accepted))
}

/// The authorization for a choice whose option's `payTo` carries H's first 8 bytes. Nothing reaches
/// the signer unless every check holds.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Authorization<'a>, Refusal> {
    let (signing, required, _) = signing_of(choice, Some(muxed_id(h)))?;
    let accepted = choice.member("accepted").ok_or(Refusal::x402(Reason::OptionMalformed))?;
    Ok(Authorization { required, accepted, signing })
}

/// The signer's one answer as a 64-byte signature in `0x` hex, else `x402/signature-malformed`.
fn signature64(answers: &[Answer]) -> Result<Vec<u8>, Refusal> {
    let malformed = || Refusal::x402(Reason::SignatureMalformed);
    let [answer] = answers else { return Err(malformed()) };
    let bytes = answer.as_str().filter(|s| s.starts_with("0x")).and_then(hex_bytes).ok_or_else(malformed)?;
    if bytes.len() == 64 { Ok(bytes) } else { Err(malformed()) }
}

impl Unsigned for Authorization<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.signing.request()))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let transaction = self.signing.complete(&signature64(answers)?)?;
        let mut payload = Map::with_capacity(1);
        payload.insert("transaction".into(), Value::String(transaction));
        let payment = X402Payment::for_chosen(self.required, self.accepted, Value::Object(payload), chosen)?;
        Ok(Completion::Payment { payment: Box::new(RailOrder(payment)), landed: None })
    }
}

/// An x402 payment written in the member order of the reference's rail pieces (`x402Version`, `resource`,
/// `extensions`, `accepted`, `payload`), so the payment's bytes are the reference's.
struct RailOrder<'a>(X402Payment<'a>);

impl RailOrder<'_> {
    fn entries(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        let p = &self.0;
        [
            ("x402Version", Some(&p.version)),
            ("resource", p.resource),
            ("extensions", p.extensions.as_deref()),
            ("accepted", Some(p.accepted)),
            ("payload", Some(&p.payload)),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
    }
}

impl Member for RailOrder<'_> {
    fn member(&self, key: &str) -> Option<&Value> {
        self.entries().find_map(|(k, v)| (k == key).then_some(v))
    }
}

impl crate::pairing::Completed for RailOrder<'_> {
    fn write(&self) -> crate::payment::Payment {
        crate::payment::Payment::from_exact_text(crate::json::exact_object(self.entries()))
    }

    fn to_value(&self) -> Value {
        Value::Object(self.entries().map(|(k, v)| (k.to_owned(), v.clone())).collect())
    }
}

/// Reads H back: the echoed legal context's hash, once the `to` of the invocation the payer's entry signs is the
/// option's muxed `payTo` whose id is H's first 8 bytes (`stellar/no-carrier` for an unmuxed `to`,
/// `stellar/carrier-mismatch` for another) and the operation invokes exactly that (`stellar/not-one-transfer`).
/// Every check that reads no transaction comes first, as the reference orders them. The signature is not verified
/// here; the network verifies it when the entry is used.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    let accepted = accepted_by(p.member("accepted"), filter)?;
    let (h, _) = legal_context_of(p.member("extensions"))?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    let text = |k: &str| accepted.member(k).and_then(Value::as_str);
    let pay_to = text("payTo").unwrap_or_default();
    if stellar::strkey::muxed(pay_to).map(|(_, id)| id) != Some(muxed_id(&h)) {
        return Err(stellar::stellar(Reason::CarrierMismatch));
    }
    let (payment, agrees) = read_signed_transfer(payload.get("transaction"), text("network"), false)?;
    let Some(to_id) = payment.to_id else { return Err(stellar::stellar(Reason::NoCarrier)) };
    if payment.to != pay_to || to_id != muxed_id(&h) {
        return Err(stellar::stellar(Reason::CarrierMismatch));
    }
    if !agrees {
        return Err(stellar::stellar(Reason::NotOneTransfer));
    }
    Ok(h)
}

x402_pairing!(ExactStellar);
