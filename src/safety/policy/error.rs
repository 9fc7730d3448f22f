//! Why a policy does not load: the file, its syntax, or a member that is not valid.

use std::fmt;
use std::path::PathBuf;

/// A policy that does not load. Loading never panics: every bad input is one of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file could not be read.
    #[error("policy file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file's extension is neither `.toml` nor `.json`.
    #[error("policy file {}: the extension must be .toml or .json", path.display())]
    Extension {
        /// The file.
        path: PathBuf,
    },
    /// The text is not a policy in its format: malformed, an unknown member, a missing one, or a value of the wrong
    /// type. The message is the parser's, with the member and its place.
    #[error("policy {format}: {message}")]
    Syntax {
        /// The format read.
        format: Format,
        /// What the parser says.
        message: String,
    },
    /// A member reads but is not valid.
    #[error("policy member {member}: {problem}")]
    Invalid {
        /// The member, as a path into the policy (`assets[0].cap`, `budgets[1].asset`).
        member: String,
        /// What is wrong with it.
        problem: Problem,
    },
}

impl PolicyError {
    pub(super) fn invalid(member: impl Into<String>, problem: Problem) -> Self {
        Self::Invalid { member: member.into(), problem }
    }
}

/// The format a policy is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// TOML.
    Toml,
    /// JSON.
    Json,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Toml => "TOML",
            Self::Json => "JSON",
        })
    }
}

/// What is wrong with a member of a policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// An amount that is not a decimal string of atomic units below 2^256 (negative, fractional, an exponent, a
    /// leading zero, past 2^256 - 1, not digits).
    #[error(
        "{0:?} is not an amount: write a quoted decimal string of atomic units (digits only, no sign, fraction, \
         exponent or leading zero, below 2^256)"
    )]
    NotAnAmount(String),
    /// Decimals above 77 (10^78 is past 2^256).
    #[error("decimals {0} is above 77")]
    Decimals(u8),
    /// A text that must not be empty (or blank) is.
    #[error("is empty")]
    Empty,
    /// A text with whitespace or a control character.
    #[error("{0:?} holds whitespace or a control character")]
    Whitespace(String),
    /// Not an absolute `http`/`https` URL prefix (with a host, and no user, query or fragment) nor `"*"`.
    #[error("{value:?} is not a resource prefix ({why}): write an absolute http(s) URL prefix, or \"*\"")]
    NotAResource {
        /// As written.
        value: String,
        /// What is wrong.
        why: &'static str,
    },
    /// `"*"` beside other resources.
    #[error("\"*\" allows every resource and stands alone")]
    StarNotAlone,
    /// Not a CAIP-2 network (`namespace:reference`).
    #[error("{0:?} is not a CAIP-2 network (namespace:reference, e.g. eip155:8453)")]
    NotANetwork(String),
    /// An asset on a network the policy does not list.
    #[error("network {0:?} is not in networks")]
    NetworkNotListed(String),
    /// A malformed `0x` address (`0x` and no hex digits, or other characters).
    #[error("{0:?} starts 0x but is not hex")]
    NotHex(String),
    /// The zero address, which is never a payee.
    #[error("{0:?} is the zero address")]
    ZeroAddress(String),
    /// The same asset as another entry (its index in `assets`).
    #[error("the same asset as assets[{0}]")]
    DuplicateAsset(usize),
    /// The same budget name as another entry (its index in `budgets`).
    #[error("the same name as budgets[{0}]")]
    DuplicateBudget(usize),
    /// The same asset, window and `per` as another budget (its name).
    #[error("the same asset, window and per as budget {0:?}: two budgets overlap")]
    OverlappingWindows(String),
    /// A second approval threshold for one asset (the other's key in `approval_above`).
    #[error("the same asset as approval_above.{0:?}")]
    DuplicateThreshold(String),
    /// An asset reference (`<network>/<address>`) naming no listed asset.
    #[error("{0:?} names no asset in assets (write <network>/<address> of a listed asset)")]
    UnlistedAsset(String),
    /// A success rate that is not a decimal from 0 to 1 with at most six places.
    #[error(
        "{0:?} is not a success rate: write a quoted decimal from \"0\" to \"1\" with at most six places, e.g. \"0.99\""
    )]
    NotARate(String),
    /// A probation cap above the asset's cap: probation only lowers it.
    #[error("the probation cap {probation} is above the asset's cap {cap}: probation only lowers a cap")]
    ProbationAboveCap {
        /// The probation cap, as written.
        probation: String,
        /// The asset's cap.
        cap: String,
    },
    /// A second probation cap for one asset (the other's key in `probation.caps`).
    #[error("the same asset as probation.caps.{0:?}")]
    DuplicateProbationCap(String),
    /// With `unproven = "probation"`, a listed asset (its `<network>/<address>`) with no probation cap.
    #[error("unproven = \"probation\" and the asset {0:?} has no probation cap (write one; \"0\" pays nothing)")]
    ProbationCapMissing(String),
    /// Probation caps in a policy whose `unproven` is not `"probation"` (what it is): they would never apply.
    #[error("probation caps apply only with unproven = \"probation\", and the policy says unproven = \"{0}\"")]
    ProbationUnused(&'static str),
    /// Proof minimums in a policy whose `unproven` is `"allow"`: no rule would read them.
    #[error("proof minimums are read only with unproven = \"probation\" or \"refuse\", and the policy says \"allow\"")]
    ProofUnused,
}
