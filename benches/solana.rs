//! Throughput of the gate on `x402/exact/solana` (issue 14): `transact` with the local ed25519 key, `confirm` with an
//! in-memory fetch, and `finish`. The offer, the buyer's inputs, the payer's seed and the time are the B2 row of
//! `tests/vectors/x402-exact-solana.json`, read from the file as `scripts/peer_bench.py` reads it for the reference;
//! the link serves the row's ATR, `abc`, whose SHA-256 the offer advertises.
//!
//! Two parts of `transact` are also timed alone, as the floor under it that is not ours to speed up: the ed25519
//! signature of the row's message with the local key (ed25519-dalek), and the row's two associated token accounts
//! (each a search for an address off the curve: SHA-256 and a curve25519-dalek point decompression per candidate).
//!
//! Run: `cargo bench --bench solana` (and `scripts/bench-peer` for the Python reference on the same payment).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use terms::rail::solana::{Key, associated_token_address};
use terms::{FixedClock, Options, Signer, SolanaKey, confirm, finish, transact};

#[allow(dead_code, reason = "this bench serves its own ATR and reads its own offer")]
mod support;
use support::Memory;

/// The ATR the row's link serves (the file's `about`: "Where the ATR is abc, H is its SHA-256").
const ATR: &[u8] = b"abc";
/// The time the row's build runs at: a Solana exact payment reads no clock, so any fixed instant is the row's.
const NOW: u64 = 1_700_000_000;

fn solana(c: &mut Criterion) {
    let file: Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/x402-exact-solana.json"
    )))
    .unwrap();
    let row = &file["buyer"]["rows"][0]["input"];
    let doc = row["doc"].clone();
    // The row's document must advertise the bytes served, or every call below would decline.
    assert_eq!(terms::atr_hash(ATR).to_hex(), file["fixed"]["H"].as_str().unwrap());

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pairing = terms::pairing("x402/exact/solana").unwrap();
    let key = SolanaKey::from_seed_hex(file["fixed"]["payerSeed"].as_str().unwrap()).unwrap();
    let wallet = key.on_network(doc["accepts"][0]["network"].as_str().unwrap()).unwrap();
    assert_eq!(wallet.account(), row["account"].as_str().unwrap());
    let seller = Memory(ATR.into());
    let options = Options::new().clock(FixedClock(NOW)).inputs(row["inputs"].as_object().unwrap().clone());

    c.bench_function("solana transact (local key)", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(transact(doc, pairing, &wallet, &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });
    c.bench_function("solana confirm (in-memory fetch)", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(confirm(doc, pairing, wallet.account(), &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });

    let confirmed = rt.block_on(confirm(&doc, pairing, wallet.account(), &seller, &options)).unwrap();
    let answer = rt.block_on(wallet.sign(confirmed.request.as_ref().unwrap())).unwrap();
    let answers = [answer];
    c.bench_function("solana finish", |b| {
        b.iter(|| black_box(finish(&confirmed.bytes, &confirmed.chosen, &answers, pairing).unwrap()))
    });

    let request = confirmed.request.as_ref().unwrap();
    c.bench_function("solana sign alone (local key)", |b| {
        b.to_async(&rt).iter(|| async { black_box(wallet.sign(black_box(request)).await.unwrap()) })
    });
    // The row's payer and payee token accounts, for its mint under its token program: the two `build` derives.
    let key = |text: &str| Key::parse(text).unwrap();
    let option = &doc["accepts"][0];
    let inputs = &row["inputs"];
    let (payer, payee) = (key(wallet.account().rsplit(':').next().unwrap()), key(option["payTo"].as_str().unwrap()));
    let (mint, program) = (key(option["asset"].as_str().unwrap()), key(inputs["tokenProgram"].as_str().unwrap()));
    c.bench_function("solana two associated token accounts alone", |b| {
        b.iter(|| {
            black_box(associated_token_address(black_box(&payer), &program, &mint).unwrap());
            black_box(associated_token_address(black_box(&payee), &program, &mint).unwrap())
        })
    });
}

criterion_group!(benches, solana);
criterion_main!(benches);
