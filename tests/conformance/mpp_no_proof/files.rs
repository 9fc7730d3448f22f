//! The four vector files, key by key: what the buyer reads (the placed challenge and its carrier), builds (nothing:
//! `mpp/no-signed-place`, `mpp/nothing-to-sign`) and reads back (`mpp/no-signed-place`; NEAR Intents' H from a hash
//! credential's `externalId`), the Stripe metadata bounds, the pattern's flags, and the buyer rows. What only the
//! seller computes (the issued digest, the advertise refusals) is listed as not run.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::AtrHash;
use terms::json::js_length;

use super::super::x402_evm::{File, file_trials, want_code};
use super::{FILES, bound_of, challenge, chosen_at, credential, decoded, lcp, now, with_request};
use crate::{Outcome, eq, ignored};

const CARD: &str = FILES[0];
const STRIPE: &str = FILES[1];
const SUBSCRIPTION: &str = FILES[2];
const NEAR: &str = FILES[3];

/// The pattern's members the buyer has nothing to compare with: the seller's record of the payment.
const RECORD: &str =
    "seller side: the record (claims, onChain, zeroPartyRecoverable, forwardIndexable, canonical, proves)";
const DIGEST: &str = "seller side: the digest the seller issues over the request";

pub(super) fn trials(all: &mut Vec<Trial>) {
    file_trials(
        all,
        CARD,
        run,
        &["M1", "pattern"],
        &[(
            "refusals",
            "seller side: advertise refuses an occupied externalId (a buyer reads H from the id and opaque; the peer's bound \
         of such a challenge is mpp/no-signed-place, as this crate's)",
        )],
    );
    all.push(ignored(&format!("{CARD}::M1.expectDigest"), DIGEST));
    file_trials(all, STRIPE, run, &["M2", "refusals", "pattern"], &[]);
    all.push(ignored(&format!("{STRIPE}::M2.expectDigest"), DIGEST));
    all.push(ignored(
        &format!("{STRIPE}::refusals::metadata.legal_context already order_12345"),
        "seller side: advertise refuses an occupied legal_context (the peer's buyer reads H from the id and opaque)",
    ));
    file_trials(all, SUBSCRIPTION, run, &["S1", "pattern"], &[]);
    file_trials(
        all,
        NEAR,
        run,
        &["place", "bound", "plant", "agreedRefusals"],
        &[
            ("challenge", "seller side: the challenge before advertise places H (place's input)"),
            ("occupied", "seller side: advertise refuses an occupied externalId (near/carrier-occupied)"),
        ],
    );
    for name in [CARD, STRIPE, SUBSCRIPTION] {
        all.push(ignored(&format!("{name}::pattern.record"), RECORD));
    }
}

fn run(key: &str, f: &File) -> Outcome {
    match key {
        "M1" => m1(f),
        "M2" | "S1" => stripe_request(f, key),
        "refusals" => stripe_refusals(f),
        "pattern" => pattern(f),
        "place" => place(f),
        "bound" | "plant" => near_bound(f, key),
        "agreedRefusals" => near_agreed(f),
        other => Err(format!("unhandled key {other}").into()),
    }
}

/// The file's L, checked against its H.
fn file_l(f: &File) -> Result<String, libtest_mimic::Failed> {
    let l = f.fixed()["L"].as_str().unwrap().to_owned();
    eq("L is H's LCP string", l.clone(), lcp(&f.h()))?;
    Ok(l)
}

