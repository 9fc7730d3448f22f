//! `mpp/charge/nearintents`: the seller places H, as an LCP string, in the request's `externalId`, inside the
//! challenge its server binds (the id and `opaque` carry H too). The buyer deposits on the challenge's
//! `originNetwork` and presents the deposit's hash (a push credential of type `hash`); nothing the deposit signs
//! carries H, so the buyer pays an agreement payment first and the gate confirms only: the build refuses
//! `mpp/nothing-to-sign` and the signer is handed nothing. The bound reads H from the echoed `externalId` of a hash
//! credential whose challenge names that H.

use serde_json::Value;

use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};

use super::credential::echoed_for;
use super::legal::from_lcp_string;
use super::methods::NEAR_INTENTS_CHARGE;
use super::pieces::{Payer, Piece, on_network};

/// The pairing id.
pub(crate) const ID: &str = "mpp/charge/nearintents";
/// The pairing.
pub(crate) static PAIRING: NearIntents = NearIntents;

/// The payer: an account of any namespace whose network is the challenge's `originNetwork` (what the buyer deposits
/// on); the choice keeps no address of it.
static PIECE: Piece = Piece {
    pairing: ID,
    method: &NEAR_INTENTS_CHARGE,
    payer: Payer::Account { namespace: None, address: any_address, field: None, on: on_network },
    inputs: &[],
    now: false,
};

/// Any address CAIP-10 allows: the deposit is the buyer's own, and nothing here is built from it.
fn any_address(address: &str) -> bool {
    !address.is_empty()
}

/// The refusal of this pairing's own namespace, `near/…`.
const fn near(reason: Reason) -> Refusal {
    Refusal::new("near", reason)
}

/// The pairing `mpp/charge/nearintents`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NearIntents;

impl Pairing for NearIntents {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        false
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The first challenge offering the pairing whose `originNetwork` is the account's network and which has not
    /// expired at `ctx.now`. The choice is `{challenge}`, as the reference's: nothing is built from it.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        PIECE.choose(read, ctx)
    }

    /// None: the deposit is made outside the gate.
    fn inputs(&self) -> &'static [InputSpec] {
        PIECE.inputs
    }

    /// What the buyer deposits: the request's `amount` of its `currency` (a CAIP-19 asset as the request writes it)
    /// to its `recipient` (the deposit address), on its `originNetwork`, under `charge`, valid before its `expires`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        PIECE.held(chosen)?.quote()
    }

    /// The deposit is not built here: once the choice is held as a credential echoing it would be (its id and
    /// `opaque` carrying `h`), `mpp/nothing-to-sign`.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        PIECE.offer(chosen, h)?;
        Err(Refusal::mpp(Reason::NothingToSign))
    }

    /// H from the echoed challenge ([`echoed_for`]) of a credential of type `hash` (`near/not-hash-credential`
    /// otherwise), whose request's `externalId` is an LCP string (`near/memo-not-lcp`) naming the H the challenge's
    /// id and `opaque` carry (`mpp/carrier-not-challenge`). The deposit's hash itself is not read: the seller looks
    /// the deposit up.
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let e = echoed_for(presented, ID, &NEAR_INTENTS_CHARGE)?;
        if e.payload.member("type").and_then(Value::as_str) != Some("hash") {
            return Err(near(Reason::NotHashCredential));
        }
        let carried = e.checked.request().member("externalId").and_then(Value::as_str).and_then(from_lcp_string);
        let carried = carried.ok_or(near(Reason::MemoNotLcp))?;
        if carried != e.h {
            return Err(Refusal::mpp(Reason::CarrierNotChallenge));
        }
        Ok(e.h)
    }
}
