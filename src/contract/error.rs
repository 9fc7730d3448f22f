//! Why a contract document, or a check of one, is refused: one enum, each value with its `contract/<reason>` code.
//! These codes are this crate's own (the contract names none); they are listed in the README beside the reference's.

use std::fmt;

/// A refused document or a failed check. [`code`](Self::code) is the stable `contract/<reason>` text; the
/// `Display` form adds what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractError {
    /// Not JSON, nested too deep, or not an object.
    #[error("the document is not a JSON object: {0}")]
    NotJson(String),
    /// A member appears twice in one object: which of the two was signed cannot be told.
    #[error("the member `{0}` appears twice in one object")]
    DuplicateMember(String),
    /// The `contract` member is missing or not a version this crate reads (`1` or `1.<minor>`).
    #[error("contract version {0:?} is not one this crate reads (1.x)")]
    Version(String),
    /// A member the contract requires is missing or of the wrong type.
    #[error("the {document} is malformed: {detail}")]
    Malformed {
        /// Which document.
        document: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The `signature` member is not `ed25519:` and the unpadded base64url of 64 bytes.
    #[error("the signature is not `ed25519:` and the base64url of 64 bytes")]
    SignatureMalformed,
    /// The `kid` names no key of the signer's list.
    #[error("the key `{0}` is not in the signer's key list")]
    KeyUnknown(String),
    /// The key was not valid when the document says it was signed: before its `from`, or at or after its `until`.
    #[error("the key `{kid}` was not valid at {at}")]
    KeyNotValid {
        /// The key.
        kid: String,
        /// The signing time the document gives.
        at: String,
    },
    /// The signature does not verify over the document's bytes.
    #[error("the signature does not verify")]
    SignatureInvalid,
    /// A time member is not an RFC 3339 date-time.
    #[error("`{0}` is not an RFC 3339 date-time")]
    Time(String),
    /// The document names a time after which it no longer holds, and that time has passed.
    #[error("the {0} has expired")]
    Expired(&'static str),
    /// A mandate presentation made more than five minutes before now, or more than the allowed clock skew after it.
    #[error("the presentation was made at {0}: more than five minutes ago, or later than now")]
    Stale(String),
    /// A digest the document names does not match what the buyer holds.
    #[error("the {member} digest does not match: the document names {named}, the buyer holds {held}")]
    DigestMismatch {
        /// Which digest (`output`, `terms`, `mandate`).
        member: &'static str,
        /// What the document names.
        named: String,
        /// What the buyer computed.
        held: String,
    },
    /// A mandate chain whose links do not follow from one another, or a link wider than the one above it.
    #[error("mandate link {index} {detail}")]
    ChainBroken {
        /// The link's place in the chain, from 0.
        index: usize,
        /// What is wrong.
        detail: String,
    },
    /// A chain longer than [`MAX_CHAIN`](super::MAX_CHAIN) links.
    #[error("the mandate chain has {0} links, more than {max}", max = super::MAX_CHAIN)]
    ChainTooLong(usize),
    /// The mandate's status address answered `revoked`.
    #[error("the mandate is revoked")]
    Revoked,
    /// A fetch of a document or a status failed, or was answered with a redirect, a status other than 200, a
    /// content coding, or a body too large; or a status answered something other than `active` or `revoked`.
    #[error("{url}: {detail}")]
    Unfetchable {
        /// The address.
        url: String,
        /// What happened.
        detail: String,
    },
    /// Upstream receipts that lead back to one already followed.
    #[error("upstream receipt {0} was already followed: a loop")]
    UpstreamLoop(String),
    /// Upstream receipts deeper than the bound the caller set.
    #[error("upstream receipts go deeper than {0}")]
    UpstreamTooDeep(usize),
    /// More upstream receipts in all than [`MAX_UPSTREAM`](super::MAX_UPSTREAM), however shallow.
    #[error("more than {0} upstream receipts")]
    UpstreamTooMany(usize),
    /// A purchase the mandate's last link does not allow: another seller, another Verb, another currency, or more
    /// than it allows for one task or one month. The chain itself may be sound.
    #[error("the mandate does not allow this purchase: {0}")]
    OutsideMandate(String),
}

impl ContractError {
    /// The stable `contract/<reason>` code.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::NotJson(_) => "contract/not-json",
            Self::DuplicateMember(_) => "contract/duplicate-member",
            Self::Version(_) => "contract/version-unsupported",
            Self::Malformed { .. } => "contract/malformed",
            Self::SignatureMalformed => "contract/signature-malformed",
            Self::KeyUnknown(_) => "contract/key-unknown",
            Self::KeyNotValid { .. } => "contract/key-not-valid",
            Self::SignatureInvalid => "contract/signature-invalid",
            Self::Time(_) => "contract/time-malformed",
            Self::Expired(_) => "contract/expired",
            Self::Stale(_) => "contract/presentation-stale",
            Self::DigestMismatch { .. } => "contract/digest-mismatch",
            Self::ChainBroken { .. } => "contract/chain-broken",
            Self::ChainTooLong(_) => "contract/chain-too-long",
            Self::Revoked => "contract/revoked",
            Self::Unfetchable { .. } => "contract/unfetchable",
            Self::UpstreamLoop(_) => "contract/upstream-loop",
            Self::UpstreamTooDeep(_) => "contract/upstream-too-deep",
            Self::UpstreamTooMany(_) => "contract/upstream-too-many",
            Self::OutsideMandate(_) => "contract/outside-mandate",
        }
    }

    pub(crate) fn malformed(document: &'static str, detail: impl fmt::Display) -> Self {
        Self::Malformed { document, detail: detail.to_string() }
    }
}
