//! `x402/exact/xrpl`: the option's `extra.invoiceId` holds H's LCP string, and the payer signs a Payment whose
//! `InvoiceID` is that string's SHA-256 (the reference's `bindings/x402_exact_xrpl.py`). The wallet answers the
//! signed blob (hex, no `0x`); the seller's facilitator submits it.
//!
//! Beyond the reference, which reads only H back: the signed blob must be exactly the Payment built (destination,
//! amount, fee, sequence, last ledger, nothing added) and carry a single signature of its key's length, and a
//! presented blob must pay its option's destination and amount (`xrpl/tx-mismatch`, ours).

use ruint::aliases::U256;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::xrpl::signed::{payment_invoice, signed_as_built};
use crate::rail::xrpl::{self, Field, Tx, decode, fields, xrpl};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::{
    Served, X402Payment, accepted_by, check_chosen, first_on_network, is_v2, keep_document, read_with, served_if,
    timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/exact/xrpl";
/// The pairing.
pub static PAIRING: ExactXrpl = ExactXrpl;

const LCP_PREFIX: &str = "lcp:sha256:";

/// The buyer's reads of the ledger the build takes.
const INPUTS: &[InputSpec] = &[
    InputSpec::required("fee", InputType::String, "The fee in drops.").with_format(InputFormat::Decimal),
    InputSpec::optional("sequence", InputType::Integer, "The account's next sequence."),
    InputSpec::optional("ticketSequence", InputType::Integer, "The ticket, for a transfer by ticket."),
    InputSpec::required("lastLedgerSequence", InputType::Integer, "The last ledger to land in."),
];

/// Whether the option is this pairing's: scheme `exact` on an `xrpl:` network, fees not sponsored, a sequence or
/// ticket transfer, and `extra.invoiceId` absent or a string.
fn pairs(option: &Map<String, Value>) -> bool {
    let network = option.member("network").and_then(Value::as_str);
    if option.member("scheme").and_then(Value::as_str) != Some("exact") || network.and_then(xrpl::network_id).is_none()
    {
        return false;
    }
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    extra.member("areFeesSponsored") == Some(&Value::Bool(false))
        && extra.member("assetTransferMethod").is_none_or(|m| matches!(m.as_str(), Some("sequence" | "ticketSequence")))
        && extra.member("invoiceId").is_none_or(Value::is_string)
}

/// An AccountID as a number's order: 0, 1 (rippled's noAccount), or above.
fn account_rank(value: Option<&Value>) -> Option<u8> {
    let id = xrpl::account_id(value?.as_str()?)?;
    let (head, last) = id.split_at(19);
    Some(match (head.iter().all(|b| *b == 0), last) {
        (true, [0]) => 0,
        (true, [1]) => 1,
        _ => 2,
    })
}

/// Whether the build can write the option's Destination and Amount, with a positive safe-integer timeout: XRP of 1
/// to 17 digits of drops to a payee that is not AccountID 0; an issued amount (the canonical decimal of a positive
/// STAmount value) to a payee and from an `extra.issuer` that are neither AccountID 0 nor 1.
fn payable(option: &Map<String, Value>) -> bool {
    let (Some(amount), Some(asset)) =
        (option.member("amount").and_then(Value::as_str), option.member("asset").and_then(Value::as_str))
    else {
        return false;
    };
    if option.member("maxTimeoutSeconds").and_then(timeout_seconds).is_none() {
        return false;
    }
    if asset == "XRP" {
        return account_rank(option.member("payTo")).is_some_and(|r| r > 0) && drops(amount).is_some();
    }
    let issuer = option.member("extra").and_then(|e| e.member("issuer"));
    account_rank(option.member("payTo")) == Some(2)
        && account_rank(issuer) == Some(2)
        && is_issued_value(amount)
        && xrpl::values::currency_code(asset).is_some()
}

/// Drops written as 1 to 17 digits without a leading zero.
fn drops(text: &str) -> Option<u64> {
    let ok = (1..=17).contains(&text.len()) && !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| text.parse().ok()).flatten()
}

