//! The buyer pieces every MPP pairing shares (the reference's `pieces/_mpp.py`): choose the first challenge, in
//! document order, that offers the pairing on the account's network; hold the choice for the quote and the build;
//! hand the signer the request exactly as built; complete the credential from a one-value answer.
//!
//! A pairing describes itself once, as a [`Piece`], and calls it from its [`Pairing`](crate::Pairing) methods. An
//! EVM charge, e.g. `mpp/charge/evm/authorization`:
//!
//! ```ignore
//! static PIECE: Piece = Piece::evm("mpp/charge/evm/authorization", &methods::EVM_CHARGE, INPUTS);
//!
//! fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
//!     PIECE.choose(read, ctx)
//! }
//! fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
//!     PIECE.held(chosen)?.quote()
//! }
//! fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
//!     let held = PIECE.offer(chosen, h)?;            // the challenge held as bound holds it, its id carrying h
//!     let c = &held.checked;
//!     let nonce = to_hex(&challenge_hash(c.text("id"), c.text("realm")));
//!     let valid_before = c.expires_required()?;
//!     let request = /* the EIP-3009 typed data, from the EVM rail */;
//!     let source = did_pkh(chain, held.payer().unwrap_or_default());
//!     Ok(Box::new(OneAnswer::new(request, held.echo, Some(source), move |signature| {
//!         Ok(json!({"type": "authorization", "nonce": nonce, "signature": signature /* … */}))
//!     })))
//! }
//! fn bound(&self, p: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
//!     let e = echoed_for(p, ID, &methods::EVM_CHARGE)?;  // then the pairing's own check of e.payload
//! }
//! ```
//!
//! and `mpp/charge/card`, which has nothing to sign: `Piece::confirm_only("mpp/charge/card", &methods::CARD_CHARGE)`,
//! `read` is [`read`](super::read), `choose` is `PIECE.choose`, `build` refuses `mpp/no-signed-place`, and `bound`
//! is `echoed_for(..)` and then `mpp/no-signed-place`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::account::Account;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Offer, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

use super::challenge::{Checked, Method, checked_for, snapshot};
use super::credential::{Credential, credential_shape, echoed_h};
use super::network::network;
use super::values::{decimal_of, is_address_str};

/// Who pays, as a piece's choose reads the signer's account.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Payer {
    /// Nobody signs: no account is read and no network compared (card, Stripe).
    Nobody,
    /// A CAIP-10 account: of `namespace` where one is named, with an address `address` accepts; a challenge is
    /// chosen when `on` says it pays on the account's network; the address goes into the choice under `field`,
    /// where one is named.
    Account {
        /// The account's CAIP-2 namespace, e.g. `eip155`; `None` for any.
        namespace: Option<&'static str>,
        /// Whether the address is of the pairing's form.
        address: fn(&str) -> bool,
        /// The member of the choice the address fills, e.g. `from`.
        field: Option<&'static str>,
        /// Whether a challenge pays on the account's network ([`on_network`] for MPP's own reading).
        on: fn(&Value, &str) -> bool,
    },
}

/// Whether the challenge pays on `network`, as MPP's [`network`] reads it.
pub(crate) fn on_network(challenge: &Value, network: &str) -> bool {
    self::network(challenge).is_ok_and(|n| n == network)
}

/// One MPP pairing's buyer piece, described by what differs between pairings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    /// The pairing id.
    pub(crate) pairing: &'static str,
    /// The intent and method of its challenges, and their filter.
    pub(crate) method: &'static Method,
    /// Who pays.
    pub(crate) payer: Payer,
    /// The buyer's inputs the choice keeps (the pairing's [`Pairing::inputs`](crate::Pairing::inputs)).
    pub(crate) inputs: &'static [InputSpec],
    /// Whether the choice keeps the buyer's clock, `now`, as the reference's piece of the pairing does (its rail's
    /// `now`): every EVM and confirm-only piece; not a rail whose build reads no time (the Solana charges, NEAR
    /// Intents, Lightning's charge and session).
    pub(crate) now: bool,
}

impl Piece {
    /// An MPP charge on EVM (and any piece whose payer is an `eip155` account): the first challenge offering the
    /// pairing on the account's chain; the choice `{challenge, from, now, …inputs}`.
    pub(crate) const fn evm(pairing: &'static str, method: &'static Method, inputs: &'static [InputSpec]) -> Self {
        let payer =
            Payer::Account { namespace: Some("eip155"), address: is_address_str, field: Some("from"), on: on_network };
        Self { pairing, method, payer, inputs, now: true }
    }

