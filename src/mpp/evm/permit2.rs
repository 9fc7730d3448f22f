//! `mpp/charge/evm/permit2`: the payer signs a Permit2 witness transfer (a batch when the charge has splits, the
//! primary transfer first) whose `PaymentWitness` carries the challenge hash, and the id carries H; the spender, the
//! seller's server, submits it to Permit2.

use alloy_primitives::U256;
use serde_json::{Map, Value, json};

use super::{Charge, chain_of, deadline_of, hash_in, is_signature, of_type, source_on, text};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::credential::{did_pkh, echoed_for};
use crate::mpp::methods::EVM_CHARGE;
use crate::mpp::pieces::{OneAnswer, Piece};
use crate::mpp::values::{decimal_of, is_address_str};
use crate::pairing::{Chosen, InputFormat, InputSpec, InputType, Unsigned};
use crate::rail::evm::charge::{PAYMENT_WITNESS, challenge_hash, payment_witness};
use crate::rail::evm::permit2::{self, PERMIT2, Permitted, WitnessTransfer};
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// The pairing id.
pub(crate) const ID: &str = "mpp/charge/evm/permit2";

/// The spender, which the challenge does not name: a non-empty string where the pairing chooses (the reference's
/// `string` input; an empty or missing one is `mpp/input-missing`), an address where it builds (`mpp/input-malformed`
/// otherwise, as the reference's build refuses it).
const SPENDER: InputSpec = InputSpec::required(
    "spender",
    InputType::String,
    "The seller's server that Permit2 lets move the tokens (0x and 40 hex digits).",
)
.with_format(InputFormat::NonEmpty);

/// The pairing.
pub(crate) static PAIRING: Charge = Charge::new(Piece::evm(ID, &EVM_CHARGE, &[SPENDER]), true, build, bound);

/// The witness transfer: to the recipient the amount less the splits, then each split, of the request's currency,
/// spender the buyer's input, nonce the challenge hash as a uint256, deadline `expires`, under
/// `methodDetails.permit2Address` or the canonical Permit2.
fn build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let spender = held.input("spender").and_then(Value::as_str).filter(|s| is_address_str(s));
    let spender = spender.ok_or(Refusal::mpp(Reason::InputMalformed))?;
    let (r, d) = (held.checked.request(), held.checked.details());
    let chain = chain_of(d)?;
    let amount = decimal_of(r.member("amount")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let splits: Option<Vec<(&str, U256)>> = match d.member("splits").and_then(Value::as_array) {
        None => None,
        Some(list) => Some(
            list.iter()
                .map(|s| {
                    let amount = decimal_of(s.member("amount")).ok_or(Refusal::mpp(Reason::SplitsMalformed))?;
                    Ok((s.member("recipient").and_then(Value::as_str).unwrap_or_default(), amount))
                })
                .collect::<Result<_, Refusal>>()?,
        ),
    };
    let split_sum = splits
        .iter()
        .flatten()
        .try_fold(U256::ZERO, |sum, (_, a)| sum.checked_add(*a))
        .ok_or(Refusal::evm(Reason::AmountMalformed))?;
    let primary = amount.checked_sub(split_sum).ok_or(Refusal::evm(Reason::AmountMalformed))?;
    let currency = text(r, "currency");
    let mut transfers = vec![(text(r, "recipient"), primary)];
    transfers.extend(splits.iter().flatten().copied());
    let permitted: Vec<Permitted<'_>> =
        transfers.iter().map(|(_, a)| Permitted { token: currency, amount: *a }).collect();
    let ch = challenge_hash(held.checked.text("id"), held.checked.text("realm"));
    let witness = payment_witness(&ch, text(r, "externalId"));
    let deadline = deadline_of(&held)?;
    let nonce = U256::from_be_bytes(ch.0);
    let transfer = WitnessTransfer {
        chain_id: chain,
        permit2: d.member("permit2Address").and_then(Value::as_str).unwrap_or(PERMIT2),
        permitted: &permitted,
        batch: splits.is_some(),
        spender,
        nonce,
        deadline,
    };
    let typed_data = permit2::witness_typed_data(&transfer, PAYMENT_WITNESS, &witness)?;
    let permit = json!({
        "permitted": permitted.iter().map(|p| json!({"token": p.token, "amount": p.amount.to_string()})).collect::<Vec<_>>(),
        "nonce": nonce.to_string(),
        "deadline": deadline.to_string(),
    });
    let details: Vec<Value> =
        transfers.iter().map(|(to, a)| json!({"to": to, "requestedAmount": a.to_string()})).collect();
    let mut payload = Map::with_capacity(5);
    payload.insert("type".into(), "permit2".into());
    payload.insert("permit".into(), permit);
    payload.insert("transferDetails".into(), Value::Array(details));
    payload.insert("witness".into(), Value::Object(witness.value));
    let source = did_pkh(chain, held.payer().unwrap_or_default());
    Ok(Box::new(OneAnswer::new(SigningRequest::Eip712 { typed_data }, held.echo, Some(source), move |signature| {
        if !is_signature(signature) {
            return Err(Refusal::mpp(Reason::CredentialMalformed));
        }
        let mut payload = payload.clone();
        payload.insert("signature".into(), signature.into());
        Ok(Value::Object(payload))
    })))
}

/// H from the echoed challenge, once the witness's `challengeHash` is its challenge hash
/// (`mpp/witness-not-challenge-hash`).
fn bound(piece: &Piece, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let e = echoed_for(presented, piece.pairing, &EVM_CHARGE)?;
    of_type(&e, "permit2")?;
    let witness = e.payload.member("witness").filter(|w| w.is_object());
    let signed = hash_in(witness.and_then(|w| w.member("challengeHash")));
    let signed = signed.ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
    source_on(&e, chain_of(e.checked.details())?)?;
    if signed != challenge_hash(e.checked.text("id"), e.checked.text("realm")) {
        return Err(Refusal::mpp(Reason::WitnessNotChallengeHash));
    }
    Ok(e.h)
}
