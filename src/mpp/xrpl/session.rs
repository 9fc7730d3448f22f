//! `mpp/session/xrpl` (draft-xrpl-session-00, MPP's `session` on `xrpl`; the reference's
//! `bindings/mpp_session_xrpl.py`): an XRP payment channel whose opening, a PaymentChannelCreate, carries exactly
//! one memo holding H's LCP string; the first claim, and every later one, signs the channel id and a cumulative
//! amount of drops (`CLM\0`), no value holding H: the channel is the one the opening bound to H.
//!
//! The build hands the wallet one `xrpl-session-open` request, `{txJson, claim: {channelId, drops, bytes}}`, the
//! claim's bytes in `0x` hex as the reference writes them; the wallet answers `{signedBlob, claimSignature}` in hex without `0x`.
//!
//! Beyond the reference, which reads the wallet's blob as bound reads it: the signed blob must be exactly the
//! PaymentChannelCreate built, with one signature of its key's length (`xrpl/tx-mismatch`,
//! `xrpl/signature-malformed`, ours).

use std::borrow::Cow;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::filter::{XRPL_SESSION, is_classic, is_u32};
use crate::hash::AtrHash;
use crate::json::{Member, Object, safe_int};
use crate::mpp::credential::{Credential, Echoed, echoed_for};
use crate::mpp::network::xrpl_network;
use crate::mpp::pieces::{Payer, Piece, on_network};
use crate::pairing::{
    Advertised, Channel, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::xrpl::signed::signed_as_built;
use crate::rail::xrpl::{
    self, Blob, Field, Tx, account_id, channel_id, claim_bytes, decode, decode_presented, fields, is_blob_hex,
    network_id_held, xrpl,
};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/session/xrpl";
/// The pairing.
pub(crate) static PAIRING: SessionXrpl = SessionXrpl;

/// The most memos an opening may carry.
const MAX_MEMOS: usize = 8;
/// PaymentChannelCreate's transaction type.
const PAYMENT_CHANNEL_CREATE: [u8; 2] = 13u16.to_be_bytes();
const LCP_PREFIX: &str = "lcp:sha256:";

const DEPOSIT: InputSpec =
    InputSpec::required("deposit", InputType::String, "The drops the channel holds.").with_format(InputFormat::Decimal);
const TERMS: InputSpec = InputSpec::required(
    "xrpl",
    InputType::Object,
    "{publicKey (0x), settleDelay, fee, sequence, lastLedgerSequence, cancelAfter?}",
);

/// The buyer's inputs an opening takes.
const INPUTS: [InputSpec; 2] = [DEPOSIT, TERMS];

static PIECE: Piece = Piece {
    pairing: ID,
    method: &XRPL_SESSION,
    payer: Payer::Account { namespace: Some("xrpl"), address: is_classic, field: Some("from"), on: on_network },
    inputs: &INPUTS,
    now: true,
};

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

fn input_malformed() -> Refusal {
    Refusal::mpp(Reason::InputMalformed)
}

/// The one memo, among at most 8, whose `MemoData` is UTF-8 text of an LCP string: its H. More than 8 memos, or
/// more than one such memo, is `xrpl/memo-count`; none is `xrpl/no-memo`.
fn lcp_memo(fields: &[Field<'_>]) -> Result<AtrHash, Refusal> {
    let memos = decode::find(fields, fields::MEMOS).and_then(Field::children).unwrap_or_default();
    if memos.len() > MAX_MEMOS {
        return Err(xrpl(Reason::MemoCount));
    }
    let mut found = memos.iter().filter_map(|m| {
        let data = m.children().and_then(|f| decode::leaf_of(f, fields::MEMO_DATA))?;
        std::str::from_utf8(data).ok()?.strip_prefix(LCP_PREFIX).and_then(AtrHash::parse)
    });
    let h = found.next().ok_or(xrpl(Reason::NoMemo))?;
    if found.next().is_some() {
        return Err(xrpl(Reason::MemoCount));
    }
    Ok(h)
}

/// An opening read back: its echoed challenge, its signed blob, its network, the channel it creates and the drops
/// it deposits.
pub(super) struct Opening<'a> {
    pub(super) echoed: Echoed<'a>,
    pub(super) blob: Blob,
    pub(super) network: String,
}

impl Opening<'_> {
    /// The channel id: SHA-512Half of the space, Account, Destination and the creating sequence (`TicketSequence`
    /// where `Sequence` is 0), upper-case hex; `xrpl/not-channel-create` where one is missing.
    pub(super) fn channel(&self) -> Result<[u8; 32], Refusal> {
        let fields = self.blob.fields();
        let account = |code| decode::leaf_of(&fields, code).and_then(|a| <[u8; 20]>::try_from(a).ok());
        let sequence = match decode::u32_of(&fields, fields::SEQUENCE) {
            Some(0) => decode::u32_of(&fields, fields::TICKET_SEQUENCE),
            s => s,
        };
        match (account(fields::ACCOUNT_FIELD), account(fields::DESTINATION), sequence) {
            (Some(a), Some(d), Some(s)) => Ok(channel_id(&a, &d, s)),
            _ => Err(xrpl(Reason::NotChannelCreate)),
        }
    }

    /// The drops the opening deposits: its XRP `Amount`.
    pub(super) fn deposit(&self) -> Option<u64> {
        let fields = self.blob.fields();
        let amount: [u8; 8] = decode::leaf_of(&fields, fields::AMOUNT_FIELD)?.try_into().ok()?;
        let raw = u64::from_be_bytes(amount);
        (raw & 0xC000_0000_0000_0000 == 0x4000_0000_0000_0000).then_some(raw & 0x3FFF_FFFF_FFFF_FFFF)
    }
}

