//! The channel tools against this build's real channel pairing, `x402/batch-settlement/eip155` (merged from the
//! `channels` branch): open through `atr_transact`, keep the sealed hold, pay in the channel, record charges, close.

use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{Value, json};
use terms::fetch::{Body, Fetch, FetchError, Request, Response};
use terms::local::LocalSigner;
use terms::mcp::{BuyerOptions, buyer_server};
use terms::signer::BoxFuture;
use terms::{FixedClock, Options, Signature, Signer, SignerError, SigningRequest, atr_hash};

use crate::common::*;

const PAIRING: &str = "x402/batch-settlement/eip155";
/// Anvil's published development keys #0 (the payer) and #1 (the payer authorizer), never real ones.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ANVIL_KEY_1: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const CHAIN: u64 = 84_532;

pub fn trials() -> Vec<Trial> {
    vec![Trial::test("mcp::real_batch_settlement_channel_through_the_tools", || Ok(run(flow())))]
}

fn atr() -> Vec<u8> {
    bytes("A")
}

fn link() -> String {
    format!("https://atr.seller.example/{}", atr_hash(&atr()))
}

fn offer(price: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "batch-settlement",
            "network": format!("eip155:{CHAIN}"),
            "amount": price,
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 3600,
            "extra": {
                "receiverAuthorizer": "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
                "withdrawDelay": 900,
                "name": "USDC",
                "version": "2"
            }
        }],
        "extensions": {"legalContext": {"info": {"type": "sha256", "value": atr_hash(&atr()).to_hex(), "legalContextUrl": link()}}}
    })
}

struct Seller;

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != link() {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            Ok(Response::new(200, vec![], Body::from_bytes(atr())))
        })
    }
}

/// The payer signs everything but vouchers; the payer authorizer signs each EIP-712 `Voucher`.
struct Wallet {
    payer: LocalSigner,
    authorizer: LocalSigner,
    calls: std::sync::atomic::AtomicUsize,
}

impl Wallet {
    async fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::Batch { requests } => {
                let mut answers = Vec::new();
                for r in requests {
                    let key = match r {
                        SigningRequest::Eip712 { typed_data } if typed_data.primary_type == "Voucher" => {
                            &self.authorizer
                        }
                        _ => &self.payer,
                    };
                    answers.push(key.sign(r).await?.into_json());
                }
                Ok(Value::Array(answers))
            }
            other => Ok(self.payer.sign(other).await?.into_json()),
        }
    }
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        self.payer.account()
    }
    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Signature, SignerError>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { self.answer(request).await.map(Signature::new) })
    }
}

async fn flow() {
    let wallet = Arc::new(Wallet {
        payer: LocalSigner::from_hex(ANVIL_KEY_0, CHAIN).unwrap(),
        authorizer: LocalSigner::from_hex(ANVIL_KEY_1, CHAIN).unwrap(),
        calls: Default::default(),
    });
    let authorizer = wallet.authorizer.address().to_checksum(None);
    let options = BuyerOptions::new(Arc::new(Seller))
        .signer(wallet.clone())
        .gate_options(Options::new().clock(FixedClock(1_790_000_000)));
    let client = connect(buyer_server(options)).await;
    let h = atr_hash(&atr()).to_hex();

    let opened = ok(&call(
        &client,
        "atr_transact",
        json!({"pairing": PAIRING, "document": offer("1000"),
        "inputs": {"payerAuthorizer": authorizer, "deposit": "100000"}}),
    )
    .await);
    assert_eq!(opened["atrHash"], h);
    assert_eq!(opened["signed"]["payload"]["channelConfig"]["salt"], h, "the channel is salted with H");
    let mac = opened["mac"].clone();
    assert!(mac.is_string(), "the opening carries its mac");
    let mut open = json!({"pairing": PAIRING, "atr": opened["atr"]["base64"], "signed": opened["signed"], "mac": mac});
    if let Some(landed) = opened.get("landed") {
        open["landed"] = landed.clone();
    }
    // The raised opening is refused before the gate.
    let mut raised = open.clone();
    raised["signed"]["payload"]["voucher"]["maxClaimableAmount"] = json!("99999999");
    assert_eq!(declined(&call(&client, "atr_channel_open", raised).await).0, "opening-unverified");
    let held = ok(&call(&client, "atr_channel_open", open).await);
    assert_eq!(held["atrHash"], h);
    let mut hold = held["hold"].clone();
    assert_eq!(hold["pairing"], PAIRING);
    assert_eq!(hold["charged"], "0");

    hold =
        ok(&call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": "1000"})).await)["hold"].clone();
    let over = call(&client, "atr_channel_record_charge", json!({"hold": hold, "charged": "100001"})).await;
    assert_eq!(declined(&over).0, "offer-unreadable");
    let calls = wallet.calls.load(std::sync::atomic::Ordering::SeqCst);
    let mut edited = hold.clone();
    edited["signedMax"] = json!("100000");
    let r = call(&client, "atr_channel_within", json!({"pairing": PAIRING, "hold": edited, "document": offer("250")}))
        .await;
    assert_eq!(declined(&r).0, "hold-unverified");
    assert_eq!(wallet.calls.load(std::sync::atomic::Ordering::SeqCst), calls, "nothing signed for an edited hold");

    let paid =
        ok(&call(&client, "atr_channel_within", json!({"pairing": PAIRING, "hold": hold, "document": offer("250")}))
            .await);
    assert_eq!(paid["atrHash"], h);
    assert_eq!(paid["signed"]["payload"]["voucher"]["maxClaimableAmount"], "1250");
    assert_eq!(paid["hold"]["signedMax"], "1250");
    hold =
        ok(&call(&client, "atr_channel_record_charge", json!({"hold": paid["hold"], "charged": "1250"})).await)["hold"]
            .clone();
    let closed = ok(&call(
        &client,
        "atr_channel_within",
        json!({"pairing": PAIRING, "hold": hold, "document": offer("250"), "refund": {}}),
    )
    .await);
    assert_eq!(
        closed["signed"]["payload"]["voucher"]["maxClaimableAmount"], "1250",
        "the close claims the recorded charge"
    );
    // Another document's hash: nothing signed.
    let mut other = offer("250");
    other["extensions"]["legalContext"]["info"]["value"] =
        json!(row("B1")["expect"]["h"].as_str().unwrap().replace('8', "9"));
    let r = call(&client, "atr_channel_within", json!({"pairing": PAIRING, "hold": closed["hold"], "document": other}))
        .await;
    assert!(declined(&r).0 == "hash-mismatch" || declined(&r).0 == "offer-unreadable");
}
