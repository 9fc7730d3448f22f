//! The three pairings the payer signs EIP-712 typed data for: `mpp/charge/evm/authorization`,
//! `mpp/charge/evm/permit2` and `mpp/charge/usdc/evm`.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::{Answer, DeclineCode, LocalSigner, Options, SigningRequest, TransactOutcome, atr_hash, check};

use crate::support::{CountingSigner, Reply, ScriptedFetch, paused, vectors};
use crate::{
    ABC, Outcome, b2_choice, bound_of, challenge, choose, code_of, decline_of, eq, fail, finished, h, peer, request_of,
    row, trials_of, with_request,
};

const AUTHORIZATION: &str = "mpp/charge/evm/authorization";
const PERMIT2: &str = "mpp/charge/evm/permit2";
const USDC_EVM: &str = "mpp/charge/usdc/evm";
const A: &str = "mpp-charge-evm-authorization.json";
const P: &str = "mpp-charge-evm-permit2.json";
const U: &str = "mpp-charge-usdc-evm.json";

pub fn trials(all: &mut Vec<Trial>) {
    let superseded = "superseded: the file's concatenated challenge hash; the peer's value is checked instead";
    trials_of(
        all,
        A,
        authorization,
        &["MV5"],
        &[
            ("MV5.expectNonce", superseded),
            ("MV5.expectDigest", superseded),
            ("MV5.expectSignature", superseded),
            ("MV5.expectDomainSeparator", "a rail fact: tests/mpp_evm_rail"),
            ("MV5.expectTransferDigest", "seller side: the transfer a verifier reads"),
            ("MV5.expectAuthorizationUsedTopic", "seller side: the log a verifier reads"),
        ],
    );
    trials_of(
        all,
        P,
        permit2,
        &["MV6", "MV6b", "plant"],
        &[
            ("MV6.expectDigest", superseded),
            ("MV6.expectSignature", superseded),
            ("MV6.expectDomainSeparator", "a rail fact: tests/mpp_evm_rail"),
            ("MV6.literalWitnessString", "a rail fact: tests/mpp_evm_rail"),
            ("MV6.expectLiteralTypeHash", "a rail fact: tests/mpp_evm_rail"),
            ("MV6.expectLiteralDigest", "a rail fact: tests/mpp_evm_rail"),
            ("MV6b.expectDigest", superseded),
            ("MV6b.expectSignature", superseded),
            ("MV6b.expectTypeHash", "a rail fact: tests/mpp_evm_rail"),
            ("MV6b.expectPrimaryIdentity", "seller side: the transfer a verifier reads"),
            ("MV6b.splitOnlyReceipt", "seller side: a receipt a verifier reads"),
            ("plant.challengeHashOfPosition1", superseded),
        ],
    );
    trials_of(all, U, usdc_evm, &["M3", "plant"], &[("A1", "a rail fact (another id, not ours): tests/mpp_evm_rail")]);
    all.push(Trial::test("ours::authorization: a did:pkh source for another chain", source_on_another_chain));
    all.push(Trial::test("ours::authorization: a challenge whose id carries another H", id_of_another_h));
    all.push(Trial::test("permit2: the spender is a non-empty string to choose, an address to build", spender_forms));
}

/// As the reference reads the spender (its `string` input): missing or empty, the choice refuses it
/// (`mpp/input-missing`); any other string is chosen with, and the build refuses one that is not an address
/// (`mpp/input-malformed`, so confirm declines `offer-unreadable`). Found by the differential test.
fn spender_forms() -> Outcome {
    let f = vectors(P);
    let i = &row(&f, "B2")["input"];
    let (doc, account, now) = (&i["doc"], i["account"].as_str().unwrap(), crate::now_of(&f));
    for (spender, want) in [(json!(""), "mpp/input-missing"), (json!(5), "mpp/input-missing")] {
        let got = choose(PERMIT2, doc, account, &json!({ "spender": spender }), now).map(drop);
        eq(&format!("choose with spender {spender}"), got, Err(want.to_owned()))?;
    }
    eq(
        "choose without a spender",
        choose(PERMIT2, doc, account, &json!({}), now).map(drop),
        Err("mpp/input-missing".into()),
    )?;
    for spender in ["0x12", "0x70997970C51812dc3A010C7d01b50e0d17dc79C", "not an address"] {
        let chosen = choose(PERMIT2, doc, account, &json!({ "spender": spender }), now).map_err(fail)?;
        let got = crate::pairing(PERMIT2).build(&chosen, ABC, &h()).map(drop).map_err(|r| r.code());
        eq(&format!("build with spender {spender}"), got, Err("mpp/input-malformed".into()))?;
    }
    Ok(())
}

