//! `mpp/charge/card`, and the pairing type it shares with the two Stripe pairings ([`super::stripe`]): an MPP
//! challenge whose payment carries no public proof of H. The seller's server binds H in the challenge's id and
//! `opaque` (and places it in the method's reference field: the request's `externalId` for a card, the
//! PaymentIntent's `metadata` for Stripe), but nothing the buyer's card or Stripe token signs carries it. So the buyer
//! pays an agreement payment first, at the URL the challenge's `opaque` names, and the gate confirms only: the build
//! refuses `mpp/no-signed-place` (the signer is handed nothing), and the credential is the buyer's own to write with
//! its card or Stripe token, echoing the challenge as the choice holds it.

use serde_json::Value;

use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};

use super::credential::echoed_for;
use super::methods;
use super::pieces::Piece;
use super::values::decimal_of;

/// The pairing id.
pub(crate) const ID: &str = "mpp/charge/card";
/// The pairing.
pub(crate) static PAIRING: ConfirmOnly = ConfirmOnly::new(Piece::confirm_only(ID, &methods::CARD_CHARGE));

/// An MPP pairing with nothing for the buyer to sign (card, Stripe): the first challenge, in document order, that
/// offers the pairing and has not expired, on any account; paid after an agreement payment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConfirmOnly {
    piece: Piece,
}

impl ConfirmOnly {
    /// The pairing its piece describes.
    pub(crate) const fn new(piece: Piece) -> Self {
        Self { piece }
    }
}

/// The network a quote of a challenge that names none is on: `mpp:` and the method (`mpp:card`, `mpp:stripe`), so a
/// spend policy can list card and Stripe payments as it lists a chain.
pub(crate) fn method_network(method: &str) -> String {
    format!("mpp:{method}")
}

impl Pairing for ConfirmOnly {
    fn id(&self) -> &'static str {
        self.piece.pairing
    }

    fn public_proof(&self) -> bool {
        false
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The first challenge offering the pairing that has not expired at `ctx.now`; the account is not read (nothing
    /// is signed). The choice is `{challenge, now}`.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        self.piece.choose(read, ctx)
    }

    /// None: the challenge is all the choice takes.
    fn inputs(&self) -> &'static [InputSpec] {
        self.piece.inputs
    }

    /// The request's `amount` (a decimal below 2^256, else `mpp/request-malformed`), in the minor unit of its
    /// `currency` (`usd`), to its `recipient` (for Stripe, which names none, the seller's `methodDetails.networkId`
    /// profile), on `mpp:<method>`, under the challenge's intent (`charge`, `subscription`: one period), valid before
    /// its `expires`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let held = self.piece.held(chosen)?;
        let c = &held.checked;
        let request = c.request();
        let amount = decimal_of(request.member("amount")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        let currency = text(request.member("currency")).unwrap_or_default();
        let payee = text(request.member("recipient")).or_else(|| text(c.details().member("networkId")));
        let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
        Ok(Quote::new(amount, currency, payee.unwrap_or_default(), method_network(c.text("method")), c.text("intent"))
            .with_window(None, valid_before))
    }

    /// Nothing the buyer signs has a place for H: once the choice is held as a credential echoing it would be (its
    /// id and `opaque` carrying `h`), `mpp/no-signed-place`, and the gate hands the signer nothing.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        self.piece.offer(chosen, h)?;
        Err(Refusal::mpp(Reason::NoSignedPlace))
    }

    /// The echoed challenge is checked as this pairing's ([`echoed_for`]); then `mpp/no-signed-place`: nothing the
    /// buyer signed carries H, whatever its payload holds.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        echoed_for(presented, self.piece.pairing, self.piece.method)?;
        Err(Refusal::mpp(Reason::NoSignedPlace))
    }
}
