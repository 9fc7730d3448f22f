//! Running totals of each budget per time bucket, so a reservation reads and writes a bounded number of rows however
//! many its window holds (issue 46).
//!
//! A budget (its name, scope and asset) keeps, for each of [`LEVELS`] bucket sizes (1, 64, 4,096, 262,144 and
//! 16,777,216 seconds), one row per bucket that holds a reservation: the sums of its `committed` and of its
//! `reserved` amounts (released ones count nowhere). A reservation dated `at` is in bucket `at / size` of every level.
//! A window counts every reservation dated after its start, so it is the suffix `[from, ∞)` of time, and
//! [`cover`] splits it exactly into at most 63 buckets of each level below the top and the top level's buckets from
//! there on (as many as hold reservations: one per 194 days). The window's edges stay exact to the second: a
//! window is never rounded to a bucket.
//!
//! The totals change in the same transaction as the rows they sum (a reservation, its commit, its release), so
//! they never disagree with them unless something else wrote the file; [`expected`] recomputes them from the rows
//! for `terms journal check`, and a budget found to disagree is marked and refused until repaired.
//!
//! The bucket arithmetic in Rust and the 320-bit blob codec serve the SQLite journal; the PostgreSQL journal keeps its
//! totals in `NUMERIC` and sums them in SQL (`postgres/totals.rs`, the same cover), and uses only [`faulted`] here:
//! in a build with `postgres` and without `sqlite` the rest is unused.
#![cfg_attr(not(feature = "sqlite"), allow(dead_code))]

use std::collections::BTreeMap;

use ruint::Uint;
use ruint::aliases::U256;

pub(crate) use super::BudgetFault;

/// How many bucket sizes each budget keeps.
pub(crate) const LEVELS: u32 = 5;

/// Each size is this power of two times the one below (64).
const SHIFT: u32 = 6;

/// A bucket's total: wide enough that sums of 2^63 amounts of 2^256 - 1 each never wrap.
pub(crate) type Total = Uint<320, 5>;

/// The bytes of a [`Total`] as the SQLite journal stores it (big-endian).
pub(crate) const TOTAL_BYTES: usize = 40;

/// The bucket of level `level` that holds time `at` (Unix seconds, never negative).
pub(crate) fn bucket(at: i64, level: u32) -> i64 {
    at >> (SHIFT * level)
}

/// The buckets that cover the window counting reservations dated after `start` exactly: for each level, the first
/// bucket and the one past the last (`i64::MAX` for the top level: all from there on).
pub(crate) fn cover(start: i64) -> [(u32, i64, i64); LEVELS as usize] {
    // The first second counted; times are never negative.
    let from = i128::from(start).saturating_add(1).max(0);
    let ceil = |level: u32| -> i128 {
        let size = 1i128 << (SHIFT * level);
        (from + size - 1) / size
    };
    let clamp = |n: i128| i64::try_from(n).unwrap_or(i64::MAX);
    std::array::from_fn(|l| {
        let level = u32::try_from(l).unwrap_or(0);
        let end = if level + 1 == LEVELS { i128::from(i64::MAX) } else { ceil(level + 1) << SHIFT };
        (level, clamp(ceil(level)), clamp(end))
    })
}

/// A stored total read back; a blob of another length is unreadable.
pub(crate) fn read(bytes: &[u8], budget: &str) -> Result<Total, String> {
    <[u8; TOTAL_BYTES]>::try_from(bytes)
        .map(Total::from_be_bytes)
        .map_err(|_| format!("a running total of budget {budget} is unreadable"))
}

/// A total as stored.
pub(crate) fn write(total: Total) -> [u8; TOTAL_BYTES] {
    total.to_be_bytes()
}

/// A 256-bit amount as a total.
pub(crate) fn widen(amount: U256) -> Total {
    Total::from_limbs_slice(amount.as_limbs())
}

/// A sum of totals as what a window holds: `None` past 2^256 - 1.
pub(crate) fn narrow(total: Total) -> Option<U256> {
    U256::checked_from_limbs_slice(total.as_limbs())
}

/// The refusal of a budget whose totals `terms journal check` found to disagree with its rows.
pub(crate) fn faulted(budget: &str) -> String {
    format!(
        "the running totals of budget {budget} disagree with its reservations (`terms journal check` found it): \
         nothing is reserved from it or reported for it until `terms journal check --repair` recomputes them"
    )
}

/// A budget's name, scope and asset, a level and a bucket: one row of running totals.
pub(crate) type Key = (String, String, String, u32, i64);