/// Reads an opening back to H, in the reference's order: the echoed challenge held for the session
/// ([`echoed_for`]); the payload's `action` `open` (`mpp/session-action`); its `transaction` a string
/// (`xrpl/blob-malformed`), decoded single-signed ([`decode_presented`]); the network (`xrpl/network-missing`,
/// `xrpl/network-malformed`) and a `NetworkID` its nodes take (`xrpl/network-mismatch`); a PaymentChannelCreate
/// (`xrpl/not-channel-create`) whose one LCP memo ([`lcp_memo`]) is the challenge's H
/// (`mpp/carrier-not-challenge`). No signature is verified.
pub(super) fn opening(presented: &dyn Member) -> Result<Opening<'_>, Refusal> {
    let e = echoed_for(presented, ID, &XRPL_SESSION)?;
    if e.payload.member("action").and_then(Value::as_str) != Some("open") {
        return Err(Refusal::mpp(Reason::SessionAction));
    }
    let text = e.payload.member("transaction").and_then(Value::as_str).ok_or(xrpl(Reason::BlobMalformed))?;
    let blob = decode_presented(text)?;
    let network = xrpl_network(e.checked.details())?;
    let fields = blob.fields();
    if !network_id_held(&fields, xrpl::network_id(&network).unwrap_or_default()) {
        return Err(xrpl(Reason::NetworkMismatch));
    }
    if decode::leaf_of(&fields, fields::TRANSACTION_TYPE) != Some(&PAYMENT_CHANNEL_CREATE[..]) {
        return Err(xrpl(Reason::NotChannelCreate));
    }
    if lcp_memo(&fields)? != e.h {
        return Err(Refusal::mpp(Reason::CarrierNotChallenge));
    }
    drop(fields);
    Ok(Opening { echoed: e, blob, network })
}

/// The pairing `mpp/session/xrpl`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionXrpl;

/// A buyer input of the reference's `uint` kind: a non-negative integer.
fn is_uint(value: Option<&Value>) -> bool {
    value.and_then(safe_int).is_some_and(|n| n >= 0)
}

