//! The one https-link rule every ATR link and agreement URL is held to.

use url::Url;

use crate::json::js_length;
use crate::refusal::Reason;

/// The longest link or agreement URL, in UTF-16 code units.
pub const MAX_LINK_CHARS: usize = 2048;
const MAX_DNS_NAME: usize = 253;

fn forbidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{20}' | '\u{7f}'..='\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}'
        | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\\')
}

/// One RFC 1123 label: alphanumeric at both ends, hyphens inside, at most 63 characters.
fn is_dns_label(label: &str) -> bool {
    let b = label.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            b.len() <= 63
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        }
        _ => false,
    }
}

/// Splits an authority into host and port the way the rule's pattern reads it: an IP literal in brackets, or DNS
/// labels with an optional final dot, then an optional `:` and up to five digits. `None` when it does not match.
fn host_and_port(authority: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if authority.starts_with('[') {
        let close = authority.find(']')?;
        let (host, rest) = authority.split_at(close + 1);
        let inner = host.get(1..host.len() - 1)?;
        if inner.is_empty() || !inner.bytes().all(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.') {
            return None;
        }
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let name = host.strip_suffix('.').unwrap_or(host);
        if !name.split('.').all(is_dns_label) {
            return None;
        }
        (host, port)
    };
    if let Some(p) = port
        && (p.len() > 5 || !p.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    Some((host, port))
}

/// Whether the value is an https link the gate may fetch: no whitespace, control character or backslash; the scheme
/// `https` in either case followed by `//`; an authority with no userinfo whose host is a DNS name (at most 253
/// characters, RFC 1123 labels) or an IP literal, with an optional port up to 65535; and a WHATWG URL parse that
/// agrees (the `url` crate implements the WHATWG URL Standard and UTS 46).
pub fn is_https_link(value: &str) -> bool {
    // Most links are ASCII, where the forbidden set is the C0 controls, space, DEL and the backslash; a scan of the
    // bytes decides them without decoding characters.
    let refused = if value.is_ascii() {
        value.bytes().any(|b| b <= 0x20 || b == 0x7f || b == b'\\')
    } else {
        value.chars().any(forbidden)
    };
    if refused {
        return false;
    }
    let Some(prefix) = value.get(..8) else { return false };
    if !prefix.eq_ignore_ascii_case("https://") {
        return false;
    }
    let rest = value.get(8..).unwrap_or("");
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // No separate test refuses userinfo or an authority over 260 characters: the rules below refuse both, and a test
    // of its own was an early exit that no input tells apart (a mutation run found its eight mutants equivalent).
    // An `@` falls in the host (not an RFC 1123 label, not an IP literal's hex) or in the port (not digits); a DNS
    // name of at most 253 characters, one final dot, `:` and five digits make 260, and an IP literal that long is no
    // IPv6 address.
    let Some((host, port)) = host_and_port(authority) else { return false };
    if !host.starts_with('[') && host.trim_end_matches('.').len() > MAX_DNS_NAME {
        return false;
    }
    if let Some(p) = port.filter(|p| !p.is_empty())
        && p.parse::<u32>().is_ok_and(|n| n > 65_535)
    {
        return false;
    }
    // The rest of the WHATWG parse cannot fail once the scheme, the authority and the port have passed: the path,
    // query and fragment parsers only record validation errors. So the host parser alone decides (IDNA/UTS 46,
    // forbidden code points, a name ending in a number that must be a valid IPv4 address, an IPv6 literal).
    url::Host::parse(host).is_ok_and(|h| !matches!(h, url::Host::Domain(ref d) if d.is_empty()))
}

/// Whether the value is at most 2048 UTF-16 code units and parses as an absolute URL whose scheme is not https.
/// Only this case is refused as `link-not-https`; every other failing value is `legal-context-malformed`.
pub fn is_other_scheme_link(value: &str) -> bool {
    js_length(value) <= MAX_LINK_CHARS
        && match whatwg_scheme(value) {
            // With no scheme there is no absolute URL, and with `https` it is not another scheme, whatever the rest
            // holds: only another scheme needs the whole parse (and its host's IDNA pass, the costly part).
            None | Some(Scheme::Https) => false,
            Some(Scheme::Other) => Url::parse(value).is_ok_and(|u| u.scheme() != "https"),
        }
}

enum Scheme {
    Https,
    Other,
}

/// The scheme the WHATWG parser reads at the start of the value, if any: after trimming leading C0 controls and
/// spaces and skipping tabs and newlines (as the parser does everywhere), an ASCII letter, then letters, digits, `+`,
/// `-` or `.`, up to a `:`.
fn whatwg_scheme(value: &str) -> Option<Scheme> {
    let mut chars = value.trim_start_matches(|c| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    let mut https = "https".chars();
    let mut is_https = true;
    let first = chars.next().filter(char::is_ascii_alphabetic)?;
    is_https &= https.next().is_some_and(|h| h.eq_ignore_ascii_case(&first));
    for c in chars {
        match c {
            ':' => return Some(if is_https && https.next().is_none() { Scheme::Https } else { Scheme::Other }),
            c if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.') => {
                is_https &= https.next().is_some_and(|h| h.eq_ignore_ascii_case(&c));
            }
            _ => return None,
        }
    }
    None
}

/// The refusal suffix for a value that is not an https link: `link-not-https` or `legal-context-malformed`.
pub fn link_fault(value: &str) -> &'static str {
    link_reason(value).as_str()
}

