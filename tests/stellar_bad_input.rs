#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! What an attacker would hand the Stellar pairings, through `transact` with the payer's local key: a simulated
//! envelope that does not decode, has bytes after it, nests one past the cap, or authorizes another contract,
//! function, amount or recipient; an option whose muxed id is not H's first 8 bytes or whose address has a bad
//! checksum; a signer answering a signature of the wrong length. Each is declined with the reference's code, and no
//! signer is asked to sign anything the pairing could not read back.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use serde_json::{Value, json};
use support::{Reply, ScriptedFetch, paused, vectors};
use terms::rail::stellar::Strkey;
use terms::{
    Answer, BoxFuture, Declined, FixedClock, Options, Pairing, Signer, SignerError, SigningRequest, StellarKey,
    StellarSigner, TransactOutcome, transact,
};

/// The payer's key, counting the requests it is handed, answering with its signature or a fixed answer.
struct Counting {
    inner: StellarSigner,
    calls: AtomicUsize,
    answer: Option<Value>,
}

impl Signer for Counting {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match &self.answer {
            Some(a) => {
                let a = Answer::new(a.clone());
                Box::pin(async move { Ok(a) })
            }
            None => self.inner.sign(request),
        }
    }
}

fn file() -> Value {
    vectors("x402-exact-stellar.json")
}

fn b64(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text).unwrap()
}

fn b64e(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `transact` on a pairing's B2 document (edited by `doc`), serving the ATR, with the simulated envelope `xdr`.
fn run(
    pairing: &str,
    doc: impl FnOnce(&mut Value),
    xdr: &str,
    answer: Option<Value>,
) -> (Result<TransactOutcome, Declined>, usize) {
    let (file, link) = if pairing.starts_with("x402") {
        (file(), file()["fixed"]["link"].as_str().unwrap().to_owned())
    } else {
        let m = vectors("mpp-charge-stellar.json");
        let link = m["fixed"]["link"].as_str().unwrap().to_owned();
        (m, link)
    };
    let row = &file["buyer"]["rows"][0]["input"];
    let mut d = row["doc"].clone();
    doc(&mut d);
    let seed = vectors("x402-exact-stellar.json")["fixed"]["payerSeed"].as_str().unwrap().to_owned();
    let signer = Counting {
        inner: StellarKey::from_seed_hex(&seed).unwrap().on_network("stellar:testnet").unwrap(),
        calls: AtomicUsize::new(0),
        answer,
    };
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(b"abc".to_vec())]);
    let inputs = json!({"simulatedXdr": xdr, "currentLedger": 988});
    let options = Options::new().clock(FixedClock(1_790_000_000)).inputs(inputs.as_object().unwrap().clone());
    let p: &dyn Pairing = terms::pairing(pairing).unwrap();
    let got = paused().block_on(transact(&d, p, &signer, &fetch, &options));
    (got, signer.calls.load(Ordering::SeqCst))
}

const PAIRINGS: [&str; 2] = ["x402/exact/stellar", "mpp/charge/stellar"];

fn simulated() -> String {
    file()["V2"]["simulatedXdr"].as_str().unwrap().to_owned()
}

/// The declined detail, asserting nothing was signed.
fn declined(pairing: &str, xdr: &str) -> String {
    let (got, calls) = run(pairing, |_| {}, xdr, None);
    assert_eq!(calls, 0, "{pairing}: the signer was asked");
    got.expect_err("declined").detail
}

/// The bytes with the `n`th occurrence (0-based) of `from` replaced by `to`, of the same length.
fn replaced(bytes: &[u8], from: &[u8], to: &[u8], n: usize) -> Vec<u8> {
    let at = (0..bytes.len() - from.len()).filter(|i| &bytes[*i..*i + from.len()] == from).nth(n).unwrap();
    let mut out = bytes.to_vec();
    out[at..at + from.len()].copy_from_slice(to);
    out
}

#[test]
fn the_simulated_envelope_pays_and_each_pairing_signs_once() {
    for p in PAIRINGS {
        let (got, calls) = run(p, |_| {}, &simulated(), None);
        assert!(matches!(got, Ok(TransactOutcome::Signed(_))), "{p}: {got:?}");
        assert_eq!(calls, 1);
    }
}

#[test]
fn xdr_that_does_not_decode_or_has_bytes_after_it_is_declined_unsigned() {
    let bytes = b64(&simulated());
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(&[0; 4]);
    for p in PAIRINGS {
        for bad in [b64e(&bytes[..bytes.len() - 4]), b64e(&trailing), b64e(b"not xdr at all"), "%%%".into()] {
            assert_eq!(declined(p, &bad), "stellar/tx-malformed", "{p}");
        }
    }
}

