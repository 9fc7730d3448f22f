//! The session `mpp/session/evm` end to end: `transact` opens the channel with a local key (two signer calls: the
//! deposit's authorization, then the first voucher), `open_channel` keeps the hold, two `within` vouchers and a
//! `record_charge` after each, then the close; its inputs and quote; the bad input the issue names; and every case of
//! `tests/mpp_session/peer-cases.json` (written by `scripts/peer-mpp-session-cases.py` from the reference,
//! integraledger-terms 0.4.0), compared case by case, the crate's known differences named.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::Mutex;

use alloy_primitives::Signature;
use serde_json::{Map, Value, json};
use support::{Reply, ScriptedFetch, paused, vectors};
use terms::pairing::{Channel, ChannelHold, ChannelKind, Completion, WithinArgs};
use terms::{
    Answer, AtrHash, BoxFuture, CountingIds, Declined, FixedClock, LocalSigner, Options, Pairing, Quote, Refund,
    Signer, SignerError, SigningRequest, TransactOutcome, U256, Within, atr_hash, check, open_channel, record_charge,
    transact, within,
};

const ID: &str = "mpp/session/evm";
const ABC: &[u8] = b"abc";
const ANVIL_1: &str = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

fn file() -> Value {
    vectors("mpp-session-evm.json")
}

fn peer() -> Value {
    serde_json::from_str(&std::fs::read_to_string("tests/mpp_session/peer-cases.json").unwrap()).unwrap()
}

fn row(name: &str) -> Value {
    file()["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone()
}

fn b2() -> Value {
    row("B2")["input"].clone()
}

fn presented() -> Value {
    row("B6")["input"]["presented"].clone()
}

fn h() -> AtrHash {
    atr_hash(ABC)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

fn channel() -> &'static dyn Channel {
    pairing().channel().unwrap()
}

/// The payer's wallet: Anvil key #0 signs every `eip712` request; an `evm-calls` request it broadcasts is answered
/// with `answer` (a transaction hash). Every request is recorded.
struct Wallet {
    key: LocalSigner,
    account: String,
    answer: String,
    calls: Mutex<Vec<SigningRequest>>,
}

impl Wallet {
    fn new(answer: &str) -> Self {
        let key = LocalSigner::from_hex(file()["fixed"]["payerKey"].as_str().unwrap(), 84_532).unwrap();
        Self {
            key,
            account: b2()["account"].as_str().unwrap().to_owned(),
            answer: answer.to_owned(),
            calls: Mutex::default(),
        }
    }

    fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::Eip712 { typed_data } => {
                Ok(json!(self.key.sign_digest(&typed_data.signing_hash().unwrap().0)?))
            }
            SigningRequest::Batch { requests } => {
                requests.iter().map(|r| self.answer(r)).collect::<Result<Vec<_>, _>>().map(Value::Array)
            }
            _ => Ok(json!(self.answer)),
        }
    }

    fn calls(&self) -> Vec<SigningRequest> {
        self.calls.lock().unwrap().clone()
    }
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.lock().unwrap().push(request.clone());
        let answer = self.answer(request).map(Answer::new);
        Box::pin(async move { answer })
    }
}

fn hash_answer() -> String {
    file()["ES9"]["hash"].as_str().unwrap().to_owned()
}

fn options(inputs: &Map<String, Value>) -> Options {
    Options::new().clock(FixedClock(b2()["now"].as_u64().unwrap())).ids(CountingIds::default()).inputs(inputs.clone())
}

fn b2_inputs() -> Map<String, Value> {
    b2()["inputs"].as_object().unwrap().clone()
}

/// transact over `doc`, its link (where the pairing reads one) serving "abc".
fn transact_doc(doc: &Value, inputs: &Map<String, Value>, wallet: &Wallet) -> Result<TransactOutcome, Declined> {
    let fetch = match pairing().read(doc) {
        Ok(read) => ScriptedFetch::new().script(&read.link, vec![Reply::ok(ABC)]),
        Err(_) => ScriptedFetch::new(),
    };
    paused().block_on(transact(doc, pairing(), wallet, &fetch, &options(inputs)))
}

fn opened(t: TransactOutcome) -> Value {
    match t {
        TransactOutcome::Signed(s) => s.signed.unwrap().to_value(),
        other => panic!("not signed: {other:?}"),
    }
}

fn run_within(doc: &Value, hold: &ChannelHold, wallet: &Wallet, refund: Option<&Refund>) -> Result<Within, Declined> {
    paused().block_on(within(doc, hold, pairing(), wallet, refund, &Options::new().ids(CountingIds::default())))
}

