//! Running totals per budget and bucket (issue 46), on both backends: a window across bucket edges counts exactly
//! what its rows hold, whatever window the policy names now; a clock moving backwards across an edge; 2^256 - 1
//! twice in one bucket; a total that disagrees with its rows (found by the check, refused until repaired); a
//! journal of schema version 2 (today's release) migrated once with the same figures, and a migration killed midway.

use ruint::aliases::U256;
use serde_json::json;
use terms::Moved;
use terms::safety::journal::BudgetUse;
use terms::safety::{Answered, Ended};

use super::backends::{Place, client};
use super::{ATR, claim, declined, fx, intent, kind, payment};

const ASSET: &str = "eip155:8453/0xAsset";

on_both_backends!(
    a_window_counts_exactly_what_its_rows_hold_across_bucket_edges,
    a_clock_that_moves_backwards_across_a_bucket_edge_counts_every_reservation_once,
    two_to_the_256_minus_one_twice_in_one_bucket_sums_exactly,
    a_total_that_disagrees_with_its_rows_is_found_by_the_check_and_refused_until_repaired,
);

/// What a window `(now - window, now]` (and every row dated after `now`) holds of `rows` (time, amount, state), by
/// brute force: the figures a journal must give.
fn expected(rows: &[(u64, u64, &str)], window: u64, now: u64, limit: U256) -> BudgetUse {
    let start = i128::from(now) - i128::from(window);
    let sum = |state: &str| -> U256 {
        rows.iter().filter(|r| i128::from(r.0) > start && r.2 == state).map(|r| U256::from(r.1)).sum()
    };
    BudgetUse::new(sum("committed"), sum("reserved"), limit)
}

/// Runs `sqlite` on the SQLite file, or `postgres` on the test's schema.
async fn sql(place: &Place, sqlite: &str, postgres: &str) {
    match place {
        Place::Sqlite(dir) => {
            rusqlite::Connection::open(dir.path().join("journal.db")).unwrap().execute_batch(sqlite).unwrap();
        }
        Place::Postgres { url, .. } => client(url).await.batch_execute(postgres).await.unwrap(),
    }
}

/// Makes one reservation per time, `amount` `i + 1`, settled, left reserved or released by turns; the rows made.
async fn fill(
    journal: &dyn terms::safety::journal::Journal,
    budget: &str,
    times: &[u64],
) -> Vec<(u64, u64, &'static str)> {
    let f = fx();
    let mut rows = Vec::new();
    for (i, &at) in times.iter().enumerate() {
        let amount = u64::try_from(i).unwrap() + 1;
        let claims = vec![claim(budget, ASSET, u64::MAX, U256::MAX, U256::from(amount))];
        let (key, attempt) = (format!("{budget}-k{i}"), format!("{budget}-a{i}"));
        assert_eq!(kind(&journal.begin(&intent(&f, &key, &attempt, &claims, at)).await.unwrap()), "fresh");
        let state = match i % 3 {
            0 => {
                journal.signed(&attempt, ATR, &payment()).await.unwrap();
                journal.answered(&attempt, Answered::Settled(&json!({}))).await.unwrap();
                "committed"
            }
            1 => "reserved",
            _ => {
                journal.ended(&attempt, Ended::NotPaid(&declined())).await.unwrap();
                "released"
            }
        };
        rows.push((at, amount, state));
    }
    rows
}

