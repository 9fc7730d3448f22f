//! Throughput of the gate on the quickstart payment: `transact` with a local key, `confirm` with an in-memory
//! fetch (the document handed over, and lent), the local key's signature, `finish`, and `atr_hash` of 1 MiB.
//!
//! Run: `cargo bench --bench gate` (and `scripts/bench-peer` for the Python reference on the same payment).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use terms::LocalSigner;
use terms::{FixedClock, Options, Signer, confirm, finish, transact};

mod support;
use support::{KEY, Memory, NOW, offer};

fn gate(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let wallet = LocalSigner::from_hex(KEY, 84_532).unwrap();
    let seller = Memory::atr();
    let options = Options::new().clock(FixedClock(NOW));
    let doc = offer();

    // The document is handed over, as a caller that decoded it from the header does: the gate moves it into the
    // choice. Each call's copy is made outside the timing; what the call returns is dropped inside it.
    c.bench_function("transact (local key)", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(transact(doc, pairing, &wallet, &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });
    c.bench_function("confirm (in-memory fetch)", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(confirm(doc, pairing, wallet.account(), &seller, &options).await.unwrap())) },
            BatchSize::SmallInput,
        )
    });
    // A lent document: the choice keeps a copy of it.
    c.bench_function("confirm (in-memory fetch, lent document)", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(confirm(&doc, pairing, wallet.account(), &seller, &options).await.unwrap()) })
    });

    let confirmed = rt.block_on(confirm(&doc, pairing, wallet.account(), &seller, &options)).unwrap();
    let answer = rt.block_on(wallet.sign(confirmed.request.as_ref().unwrap())).unwrap();
    // The local key's own work on the payment: the EIP-712 signing hash of the authorization, and the signature.
    let request = confirmed.request.clone().unwrap();
    c.bench_function("sign (local key, EIP-3009 authorization)", |b| {
        b.to_async(&rt).iter(|| async { black_box(wallet.sign(&request).await.unwrap()) })
    });
    if let terms::SigningRequest::Eip712 { typed_data } = &request {
        c.bench_function("EIP-712 signing hash (EIP-3009 authorization)", |b| {
            b.iter(|| black_box(typed_data.signing_hash().unwrap()))
        });
    }
    let answers = [answer];
    c.bench_function("finish", |b| {
        b.iter(|| black_box(finish(&confirmed.bytes, &confirmed.chosen, &answers, pairing).unwrap()))
    });

    let mib = vec![0x5au8; terms::MAX_ATR_BYTES];
    let mut group = c.benchmark_group("atr_hash");
    group.throughput(Throughput::Bytes(mib.len() as u64));
    group.bench_function("1 MiB", |b| b.iter(|| black_box(terms::atr_hash(black_box(&mib)))));
    group.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