/// The text of a JSON value, its members in order: two payments are the same bytes when these are equal.
fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

#[track_caller]
fn declined<T: std::fmt::Debug>(got: &Result<T, Declined>, code: &str, detail: &str) {
    match got {
        Ok(v) => panic!("expected {code} ({detail}), got {v:?}"),
        Err(d) => assert_eq!((d.code.as_str(), d.detail.as_str()), (code, detail)),
    }
}

fn b64u(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A challenge the seller issues within the channel: its own id, the request's amount, the channel named where given,
/// an opaque where given.
fn seller_challenge(amount: &str, channel: Option<&str>, opaque: Option<Value>) -> Value {
    let mut request: Value = serde_json::from_str(file()["fixed"]["request"].as_str().unwrap()).unwrap();
    request["amount"] = json!(amount);
    if let Some(channel) = channel {
        request["methodDetails"]["channelId"] = json!(channel);
    }
    let mut c = json!({
        "realm": "api.seller.example",
        "method": "evm",
        "intent": "session",
        "request": b64u(terms::json::canonical(&request).unwrap().as_bytes()),
        "id": "seller-1",
    });
    if let Some(opaque) = opaque {
        c["opaque"] = json!(b64u(terms::json::canonical(&opaque).unwrap().as_bytes()));
    }
    c
}

fn voucher_digest(request: &SigningRequest) -> alloy_primitives::B256 {
    let SigningRequest::Batch { requests } = request else { panic!("not a batch: {request:?}") };
    let [SigningRequest::Eip712 { typed_data }] = requests.as_slice() else { panic!("not one voucher: {requests:?}") };
    assert_eq!(typed_data.primary_type, "Voucher");
    typed_data.signing_hash().unwrap()
}

fn recovers(signature: &Value, digest: alloy_primitives::B256) -> String {
    let raw = ::hex::decode(&signature.as_str().unwrap()[2..]).unwrap();
    Signature::from_raw(&raw).unwrap().recover_address_from_prehash(&digest).unwrap().to_checksum(None)
}

#[test]
fn a_session_opens_pays_twice_records_and_closes() {
    let wallet = Wallet::new(&hash_answer());
    let opening = opened(transact_doc(&b2()["doc"], &b2_inputs(), &wallet).unwrap());
    // Two signer calls: the deposit's ReceiveWithAuthorization, then the first voucher over the channel id.
    let kinds: Vec<String> = wallet
        .calls()
        .iter()
        .map(|r| match r {
            SigningRequest::Eip712 { typed_data } => typed_data.primary_type.clone(),
            other => other.kind().to_owned(),
        })
        .collect();
    assert_eq!(kinds, ["ReceiveWithAuthorization", "Voucher"]);
    assert_eq!(text(&opening), text(&presented()), "B6's opening, byte for byte");
    assert_eq!(check(ABC, &opening, pairing()).unwrap().h, h());
    let header = terms::Payment::from_value(&opening).authorization().unwrap();
    assert_eq!(terms::mpp::decode_credential(&header).unwrap(), opening);

    let hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    assert_eq!((hold.pairing.as_str(), hold.network.as_str()), (ID, "eip155:84532"));
    assert_eq!(json!(hold.channel), file()["ES1"]["expectChannelId"]);
    assert_eq!((hold.charged.as_str(), hold.signed_max.as_str(), hold.h.as_str()), ("0", "0", h().to_hex().as_str()));

    // Request 2: the seller's challenge names the held channel; only its amount is read.
    let first = run_within(&json!([seller_challenge("100", Some(&hold.channel), None)]), &hold, &wallet, None).unwrap();
    let payload = &first.signed["payload"];
    assert_eq!((payload["action"].clone(), payload["cumulativeAmount"].clone()), (json!("voucher"), json!("100")));
    assert_eq!(payload["channelId"], json!(hold.channel));
    assert_eq!(channel().kind(&first.signed, None), Ok(ChannelKind::Within));
    assert_eq!(channel().bound_within(&first.signed).unwrap_err().code(), "mpp/not-bound-within");
    let digest = voucher_digest(&wallet.calls()[2]);
    assert_eq!(recovers(&payload["signature"], digest), file()["fixed"]["payer"].as_str().unwrap());
    assert_eq!(first.hold.signed_max, "100");
    let hold = record_charge(&first.hold, "100").unwrap();

    // Request 3: a challenge that names no channel (the opening's own), in the held one.
    let second = run_within(&b2()["doc"], &hold, &wallet, None).unwrap();
    assert_eq!(second.signed["payload"]["cumulativeAmount"], json!("200"));
    assert_eq!(second.hold.signed_max, "200");
    let hold = record_charge(&second.hold, "200").unwrap();
    declined(
        &record_charge(&hold, "201"),
        "offer-unreadable",
        "The charged amount is above the largest amount signed in the channel.",
    );

    // The close: the final voucher claims the recorded charge.
    let closed = run_within(&b2()["doc"], &hold, &wallet, Some(&Refund::close())).unwrap();
    let payload = &closed.signed["payload"];
    assert_eq!((payload["action"].clone(), payload["cumulativeAmount"].clone()), (json!("close"), json!("200")));
    assert_eq!(channel().kind(&closed.signed, None), Ok(ChannelKind::Close));
    assert_eq!(channel().channel_ref(&closed.signed, None).unwrap().channel, hold.channel);
    assert_eq!(wallet.calls().len(), 5, "two for the opening, one per voucher");
}

#[test]
fn the_plan_of_a_voucher_quotes_its_cumulative_amount_of_the_held_token() {
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let hold = ChannelHold { charged: "0".into(), ..hold };
    let doc = json!([seller_challenge("100", Some(&hold.channel), None)]);
    let inputs = Map::new();
    let args = WithinArgs { doc: &doc, hold: &hold, h: &h(), refund: None, inputs: &inputs };
    let plan = channel().plan_within(&args).unwrap();
    assert_eq!((plan.cumulative.as_str(), plan.precheck), ("100", true));
    let f = file();
    let want = Quote::new(
        U256::from(100u64),
        f["fixed"]["usdc"].as_str().unwrap(),
        f["fixed"]["recipient"].as_str().unwrap(),
        "eip155:84532",
        "session",
    );
    assert_eq!(plan.quote, Some(want));
    assert_eq!(plan.batch.requests().len(), 1);
}

#[test]
fn the_inputs_and_the_quote() {
    let specs: Vec<(&str, bool)> = pairing().inputs().iter().map(|s| (s.name, s.required)).collect();
    assert_eq!(
        specs,
        [("deposit", true), ("authorizedSigner", false), ("credentialType", false), ("tokenDomain", false)]
    );
    let f = file();
    let fetch = ScriptedFetch::new().script(&pairing().read(&b2()["doc"]).unwrap().link, vec![Reply::ok(ABC)]);
    let account = b2()["account"].as_str().unwrap().to_owned();
    let confirmed =
        paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&b2_inputs()))).unwrap();
    let quote = pairing().quote(&confirmed.chosen).unwrap();
    let base = Quote::new(
        U256::ZERO,
        f["fixed"]["usdc"].as_str().unwrap(),
        f["fixed"]["recipient"].as_str().unwrap(),
        "eip155:84532",
        "session",
    )
    .with_deposit(U256::from(5_000_000u64));
    assert_eq!(quote, base.clone().with_window(Some(0), Some(1_790_000_060)));

    let with = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let mut chosen = confirmed.chosen.clone();
        edit(&mut chosen.build_input);
        chosen
    };
    let funded = |t: &str| with(&|c| drop(c.insert("credentialType".into(), json!(t))));
    assert_eq!(pairing().quote(&funded("permit2")).unwrap(), base.clone().with_window(None, Some(1_790_000_060)));
    assert_eq!(pairing().quote(&funded("hash")).unwrap(), base);

    // The quote refuses what the build refuses, with the build's code.
    let cases: Vec<(&str, terms::Chosen)> = vec![
        ("mpp/input-malformed", with(&|c| drop(c.insert("deposit".into(), json!("0"))))),
        (
            "mpp/input-malformed",
            with(&|c| drop(c.insert("deposit".into(), json!("340282366920938463463374607431768211456")))),
        ),
        ("mpp/input-malformed", with(&|c| drop(c.remove("deposit")))),
        ("mpp/choice-malformed", with(&|c| drop(c.insert("deposit".into(), json!(5))))),
        ("mpp/credential-types", funded("transaction")),
        ("mpp/input-malformed", with(&|c| drop(c.remove("tokenDomain")))),
        ("mpp/input-malformed", with(&|c| drop(c.insert("authorizedSigner".into(), json!("0x12"))))),
        ("mpp/input-malformed", with(&|c| drop(c.insert("from".into(), json!("0x12"))))),
        ("mpp/credential-malformed", with(&|c| drop(c.remove("challenge")))),
    ];
    for (code, chosen) in cases {
        assert_eq!(pairing().quote(&chosen).unwrap_err().code(), code, "{:?}", chosen.build_input);
        assert_eq!(pairing().build(&chosen, ABC, &h()).err().map(|r| r.code()).as_deref(), Some(code));
    }
    // Built with other bytes, the challenge's id does not carry their hash.
    let other = b"abd";
    assert_eq!(pairing().build(&confirmed.chosen, other, &atr_hash(other)).err().unwrap().code(), "mpp/id-not-ours");
}

