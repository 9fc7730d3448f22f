//! The Tempo answers of the differential test on the crate's side, as `scripts/differential/peer_tempo.py` computes
//! them on the reference's (`scripts/differential/mpp_tempo.py` names the edits): `$tempo`, a 0x76 transaction of a
//! `tempo-call` or `tempo-calls` request's calls, written by the Tempo rail and signed by the local key; `$pushed`, a
//! broadcasting signer's `{hash, landed}`; `$digest`, the key's signature of a request's `digest`. Each is `None` for a
//! request of another kind.

use alloy_primitives::{Address, Bytes, U256, keccak256};
use serde_json::{Map, Value, json};
use terms::SigningRequest;
use terms::rail::tempo::transaction::{EMPTY_LIST, TempoCall, TempoTransaction};

use crate::answers::{edit_signature, local};

/// The request's members and calls (`call`, or `calls`), for a Tempo request.
fn calls_of(request: Option<&SigningRequest>) -> Option<(&Map<String, Value>, Vec<Value>)> {
    match request? {
        SigningRequest::TempoCall(fields) => Some((fields, vec![fields.get("call")?.clone()])),
        SigningRequest::TempoCalls(fields) => Some((fields, fields.get("calls")?.as_array()?.clone())),
        _ => None,
    }
}

/// `object[key] = value`, in place.
fn set(object: &mut Map<String, Value>, key: &str, value: Value) {
    object.insert(key.to_owned(), value);
}

/// The text with its last hex digit changed (the same rule on both sides).
fn flip_last(text: &str) -> String {
    let mut out = text.to_owned();
    let last = out.pop();
    out.push(if last == Some('0') { '1' } else { '0' });
    out
}

fn address(value: Option<&Value>) -> Option<Address> {
    let text = value?.as_str()?;
    text.strip_prefix("0x").filter(|d| d.len() == 40)?;
    text.parse().ok()
}

fn bytes(value: Option<&Value>) -> Option<Vec<u8>> {
    hex::decode(value?.as_str()?.strip_prefix("0x")?).ok()
}

/// A `$tempo` answer: the transaction of the request's calls on its chain, valid before its `validBefore`, with the
/// spec's fees paid in the first call's token and its key's signature, the edits applied.
pub(crate) fn signed_tempo(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let (fields, mut calls) = calls_of(request)?;
    let mut chain = fields.get("chainId")?.as_u64()?;
    let valid_before = fields.get("validBefore")?.as_u64()?;
    if !calls.iter().all(Value::is_object) {
        return None;
    }
    let fee_token = calls.first().and_then(|c| address(c.get("to")));
    let edit = spec.get("edit").and_then(Value::as_str).unwrap_or("none");
    match edit {
        "chain" => chain += 1,
        "token" => {
            let other = spec.get("otherToken")?;
            calls.iter_mut().filter_map(Value::as_object_mut).for_each(|c| set(c, "to", other.clone()));
        }
        "memo" => {
            if let Some(first) = calls.first_mut().and_then(Value::as_object_mut) {
                let data = flip_last(first.get("data").and_then(Value::as_str).unwrap_or(""));
                set(first, "data", Value::String(data));
            }
        }
        "double" => {
            if let Some(first) = calls.first().cloned() {
                calls.push(first);
            }
        }
        "no-calls" => calls.clear(),
        _ => {}
    }
    let calls = calls
        .iter()
        .map(|c| {
            Some(TempoCall { to: Some(address(c.get("to"))?), value: U256::ZERO, input: bytes(c.get("data"))?.into() })
        })
        .collect::<Option<Vec<_>>>()?;
    let fees = spec.get("fees")?;
    let number = |k: &str| fees.get(k).and_then(Value::as_u64);
    let mut tx = TempoTransaction {
        chain_id: chain,
        max_priority_fee_per_gas: number("maxPriorityFeePerGas")?.into(),
        max_fee_per_gas: number("maxFeePerGas")?.into(),
        gas_limit: number("gas")?,
        calls,
        access_list: Bytes::from_static(&EMPTY_LIST),
        nonce_key: U256::ZERO,
        nonce: number("nonce")?,
        valid_before: Some(valid_before),
        valid_after: None,
        fee_token,
        fee_payer_signature: None,
        authorization_list: Bytes::from_static(&EMPTY_LIST),
        key_authorization: None,
        signature: Bytes::new(),
    };
    let signer = local(spec.get("key")?.as_str()?)?;
    let signature = signer.sign_digest(&keccak256(tx.sender_signed()).0).ok()?;
    tx.signature = hex::decode(signature.strip_prefix("0x")?).ok()?.into();
    let mut wire = tx.encode();
    match edit {
        "truncate" => {
            wire.pop();
        }
        "type" => {
            if let Some(first) = wire.first_mut() {
                *first = 0x02;
            }
        }
        _ => {}
    }
    let hex_edit = spec.get("hexEdit").and_then(Value::as_str).unwrap_or("none");
    Some(edit_signature(&format!("0x{}", hex::encode(wire)), hex_edit))
}