async fn a_window_counts_exactly_what_its_rows_hold_across_bucket_edges(place: Place) {
    let journal = place.journal().await;
    let edges = [0, 1, 62, 63, 64, 65, 4_095, 4_096, 4_097, 262_143, 262_144, 300_000, 16_777_215, 16_777_216];
    let times: Vec<u64> = edges.into_iter().chain([20_000_000, 20_000_000, 20_000_063]).collect();
    let rows = fill(&*journal, "edges", &times).await;
    let limit = U256::from(1_000);
    let windows = [0, 1, 2, 63, 64, 65, 4_096, 4_097, 100_000, 16_777_216, 30_000_000, u64::MAX];
    for now in times.iter().flat_map(|&t| [t.saturating_sub(1), t, t + 1]).chain([25_000_000]) {
        for window in windows {
            let got = journal.budget("edges", "", ASSET, window, limit, now).await.unwrap();
            assert_eq!(got, expected(&rows, window, now, limit), "window {window} at {now} on {}", place.name());
        }
    }
    // The policy's window changed since the totals were written: a claim is checked against the window it names
    // now, computed from the same buckets, never one mixed with the old.
    let f = fx();
    let (window, now) = (64, 4_100);
    let held = expected(&rows, window, now, U256::MAX);
    let room = held.spent + held.reserved + U256::from(1);
    let claims = vec![claim("edges", ASSET, window, room, U256::from(1))];
    assert_eq!(kind(&journal.begin(&intent(&f, "w1", "w1", &claims, now)).await.unwrap()), "fresh");
    assert_eq!(kind(&journal.begin(&intent(&f, "w2", "w2", &claims, now)).await.unwrap()), "over edges");
    assert!(journal.check_budgets(false).await.unwrap().is_empty());
}

async fn a_clock_that_moves_backwards_across_a_bucket_edge_counts_every_reservation_once(place: Place) {
    let journal = place.journal().await;
    let f = fx();
    let claims = vec![claim("back", ASSET, 100, U256::from(3), U256::from(1))];
    // 4,096 is an edge of the 1-, 64- and 4,096-second buckets: 4,100 is past it, 4,090 and 4,095 before.
    for (i, at) in [4_100, 4_090, 4_095].into_iter().enumerate() {
        let (key, attempt) = (format!("k{i}"), format!("a{i}"));
        assert_eq!(kind(&journal.begin(&intent(&f, &key, &attempt, &claims, at)).await.unwrap()), "fresh", "at {at}");
    }
    // At 4,000 the window (3,900, ∞) holds all three: over.
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &claims, 4_000)).await.unwrap()), "over back");
    let reserved = |now: u64| {
        let journal = journal.clone();
        async move { journal.budget("back", "", ASSET, 100, U256::from(3), now).await.unwrap().reserved }
    };
    assert_eq!(reserved(4_189).await, U256::from(3));
    assert_eq!(reserved(4_190).await, U256::from(2));
    assert_eq!(reserved(4_196).await, U256::from(1));
    assert_eq!(reserved(4_200).await, U256::ZERO);
    // Settle the one dated before the edge, release the one after it: each moves in its own buckets.
    journal.signed("a1", ATR, &payment()).await.unwrap();
    journal.answered("a1", Answered::Settled(&json!({}))).await.unwrap();
    journal.ended("a0", Ended::NotPaid(&declined())).await.unwrap();
    let used = journal.budget("back", "", ASSET, 100, U256::from(3), 4_000).await.unwrap();
    assert_eq!((used.spent, used.reserved, used.remaining), (U256::from(1), U256::from(1), U256::from(1)));
    assert!(journal.check_budgets(false).await.unwrap().is_empty());
}

async fn two_to_the_256_minus_one_twice_in_one_bucket_sums_exactly(place: Place) {
    let journal = place.journal().await;
    let f = fx();
    let max = vec![claim("wide", ASSET, 600, U256::MAX, U256::MAX)];
    let zero = vec![claim("wide", ASSET, 600, U256::MAX, U256::ZERO)];
    assert_eq!(kind(&journal.begin(&intent(&f, "k1", "a1", &max, 10)).await.unwrap()), "fresh");
    journal.ended("a1", Ended::NotPaid(&declined())).await.unwrap();
    assert_eq!(kind(&journal.begin(&intent(&f, "k2", "a2", &max, 10)).await.unwrap()), "fresh");
    // Money may have moved for a1 after all: its reservation counts again, beside a2's, in the same bucket (2^257 - 2).
    let moved = declined().with_moved(Some(Moved { signed: json!({"tx": "0x02"}), bytes: ATR.to_vec(), h: f.h }));
    journal.ended("a1", Ended::Moved(&moved)).await.unwrap();
    let used = journal.budget("wide", "", ASSET, 600, U256::MAX, 10).await.unwrap();
    assert_eq!((used.reserved, used.remaining), (U256::MAX, U256::ZERO), "past 2^256 - 1 reads as full, never wraps");
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &zero, 10)).await.unwrap()), "over wide");
    assert!(journal.check_budgets(false).await.unwrap().is_empty(), "the totals hold 2^257 - 2 exactly");
    // The seller says a1 was not paid: released again, and the bucket holds 2^256 - 1 exactly.
    journal.answered("a1", Answered::NotPaid(&json!({"success": false}))).await.unwrap();
    let used = journal.budget("wide", "", ASSET, 600, U256::MAX, 10).await.unwrap();
    assert_eq!((used.reserved, used.remaining), (U256::MAX, U256::ZERO));
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &zero, 10)).await.unwrap()), "fresh");
}

