//! The gate over the six pairings: transact with a local signer, check reading H back from every completed payment
//! (and refusing it for other bytes), the agreement exchange for the unsigned ERC-7710 level, and bad input where
//! the behaviour was taken from the reference (integraledger-terms 0.4.0, run on the same payments).

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::x402::evm::{
    auth_capture_eip3009, auth_capture_permit2, erc7710, erc7710_salt, exact_permit2, upto_permit2,
};
use terms::{
    DeclineCode, Finish, FixedClock, Options, Pairing, SigningRequest, TransactOutcome, check, confirm, finish,
    transact,
};

use super::{DelegationSigner, File, ensure, fail, same};
use crate::support::{CountingSigner, Reply, ScriptedFetch, hex, paused, vectors};
use crate::{Fixed, Outcome, eq, link_of, signed_of};

const FILES: [(&str, &str); 5] = [
    (exact_permit2::ID, "x402-exact-eip155-permit2.json"),
    (upto_permit2::ID, "x402-upto-eip155-permit2.json"),
    (erc7710_salt::ID, "x402-exact-eip155-erc7710-salt.json"),
    (auth_capture_eip3009::ID, "x402-auth-capture-eip155-eip3009.json"),
    (auth_capture_permit2::ID, "x402-auth-capture-eip155-permit2.json"),
];

pub(super) fn trials(all: &mut Vec<Trial>) {
    for (id, file) in FILES {
        all.push(Trial::test(format!("x402-evm::{id}::transact and check"), move || transact_and_check(file)));
    }
    all.push(Trial::test(format!("x402-evm::{}::agreement exchange", erc7710::ID), agreement_exchange));
    all.push(Trial::test(format!("x402-evm::{}::no agreement URL", erc7710::ID), agreement_not_offered));
    all.push(Trial::test("x402-evm::bad input::payments naming another spender or amount", other_spender_or_amount));
    all.push(Trial::test("x402-evm::bad input::delegations", bad_delegations));
    all.push(Trial::test("x402-evm::bad input::signatures", bad_signatures));
    all.push(Trial::test("x402-evm::registry", registry));
    all.push(Trial::test("x402-evm::read", read));
}

/// The bytes a vector file's H is the hash of ("abc"), and the planted bytes ("abd"), from its B6 row.
fn bytes_of(f: &File) -> (Vec<u8>, Vec<u8>) {
    let check = &f.row("B6")["input"]["check"];
    (hex(check[0]["bytesHex"].as_str().unwrap()), hex(check[1]["bytesHex"].as_str().unwrap()))
}

fn options(f: &File) -> Options {
    Options::new().clock(FixedClock(f.fixed()["now"].as_u64().unwrap()))
}

fn account(f: &File) -> String {
    f.row("B2")["input"]["account"].as_str().unwrap().to_owned()
}

/// The members of a completed payment where H (or what commits to it) rides, for each pairing.
fn h_places(id: &str) -> &'static [&'static str] {
    match id {
        exact_permit2::ID | upto_permit2::ID => &["/payload/permit2Authorization/nonce"],
        erc7710_salt::ID => &["/payload/permissionContext"],
        auth_capture_eip3009::ID => &["/payload/saltNonce", "/payload/salt", "/payload/authorization/nonce"],
        _ => &["/payload/saltNonce", "/payload/salt", "/payload/permit2Authorization/nonce"],
    }
}

