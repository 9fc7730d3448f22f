//! The pieces the pairings call, driven from `tests/vectors/mpp-challenge.json`'s own data: choose, the choice held
//! for the build, the credential completed from one answer and read back by bound, and the filters of the
//! chain-free methods. Where the file leaves a case open, the code is the Python peer's (integraledger-terms 0.4.0),
//! run on the same inputs; the one deliberate difference, an expired challenge, is marked.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::challenge::{check_challenge, checked_for};
use super::credential::{Credential, echoed_for};
use super::methods::{CARD_CHARGE, EVM_CHARGE, EVM_SESSION, NEAR_INTENTS_CHARGE, STRIPE_CHARGE, USDC_CHARGE};
use super::pieces::{OneAnswer, Piece};
use super::read;
use crate::codec::b64u_encode;
use crate::hash::AtrHash;
use crate::pairing::{ChooseContext, Chosen, Completion, InputSpec, InputType, Unsigned};
use crate::signer::{Answer, SigningRequest};

const AUTHORIZATION: &str = "mpp/charge/evm/authorization";
const ACCOUNT: &str = "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const INPUTS: &[InputSpec] = &[InputSpec::required("tokenDomain", InputType::Object, "the token's EIP-712 domain")];

fn vectors() -> Value {
    serde_json::from_str(include_str!("../../tests/vectors/mpp-challenge.json")).unwrap()
}

fn fixed(key: &str) -> String {
    vectors()["fixed"][key].as_str().unwrap().to_owned()
}

fn h() -> AtrHash {
    AtrHash::parse(&fixed("H")).unwrap()
}

fn b64(text: &str) -> String {
    b64u_encode(text.as_bytes())
}

/// MV3's placed C_E: the fixed EVM charge request, with the id and opaque MV3 expects.
fn c_e() -> Value {
    let v = vectors();
    json!({
        "id": v["MV3"]["expectId"], "realm": fixed("realm"), "method": "evm", "intent": "charge",
        "request": b64(&fixed("R_E")), "expires": fixed("expires"), "opaque": v["MV3"]["expectOpaque"],
    })
}

fn with(c: &Value, key: &str, value: Value) -> Value {
    let mut c = c.clone();
    c[key] = value;
    c
}

fn without(c: &Value, key: &str) -> Value {
    let mut c = c.clone();
    c.as_object_mut().unwrap().shift_remove(key);
    c
}

fn now() -> u64 {
    vectors()["fixed"]["expiresUnix"].as_u64().unwrap() - 60
}

fn choose(doc: &Value, account: &str, at: u64) -> Result<Chosen, String> {
    let piece = Piece::evm(AUTHORIZATION, &EVM_CHARGE, INPUTS);
    let read = read(doc).map_err(|r| r.code())?;
    let inputs: Map<String, Value> =
        json!({"tokenDomain": {"name": "USDC", "version": "2"}, "other": 1}).as_object().unwrap().clone();
    let ctx = ChooseContext { account, inputs: &inputs, now: at, reference: "r", doc };
    piece.choose(&read, &ctx).map_err(|r| r.code())
}

#[test]
fn choose_takes_the_first_challenge_on_the_accounts_chain() {
    let other_chain = with(&c_e(), "request", json!(b64(&fixed("R_E").replace("84532", "8453"))));
    let doc = json!([other_chain, c_e()]);
    let chosen = choose(&doc, ACCOUNT, now()).unwrap();
    assert_eq!(chosen.pairing, AUTHORIZATION);
    assert_eq!(chosen.build_input["challenge"], c_e());
    assert_eq!(chosen.build_input["from"], ACCOUNT.rsplit(':').next().unwrap());
    assert_eq!(chosen.build_input["now"], now());
    assert_eq!(chosen.build_input["tokenDomain"], json!({"name": "USDC", "version": "2"}));
    assert!(chosen.build_input.get("other").is_none(), "only the inputs the piece names");
    let keys: Vec<&str> = chosen.build_input.keys().map(String::as_str).collect();
    assert_eq!(keys, ["challenge", "from", "now", "tokenDomain"], "the reference's order");
    for account in ["eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "solana:x:y", "eip155:84532:0x12"] {
        assert_eq!(choose(&doc, account, now()), Err("mpp/no-payable-option".into()), "{account}");
    }
}

