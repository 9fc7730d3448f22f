#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The XRPL rail against the vector files' own data: the caps rows of decoder-caps.json (`xrpl`), the blobs of
//! x402-exact-xrpl.json decoded and their transaction ids, V2's and V3's blobs written again byte for byte by the
//! local key from Ed25519 entropy 01x16, the strict-encoding rows refused, and the codec's bad input.

use serde_json::Value;
use terms::rail::xrpl::{self, DecodeError, MAX_FIELDS, Tx, decode, fields};

fn file(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

#[test]
fn the_caps_rows_are_admitted_and_refused_as_the_file_says() {
    let caps = file("decoder-caps.json");
    assert_eq!(caps["xrpl"]["maxDepth"].as_u64().unwrap() as usize, xrpl::MAX_DEPTH);
    assert_eq!(caps["xrpl"]["maxFields"].as_u64().unwrap() as usize, MAX_FIELDS);
    let rows = caps["xrpl"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let blob = bytes(&row["blob"]);
        let result = decode::decode(&blob);
        let accept = row["accept"].as_bool().unwrap();
        assert_eq!(result.is_ok(), accept, "{}: {:?}", row["name"], result.err());
        if !accept {
            assert_eq!(result.unwrap_err(), DecodeError::TooDeep, "{}", row["name"]);
            assert_eq!(xrpl::decode_blob(row["blob"].as_str().unwrap()).unwrap_err().code(), "xrpl/blob-malformed");
        }
    }
}

#[test]
fn more_fields_than_the_cap_are_refused_and_the_cap_itself_is_admitted() {
    // A Payment's type and a Memos array of n empty Memo members: 2 + n fields and members.
    let blob = |n: usize| {
        let mut b = vec![0x12, 0x00, 0x00, 0xF9];
        for _ in 0..n {
            b.extend([0xEA, 0xE1]);
        }
        b.push(0xF1);
        b
    };
    assert!(decode::decode(&blob(MAX_FIELDS - 2)).is_ok());
    assert_eq!(decode::decode(&blob(MAX_FIELDS - 1)).unwrap_err(), DecodeError::TooManyFields);
}

#[test]
fn the_files_blobs_decode_and_hash_as_the_file_says() {
    let v = file("x402-exact-xrpl.json");
    let v3 = xrpl::decode_blob(v["V3"]["blob"].as_str().unwrap()).unwrap();
    assert_eq!(hex::encode_upper(v3.hash), v["V3"]["hash"].as_str().unwrap());
    assert_eq!(
        hex::encode_upper(decode::leaf_of(&v3.fields(), fields::INVOICE_ID).unwrap()),
        v["V3"]["invoiceId"].as_str().unwrap()
    );
    let v2 = xrpl::decode_blob(v["V2"]["blob"].as_str().unwrap()).unwrap();
    assert_eq!(hex::encode_upper(v2.hash), v["V2"]["expectReference"]["transaction"].as_str().unwrap());
    let plant = xrpl::decode_blob(v["plant"]["blob"].as_str().unwrap()).unwrap();
    assert_eq!(hex::encode_upper(plant.hash), v["plant"]["hash"].as_str().unwrap());
    for row in v["multisigned"]["rows"].as_array().unwrap() {
        let blob = row["blob"].as_str().unwrap();
        assert_eq!(hex::encode_upper(xrpl::decode_blob(blob).unwrap().hash), row["hash"].as_str().unwrap());
        assert_eq!(xrpl::decode_presented(blob).unwrap_err().code(), row["expect"].as_str().unwrap());
    }
    // Decoding and writing back gives the same bytes.
    for blob in [&v["V2"]["blob"], &v["V3"]["blob"], &v["plant"]["blob"]] {
        let b = bytes(blob);
        assert_eq!(decode::encode(&decode::decode(&b).unwrap()), b);
    }
}

#[test]
fn the_strict_encoding_rows_are_refused() {
    let v = file("x402-exact-xrpl.json");
    for row in v["strictEncoding"]["rows"].as_array().unwrap() {
        let refused = xrpl::decode_blob(row["blob"].as_str().unwrap()).unwrap_err();
        assert_eq!(refused.code(), row["expect"].as_str().unwrap(), "{}", row["case"]);
    }
}

#[test]
fn the_expected_tx_json_writes_the_unsigned_bytes_of_v2() {
    let v = file("x402-exact-xrpl.json");
    let tx = Tx::from_json(v["V2"]["expectTxJson"].as_object().unwrap()).unwrap();
    let blob = bytes(&v["V2"]["blob"]);
    let signed = decode::decode(&blob).unwrap();
    assert_eq!(tx.encode(), xrpl::without_signature(&signed));
}

#[cfg(feature = "local-signer")]
#[test]
fn the_local_key_from_entropy_signs_v2_and_v3_byte_for_byte() {
    let v = file("x402-exact-xrpl.json");
    let key = terms::XrplKey::ed25519_from_entropy_hex(&"01".repeat(16)).unwrap();
    assert_eq!(key.address(), v["fixed"]["payer"].as_str().unwrap());
    let v2 = v["V2"]["expectTxJson"].as_object().unwrap();
    assert_eq!(hex::encode_upper(key.sign_tx(v2).unwrap()), v["V2"]["blob"].as_str().unwrap());
    let mut v3 = v2.clone();
    v3.insert("InvoiceID".into(), v["V3"]["invoiceId"].clone());
    assert_eq!(hex::encode_upper(key.sign_tx(&v3).unwrap()), v["V3"]["blob"].as_str().unwrap());
    let destination = terms::XrplKey::ed25519_from_entropy_hex(&"02".repeat(16)).unwrap();
    assert_eq!(destination.address(), v["fixed"]["destination"].as_str().unwrap());
}

#[test]
fn addresses_with_a_bad_checksum_or_alphabet_are_refused() {
    let good = "r3sNTMefq5gsRumMYsNznnX6yzzxVH6dTC";
    let id = xrpl::account_id(good).unwrap();
    assert_eq!(xrpl::encode_account(&id), good);
    for bad in [
        "r3sNTMefq5gsRumMYsNznnX6yzzxVH6dTD",
        "r3sNTMefq5gsRumMYsNznnX6yzzxVH6dT0",
        "",
        "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr",
    ] {
        assert!(xrpl::account_id(bad).is_none(), "{bad}");
    }
}

#[test]
fn malformed_blobs_are_refused_without_a_panic() {
    let v = file("x402-exact-xrpl.json");
    let v3 = v["V3"]["blob"].as_str().unwrap();
    // Odd length, not hex, too long, truncated, a field out of order, an unknown field, trailing bytes.
    assert_eq!(xrpl::decode_blob(&v3[1..]).unwrap_err().code(), "xrpl/blob-malformed");
    assert_eq!(xrpl::decode_blob("zz").unwrap_err().code(), "xrpl/blob-malformed");
    assert_eq!(xrpl::decode_blob(&"12".repeat(2049)).unwrap_err().code(), "xrpl/blob-too-large");
    assert_eq!(xrpl::decode_blob(&v3[..v3.len() - 2]).unwrap_err().code(), "xrpl/blob-malformed");
    let swapped = format!("22000000001200{}", &v3[16..]);
    assert_eq!(xrpl::decode_blob(&swapped).unwrap_err().code(), "xrpl/blob-malformed");
    assert!(decode::decode(&[0x2F, 0, 0, 0, 0]).is_ok(), "UInt32 15 is a known field");
    assert_eq!(decode::decode(&[0x04, 0x00]).unwrap_err(), DecodeError::Malformed);
    assert_eq!(xrpl::decode_blob(&format!("{v3}00")).unwrap_err().code(), "xrpl/blob-malformed");
    // Every prefix of a valid blob is refused or decodes; none panics.
    let b = bytes(&v["plant"]["blob"]);
    for n in 0..b.len() {
        let _ = decode::decode(&b[..n]);
    }
}