/// transact over the file's document with its link serving the ATR: one signer call, the file's B6 payment (every
/// signature here is deterministic), and check reading H back from it and refusing other bytes or other places.
fn transact_and_check(file: &str) -> Outcome {
    let f = File::load(file);
    let pairing = f.pairing();
    let (atr, planted) = bytes_of(&f);
    let doc = f.doc();
    let fetch = ScriptedFetch::new().script(&link_of(&doc), vec![Reply::ok(atr.clone())]);
    let (got, kinds) = if pairing.id() == erc7710_salt::ID {
        let signer = DelegationSigner::new(f.key(), &account(&f));
        let got = paused().block_on(transact(&doc, pairing, &signer, &fetch, &options(&f)));
        (got, signer.kinds())
    } else {
        let signer = CountingSigner::new(f.key(), &account(&f));
        let got = paused().block_on(transact(&doc, pairing, &signer, &fetch, &options(&f)));
        (got, signer.calls().iter().map(|r| r.kind().to_owned()).collect())
    };
    let got = got.map_err(|d| fail(format!("{d:?}")))?;
    let want_kind = if pairing.id() == erc7710_salt::ID { "erc7710" } else { "eip712" };
    eq("signer calls", kinds, vec![want_kind.to_owned()])?;
    let signed = signed_of(&got);
    same("signed (the B6 payment)", &signed, &f.presented())?;
    eq("check", check(&atr, &signed, pairing).map(|c| c.h), Ok(f.h()))?;
    eq("check other bytes", check(&planted, &signed, pairing).map_err(|d| d.code), Err(DeclineCode::SignedNotBound))?;
    // Each place H rides in (or commits to it) changed: H there replaced by the planted bytes' hash, or else the
    // value's last digit flipped. check no longer reads H.
    let (h_digits, planted_digits) =
        (f.h().to_hex()[2..].to_owned(), terms::atr_hash(&planted).to_hex()[2..].to_owned());
    for place in h_places(pairing.id()) {
        let mut p = signed.clone();
        let value = p.pointer_mut(place).ok_or_else(|| fail(format!("no {place}")))?;
        let text = value.as_str().unwrap().to_owned();
        let changed = if text.contains(&h_digits) {
            text.replace(&h_digits, &planted_digits)
        } else {
            let last = text.chars().last().unwrap();
            format!("{}{}", &text[..text.len() - 1], if last == '0' { '1' } else { '0' })
        };
        *value = json!(changed);
        let got = check(&atr, &p, pairing).map_err(|d| d.code);
        eq(&format!("check with {place} changed"), got, Err(DeclineCode::SignedNotBound))?;
    }
    Ok(())
}

