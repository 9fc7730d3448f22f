//! MPP's XRPL pairings (the reference's `bindings/mpp_charge_xrpl.py` and `mpp_session_xrpl.py`):
//! `mpp/charge/xrpl`, whose Payment carries H itself as its `InvoiceID` (the request's `methodDetails.invoiceId`, 64
//! upper-case hex digits), and the channel `mpp/session/xrpl` ([`session`]). The filters of both methods are written
//! here ([`filter`]), on the XRPL rail ([`crate::rail::xrpl`]).
//!
//! Beyond the reference, which reads the wallet's blob for its network only: the signed blob must be exactly the
//! Payment built, with one signature of its key's length (`xrpl/tx-mismatch`, `xrpl/signature-malformed`, ours).

mod filter;
pub(crate) mod session;
mod session_channel;

use std::borrow::Cow;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::credential::{Credential, echoed_for};
use super::pieces::{Payer, Piece, on_network};
use crate::hash::AtrHash;
use crate::json::{Member, Object, safe_int};
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::xrpl::signed::{payment_invoice, signed_as_built};
use crate::rail::xrpl::{self, Tx, decode_presented, network_id_held, xrpl};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

pub(crate) use filter::XRPL_CHARGE;

/// `mpp/charge/xrpl`'s id.
pub(crate) const CHARGE: &str = "mpp/charge/xrpl";

/// The buyer's reads of the ledger the build takes.
const INPUTS: &[InputSpec] = &[
    InputSpec::required("fee", InputType::String, "The fee in drops.").with_format(InputFormat::Decimal),
    InputSpec::required("sequence", InputType::Integer, "The account's next sequence."),
    InputSpec::required("lastLedgerSequence", InputType::Integer, "The last ledger to land in."),
];

/// `mpp/charge/xrpl`.
pub(crate) static CHARGE_PAIRING: XrplCharge = XrplCharge;

/// The XRPL account's piece: the choice `{challenge, account, fee, sequence, lastLedgerSequence}`.
pub(crate) const fn piece(pairing: &'static str, method: &'static super::challenge::Method) -> Piece {
    let payer =
        Payer::Account { namespace: Some("xrpl"), address: filter::is_classic, field: Some("account"), on: on_network };
    Piece { pairing, method, payer, inputs: INPUTS, now: false }
}

static PIECE: Piece = piece(CHARGE, &XRPL_CHARGE);

/// The pairing `mpp/charge/xrpl`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct XrplCharge;

/// H as MPP XRPL carries it: its 64 hex digits in upper case, without `0x`.
pub(crate) fn mpp_invoice_id(h: &AtrHash) -> String {
    hex::encode_upper(h.as_bytes())
}

/// An `xrpl:<id>` network's id, for a network MPP XRPL names.
fn network_number(network: &str) -> Result<u32, Refusal> {
    xrpl::network_id(network).ok_or(xrpl(Reason::NetworkMalformed))
}

/// A drops amount from the buyer: 0 or 1 to 19 digits without a leading zero (`mpp/input-malformed`).
fn fee_ok(text: &str) -> bool {
    (1..=19).contains(&text.len())
        && (text == "0" || !text.starts_with('0'))
        && text.bytes().all(|b| b.is_ascii_digit())
}

/// A u32 from an integral JSON number.
fn u32_of(value: Option<&Value>) -> Option<u32> {
    value.and_then(safe_int).and_then(|n| u32::try_from(n).ok())
}

/// The request's amount as the Payment writes it: drops for `XRP`, an MPT amount, or an issued amount.
fn amount_of(r: &Object) -> Value {
    let value = r.member("amount").cloned().unwrap_or_default();
    let currency = r.member("currency");
    if currency.and_then(Value::as_str) == Some("XRP") {
        return value;
    }
    let c = currency.and_then(Value::as_object);
    let mut out = Map::with_capacity(3);
    if let Some(mpt) = c.and_then(|c| c.get("mpt_issuance_id")) {
        out.insert("mpt_issuance_id".into(), mpt.clone());
    } else {
        out.insert("currency".into(), c.and_then(|c| c.get("currency")).cloned().unwrap_or_default());
        out.insert("issuer".into(), c.and_then(|c| c.get("issuer")).cloned().unwrap_or_default());
    }
    out.insert("value".into(), value);
    Value::Object(out)
}

