//! `mpp/session/solana`, from `tests/vectors/mpp-session-hedera-solana-xrpl.json`'s own data: the buyer rows of the
//! pairing (B2, the plant; B6, check over SV2's opening), the placed challenge (SS1), the salt (SV1), the opening the
//! channel client answers (SV2), the voucher and the session proof (SV3), the operator mode's two steps (SV5), the
//! plant of another H's salt, the refusals of the file that concern Solana, a session opened by `transact`, paid in
//! and closed through the gate's channel steps, and the bad input of issue 14, each code the reference's
//! (integraledger-terms 0.4.0, run on the same input). Every key of the file is run here or listed by name (in
//! [`every_key_is_run_or_listed`], and as ignored tests for the Hedera rows, whose pairing is not built, and the XRPL
//! rows, run in `tests/xrpl_session.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

#[path = "mpp_session_solana/bad_input.rs"]
mod bad_input;

use std::sync::Mutex;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use support::rows::{request_of, unix_of};
use support::{Reply, ScriptedFetch, paused, vectors};
use terms::pairing::{Channel, ChannelHold, ChannelKind};
use terms::rail::solana::{Key, Transaction, decode};
use terms::{
    Answer, BoxFuture, FixedClock, Options, Pairing, Refund, Signer, SignerError, SigningRequest, SolanaKey,
    SolanaSigner, TransactOutcome, atr_hash, open_channel, record_charge, transact, within,
};

const FILE: &str = "mpp-session-hedera-solana-xrpl.json";
const ID: &str = "mpp/session/solana";
const ABC: &[u8] = b"abc";

fn file() -> Value {
    vectors(FILE)
}

fn pairing() -> &'static dyn Pairing {
    terms::pairing(ID).unwrap()
}

fn channel() -> &'static dyn Channel {
    pairing().channel().unwrap()
}

/// This pairing's buyer row `name`.
fn row(name: &str) -> Value {
    let f = file();
    let rows = f["buyer"]["rows"].as_array().unwrap();
    rows.iter().find(|r| r["name"] == name && r["pairing"] == ID).unwrap().clone()
}

/// B6's payment: SV2's opening, as the file holds it.
fn presented() -> Value {
    row("B6")["input"]["presented"].clone()
}

/// SS1's placed Solana challenge (H of `abc`).
fn placed() -> Value {
    file()["SS1"]["solana"]["placed"].clone()
}

/// The buyer's clock: one second before the file's `expires`. The B2 row names no time; the crate's choose skips a
/// challenge that has expired, so the rows run at a time the challenge is live.
fn now() -> u64 {
    unix_of(file()["fixed"]["expires"].as_str().unwrap()) - 1
}

fn hex(text: &str) -> Vec<u8> {
    support::hex(text.strip_prefix("0x").unwrap_or(text))
}

fn to_hex(bytes: &[u8]) -> String {
    format!("0x{}", ::hex::encode(bytes))
}

fn b64(text: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap()
}

/// The challenge with its request replaced (base64url of its RFC 8785 form).
fn with_request(mut c: Value, request: &Value) -> Value {
    let text = terms::json::canonical(request).unwrap();
    c["request"] = json!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text));
    c
}

/// The challenge with `methodDetails` members set (a `null` removes one).
fn with_details(c: &Value, set: &Value) -> Value {
    let mut request = request_of(c);
    for (k, v) in set.as_object().unwrap() {
        let d = request["methodDetails"].as_object_mut().unwrap();
        if v.is_null() {
            d.remove(k);
        } else {
            d.insert(k.clone(), v.clone());
        }
    }
    with_request(c.clone(), &request)
}

/// SS1's placed challenge in operator mode: SV5's `methodDetails`.
fn operator_challenge() -> Value {
    with_details(&placed(), &file()["SV5"]["methodDetails"])
}

fn credential(challenge: &Value, payload: Value) -> Value {
    json!({"challenge": challenge, "payload": payload})
}

