//! `mpp-session-evm.json`, the rail's rows, from the file's own data: ES1 to ES9 and plant3, and B6's presented
//! opening read back at the rail. Not run here, as they are the pairing's: B2 (the plant: the gate declines
//! hash-mismatch before the signer), B6's two `check` calls (the gate's comparison of the ATR with what `bound`
//! reads; the rail's read of that opening is run below), and `pattern` (the registry row).

use alloy_primitives::{Address, B256, Signature, U256, keccak256};
use serde_json::{Map, Value, json};

use super::*;
use crate::codec::{b64u_decode, hex_bytes, to_hex};
use crate::hash::{AtrHash, atr_hash};
use crate::refusal::{Reason, Refusal};

const FILE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/mpp-session-evm.json"));

fn file() -> Value {
    serde_json::from_str(FILE).unwrap()
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap()
}

fn hash(v: &Value) -> AtrHash {
    AtrHash::parse(text(v)).unwrap()
}

fn b256(v: &Value) -> B256 {
    text(v).parse().unwrap()
}

fn address(v: &Value) -> Address {
    text(v).parse().unwrap()
}

/// A truncated expected value: its `prefix` and `suffix`.
fn affix(value: &str, expected: &Value) {
    let (prefix, suffix) = (text(&expected["prefix"]), text(&expected["suffix"]));
    assert!(value.starts_with(prefix) && value.ends_with(suffix), "{value} is not {prefix}…{suffix}");
}

/// A refusal row, `{refused: true, code}`, against the reason in the `mpp` namespace.
fn refused(reason: Result<impl std::fmt::Debug, Reason>, row: &Value) {
    assert_eq!(row["refused"], true);
    assert_eq!(Refusal::new("mpp", reason.unwrap_err()).code(), text(&row["code"]));
}

/// The fixed request, decoded, and its `methodDetails`.
fn request(file: &Value) -> (Map<String, Value>, Map<String, Value>) {
    let request: Map<String, Value> = serde_json::from_str(text(&file["fixed"]["request"])).unwrap();
    let details = request["methodDetails"].as_object().unwrap().clone();
    (request, details)
}

/// The fixed payer's channel under the request's terms, salted with `salt`, the payer signing its vouchers.
fn channel<'a>(terms: &SessionTerms<'a>, file: &'a Value, salt: &Value) -> SessionChannel<'a> {
    terms.channel(EvmAddress::of(&file["fixed"]["payer"]).unwrap(), hash(salt), EvmAddress::ZERO)
}

fn deposit(file: &Value) -> u128 {
    text(&file["fixed"]["deposit"]).parse().unwrap()
}

fn b6_row(file: &Value) -> &Value {
    let rows = file["buyer"]["rows"].as_array().unwrap();
    rows.iter().find(|r| r["name"] == "B6").unwrap()
}

/// B6's presented opening: the authorization opening built from the fixed key and ES1 to ES5.
fn b6(file: &Value) -> &Value {
    &b6_row(file)["input"]["presented"]
}

fn payer_of(file: &Value) -> EvmAddress<'_> {
    EvmAddress::of(&file["fixed"]["payer"]).unwrap()
}

/// Whether `signature` is the payer's over `digest`.
fn recovers(file: &Value, signature: &Value, digest: B256) -> bool {
    let signature = Signature::from_raw(&hex_bytes(text(signature)).unwrap()).unwrap();
    signature.recover_address_from_prehash(&digest).unwrap() == address(&file["fixed"]["payer"])
}

/// The payer key's signature over a digest (RFC 6979, so the file's values are reproduced exactly).
#[cfg(feature = "local-signer")]
fn signs(file: &Value, digest: B256) -> String {
    crate::LocalSigner::from_hex(text(&file["fixed"]["payerKey"]), 1).unwrap().sign_digest(&digest.0).unwrap()
}

/// The `hash` opening of the fixed payer's channel salted with `salt`, as a build writes it for the transaction
/// ES9 names, with B6's voucher signature.
fn hash_opening(file: &Value, terms: &SessionTerms<'_>, salt: &Value) -> Value {
    let voucher_signature = text(&b6(file)["payload"]["voucherSignature"]);
    let funded = Funded::Hash(text(&file["ES9"]["hash"]));
    Value::Object(channel(terms, file, salt).opening_payload(funded, voucher_signature))
}

