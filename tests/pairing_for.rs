//! `pairing_for` names, for each vector file's offer and account, the pairing the file's rows pay it with.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use std::path::Path;

use serde_json::Value;
use terms::{DeclineCode, pairing_for};

/// Every vector file's `buyer` row B2: the offer, the account and the pairing the reference pays it with.
fn rows() -> Vec<(String, Value, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // The upstream files only: `contract/` is a folder of our own vectors.
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(file) = serde_json::from_slice::<Value>(&std::fs::read(&path).unwrap()) else { continue };
        let Some(found) = file["buyer"]["rows"].as_array().and_then(|r| r.iter().find(|r| r["name"] == "B2")) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let account = found["input"]["account"].as_str().unwrap().to_owned();
        let pairing = found["pairing"].as_str().unwrap().to_owned();
        rows.push((name, found["input"]["doc"].clone(), account, pairing));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

#[test]
fn each_files_offer_goes_to_its_pairing() {
    let rows = rows();
    assert!(rows.len() >= 8, "{} files", rows.len());
    for (file, doc, account, pairing) in rows {
        // A row whose pairing this build does not have (an MPP family still to land).
        let Ok(named) = terms::pairing(&pairing) else { continue };
        let found = pairing_for(&doc, &account).unwrap_or_else(|d| panic!("{file}: {d:?}"));
        let served = |p: &dyn terms::Pairing| p.read(&doc).map(|r| format!("{:?}", r.offer)).ok();
        // The row's own pairing, or one the document cannot tell from it (both serve the very same options).
        assert!(
            found.id() == pairing || (served(found).is_some() && served(found) == served(named)),
            "{file}: {} for {pairing}",
            found.id()
        );
    }
}

#[test]
fn an_account_on_no_offered_network_is_declined_with_the_networks() {
    for (file, doc, account, pairing) in rows() {
        let elsewhere = account.replacen("eip155:84532", "eip155:1", 1).replacen("eip155:8453:", "eip155:1:", 1);
        if elsewhere == account {
            continue;
        }
        // A card offer names no network: any account pays it, with its own pairing or one that reads the same offer
        // (a TAP offer and a plain card checkout are the same document).
        if pairing.starts_with("card/") {
            let found = pairing_for(&doc, &elsewhere).unwrap_or_else(|d| panic!("{file}: {d:?}"));
            let offer = |p: &dyn terms::Pairing| p.read(&doc).map(|r| format!("{:?}", r.offer)).ok();
            assert_eq!(offer(found), offer(terms::pairing(&pairing).unwrap()), "{file}: {}", found.id());
            continue;
        }
        // A card or Stripe challenge names no network: any account pays it.
        let unnamed = doc.as_array().is_some_and(|l| l.iter().all(|c| terms::mpp::network(c).is_err()));
        // Nor do a card checkout and an ACP, AP2 or UCP checkout (the seller's processor charges off chain): a
        // document one of those pairings reads is paid by one of them from any account. That includes an ACK body,
        // whose top-level legalContext card/seller-reference reads; only ACK's own options name networks.
        let any_account: Vec<&str> = terms::built_ids()
            .into_iter()
            .filter(|id| ["card/", "acp/", "ap2/", "ucp/"].iter().any(|ns| id.starts_with(ns)))
            .filter(|id| terms::pairing(id).unwrap().read(&doc).is_ok())
            .collect();
        if !any_account.is_empty() {
            let found = pairing_for(&doc, &elsewhere).unwrap_or_else(|d| panic!("{file}: {d:?}"));
            assert!(any_account.contains(&found.id()), "{file}: {}", found.id());
            continue;
        }
        if unnamed {
            assert_eq!(pairing_for(&doc, &elsewhere).map(|p| p.id()).ok(), Some(pairing.as_str()), "{file}");
            continue;
        }
        let d = pairing_for(&doc, &elsewhere).map(|p| p.id()).unwrap_err();
        assert_eq!(d.code, DeclineCode::NoPayableOption, "{file}");
        assert!(d.cause.as_deref().is_some_and(|c| c.contains("eip155:")), "{file}: {:?}", d.cause);
    }
}

/// buyer.json row B10: D with an `http://` link declines `offer-unreadable`, `x402/link-not-https`, before any
/// fetch; `pairing_for` (the client's and MCP's way in) gives that decline, not "no network offered".
#[test]
fn an_offer_whose_terms_link_is_not_https_is_unreadable() {
    let file: Value = serde_json::from_slice(
        &std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/buyer.json")).unwrap(),
    )
    .unwrap();
    let row = file["rows"].as_array().unwrap().iter().find(|r| r["name"] == "B10").unwrap();
    let link = row["input"][1]["stubRead"]["link"].as_str().unwrap();
    let mut doc = file["fixed"]["D"].clone();
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"] = link.into();
    let account =
        format!("{}:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", doc["accepts"][0]["network"].as_str().unwrap());
    let Err(d) = pairing_for(&doc, &account) else { panic!("an http link is not paid") };
    assert_eq!(d.code.to_string(), row["expect"][0]["decline"].as_str().unwrap());
    assert_eq!(d.detail, row["expect"][0]["detail"].as_str().unwrap());
}
