//! The contract's own vectors (`tests/vectors/contract/`, written by `scripts/contract-vectors.py` with the
//! `cryptography` and `rfc8785` packages, not with this crate): every row read as its kind and verified under the key
//! list it names, its verdict compared with the row's `expect`; every signature the script made reproduced byte for
//! byte by `sign_object` with the same seed (Ed25519 is deterministic, so this shows the crate's RFC 8785 bytes are
//! the `rfc8785` package's); and, in `bad_input`, the refusals of the list as exact `ContractError` values.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "contract_vectors/load.rs"]
mod load;

#[path = "contract_vectors/bad_input.rs"]
mod bad_input;

use std::collections::{BTreeMap, BTreeSet};

use load::{KEYS_FILE, KIND_FILES, Row, keys, link_verdicts, object, rows, verdict, verify_text};
use sha2::{Digest, Sha256};
use terms::contract::{ContractError, public_key_of, read_keys, sign_object};

/// The refusals a row may expect: those of reading and of checking a signature.
fn signature_codes() -> BTreeSet<&'static str> {
    [
        ContractError::NotJson(String::new()),
        ContractError::DuplicateMember(String::new()),
        ContractError::Version(String::new()),
        ContractError::Malformed { document: "", detail: String::new() },
        ContractError::SignatureMalformed,
        ContractError::KeyUnknown(String::new()),
        ContractError::KeyNotValid { kid: String::new(), at: String::new() },
        ContractError::SignatureInvalid,
        ContractError::Time(String::new()),
    ]
    .iter()
    .map(ContractError::code)
    .collect()
}

