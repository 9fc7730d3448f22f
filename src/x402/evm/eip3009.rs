//! `x402/exact/eip155/eip3009`: H is the nonce of an EIP-3009 `TransferWithAuthorization`, so the token contract
//! itself records it (the `AuthorizationUsed` event) when the payment settles.

use std::borrow::Cow;

use alloy_primitives::U256;
use serde_json::{Map, Value};

pub use crate::rail::evm::Eip712Parts;

use crate::codec::is_hex;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::pairing::{Advertised, ChooseContext, Chosen, Completion, InputSpec, Pairing, Quote, Unsigned};
use crate::rail::evm::eip3009::{Eip3009Token, eip3009_message, eip3009_typed_data};
use crate::rail::evm::{chain_id_of, is_address, uint256_of};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest, TypedData};
use crate::x402::{
    Served, X402Payment, accepted_by, amount_of, check_chosen, is_v2, keep_document, read_with, served_if,
    timeout_seconds,
};

/// The pairing id.
pub const ID: &str = "x402/exact/eip155/eip3009";
/// The pairing.
pub static PAIRING: Eip3009 = Eip3009;

const MIN_SIGNATURE_BYTES: usize = 65;
const MAX_SIGNATURE_BYTES: usize = 8192;

/// Whether the option is this pairing's: scheme `exact`, an EIP-155 network, EIP-3009 (or no method named) and a
/// known payment flow.
fn pairs(option: &Map<String, Value>) -> bool {
    if option.member("scheme").and_then(Value::as_str) != Some("exact")
        || chain_id_of(option.member("network").unwrap_or(&Value::Null)).is_none()
    {
        return false;
    }
    let extra = match option.member("extra") {
        None => return true,
        Some(Value::Object(extra)) => extra,
        Some(_) => return false,
    };
    if extra.member("assetTransferMethod").is_some_and(|m| m != "eip3009") {
        return false;
    }
    !extra.member("paymentFlow").is_some_and(|f| f != "authorization" && f != "upfront")
}

/// Whether build can turn the option into typed data: the token's EIP-712 name and version, the asset and payee
/// addresses, a positive amount below 2^256 and a time bound.
fn payable(option: &Map<String, Value>) -> bool {
    let Some(extra) = option.member("extra").and_then(Value::as_object) else { return false };
    let non_empty = |k: &str| extra.member(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    let member = |k: &str| option.member(k).unwrap_or(&Value::Null);
    non_empty("name")
        && non_empty("version")
        && is_address(member("asset"))
        && is_address(member("payTo"))
        && amount_of(member("amount")).is_some()
        && uint256_of(member("amount")).is_some()
        && timeout_seconds(member("maxTimeoutSeconds")).is_some()
}

fn filter(option: &Map<String, Value>) -> Served {
    served_if(pairs(option), || payable(option))
}

/// The pairing `x402/exact/eip155/eip3009`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Eip3009;

impl Pairing for Eip3009 {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        read_with(doc, filter)
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        super::family::choose_for(ID, read, ctx)
    }

    /// None: the option and the signer's account are all it takes.
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

/// The choice, checked: the authorization's values but its nonce (H), borrowed from the choice. The build signs
/// them and the quote reports them, so the two read one parse.
#[derive(Debug, Clone)]
pub(crate) struct Choice<'a> {
    required: &'a Map<String, Value>,
    accepted: &'a Value,
    payer: &'a str,
    pay_to: &'a str,
    amount: &'a str,
    asset: &'a str,
    network: &'a str,
    name: &'a str,
    version: &'a str,
    chain_id: u64,
    value: U256,
    valid_before: u64,
}

/// The checks the build makes on a choice `{required, accepted, from, now}`, and the values it reads from it:
/// validBefore is now + maxTimeoutSeconds.
pub(crate) fn choice_of(choice: &Map<String, Value>) -> Result<Choice<'_>, Refusal> {
    let malformed = || Refusal::x402(Reason::OptionMalformed);
    let payer = choice.member("from").filter(|f| is_address(f)).and_then(Value::as_str).ok_or_else(malformed)?;
    let now = choice.member("now").and_then(safe_int).and_then(|n| u64::try_from(n).ok()).ok_or_else(malformed)?;
    let (required, accepted) = check_chosen(choice.member("required"), choice.member("accepted"), filter)?;
    let echoed = choice.member("accepted").ok_or_else(malformed)?;
    // The filter has held every member below to its form; reading them again cannot fail.
    let text = |k: &str| accepted.member(k).and_then(Value::as_str).unwrap_or_default();
    let extra = accepted.member("extra").and_then(Value::as_object).ok_or_else(malformed)?;
    let extra_text = |k: &str| extra.member(k).and_then(Value::as_str).unwrap_or_default();
    let chain_id = accepted.member("network").and_then(chain_id_of).ok_or_else(malformed)?;
    let value = accepted.member("amount").and_then(uint256_of).ok_or_else(malformed)?;
    let timeout = accepted.member("maxTimeoutSeconds").and_then(timeout_seconds).ok_or_else(malformed)?;
    let valid_before = now.checked_add(timeout).ok_or_else(malformed)?;
    Ok(Choice {
        required,
        accepted: echoed,
        payer,
        pay_to: text("payTo"),
        amount: text("amount"),
        asset: text("asset"),
        network: text("network"),
        name: extra_text("name"),
        version: extra_text("version"),
        chain_id,
        value,
        valid_before,
    })
}

