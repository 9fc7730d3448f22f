//! `x402-auth-capture-eip155-eip3009.json` and `x402-auth-capture-eip155-permit2.json`: the commerce-payments
//! escrow, bound mode (a receiver authorizer), and the refusals of the first file.

use alloy_primitives::{Address, U256};
use alloy_sol_types::SolStruct;
use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::AtrHash;
use terms::pairing::Unsigned;
use terms::rail::evm::escrow::{self, PaymentInfo, Terms};
use terms::x402::evm::{auth_capture_eip3009, auth_capture_permit2};

use super::{File, bound_of, code_of, fail, file_trials, matches_truncated, payment_of, same, want_code};
use crate::{Outcome, eq, ignored};

const EIP3009: &str = "x402-auth-capture-eip155-eip3009.json";
const PERMIT2: &str = "x402-auth-capture-eip155-permit2.json";

pub(super) fn trials(all: &mut Vec<Trial>) {
    file_trials(
        all,
        EIP3009,
        run,
        &["EV3", "EV4", "plantNonceNotPayment", "saltNotBound", "escrowNotCanonical", "autoCapture", "saltMalformed"],
        &[
            ("EV5", "seller side: the escrow's PaymentAuthorized and PaymentCharged event topics"),
            ("EV6", "seller side: settlement status from receipts"),
        ],
    );
    all.push(ignored(&format!("{EIP3009}::EV4.expectTransferDigest"), "seller side: the payment's reference"));
    file_trials(all, PERMIT2, run, &["EV3", "EV4"], &[]);
    all.push(ignored(&format!("{PERMIT2}::EV4.expectSearch"), "seller side: the log search that finds the payment"));
}

fn run(key: &str, f: &File) -> Outcome {
    match key {
        "EV3" => ev3(f),
        "EV4" => ev4(f),
        "plantNonceNotPayment" => plant_nonce_not_payment(f),
        "saltNotBound" => salt_not_bound(f),
        "escrowNotCanonical" | "autoCapture" => option_refused(f, key),
        "saltMalformed" => salt_malformed(f),
        other => Err(fail(format!("unhandled key {other}"))),
    }
}

fn is_eip3009(f: &File) -> bool {
    f.pairing_id() == auth_capture_eip3009::ID
}

fn option_map(option: &Value) -> serde_json::Map<String, Value> {
    option.as_object().unwrap().clone()
}

/// now + maxTimeoutSeconds: the payment's preApprovalExpiry.
fn deadline(f: &File) -> u64 {
    f.fixed()["now"].as_u64().unwrap() + f.fixed()["option"]["maxTimeoutSeconds"].as_u64().unwrap()
}

/// The option without its receiver authorizer: unbound (policy is zero too).
fn unbound_option(f: &File) -> Value {
    let mut option = f.fixed()["option"].clone();
    option["extra"].as_object_mut().unwrap().remove("receiverAuthorizer");
    option
}