#[test]
fn es1_the_channel_id_commits_to_the_salt() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let f = &file["fixed"];
    assert_eq!(atr_hash(text(&f["H2Preimage"]).as_bytes()), hash(&f["H2"]));
    assert_eq!(channel(&terms, &file, &f["H"]).id(), b256(&file["ES1"]["expectChannelId"]));
    affix(&channel(&terms, &file, &f["H2"]).id().to_string(), &file["ES1"]["expectChannelIdH2"]);
    // The terms are the fixed values, read from the request.
    assert_eq!((terms.chain_id, terms.network()), (f["chainId"].as_u64().unwrap(), "eip155:84532".to_owned()));
    assert_eq!((terms.escrow.bytes(), terms.token.bytes()), (address(&f["escrow"]), address(&f["usdc"])));
    assert_eq!(terms.payee.bytes(), address(&f["recipient"]));
    assert_eq!(terms.funding(), [Funding::Hash, Funding::Authorization, Funding::Permit2]);
}

#[test]
fn es2_the_hash_opening_calls() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let (f, e) = (&file["fixed"], &file["ES2"]);
    let ch = channel(&terms, &file, &f["H"]);
    let [approve, open] = ch.hash_opening_calls(deposit(&file));
    assert_eq!((approve.to.text(), open.to.text()), (text(&f["usdc"]), text(&f["escrow"])));
    assert_eq!(approve.data.get(..4), Some(&keccak256("approve(address,uint256)")[..4]));
    assert_eq!(open.data.len() as u64, e["expectOpenLength"].as_u64().unwrap());
    assert_eq!(to_hex(&OPEN_SELECTOR), text(&e["expectOpenSelector"]));
    assert_eq!(open.data.get(..4), Some(&OPEN_SELECTOR[..]));
    let word = U256::from_str_radix(&text(&e["expectDeposit"])[2..], 16).unwrap().to_be_bytes::<32>();
    assert_eq!(open.data.get(4 + 64..4 + 96), Some(&word[..]));
    let occurrences = to_hex(&open.data).matches(&text(&f["H"])[2..]).count();
    assert_eq!(occurrences as u64, e["expectHOccurrences"].as_u64().unwrap());
    assert_eq!(open.to_json(), json!({"to": f["escrow"], "data": to_hex(&open.data)}));
    // The file's ES9 calls are viem's encodings of the same `open`: ours agree byte for byte.
    let cases = file["ES9"]["cases"].as_array().unwrap();
    assert_eq!(cases[0]["transaction"]["input"], to_hex(&open.data));
    assert_eq!(cases[2]["transaction"]["input"], to_hex(&channel(&terms, &file, &f["H2"]).open_call(deposit(&file))));
    let other = Value::String("0x7777777777777777777777777777777777777777".into());
    let elsewhere = SessionChannel { payee: EvmAddress::of(&other).unwrap(), ..ch };
    assert_eq!(cases[4]["transaction"]["input"], to_hex(&elsewhere.open_call(deposit(&file))));
}

#[test]
fn es3_es4_the_authorization_opening() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let (f, e) = (&file["fixed"], &file["ES4"]);
    let ch = channel(&terms, &file, &f["H"]);
    assert_eq!(ch.authorization_nonce(), b256(&file["ES3"]["expectNonce"]));
    let presented = &b6(&file)["payload"];
    let valid_before: u64 = text(&presented["authorization"]["validBefore"]).parse().unwrap();
    assert_eq!(valid_before, f["now"].as_u64().unwrap() + 60);
    let token = TokenDomain { name: text(&f["tokenDomain"]["name"]), version: text(&f["tokenDomain"]["version"]) };
    let typed = ch.receive_typed_data(token, deposit(&file), valid_before);
    let parts = ch.receive_parts(token, deposit(&file), valid_before);
    affix(&keccak256(text(&e["typeSignature"])).to_string(), &e["expectTypeHash"]);
    assert_eq!(parts.type_hash, keccak256(text(&e["typeSignature"])));
    assert_eq!(typed.primary_type, "ReceiveWithAuthorization");
    assert_eq!(typed.signing_hash(), Some(b256(&e["expectDigest"])));
    assert_eq!(parts.digest, b256(&e["expectDigest"]));
    // B6 presents this authorization, signed by the payer.
    assert_eq!(Value::Object(ch.receive_authorization(deposit(&file), valid_before)), presented["authorization"]);
    affix(text(&presented["signature"]), &e["expectSignature"]);
    assert!(recovers(&file, &presented["signature"], parts.digest));
    #[cfg(feature = "local-signer")]
    assert_eq!(signs(&file, parts.digest), text(&presented["signature"]));
    // The opening's payload is B6's, member for member and in its order.
    let funded = Funded::Signed {
        funding: Funding::Authorization,
        authorization: ch.receive_authorization(deposit(&file), valid_before),
        signature: text(&presented["signature"]),
    };
    let payload = ch.opening_payload(funded, text(&presented["voucherSignature"]));
    assert_eq!(serde_json::to_string(&payload).unwrap(), serde_json::to_string(presented).unwrap());
}

