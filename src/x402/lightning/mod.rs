//! The x402 pairings on Lightning (the reference's `bindings/lightning.py` and `pieces/lightning.py`): the option is
//! an exact payment of a BOLT11 invoice in `extra.invoice`, whose description hash is the request hash of the buyer's
//! own request (its `request` module). On `x402/exact/lnbtc` the seller's node writes H as the invoice's `m` field
//! and signs it; on `x402/exact/lnbtc/invoice-named` the invoice carries no H and the ATR's own `x402` slot names
//! the invoice ([`named`]). The payer signs nothing: its node pays the invoice (`bolt11-pay`) and answers the
//! preimage, so the money has moved before the gate reads the payment back. Neither puts H anywhere public, so each
//! is paid after an agreement payment. No signature is verified here.

pub mod named;
pub(crate) mod request;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputSpec, InputType, Pairing, Quote, Unsigned, parse_atomic,
};
use crate::rail::lightning::{Bolt11, Currency, Field, decode, invoice_h};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::{DOCUMENT, Served, X402Payment, accepted_by, check_chosen, is_v2, read_with, timeout_seconds};

/// `x402/exact/lnbtc`'s id.
pub const LNBTC: &str = "x402/exact/lnbtc";
/// `x402/exact/lnbtc/invoice-named`'s id.
pub const NAMED: &str = "x402/exact/lnbtc/invoice-named";

/// `x402/exact/lnbtc`.
pub static LNBTC_PAIRING: Lnbtc = Lnbtc { named: false };
/// `x402/exact/lnbtc/invoice-named`.
pub static NAMED_PAIRING: Lnbtc = Lnbtc { named: true };

/// The networks x402 lnbtc names, and the BOLT11 currency of each.
const NETWORKS: [(&str, Currency); 2] = [
    ("lnbtc:000000000019d6689c085ae165831e93", Currency::Bc),
    ("lnbtc:000000000933ea01ad0ee984209779ba", Currency::Tb),
];

/// The one input: the request the buyer is about to send, whose request hash the invoice must carry.
const INPUTS: &[InputSpec] = &[InputSpec::required(
    "request",
    InputType::Object,
    "The buyer's request: http {method, url, body?, headers?} or mcp {server, name, arguments?, meta?}.",
)];

const fn ln(reason: Reason) -> Refusal {
    Refusal::new("ln", reason)
}

/// What the invoice's `m` field must be: H, any one 32-byte hash (the filter of `x402/exact/lnbtc`), or absent
/// (`x402/exact/lnbtc/invoice-named`).
#[derive(Debug, Clone, Copy)]
enum Metadata<'a> {
    Is(&'a AtrHash),
    Any,
    Absent,
}

fn network_currency(option: &Map<String, Value>) -> Option<Currency> {
    let network = option.member("network").and_then(Value::as_str)?;
    NETWORKS.iter().find(|(n, _)| *n == network).map(|(_, c)| *c)
}

/// An exact option on a Lightning network with an invoice string: the part of the filter both pairings share.
fn is_ln_option(o: &Map<String, Value>) -> bool {
    o.member("scheme").and_then(Value::as_str) == Some("exact")
        && network_currency(o).is_some()
        && o.member("extra").and_then(|e| e.member("invoice")).is_some_and(Value::is_string)
}

/// The invoice of an option [`is_ln_option`] takes.
fn invoice_of(o: &Map<String, Value>) -> &str {
    o.member("extra").and_then(|e| e.member("invoice")).and_then(Value::as_str).unwrap_or_default()
}