    /// A pairing with nothing for the buyer to sign: the first challenge offering the pairing, on any account; the
    /// choice `{challenge, now}`.
    pub(crate) const fn confirm_only(pairing: &'static str, method: &'static Method) -> Self {
        Self { pairing, method, payer: Payer::Nobody, inputs: &[], now: true }
    }

    /// The first challenge of the offer, in document order, that offers the pairing ([`checked_for`]) on the
    /// account's network and has not expired at `ctx.now`, with the choice the build takes: `{challenge, <payer
    /// field>, now, …inputs}` (`now` where the piece keeps it; the buyer's inputs the piece names, where given; the
    /// gate has checked them). An account the payer does not take, or no such challenge, is `mpp/no-payable-option`;
    /// a challenge that would be chosen but for its `expires` is skipped, and when only such challenges are left the
    /// refusal is `mpp/challenge-expired`.
    pub(crate) fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::mpp(Reason::NoPayableOption);
        let Offer::Challenges(list) = &read.offer else { return Err(no_option()) };
        let account = match self.payer {
            Payer::Nobody => None,
            Payer::Account { namespace, address, field, on } => {
                let a = Account::parse(ctx.account).ok_or_else(no_option)?;
                if namespace.is_some_and(|ns| ns != a.namespace) || !address(&a.address) {
                    return Err(no_option());
                }
                Some((a, field, on))
            }
        };
        let mut expired = false;
        let mut chosen = None;
        for c in list.iter().copied() {
            let Ok(checked) = checked_for(c, self.pairing, self.method) else { continue };
            if account.as_ref().is_some_and(|(a, _, on)| !on(c, &a.network)) {
                continue;
            }
            if checked.expired_at(ctx.now) {
                expired = true;
                continue;
            }
            chosen = Some(c);
            break;
        }
        let Some(challenge) = chosen else {
            return Err(Refusal::mpp(if expired { Reason::ChallengeExpired } else { Reason::NoPayableOption }));
        };
        let mut choice = Map::new();
        choice.insert("challenge".into(), challenge.clone());
        if let Some((a, Some(field), _)) = &account {
            choice.insert((*field).into(), Value::String(a.address.clone()));
        }
        if self.now {
            choice.insert("now".into(), Value::from(ctx.now));
        }
        for spec in self.inputs {
            if let Some(v) = ctx.inputs.member(spec.name) {
                choice.insert(spec.name.into(), v.clone());
            }
        }
        Ok(Chosen {
            pairing: self.pairing.into(),
            build_input: choice,
            reference: ctx.reference.into(),
            agreement: None,
        })
    }

    /// The choice held as a bound holds the challenge a credential echoes, whatever H the build is handed: the
    /// challenge's snapshot, the size of the least credential echoing it (`mpp/credential-malformed`), the H its id
    /// and opaque carry ([`echoed_h`]), and the pairing's filter ([`checked_for`]). What the quote reads, and the
    /// first step of [`Piece::offer`]. A hand-edited choice is refused, never a panic.
    pub(crate) fn held<'a>(&self, chosen: &'a Chosen) -> Result<Held<'a>, Refusal> {
        let choice = &chosen.build_input;
        let challenge = choice.member("challenge").ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
        if !challenge.is_object() {
            return Err(Refusal::mpp(Reason::CredentialMalformed));
        }
        let echo = snapshot(challenge);
        let least = LeastCredential(&echo);
        let (own, _) = credential_shape(&least)?;
        let h = echoed_h(own)?;
        let checked = checked_for(challenge, self.pairing, self.method)?;
        Ok(Held { h, checked, echo, choice })
    }

    /// The choice the build answers: [`Piece::held`], the challenge's id carrying `h` (`mpp/id-not-ours`), and the
    /// payer's address of its form where the piece names one (`mpp/input-malformed`). The build reads the challenge
    /// from [`Held::checked`] and echoes [`Held::echo`], so a change made to the choice after confirm that the
    /// checks do not refuse still reaches the credential only as the seller's HMAC will see it.
    pub(crate) fn offer<'a>(&self, chosen: &'a Chosen, h: &AtrHash) -> Result<Held<'a>, Refusal> {
        let held = self.held(chosen)?;
        if held.h != *h {
            return Err(Refusal::mpp(Reason::IdNotOurs));
        }
        if let Payer::Account { address, field: Some(field), .. } = self.payer
            && !held.choice.member(field).and_then(Value::as_str).is_some_and(address)
        {
            return Err(Refusal::mpp(Reason::InputMalformed));
        }
        Ok(held)
    }
}

