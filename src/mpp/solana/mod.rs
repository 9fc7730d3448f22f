//! MPP's Solana charges (the reference's `bindings/mpp_charge_solana.py`): `mpp/charge/solana`, on the `solana`
//! method, and `mpp/charge/usdc/solana`, the `usdc` method's Solana profile. H rides as the request's `externalId`
//! in LCP string form, which the payer signs as the one Memo instruction of a v0 transaction: the compute budget, a
//! `TransferChecked` of the mint from its associated token account to the recipient's (or a System transfer for
//! `sol`), then the memo. The seller's server co-signs as fee payer where `feePayer` is true, and broadcasts.
//!
//! The filters of the two methods are written here, beside the build, on the Solana rail ([`crate::rail::solana`]).

mod filter;
pub(crate) mod session;
mod session_channel;

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::challenge::Method;
use super::credential::{Credential, echoed_for};
use super::pieces::{Payer, Piece, on_network};
use crate::codec::{b64_encode, hex_bytes, to_hex};
use crate::hash::AtrHash;
use crate::json::{Member, Object, safe_int};
use crate::pairing::{
    Advertised, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::solana::program::{self, TransferChecked};
use crate::rail::solana::wire::{static_nonce, wire_of};
use crate::rail::solana::{Key, Transaction, Version, associated_token_address, compile, decode, signed_wire};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

use super::methods::USDC_CHARGE;
pub(crate) use filter::{SOLANA_CHARGE, usdc_profile_checks};

/// `mpp/charge/solana`'s id.
pub(crate) const SOLANA: &str = "mpp/charge/solana";
/// `mpp/charge/usdc/solana`'s id.
pub(crate) const USDC_SOLANA: &str = "mpp/charge/usdc/solana";

/// The compute unit limit a build sets when the buyer names none: a USDC `TransferChecked` with the 77-byte LCP memo
/// consumed 29,304 units on devnet, and this leaves a third more.
const DEFAULT_UNIT_LIMIT: u32 = 40_000;
/// The compute unit price a build sets when the buyer names none, in micro-lamports.
const DEFAULT_UNIT_PRICE: u64 = 1;
/// The most transactions a credential of type `bundle` may hold.
const MAX_BUNDLE: usize = 8;
const LCP_PREFIX: &str = "lcp:sha256:";

/// The inputs the build takes where the request's details leave them out (each `unless_offered`: the pairing's
/// choose checks it against the chosen challenge).
const INPUTS: &[InputSpec] = &[
    InputSpec::required(
        "decimals",
        InputType::Integer,
        "The mint's decimals (0 to 255), unless the request names them.",
    )
    .unless_offered("methodDetails.decimals"),
    InputSpec::required("tokenProgram", InputType::String, "The mint's owner (Token or Token-2022), unless named.")
        .with_format(InputFormat::NonEmpty)
        .unless_offered("methodDetails.tokenProgram"),
    InputSpec::required(
        "recentBlockhash",
        InputType::String,
        "A recent blockhash (base58), unless the request names one.",
    )
    .with_format(InputFormat::NonEmpty)
    .unless_offered("methodDetails.recentBlockhash"),
    InputSpec::optional("computeUnitLimit", InputType::Integer, "The compute unit limit (a u32); 40000 if absent."),
    InputSpec::optional(
        "computeUnitPrice",
        InputType::String,
        "The compute unit price in micro-lamports; 1 if absent.",
    )
    .with_format(InputFormat::Decimal),
];

/// The `usdc` profile's inputs: as [`INPUTS`], offered under `methodDetails.solana`.
const USDC_INPUTS: &[InputSpec] = &[
    InputSpec::required(
        "decimals",
        InputType::Integer,
        "The mint's decimals (0 to 255), unless the request names them.",
    )
    .unless_offered("methodDetails.solana.decimals"),
    InputSpec::required("tokenProgram", InputType::String, "The mint's owner (Token or Token-2022), unless named.")
        .with_format(InputFormat::NonEmpty)
        .unless_offered("methodDetails.solana.tokenProgram"),
    InputSpec::required(
        "recentBlockhash",
        InputType::String,
        "A recent blockhash (base58), unless the request names one.",
    )
    .with_format(InputFormat::NonEmpty)
    .unless_offered("methodDetails.solana.recentBlockhash"),
    InputSpec::optional("computeUnitLimit", InputType::Integer, "The compute unit limit (a u32); 40000 if absent."),
    InputSpec::optional(
        "computeUnitPrice",
        InputType::String,
        "The compute unit price in micro-lamports; 1 if absent.",
    )
    .with_format(InputFormat::Decimal),
];

/// A Solana account's address as the choice takes it: 32 to 44 base58 characters.
fn is_solana_address(text: &str) -> bool {
    (32..=44).contains(&text.len())
        && text
            .bytes()
            .all(|b| matches!(b, b'1'..=b'9' | b'A'..=b'H' | b'J'..=b'N' | b'P'..=b'Z' | b'a'..=b'k' | b'm'..=b'z'))
}

const fn piece(pairing: &'static str, method: &'static Method, inputs: &'static [InputSpec]) -> Piece {
    let payer =
        Payer::Account { namespace: Some("solana"), address: is_solana_address, field: Some("payer"), on: on_network };
    Piece { pairing, method, payer, inputs, now: false }
}

/// `mpp/charge/solana`.
pub(crate) static SOLANA_PAIRING: SolanaCharge =
    SolanaCharge { piece: piece(SOLANA, &SOLANA_CHARGE, INPUTS), transaction_only: false };
/// `mpp/charge/usdc/solana`.
pub(crate) static USDC_SOLANA_PAIRING: SolanaCharge =
    SolanaCharge { piece: piece(USDC_SOLANA, &USDC_CHARGE, USDC_INPUTS), transaction_only: true };

/// A Solana charge pairing: its piece, and whether its only credential is of type `transaction` (`usdc`'s profile).
#[derive(Debug)]
pub(crate) struct SolanaCharge {
    piece: Piece,
    transaction_only: bool,
}

impl SolanaCharge {
    /// The details the build reads: `methodDetails`, or for `usdc` its `solana` profile.
    fn details<'a>(&self, request: &'a Object) -> &'a Object {
        let d = super::challenge::details_of(request);
        if self.transaction_only { d.member("solana").and_then(Value::as_object).unwrap_or(d) } else { d }
    }
}