/// The unsigned ERC-7710 level: an offer naming an agreement URL beside the link (buyer.json's D, its option made
/// ERC-7710). Without an approval the agreement payment comes back to approve; with it, the agreement payment
/// (EIP-3009, nonce H) is signed and paid once, and only with the receipt in hand is the delegation asked for.
fn agreement_exchange() -> Outcome {
    let fixed = Fixed::load();
    let salt_file = File::load("x402-exact-eip155-erc7710.json");
    let mut doc = fixed.doc();
    let option = salt_file.fixed()["option"].clone();
    for k in ["network", "asset", "payTo"] {
        eq(k, &option[k], &doc["accepts"][0][k])?;
    }
    doc["accepts"] = json!([option]);
    let url = fixed.agreement("url");
    doc["extensions"]["legalContext"]["info"]["legalContextAgreementUrl"] = url.clone();
    let url = url.as_str().unwrap().to_owned();
    // The agreement URL answers as in BA1: 402 with the agreement request, 202 (Retry-After 2), 200 with the receipt.
    let ba1 = crate::row_named(&vectors("buyer.json")["rows"], "BA1").clone();
    let (replies, _) = crate::agreement_replies(&fixed, &ba1["input"]["agreement"]);
    let fetch =
        ScriptedFetch::new().script_repeating(&link_of(&doc), vec![Reply::ok(fixed.bytes("A"))]).script(&url, replies);
    let signer = DelegationSigner::new(fixed.v["payerKey"].as_str().unwrap(), &fixed.account());
    let pairing = terms::pairing(erc7710::ID).map_err(|d| fail(d.detail))?;
    paused().block_on(async {
        let first = transact(&doc, pairing, &signer, &fetch, &fixed.options()).await;
        let Ok(TransactOutcome::ToApprove(approve)) = first else { return Err(fail(format!("{first:?}"))) };
        eq("signer calls before approval", signer.kinds().len(), 0)?;
        eq(
            "approval",
            crate::approval_of(&TransactOutcome::ToApprove(approve.clone())),
            Some(ba1["expect"]["approval"].clone()),
        )?;
        let options = fixed.options().approved(approve.approve.clone());
        let start = tokio::time::Instant::now();
        let done = transact(&doc, pairing, &signer, &fetch, &options).await.map_err(|d| fail(format!("{d:?}")))?;
        eq("seconds waited for the 202", start.elapsed().as_secs(), 2)?;
        let TransactOutcome::Signed(t) = done else { return Err(fail("not signed")) };
        eq("signer kinds", signer.kinds(), vec!["eip712".to_owned(), "erc7710".to_owned()])?;
        let requests = signer.requests();
        eq("agreement message", crate::typed_message(&requests[0]), ba1["expect"]["agreementMessage"].clone())?;
        let SigningRequest::Erc7710(fields) = &requests[1] else { return Err(fail("not erc7710")) };
        eq("delegation salt", fields["salt"].as_str(), Some(t.h.to_hex().as_str()))?;
        let paid = fetch.paid_of(&url);
        eq("paid agreement requests", paid.len() as u64, ba1["expect"]["paidRequests"].as_u64().unwrap())?;
        eq("the same payment re-sent", paid[0].header("payment-signature"), paid[1].header("payment-signature"))?;
        eq("agreement signature", signer.answers_of(0), ba1["expect"]["agreementSignature"].clone())?;
        eq(
            "receipt",
            serde_json::to_value(&t.agreement).unwrap(),
            fixed.agreement(ba1["expect"]["receipt"].as_str().unwrap()),
        )?;
        let signed = t.signed.ok_or_else(|| fail("no payment"))?.to_value();
        eq("check", check(&fixed.bytes("A"), &signed, pairing).map(|c| c.h), Ok(t.h))?;
        eq(
            "check C",
            check(&fixed.bytes("C"), &signed, pairing).map_err(|d| d.code),
            Err(DeclineCode::SignedNotBound),
        )?;
        // The same answer is a salt-level payment too: its leaf's salt is H.
        let mut salt_payment = signed;
        salt_payment["extensions"] = Value::Null;
        let salt = terms::pairing(erc7710_salt::ID).map_err(|d| fail(d.detail))?;
        eq("salt level reads H", salt.bound(&salt_payment, None).map(|h| h.to_hex()), Ok(t.h.to_hex()))
    })
}

/// Without an agreement URL the unsigned level declines after the comparison, and nothing is signed.
fn agreement_not_offered() -> Outcome {
    let f = File::load("x402-exact-eip155-erc7710.json");
    let (atr, _) = bytes_of(&f);
    let signer = DelegationSigner::new(f.key(), &account(&f));
    let fetch = ScriptedFetch::new().script(&link_of(&f.doc()), vec![Reply::ok(atr)]);
    let got = paused().block_on(transact(&f.doc(), f.pairing(), &signer, &fetch, &options(&f)));
    eq("decline", got.map(|_| ()).map_err(|d| d.code), Err(DeclineCode::AgreementNotOffered))?;
    eq("signer calls", signer.kinds().len(), 0)
}

/// A bound over a B6 payment changed at the JSON pointer `path`, as a hash or a code.
fn bound_changed(file: &str, path: &str, value: Value) -> Result<String, String> {
    let f = File::load(file);
    let mut p = f.presented();
    *p.pointer_mut(path).expect("the member is there") = value;
    f.pairing().bound(&p, None).map(|h| h.to_hex()).map_err(|r| r.code())
}