/// The option checks both pairings make, in the reference's order: the invoice decodes (its refusal); its `m` is
/// one 32-byte field (`ln/no-metadata`, `ln/field-repeated`, `ln/field-length`) carrying H where one is given
/// (`ln/no-metadata`), or absent (`ln/not-this-pairing`); its `h` is one 32-byte field equal to `extra.requestHash`
/// (`ln/request-hash-mismatch`); its currency is the option's network's (`ln/currency-network`); and the option's own
/// fields are of their form (`x402/option-malformed`): `paymentFlow` upfront, asset `BTC`, a 33-byte node id
/// `payTo`, a positive amount of at most 78 digits (past 2^256, as the reference reads it) and a timeout.
fn check_option(o: &Map<String, Value>, m: Metadata<'_>) -> Result<Bolt11, Refusal> {
    let b = decode(invoice_of(o))?;
    match m {
        Metadata::Absent if b.count(Field::M) > 0 => return Err(ln(Reason::NotThisPairing)),
        Metadata::Absent => {}
        Metadata::Any => drop(invoice_h(&b, Field::M)?),
        Metadata::Is(h) if invoice_h(&b, Field::M)? != *h => return Err(ln(Reason::NoMetadata)),
        Metadata::Is(_) => {}
    }
    let d = invoice_h(&b, Field::H)?;
    let extra = o.member("extra");
    let request_hash = extra.and_then(|e| e.member("requestHash")).and_then(Value::as_str);
    if !request_hash.is_some_and(|r| request::is_request_hash(r) && hex::encode(d.as_bytes()) == r) {
        return Err(ln(Reason::RequestHashMismatch));
    }
    if network_currency(o) != Some(b.currency) {
        return Err(ln(Reason::CurrencyNetwork));
    }
    let pay_to = o.member("payTo").and_then(Value::as_str);
    let amount = o.member("amount").and_then(Value::as_str);
    let fields_ok = extra.and_then(|e| e.member("paymentFlow")).and_then(Value::as_str) == Some("upfront")
        && o.member("asset").and_then(Value::as_str) == Some("BTC")
        && pay_to.is_some_and(|p| p.len() == 66 && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        && amount.is_some_and(is_amount)
        && o.member("maxTimeoutSeconds").and_then(timeout_seconds).is_some();
    if !fields_ok {
        return Err(Refusal::x402(Reason::OptionMalformed));
    }
    Ok(b)
}

/// An option's amount as the reference reads it: a positive integer in canonical decimal (digits, the first not `0`)
/// of at most 78 digits, so up to 10^78 - 1, past 2^256 - 1 (the option's amount is the seller's statement; the node
/// pays the invoice's own amount). [`Pairing::quote`] reads it into a U256, and gives no quote past that.
fn is_amount(text: &str) -> bool {
    crate::decimal::is_decimal(text) && !text.starts_with('0')
}

fn served(o: &Map<String, Value>, m: Metadata<'_>) -> Served {
    if !is_ln_option(o) {
        return Served::NotMine;
    }
    match check_option(o, m) {
        Ok(_) => Served::Yes,
        Err(r) => Served::Refused(r),
    }
}

/// `x402/exact/lnbtc`'s filter: the checks with the `m` field read but not compared, so an invoice without one is
/// `ln/no-metadata`.
fn lnbtc_filter(o: &Map<String, Value>) -> Served {
    served(o, Metadata::Any)
}

/// `x402/exact/lnbtc/invoice-named`'s filter: the checks with no `m` field allowed (`ln/not-this-pairing`).
fn named_filter(o: &Map<String, Value>) -> Served {
    served(o, Metadata::Absent)
}

/// The filter a build holds the chosen option to before its own checks: any Lightning option.
fn any_ln(o: &Map<String, Value>) -> Served {
    if is_ln_option(o) { Served::Yes } else { Served::NotMine }
}

/// An x402 Lightning pairing: `named` is `x402/exact/lnbtc/invoice-named`.
#[derive(Debug, Clone, Copy)]
pub struct Lnbtc {
    named: bool,
}

impl Lnbtc {
    fn filter(&self) -> crate::x402::Filter {
        if self.named { named_filter } else { lnbtc_filter }
    }

    fn metadata<'h>(&self, h: Option<&'h AtrHash>) -> Metadata<'h> {
        match (self.named, h) {
            (true, _) => Metadata::Absent,
            (false, Some(h)) => Metadata::Is(h),
            (false, None) => Metadata::Any,
        }
    }

    /// The chosen option held: the document and option as every x402 build holds them, then [`check_option`].
    fn held<'a>(
        &self,
        chosen: &'a Chosen,
        h: Option<&AtrHash>,
    ) -> Result<(&'a Map<String, Value>, &'a Value), Refusal> {
        let choice = &chosen.build_input;
        let (required, accepted) = check_chosen(choice.member(DOCUMENT), choice.member("accepted"), any_ln)?;
        check_option(accepted, self.metadata(h))?;
        Ok((required, choice.member("accepted").unwrap_or(&Value::Null)))
    }
}