/// The canonical decimal of a positive STAmount value rippled reads exactly: no sign, exponent or leading zero, a
/// fraction that ends in a digit other than 0, at most 16 significant digits, at least 10^-81, below 2^63 as digits.
fn is_issued_value(s: &str) -> bool {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let int_ok = int == "0" || (!int.is_empty() && !int.starts_with('0') && int.bytes().all(|b| b.is_ascii_digit()));
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) && !f.ends_with('0'));
    if !int_ok || !frac_ok {
        return false;
    }
    let frac = frac.unwrap_or_default();
    let joined = format!("{int}{frac}");
    let digits = joined.trim_start_matches('0');
    if digits.is_empty() || digits.len() > 19 {
        return false;
    }
    let significant = digits.trim_end_matches('0').len();
    let value: Option<u64> = digits.parse().ok();
    let lead = i64::try_from(digits.len()).unwrap_or(0) - 1 - i64::try_from(frac.len()).unwrap_or(0);
    significant <= 16 && value.is_some_and(|v| v < 1 << 63) && lead - 15 >= -96
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable(option))
}

/// The pairing `x402/exact/xrpl`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactXrpl;

/// The XRPL account a signer's CAIP-10 account names: its network and classic address (`r` and 24 to 34 base58
/// characters).
pub(crate) fn xrpl_account(account: &str) -> Option<(String, String)> {
    let a = Account::parse(account)?;
    let form = a.address.starts_with('r')
        && (25..=35).contains(&a.address.len())
        && a.address
            .bytes()
            .all(|b| matches!(b, b'1'..=b'9' | b'A'..=b'H' | b'J'..=b'N' | b'P'..=b'Z' | b'a'..=b'k' | b'm'..=b'z'));
    (a.namespace == "xrpl" && form).then_some((a.network, a.address))
}

/// A u32 from an integral JSON number (`7.0` is 7).
pub(crate) fn u32_of(value: Option<&Value>) -> Option<u32> {
    value.and_then(safe_int).and_then(|n| u32::try_from(n).ok())
}

fn ticketed(accepted: &Map<String, Value>) -> bool {
    accepted.member("extra").and_then(|e| e.member("assetTransferMethod")).and_then(Value::as_str)
        == Some("ticketSequence")
}

/// The first option on the account's network, as the choice `{accepted, account, fee, sequence | ticketSequence,
/// lastLedgerSequence}` (the gate puts `required`, the document, in); the sequence the option's transfer method
/// names must be given (`x402/input-missing`).
fn choose(read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
    let (network, account) = xrpl_account(ctx.account).ok_or(Refusal::x402(Reason::NoPayableOption))?;
    let (_, accepted) = first_on_network(read, &network)?;
    let ticket = accepted.as_object().is_some_and(ticketed);
    let sequence = if ticket { "ticketSequence" } else { "sequence" };
    let mut choice = Map::with_capacity(6);
    choice.insert("accepted".into(), accepted.clone());
    choice.insert("account".into(), Value::String(account));
    // As the reference's inputs take them: `fee` a decimal, the sequence and last ledger non-negative integers.
    for key in ["fee", sequence, "lastLedgerSequence"] {
        let value = ctx.inputs.member(key).ok_or(Refusal::x402(Reason::InputMissing))?;
        let kind = if key == "fee" {
            value.as_str().is_some_and(crate::decimal::is_decimal)
        } else {
            safe_int(value).is_some_and(|n| n >= 0)
        };
        if !kind {
            return Err(Refusal::x402(Reason::InputMissing));
        }
        choice.insert(key.into(), value.clone());
    }
    Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
}

/// The choice, checked: the account, fee and last ledger, then the document and option, then the sequence or ticket
/// the option's transfer method names (`x402/option-malformed` for a member not of its form).
struct Choice<'a> {
    required: &'a Map<String, Value>,
    accepted_value: &'a Value,
    accepted: &'a Map<String, Value>,
    tx: Map<String, Value>,
}

