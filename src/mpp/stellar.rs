//! `mpp/charge/stellar` (the reference's `bindings/mpp_charge_stellar.py`): the request's `recipient` is the seller's
//! muxed account whose 8-byte id is H's first 8 bytes, which the payer signs as the `to` of the Soroban `transfer`
//! its authorization entry signs; the full H rides in the challenge's id and opaque. The buyer hands in the envelope
//! its wallet simulated and the current ledger; the payer signs the entry's preimage (`stellar-auth`). Where the
//! request's `feePayer` is true the envelope's source is the all-zeros account, which the seller's server replaces.
//!
//! The method's filter (`charge` on `stellar`) is written here, beside the build, on the Stellar rail.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::challenge::{Method, Parts};
use super::credential::{Credential, echoed_for};
use super::pieces::{Held, Payer, Piece, on_network};
use crate::codec::hex_bytes;
use crate::hash::AtrHash;
use crate::json::{Member, Object, safe_int};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, Pairing, Quote, Unsigned};
use crate::pairing::{InputFormat, InputSpec, InputType};
use crate::rail::stellar::strkey::{self, Strkey};
use crate::rail::stellar::{
    self, MAX_XDR, Payment, Signing, muxed_id, read_signed_transfer, read_source_transfer, signing_for, signing_input,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/charge/stellar";
/// The Stellar charge: `charge` on `stellar`.
pub(crate) static STELLAR_CHARGE: Method = Method { intent: "charge", method: "stellar", offers: stellar_charge };

/// The inputs the build takes beside the challenge.
const INPUTS: &[InputSpec] = &[
    InputSpec::required("simulatedXdr", InputType::String, "The wallet's simulated transfer (base64 XDR).")
        .with_format(InputFormat::NonEmpty),
    InputSpec::required("currentLedger", InputType::Integer, "The current ledger."),
];

/// 2^127: a request's amount must be below it (a SEP-41 transfer takes an i128).
const I128_LIMIT: u128 = 1 << 127;

/// A G account as the choice takes the payer: 56 characters of the base32 alphabet, the first `G`.
fn is_stellar_address(text: &str) -> bool {
    text.len() == 56 && text.starts_with('G') && text.bytes().all(|b| matches!(b, b'A'..=b'Z' | b'2'..=b'7'))
}

/// `mpp/charge/stellar`.
pub(crate) static PAIRING: StellarCharge = StellarCharge {
    piece: Piece {
        pairing: ID,
        method: &STELLAR_CHARGE,
        payer: Payer::Account {
            namespace: Some("stellar"),
            address: is_stellar_address,
            field: Some("payer"),
            on: on_network,
        },
        inputs: INPUTS,
        now: true,
    },
};

/// The request's amount as an integer below 2^127: a decimal of 1 to 78 digits.
fn amount_of(request: &Object) -> Option<i128> {
    let text = request.member("amount").and_then(Value::as_str).filter(|a| crate::decimal::is_decimal(a))?;
    let digits = text.trim_start_matches('0');
    let n: u128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    (n < I128_LIMIT).then(|| i128::try_from(n).ok()).flatten()
}

/// `charge` on `stellar`: `methodDetails.network` `stellar:pubnet` or `stellar:testnet`, `amount` a decimal below
/// 2^127, `currency` a C contract, `recipient` a G account or its muxed M form, each strkey canonical with its
/// checksum, and `feePayer` absent or a boolean; else `stellar/option-malformed`.
fn stellar_charge(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    let malformed = || Err(stellar::stellar(Reason::OptionMalformed));
    if !d.member("network").is_some_and(stellar::is_network) {
        return malformed();
    }
    let text = |k: &str| r.member(k).and_then(Value::as_str).unwrap_or_default();
    if amount_of(r).is_none() || strkey::contract(text("currency")).is_none() || !strkey::is_payee(text("recipient")) {
        return malformed();
    }
    if d.member("feePayer").is_some_and(|f| !f.is_boolean()) {
        return malformed();
    }
    Ok(vec![ID])
}

/// The Stellar charge pairing.
#[derive(Debug)]
pub(crate) struct StellarCharge {
    piece: Piece,
}

impl Pairing for StellarCharge {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The piece's choice `{challenge, payer, now, simulatedXdr, currentLedger}`, the inputs present and of their
    /// forms (`mpp/input-missing`).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let chosen = self.piece.choose(read, ctx)?;
        stellar::buyer_inputs(ctx.inputs, "mpp")?;
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        INPUTS
    }

    /// The piece's quote, once the simulated envelope pays exactly the request (the build's checks, but for H's).
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        self.authorization(chosen, None)?;
        self.piece.held(chosen)?.quote()
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        if self.piece.held(chosen)?.h != *h {
            return Err(Refusal::mpp(Reason::IdNotOurs));
        }
        Ok(Box::new(self.authorization(chosen, Some(muxed_id(h)))?))
    }

    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        self.bound_h(presented, landed)
    }
}