/// A refusal in the `svm` namespace.
const fn svm(reason: Reason) -> Refusal {
    Refusal::new("svm", reason)
}

/// An integral JSON number in `0..=max` (`6.0` is 6).
fn uint_in(value: &Value, max: u64) -> Option<u64> {
    safe_int(value).and_then(|n| u64::try_from(n).ok()).filter(|n| *n <= max)
}

impl Pairing for SolanaCharge {
    fn id(&self) -> &'static str {
        self.piece.pairing
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        super::read(doc)
    }

    /// The piece's choice, then the buyer's inputs the chosen request leaves to the buyer (`mpp/input-missing`
    /// where one is absent or not of its form): the mint's decimals and token program unless the details name them
    /// (none for `sol`), a recent blockhash unless they name one, and the compute budget where given. The choice is
    /// the reference's, `{challenge, payer, …inputs}`: only the inputs the request leaves to the buyer are kept (the
    /// build reads the request's own first), and no `now` (the build reads no time).
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let mut chosen = self.piece.choose(read, ctx)?;
        let challenge = chosen.build_input.member("challenge").ok_or(Refusal::mpp(Reason::NoPayableOption))?;
        let checked = super::challenge::checked_for(challenge, self.piece.pairing, self.piece.method)?;
        let d = self.details(checked.request());
        let native =
            !self.transaction_only && checked.request().member("currency").and_then(Value::as_str) == Some("sol");
        // Whether the build takes the input from the buyer: what the request leaves out.
        let buyers = |k: &str| match k {
            "decimals" => !native && !d.member("decimals").is_some_and(Value::is_number),
            "tokenProgram" => !native && !d.member("tokenProgram").is_some_and(Value::is_string),
            "recentBlockhash" => !d.member("recentBlockhash").is_some_and(Value::is_string),
            _ => true,
        };
        let given = |k: &str| ctx.inputs.member(k);
        let uint = |k: &str| given(k).and_then(|v| uint_in(v, crate::json::MAX_SAFE_INTEGER as u64)).is_some();
        let text = |k: &str| given(k).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        let missing = (buyers("decimals") && !uint("decimals"))
            || (buyers("tokenProgram") && !text("tokenProgram"))
            || (buyers("recentBlockhash") && !text("recentBlockhash"))
            || (given("computeUnitLimit").is_some() && !uint("computeUnitLimit"))
            || given("computeUnitPrice").is_some_and(|v| !v.as_str().is_some_and(crate::decimal::is_decimal));
        if missing {
            return Err(Refusal::mpp(Reason::InputMissing));
        }
        let offered: Vec<&str> = self.piece.inputs.iter().map(|spec| spec.name).filter(|k| !buyers(k)).collect();
        for name in offered {
            chosen.build_input.shift_remove(name);
        }
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        self.piece.inputs
    }

    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        self.piece.held(chosen)?.quote()
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Ok(Box::new(self.build_message(chosen, h)?))
    }

    fn bound(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        self.bound_h(presented, landed)
    }
}