/// The totals the rows say each bucket should hold: `(committed, reserved)` per [`Key`], from every reservation
/// (its budget, scope, asset, time, amount and state) that counts.
pub(crate) fn expected<I>(rows: I) -> Result<BTreeMap<Key, (Total, Total)>, String>
where
    I: IntoIterator<Item = (String, String, String, i64, String, String)>,
{
    let mut totals: BTreeMap<Key, (Total, Total)> = BTreeMap::new();
    for (budget, scope, asset, at, amount, state) in rows {
        let bad = || format!("a reservation of budget {budget} is unreadable");
        let amount = widen(crate::pairing::parse_atomic(&amount).ok_or_else(bad)?);
        let committed = match state.as_str() {
            "committed" => true,
            "reserved" => false,
            "released" => continue,
            _ => return Err(bad()),
        };
        if at < 0 {
            return Err(bad());
        }
        for level in 0..LEVELS {
            let key = (budget.clone(), scope.clone(), asset.clone(), level, bucket(at, level));
            let (c, r) = totals.entry(key).or_default();
            let sum = if committed { c } else { r };
            *sum = sum.checked_add(amount).ok_or_else(bad)?;
        }
    }
    Ok(totals)
}

/// The budgets whose stored totals (`stored`) differ from what their rows say (`expected`); a bucket whose totals
/// are both zero is the same as none.
pub(crate) fn compare(
    expected: &BTreeMap<Key, (Total, Total)>,
    stored: &BTreeMap<Key, (Total, Total)>,
) -> Vec<BudgetFault> {
    let zero = (Total::ZERO, Total::ZERO);
    let mut faults: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for key in expected.keys().chain(stored.keys().filter(|k| !expected.contains_key(*k))) {
        if expected.get(key).unwrap_or(&zero) != stored.get(key).unwrap_or(&zero) {
            *faults.entry((key.0.clone(), key.1.clone(), key.2.clone())).or_default() += 1;
        }
    }
    faults.into_iter().map(|((budget, scope, asset), buckets)| BudgetFault { budget, scope, asset, buckets }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the cover sums, by brute force over every time in `0..limit`: each time counted once exactly when it is
    /// after `start`.
    #[test]
    fn a_cover_counts_every_second_after_its_start_exactly_once() {
        let times: Vec<i64> =
            (0..70_000).step_by(7).chain([262_143, 262_144, 16_777_215, 16_777_216, 40_000_000]).collect();
        for start in [-5, -1, 0, 1, 62, 63, 64, 4_095, 4_096, 4_097, 65_530, 262_143, 16_777_215, 16_777_216] {
            let ranges = cover(start);
            for &at in &times {
                let hits = ranges.iter().filter(|&&(l, lo, hi)| (lo..hi).contains(&bucket(at, l))).count();
                assert_eq!(hits, usize::from(at > start), "start {start}, at {at}");
            }
            // At most 63 buckets of each level below the top.
            for &(_, lo, hi) in &ranges[..ranges.len() - 1] {
                assert!(hi - lo <= 63, "start {start}: {lo}..{hi}");
            }
        }
        // The ends of time: nothing overflows, and a start past every time covers nothing that can be stored.
        let last = cover(i64::MAX);
        assert!(last.iter().all(|&(l, lo, hi)| lo >= hi || lo > bucket(i64::MAX, l)));
        assert_eq!(cover(i64::MIN)[0].1, 0);
    }

    #[test]
    fn totals_are_exact_past_two_to_the_256_and_read_back_only_at_their_width() {
        let max = widen(U256::MAX);
        let two = max + max;
        assert_eq!(narrow(two), None);
        assert_eq!(narrow(max), Some(U256::MAX));
        assert_eq!(read(&write(two), "b"), Ok(two));
        assert!(read(&[0; 32], "b").is_err());
    }

    #[test]
    fn totals_recomputed_from_rows_find_the_budget_that_disagrees() {
        let row = |b: &str, at: i64, amount: &str, state: &str| {
            (b.to_owned(), String::new(), "a".to_owned(), at, amount.to_owned(), state.to_owned())
        };
        let rows = [row("day", 5, "3", "reserved"), row("day", 70, "4", "committed"), row("week", 5, "1", "released")];
        let expected = expected(rows).unwrap();
        assert_eq!(expected.len(), 2 * LEVELS as usize - 3, "5 and 70 share their buckets from level 2 on");
        assert!(compare(&expected, &expected).is_empty());
        let mut stored = expected.clone();
        stored.insert(("week".into(), String::new(), "a".into(), 0, 5), (Total::ZERO, Total::from(1)));
        if let Some(total) = stored.get_mut(&("day".into(), String::new(), "a".into(), 3, 0)) {
            total.1 = Total::from(2);
        }
        let faults = compare(&expected, &stored);
        assert_eq!(
            faults.iter().map(|f| (f.budget.as_str(), f.buckets)).collect::<Vec<_>>(),
            [("day", 1), ("week", 1)]
        );
        assert!(super::expected([row("day", 5, "x", "reserved")]).is_err());
    }
}