#[test]
fn es5_the_zero_voucher() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let f = &file["fixed"];
    let id = channel(&terms, &file, &f["H"]).id();
    let typed = voucher_typed_data(terms.chain_id, &terms.escrow, &id, 0);
    let expected = b256(&file["ES5"]["expectVoucherDigest"]);
    assert_eq!(typed.signing_hash(), Some(expected));
    assert_eq!(voucher_parts(terms.chain_id, &terms.escrow, &id, 0).digest, expected);
    assert_eq!(typed.domain["name"], ESCROW_DOMAIN_NAME);
    assert_eq!(typed.domain["verifyingContract"], f["escrow"]);
    let voucher_signature = &b6(&file)["payload"]["voucherSignature"];
    assert!(recovers(&file, voucher_signature, expected));
    #[cfg(feature = "local-signer")]
    assert_eq!(signs(&file, expected), text(voucher_signature));
    // A later voucher, and the close, name the channel and the amount they sign.
    let signature = text(voucher_signature);
    let later = Value::Object(voucher_payload(false, &id, 250, signature));
    assert_eq!((kind_of(&later), channel_of(&later), signed_max(&later)), (Ok(SessionKind::Within), Ok(id), "250"));
    let close = Value::Object(voucher_payload(true, &id, 250, signature));
    assert_eq!((kind_of(&close), bound_within(&close)), (Ok(SessionKind::Close), Err(Reason::NotBoundWithin)));
    assert_eq!(
        later.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["action", "channelId", "cumulativeAmount", "signature"]
    );
    // A later voucher signs another amount under the same domain and channel.
    let later = voucher_parts(terms.chain_id, &terms.escrow, &id, 250);
    assert_eq!(voucher_typed_data(terms.chain_id, &terms.escrow, &id, 250).signing_hash(), Some(later.digest));
    assert_ne!(later.digest, expected);
}

#[test]
fn es6_the_permit2_opening() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let (f, e) = (&file["fixed"], &file["ES6"]);
    let ch = channel(&terms, &file, &f["H"]);
    let deadline = f["now"].as_u64().unwrap() + 60;
    let typed = ch.permit2_typed_data(deposit(&file), deadline, &terms.permit2);
    let parts = ch.permit2_parts(deposit(&file), deadline, &terms.permit2);
    affix(&keccak256(text(&e["typeSignature"])).to_string(), &e["expectTypeHash"]);
    assert_eq!(parts.type_hash, keccak256(text(&e["typeSignature"])));
    assert_eq!(ch.permit2_nonce().to_string(), text(&e["expectNonce"]));
    assert_eq!(typed.message["nonce"], e["expectNonce"]);
    assert_eq!(typed.message["spender"], f["escrow"]);
    assert_eq!(typed.domain["verifyingContract"], crate::rail::evm::permit2::PERMIT2);
    assert_eq!(typed.signing_hash(), Some(b256(&e["expectDigest"])));
    assert_eq!(parts.digest, b256(&e["expectDigest"]));
    let auth = ch.permit2_authorization(deposit(&file), deadline);
    assert_eq!(
        auth["witness"],
        json!({"payee": f["recipient"], "salt": f["H"], "authorizedSigner": EvmAddress::ZERO.text()})
    );
}

