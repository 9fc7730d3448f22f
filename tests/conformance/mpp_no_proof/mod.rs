//! The four MPP pairings whose payment is no public proof of H, each paid after an agreement payment:
//! `mpp/charge/card`, `mpp/charge/stripe`, `mpp/subscription/stripe` and `mpp/charge/nearintents`. Their vector files
//! run from the rows' own data (`files`), and the gate over them (`gate`): transact through the agreement exchange
//! with a stand-in seller, and bad input. Where a file leaves a case open, or a row disagrees with the Python peer
//! (integraledger-terms 0.4.0), the peer's answer on the same input is what is expected, and the test says so.

mod files;
mod gate;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::pairing::{ChooseContext, Chosen};
use terms::{AtrHash, Pairing, atr_hash};

use super::x402_evm::File;
use crate::support::{hex, vectors};

/// The four files, each with its one pairing.
pub(crate) const FILES: [&str; 4] =
    ["mpp-charge-card.json", "mpp-charge-stripe.json", "mpp-subscription-stripe.json", "mpp-charge-nearintents.json"];

/// Every trial of the four files and of the gate over the four pairings.
pub fn trials() -> Vec<Trial> {
    let mut all = Vec::new();
    files::trials(&mut all);
    gate::trials(&mut all);
    all
}

/// Base64url, unpadded, of the RFC 8785 form of a JSON value: how a seller writes `request` and `opaque`.
pub(crate) fn b64u_json(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(terms::json::canonical(v).unwrap())
}

/// The JSON a base64url parameter holds.
pub(crate) fn decoded(text: &Value) -> Value {
    try_decoded(text).expect("base64url JSON")
}

/// The JSON a base64url parameter holds, where it holds any.
pub(crate) fn try_decoded(text: &Value) -> Option<Value> {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text.as_str()?).ok()?).ok()
}

/// The link a challenge list's first `opaque` names.
pub(crate) fn link_of_challenges(doc: &Value) -> String {
    decoded(&doc[0]["opaque"])["legalContextUrl"].as_str().unwrap().to_owned()
}

/// The LCP string of a hash.
pub(crate) fn lcp(h: &AtrHash) -> String {
    format!("lcp:sha256:{}", h.to_hex())
}

/// The file's one challenge: its B2 row's document's first.
pub(crate) fn challenge(f: &File) -> Value {
    f.doc()[0].clone()
}

/// The challenge with its `request` replaced by this JSON, written as a seller writes it.
pub(crate) fn with_request(c: &Value, request: &Value) -> Value {
    let mut c = c.clone();
    c["request"] = json!(b64u_json(request));
    c
}

/// A credential echoing the challenge, with this payload.
pub(crate) fn credential(c: &Value, payload: Value) -> Value {
    json!({"challenge": c, "payload": payload})
}

/// The bound of a pairing, as the hash or the code.
pub(crate) fn bound_of(pairing: &dyn Pairing, presented: &Value) -> Result<String, String> {
    pairing.bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The ATR whose hash is `h`, from the vector files' own rows (every `bytesHex` of a check): the MPP card and
/// Stripe files advertise the SHA-256 of "abc" and hold no bytes of it; the NEAR Intents file's B6 row does.
pub(crate) fn atr_of(h: &AtrHash) -> Vec<u8> {
    FILES
        .iter()
        .flat_map(|name| {
            let file = vectors(name);
            let rows = file["buyer"]["rows"].as_array().cloned().unwrap_or_default();
            rows.into_iter()
                .flat_map(|r| r["input"]["check"].as_array().cloned().unwrap_or_default())
                .filter_map(|c| c["bytesHex"].as_str().map(hex))
                .collect::<Vec<_>>()
        })
        .find(|bytes| atr_hash(bytes) == *h)
        .expect("a row holds the bytes of the advertised hash")
}

/// The vectors' shared clock (NOTES.md; buyer.json's `fixed.now`): the card, Stripe and NEAR Intents rows name no
/// time, and this is before their challenges' `expires`.
pub(crate) fn now() -> u64 {
    crate::Fixed::load().now()
}

/// The challenge's `expires` in Unix seconds, from a vector file that names both (`fixed.expires` and
/// `fixed.expiresUnix`): the card file for the NEAR Intents file, which names only the first.
pub(crate) fn expires_unix(c: &Value) -> u64 {
    let named =
        FILES.iter().map(|n| vectors(n)["fixed"].clone()).chain([vectors("mpp-challenge.json")["fixed"].clone()]);
    named
        .into_iter()
        .find(|fixed| fixed["expires"] == c["expires"] && fixed["expiresUnix"].is_u64())
        .and_then(|fixed| fixed["expiresUnix"].as_u64())
        .expect("a file names the Unix time of this expires")
}

/// The choice the gate makes over a document for the file's B2 account at `now`.
pub(crate) fn chosen_at(f: &File, doc: &Value, now: u64) -> Result<Chosen, String> {
    let pairing = f.pairing();
    let read = pairing.read(doc).map_err(|r| r.code())?;
    let account = f.row("B2")["input"]["account"].as_str().unwrap().to_owned();
    let (inputs, reference) = (serde_json::Map::new(), "r".repeat(32));
    let ctx = ChooseContext { account: &account, inputs: &inputs, now, reference: &reference, doc };
    pairing.choose(&read, &ctx).map_err(|r| r.code())
}
