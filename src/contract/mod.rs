//! The signed agent contract (feature `contract`): the six signed JSON documents a seller of the contract serves
//! about a purchase (offer card, quote, mandate presentation, payment challenge, receipt, attestation), read as plain
//! data, their Ed25519 signatures checked against the signer's published keys, and the checks a buyer runs alone
//! before and after it buys.
//!
//! The contract leaves the signed bytes open; this crate fixes them: a document's signature is Ed25519 over the
//! RFC 8785 (JCS) form of the document without its `signature` member, written `ed25519:` and the unpadded
//! base64url of the 64 signature bytes, by the key its `kid` names in the signer's key list.

mod check;
mod error;
mod fetch;
mod read;
mod sign;
mod standing;
mod types;

/// The most links a mandate chain may have: a person, and at most seven agents granting in turn. A longer chain is
/// refused ([`ContractError::ChainTooLong`]) before any signature is checked, so a buyer never verifies an unbounded
/// list of signatures.
pub const MAX_CHAIN: usize = 8;

/// How old a mandate presentation may be, in seconds: its `present` at most five minutes before now.
pub const MAX_PRESENTATION_AGE: u64 = 300;

/// How far a presentation's `present` may lie after now, in seconds: the two clocks (the agent's and the buyer's)
/// are allowed to disagree by this much, no more, so a presentation cannot be made now to be used later.
pub const MAX_CLOCK_SKEW: u64 = 30;

/// The most upstream receipts [`follow_upstream`] follows in all, whatever the depth: a receipt naming many
/// upstream receipts at each level cannot make the buyer fetch without end.
pub const MAX_UPSTREAM: usize = 64;

pub use check::{
    check_chain, check_fresh, check_mandate, check_output, check_presentation, check_purchase, check_quote,
    check_terms, mandate_digest,
};
pub use error::ContractError;
pub use fetch::{check_status, fetch_document, fetch_keys, follow_upstream};
pub use read::{Document, MAX_DOCUMENT_BYTES, Signed, read, read_keys};
pub use sign::{parse_signature, public_key_of, sign_object, signing_bytes};
pub use standing::{Uncounted, standing};

pub use types::{
    Amount, Attestation, Challenge, CheckoutOffer, Extra, KeyList, Link, Mark, Offer, OfferCard, PayOffer,
    Presentation, Proof, PublishedKey, Quote, Rate, Receipt, Seller, Terms, VerbResult, Window,
};