#[test]
fn es7_the_transfer_identities() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let (f, e) = (&file["fixed"], &file["ES7"]);
    let (payer, escrow) = (address(&f["payer"]), address(&f["escrow"]));
    let value = U256::from(deposit(&file));
    assert_eq!(transfer_digest(Some(payer), Some(escrow), Some(value)), hash(&e["expectIdentity"]));
    assert_eq!(transfer_digest(Some(payer), Some(escrow), None), hash(&e["expectFromTo"]));
    // The hash opening's transfer is payer to escrow; the authorization opening's also names its amount.
    let opening = hash_opening(&file, &terms, &f["H"]);
    let opened = bound_opening(&terms, &hash(&f["H"]), &opening, Some(payer_of(&file))).unwrap();
    let log = opened.transfer_log().unwrap();
    assert_eq!(
        (log.identity.as_str(), log.digest, log.token),
        ("from,to", hash(&e["expectFromTo"]), address(&f["usdc"]))
    );
    assert_eq!(opened.transaction(), Some(b256(&file["ES9"]["hash"])));
    let presented = &b6(&file)["payload"];
    let authorized = bound_opening(&terms, &hash(&f["H"]), presented, None).unwrap();
    let log = authorized.transfer_log().unwrap();
    assert_eq!((log.identity.as_str(), log.digest), ("from,to,value", hash(&e["expectIdentity"])));
    assert_eq!((authorized.transaction(), authorized.open_call()), (None, None));
}

#[test]
fn es8_salt_channel_source_kind_and_a_named_channel() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let (f, e) = (&file["fixed"], &file["ES8"]);
    let h = hash(&f["H"]);
    let payer = Some(payer_of(&file));
    let opening = hash_opening(&file, &terms, &f["H"]);
    assert_eq!(bound_opening(&terms, &h, &opening, payer).map(|o| o.channel.salt), Ok(h));
    // Salt H2 with H2's channel id, under the challenge of H.
    let mut salted = hash_opening(&file, &terms, &f["H2"]);
    refused(bound_opening(&terms, &h, &salted, payer), &e["expectSaltH2"]);
    // Salt H with H2's channel id.
    salted["salt"] = f["H"].clone();
    refused(bound_opening(&terms, &h, &salted, payer), &e["expectChannelH2"]);
    refused(bound_opening(&terms, &h, &opening, None), &e["expectNoSource"]);

    // The authorization opening inside a voucher's deposit opens the channel, and reads back H.
    let p = &b6(&file)["payload"];
    let merged = json!({
        "action": "voucher",
        "channelId": p["channelId"],
        "cumulativeAmount": "0",
        "signature": p["voucherSignature"],
        "deposit": {"action": "open", "type": "authorization", "authorization": p["authorization"],
                    "signature": p["signature"], "salt": f["H"]},
    });
    let kind = |k: SessionKind| format!("{k:?}").to_lowercase();
    assert_eq!(kind(kind_of(&merged).unwrap()), text(&e["expectDepositKind"]));
    assert_eq!(bound_opening(&terms, &h, &merged, None).map(|o| o.id), Ok(b256(&p["channelId"])));
    let voucher = json!({"action": "voucher", "channelId": p["channelId"], "cumulativeAmount": "10",
                         "signature": p["voucherSignature"]});
    assert_eq!(kind(kind_of(&voucher).unwrap()), text(&e["expectVoucherKind"]));
    refused(bound_within(&voucher), &e["expectBoundWithin"]);
    assert_eq!(bound_opening(&terms, &h, &voucher, None), Err(Reason::NotAnOpening));
    assert_eq!(channel_of(&voucher), Ok(b256(&p["channelId"])));
    assert_eq!((signed_max(&voucher), signed_max(p)), ("10", "0"));
    assert_eq!(kind_of(&json!({"action": "close", "channelId": p["channelId"]})), Ok(SessionKind::Close));
    assert_eq!(kind_of(&json!({"action": "topUp"})), Ok(SessionKind::Within));
    assert_eq!(kind_of(&json!({"action": "settle"})), Err(Reason::SessionAction));
    assert_eq!(kind_of(&json!("open")), Err(Reason::CredentialMalformed));

    // A challenge naming the channel resumes it: no new channel opens under it.
    let mut named = details.clone();
    named.insert("channelId".into(), file["ES1"]["expectChannelId"].clone());
    refused(SessionTerms::offered(&request, &named), &e["expectChannelNamed"]);
    assert_eq!(named_channel(&named), Ok(Some(b256(&file["ES1"]["expectChannelId"]))));
    assert_eq!(named_channel(&details), Ok(None));
    let params = SessionParams::of(&named).unwrap();
    assert_eq!((params.network(), params.escrow.bytes()), ("eip155:84532".to_owned(), address(&f["escrow"])));
}

