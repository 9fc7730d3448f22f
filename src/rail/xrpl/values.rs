//! The fixed-form values of the XRPL binary codec, read and held to the reference codec's rules: amounts (XRP drops,
//! issued and MPT), path sets, issues, bridges, numbers and the enumerations; and the writing of the amounts a build
//! signs.

use super::decode::{DecodeError, Reader};
use super::fields::{
    self, AMOUNT, BRIDGE, CURRENCY, Code, HASH128, HASH160, HASH192, HASH256, INT32, ISSUE, NUMBER, PATHSET, UINT8,
    UINT16, UINT32, UINT64,
};

const MALFORMED: DecodeError = DecodeError::Malformed;
/// The most drops an XRP amount holds.
pub const MAX_DROPS: u64 = 100_000_000_000_000_000;
/// AccountID 1, rippled's `noAccount()`.
const NO_ACCOUNT: [u8; 20] = {
    let mut a = [0; 20];
    a[19] = 1;
    a
};
/// `FeeAmountDelta`, an Amount read as a signed XRP amount.
const SIGNED_AMOUNT: Code = (AMOUNT, 34);

/// Reads one fixed-form value of `code`'s type, held to its rules.
pub(super) fn fixed(r: &mut Reader<'_>, code: Code) -> Result<(), DecodeError> {
    let (type_code, nth) = code;
    match type_code {
        UINT8 => {
            let v = r.u8()?;
            if nth == 3 && !fields::is_result(v) {
                return Err(MALFORMED);
            }
        }
        UINT16 => {
            let v = u16::from_be_bytes(array(r)?);
            let ok = match nth {
                2 => fields::transaction_type(v).is_some(),
                1 => fields::is_ledger_entry_type(v),
                _ => true,
            };
            if !ok {
                return Err(MALFORMED);
            }
        }
        UINT32 => {
            let v = u32::from_be_bytes(array(r)?);
            if nth == 52 && !fields::is_permission(v) {
                return Err(MALFORMED);
            }
        }
        UINT64 => drop(r.read(8)?),
        INT32 => drop(r.read(4)?),
        HASH128 => drop(r.read(16)?),
        HASH160 | CURRENCY => drop(r.read(20)?),
        HASH192 => drop(r.read(24)?),
        HASH256 => drop(r.read(32)?),
        NUMBER => number(r.read(12)?)?,
        AMOUNT => amount(r, code == SIGNED_AMOUNT)?,
        PATHSET => pathset(r)?,
        ISSUE => issue(r)?,
        BRIDGE => {
            for _ in 0..2 {
                if r.u8()? != 20 {
                    return Err(MALFORMED);
                }
                r.read(20)?;
                issue(r)?;
            }
        }
        _ => return Err(MALFORMED),
    }
    Ok(())
}

fn array<const N: usize>(r: &mut Reader<'_>) -> Result<[u8; N], DecodeError> {
    r.read(N)?.try_into().map_err(|_| MALFORMED)
}

/// An amount in its canonical form; `signed` is an XRP amount that may be negative and non-zero.
fn amount(r: &mut Reader<'_>, signed: bool) -> Result<(), DecodeError> {
    let first = r.peek()?;
    if first & 0x80 != 0 {
        let data = r.read(48)?;
        let head = u64::from_be_bytes(data.get(..8).and_then(|b| b.try_into().ok()).ok_or(MALFORMED)?);
        let ok = head == 0x8000_0000_0000_0000 || is_issued_normal(head);
        return if !signed && ok { Ok(()) } else { Err(MALFORMED) };
    }
    if first & 0x20 != 0 {
        let data = r.read(33)?;
        let value = u64::from_be_bytes(data.get(1..9).and_then(|b| b.try_into().ok()).ok_or(MALFORMED)?);
        return if !signed && first == 0x60 && value < 1 << 63 { Ok(()) } else { Err(MALFORMED) };
    }
    let raw = u64::from_be_bytes(array(r)?);
    let drops = raw & 0x3FFF_FFFF_FFFF_FFFF;
    let positive = raw & 0x4000_0000_0000_0000 != 0;
    if drops > MAX_DROPS || !(positive || (signed && drops != 0)) {
        return Err(MALFORMED);
    }
    Ok(())
}