#[test]
fn a_voucher_for_another_channel_is_declined_before_the_signer() {
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let wallet = Wallet::new(&hash_answer());
    let other = format!("0x{}", "11".repeat(32));
    let got = run_within(&json!([seller_challenge("100", Some(&other), None)]), &hold, &wallet, None);
    declined(&got, "no-payable-option", "The challenge names a channel this hold did not open.");
    // The held channel named on another chain is no challenge of the hold.
    let mut elsewhere = seller_challenge("100", Some(&hold.channel), None);
    let mut request: Value = serde_json::from_str(file()["fixed"]["request"].as_str().unwrap()).unwrap();
    request["methodDetails"]["chainId"] = json!(8453);
    request["methodDetails"]["channelId"] = json!(hold.channel);
    elsewhere["request"] = json!(b64u(terms::json::canonical(&request).unwrap().as_bytes()));
    declined(&run_within(&json!([elsewhere]), &hold, &wallet, None), "no-payable-option", "mpp/no-payable-option");
    assert_eq!(wallet.calls().len(), 0);
}

#[test]
fn a_challenge_naming_another_h_is_declined_before_the_signer() {
    let f = file();
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let wallet = Wallet::new(&hash_answer());
    let other = json!({"legalContext": format!("lcp:sha256:{}", f["fixed"]["H2"].as_str().unwrap())});
    let got = run_within(&json!([seller_challenge("100", Some(&hold.channel), Some(other))]), &hold, &wallet, None);
    declined(&got, "hash-mismatch", "The challenge names another ATR's hash than the one this channel opened for.");
    // The opening: B2's plant, the link serving another ATR than the one the challenge's id carries.
    let fetch = ScriptedFetch::new().script(&pairing().read(&b2()["doc"]).unwrap().link, vec![Reply::ok(&b"abd"[..])]);
    let got = paused().block_on(transact(&b2()["doc"], pairing(), &wallet, &fetch, &options(&b2_inputs())));
    assert_eq!(got.unwrap_err().code.as_str(), "hash-mismatch");
    // A hold whose opening was for another ATR.
    let planted = ChannelHold { atr: "YWJk".into(), h: atr_hash(b"abd").to_hex(), ..hold };
    let got = run_within(&b2()["doc"], &planted, &wallet, None);
    declined(&got, "signed-not-bound", "The pairing does not read the held ATR's hash from the held opening.");
    assert_eq!(wallet.calls().len(), 0);
}