/// Ours, not the reference's: the peer's choose takes an expired challenge (its build signs a validBefore in the
/// past); the gate skips it, and refuses `mpp/challenge-expired` when nothing else offers the pairing.
#[test]
fn an_expired_challenge_is_not_chosen() {
    let expires = vectors()["fixed"]["expiresUnix"].as_u64().unwrap();
    let doc = json!([c_e()]);
    assert!(choose(&doc, ACCOUNT, expires - 1).is_ok());
    assert_eq!(choose(&doc, ACCOUNT, expires), Err("mpp/challenge-expired".into()));
    assert_eq!(choose(&doc, ACCOUNT, expires + 3600), Err("mpp/challenge-expired".into()));
    let later = with(&c_e(), "expires", json!("2026-09-21T15:14:20Z"));
    let doc = json!([c_e(), later]);
    assert_eq!(choose(&doc, ACCOUNT, expires).unwrap().build_input["challenge"], later);
    // One expiring during the fetch: chosen a second before, past its expires by the time the build reads it.
    let chosen = choose(&json!([c_e()]), ACCOUNT, expires - 1).unwrap();
    let held = Piece::evm(AUTHORIZATION, &EVM_CHARGE, INPUTS).offer(&chosen, &h()).unwrap();
    assert!(!held.checked.expired_at(expires - 1) && held.checked.expired_at(expires));
}

fn offer(challenge: Value, from: &str, at: &AtrHash) -> Result<Value, String> {
    let mut chosen = choose(&json!([c_e()]), ACCOUNT, now()).unwrap();
    chosen.build_input.insert("challenge".into(), challenge);
    chosen.build_input.insert("from".into(), json!(from));
    let piece = Piece::evm(AUTHORIZATION, &EVM_CHARGE, INPUTS);
    piece.offer(&chosen, at).map(|held| held.echo.into_owned()).map_err(|r| r.code())
}

