//! Program-derived addresses (SHA-256 and the ed25519 off-curve check) and associated token accounts.

use curve25519_dalek::edwards::CompressedEdwardsY;
use sha2::{Digest, Sha256};

use super::key::Key;
use super::program::ATA_PROGRAM;
use crate::refusal::{Reason, Refusal};

/// The most seeds a program-derived address takes.
pub const MAX_SEEDS: usize = 16;
/// The longest one seed may be, in bytes.
pub const MAX_SEED: usize = 32;

const PDA_MARKER: &[u8] = b"ProgramDerivedAddress";

/// Whether 32 bytes decompress as an ed25519 point, as the runtime's check does: a key that can sign, which a
/// program-derived address is not.
pub fn is_on_curve(bytes: &[u8; 32]) -> bool {
    CompressedEdwardsY(*bytes).decompress().is_some()
}

/// A program-derived address and the bump that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pda {
    /// The address.
    pub address: Key,
    /// The bump seed, 255 down to 0.
    pub bump: u8,
}

/// The program-derived address of `seeds` under `program`: for bumps 255 down to 0, the first
/// SHA-256(seeds ‖ bump ‖ program ‖ "ProgramDerivedAddress") that is off the curve. More than [`MAX_SEEDS`] seeds,
/// a seed over [`MAX_SEED`] bytes, or no bump off the curve is `svm/pda-not-found`.
pub fn find_pda(seeds: &[&[u8]], program: &Key) -> Result<Pda, Refusal> {
    find_pda_with(seeds, program, is_on_curve)
}

/// [`find_pda`] with the curve check given, so a test can make every candidate fall on the curve.
pub(crate) fn find_pda_with(
    seeds: &[&[u8]],
    program: &Key,
    on_curve: impl Fn(&[u8; 32]) -> bool,
) -> Result<Pda, Refusal> {
    let not_found = Refusal::new("svm", Reason::PdaNotFound);
    if seeds.len() > MAX_SEEDS || seeds.iter().any(|s| s.len() > MAX_SEED) {
        return Err(not_found);
    }
    let mut base = Sha256::new();
    for seed in seeds {
        base.update(seed);
    }
    for bump in (0..=255u8).rev() {
        let mut hasher = base.clone();
        hasher.update([bump]);
        hasher.update(program.as_bytes());
        hasher.update(PDA_MARKER);
        let candidate: [u8; 32] = hasher.finalize().into();
        if !on_curve(&candidate) {
            return Ok(Pda { address: Key(candidate), bump });
        }
    }
    Err(not_found)
}

/// The associated token account of `(owner, mint)` under `token_program`.
pub fn associated_token_address(owner: &Key, token_program: &Key, mint: &Key) -> Result<Key, Refusal> {
    let seeds: [&[u8]; 3] = [owner.as_bytes(), token_program.as_bytes(), mint.as_bytes()];
    Ok(find_pda(&seeds, &ATA_PROGRAM)?.address)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{MAX_SEED, MAX_SEEDS, find_pda, find_pda_with};
    use crate::rail::solana::program::ATA_PROGRAM;

    #[test]
    fn no_bump_off_the_curve_is_pda_not_found() {
        let err = find_pda_with(&[b"seed"], &ATA_PROGRAM, |_| true).unwrap_err();
        assert_eq!(err.code(), "svm/pda-not-found");
        // Every bump but the last on the curve: the search goes down to bump 0.
        let calls = std::cell::Cell::new(0);
        let pda = find_pda_with(&[b"seed"], &ATA_PROGRAM, |_| {
            calls.set(calls.get() + 1);
            calls.get() < 256
        })
        .unwrap();
        assert_eq!(pda.bump, 0);
    }

    #[test]
    fn too_many_or_too_long_seeds_are_pda_not_found() {
        let seed = [0u8; MAX_SEED];
        assert!(find_pda(&[&seed[..]; MAX_SEEDS], &ATA_PROGRAM).is_ok());
        let many = [&seed[..]; MAX_SEEDS + 1];
        assert_eq!(find_pda(&many, &ATA_PROGRAM).unwrap_err().code(), "svm/pda-not-found");
        let long = [0u8; MAX_SEED + 1];
        assert_eq!(find_pda(&[&long[..]], &ATA_PROGRAM).unwrap_err().code(), "svm/pda-not-found");
    }
}
