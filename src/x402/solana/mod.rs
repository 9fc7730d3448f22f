//! The x402 pairings on Solana: the option filter's pieces they share, the buyer's inputs beside the option (the
//! mint's decimals and token program, a recent blockhash, the compute budget), and the reading of H back from the
//! one Memo instruction of a wire transaction.

pub mod batch;
pub mod batch_channel;
pub mod exact;
pub mod upto;

use serde_json::{Map, Value};

use crate::account::Account;
use crate::codec::hex_bytes;
use crate::hash::AtrHash;
use crate::json::{Member, safe_int};
pub(crate) use crate::rail::solana::wire::{static_nonce, wire_of};
use crate::rail::solana::{Key, Transaction, program};
use crate::refusal::{Reason, Refusal};
use crate::signer::Answer;

/// The longest `extra.memo` an option may carry, in UTF-8 bytes.
pub(crate) const MAX_MEMO: usize = 256;
/// The compute unit limit a build sets when the buyer names none: a USDC `TransferChecked` with the 77-byte LCP memo
/// consumed 29,304 units on devnet, and this leaves a third more.
pub(crate) const DEFAULT_UNIT_LIMIT: u32 = 40_000;
/// The compute unit price a build sets when the buyer names none, in micro-lamports.
pub(crate) const DEFAULT_UNIT_PRICE: u64 = 1;

const SVM: &str = "svm";
const LCP_PREFIX: &str = "lcp:sha256:";

/// A refusal in the `svm` namespace.
pub(crate) const fn svm(reason: Reason) -> Refusal {
    Refusal::new(SVM, reason)
}

/// Whether a value is a Solana CAIP-2 network: `solana:` and a 32-character base58 genesis hash prefix.
pub(crate) fn is_solana_network(value: &Value) -> bool {
    value.as_str().and_then(|s| s.strip_prefix("solana:")).is_some_and(|r| r.len() == 32 && r.bytes().all(is_base58))
}

const fn is_base58(b: u8) -> bool {
    matches!(b, b'1'..=b'9' | b'A'..=b'H' | b'J'..=b'N' | b'P'..=b'Z' | b'a'..=b'k' | b'm'..=b'z')
}

/// The key a member holds, when it is a base58 string of 32 bytes.
pub(crate) fn key_of(value: Option<&Value>) -> Option<Key> {
    value.and_then(Value::as_str).and_then(Key::parse)
}

/// The Solana account a signer's CAIP-10 account names: its network and its base58 address (32 to 44 characters);
/// `None` for any other account.
pub(crate) fn solana_account(account: &str) -> Option<(String, String)> {
    let a = Account::parse(account)?;
    let form = (32..=44).contains(&a.address.len()) && a.address.bytes().all(is_base58);
    (a.namespace == "solana" && form).then_some((a.network, a.address))
}

/// A decimal string of 1 to 78 digits as a u64: `Some(None)` when its value is past u64, `None` when it is no
/// decimal string.
pub(crate) fn decimal_u64(value: Option<&Value>) -> Option<Option<u64>> {
    let text = value.and_then(Value::as_str).filter(|s| crate::decimal::is_decimal(s))?;
    Some(text.parse().ok())
}

/// An integral JSON number as an integer in `0..=max` (`6.0` is 6).
fn uint_in(value: &Value, max: u64) -> Option<u64> {
    safe_int(value).and_then(|n| u64::try_from(n).ok()).filter(|n| *n <= max)
}

/// The form a buyer's input must have, as the reference's choose reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A non-negative safe integer (`6.0` is 6).
    Uint,
    /// A string of one character or more.
    NonEmpty,
    /// A decimal string of 1 to 78 digits.
    Decimal,
}

/// The named inputs in order, each present and of its form unless optional and absent; the first that is not is
/// `x402/input-missing`. The values as given.
pub(crate) fn take_inputs(
    given: &Map<String, Value>,
    specs: &[(&str, bool, Form)],
) -> Result<Map<String, Value>, Refusal> {
    let mut out = Map::new();
    for (key, optional, form) in specs {
        let ok = |v: &Value| match form {
            Form::Uint => uint_in(v, crate::json::MAX_SAFE_INTEGER as u64).is_some(),
            Form::NonEmpty => v.as_str().is_some_and(|s| !s.is_empty()),
            Form::Decimal => v.as_str().is_some_and(crate::decimal::is_decimal),
        };
        match given.get(*key) {
            None if *optional => {}
            Some(v) if ok(v) => {
                out.insert((*key).to_owned(), v.clone());
            }
            _ => return Err(Refusal::x402(Reason::InputMissing)),
        }
    }
    Ok(out)
}

/// The buyer's inputs `x402/exact/solana` takes, checked for `input-missing` as the reference's choose does (the
/// spec's types, and an integer that is negative), with `extra.recentBlockhash` standing in for the buyer's blockhash
/// where the option carries a key there. The values as the choice carries them.
pub(crate) fn buyer_inputs(accepted: &Value, given: &Map<String, Value>) -> Result<Map<String, Value>, Refusal> {
    let offered =
        accepted.member("extra").and_then(|e| e.member("recentBlockhash")).filter(|b| key_of(Some(b)).is_some());
    let mut specs = vec![("decimals", false, Form::Uint), ("tokenProgram", false, Form::NonEmpty)];
    if offered.is_none() {
        specs.push(("recentBlockhash", false, Form::NonEmpty));
    }
    specs.extend([("computeUnitLimit", true, Form::Uint), ("computeUnitPrice", true, Form::Decimal)]);
    let mut out = take_inputs(given, &specs)?;
    if let Some(b) = offered {
        out.insert("recentBlockhash".into(), b.clone());
    }
    Ok(out)
}

