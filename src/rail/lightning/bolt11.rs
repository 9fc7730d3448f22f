//! BOLT11 invoices as the reference's `_bolt11.py` reads them: the Bech32 checksum (BIP 173) over the whole invoice,
//! the human-readable prefix's currency and amount (an integer of any length), and the tagged fields, with BOLT11's
//! length limit relaxed to 8 KiB. The signature is not verified, and the payee is not recovered from it: the buyer's
//! node pays the invoice and checks it, and H is read from the fields the seller's node signed.
//!
//! The checksum engine and the charset are the `bech32` crate's; the crate's own decoders stop at Bech32's 90 (and
//! 1023) characters, so the reader feeds its engine the invoice itself. Pure and synchronous; no panic on any input.

use bech32::{Bech32, Checksum, Fe32};

use crate::hash::AtrHash;
use crate::json::js_length;
use crate::refusal::{Reason, Refusal};

/// The longest invoice read, in UTF-16 code units.
pub const MAX_INVOICE: usize = 8192;
/// The most tagged fields an invoice may carry.
const MAX_FIELDS: usize = 64;
/// The signature's length in 5-bit words (65 bytes).
const SIGNATURE_WORDS: usize = 104;
/// The timestamp's length in 5-bit words.
const TIMESTAMP_WORDS: usize = 7;
/// The checksum's length in 5-bit words.
const CHECKSUM_WORDS: usize = 6;
/// The length of a `p`, `h` or `s` field in 5-bit words (32 bytes).
const HASH_WORDS: usize = 52;
/// The longest `x` (expiry) field, in 5-bit words.
const MAX_EXPIRY_WORDS: usize = 10;
/// The expiry of an invoice without an `x` field, in seconds.
const DEFAULT_EXPIRY: u64 = 3600;

/// A refusal in the `ln` namespace.
pub(crate) const fn ln(reason: Reason) -> Refusal {
    Refusal::new("ln", reason)
}

/// The currency of an invoice's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Currency {
    /// Bitcoin mainnet, `bc`.
    Bc,
    /// Bitcoin testnet, `tb`.
    Tb,
    /// Bitcoin signet, `tbs`.
    Tbs,
    /// Bitcoin regtest, `bcrt`.
    Bcrt,
}

impl Currency {
    /// The prefixes, longest first where one begins another, as the reference tries them.
    const ALL: [(&'static str, Self); 4] =
        [("bcrt", Self::Bcrt), ("tbs", Self::Tbs), ("tb", Self::Tb), ("bc", Self::Bc)];

    /// The currency as the prefix writes it, e.g. `bc`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Bc => "bc",
            Self::Tb => "tb",
            Self::Tbs => "tbs",
            Self::Bcrt => "bcrt",
        }
    }
}

/// A tagged field the pairings read, by its letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// `p`, the payment hash.
    P,
    /// `s`, the payment secret.
    S,
    /// `h`, the description hash.
    H,
    /// `m`, the payment metadata.
    M,
    /// `x`, the expiry.
    X,
    /// `d`, the description.
    D,
}

impl Field {
    /// The field's type: the Bech32 value of its letter.
    pub const fn word(self) -> u8 {
        match self {
            Self::P => 1,
            Self::S => 16,
            Self::H => 23,
            Self::M => 27,
            Self::X => 6,
            Self::D => 13,
        }
    }
}

/// An invoice, read. Only what the pairings read is kept; the signature is not verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bolt11 {
    /// The prefix's currency.
    pub currency: Currency,
    /// The prefix's amount in millisatoshi, as decimal digits without a leading zero; `None` without an amount.
    pub amount_msat: Option<String>,
    /// The timestamp, Unix seconds.
    pub timestamp: u64,
    /// The expiry in seconds after the timestamp (`x`, else 3600).
    pub expiry: u64,
    /// The payment hash (`p`).
    pub payment_hash: [u8; 32],
    /// The first `h` field's bytes.
    pub description_hash: Option<Vec<u8>>,
    /// The first `d` field's text.
    pub description: Option<String>,
    /// The first `m` field's bytes.
    pub metadata: Option<Vec<u8>>,
    /// Every tagged field's type, in invoice order.
    pub tags: Vec<u8>,
}

impl Bolt11 {
    /// How many times the invoice carries the field.
    pub fn count(&self, field: Field) -> usize {
        self.tags.iter().filter(|t| **t == field.word()).count()
    }
}

