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

/// 24 bytes from the operating system's random source, as 32 characters of unpadded base64url.
#[derive(Default)]
pub struct RandomIds {
    fallback: AtomicU64,
}

impl fmt::Debug for RandomIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RandomIds")
    }
}

impl Ids for RandomIds {
    fn next_id(&self) -> String {
        let mut bytes = [0u8; 24];
        if getrandom::fill(&mut bytes).is_err() {
            // The id is an idempotency key, not a secret: when the OS source fails, a hash of the time, the
            // process and a counter is still unique.
            let count = self.fallback.fetch_add(1, Ordering::Relaxed);
            let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            let digest = Sha256::new()
                .chain_update(nanos.to_le_bytes())
                .chain_update(std::process::id().to_le_bytes())
                .chain_update(count.to_le_bytes())
                .finalize();
            bytes.copy_from_slice(digest.get(..24).unwrap_or(&[0; 24]));
        }
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
