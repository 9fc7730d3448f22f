//! MPP through the tools, over stdio: a helper process of this test binary serves `buyer_server` with the payer's
//! wallet and a fetch to a loopback seller the test starts (`TERMS_MCP_TEST_SERVER=mpp`), driven by rmcp's client
//! over the child's stdin and stdout. The real `terms-mcp` binary (no wallet, the public-address-only fetch) finishes
//! and checks the helper's payments, refuses a challenge's loopback link without connecting to it, and refuses the
//! helper's seals, which are another process's. Every
//! expected value is the vector files' own: the EVM charges here (`mpp-charge-evm-authorization.json` with the
//! peer's values in `tests/mpp_evm_rail/peer.json` where the file is superseded, `mpp-charge-usdc-gateway.json`,
//! `mpp-charge-usdc-evm.json`), the session in `mpp_session.rs`, the no-proof pairings in `mpp_no_proof.rs`.

use std::net::SocketAddr;
use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::mcp::buyer_server;
use terms::{Answer, BoxFuture, Fetch, Request, Signer, SignerError, SigningRequest};

use crate::common::Answer as HttpAnswer;
use crate::common::*;
use crate::support::{CountingSigner, hex, vectors};
use crate::tools::sign;

/// The value of `TERMS_MCP_TEST_SERVER` that starts the MPP helper.
pub const MPP_HELPER: &str = "mpp";
/// The loopback seller's address, in the MPP helper's environment.
const SELLER_ENV: &str = "TERMS_MCP_TEST_SELLER";
/// The host the helper's wallet reports each request it is asked to sign to, on the loopback seller.
const WITNESS: &str = "signer.test";

const AUTHORIZATION: &str = "mpp/charge/evm/authorization";
const GATEWAY: &str = "mpp/charge/usdc/gateway";
const USDC_EVM: &str = "mpp/charge/usdc/evm";

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::mpp_evm_authorization_confirm_sign_finish_over_stdio", || Ok(run(authorization_by_hand()))),
        Trial::test("mcp::mpp_evm_authorization_transact_and_declines_over_stdio", || {
            Ok(run(authorization_transact()))
        }),
        Trial::test("mcp::mpp_usdc_gateway_and_usdc_evm_over_stdio", || Ok(run(gateway_and_usdc_evm()))),
    ]
}

// ---------------------------------------------------------------------------------------------------------------
// The helper process and its wallet.

/// The payer's wallet in the helper: buyer.json's key and account (the MPP files' payer: the same Anvil key #0 on
/// Base Sepolia, which [`payer_is_the_files`] checks). Every request it is asked to sign it first reports to the
/// loopback seller (`https://signer.test/<kind>[/<primary types>]`) and waits for the answer before it signs, so the
/// test process reads what the wallet was asked from the seller's log, complete by the time the tool answers.
struct Witnessed {
    inner: CountingSigner,
    fetch: ToLoopback,
}

/// What a request is, as the witness path names it: its kind, and the primary types of its EIP-712 parts.
fn what(request: &SigningRequest) -> String {
    let types = |r: &SigningRequest| match r {
        SigningRequest::Eip712 { typed_data } => Some(typed_data.primary_type.clone()),
        _ => None,
    };
    let parts: Vec<String> = match request {
        SigningRequest::Batch { requests } => requests.iter().filter_map(types).collect(),
        one => types(one).into_iter().collect(),
    };
    if parts.is_empty() { request.kind().to_owned() } else { format!("{}/{}", request.kind(), parts.join("+")) }
}

impl Signer for Witnessed {
    fn account(&self) -> &str {
        self.inner.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let url = format!("https://{WITNESS}/{}", what(request));
            // A report that does not reach the seller fails the signing (so a test sees `signer-failed`, never a
            // wallet that seems not to have been asked).
            self.fetch.get(Request { url: &url, headers: &[] }).await.map_err(SignerError::new)?;
            self.inner.sign(request).await
        })
    }
}

/// The payer: buyer.json's key and account.
pub fn payer() -> CountingSigner {
    CountingSigner::new(fixed()["payerKey"].as_str().unwrap(), &account())
}

/// The MPP files name the helper's payer: the same key, and (where a file names one) the same address.
pub fn payer_is_the_files(f: &Value) {
    assert_eq!(f["fixed"]["payerKey"], fixed()["payerKey"], "the file's payer key is buyer.json's");
    if let Some(payer) = f["fixed"]["payer"].as_str() {
        assert!(account().ends_with(payer), "the file's payer is buyer.json's account");
    }
}

