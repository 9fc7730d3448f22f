//! `x402-exact-eip155-permit2.json` and `x402-upto-eip155-permit2.json`.

use alloy_primitives::keccak256;
use alloy_sol_types::SolStruct;
use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::pairing::Unsigned;
use terms::rail::evm::permit2::{self, exact, upto};
use terms::x402::evm::{exact_permit2, upto_permit2};

use super::{File, bound_of, code_of, ensure, fail, file_trials, matches_truncated, payment_of, same, want_code};
use crate::{Outcome, eq, ignored};

const EXACT: &str = "x402-exact-eip155-permit2.json";
const UPTO: &str = "x402-upto-eip155-permit2.json";

/// The head of Permit2's witness type string: the contract appends the witnessTypeString to it.
const WITNESS_STUB: &str =
    "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

pub(super) fn trials(all: &mut Vec<Trial>) {
    file_trials(
        all,
        EXACT,
        run,
        &["EV1"],
        &[
            ("EV6", "seller side: settlement status from receipts and Permit2's nonce bitmap"),
            ("plantEmitter", "seller side: settlement status of a planted receipt"),
        ],
    );
    all.push(ignored(&format!("{EXACT}::EV1.expectReferenceDigest"), "seller side: the payment's reference"));
    file_trials(
        all,
        UPTO,
        run,
        &["EV2", "facilitatorMissing"],
        &[("EV6", "seller side: settlement status from receipts and Permit2's nonce bitmap")],
    );
    all.push(ignored(&format!("{UPTO}::EV2.expectReference"), "seller side: the payment's reference"));
}

fn run(key: &str, f: &File) -> Outcome {
    match key {
        "EV1" => built(f, &f.v["EV1"], false),
        "EV2" => built(f, &f.v["EV2"], true),
        "facilitatorMissing" => facilitator_missing(f),
        other => Err(fail(format!("unhandled key {other}"))),
    }
}

/// EV1 / EV2: build, digest, signature, the completed payment (which is the B6 payment), and bound.
fn built(f: &File, ev: &Value, upto: bool) -> Outcome {
    let h = f.h();
    let built = if upto { upto_permit2::build(&f.choice(), &h) } else { exact_permit2::build(&f.choice(), &h) }
        .map_err(|r| fail(r.to_string()))?;
    let typed = built.typed_data();
    let message = Value::Object(typed.message.clone());
    eq("spender", message["spender"].as_str(), ev["expectSpender"].as_str())?;
    eq("deadline", message["deadline"].as_str(), ev["expectDeadline"].as_str())?;
    let nonce_decimal = alloy_primitives::U256::from_be_bytes(*h.as_bytes()).to_string();
    eq("message nonce (uint256 of H)", message["nonce"].as_str(), Some(nonce_decimal.as_str()))?;
    if let Some(n) = ev.get("expectNonceDecimal") {
        eq("nonce decimal", message["nonce"].as_str(), n.as_str())?;
    }
    let authorization = &built.payload()["permit2Authorization"];
    if let Some(n) = ev.get("expectNonceHex") {
        eq("payload nonce (hex)", authorization["nonce"].as_str(), n.as_str())?;
    }
    // The digest from the sol! static structs, cross-checked with alloy-dyn-abi over the JSON the wallet gets.
    let parts = permit2::eip712_parts(typed).ok_or_else(|| fail("no parts"))?;
    eq("digest", parts.digest.to_string(), ev["expectDigest"].as_str().unwrap().to_owned())?;
    eq("digest (alloy-dyn-abi)", typed.signing_hash(), Some(parts.digest))?;
    let witness_type = ev["witnessTypeString"].as_str().unwrap();
    eq("type hash", parts.type_hash, keccak256(format!("{WITNESS_STUB}{witness_type}")))?;
    let (encode_type, witness_hash) = if upto {
        (upto::PermitWitnessTransferFrom::eip712_encode_type(), upto::Witness::eip712_encode_type())
    } else {
        (exact::PermitWitnessTransferFrom::eip712_encode_type(), exact::Witness::eip712_encode_type())
    };
    ensure(encode_type.ends_with(witness_type), || format!("{encode_type} does not end with {witness_type}"))?;
    matches_truncated(&keccak256(witness_hash.as_bytes()).to_string(), &ev["expectWitnessTypeHash"])?;
    if let Some(t) = ev.get("expectTypeHash") {
        matches_truncated(&parts.type_hash.to_string(), t)?;
    }
    // RFC 6979: the payer key's signature of the digest is the file's (EV1) or the B6 payment's (EV2).
    let signature = f.local().sign_digest(&parts.digest.0).unwrap();
    let presented = f.presented();
    eq(
        "signature",
        Some(signature.as_str()),
        ev.get("expectSignature").unwrap_or(&presented["payload"]["signature"]).as_str(),
    )?;
    let payment = payment_of(built.complete(&[signature.as_str().into()], &f.chosen()))?;
    same("completed payment (the B6 payment)", &payment, &presented)?;
    let pairing = f.pairing();
    eq("bound", bound_of(pairing, &payment), Ok(ev["expectBound"].as_str().unwrap().to_owned()))?;
    if let Some(hex_nonce) = ev.get("boundOfHexNonce") {
        let mut p = payment.clone();
        p["payload"]["permit2Authorization"]["nonce"] = json!(h.to_hex());
        eq("bound of hex nonce", bound_of(pairing, &p), Ok(hex_nonce.as_str().unwrap().to_owned()))?;
    }
    if let Some(other) = ev.get("uptoProxyAsSpender") {
        let mut p = payment.clone();
        p["payload"]["permit2Authorization"]["spender"] = other["spender"].clone();
        eq("upto proxy as spender", bound_of(pairing, &p).err(), want_code(other))?;
    }
    if let Some(malformed) = ev.get("nonceMalformed") {
        let mut p = payment;
        p["payload"]["permit2Authorization"]["nonce"] = malformed["nonce"].clone();
        eq("nonce malformed", bound_of(pairing, &p).err(), want_code(malformed))?;
    }
    Ok(())
}

/// An upto option without `extra.facilitatorAddress`: read offers none of it, build and bound refuse it.
fn facilitator_missing(f: &File) -> Outcome {
    let want = want_code(&f.v["facilitatorMissing"]);
    let mut option = f.fixed()["option"].clone();
    option["extra"].as_object_mut().unwrap().remove("facilitatorAddress");
    let choice = f.choice_with_option(option.clone());
    eq("build", code_of(upto_permit2::build(&choice, &f.h())), want.clone())?;
    let mut presented = f.presented();
    presented["accepted"] = option.clone();
    eq("bound", bound_of(f.pairing(), &presented).err(), want.clone())?;
    eq("read", code_of(f.pairing().read(&choice["required"])), Some("x402/no-payable-option".to_owned()))?;
    // With no extra at all, the same.
    let mut bare = option;
    bare.as_object_mut().unwrap().remove("extra");
    eq("build without extra", code_of(upto_permit2::build(&f.choice_with_option(bare), &f.h())), want)
}