/// Payments naming another spender or amount than the option. The reference's bound (and so this crate's) refuses
/// a Permit2 spender other than the scheme's proxy and a payment whose escrow terms differ from the option, and
/// reads H from a payment whose permitted amount, witness or authorization value differ: the signed nonce (or
/// salt) is what binds H, and the facilitator settles what was signed.
fn other_spender_or_amount() -> Outcome {
    let other = json!("0x1111111111111111111111111111111111111111");
    let h = Ok(File::load(FILES[0].1).h().to_hex());
    let refused = |c: &str| Err(c.to_owned());
    let (ep, up) = (FILES[0].1, FILES[1].1);
    let (ae, ap) = (FILES[3].1, FILES[4].1);
    let auth = |member: &str| format!("/payload/permit2Authorization/{member}");
    type Case<'a> = (&'a str, Result<String, String>, Result<String, String>);
    let cases: Vec<Case<'_>> = vec![
        (
            "exact: another spender",
            bound_changed(ep, &auth("spender"), other.clone()),
            refused("x402/spender-not-proxy"),
        ),
        (
            "exact: the upto proxy",
            bound_changed(ep, &auth("spender"), json!(terms::rail::evm::permit2::UPTO_PERMIT2_PROXY)),
            refused("x402/spender-not-proxy"),
        ),
        (
            "exact: the proxy in lower case",
            bound_changed(ep, &auth("spender"), json!(terms::rail::evm::permit2::EXACT_PERMIT2_PROXY.to_lowercase())),
            h.clone(),
        ),
        ("exact: another amount", bound_changed(ep, &auth("permitted/amount"), json!("1")), h.clone()),
        ("exact: another token", bound_changed(ep, &auth("permitted/token"), other.clone()), h.clone()),
        ("exact: another payee", bound_changed(ep, &auth("witness/to"), other.clone()), h.clone()),
        (
            "upto: the exact proxy",
            bound_changed(up, &auth("spender"), json!(terms::rail::evm::permit2::EXACT_PERMIT2_PROXY)),
            refused("x402/spender-not-proxy"),
        ),
        ("upto: another ceiling", bound_changed(up, &auth("permitted/amount"), json!("99999999")), h.clone()),
        (
            "upto: no facilitator",
            bound_changed(up, &auth("witness"), json!({"to": other, "validAfter": "0"})),
            refused("x402/payload-malformed"),
        ),
        (
            "auth-capture: another option amount",
            bound_changed(ae, "/accepted/amount", json!("20000")),
            refused("x402/nonce-not-payment"),
        ),
        (
            "auth-capture: another validBefore",
            bound_changed(ae, "/payload/authorization/validBefore", json!("1790000061")),
            refused("x402/nonce-not-payment"),
        ),
        (
            "auth-capture: another authorization value",
            bound_changed(ae, "/payload/authorization/value", json!("1")),
            h.clone(),
        ),
        ("auth-capture: another collector", bound_changed(ae, "/payload/authorization/to", other.clone()), h.clone()),
        ("auth-capture permit2: another spender", bound_changed(ap, &auth("spender"), other), h.clone()),
        ("auth-capture permit2: another amount", bound_changed(ap, &auth("permitted/amount"), json!("1")), h.clone()),
        (
            "auth-capture permit2: the nonce in hex",
            bound_changed(ap, &auth("nonce"), json!(File::load(ae).presented()["payload"]["authorization"]["nonce"])),
            h,
        ),
    ];
    for (what, got, want) in cases {
        eq(what, got, want)?;
    }
    Ok(())
}