/// `{challenge, payload: {}}`, the least credential echoing a challenge, read member by member.
struct LeastCredential<'a>(&'a Value);

impl Member for LeastCredential<'_> {
    fn member(&self, key: &str) -> Option<&Value> {
        match key {
            "challenge" => Some(self.0),
            "payload" => Some(&*EMPTY_OBJECT),
            _ => None,
        }
    }
}

static EMPTY_OBJECT: std::sync::LazyLock<Value> = std::sync::LazyLock::new(|| Value::Object(Map::new()));

/// A choice held for its pairing.
#[derive(Debug, Clone)]
pub(crate) struct Held<'a> {
    /// The H the challenge's id and opaque carry.
    pub(crate) h: AtrHash,
    /// The challenge, held to the pairing's filter.
    pub(crate) checked: Checked<'a>,
    /// The challenge as the credential echoes it (MPP's members only, every value as the seller wrote it).
    pub(crate) echo: Cow<'a, Value>,
    /// The whole choice.
    pub(crate) choice: &'a Object,
}

impl Held<'_> {
    /// The payer's address the choice holds (`from`), where it holds one.
    pub(crate) fn payer(&self) -> Option<&str> {
        self.choice.member("from").and_then(Value::as_str)
    }

    /// The choice's `now`, Unix seconds.
    pub(crate) fn now(&self) -> Option<u64> {
        self.choice.member("now").and_then(Value::as_u64)
    }

    /// A buyer input the choice kept.
    pub(crate) fn input(&self, name: &str) -> Option<&Value> {
        self.choice.member(name)
    }

    /// What a charge would pay: the request's `amount` (a decimal below 2^256, else `mpp/request-malformed`) of its
    /// `currency` to its `recipient`, on the challenge's [`network`], under its intent, valid before its `expires`
    /// where it carries one. A pairing that pays otherwise (splits, a deposit) adjusts the quote it returns.
    pub(crate) fn quote(&self) -> Result<Quote, Refusal> {
        let c = &self.checked;
        let amount = decimal_of(c.request().member("amount")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
        let text = |k: &str| c.request().member(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let network = network(c.value())?;
        let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
        Ok(Quote::new(amount, text("currency"), text("recipient"), network, c.text("intent"))
            .with_window(None, valid_before))
    }
}

/// A build signed in one step: the request the signer is handed, exactly as built, and the completion of its one
/// answer (a signature, a signed transaction or a transaction hash, as text) into the credential: `payload` turns the
/// answer into the credential's payload, or refuses it (`mpp/credential-malformed` for an answer not of its form).
pub(crate) struct OneAnswer<'a, F> {
    request: SigningRequest,
    echo: Cow<'a, Value>,
    source: Option<String>,
    payload: F,
}

impl<'a, F> OneAnswer<'a, F>
where
    F: Fn(&str) -> Result<Value, Refusal> + Send + Sync,
{
    /// The build: `request` for the signer; the credential echoes `echo` ([`Held::echo`]) with `source`.
    pub(crate) fn new(request: SigningRequest, echo: Cow<'a, Value>, source: Option<String>, payload: F) -> Self {
        Self { request, echo, source, payload }
    }
}

impl<F> std::fmt::Debug for OneAnswer<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneAnswer").field("request", &self.request).field("echo", &self.echo).finish_non_exhaustive()
    }
}

impl<F> Unsigned for OneAnswer<'_, F>
where
    F: Fn(&str) -> Result<Value, Refusal> + Send + Sync,
{
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The credential for the first answer, which must be a string (`mpp/credential-malformed` otherwise), measured
    /// as bound measures it.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let answer = answers.first().and_then(Answer::as_str).ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
        let payload = (self.payload)(answer)?;
        Ok(Credential::new(Cow::Borrowed(&*self.echo), self.source.clone(), payload)?.completion())
    }
}