/// The Payment for the wallet to sign, and what its signed blob completes.
#[derive(Debug)]
pub(crate) struct ChargePayment<'a> {
    tx: Map<String, Value>,
    unsigned: Vec<u8>,
    network: u32,
    echo: Cow<'a, Value>,
}

impl XrplCharge {
    /// The Payment: Destination the request's recipient, Amount from its currency (drops, an issued amount with
    /// SendMax equal to it, or an MPT amount), `InvoiceID` the request's `invoiceId`, which must be this H
    /// (`xrpl/carrier-mismatch`), the request's tags, the buyer's fee, sequence and last ledger
    /// (`mpp/input-malformed` for one not of its form, and ours: an account whose checksum fails), no `NetworkID`
    /// (every network MPP XRPL names has an id of at most 1024). Ours: a request whose amount the codec cannot
    /// write (an issued value past 16 significant digits, drops past 10^17) is `mpp/request-malformed`.
    fn build_payment<'a>(&self, chosen: &'a Chosen, h: &AtrHash) -> Result<ChargePayment<'a>, Refusal> {
        let held = PIECE.offer(chosen, h)?;
        let (r, d) = (held.checked.request(), held.checked.details());
        let invoice = mpp_invoice_id(h);
        if !d.member("invoiceId").and_then(Value::as_str).is_some_and(|i| i.eq_ignore_ascii_case(&invoice)) {
            return Err(xrpl(Reason::CarrierMismatch));
        }
        let network = network_number(&super::network(held.checked.value())?)?;
        let bad = || Refusal::mpp(Reason::InputMalformed);
        let account = held.input("account").and_then(Value::as_str).filter(|a| xrpl::is_address(a)).ok_or_else(bad)?;
        let fee = held.input("fee").and_then(Value::as_str).filter(|f| fee_ok(f)).ok_or_else(bad)?;
        let sequence = u32_of(held.input("sequence")).ok_or_else(bad)?;
        let last = u32_of(held.input("lastLedgerSequence")).ok_or_else(bad)?;
        let amount = amount_of(r);
        let mut tx = Map::with_capacity(12);
        tx.insert("TransactionType".into(), "Payment".into());
        tx.insert("Flags".into(), 0.into());
        tx.insert("Account".into(), account.into());
        tx.insert("Destination".into(), r.member("recipient").cloned().unwrap_or_default());
        tx.insert("Amount".into(), amount.clone());
        if r.member("currency").and_then(Value::as_str) != Some("XRP")
            && !amount.as_object().is_some_and(|a| a.contains_key("mpt_issuance_id"))
        {
            tx.insert("SendMax".into(), amount);
        }
        for (member, field) in [("destinationTag", "DestinationTag"), ("sourceTag", "SourceTag")] {
            if let Some(tag) = d.member(member) {
                tx.insert(field.into(), u32_of(Some(tag)).ok_or(Refusal::mpp(Reason::RequestMalformed))?.into());
            }
        }
        tx.insert("InvoiceID".into(), invoice.into());
        tx.insert("Fee".into(), fee.into());
        tx.insert("Sequence".into(), sequence.into());
        tx.insert("LastLedgerSequence".into(), last.into());
        let unsigned = Tx::from_json(&tx).map_err(|_| Refusal::mpp(Reason::RequestMalformed))?.encode();
        Ok(ChargePayment { tx, unsigned, network, echo: held.echo })
    }

    /// H from the echoed challenge, once the signed Payment's `InvoiceID` is the request's `invoiceId` and equals
    /// that H: the blob of a `transaction` credential, or for a `hash` credential the blob read beside it
    /// (`xrpl/read-first` without one; `mpp/credential-type` for another type); decoded (`xrpl/blob-malformed`,
    /// `xrpl/multisigned`); its `NetworkID` the network's (`xrpl/network-mismatch`); a Payment (`xrpl/not-payment`)
    /// with an `InvoiceID` (`xrpl/no-invoice-id`) that is the request's (`xrpl/carrier-mismatch`) and the
    /// challenge's H (`mpp/carrier-not-challenge`). No signature is verified here.
    fn bound_h(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let e = echoed_for(presented, CHARGE, &XRPL_CHARGE)?;
        let blob = match e.payload.member("type").and_then(Value::as_str) {
            Some("transaction") => {
                e.payload.member("blob").and_then(Value::as_str).ok_or(xrpl(Reason::BlobMalformed))?
            }
            Some("hash") => {
                landed.and_then(|l| l.member("blob")).and_then(Value::as_str).ok_or(xrpl(Reason::ReadFirst))?
            }
            _ => return Err(Refusal::mpp(Reason::CredentialType)),
        };
        let blob = decode_presented(blob)?;
        let fields = blob.fields();
        let network = network_number(&super::network::xrpl_network(e.checked.details())?)?;
        if !network_id_held(&fields, network) {
            return Err(xrpl(Reason::NetworkMismatch));
        }
        let invoice = payment_invoice(&fields)?;
        let requested =
            e.checked.details().member("invoiceId").and_then(Value::as_str).and_then(|i| hex::decode(i).ok());
        if requested.as_deref() != Some(invoice) {
            return Err(xrpl(Reason::CarrierMismatch));
        }
        if invoice != e.h.as_bytes() {
            return Err(Refusal::mpp(Reason::CarrierNotChallenge));
        }
        Ok(e.h)
    }
}

