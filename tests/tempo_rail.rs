//! The Tempo rail's facts, from `tests/vectors/mpp-charge-tempo-memo.json`'s own rows: the `transferWithMemo`
//! selector, calldata and event topic (MV7), the signed 0x76 wire built from MV7's `wire` fields and read back from
//! B6's presented payment (its length and SHA-256), and split payments as calls (`splits`). Reading a wire the
//! reference refuses: the bad-input cases below (another type byte, trailing bytes, a non-canonical integer, too
//! deep, too large). The sender and expiring nonce hash of `mpp-session-tempo.json`'s landed open (L1); the
//! authorization list's signatures; the key authorization of `mpp-subscription-tempo.json`'s SUB1 (lengths and
//! digest; its integers are decimal strings in the file where the reference emits JSON numbers: the peer wins, and
//! the rail takes typed values).
//!
//! Not run here, as not rail facts: the memo's derivation and check (the MPP core), B2 and B6's verdicts and `plant`
//! (the pairings), MV8 (receipts a verifier reads); `agreedRefusals`' rows whose splits do not parse (a recipient
//! that is not an address, a memo that is not 32 bytes) are the pairing's reading of `methodDetails`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};
use terms::rail::tempo::key_authorization::{
    KeyAuthorization, KeyAuthorizationMalformed, Limit, MAX_KEY_AUTHORIZATION_BYTES, MAX_SCOPES, Scope, SelectorRule,
};
use terms::rail::tempo::tip20::{
    Split, SplitError, TRANSFER_WITH_MEMO_SELECTOR, TRANSFER_WITH_MEMO_TOPIC, charge_calls, memo_of, primary_amount,
    transfer_with_memo_calldata,
};
use terms::rail::tempo::transaction::{EMPTY_LIST, MAX_WIRE_BYTES, TempoCall, TempoTransaction, TxError};

fn file() -> Value {
    serde_json::from_str(include_str!("vectors/mpp-charge-tempo-memo.json")).unwrap()
}

fn bytes(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text.strip_prefix("0x").unwrap()).unwrap()
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or_else(|| panic!("{pointer}"))
}

/// The B6 row's presented payment and the request its challenge carries.
fn b6(f: &Value) -> (Value, Value) {
    let rows = f.pointer("/buyer/rows").unwrap().as_array().unwrap();
    let row = rows.iter().find(|r| r["name"] == "B6").unwrap();
    let presented = row["input"]["presented"].clone();
    let request = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(presented["challenge"]["request"].as_str().unwrap())
        .unwrap();
    (presented, serde_json::from_slice(&request).unwrap())
}

#[test]
fn transfer_with_memo_selector_topic_and_calldata() {
    let f = file();
    let mv7 = &f["MV7"];
    let (_, request) = b6(&f);
    assert_eq!(TRANSFER_WITH_MEMO_SELECTOR.as_slice(), &keccak256(str_of(mv7, "/selectorSignature"))[..4]);
    assert_eq!(TRANSFER_WITH_MEMO_SELECTOR.as_slice(), bytes(str_of(mv7, "/expectSelector")));
    assert_eq!(TRANSFER_WITH_MEMO_TOPIC, keccak256(str_of(mv7, "/topicSignature")));
    let to: Address = str_of(&request, "/recipient").parse().unwrap();
    let amount: U256 = str_of(&request, "/amount").parse().unwrap();
    let memo: B256 = str_of(mv7, "/expectMemo").parse().unwrap();
    let calldata = transfer_with_memo_calldata(to, amount, memo);
    assert_eq!(calldata, bytes(str_of(mv7, "/expectCalldata")));
    assert_eq!(memo_of(&calldata, to, amount), Some(memo));
    // Another recipient, another amount, a cut or lengthened calldata: no memo.
    assert_eq!(memo_of(&calldata, Address::ZERO, amount), None);
    assert_eq!(memo_of(&calldata, to, amount + U256::from(1)), None);
    assert_eq!(memo_of(&calldata[..99], to, amount), None);
    assert_eq!(memo_of(&[calldata.as_slice(), &[0]].concat(), to, amount), None);
}