/// Delegations for the salt level: one whose caveat names another amount (the reference reads no caveat, so H is
/// read), one whose leaf salt is not H, one from another manager; and ERC-7710 answers complete refuses.
fn bad_delegations() -> Outcome {
    let f = File::load("x402-exact-eip155-erc7710-salt.json");
    let (atr, _) = bytes_of(&f);
    let signer = DelegationSigner::new(f.key(), &account(&f));
    let pairing = f.pairing();
    let unsigned = terms::pairing(erc7710::ID).map_err(|d| fail(d.detail))?;
    let fetch = ScriptedFetch::new().script_repeating(&link_of(&f.doc()), vec![Reply::ok(atr.clone())]);
    let confirmed = paused()
        .block_on(confirm(&f.doc(), pairing, &account(&f), &fetch, &options(&f)))
        .map_err(|d| fail(format!("{d:?}")))?;
    let Some(SigningRequest::Erc7710(fields)) = &confirmed.request else { return Err(fail("not erc7710")) };
    let finish_with = |answer: Value, p: &dyn Pairing| finish(&atr, &confirmed.chosen, &[answer.into()], p);
    let detail = |got: Result<Finish, terms::Declined>| got.map(|_| ()).map_err(|d| (d.code, d.detail));
    let not_bound = |code: &str| Err((DeclineCode::SignedNotBound, code.to_owned()));
    let read_not_bound = Err((
        DeclineCode::SignedNotBound,
        "The pairing does not read the hash of the compared bytes from the payment.".to_owned(),
    ));

    let good = signer.delegation_for(fields).map_err(|e| fail(e.to_string()))?;
    eq("a well-formed delegation", detail(finish_with(good.clone(), pairing)), Ok(()))?;
    // Another amount in the caveat's terms: the leaf's salt is still H.
    let mut caveated = signer.clone();
    // The caveat's terms made an ERC-20 amount cap of 1 unit of the option's asset (token ‖ uint256).
    let asset = f.fixed()["option"]["asset"].as_str().unwrap().to_lowercase();
    caveated.set_leaf_terms(&format!("{asset}{:064x}", 1));
    let other_amount = caveated.delegation_for(fields).map_err(|e| fail(e.to_string()))?;
    ensure(other_amount != good, || "the caveat did not change".into())?;
    eq("a caveat naming another amount", detail(finish_with(other_amount, pairing)), Ok(()))?;
    // A leaf whose salt is not H.
    let mut other_salt = fields.clone();
    other_salt.insert("salt".into(), json!(terms::atr_hash(b"abd").to_hex()));
    let planted = signer.delegation_for(&other_salt).map_err(|e| fail(e.to_string()))?;
    eq("a leaf salt other than H", detail(finish_with(planted, pairing)), read_not_bound.clone())?;
    let mut other_manager = good.clone();
    other_manager["delegationManager"] = json!("0x1111111111111111111111111111111111111111");
    eq("another manager (salt level)", detail(finish_with(other_manager.clone(), pairing)), read_not_bound)?;
    // The unsigned level completes it: it reads H from the echoed legal context (its agreement payment is the proof).
    let chosen_unsigned = terms::Chosen { pairing: erc7710::ID.into(), ..confirmed.chosen.clone() };
    eq(
        "another manager (unsigned level)",
        detail(finish(&atr, &chosen_unsigned, &[other_manager.into()], unsigned)),
        Ok(()),
    )?;
    // What complete refuses, before any bound.
    let mut no_delegator = good.clone();
    no_delegator["delegator"] = json!("nope");
    let mut odd_context = good.clone();
    odd_context["permissionContext"] = json!("0x1");
    let mut huge_context = good.clone();
    huge_context["permissionContext"] = json!(format!("0x{}", "00".repeat(32_769)));
    let mut number = good;
    number["delegator"] = json!(5);
    for (what, answer, code) in [
        ("a string answer", json!("0x1234"), "x402/signature-malformed"),
        ("a member not a string", number, "x402/signature-malformed"),
        ("a delegator not an address", no_delegator, "x402/payload-malformed"),
        ("an odd-length context", odd_context, "x402/permission-context-malformed"),
        ("a context over 32 KiB", huge_context, "x402/permission-context-malformed"),
    ] {
        eq(what, detail(finish_with(answer, pairing)), not_bound(code))?;
    }
    Ok(())
}

