//! `mpp/charge/tempo/memo`: the signer signs one 0x76 transaction of the charge's TIP-20 calls, its
//! `transferWithMemo` to the recipient carrying the challenge's attribution memo (and, where the challenge names
//! splits, one call per split); the seller's server broadcasts it. Bound reads the memo back from the signed
//! transaction.

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use super::{TEMPO_CHARGE, address_in, chain_of, splits};
use crate::codec::to_hex;
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::attribution_memo;
use crate::mpp::credential::{Credential, Echoed, did_pkh, echoed_for};
use crate::mpp::memo::check_attribution;
use crate::mpp::pieces::{OneAnswer, Piece};
use crate::pairing::{Advertised, ChooseContext, Chosen, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned};
use crate::rail::tempo::tip20::{TRANSFER_WITH_MEMO_SELECTOR, charge_calls};
use crate::rail::tempo::transaction::{MAX_WIRE_BYTES, TempoTransaction, TxError};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Fields, SigningRequest};

/// The memo pairing's id.
pub(crate) const MEMO: &str = "mpp/charge/tempo/memo";
/// The client id the attribution memo names, where the buyer gives one.
pub(super) const CLIENT_ID: InputSpec = InputSpec::optional(
    "clientId",
    InputType::String,
    "The client id the attribution memo names (its keccak-256's first ten bytes); absent: zero bytes.",
)
.with_format(InputFormat::NonEmpty);

/// The memo pairing.
pub(crate) static PAIRING: TempoCharge =
    TempoCharge { piece: Piece::evm(MEMO, &TEMPO_CHARGE, &[CLIENT_ID]), push: false };

/// A refusal in the `tempo` namespace.
const fn tempo(reason: Reason) -> Refusal {
    Refusal::new("tempo", reason)
}

/// A Tempo charge: its piece (the MPP core's choose, hold and quote), and its build and bound, those of
/// [`super::push`] where `push`.
pub(crate) struct TempoCharge {
    pub(super) piece: Piece,
    pub(super) push: bool,
}

impl fmt::Debug for TempoCharge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TempoCharge").field("pairing", &self.piece.pairing).finish_non_exhaustive()
    }
}

impl Pairing for TempoCharge {
    fn id(&self) -> &'static str {
        self.piece.pairing
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        self.piece.choose(read, ctx)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        self.piece.inputs
    }

    /// The request's amount of its currency to its recipient (the splits are part of it), on the challenge's chain.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        self.piece.held(chosen)?.quote()
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        if self.push { super::push::build(&self.piece, chosen, h) } else { build(&self.piece, chosen, h) }
    }

    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        if self.push { super::push::bound(presented, landed) } else { signed_memo_call(presented).map(|e| e.h) }
    }

    /// A request the signer broadcasts (push) moves the money before the gate reads the answer.
    fn moves(&self, first: &SigningRequest) -> bool {
        first.broadcasts()
    }
}

/// The `tempo-call` request (`tempo-calls` where the challenge names splits): `transferWithMemo` of the amount less
/// the splits to the recipient with the attribution memo over the realm, the challenge id and the buyer's
/// `clientId`, then each split in order, all on `currency`, with `chainId`, `validBefore` (the challenge's `expires`,
/// `mpp/expires-required` without one) and `broadcast: false`. The answer, the signed transaction, completes the
/// credential `{type: "transaction", signature}` only once [`signed_memo_call`] takes it, so no credential is made
/// that bound refuses.
fn build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let built = charge_request(piece, chosen, h, false)?;
    let echo = built.echo.clone();
    let check_source = built.source.clone();
    Ok(Box::new(OneAnswer::new(built.request, built.echo, Some(built.source), move |signed| {
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), "transaction".into());
        payload.insert("signature".into(), signed.into());
        // The credential read member by member, the echo borrowed: the members and the bounds of the whole
        // `{challenge, source, payload}` value, so the same refusal (over the bounds, `mpp/credential-malformed`).
        let credential = Credential::new(Cow::Borrowed(echo.as_ref()), Some(check_source.clone()), payload.into())?;
        signed_memo_call(&credential)?;
        Ok(credential.into_payload())
    })))
}

/// What both Tempo charges hand the signer, and what their credential echoes.
pub(super) struct ChargeRequest<'a> {
    /// The `tempo-call` or `tempo-calls` request.
    pub(super) request: SigningRequest,
    /// The echoed challenge.
    pub(super) echo: Cow<'a, Value>,
    /// The credential's `source`, the payer's `did:pkh`.
    pub(super) source: String,
}

