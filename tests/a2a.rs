//! The LCP A2A extension: every row of `a2a-legal-context.json` from its own data (its `{"$repeat": [s, n]}` compact
//! strings expanded as NOTES.md says), the bad input a task could carry (metadata under another URI or version, H of
//! the wrong form, a link that is not https), and `confirm_task` against links on real loopback sockets: one fetch,
//! the bytes compared with H, a link whose bytes do not hash to H declined.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "support/net.rs"]
mod net;

use net::{Act, Loopback, Net, Server};
use serde_json::{Value, json};
use terms::a2a::{self, BINDING, DELIVERY_PROVES, EXTENSION_URIS};
use terms::{DeclineCode, MAX_ATR_BYTES, Refusal, atr_hash};

fn file() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/a2a-legal-context.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The value with every `{"$repeat": [s, n]}` replaced by `s` repeated `n` times.
fn expand(v: &Value) -> Value {
    match v {
        Value::Object(o) if o.len() == 1 && o.contains_key("$repeat") => {
            let pair = o["$repeat"].as_array().unwrap();
            Value::String(pair[0].as_str().unwrap().repeat(usize::try_from(pair[1].as_u64().unwrap()).unwrap()))
        }
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), expand(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        other => other.clone(),
    }
}

/// A refusal as the file writes one.
fn refusal(r: &Refusal) -> Value {
    json!({"refused": true, "code": r.code()})
}

fn read_json(task: &Value) -> Value {
    a2a::read(task).map_or_else(|r| refusal(&r), |t| json!({"h": t.h.to_hex(), "link": t.link}))
}

fn place_json(task: &Value, h: &str, link: &str, header: Option<&str>) -> Value {
    a2a::place(task, h, link, header).unwrap_or_else(|r| refusal(&r))
}

#[test]
fn the_fixed_uris_and_the_binding_are_the_file_s() {
    let f = file();
    assert_eq!(json!(EXTENSION_URIS), f["fixed"]["uris"]);
    assert_eq!(EXTENSION_URIS[0], f["fixed"]["URI"]);
    assert_eq!(refusal(&BINDING), f["binding"]);
    assert_eq!(DELIVERY_PROVES, f["deliveryProves"]);
}

#[test]
fn a1_the_agent_card_entry_and_the_requested_header() {
    let f = file();
    assert_eq!(json!(a2a::agent_extension(false)), f["A1"]["expectAgentExtension"]);
    let rows = f["A1"]["requested"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        assert_eq!(json!(a2a::requested(row["value"].as_str())), row["expect"], "{}", row["value"]);
    }
}

#[test]
fn a2_place_read_and_the_two_refusals() {
    let f = file();
    let (fixed, a2) = (&f["fixed"], &f["A2"]);
    let (h, l) = (fixed["H"].as_str().unwrap(), fixed["L"].as_str().unwrap());
    let placed = place_json(&a2["task"], h, l, None);
    assert_eq!(placed, a2["expectPlaced"]);
    assert_eq!(read_json(&placed), a2["expectRead"]);
    let other = a2["placeOther"]["h"].as_str().unwrap();
    assert_eq!(place_json(&a2["expectPlaced"], other, l, None), a2["placeOther"]["expect"]);
    assert_eq!(place_json(&a2["task"], h, a2["httpLink"]["link"].as_str().unwrap(), None), a2["httpLink"]["expect"]);
}

#[test]
fn a3_a_bare_legal_context_key_is_not_the_extension_s() {
    let a3 = &file()["A3"];
    assert_eq!(read_json(&a3["task"]), a3["expect"], "{}", a3["case"]);
}

