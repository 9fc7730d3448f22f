//! Regressions from the differential test against the Python reference (`scripts/differential.sh`): each test is a
//! case the script found where the crate's outcome differed from integraledger-terms 0.4.0's, inlined, with the
//! reference's outcome as the expected value (taken from the reference's own run, not retyped from a rule); the last
//! pins the one deliberate difference it found.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use support::{CountingSigner, Reply, ScriptedFetch};
use terms::{Agreement, FixedClock, Options, agree};

const PAYER_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ACCOUNT: &str = "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const URL: &str =
    "https://api.seller.example/agreement/0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// JSON text the gate parses itself is read as JSON.parse reads it, and an integer literal past 2^53 is the double
/// nearest it, held as the integer that double is (the reference's `_js_integer`), never as a float: written back
/// by serde_json it is the integer's digits. The expected text is the reference's
/// `json.dumps(parse_json(text), separators=(",", ":"))`. A literal outside the `u64`/`i64` ranges reaches the crate
/// as a double (serde_json holds no wider integer), so it stays one (the differential script's normalisation 3).
#[test]
fn wide_integer_literals_stay_integers() {
    let text =
        "[9007199254740993,9223372036854775807,-9007199254740993,-9223372036854775808,12345678901234567890,1e2,60.0]";
    let reference =
        "[9007199254740992,9223372036854775808,-9007199254740992,-9223372036854775808,12345678901234567168,100.0,60.0]";
    let parsed = terms::json::parse(text).unwrap();
    assert_eq!(serde_json::to_string(&parsed).unwrap(), reference);
    // The wire form is still JSON.stringify's.
    assert_eq!(
        terms::json::to_js_string(&parsed).unwrap(),
        "[9007199254740992,9223372036854776000,-9007199254740992,-9223372036854776000,12345678901234567000,100,60]"
    );
}

/// Cases "agreement required text -0" and "agreement required text an integer of 400 digits" (cloudflare and erc7710):
/// the agreement URL's PAYMENT-REQUIRED text holds `-0`, or an integer literal of 401 digits. The reference reads `-0`
/// as the integer 0 (the crate held the float -0.0) and a number past the double range as an infinity (the crate
/// refused the whole text as not JSON, so the agreement failed where the reference paid it). An infinity is no JSON
/// value: the crate holds it as `null`, which is what the reference writes for it on the wire (`js_json(...,
/// null_non_finite=True)`, the agreement payment's form). The expected texts are the reference's, for this text.
#[test]
fn minus_zero_and_numbers_past_the_double_range_read_as_the_reference_reads_them() {
    let text = format!(
        r#"{{"a":-0,"b":-0.0,"c":1e400,"d":-1e400,"e":1{},"f":-0e0,"g":"-0 1e400","h":[-0]}}"#,
        "0".repeat(400)
    );
    let parsed = terms::json::parse(&text).unwrap();
    // The reference's json.dumps gives {"a":0,"b":-0.0,"c":Infinity,"d":-Infinity,"e":Infinity,"f":-0.0,...}: the
    // same values, its infinities in Python's non-JSON spelling.
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        r#"{"a":0,"b":-0.0,"c":null,"d":null,"e":null,"f":-0.0,"g":"-0 1e400","h":[0]}"#
    );
    assert_eq!(
        terms::json::to_js_string(&parsed).unwrap(),
        r#"{"a":0,"b":0,"c":null,"d":null,"e":null,"f":0,"g":"-0 1e400","h":[0]}"#
    );
}

