//! The session `mpp/session/evm` through the tools over stdio, from `mpp-session-evm.json`'s own data: the opening by
//! hand (atr_confirm, the wallet signs the deposit's authorization, atr_finish asks for the first voucher, the wallet
//! signs it, atr_finish gives B6's opening) and by atr_transact; atr_channel_open keeps the hold of ES1's channel; two
//! vouchers by atr_channel_within, atr_channel_record_charge after each; the close. A challenge naming another H or
//! another channel, an edited hold, and a partial refund are declined before the wallet is asked.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::SigningRequest;

use crate::common::*;
use crate::mpp::{Mpp, atr_and_plant, b64u_json, confirm_args, file_row, link_of, payer, payer_is_the_files};
use crate::support::vectors;
use crate::tools::sign;

const SESSION: &str = "mpp/session/evm";
const FILE: &str = "mpp-session-evm.json";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::mpp_session_opened_by_hand_over_stdio", || Ok(run(by_hand()))),
        Trial::test("mcp::mpp_session_transact_open_within_record_close_over_stdio", || Ok(run(session()))),
    ]
}

fn file() -> Value {
    vectors(FILE)
}

fn b2() -> Value {
    file_row(&file(), "B2")
}

/// The opening the file holds: B6's payment.
fn b6_opening() -> Value {
    file_row(&file(), "B6")["input"]["presented"].clone()
}

/// The EIP-712 signing hash of a signing request (or of the one request of a batch), and its primary type.
fn digest_of(request: &Value) -> (String, String) {
    let request: SigningRequest = serde_json::from_value(request.clone()).unwrap();
    let typed = match &request {
        SigningRequest::Eip712 { typed_data } => typed_data.clone(),
        SigningRequest::Batch { requests } => match requests.as_slice() {
            [SigningRequest::Eip712 { typed_data }] => typed_data.clone(),
            other => panic!("not one EIP-712 request: {other:?}"),
        },
        other => panic!("not EIP-712: {other:?}"),
    };
    (typed.signing_hash().unwrap().to_string(), typed.primary_type)
}

/// The address whose key signed a voucher of the session: the voucher's EIP-712 request is rebuilt in this process
/// from the hold (without its mac) and the document, as the pairing plans it, and the signature recovered over it.
fn voucher_signer(hold: &Value, document: &Value, signature: &Value) -> String {
    let mut members = hold.as_object().unwrap().clone();
    members.shift_remove("mac");
    let hold: terms::pairing::ChannelHold = serde_json::from_value(Value::Object(members)).unwrap();
    let atr = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &hold.atr).unwrap();
    let (h, inputs) = (terms::atr_hash(&atr), serde_json::Map::new());
    let args = terms::pairing::WithinArgs { doc: document, hold: &hold, h: &h, refund: None, inputs: &inputs };
    let channel = terms::pairing(SESSION).unwrap().channel().unwrap();
    let plan = channel.plan_within(&args).unwrap();
    let [SigningRequest::Eip712 { typed_data }] = plan.batch.requests() else { panic!("not one voucher") };
    let digest = typed_data.signing_hash().unwrap();
    let raw = ::hex::decode(&signature.as_str().unwrap()[2..]).unwrap();
    let sig = alloy_primitives::Signature::from_raw(&raw).unwrap();
    sig.recover_address_from_prehash(&digest).unwrap().to_checksum(None)
}

/// A challenge the seller issues within the channel: B2's, with its own id, the file's request at `amount` naming
/// `channel` where given, and `opaque` where given (none otherwise).
fn seller_challenge(amount: &str, channel: Option<&Value>, opaque: Option<Value>) -> Value {
    let mut request: Value = serde_json::from_str(file()["fixed"]["request"].as_str().unwrap()).unwrap();
    request["amount"] = json!(amount);
    if let Some(channel) = channel {
        request["methodDetails"]["channelId"] = channel.clone();
    }
    let mut c = b2()["input"]["doc"][0].clone();
    let m = c.as_object_mut().unwrap();
    m.insert("id".into(), json!("seller-1"));
    m.insert("request".into(), json!(b64u_json(&request)));
    match opaque {
        Some(o) => drop(m.insert("opaque".into(), json!(b64u_json(&o)))),
        None => drop(m.shift_remove("opaque")),
    }
    c
}

/// The price of one request: the amount of the file's request.
fn price() -> u64 {
    let request: Value = serde_json::from_str(file()["fixed"]["request"].as_str().unwrap()).unwrap();
    request["amount"].as_str().unwrap().parse().unwrap()
}

/// The atr_channel_open arguments for a finished or transacted opening.
fn open_args(opened: &Value) -> Value {
    let mut open =
        json!({"pairing": SESSION, "atr": opened["atr"]["base64"], "signed": opened["signed"], "mac": opened["mac"]});
    if let Some(landed) = opened.get("landed") {
        open["landed"] = landed.clone();
    }
    open
}

/// Starts the helper against a seller serving the file's ATR at B2's link.
async fn start() -> (Mpp, Vec<u8>) {
    let f = file();
    payer_is_the_files(&f);
    let (atr, _) = atr_and_plant(&f);
    let mpp = Mpp::start(&[(link_of(&b2()["input"]["doc"]), atr.clone())]).await;
    (mpp, atr)
}

