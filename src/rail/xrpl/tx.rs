//! Transactions the XRPL pairings build, written from their JSON form (the `txJson` of an `xrpl-tx` or
//! `xrpl-session-open` request, in xrpl.js / xrpl-py's field names), and the hashes and signing bytes around them.

use serde_json::{Map, Value};
use sha2::{Digest, Sha512};

use super::address::account_id;
use super::decode::{self, Field, write_header, write_length};
use super::fields::{self, Code};
use super::values::{currency_code, issued_value, xrp_amount};

/// The prefix of a single-signed transaction's signing bytes (`STX\0`).
pub const SIGNING_PREFIX: [u8; 4] = *b"STX\0";
/// The prefix of a transaction id's preimage (`TXN\0`).
pub const TXN_PREFIX: [u8; 4] = *b"TXN\0";
/// The prefix of a payment channel claim's signing bytes (`CLM\0`).
pub const CLAIM_PREFIX: [u8; 4] = *b"CLM\0";
/// The ledger space of a PayChannel entry's id.
const PAY_CHANNEL_SPACE: [u8; 2] = [0x00, 0x78];

/// SHA-512Half: the first 32 bytes of SHA-512.
pub fn sha512_half(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha512::new();
    for p in parts {
        h.update(p);
    }
    let digest = h.finalize();
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.get(..32).unwrap_or(&[0; 32]));
    out
}

/// A transaction's id: SHA-512Half of `TXN\0` and its signed bytes.
pub fn tx_hash(blob: &[u8]) -> [u8; 32] {
    sha512_half(&[&TXN_PREFIX, blob])
}

/// The bytes a single signer signs: `STX\0` and the transaction without its signature.
pub fn signing_bytes(unsigned: &[u8]) -> Vec<u8> {
    let mut out = SIGNING_PREFIX.to_vec();
    out.extend_from_slice(unsigned);
    out
}

/// A PayChannel's id: SHA-512Half of 0x0078, the source's and destination's AccountIDs and the creating
/// transaction's sequence, big-endian.
pub fn channel_id(source: &[u8; 20], destination: &[u8; 20], sequence: u32) -> [u8; 32] {
    sha512_half(&[&PAY_CHANNEL_SPACE, source, destination, &sequence.to_be_bytes()])
}

/// The bytes a channel claim signs: `CLM\0`, the channel id and the drops, big-endian.
pub fn claim_bytes(channel: &[u8; 32], drops: u64) -> Vec<u8> {
    let mut out = CLAIM_PREFIX.to_vec();
    out.extend_from_slice(channel);
    out.extend_from_slice(&drops.to_be_bytes());
    out
}

/// Why a transaction's JSON cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the transaction's {0} cannot be written")]
pub struct WriteError(pub String);

/// A transaction to write: each field's code and its value bytes as they follow the header (a length prefix
/// included, an object's or array's end marker included), written in canonical order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tx {
    fields: Vec<(Code, Vec<u8>)>,
}

impl Tx {
    /// Sets a field from its written value bytes, replacing any earlier value.
    pub fn set(&mut self, code: Code, bytes: Vec<u8>) {
        self.fields.retain(|(c, _)| *c != code);
        self.fields.push((code, bytes));
    }

    /// Sets a variable-length field from its content.
    pub fn set_blob(&mut self, code: Code, content: &[u8]) {
        let mut bytes = Vec::with_capacity(content.len() + 3);
        write_length(&mut bytes, content.len());
        bytes.extend_from_slice(content);
        self.set(code, bytes);
    }

    /// The canonical bytes, every field in ascending order of type code and field code.
    pub fn encode(&self) -> Vec<u8> {
        let mut sorted: Vec<&(Code, Vec<u8>)> = self.fields.iter().collect();
        sorted.sort_by_key(|(code, _)| *code);
        let mut out = Vec::new();
        for (code, bytes) in sorted {
            write_header(&mut out, *code);
            out.extend_from_slice(bytes);
        }
        out
    }

    /// The transaction of a JSON object in xrpl.js's field names. It writes the fields the XRPL pairings build:
    /// `TransactionType`, `Flags`, `SourceTag`, `Sequence`, `DestinationTag`, `LastLedgerSequence`, `CancelAfter`,
    /// `SettleDelay`, `TicketSequence`, `NetworkID`, `InvoiceID`, `Channel`, `Amount`, `Balance`, `Fee`, `SendMax`,
    /// `PublicKey`, `SigningPubKey`, `TxnSignature`, `Account`, `Destination` and `Memos`; any other member is an
    /// error, so nothing is signed that was not read.
    pub fn from_json(tx: &Map<String, Value>) -> Result<Self, WriteError> {
        let mut out = Self::default();
        for (name, value) in tx {
            let bad = || WriteError(name.clone());
            let code = code_of(name).ok_or_else(bad)?;
            match code.0 {
                fields::UINT16 => {
                    let t = value.as_str().and_then(fields::transaction_type_value).ok_or_else(bad)?;
                    out.set(code, t.to_be_bytes().to_vec());
                }
                fields::UINT32 => {
                    let n = value.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(bad)?;
                    out.set(code, n.to_be_bytes().to_vec());
                }
                fields::HASH256 => {
                    let h = value.as_str().and_then(|s| hex::decode(s).ok()).filter(|b| b.len() == 32);
                    out.set(code, h.ok_or_else(bad)?);
                }
                fields::AMOUNT => out.set(code, amount_bytes(value).ok_or_else(bad)?),
                fields::BLOB => {
                    let b = value.as_str().and_then(|s| hex::decode(s).ok()).ok_or_else(bad)?;
                    out.set_blob(code, &b);
                }
                fields::ACCOUNT => {
                    let id = value.as_str().and_then(account_id).ok_or_else(bad)?;
                    out.set_blob(code, &id);
                }
                _ => out.set(code, memos_bytes(value).ok_or_else(bad)?),
            }
        }
        Ok(out)
    }
}

