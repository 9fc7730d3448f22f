//! RFC 3339 date-times, read as the reference reads MPP's `expires` and the contract's times: the one reader of
//! times from outside.

/// An RFC 3339 date-time as Unix seconds, the fraction dropped: `YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|±HH:MM)`, `T`
/// and `Z` in either case, every field in range (no second 60). `None` for anything else.
pub(crate) fn unix_of(text: &str) -> Option<i64> {
    instant_of(text).map(|(seconds, _)| seconds)
}

/// [`unix_of`] with the fraction kept: Unix seconds and the nanoseconds of the fraction (a fraction of fewer than 9
/// digits read as if padded with zeros).
pub(crate) fn instant_of(text: &str) -> Option<(i64, u32)> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let at = |i: usize| b.get(i).copied();
    let (y, mo, d) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hh, mm, ss) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if at(4) != Some(b'-') || at(7) != Some(b'-') || !matches!(at(10), Some(b'T' | b't')) {
        return None;
    }
    if at(13) != Some(b':') || at(16) != Some(b':') {
        return None;
    }
    let mut i = 19;
    let mut nanos = 0u32;
    if at(i) == Some(b'.') {
        let rest = b.get(i + 1..).unwrap_or_default();
        let count = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&count) {
            return None;
        }
        let digits = rest.iter().take(count).chain(std::iter::repeat(&b'0')).take(9);
        nanos = digits.fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
        i += 1 + count;
    }
    let offset = match at(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && at(i + 3) == Some(b':') => {
            let (oh, om) = (digits(i + 1, 2)?, digits(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            (if sign == b'-' { -1 } else { 1 }) * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || hh > 23 || mm > 59 || ss > 59 {
        return None;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if d < 1 || d > *days.get(usize::try_from(mo - 1).ok()?)? {
        return None;
    }
    Some((civil_days(y, mo, d) * 86_400 + hh * 3600 + mm * 60 + ss - offset, nanos))
}

/// Days from 1970-01-01 to a civil date of the proleptic Gregorian calendar.
fn civil_days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::{instant_of, unix_of};

    #[test]
    fn rfc3339_reads_as_the_reference_reads_it() {
        assert_eq!(unix_of("2026-09-21T14:14:20Z"), Some(1_790_000_060));
        assert_eq!(unix_of("2026-09-21t14:14:20.123456789z"), Some(1_790_000_060));
        assert_eq!(unix_of("2026-09-21T16:14:20+02:00"), Some(1_790_000_060));
        assert_eq!(unix_of("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_of("1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(unix_of("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        assert_eq!(instant_of("2026-09-21T14:14:20.5Z"), Some((1_790_000_060, 500_000_000)));
        assert_eq!(instant_of("2026-09-21T14:14:20.123456789Z"), Some((1_790_000_060, 123_456_789)));
        assert_eq!(instant_of("2026-09-21T14:14:20Z"), Some((1_790_000_060, 0)));
        for bad in [
            "2023-02-29T00:00:00Z",
            "2026-09-21T14:14:60Z",
            "2026-13-01T00:00:00Z",
            "2026-09-21 14:14:20Z",
            "2026-09-21T14:14:20",
            "2026-09-21T14:14:20.Z",
            "2026-09-21T14:14:20.1234567890Z",
            "2026-09-21T14:14:20+24:00",
            "2026-09-21T14:14:20+0200",
            "2026-09-21T14:14:20Zx",
            "",
            "2026-09-21T14:14:2٠Z",
        ] {
            assert_eq!(unix_of(bad), None, "{bad}");
        }
    }
}
