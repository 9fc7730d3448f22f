//! Declines: the gate's one way of saying no. A decline is a value, never a panic or a thrown error.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hash::AtrHash;

/// Why the gate declined. The strings are the reference implementation's, so a caller can program against them
/// across languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DeclineCode {
    /// The gate has no buyer piece for the pairing, or a value names another pairing.
    PairingNotSupported,
    /// The seller's document, or the payment built from it, cannot be read.
    OfferUnreadable,
    /// No option the signer can pay, or the buyer's own inputs are missing or malformed.
    NoPayableOption,
    /// The link is not an https link the gate may fetch.
    LinkNotHttps,
    /// The link did not serve the ATR: another status, a content coding, a transport error or the deadline.
    AtrUnfetchable,
    /// The ATR is larger than [`MAX_ATR_BYTES`](crate::MAX_ATR_BYTES).
    AtrTooLarge,
    /// The bytes served do not hash to the advertised H.
    HashMismatch,
    /// The signer did not sign.
    SignerFailed,
    /// The signed payment does not carry the hash of the compared bytes, or could not be completed.
    SignedNotBound,
    /// The pairing's payment is no public proof of H and the offer names no agreement URL.
    AgreementNotOffered,
    /// The agreement payment is not yet recorded.
    AgreementPending,
    /// The agreement exchange failed.
    AgreementFailed,
    /// Ours, not the reference's: the buyer's spend policy refused the payment (detail `policy/<reason>`). The link
    /// was not fetched, or nothing was signed.
    PolicyRefused,
    /// Ours, not the reference's: the buyer's journal could not record the payment, or its record forbids another
    /// (detail `journal/<reason>`). Nothing unrecorded is ever signed or returned.
    JournalFailed,
}

impl DeclineCode {
    /// Our extensions beside the reference's twelve: a spend policy's refusal and a journal's failure.
    pub const OURS: [Self; 2] = [Self::PolicyRefused, Self::JournalFailed];

    /// All twelve codes of the reference, in its order (our extensions are [`DeclineCode::OURS`]).
    pub const ALL: [Self; 12] = [
        Self::PairingNotSupported,
        Self::OfferUnreadable,
        Self::NoPayableOption,
        Self::LinkNotHttps,
        Self::AtrUnfetchable,
        Self::AtrTooLarge,
        Self::HashMismatch,
        Self::SignerFailed,
        Self::SignedNotBound,
        Self::AgreementNotOffered,
        Self::AgreementPending,
        Self::AgreementFailed,
    ];

    /// The code as the reference writes it, e.g. `hash-mismatch`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PairingNotSupported => "pairing-not-supported",
            Self::OfferUnreadable => "offer-unreadable",
            Self::NoPayableOption => "no-payable-option",
            Self::LinkNotHttps => "link-not-https",
            Self::AtrUnfetchable => "atr-unfetchable",
            Self::AtrTooLarge => "atr-too-large",
            Self::HashMismatch => "hash-mismatch",
            Self::SignerFailed => "signer-failed",
            Self::SignedNotBound => "signed-not-bound",
            Self::AgreementNotOffered => "agreement-not-offered",
            Self::AgreementPending => "agreement-pending",
            Self::AgreementFailed => "agreement-failed",
            Self::PolicyRefused => "policy-refused",
            Self::JournalFailed => "journal-failed",
        }
    }
}

impl fmt::Display for DeclineCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A payment that has left, or may have left, the wallet before the decline: keep it and present it again; never
/// sign a new one in its place.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Moved {
    /// The payment as signed, in the protocol's own JSON form (or the signer's answers, where completion failed).
    pub signed: Value,
    /// The ATR bytes the payment was made for.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// Their hash.
    pub h: AtrHash,
}

impl fmt::Debug for Moved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Moved")
            .field("signed", &self.signed)
            .field("bytes", &format_args!("{} bytes", self.bytes.len()))
            .field("h", &self.h)
            .finish()
    }
}

/// The gate's answer when it will not go on. `detail` is either one of the reference's fixed sentences or a
/// refusal code of the form `<namespace>/<reason>`; program against `code`, log `detail` and `cause`.
///
/// `code` and `detail` are the reference's, character for character. `cause` is ours, a diagnostic beside them (the
/// transport error behind `atr-unfetchable`, the networks offered behind `no-payable-option`): it is never part of
/// the reference's answer, and two declines that differ only in their causes are equal.
#[derive(Debug, Clone, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct Declined {
    /// Why.
    pub code: DeclineCode,
    /// The reference's detail: a fixed sentence or a `<namespace>/<reason>` refusal code.
    pub detail: String,
    /// What already moved, when money moved before the decline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<Box<Moved>>,
    /// Why, in more words than the reference's detail: a diagnostic for logs, never to program against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl PartialEq for Declined {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.detail == other.detail && self.moved == other.moved
    }
}

impl Declined {
    /// A decline with nothing moved.
    pub fn new(code: DeclineCode, detail: impl Into<String>) -> Self {
        Self { code, detail: detail.into(), moved: None, cause: None }
    }

    /// The same decline, with a diagnostic cause beside the reference's detail.
    #[must_use]
    pub fn with_cause(mut self, cause: impl fmt::Display) -> Self {
        self.cause = Some(cause.to_string());
        self
    }

    /// The same decline, carrying what moved.
    #[must_use]
    pub fn with_moved(mut self, moved: Option<Moved>) -> Self {
        self.moved = moved.map(Box::new);
        self
    }
}
