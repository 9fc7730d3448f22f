//! The tools: their definitions (words, schema, annotations) and their bodies, each one call into the gate
//! between a schema check and a JSON result.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::BuyerOptions;
use super::schema::{self, Field, Invalid, Kind, field, optional};
use super::seal::{self, Label, MAC};
#[cfg(feature = "x402")]
use crate::agreement::agree;
use crate::codec::{b64_decode, b64_encode};
use crate::decline::{DeclineCode, Declined, Moved};
#[cfg(feature = "x402")]
use crate::gate::Agreement;
use crate::gate::{
    AgreementPayment, Finish, Options, check_landed, confirm, finish, first_request, open_channel, record_charge,
    within,
};
use crate::hash::{AtrHash, hash_equals};
use crate::pairing::{ChannelHold, Chosen, Pairing, Refund};
use crate::signer::{Answer, Signer, SigningRequest};
use crate::transact::{TransactOutcome, transact};

/// Why a call did not succeed: a result to return with `isError`, or arguments that fail the schema.
pub(crate) enum Fail {
    Result(Value),
    Invalid(Invalid),
}

impl From<Declined> for Fail {
    fn from(d: Declined) -> Self {
        Self::Result(declined_json(&d))
    }
}

type Outcome = Result<Value, Fail>;

const HOLD_UNVERIFIED: &str =
    "The hold is not one this server process returned, unchanged. Pass back the latest hold exactly as returned.";
const OPENING_UNVERIFIED: &str = "The opening is not one this server process returned, unchanged. Pass the signed \
                                  opening and its mac exactly as returned.";
const CHOSEN_UNVERIFIED: &str = "The chosen payment is not one this server process returned, unchanged. Pass chosen \
                                 exactly as atr_confirm returned it.";

fn mcp_decline(code: &str, detail: &str) -> Fail {
    Fail::Result(json!({"decline": {"code": code, "detail": detail}}))
}

fn unsealable() -> Fail {
    mcp_decline(DeclineCode::OfferUnreadable.as_str(), "The value could not be sealed.")
}

// ---------------------------------------------------------------------------------------------------------------
// Definitions.

const PAIRING: Field = field("pairing", Kind::Pairing, "The pairing's id.");
const ATR: Field = field("atr", Kind::Base64, "The ATR's exact bytes: `atr.base64` as a tool returned it.");
const INPUTS: Field = optional(
    "inputs",
    Kind::Inputs,
    "The buyer's values a pairing takes beside the offer (what each requires: allOf). Others are ignored; a decline \
     ending in input-missing names one absent or malformed.",
);
/// An in-channel payment holds the inputs to no pairing's specs, so its schema lists them without requiring any.
const CHANNEL_INPUTS: Field = Field { kind: Kind::ChannelInputs, ..INPUTS };
const APPROVED: Field = optional(
    "approved",
    Kind::Approved,
    "The agreement payment you approved: `approve` exactly as returned. Pass it once: every call that carries it \
     pays it again.",
);

/// What a seller's payment request is, as the tools take it.
const DOCUMENT: &str = "The seller's payment request as JSON: x402's PAYMENT-REQUIRED (base64 decoded); for MPP, \
                        each `WWW-Authenticate: Payment` challenge of the 402 as an object of its parameters as sent \
                        (`request`, `opaque` still base64url).";

const CONFIRM: [Field; 5] = [
    PAIRING,
    field("document", Kind::Json, DOCUMENT),
    field("account", Kind::Text, "The payer's CAIP-10 account, e.g. eip155:8453:0x…."),
    INPUTS,
    optional(
        "receipt",
        Kind::Json,
        "For a pairing that pays an agreement first: the agreement's receipt for this ATR hash.",
    ),
];
const FINISH: [Field; 4] = [
    PAIRING,
    ATR,
    field("chosen", Kind::Object, "`chosen` exactly as atr_confirm returned it."),
    field(
        "signature",
        Kind::Json,
        "The wallet's answer to `request` (for a `batch` request, its one list of answers, in the batch's order); for a \
         payment signed in steps, a list of every answer so far, in order.",
    ),
];
const CHECK: [Field; 3] = [
    PAIRING,
    ATR,
    field("presented", Kind::Json, "The payment, with the `landed` member put back where a tool returned one."),
];
const TRANSACT: [Field; 4] = [PAIRING, field("document", Kind::Json, DOCUMENT), INPUTS, APPROVED];
const AGREE: [Field; 4] = [
    ATR,
    field("chosen", Kind::Object, "`chosen` exactly as atr_confirm returned it; it names the agreement URL."),
    APPROVED,
    INPUTS,
];
const CHANNEL_OPEN: [Field; 5] = [
    PAIRING,
    ATR,
    field("signed", Kind::Json, "The signed opening, as atr_finish or atr_transact returned it."),
    field("mac", Kind::Mac, "The `mac` returned beside the signed opening."),
    optional("landed", Kind::Json, "The `landed` value returned beside the opening, where there was one."),
];
const HOLD: Field = field("hold", Kind::Object, "The latest hold, exactly as a tool returned it.");
const RECORD_CHARGE: [Field; 2] =
    [HOLD, field("charged", Kind::Text, "The seller's cumulative charge in the channel, a decimal string.")];