/// MV7's `wire`: `0x76 ‖ rlp([f0, f1, …])`, its fields named by the file (`pathUSD`, `calldata`, `""`, `[]`,
/// `0x11 × 65`) or written as integers.
fn wire_fields(f: &Value) -> Vec<String> {
    let w = str_of(f, "/MV7/wire");
    let inner = w.split_once("rlp([").unwrap().1.strip_suffix("])").unwrap();
    let (mut out, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for ch in inner.chars() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_owned());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_owned());
    out
}

fn built_from_mv7(f: &Value) -> TempoTransaction {
    let fields = wire_fields(f);
    assert_eq!(fields.len(), 14, "{fields:?}");
    let path_usd: Address = str_of(f, "/fixed/pathUSD").parse().unwrap();
    let int = |i: usize| fields[i].parse::<u64>().unwrap();
    let empty = |i: usize| {
        assert_eq!(fields[i], "\"\"");
    };
    let list = |i: usize| {
        assert_eq!(fields[i], "[]");
        Bytes::copy_from_slice(&EMPTY_LIST)
    };
    assert_eq!(fields[4], "[[pathUSD, 0, calldata]]");
    assert_eq!(fields[10], "pathUSD");
    let (byte, count) = fields[13].split_once(" \u{d7} ").unwrap();
    let signature = vec![bytes(byte)[0]; count.parse().unwrap()];
    empty(9);
    empty(11);
    TempoTransaction {
        chain_id: int(0),
        max_priority_fee_per_gas: int(1).into(),
        max_fee_per_gas: int(2).into(),
        gas_limit: int(3),
        calls: vec![TempoCall {
            to: Some(path_usd),
            value: U256::ZERO,
            input: bytes(str_of(f, "/MV7/expectCalldata")).into(),
        }],
        access_list: list(5),
        nonce_key: U256::from(int(6)),
        nonce: int(7),
        valid_before: Some(int(8)),
        valid_after: None,
        fee_token: Some(path_usd),
        fee_payer_signature: None,
        authorization_list: list(12),
        key_authorization: None,
        signature: signature.into(),
    }
}

#[test]
fn the_wire_of_mv7_and_b6() {
    let f = file();
    let tx = built_from_mv7(&f);
    let wire = tx.encode();
    assert_eq!(wire.len() as u64, f["MV7"]["expectWireLength"].as_u64().unwrap());
    assert_eq!(Sha256::digest(&wire).as_slice(), bytes(str_of(&f, "/MV7/expectWireSha256")));
    let (presented, request) = b6(&f);
    let presented_wire = bytes(str_of(&presented, "/payload/signature"));
    assert_eq!(presented_wire, wire);
    let read = TempoTransaction::decode(&presented_wire).unwrap();
    assert_eq!(read, tx);
    assert_eq!(read.chain_id, request["methodDetails"]["chainId"].as_u64().unwrap());
    assert_eq!(read.encode(), presented_wire);
}