#[test]
fn every_row_gets_its_expected_verdict() {
    let keys = keys();
    let rows = rows();
    let mut wrong = Vec::new();
    let mut links_checked = 0;
    for row in &rows {
        let got = verdict(&verify_text(&row.kind, &row.text, keys.list(&row.keys)));
        if got != row.expect {
            wrong.push(format!("{}: expected {}, got {got}", row.name, row.expect));
        }
        if let Some(links) = &row.links {
            match link_verdicts(&row.text, links, &keys) {
                Ok(got) => {
                    for (i, (got, want)) in got.iter().zip(links).enumerate() {
                        links_checked += 1;
                        if *got != want.expect {
                            wrong.push(format!("{} link {i}: expected {}, got {got}", row.name, want.expect));
                        }
                    }
                }
                Err(e) => wrong.push(format!("{}: its links do not read: {e}", row.name)),
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {} rows differ:\n{}", wrong.len(), rows.len(), wrong.join("\n"));
    assert!(rows.len() >= 6 * 30, "only {} rows", rows.len());
    assert!(links_checked >= 10, "only {links_checked} links checked");
    println!("{} rows and {links_checked} links as expected", rows.len());
}

#[test]
fn every_expect_is_a_signature_code_and_every_kind_covers_each() {
    let codes = signature_codes();
    let mut by_kind: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in rows() {
        assert!(row.expect == "ok" || codes.contains(row.expect.as_str()), "{}: {}", row.name, row.expect);
        assert!(row.name.starts_with(&format!("{}/", row.kind)), "{} is not named by its kind", row.name);
        assert_eq!(row.file, format!("{}.json", row.kind), "{} is in another kind's file", row.name);
        by_kind.entry(row.kind).or_default().insert(row.expect);
    }
    assert_eq!(by_kind.len(), 6, "{:?}", by_kind.keys());
    // Each kind has a valid row and one refused for each reason a signature is refused (a document that is not JSON
    // at all, or misses a member, is not a signature case: the script writes none).
    let not_signature_cases = [
        ContractError::NotJson(String::new()).code(),
        ContractError::Malformed { document: "", detail: String::new() }.code(),
    ];
    let needed: BTreeSet<String> = codes
        .iter()
        .filter(|c| !not_signature_cases.contains(c))
        .map(|c| (*c).to_owned())
        .chain(["ok".to_owned()])
        .collect();
    for (kind, expects) in &by_kind {
        let missing: Vec<_> = needed.difference(expects).collect();
        assert!(missing.is_empty(), "{kind} has no row for {missing:?}");
    }
}

#[test]
fn sign_object_reproduces_every_python_signature_byte_for_byte() {
    let keys = keys();
    let mut reproduced = 0;
    for row in rows() {
        assert!(row.expect != "ok" || row.signer.is_some(), "{}: a valid row names no signer", row.name);
        let doc = object(&row.text);
        if let Some(signer) = &row.signer {
            let ours = sign_object(&doc, &keys.seed(signer)).unwrap();
            assert_eq!(ours, load::text(&doc["signature"]), "{}: the crate signs other bytes", row.name);
            reproduced += 1;
        }
        for (i, link) in row.links.iter().flatten().enumerate() {
            if let Some(signer) = &link.signer {
                let link_object = doc["chain"][i].as_object().unwrap();
                let ours = sign_object(link_object, &keys.seed(signer)).unwrap();
                assert_eq!(ours, load::text(&link_object["signature"]), "{} link {i}", row.name);
                reproduced += 1;
            }
        }
    }
    assert!(reproduced >= 6 * 12, "only {reproduced} signatures reproduced");
    println!("{reproduced} signatures reproduced");
}

#[test]
fn every_file_of_the_folder_is_read_by_the_suite() {
    let on_disk: BTreeSet<String> =
        std::fs::read_dir(load::dir()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    let read: BTreeSet<String> = KIND_FILES.iter().chain([&KEYS_FILE]).map(|f| (*f).to_owned()).collect();
    assert_eq!(on_disk, read, "tests/vectors/contract/ holds files the suite does not read, or lacks some");
    for file in KIND_FILES {
        assert!(!load::rows_of(file).is_empty(), "{file} has no rows");
    }
    assert!(!keys().lists.is_empty());
}

#[test]
fn test_keys_are_the_sha256_of_their_labels_and_the_lists_publish_them() {
    let keys = keys();
    for key in &keys.keys {
        assert_eq!(key.seed, <[u8; 32]>::from(Sha256::digest(key.label.as_bytes())), "{}", key.kid);
        assert!(key.label.ends_with(&key.kid), "{}: {}", key.kid, key.label);
        assert_eq!(public_key_of(&key.seed), key.public, "{}", key.kid);
    }
    let mut listed = 0;
    for (name, list) in &keys.lists {
        for published in &list.keys {
            let test_key = keys.keys.iter().find(|k| k.kid == published.kid).unwrap();
            assert_eq!(published.key, test_key.public, "{name}: {}", published.kid);
            assert_eq!(published.alg, "ed25519");
            listed += 1;
        }
    }
    // Each list has a retired and a current key; every list's `-9` key is in none.
    assert_eq!(listed, 2 * keys.lists.len());
    assert_eq!(keys.keys.len(), 3 * keys.lists.len());
}

#[test]
fn key_list_rows_read_as_expected() {
    let keys = keys();
    assert!(keys.list_rows.len() >= 5);
    for (name, text, expect) in &keys.list_rows {
        assert_eq!(verdict(&read_keys(text.as_bytes())), *expect, "{name}");
    }
    for (name, text) in &keys.list_texts {
        assert_eq!(&read_keys(text.as_bytes()).unwrap(), keys.list(name));
    }
}

/// Seconds since 1970 of a UTC time written `YYYY-MM-DDTHH:MM:SSZ`, the form the vectors' clocks and key dates take.
fn unix_utc(text: &str) -> i64 {
    let n = |from: usize, len: usize| text[from..from + len].parse::<i64>().unwrap();
    assert!(text.len() == 20 && text.ends_with('Z'), "{text}");
    let (y, m, d) = (n(0, 4), n(5, 2), n(8, 2));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    days * 86_400 + n(11, 2) * 3600 + n(14, 2) * 60 + n(17, 2)
}

#[test]
fn rows_with_a_clock_are_signed_by_a_key_retired_at_that_clock() {
    assert_eq!(unix_utc("2026-09-21T14:14:20Z"), 1_790_000_060);
    let keys = keys();
    let with_clock: Vec<Row> = rows().into_iter().filter(|r| r.clock.is_some()).collect();
    assert!(with_clock.len() >= 12, "only {} rows with a clock", with_clock.len());
    let mut retired_yet_valid = 0;
    for row in &with_clock {
        let clock = unix_utc(row.clock.as_deref().unwrap());
        let kid = load::text(&object(&row.text)["kid"]).to_owned();
        let key = keys.list(&row.keys).key(&kid).unwrap();
        assert!(key.until.is_some(), "{}: {kid} is not retired", row.name);
        assert!(!key.valid_at(clock).unwrap(), "{}: {kid} is still valid at the row's clock", row.name);
        if row.expect == "ok" {
            retired_yet_valid += 1;
        }
    }
    assert_eq!(retired_yet_valid, 6, "one row per kind signed while its key was valid, the key retired now");
}