/// The preimage the payer signs, and the credential its signature completes.
#[derive(Debug)]
pub(crate) struct Authorization<'a> {
    signing: Signing,
    echo: Cow<'a, Value>,
}

impl StellarCharge {
    /// The authorization from the buyer's simulated envelope, with the entry's expiration at `currentLedger +
    /// ceil((expires - now) / 5)`. In the reference's order (the build has checked the challenge's id carries H,
    /// `mpp/id-not-ours`): the challenge held; the current ledger and the clock (`stellar/tx-malformed`); the payer, a G, C or M strkey
    /// (`stellar/payer-mismatch`); `expires` (`mpp/expires-required`); the envelope's form; the recipient an M account
    /// whose id is `carrier`, where one is given (`stellar/carrier-mismatch`); the envelope's one transfer; then the signed `to`, the
    /// operation's agreement, the asset, the amount and the payer, as `x402/exact/stellar` checks them.
    fn authorization<'a>(&self, chosen: &'a Chosen, carrier: Option<u64>) -> Result<Authorization<'a>, Refusal> {
        let (held, ledger, now, payer, expires) = self.checked(chosen)?;
        let choice = &chosen.build_input;
        let c = &held.checked;
        let network = c.details().member("network").and_then(Value::as_str);
        let ledgers = (i128::from(expires) - i128::from(now)).max(0);
        let expiration = i128::from(ledger) + (ledgers + 4) / 5;
        let text = |k: &str| c.request().member(k).and_then(Value::as_str).unwrap_or_default();
        signing_input(choice.get("simulatedXdr"), network, expiration)?;
        let recipient = text("recipient");
        let id = strkey::muxed(recipient).map(|(_, id)| id);
        if id.is_none() || carrier.is_some_and(|c| id != Some(c)) {
            return Err(stellar::stellar(Reason::CarrierMismatch));
        }
        let fee_payer = c.details().member("feePayer") == Some(&Value::Bool(true));
        let signing = signing_for(choice.get("simulatedXdr"), network, expiration, fee_payer)?;
        signing.pays(recipient, text("currency"), amount_of(c.request()), payer)?;
        Ok(Authorization { signing, echo: held.echo })
    }

    /// The choice's members every use of it checks first, in the reference's order: the challenge held, the
    /// current ledger and the clock (`stellar/tx-malformed`), the payer (a G, C or M strkey, else
    /// `stellar/payer-mismatch`) and `expires` (`mpp/expires-required`).
    fn checked<'a>(&self, chosen: &'a Chosen) -> Result<(Held<'a>, i64, i64, &'a str, i64), Refusal> {
        let held = self.piece.held(chosen)?;
        let choice = &chosen.build_input;
        let ledger = choice.get("currentLedger").and_then(safe_int).filter(|n| *n >= 0);
        let now = choice.get("now").and_then(safe_int);
        let (Some(ledger), Some(now)) = (ledger, now) else { return Err(stellar::stellar(Reason::TxMalformed)) };
        let payer = choice.get("payer").and_then(Value::as_str).filter(|p| Strkey::parse(p).is_some());
        let payer = payer.ok_or(stellar::stellar(Reason::PayerMismatch))?;
        let expires = held.checked.expires_required()?;
        Ok((held, ledger, now, payer, expires))
    }

    /// H from the echoed challenge, once the `to` of the invocation the payer's entry signs is the request's muxed
    /// recipient whose id is H's first 8 bytes, and the operation invokes exactly that. A `transaction` credential's
    /// envelope carries exactly one address-credential entry of the payer; a `hash` credential's landed envelope (read
    /// beside it, `stellar/read-first` without one) the first that carries the operation's call, or, with no address
    /// entry of the payer, a transfer the payer authorized as the transaction's source account (its hash then 64 hex
    /// digits, `mpp/credential-malformed` otherwise). Under `feePayer` true a `hash` credential is
    /// `mpp/credential-type`, as is any type but those two. The signature is not verified here.
    fn bound_h(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let e = echoed_for(presented, ID, &STELLAR_CHARGE)?;
        let d = e.checked.details();
        let network = d.member("network").and_then(Value::as_str).filter(|n| stellar::Network::parse(n).is_some());
        let network = network.ok_or(stellar::stellar(Reason::OptionMalformed))?;
        let recipient = e.checked.request().member("recipient").and_then(Value::as_str).unwrap_or_default();
        if !strkey::is_payee(recipient) {
            return Err(stellar::stellar(Reason::OptionMalformed));
        }
        let kind = e.payload.member("type").and_then(Value::as_str);
        let is_hash = kind == Some("hash");
        if is_hash && d.member("feePayer") == Some(&Value::Bool(true)) {
            return Err(Refusal::mpp(Reason::CredentialType));
        }
        let xdr = match kind {
            Some("transaction") => e
                .payload
                .member("transaction")
                .filter(|t| t.is_string())
                .ok_or(stellar::stellar(Reason::TxMalformed))?,
            Some("hash") => {
                let read = landed.and_then(|l| l.member("transaction")).filter(|t| t.is_string());
                read.ok_or(stellar::stellar(Reason::ReadFirst))?
            }
            _ => return Err(Refusal::mpp(Reason::CredentialType)),
        };
        if strkey::muxed(recipient).map(|(_, id)| id) != Some(muxed_id(&e.h)) {
            return Err(stellar::stellar(Reason::CarrierMismatch));
        }
        let (payment, agrees): (Payment, bool) = match read_signed_transfer(Some(xdr), Some(network), is_hash) {
            Err(r) if is_hash && r == stellar::stellar(Reason::NoAddressAuth) => {
                if d.member("feePayer").is_some_and(|f| !f.is_boolean()) {
                    return Err(stellar::stellar(Reason::OptionMalformed));
                }
                match read_source_transfer(Some(xdr), Some(network)) {
                    Ok(p) => {
                        let hash = e.payload.member("hash").and_then(Value::as_str);
                        if !hash.is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())) {
                            return Err(Refusal::mpp(Reason::CredentialMalformed));
                        }
                        (p, true)
                    }
                    Err(_) => return Err(r),
                }
            }
            other => other?,
        };
        let Some(to_id) = payment.to_id else { return Err(stellar::stellar(Reason::NoCarrier)) };
        if payment.to != recipient || to_id != muxed_id(&e.h) {
            return Err(stellar::stellar(Reason::CarrierMismatch));
        }
        if !agrees {
            return Err(stellar::stellar(Reason::NotOneTransfer));
        }
        Ok(e.h)
    }
}

impl Unsigned for Authorization<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.signing.request()))
    }

    /// The credential `{challenge, payload: {type: "transaction", transaction}}`: the envelope with the payer's
    /// signature, measured as bound measures a credential (`mpp/credential-malformed`) before the envelope's bound
    /// (`stellar/tx-too-large`). An answer that is not a 64-byte signature in `0x` hex is `mpp/credential-malformed`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::mpp(Reason::CredentialMalformed);
        let answer = answers.first().and_then(Answer::as_str).filter(|s| s.starts_with("0x"));
        let bytes = answer.and_then(hex_bytes).filter(|b| b.len() == 64).ok_or_else(malformed)?;
        let transaction = self.signing.written(&bytes)?;
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), "transaction".into());
        let too_large = transaction.len() > MAX_XDR;
        payload.insert("transaction".into(), Value::String(transaction));
        let credential = Credential::new(Cow::Borrowed(&*self.echo), None, payload.into())?;
        if too_large {
            return Err(stellar::stellar(Reason::TxTooLarge));
        }
        Ok(credential.completion())
    }
}