/// Case "agreement required echoed 9007199254740993" (erc7710; the same with 2^63 - 1 and 2^64 - 1 on cloudflare):
/// the agreement URL's PAYMENT-REQUIRED carries
/// `"é": 9007199254740993` in its option's `extra`. The agreement payment handed over for approval echoes the
/// option; the reference writes the member as `9007199254740992`, the crate wrote `9007199254740992.0`.
#[tokio::test]
async fn agreement_option_keeps_a_wide_integer_an_integer() {
    let required = r#"{"x402Version":2,"resource":{"url":"https://api.seller.example/agreement/0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"1","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2","é":9007199254740993}}],"extensions":{"legalContext":{"info":{"type":"sha256","value":"0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","legalContextUrl":"https://atr.seller.example/0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}}}}"#;
    let reference_option = r#"{"scheme":"exact","network":"eip155:84532","amount":"1","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2","é":9007199254740992}}"#;
    let fetch = ScriptedFetch::new()
        .script(URL, vec![Reply::status(402).with_header("PAYMENT-REQUIRED", &b64_encode(required.as_bytes()))]);
    let signer = CountingSigner::new(PAYER_KEY, ACCOUNT);
    let options = Options::new().clock(FixedClock(1_790_000_000));
    let Agreement::ToApprove(to_approve) = agree(b"abc", URL, &signer, &fetch, &options).await.unwrap() else {
        panic!("expected an agreement payment to approve");
    };
    assert_eq!(serde_json::to_string(&to_approve.approve.option).unwrap(), reference_option);
    assert_eq!(signer.calls().len(), 0);
}

fn required_with_extra(extra_member: &str) -> String {
    format!(
        r#"{{"x402Version":2,"resource":{{"url":"{URL}"}},"accepts":[{{"scheme":"exact","network":"eip155:84532","amount":"1","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","maxTimeoutSeconds":60,"extra":{{{extra_member},"name":"USDC","version":"2"}}}}],"extensions":{{"legalContext":{{"info":{{"type":"sha256","value":"0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad","legalContextUrl":"https://atr.seller.example/0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}}}}}}}}"#
    )
}

async fn agree_unapproved(required: &str) -> Result<Agreement, terms::Declined> {
    let fetch = ScriptedFetch::new()
        .script(URL, vec![Reply::status(402).with_header("PAYMENT-REQUIRED", &b64_encode(required.as_bytes()))]);
    let signer = CountingSigner::new(PAYER_KEY, ACCOUNT);
    agree(b"abc", URL, &signer, &fetch, &Options::new().clock(FixedClock(1_790_000_000))).await
}

/// Case "agreement required text an integer of 400 digits" (erc7710), end to end: a PAYMENT-REQUIRED whose option's
/// `extra` holds an integer literal of 401 digits. The reference reads it (an infinity) and hands the agreement payment
/// over for approval; the crate declined `agreement-failed` ("without a readable PAYMENT-REQUIRED"). Now it hands it
/// over too, the member held as `null`, the form the reference's wire writer gives it in the agreement payment it
/// sends.
#[tokio::test]
async fn agreement_challenge_with_a_number_past_the_double_range_is_read() {
    let required = required_with_extra(&format!(r#""n":1{}"#, "0".repeat(400)));
    let Agreement::ToApprove(to_approve) = agree_unapproved(&required).await.unwrap() else {
        panic!("expected an agreement payment to approve");
    };
    assert_eq!(to_approve.approve.option["extra"]["n"], serde_json::Value::Null);
}

/// The one deliberate difference the script found (README, "Differences from the reference"): a PAYMENT-REQUIRED
/// holding a lone surrogate escape (case "agreement required text a lone surrogate escape"). The reference reads it;
/// no Rust string can hold it, so the crate declines the challenge as unreadable before anything is signed.
#[tokio::test]
async fn agreement_challenge_with_a_lone_surrogate_is_declined_unread() {
    let declined = agree_unapproved(&required_with_extra(r#""n":"\ud800""#)).await.unwrap_err();
    assert_eq!(declined.code, terms::DeclineCode::AgreementFailed);
    assert_eq!(declined.detail, "The agreement URL answered 402 without a readable PAYMENT-REQUIRED.");
    // The same text with a surrogate pair is read.
    assert!(matches!(
        agree_unapproved(&required_with_extra(r#""n":"\ud83d\ude00""#)).await,
        Ok(Agreement::ToApprove(_))
    ));
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}