fn choice_of(choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let account = choice.get("account").and_then(Value::as_str).filter(|a| xrpl::is_address(a));
    let fee = choice.get("fee").and_then(Value::as_str).filter(|f| drops(f).is_some());
    let last = u32_of(choice.get("lastLedgerSequence"));
    let (Some(account), Some(fee), Some(last)) = (account, fee, last) else { return Err(malformed()) };
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let ticket = ticketed(accepted);
    let sequence = u32_of(choice.get(if ticket { "ticketSequence" } else { "sequence" })).ok_or_else(malformed)?;
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let amount = if text("asset") == "XRP" {
        Value::String(text("amount").to_owned())
    } else {
        let mut a = Map::with_capacity(3);
        a.insert("currency".into(), Value::String(text("asset").to_owned()));
        a.insert("issuer".into(), extra.member("issuer").cloned().unwrap_or_default());
        a.insert("value".into(), Value::String(text("amount").to_owned()));
        Value::Object(a)
    };
    let mut tx = Map::with_capacity(12);
    tx.insert("TransactionType".into(), "Payment".into());
    tx.insert("Flags".into(), 0.into());
    tx.insert("Account".into(), account.into());
    tx.insert("Destination".into(), text("payTo").into());
    tx.insert("Amount".into(), amount.clone());
    if text("asset") != "XRP" {
        tx.insert("SendMax".into(), amount);
    }
    if let Some(tag) = extra.member("destinationTag") {
        tx.insert("DestinationTag".into(), u32_of(Some(tag)).ok_or_else(malformed)?.into());
    }
    // The build writes `InvoiceID` here, in the reference's member order.
    tx.insert("InvoiceID".into(), Value::Null);
    tx.insert("Fee".into(), fee.into());
    tx.insert("Sequence".into(), if ticket { 0 } else { sequence }.into());
    if ticket {
        tx.insert("TicketSequence".into(), sequence.into());
    }
    tx.insert("LastLedgerSequence".into(), last.into());
    let chain = xrpl::network_id(text("network")).ok_or_else(malformed)?;
    if chain > 1024 {
        tx.insert("NetworkID".into(), chain.into());
    }
    let accepted_value = choice.member("accepted").ok_or_else(malformed)?;
    Ok(Choice { required, accepted_value, accepted, tx })
}

/// H's LCP string: `lcp:sha256:0x` and its 64 lower-case hex digits.
pub(crate) fn lcp_string(h: &AtrHash) -> String {
    format!("{LCP_PREFIX}{}", h.to_hex())
}

/// The x402 `InvoiceID`: SHA-256 of H's LCP string.
pub fn invoice_id(h: &AtrHash) -> [u8; 32] {
    Sha256::digest(lcp_string(h).as_bytes()).into()
}

/// What the buyer would pay: the option's drops of XRP to payTo, or for an issued currency an amount the quote does
/// not name in atomic units (`asset` is `<currency>.<issuer>`), once the build's checks hold for the H the option's
/// `extra.invoiceId` names ([`build`]: `xrpl/carrier-mismatch` where it names none), so the quote refuses what the
/// build refuses.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(choice)?;
    let offered = c.accepted.member("extra").and_then(|e| e.member("invoiceId")).and_then(Value::as_str);
    let h = offered.and_then(|o| o.strip_prefix(LCP_PREFIX)).and_then(AtrHash::parse);
    build(choice, &h.ok_or(xrpl(Reason::CarrierMismatch))?)?;
    let text = |k: &str| c.accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let network = text("network");
    if text("asset") == "XRP" {
        let amount = drops(text("amount")).ok_or(Refusal::x402(Reason::OptionMalformed))?;
        return Ok(Quote::new(U256::from(amount), "XRP", text("payTo"), network, "exact"));
    }
    let issuer = c.accepted.member("extra").and_then(|e| e.member("issuer")).and_then(Value::as_str);
    let asset = format!("{}.{}", text("asset"), issuer.unwrap_or_default());
    Ok(Quote::unknown_amount(asset, text("payTo"), network, "exact"))
}

/// The Payment the wallet signs, and what its signed blob completes.
pub struct Payment<'a> {
    choice: Choice<'a>,
    unsigned: Vec<u8>,
}

impl std::fmt::Debug for Payment<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Payment").field("tx", &self.choice.tx).finish_non_exhaustive()
    }
}