/// A receipt, a transaction or a finality mark as the file writes a reader's answer.
fn receipt(v: &Value) -> Receipt {
    let logs = v["logs"].as_array().unwrap().iter().map(|l| Log {
        address: address(&l["address"]),
        topics: l["topics"].as_array().unwrap().iter().map(b256).collect(),
        data: hex_bytes(text(&l["data"])).unwrap(),
    });
    Receipt {
        succeeded: v["status"] == 1,
        block_number: text(&v["blockNumber"]).parse().unwrap(),
        logs: logs.collect(),
    }
}

fn transaction(v: &Value) -> Option<Transaction> {
    v.as_object()?;
    let to = (!v["to"].is_null()).then(|| address(&v["to"]));
    Some(Transaction { from: address(&v["from"]), to, input: hex_bytes(text(&v["input"])).unwrap() })
}

fn status_of(file: &Value, opened: &Opened<'_>, tx: &Value) -> Value {
    let r = &file["ES9"];
    let (log, call) = (opened.transfer_log().unwrap(), opened.open_call().unwrap());
    let marks = Marks { finalized: Some(text(&r["finalized"]).parse().unwrap()), safe: None };
    let tx = transaction(tx);
    let read = tx.as_ref().map_or(Read::NotFound, Read::Found);
    hash_opening_status(&log, &call, Read::Found(&receipt(&r["receipt"])), marks, read).to_json()
}

#[test]
fn es9_the_hash_openings_settlement_read() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let f = &file["fixed"];
    let payer = Some(payer_of(&file));
    let opening = hash_opening(&file, &terms, &f["H"]);
    let opened = bound_opening(&terms, &hash(&f["H"]), &opening, payer).unwrap();
    for row in file["ES9"]["cases"].as_array().unwrap() {
        assert_eq!(status_of(&file, &opened, &row["transaction"]), row["expect"], "{}", row["case"]);
    }
    let r = &file["ES9"]["presentedForH2"];
    let for_h2 = hash_opening(&file, &terms, &f["H2"]);
    let opened = bound_opening(&terms, &hash(&f["H2"]), &for_h2, payer).unwrap();
    affix(&opened.id.to_string(), &file["ES1"]["expectChannelIdH2"]);
    assert_eq!(status_of(&file, &opened, &r["transaction"]), r["expect"], "{}", r["case"]);
}

#[test]
fn es9_receipts_that_do_not_settle() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let opening = hash_opening(&file, &terms, &file["fixed"]["H"]);
    let opened = bound_opening(&terms, &hash(&file["fixed"]["H"]), &opening, Some(payer_of(&file))).unwrap();
    let (log, call) = (opened.transfer_log().unwrap(), opened.open_call().unwrap());
    let full = receipt(&file["ES9"]["receipt"]);
    let tx = transaction(&file["ES9"]["cases"][0]["transaction"]).unwrap();
    let read = |receipt: Read<&Receipt>, marks: Marks, tx: Read<&Transaction>| {
        hash_opening_status(&log, &call, receipt, marks, tx).to_json()
    };
    let at = |finalized, safe| Marks { finalized, safe };
    let found = Read::Found(&tx);
    assert_eq!(read(Read::NotFound, at(None, None), found), json!({"state": "pending", "why": "not-found"}));
    assert_eq!(read(Read::Unreadable, at(None, None), found), json!({"state": "pending", "why": "unreadable"}));
    assert_eq!(read(Read::Found(&full), at(Some(100), None), Read::Unreadable)["why"], "unreadable");
    let reverted = Receipt { succeeded: false, ..full.clone() };
    assert_eq!(read(Read::Found(&reverted), at(None, None), found)["why"], "reverted");
    let empty = Receipt { logs: vec![], ..full };
    assert_eq!(read(Read::Found(&empty), at(None, None), found)["why"], "transfer-not-found");
    assert_eq!(read(Read::Found(&full), at(Some(89), Some(95)), found)["finality"], "safe");
    assert_eq!(read(Read::Found(&full), at(Some(89), Some(89)), found)["finality"], "latest");
    // A transfer from another sender, or to another recipient, is not the opening's.
    let mut other = full.clone();
    other.logs[0].topics[2] = B256::left_padding_from(address(&file["fixed"]["recipient"]).as_slice());
    assert_eq!(read(Read::Found(&other), at(None, None), found)["why"], "transfer-not-found");
    // An address word with a high byte set is no address.
    let mut high = tx.clone();
    high.input[4] = 1;
    assert_eq!(read(Read::Found(&full), at(Some(100), None), Read::Found(&high))["why"], "open-call-not-found");
}

