//! The agreement exchange through the tools on the real `x402/exact/eip155/erc7710`, against a loopback seller: the
//! round trip of atr_confirm, atr_agree and atr_finish, atr_transact in two calls, and cancellation (in process, of
//! atr_agree, and a client's `notifications/cancelled` over MCP).

use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Trial;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use terms::SigningRequest;
use terms::mcp::buyer_server;
use tokio_util::sync::CancellationToken;

use crate::common::*;
use crate::support::CountingSigner;
use crate::tools::sign;

const EIP3009: &str = "x402/exact/eip155/eip3009";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::agreement_round_trip_on_loopback", || Ok(run(agreement_round_trip()))),
        Trial::test("mcp::transact_approve_then_pay_on_loopback", || Ok(run(transact_two_calls()))),
        Trial::test("mcp::cancelled_agreement_exchange", || Ok(run(cancelled()))),
    ]
}

fn approve_of(v: &Value) -> Value {
    let o = &v["approve"]["option"];
    json!({"amount": o["amount"], "asset": o["asset"], "payTo": o["payTo"], "network": o["network"]})
}

fn kinds(wallet: &CountingSigner) -> Vec<String> {
    wallet.calls().iter().map(|r| r.kind().to_owned()).collect()
}

fn typed_message(request: &SigningRequest) -> Value {
    match request {
        SigningRequest::Eip712 { typed_data } => Value::Object(typed_data.message.clone()),
        other => panic!("not an eip712 request: {other:?}"),
    }
}

/// The agreement payment the wallet signed: BA1's message (EIP-3009 to the agreement's payee, nonce H) and
/// signature.
fn assert_agreement_signed(wallet: &CountingSigner) {
    let ba1 = row("BA1");
    let calls = wallet.calls();
    assert_eq!(typed_message(&calls[0]), ba1["expect"]["agreementMessage"]);
    assert_eq!(typed_message(&calls[0])["nonce"], h_of_a(), "the agreement payment carries H");
    assert_eq!(wallet.answers()[0], ba1["expect"]["agreementSignature"]);
}

/// The ERC-7710 request of the main payment: the option's amount of its asset to its payee on its chain, salt H.
fn assert_delegation_request(request: &Value) {
    let option = &erc7710_doc()["accepts"][0];
    assert_eq!(request["kind"], "erc7710");
    assert_eq!(request["salt"], h_of_a());
    assert_eq!(request["amount"], option["amount"]);
    assert_eq!(request["token"], option["asset"]);
    assert_eq!(request["payTo"], option["payTo"]);
    assert_eq!(request["chainId"], 84_532);
}

