//! `mpp/charge/evm/transaction` and `mpp/charge/evm/hash`: the signer signs the ERC-20 transfer of the request as
//! one EIP-1559 transaction (the seller's server broadcasts it), or broadcasts it and answers its hash. Nothing the
//! payer signs carries H (publicProof false: the agreement payment made first is the proof), so bound refuses
//! `mpp/no-signed-place` once it has held the echoed challenge.

use serde_json::{Map, Value};

use super::{Charge, chain_of, text};
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
use crate::mpp::credential::{did_pkh, echoed_for};
use crate::mpp::methods::EVM_CHARGE;
use crate::mpp::pieces::{OneAnswer, Piece};
use crate::mpp::values::decimal_of;
use crate::pairing::{Chosen, InputSpec, InputType, Unsigned};
use crate::rail::evm::transaction::{SignedTransaction, erc20_transfer, transaction_hash};
use crate::refusal::{Reason, Refusal};
use crate::signer::SigningRequest;

/// The transaction pairing's id.
pub(crate) const TRANSACTION: &str = "mpp/charge/evm/transaction";
/// The hash pairing's id.
pub(crate) const HASH: &str = "mpp/charge/evm/hash";

/// The account nonce the signed transaction must carry, where the buyer names one (ours: the reference reads only
/// the chain id of the answer).
const ACCOUNT_NONCE: InputSpec =
    InputSpec::optional("accountNonce", InputType::Integer, "The account's next transaction nonce.");

/// The transaction pairing.
pub(crate) static TRANSACTION_PAIRING: Charge =
    Charge::new(Piece::evm(TRANSACTION, &EVM_CHARGE, &[ACCOUNT_NONCE]), false, build, bound);
/// The hash pairing.
pub(crate) static HASH_PAIRING: Charge = Charge::new(Piece::evm(HASH, &EVM_CHARGE, &[]), false, build, bound);

/// The `evm-call` request: the ERC-20 `transfer` of the request's amount of its currency to its recipient, on the
/// challenge's chain, broadcast by the signer on `hash`. The transaction's answer must be one signed EIP-1559
/// transaction (`mpp/credential-malformed`) of exactly that call on that chain, with the buyer's nonce where named
/// (`evm/chain-mismatch`, `evm/nonce-mismatch`, `evm/call-mismatch`); the hash's answer must be `0x` and 64 hex
/// digits (`mpp/credential-malformed`, and the decline carries the answer as moved).
fn build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let r = held.checked.request();
    let chain = chain_of(held.checked.details())?;
    let amount = decimal_of(r.member("amount")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let call = erc20_transfer(text(r, "currency"), text(r, "recipient"), amount)
        .ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let nonce = match held.input(ACCOUNT_NONCE.name) {
        None => None,
        Some(n) => Some(safe_int(n).and_then(|n| u64::try_from(n).ok()).ok_or(Refusal::mpp(Reason::InputMalformed))?),
    };
    let broadcast = piece.pairing == HASH;
    let source = did_pkh(chain, held.payer().unwrap_or_default());
    let request = SigningRequest::EvmCall { chain_id: chain, call: call.clone(), broadcast };
    Ok(Box::new(OneAnswer::new(request, held.echo, Some(source), move |answer| {
        let mut payload = Map::with_capacity(2);
        if broadcast {
            transaction_hash(answer).ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
            payload.insert("type".into(), "hash".into());
            payload.insert("hash".into(), answer.into());
        } else {
            let signed =
                SignedTransaction::decode_hex(answer).map_err(|_| Refusal::mpp(Reason::CredentialMalformed))?;
            signed.check(chain, &call, nonce).map_err(|m| Refusal::evm(m.reason()))?;
            payload.insert("type".into(), "transaction".into());
            payload.insert("signature".into(), answer.into());
        }
        Ok(Value::Object(payload))
    })))
}

/// The echoed challenge held to the pairing's filter, then `mpp/no-signed-place`.
fn bound(piece: &Piece, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    echoed_for(presented, piece.pairing, &EVM_CHARGE)?;
    Err(Refusal::mpp(Reason::NoSignedPlace))
}