/// The refusal reason for a value that is not an https link: [`Reason::LinkNotHttps`] or
/// [`Reason::LegalContextMalformed`].
pub(crate) fn link_reason(value: &str) -> Reason {
    if is_other_scheme_link(value) { Reason::LinkNotHttps } else { Reason::LegalContextMalformed }
}

/// Whether the value is an agreement URL: an https link of at most 2048 UTF-16 code units.
pub fn is_agreement_url(value: &str) -> bool {
    js_length(value) <= MAX_LINK_CHARS && is_https_link(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DNS name of 253 characters, its final dot, `:` and five digits: the longest authority the rule accepts.
    const MAX_AUTHORITY: usize = MAX_DNS_NAME + 1 + 6;

    /// Three labels of 63 characters and one of `last`: a name of 192 + `last` characters.
    fn dns_name(last: usize) -> String {
        let l63 = "a".repeat(63);
        format!("{l63}.{l63}.{l63}.{}", "b".repeat(last))
    }

    /// Userinfo and authorities past 260 characters are refused by the host and port rules alone (the rule has no
    /// test of its own for them), each as the Python reference (integraledger-terms 0.4.0) answers it: an `@` before
    /// or after the port's colon or after an IP literal, an IP literal or a run of final dots too long to be one, a
    /// port of six digits after the longest name, and names of non-ASCII letters.
    #[test]
    fn userinfo_and_overlong_authorities_are_refused() {
        let h253 = dns_name(61);
        let refused = [
            "https://user@atr.seller.example/".to_owned(),
            "https://u:p@atr.seller.example/".to_owned(),
            "https://:@atr.seller.example/".to_owned(),
            "https://[::1]@atr.seller.example/".to_owned(),
            "https://atr.seller.example:1@x/".to_owned(),
            format!("https://[{}1]/", "0:".repeat(130)),
            format!("https://a{}/", ".".repeat(300)),
            format!("https://{h253}.:065535/"),
            format!("https://{h253}..:1/"),
            format!("https://{}/", "é".repeat(300)),
            format!("https://a.b{}/", "é".repeat(300)),
        ];
        for link in refused {
            assert!(!is_https_link(&link), "{link}");
        }
        assert!(format!("{h253}.:065535").len() > MAX_AUTHORITY);
    }

    /// The limits of a host and an authority at their edges, and the IP literals, each as the Python reference
    /// (integraledger-terms 0.4.0, `bindings._lcp.is_https_link`) answers them.
    #[test]
    fn a_host_of_253_characters_and_an_authority_of_260_are_the_edges() {
        let (h253, h254) = (dns_name(61), dns_name(62));
        assert_eq!((h253.len(), h254.len()), (253, 254));
        let cases = [
            (format!("https://{h253}/"), true),
            (format!("https://{h254}/"), false),
            (format!("https://{h253}./"), true),
            (format!("https://{h254}./"), false),
            // 253 characters, the final dot, `:` and five digits: 260, the longest authority.
            (format!("https://{h253}.:65535/"), true),
            (format!("https://{h253}.:655350/"), false),
            (format!("https://{h253}:65535/"), true),
            (format!("https://{h254}.:1/"), false),
            ("https://[::1]/".to_owned(), true),
            ("https://[::ffff:1.2.3.4]/".to_owned(), true),
            ("https://[::ffff:1.2.3.4]:443/".to_owned(), true),
        ];
        for (link, want) in cases {
            assert_eq!(
                is_https_link(&link),
                want,
                "{} characters of authority",
                link[8..].split('/').next().unwrap_or("").len()
            );
        }
        assert_eq!(format!("{h253}.:65535").len(), MAX_AUTHORITY);
    }

    /// The scheme read ahead of the parse decides as the whole WHATWG parse does: no scheme and `https` (in any case,
    /// after leading controls and spaces, with tabs and newlines inside) are never another scheme's link; another
    /// scheme still needs a URL that parses.
    #[test]
    fn the_scheme_read_first_agrees_with_the_whole_parse() {
        let cases = [
            "https://atr.seller.example/",
            "HtTpS://atr.seller.example/",
            " \u{1}https://atr.seller.example/",
            "ht\ttp\ns://atr.seller.example/",
            "https:atr.seller.example",
            "https://é\u{0}/",
            "httpsx://atr.seller.example/",
            "xttps://atr.seller.example/",
            "https+x://atr.seller.example/",
            "http://atr.seller.example/",
            " \thttp://atr.seller.example/",
            "http://[::1/",
            "http://é.example/",
            "ftp://x/",
            "mailto:a@b",
            "data:,x",
            "a:",
            "1a:b",
            ":x",
            "+a:b",
            "https",
            "",
            "//atr.seller.example/",
            "a b:c",
            "x-y.z+w:q",
        ];
        for value in cases {
            let whole = Url::parse(value).is_ok_and(|u| u.scheme() != "https");
            assert_eq!(is_other_scheme_link(value), whole, "{value:?}");
        }
        assert!(is_other_scheme_link("ftp://x/") && !is_other_scheme_link("https://x/"));
    }

    /// A link that is not ASCII is read character by character: a letter in the path is allowed, a non-ASCII space
    /// or separator anywhere is not, each as the Python reference answers it.
    #[test]
    fn a_link_that_is_not_ascii_is_refused_only_for_its_forbidden_characters() {
        assert!(is_https_link("https://atr.seller.example/terms/\u{e9}"));
        assert!(is_https_link("https://atr.seller.example/\u{fc}?q=\u{f6}"));
        for refused in ["\u{a0}", "\u{2028}", "\u{3000}", "\u{1680}", "\u{205f}"] {
            assert!(!is_https_link(&format!("https://atr.seller.example/\u{e9}{refused}")), "{refused:?}");
        }
        assert!(!is_https_link("https://b\u{fc}cher.example/"));
    }

    #[test]
    fn numeric_hosts_are_read_as_whatwg_reads_them() {
        assert!(is_https_link("https://0x7f.1/"));
        assert!(!is_https_link("https://1.2.3.4.5/"));
        assert!(is_https_link("https://atr.seller.example:/x"));
        assert!(!is_https_link("https://atr.seller.example:65536/x"));
        assert!(!is_https_link("https://[::1/"));
        assert!(!is_https_link("https://[zz::1]/"));
        assert!(is_https_link("https://a.example./"));
        assert!(!is_https_link("https://a..example/"));
        assert!(!is_https_link("https://-a.example/"));
        // Hyphens inside a label, and nothing else that is not a letter or digit, as the reference answers.
        assert!(is_https_link("https://atr-1.seller.example/"));
        assert!(is_https_link("https://a--b.example/x"));
        assert!(!is_https_link("https://a_b.example/"));
        assert!(!is_https_link("https://a!b.example/"));
        // A port of at most five digits, leading zeros counted, though WHATWG would read six as port 1.
        assert!(is_https_link("https://atr.seller.example:00443/"));
        assert!(!is_https_link("https://atr.seller.example:000001/"));
        assert!(!is_https_link("https://[::1]:000001/"));
        // A backslash (which WHATWG reads as a slash) and DEL, in an ASCII link, as the reference refuses them.
        assert!(!is_https_link("https://atr.seller.example\\terms"));
        assert!(!is_https_link("https://atr.seller.example/a\\b"));
        assert!(!is_https_link("https://atr.seller.example/a\u{7f}"));
    }
}

#[cfg(test)]
mod equivalence {
    use super::*;

    /// The host parser decides exactly as the whole WHATWG parse would, for every link that reaches it.
    #[test]
    fn host_parse_agrees_with_the_whole_url_parse() {
        let hosts = [
            "atr.seller.example",
            "0x7f.1",
            "1.2.3.4.5",
            "127.1",
            "2130706433",
            "[::1]",
            "[2001:db8::1]",
            "[::ffff:1.2.3.4]",
            "xn--nxasmq6b.example",
            "xn--a.example",
            "xn--zz-.example",
            "a.example.",
            "EXAMPLE.COM",
            "a-b.c",
            "999.1.1.1",
            "0.0.0.0",
            "1.1.1.256",
            "09.1.1.1",
            "0x100000000",
            "[1::2::3]",
            "[::1.2.3]",
            "a.b.c.d.e.f.1",
            "a.1",
            "1.a",
        ];
        for host in hosts {
            for tail in ["", ":", ":443", "/p?q#f", ":8443/x"] {
                let link = format!("https://{host}{tail}");
                let whole = Url::parse(&link)
                    .is_ok_and(|u| u.scheme() == "https" && u.host_str().is_some_and(|h| !h.is_empty()));
                let pattern_ok =
                    host_and_port(link.get(8..).unwrap_or("").split(['/', '?', '#']).next().unwrap_or("")).is_some();
                if pattern_ok {
                    assert_eq!(is_https_link(&link), whole, "{link}");
                }
            }
        }
    }
}
