//! The signed agent contract (feature `contract`): the six signed JSON documents a seller of the contract serves
//! about a purchase (offer card, quote, mandate presentation, payment challenge, receipt, attestation), read as plain
//! data, their Ed25519 signatures checked against the signer's published keys, and the checks a buyer runs alone
//! before and after it buys.
//!
//! The contract leaves the signed bytes open; this crate fixes them: a document's signature is Ed25519 over the
//! RFC 8785 (JCS) form of the document without its `signature` member, written `ed25519:` and the unpadded
//! base64url of the 64 signature bytes, by the key its `kid` names in the signer's key list.

mod error;
mod read;
mod sign;
mod standing;
mod types;

pub use error::ContractError;
pub use read::{Document, MAX_DOCUMENT_BYTES, Signed, read, read_keys};
pub use sign::{parse_signature, public_key_of, sign_object, signing_bytes};
pub use standing::{Uncounted, standing};

pub use types::{
    Amount, Attestation, Challenge, CheckoutOffer, Extra, KeyList, Link, Mark, Offer, OfferCard, PayOffer,
    Presentation, Proof, PublishedKey, Quote, Rate, Receipt, Seller, Terms, VerbResult, Window,
};
