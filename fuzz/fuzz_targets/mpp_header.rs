//! MPP's `WWW-Authenticate` grammar: `terms::mpp::decode_challenges` on the input's lines as field values, then
//! `terms::mpp::read` and `terms::mpp::network` on the list it writes (and on the input read as JSON text, so the
//! fuzzer need not learn the grammar to reach the read).
//!
//! Asserts: nothing panics; every value of an accepted input is at most 8192 UTF-16 code units; the list holds at
//! most 32 challenges, each an object of MPP's parameters only, all strings, with `id`, `realm`, `method`, `intent`
//! and `request` non-empty and no CR or LF anywhere; the list written back as one `Payment` header per challenge
//! (each value quoted and escaped) decodes to the same list; a refusal is `mpp/header-malformed` or
//! `mpp/challenge-malformed`; and a read names the H every challenge it offers carries in its id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use terms::json::js_length;
use terms::mpp::{MAX_CHALLENGES, MAX_FIELD_CHARS, challenge_h, decode_challenges, network, read};
use terms::pairing::Offer;

const PARAMS: [&str; 10] =
    ["id", "realm", "method", "intent", "request", "expires", "digest", "description", "header", "opaque"];
const REQUIRED: [&str; 5] = ["id", "realm", "method", "intent", "request"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let values: Vec<&str> = text.split('\n').collect();
    match decode_challenges(&values) {
        Ok(list) => {
            assert!(values.iter().all(|v| js_length(v) <= MAX_FIELD_CHARS));
            let challenges = list.as_array().expect("a list");
            assert!(challenges.len() <= MAX_CHALLENGES);
            for c in challenges {
                let map = c.as_object().expect("a challenge is an object");
                assert!(map.keys().all(|k| PARAMS.contains(&k.as_str())), "{c}");
                assert!(map.values().all(|v| v.as_str().is_some_and(|s| !s.contains(['\r', '\n']))), "{c}");
                assert!(REQUIRED.iter().all(|k| map.get(*k).and_then(Value::as_str).is_some_and(|s| !s.is_empty())));
            }
            round_trip(&list);
            reads(&list);
        }
        Err(e) => {
            let code = e.refusal().code();
            assert!(code == "mpp/header-malformed" || code == "mpp/challenge-malformed", "{code}");
        }
    }
    if let Some(doc) = terms::json::parse(text) {
        reads(&doc);
    }
});

/// Each challenge written back as its own `Payment` value, every parameter a quoted-string, reads as the same list.
fn round_trip(list: &Value) {
    let written: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| {
            let params: Vec<String> = c
                .as_object()
                .expect("an object")
                .iter()
                .map(|(k, v)| {
                    format!("{k}=\"{}\"", v.as_str().expect("a string").replace('\\', "\\\\").replace('"', "\\\""))
                })
                .collect();
            format!("Payment {}", params.join(", "))
        })
        .collect();
    if written.iter().any(|w| js_length(w) > MAX_FIELD_CHARS) {
        return;
    }
    let values: Vec<&str> = written.iter().map(String::as_str).collect();
    assert_eq!(decode_challenges(&values).as_ref(), Ok(list), "the list through its own header form");
}

/// The read and each challenge's network, which must not panic; an accepted read's H is every offered id's.
fn reads(doc: &Value) {
    if let Some(list) = doc.as_array() {
        for c in list {
            let _ = network(c);
        }
    }
    if let Ok(advertised) = read(doc) {
        let Offer::Challenges(offered) = &advertised.offer else { panic!("an MPP read offers challenges") };
        assert!(!offered.is_empty() && offered.len() <= MAX_CHALLENGES);
        for c in offered {
            let id = c.get("id").and_then(Value::as_str).expect("an offered challenge has an id");
            assert_eq!(challenge_h(id), Ok(advertised.h), "{id}");
        }
        assert!(terms::link::is_https_link(&advertised.link));
    }
}
