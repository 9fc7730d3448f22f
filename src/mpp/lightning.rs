//! `mpp/charge/lightning` and `mpp/session/lightning` (the reference's `bindings/lightning.py`, their buyer pieces in
//! `pieces/lightning.py`, the challenge checks in `_mpp_checks.py`'s `lightning_pairings`): on the `lightning`
//! method the seller's node writes H as the description hash (`h`) of the invoice the challenge carries
//! (`methodDetails.invoice` on the charge, the session's `depositInvoice`). The payer signs nothing: its node pays
//! the invoice (`bolt11-pay`) and answers the preimage, so the money has moved before the gate reads the credential.
//! The invoice's `h` is read by the seller and its node alone, so each pairing is paid after an agreement payment.
//! On the session only the opening is the gate's: its later bearer proofs, top-ups and close carry no H.

use std::borrow::Cow;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::challenge::{Method, Parts, checked_for};
use super::credential::{Credential, echoed_for};
use super::pieces::{Payer, Piece};
use super::values::{decimal_of, has, unix_of};
use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Offer, Pairing, Quote, Unsigned,
};
use crate::rail::lightning::{
    Bolt11, Currency, Field, currency_of, decode, invoice_h, is_hex32 as is_preimage, network_of,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// The charge's id.
pub(crate) const CHARGE: &str = "mpp/charge/lightning";
/// The session's id.
pub(crate) const SESSION: &str = "mpp/session/lightning";

/// `charge` on `lightning`.
pub(crate) static CHARGE_METHOD: Method = Method { intent: "charge", method: "lightning", offers: charge_offers };
/// `session` on `lightning`.
pub(crate) static SESSION_METHOD: Method = Method { intent: "session", method: "lightning", offers: session_offers };

/// The session's one input: the invoice the seller's node refunds what is left to.
const SESSION_INPUTS: &[InputSpec] = &[InputSpec::required(
    "returnInvoice",
    InputType::String,
    "An amountless BOLT11 invoice of the buyer's node that the session's close refunds to.",
)
.with_format(InputFormat::NonEmpty)];

/// The charge.
pub(crate) static CHARGE_PAIRING: MppLightning = MppLightning {
    piece: Piece { pairing: CHARGE, method: &CHARGE_METHOD, payer: Payer::Nobody, inputs: &[], now: false },
    session: false,
};
/// The session.
pub(crate) static SESSION_PAIRING: MppLightning = MppLightning {
    piece: Piece {
        pairing: SESSION,
        method: &SESSION_METHOD,
        payer: Payer::Nobody,
        inputs: SESSION_INPUTS,
        now: false,
    },
    session: true,
};

/// MPP Lightning's network names and the BOLT11 currency of each.
const NETWORKS: [(&str, Currency); 3] =
    [("mainnet", Currency::Bc), ("signet", Currency::Tbs), ("regtest", Currency::Bcrt)];

const fn ln(reason: Reason) -> Refusal {
    Refusal::new("ln", reason)
}

fn charge_offers(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    lightning_offers(p, CHARGE)
}

fn session_offers(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    lightning_offers(p, SESSION)
}

/// The member that holds the invoice: `methodDetails.invoice` on the charge, `depositInvoice` on the session.
fn holder<'a>(p: &Parts<'a>, pairing: &str) -> (&'a Object, &'static str) {
    if pairing == CHARGE { (p.details, "invoice") } else { (p.request, "depositInvoice") }
}