/// The message for the payer to sign, and what its signature completes.
#[derive(Debug)]
pub(crate) struct Message<'a> {
    message: Vec<u8>,
    payer: Key,
    echo: Cow<'a, Value>,
}

impl SolanaCharge {
    /// The message: the request's transfer (a `TransferChecked` of the mint between the associated token accounts,
    /// or a System transfer for `sol`) and the one v3 Memo holding the request's `externalId`, which must be this
    /// H's LCP string (`svm/carrier-mismatch`). The fee payer is `feePayerKey` where `feePayer` is true, else the
    /// payer; the details' decimals, token program and blockhash are read before the buyer's. A choice whose
    /// members are not of their forms is `svm/input-malformed`.
    fn build_message<'a>(&self, chosen: &'a Chosen, h: &AtrHash) -> Result<Message<'a>, Refusal> {
        let choice = &chosen.build_input;
        let bad = || svm(Reason::InputMalformed);
        // The price is read back from its decimal string first, as the reference revives the choice before its build.
        let price = match choice.get("computeUnitPrice") {
            None => None,
            Some(v) => Some(
                v.as_str().filter(|s| crate::decimal::is_decimal(s)).ok_or(Refusal::x402(Reason::ChoiceMalformed))?,
            ),
        };
        let held = self.piece.offer(chosen, h)?;
        let r = held.checked.request();
        let d = self.details(r);
        let memo = lcp_string(h);
        if r.member("externalId").and_then(Value::as_str) != Some(memo.as_str()) {
            return Err(svm(Reason::CarrierMismatch));
        }
        let key = |v: Option<&Value>| v.and_then(Value::as_str).and_then(Key::parse);
        let payer = key(choice.get("payer")).ok_or_else(bad)?;
        let fee_payer =
            if d.member("feePayer") == Some(&Value::Bool(true)) { key(d.member("feePayerKey")) } else { Some(payer) };
        let fee_payer = fee_payer.ok_or_else(bad)?;
        let blockhash = d.member("recentBlockhash").filter(|b| b.is_string()).or_else(|| choice.get("recentBlockhash"));
        let blockhash = key(blockhash).ok_or_else(bad)?;
        let limit = match choice.get("computeUnitLimit").filter(|v| !v.is_null()) {
            None => DEFAULT_UNIT_LIMIT,
            Some(v) => uint_in(v, u64::from(u32::MAX)).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?,
        };
        let price = match price {
            None => DEFAULT_UNIT_PRICE,
            Some(p) => p.parse::<u64>().map_err(|_| bad())?,
        };
        let amount = r.member("amount").and_then(Value::as_str).and_then(|a| a.parse::<u64>().ok()).ok_or_else(bad)?;
        let recipient = key(r.member("recipient")).ok_or_else(bad)?;
        let currency = r.member("currency").and_then(Value::as_str).unwrap_or_default();
        // `sol` is a System transfer under usdc's profile too, as the reference builds it (its inputs, though, are a
        // mint's there: see choose).
        let transfer = if currency == "sol" {
            program::system_transfer(&payer, &recipient, amount)
        } else {
            let decimals = d.member("decimals").filter(|v| v.is_number()).or_else(|| choice.get("decimals"));
            let decimals = decimals.and_then(|v| uint_in(v, 255)).and_then(|n| u8::try_from(n).ok()).ok_or_else(bad)?;
            let token_program =
                d.member("tokenProgram").filter(|v| v.is_string()).or_else(|| choice.get("tokenProgram"));
            let token_program = key(token_program).filter(program::is_token_program).ok_or_else(bad)?;
            let mint = Key::parse(currency).ok_or_else(bad)?;
            TransferChecked {
                token_program,
                source: associated_token_address(&payer, &token_program, &mint)?,
                mint,
                destination: associated_token_address(&recipient, &token_program, &mint)?,
                authority: payer,
                amount,
                decimals,
            }
            .instruction()
        };
        let instructions = [
            program::set_compute_unit_limit(limit),
            program::set_compute_unit_price(price),
            transfer,
            program::memo(&memo),
        ];
        let message = compile(Version::V0, &fee_payer, &blockhash, &instructions)?;
        Ok(Message { message, payer, echo: held.echo })
    }

    /// H from the echoed challenge, once the transaction the credential presents holds exactly one Memo instruction
    /// whose data is an LCP string (`svm/no-carrier` for none, `svm/memo-count` for several; other memos, such as
    /// split labels, are not read), in lower-case hex (`svm/carrier-not-canonical`), equal to the request's
    /// `externalId` (`svm/carrier-mismatch`) and naming the challenge's H (`mpp/carrier-not-challenge`). No
    /// signature is verified here.
    fn bound_h(&self, presented: &dyn Member, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        let e = echoed_for(presented, self.piece.pairing, self.piece.method)?;
        let tx = self.presented_tx(e.payload, landed)?;
        static_nonce(&tx)?;
        let (h, memo) = carrier(&tx)?;
        if e.checked.request().member("externalId").and_then(Value::as_str) != Some(memo.as_str()) {
            return Err(svm(Reason::CarrierMismatch));
        }
        if h != e.h {
            return Err(Refusal::mpp(Reason::CarrierNotChallenge));
        }
        Ok(e.h)
    }

    /// The signed transaction a credential presents: that of a `transaction`, the last of a `bundle` (of 1 to 8,
    /// `svm/bundle-empty` for none, `svm/tx-malformed` past 8 or not a list), or for a `signature` the landed wire
    /// read beside the credential (`svm/read-first` without one; the credential's own members are not read). Any
    /// other type, or under `usdc` any type but `transaction`, is `mpp/credential-type`.
    fn presented_tx(&self, payload: &Object, landed: Option<&Value>) -> Result<Transaction, Refusal> {
        let kind = payload.member("type").and_then(Value::as_str);
        let text = match kind {
            Some("transaction") => payload.member("transaction"),
            _ if self.transaction_only => return Err(Refusal::mpp(Reason::CredentialType)),
            Some("bundle") => {
                let items = payload.member("transactions").and_then(Value::as_array);
                let items = items.filter(|i| i.len() <= MAX_BUNDLE).ok_or(svm(Reason::TxMalformed))?;
                Some(items.last().ok_or(svm(Reason::BundleEmpty))?)
            }
            Some("signature") => {
                let read = landed.and_then(|l| l.member("transaction")).filter(|t| t.is_string());
                Some(read.ok_or(svm(Reason::ReadFirst))?)
            }
            _ => return Err(Refusal::mpp(Reason::CredentialType)),
        };
        decode(&wire_of(text)?)
    }
}