/// The charge's request: `transferWithMemo` of the amount less the splits to the recipient with the attribution memo
/// over the realm, the challenge id and the buyer's `clientId`, then each split in order, all on `currency`, as
/// `call` (`calls` where the challenge names splits) with `chainId`, `validBefore` (the challenge's `expires`,
/// `mpp/expires-required` without one) and `broadcast`. Each call's `to` is `currency` as the challenge wrote it,
/// its case kept.
pub(super) fn charge_request<'a>(
    piece: &Piece,
    chosen: &'a Chosen,
    h: &AtrHash,
    broadcast: bool,
) -> Result<ChargeRequest<'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let valid_before = held.checked.expires_required()?;
    let client_id = match held.input(CLIENT_ID.name) {
        None => None,
        Some(v) => Some(v.as_str().ok_or(Refusal::mpp(Reason::InputMalformed))?),
    };
    let c = &held.checked;
    let chain = chain_of(c.details());
    let split_list = splits(c.details())?;
    let r = c.request();
    let malformed = || Refusal::mpp(Reason::RequestMalformed);
    let currency = address_in(r.member("currency")).ok_or_else(malformed)?;
    // The token's address as the challenge wrote it (`address_in` has read it as `0x` and 40 hex digits): its EIP-55
    // checksum case kept, since a wallet shows it to a person, as the reference hands it.
    let token = r.member("currency").and_then(Value::as_str).unwrap_or_default();
    let recipient = address_in(r.member("recipient")).ok_or_else(malformed)?;
    let amount = crate::mpp::values::decimal_of(r.member("amount")).ok_or_else(malformed)?;
    let memo = attribution_memo(c.text("realm"), c.text("id"), client_id);
    let calls = charge_calls(currency, recipient, amount, memo.into(), split_list.as_deref().unwrap_or_default())
        .map_err(|_| Refusal::mpp(Reason::InputMalformed))?;
    let call_json = |call: &crate::rail::tempo::transaction::TempoCall| {
        let mut m = Map::with_capacity(2);
        m.insert("to".into(), Value::from(token));
        m.insert("data".into(), Value::from(to_hex(&call.input)));
        Value::Object(m)
    };
    let mut fields = Fields::new();
    if split_list.is_none() {
        fields.insert("call".into(), calls.first().map(call_json).unwrap_or_default());
    } else {
        fields.insert("calls".into(), Value::Array(calls.iter().map(call_json).collect()));
    }
    fields.insert("chainId".into(), Value::from(chain));
    fields.insert("validBefore".into(), Value::from(valid_before));
    fields.insert("broadcast".into(), Value::Bool(broadcast));
    let request =
        if split_list.is_none() { SigningRequest::TempoCall(fields) } else { SigningRequest::TempoCalls(fields) };
    let source = did_pkh(chain, held.payer().unwrap_or_default());
    Ok(ChargeRequest { request, echo: held.echo, source })
}

/// The echoed challenge, once the credential's payload is `{type: "transaction"}` (`mpp/credential-type`) whose
/// `signature` is `0x` and an even number of hex digits (`mpp/credential-malformed`) of at most 64 KiB
/// (`tempo/tx-too-large`) reading as one 0x76 transaction for the challenge's chain (`tempo/tx-malformed`), holding
/// exactly one `transferWithMemo` call to `currency` whose memo is this challenge's attribution memo
/// (`tempo/memo-not-bound` for none, `tempo/ambiguous` for several). Nothing else of the transaction is compared
/// with the build, as in the reference.
fn signed_memo_call(presented: &dyn Member) -> Result<Echoed<'_>, Refusal> {
    let e = echoed_for(presented, MEMO, &TEMPO_CHARGE)?;
    let currency = address_in(e.checked.request().member("currency")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    if e.payload.member("type").and_then(Value::as_str) != Some("transaction") {
        return Err(Refusal::mpp(Reason::CredentialType));
    }
    let sig = e.payload.member("signature").and_then(Value::as_str).unwrap_or_default();
    let digits = sig.strip_prefix("0x").filter(|d| d.len() % 2 == 0 && d.bytes().all(|b| b.is_ascii_hexdigit()));
    let digits = digits.ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
    if digits.len() / 2 > MAX_WIRE_BYTES {
        return Err(tempo(Reason::TxTooLarge));
    }
    let wire = crate::codec::hex_bytes(sig).ok_or(Refusal::mpp(Reason::CredentialMalformed))?;
    let tx = TempoTransaction::decode(&wire).map_err(|err| match err {
        TxError::Malformed => tempo(Reason::TxMalformed),
        TxError::TooLarge => tempo(Reason::TxTooLarge),
    })?;
    if tx.chain_id != chain_of(e.checked.details()) {
        return Err(tempo(Reason::TxMalformed));
    }
    let (realm, id) = (e.checked.text("realm"), e.checked.text("id"));
    let found = tx
        .calls
        .iter()
        .filter(|call| {
            let input: &[u8] = &call.input;
            call.to == Some(currency)
                && input.len() == 100
                && input.get(..4) == Some(TRANSFER_WITH_MEMO_SELECTOR.as_slice())
                && input.get(4..16).is_some_and(|pad| pad.iter().all(|b| *b == 0))
                && input.get(68..100).is_some_and(|m| check_attribution(&to_hex(m), realm, id).is_ok())
        })
        .count();
    match found {
        0 => Err(tempo(Reason::MemoNotBound)),
        1 => Ok(e),
        _ => Err(tempo(Reason::Ambiguous)),
    }
}
