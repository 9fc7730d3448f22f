//! Time and identifiers, injectable so that every run can be made deterministic.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// The wall clock the gate reads `now` from (validBefore, deadlines in payments), in whole Unix seconds.
pub trait Clock: Send + Sync {
    /// floor(Unix time in seconds).
    fn now(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
    }
}

/// A clock stopped at one instant, for tests and vectors (`FixedClock(1_790_000_000)`).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn now(&self) -> u64 {
        self.0
    }
}

/// Where each payment's `ref` (the x402 payment-identifier id) comes from: 32 characters of `[A-Za-z0-9_-]`.
pub trait Ids: Send + Sync {
    /// A fresh id.
    fn next_id(&self) -> String;
}

/// 24 bytes from the operating system's random source, as 32 characters of unpadded base64url. The bytes are drawn
/// 32 ids at a time, so a busy gate makes one system call per 32 payments, not one per payment.
#[derive(Default)]
pub struct RandomIds {
    pool: std::sync::Mutex<Pool>,
    fallback: AtomicU64,
}

const POOLED: usize = 32;

struct Pool {
    bytes: [u8; 24 * POOLED],
    used: usize,
}

impl Default for Pool {
    fn default() -> Self {
        Self { bytes: [0; 24 * POOLED], used: POOLED }
    }
}

impl fmt::Debug for RandomIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RandomIds")
    }
}

impl RandomIds {
    /// 24 fresh bytes: from the pool, refilled from the OS source when spent; `None` when the OS source fails.
    fn draw(&self) -> Option<[u8; 24]> {
        let mut pool = self.pool.lock().ok()?;
        if pool.used == POOLED {
            getrandom::fill(&mut pool.bytes).ok()?;
            pool.used = 0;
        }
        let start = pool.used * 24;
        let mut out = [0u8; 24];
        out.copy_from_slice(pool.bytes.get(start..start + 24)?);
        // Each id's bytes are handed out once and then wiped.
        if let Some(spent) = pool.bytes.get_mut(start..start + 24) {
            spent.fill(0);
        }
        pool.used += 1;
        Some(out)
    }
}

impl Ids for RandomIds {
    fn next_id(&self) -> String {
        let bytes = self.draw().unwrap_or_else(|| {
            // The id is an idempotency key, not a secret: when the OS source fails, a hash of the time, the
            // process and a counter is still unique.
            let count = self.fallback.fetch_add(1, Ordering::Relaxed);
            let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            let digest = Sha256::new()
                .chain_update(nanos.to_le_bytes())
                .chain_update(std::process::id().to_le_bytes())
                .chain_update(count.to_le_bytes())
                .finalize();
            let mut out = [0u8; 24];
            out.copy_from_slice(digest.get(..24).unwrap_or(&[0; 24]));
            out
        });
        crate::codec::b64u_encode(&bytes)
    }
}

/// Ids from a counter, for tests: `ref-000…1`, `ref-000…2`, … (32 characters each).
#[derive(Debug, Default)]
pub struct CountingIds(AtomicU64);

impl Ids for CountingIds {
    fn next_id(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("ref-{n:028}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_fresh_and_well_formed() {
        let ids = RandomIds::default();
        let drawn: std::collections::HashSet<String> = (0..3 * POOLED + 5).map(|_| ids.next_id()).collect();
        assert_eq!(drawn.len(), 3 * POOLED + 5, "an id repeated");
        assert!(
            drawn
                .iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'))
        );
    }
}