impl Unsigned for Message<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        let mut fields = Map::with_capacity(1);
        fields.insert("message".into(), Value::String(to_hex(&self.message)));
        Ok(Some(SigningRequest::SolanaMessage(fields)))
    }

    /// The credential `{challenge, payload: {type: "transaction", transaction}}`, the wire partially signed by the
    /// payer. An answer that is not a 64-byte signature in `0x` hex is `mpp/credential-malformed`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::mpp(Reason::CredentialMalformed);
        let answer = answers.first().and_then(Answer::as_str).filter(|s| s.starts_with("0x"));
        let bytes = answer.and_then(hex_bytes).ok_or_else(malformed)?;
        let signature: [u8; 64] = bytes.try_into().map_err(|_| malformed())?;
        let wire = signed_wire(&self.message, &self.payer, &signature)?;
        let mut payload = Map::with_capacity(2);
        payload.insert("type".into(), "transaction".into());
        payload.insert("transaction".into(), Value::String(b64_encode(&wire)));
        Ok(Credential::new(Cow::Borrowed(&*self.echo), None, payload.into())?.completion())
    }
}

/// H's LCP string: `lcp:sha256:0x` and its 64 lower-case hex digits.
fn lcp_string(h: &AtrHash) -> String {
    format!("{LCP_PREFIX}{}", h.to_hex())
}

/// The one top-level Memo instruction (v3 or v4) whose data is UTF-8 text of an LCP string, with its H and text.
fn carrier(tx: &Transaction) -> Result<(AtrHash, String), Refusal> {
    let mut found =
        tx.instructions.iter().filter(|ix| tx.program_of(ix).is_some_and(program::is_memo_program)).filter_map(|ix| {
            let text = std::str::from_utf8(&ix.data).ok()?;
            let h = text.strip_prefix(LCP_PREFIX).and_then(AtrHash::parse)?;
            Some((h, text))
        });
    let (h, text) = found.next().ok_or(svm(Reason::NoCarrier))?;
    if found.next().is_some() {
        return Err(svm(Reason::MemoCount));
    }
    if text != lcp_string(&h) {
        return Err(svm(Reason::CarrierNotCanonical));
    }
    Ok((h, text.to_owned()))
}