fn bound_of(presented: &Value) -> Result<String, String> {
    pairing().bound(presented, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// The payer's key: seed 01, the payer of the Solana fixtures (x402-exact-solana.json's `payerSeed`), on the B2
/// account's network.
fn payer() -> SolanaSigner {
    let seed = vectors("x402-exact-solana.json")["fixed"]["payerSeed"].as_str().unwrap().to_owned();
    let account = row("B2")["input"]["account"].as_str().unwrap().to_owned();
    let network = account.rsplit_once(':').unwrap().0.to_owned();
    SolanaKey::from_seed_hex(&seed).unwrap().on_network(&network).unwrap()
}

/// The buyer's wallet: its channel client answers `solana-session-open` with `open` (the payload it composed and
/// signed), and the payer's key answers `ed25519-raw`.
struct Wallet {
    key: SolanaSigner,
    open: Value,
    calls: Mutex<Vec<SigningRequest>>,
}

impl Wallet {
    fn new(open: Value) -> Self {
        Self { key: payer(), open, calls: Mutex::new(Vec::new()) }
    }

    fn calls(&self) -> Vec<SigningRequest> {
        self.calls.lock().unwrap().clone()
    }
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        self.key.account()
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.calls.lock().unwrap().push(request.clone());
        match request {
            SigningRequest::SolanaSessionOpen(_) => {
                let open = Answer::new(self.open.clone());
                Box::pin(async move { Ok(open) })
            }
            other => self.key.sign(other),
        }
    }
}

fn options() -> Options {
    Options::new().clock(FixedClock(now()))
}

/// transact over `doc`, its link serving "abc".
fn transact_doc(doc: &Value, wallet: &Wallet) -> Result<Value, terms::Declined> {
    let link = pairing().read(doc).unwrap().link;
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    match paused().block_on(transact(doc, pairing(), wallet, &fetch, &options()))? {
        TransactOutcome::Signed(s) => Ok(s.signed.unwrap().to_value()),
        other => panic!("not signed: {other:?}"),
    }
}

/// The channel program's open instruction of a transaction: its data and its accounts' keys.
fn open_ix(tx: &Transaction, program: &str) -> (Vec<u8>, Vec<Key>) {
    let program = Key::parse(program).unwrap();
    let ix = tx.instructions.iter().find(|ix| tx.program_of(ix) == Some(&program)).unwrap();
    (ix.data.clone(), ix.accounts.iter().map(|i| tx.keys[usize::from(*i)]).collect())
}

fn details_of(c: &Value) -> Value {
    request_of(c)["methodDetails"].clone()
}

/// A challenge the seller issues within the channel: its own id, the request's `amount`, the channel named.
fn seller_challenge(amount: &str, channel: &str) -> Value {
    let mut request = request_of(&placed());
    request["amount"] = json!(amount);
    request["methodDetails"]["channelId"] = json!(channel);
    let c = json!({"realm": "api.seller.example", "method": "solana", "intent": "session", "id": "seller-1"});
    with_request(c, &request)
}

fn run_within(doc: &Value, hold: &ChannelHold, signer: &dyn Signer, refund: Option<&Refund>) -> terms::Within {
    paused().block_on(within(doc, hold, pairing(), signer, refund, &Options::new())).unwrap()
}

#[test]
fn b2_the_plant_declines_before_the_signer() {
    let f = file();
    let mut r = row("B2");
    let link = terms::mpp::read(&r["input"]["doc"]).unwrap().link;
    r["input"]["now"] = json!(now());
    support::plant_declines_before_the_signer(&f, &r, &link, pairing());
}

#[test]
fn b6_check_over_the_files_payment() {
    support::b6_checks(&row("B6"), pairing());
}

/// SS1: the placed challenge carries H (`fixed.H`) in its id (`fixed.MV1`) and opaque (`fixed.opaque`), and is the
/// one B2's document offers.
#[test]
fn ss1_the_placed_challenge_carries_h() {
    let f = file();
    let c = placed();
    assert_eq!(c["id"], f["fixed"]["MV1"]);
    assert_eq!(c["opaque"], f["fixed"]["opaque"]);
    let h = terms::AtrHash::parse(f["fixed"]["H"].as_str().unwrap()).unwrap();
    assert_eq!(terms::mpp::challenge_id(&h, 0).unwrap(), c["id"].as_str().unwrap());
    assert_eq!(terms::mpp::read(&json!([c])).unwrap().h.to_hex(), f["fixed"]["H"].as_str().unwrap());
    assert_eq!(row("B2")["input"]["doc"][0], c);
    // The challenge before placement is the placed one without id and opaque.
    let mut unplaced = c;
    unplaced.as_object_mut().unwrap().retain(|k, _| k != "id" && k != "opaque");
    assert_eq!(unplaced, f["SS1"]["solana"]["challenge"]);
}

/// SV1 and SV2: `transact` hands the channel client the `solana-session-open` request (the salt SV1's, H's first 8
/// bytes read little-endian, and the challenge's program, network, blockhash and slot); the client answers SV2's open
/// (B6's payload), which completes the credential B6 holds. SV2's wire: its length, its message's SHA-256, the open's
/// data and channel, and its bound.
#[test]
fn sv1_sv2_the_open_request_and_the_opening() {
    let f = file();
    let wallet = Wallet::new(presented()["payload"].clone());
    let signed = transact_doc(&row("B2")["input"]["doc"], &wallet).unwrap();
    assert_eq!(signed, presented());
    let calls = wallet.calls();
    let [SigningRequest::SolanaSessionOpen(fields)] = calls.as_slice() else { panic!("{calls:?}") };
    let salt = fields["salt"].as_u64().unwrap();
    assert_eq!(salt.to_string(), f["SV1"]["expectSalt"].as_str().unwrap());
    assert_eq!(format!("0x{salt:016x}"), f["SV1"]["expectSaltHex"].as_str().unwrap());
    let h = hex(f["fixed"]["H"].as_str().unwrap());
    assert_eq!(salt.to_le_bytes(), h[..8], "the salt's encoded bytes are H's first 8");
    let d = details_of(&placed());
    let network = wallet.account().rsplit_once(':').unwrap().0.to_owned();
    assert_eq!(fields["network"], json!(network));
    for k in ["channelProgram", "recentBlockhash"] {
        assert_eq!(fields[k], d[k], "{k}");
    }
    assert_eq!(fields["recentSlot"].to_string(), d["recentSlot"].as_str().unwrap());

    let sv2 = &f["SV2"];
    assert_eq!(presented()["payload"]["transaction"], sv2["wireBase64"]);
    let wire = b64(&sv2["wireBase64"]);
    assert_eq!(wire.len() as u64, sv2["wireLength"].as_u64().unwrap());
    let tx = decode(&wire).unwrap();
    assert_eq!(to_hex(&Sha256::digest(&tx.message)), sv2["expectMessageSha256"].as_str().unwrap());
    let (data, accounts) = open_ix(&tx, d["channelProgram"].as_str().unwrap());
    assert_eq!(::hex::encode(&data), sv2["expectOpenData"].as_str().unwrap());
    assert_eq!(data[1..9], salt.to_le_bytes());
    assert_eq!(accounts[5].to_base58(), sv2["channel"].as_str().unwrap());
    assert_eq!(presented()["payload"]["channelId"], sv2["channel"]);
    assert_eq!(bound_of(&presented()), Ok(sv2["expectBound"].as_str().unwrap().to_owned()));
    // The opening's channel, as the gate keys a hold: SV2's reference network and channel.
    let r = channel().channel_ref(&presented(), None).unwrap();
    assert_eq!(
        (r.network.as_str(), r.channel.as_str()),
        (sv2["expectReference"]["network"].as_str().unwrap(), sv2["expectReference"]["channel"].as_str().unwrap())
    );
    assert_eq!(channel().kind(&presented(), None), Ok(ChannelKind::Open));
}

/// SV3: a voucher in the channel SV2 opened signs the channel voucher message (its cumulative amount read from the
/// row's message), as `ed25519-raw` for the open's authorized signer, the payer; three payments then the close,
/// through the gate's channel steps. And the session proof's text over SV2's channel, SV3's payer and the challenge.
#[test]
fn sv3_the_voucher_in_the_channel_and_the_close() {
    let f = file();
    let sv3 = &f["SV3"];
    let hold = open_channel(ABC, &presented(), pairing(), None).unwrap();
    assert_eq!(hold.channel, f["SV2"]["channel"].as_str().unwrap());
    assert_eq!(hold.signed_max, "0");
    let want = hex(sv3["expectVoucher"].as_str().unwrap());
    let cumulative = u64::from_le_bytes(want[34..42].try_into().unwrap());
    let key = payer();
    assert_eq!(key.account().rsplit_once(':').unwrap().1, sv3["payer"].as_str().unwrap());

    let doc = json!([seller_challenge(&cumulative.to_string(), &hold.channel)]);
    let wallet = Wallet::new(Value::Null);
    let paid = run_within(&doc, &hold, &wallet, None);
    let calls = wallet.calls();
    let [SigningRequest::Batch { requests }] = calls.as_slice() else { panic!("{calls:?}") };
    let [SigningRequest::Ed25519Raw(fields)] = requests.as_slice() else { panic!("{requests:?}") };
    assert_eq!(fields["message"], json!(to_hex(&want)));
    assert_eq!(fields["signer"], sv3["payer"]);
    let v = &paid.signed["payload"];
    assert_eq!((v["action"].as_str(), v["channelId"].as_str()), (Some("voucher"), Some(hold.channel.as_str())));
    assert_eq!(v["voucher"]["voucher"], json!({"channelId": hold.channel, "cumulativeAmount": cumulative.to_string()}));
    assert_eq!(
        (v["voucher"]["signer"].clone(), v["voucher"]["signatureType"].clone()),
        (sv3["payer"].clone(), json!("ed25519"))
    );
    let signature = bs58::decode(v["voucher"]["signature"].as_str().unwrap()).into_vec().unwrap();
    let verifying =
        ed25519_dalek::VerifyingKey::from_bytes(&Key::parse(sv3["payer"].as_str().unwrap()).unwrap().0).unwrap();
    verifying.verify_strict(&want, &ed25519_dalek::Signature::from_slice(&signature).unwrap()).unwrap();
    assert_eq!(paid.hold.signed_max, cumulative.to_string());
    assert_eq!(channel().kind(&paid.signed, None), Ok(ChannelKind::Within));
    assert_eq!(channel().bound_within(&paid.signed).unwrap_err().code(), "mpp/not-bound-within");

    // Two more requests of the same amount, each charged, then the close at the recorded charge.
    let mut hold = record_charge(&paid.hold, &cumulative.to_string()).unwrap();
    for n in 2..=3u64 {
        let paid = run_within(&doc, &hold, &wallet, None);
        assert_eq!(
            paid.signed["payload"]["voucher"]["voucher"]["cumulativeAmount"],
            json!((n * cumulative).to_string())
        );
        hold = record_charge(&paid.hold, &(n * cumulative).to_string()).unwrap();
    }
    let closed = run_within(&doc, &hold, &wallet, Some(&Refund::close()));
    assert_eq!(closed.signed["payload"]["action"], "close");
    assert_eq!(closed.signed["payload"]["voucher"]["voucher"]["cumulativeAmount"], json!((3 * cumulative).to_string()));
    assert_eq!(channel().kind(&closed.signed, None), Ok(ChannelKind::Close));
}

/// SV5 and SV3's proof: under an operator voucher signer, the build asks for `solana-session-open`, then the payer's
/// `ed25519-raw` signature of the session proof (SV3's text), whose hex is SV3's signature, and the credential's
/// `authentication` is SV5's, with that signature in base58.
///
/// SV5 has the channel client answer SV2's open, whose authorized signer (account 4) is the payer: the reference
/// (0.4.0) declines that credential `signed-not-bound` (`svm/signer-not-operator`), as draft-solana-session-00 has the
/// operator mode's open authorize the operator, and so does the crate. The client here answers SV2's open with the
/// operator as its authorized signer (the message recompiled with that one account changed), which both take.
#[test]
fn sv5_the_operator_modes_proof() {
    let f = file();
    let (sv3, sv5) = (&f["SV3"], &f["SV5"]);
    let challenge = operator_challenge();
    let doc = json!([challenge]);
    let wallet = Wallet::new(presented()["payload"].clone());
    let got = transact_doc(&doc, &wallet).unwrap_err();
    assert_eq!((got.code.as_str(), got.detail.as_str()), ("signed-not-bound", "svm/signer-not-operator"));

    let operator = Key::parse(sv5["methodDetails"]["operator"].as_str().unwrap()).unwrap();
    let open = bad_input::open_with(&presented()["payload"], |accounts| accounts[4] = operator);
    let wallet = Wallet::new(open.clone());
    let signed = transact_doc(&doc, &wallet).unwrap();
    let kinds: Vec<&str> = wallet.calls().iter().map(SigningRequest::kind).collect();
    let want: Vec<&str> = sv5["expectRequestKinds"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(kinds, want);
    let SigningRequest::Ed25519Raw(fields) = &wallet.calls()[1] else { panic!() };
    let message = hex(fields["message"].as_str().unwrap());
    assert_eq!(String::from_utf8(message.clone()).unwrap(), sv3["expectProofText"].as_str().unwrap());
    let digest = ::hex::encode(Sha256::digest(&message));
    assert!(digest.starts_with(sv3["expectProofSha256Prefix"].as_str().unwrap()), "{digest}");
    assert!(digest.ends_with(sv3["expectProofSha256Suffix"].as_str().unwrap()), "{digest}");

    let auth = &signed["payload"]["authentication"];
    let keys: Vec<&String> = auth.as_object().unwrap().keys().collect();
    assert_eq!(json!(keys), sv5["expectAuthenticationKeys"]);
    for (k, v) in sv5["expectAuthentication"].as_object().unwrap() {
        assert_eq!(&auth[k], v, "{k}");
    }
    let signature = ::hex::encode(bs58::decode(auth["signature"].as_str().unwrap()).into_vec().unwrap());
    assert!(signature.starts_with(sv3["expectProofSignaturePrefix"].as_str().unwrap()), "{signature}");
    assert!(signature.ends_with(sv3["expectProofSignatureSuffix"].as_str().unwrap()), "{signature}");
    let mut rest = signed["payload"].clone();
    rest.as_object_mut().unwrap().remove("authentication");
    assert_eq!(rest, open);
    assert_eq!(bound_of(&signed), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
}

/// plants.solana: SV2 built with the salt of H2 (`expectSaltH2`), its wire's SHA-256 the row's, is not this
/// challenge's (`mpp/carrier-not-challenge`); and a `use` whose bearer proof names another challenge id is
/// `svm/proof-not-challenge`.
#[test]
fn the_plant_another_hs_salt() {
    let f = file();
    let p = &f["plants"]["solana"];
    let wire = b64(&p["wireBase64"]);
    let digest = ::hex::encode(Sha256::digest(&wire));
    assert!(digest.starts_with(p["expectWireSha256Prefix"].as_str().unwrap()), "{digest}");
    assert!(digest.ends_with(p["expectWireSha256Suffix"].as_str().unwrap()), "{digest}");
    let tx = decode(&wire).unwrap();
    let (data, accounts) = open_ix(&tx, details_of(&placed())["channelProgram"].as_str().unwrap());
    assert_eq!(u64::from_le_bytes(data[1..9].try_into().unwrap()).to_string(), p["expectSaltH2"].as_str().unwrap());
    assert_eq!(data[1..9], hex(f["fixed"]["H2"].as_str().unwrap())[..8]);
    assert_eq!(accounts[5].to_base58(), p["channel"].as_str().unwrap());
    let payload = json!({"action": "open", "channelId": p["channel"], "transaction": p["wireBase64"]});
    assert_eq!(bound_of(&credential(&placed(), payload)), Err(p["expect"].as_str().unwrap().to_owned()));

    let challenge = operator_challenge();
    let auth = |id: &Value| json!({"type": "proof", "challengeId": id, "payer": f["SV3"]["payer"], "signature": "x"});
    let used = |id: &Value| {
        credential(&challenge, json!({"action": "use", "channelId": f["SV2"]["channel"], "authentication": auth(id)}))
    };
    let wrong = used(&p["useWrongChallengeId"]);
    assert_eq!(channel().bound_within(&wrong).unwrap_err().code(), p["expectUse"].as_str().unwrap());
    assert_eq!(channel().kind(&wrong, None), Ok(ChannelKind::Within));
    let right = used(&challenge["id"]);
    assert_eq!(channel().bound_within(&right).map(|h| h.to_hex()), Ok(f["fixed"]["H"].as_str().unwrap().to_owned()));
}

/// SS1refusals' Solana row (a challenge naming a channel) and agreedRefusals' rows that concern Solana: a network
/// absent or not one of MPP's names; a credential whose action is not open, to bound; a malformed `from` to the build.
#[test]
fn the_files_refusals_that_concern_solana() {
    let f = file();
    let payload = presented()["payload"].clone();
    for r in f["SS1refusals"].as_array().unwrap().iter().filter(|r| r["method"] == "solana") {
        let c = with_request(placed(), &r["request"]);
        assert_eq!(bound_of(&credential(&c, payload.clone())), Err(r["expect"].as_str().unwrap().to_owned()), "{r}");
    }
    let agreed = f["agreedRefusals"]["rows"].as_array().unwrap();
    let code = |needle: &str| {
        let r = agreed.iter().find(|r| r["case"].as_str().unwrap().contains(needle)).unwrap();
        r["expect"].as_str().unwrap().to_owned()
    };
    let network = code("a solana session request whose network");
    for n in [Value::Null, json!("testnet"), json!(""), json!(5)] {
        let c = if n.is_null() {
            with_details(&placed(), &json!({"network": null}))
        } else {
            with_details(&placed(), &json!({"network": n}))
        };
        assert_eq!(bound_of(&credential(&c, payload.clone())), Err(network.clone()), "network {n}");
    }
    let mut not_open = payload;
    not_open["action"] = json!("voucher");
    assert_eq!(bound_of(&credential(&placed(), not_open)), Err(code("bound of a credential whose action is not open")));

    let doc = json!([placed()]);
    let read = pairing().read(&doc).unwrap();
    let inputs = Map::new();
    let account = row("B2")["input"]["account"].as_str().unwrap().to_owned();
    let ctx =
        terms::pairing::ChooseContext { account: &account, inputs: &inputs, now: now(), reference: "r", doc: &doc };
    let mut chosen = pairing().choose(&read, &ctx).unwrap();
    chosen.build_input.insert("from".into(), json!("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"));
    let h = atr_hash(ABC);
    assert_eq!(pairing().build(&chosen, ABC, &h).err().unwrap().code(), code("build with a malformed from"));
}

/// The deposit is the opening's one input: optional, a decimal; the quote reports it beside a first claim of 0 of
/// the request's currency to its recipient, on the challenge's network, until its `expires`.
#[test]
fn the_deposit_and_the_quote() {
    let f = file();
    let doc = json!([placed()]);
    let read = pairing().read(&doc).unwrap();
    let account = row("B2")["input"]["account"].as_str().unwrap().to_owned();
    let choose = |inputs: Value| {
        let inputs = inputs.as_object().unwrap().clone();
        terms::pairing::check_inputs(pairing(), &inputs).map_err(|r| r.code())?;
        let ctx =
            terms::pairing::ChooseContext { account: &account, inputs: &inputs, now: now(), reference: "r", doc: &doc };
        pairing().choose(&read, &ctx).map_err(|r| r.code())
    };
    // Each form the reference refuses is mpp/input-missing there too (integraledger-terms 0.4.0's confirm).
    for bad in [json!("abc"), json!(5), Value::Null, json!("9".repeat(79))] {
        assert_eq!(choose(json!({"deposit": bad})).unwrap_err(), "mpp/input-missing", "{bad}");
    }
    let request = request_of(&placed());
    let q = pairing().quote(&choose(json!({})).unwrap()).unwrap();
    assert_eq!((q.amount.to_string(), q.deposit), ("0".to_owned(), None));
    assert_eq!((json!(q.asset), json!(q.payee)), (request["currency"].clone(), request["recipient"].clone()));
    assert_eq!(q.network, f["SV2"]["expectReference"]["network"].as_str().unwrap());
    assert_eq!(q.valid_before, Some(unix_of(f["fixed"]["expires"].as_str().unwrap())));
    let q = pairing().quote(&choose(json!({"deposit": "1000"})).unwrap()).unwrap();
    assert_eq!(q.deposit.map(|d| d.to_string()), Some("1000".to_owned()));
    assert_eq!(pairing().inputs().iter().map(|s| (s.name, s.required)).collect::<Vec<_>>(), [("deposit", false)]);
}

#[test]
fn every_key_is_run_or_listed() {
    support::keys_run_or_listed(
        FILE,
        &["fixed", "SS1", "SS1refusals", "SV1", "SV2", "SV3", "SV5", "plants", "agreedRefusals", "buyer"],
        &[
            ("about", "prose"),
            ("HS1", "mpp/session/hedera, not built"),
            ("HS2", "mpp/session/hedera, not built"),
            ("HS3", "mpp/session/hedera, not built"),
            ("HS4", "mpp/session/hedera, not built"),
            ("HS5", "mpp/session/hedera, not built"),
            ("XS1", "mpp/session/xrpl: tests/xrpl_session.rs"),
            ("XS2", "mpp/session/xrpl: tests/xrpl_session.rs"),
            ("XS3", "mpp/session/xrpl: tests/xrpl_session.rs"),
            ("XS4", "mpp/session/xrpl: tests/xrpl_session.rs"),
            ("XS5", "mpp/session/xrpl: tests/xrpl_session.rs"),
            ("SV4", "the verifier's status read of a landed close, not the buyer's"),
        ],
    );
}

#[test]
#[ignore = "not run: mpp/session/hedera is not built"]
fn hedera_rows() {
    for key in ["HS1", "HS2", "HS3", "HS4", "HS5", "/SS1/hedera", "/plants/hedera"] {
        let pointer = if key.starts_with('/') { key.to_owned() } else { format!("/{key}") };
        support::member_not_run(FILE, &pointer);
    }
}

#[test]
#[ignore = "not run here: mpp/session/xrpl's rows are run in tests/xrpl_session.rs"]
fn xrpl_rows() {
    for key in ["XS1", "XS2", "XS3", "XS4", "XS5", "/SS1/xrpl", "/plants/xrpl"] {
        let pointer = if key.starts_with('/') { key.to_owned() } else { format!("/{key}") };
        support::member_not_run(FILE, &pointer);
    }
}

#[test]
#[ignore = "not run: SS1's Hedera and XRPL refusals and agreedRefusals' Hedera and XRPL rows are those pairings'"]
fn other_rails_refusals() {
    support::member_not_run(FILE, "/SS1refusals/0");
    support::member_not_run(FILE, "/agreedRefusals/rows/0");
}

#[test]
#[ignore = "not run: the Hedera and XRPL pairings' B2 and B6 buyer rows; those pairings are not built"]
fn other_rails_buyer_rows() {
    support::member_not_run(FILE, "/buyer/rows/0");
}

#[test]
#[ignore = "not run: the seller's issued digest, not the buyer's"]
fn ss1_expect_issued_digest() {
    support::member_not_run(FILE, "/SS1/solana/expectIssuedDigest");
}

#[test]
#[ignore = "not run: the settlement reference a verifier keeps (its digest, fee payer and blockhash)"]
fn sv2_expect_reference() {
    support::member_not_run(FILE, "/SV2/expectReference/digest");
}

#[test]
#[ignore = "not run: the verifier's status read of a landed close (settled, failed not-a-close)"]
fn sv4_landed_close() {
    support::member_not_run(FILE, "/SV4/case");
}

#[test]
#[ignore = "not run: the reference's solanaVoucher helper, which this crate does not expose (a voucher amount past \
            2^64 - 1 is refused by the channel's within, mpp/input-malformed, in the bad input)"]
fn agreed_refusal_solana_voucher() {
    let f = file();
    let rows = f["agreedRefusals"]["rows"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["case"].as_str().unwrap().starts_with("solanaVoucher")));
}