/// A `$pushed` answer: the spec's hash and, as its landed read, the spec's receipt with every TransferWithMemo log's
/// memo topic (the logs of four topics) set to the memo of the request's first call, the edits applied.
pub(crate) fn pushed(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let (_, calls) = calls_of(request)?;
    let data = calls.first().and_then(|c| c.get("data")).and_then(Value::as_str).unwrap_or("");
    let memo = data.get(138..202).map(|m| format!("0x{m}"));
    let edit = spec.get("edit").and_then(Value::as_str).unwrap_or("none");
    let receipt = spec.get("receipt")?;
    let mut logs = receipt.get("logs")?.as_array()?.clone();
    let mut memo_logs = Vec::new();
    for log in &mut logs {
        let Some(topics) = log.get_mut("topics").and_then(Value::as_array_mut).filter(|t| t.len() == 4) else {
            continue;
        };
        if let (Some(memo), Some(slot)) = (&memo, topics.get_mut(3)) {
            *slot = Value::String(memo.clone());
        }
        if let Some(slot) = topics.get_mut(3) {
            let fourth = slot.as_str().unwrap_or("").to_owned();
            match edit {
                "memo" => *slot = Value::String(flip_last(&fourth)),
                "upper-memo" => *slot = Value::String(format!("0x{}", fourth.get(2..).unwrap_or("").to_uppercase())),
                _ => {}
            }
        }
        match edit {
            "three-topics" => topics.truncate(3),
            "token" => {
                if let (Some(log), Some(other)) = (log.as_object_mut(), spec.get("otherToken")) {
                    set(log, "address", other.clone());
                }
            }
            _ => {}
        }
        memo_logs.push(log.clone());
    }
    match edit {
        "double" => logs.extend(memo_logs),
        "no-logs" => logs.clear(),
        _ => {}
    }
    let mut hash = spec.get("hash")?.as_str()?.to_owned();
    let block = receipt.get("blockNumber")?.as_str()?;
    let mut landed = Map::new();
    set(&mut landed, "transaction", json!(hash));
    set(&mut landed, "blockNumber", json!(block));
    set(&mut landed, "logs", Value::Array(logs));
    match edit {
        "block-zeros" => set(&mut landed, "blockNumber", Value::String(format!("00{block}"))),
        "block-hex" => set(&mut landed, "blockNumber", json!("0x64")),
        "block-number" => set(&mut landed, "blockNumber", json!(block.parse::<u64>().ok()?)),
        "transaction-number" => set(&mut landed, "transaction", json!(5)),
        "hash-short" => {
            hash.truncate(hash.len().saturating_sub(2));
        }
        "hash-upper" => hash = format!("0x{}", hash.get(2..).unwrap_or("").to_uppercase()),
        _ => {}
    }
    Some(match edit {
        "no-landed" => json!({"hash": hash}),
        "landed-not-object" => json!({"hash": hash, "landed": [landed]}),
        _ => json!({"hash": hash, "landed": landed}),
    })
}

/// A `$digest` answer: the spec's key's signature of the request's `digest` (a key authorization's, which the root
/// key signs), then the edit; `None` for a request with no 32-byte `0x` hex digest.
pub(crate) fn signed_digest(spec: &Value, request: Option<&SigningRequest>) -> Option<Value> {
    let digest: [u8; 32] = bytes(request?.fields()?.get("digest"))?.try_into().ok()?;
    let signature = local(spec.get("key")?.as_str()?)?.sign_digest(&digest).ok()?;
    Some(edit_signature(&signature, spec.get("edit").and_then(Value::as_str).unwrap_or("none")))
}
