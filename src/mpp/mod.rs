//! The Machine Payments Protocol (MPP, the IETF "Payment" HTTP authentication scheme): the protocol core every MPP
//! pairing shares, with no chain dependency.
//!
//! A seller answers 402 with `WWW-Authenticate: Payment id="…", realm="…", method="…", intent="…", request="…",
//! expires="…", opaque="…"` challenges. [`decode_challenges`] reads the header values into the JSON challenge list the
//! gate takes as the seller's document; [`read`] finds the legal context the list advertises: H in a challenge's id
//! (`base64url(H).position`, [`challenge_id`], [`challenge_h`]) and in its `opaque` (`legalContext`,
//! `legalContextUrl`, `legalContextAgreementUrl`). The buyer retries with `Authorization: Payment <credential>`
//! ([`Payment::authorization`](crate::Payment::authorization), read back with [`decode_credential`]), and the seller
//! answers with a `Payment-Receipt` ([`read_receipt`]). [`network`] names the CAIP-2 network a challenge pays on;
//! [`challenge_hash`] and [`attribution_memo`] are what MPP's EVM and Tempo methods bind a signature with.
//!
//! The pairings that need no rail live here too, each paid after an agreement payment (their payment is no public
//! proof of H, and the signer is handed nothing): `mpp/charge/card`, `mpp/charge/stripe`, `mpp/subscription/stripe`
//! and `mpp/charge/nearintents`, through [`crate::pairing()`].
//!
//! Everything here is pure and synchronous: no I/O, and no panic on any seller input.
//!
//! ```
//! # #[cfg(feature = "mpp")] {
//! let list = terms::mpp::decode_challenges(&[
//!     r#"Payment id="a", realm="api.example.com", method="card", intent="charge", request="e30""#,
//! ])
//! .unwrap();
//! // No challenge carries a legal context.
//! assert_eq!(terms::mpp::read(&list).unwrap_err().code(), "mpp/no-legal-context");
//! # }
//! ```

// The pieces the EVM pairings call (the EVM and `usdc` filters, `Piece::evm`, `OneAnswer`, the credential writer,
// `did:pkh`, the attribution check) land with them (issue 11, part 2); card, Stripe and NEAR Intents call the rest.
#![allow(dead_code, reason = "the MPP EVM pairings that call these land after the core")]

pub(crate) mod card;
pub(crate) mod challenge;
pub(crate) mod credential;
#[cfg(feature = "evm")]
pub(crate) mod evm;
mod header;
mod legal;
#[cfg(feature = "lightning")]
pub(crate) mod lightning;
pub(crate) mod memo;
pub(crate) mod methods;
pub(crate) mod nearintents;
pub(crate) mod network;
pub(crate) mod pieces;
mod receipt;
#[cfg(any(feature = "evm", feature = "solana", feature = "xrpl"))]
pub(crate) mod session_within;
#[cfg(feature = "solana")]
pub(crate) mod solana;
#[cfg(feature = "stellar")]
pub(crate) mod stellar;
pub(crate) mod stripe;
#[cfg(feature = "tempo")]
pub(crate) mod tempo;
pub(crate) mod values;
#[cfg(feature = "xrpl")]
pub(crate) mod xrpl;

#[cfg(test)]
mod tests;

pub use challenge::{challenge_h, challenge_id, content_digest};
pub use credential::{CredentialError, MAX_CREDENTIAL_BYTES, decode_credential};
pub use header::{ChallengeError, MAX_CHALLENGES, MAX_FIELD_CHARS, decode_challenges};
pub use legal::read;
pub use memo::{attribution_memo, challenge_hash};
pub use network::network;
pub use receipt::{MAX_TOKEN_BYTES, Receipt, ReceiptError, read_receipt};