/// The code of a field the builds write, by its JSON name.
fn code_of(name: &str) -> Option<Code> {
    Some(match name {
        "TransactionType" => fields::TRANSACTION_TYPE,
        "Flags" => fields::FLAGS,
        "SourceTag" => fields::SOURCE_TAG,
        "Sequence" => fields::SEQUENCE,
        "DestinationTag" => fields::DESTINATION_TAG,
        "LastLedgerSequence" => fields::LAST_LEDGER_SEQUENCE,
        "CancelAfter" => fields::CANCEL_AFTER,
        "SettleDelay" => fields::SETTLE_DELAY,
        "TicketSequence" => fields::TICKET_SEQUENCE,
        "NetworkID" => fields::NETWORK_ID,
        "InvoiceID" => fields::INVOICE_ID,
        "Channel" => fields::CHANNEL,
        "Amount" => fields::AMOUNT_FIELD,
        "Balance" => fields::BALANCE,
        "Fee" => fields::FEE,
        "SendMax" => fields::SEND_MAX,
        "PublicKey" => fields::PUBLIC_KEY,
        "SigningPubKey" => fields::SIGNING_PUB_KEY,
        "TxnSignature" => fields::TXN_SIGNATURE,
        "Account" => fields::ACCOUNT_FIELD,
        "Destination" => fields::DESTINATION,
        "Memos" => fields::MEMOS,
        _ => return None,
    })
}

/// An amount's bytes: drops as a decimal string, an issued amount `{currency, issuer, value}`, or an MPT amount
/// `{mpt_issuance_id, value}`.
pub fn amount_bytes(value: &Value) -> Option<Vec<u8>> {
    if let Some(drops) = value.as_str() {
        let ok = !drops.is_empty() && drops.len() <= 18 && drops.bytes().all(|b| b.is_ascii_digit());
        return ok.then(|| drops.parse().ok().and_then(xrp_amount)).flatten().map(|b| b.to_vec());
    }
    let o = value.as_object()?;
    let text = |k: &str| o.get(k).and_then(Value::as_str);
    if let Some(id) = text("mpt_issuance_id") {
        let id = hex::decode(id).ok().filter(|b| b.len() == 24 && o.len() == 2)?;
        let v: u64 = text("value").filter(|v| v.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()?;
        if v >= 1 << 63 {
            return None;
        }
        let mut out = vec![0x60];
        out.extend(v.to_be_bytes());
        out.extend(id);
        return Some(out);
    }
    if o.len() != 3 {
        return None;
    }
    let mut out = issued_value(text("value")?)?.to_vec();
    out.extend(currency_code(text("currency")?)?);
    out.extend(account_id(text("issuer")?)?);
    Some(out)
}

/// A `Memos` array's bytes: each `{"Memo": {MemoType?, MemoData?, MemoFormat?}}` (hex) as one member.
fn memos_bytes(value: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for member in value.as_array()? {
        let memo = member.as_object().filter(|m| m.len() == 1)?.get("Memo")?.as_object()?;
        let mut inner = Tx::default();
        for (name, v) in memo {
            let code = match name.as_str() {
                "MemoType" => fields::MEMO_TYPE,
                "MemoData" => fields::MEMO_DATA,
                "MemoFormat" => fields::MEMO_FORMAT,
                _ => return None,
            };
            inner.set_blob(code, &hex::decode(v.as_str()?).ok()?);
        }
        write_header(&mut out, fields::MEMO);
        out.extend(inner.encode());
        out.push(0xE1);
    }
    out.push(0xF1);
    Some(out)
}

/// The decoded top-level fields of a signed transaction without its signature and signing key, written back: what
/// a build's own transaction, with neither, writes to when the signer signed what it was handed.
pub fn without_signature(fields: &[Field<'_>]) -> Vec<u8> {
    let kept: Vec<Field<'_>> = fields
        .iter()
        .filter(|f| f.code != fields::SIGNING_PUB_KEY && f.code != fields::TXN_SIGNATURE)
        .cloned()
        .collect();
    decode::encode(&kept)
}
