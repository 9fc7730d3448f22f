//! `Retry-After` (`terms::retry_seconds`), against the rule written out here on its own: one to nine ASCII digits of
//! seconds once the HTTP whitespace around them (space, tab, CR, LF) is trimmed, read as at least 1; 2 for anything
//! else, HTTP-dates included. The input is the header's value, lossily as text (a header value the fetch hands over
//! is text), and also as the value absent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terms::retry_seconds;

fn rule(value: &str) -> u64 {
    let trimmed = value.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
    if (1..=9).contains(&trimmed.len()) && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        trimmed.parse::<u64>().expect("nine digits fit").max(1)
    } else {
        2
    }
}

fuzz_target!(|data: &[u8]| {
    let value = String::from_utf8_lossy(data);
    let got = retry_seconds(Some(&value));
    assert_eq!(got, rule(&value), "{value:?}");
    assert!((1..=999_999_999).contains(&got));
    assert_eq!(retry_seconds(None), 2);
});