impl Pairing for Lnbtc {
    fn id(&self) -> &'static str {
        if self.named { NAMED } else { LNBTC }
    }

    fn public_proof(&self) -> bool {
        false
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, self.filter())
    }

    /// The first option on the account's `lnbtc` network whose request hash, recomputed from the buyer's own request
    /// (the `request` input), equals both the option's `extra.requestHash` and the invoice's description hash. The
    /// choice is `{accepted}` (the gate puts the document in).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::x402(Reason::NoPayableOption);
        let account = Account::parse(ctx.account).filter(|a| a.namespace == "lnbtc").ok_or_else(no_option)?;
        let (required, accepted) = crate::x402::first_on_network(read, &account.network)?;
        let request = ctx.inputs.member("request").ok_or(Refusal::x402(Reason::InputMissing))?;
        let url = required.member("resource").and_then(|r| r.member("url"));
        request::check_request_hash(accepted, url, request)?;
        let mut choice = Map::with_capacity(1);
        choice.insert("accepted".into(), accepted.clone());
        Ok(Chosen { pairing: self.id().into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
    }

    fn inputs(&self) -> &'static [InputSpec] {
        INPUTS
    }

    /// The option's amount (millisatoshi, as the invoice's) of `BTC` to its `payTo` node, on its network, scheme
    /// `exact`. The invoice's expiry is the node's to enforce; the quote names no window. An amount the option may
    /// carry past 2^256 - 1 (its filter takes 78 digits, as the reference's) is no quote (`x402/option-malformed`).
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let (_, accepted) = self.held(chosen, None)?;
        let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
        let amount: U256 = parse_atomic(text("amount")).ok_or(Refusal::x402(Reason::OptionMalformed))?;
        Ok(Quote::new(amount, text("asset"), text("payTo"), text("network"), "exact"))
    }

    fn keep_document(&self, chosen: &mut Chosen, doc: std::borrow::Cow<'_, Value>) {
        crate::x402::keep_document(chosen, doc);
    }

    /// The invoice to pay, once the option passes the checks with H: its `m` is H (on `x402/exact/lnbtc`), or it has
    /// none and the ATR's own `x402` slot names it (`ln/invoice-not-named`, on the invoice-named pairing).
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let (required, accepted) = self.held(chosen, Some(h))?;
        let invoice = accepted.member("extra").and_then(|e| e.member("invoice")).and_then(Value::as_str);
        let invoice = invoice.unwrap_or_default().to_owned();
        if self.named && !named::atr_names_invoice(atr, &invoice) {
            return Err(ln(Reason::InvoiceNotNamed));
        }
        Ok(Box::new(Pay { invoice, required, accepted }))
    }

    /// `x402/exact/lnbtc`: the `m` field of the invoice paid, from an option the filter serves. The invoice-named
    /// pairing: the echoed legal context's H (`ln/no-legal-context`), the paid invoice carrying none.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        if !is_v2(presented) {
            return Err(Refusal::x402(Reason::NotV2));
        }
        let accepted = accepted_by(presented.member("accepted"), self.filter())?;
        if !self.named {
            return invoice_h(&decode(invoice_of(accepted))?, Field::M);
        }
        let info = presented
            .member("extensions")
            .and_then(|e| e.member(crate::x402::LEGAL_CONTEXT))
            .and_then(Value::as_object)
            .and_then(|lc| lc.member("info"));
        info.and_then(crate::x402::legal_context_info).map(|(h, _)| h).ok_or(ln(Reason::NoLegalContext))
    }

    /// The node pays the invoice before it answers: a later decline carries what moved.
    fn moves(&self, first: &SigningRequest) -> bool {
        matches!(first, SigningRequest::Bolt11Pay { .. })
    }
}

/// The invoice the payer's node pays exactly, and the payment its preimage completes.
#[derive(Debug)]
struct Pay<'a> {
    invoice: String,
    required: &'a Map<String, Value>,
    accepted: &'a Value,
}

use crate::rail::lightning::is_hex32 as is_preimage;

impl Unsigned for Pay<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Bolt11Pay { invoice: self.invoice.clone() }))
    }

    /// The payment `{…, payload: {preimage}}` for a preimage of 64 lower-case hex digits (`ln/preimage-malformed`
    /// otherwise), with the payment identifier where the document advertises it.
    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let preimage = answers.first().and_then(Answer::as_str).filter(|p| is_preimage(p));
        let preimage = preimage.ok_or(ln(Reason::PreimageMalformed))?;
        let mut payload = Map::with_capacity(1);
        payload.insert("preimage".into(), Value::String(preimage.to_owned()));
        Ok(X402Payment::for_chosen(self.required, self.accepted, Value::Object(payload), chosen)?.completion())
    }
}