/// The buyer's read of the file's document, its choice, the build over it and the bound over a credential echoing
/// its challenge, against the row's `expectBuild` and `expectBound`.
fn build_and_bound(f: &File, row: &Value) -> Outcome {
    let pairing = f.pairing();
    let doc = f.doc();
    let read = pairing.read(&doc).map_err(|r| r.code())?;
    eq("read h", read.h, f.h())?;
    eq("read link", read.link.as_str(), f.fixed()["link"].as_str().unwrap())?;
    eq("read agreement (the document names none)", read.agreement, None)?;
    let chosen = chosen_at(f, &doc, now())?;
    eq("chosen challenge", &chosen.build_input["challenge"], &doc[0])?;
    let built = pairing.build(&chosen, b"", &f.h()).map(|_| ()).map_err(|r| r.code());
    eq("build", built.err(), want_code(&row["expectBuild"]))?;
    let presented = credential(&challenge(f), json!({}));
    eq("bound", bound_of(pairing, &presented).err(), want_code(&row["expectBound"]))?;
    // Whatever the payload and source the buyer's card or Stripe token gives: nothing signed carries H.
    let mut tokened = credential(&challenge(f), json!({"token": "tok_visa", "spt": "spt_1"}));
    tokened["source"] = json!("did:pkh:eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    eq("bound with a token and a source", bound_of(pairing, &tokened).err(), want_code(&row["expectBound"]))
}

/// M1: the placed request is M1's with `externalId` = L (77 characters), and build and bound refuse.
fn m1(f: &File) -> Outcome {
    let m = &f.v["M1"];
    let placed = decoded(&challenge(f)["request"]);
    let carried = placed["externalId"].as_str().unwrap_or_default();
    eq("externalId", carried, m["expectExternalId"].as_str().unwrap())?;
    eq("externalId length", js_length(carried) as u64, m["expectExternalIdLength"].as_u64().unwrap())?;
    eq("externalId is L", carried.to_owned(), file_l(f)?)?;
    let mut unplaced = placed.clone();
    unplaced.as_object_mut().unwrap().shift_remove("externalId");
    eq("the request without its carrier", &unplaced, &m["request"])?;
    build_and_bound(f, m)
}

/// M2 and S1: the placed request is the row's with `methodDetails.metadata.legal_context` = L beside the seller's
/// own metadata (S1: `expectMetadata`), and build and bound refuse.
fn stripe_request(f: &File, key: &str) -> Outcome {
    let row = &f.v[key];
    let l = file_l(f)?;
    let placed = decoded(&challenge(f)["request"]);
    let metadata = &placed["methodDetails"]["metadata"];
    let name = f.fixed()["metadataKey"].as_str().unwrap_or("legal_context");
    eq("carrier", metadata[name].as_str(), Some(l.as_str()))?;
    if let Some(want) = row.get("expectMetadata") {
        eq("metadata", metadata, want)?;
    }
    let mut unplaced = placed.clone();
    let details = unplaced["methodDetails"].as_object_mut().unwrap();
    let seller = details["metadata"].as_object().unwrap().iter().filter(|(k, _)| *k != name);
    let seller: serde_json::Map<String, Value> = seller.map(|(k, v)| (k.clone(), v.clone())).collect();
    if seller.is_empty() {
        details.shift_remove("metadata");
    } else {
        details.insert("metadata".into(), Value::Object(seller));
    }
    eq("the request without its carrier", &unplaced, &row["request"])?;
    build_and_bound(f, row)
}

/// The Stripe bounds, over the placed challenge: the row's seller metadata beside `legal_context` (50 seller keys
/// leave it none: 51), which the buyer's filter refuses as the row says, in its bound and its quote; the choice skips
/// such a challenge.
fn stripe_refusals(f: &File) -> Outcome {
    let c = challenge(f);
    let placed = decoded(&c["request"]);
    let l = file_l(f)?;
    let mut ran = 0;
    for row in f.v["refusals"]["rows"].as_array().unwrap() {
        let case = row["case"].as_str().unwrap();
        let mut seller: serde_json::Map<String, Value> = match (row.get("metadata"), row.get("metadataKeys")) {
            (Some(m), _) => m.as_object().unwrap().clone(),
            (None, Some(n)) => (0..n.as_u64().unwrap()).map(|i| (format!("k{i}"), json!("v"))).collect(),
            _ => return Err(format!("{case}: no metadata").into()),
        };
        if seller.contains_key("legal_context") {
            continue; // carrier-occupied: advertise's, listed as not run.
        }
        seller.insert("legal_context".into(), json!(l));
        let mut request = placed.clone();
        request["methodDetails"]["metadata"] = Value::Object(seller);
        let edited = with_request(&c, &request);
        let want = want_code(row);
        eq(&format!("{case}: bound"), bound_of(f.pairing(), &credential(&edited, json!({}))).err(), want.clone())?;
        let mut chosen = chosen_at(f, &f.doc(), now())?;
        chosen.build_input.insert("challenge".into(), edited.clone());
        eq(&format!("{case}: quote"), f.pairing().quote(&chosen).err().map(|r| r.code()), want)?;
        let doc = json!([edited]);
        eq(&format!("{case}: choice"), chosen_at(f, &doc, now()).err(), Some("mpp/no-payable-option".to_owned()))?;
        ran += 1;
    }
    eq("rows run", ran, 4)
}

/// The pattern's flags the gate acts on: no public proof (the registry's, the pairing's), and nothing the buyer
/// signs (confirm hands the signer nothing).
fn pattern(f: &File) -> Outcome {
    let p = &f.v["pattern"];
    let pairing = f.pairing();
    let public = p["publicProof"].as_bool().unwrap();
    eq("public proof", pairing.public_proof(), public)?;
    eq("registry", terms::entry(pairing.id()).unwrap().public_proof, public)?;
    eq("buyer signs", p["buyerSigns"].as_bool(), Some(false))?;
    eq("pattern", p["pattern"].as_str(), Some("opaque-challenge"))
}

/// place: the buyer's read of the placed challenge (B2's document): H, the link, id MV1, opaque MV3, and
/// `externalId` = L in a request that is otherwise the file's.
fn place(f: &File) -> Outcome {
    let placed = &f.v["place"]["expect"];
    eq("B2's document is the placed challenge", &f.doc(), &json!([placed]))?;
    eq("id", &placed["id"], &f.fixed()["MV1"])?;
    eq("opaque", &placed["opaque"], &f.fixed()["MV3opaque"])?;
    let list = json!([placed]);
    let read = f.pairing().read(&list).map_err(|r| r.code())?;
    eq("h", read.h, f.h())?;
    eq("link", read.link.as_str(), f.fixed()["link"].as_str().unwrap())?;
    let mut request = decoded(&placed["request"]);
    eq("externalId", request["externalId"].as_str().map(str::to_owned), Some(file_l(f)?))?;
    request.as_object_mut().unwrap().shift_remove("externalId");
    eq("the request without its carrier", &request, &f.fixed()["request"])?;
    eq("the unplaced challenge's request", decoded(&f.v["challenge"]["request"]), f.fixed()["request"].clone())
}

/// bound and plant: a credential echoing the placed challenge, with the row's payload.
fn near_bound(f: &File, key: &str) -> Outcome {
    let row = &f.v[key];
    let presented = credential(&f.v["place"]["expect"], row["payload"].clone());
    let want = row["expect"].as_str().unwrap().to_owned();
    let got = bound_of(f.pairing(), &presented);
    if want.starts_with("0x") { eq(key, got, Ok(want)) } else { eq(key, got, Err(want)) }
}

/// The placed challenge with its request edited, and the bound of a hash credential echoing it.
fn near_edited(f: &File, edit: impl FnOnce(&mut Value)) -> (Value, Result<String, String>) {
    let placed = &f.v["place"]["expect"];
    let mut request = decoded(&placed["request"]);
    edit(&mut request);
    let edited = with_request(placed, &request);
    let bound = bound_of(f.pairing(), &credential(&edited, f.v["bound"]["payload"].clone()));
    (edited, bound)
}

/// The agreed refusals. Two rows are wider than the peer, which this crate follows: the peer's filter reads only
/// `originNetwork` (CAIP-2) and `externalId` (absent or a string), so a request missing `amount`, `currency` or
/// `recipient`, an amount that is not decimal, and `credentialTypes` other than `["hash"]` are offered, and a hash
/// credential echoing them reads H (integraledger-terms 0.4.0, `near_intents_charge_pairings` and
/// `MppChargeNearIntents.bound`, run on these edits). Those parts of rows 1 and 2 are superseded by the peer.
fn near_agreed(f: &File) -> Outcome {
    let h = Ok(f.h().to_hex());
    let rows = f.v["agreedRefusals"]["rows"].as_array().unwrap();
    let want = |prefix: &str| {
        let row = rows.iter().find(|r| r["case"].as_str().unwrap().starts_with(prefix)).unwrap();
        Err::<String, String>(row["expect"].as_str().unwrap().to_owned())
    };
    let malformed = want("pairingsOf with a required field");
    for (what, edit) in [
        ("originNetwork not CAIP-2", json!({"originNetwork": "eip155"})),
        ("originNetwork a number", json!({"originNetwork": 42161})),
    ] {
        let (edited, bound) = near_edited(f, |r| r["methodDetails"]["originNetwork"] = edit["originNetwork"].clone());
        eq(what, bound, malformed.clone())?;
        eq(&format!("{what}: network"), terms::mpp::network(&edited).map_err(|r| r.code()), malformed.clone())?;
    }
    let (_, bound) =
        near_edited(f, |r| drop(r["methodDetails"].as_object_mut().unwrap().shift_remove("originNetwork")));
    eq("originNetwork missing", bound, malformed.clone())?;
    let (_, bound) = near_edited(f, |r| r["externalId"] = json!(7));
    eq("externalId not a string", bound, malformed)?;
    // Superseded by the peer: offered, and H read.
    for member in ["amount", "currency", "recipient"] {
        let (_, bound) = near_edited(f, |r| drop(r.as_object_mut().unwrap().shift_remove(member)));
        eq(&format!("{member} missing (the peer offers it)"), bound, h.clone())?;
    }
    let (_, bound) = near_edited(f, |r| r["amount"] = json!("1.5"));
    eq("amount not decimal (the peer offers it)", bound, h.clone())?;
    // Row 2 (`mpp/credential-types`), superseded whole.
    let _ = want("pairingsOf with credentialTypes");
    for types in [json!(["transaction"]), json!(["hash", "transaction"]), json!([])] {
        let (_, bound) = near_edited(f, |r| r["methodDetails"]["credentialTypes"] = types.clone());
        eq(&format!("credentialTypes {types} (the peer offers it)"), bound, h.clone())?;
    }
    let (_, bound) = near_edited(f, |r| r["externalId"] = json!("order_12345"));
    eq("externalId not an LCP string", bound, want("bound when the echoed externalId is not an LCP string"))?;
    let other = AtrHash::parse(f.fixed()["H2"].as_str().unwrap()).unwrap();
    let (_, bound) = near_edited(f, |r| r["externalId"] = json!(lcp(&other)));
    eq("externalId naming another hash", bound, want("bound when the echoed externalId names another hash"))?;
    Ok(())
}