/// The channel's terms as the choice keeps them, or `mpp/input-missing` for one absent or not of its kind:
/// `publicKey` `0x` and hex digits (kept without `0x`), `settleDelay`, `sequence` and `lastLedgerSequence`
/// integers, `fee` a decimal, `cancelAfter` an integer where present.
fn terms_of(given: &Value) -> Result<Map<String, Value>, Refusal> {
    let missing = || Refusal::mpp(Reason::InputMissing);
    let x = given.as_object().ok_or_else(missing)?;
    let key = x.member("publicKey").and_then(Value::as_str).and_then(|k| k.strip_prefix("0x"));
    let key = key.filter(|k| !k.is_empty() && is_blob_hex(k)).ok_or_else(missing)?;
    let uints = ["settleDelay", "sequence", "lastLedgerSequence"];
    let fee = x.member("fee").and_then(Value::as_str).is_some_and(crate::decimal::is_decimal);
    if !fee || !uints.iter().all(|k| is_uint(x.member(k))) || x.member("cancelAfter").is_some_and(|c| !is_uint(Some(c)))
    {
        return Err(missing());
    }
    let mut out = Map::with_capacity(6);
    out.insert("publicKey".into(), key.into());
    for k in ["settleDelay", "fee", "sequence", "lastLedgerSequence", "cancelAfter"] {
        if let Some(v) = x.member(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Ok(out)
}

impl Pairing for SessionXrpl {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        crate::registry::entry(ID).is_some_and(|e| e.public_proof)
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    /// The first challenge offering the session on the account's network (an `xrpl` account), with the deposit and
    /// the channel's terms ([`terms_of`]).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let mut chosen = PIECE.choose(read, ctx)?;
        let terms = terms_of(ctx.inputs.member(TERMS.name).unwrap_or(&Value::Null))?;
        chosen.build_input.insert(TERMS.name.into(), Value::Object(terms));
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &INPUTS
    }

    /// What the opening pays: its claims start at 0 drops of XRP to the request's `recipient`, on the challenge's
    /// network, with the deposit (`mpp/choice-malformed` where it is not a decimal); valid until the challenge's
    /// `expires` where it names one.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let held = PIECE.held(chosen)?;
        let c = &held.checked;
        let network = xrpl_network(c.details())?;
        let recipient = c.request().member("recipient").and_then(Value::as_str).unwrap_or_default().to_owned();
        let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
        let deposit = held.input(DEPOSIT.name).and_then(|d| crate::mpp::values::decimal_of(Some(d)));
        let deposit = deposit.ok_or(Refusal::mpp(Reason::ChoiceMalformed))?;
        Ok(Quote::new(U256::ZERO, "XRP", recipient, network, c.text("intent"))
            .with_window(None, valid_before)
            .with_deposit(deposit))
    }

    /// The PaymentChannelCreate (the deposit to the request's recipient, the buyer's terms, one memo holding H's LCP
    /// string, no `NetworkID`: every network the challenge can name has an id of at most 1024) and the first claim
    /// over the channel it creates and the request's amount. A `from`, deposit (1 to 2^64 - 1 drops) or term not of
    /// its form is `mpp/input-malformed`, as is, ours, a `from` whose checksum fails.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let held = PIECE.offer(chosen, h)?;
        let x = held.input(TERMS.name).and_then(Value::as_object).ok_or_else(input_malformed)?;
        let from = held.payer().and_then(account_id).ok_or_else(input_malformed)?;
        let deposit = held.input(DEPOSIT.name).and_then(Value::as_str).and_then(|d| d.parse::<u64>().ok());
        let deposit = deposit.filter(|d| *d > 0).ok_or_else(input_malformed)?;
        let fee = x.member("fee").and_then(Value::as_str).filter(|f| super::fee_ok(f)).ok_or_else(input_malformed)?;
        let key =
            x.member("publicKey").and_then(Value::as_str).filter(|k| is_blob_hex(k)).ok_or_else(input_malformed)?;
        let u32s = ["settleDelay", "sequence", "lastLedgerSequence"];
        if !u32s.iter().all(|k| is_u32(x.member(k))) || x.member("cancelAfter").is_some_and(|c| !is_u32(Some(c))) {
            return Err(input_malformed());
        }
        let network = xrpl_network(held.checked.details())?;
        let r = held.checked.request();
        let recipient = r.member("recipient").and_then(Value::as_str).unwrap_or_default();
        let destination = account_id(recipient).ok_or_else(input_malformed)?;
        let sequence = super::u32_of(x.member("sequence")).ok_or_else(input_malformed)?;
        let channel = channel_id(&from, &destination, sequence);
        let drops = r.member("amount").and_then(Value::as_str).and_then(|a| a.parse::<u64>().ok());
        let drops = drops.ok_or(Refusal::mpp(Reason::RequestMalformed))?;
        let mut tx = Map::with_capacity(12);
        tx.insert("TransactionType".into(), "PaymentChannelCreate".into());
        tx.insert("Flags".into(), 0.into());
        tx.insert("Account".into(), held.payer().unwrap_or_default().into());
        tx.insert("Amount".into(), deposit.to_string().into());
        tx.insert("Destination".into(), recipient.into());
        tx.insert("SettleDelay".into(), super::u32_of(x.member("settleDelay")).unwrap_or_default().into());
        tx.insert("PublicKey".into(), key.to_uppercase().into());
        if let Some(c) = super::u32_of(x.member("cancelAfter")) {
            tx.insert("CancelAfter".into(), c.into());
        }
        let memo = hex::encode_upper(format!("{LCP_PREFIX}{}", h.to_hex()));
        tx.insert("Memos".into(), serde_json::json!([{"Memo": {"MemoData": memo}}]));
        tx.insert("Fee".into(), fee.into());
        tx.insert("Sequence".into(), sequence.into());
        tx.insert(
            "LastLedgerSequence".into(),
            super::u32_of(x.member("lastLedgerSequence")).unwrap_or_default().into(),
        );
        let unsigned = Tx::from_json(&tx).map_err(|_| input_malformed())?.encode();
        let mut claim = Map::with_capacity(3);
        claim.insert("channelId".into(), hex::encode_upper(channel).into());
        claim.insert("drops".into(), drops.into());
        claim.insert("bytes".into(), crate::codec::to_hex(&claim_bytes(&channel, drops)).into());
        let mut fields = Fields::new();
        fields.insert("txJson".into(), Value::Object(tx));
        fields.insert("claim".into(), Value::Object(claim));
        let network_number = xrpl::network_id(&network).unwrap_or_default();
        let source = format!("did:pkh:xrpl:{network_number}:{}", held.payer().unwrap_or_default());
        let amount = r.member("amount").cloned().unwrap_or_default();
        Ok(Box::new(Open {
            request: SigningRequest::XrplSessionOpen(fields),
            echo: held.echo,
            source,
            amount,
            unsigned,
            network: network_number,
        }))
    }

    /// H, once the opening's PaymentChannelCreate carries it in its one LCP memo ([`opening`]).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        opening(presented).map(|o| o.echoed.h)
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// The unsigned opening: the request for the wallet, and what its answer completes.
struct Open<'a> {
    request: SigningRequest,
    echo: Cow<'a, Value>,
    source: String,
    amount: Value,
    unsigned: Vec<u8>,
    network: u32,
}

