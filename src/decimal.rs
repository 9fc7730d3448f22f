//! Channel amounts: decimal strings of 1 to 78 digits, compared and added as big integers (a sum of two such
//! amounts fits in 512 bits).

use ruint::aliases::U512;

/// The most digits a channel amount may have.
pub(crate) const MAX_DIGITS: usize = 78;

/// Whether the text is 1 to 78 ASCII digits.
pub(crate) fn is_decimal(text: &str) -> bool {
    (1..=MAX_DIGITS).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())
}

/// The value of 1 to 78 ASCII digits.
pub(crate) fn parse(text: &str) -> Option<U512> {
    if !is_decimal(text) {
        return None;
    }
    U512::from_str_radix(text, 10).ok()
}

/// The canonical decimal form: no leading zeros.
pub(crate) fn format(value: U512) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_big_integers() {
        let max = "9".repeat(78);
        let a = parse(&max).unwrap();
        assert_eq!(format(a + a), format!("1{}8", "9".repeat(77)));
        assert!(parse(&"9".repeat(79)).is_none());
        assert!(parse("").is_none());
        assert!(parse("-1").is_none());
        assert_eq!(format(parse("007").unwrap()), "7");
    }
}