/// What the buyer would pay for a choice: the authorization's value of the asset to payTo, valid from 0 to
/// validBefore.
pub fn quote(choice: &Map<String, Value>) -> Result<Quote, Refusal> {
    let c = choice_of(choice)?;
    Ok(Quote::new(c.value, c.asset, c.pay_to, c.network, "exact").with_window(Some(0), Some(c.valid_before)))
}

/// The unsigned EIP-3009 payment: the checked choice and the nonce, H. The typed data is built only when the signer
/// needs it, so `finish` builds nothing it does not send.
#[derive(Debug, Clone)]
pub struct Authorization<'a> {
    choice: Choice<'a>,
    nonce: AtrHash,
}

impl Authorization<'_> {
    /// The typed data the payer signs.
    pub fn typed_data(&self) -> TypedData {
        let c = &self.choice;
        let token = Eip3009Token { name: c.name, version: c.version, chain_id: c.chain_id, address: c.asset };
        eip3009_typed_data("TransferWithAuthorization", token, self.message(c.value.to_string()))
    }

    /// The authorization as signed (`value` as the uint256 decimal) or as sent (`value` as the option wrote it).
    fn message(&self, value: String) -> Map<String, Value> {
        let c = &self.choice;
        eip3009_message(c.payer, c.pay_to, value, c.valid_before.to_string(), self.nonce.to_hex())
    }
}

/// Builds the `TransferWithAuthorization` whose nonce is H from a choice `{required, accepted, from, now}`:
/// validAfter 0, validBefore now + maxTimeoutSeconds.
pub fn build<'a>(choice: &'a Map<String, Value>, h: &AtrHash) -> Result<Authorization<'a>, Refusal> {
    Ok(Authorization { choice: choice_of(choice)?, nonce: *h })
}

impl Unsigned for Authorization<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(SigningRequest::Eip712 { typed_data: self.typed_data() }))
    }

    fn complete(&self, answers: &[Answer], chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::x402(Reason::SignatureMalformed);
        let [answer] = answers else { return Err(malformed()) };
        let signature = answer.as_str().filter(|s| is_hex(s)).ok_or_else(malformed)?;
        let size = (signature.len() - 2) / 2;
        if !(MIN_SIGNATURE_BYTES..=MAX_SIGNATURE_BYTES).contains(&size) {
            return Err(malformed());
        }
        let mut payload = Map::with_capacity(2);
        payload.insert("signature".into(), signature.into());
        payload.insert("authorization".into(), Value::Object(self.message(self.choice.amount.to_owned())));
        let (required, accepted) = (self.choice.required, self.choice.accepted);
        let payment = X402Payment::for_chosen(required, accepted, Value::Object(payload), chosen)?;
        Ok(payment.completion())
    }
}

/// Reads H back: the authorization's nonce, from a payment whose `accepted` the pairing's filter serves. The
/// signature's form is checked; it is not verified here.
pub fn bound(p: &dyn Member) -> Result<AtrHash, Refusal> {
    let payload_malformed = || Refusal::x402(Reason::PayloadMalformed);
    if !is_v2(p) {
        return Err(Refusal::x402(Reason::NotV2));
    }
    if p.member("refused").is_some() {
        return Err(payload_malformed());
    }
    accepted_by(p.member("accepted"), filter)?;
    let payload = p.member("payload").and_then(Value::as_object).ok_or_else(payload_malformed)?;
    let authorization = payload.member("authorization").and_then(Value::as_object).ok_or_else(payload_malformed)?;
    for member in ["from", "to", "value", "validAfter", "validBefore", "nonce"] {
        if !authorization.member(member).is_some_and(Value::is_string) {
            return Err(payload_malformed());
        }
    }
    let signature_ok = payload
        .member("signature")
        .and_then(Value::as_str)
        .filter(|s| is_hex(s))
        .is_some_and(|s| (1..=MAX_SIGNATURE_BYTES).contains(&((s.len() - 2) / 2)));
    if !signature_ok {
        return Err(Refusal::x402(Reason::SignatureMalformed));
    }
    authorization.member("nonce").and_then(Value::as_str).and_then(AtrHash::parse).ok_or_else(payload_malformed)
}

/// The EIP-712 parts of an authorization's typed data, from the rail's `sol!` static `TransferWithAuthorization`.
pub fn eip712_parts(typed: &TypedData) -> Option<Eip712Parts> {
    crate::rail::evm::eip3009::eip712_parts(typed).filter(|_| typed.primary_type == "TransferWithAuthorization")
}
