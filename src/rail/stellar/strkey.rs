//! Strkeys (SEP-23) on `stellar-strkey`: G accounts, M muxed accounts and C contracts, each read only in its
//! canonical form (the length of its kind, the checksum, no bits set past the payload), and the muxed id that carries
//! H's first 8 bytes.

use stellar_strkey::Contract;
use stellar_strkey::ed25519::{MuxedAccount, PublicKey};

use crate::hash::AtrHash;

/// The characters of a G or C strkey.
const KEY_LENGTH: usize = 56;
/// The characters of an M strkey.
const MUXED_LENGTH: usize = 69;

/// A strkey the Stellar pairings read: an account, a muxed account, or a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strkey {
    /// `G…`: an Ed25519 account.
    Account([u8; 32]),
    /// `M…`: an Ed25519 account and a 64-bit id.
    Muxed {
        /// The account's key.
        key: [u8; 32],
        /// The id.
        id: u64,
    },
    /// `C…`: a contract.
    Contract([u8; 32]),
}

impl Strkey {
    /// The strkey a text is, in its canonical form only; `None` for anything else (another kind, a bad checksum, a
    /// length not the kind's, lower case, padding, bits set past the payload).
    pub fn parse(text: &str) -> Option<Self> {
        let canonical = |s: &str| s == text;
        match (text.as_bytes().first(), text.len()) {
            (Some(b'G'), KEY_LENGTH) => {
                let k = PublicKey::from_string(text).ok()?;
                canonical(k.to_string().as_str()).then_some(Self::Account(k.0))
            }
            (Some(b'C'), KEY_LENGTH) => {
                let c = Contract::from_string(text).ok()?;
                canonical(c.to_string().as_str()).then_some(Self::Contract(c.0))
            }
            (Some(b'M'), MUXED_LENGTH) => {
                let m = MuxedAccount::from_string(text).ok()?;
                canonical(m.to_string().as_str()).then_some(Self::Muxed { key: m.ed25519, id: m.id })
            }
            _ => None,
        }
    }

    /// The strkey's text.
    pub fn to_text(&self) -> String {
        match *self {
            Self::Account(key) => PublicKey(key).to_string().as_str().to_owned(),
            Self::Contract(key) => Contract(key).to_string().as_str().to_owned(),
            Self::Muxed { key, id } => MuxedAccount { ed25519: key, id }.to_string().as_str().to_owned(),
        }
    }

    /// The G account a G or M strkey names (an M's id left out); `None` for a contract.
    pub fn base(&self) -> Option<Self> {
        match *self {
            Self::Account(key) | Self::Muxed { key, .. } => Some(Self::Account(key)),
            Self::Contract(_) => None,
        }
    }

    /// An M strkey's id; `None` for any other kind.
    pub const fn muxed_id(&self) -> Option<u64> {
        match *self {
            Self::Muxed { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// The G account a text is, canonical, else `None`.
pub fn account(text: &str) -> Option<[u8; 32]> {
    match Strkey::parse(text)? {
        Strkey::Account(key) => Some(key),
        _ => None,
    }
}

/// The C contract a text is, canonical, else `None`.
pub fn contract(text: &str) -> Option<[u8; 32]> {
    match Strkey::parse(text)? {
        Strkey::Contract(key) => Some(key),
        _ => None,
    }
}

/// The M account a text is, canonical: its key and id; else `None`.
pub fn muxed(text: &str) -> Option<([u8; 32], u64)> {
    match Strkey::parse(text)? {
        Strkey::Muxed { key, id } => Some((key, id)),
        _ => None,
    }
}

/// Whether a text is a G account or its muxed M form, as a payee is.
pub fn is_payee(text: &str) -> bool {
    matches!(Strkey::parse(text), Some(Strkey::Account(_) | Strkey::Muxed { .. }))
}

/// The muxed id that carries H: its first 8 bytes, big-endian.
pub fn muxed_id(h: &AtrHash) -> u64 {
    let b = h.as_bytes();
    u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}