/// The Payment for a choice whose option's `extra.invoiceId` is H's LCP string (`xrpl/carrier-mismatch`
/// otherwise), with `InvoiceID` its SHA-256 and `NetworkID` the network's id where it is above 1024.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Payment<'a>, Refusal> {
    let mut c = choice_of(choice)?;
    let offered = c.accepted.member("extra").and_then(|e| e.member("invoiceId")).and_then(Value::as_str);
    if offered != Some(lcp_string(h).as_str()) {
        return Err(xrpl(Reason::CarrierMismatch));
    }
    c.tx.insert("InvoiceID".into(), Value::String(hex::encode_upper(invoice_id(h))));
    let unsigned = Tx::from_json(&c.tx).map_err(|_| Refusal::x402(Reason::OptionMalformed))?.encode();
    Ok(Payment { choice: c, unsigned })
}

impl Unsigned for Payment<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("txJson".into(), Value::Object(self.choice.tx.clone()));
        Ok(Some(SigningRequest::XrplTx(fields)))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let [answer] = answers else { return Err(Refusal::x402(Reason::SignatureMalformed)) };
        let text = answer.as_str().ok_or(Refusal::x402(Reason::SignatureMalformed))?;
        let network = self.choice.accepted.member("network").and_then(Value::as_str).and_then(xrpl::network_id);
        signed_as_built(Some(text), &self.unsigned, network.unwrap_or_default())?;
        let mut payload = Map::with_capacity(1);
        payload.insert("signedTxBlob".into(), Value::String(text.to_owned()));
        let (required, accepted) = (self.choice.required, self.choice.accepted_value);
        Ok(X402Payment::for_chosen(required, accepted, Value::Object(payload), chosen)?.completion())
    }
}

/// Reads H back: the option's `extra.invoiceId` as an LCP string (`xrpl/carrier-not-lcp`), whose SHA-256 the
/// single-signed Payment's `InvoiceID` must be (`xrpl/not-payment`, `xrpl/no-invoice-id`, `xrpl/carrier-mismatch`),
/// after its `NetworkID` (`xrpl/network-mismatch`); ours: the Payment pays the option's payee and amount
/// (`xrpl/tx-mismatch`). No signature is verified here.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    let accepted = accepted_by(p.member("accepted"), filter)?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or(Refusal::x402(Reason::PayloadMalformed))?;
    let offered = accepted.member("extra").and_then(|e| e.member("invoiceId")).and_then(Value::as_str);
    let h =
        offered.and_then(|o| o.strip_prefix(LCP_PREFIX)).and_then(AtrHash::parse).ok_or(xrpl(Reason::CarrierNotLcp))?;
    let text = payload.get("signedTxBlob").and_then(Value::as_str).unwrap_or_default();
    let blob = xrpl::decode_presented(text)?;
    let fields = blob.fields();
    let network = accepted.member("network").and_then(Value::as_str).and_then(xrpl::network_id);
    if !xrpl::network_id_held(&fields, network.unwrap_or_default()) {
        return Err(xrpl(Reason::NetworkMismatch));
    }
    if payment_invoice(&fields)? != invoice_id(&h) {
        return Err(xrpl(Reason::CarrierMismatch));
    }
    let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let amount = if text("asset") == "XRP" {
        Value::String(text("amount").to_owned())
    } else {
        let issuer = accepted.member("extra").and_then(|e| e.member("issuer")).cloned().unwrap_or_default();
        serde_json::json!({"currency": text("asset"), "issuer": issuer, "value": text("amount")})
    };
    pays(&fields, text("payTo"), &amount)?;
    Ok(h)
}

/// Ours: the Payment's `Destination` is `destination` and its `Amount` is `amount` (`xrpl/tx-mismatch`).
fn pays(fields: &[Field<'_>], destination: &str, amount: &Value) -> Result<(), Refusal> {
    let to = decode::leaf_of(fields, fields::DESTINATION);
    let expected_to = xrpl::account_id(destination);
    let paid = decode::leaf_of(fields, fields::AMOUNT_FIELD);
    let expected = xrpl::tx::amount_bytes(amount);
    if expected_to.is_none()
        || to != expected_to.as_ref().map(|a| &a[..])
        || expected.is_none()
        || paid != expected.as_deref()
    {
        return Err(xrpl(Reason::TxMismatch));
    }
    Ok(())
}

x402_pairing!(ExactXrpl);