#[test]
fn a_wire_the_reference_refuses_is_not_read() {
    let f = file();
    let tx = built_from_mv7(&f);
    let wire = tx.encode();
    let malformed = |w: &[u8]| TempoTransaction::decode(w) == Err(TxError::Malformed);
    assert!(malformed(&[&[0x02], &wire[1..]].concat()), "another type byte");
    assert!(malformed(&[wire.as_slice(), &[0x80]].concat()), "a trailing byte");
    assert!(malformed(&wire[..wire.len() - 1]), "cut short");
    assert!(malformed(&[0x76]), "no list");
    // A chain id with a leading zero byte: 0x83 00 a5 bf in place of 0x82 a5 bf (and the list's length one more).
    let mut body = wire[4..].to_vec();
    body.splice(0..3, [0x83, 0x00, 0xa5, 0xbf]);
    let len = u16::try_from(body.len()).unwrap();
    let leading_zero = [&[0x76, 0xf9][..], &len.to_be_bytes(), &body].concat();
    assert!(malformed(&leading_zero), "a non-canonical integer");
    // An access list nested nine lists deep below the transaction's own list.
    let mut deep = tx.clone();
    deep.access_list = Bytes::from([vec![0xc8; 1], vec![0xc7, 0xc6, 0xc5, 0xc4, 0xc3, 0xc2, 0xc1, 0xc0]].concat());
    assert!(malformed(&deep.encode()), "too deep");
    let mut eight = tx.clone();
    eight.access_list = Bytes::from(vec![0xc7, 0xc6, 0xc5, 0xc4, 0xc3, 0xc2, 0xc1, 0xc0]);
    assert!(TempoTransaction::decode(&eight.encode()).is_ok(), "eight deep is read");
    let mut big = tx;
    big.signature = vec![0x11; MAX_WIRE_BYTES].into();
    assert_eq!(TempoTransaction::decode(&big.encode()), Err(TxError::TooLarge));
}

fn splits_of(list: &Value) -> Option<Vec<Split>> {
    list.as_array()?
        .iter()
        .map(|s| {
            Some(Split {
                recipient: s["recipient"].as_str()?.parse().ok()?,
                amount: s["amount"].as_str()?.parse().ok()?,
                memo: match s.get("memo") {
                    None => None,
                    Some(m) => Some(m.as_str()?.parse().ok()?),
                },
            })
        })
        .collect()
}

#[test]
fn split_payments_are_calls_in_order() {
    let f = file();
    let s = &f["splits"];
    let request: Value = serde_json::from_str(str_of(s, "/request")).unwrap();
    let token: Address = str_of(&request, "/currency").parse().unwrap();
    let recipient: Address = str_of(&request, "/recipient").parse().unwrap();
    let amount: U256 = str_of(&request, "/amount").parse().unwrap();
    let splits = splits_of(&request["methodDetails"]["splits"]).unwrap();
    let memo: B256 = str_of(&f, "/MV7/expectMemo").parse().unwrap();
    assert_eq!(primary_amount(amount, &splits).unwrap().to_string(), str_of(s, "/expectPrimaryAmount"));
    let calls = charge_calls(token, recipient, amount, memo, &splits).unwrap();
    let want = s["expectCalls"].as_array().unwrap();
    assert_eq!(calls.len(), want.len());
    for (call, w) in calls.iter().zip(want) {
        assert_eq!(call.to, Some(str_of(w, "/to").parse().unwrap()));
        assert_eq!(call.value, U256::ZERO);
        assert_eq!(call.input.as_ref(), bytes(str_of(w, "/data")));
    }
    // No splits: the one call of the whole amount.
    let one = charge_calls(token, recipient, amount, memo, &[]).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].input.as_ref(), bytes(str_of(&f, "/MV7/expectCalldata")));
}

#[test]
fn split_lists_the_reference_refuses() {
    let f = file();
    let request: Value = serde_json::from_str(str_of(&f, "/splits/request")).unwrap();
    let amount: U256 = str_of(&request, "/amount").parse().unwrap();
    let mut run = 0;
    for row in f["splits"]["agreedRefusals"]["rows"].as_array().unwrap() {
        let Some(splits) = splits_of(&row["splits"]) else { continue };
        let got = match primary_amount(amount, &splits) {
            Err(SplitError::Sum) => "mpp/input-malformed",
            Err(SplitError::Count | SplitError::Zero) => "mpp/splits-malformed",
            Ok(p) => panic!("{}: read, primary {p}", row["case"]),
        };
        assert_eq!(got, str_of(row, "/expect"), "{}", row["case"]);
        run += 1;
    }
    assert_eq!(run, 4);
    // Splits past 2^256 in sum, or above the amount: the same refusal, never a wrapped amount.
    let r = Address::ZERO;
    let max = [
        Split { recipient: r, amount: U256::MAX, memo: None },
        Split { recipient: r, amount: U256::from(1), memo: None },
    ];
    assert_eq!(primary_amount(U256::MAX, &max), Err(SplitError::Sum));
    let over = [Split { recipient: r, amount: amount + U256::from(1), memo: None }];
    assert_eq!(primary_amount(amount, &over), Err(SplitError::Sum));
    assert_eq!(charge_calls(r, r, amount, B256::ZERO, &over), Err(SplitError::Sum));
}