/// EV3: the salt commitment, the signature nonce and the escrow's payment hash, bound and unbound.
fn ev3(f: &File) -> Outcome {
    let ev = &f.v["EV3"];
    let h = f.h();
    let terms = Terms::of(&option_map(&f.fixed()["option"])).map_err(|r| fail(r.to_string()))?;
    eq("escrow", terms.deployment.escrow, ev["escrow"].as_str().unwrap())?;
    eq("bound mode", terms.bound, true)?;
    let typehash = alloy_primitives::keccak256(PaymentInfo::eip712_encode_type().as_bytes()).to_string();
    eq("PaymentInfo type hash", typehash.as_str(), ev["expectPaymentInfoTypeHash"].as_str().unwrap())?;
    eq(
        "PaymentInfo type hash (constant)",
        escrow::PAYMENT_INFO_TYPEHASH,
        ev["expectPaymentInfoTypeHash"].as_str().unwrap(),
    )?;
    let receiver_authorizer: Address =
        f.fixed()["option"]["extra"]["receiverAuthorizer"].as_str().unwrap().parse().unwrap();
    let bind = escrow::bind_salt(receiver_authorizer, Address::ZERO, &h);
    eq("bind salt", bind.to_hex(), ev["expectBindSalt"].as_str().unwrap().to_owned())?;
    eq("salt for H", terms.salt_for(&h), bind)?;
    let nonce = terms.signature_nonce(&bind, deadline(f)).unwrap();
    eq("signature nonce", nonce.to_hex(), ev["bound"]["expectSignatureNonce"].as_str().unwrap().to_owned())?;
    let escrow_address: Address = terms.deployment.escrow.parse().unwrap();
    let payer: Address = f.fixed()["payer"].as_str().unwrap().parse().unwrap();
    let expiry = alloy_primitives::aliases::U48::from(deadline(f));
    let hash = escrow::payment_hash(terms.chain_id, escrow_address, &terms.info(payer, &bind, expiry));
    eq("payment hash", hash.to_string(), ev["bound"]["expectPaymentHash"].as_str().unwrap().to_owned())?;

    let unbound = Terms::of(&option_map(&unbound_option(f))).map_err(|r| fail(r.to_string()))?;
    eq("unbound mode", unbound.bound, false)?;
    eq("unbound salt is H", unbound.salt_for(&h), h)?;
    let nonce = unbound.signature_nonce(&h, deadline(f)).unwrap();
    matches_truncated(&nonce.to_hex(), &ev["unbound"]["expectSignatureNonce"])?;
    let hash = escrow::payment_hash(unbound.chain_id, escrow_address, &unbound.info(payer, &h, expiry));
    matches_truncated(&hash.to_string(), &ev["unbound"]["expectPaymentHash"])
}

/// EV4: the build (bound mode), its digest and signature, the completed payment (the B6 payment), and bound.
fn ev4(f: &File) -> Outcome {
    let ev = &f.v["EV4"];
    let h = f.h();
    let built = if is_eip3009(f) {
        auth_capture_eip3009::build(&f.choice(), &h)
    } else {
        auth_capture_permit2::build(&f.choice(), &h)
    }
    .map_err(|r| fail(r.to_string()))?;
    let typed = built.typed_data();
    let message = Value::Object(typed.message.clone());
    let signature_nonce = f.v["EV3"]["bound"]["expectSignatureNonce"].as_str().unwrap();
    if is_eip3009(f) {
        eq("to", message["to"].as_str(), ev["expectTo"].as_str())?;
        eq("nonce", message["nonce"].as_str(), Some(signature_nonce))?;
    } else {
        eq("spender", message["spender"].as_str(), ev["expectSpender"].as_str())?;
        let n = U256::from_be_bytes(AtrHash::parse(signature_nonce).unwrap().as_bytes().to_owned()).to_string();
        eq("nonce", message["nonce"].as_str(), Some(n.as_str()))?;
        eq("no witness", message.get("witness"), None)?;
    }
    eq(
        "validBefore / deadline",
        message.get("validBefore").or(message.get("deadline")),
        Some(&json!(deadline(f).to_string())),
    )?;
    let parts = auth_capture_eip3009::eip712_parts(typed).ok_or_else(|| fail("no parts"))?;
    eq("digest", parts.digest.to_string(), ev["expectDigest"].as_str().unwrap().to_owned())?;
    eq("digest (alloy-dyn-abi)", typed.signing_hash(), Some(parts.digest))?;
    if let Some(t) = ev.get("expectTypeHash") {
        matches_truncated(&parts.type_hash.to_string(), t)?;
    }
    let signature = f.local().sign_digest(&parts.digest.0).unwrap();
    let presented = f.presented();
    let want_signature = ev.get("expectSignature").unwrap_or(&presented["payload"]["signature"]);
    eq("signature", Some(signature.as_str()), want_signature.as_str())?;
    let payment = payment_of(built.complete(&[signature.as_str().into()], &f.chosen()))?;
    same("completed payment (the B6 payment)", &payment, &presented)?;
    eq("bound", bound_of(f.pairing(), &payment), Ok(ev["expectBound"].as_str().unwrap().to_owned()))
}