const WITHIN: [Field; 5] = [
    PAIRING,
    HOLD,
    field(
        "document",
        Kind::Json,
        "The seller's payment request, as atr_confirm takes it. Only its amount is taken (the rest comes from the \
         hold); another ATR hash or channel than the hold's is declined.",
    ),
    optional(
        "refund",
        Kind::Refund,
        "A refund instead of a voucher: {} closes the channel, claiming the recorded charge; {amount} refunds down to \
         that cumulative amount, where the pairing has partial refunds (an MPP session declines it).",
    ),
    CHANNEL_INPUTS,
];

fn fields(name: &str) -> Option<&'static [Field]> {
    Some(match name {
        "atr_confirm" => &CONFIRM,
        "atr_finish" => &FINISH,
        "atr_check" => &CHECK,
        "atr_transact" => &TRANSACT,
        "atr_agree" => &AGREE,
        "atr_channel_open" => &CHANNEL_OPEN,
        "atr_channel_record_charge" => &RECORD_CHARGE,
        "atr_channel_within" => &WITHIN,
        "atr_pay" => &super::pay::PAY,
        "atr_budget" => &super::ledger::BUDGET,
        "atr_history" => &super::ledger::HISTORY,
        "atr_record" => &super::ledger::RECORD,
        _ => return None,
    })
}

fn description(name: &str) -> &'static str {
    match name {
        "atr_confirm" => {
            "Call before paying a seller that advertises an ATR hash. Fetches the terms (ATR) once from the offer's \
             link and compares their SHA-256 with the hash. Only on a match returns the ATR bytes, `chosen` and the \
             signing `request`; have the wallet sign `request` exactly, then call atr_finish. A mismatch declines. \
             Where `chosen.agreement` names an agreement, `request` comes only with its `receipt`. `request: null`: \
             nothing to sign."
        }
        "atr_finish" => {
            "Joins the wallet's answer to the payment rebuilt from `chosen` and the ATR bytes, and returns it only if \
             the ATR's hash is read back from inside what was signed. Send only the `signed` it returns; keep \
             `landed` where it comes. `next` means one more signature is needed."
        }
        "atr_check" => {
            "Checks, with no network and no signing, that a payment carries inside what was signed the SHA-256 of \
             the given ATR bytes."
        }
        "atr_transact" => {
            "Confirms the ATR hash as atr_confirm does and, only on a match, signs the payment with this host's \
             wallet. Returns the payment to send and the ATR bytes to keep. Where the pairing pays an agreement \
             first, it returns `approve` and signs nothing: approve it by calling again with `approved` set to that \
             value, unchanged."
        }
        "atr_agree" => {
            "Pays the agreement that `chosen.agreement` names, for the ATR you confirmed, with this host's wallet: \
             the agreement payment carries the ATR hash. Without `approved` it returns the payment to approve (or the \
             receipt of one already recorded) and signs nothing; with `approved` it pays it once and returns the \
             receipt to pass to atr_confirm."
        }
        "atr_channel_open" => {
            "Keeps a channel you opened: takes the signed opening with its `mac` and the ATR bytes it was confirmed \
             against, and returns the channel `hold`. The hold is opaque: pass the latest one back exactly as \
             returned."
        }
        "atr_channel_record_charge" => {
            "Records the seller's cumulative charge in a held channel: no lower than the charge already recorded and \
             no higher than what was signed. Returns the updated `hold`."
        }
        "atr_channel_within" => {
            "Signs one later payment in a held channel with this host's wallet; everything but the amount comes from \
             the hold. Returns the payment to send and the updated `hold`. A hold that is not exactly as returned is \
             declined and nothing is signed."
        }
        "atr_pay" => super::pay::DESCRIPTION,
        other => super::ledger::description(other),
    }
}