/// The MPP helper: `buyer_server` over stdio with the witnessed payer, the vectors' clock, and the loopback seller
/// named in its environment as its fetch.
pub fn serve_helper() {
    let addr: SocketAddr = std::env::var(SELLER_ENV).expect("the seller's address").parse().expect("an address");
    runtime().block_on(async {
        let wallet = Witnessed { inner: payer(), fetch: ToLoopback::to(addr) };
        let server = buyer_server(server_options(Arc::new(ToLoopback::to(addr))).signer(Arc::new(wallet)));
        let running = rmcp::ServiceExt::serve(server, rmcp::transport::stdio()).await.expect("serve");
        let _ = running.waiting().await;
    });
}

/// A loopback seller and the MPP helper whose fetch it is, over the helper's stdio.
pub struct Mpp {
    pub seller: Loopback,
    pub client: Client,
}

impl Mpp {
    /// The seller serving each `(url, bytes)`, and a helper started against it.
    pub async fn start(serves: &[(String, Vec<u8>)]) -> Self {
        let seller = Loopback::start("127.0.0.1:0").await.unwrap();
        for (url, bytes) in serves {
            seller.route(&Loopback::path_of(url), vec![HttpAnswer::new(200).body(bytes.clone())]);
        }
        let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
        cmd.env(crate::HELPER_ENV, MPP_HELPER).env(SELLER_ENV, seller.addr.to_string());
        let client = spawn(cmd).await;
        Self { seller, client }
    }

    /// What the helper's wallet was asked to sign so far, in order.
    pub fn asked(&self) -> Vec<String> {
        let prefix = format!("/{WITNESS}/");
        self.seller.requested().iter().filter_map(|p| p.strip_prefix(&prefix).map(str::to_owned)).collect()
    }

    /// How many times a URL was fetched.
    pub fn fetched(&self, url: &str) -> usize {
        self.seller.seen(&Loopback::path_of(url)).len()
    }