#[test]
fn plant3_a_nonce_over_another_salt() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let f = &file["fixed"];
    let nonce = channel(&terms, &file, &f["H2"]).authorization_nonce().to_string();
    affix(&nonce, &file["plant3"]["expectNonceH2"]);
    let mut planted = b6(&file)["payload"].clone();
    planted["authorization"]["nonce"] = Value::String(nonce);
    assert_eq!(planted["salt"], f["H"]);
    refused(bound_opening(&terms, &hash(&f["H"]), &planted, None), &file["plant3"]["expect"]);
}

#[test]
fn b6_the_presented_opening_reads_back_h() {
    let file = file();
    let f = &file["fixed"];
    let presented = b6(&file);
    let challenge = &presented["challenge"];
    // The challenge's id carries H (base64url, then its position); its request is the fixed request.
    let id = text(&challenge["id"]).split_once('.').unwrap().0;
    let h = AtrHash::from_bytes(b64u_decode(id).unwrap().try_into().unwrap());
    assert_eq!(h, hash(&f["H"]));
    assert_eq!(b64u_decode(text(&challenge["request"])).unwrap(), text(&f["request"]).as_bytes());
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let source = text(&presented["source"]).rsplit_once(':').unwrap().1;
    let opened = bound_opening(&terms, &h, &presented["payload"], EvmAddress::parse(source)).unwrap();
    assert_eq!(
        (opened.funding, opened.channel.salt, opened.id),
        (Funding::Authorization, h, b256(&file["ES1"]["expectChannelId"]))
    );
    assert_eq!(kind_of(&presented["payload"]), Ok(SessionKind::Open));
    assert_eq!(signed_max(&presented["payload"]), "0");
    // check(ATR, presented) gives H; the planted ATR hashes to another, so the gate declines signed-not-bound.
    let row = b6_row(&file);
    let atr = |i: usize| atr_hash(&hex_bytes(&format!("0x{}", text(&row["input"]["check"][i]["bytesHex"]))).unwrap());
    assert_eq!(atr(0), opened.channel.salt);
    assert_eq!(opened.channel.salt, hash(&row["expect"][0]["h"]));
    assert_ne!(atr(1), opened.channel.salt);
}