/// The opening by hand: confirm's request is ES4's deposit authorization (ES3's nonce); finish with its answer asks
/// for the first voucher (ES5's digest); finish with both answers gives B6's opening and its mac, which opens ES1's
/// channel. The helper's wallet is never asked: the wallet here signs.
async fn by_hand() {
    let (mpp, atr) = start().await;
    let (f, b2) = (file(), b2());
    let c = ok(&mpp.call("atr_confirm", confirm_args(&b2)).await);
    assert_eq!(c["atrHash"], f["fixed"]["H"]);
    assert_eq!(c["atr"]["base64"], b64(&atr));
    assert!(c["chosen"]["mac"].is_string(), "a channel's chosen is sealed");
    let request = c["request"].clone();
    assert_eq!(request["typedData"]["message"]["nonce"], f["ES3"]["expectNonce"]);
    let (digest, primary) = digest_of(&request);
    assert_eq!(json!(digest), f["ES4"]["expectDigest"]);
    assert!(f["ES4"]["typeSignature"].as_str().unwrap().starts_with(&format!("{primary}(")), "ES4's type");
    let wallet = payer();
    let first = sign(&wallet, &request).await;
    let (atr_b64, chosen) = (&c["atr"]["base64"], &c["chosen"]);
    let finish = |sig: Value| json!({"pairing": SESSION, "atr": atr_b64, "chosen": chosen, "signature": sig});
    let next = ok(&mpp.call("atr_finish", finish(json!([first]))).await);
    assert_eq!(next["atrHash"], f["fixed"]["H"]);
    assert!(next.get("signed").is_none(), "one more signature is needed");
    assert_eq!(json!(digest_of(&next["next"]).0), f["ES5"]["expectVoucherDigest"], "the first voucher");
    let voucher = sign(&wallet, &next["next"]).await;
    let done = ok(&mpp.call("atr_finish", finish(json!([first, voucher]))).await);
    assert_eq!(done["atrHash"], f["fixed"]["H"]);
    assert_eq!(
        serde_json::to_string(&done["signed"]).unwrap(),
        serde_json::to_string(&b6_opening()).unwrap(),
        "B6's opening, member for member"
    );
    assert!(done["mac"].as_str().is_some_and(|m| regex::Regex::new(terms::mcp::MAC_PATTERN).unwrap().is_match(m)));

    // A chosen edited after atr_confirm is refused before the gate.
    let mut edited = c["chosen"].clone();
    assert_eq!(c["chosen"]["choice"]["deposit"], b2["input"]["inputs"]["deposit"], "the deposit is in the choice");
    edited["choice"]["deposit"] = json!("1");
    let r = mpp
        .call(
            "atr_finish",
            json!({"pairing": SESSION, "atr": c["atr"]["base64"], "chosen": edited, "signature": [first, voucher]}),
        )
        .await;
    assert_eq!(declined(&r).0, "chosen-unverified");

    let mut opened = done.clone();
    opened["atr"] = c["atr"].clone();
    let held = ok(&mpp.call("atr_channel_open", open_args(&opened)).await);
    assert_eq!(held["atrHash"], f["fixed"]["H"]);
    assert_eq!(held["hold"]["channel"], f["ES1"]["expectChannelId"]);
    assert!(mpp.asked().is_empty(), "the helper's wallet was never asked");
    mpp.client.cancel().await.unwrap();
}

