//! `mpp/session/tempo`, from `tests/vectors/mpp-session-tempo.json`'s own data: the buyer rows (B2, the plant; B6,
//! check over the file's v2 opening), the open call and the signed wire (TS1, TS2), the v2 channel id and vouchers
//! (TS3, TS4), the v1 channel and voucher (TS5), the landed v2 open (L1), the plant of another salt (plant1), the
//! constants and the pattern; a session opened by `transact` with the payer's key (the transaction the file's TS2
//! describes, then the zero voucher), three requests paid in it, the charge recorded, and the close; and the bad input
//! of issue 16, each code confirmed on the reference (integraledger-terms 0.4.0) with the same input. Every key of
//! the file is run here or listed by name (in [`every_key_is_run_or_listed`]) with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

#[path = "mpp_session_tempo/bad_input.rs"]
mod bad_input;

use std::sync::Mutex;
use support::rows::request_of;

use alloy_primitives::{Address, B256, Bytes, U256, keccak256};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use support::{Reply, ScriptedFetch, paused, vectors};
use terms::pairing::{Channel, ChannelHold, ChannelKind, Completion};
use terms::rail::tempo::channel::{Descriptor, OPEN_V2_SELECTOR};
use terms::rail::tempo::transaction::{EMPTY_LIST, TempoCall, TempoTransaction};
use terms::{
    Answer, AtrHash, BoxFuture, DeclineCode, Declined, FixedClock, LocalSigner, Options, Pairing, Quote, Refund,
    Signer, SignerError, SigningRequest, TransactOutcome, Within, atr_hash, check, open_channel, record_charge,
    transact, within,
};

const ID: &str = "mpp/session/tempo";
const ABC: &[u8] = b"abc";

fn file() -> Value {
    vectors("mpp-session-tempo.json")
}