/// A choice edited between confirm and finish is held again by the build, with the codes the peer's `offer_for`
/// gives the same edits.
#[test]
fn the_build_holds_the_choice_again() {
    let from = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    let other = AtrHash::from_bytes([0x11; 32]);
    assert_eq!(offer(c_e(), from, &h()), Ok(c_e()));
    let opaque_other_h =
        b64(&format!(r#"{{"legalContext":"lcp:sha256:{}","legalContextUrl":"{}"}}"#, other.to_hex(), fixed("link")));
    let seller_member = b64(&format!(
        r#"{{"legalContext":"lcp:sha256:{}","legalContextUrl":"{}","x":"y"}}"#,
        h().to_hex(),
        fixed("link")
    ));
    let id = c_e()["id"].as_str().unwrap().to_owned();
    let not_jcs = b64(&serde_json::to_string_pretty(&serde_json::from_str::<Value>(&fixed("R_E")).unwrap()).unwrap());
    for (case, challenge, at, want) in [
        ("opaque naming another H", with(&c_e(), "opaque", json!(opaque_other_h)), h(), "mpp/opaque-not-this-hash"),
        ("opaque removed", without(&c_e(), "opaque"), h(), "mpp/opaque-not-this-hash"),
        ("opaque not flat", with(&c_e(), "opaque", json!(b64(r#"{"k":{"n":"v"}}"#))), h(), "mpp/opaque-malformed"),
        ("opaque not base64url", with(&c_e(), "opaque", json!("!!")), h(), "mpp/opaque-malformed"),
        ("request not base64url", with(&c_e(), "request", json!("!!")), h(), "mpp/request-malformed"),
        (
            "request padded",
            with(&c_e(), "request", json!(format!("{}=", b64(&fixed("R_E"))))),
            h(),
            "mpp/request-malformed",
        ),
        ("position 32", with(&c_e(), "id", json!(id.replace(".0", ".32"))), h(), "mpp/id-not-ours"),
        ("another H", c_e(), other, "mpp/id-not-ours"),
        ("expires not RFC 3339", with(&c_e(), "expires", json!("tomorrow")), h(), "mpp/expires-required"),
        ("no expires", without(&c_e(), "expires"), h(), "mpp/expires-required"),
        ("no id", without(&c_e(), "id"), h(), "mpp/credential-malformed"),
        ("another method", with(&c_e(), "method", json!("tempo")), h(), "mpp/not-this-pairing"),
        ("not an object", json!("x"), h(), "mpp/credential-malformed"),
    ] {
        assert_eq!(offer(challenge, from, &at), Err(want.to_owned()), "{case}");
    }
    assert!(offer(with(&c_e(), "opaque", json!(seller_member)), from, &h()).is_ok(), "the seller's own members");
    assert!(offer(with(&c_e(), "request", json!(not_jcs)), from, &h()).is_ok(), "an EVM charge hashes no request");
    assert_eq!(offer(c_e(), "0x12", &h()), Err("mpp/input-malformed".into()));
    // The echo keeps MPP's members only, every value as written.
    assert_eq!(offer(with(&c_e(), "extra", json!(1)), from, &h()), Ok(c_e()));
}

#[test]
fn the_quote_reads_the_request() {
    let chosen = choose(&json!([c_e()]), ACCOUNT, now()).unwrap();
    let quote = Piece::evm(AUTHORIZATION, &EVM_CHARGE, INPUTS).held(&chosen).unwrap().quote().unwrap();
    let request: Value = serde_json::from_str(&fixed("R_E")).unwrap();
    assert_eq!(quote.amount.to_string(), request["amount"].as_str().unwrap());
    assert_eq!(
        (quote.asset.as_str(), quote.payee.as_str()),
        (request["currency"].as_str().unwrap(), request["recipient"].as_str().unwrap())
    );
    assert_eq!((quote.network.as_str(), quote.scheme.as_str()), ("eip155:84532", "charge"));
    assert_eq!(quote.valid_before, vectors()["fixed"]["expiresUnix"].as_u64());
}

fn complete(answer: Answer) -> Result<Value, String> {
    let chosen = choose(&json!([c_e()]), ACCOUNT, now()).unwrap();
    let held = Piece::evm(AUTHORIZATION, &EVM_CHARGE, INPUTS).offer(&chosen, &h()).unwrap();
    let request = SigningRequest::example("eip712").unwrap();
    let unsigned = OneAnswer::new(request.clone(), held.echo, Some("did:pkh:eip155:84532:0xf39F".into()), |s: &str| {
        if s.starts_with("0x") {
            Ok(json!({"type": "authorization", "signature": s}))
        } else {
            Err(crate::Refusal::mpp(crate::Reason::CredentialMalformed))
        }
    });
    assert_eq!(unsigned.request(), Ok(Some(request)), "the request exactly as built");
    let completion = unsigned.complete(&[answer], &chosen).map_err(|r| r.code())?;
    let Completion::Payment { payment, .. } = completion else { panic!("one step") };
    // The pairing's bound reads the credential just built, member by member.
    let echoed = echoed_for(payment.as_ref(), AUTHORIZATION, &EVM_CHARGE).map_err(|r| r.code())?;
    assert_eq!(echoed.h, h());
    assert_eq!(echoed.payload["type"], "authorization");
    Ok(payment.write().to_value())
}

#[test]
fn one_answer_completes_the_credential_and_bound_reads_it_back() {
    let credential = complete(Answer::from("0xabcd")).unwrap();
    assert_eq!(credential["challenge"], c_e(), "opaque and request echoed exactly");
    assert_eq!(credential["source"], "did:pkh:eip155:84532:0xf39F");
    let keys: Vec<&str> = credential.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["challenge", "source", "payload"]);
    assert_eq!(complete(Answer::new(json!({"signature": "0x"}))), Err("mpp/credential-malformed".into()));
    assert_eq!(complete(Answer::from("abcd")), Err("mpp/credential-malformed".into()));
    // Presented later, as a JSON value: an opaque changed after the build is refused.
    let read_back = |c: &Value| echoed_for(c, AUTHORIZATION, &EVM_CHARGE).map(|e| e.h).map_err(|r| r.code());
    assert_eq!(read_back(&credential), Ok(h()));
    let mut changed = credential.clone();
    changed["challenge"]["opaque"] = json!(b64(&format!(r#"{{"legalContext":"lcp:sha256:0x{}"}}"#, "11".repeat(32))));
    assert_eq!(read_back(&changed), Err("mpp/opaque-not-this-hash".into()));
    changed["challenge"] = without(&c_e(), "opaque");
    assert_eq!(read_back(&changed), Err("mpp/opaque-not-this-hash".into()));
    let mut big = credential;
    big["payload"]["pad"] = json!("x".repeat(super::MAX_CREDENTIAL_BYTES));
    assert_eq!(read_back(&big), Err("mpp/credential-malformed".into()));
    let built = Credential::new(Cow::Owned(c_e()), None, json!({"pad": "x".repeat(super::MAX_CREDENTIAL_BYTES)}));
    assert_eq!(built.unwrap_err().code(), "mpp/credential-malformed");
}

/// The file's agreedRefusals rows the chain-free filters answer, from the rows' own inputs.
#[test]
fn the_agreed_refusals_of_the_filters() {
    let v = vectors();
    let inputs = &v["agreedRefusals"]["inputs"];
    let code = |row: &str| {
        let rows = v["agreedRefusals"]["rows"].as_array().unwrap();
        rows.iter().find(|r| r["case"].as_str().unwrap().starts_with(row)).unwrap()["expect"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let request = |key: &str| with(&c_e(), "request", json!(b64(inputs[key].as_str().unwrap())));
    let check = |c: &Value, method| check_challenge(c, method).map(|c| c.pairings().to_vec()).map_err(|r| r.code());
    assert_eq!(check(&request("requestMalformed"), &EVM_CHARGE), Err(code("pairingsOf with an EVM charge chainId")));
    let not_flat = with(&c_e(), "opaque", json!(b64(inputs["opaqueNotFlat"].as_str().unwrap())));
    assert_eq!(check(&not_flat, &EVM_CHARGE), Err(code("pairingsOf with an opaque")));
    assert_eq!(code("pairingsOf with a duplicate credentialTypes"), "no refusal");
    assert_eq!(check(&request("duplicateTypes"), &EVM_CHARGE), Ok(vec!["mpp/charge/evm/permit2"]));
    assert_eq!(check(&c_e(), &CARD_CHARGE), Err(code("pairingsOf with an intent and method")));
    let session = json!({"escrowContract": "0x9d136eEa063eDE5418A6BC7bEafF009bBb6CFa70", "chainId": 0});
    let r_e: Value = serde_json::from_str(&fixed("R_E")).unwrap();
    let session =
        json!({"amount": "1", "currency": r_e["currency"], "recipient": r_e["recipient"], "methodDetails": session});
    let session = with(&with(&c_e(), "intent", json!("session")), "request", json!(b64(&session.to_string())));
    assert_eq!(check(&session, &EVM_SESSION), Err(code("an EVM session challenge whose chainId")));
    assert_eq!(checked_for(&c_e(), "mpp/charge/evm/hash", &EVM_CHARGE).unwrap_err().code(), "mpp/not-this-pairing");
}

#[test]
fn usdc_hashes_the_request_as_received() {
    let request = json!({"amount": "1000000", "currency": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "methodDetails": {"type": "evm", "evm": {"chainId": 84532}}});
    let jcs = crate::json::canonical(&request).unwrap();
    let usdc = |text: &str| with(&with(&c_e(), "method", json!("usdc")), "request", json!(b64(text)));
    let check = |c: &Value| check_challenge(c, &USDC_CHARGE).map(|c| c.pairings().to_vec()).map_err(|r| r.code());
    assert_eq!(check(&usdc(&jcs)), Ok(vec!["mpp/charge/usdc/evm"]));
    assert_eq!(check(&usdc(&serde_json::to_string_pretty(&request).unwrap())), Err("mpp/request-not-jcs".into()));
    let two = json!({"amount": "1", "recipient": "r", "methodDetails": {"type": "evm", "evm": {}, "gateway": {}}});
    assert_eq!(check(&usdc(&crate::json::canonical(&two).unwrap())), Err("mpp/usdc-profile".into()));
}

#[test]
fn a_confirm_only_piece_takes_the_first_challenge_on_any_account() {
    let card =
        with(&with(&c_e(), "method", json!("card")), "request", json!(b64(r#"{"amount":"4999","currency":"usd"}"#)));
    let doc = json!([c_e(), card]);
    let piece = Piece::confirm_only("mpp/charge/card", &CARD_CHARGE);
    let read = read(&doc).unwrap();
    let inputs = Map::new();
    let ctx = ChooseContext { account: "anything", inputs: &inputs, now: now(), reference: "r", doc: &doc };
    let chosen = piece.choose(&read, &ctx).unwrap();
    assert_eq!(Value::Object(chosen.build_input.clone()), json!({"challenge": card, "now": now()}));
    let held = piece.offer(&chosen, &h()).unwrap();
    assert_eq!((held.payer(), held.now(), held.input("tokenDomain")), (None, Some(now()), None));
    assert_eq!(held.checked.details(), &Map::new());
    assert_eq!(held.checked.raw_request().raw(), card["request"].as_str().unwrap());
    assert_eq!(held.checked.challenge().get("method"), Some(&json!("card")));
    assert_eq!(held.checked.expires_required(), Ok(vectors()["fixed"]["expiresUnix"].as_i64().unwrap()));
}

#[test]
fn stripe_and_near_intents_filters() {
    let on = |method: &str, request: Value| {
        let c = with(&with(&c_e(), "method", json!(method)), "request", json!(b64(&request.to_string())));
        let m = if method == "stripe" { &STRIPE_CHARGE } else { &NEAR_INTENTS_CHARGE };
        check_challenge(&c, m).map(|c| c.pairings().to_vec()).map_err(|r| r.code())
    };
    let meta = |m: Value| json!({"amount": "1", "methodDetails": {"metadata": m}});
    assert_eq!(on("stripe", meta(json!({"order": "1"}))), Ok(vec!["mpp/charge/stripe"]));
    assert_eq!(on("stripe", meta(json!({"a[b]": "1"}))), Err("mpp/metadata-malformed".into()));
    assert_eq!(on("stripe", meta(json!({"k": 1}))), Err("mpp/metadata-malformed".into()));
    assert_eq!(on("stripe", meta(json!({"k": "x".repeat(501)}))), Err("mpp/metadata-malformed".into()));
    let near = |d: Value| json!({"amount": "1", "methodDetails": d});
    assert_eq!(on("nearintents", near(json!({"originNetwork": "eip155:42161"}))), Ok(vec!["mpp/charge/nearintents"]));
    assert_eq!(on("nearintents", near(json!({"originNetwork": "arbitrum"}))), Err("mpp/request-malformed".into()));
}

/// Every `mpp/…` code the file names (its rows, its agreedRefusals, its network rows) is a reason of the one table.
#[test]
fn every_mpp_code_of_the_file_is_a_reason() {
    let text = include_str!("../../tests/vectors/mpp-challenge.json");
    let mut seen = 0;
    for (at, _) in text.match_indices("\"mpp/") {
        let code: String = text[at + 5..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
        if matches!(code.as_str(), "charge" | "session" | "subscription") {
            continue;
        }
        let reason = crate::Reason::ALL.iter().find(|r| r.as_str() == code);
        assert!(reason.is_some(), "mpp/{code} has no Reason");
        assert_eq!(crate::Refusal::mpp(*reason.unwrap()).code(), format!("mpp/{code}"));
        seen += 1;
    }
    assert!(seen > 20, "{seen}");
}