impl Unsigned for Open<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The opening credential `{challenge, source, payload: {action: "open", transaction, amount, signature}}` from
    /// the answer `{signedBlob, claimSignature}` (`mpp/credential-malformed` for another form), read back as bound
    /// reads it ([`opening`]); ours, the blob held to the PaymentChannelCreate built ([`signed_as_built`]); then the
    /// claim signature hex (`mpp/credential-malformed`).
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let [answer] = answers else { return Err(malformed()) };
        let o: &Object = answer.as_json().as_object().ok_or_else(malformed)?;
        let (Some(blob), Some(signature)) =
            (o.member("signedBlob").and_then(Value::as_str), o.member("claimSignature").and_then(Value::as_str))
        else {
            return Err(malformed());
        };
        let mut payload = Map::with_capacity(4);
        payload.insert("action".into(), "open".into());
        payload.insert("transaction".into(), blob.into());
        payload.insert("amount".into(), self.amount.clone());
        payload.insert("signature".into(), signature.into());
        let credential =
            Credential::new(Cow::Borrowed(&*self.echo), Some(self.source.clone()), Value::Object(payload))?;
        opening(&credential)?;
        signed_as_built(Some(blob), &self.unsigned, self.network)?;
        if !is_blob_hex(signature) {
            return Err(malformed());
        }
        Ok(credential.completion())
    }
}