#[test]
fn a_did_pkh_source_for_another_chain_is_refused() {
    let other_chain = |p: &Value| {
        let mut p = p.clone();
        p["source"] = json!(p["source"].as_str().unwrap().replace(":84532:", ":8453:"));
        p
    };
    let authorization = other_chain(&presented());
    assert_eq!(pairing().bound(&authorization, None).unwrap_err().code(), "mpp/credential-malformed");
    assert_eq!(check(ABC, &authorization, pairing()).unwrap_err().code.as_str(), "signed-not-bound");
    declined(
        &open_channel(ABC, &authorization, pairing(), None),
        "signed-not-bound",
        "The pairing does not read the hash of the compared bytes from the opening.",
    );
    // A hash opening names its payer by the source alone: on another chain, it names none.
    let mut inputs = b2_inputs();
    inputs.insert("credentialType".into(), json!("hash"));
    let hashed = opened(transact_doc(&b2()["doc"], &inputs, &Wallet::new(&hash_answer())).unwrap());
    assert_eq!(pairing().bound(&hashed, None), Ok(h()));
    assert_eq!(pairing().bound(&other_chain(&hashed), None).unwrap_err().code(), "mpp/source-required");
}

#[test]
fn a_hash_opening_is_broadcast_by_the_signer_and_a_later_decline_keeps_what_moved() {
    let mut inputs = b2_inputs();
    inputs.insert("credentialType".into(), json!("hash"));
    let wallet = Wallet::new("0x1234");
    let got = transact_doc(&b2()["doc"], &inputs, &wallet);
    let d = got.unwrap_err();
    assert_eq!((d.code.as_str(), d.detail.as_str()), ("signed-not-bound", "mpp/credential-malformed"));
    assert_eq!(d.moved.unwrap().signed, json!("0x1234"), "the one answer, as the reference keeps it");
    let first = &wallet.calls()[0];
    assert!(pairing().moves(first) && first.broadcasts());
    // Completed with a hash, the voucher comes next, then the credential.
    let wallet = Wallet::new(&hash_answer());
    let opening = opened(transact_doc(&b2()["doc"], &inputs, &wallet).unwrap());
    assert_eq!(opening["payload"]["hash"], json!(hash_answer()));
    assert_eq!(opening["payload"]["type"], json!("hash"));
    assert!(!pairing().moves(&wallet.calls()[1]));
}