fn fixed(key: &str) -> String {
    file()["fixed"][key].as_str().unwrap().to_owned()
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

fn hex(text: &str) -> Vec<u8> {
    support::hex(text.strip_prefix("0x").unwrap_or(text))
}

fn to_hex(bytes: &[u8]) -> String {
    format!("0x{}", ::hex::encode(bytes))
}

/// Whether `0x` hex starts with the row's `prefix` and ends with its `suffix`.
fn prefix_suffix(text: &str, want: &Value) -> bool {
    text.starts_with(want["prefix"].as_str().unwrap()) && text.ends_with(want["suffix"].as_str().unwrap())
}

fn b64u(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The challenge with its request replaced (base64url of its RFC 8785 form).
fn with_request(mut c: Value, request: &Value) -> Value {
    c["request"] = json!(b64u(terms::json::canonical(request).unwrap().as_bytes()));
    c
}

/// The 0x76 transaction TS2 describes for a `tempo-call` request: `rlp([chainId, 1, 2, 200000, [[to, 0, data]], [],
/// 2^256−1, 0, validBefore, "", pathUSD, "", [], signature])`, signed by `key` (r ‖ s ‖ v, v 27 or 28).
fn signed_call(key: &LocalSigner, fields: &Map<String, Value>) -> TempoTransaction {
    let call = &fields["call"];
    let mut tx = TempoTransaction {
        chain_id: fields["chainId"].as_u64().unwrap(),
        max_priority_fee_per_gas: 1,
        max_fee_per_gas: 2,
        gas_limit: 200_000,
        calls: vec![TempoCall {
            to: Some(call["to"].as_str().unwrap().parse().unwrap()),
            value: U256::ZERO,
            input: hex(call["data"].as_str().unwrap()).into(),
        }],
        access_list: Bytes::from_static(&EMPTY_LIST),
        nonce_key: U256::MAX,
        nonce: 0,
        valid_before: fields["validBefore"].as_u64(),
        valid_after: None,
        fee_token: Some(fixed("pathUSD").parse().unwrap()),
        fee_payer_signature: None,
        authorization_list: Bytes::from_static(&EMPTY_LIST),
        key_authorization: None,
        signature: Bytes::new(),
    };
    resign(key, &mut tx);
    tx
}

fn resign(key: &LocalSigner, tx: &mut TempoTransaction) {
    let digest = keccak256(tx.sender_signed());
    tx.signature = hex(&key.sign_digest(&digest.0).unwrap()).into();
}

fn payer_key() -> LocalSigner {
    LocalSigner::from_hex(&fixed("payerKey"), 42_431).unwrap()
}

/// The payer's wallet: the payer's key signs each `tempo-call` as [`signed_call`] and every `eip712` request. Every
/// request is recorded.
struct Wallet {
    key: LocalSigner,
    account: String,
    calls: Mutex<Vec<SigningRequest>>,
}

impl Wallet {
    fn new() -> Self {
        Self { key: payer_key(), account: b2()["account"].as_str().unwrap().to_owned(), calls: Mutex::default() }
    }

    fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::Eip712 { typed_data } => {
                Ok(json!(self.key.sign_digest(&typed_data.signing_hash().unwrap().0)?))
            }
            SigningRequest::Batch { requests } => {
                requests.iter().map(|r| self.answer(r)).collect::<Result<Vec<_>, _>>().map(Value::Array)
            }
            SigningRequest::TempoCall(fields) => Ok(json!(to_hex(&signed_call(&self.key, fields).encode()))),
            other => Err(SignerError::new(format!("not a request of this session: {}", other.kind()))),
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

fn options(inputs: &Map<String, Value>) -> Options {
    Options::new().clock(FixedClock(b2()["now"].as_u64().unwrap())).inputs(inputs.clone())
}

fn b2_inputs() -> Map<String, Value> {
    b2()["inputs"].as_object().unwrap().clone()
}

/// transact over `doc`, its link serving "abc".
fn transact_doc(doc: &Value, inputs: &Map<String, Value>, wallet: &Wallet) -> Result<TransactOutcome, Declined> {
    let link = pairing().read(doc).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    paused().block_on(transact(doc, pairing(), wallet, &fetch, &options(inputs)))
}

fn opened(t: TransactOutcome) -> Value {
    match t {
        TransactOutcome::Signed(s) => s.signed.unwrap().to_value(),
        other => panic!("not signed: {other:?}"),
    }
}

fn run_within(doc: &Value, hold: &ChannelHold, wallet: &Wallet, refund: Option<&Refund>) -> Result<Within, Declined> {
    paused().block_on(within(doc, hold, pairing(), wallet, refund, &Options::new()))
}

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

/// A challenge the seller issues within the channel: its own id, the request's `amount`, the channel named where
/// given, over `request` (B2's v2 request where `None`).
fn seller_challenge(amount: &str, channel: Option<&str>, request: Option<Value>) -> Value {
    let mut request = request.unwrap_or_else(|| request_of(&b2()["doc"][0]));
    request["amount"] = json!(amount);
    if let Some(channel) = channel {
        request["methodDetails"]["channelId"] = json!(channel);
    }
    let c = json!({"realm": "api.seller.example", "method": "tempo", "intent": "session", "id": "seller-1"});
    with_request(c, &request)
}

/// The digest of the one voucher of a within batch (or of an `eip712` request).
fn voucher_digest(request: &SigningRequest) -> B256 {
    let typed = match request {
        SigningRequest::Batch { requests } => match requests.as_slice() {
            [SigningRequest::Eip712 { typed_data }] => typed_data,
            other => panic!("not one voucher: {other:?}"),
        },
        SigningRequest::Eip712 { typed_data } => typed_data,
        other => panic!("not a voucher: {other:?}"),
    };
    assert_eq!(typed.primary_type, "Voucher");
    typed.signing_hash().unwrap()
}

/// The bound over a credential: H as hex, or the refusal's code.
fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// B6's signed transaction, read.
fn b6_tx() -> TempoTransaction {
    TempoTransaction::decode(&hex(presented()["payload"]["transaction"].as_str().unwrap())).unwrap()
}

fn with_tx(mut credential: Value, tx: &TempoTransaction) -> Value {
    credential["payload"]["transaction"] = json!(to_hex(&tx.encode()));
    credential
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    // As `support::plant_declines_before_the_signer`, with the buyer's inputs the row names (the deposit).
    let r = row("B2");
    assert_eq!(r["pairing"], ID);
    let i = &r["input"];
    let served = hex(i["servesHex"].as_str().unwrap());
    assert_eq!(atr_hash(&served).to_hex(), r["servedHash"].as_str().unwrap());
    assert_eq!(terms::mpp::read(&i["doc"]).unwrap().h.to_hex(), r["advertised"].as_str().unwrap());
    let link = pairing().read(&i["doc"]).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(served)]);
    let wallet = Wallet::new();
    let got = paused().block_on(transact(&i["doc"], pairing(), &wallet, &fetch, &options(&b2_inputs())));
    let want: DeclineCode = serde_json::from_value(r["expect"]["decline"].clone()).unwrap();
    assert_eq!(got.unwrap_err().code, want);
    assert_eq!(wallet.calls().len() as u64, r["expect"]["signCalls"].as_u64().unwrap());
}

#[test]
fn b6_check_over_the_files_payment() {
    let r = row("B6");
    assert_eq!(r["pairing"], ID);
    support::b6_checks(&r, pairing());
}

/// TS1 and TS2: the build's `open` call (its length and selector, and the fixed values at their words), and the
/// transaction the payer signs for it, which is B6's, of TS2's length, SHA-256 and expiring nonce hash.
#[test]
fn ts1_ts2_the_open_call_and_the_signed_wire() {
    let f = file();
    let wallet = Wallet::new();
    let opening = opened(transact_doc(&b2()["doc"], &b2_inputs(), &wallet).unwrap());
    let SigningRequest::TempoCall(fields) = &wallet.calls()[0] else { panic!("not a tempo-call") };
    assert_eq!((fields["chainId"].clone(), fields["broadcast"].clone()), (f["fixed"]["chainId"].clone(), json!(false)));
    assert_eq!(fields["call"]["to"], f["fixed"]["escrowV2"]);
    let data = hex(fields["call"]["data"].as_str().unwrap());
    assert_eq!(data.len() as u64, f["TS1"]["expectLength"].as_u64().unwrap());
    assert_eq!(to_hex(&data[..4]), f["TS1"]["expectSelector"].as_str().unwrap());
    assert_eq!(to_hex(&OPEN_V2_SELECTOR), f["TS1"]["expectSelector"].as_str().unwrap());
    assert_eq!(to_hex(&data[4 + 4 * 32..4 + 5 * 32]), fixed("H"), "the salt word is H");
    let deposit = U256::from_be_slice(&data[4 + 3 * 32..4 + 4 * 32]);
    assert_eq!(deposit.to_string(), fixed("deposit"));

    let wire = hex(opening["payload"]["transaction"].as_str().unwrap());
    assert_eq!(wire.len() as u64, f["TS2"]["expectLength"].as_u64().unwrap());
    assert_eq!(to_hex(&Sha256::digest(&wire)), f["TS2"]["expectSha256"].as_str().unwrap());
    let tx = TempoTransaction::decode(&wire).unwrap();
    let payer: Address = fixed("payer").parse().unwrap();
    assert_eq!(tx.sender(), Ok(payer));
    assert_eq!(tx.expiring_nonce_hash(payer).to_string(), f["TS2"]["expectNonceHash"].as_str().unwrap());
    assert_eq!(opening["payload"]["descriptor"]["expiringNonceHash"], f["TS2"]["expectNonceHash"]);
}

/// TS3 and TS4: the v2 channel id the descriptor gives (and with H2 as its salt), the zero voucher's and a 250
/// voucher's EIP-712 digests, and a descriptor naming another salt, refused.
#[test]
fn ts3_ts4_the_v2_channel_and_its_vouchers() {
    let f = file();
    let p = presented();
    let d = &p["payload"]["descriptor"];
    let address = |k: &str| d[k].as_str().unwrap().parse::<Address>().unwrap();
    let hash = |k: &str| d[k].as_str().unwrap().parse::<B256>().unwrap();
    let mut descriptor = Descriptor {
        payer: address("payer"),
        payee: address("payee"),
        operator: address("operator"),
        token: address("token"),
        salt: hash("salt"),
        authorized_signer: address("authorizedSigner"),
        expiring_nonce_hash: hash("expiringNonceHash"),
    };
    let escrow: Address = fixed("escrowV2").parse().unwrap();
    let chain = f["fixed"]["chainId"].as_u64().unwrap();
    assert_eq!(descriptor.channel_id(escrow, chain).to_string(), f["TS3"]["expectChannelId"].as_str().unwrap());
    assert_eq!(p["payload"]["channelId"], f["TS3"]["expectChannelId"]);
    descriptor.salt = fixed("H2").parse().unwrap();
    assert!(prefix_suffix(&descriptor.channel_id(escrow, chain).to_string(), &f["TS4"]["expectChannelIdH2"]));

    // The zero voucher the opening signs, then a voucher of 250 in the held channel.
    let wallet = Wallet::new();
    let opening = opened(transact_doc(&b2()["doc"], &b2_inputs(), &wallet).unwrap());
    assert_eq!(text(&opening), text(&p), "B6's opening, byte for byte");
    assert_eq!(voucher_digest(&wallet.calls()[1]).to_string(), f["TS4"]["expectVoucher0"].as_str().unwrap());
    let hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    run_within(&json!([seller_challenge("250", Some(&hold.channel), None)]), &hold, &wallet, None).unwrap();
    assert!(prefix_suffix(&voucher_digest(&wallet.calls()[2]).to_string(), &f["TS4"]["expectVoucher250"]));

    let mut other = p.clone();
    other["payload"]["descriptor"]["salt"] = json!(fixed("H2"));
    let want = &f["TS4"]["expectMismatch"];
    assert_eq!(want["refused"], true);
    assert_eq!(bound_of(&other), Err(want["code"].as_str().unwrap().to_owned()));
}

/// TS5: a v1 session (the EVM session escrow's contract on Tempo) opened by `transact`: its channel id, and its zero
/// voucher's digest under "Tempo Stream Channel".
#[test]
fn ts5_a_v1_session_opens_on_the_evm_channel_id() {
    let f = file();
    let request: Value = serde_json::from_str(&fixed("requestV1")).unwrap();
    let mut doc = b2()["doc"].clone();
    doc[0]["request"] = json!(b64u(fixed("requestV1").as_bytes()));
    let wallet = Wallet::new();
    let opening = opened(transact_doc(&doc, &b2_inputs(), &wallet).unwrap());
    assert_eq!(opening["payload"]["channelId"], f["TS5"]["expectChannelId"]);
    assert!(opening["payload"].get("descriptor").is_none(), "a v1 credential carries no descriptor");
    assert!(prefix_suffix(&voucher_digest(&wallet.calls()[1]).to_string(), &f["TS5"]["expectVoucher"]));
    let SigningRequest::TempoCall(fields) = &wallet.calls()[0] else { panic!("not a tempo-call") };
    assert_eq!(fields["call"]["to"], request["methodDetails"]["escrowContract"]);
    assert_eq!(hex(fields["call"]["data"].as_str().unwrap()).len(), 164);
    assert_eq!(check(ABC, &opening, pairing()).unwrap().h, h());
    // A v1 voucher carries no H: it signs the channel id the opening bound.
    let hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    let paid = run_within(&json!([seller_challenge("100", Some(&hold.channel), Some(request))]), &hold, &wallet, None);
    let paid = paid.unwrap();
    assert_eq!(channel().bound_within(&paid.signed).unwrap_err().code(), "mpp/not-bound-within");
    assert_eq!(paid.signed["payload"]["cumulativeAmount"], json!("100"));
}

/// L1: the live v2 open on Moderato: its salt word, its sender's expiring nonce hash, and the channel id its
/// descriptor gives, which the escrow's ChannelOpened log names.
#[test]
fn l1_the_landed_open_gives_its_channel_id() {
    let f = file();
    let l1 = &f["L1"];
    let raw = hex(l1["raw"].as_str().unwrap());
    let tx = TempoTransaction::decode(&raw).unwrap();
    let sender: Address = l1["sender"].as_str().unwrap().parse().unwrap();
    assert_eq!(tx.sender(), Ok(sender));
    let [call] = tx.calls.as_slice() else { panic!("one call") };
    assert_eq!(call.input[..4], OPEN_V2_SELECTOR);
    let word = |i: usize| &call.input[4 + 32 * i..4 + 32 * (i + 1)];
    let salt = B256::from_slice(word(4));
    assert!(prefix_suffix(&salt.to_string(), &l1["expectSalt"]));
    let nonce_hash = tx.expiring_nonce_hash(sender);
    assert!(prefix_suffix(&nonce_hash.to_string(), &l1["expectNonceHash"]));
    let address = |i: usize| Address::from_slice(&word(i)[12..]);
    let d = Descriptor {
        payer: sender,
        payee: address(0),
        operator: address(1),
        token: address(2),
        salt,
        authorized_signer: address(5),
        expiring_nonce_hash: nonce_hash,
    };
    let id = d.channel_id(call.to.unwrap(), tx.chain_id).to_string();
    assert!(prefix_suffix(&id, &l1["expectChannelId"]));
    let opened_log = &l1["receipt"]["logs"][1];
    assert_eq!(opened_log["topics"][1].as_str().unwrap(), id);
    assert_eq!(opened_log["address"].as_str().unwrap(), f["constants"]["expectTip20ChannelReserve"].as_str().unwrap());
}

/// plant1: B6's transaction with its salt word replaced by H2 and re-signed, against the challenge whose id carries H.
#[test]
fn plant1_an_opening_salted_with_another_hash_is_not_bound() {
    let f = file();
    let mut tx = b6_tx();
    let mut input = tx.calls[0].input.to_vec();
    input[4 + 4 * 32..4 + 5 * 32].copy_from_slice(&hex(&fixed("H2")));
    tx.calls[0].input = input.into();
    resign(&payer_key(), &mut tx);
    assert_eq!(f["plant1"]["expect"]["refused"], true);
    assert_eq!(bound_of(&with_tx(presented(), &tx)), Err(f["plant1"]["expect"]["code"].as_str().unwrap().into()));
    assert_eq!(check(ABC, &with_tx(presented(), &tx), pairing()).unwrap_err().code, DeclineCode::SignedNotBound);
}

/// The constants: the two `open` signatures' selectors (v1's the EVM session escrow's), and the channel reserve's
/// address.
#[test]
fn constants_the_open_selectors_and_the_reserve() {
    let f = file();
    let c = &f["constants"];
    let selector = |sig: &str| to_hex(&keccak256(sig.as_bytes())[..4]);
    assert_eq!(selector(c["OPEN_V2"].as_str().unwrap()), to_hex(&OPEN_V2_SELECTOR));
    assert_eq!(selector(c["OPEN_V1"].as_str().unwrap()), to_hex(&terms::rail::evm::session::OPEN_SELECTOR));
    assert_eq!(c["expectTip20ChannelReserve"].as_str().unwrap(), fixed("escrowV2").to_lowercase());
}

/// The pattern's flags the registry states: a public proof, and a channel.
#[test]
fn pattern_the_registry_agrees() {
    let f = file();
    let e = terms::entry(ID).unwrap();
    assert_eq!(f["pattern"]["publicProof"], json!(e.public_proof));
    assert!(e.channel && pairing().channel().is_some());
    assert!(terms::built_ids().contains(&ID));
}

#[test]
fn a_session_opens_pays_three_requests_records_and_closes() {
    let wallet = Wallet::new();
    let opening = opened(transact_doc(&b2()["doc"], &b2_inputs(), &wallet).unwrap());
    let calls = wallet.calls();
    let kinds: Vec<&str> = calls.iter().map(SigningRequest::kind).collect();
    assert_eq!(kinds, ["tempo-call", "eip712"]);
    assert_eq!(channel().kind(&opening, None), Ok(ChannelKind::Open));
    let mut hold = open_channel(ABC, &opening, pairing(), None).unwrap();
    assert_eq!((hold.pairing.as_str(), hold.network.as_str()), (ID, "eip155:42431"));
    assert_eq!(json!(hold.channel), file()["TS3"]["expectChannelId"]);
    assert_eq!((hold.charged.as_str(), hold.signed_max.as_str()), ("0", "0"));

    // Three requests: the first and third name the held channel, the second names none (the opening's own terms).
    let docs = [
        json!([seller_challenge("100", Some(&hold.channel), None)]),
        b2()["doc"].clone(),
        json!([seller_challenge("250", Some(&hold.channel), None)]),
    ];
    let mut charged = 0u64;
    for (doc, price) in docs.iter().zip([100u64, 100, 250]) {
        let paid = run_within(doc, &hold, &wallet, None).unwrap();
        let payload = &paid.signed["payload"];
        charged += price;
        assert_eq!(
            (payload["action"].clone(), payload["cumulativeAmount"].clone()),
            (json!("voucher"), json!(charged.to_string()))
        );
        assert_eq!(payload["channelId"], json!(hold.channel));
        assert_eq!(payload["descriptor"], opening["payload"]["descriptor"], "a v2 voucher carries the descriptor");
        assert_eq!(channel().kind(&paid.signed, None), Ok(ChannelKind::Within));
        assert_eq!(channel().bound_within(&paid.signed), Ok(h()), "a v2 voucher's descriptor carries H");
        hold = record_charge(&paid.hold, &charged.to_string()).unwrap();
    }
    declined(
        &record_charge(&hold, "451"),
        "offer-unreadable",
        "The charged amount is above the largest amount signed in the channel.",
    );
    let closed = run_within(&b2()["doc"], &hold, &wallet, Some(&Refund::close())).unwrap();
    let payload = &closed.signed["payload"];
    assert_eq!((payload["action"].clone(), payload["cumulativeAmount"].clone()), (json!("close"), json!("450")));
    assert_eq!(channel().kind(&closed.signed, None), Ok(ChannelKind::Close));
    assert_eq!(channel().channel_ref(&closed.signed, None).unwrap().channel, hold.channel);
    assert_eq!(wallet.calls().len(), 6, "two for the opening, one per voucher");
}

#[test]
fn the_inputs_and_the_quote() {
    let specs: Vec<(&str, bool)> = pairing().inputs().iter().map(|s| (s.name, s.required)).collect();
    // The reference's session piece keeps credentialType and tokenDomain in the choice for a Tempo session too.
    assert_eq!(
        specs,
        [("deposit", true), ("authorizedSigner", false), ("credentialType", false), ("tokenDomain", false)]
    );
    let link = pairing().read(&b2()["doc"]).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    let account = b2()["account"].as_str().unwrap().to_owned();
    let confirmed =
        paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&b2_inputs()))).unwrap();
    let quote = pairing().quote(&confirmed.chosen).unwrap();
    let deposit: u64 = fixed("deposit").parse().unwrap();
    let want = Quote::new(U256::ZERO, fixed("pathUSD"), fixed("recipient"), "eip155:42431", "session")
        .with_deposit(U256::from(deposit))
        .with_window(None, Some(b2()["now"].as_u64().unwrap() + 60));
    assert_eq!(quote, want);
    let with = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let mut chosen = confirmed.chosen.clone();
        edit(&mut chosen.build_input);
        chosen
    };
    let other = b"abd";
    assert_eq!(pairing().build(&confirmed.chosen, other, &atr_hash(other)).err().unwrap().code(), "mpp/id-not-ours");
    for (code, chosen) in [
        ("mpp/input-malformed", with(&|c| drop(c.insert("deposit".into(), json!("0"))))),
        ("mpp/input-malformed", with(&|c| drop(c.remove("deposit")))),
        ("mpp/choice-malformed", with(&|c| drop(c.insert("deposit".into(), json!(5))))),
        ("mpp/input-malformed", with(&|c| drop(c.insert("authorizedSigner".into(), json!("0x12"))))),
        ("mpp/input-malformed", with(&|c| drop(c.insert("from".into(), json!("0x12"))))),
    ] {
        assert_eq!(pairing().quote(&chosen).unwrap_err().code(), code, "{:?}", chosen.build_input);
        assert_eq!(pairing().build(&chosen, ABC, &h()).err().map(|r| r.code()).as_deref(), Some(code));
    }
}