/// The session's life: transact opens it (the wallet asked for the deposit's authorization, then the first
/// voucher; B6's opening), the opening's mac verifies only unchanged, the hold names ES1's channel; two vouchers in
/// the held channel (one from a challenge naming it, one from B2's, which names none) each at the recorded charge
/// plus the price, a charge recorded after each, one above the signed maximum refused; a challenge naming another
/// H (the file's H2) or another channel, an edited hold and a partial refund signed nothing; the close claims the
/// recorded charge. The real binary refuses the helper's opening: its seals are another process's.
async fn session() {
    let (mpp, atr) = start().await;
    let (f, b2) = (file(), b2());
    let mut args = confirm_args(&b2);
    args.as_object_mut().unwrap().shift_remove("account");
    let opened = ok(&mpp.call("atr_transact", args).await);
    assert_eq!(opened["atrHash"], f["fixed"]["H"]);
    assert_eq!(
        serde_json::to_string(&opened["signed"]).unwrap(),
        serde_json::to_string(&b6_opening()).unwrap(),
        "B6's opening, member for member"
    );
    assert_eq!(mpp.asked(), ["eip712/ReceiveWithAuthorization", "eip712/Voucher"]);
    assert!(opened["mac"].is_string(), "the opening carries its mac");

    let mut raised = open_args(&opened);
    raised["signed"]["payload"]["cumulativeAmount"] = json!("1");
    assert_eq!(declined(&mpp.call("atr_channel_open", raised).await).0, "opening-unverified");
    let binary = spawn(binary()).await;
    assert_eq!(declined(&call(&binary, "atr_channel_open", open_args(&opened)).await).0, "opening-unverified");
    binary.cancel().await.unwrap();

    let held = ok(&mpp.call("atr_channel_open", open_args(&opened)).await);
    let hold = held["hold"].clone();
    assert_eq!(hold["atr"], b64(&atr));
    assert_eq!(held["atrHash"], f["fixed"]["H"]);
    assert_eq!(hold["pairing"], SESSION);
    assert_eq!(hold["channel"], f["ES1"]["expectChannelId"]);
    assert_eq!(hold["h"], f["fixed"]["H"]);
    assert_eq!((&hold["charged"], &hold["signedMax"]), (&json!("0"), &opened["signed"]["payload"]["cumulativeAmount"]));
    let channel = hold["channel"].clone();
    let price = price();

    // Declined before the wallet is asked.
    let asked = mpp.asked().len();
    let other_h = json!({"legalContext": format!("lcp:sha256:{}", f["fixed"]["H2"].as_str().unwrap())});
    let other_channel = json!(format!("0x{}", "11".repeat(32)));
    let doc = |c: Value| json!([c]);
    let in_channel =
        |channel: &Value, opaque: Option<Value>| doc(seller_challenge(&price.to_string(), Some(channel), opaque));
    for (document, refund, code, detail) in [
        (
            in_channel(&channel, Some(other_h)),
            None,
            "hash-mismatch",
            "The challenge names another ATR's hash than the one this channel opened for.",
        ),
        (
            in_channel(&other_channel, None),
            None,
            "no-payable-option",
            "The challenge names a channel this hold did not open.",
        ),
        (
            in_channel(&channel, None),
            Some(json!({"amount": "1"})),
            "pairing-not-supported",
            "mpp/within-action-not-built",
        ),
    ] {
        let mut args = json!({"pairing": SESSION, "hold": hold, "document": document});
        if let Some(r) = refund {
            args["refund"] = r;
        }
        let (got, v) = declined(&mpp.call("atr_channel_within", args).await);
        assert_eq!((got.as_str(), &v["decline"]["detail"]), (code, &json!(detail)));
        assert!(v.get("moved").is_none());
    }
    let mut edited = hold.clone();
    edited["signedMax"] = json!(f["fixed"]["deposit"]);
    let r = mpp
        .call("atr_channel_within", json!({"pairing": SESSION, "hold": edited, "document": b2["input"]["doc"]}))
        .await;
    assert_eq!(declined(&r).0, "hold-unverified");
    assert_eq!(mpp.asked().len(), asked, "nothing signed for any of them");

    // Two vouchers, a charge recorded after each.
    let mut hold = hold;
    for (n, document) in [(1, in_channel(&channel, None)), (2, b2["input"]["doc"].clone())] {
        let paid =
            ok(&mpp.call("atr_channel_within", json!({"pairing": SESSION, "hold": hold, "document": document})).await);
        let cumulative = (price * n).to_string();
        let payload = &paid["signed"]["payload"];
        assert_eq!(paid["atrHash"], f["fixed"]["H"]);
        assert_eq!(
            (&payload["action"], &payload["channelId"], &payload["cumulativeAmount"]),
            (&json!("voucher"), &channel, &json!(cumulative))
        );
        assert_eq!(paid["signed"]["challenge"], document[0], "the credential echoes the challenge it answers");
        let signer = voucher_signer(&hold, &document, &payload["signature"]);
        assert_eq!(
            json!(signer),
            f["fixed"]["payer"],
            "the payer signed the voucher of the held channel at that amount"
        );
        assert_eq!(paid["hold"]["signedMax"], cumulative);
        let recorded =
            ok(&mpp.call("atr_channel_record_charge", json!({"hold": paid["hold"], "charged": cumulative})).await);
        assert_eq!(recorded["atrHash"], f["fixed"]["H"]);
        assert_eq!(recorded["hold"]["charged"], cumulative);
        hold = recorded["hold"].clone();
    }
    assert_eq!(mpp.asked().len(), asked + 2, "one wallet request per voucher");
    assert_eq!(mpp.asked()[asked..], ["batch/Voucher", "batch/Voucher"]);
    let over =
        mpp.call("atr_channel_record_charge", json!({"hold": hold, "charged": (price * 2 + 1).to_string()})).await;
    let (code, v) = declined(&over);
    assert_eq!(
        (code.as_str(), &v["decline"]["detail"]),
        ("offer-unreadable", &json!("The charged amount is above the largest amount signed in the channel."))
    );

    // The close claims the recorded charge.
    let closed = ok(&mpp
        .call(
            "atr_channel_within",
            json!({"pairing": SESSION, "hold": hold, "document": b2["input"]["doc"], "refund": {}}),
        )
        .await);
    let payload = &closed["signed"]["payload"];
    assert_eq!((&payload["action"], &payload["cumulativeAmount"]), (&json!("close"), &hold["charged"]));
    assert_eq!(payload["channelId"], channel);
    assert_eq!(mpp.asked().len(), asked + 3);
    mpp.client.cancel().await.unwrap();
}