/// A placed Lightning challenge's checks, in the reference's order: the payment hash, 64 lower-case hex digits in
/// `methodDetails` (charge) or the request (session) (`ln/payment-hash-required`); the invoice, a string where
/// present (`mpp/request-malformed`) and required (`ln/invoice-malformed`, after the description and network checks
/// that need no invoice); the invoice decodes, with one `h` field (`mpp/carrier-not-challenge`, the code its
/// comparison with H gives) and no `d` (`ln/description-inline`); the request has no description
/// (`ln/description-present`); the invoice's payment hash is the request's (`ln/payment-hash-mismatch`); its
/// currency is the one `methodDetails.network` names, where it names one (`ln/currency-network`); and it expires no
/// earlier than the challenge (`ln/expires-after-invoice`). `amount` and `currency` are not read.
fn lightning_offers(p: &Parts<'_>, pairing: &'static str) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let hash_holder = if pairing == CHARGE { d } else { r };
    let hash = hash_holder.member("paymentHash").and_then(Value::as_str);
    let hash = hash.filter(|h| is_preimage(h)).ok_or(ln(Reason::PaymentHashRequired))?;
    let (holder, key) = holder(p, pairing);
    if has(holder, key) && !holder.member(key).is_some_and(Value::is_string) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    let network = d.member("network").and_then(Value::as_str);
    let currency = network.and_then(|n| NETWORKS.iter().find(|(name, _)| *name == n)).map(|(_, c)| *c);
    let Some(invoice) = holder.member(key).and_then(Value::as_str) else {
        if has(r, "description") {
            return Err(ln(Reason::DescriptionPresent));
        }
        if has(d, "network") && currency.is_none() {
            return Err(ln(Reason::CurrencyNetwork));
        }
        return Err(ln(Reason::InvoiceMalformed));
    };
    let b = decode(invoice)?;
    if b.count(Field::H) != 1 {
        return Err(Refusal::mpp(Reason::CarrierNotChallenge));
    }
    if b.count(Field::D) > 0 {
        return Err(ln(Reason::DescriptionInline));
    }
    if has(r, "description") {
        return Err(ln(Reason::DescriptionPresent));
    }
    if hex::encode(b.payment_hash) != hash {
        return Err(ln(Reason::PaymentHashMismatch));
    }
    if has(d, "network") && currency != Some(b.currency) {
        return Err(ln(Reason::CurrencyNetwork));
    }
    let expires = p.challenge.member("expires").and_then(Value::as_str).and_then(unix_of);
    let ends = i128::from(b.timestamp) + i128::from(b.expiry);
    if expires.is_some_and(|e| i128::from(e) > ends) {
        return Err(ln(Reason::ExpiresAfterInvoice));
    }
    Ok(vec![pairing])
}

/// The invoice a checked challenge of the pairing carries (the filter has required it).
fn invoice_in(request: &Object, session: bool) -> &str {
    let value = if session {
        request.member("depositInvoice")
    } else {
        request.member("methodDetails").and_then(|d| d.member("invoice"))
    };
    value.and_then(Value::as_str).unwrap_or_default()
}

/// Whether the value is a BOLT11 invoice with no amount in its prefix.
fn amountless(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).and_then(|i| decode(i).ok()).is_some_and(|b| b.amount_msat.is_none())
}

/// An MPP Lightning pairing: the charge, or the session's opening.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MppLightning {
    piece: Piece,
    session: bool,
}

impl MppLightning {
    /// The invoice of the challenge the choice holds, decoded, its `h` the H the challenge's id carries
    /// (`mpp/carrier-not-challenge`), after the choice is held as bound holds it.
    fn held<'a>(&self, chosen: &'a Chosen) -> Result<(super::pieces::Held<'a>, Bolt11), Refusal> {
        let held = self.piece.held(chosen)?;
        let b = decode(invoice_in(held.checked.request(), self.session))?;
        if invoice_h(&b, Field::H).ok() != Some(held.h) {
            return Err(Refusal::mpp(Reason::CarrierNotChallenge));
        }
        Ok((held, b))
    }
}

