//! The owner's spend policy file (`terms::safety::policy::Policy`), read as TOML and as JSON. A file is outside input
//! to the gate's owner as much as a seller's document is to the buyer: it may be hand-written, generated or
//! corrupted, and a policy that reads differently from what it says is a policy that lets another payment through.
//!
//! Input: the file's text (lossily), read once as TOML and once as JSON.
//!
//! Asserts, for every text that reads as a policy: its rules written back (as JSON and as TOML) read again as a
//! policy with exactly the same rules, so the reader and the writer agree on every rule; and a text that does not
//! read gives an error that says what is wrong (a non-empty message).
#![no_main]

use libfuzzer_sys::fuzz_target;
use terms::safety::policy::Policy;

fn round_trips(policy: &Policy, how: &str) {
    let rules = policy.rules();
    let json = serde_json::to_string(rules).expect("rules write as JSON");
    let again = Policy::from_json_str(&json).unwrap_or_else(|e| panic!("{how}: its JSON {json} does not read: {e}"));
    assert_eq!(again.rules(), rules, "{how}: the rules changed through JSON {json}");
    let toml = toml::to_string(rules).expect("rules write as TOML");
    let again = Policy::from_toml_str(&toml).unwrap_or_else(|e| panic!("{how}: its TOML {toml} does not read: {e}"));
    assert_eq!(again.rules(), rules, "{how}: the rules changed through TOML {toml}");
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Policy::from_toml_str(&text) {
        Ok(policy) => round_trips(&policy, "read as TOML"),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    match Policy::from_json_str(&text) {
        Ok(policy) => round_trips(&policy, "read as JSON"),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