/// A bound payload with saltNonce H and salt bindSalt(R, 0, H) whose authorization nonce is the unbound signature
/// nonce: never H.
fn plant_nonce_not_payment(f: &File) -> Outcome {
    let h = f.h();
    let unbound = Terms::of(&option_map(&unbound_option(f))).map_err(|r| fail(r.to_string()))?;
    let mut p = f.presented();
    eq("saltNonce", p["payload"]["saltNonce"].as_str(), Some(h.to_hex().as_str()))?;
    eq("salt", p["payload"]["salt"].as_str(), f.v["EV3"]["expectBindSalt"].as_str())?;
    let nonce = unbound.signature_nonce(&h, deadline(f)).unwrap();
    p["payload"]["authorization"]["nonce"] = json!(nonce.to_hex());
    eq("bound", bound_of(f.pairing(), &p).err(), want_code(&f.v["plantNonceNotPayment"]))
}

/// A bound payload whose salt is not bindSalt(R, 0, saltNonce); and an unbound option's payload that carries a
/// saltNonce.
fn salt_not_bound(f: &File) -> Outcome {
    let want = want_code(&f.v["saltNotBound"]);
    let h = f.h();
    let mut p = f.presented();
    p["payload"]["salt"] = json!(h.to_hex());
    eq("salt not the commitment", bound_of(f.pairing(), &p).err(), want.clone())?;
    // Unbound: the signed payment of the unbound option, with a saltNonce added.
    let option = unbound_option(f);
    let choice = f.choice_with_option(option);
    let built = auth_capture_eip3009::build(&choice, &h).map_err(|r| fail(r.to_string()))?;
    let signature = f.local().sign_digest(&built.typed_data().signing_hash().unwrap().0).unwrap();
    let mut chosen = f.chosen();
    chosen.build_input = choice;
    let mut payment = payment_of(built.complete(&[signature.as_str().into()], &chosen))?;
    eq("unbound payload has no saltNonce", payment["payload"].get("saltNonce"), None)?;
    eq("unbound bound", bound_of(f.pairing(), &payment), Ok(h.to_hex()))?;
    payment["payload"]["saltNonce"] = json!(h.to_hex());
    eq("unbound with a saltNonce", bound_of(f.pairing(), &payment).err(), want)
}

/// An option naming another escrow, or auto-capture: build and bound refuse it, read offers none of it.
fn option_refused(f: &File, key: &str) -> Outcome {
    let row = &f.v[key];
    let mut option = f.fixed()["option"].clone();
    match key {
        "escrowNotCanonical" => option["extra"]["authCaptureEscrow"] = row["authCaptureEscrow"].clone(),
        _ => option["extra"]["autoCapture"] = json!(true),
    }
    let want = want_code(row);
    let choice = f.choice_with_option(option.clone());
    eq("build (eip3009)", code_of(auth_capture_eip3009::build(&choice, &f.h())), want.clone())?;
    eq("build (permit2)", code_of(auth_capture_permit2::build(&choice, &f.h())), want.clone())?;
    let mut p = f.presented();
    p["accepted"] = option;
    eq("bound", bound_of(f.pairing(), &p).err(), want)?;
    eq("read", code_of(f.pairing().read(&choice["required"])), Some("x402/no-payable-option".to_owned()))
}

fn salt_malformed(f: &File) -> Outcome {
    let row = &f.v["saltMalformed"];
    let mut p = f.presented();
    p["payload"]["salt"] = row["salt"].clone();
    eq("salt", bound_of(f.pairing(), &p).err(), want_code(row))?;
    let mut p = f.presented();
    p["payload"]["saltNonce"] = row["salt"].clone();
    eq("saltNonce", bound_of(f.pairing(), &p).err(), want_code(row))
}
