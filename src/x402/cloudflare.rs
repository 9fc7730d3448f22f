//! `x402/batch-settlement/cloudflare`: Cloudflare's batch-settlement scheme on `cloudflare:402`. H rides the
//! challenge's `extensions.legalContext`, echoed in the payment; the agent's RFC 9421 HTTP message signature covers
//! the header that carries it and Cloudflare verifies that signature, bills the agent's registered identity off chain,
//! and publishes nothing. So the payment is no public proof of H: the buyer pays an x402 agreement payment first, and
//! the build is itself the payment (the signer is handed nothing).
//!
//! It names no chain, so it builds with the `x402` feature alone; its agreement payment is paid with a public-proof
//! x402 pairing, which today means an EIP-155 one (the `evm` feature).

use std::borrow::Cow;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use crate::hash::AtrHash;
use crate::json::Member;
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Offer, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};
use crate::x402::batch::SCHEME;
use crate::x402::{
    Served, accepted_by, amount_of, check_chosen, is_v2, keep_document, legal_context_of, read_with, served_if,
    timeout_seconds, with_payment_identifier,
};

/// The pairing id.
pub const ID: &str = "x402/batch-settlement/cloudflare";
/// The pairing.
pub static PAIRING: Cloudflare = Cloudflare;
/// Cloudflare's x402 network.
pub const NETWORK: &str = "cloudflare:402";

/// Whether the option is this pairing's: scheme `batch-settlement` on `cloudflare:402`, payTo `merchant`, a
/// three-letter currency as the asset, and `extra.version` present.
fn pairs(option: &Map<String, Value>) -> bool {
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    let currency = option
        .member("asset")
        .and_then(Value::as_str)
        .is_some_and(|a| a.len() == 3 && a.bytes().all(|b| b.is_ascii_uppercase()));
    option.member("scheme").and_then(Value::as_str) == Some(SCHEME)
        && option.member("network").and_then(Value::as_str) == Some(NETWORK)
        && option.member("payTo").and_then(Value::as_str) == Some("merchant")
        && currency
        && extra.contains_key("version")
}

/// A positive amount and a positive safe-integer `maxTimeoutSeconds`.
fn payable(option: &Map<String, Value>) -> bool {
    option.member("amount").and_then(amount_of).is_some()
        && option.member("maxTimeoutSeconds").and_then(timeout_seconds).is_some()
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable(option))
}

/// Whether the account is `cloudflare:402:` and an agent reference of 1 to 128 CAIP-10 address characters.
fn is_agent_account(account: &str) -> bool {
    account.strip_prefix("cloudflare:402:").is_some_and(|a| {
        (1..=128).contains(&a.len())
            && a.bytes().all(|b| b == b'-' || b == b'.' || b == b'%' || b.is_ascii_alphanumeric())
    })
}

/// The pairing `x402/batch-settlement/cloudflare`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cloudflare;

impl Pairing for Cloudflare {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        false
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, filter)
    }

    /// The first option on `cloudflare:402`, for an agent's `cloudflare:402:<agent>` account.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let no_option = || Refusal::x402(Reason::NoPayableOption);
        let Offer::X402 { options, .. } = &read.offer else { return Err(no_option()) };
        if !is_agent_account(ctx.account) {
            return Err(no_option());
        }
        let accepted = options.iter().find(|o| o.member("network").and_then(Value::as_str) == Some(NETWORK));
        let accepted = accepted.ok_or_else(no_option)?;
        let mut choice = Map::new();
        choice.insert("accepted".into(), (*accepted).clone());
        Ok(Chosen { pairing: ID.into(), build_input: choice, reference: ctx.reference.into(), agreement: None })
    }

    /// None: the option and the agent's account are all it takes.
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }

    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        quote(&chosen.build_input)
    }

    fn keep_document(&self, chosen: &mut Chosen, doc: Cow<'_, Value>) {
        keep_document(chosen, doc);
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(build(&chosen.build_input, h)?))
    }

    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        bound(presented)
    }
}

/// The payment, built: nothing to sign.
#[derive(Debug, Clone, PartialEq)]
pub struct Payment {
    payment: Value,
}

impl Payment {
    /// The payment as built, before the payment identifier is written.
    pub fn payment(&self) -> &Value {
        &self.payment
    }
}

/// The choice, checked: the challenge, its option, and the hash its legal context advertises.
struct Choice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Map<String, Value>,
    advertised: AtrHash,
}

/// The checks the build makes on a choice `{required, accepted}` that need no H: the option is one the challenge
/// offers and the filter serves, and the challenge's legal context is readable.
fn choice_of(choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let (advertised, _) = legal_context_of(required.member("extensions"))?;
    Ok(Choice { required, accepted, advertised })
}

/// What the buyer would pay for a choice: the option's amount of its currency to its payee, billed off chain. No
/// window: nothing is signed. An amount of 2^256 or more, which the build copies as written, cannot be quoted:
/// `x402/option-malformed`.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(choice)?;
    let text = |k: &str| c.accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let amount = U256::from_str_radix(text("amount"), 10).map_err(|_| Refusal::x402(Reason::OptionMalformed))?;
    Ok(Quote::new(amount, text("asset"), text("payTo"), text("network"), SCHEME))
}

/// Builds the payment from a choice `{required, accepted}` when the challenge's legal context carries H
/// (`x402/legal-context-conflict` otherwise): the option's amount and asset, the option, and the challenge's
/// extensions echoed.
pub fn build(choice: &Map<String, Value>, h: &AtrHash) -> Result<Payment, Refusal> {
    let Choice { required, accepted, advertised } = choice_of(choice)?;
    if advertised != *h {
        return Err(Refusal::x402(Reason::LegalContextConflict));
    }
    let mut payload = Map::new();
    payload.insert("amount".into(), accepted.member("amount").cloned().unwrap_or(Value::Null));
    payload.insert("asset".into(), accepted.member("asset").cloned().unwrap_or(Value::Null));
    let mut payment = Map::new();
    payment.insert("x402Version".into(), Value::from(2));
    payment.insert("payload".into(), Value::Object(payload));
    payment.insert("accepted".into(), Value::Object(accepted.clone()));
    payment.insert("extensions".into(), required.member("extensions").cloned().unwrap_or(Value::Null));
    Ok(Payment { payment: Value::Object(payment) })
}

impl Unsigned for Payment {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(None)
    }

    fn complete(&self, _answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let payment = with_payment_identifier(self.payment.clone(), chosen)?;
        Ok(Completion::Payment { payment: Box::new(payment), landed: None })
    }
}

/// Reads H back: the echoed `extensions.legalContext` hash, from a payment whose `accepted` the filter serves. The
/// agent's HTTP message signature is not verified here.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    accepted_by(p.member("accepted"), filter)?;
    legal_context_of(p.member("extensions")).map(|(h, _)| h)
}