fn typed(request: &SigningRequest) -> &terms::TypedData {
    match request {
        SigningRequest::Eip712 { typed_data } => typed_data,
        other => panic!("not eip712: {other:?}"),
    }
}

fn key(file: &Value) -> LocalSigner {
    LocalSigner::from_hex(file["fixed"]["payerKey"].as_str().unwrap(), 1).unwrap()
}

/// The digest and the payer key's signature of an EIP-712 request.
fn signed(file: &Value, request: &SigningRequest) -> (String, String) {
    let digest = typed(request).signing_hash().unwrap();
    (digest.to_string(), key(file).sign_digest(&digest.0).unwrap())
}

/// The credential the pairing completes for the choice, signed by the payer key.
fn credential(file: &Value, id: &str, chosen: &terms::Chosen) -> Result<Value, terms::Declined> {
    let (_, signature) = signed(file, &request_of(id, chosen));
    finished(id, chosen, &[Answer::from(json!(signature))])
}

fn with_member(v: &Value, pointer: &str, value: Value) -> Value {
    let mut v = v.clone();
    *v.pointer_mut(pointer).unwrap() = value;
    v
}

/// MV5: transact with a local key over the file's document: the typed data, digest and signature the peer makes,
/// the credential's nonce, validBefore and source, its bound, and the bound of it under another realm.
fn authorization(key_name: &str) -> Outcome {
    assert_eq!(key_name, "MV5");
    let f = vectors(A);
    let mv5 = &f["MV5"];
    let peer = peer();
    let i = &row(&f, "B2")["input"];
    let doc = &i["doc"];
    let link = terms::mpp::read(doc).unwrap().link;
    let signer = CountingSigner::new(f["fixed"]["payerKey"].as_str().unwrap(), i["account"].as_str().unwrap());
    let options = Options::new()
        .clock(terms::FixedClock(f["fixed"]["now"].as_u64().unwrap()))
        .inputs(json!({"tokenDomain": f["fixed"]["tokenDomain"]}).as_object().unwrap().clone());
    let fetch = ScriptedFetch::new().script(&link, vec![Reply::ok(ABC)]);
    let got = paused().block_on(terms::transact(doc, crate::pairing(AUTHORIZATION), &signer, &fetch, &options));
    let Ok(TransactOutcome::Signed(t)) = got else { return Err(fail(format!("not signed: {got:?}"))) };
    let credential = t.signed.unwrap().to_value();
    let request = &signer.calls()[0];
    eq("typed data", serde_json::to_value(typed(request)).unwrap(), peer["MV5"]["typedData"].clone())?;
    let (digest, signature) = signed(&f, request);
    eq("digest", digest, peer["MV5"]["digest"].as_str().unwrap().to_owned())?;
    eq("signature", signature, peer["MV5"]["signature"].as_str().unwrap().to_owned())?;
    eq("answer", signer.answers()[0].clone(), peer["MV5"]["signature"].clone())?;
    let payload = &credential["payload"];
    eq("nonce", payload["nonce"].clone(), peer["challengeHash"].clone())?;
    eq("validBefore", payload["validBefore"].clone(), mv5["expectValidBefore"].clone())?;
    eq("source", credential["source"].clone(), mv5["expectSource"].clone())?;
    let keys: Vec<&str> = payload.as_object().unwrap().keys().map(String::as_str).collect();
    eq("payload", keys, vec!["type", "from", "to", "value", "validAfter", "validBefore", "nonce", "signature"])?;
    eq("bound", bound_of(AUTHORIZATION, &credential), Ok(h().to_hex()))?;
    let other = with_member(&credential, "/challenge/realm", f["fixed"]["otherRealm"].clone());
    eq("other realm", bound_of(AUTHORIZATION, &other), Err(code_of(&mv5["expectBoundOtherRealm"])))?;
    // The file's nonce is the old concatenation, which the peer and the pairing refuse.
    let old = with_member(&credential, "/payload/nonce", mv5["expectNonce"].clone());
    eq("old nonce", bound_of(AUTHORIZATION, &old), Err("mpp/nonce-not-challenge-hash".into()))
}

