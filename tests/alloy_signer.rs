//! alloy's signers pay without glue code: `AlloySigner` over alloy's local key signs the gate's EIP-712 request
//! exactly as the crate's own key does, and `AlloyWallet` pays the stand-in seller (which checks the signature and
//! that the nonce is H) on whichever EIP-155 chain the offer names.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;

use alloy_signer_local::PrivateKeySigner;
use terms::alloy::{AlloySigner, AlloyWallet};
use terms::client::{Client, Outgoing};
use terms::http::LoopbackFetch;
use terms::{LocalSigner, Signer, SigningRequest, Wallet};

fn alloy_key() -> PrivateKeySigner {
    seller::KEY.parse().unwrap()
}

#[tokio::test]
async fn an_alloy_signer_signs_the_gates_request_as_the_local_key_does() {
    let request: SigningRequest = serde_json::from_value(serde_json::json!({
        "kind": "eip712",
        "typedData": {
            "domain": {"name": "USDC", "version": "2", "chainId": 84532, "verifyingContract": seller::USDC},
            "types": {
                "EIP712Domain": [
                    {"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                    {"name": "chainId", "type": "uint256"}, {"name": "verifyingContract", "type": "address"}
                ],
                "Mail": [{"name": "contents", "type": "string"}]
            },
            "primaryType": "Mail",
            "message": {"contents": "hello"}
        }
    }))
    .unwrap();
    let ours = LocalSigner::from_hex(seller::KEY, 84532).unwrap();
    let theirs = AlloySigner::new(alloy_key(), 84532);
    assert_eq!(theirs.account(), ours.account());
    assert_eq!(theirs.sign(&request).await.unwrap(), ours.sign(&request).await.unwrap());
    let batch = SigningRequest::Batch { requests: vec![request.clone(), request] };
    assert_eq!(theirs.sign(&batch).await.unwrap(), ours.sign(&batch).await.unwrap());
    assert!(AlloySigner::on_its_chain(alloy_key()).is_none(), "alloy's local key names no chain by default");
}

#[tokio::test]
async fn an_alloy_wallet_pays_the_seller_on_the_offers_chain() {
    let wallet = AlloyWallet::new(alloy_key());
    assert_eq!(wallet.on("eip155:1").unwrap().account(), "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    assert!(wallet.on("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp").is_none());
    let seller = seller::Seller::start().await;
    let fetch = LoopbackFetch::new().unwrap().route(seller::HOST, seller.addr).unwrap();
    let client = Client::builder(wallet).fetch(fetch).build().unwrap();
    let outcome = client.send(Outgoing::new("GET", seller.url("/report"))).await.unwrap();
    let reply = outcome.reply().unwrap();
    assert!(reply.is_success(), "{outcome:?}");
    assert_eq!(seller.paid("/report"), 1);
}