/// Whether an issued amount's first 8 bytes hold a mantissa from 10^15 to 10^16 - 1 and an exponent byte from 1 to
/// 177 (exponents -96 to 80).
fn is_issued_normal(head: u64) -> bool {
    let mantissa = head & ((1 << 54) - 1);
    let exponent = (head >> 54) & 0xFF;
    (1_000_000_000_000_000..10_000_000_000_000_000).contains(&mantissa) && (1..=177).contains(&exponent)
}

/// A path set: paths of steps, each step's type byte setting only its account, currency and issuer bits, the first
/// step of the set setting one at least; paths apart by 0xFF and the set ended by 0x00.
fn pathset(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    let mut paths = 0usize;
    let mut ended = false;
    while !r.end() {
        let mut steps = 0usize;
        while !r.end() {
            let kind = r.u8()?;
            if kind & !0x31 != 0 || (kind == 0 && paths == 0 && steps == 0) {
                return Err(MALFORMED);
            }
            for bit in [0x01, 0x10, 0x20] {
                if kind & bit != 0 {
                    r.read(20)?;
                }
            }
            steps += 1;
            if matches!(r.peek()?, 0x00 | 0xFF) {
                break;
            }
        }
        paths += 1;
        if r.u8()? == 0x00 {
            ended = true;
            break;
        }
    }
    if paths > 0 && !ended { Err(MALFORMED) } else { Ok(()) }
}

/// An issue: XRP's 20 zero bytes, or a currency and its issuer, and a 4-byte sequence after an issuer of 1 (an MPT).
fn issue(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    if r.read(20)? == [0; 20] {
        return Ok(());
    }
    if r.read(20)? == NO_ACCOUNT {
        r.read(4)?;
    }
    Ok(())
}

const MIN_MANTISSA: i128 = 1_000_000_000_000_000_000;
const MAX_MANTISSA: i128 = 9_999_999_999_999_999_999;
const MAX_INT64: i128 = i64::MAX as i128;
const MIN_EXPONENT: i64 = -32_768;
const MAX_EXPONENT: i64 = 32_768;
const ZERO_EXPONENT: i32 = i32::MIN;

/// A Number's 12 bytes: the encoding of its own text, as ripple-binary-codec reads and writes it.
fn number(data: &[u8]) -> Result<(), DecodeError> {
    let mantissa = i64::from_be_bytes(data.get(..8).and_then(|b| b.try_into().ok()).ok_or(MALFORMED)?);
    let exponent = i32::from_be_bytes(data.get(8..12).and_then(|b| b.try_into().ok()).ok_or(MALFORMED)?);
    if number_bytes(&number_text(mantissa, exponent))? == data { Ok(()) } else { Err(MALFORMED) }
}