fn annotations(name: &str) -> ToolAnnotations {
    match name {
        "atr_confirm" => ToolAnnotations::new().read_only(true).open_world(true),
        "atr_transact" | "atr_agree" | "atr_channel_within" => {
            ToolAnnotations::new().read_only(false).destructive(false).idempotent(false).open_world(true)
        }
        // A paid request (a POST, a DELETE) may change anything at the seller's.
        "atr_pay" => ToolAnnotations::new().read_only(false).destructive(true).idempotent(false).open_world(true),
        _ => ToolAnnotations::new().read_only(true).open_world(false),
    }
}

/// The tool as `tools/list` gives it: name, words, input schema and annotations; no output schema (a decline's
/// structured content has another shape than a success's).
pub(crate) fn definition(name: &str) -> Option<Tool> {
    let fields = fields(name)?;
    let tool_name = super::TOOL_NAMES.iter().find(|n| **n == name)?;
    Some(Tool::new(*tool_name, description(name), schema::schema(fields)).with_annotations(annotations(name)))
}

// ---------------------------------------------------------------------------------------------------------------
// Values as JSON.

/// The ATR as `{base64, utf8}`: `utf8` is the text after one leading byte-order mark, or `null` when the bytes are
/// not UTF-8.
pub(crate) fn atr_json(bytes: &[u8]) -> Value {
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(bytes);
    let utf8 = std::str::from_utf8(text).map_or(Value::Null, |t| Value::String(t.to_owned()));
    json!({"base64": b64_encode(bytes), "utf8": utf8})
}

fn moved_json(m: &Moved) -> Value {
    json!({"signed": m.signed, "atr": atr_json(&m.bytes), "atrHash": m.h})
}