fn prefix_suffix(value: &[u8], want: &Value) -> bool {
    let hex_text = format!("0x{}", hex::encode(value));
    hex_text.starts_with(str_of(want, "/prefix")) && hex_text.ends_with(str_of(want, "/suffix"))
}

#[test]
fn the_sender_and_expiring_nonce_hash_of_a_landed_open() {
    let f: Value = serde_json::from_str(include_str!("vectors/mpp-session-tempo.json")).unwrap();
    let l1 = &f["L1"];
    let raw = bytes(str_of(l1, "/raw"));
    assert_eq!(raw.len() as u64, l1["expectLength"].as_u64().unwrap());
    assert!(prefix_suffix(&Sha256::digest(&raw), &l1["expectSha256"]));
    let tx = TempoTransaction::decode(&raw).unwrap();
    assert_eq!(tx.encode(), raw);
    let sender: Address = str_of(l1, "/sender").parse().unwrap();
    assert_eq!(tx.sender(), Ok(sender));
    assert!(prefix_suffix(tx.expiring_nonce_hash(sender).as_slice(), &l1["expectNonceHash"]));
    // Its signature with s in the upper half (n - s, parity flipped), or another v: not read.
    let n = U256::from_str_radix("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16).unwrap();
    let mut high = tx.clone();
    let s = U256::from_be_slice(&tx.signature[32..64]);
    let mut sig = tx.signature.to_vec();
    sig[32..64].copy_from_slice(&(n - s).to_be_bytes::<32>());
    sig[64] ^= 1;
    high.signature = sig.clone().into();
    assert_eq!(high.sender(), Err(TxError::Malformed));
    sig[32..64].copy_from_slice(&tx.signature[32..64]);
    sig[64] = 29;
    high.signature = sig.into();
    assert_eq!(high.sender(), Err(TxError::Malformed));
    // Another chain in the signed fields: another sender.
    let mut other = tx;
    other.chain_id += 1;
    assert_ne!(other.sender(), Ok(sender));
    // MV7's stand-in signature (0x11 × 65, v 17) is no signature.
    assert_eq!(built_from_mv7(&file()).sender(), Err(TxError::Malformed));
}

/// An authorization list of one entry `rlp([42431, 0x22 × 20, 0, signature])`.
fn authorization_list(signature: &[u8]) -> Bytes {
    let sig_len = u8::try_from(signature.len()).unwrap();
    let entry = [&[0x82, 0xa5, 0xbf, 0x94][..], &[0x22; 20], &[0x80, 0xb8, sig_len], signature].concat();
    let entry = [&[0xf8, u8::try_from(entry.len()).unwrap()][..], &entry].concat();
    [&[0xf8, u8::try_from(entry.len()).unwrap()][..], &entry].concat().into()
}

#[test]
fn authorization_list_signatures() {
    let mut tx = built_from_mv7(&file());
    assert_eq!(tx.authorization_signatures().unwrap(), Vec::<&[u8]>::new());
    let secp = [0x33; 65];
    tx.authorization_list = authorization_list(&secp);
    let read = TempoTransaction::decode(&tx.encode()).unwrap();
    assert_eq!(read.authorization_signatures().unwrap(), vec![&secp[..]]);
    // A 0x03 keychain signature (not 65 bytes) is refused; a 0x04 one is read.
    let v1 = [&[0x03][..], &[0x44; 85]].concat();
    tx.authorization_list = authorization_list(&v1);
    assert_eq!(TempoTransaction::decode(&tx.encode()).unwrap().authorization_signatures(), Err(TxError::Malformed));
    let v2 = [&[0x04][..], &[0x44; 85]].concat();
    tx.authorization_list = authorization_list(&v2);
    assert_eq!(TempoTransaction::decode(&tx.encode()).unwrap().authorization_signatures().unwrap(), vec![&v2[..]]);
    // An entry of three items holds no signature.
    tx.authorization_list = Bytes::from(vec![0xc4, 0xc3, 0x80, 0x80, 0x80]);
    assert_eq!(TempoTransaction::decode(&tx.encode()).unwrap().authorization_signatures(), Err(TxError::Malformed));
}

/// A number the subscription file writes as a decimal string (the reference emits JSON numbers: the peer wins, and
/// the rail takes typed values either way) or as a number.
fn int_of<T: std::str::FromStr>(v: &Value) -> T
where
    T::Err: std::fmt::Debug,
{
    match v {
        Value::String(s) => s.parse().unwrap(),
        Value::Number(n) => n.to_string().parse().unwrap(),
        other => panic!("{other}"),
    }
}

fn key_authorization_of(a: &Value) -> KeyAuthorization {
    let addr = |v: &Value| v.as_str().unwrap().parse::<Address>().unwrap();
    KeyAuthorization {
        chain_id: int_of(&a["chainId"]),
        key_type: int_of(&a["keyType"]),
        key_id: addr(&a["keyId"]),
        expiry: int_of(&a["expiry"]),
        limits: a["limits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| Limit { token: addr(&l["token"]), limit: int_of(&l["limit"]), period: int_of(&l["period"]) })
            .collect(),
        allowed_calls: a["allowedCalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Scope {
                target: addr(&s["target"]),
                selector_rules: s["selectorRules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| SelectorRule {
                        selector: bytes(r["selector"].as_str().unwrap()).try_into().unwrap(),
                        recipients: r["recipients"].as_array().unwrap().iter().map(addr).collect(),
                    })
                    .collect(),
            })
            .collect(),
        witness: a["witness"].as_str().unwrap().parse().unwrap(),
    }
}