/// MV6 (single), MV6b (the batch of one split) and the plant (the witness of the challenge at position 1).
fn permit2(key_name: &str) -> Outcome {
    let f = vectors(P);
    let peer = peer();
    let placed = challenge(&f);
    let b2 = &row(&f, "B2")["input"];
    let (account, inputs, now) = (b2["account"].as_str().unwrap(), &b2["inputs"], crate::now_of(&f));
    let batch = with_request(&placed, f["fixed"]["R_E6b"].as_str().unwrap());
    let batch_choice = || choose(PERMIT2, &json!([batch]), account, inputs, now).unwrap();
    match key_name {
        "MV6" => {
            let chosen = b2_choice(&f);
            let request = request_of(PERMIT2, &chosen);
            eq("typed data", serde_json::to_value(typed(&request)).unwrap(), peer["MV6"]["typedData"].clone())?;
            let (digest, signature) = signed(&f, &request);
            eq("digest", digest, peer["MV6"]["digest"].as_str().unwrap().to_owned())?;
            eq("signature", signature, peer["MV6"]["signature"].as_str().unwrap().to_owned())?;
            let c = credential(&f, PERMIT2, &chosen).map_err(|d| fail(d.detail))?;
            eq(
                "permitted",
                c["payload"]["permit"]["permitted"].clone(),
                json!([peer["MV6"]["typedData"]["message"]["permitted"]]),
            )?;
            eq("bound", bound_of(PERMIT2, &c), Ok(h().to_hex()))
        }
        "MV6b" => {
            let mv6b = &f["MV6b"];
            let offered: Vec<&str> = [AUTHORIZATION, PERMIT2, "mpp/charge/evm/transaction", "mpp/charge/evm/hash"]
                .into_iter()
                .filter(|id| {
                    choose(
                        id,
                        &json!([batch]),
                        account,
                        &json!({"spender": inputs["spender"], "tokenDomain": {"name": "USDC", "version": "2"}}),
                        now,
                    )
                    .is_ok()
                })
                .collect();
            eq("pairings", json!(offered), mv6b["expectPairings"].clone())?;
            let chosen = batch_choice();
            let request = request_of(PERMIT2, &chosen);
            let (digest, signature) = signed(&f, &request);
            eq("digest", digest, peer["MV6b"]["digest"].as_str().unwrap().to_owned())?;
            eq("signature", signature, peer["MV6b"]["signature"].as_str().unwrap().to_owned())?;
            let c = credential(&f, PERMIT2, &chosen).map_err(|d| fail(d.detail))?;
            eq("transferDetails", c["payload"]["transferDetails"].clone(), mv6b["expectTransferDetails"].clone())?;
            eq("bound", bound_of(PERMIT2, &c), Ok(h().to_hex()))?;
            // The authorization-only challenge with splits offers nothing: the echoed challenge is refused so.
            let only = with_request(&placed, f["fixed"]["R_E6bAuthorizationOnly"].as_str().unwrap());
            let echoed = with_member(&c, "/challenge", only);
            eq("authorization only", bound_of(AUTHORIZATION, &echoed), Err(code_of(&mv6b["expectAuthorizationOnly"])))
        }
        "plant" => {
            let c = credential(&f, PERMIT2, &batch_choice()).map_err(|d| fail(d.detail))?;
            let planted = with_member(&c, "/payload/witness/challengeHash", peer["challengeHashOfPosition1"].clone());
            eq("plant", bound_of(PERMIT2, &planted), Err(code_of(&f["plant"]["expect"])))?;
            let old = with_member(&c, "/payload/witness/challengeHash", f["plant"]["challengeHashOfPosition1"].clone());
            eq("old plant", bound_of(PERMIT2, &old), Err(code_of(&f["plant"]["expect"])))
        }
        other => Err(fail(format!("unhandled {other}"))),
    }
}