/// EIP-712 answers complete refuses: not a string, under 65 or over 8192 bytes, not hex.
fn bad_signatures() -> Outcome {
    let f = File::load("x402-exact-eip155-permit2.json");
    let (atr, _) = bytes_of(&f);
    let chosen = f.chosen();
    for (what, answer) in [
        ("64 bytes", json!(format!("0x{}", "11".repeat(64)))),
        ("8193 bytes", json!(format!("0x{}", "11".repeat(8193)))),
        ("no 0x", json!("11".repeat(65))),
        ("an object", json!({"signature": format!("0x{}", "11".repeat(65))})),
    ] {
        let got = finish(&atr, &chosen, &[answer.into()], f.pairing()).map(|_| ()).map_err(|d| (d.code, d.detail));
        eq(what, got, Err((DeclineCode::SignedNotBound, "x402/signature-malformed".to_owned())))?;
    }
    Ok(())
}

/// The six are built, in the registry with their public-proof flags.
fn registry() -> Outcome {
    for id in [
        exact_permit2::ID,
        upto_permit2::ID,
        erc7710::ID,
        erc7710_salt::ID,
        auth_capture_eip3009::ID,
        auth_capture_permit2::ID,
    ] {
        let entry = terms::entry(id).ok_or_else(|| fail(format!("{id} not in the registry")))?;
        let pairing = terms::pairing(id).map_err(|d| fail(d.detail))?;
        eq(id, pairing.public_proof(), entry.public_proof)?;
        eq(id, pairing.id(), id)?;
        ensure(terms::built_ids().contains(&id), || format!("{id} not built"))?;
    }
    Ok(())
}

/// Each file's document read by each of the six: the file's pairing (and, for ERC-7710, both levels) reads H, the
/// link and the one option; the others find no option of theirs. With an agreement URL beside the link, the read
/// gives it too.
fn read() -> Outcome {
    let all = [
        exact_permit2::ID,
        upto_permit2::ID,
        erc7710::ID,
        erc7710_salt::ID,
        auth_capture_eip3009::ID,
        auth_capture_permit2::ID,
    ];
    let files = [FILES[0].1, FILES[1].1, "x402-exact-eip155-erc7710.json", FILES[2].1, FILES[3].1, FILES[4].1];
    for file in files {
        let f = File::load(file);
        let mut doc = f.doc();
        let reader_ids: Vec<&str> = if f.fixed()["option"]["extra"]["assetTransferMethod"] == "erc7710" {
            vec![erc7710::ID, erc7710_salt::ID]
        } else {
            vec![f.row("B2")["pairing"].as_str().unwrap()]
        };
        for id in all {
            let got = terms::pairing(id).map_err(|d| fail(d.detail))?.read(&doc);
            if reader_ids.contains(&id) {
                let read = got.map_err(|r| fail(format!("{file} by {id}: {r}")))?;
                eq("h", read.h, f.h())?;
                eq("link", read.link.as_str(), f.fixed()["link"].as_str().unwrap())?;
                let terms::pairing::Offer::X402 { options, .. } = &read.offer else { return Err(fail("offer")) };
                eq("options", options.clone(), vec![&f.fixed()["option"]])?;
                eq("agreement", read.agreement, None)?;
            } else {
                eq(
                    &format!("{file} by {id}"),
                    got.map(|_| ()).map_err(|r| r.code()),
                    Err("x402/no-payable-option".to_owned()),
                )?;
            }
        }
        let url = "https://api.seller.example/agreement/x";
        doc["extensions"]["legalContext"]["info"]["legalContextAgreementUrl"] = json!(url);
        let read =
            terms::pairing(reader_ids[0]).map_err(|d| fail(d.detail))?.read(&doc).map_err(|r| fail(r.to_string()))?;
        eq("agreement", read.agreement.as_deref(), Some(url))?;
    }
    Ok(())
}