#[test]
fn the_voucher_step_takes_only_answers_of_its_form() {
    let fetch = ScriptedFetch::new().script(&pairing().read(&b2()["doc"]).unwrap().link, vec![Reply::ok(ABC)]);
    let account = b2()["account"].as_str().unwrap().to_owned();
    let c =
        paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&b2_inputs()))).unwrap();
    let unsigned = pairing().build(&c.chosen, ABC, &h()).unwrap();
    let sig = format!("0x{}", "11".repeat(65));
    assert!(matches!(unsigned.complete(&[json!(sig).into()], &c.chosen), Ok(Completion::Next(_))));
    for answers in [
        vec![json!("0x").into()],
        vec![json!(1).into()],
        vec![json!(sig).into(), json!("0xzz").into()],
        vec![json!(sig).into(), json!("0x").into()],
        vec![json!(sig).into(), json!(sig).into(), json!(sig).into()],
        vec![],
    ] {
        let got = unsigned.complete(&answers, &c.chosen).map(|c| c.payment_value());
        assert_eq!(got.unwrap_err().code(), "mpp/credential-malformed", "{answers:?}");
    }
}

/// What the reference answers, as the crate answers it: the signed payment's text, or the decline's code, detail and
/// whether it keeps what moved.
fn outcome<T>(got: Result<T, Declined>, signed: impl FnOnce(T) -> Value) -> Value {
    match got {
        Ok(t) => json!({"signed": signed(t)}),
        Err(d) => json!({"code": d.code.as_str(), "detail": d.detail, "moved": d.moved.is_some()}),
    }
}

fn same(what: &str, got: &Value, want: &Value) {
    assert_eq!(text(got), text(want), "{what}");
}

/// A signing request with the crate's two known differences of form taken out: an EIP-712 request's `types` list
/// `EIP712Domain` (the reference's voucher leaves it out), and its message's integers are decimal strings (the
/// reference hands JSON integers; its fixture writes them as decimal strings, a uint256 being past a double). Neither
/// changes the EIP-712 digest, so the signatures are the same.
fn as_the_reference_writes(mut request: Value) -> Value {
    fn strings(v: &mut Value) {
        match v {
            Value::Number(n) => *v = Value::String(n.to_string()),
            Value::Object(m) => m.values_mut().for_each(strings),
            Value::Array(a) => a.iter_mut().for_each(strings),
            _ => {}
        }
    }
    if request["kind"] == "eip712" {
        let typed = &mut request["typedData"];
        typed["types"].as_object_mut().unwrap().shift_remove("EIP712Domain");
        strings(&mut typed["message"]);
    }
    request
}

#[test]
fn openings_match_the_reference() {
    let peer = peer();
    for case in peer["openings"].as_array().unwrap() {
        let name = case["case"].as_str().unwrap();
        let wallet = Wallet::new(case["answer"].as_str().unwrap());
        let got = transact_doc(&case["doc"], case["inputs"].as_object().unwrap(), &wallet);
        same(name, &outcome(got, opened), &case["outcome"]);
        let requests: Vec<Value> = wallet.calls().iter().map(|r| as_the_reference_writes(r.to_json())).collect();
        let want: Vec<Value> =
            case["requests"].as_array().unwrap().iter().cloned().map(as_the_reference_writes).collect();
        assert_eq!(requests, want, "{name}: the requests");
    }
}