/// The finished ERC-7710 payment: the wallet's delegation as its payload, H in the legal context it echoes; the
/// unsigned level reads H back from A and not from C, and the salt level reads H from the delegation's salt.
async fn assert_delegation_payment(client: &Client, signed: &Value, answer: &Value) {
    assert_eq!(signed["payload"], *answer, "the payload is the wallet's delegation, as given");
    assert_eq!(signed["accepted"], erc7710_doc()["accepts"][0]);
    assert_eq!(signed["extensions"]["legalContext"]["info"]["value"], h_of_a());
    let r = call(client, "atr_check", json!({"pairing": ERC7710, "atr": b64(&bytes("A")), "presented": signed})).await;
    assert_eq!(ok(&r), json!({"atrHash": h_of_a()}));
    let r = call(client, "atr_check", json!({"pairing": ERC7710, "atr": b64(&bytes("C")), "presented": signed})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
    let mut salt_level = signed.clone();
    salt_level["extensions"] = Value::Null;
    let r = call(
        client,
        "atr_check",
        json!({"pairing": "x402/exact/eip155/erc7710-salt", "atr": b64(&bytes("A")), "presented": salt_level}),
    )
    .await;
    assert_eq!(ok(&r), json!({"atrHash": h_of_a()}), "the delegation's salt is H");
}

async fn agreement_round_trip() {
    let seller = agreement_seller(vec![
        payment_required("required"),
        Answer::new(202).header("Retry-After", "1"),
        receipt_answer("receipt"),
    ])
    .await;
    let path = Loopback::path_of(&agreement_url());
    let wallet = signer();
    let server =
        buyer_server(server_options(Arc::new(ToLoopback::new(&seller))).agreement_signer(Arc::new(wallet.clone())));
    let client = connect(server).await;
    let confirm = json!({"pairing": ERC7710, "document": erc7710_doc(), "account": account()});
    let c = ok(&call(&client, "atr_confirm", confirm.clone()).await);
    assert_eq!(c["atrHash"], h_of_a());
    assert_eq!(c["chosen"]["agreement"], agreement_url());
    assert_eq!(c["chosen"]["pairing"], ERC7710);
    assert!(c.get("request").is_none(), "no request before the agreement's receipt");

    // Without approval: the agreement payment to approve, nothing signed or paid.
    let atr = c["atr"]["base64"].clone();
    let first = ok(&call(&client, "atr_agree", json!({"atr": atr, "chosen": c["chosen"]})).await);
    assert_eq!(first["atrHash"], h_of_a());
    assert_eq!(approve_of(&first), row("BA1")["expect"]["approval"]);
    assert_eq!(first["approve"]["url"], agreement_url());
    assert_eq!(first["approve"]["required"], agreement("required"));
    assert_eq!((wallet.count(), seller.paid(&path)), (0, 0));

    // Approved: signed once, sent, re-sent after the 202, receipt.
    let paid =
        ok(&call(&client, "atr_agree", json!({"atr": atr, "chosen": c["chosen"], "approved": first["approve"]})).await);
    assert_eq!(paid["receipt"], agreement("receipt"));
    assert_eq!(paid["atrHash"], agreement("receipt")["atrHash"]);
    assert_eq!(wallet.count(), 1, "exactly one agreement signature");
    assert_eq!(kinds(&wallet), ["eip712"]);
    assert_agreement_signed(&wallet);
    assert_eq!(seller.paid(&path), 2);
    let sent: Vec<_> = seller.seen(&path).into_iter().filter_map(|s| s.payment).collect();
    assert!(sent.windows(2).all(|w| w[0] == w[1]), "the same payment re-sent, never re-signed");

    // With the receipt, atr_confirm gives the delegation request, salt H; another hash's receipt is declined.
    let mut with = confirm.clone();
    with["receipt"] = paid["receipt"].clone();
    let c2 = ok(&call(&client, "atr_confirm", with).await);
    assert_eq!(c2["chosen"]["agreement"], agreement_url(), "atr_confirm sets chosen.agreement");
    assert_delegation_request(&c2["request"]);
    for bad in [agreement("receiptOtherHash"), json!(null), json!([paid["receipt"]])] {
        let mut with = confirm.clone();
        with["receipt"] = bad;
        let (code, v) = declined(&call(&client, "atr_confirm", with).await);
        assert_eq!(code, "agreement-failed");
        assert_eq!(v["decline"]["detail"], "The agreement receipt is not a recorded agreement for this ATR hash.");
        assert!(v.get("request").is_none());
    }
    // The main payment: the wallet answers the request with a delegation, finished with the sealed chosen.
    let answer = sign(&wallet, &c2["request"]).await;
    assert_eq!(kinds(&wallet), ["eip712", "erc7710"]);
    let f = ok(&call(
        &client,
        "atr_finish",
        json!({"pairing": ERC7710, "atr": atr, "chosen": c2["chosen"], "signature": answer}),
    )
    .await);
    assert_eq!(f["atrHash"], h_of_a());
    assert!(f.get("mac").is_none(), "no opening mac on a pairing without a channel");
    assert_delegation_payment(&client, &f["signed"], &answer).await;
    assert_eq!(wallet.count(), 2, "one agreement signature, one delegation");
}

async fn transact_two_calls() {
    let seller = agreement_seller(vec![payment_required("required"), receipt_answer("receipt")]).await;
    let path = Loopback::path_of(&agreement_url());
    let wallet = signer();
    let server = buyer_server(server_options(Arc::new(ToLoopback::new(&seller))).signer(Arc::new(wallet.clone())));
    let client = connect(server).await;
    let first = ok(&call(&client, "atr_transact", json!({"pairing": ERC7710, "document": erc7710_doc()})).await);
    assert_eq!(approve_of(&first), row("BA1")["expect"]["approval"]);
    assert_eq!(first["atr"]["base64"], b64(&bytes("A")));
    assert_eq!((wallet.count(), seller.paid(&path)), (0, 0));
    let done = ok(&call(
        &client,
        "atr_transact",
        json!({"pairing": ERC7710, "document": erc7710_doc(), "approved": first["approve"]}),
    )
    .await);
    assert_eq!(done["atrHash"], h_of_a());
    assert_eq!(done["agreement"], agreement("receipt"), "the receipt beside the payment");
    assert_eq!(kinds(&wallet), ["eip712", "erc7710"], "the agreement payment, then the payment");
    assert_agreement_signed(&wallet);
    let calls = wallet.calls();
    assert_eq!(typed_message(&calls[0])["value"], agreement("option")["amount"]);
    assert_delegation_request(&serde_json::to_value(&calls[1]).unwrap());
    assert_delegation_payment(&client, &done["signed"], &wallet.answers()[1]).await;
    assert_eq!(seller.paid(&path), 1);
    assert_eq!(seller.seen(&path).len(), 2, "two agreement calls: the 402, then the paid request");
    assert!(done.get("mac").is_none());

    // A payment signer that cannot answer ERC-7710 (the reference's test wallet): the agreement is paid with the
    // agreement signer, then the payment's signer fails, and nothing is returned to send.
    let seller = agreement_seller(vec![payment_required("required"), receipt_answer("receipt")]).await;
    let payer = signer();
    let plain = CountingSigner::new(fixed()["payerKey"].as_str().unwrap(), &account());
    let server = buyer_server(
        server_options(Arc::new(ToLoopback::new(&seller)))
            .signer(Arc::new(plain.clone()))
            .agreement_signer(Arc::new(payer.clone())),
    );
    let client = connect(server).await;
    let args = json!({"pairing": ERC7710, "document": erc7710_doc()});
    let first = ok(&call(&client, "atr_transact", args.clone()).await);
    let mut approved = args.clone();
    approved["approved"] = first["approve"].clone();
    let (code, v) = declined(&call(&client, "atr_transact", approved).await);
    assert_eq!(code, "signer-failed");
    assert_eq!(v["decline"]["detail"], "The signer did not sign.");
    assert!(v.get("moved").is_none(), "a delegation moves no money itself");
    assert_eq!(kinds(&payer), ["eip712"]);
    assert_eq!(kinds(&plain), ["erc7710"]);
    assert_eq!(plain.answers().len(), 0);
    assert_eq!(seller.paid(&path), 1);
}

async fn cancelled() {
    let pending = || Answer::new(202).header("Retry-After", "1");
    // In process, through BuyerServer::call: the decline after the payment was sent carries it in `moved`.
    let seller = agreement_seller(vec![payment_required("required"), pending()]).await;
    let path = Loopback::path_of(&agreement_url());
    let wallet = signer();
    let server = buyer_server(server_options(Arc::new(ToLoopback::new(&seller))).signer(Arc::new(wallet.clone())));
    let first = server
        .call(
            "atr_transact",
            Some(obj(json!({"pairing": ERC7710, "document": erc7710_doc()}))),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let approve = ok(&first)["approve"].clone();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let watcher = seller.clone();
    let p = path.clone();
    tokio::spawn(async move {
        until(10, || watcher.paid(&p) == 1).await;
        cancel.cancel();
    });
    let args = json!({"pairing": ERC7710, "document": erc7710_doc(), "approved": approve});
    let r = server.call("atr_transact", Some(obj(args.clone())), token).await.unwrap();
    check_form(&r);
    let (code, v) = declined(&r);
    assert_eq!(code, "agreement-pending");
    assert_eq!(v["decline"]["detail"], "The caller's signal ended the exchange after the agreement payment was sent.");
    assert_eq!(v["moved"]["atrHash"], h_of_a());
    assert_eq!(v["moved"]["atr"]["base64"], b64(&bytes("A")));
    assert_eq!(v["moved"]["signed"]["payload"]["authorization"]["value"], agreement("option")["amount"]);
    assert_eq!(v["moved"]["signed"]["payload"]["authorization"]["nonce"], h_of_a());
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!((wallet.count(), seller.paid(&path)), (1, 1), "one signature, one paid request, no polling after");
    assert_eq!(kinds(&wallet), ["eip712"], "the delegation is never asked for");

    // atr_agree hands the same token to the exchange: cancelled before the payment is sent, nothing is signed.
    let seller = agreement_seller(vec![payment_required("required"), pending()]).await;
    let wallet = signer();
    let server =
        buyer_server(server_options(Arc::new(ToLoopback::new(&seller))).agreement_signer(Arc::new(wallet.clone())));
    let c = server
        .call(
            "atr_confirm",
            Some(obj(json!({"pairing": ERC7710, "document": erc7710_doc(), "account": account()}))),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let c = ok(&c);
    let agree = json!({"atr": c["atr"]["base64"], "chosen": c["chosen"]});
    let first = ok(&server.call("atr_agree", Some(obj(agree.clone())), CancellationToken::new()).await.unwrap());
    let mut approved = agree.clone();
    approved["approved"] = first["approve"].clone();
    let token = CancellationToken::new();
    token.cancel();
    let r = server.call("atr_agree", Some(obj(approved)), token).await.unwrap();
    let (code, v) = declined(&r);
    assert_eq!(code, "agreement-failed");
    assert_eq!(v["decline"]["detail"], "The caller's signal ended the agreement exchange before the payment was sent.");
    assert!(v.get("moved").is_none());
    assert_eq!((wallet.count(), seller.paid(&path)), (0, 0));

    // Over MCP: the client's notifications/cancelled ends the exchange and no answer comes for that id.
    let seller = agreement_seller(vec![payment_required("required"), pending()]).await;
    let wallet = signer();
    let server = buyer_server(server_options(Arc::new(ToLoopback::new(&seller))).signer(Arc::new(wallet.clone())));
    let client = connect(server).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("atr_transact").with_arguments(obj(args)),
    ));
    let handle = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();
    assert!(until(10, || seller.paid(&path) == 1).await, "the agreement payment was sent");
    handle.cancel(Some("the user stopped".into())).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!((wallet.count(), seller.paid(&path)), (1, 1), "no re-send after the cancellation");
    assert_eq!(kinds(&wallet), ["eip712"]);
    // The session goes on.
    let r = call(&client, "atr_check", json!({"pairing": EIP3009, "atr": "/w==", "presented": {}})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
}
