//! The link rule (`terms::link`): the input as a link, on its own and as the link of the EIP-3009 fixture's
//! document.
//!
//! Asserts: a link the rule accepts parses with the `url` crate (WHATWG) as https, with a non-empty host and no
//! userinfo, and holds no whitespace, control character or backslash; an agreement URL is an accepted link of at
//! most 2048 UTF-16 code units; a link of another scheme is what the whole WHATWG parse says (the rule reads the
//! scheme first); the fault named for a refused link is one of the two the rule names; and the x402 read accepts
//! the document exactly when the rule accepts its link (within 2048 units), refusing it `x402/link-not-https`
//! exactly when it is a link of another scheme, else `x402/legal-context-malformed`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::json::js_length;
use terms::link::{MAX_LINK_CHARS, is_agreement_url, is_https_link, is_other_scheme_link, link_fault};
use terms_fuzz::fixture;

fuzz_target!(|data: &[u8]| {
    let Ok(link) = std::str::from_utf8(data) else { return };
    let https = is_https_link(link);
    if https {
        let parsed = url::Url::parse(link).expect("an accepted link parses as a WHATWG URL");
        assert_eq!(parsed.scheme(), "https");
        assert!(parsed.host_str().is_some_and(|h| !h.is_empty()), "no host: {link:?}");
        assert!(parsed.username().is_empty() && parsed.password().is_none(), "userinfo: {link:?}");
        assert!(!link.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\'), "{link:?}");
        assert!(link.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://")));
    }
    let agreement = is_agreement_url(link);
    assert_eq!(agreement, https && js_length(link) <= MAX_LINK_CHARS);
    // The rule reads the scheme before it parses; the whole WHATWG parse is the oracle it must agree with.
    let other = is_other_scheme_link(link);
    let whole = js_length(link) <= MAX_LINK_CHARS && url::Url::parse(link).is_ok_and(|u| u.scheme() != "https");
    assert_eq!(other, whole, "{link:?}");
    let fault = link_fault(link);
    assert_eq!(fault == "link-not-https", other);
    assert!(fault == "link-not-https" || fault == "legal-context-malformed");
    if other {
        assert!(!https, "a link of another scheme is accepted: {link:?}");
    }

    let f = fixture("x402/exact/eip155/eip3009");
    let mut doc = f.doc.clone();
    doc["extensions"]["legalContext"]["info"]["legalContextUrl"] = Value::String(link.to_owned());
    match f.pairing().read(&doc) {
        Ok(read) => {
            assert!(agreement, "the read accepted a link the rule refuses: {link:?}");
            assert_eq!(read.link, link);
        }
        Err(r) => {
            assert!(!agreement, "the read refused a link the rule accepts: {link:?} ({r:?})");
            let want = if other { "x402/link-not-https" } else { "x402/legal-context-malformed" };
            assert_eq!(r.code(), want, "{link:?}");
        }
    }
});