/// Reads an invoice of at most 8 KiB: `ln/invoice-too-large` past 8192 UTF-16 code units or 64 tagged fields, and
/// `ln/invoice-malformed` for mixed case, a separator before the fourth character, a character outside Bech32's
/// charset, a bad checksum, too few words for the timestamp and signature, a prefix that is not `ln`, a currency and
/// an amount, a field past the end, a `p`, `h` or `s` field not 32 bytes long, no `p` or two, an `x` longer than 10
/// words, or a `d` that is not UTF-8.
pub fn decode(invoice: &str) -> Result<Bolt11, Refusal> {
    let malformed = || ln(Reason::InvoiceMalformed);
    if js_length(invoice) > MAX_INVOICE {
        return Err(ln(Reason::InvoiceTooLarge));
    }
    // Every character the prefix and the data take is ASCII: anything else is malformed, however it is cased.
    if !invoice.is_ascii() {
        return Err(malformed());
    }
    let lower = invoice.to_ascii_lowercase();
    if lower != invoice && invoice.to_ascii_uppercase() != invoice {
        return Err(malformed());
    }
    let sep = lower.rfind('1').filter(|s| *s >= 3).ok_or_else(malformed)?;
    let (hrp, rest) = lower.split_at(sep);
    let data_part = rest.get(1..).unwrap_or_default();
    let words: Vec<u8> = data_part
        .chars()
        .map(|c| Fe32::from_char(c).map(Fe32::to_u8))
        .collect::<Result<_, _>>()
        .map_err(|_| malformed())?;
    if words.len() < CHECKSUM_WORDS || !checksum_holds(hrp, &words) {
        return Err(malformed());
    }
    let data = words.get(..words.len() - CHECKSUM_WORDS).unwrap_or_default();
    if data.len() < TIMESTAMP_WORDS + SIGNATURE_WORDS {
        return Err(malformed());
    }
    let (currency, amount_msat) = currency_and_amount(hrp).ok_or_else(malformed)?;
    let body = data.get(..data.len() - SIGNATURE_WORDS).unwrap_or_default();
    let timestamp = uint(body.get(..TIMESTAMP_WORDS).unwrap_or_default());
    let fields = tagged_fields(body)?;
    let first = |field: Field| fields.iter().find(|(t, _)| *t == field.word()).map(|(_, w)| *w);
    let tags: Vec<u8> = fields.iter().map(|(t, _)| *t).collect();
    let fixed = [Field::P, Field::H, Field::S];
    if fields.iter().any(|(t, w)| fixed.iter().any(|f| f.word() == *t) && w.len() != HASH_WORDS) {
        return Err(malformed());
    }
    let p = first(Field::P).filter(|_| tags.iter().filter(|t| **t == Field::P.word()).count() == 1);
    let payment_hash: [u8; 32] = p.map(to_bytes).and_then(|b| b.try_into().ok()).ok_or_else(malformed)?;
    let x = first(Field::X);
    if x.is_some_and(|x| x.len() > MAX_EXPIRY_WORDS) {
        return Err(malformed());
    }
    let description = match first(Field::D) {
        Some(d) => Some(String::from_utf8(to_bytes(d)).map_err(|_| malformed())?),
        None => None,
    };
    Ok(Bolt11 {
        currency,
        amount_msat,
        timestamp,
        expiry: x.map_or(DEFAULT_EXPIRY, uint),
        payment_hash,
        description_hash: first(Field::H).map(to_bytes),
        description,
        metadata: first(Field::M).map(to_bytes),
        tags,
    })
}

/// The one 32-byte `h` or `m` field of an invoice, as the hash it carries: none is `ln/no-description-hash` (for
/// `h`) or `ln/no-metadata` (for `m`), two or more `ln/field-repeated`, another length `ln/field-length`.
pub fn invoice_h(b: &Bolt11, field: Field) -> Result<AtrHash, Refusal> {
    let data = match (field, b.count(field)) {
        (Field::H, 0) => return Err(ln(Reason::NoDescriptionHash)),
        (_, 0) => return Err(ln(Reason::NoMetadata)),
        (_, 1) => {
            if field == Field::H {
                b.description_hash.as_deref()
            } else {
                b.metadata.as_deref()
            }
        }
        _ => return Err(ln(Reason::FieldRepeated)),
    };
    let bytes: [u8; 32] = data.and_then(|d| d.try_into().ok()).ok_or(ln(Reason::FieldLength))?;
    Ok(AtrHash::from_bytes(bytes))
}

/// Whether the Bech32 checksum holds over the prefix and the words: BIP 173's expansion of the prefix (each
/// character's high bits, a zero, its low bits) and every word, through the `bech32` crate's engine.
fn checksum_holds(hrp: &str, words: &[u8]) -> bool {
    let mut engine = bech32::primitives::checksum::Engine::<Bech32>::new();
    let mut input = |v: u8| match Fe32::try_from(v) {
        Ok(fe) => {
            engine.input_fe(fe);
            true
        }
        Err(_) => false,
    };
    // The prefix is ASCII (checked first), so each high part is below 4 and each low part below 32.
    let expanded = hrp.bytes().map(|c| c >> 5).chain([0]).chain(hrp.bytes().map(|c| c & 31));
    if !expanded.chain(words.iter().copied()).all(&mut input) {
        return false;
    }
    *engine.residue() == Bech32::TARGET_RESIDUE
}