/// A Number's text, as the reference writes it: "0" for the zero encoding; otherwise the mantissa (times 10 when
/// below 10^18) and exponent, as a decimal when the exponent is 0 or from -28 to -8, else as mantissa `e` exponent.
fn number_text(mantissa: i64, exponent: i32) -> String {
    if mantissa == 0 && exponent == ZERO_EXPONENT {
        return "0".into();
    }
    let negative = mantissa < 0;
    let mut m = i128::from(mantissa).abs();
    let mut e = i64::from(exponent);
    if m != 0 && m < MIN_MANTISSA {
        m *= 10;
        e -= 1;
    }
    let sign = if negative { "-" } else { "" };
    if e != 0 && !(-28..=-8).contains(&e) {
        while m != 0 && m % 10 == 0 && e < MAX_EXPONENT {
            m /= 10;
            e += 1;
        }
        return format!("{sign}{m}e{e}");
    }
    let raw = format!("{}{m}{}", "0".repeat(30), "0".repeat(26));
    let offset = usize::try_from(e + 49).unwrap_or(0);
    let (int, frac) = raw.split_at(offset.min(raw.len()));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

/// The 12 bytes a Number's text encodes to, as the reference writes them.
fn number_bytes(text: &str) -> Result<Vec<u8>, DecodeError> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (body, exp) = match rest.split_once('e') {
        Some((b, e)) => (b, e.parse::<i64>().map_err(|_| MALFORMED)?),
        None => (rest, 0),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let mut digits = format!("{}{frac}", int.trim_start_matches('0'));
    let mut exponent = exp - i64::try_from(frac.len()).map_err(|_| MALFORMED)?;
    let trimmed = digits.trim_start_matches('0').to_owned();
    digits = if trimmed.is_empty() { "0".into() } else { trimmed };
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        exponent += 1;
    }
    let mut m: i128 = digits.parse().map_err(|_| MALFORMED)?;
    if m == 0 {
        let mut out = 0i64.to_be_bytes().to_vec();
        out.extend(ZERO_EXPONENT.to_be_bytes());
        return Ok(out);
    }
    while m < MIN_MANTISSA && exponent > MIN_EXPONENT {
        exponent -= 1;
        m *= 10;
    }
    let mut last: Option<i128> = None;
    while m > MAX_MANTISSA {
        if exponent >= MAX_EXPONENT {
            return Err(MALFORMED);
        }
        exponent += 1;
        last = Some(m % 10);
        m /= 10;
    }
    if exponent < MIN_EXPONENT || m < MIN_MANTISSA || exponent > MAX_EXPONENT {
        return Err(MALFORMED);
    }
    if m > MAX_INT64 {
        if exponent >= MAX_EXPONENT {
            return Err(MALFORMED);
        }
        exponent += 1;
        last = Some(m % 10);
        m /= 10;
    }
    if last.is_some_and(|l| l >= 5) {
        m += 1;
        if m > MAX_INT64 {
            if exponent >= MAX_EXPONENT {
                return Err(MALFORMED);
            }
            let l = m % 10;
            exponent += 1;
            m /= 10;
            if l >= 5 {
                m += 1;
            }
        }
    }
    let m = i64::try_from(if negative { -m } else { m }).map_err(|_| MALFORMED)?;
    let mut out = m.to_be_bytes().to_vec();
    out.extend(i32::try_from(exponent).map_err(|_| MALFORMED)?.to_be_bytes());
    Ok(out)
}

/// The 8 bytes of an XRP amount of `drops` (at most [`MAX_DROPS`]).
pub fn xrp_amount(drops: u64) -> Option<[u8; 8]> {
    (drops <= MAX_DROPS).then(|| (drops | 0x4000_0000_0000_0000).to_be_bytes())
}

/// The drops of an XRP amount's 8 bytes, `None` for an issued or MPT amount or a negative one.
pub fn drops_of(amount: &[u8]) -> Option<u64> {
    let raw = u64::from_be_bytes(amount.try_into().ok()?);
    (raw >> 62 == 1 && raw & 0x2000_0000_0000_0000 == 0).then_some(raw & 0x3FFF_FFFF_FFFF_FFFF)
}

/// The 20 bytes of a currency code: a three-character ISO-style code at bytes 12 to 14, or 40 hex digits. "XRP"
/// names no issued currency.
pub fn currency_code(code: &str) -> Option<[u8; 20]> {
    let mut out = [0u8; 20];
    if code.len() == 3
        && code != "XRP"
        && code.bytes().all(|b| b.is_ascii_alphanumeric() || b"?!@#$%^&*(){}[]|".contains(&b))
    {
        out.get_mut(12..15)?.copy_from_slice(code.as_bytes());
        return Some(out);
    }
    if code.len() == 40 {
        let bytes = hex::decode(code).ok()?;
        out.copy_from_slice(&bytes);
        return (out != [0; 20]).then_some(out);
    }
    None
}

/// The first 8 bytes of a positive issued amount whose value is a plain decimal (no sign or exponent) of at most 16
/// significant digits within the exponents -96 to 80.
pub fn issued_value(value: &str) -> Option<[u8; 8]> {
    let (int, frac) = value.split_once('.').unwrap_or((value, ""));
    if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits = format!("{int}{frac}").trim_start_matches('0').to_owned();
    let mut exponent = -i64::try_from(frac.len()).ok()?;
    while digits.ends_with('0') {
        digits.pop();
        exponent += 1;
    }
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut mantissa: u64 = digits.parse().ok()?;
    while mantissa < 1_000_000_000_000_000 {
        mantissa *= 10;
        exponent -= 1;
    }
    if !(-96..=80).contains(&exponent) {
        return None;
    }
    let exponent = u64::try_from(exponent + 97).ok()?;
    Some((0xC000_0000_0000_0000 | exponent << 54 | mantissa).to_be_bytes())
}