/// The payer's members of a choice in their rail form, as every Solana build checks them before the document and
/// option (`svm/input-malformed` otherwise): the payer and recent blockhash keys, Token's or Token-2022's program,
/// and the compute unit limit (a u32) and price (a u64) when given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PayerInput {
    pub(crate) payer: Key,
    pub(crate) token_program: Key,
    pub(crate) recent_blockhash: Key,
    pub(crate) unit_limit: u32,
    pub(crate) unit_price: u64,
}

impl PayerInput {
    /// The members of `choice`, checked, with `default_limit` the compute unit limit when the choice names none.
    pub(crate) fn of(choice: &Map<String, Value>, default_limit: u32) -> Result<Self, Refusal> {
        let bad = || svm(Reason::InputMalformed);
        let present = |k: &str| choice.get(k).filter(|v| !v.is_null());
        // The price is read back from its decimal string first, as the reference revives the choice before its build.
        let unit_price = match present("computeUnitPrice") {
            None => None,
            Some(v) => Some(
                v.as_str().filter(|s| crate::decimal::is_decimal(s)).ok_or(Refusal::x402(Reason::ChoiceMalformed))?,
            ),
        };
        let payer = key_of(choice.get("payer")).ok_or_else(bad)?;
        let token_program = key_of(choice.get("tokenProgram")).filter(program::is_token_program).ok_or_else(bad)?;
        let recent_blockhash = key_of(choice.get("recentBlockhash")).ok_or_else(bad)?;
        let unit_limit = match present("computeUnitLimit") {
            None => default_limit,
            Some(v) => uint_in(v, u64::from(u32::MAX)).and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?,
        };
        let unit_price = match unit_price {
            None => DEFAULT_UNIT_PRICE,
            Some(s) => s.parse::<u64>().map_err(|_| bad())?,
        };
        Ok(Self { payer, token_program, recent_blockhash, unit_limit, unit_price })
    }
}

/// The choice's `decimals` as a byte (an integral JSON number in `0..=255`), else `svm/input-malformed`.
pub(crate) fn decimals_of(choice: &Map<String, Value>) -> Result<u8, Refusal> {
    let decimals = choice.get("decimals").and_then(|v| uint_in(v, 255)).and_then(|n| u8::try_from(n).ok());
    decimals.ok_or(svm(Reason::InputMalformed))
}

/// The signer's one answer as a 64-byte ed25519 signature written as `0x` hex, else `x402/signature-malformed`.
pub(crate) fn signature64(answers: &[Answer]) -> Result<[u8; 64], Refusal> {
    let malformed = || Refusal::x402(Reason::SignatureMalformed);
    let [answer] = answers else { return Err(malformed()) };
    let bytes = answer.as_str().filter(|s| s.starts_with("0x")).and_then(hex_bytes).ok_or_else(malformed)?;
    bytes.try_into().map_err(|_| malformed())
}

/// H as the one top-level Memo instruction (v3 or v4) of a transaction carries it, with the memo's text: none or
/// several is `svm/memo-count`, data that is not UTF-8 `svm/memo-not-utf8`, text that is not an LCP string
/// `svm/memo-not-lcp`, and H in another spelling than its lower-case LCP string `svm/carrier-not-canonical`.
pub(crate) fn carrier(tx: &Transaction) -> Result<(AtrHash, &str), Refusal> {
    let mut memos = tx.instructions.iter().filter(|ix| tx.program_of(ix).is_some_and(program::is_memo_program));
    let (Some(memo), None) = (memos.next(), memos.next()) else { return Err(svm(Reason::MemoCount)) };
    memo_carrier(&memo.data)
}

/// H as one Memo instruction's data carries it, with the memo's text: data that is not UTF-8 is `svm/memo-not-utf8`,
/// text that is not an LCP string `svm/memo-not-lcp`, and H in another spelling than its lower-case LCP string
/// `svm/carrier-not-canonical`.
pub(crate) fn memo_carrier(data: &[u8]) -> Result<(AtrHash, &str), Refusal> {
    let text = std::str::from_utf8(data).map_err(|_| svm(Reason::MemoNotUtf8))?;
    let h = text.strip_prefix(LCP_PREFIX).and_then(AtrHash::parse).ok_or(svm(Reason::MemoNotLcp))?;
    if text != lcp_string(&h) {
        return Err(svm(Reason::CarrierNotCanonical));
    }
    Ok((h, text))
}

/// H's LCP string: `lcp:sha256:0x` and its 64 lower-case hex digits.
pub(crate) fn lcp_string(h: &AtrHash) -> String {
    format!("{LCP_PREFIX}{}", h.to_hex())
}

/// The UTF-8 length of a memo.
pub(crate) fn memo_length(memo: &str) -> usize {
    memo.len()
}