pub(crate) fn declined_json(d: &Declined) -> Value {
    let mut out = Map::new();
    out.insert("decline".into(), json!({"code": d.code.as_str(), "detail": d.detail}));
    if let Some(m) = &d.moved {
        out.insert("moved".into(), moved_json(m));
    }
    Value::Object(out)
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The wallet's answers, read as the reference's pieces read them: `null` is none; the answer to a `batch` request is
/// one list (an answer per request in the batch, signed in one step); otherwise a list is every answer so far, in
/// order, and any other value is the one answer.
fn signature_answers(signature: &Value, first: Option<&SigningRequest>) -> Vec<Answer> {
    match signature {
        Value::Null => Vec::new(),
        Value::Array(_) if matches!(first, Some(SigningRequest::Batch { .. })) => {
            vec![Answer::new(signature.clone())]
        }
        Value::Array(items) => items.iter().cloned().map(Answer::new).collect(),
        one => vec![Answer::new(one.clone())],
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Arguments.

pub(crate) struct Args<'a>(pub(crate) &'a Map<String, Value>);

impl Args<'_> {
    pub(crate) fn value(&self, name: &str) -> Value {
        self.0.get(name).cloned().unwrap_or(Value::Null)
    }
    fn opt(&self, name: &str) -> Option<Value> {
        self.0.get(name).cloned()
    }
    pub(crate) fn text(&self, name: &str) -> &str {
        self.0.get(name).and_then(Value::as_str).unwrap_or_default()
    }
    fn object(&self, name: &str) -> Map<String, Value> {
        self.0.get(name).and_then(Value::as_object).cloned().unwrap_or_default()
    }
    /// The ATR bytes; the schema check already read them.
    fn atr(&self) -> Vec<u8> {
        b64_decode(self.text("atr")).unwrap_or_default()
    }
    fn approved(&self) -> Option<AgreementPayment> {
        self.opt("approved").and_then(|v| serde_json::from_value(v).ok())
    }
}

/// This build's pairing of the id the arguments name (the schema admits only the protocol's 67 ids);
/// `pairing-not-supported` for one whose family is not in this build.
fn pairing_of(args: &Args<'_>) -> Result<&'static dyn Pairing, Fail> {
    crate::registry::pairing(args.text("pairing")).map_err(Fail::from)
}

fn with_inputs(options: &BuyerOptions, args: &Args<'_>) -> Options {
    options.gate.clone().inputs(args.object("inputs"))
}

/// The opening's members under its seal: `{pairing, signed, landed?}`.
fn opening_members(pairing: &str, signed: &Value, landed: Option<&Value>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("pairing".into(), Value::String(pairing.to_owned()));
    m.insert("signed".into(), signed.clone());
    if let Some(l) = landed {
        m.insert("landed".into(), l.clone());
    }
    m
}

/// `{atrHash, signed, landed?, mac?}` of a finished payment: the opening mac for a channel pairing.
fn signed_json(
    out: &mut Map<String, Value>,
    pairing: &dyn Pairing,
    signed: &Value,
    landed: Option<&Value>,
) -> Result<(), Fail> {
    out.insert("signed".into(), signed.clone());
    if let Some(l) = landed {
        out.insert("landed".into(), l.clone());
    }
    if pairing.channel().is_some() && !signed.is_null() {
        let mac =
            seal::mac_of(Label::Opening, &opening_members(pairing.id(), signed, landed)).map_err(|_| unsealable())?;
        out.insert(MAC.into(), Value::String(mac));
    }
    Ok(())
}

fn sealed_hold(hold: &ChannelHold) -> Result<Value, Fail> {
    let Value::Object(members) = to_json(hold) else { return Err(unsealable()) };
    seal::seal(Label::Hold, members).map(Value::Object).map_err(|_| unsealable())
}

fn unsealed_hold(args: &Args<'_>) -> Result<ChannelHold, Fail> {
    seal::unseal(Label::Hold, &args.object("hold"))
        .and_then(|members| serde_json::from_value(Value::Object(members)).ok())
        .ok_or_else(|| mcp_decline("hold-unverified", HOLD_UNVERIFIED))
}

fn chosen_of(members: Map<String, Value>) -> Result<Chosen, Fail> {
    serde_json::from_value(Value::Object(members)).map_err(|_| {
        Fail::from(Declined::new(DeclineCode::OfferUnreadable, "The chosen payment carries no choice to build from."))
    })
}

fn unsealed_chosen(args: &Args<'_>) -> Result<Chosen, Fail> {
    let members = seal::unseal(Label::Chosen, &args.object("chosen"))
        .ok_or_else(|| mcp_decline("chosen-unverified", CHOSEN_UNVERIFIED))?;
    chosen_of(members)
}

/// A payer's receipt of the form the agreement URL answers: an object naming this hash, `agreed: true`, and string
/// `network` and `transaction`. The server does not look the transaction up.
fn is_receipt_for(receipt: &Value, h: &AtrHash) -> bool {
    let Some(r) = receipt.as_object() else { return false };
    r.get("atrHash").and_then(Value::as_str).is_some_and(|a| hash_equals(a, &h.to_hex()))
        && r.get("agreed") == Some(&Value::Bool(true))
        && r.get("network").is_some_and(Value::is_string)
        && r.get("transaction").is_some_and(Value::is_string)
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies.

/// Runs a tool: the schema check, then its body.
pub(crate) async fn run(
    options: &BuyerOptions,
    name: &str,
    arguments: &Map<String, Value>,
    cancel: CancellationToken,
) -> Outcome {
    let fields = fields(name)
        .ok_or_else(|| Fail::Invalid(Invalid { argument: String::new(), reason: "no such tool".into() }))?;
    schema::check(fields, arguments).map_err(Fail::Invalid)?;
    if let (Some(why), "atr_transact" | "atr_agree" | "atr_channel_within" | "atr_pay") =
        (&options.journal_unavailable, name)
    {
        // The host named a journal and it is not there: nothing is signed that it would not record.
        let d = crate::gate::journal_failed(crate::refusal::Reason::Unavailable, why);
        return Err(Fail::Result(json!({"decline": {"code": d.code.as_str(), "detail": d.detail, "cause": d.cause}})));
    }
    let args = Args(arguments);
    match name {
        "atr_confirm" => atr_confirm(options, &args).await,
        "atr_finish" => atr_finish(&args),
        "atr_check" => atr_check(&args),
        "atr_transact" => atr_transact(options, &args, cancel).await,
        #[cfg(feature = "x402")]
        "atr_agree" => atr_agree(options, &args, cancel).await,
        "atr_channel_open" => atr_channel_open(&args),
        "atr_channel_record_charge" => atr_channel_record_charge(&args),
        "atr_channel_within" => atr_channel_within(options, &args).await,
        "atr_pay" => super::pay::atr_pay(options, &args, cancel).await,
        "atr_budget" => super::ledger::atr_budget(options, &args).await,
        "atr_history" => super::ledger::atr_history(options, &args).await,
        "atr_record" => super::ledger::atr_record(options, &args).await,
        _ => Err(Fail::Invalid(Invalid { argument: String::new(), reason: "no such tool".into() })),
    }
}

async fn atr_confirm(options: &BuyerOptions, args: &Args<'_>) -> Outcome {
    let pairing = pairing_of(args)?;
    let gate = with_inputs(options, args);
    let c = confirm(args.value("document"), pairing, args.text("account"), options.fetch.as_ref(), &gate).await?;
    let Value::Object(chosen) = to_json(&c.chosen) else { return Err(unsealable()) };
    let chosen = seal::seal(Label::Chosen, chosen).map_err(|_| unsealable())?;
    let mut out = Map::new();
    out.insert("atrHash".into(), to_json(&c.h));
    out.insert("atr".into(), atr_json(&c.bytes));
    out.insert("chosen".into(), Value::Object(chosen));
    if c.chosen.agreement.is_some() {
        match args.opt("receipt") {
            None => return Ok(Value::Object(out)),
            Some(receipt) if is_receipt_for(&receipt, &c.h) => {}
            Some(_) => {
                return Err(Declined::new(
                    DeclineCode::AgreementFailed,
                    "The agreement receipt is not a recorded agreement for this ATR hash.",
                )
                .into());
            }
        }
    }
    out.insert("request".into(), c.request.as_ref().map_or(Value::Null, to_json));
    Ok(Value::Object(out))
}

fn atr_finish(args: &Args<'_>) -> Outcome {
    let pairing = pairing_of(args)?;
    // Every pairing's chosen must be one this process sealed: a channel's opening fixes what every later payment in
    // it may be, and an edited chosen of any other pairing would build a signed payment that pays what the seller
    // never offered (one the seller refuses, after the wallet has signed it).
    let chosen = unsealed_chosen(args)?;
    let atr = args.atr();
    let first = first_request(pairing, &chosen, &atr);
    let answers = signature_answers(&args.value("signature"), first.as_ref());
    match finish(&atr, &chosen, &answers, pairing)? {
        Finish::Next(next) => Ok(json!({"atrHash": next.h, "next": next.next})),
        Finish::Finished(done) => {
            let mut out = Map::new();
            out.insert("atrHash".into(), to_json(&done.h));
            signed_json(&mut out, pairing, &done.signed.to_value(), done.landed.as_ref())?;
            Ok(Value::Object(out))
        }
    }
}

fn atr_check(args: &Args<'_>) -> Outcome {
    let pairing = pairing_of(args)?;
    let mut presented = args.value("presented");
    // `landed` rides back inside the presented payment; the gate reads it beside the payment, never inside it.
    let landed = presented.as_object_mut().and_then(|p| p.shift_remove("landed"));
    let checked = check_landed(&args.atr(), &presented, landed.as_ref(), pairing)?;
    Ok(json!({"atrHash": checked.h}))
}

async fn atr_transact(options: &BuyerOptions, args: &Args<'_>, cancel: CancellationToken) -> Outcome {
    let pairing = pairing_of(args)?;
    let Some(signer) = options.signer.as_ref() else {
        return Err(Fail::Invalid(Invalid { argument: String::new(), reason: "no signer".into() }));
    };
    let mut gate = with_inputs(options, args).cancel(cancel);
    if let Some(payer) = &options.agreement_signer {
        gate = gate.agreement_signer(payer.clone());
    }
    if let Some(approved) = args.approved() {
        gate = gate.approved(approved);
    }
    let signer: &dyn Signer = signer.as_ref();
    let mut out = Map::new();
    match transact(args.value("document"), pairing, signer, options.fetch.as_ref(), &gate).await? {
        TransactOutcome::ToApprove(t) => {
            out.insert("atrHash".into(), to_json(&t.h));
            out.insert("atr".into(), atr_json(&t.bytes));
            out.insert("approve".into(), to_json(&t.approve));
        }
        TransactOutcome::ApproveSpend(a) => {
            out.insert("atrHash".into(), to_json(&a.approve_spend.h));
            out.insert("approveSpend".into(), to_json(&a.approve_spend));
        }
        TransactOutcome::PendingApproval(p) => return Ok(super::pay::pending_json(&p.pending_approval)),
        TransactOutcome::Signed(t) | TransactOutcome::Resend(crate::transact::Resent { resend: t }) => {
            out.insert("atrHash".into(), to_json(&t.h));
            out.insert("atr".into(), atr_json(&t.bytes));
            let signed = t.signed.as_ref().map_or(Value::Null, crate::Payment::to_value);
            signed_json(&mut out, pairing, &signed, t.landed.as_ref())?;
            if let Some(receipt) = &t.agreement {
                out.insert("agreement".into(), to_json(receipt));
            }
        }
    }
    Ok(Value::Object(out))
}

#[cfg(feature = "x402")]
async fn atr_agree(options: &BuyerOptions, args: &Args<'_>, cancel: CancellationToken) -> Outcome {
    let chosen = unsealed_chosen(args)?;
    let Some(url) = chosen.agreement.as_deref() else {
        return Err(Declined::new(DeclineCode::OfferUnreadable, "The chosen payment names no agreement URL.").into());
    };
    let Some(payer) = options.agreement_signer.as_ref().or(options.signer.as_ref()) else {
        return Err(Fail::Invalid(Invalid { argument: String::new(), reason: "no signer".into() }));
    };
    let mut gate = with_inputs(options, args).cancel(cancel);
    if let Some(approved) = args.approved() {
        gate = gate.approved(approved);
    }
    match agree(&args.atr(), url, payer.as_ref(), options.fetch.as_ref(), &gate).await? {
        Agreement::Agreed { receipt } => Ok(json!({"atrHash": receipt.atr_hash, "receipt": receipt})),
        Agreement::ToApprove(t) => Ok(json!({"atrHash": t.h, "approve": t.approve})),
    }
}

fn atr_channel_open(args: &Args<'_>) -> Outcome {
    let signed = args.value("signed");
    let landed = args.opt("landed");
    let members = opening_members(args.text("pairing"), &signed, landed.as_ref());
    if !seal::verifies(Label::Opening, &members, args.text("mac")) {
        return Err(mcp_decline("opening-unverified", OPENING_UNVERIFIED));
    }
    let pairing = pairing_of(args)?;
    let hold = open_channel(&args.atr(), &signed, pairing, landed.as_ref())?;
    Ok(json!({"atrHash": hold.h, "hold": sealed_hold(&hold)?}))
}

fn atr_channel_record_charge(args: &Args<'_>) -> Outcome {
    let hold = unsealed_hold(args)?;
    let hold = record_charge(&hold, args.text("charged"))?;
    Ok(json!({"atrHash": hold.h, "hold": sealed_hold(&hold)?}))
}

async fn atr_channel_within(options: &BuyerOptions, args: &Args<'_>) -> Outcome {
    let hold = unsealed_hold(args)?;
    let pairing = pairing_of(args)?;
    let Some(signer) = options.signer.as_ref() else {
        return Err(Fail::Invalid(Invalid { argument: String::new(), reason: "no signer".into() }));
    };
    let refund = args.opt("refund").map(|r| match r.get("amount").and_then(Value::as_str) {
        Some(amount) => Refund::partial(amount),
        None => Refund::close(),
    });
    let gate = with_inputs(options, args);
    let done = within(&args.value("document"), &hold, pairing, signer.as_ref(), refund.as_ref(), &gate).await?;
    Ok(json!({"atrHash": done.hold.h, "signed": done.signed, "hold": sealed_hold(&done.hold)?}))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::signature_answers;
    use crate::signer::SigningRequest;

    fn answers(signature: Value, first: Option<&SigningRequest>) -> Vec<Value> {
        signature_answers(&signature, first).into_iter().map(|a| a.as_json().clone()).collect()
    }

    #[test]
    fn a_batch_is_answered_by_one_list_and_steps_by_a_list_of_answers() {
        let batch = SigningRequest::Batch { requests: vec![] };
        let one = SigningRequest::Erc7710(serde_json::Map::new());
        assert_eq!(answers(json!(["0x01", "0x02"]), Some(&batch)), [json!(["0x01", "0x02"])]);
        assert_eq!(answers(json!(["0x01", "0x02"]), Some(&one)), [json!("0x01"), json!("0x02")]);
        assert_eq!(answers(json!(["0x01", "0x02"]), None), [json!("0x01"), json!("0x02")]);
        assert_eq!(answers(json!({"a": 1}), Some(&one)), [json!({"a": 1})]);
        assert_eq!(answers(json!("0x01"), Some(&batch)), [json!("0x01")]);
        assert!(answers(Value::Null, Some(&batch)).is_empty());
    }
}