#[test]
fn the_voucher_step_takes_only_answers_of_its_form() {
    let link = pairing().read(&b2()["doc"]).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    let account = b2()["account"].as_str().unwrap().to_owned();
    let c =
        paused().block_on(terms::confirm(&b2()["doc"], pairing(), &account, &fetch, &options(&b2_inputs()))).unwrap();
    let unsigned = pairing().build(&c.chosen, ABC, &h()).unwrap();
    let wire = presented()["payload"]["transaction"].clone();
    assert!(matches!(unsigned.complete(&[wire.clone().into()], &c.chosen), Ok(Completion::Next(_))));
    let sig = format!("0x{}", "11".repeat(65));
    for (answers, code) in [
        (vec![json!("0x").into()], "tempo/tx-malformed"),
        (vec![json!(1).into()], "mpp/credential-malformed"),
        (vec![json!("0x76zz").into()], "mpp/credential-malformed"),
        (vec![wire.clone().into(), json!("0x").into()], "mpp/credential-malformed"),
        (vec![wire.into(), json!(sig).into(), json!(sig).into()], "mpp/credential-malformed"),
        (vec![], "mpp/credential-malformed"),
    ] {
        let got = unsigned.complete(&answers, &c.chosen).map(|c| c.payment_value());
        assert_eq!(got.unwrap_err().code(), code, "{answers:?}");
    }
}

#[test]
fn every_key_is_run_or_listed() {
    let run = ["fixed", "constants", "TS1", "TS2", "TS3", "TS4", "TS5", "L1", "plant1", "pattern", "buyer"];
    let listed = [("about", "prose"), ("TS6", "settlement statuses on receipts: what a verifier reads, not the buyer")];
    for key in file().as_object().unwrap().keys() {
        assert!(
            run.contains(&key.as_str()) || listed.iter().any(|(k, _)| k == key),
            "key {key} neither run nor listed"
        );
    }
    // Not run of the keys run: TS3's and TS5's expectCloseRef (the binding log a verifier searches for the close),
    // L1's receipt status and block, the constants' ChannelOpened, ChannelClosed and KeyRevoked events and the
    // account keychain (a verifier's and the subscription's), and the pattern's prose.
}
