//! Throughput of the gate on an MPP EVM charge (`mpp/charge/evm/authorization`): `transact` with a local key,
//! `confirm` with an in-memory fetch, `finish`, and reading the seller's `WWW-Authenticate` header into the
//! challenge list. The ATR, key and clock are the x402 quickstart's, so the two protocols compare.
//!
//! The crate remembers the last few challenge texts a thread decoded (`mpp::values`), so each call here takes the
//! next of 16 challenges that differ in their amount: every call reads a challenge it has not just read, as an agent
//! meeting a new 402 does, and the figure is not a cache's.
//!
//! Run: `cargo bench --bench mpp` (and `scripts/bench-peer` for the Python reference on the same challenge).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;

use base64::Engine as _;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use terms::{FixedClock, LocalSigner, Options, Signer, confirm, finish, transact};

mod support;
use support::{ATR, KEY, Memory, NOW};

fn b64(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
}

/// How many distinct challenges the calls take in turn: twice what the crate remembers.
const ROTATION: usize = 16;

/// One challenge for 0.01 USDC (plus `extra` units) on Base Sepolia, its id carrying H at position 0, its opaque the
/// legal context, expiring a minute after `NOW`: the header value a seller sends.
fn header(extra: usize) -> String {
    let h = terms::atr_hash(&hex::decode(ATR).unwrap());
    let hex = h.to_hex();
    let request = json!({
        "amount": (10_000 + extra).to_string(), "currency": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        "methodDetails": {"chainId": 84532, "credentialTypes": ["authorization"]},
        "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    });
    let opaque = json!({"legalContext": format!("lcp:sha256:{hex}"),
        "legalContextUrl": format!("https://atr.seller.example/{hex}")});
    format!(
        r#"Payment id="{}", realm="api.seller.example", method="evm", intent="charge", request="{}", expires="2026-09-21T14:14:20Z", opaque="{}""#,
        terms::mpp::challenge_id(&h, 0).unwrap(),
        b64(&terms::json::canonical(&request).unwrap()),
        b64(&terms::json::canonical(&opaque).unwrap()),
    )
}

fn inputs() -> Map<String, Value> {
    json!({"tokenDomain": {"name": "USDC", "version": "2"}}).as_object().cloned().unwrap()
}

fn mpp(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pairing = terms::pairing("mpp/charge/evm/authorization").unwrap();
    let wallet = LocalSigner::from_hex(KEY, 84_532).unwrap();
    let seller = Memory::atr();
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs());
    let headers: Vec<String> = (0..ROTATION).map(header).collect();
    let docs: Vec<Value> = headers.iter().map(|h| terms::mpp::decode_challenges(&[h.as_str()]).unwrap()).collect();
    let mut turn = 0usize;
    let mut next = move || {
        turn = (turn + 1) % ROTATION;
        turn
    };

    c.bench_function("mpp transact (local key)", |b| {
        b.to_async(&rt).iter_batched(
            || docs[next()].clone(),
            |doc| async { drop(black_box(transact(doc, pairing, &wallet, &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });
    c.bench_function("mpp confirm (in-memory fetch)", |b| {
        b.to_async(&rt).iter_batched(
            || docs[next()].clone(),
            |doc| async { drop(black_box(confirm(doc, pairing, wallet.account(), &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });

    // Each finish takes the next of the confirmed challenges, signed; the bench is only worth its figure if each
    // payment is the real one: H read back from the credential.
    let signed: Vec<_> = docs
        .iter()
        .map(|doc| {
            let confirmed = rt.block_on(confirm(doc, pairing, wallet.account(), &seller, &options)).unwrap();
            let answer = rt.block_on(wallet.sign(confirmed.request.as_ref().unwrap())).unwrap();
            let terms::Finish::Finished(paid) =
                finish(&confirmed.bytes, &confirmed.chosen, std::slice::from_ref(&answer), pairing).unwrap()
            else {
                panic!("one signature completes an EVM authorization");
            };
            assert_eq!(paid.h, confirmed.h);
            (confirmed, [answer])
        })
        .collect();
    c.bench_function("mpp finish", |b| {
        b.iter_batched(
            || &signed[next()],
            |(confirmed, answers)| black_box(finish(&confirmed.bytes, &confirmed.chosen, answers, pairing).unwrap()),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("mpp decode_challenges (one header)", |b| {
        b.iter_batched(
            || headers[next()].as_str(),
            |header| black_box(terms::mpp::decode_challenges(&[header]).unwrap()),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, mpp);
criterion_main!(benches);
