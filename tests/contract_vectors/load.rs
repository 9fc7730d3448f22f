//! The contract vectors (`tests/vectors/contract/`, written by `scripts/contract-vectors.py`) as the two contract
//! test binaries read them: the key lists and seeds of `keys.json`, and every document row of the six kinds' files,
//! each read and verified by the crate under the key list it names.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};
use terms::contract::{
    Attestation, Challenge, ContractError, Document, KeyList, Link, OfferCard, Presentation, Quote, Receipt, Signed,
    read, read_keys,
};

/// The key lists and seeds.
pub const KEYS_FILE: &str = "keys.json";

/// One file per document kind, named by the rows' `kind`.
pub const KIND_FILES: [&str; 6] =
    ["offer-card.json", "quote.json", "presentation.json", "challenge.json", "receipt.json", "attestation.json"];

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/contract")
}

pub fn load(name: &str) -> Value {
    let path = dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

/// A row's or a link's verdict: `ok` or the refusal's code, as the files write it.
pub fn verdict<T>(r: &Result<T, ContractError>) -> String {
    match r {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.code().to_owned(),
    }
}

/// One test key: its seed is the SHA-256 of its label.
#[derive(Debug, Clone)]
pub struct TestKey {
    pub kid: String,
    pub label: String,
    pub seed: [u8; 32],
    pub public: String,
}

#[derive(Debug)]
pub struct Keys {
    pub keys: Vec<TestKey>,
    /// The key lists by name, as the crate read them.
    pub lists: BTreeMap<String, KeyList>,
    /// The lists' exact texts.
    pub list_texts: BTreeMap<String, String>,
    /// Key list texts with the verdict `read_keys` gives them.
    pub list_rows: Vec<(String, String, String)>,
}

impl Keys {
    pub fn seed(&self, kid: &str) -> [u8; 32] {
        self.keys.iter().find(|k| k.kid == kid).unwrap_or_else(|| panic!("no seed for {kid}")).seed
    }

    pub fn list(&self, name: &str) -> &KeyList {
        self.lists.get(name).unwrap_or_else(|| panic!("no key list {name}"))
    }
}

pub fn keys() -> Keys {
    let file = load(KEYS_FILE);
    let keys = file["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| TestKey {
            kid: text(&k["kid"]).to_owned(),
            label: text(&k["label"]).to_owned(),
            seed: hex::decode(text(&k["seed"])).unwrap().try_into().unwrap(),
            public: text(&k["public"]).to_owned(),
        })
        .collect();
    let list_texts: BTreeMap<String, String> =
        file["lists"].as_object().unwrap().iter().map(|(name, t)| (name.clone(), text(t).to_owned())).collect();
    let lists = list_texts
        .iter()
        .map(|(name, t)| (name.clone(), read_keys(t.as_bytes()).unwrap_or_else(|e| panic!("key list {name}: {e}"))))
        .collect();
    let list_rows = file["list_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (text(&r["name"]).to_owned(), text(&r["text"]).to_owned(), text(&r["expect"]).to_owned()))
        .collect();
    Keys { keys, lists, list_texts, list_rows }
}

/// What a row says of one link of a presentation's chain.
#[derive(Debug, Clone)]
pub struct LinkRow {
    pub keys: String,
    pub expect: String,
    pub signer: Option<String>,
}

/// One document row.
#[derive(Debug, Clone)]
pub struct Row {
    pub file: &'static str,
    pub name: String,
    pub kind: String,
    pub keys: String,
    pub text: String,
    pub expect: String,
    pub signer: Option<String>,
    pub clock: Option<String>,
    pub links: Option<Vec<LinkRow>>,
}

fn optional(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

pub fn rows_of(file: &'static str) -> Vec<Row> {
    load(file)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| Row {
            file,
            name: text(&r["name"]).to_owned(),
            kind: text(&r["kind"]).to_owned(),
            keys: text(&r["keys"]).to_owned(),
            text: text(&r["text"]).to_owned(),
            expect: text(&r["expect"]).to_owned(),
            signer: optional(&r["signer"]),
            clock: optional(&r["clock"]),
            links: r["links"].as_array().map(|links| {
                links
                    .iter()
                    .map(|l| LinkRow {
                        keys: text(&l["keys"]).to_owned(),
                        expect: text(&l["expect"]).to_owned(),
                        signer: optional(&l["signer"]),
                    })
                    .collect()
            }),
        })
        .collect()
}

/// Every document row of the six files.
pub fn rows() -> Vec<Row> {
    KIND_FILES.iter().flat_map(|f| rows_of(f)).collect()
}

fn read_and_verify<T: Document>(bytes: &[u8], keys: &KeyList) -> Result<Signed<T>, ContractError> {
    let signed = read::<T>(bytes)?;
    signed.verify(keys)?;
    Ok(signed)
}

/// The bytes read as the document `kind` and its signature verified under `keys`.
pub fn verify_bytes(kind: &str, bytes: &[u8], keys: &KeyList) -> Result<(), ContractError> {
    match kind {
        "offer-card" => read_and_verify::<OfferCard>(bytes, keys).map(drop),
        "quote" => read_and_verify::<Quote>(bytes, keys).map(drop),
        "presentation" => read_and_verify::<Presentation>(bytes, keys).map(drop),
        "challenge" => read_and_verify::<Challenge>(bytes, keys).map(drop),
        "receipt" => read_and_verify::<Receipt>(bytes, keys).map(drop),
        "attestation" => read_and_verify::<Attestation>(bytes, keys).map(drop),
        other => panic!("unknown kind {other}"),
    }
}

/// The text read as the document `kind` and its signature verified under `keys`.
pub fn verify_text(kind: &str, text: &str, keys: &KeyList) -> Result<(), ContractError> {
    verify_bytes(kind, text.as_bytes(), keys)
}

/// The links of a presentation's text (read, not verified), each with the object it was signed as.
pub fn links_of(text: &str) -> Result<Vec<Signed<Link>>, ContractError> {
    read::<Presentation>(text.as_bytes())?.links()
}

/// Each link of the presentation verified under the key list the row names for it.
pub fn link_verdicts(text: &str, links: &[LinkRow], keys: &Keys) -> Result<Vec<String>, ContractError> {
    let signed = links_of(text)?;
    assert_eq!(signed.len(), links.len(), "the row names {} links, the chain has {}", links.len(), signed.len());
    Ok(signed.iter().zip(links).map(|(link, row)| verdict(&link.verify(keys.list(&row.keys)))).collect())
}

/// The text's JSON object as serde_json reads it (no check of repeated members).
pub fn object(text: &str) -> Map<String, Value> {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}