/// The currency and the amount in millisatoshi of a prefix `ln` + currency + [amount], the amount digits and an
/// optional multiplier `m`, `u`, `n` or `p` (a `p` amount must end in 0: a tenth of a millisatoshi is refused). A
/// currency whose amount does not read lets a shorter currency try, as the reference does.
fn currency_and_amount(hrp: &str) -> Option<(Currency, Option<String>)> {
    let rest = hrp.strip_prefix("ln")?;
    for (prefix, currency) in Currency::ALL {
        let Some(amount) = rest.strip_prefix(prefix) else { continue };
        if amount.is_empty() {
            return Some((currency, None));
        }
        let (digits, unit) = match amount.as_bytes().last() {
            Some(b'm' | b'u' | b'n' | b'p') => amount.split_at(amount.len() - 1),
            _ => (amount, ""),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let zeros = match unit {
            "" => 11,
            "m" => 8,
            "u" => 5,
            "n" => 2,
            _ => {
                // Pico: a tenth of a millisatoshi per unit, so the digits must end in 0.
                let tenths = digits.strip_suffix('0')?;
                return Some((currency, Some(normal(tenths, 0))));
            }
        };
        return Some((currency, Some(normal(digits, zeros))));
    }
    None
}

/// Decimal digits times 10^zeros, without leading zeros ("0" for zero).
fn normal(digits: &str, zeros: usize) -> String {
    let trimmed = digits.trim_start_matches('0');
    if trimmed.is_empty() { "0".to_owned() } else { format!("{trimmed}{}", "0".repeat(zeros)) }
}

/// The tagged fields of the body past the timestamp, each its type and its words: a field past the end is
/// `ln/invoice-malformed`, a 65th field `ln/invoice-too-large`.
fn tagged_fields(body: &[u8]) -> Result<Vec<(u8, &[u8])>, Refusal> {
    let malformed = || ln(Reason::InvoiceMalformed);
    let mut fields = Vec::new();
    let mut rest = body.get(TIMESTAMP_WORDS..).unwrap_or_default();
    while let Some((&field_type, after)) = rest.split_first() {
        let [hi, lo, after @ ..] = after else { return Err(malformed()) };
        let length = usize::from(*hi) * 32 + usize::from(*lo);
        let (value, next) = after.split_at_checked(length).ok_or_else(malformed)?;
        if fields.len() == MAX_FIELDS {
            return Err(ln(Reason::InvoiceTooLarge));
        }
        fields.push((field_type, value));
        rest = next;
    }
    Ok(fields)
}

/// 5-bit words as a big-endian integer (at most 10 words reach here: 50 bits).
fn uint(words: &[u8]) -> u64 {
    words.iter().fold(0u64, |v, w| v.wrapping_mul(32).wrapping_add(u64::from(*w)))
}

/// 5-bit words as bytes; trailing bits short of a byte are dropped.
fn to_bytes(words: &[u8]) -> Vec<u8> {
    let size = words.len() * 5 / 8;
    let mut out = Vec::with_capacity(size);
    let (mut acc, mut bits) = (0u32, 0u32);
    for w in words {
        acc = ((acc << 5) | u32::from(*w)) & 0xFFF;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            if out.len() < size {
                out.push(((acc >> bits) & 0xFF) as u8);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_the_reference_reads_them() {
        let read = |hrp: &str| currency_and_amount(hrp).map(|(c, a)| (c.as_str(), a));
        assert_eq!(read("lnbc"), Some(("bc", None)));
        assert_eq!(read("lnbc250n"), Some(("bc", Some("25000".to_owned()))));
        assert_eq!(read("lnbc20m"), Some(("bc", Some("2000000000".to_owned()))));
        assert_eq!(read("lnbc1"), Some(("bc", Some("100000000000".to_owned()))));
        assert_eq!(read("lnbc10p"), Some(("bc", Some("1".to_owned()))));
        assert_eq!(read("lnbc11p"), None);
        assert_eq!(read("lnbc0n"), Some(("bc", Some("0".to_owned()))));
        assert_eq!(read("lntbs5u"), Some(("tbs", Some("500000".to_owned()))));
        assert_eq!(read("lnbcrt"), Some(("bcrt", None)));
        assert_eq!(read("lnbcx"), None);
        assert_eq!(read("lnxy"), None);
        assert_eq!(read("bc1"), None);
    }

    #[test]
    fn words_become_bytes_with_the_spare_bits_dropped() {
        assert_eq!(to_bytes(&[31, 31]), vec![0xFF]);
        assert_eq!(to_bytes(&[0; 52]).len(), 32);
        assert_eq!(uint(&[1, 0]), 32);
    }
}