impl Pairing for MppLightning {
    fn id(&self) -> &'static str {
        self.piece.pairing
    }

    fn public_proof(&self) -> bool {
        false
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The first challenge offering the pairing whose invoice's currency is the account's `lnbtc` network's (an
    /// account on no `lnbtc` network is `mpp/no-payable-option`), with the session's return invoice (the gate has held
    /// the inputs to [`Pairing::inputs`] first, `mpp/input-missing`, as the reference's choose does). The choice is
    /// `{challenge, returnInvoice?}`; as in the reference, the challenge's `expires` is not compared with the clock
    /// here (the node refuses an expired invoice).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::mpp(Reason::NoPayableOption);
        let account = Account::parse(ctx.account).filter(|a| a.namespace == "lnbtc").ok_or_else(no_option)?;
        let currency = currency_of(&account.network).ok_or_else(no_option)?;
        let Offer::Challenges(list) = &read.offer else { return Err(no_option()) };
        let challenge = list.iter().copied().find(|c| {
            checked_for(c, self.piece.pairing, self.piece.method).is_ok_and(|checked| {
                decode(invoice_in(checked.request(), self.session)).is_ok_and(|b| b.currency == currency)
            })
        });
        let challenge = challenge.ok_or_else(no_option)?;
        let mut choice = Map::with_capacity(2);
        choice.insert("challenge".into(), challenge.clone());
        for spec in self.piece.inputs {
            if let Some(v) = ctx.inputs.member(spec.name) {
                choice.insert(spec.name.into(), v.clone());
            }
        }
        Ok(Chosen { pairing: self.id().into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
    }

    fn inputs(&self) -> &'static [InputSpec] {
        self.piece.inputs
    }

    /// The invoice's amount in millisatoshi of `BTC` (for an invoice without one, the request's `amount` where its
    /// `currency` is `sat`, else `mpp/request-malformed`), on the first `lnbtc` network of the invoice's currency,
    /// under the challenge's intent, valid before its `expires`. The payee is the invoice's node, named only in the
    /// signature the gate does not read: the quote names none.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let (held, b) = self.held(chosen)?;
        let c = &held.checked;
        let malformed = || Refusal::mpp(Reason::RequestMalformed);
        let amount = match &b.amount_msat {
            Some(msat) => msat.parse::<U256>().map_err(|_| malformed())?,
            None if c.request().member("currency").and_then(Value::as_str) == Some("sat") => {
                let sat = decimal_of(c.request().member("amount")).ok_or_else(malformed)?;
                sat.checked_mul(U256::from(1000u32)).ok_or_else(malformed)?
            }
            None => return Err(malformed()),
        };
        let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
        Ok(Quote::new(amount, "BTC", "", network_of(b.currency), c.text("intent")).with_window(None, valid_before))
    }

    /// The invoice to pay, once the choice is held as bound holds the echoed challenge, its invoice's `h` is the H
    /// its id carries (`mpp/carrier-not-challenge`) and that H is the ATR's (`mpp/id-not-ours`); on the session, the
    /// return invoice is one without an amount (`ln/return-invoice-malformed`).
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let (held, _) = self.held(chosen)?;
        if held.h != *h {
            return Err(Refusal::mpp(Reason::IdNotOurs));
        }
        let return_invoice = held.input("returnInvoice").cloned();
        if self.session && !amountless(return_invoice.as_ref()) {
            return Err(ln(Reason::ReturnInvoiceMalformed));
        }
        let invoice = invoice_in(held.checked.request(), self.session).to_owned();
        Ok(Box::new(PayInvoice { invoice, echo: held.echo, session: self.session, return_invoice }))
    }

    /// The echoed challenge's H, held to the invoice paid: the challenge held to the pairing's filter
    /// ([`echoed_for`]), its invoice's `h` the H the id carries (`mpp/carrier-not-challenge`); on the session only
    /// the `open` action is the session's payment (`ln/no-payment-in-action`).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let e = echoed_for(presented, self.piece.pairing, self.piece.method)?;
        let b = decode(invoice_in(e.checked.request(), self.session))?;
        if invoice_h(&b, Field::H).ok() != Some(e.h) {
            return Err(Refusal::mpp(Reason::CarrierNotChallenge));
        }
        if self.session && e.payload.member("action").and_then(Value::as_str) != Some("open") {
            return Err(ln(Reason::NoPaymentInAction));
        }
        Ok(e.h)
    }

    /// The node pays the invoice before it answers: a later decline carries what moved.
    fn moves(&self, first: &SigningRequest) -> bool {
        matches!(first, SigningRequest::Bolt11Pay { .. })
    }
}

/// The invoice the node pays exactly, and the credential its preimage completes.
#[derive(Debug)]
struct PayInvoice<'a> {
    invoice: String,
    echo: Cow<'a, Value>,
    session: bool,
    return_invoice: Option<Value>,
}

impl Unsigned for PayInvoice<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Bolt11Pay { invoice: self.invoice.clone() }))
    }

    /// The credential echoing the challenge with `{preimage}` (the charge) or `{action: "open", preimage,
    /// returnInvoice}` (the session), measured as bound measures it before the preimage's form is read
    /// (`ln/preimage-malformed` unless 64 lower-case hex digits).
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let preimage = answers.first().and_then(Answer::as_str).ok_or(ln(Reason::PreimageMalformed))?;
        let mut payload = Map::with_capacity(3);
        if self.session {
            payload.insert("action".into(), "open".into());
        }
        payload.insert("preimage".into(), preimage.into());
        if self.session {
            payload.insert("returnInvoice".into(), self.return_invoice.clone().unwrap_or(Value::Null));
        }
        let credential = Credential::new(Cow::Borrowed(&*self.echo), None, payload.into())?;
        if !is_preimage(preimage) {
            return Err(ln(Reason::PreimageMalformed));
        }
        Ok(credential.completion())
    }
}