#[test]
fn an_envelope_nesting_one_past_the_cap_is_declined_unsigned() {
    let caps = vectors("decoder-caps.json");
    for row in caps["scval"]["envelopes"].as_array().unwrap() {
        if row["accept"] == json!(false) {
            for p in PAIRINGS {
                assert_eq!(declined(p, row["xdr"].as_str().unwrap()), "stellar/tx-malformed", "{p} {}", row["name"]);
            }
        }
    }
}

#[test]
fn another_contract_function_amount_or_recipient_is_declined_unsigned() {
    let bytes = b64(&simulated());
    let contract = [6u8; 32];
    let other_contract = [7u8; 32];
    let id = hex::decode("ba7816bf8f01cfea").unwrap();
    let other_id = hex::decode("ba7816bf8f01cfeb").unwrap();
    let amount = 10_000_000u64.to_be_bytes();
    let other_amount = 10_000_001u64.to_be_bytes();
    // (what, the envelope, the refusal): the entry's invocation is the second occurrence, the operation's the first.
    let both = |from: &[u8], to: &[u8]| replaced(&replaced(&bytes, from, to, 0), from, to, 0);
    let cases = [
        ("another contract, both", both(&contract, &other_contract), "stellar/asset-mismatch"),
        ("another contract, signed only", replaced(&bytes, &contract, &other_contract, 1), "stellar/not-one-transfer"),
        ("another function, signed only", replaced(&bytes, b"transfer", b"transfes", 1), "stellar/not-one-transfer"),
        ("another function, both", both(b"transfer", b"transfes"), "stellar/not-one-transfer"),
        ("another amount, both", both(&amount, &other_amount), "stellar/amount-mismatch"),
        ("another amount, signed only", replaced(&bytes, &amount, &other_amount, 1), "stellar/not-one-transfer"),
        ("another recipient id, both", both(&id, &other_id), "stellar/carrier-mismatch"),
        ("another recipient id, signed only", replaced(&bytes, &id, &other_id, 1), "stellar/carrier-mismatch"),
    ];
    for p in PAIRINGS {
        for (what, envelope, want) in &cases {
            assert_eq!(declined(p, &b64e(envelope)), *want, "{p}: {what}");
        }
    }
}

#[test]
fn an_option_whose_muxed_id_is_not_hs_first_8_bytes_is_declined_unsigned() {
    // The seller's account muxed with another id, in the x402 option.
    let Some(Strkey::Muxed { key, id }) = Strkey::parse(file()["V1"]["M"].as_str().unwrap()) else { panic!() };
    let other = Strkey::Muxed { key, id: id ^ 1 }.to_text();
    let (got, calls) = run("x402/exact/stellar", |d| d["accepts"][0]["payTo"] = json!(other), &simulated(), None);
    assert_eq!(calls, 0);
    assert_eq!(got.unwrap_err().detail, "stellar/carrier-mismatch");
}

#[test]
fn an_address_with_a_bad_checksum_offers_nothing() {
    let m = file()["V1"]["M"].as_str().unwrap().to_owned();
    let bad = format!("{}A", &m[..m.len() - 1]);
    assert_ne!(bad, m);
    let (got, calls) = run("x402/exact/stellar", |d| d["accepts"][0]["payTo"] = json!(bad), &simulated(), None);
    assert_eq!(calls, 0);
    // The read serves no option of the document: the offer is unreadable, as the reference reads it.
    let d = got.unwrap_err();
    assert_eq!(serde_json::to_value(d.code).unwrap(), json!("offer-unreadable"));
    assert_eq!(d.detail, "x402/no-payable-option");
    let asset = file()["fixed"]["asset"].as_str().unwrap().to_owned();
    let bad_asset = format!("{}A", &asset[..asset.len() - 1]);
    let (got, calls) = run("x402/exact/stellar", |d| d["accepts"][0]["asset"] = json!(bad_asset), &simulated(), None);
    assert_eq!(calls, 0);
    assert_eq!(got.unwrap_err().detail, "x402/no-payable-option");
}

#[test]
fn a_signature_of_the_wrong_length_is_declined() {
    for (p, code) in
        [("x402/exact/stellar", "x402/signature-malformed"), ("mpp/charge/stellar", "mpp/credential-malformed")]
    {
        for answer in [json!(format!("0x{}", "11".repeat(63))), json!(format!("0x{}", "11".repeat(65))), json!("11")] {
            let (got, calls) = run(p, |_| {}, &simulated(), Some(answer));
            assert_eq!(calls, 1);
            assert_eq!(got.unwrap_err().detail, code, "{p}");
        }
    }
}
