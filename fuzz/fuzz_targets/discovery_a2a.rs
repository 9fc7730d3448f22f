//! The discovery document's reader (`terms::discovery::parse`) and the A2A extension's (`terms::a2a`), on the
//! input's two parts: the first as a served discovery document, the second as an A2A task (JSON) and as an
//! `A2A-Extensions` header value.
//!
//! Asserts: nothing panics; a refusal's code is in the `discovery/` namespace; a document read writes back
//! (`to_bytes`) to bytes that read as the same document with nothing ignored, and `emit` of its JSON writes the same
//! bytes; an ignored member is never one of the document's; a task read gives an https link of at most 2048 UTF-16
//! code units, and placing what was read on a task without it reads back the same H and link; and a task's refusal
//! is in the `a2a/` namespace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use terms::a2a;
use terms::discovery::{emit, parse};
use terms::json::js_length;
use terms::link::{MAX_LINK_CHARS, is_https_link};
use terms_fuzz::{parts, text};

fuzz_target!(|data: &[u8]| {
    let parts = parts(data);
    let document = parts.first().copied().unwrap_or_default();
    match parse(document) {
        Ok(parsed) => {
            let bytes = parsed.document.to_bytes().expect("a document read writes back");
            let again = parse(&bytes).expect("what was written reads");
            assert_eq!(again.document, parsed.document);
            assert!(again.ignored.is_empty(), "{:?}", again.ignored);
            let value = serde_json::to_value(&parsed.document).unwrap();
            assert_eq!(emit(&value).unwrap(), bytes);
            for path in &parsed.ignored {
                let top = path.split('.').next().unwrap_or_default();
                if !path.contains('.') {
                    assert!(value.get(top).is_none(), "{path} ignored and kept");
                }
            }
        }
        Err(refusal) => assert!(refusal.code().starts_with("discovery/"), "{refusal}"),
    }

    let Some(task) = parts.get(1) else { return };
    let header = text(task);
    let _ = a2a::requested(Some(&header));
    let Some(task) = std::str::from_utf8(task).ok().and_then(terms::json::parse) else { return };
    match a2a::read(&task) {
        Ok(read) => {
            assert!(is_https_link(&read.link) && js_length(&read.link) <= MAX_LINK_CHARS, "{}", read.link);
            let placed = a2a::place(&json!({"id": "t"}), &read.h.to_hex(), &read.link, Some(&header))
                .expect("what was read places");
            let back = a2a::read(&placed).expect("what was placed reads");
            assert_eq!((back.h, back.link), (read.h, read.link));
        }
        Err(refusal) => assert!(refusal.code().starts_with("a2a/"), "{refusal}"),
    }
    let _ = a2a::place(
        &task,
        "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "https://a.test/x",
        None,
    )
    .map(|t: Value| assert!(t.get("metadata").is_some_and(Value::is_object)));
});
