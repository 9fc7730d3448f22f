//! What the buyer-safety layer costs, in one run beside plain `transact` on the quickstart payment (local key,
//! in-memory fetch): `transact` with the spend policy alone (its resource, network, asset, payee, cap and window
//! checked), and with the policy, one budget and the SQLite journal (WAL, `synchronous = FULL`, a real file): the
//! journal's two durable writes inside `transact` (`begin`: the budget reserved and the intent recorded; `signed`:
//! the payment recorded), and the whole payment with its third (`answered`: the seller's settlement).
//!
//! Run: `cargo bench --bench safety`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use terms::safety::journal::SqliteJournal;
use terms::safety::policy::Policy;
use terms::safety::{Answered, Purchase, Role, Spend, SpendJournal, SpendPolicy};
use terms::{LocalSigner, Options, Signer, TransactOutcome, transact};

mod support;
use support::{KEY, Memory, NOW, offer};

const POLICY: &str = r#"
resources = ["https://api.seller.example/v1/"]
networks = ["eip155:84532"]
max_validity_seconds = 600

[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "1000000"

[payees]
deny = ["0x000000000000000000000000000000000000dEaD"]
"#;

/// The budget, kept in the journal (a policy that keeps budgets refuses without one).
const BUDGET: &str = r#"
[[budgets]]
name = "usdc-day"
asset = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"
window = "day"
limit = "50000000"
"#;

fn safety(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pairing = terms::pairing("x402/exact/eip155/eip3009").unwrap();
    let wallet = LocalSigner::from_hex(KEY, 84_532).unwrap();
    let seller = Memory::atr();
    let doc = offer();
    let policy = Arc::new(Policy::from_toml_str(POLICY).unwrap());
    let budgeted = Arc::new(Policy::from_toml_str(&format!("{POLICY}{BUDGET}")).unwrap());
    let dir = std::env::temp_dir().join(format!("terms-bench-safety-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let journal = Arc::new(SqliteJournal::open(dir.join("journal.db")).unwrap());
    let journal = &journal;
    let purchase = Purchase::new("GET", "https://api.seller.example/v1/quote");
    let keys = AtomicU64::new(0);
    let next = || purchase.clone().with_key(format!("bench-{}", keys.fetch_add(1, Ordering::Relaxed)));

    let plain = Options::new().clock(terms::FixedClock(NOW));
    let policed = plain.clone().policy(policy.clone()).purchase(purchase.clone());
    // Each journaled payment is 40 days after the one before: its budget window holds it alone, so every iteration
    // does the same work (the window's reservations are summed on each `begin`).
    let journaled = || {
        let later = NOW + keys.load(Ordering::Relaxed) * 40 * 86_400;
        Options::new().clock(terms::FixedClock(later)).policy(budgeted.clone())
    };

    let mut group = c.benchmark_group("safety");
    // The two parts of the policy's cost: the pairing's quote of the choice, and the policy's check of the quote.
    let confirmed = rt.block_on(terms::confirm(doc.clone(), pairing, wallet.account(), &seller, &plain)).unwrap();
    group.bench_function("quote", |b| b.iter(|| black_box(pairing.quote(black_box(&confirmed.chosen)).unwrap())));
    let quote = pairing.quote(&confirmed.chosen).unwrap();
    let spend = Spend::new(pairing.id(), wallet.account(), &quote, Some(&purchase), Role::Payment, NOW);
    group.bench_function("policy check", |b| b.iter(|| black_box(policy.check(black_box(&spend)).unwrap())));
    group.bench_function("transact", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(transact(doc, pairing, &wallet, &seller, &plain).await.unwrap())) },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("transact + policy", |b| {
        b.to_async(&rt).iter_batched(
            || doc.clone(),
            |doc| async { drop(black_box(transact(doc, pairing, &wallet, &seller, &policed).await.unwrap())) },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("transact + policy + journal (2 durable writes)", |b| {
        b.to_async(&rt).iter_batched(
            || (doc.clone(), journaled().journal(Arc::clone(journal) as Arc<dyn SpendJournal>).purchase(next())),
            |(doc, options)| async {
                let options = options;
                let done = transact(doc, pairing, &wallet, &seller, &options).await.unwrap();
                assert!(matches!(done, TransactOutcome::Signed(_)));
                drop(black_box(done));
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("payment: transact + policy + journal + answered (3 durable writes)", |b| {
        b.to_async(&rt).iter_batched(
            || (doc.clone(), journaled().journal(Arc::clone(journal) as Arc<dyn SpendJournal>).purchase(next())),
            |(doc, options)| async {
                let options = options;
                let TransactOutcome::Signed(done) = transact(doc, pairing, &wallet, &seller, &options).await.unwrap()
                else {
                    panic!("not signed")
                };
                let attempt = done.attempt.as_deref().unwrap();
                journal.answered(attempt, Answered::Settled(&json!({"success": true}))).await.unwrap();
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
    paired(&rt, &doc, pairing, &wallet, &seller, &plain, &policed);
}

/// The policy's cost measured in pairs, so both sides meet the machine in the same state: 20,000 rounds, each
/// one plain `transact` and one with the policy, in alternating order, each call timed; the medians of each side and
/// the median of the per-round differences are printed. On a shared machine this is the figure to trust: criterion's
/// two benches above run minutes apart.
fn paired(
    rt: &tokio::runtime::Runtime,
    doc: &Value,
    pairing: &dyn terms::pairing::Pairing,
    wallet: &LocalSigner,
    seller: &Memory,
    plain: &Options,
    policed: &Options,
) {
    const ROUNDS: usize = 20_000;
    let time = |options: &Options| {
        let doc = doc.clone();
        let start = std::time::Instant::now();
        let done = rt.block_on(transact(doc, pairing, wallet, seller, options)).unwrap();
        let took = start.elapsed();
        drop(black_box(done));
        took.as_nanos()
    };
    let (mut a, mut b, mut diff) = (Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS), Vec::with_capacity(ROUNDS));
    for round in 0..ROUNDS {
        let (x, y) = if round % 2 == 0 {
            let x = time(plain);
            (x, time(policed))
        } else {
            let y = time(policed);
            (time(plain), y)
        };
        a.push(x);
        b.push(y);
        diff.push(y.cast_signed() - x.cast_signed());
    }
    a.sort_unstable();
    b.sort_unstable();
    diff.sort_unstable();
    let (ma, mb, md) = (a[ROUNDS / 2] as f64, b[ROUNDS / 2] as f64, diff[ROUNDS / 2] as f64);
    println!(
        "paired, {ROUNDS} rounds: transact {:.1} µs, transact + policy {:.1} µs, the policy's cost {:.2} µs ({:.1}% of transact)",
        ma / 1e3,
        mb / 1e3,
        md / 1e3,
        100.0 * md / ma
    );
}

criterion_group!(benches, safety);
criterion_main!(benches);