impl Unsigned for ChargePayment<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("txJson".into(), Value::Object(self.tx.clone()));
        Ok(Some(SigningRequest::XrplTx(fields)))
    }

    /// The credential `{challenge, payload: {type: "transaction", blob}}`: measured as bound measures it
    /// (`mpp/credential-malformed`), then the blob held to the Payment built ([`signed_as_built`]).
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let text = answers.first().and_then(Answer::as_str).ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), "transaction".into());
        payload.insert("blob".into(), Value::String(text.to_owned()));
        let credential = Credential::new(Cow::Borrowed(&*self.echo), None, payload.into())?;
        signed_as_built(Some(text), &self.unsigned, self.network)?;
        Ok(credential.completion())
    }
}

impl Pairing for XrplCharge {
    fn id(&self) -> &'static str {
        CHARGE
    }

    fn public_proof(&self) -> bool {
        crate::registry::entry(CHARGE).is_some_and(|e| e.public_proof)
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The piece's choice, then the buyer's reads of the ledger as the reference's inputs take them
    /// (`mpp/input-missing` for one absent or not of its kind): `fee` a decimal, `sequence` and `lastLedgerSequence`
    /// non-negative integers. The build holds them to their XRPL forms (`mpp/input-malformed`).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let chosen = PIECE.choose(read, ctx)?;
        let uint = |k: &str| ctx.inputs.member(k).and_then(safe_int).is_some_and(|n| n >= 0);
        let fee = ctx.inputs.member("fee").and_then(Value::as_str).is_some_and(crate::decimal::is_decimal);
        if !fee || !uint("sequence") || !uint("lastLedgerSequence") {
            return Err(Refusal::mpp(Reason::InputMissing));
        }
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        INPUTS
    }

    /// The request's drops of XRP to its recipient; for an issued currency or an MPT, an amount the quote does not
    /// name in atomic units (`asset` is `<currency>.<issuer>` or the MPT issuance id); once the build's checks hold
    /// for the challenge's H, so the quote refuses what the build refuses.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let held = PIECE.held(chosen)?;
        self.build_payment(chosen, &held.h)?;
        let r = held.checked.request();
        let network = super::network(held.checked.value())?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
        let recipient = text(r.member("recipient"));
        let valid_before = held.checked.expires().and_then(|e| u64::try_from(e).ok());
        let currency = r.member("currency");
        let quote = if currency.and_then(Value::as_str) == Some("XRP") {
            let drops = text(r.member("amount")).parse::<u64>().map_err(|_| Refusal::mpp(Reason::RequestMalformed))?;
            Quote::new(U256::from(drops), "XRP", recipient, network, "charge")
        } else {
            let c = currency.and_then(Value::as_object);
            let asset = match c.and_then(|c| c.get("mpt_issuance_id")) {
                Some(mpt) => text(Some(mpt)),
                None => {
                    format!("{}.{}", text(c.and_then(|c| c.get("currency"))), text(c.and_then(|c| c.get("issuer"))))
                }
            };
            Quote::unknown_amount(asset, recipient, network, "charge")
        };
        Ok(quote.with_window(None, valid_before))
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(self.build_payment(chosen, h)?))
    }

    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        self.bound_h(presented, landed)
    }
}
