//! One module per pairing family's vector file. Each gives its trials; the harness in `vectors.rs` runs them beside
//! the gate's own rows. A family adds `pub mod <family>;` and one line in `trials`.

use libtest_mimic::Trial;

pub mod batch_settlement;
#[cfg(feature = "solana")]
mod batch_settlement_solana;
pub mod inputs;
pub mod mpp_no_proof;
#[cfg(feature = "mpp")]
pub mod mpp_session_evm;
#[cfg(all(feature = "stellar", feature = "mpp"))]
mod mpp_stellar;
pub mod quote;
mod quote_malformed;
mod quote_mpp;
pub mod x402_evm;
#[cfg(feature = "solana")]
pub mod x402_solana;
#[cfg(feature = "solana")]
mod x402_solana_bad;
#[cfg(feature = "stellar")]
pub mod x402_stellar;
#[cfg(feature = "solana")]
pub mod x402_upto_solana;
#[cfg(feature = "solana")]
mod x402_upto_solana_bad;

/// Every family's trials.
pub fn trials() -> Vec<Trial> {
    let mut all: Vec<Trial> = Vec::new();
    all.extend(batch_settlement::trials());
    all.extend(x402_evm::trials());
    all.extend(mpp_no_proof::trials());
    all.extend(quote::trials());
    all.extend(inputs::trials());
    #[cfg(feature = "mpp")]
    all.extend(mpp_session_evm::trials());
    #[cfg(feature = "solana")]
    all.extend(x402_solana::trials());
    #[cfg(feature = "solana")]
    all.extend(x402_upto_solana::trials());
    #[cfg(feature = "stellar")]
    all.extend(x402_stellar::trials());
    #[cfg(all(feature = "stellar", feature = "mpp"))]
    all.extend(mpp_stellar::trials());
    all
}