/// M3: the request hash, the nonce, the digest and validBefore of the build, its bound and refusals; the plant.
fn usdc_evm(key_name: &str) -> Outcome {
    let f = vectors(U);
    let m3 = &f["M3"];
    let chosen = b2_choice(&f);
    let placed = challenge(&f);
    let c = credential(&f, USDC_EVM, &chosen).map_err(|d| fail(d.detail))?;
    match key_name {
        "M3" => {
            eq("request", placed["request"].clone(), json!(crate::b64(m3["requestJson"].as_str().unwrap())))?;
            let rh = terms::rail::evm::charge::usdc_request_hash(m3["requestJson"].as_str().unwrap().as_bytes());
            eq("request hash", rh.to_string(), m3["expectRequestHash"].as_str().unwrap().to_owned())?;
            let request = request_of(USDC_EVM, &chosen);
            let (digest, _) = signed(&f, &request);
            eq("digest", digest, m3["expectDigest"].as_str().unwrap().to_owned())?;
            eq("nonce", c["payload"]["nonce"].clone(), m3["expectNonce"].clone())?;
            eq("validBefore", c["payload"]["validBefore"].clone(), m3["expectValidBefore"].clone())?;
            eq("bound", bound_of(USDC_EVM, &c), Ok(h().to_hex()))?;
            let other = with_member(&c, "/challenge/realm", f["fixed"]["otherRealm"].clone());
            eq("other realm", bound_of(USDC_EVM, &other), Err(code_of(&m3["expectBoundOtherRealm"])))?;
            let not_jcs =
                with_member(&c, "/challenge", with_request(&placed, m3["notJcsRequestJson"].as_str().unwrap()));
            eq("not JCS", bound_of(USDC_EVM, &not_jcs), Err(code_of(&m3["expectNotJcs"])))?;
            let doc = json!([with_request(&placed, m3["notJcsRequestJson"].as_str().unwrap())]);
            let b2 = &row(&f, "B2")["input"];
            let got = choose(USDC_EVM, &doc, b2["account"].as_str().unwrap(), &b2["inputs"], crate::now_of(&f));
            eq("not JCS chosen", got.map(|_| ()), Err("mpp/no-payable-option".into()))
        }
        "plant" => {
            let planted = with_member(&c, "/payload/nonce", f["plant"]["nonce"].clone());
            eq("plant", bound_of(USDC_EVM, &planted), Err(code_of(&f["plant"]["expect"])))
        }
        other => Err(fail(format!("unhandled {other}"))),
    }
}

/// Ours: a credential whose `did:pkh` source names another chain than the challenge's is refused.
fn source_on_another_chain() -> Outcome {
    let f = vectors(A);
    let c = credential(&f, AUTHORIZATION, &b2_choice(&f)).map_err(|d| fail(d.detail))?;
    let source = c["source"].as_str().unwrap().replace(":84532:", ":1:");
    let other = with_member(&c, "/source", json!(source));
    eq("bound", bound_of(AUTHORIZATION, &other), Err("mpp/chain-mismatch".into()))?;
    decline_of(check(ABC, &other, crate::pairing(AUTHORIZATION)), DeclineCode::SignedNotBound).map(drop)
}

/// A challenge whose id carries another H than the ATR's: the build refuses it (`mpp/id-not-ours`), and the gate
/// declines before the signer is called.
fn id_of_another_h() -> Outcome {
    let f = vectors(A);
    let chosen = b2_choice(&f);
    let other = atr_hash(b"abd");
    let got = crate::pairing(AUTHORIZATION).build(&chosen, b"abd", &other).map(drop).map_err(|r| r.code());
    eq("build", got, Err("mpp/id-not-ours".into()))?;
    let mut placed = challenge(&f);
    placed["id"] = json!(terms::mpp::challenge_id(&other, 0).unwrap());
    let doc = json!([placed]);
    let i = &row(&f, "B2")["input"];
    let signer = CountingSigner::new(f["fixed"]["payerKey"].as_str().unwrap(), i["account"].as_str().unwrap());
    let link = format!("https://atr.seller.example/{}", h().to_hex());
    let fetch = ScriptedFetch::new().script_repeating(&link, vec![Reply::ok(ABC)]);
    let options = Options::new()
        .clock(terms::FixedClock(f["fixed"]["now"].as_u64().unwrap()))
        .inputs(json!({"tokenDomain": f["fixed"]["tokenDomain"]}).as_object().unwrap().clone());
    let got = paused().block_on(terms::transact(&doc, crate::pairing(AUTHORIZATION), &signer, &fetch, &options));
    if got.is_ok() {
        return Err(fail(format!("paid: {got:?}")));
    }
    eq("sign calls", signer.count(), 0)
}