#[test]
fn withins_match_the_reference() {
    let peer = peer();
    let start = open_channel(ABC, &presented(), pairing(), None).unwrap();
    for case in peer["withins"].as_array().unwrap() {
        let name = case["case"].as_str().unwrap();
        let hold = match case["before"].as_array() {
            None => start.clone(),
            Some(_) => {
                let first = run_within(&case["before"], &start, &Wallet::new(&hash_answer()), None).unwrap();
                record_charge(&first.hold, case["charged"].as_str().unwrap()).unwrap()
            }
        };
        let refund: Option<Refund> = serde_json::from_value(case["refund"].clone()).unwrap();
        let wallet = Wallet::new(&hash_answer());
        let got = run_within(&case["doc"], &hold, &wallet, refund.as_ref());
        let mut signed_max = None;
        let got = outcome(got, |w| {
            signed_max = Some(w.hold.signed_max.clone());
            w.signed
        });
        let mut want = case["outcome"].clone();
        let peer_max = want.as_object_mut().unwrap().remove("signedMax");
        same(name, &got, &want);
        assert_eq!(signed_max.map(Value::String), peer_max, "{name}");
        assert_eq!(wallet.calls().len() as u64, case["calls"].as_u64().unwrap(), "{name}");
    }
}

/// Where the crate answers otherwise than the reference, and why.
const BOUND_DIFFERENCES: [(&str, &str); 2] = [
    // The reference reads no chain from the source; the crate refuses a source naming a payer on another chain than
    // the channel's.
    ("B6 with a source on another chain", "mpp/credential-malformed"),
    ("a hash opening with a source on another chain", "mpp/source-required"),
];

#[test]
fn bounds_match_the_reference_but_for_a_source_on_another_chain() {
    let peer = peer();
    for case in peer["bounds"].as_array().unwrap() {
        let name = case["case"].as_str().unwrap();
        let got = match pairing().bound(&case["presented"], None) {
            Ok(h) => h.to_hex(),
            Err(r) => r.code(),
        };
        let want = BOUND_DIFFERENCES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or_else(|| case["expect"].as_str().unwrap().to_owned(), |(_, code)| (*code).to_owned());
        assert_eq!(got, want, "{name}");
    }
    for (name, _) in BOUND_DIFFERENCES {
        let case = peer["bounds"].as_array().unwrap().iter().find(|c| c["case"] == name).unwrap();
        assert_eq!(case["expect"], json!(h().to_hex()), "the reference reads H from {name}");
    }
    // An authorized signer: the channel id the opening names commits to it.
    let wallet = Wallet::new(&hash_answer());
    let mut inputs = b2_inputs();
    inputs.insert("authorizedSigner".into(), json!(ANVIL_1));
    let opening = opened(transact_doc(&b2()["doc"], &inputs, &wallet).unwrap());
    assert_eq!(opening["payload"]["authorizedSigner"], json!(ANVIL_1));
    assert_ne!(opening["payload"]["channelId"], file()["ES1"]["expectChannelId"]);
    assert_eq!(pairing().bound(&opening, None), Ok(h()));
}

/// A spend policy reads the opening's quote (the deposit it locks) and each voucher's increase over the hold's
/// largest signed amount: over the cap, each is refused before the signer is asked (the opening before the fetch).
#[test]
fn a_spend_policy_caps_the_deposit_and_each_vouchers_increase() {
    use std::sync::Arc;
    use terms::safety::policy::Policy;
    let policy = |cap: &str| {
        let text = format!(
            r#"
resources = ["*"]
networks = ["eip155:84532"]

[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "{cap}"
"#
        );
        Arc::new(Policy::from_toml_str(&text).unwrap())
    };
    let wallet = Wallet::new(&hash_answer());
    let fetch = ScriptedFetch::new().script(&pairing().read(&b2()["doc"]).unwrap().link, vec![Reply::ok(ABC)]);
    let capped = options(&b2_inputs()).policy(policy("1000"));
    let got = paused().block_on(transact(&b2()["doc"], pairing(), &wallet, &fetch, &capped));
    declined(&got, "policy-refused", "policy/amount-above-cap");
    assert_eq!((fetch.asked().len(), wallet.calls().len()), (0, 0));

    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    let vouchers = Options::new().ids(CountingIds::default()).policy(policy("1000"));
    let run = |amount: &str| {
        let doc = json!([seller_challenge(amount, Some(&hold.channel), None)]);
        paused().block_on(within(&doc, &hold, pairing(), &wallet, None, &vouchers))
    };
    assert_eq!(run("1000").unwrap().hold.signed_max, "1000");
    declined(&run("1001"), "policy-refused", "policy/amount-above-cap");
    assert_eq!(wallet.calls().len(), 1);
}