#[test]
fn the_key_authorization_of_sub1() {
    let f: Value = serde_json::from_str(include_str!("vectors/mpp-subscription-tempo.json")).unwrap();
    let sub1 = &f["SUB1"];
    let a = key_authorization_of(&sub1["authorization"]);
    let unsigned = a.encode().unwrap();
    assert_eq!(unsigned.len() as u64, sub1["expectUnsignedLength"].as_u64().unwrap());
    assert_eq!(a.digest().unwrap(), str_of(sub1, "/expectDigest").parse::<B256>().unwrap());
    assert_eq!(keccak256(&unsigned), a.digest().unwrap());
    let signed = a.encode_signed(&[0x55; 65]).unwrap();
    assert_eq!(signed.len() as u64, sub1["expectSignedLength"].as_u64().unwrap());
    // Another witness or expiry: another digest.
    let mut other = a.clone();
    other.witness = B256::ZERO;
    assert_ne!(other.digest(), a.digest());
    let mut later = a.clone();
    later.expiry += 1;
    assert_ne!(later.digest(), a.digest());
    // Past a cap, another key type, an empty signature: not written.
    let mut many = a.clone();
    many.limits = vec![many.limits[0].clone(); MAX_SCOPES + 1];
    assert_eq!(many.encode(), Err(KeyAuthorizationMalformed));
    let mut kind = a.clone();
    kind.key_type = 3;
    assert_eq!(kind.encode(), Err(KeyAuthorizationMalformed));
    assert_eq!(a.encode_signed(&[]), Err(KeyAuthorizationMalformed));
    assert_eq!(a.encode_signed(&[0x55; MAX_KEY_AUTHORIZATION_BYTES]), Err(KeyAuthorizationMalformed));
}