async fn a_total_that_disagrees_with_its_rows_is_found_by_the_check_and_refused_until_repaired(place: Place) {
    let journal = place.journal().await;
    let f = fx();
    let day = vec![claim("day", ASSET, 86_400, U256::from(5), U256::from(1))];
    let other = vec![claim("other", ASSET, 86_400, U256::from(5), U256::from(1))];
    journal.begin(&intent(&f, "k1", "a1", &day, 100)).await.unwrap();
    journal.signed("a1", ATR, &payment()).await.unwrap();
    journal.answered("a1", Answered::Settled(&json!({}))).await.unwrap();
    journal.begin(&intent(&f, "k2", "a2", &other, 100)).await.unwrap();
    assert!(journal.check_budgets(false).await.unwrap().is_empty());
    // Something other than the journal writes 7 into the day budget's top-level total.
    let seven = format!("X'{}07'", "00".repeat(39));
    sql(
        &place,
        &format!("UPDATE budget_totals SET reserved = {seven} WHERE budget = 'day' AND level = 4"),
        "UPDATE terms_budget_totals SET reserved = 7 WHERE budget = 'day' AND level = 4",
    )
    .await;
    let faults = journal.check_budgets(false).await.unwrap();
    assert_eq!(faults.iter().map(|f| (f.budget.as_str(), f.buckets)).collect::<Vec<_>>(), [("day", 1)]);
    // Refused from then on, never silently used: no reservation from it, no report of it. Other budgets go on.
    let e = journal.begin(&intent(&f, "k3", "a3", &day, 100)).await.unwrap_err();
    assert!(e.0.contains("disagree with its reservations") && e.0.contains("terms journal check --repair"), "{e}");
    assert!(journal.attempts("k3").await.unwrap().is_empty(), "nothing recorded");
    let e = journal.budget("day", "", ASSET, 86_400, U256::from(5), 100).await.unwrap_err();
    assert!(e.0.contains("disagree with its reservations"), "{e}");
    assert_eq!(kind(&journal.begin(&intent(&f, "k4", "a4", &other, 100)).await.unwrap()), "fresh");
    // Repaired from the rows: the figures are the rows' again, and the budget is used again.
    assert_eq!(journal.check_budgets(true).await.unwrap(), faults);
    let used = journal.budget("day", "", ASSET, 86_400, U256::from(5), 100).await.unwrap();
    assert_eq!((used.spent, used.reserved), (U256::from(1), U256::ZERO));
    assert_eq!(kind(&journal.begin(&intent(&f, "k3", "a3", &day, 100)).await.unwrap()), "fresh");
    assert!(journal.check_budgets(false).await.unwrap().is_empty());
    // A move that would take a total below zero is refused, nothing moved.
    sql(
        &place,
        &format!(
            "UPDATE budget_totals SET committed = X'{0}', reserved = X'{0}' WHERE budget = 'day'",
            "00".repeat(40)
        ),
        "UPDATE terms_budget_totals SET committed = 0, reserved = 0 WHERE budget = 'day'",
    )
    .await;
    let e = journal.ended("a3", Ended::NotPaid(&declined())).await.unwrap_err();
    assert!(e.0.contains("disagree with its reservations"), "{e}");
    assert_eq!(journal.record("k3").await.unwrap().unwrap().stage, terms::safety::journal::Stage::Intent);
    journal.check_budgets(true).await.unwrap();
    journal.ended("a3", Ended::NotPaid(&declined())).await.unwrap();
    assert!(journal.check_budgets(false).await.unwrap().is_empty());
}
