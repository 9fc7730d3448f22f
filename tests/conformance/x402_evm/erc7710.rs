//! `x402-exact-eip155-erc7710.json` (the unsigned level) and `x402-exact-eip155-erc7710-salt.json` (the salt
//! level, through MetaMask's reference DelegationManager).

use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_sol_types::SolStruct;
use libtest_mimic::Trial;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use terms::pairing::Unsigned;
use terms::rail::evm::delegation::{self, abi};
use terms::x402::evm::{erc7710, erc7710_salt};
use terms::{Pairing, SigningRequest};

use super::{DelegationSigner, File, bound_of, ensure, fail, file_trials, payment_of, same, want_code};
use crate::{Outcome, eq, ignored};

const UNSIGNED: &str = "x402-exact-eip155-erc7710.json";
const SALT: &str = "x402-exact-eip155-erc7710-salt.json";

pub(super) fn trials(all: &mut Vec<Trial>) {
    file_trials(all, UNSIGNED, run, &["EV7"], &[]);
    for member in ["expectReference", "expectMembers", "claims"] {
        all.push(ignored(&format!("{UNSIGNED}::EV7.{member}"), "seller side: reference, status and claims"));
    }
    file_trials(
        all,
        SALT,
        run,
        &["EV8", "plantLeafNotRoot"],
        &[("EV9", "seller side: the RedeemedDelegation event, settlement status and recovery")],
    );
}

fn run(key: &str, f: &File) -> Outcome {
    match key {
        "EV7" => ev7(f),
        "EV8" => ev8(f),
        "plantLeafNotRoot" => plant_leaf_not_root(f),
        other => Err(fail(format!("unhandled key {other}"))),
    }
}

fn unsigned() -> &'static dyn Pairing {
    terms::pairing(erc7710::ID).unwrap()
}

fn salt_level() -> &'static dyn Pairing {
    terms::pairing(erc7710_salt::ID).unwrap()
}

/// The request both levels build: the option's chain, asset, payee and amount (a decimal string), and salt H.
fn request_is_the_option(f: &File, request: &SigningRequest) -> Outcome {
    let SigningRequest::Erc7710(fields) = request else { return Err(fail(format!("kind {}", request.kind()))) };
    let option = &f.fixed()["option"];
    let chain: u64 = option["network"].as_str().unwrap().strip_prefix("eip155:").unwrap().parse().unwrap();
    let want = json!({
        "chainId": chain,
        "token": option["asset"],
        "payTo": option["payTo"],
        "amount": option["amount"],
        "salt": f.fixed()["H"],
    });
    same("request", &Value::Object(fields.clone()), &want)?;
    eq("kind first", request.to_json().as_object().unwrap().keys().next().map(String::as_str), Some("kind"))
}

/// EV7: the unsigned level reads H from the echoed legal context, refuses a payment without it, and reads a
/// payment naming another manager, which the salt level refuses (so that payment is the unsigned level's).
fn ev7(f: &File) -> Outcome {
    let ev = &f.v["EV7"];
    let presented = f.presented();
    // The completed payment is the B6 payment: build from B2's document and complete with B6's answer.
    let built = erc7710::build(&f.choice(), &f.h()).map_err(|r| fail(r.to_string()))?;
    request_is_the_option(f, &built.request().unwrap().unwrap())?;
    let answer = presented["payload"].clone();
    let payment = payment_of(built.complete(&[answer.into()], &f.chosen()))?;
    same("completed payment (the B6 payment)", &payment, &presented)?;
    eq("pairing of the payment", f.pairing().id(), ev["expectPairingOfPayment"].as_str().unwrap())?;
    eq("bound", bound_of(unsigned(), &presented), Ok(ev["expectBound"].as_str().unwrap().to_owned()))?;
    let mut without = presented.clone();
    without.as_object_mut().unwrap().remove("extensions");
    eq("without the extension", bound_of(unsigned(), &without).err(), want_code(&ev["withoutExtension"]))?;
    eq("other manager", presented["payload"]["delegationManager"].as_str(), ev["otherManager"].as_str())?;
    eq("salt level of it", bound_of(salt_level(), &presented).err(), Some("x402/manager-not-reference".to_owned()))
}

/// The fixture's leaf delegation, unsigned.
fn leaf(f: &File) -> abi::Delegation {
    let l = &f.fixed()["leaf"];
    abi::Delegation {
        delegate: l["delegate"].as_str().unwrap().parse().unwrap(),
        delegator: l["delegator"].as_str().unwrap().parse().unwrap(),
        authority: l["authority"].as_str().unwrap().parse().unwrap(),
        caveats: DelegationSigner::caveats(l),
        salt: U256::from_be_bytes(l["salt"].as_str().unwrap().parse::<B256>().unwrap().0),
        signature: Bytes::new(),
    }
}

