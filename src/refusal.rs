//! Refusals: a pairing's own reason, `<namespace>/<reason>`, that the gate turns into a decline.

use std::borrow::Cow;
use std::fmt;

/// A pairing's refusal, e.g. `x402/no-payable-option`. It is its own type, never a JSON shape, so a seller or
/// signer value that looks like `{"refused": true, ...}` can never be mistaken for one.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Refusal(Cow<'static, str>);

impl Refusal {
    /// A refusal with a fixed code.
    pub const fn fixed(code: &'static str) -> Self {
        Self(Cow::Borrowed(code))
    }

    /// A refusal with a code built at run time, e.g. `format!("{ns}/input-missing")`.
    pub fn new(code: impl Into<String>) -> Self {
        Self(Cow::Owned(code.into()))
    }

    /// The code.
    pub fn code(&self) -> &str {
        &self.0
    }

    /// Whether the code says the pairing has nothing for the buyer to sign (`…/no-signed-place` or
    /// `…/nothing-to-sign`).
    pub fn is_nothing_to_sign(&self) -> bool {
        nothing_to_sign(&self.0)
    }
}

/// Whether a code or detail ends in `/no-signed-place` or `/nothing-to-sign`.
pub(crate) fn nothing_to_sign(code: &str) -> bool {
    code.ends_with("/no-signed-place") || code.ends_with("/nothing-to-sign")
}

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Refusal({})", self.0)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