/// A case: its name, the change or the input, and the reference's answer.
type Case<T> = (&'static str, T, Result<(), Reason>);
/// A change to an opening.
type Change = Box<dyn Fn(&mut Value)>;

/// Openings and requests the file leaves open, each with the answer the reference (integraledger-terms 0.4.0) gives
/// it: `_evm_bound` on B6's presented opening changed as named, and `evm_session_pairings` on the fixed request.
#[test]
fn the_references_answers_on_what_the_file_leaves_open() {
    let file = file();
    let (request, details) = request(&file);
    let terms = SessionTerms::offered(&request, &details).unwrap();
    let h = hash(&file["fixed"]["H"]);
    let presented = &b6(&file)["payload"];
    let upper = |v: &Value| Value::String(format!("0x{}", text(v)[2..].to_uppercase()));
    let p = presented.clone();
    let merged_no_type = json!({"action": "voucher", "channelId": p["channelId"], "cumulativeAmount": "0",
        "deposit": {"action": "open", "authorization": p["authorization"], "signature": p["signature"], "salt": p["salt"]}});
    let openings: [Case<Change>; 11] = [
        ("signer null", Box::new(|p| p["authorizedSigner"] = Value::Null), Ok(())),
        ("signer absent", Box::new(|p| _ = p.as_object_mut().unwrap().remove("authorizedSigner")), Ok(())),
        ("salt upper case", Box::new(move |p| p["salt"] = upper(&p["salt"])), Ok(())),
        ("channel upper case", Box::new(move |p| p["channelId"] = upper(&p["channelId"])), Ok(())),
        (
            "authorization not an object",
            Box::new(|p| p["authorization"] = "x".into()),
            Err(Reason::CredentialMalformed),
        ),
        ("type transaction", Box::new(|p| p["type"] = "transaction".into()), Err(Reason::CredentialType)),
        ("salt missing", Box::new(|p| _ = p.as_object_mut().unwrap().remove("salt")), Err(Reason::CredentialMalformed)),
        (
            "signer not an address",
            Box::new(|p| p["authorizedSigner"] = "0x12".into()),
            Err(Reason::CredentialMalformed),
        ),
        ("action topUp", Box::new(|p| p["action"] = "topUp".into()), Err(Reason::NotAnOpening)),
        ("payload a list", Box::new(|p| *p = json!([])), Err(Reason::CredentialMalformed)),
        ("deposit with no type", Box::new(move |p| *p = merged_no_type.clone()), Err(Reason::CredentialType)),
    ];
    for (case, change, expected) in openings {
        let mut payload = presented.clone();
        change(&mut payload);
        assert_eq!(bound_opening(&terms, &h, &payload, None).map(|_| ()), expected, "{case}");
    }
    let with = |pairs: Value| {
        let mut d = details.clone();
        for (k, v) in pairs.as_object().unwrap() {
            d.insert(k.clone(), v.clone());
        }
        d
    };
    let escrow = details["escrowContract"].clone();
    let requests: [Case<Map<String, Value>>; 13] = [
        ("repeated types", with(json!({"credentialTypes": ["permit2", "permit2", "hash"]})), Ok(())),
        (
            "permit2Contract bad, no types",
            {
                let mut d = with(json!({"permit2Contract": "x"}));
                d.remove("credentialTypes");
                d
            },
            Ok(()),
        ),
        ("permit2Contract bad", with(json!({"permit2Contract": "x"})), Err(Reason::RequestMalformed)),
        ("permit2Contract null", with(json!({"permit2Contract": null})), Err(Reason::RequestMalformed)),
        ("chain id 84532.0", with(json!({"chainId": 84532.0})), Ok(())),
        ("chain id true", with(json!({"chainId": true})), Err(Reason::ChainIdRequired)),
        ("chain id a string", with(json!({"chainId": "84532"})), Err(Reason::ChainIdRequired)),
        ("a session snapshot", with(json!({"sessionSnapshot": null})), Err(Reason::ChannelNamed)),
        ("types empty", with(json!({"credentialTypes": []})), Err(Reason::CredentialTypes)),
        ("a type not a string", with(json!({"credentialTypes": ["hash", 3]})), Err(Reason::CredentialTypes)),
        ("a channel and no escrow", json!({"channelId": "x"}).as_object().unwrap().clone(), Err(Reason::ChannelNamed)),
        ("nothing", Map::new(), Err(Reason::EscrowMalformed)),
        (
            "an escrow and no chain",
            json!({"escrowContract": escrow}).as_object().unwrap().clone(),
            Err(Reason::ChainIdRequired),
        ),
    ];
    for (case, details, expected) in requests {
        assert_eq!(SessionTerms::offered(&request, &details).map(|_| ()), expected, "{case}");
    }
    let mut usd = request.clone();
    usd.insert("currency".into(), "USD".into());
    assert_eq!(SessionTerms::offered(&usd, &details).map(|_| ()), Err(Reason::RequestMalformed));
    let repeated = with(json!({"credentialTypes": ["permit2", "permit2", "hash"]}));
    let terms = SessionTerms::offered(&request, &repeated).unwrap();
    assert_eq!((terms.funding(), terms.choose(None)), (&[Funding::Permit2, Funding::Hash][..], Ok(Funding::Permit2)));
    assert_eq!(terms.choose(Some(Funding::Authorization)), Err(Reason::CredentialTypes));
}