/// EV8: the leaf's EIP-712 hashes and signature, the permission context (the B6 payment's), bound, and the
/// refusals of another manager, an empty context and malformed contexts.
fn ev8(f: &File) -> Outcome {
    let ev = &f.v["EV8"];
    let d = &f.fixed()["delegationDomain"];
    let manager: Address = f.fixed()["delegationManager"].as_str().unwrap().parse().unwrap();
    eq("manager", manager, delegation::DELEGATION_MANAGER.parse().unwrap())?;
    eq("domain manager", d["verifyingContract"].as_str().unwrap().parse::<Address>().unwrap(), manager)?;
    let chain_id = d["chainId"].as_u64().unwrap();
    let domain = delegation::domain(chain_id, manager);
    eq("domain name", domain.name.as_deref(), d["name"].as_str())?;
    eq("domain version", domain.version.as_deref(), d["version"].as_str())?;
    eq("domain hash", domain.separator().to_string(), ev["expectDomainHash"].as_str().unwrap().to_owned())?;
    let mut l = leaf(f);
    eq("root authority", l.authority, delegation::ROOT_AUTHORITY)?;
    eq(
        "struct hash",
        delegation::delegation_hash(&l).to_string(),
        ev["expectStructHash"].as_str().unwrap().to_owned(),
    )?;
    let digest = delegation::signing_hash(&l, chain_id, manager);
    eq("digest", digest.to_string(), ev["expectDigest"].as_str().unwrap().to_owned())?;
    eq("digest (sol! signing hash)", delegation::signed_form(&l).eip712_signing_hash(&domain), digest)?;
    let signature = f.local().sign_digest(&digest.0).unwrap();
    eq("signature", signature.as_str(), ev["expectSignature"].as_str().unwrap())?;
    l.signature = signature.parse().unwrap();
    let context = delegation::encode_permission_context(std::slice::from_ref(&l));
    let bytes = hex::decode(&context[2..]).unwrap();
    eq("context bytes", bytes.len() as u64, ev["expectContextBytes"].as_u64().unwrap())?;
    eq(
        "context sha256",
        format!("0x{}", hex::encode(Sha256::digest(&bytes))),
        ev["expectContextSha256"].as_str().unwrap().to_owned(),
    )?;
    let presented = f.presented();
    eq("the B6 context", Some(context.as_str()), presented["payload"]["permissionContext"].as_str())?;
    eq("decodes back", delegation::decode_permission_context(&context), Ok(vec![l]))?;
    // Build from B2's document, answer with the signed leaf: the B6 payment; the salt level reads H from it.
    let built = erc7710_salt::build(&f.choice(), &f.h()).map_err(|r| fail(r.to_string()))?;
    request_is_the_option(f, &built.request().unwrap().unwrap())?;
    let answer = json!({
        "delegationManager": f.fixed()["delegationManager"],
        "permissionContext": context,
        "delegator": f.fixed()["payer"],
    });
    let payment = payment_of(built.complete(&[answer.into()], &f.chosen()))?;
    same("completed payment (the B6 payment)", &payment, &presented)?;
    eq("pairing of the payment", f.pairing().id(), ev["expectPairingOfPayment"].as_str().unwrap())?;
    eq("bound", bound_of(salt_level(), &payment), Ok(ev["expectBound"].as_str().unwrap().to_owned()))?;

    let other = &ev["otherManager"];
    let mut p = payment.clone();
    p["payload"]["delegationManager"] = other["manager"].clone();
    eq("other manager (salt level)", bound_of(salt_level(), &p).err(), want_code(&other["expectSaltBound"]))?;
    eq("other manager's pairing", other["expectPairingOfPayment"].as_str(), Some(erc7710::ID))?;
    eq("other manager (unsigned level)", bound_of(unsigned(), &p), Ok(f.h().to_hex()))?;
    // The manager on a chain whose deployment record does not hold it.
    let mut off_chain = payment.clone();
    off_chain["accepted"]["network"] = json!("eip155:7");
    eq("manager off its chains", bound_of(salt_level(), &off_chain).err(), Some("x402/manager-not-reference".into()))?;

    let mut p = payment.clone();
    p["payload"]["permissionContext"] = ev["emptyContext"]["context"].clone();
    eq("empty context", bound_of(salt_level(), &p).err(), want_code(&ev["emptyContext"]))?;
    let malformed = &ev["malformedContext"];
    for case in malformed["cases"].as_array().unwrap() {
        let mut p = payment.clone();
        p["payload"]["permissionContext"] = case.clone();
        eq(&format!("malformed context {case}"), bound_of(salt_level(), &p).err(), want_code(malformed))?;
    }
    Ok(())
}

/// A two-delegation context whose root carries salt H and whose leaf (delegate F) carries SHA-256("abd"): bound
/// reads the leaf's salt, never H.
fn plant_leaf_not_root(f: &File) -> Outcome {
    let plant = &f.v["plantLeafNotRoot"];
    let root = leaf(f);
    let leaf_salt: B256 = plant["leafSalt"].as_str().unwrap().parse().unwrap();
    // F, the file's facilitator (Anvil account 2), is the fixture root's delegate; it redelegates to itself.
    let f_address = root.delegate;
    let child = abi::Delegation {
        delegate: f_address,
        delegator: root.delegate,
        authority: delegation::delegation_hash(&root),
        caveats: vec![],
        salt: U256::from_be_bytes(leaf_salt.0),
        signature: Bytes::new(),
    };
    let context = delegation::encode_permission_context(&[child, root]);
    let mut p = f.presented();
    p["payload"]["permissionContext"] = json!(context);
    let got = bound_of(salt_level(), &p);
    eq("bound", got.clone(), Ok(plant["expectBound"].as_str().unwrap().to_owned()))?;
    ensure(got != Ok(f.h().to_hex()), || "bound read the root's salt".into())
}