    pub async fn call(&self, tool: &str, args: Value) -> rmcp::model::CallToolResult {
        call(&self.client, tool, args).await
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The vector files.

/// A vector file's buyer row.
pub fn file_row(f: &Value, name: &str) -> Value {
    f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap().clone()
}

/// The link a challenge list's legal context names.
pub fn link_of(doc: &Value) -> String {
    terms::mpp::read(doc).unwrap().link
}

/// A B2 row's plant: the ATR its document advertises (the bytes of B6's first check, whose hash is the row's
/// `advertised`), and the planted ATR its link serves instead.
pub fn atr_and_plant(f: &Value) -> (Vec<u8>, Vec<u8>) {
    let b2 = file_row(f, "B2");
    let planted = hex(b2["input"]["servesHex"].as_str().unwrap());
    let atr = hex(file_row(f, "B6")["input"]["check"][0]["bytesHex"].as_str().unwrap());
    assert_eq!(json!(terms::atr_hash(&atr).to_hex()), b2["advertised"]);
    assert_eq!(json!(terms::atr_hash(&planted).to_hex()), b2["servedHash"]);
    (atr, planted)
}

/// The arguments of `atr_confirm` for a B2 row: its pairing, document, account and inputs.
pub fn confirm_args(b2: &Value) -> Value {
    let i = &b2["input"];
    let mut args = json!({"pairing": b2["pairing"], "document": i["doc"], "account": i["account"]});
    if let Some(inputs) = i.get("inputs") {
        args["inputs"] = inputs.clone();
    }
    args
}

/// `atr_transact`'s arguments for a B2 row: its pairing, document and inputs.
fn transact_args(b2: &Value) -> Value {
    let mut args = confirm_args(b2);
    args.as_object_mut().unwrap().shift_remove("account");
    args
}

fn peer() -> Value {
    vectors("../mpp_evm_rail/peer.json")
}

// ---------------------------------------------------------------------------------------------------------------
// mpp/charge/evm/authorization.

const A: &str = "mpp-charge-evm-authorization.json";

/// The credential the peer makes for MV5 (`peer.json`: its nonce is the challenge hash, its signature the payer
/// key's over the peer's typed data): the rest of it is the file's B6 payment, which echoes the B2 challenge.
fn assert_mv5_credential(signed: &Value) {
    let (f, peer) = (vectors(A), peer());
    let mv5 = &f["MV5"];
    assert_eq!(signed["challenge"], file_row(&f, "B2")["input"]["doc"][0], "the chosen challenge, echoed");
    assert_eq!(signed["source"], mv5["expectSource"]);
    assert_eq!(signed["payload"]["type"], "authorization");
    assert_eq!(signed["payload"]["nonce"], peer["challengeHash"], "the nonce is the challenge hash");
    assert_eq!(signed["payload"]["validBefore"], mv5["expectValidBefore"]);
    assert_eq!(signed["payload"]["signature"], peer["MV5"]["signature"]);
    let message = &peer["MV5"]["typedData"]["message"];
    for k in ["from", "to", "value", "validAfter"] {
        assert_eq!(signed["payload"][k], message[k], "payload.{k}");
    }
    // The file's own B6 payment is this credential with the superseded nonce and signature.
    let mut b6 = file_row(&f, "B6")["input"]["presented"].clone();
    b6["payload"]["nonce"] = signed["payload"]["nonce"].clone();
    b6["payload"]["signature"] = signed["payload"]["signature"].clone();
    assert_eq!(*signed, b6, "B6's payment, but for the superseded nonce and signature");
}

/// confirm in the helper (one fetch of the link), the wallet signs the request in this process, finish and check in
/// the helper; then the same finish and check in the real `terms-mcp` binary (a pairing without a channel needs no
/// seal on `chosen`), which also reads the challenge's link and refuses it when it is a loopback address.
async fn authorization_by_hand() {
    let f = vectors(A);
    payer_is_the_files(&f);
    let b2 = file_row(&f, "B2");
    let (atr, planted) = atr_and_plant(&f);
    let link = link_of(&b2["input"]["doc"]);
    let mpp = Mpp::start(&[(link.clone(), atr.clone())]).await;
    let c = ok(&mpp.call("atr_confirm", confirm_args(&b2)).await);
    assert_eq!(c["atrHash"], b2["advertised"]);
    assert_eq!(c["atr"]["base64"], b64(&atr));
    assert_eq!(c["chosen"]["pairing"], AUTHORIZATION);
    assert_eq!(c["request"]["kind"], "eip712");
    assert_eq!(
        c["request"]["typedData"],
        peer()["MV5"]["typedData"],
        "the peer's typed data, nonce the challenge hash"
    );
    assert_eq!(mpp.fetched(&link), 1, "one fetch");
    assert!(mpp.asked().is_empty(), "confirm signs nothing");

    let answer = sign(&payer(), &c["request"]).await;
    assert_eq!(answer, peer()["MV5"]["signature"]);
    let finish =
        json!({"pairing": AUTHORIZATION, "atr": c["atr"]["base64"], "chosen": c["chosen"], "signature": answer});
    let done = ok(&mpp.call("atr_finish", finish.clone()).await);
    assert_eq!(done["atrHash"], b2["advertised"]);
    assert!(done.get("mac").is_none(), "no opening mac on a charge");
    assert_mv5_credential(&done["signed"]);
    let check = |bytes: &[u8]| json!({"pairing": AUTHORIZATION, "atr": b64(bytes), "presented": done["signed"]});
    assert_eq!(ok(&mpp.call("atr_check", check(&atr)).await), json!({"atrHash": b2["advertised"]}));
    assert_eq!(declined(&mpp.call("atr_check", check(&planted)).await).0, "signed-not-bound");
    // The credential under another realm: its nonce is not that challenge's hash.
    let mut other = done["signed"].clone();
    other["challenge"]["realm"] = f["fixed"]["otherRealm"].clone();
    let r = mpp.call("atr_check", json!({"pairing": AUTHORIZATION, "atr": b64(&atr), "presented": other})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");

    // The real binary checks the same payment; it refuses to finish a chosen another process sealed.
    let binary = spawn(binary()).await;
    assert_eq!(declined(&call(&binary, "atr_finish", finish).await).0, "chosen-unverified");
    assert_eq!(ok(&call(&binary, "atr_check", check(&atr)).await)["atrHash"], b2["advertised"]);
    assert_eq!(declined(&call(&binary, "atr_check", check(&planted)).await).0, "signed-not-bound");
    // It takes the list of challenges, not one challenge alone.
    let mut args = confirm_args(&b2);
    args["document"] = b2["input"]["doc"][0].clone();
    let (code, v) = declined(&call(&binary, "atr_confirm", args).await);
    assert_eq!((code.as_str(), &v["decline"]["detail"]), ("offer-unreadable", &json!("mpp/challenge-malformed")));
    // It reads the challenge's link from its opaque, and never connects to a loopback one.
    let counter = Loopback::start("127.0.0.1:0").await.unwrap();
    let mut doc = b2["input"]["doc"].clone();
    let loopback_link = format!("https://127.0.0.1:{}/{}", counter.addr.port(), b2["advertised"].as_str().unwrap());
    // The binary runs on the system clock, past the file's `expires`: the challenge is placed again to expire later.
    doc[0]["expires"] = json!("2099-09-21T14:14:20Z");
    doc[0]["opaque"] =
        json!(b64u_json(&json!({"legalContext": lcp(&b2["advertised"]), "legalContextUrl": loopback_link})));
    let mut args = confirm_args(&b2);
    args["document"] = doc;
    let (code, v) = declined(&call(&binary, "atr_confirm", args).await);
    assert_eq!(code, "atr-unfetchable");
    assert_eq!(v["decline"]["detail"], "The ATR could not be fetched from the link.");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(counter.connections(), 0, "the loopback link was never connected to");
    binary.cancel().await.unwrap();
    mpp.client.cancel().await.unwrap();
}

/// transact in the helper: the wallet is asked once (the EIP-3009 authorization) and the credential is MV5's. The
/// plant (the link serving another ATR) and a challenge whose id carries another H decline before the wallet is
/// asked, in atr_confirm and atr_transact alike.
async fn authorization_transact() {
    let f = vectors(A);
    let b2 = file_row(&f, "B2");
    let (atr, planted) = atr_and_plant(&f);
    let link = link_of(&b2["input"]["doc"]);
    let mpp = Mpp::start(&[(link.clone(), atr.clone())]).await;
    let paid = ok(&mpp.call("atr_transact", transact_args(&b2)).await);
    assert_eq!(paid["atrHash"], b2["advertised"]);
    assert_eq!(paid["atr"]["base64"], b64(&atr));
    assert_mv5_credential(&paid["signed"]);
    assert!(paid.get("mac").is_none() && paid.get("agreement").is_none());
    assert_eq!(mpp.asked(), ["eip712/TransferWithAuthorization"]);

    // A challenge whose id carries the planted ATR's hash while its opaque names H: not the seller's legal context,
    // declined before anything is fetched or signed.
    let other = terms::atr_hash(&planted);
    let mut doc = b2["input"]["doc"].clone();
    doc[0]["id"] = json!(terms::mpp::challenge_id(&other, 0).unwrap());
    let with_doc = |args: Value, doc: &Value| {
        let mut args = args;
        args["document"] = doc.clone();
        args
    };
    for (tool, args) in [("atr_confirm", confirm_args(&b2)), ("atr_transact", transact_args(&b2))] {
        let (code, v) = declined(&mpp.call(tool, with_doc(args, &doc)).await);
        assert_eq!((code.as_str(), &v["decline"]["detail"]), ("offer-unreadable", &json!("mpp/no-legal-context")));
        assert!(v.get("moved").is_none());
    }
    assert_eq!(mpp.fetched(&link), 1, "nothing fetched for it");
    // Its id and opaque both carrying the planted ATR's hash, the link serving the ATR: the B2 row's decline.
    let opaque = json!({"legalContext": lcp(&json!(other.to_hex())), "legalContextUrl": link});
    doc[0]["opaque"] = json!(b64u_json(&opaque));
    for (tool, args) in [("atr_confirm", confirm_args(&b2)), ("atr_transact", transact_args(&b2))] {
        let (code, v) = declined(&mpp.call(tool, with_doc(args, &doc)).await);
        assert_eq!(json!(code), b2["expect"]["decline"], "{tool}");
        assert!(v.get("request").is_none() && v.get("moved").is_none());
    }
    assert_eq!(mpp.fetched(&link), 3, "one fetch per call");
    assert_eq!(mpp.asked().len(), 1, "the wallet was asked for the first payment only");
    mpp.client.cancel().await.unwrap();

    // B2's plant: the link serves the planted ATR.
    let mpp = Mpp::start(&[(link.clone(), planted)]).await;
    let r = mpp.call("atr_confirm", confirm_args(&b2)).await;
    let (code, v) = declined(&r);
    assert_eq!(json!(code), b2["expect"]["decline"]);
    assert!(v.get("request").is_none() && v.get("chosen").is_none());
    assert_eq!(json!(declined(&mpp.call("atr_transact", transact_args(&b2)).await).0), b2["expect"]["decline"]);
    assert_eq!(json!(mpp.asked().len()), b2["expect"]["signCalls"]);
    assert_eq!(mpp.fetched(&link), 2, "one fetch per call");
    mpp.client.cancel().await.unwrap();
}

// ---------------------------------------------------------------------------------------------------------------
// mpp/charge/usdc/gateway and mpp/charge/usdc/evm.

const G: &str = "mpp-charge-usdc-gateway.json";
const U: &str = "mpp-charge-usdc-evm.json";

/// The Gateway client's answer to M5's burn intent: the file's values and B6's signature.
fn gateway_answer(f: &Value) -> Value {
    let m5 = &f["M5"];
    let p = &m5["payload"];
    let presented = &file_row(f, "B6")["input"]["presented"];
    json!({
        "source": m5["source"], "sourceNetwork": p["sourceNetwork"], "destinationNetwork": p["destinationNetwork"],
        "maxFee": p["maxFee"], "burnIntent": p["authorization"]["transfer"]["burnIntent"],
        "signature": presented["payload"]["authorization"]["transfer"]["signature"],
    })
}

/// Gateway: confirm gives the burn intent's preimage (the request hash, the challenge's id and realm, the
/// recipient); the client's answer finishes into B6's credential, which checks to M5's bound and not under another
/// realm. USDC on EVM: transact signs M3's authorization (its nonce and validBefore) and the payment checks.
async fn gateway_and_usdc_evm() {
    let (g, u) = (vectors(G), vectors(U));
    payer_is_the_files(&g);
    payer_is_the_files(&u);
    let (gb2, ub2) = (file_row(&g, "B2"), file_row(&u, "B2"));
    let (atr, _) = atr_and_plant(&g);
    let (link, ulink) = (link_of(&gb2["input"]["doc"]), link_of(&ub2["input"]["doc"]));
    let (uatr, uplanted) = atr_and_plant(&u);
    let mpp = Mpp::start(&[(link.clone(), atr.clone()), (ulink.clone(), uatr.clone())]).await;

    let c = ok(&mpp.call("atr_confirm", confirm_args(&gb2)).await);
    let m5 = &g["M5"];
    assert_eq!(c["atrHash"], gb2["advertised"]);
    assert_eq!(c["request"]["kind"], "gateway-burn-intent");
    let preimage = &c["request"]["preimage"];
    assert_eq!(preimage["requestHash"], m5["expectRequestHash"]);
    assert_eq!(preimage["id"], g["fixed"]["MV1"]);
    assert_eq!(preimage["realm"], g["fixed"]["realm"]);
    assert_eq!(preimage["recipient"], m5["saltInput"]["recipient"]);
    let finish =
        json!({"pairing": GATEWAY, "atr": c["atr"]["base64"], "chosen": c["chosen"], "signature": gateway_answer(&g)});
    let done = ok(&mpp.call("atr_finish", finish).await);
    let b6 = file_row(&g, "B6");
    assert_eq!(done["signed"], b6["input"]["presented"], "B6's credential");
    assert_eq!(done["atrHash"], m5["expectBound"]);
    let r = mpp.call("atr_check", json!({"pairing": GATEWAY, "atr": b64(&atr), "presented": done["signed"]})).await;
    assert_eq!(ok(&r)["atrHash"], m5["expectBound"]);
    let mut other = done["signed"].clone();
    other["challenge"]["realm"] = g["fixed"]["otherRealm"].clone();
    let r = mpp.call("atr_check", json!({"pairing": GATEWAY, "atr": b64(&atr), "presented": other})).await;
    assert_eq!(declined(&r).0, "signed-not-bound");
    assert!(mpp.asked().is_empty(), "the gateway client answered here, the helper's wallet was never asked");

    let paid = ok(&mpp.call("atr_transact", transact_args(&ub2)).await);
    let m3 = &u["M3"];
    assert_eq!(paid["atrHash"], ub2["advertised"]);
    assert_eq!(paid["signed"]["payload"]["nonce"], m3["expectNonce"]);
    assert_eq!(paid["signed"]["payload"]["validBefore"], m3["expectValidBefore"]);
    assert_eq!(paid["signed"]["challenge"], ub2["input"]["doc"][0]);
    assert_eq!(mpp.asked(), ["eip712/TransferWithAuthorization"]);
    let check = |bytes: &[u8]| json!({"pairing": USDC_EVM, "atr": b64(bytes), "presented": paid["signed"]});
    assert_eq!(ok(&mpp.call("atr_check", check(&uatr)).await)["atrHash"], ub2["advertised"]);
    assert_eq!(declined(&mpp.call("atr_check", check(&uplanted)).await).0, "signed-not-bound");
    mpp.client.cancel().await.unwrap();
}

/// Base64url, unpadded, of the RFC 8785 form of a JSON value: how a seller writes `request` and `opaque`.
pub fn b64u_json(v: &Value) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, terms::json::canonical(v).unwrap())
}

/// The LCP string of a hash written as `0x` hex.
pub fn lcp(h: &Value) -> String {
    format!("lcp:sha256:{}", h.as_str().unwrap())
}
