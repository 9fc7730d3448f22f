//! The seller's `Retry-After` (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date read against the gate's clock.
//!
//! An HTTP-date is read in the three forms RFC 9110 §5.6.7 has a recipient accept: the IMF-fixdate
//! (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`, a two-digit year
//! taken within the 50 years after now's century start, as §5.6.7 asks) and the asctime form
//! (`Sun Nov  6 08:49:37 1994`). A date at or before now is a wait of zero; anything else is not read, and the
//! client's backoff applies.

use std::time::Duration;

use super::types::Incoming;

/// The wait the seller asks for, against `now` (Unix seconds).
pub(crate) fn retry_after(answer: &Incoming, now: u64) -> Option<Duration> {
    let value = answer.header("retry-after")?;
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = http_date(value, now)?;
    Some(Duration::from_secs(at.saturating_sub(now)))
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// An HTTP-date as Unix seconds; `now` places an RFC 850 two-digit year.
fn http_date(text: &str, now: u64) -> Option<u64> {
    let (day_name, rest) = text.split_once([',', ' '])?;
    if text.as_bytes().get(day_name.len()) == Some(&b',') {
        let rest = rest.strip_prefix(' ')?;
        if DAYS.contains(&day_name) {
            // IMF-fixdate: `06 Nov 1994 08:49:37 GMT`.
            let mut parts = rest.split(' ');
            let day = two_digits(parts.next()?)?;
            let month = month(parts.next()?)?;
            let year = digits(parts.next()?, 4)?;
            let seconds = time(parts.next()?)?;
            if parts.next()? != "GMT" || parts.next().is_some() {
                return None;
            }
            return at(year, month, day, seconds);
        }
        if LONG_DAYS.contains(&day_name) {
            // RFC 850: `06-Nov-94 08:49:37 GMT`.
            let mut parts = rest.split(' ');
            let mut date = parts.next()?.split('-');
            let day = two_digits(date.next()?)?;
            let month = month(date.next()?)?;
            let yy = digits(date.next()?, 2)?;
            let seconds = time(parts.next()?)?;
            if date.next().is_some() || parts.next()? != "GMT" || parts.next().is_some() {
                return None;
            }
            return at(full_year(yy, now), month, day, seconds);
        }
        return None;
    }
    if !DAYS.contains(&day_name) {
        return None;
    }
    // asctime: `Nov  6 08:49:37 1994` (a one-digit day after two spaces).
    let month = month(rest.get(..3)?)?;
    let rest = rest.get(3..)?.strip_prefix(' ')?;
    let (day, rest) = match rest.strip_prefix(' ') {
        Some(one) => (digits(one.get(..1)?, 1)?, one.get(1..)?),
        None => (two_digits(rest.get(..2)?)?, rest.get(2..)?),
    };
    let mut parts = rest.strip_prefix(' ')?.split(' ');
    let seconds = time(parts.next()?)?;
    let year = digits(parts.next()?, 4)?;
    if parts.next().is_some() {
        return None;
    }
    at(year, month, day, seconds)
}

/// Unix seconds of a calendar date (checked: the day exists, the year is 1970 or later) and a time of day.
fn at(year: u64, month: u64, day: u64, seconds: u64) -> Option<u64> {
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let length = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if year < 1970 || day == 0 || day > length {
        return None;
    }
    days_from_civil(year, month, day).checked_mul(86_400)?.checked_add(seconds)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar at or after it (H. Hinnant's algorithm).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe).saturating_sub(719_468)
}

/// An RFC 850 year: the one ending in `yy` no more than 50 years after now's (RFC 9110 §5.6.7).
fn full_year(yy: u64, now: u64) -> u64 {
    let this = 1970 + now / 31_556_952;
    let century = this - this % 100;
    let year = century + yy;
    if year > this + 50 { year - 100 } else { year }
}

fn month(name: &str) -> Option<u64> {
    MONTHS.iter().position(|m| *m == name).and_then(|i| u64::try_from(i + 1).ok())
}

/// Exactly `n` ASCII digits.
fn digits(text: &str, n: usize) -> Option<u64> {
    (text.len() == n && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

fn two_digits(text: &str) -> Option<u64> {
    digits(text, 2)
}

/// `HH:MM:SS` as seconds of the day (a leap second's `60` is allowed).
fn time(text: &str) -> Option<u64> {
    let mut parts = text.split(':');
    let (h, m, s) = (two_digits(parts.next()?)?, two_digits(parts.next()?)?, two_digits(parts.next()?)?);
    (parts.next().is_none() && h < 24 && m < 60 && s <= 60).then_some(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(v: &str) -> Incoming {
        Incoming { status: 503, headers: vec![("Retry-After".into(), v.into())], body: Default::default() }
    }

    /// 1994-11-06T08:49:37Z, RFC 9110's example date.
    const EXAMPLE: u64 = 784_111_777;

    #[test]
    fn delta_seconds_are_read() {
        assert_eq!(retry_after(&with("3"), 0), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&with(" 0 "), 0), Some(Duration::ZERO));
        assert_eq!(retry_after(&with("-1"), 0), None);
        assert_eq!(retry_after(&with(""), 0), None);
        assert_eq!(retry_after(&with("1.5"), 0), None);
    }

    #[test]
    fn the_three_http_date_forms_are_read_against_the_clock() {
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(http_date(form, EXAMPLE), Some(EXAMPLE), "{form}");
            assert_eq!(retry_after(&with(form), EXAMPLE - 7), Some(Duration::from_secs(7)), "{form}");
            // A date already past is no wait.
            assert_eq!(retry_after(&with(form), EXAMPLE + 100), Some(Duration::ZERO), "{form}");
        }
        assert_eq!(http_date("Tue, 01 Dec 2026 16:42:44 GMT", 0), Some(1_796_143_364));
        assert_eq!(http_date("Thu, 29 Feb 2024 00:00:00 GMT", 0), Some(1_709_164_800));
        assert_eq!(http_date("Thu Feb 29 00:00:00 2024", 0), Some(1_709_164_800));
    }

    #[test]
    fn an_rfc_850_year_is_placed_within_fifty_years_of_now() {
        // In 2026, `94` is 1994 and `30` is 2030.
        let now = 1_796_143_364;
        assert_eq!(http_date("Sunday, 06-Nov-94 08:49:37 GMT", now), Some(EXAMPLE));
        assert_eq!(http_date("Tuesday, 01-Jan-30 00:00:00 GMT", now), Some(1_893_456_000));
    }

    #[test]
    fn a_date_that_is_not_an_http_date_is_not_read() {
        for bad in [
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1969 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT extra",
            "tomorrow",
            "Sun,",
        ] {
            assert_eq!(http_date(bad, EXAMPLE), None, "{bad}");
            assert_eq!(retry_after(&with(bad), EXAMPLE), None, "{bad}");
        }
    }
}