#[test]
fn every_agreed_refusal_row_from_its_own_data() {
    let f = file();
    let rows = f["agreedRefusals"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 15);
    for row in rows {
        let case = row["case"].as_str().unwrap();
        let args = expand(&row["args"]);
        let args = args.as_array().unwrap();
        let got = match row["call"].as_str().unwrap() {
            "agentExtension" => json!(a2a::agent_extension(args[0]["required"].as_bool().unwrap_or(false))),
            "requested" => json!(a2a::requested(args[0].as_str())),
            "place" => place_json(
                &args[0],
                args[1].as_str().unwrap(),
                args[2].as_str().unwrap(),
                args.get(3).and_then(Value::as_str),
            ),
            "read" => read_json(&args[0]),
            call => panic!("{case}: a call the file names and this test does not: {call}"),
        };
        assert_eq!(got, row["expect"], "{case}");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Bad input.

const H: &str = "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const URI: &str = "https://integraledger.com/lcp/a2a/legal-context/v1";

fn link() -> String {
    format!("https://atr.seller.test/{H}")
}

fn under(key: &str, value: Value) -> Value {
    json!({"id": "task-1", "metadata": {key: value}})
}

fn value(h: Value, link: Value) -> Value {
    json!({"type": "sha256", "value": h, "legalContextUrl": link})
}

fn code(task: &Value) -> String {
    a2a::read(task).map_or_else(|r| r.code(), |t| format!("read {t:?}"))
}

#[test]
fn metadata_under_another_uri_or_version_is_no_legal_context() {
    let good = value(json!(H), json!(link()));
    assert!(a2a::read(&under(URI, good.clone())).is_ok());
    for key in [
        "https://integraledger.com/lcp/a2a/legal-context/v2",
        "https://integraledger.com/lcp/a2a/legal-context/v0",
        "https://integraledger.com/lcp/a2a/legal-context",
        "https://integraledger.com/lcp/a2a/legal-context/v1/",
        "http://integraledger.com/lcp/a2a/legal-context/v1",
        "HTTPS://INTEGRALEDGER.COM/LCP/A2A/LEGAL-CONTEXT/V1",
        " https://integraledger.com/lcp/a2a/legal-context/v1",
        "legalContext",
        "lcp",
    ] {
        assert_eq!(code(&under(key, good.clone())), "a2a/no-legal-context", "{key}");
    }
    // Not in metadata, or no metadata object at all.
    for task in [json!({URI: &good}), json!({"metadata": [&good]}), json!({"metadata": null}), json!(null)] {
        assert_eq!(code(&task), "a2a/no-legal-context", "{task}");
    }
    // A header value over 8 KiB activates nothing, however few its elements; one of exactly 8 KiB does.
    let padded = |len: usize| format!("{URI},{}", " ".repeat(len - URI.len() - 1));
    assert!(a2a::requested(Some(&padded(8192))));
    assert!(!a2a::requested(Some(&padded(8193))));
    // 64 elements are read, 65 are not.
    assert!(a2a::requested(Some(&format!("{}{URI}", ",".repeat(63)))));
    assert!(!a2a::requested(Some(&format!("{}{URI}", ",".repeat(64)))));
    // The header test names the version exactly as well.
    for header in
        ["https://integraledger.com/lcp/a2a/legal-context/v2", "https://integraledger.com/lcp/a2a/legal-context/v1x"]
    {
        assert!(!a2a::requested(Some(header)), "{header}");
    }
}

#[test]
fn h_of_the_wrong_form_is_malformed_on_read_and_on_place() {
    let digits = &H[2..];
    for bad in [
        json!("0x1234"),
        json!(digits),
        json!(format!("0X{digits}")),
        json!(format!("{H}0")),
        json!(format!("0x{}z", &digits[1..])),
        json!(format!("lcp:sha256:{H}")),
        json!(7),
        json!(null),
        json!([H]),
    ] {
        assert_eq!(code(&under(URI, value(bad.clone(), json!(link())))), "a2a/legal-context-malformed", "{bad}");
        if let Some(text) = bad.as_str() {
            let placed = a2a::place(&json!({"id": "t"}), text, &link(), None);
            assert_eq!(placed.unwrap_err().code(), "a2a/legal-context-malformed", "{bad}");
        }
    }
    // Another type than sha256, or none.
    let mut typed = value(json!(H), json!(link()));
    typed["type"] = json!("SHA256");
    assert_eq!(code(&under(URI, typed)), "a2a/legal-context-malformed");
    assert_eq!(code(&under(URI, json!({"value": H, "legalContextUrl": link()}))), "a2a/legal-context-malformed");
    assert_eq!(code(&under(URI, json!(format!("lcp:sha256:{H}")))), "a2a/legal-context-malformed");
}

#[test]
fn a_link_that_is_not_https_is_refused() {
    for other in [format!("http://atr.seller.test/{H}"), format!("ftp://atr.seller.test/{H}"), "data:,abc".to_owned()] {
        assert_eq!(code(&under(URI, value(json!(H), json!(other)))), "a2a/link-not-https", "{other}");
        let placed = a2a::place(&json!({}), H, &other, None).unwrap_err();
        assert_eq!(placed.code(), "a2a/link-not-https", "{other}");
    }
    let long = format!("https://atr.seller.test/{}", "a".repeat(2048));
    for malformed in [
        json!("atr.seller.test/abc"),
        json!("https://user@atr.seller.test/abc"),
        json!("https://atr.seller.test/a b"),
        json!(long),
        json!(null),
        json!(1),
    ] {
        assert_eq!(code(&under(URI, value(json!(H), malformed.clone()))), "a2a/legal-context-malformed", "{malformed}");
    }
    // Place holds the link to the same 2048 UTF-16 code units, before the 4 KiB rule (this value is under 4 KiB).
    let placed = a2a::place(&json!({}), H, &long, None).unwrap_err();
    assert_eq!(placed.code(), "a2a/legal-context-malformed");
    let longest = format!("https://atr.seller.test/{}", "a".repeat(2048 - 24));
    assert!(a2a::place(&json!({}), H, &longest, None).is_ok());
    // The two spellings must agree.
    let mut both = value(json!(H), json!(link()));
    both["legal_context_url"] = json!(format!("https://elsewhere.test/{H}"));
    assert_eq!(code(&under(URI, both)), "a2a/legal-context-malformed");
}

// ---------------------------------------------------------------------------------------------------------------
// confirm_task on loopback.

fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

/// The link's server answering `act`; the task delivers `h` and the link.
fn confirm(h: &str, act: Act) -> (Result<a2a::ConfirmedTask, terms::Declined>, Server, Loopback) {
    let rt = paused();
    let net = Net::new();
    let server = rt.block_on(Server::start(&net, vec![act]));
    let fetch = Loopback::new(&net).route("atr.seller.test", &server);
    let task = a2a::place(&json!({"id": "task-1"}), h, &link(), None).unwrap();
    let got = rt.block_on(a2a::confirm_task(&task, &fetch));
    (got, server, fetch)
}

#[test]
fn a_task_whose_link_serves_its_terms_is_confirmed_with_one_fetch() {
    let (got, server, fetch) = confirm(H, Act::ok(b"abc".to_vec()));
    let confirmed = got.unwrap();
    assert_eq!((confirmed.h.to_hex().as_str(), confirmed.bytes.as_slice()), (H, &b"abc"[..]));
    assert_eq!(confirmed.link, link());
    assert_eq!((fetch.asked(), server.count()), (vec![link()], 1));
    assert_eq!(server.seen()[0].header("accept-encoding"), Some("identity"));
}

#[test]
fn a_link_whose_bytes_do_not_hash_to_h_is_declined() {
    let (got, server, _) = confirm(H, Act::ok(b"abd".to_vec()));
    let declined = got.unwrap_err();
    assert_eq!(declined.code, DeclineCode::HashMismatch);
    assert_eq!(server.count(), 1, "fetched once, never again");
    // The same bytes, confirmed for the H they do hash to.
    let abd = atr_hash(b"abd").to_hex();
    assert!(confirm(&abd, Act::ok(b"abd".to_vec())).0.is_ok());
}

#[test]
fn a_link_that_cannot_be_fetched_or_serves_too_much_is_declined() {
    let (got, _, _) = confirm(H, Act::status(404));
    assert_eq!(got.unwrap_err().code, DeclineCode::AtrUnfetchable);
    let (got, server, _) = confirm(H, Act::status(302).header("Location", "https://atr.seller.test/abc"));
    assert_eq!(got.unwrap_err().code, DeclineCode::AtrUnfetchable);
    assert_eq!(server.count(), 1, "the redirect is not followed");
    let (got, _, _) = confirm(H, Act::ok(vec![b'a'; MAX_ATR_BYTES + 1]));
    assert_eq!(got.unwrap_err().code, DeclineCode::AtrTooLarge);
}

#[test]
fn a_task_that_delivers_nothing_readable_is_declined_unfetched() {
    let rt = paused();
    let net = Net::new();
    let server = rt.block_on(Server::start(&net, vec![Act::ok(b"abc".to_vec())]));
    let fetch = Loopback::new(&net).route("atr.seller.test", &server);
    let http = under(URI, value(json!(H), json!(format!("http://atr.seller.test/{H}"))));
    let declined = rt.block_on(a2a::confirm_task(&http, &fetch)).unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::LinkNotHttps, "a2a/link-not-https"));
    let bare = json!({"metadata": {"legalContext": value(json!(H), json!(link()))}});
    let declined = rt.block_on(a2a::confirm_task(&bare, &fetch)).unwrap_err();
    assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::OfferUnreadable, "a2a/no-legal-context"));
    assert!(fetch.asked().is_empty());
    assert_eq!(server.count(), 0);
}
