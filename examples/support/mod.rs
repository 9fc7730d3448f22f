//! What the agreement examples share: an in-memory stand-in for the seller (its ATR link, its offer and its
//! agreement URL) and a wallet that signs EIP-712 requests and answers ERC-7710 requests with a delegation. Nothing
//! here touches a network; the key is the published Anvil development key #0, never a real one.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use alloy_primitives::{Address, Bytes, U256};
use serde_json::{Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::rail::evm::delegation::{self, abi};
use terms::{Answer, Signer, SignerError, SigningRequest};
use terms::{Body, Fetch, FetchError, Request, Response};

/// The seller's ATR: the 138-byte record of the conformance vectors (buyer.json `fixed.A`), never parsed.
pub(crate) const ATR: &str = "7b2261747256657273696f6e223a2231222c226964223a2230663866616435622d643963622d343639662d613136352d373038363737323839353065222c2278343032223a7b227a223a312e302c2261223a226361665c7530306539227d2c2273656c6c6572223a7b226e6f7465223a22436166c3a920e280942033302064c3ad617320e29c93227d7d";
/// H, the SHA-256 of the ATR, as the seller advertises it.
pub(crate) const H: &str = "0x8b1e122580ae3f6a8c3d36a24294e1260a87bde70f597279b973e39310072938";
/// Anvil's published development key #0.
pub(crate) const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// Now, fixed so that every run signs the same bytes.
pub(crate) const NOW: u64 = 1_790_000_000;

const NETWORK: &str = "eip155:84532";
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
/// MetaMask's ERC20TransferAmountEnforcer (Delegation Framework v1.3.0): caps what the delegate may transfer of one
/// token; its terms are the token and the cap, packed.
const ERC20_TRANSFER_AMOUNT_ENFORCER: &str = "0xf100b0819427117EcF76Ed94B358B1A5b5C6D2Fc";

/// The link of the ATR whose hash is `h`.
pub(crate) fn link(h: &str) -> String {
    format!("https://atr.seller.example/{h}")
}

/// The agreement URL for the ATR whose hash is `h`.
pub(crate) fn agreement_url(h: &str) -> String {
    format!("https://api.seller.example/agreement/{h}")
}

fn legal_context(h: &str) -> Value {
    json!({"type": "sha256", "value": h, "legalContextUrl": link(h)})
}

/// The seller's offer: one ERC-7710 option (its delegation is no public proof of H), H and the link, and the
/// agreement URL beside the link.
pub(crate) fn offer() -> Value {
    let mut info = legal_context(H);
    if let Some(info) = info.as_object_mut() {
        info.insert("legalContextAgreementUrl".into(), json!(agreement_url(H)));
    }
    json!({
        "x402Version": 2,
        "resource": {"url": "https://api.seller.example/v1/quote"},
        "accepts": [{
            "scheme": "exact",
            "network": NETWORK,
            "amount": "10000",
            "asset": USDC,
            "payTo": PAY_TO,
            "maxTimeoutSeconds": 60,
            "extra": {"name": "USDC", "version": "2", "assetTransferMethod": "erc7710"}
        }],
        "extensions": {"legalContext": {"info": info}}
    })
}

/// The agreement URL's payment request for the ATR whose hash is `h`: one unit, paid with EIP-3009, whose nonce
/// will be H.
pub(crate) fn agreement_required(h: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": agreement_url(h)},
        "accepts": [{
            "scheme": "exact",
            "network": NETWORK,
            "amount": "1",
            "asset": USDC,
            "payTo": PAY_TO,
            "maxTimeoutSeconds": 60,
            "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": legal_context(h)}}
    })
}

fn answer(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Response {
    Response::new(status, headers, Body::from_bytes(body))
}

/// The stand-in seller of one ATR: the ATR at its link; at the agreement URL, a 402 with its payment request, or,
/// for a paid request whose payment carries H (the seller reads it back with the EIP-3009 pairing), a 200 with the
/// receipt. It prints each answer of the agreement URL as it gives it, and counts the receipts it gave (so a
/// walkthrough can prove the main payment waited for one).
pub(crate) struct Seller {
    atr: Vec<u8>,
    h: String,
    receipts: AtomicUsize,
}

impl Seller {
    /// The seller of the conformance vectors' ATR, [`ATR`], whose hash is [`H`].
    pub(crate) fn new() -> Result<Self, hex::FromHexError> {
        Ok(Self::of(hex::decode(ATR)?))
    }

    /// The seller of these terms.
    pub(crate) fn of(atr: Vec<u8>) -> Self {
        let h = terms::atr_hash(&atr).to_hex();
        Self { atr, h, receipts: AtomicUsize::new(0) }
    }

    /// H, the hash of the seller's ATR.
    pub(crate) fn h(&self) -> &str {
        &self.h
    }

    /// The receipts the agreement URL has given.
    pub(crate) fn receipts(&self) -> usize {
        self.receipts.load(Ordering::SeqCst)
    }

    fn agreement(&self, payment: Option<&str>) -> Result<Response, FetchError> {
        let Some(header) = payment else {
            println!("agreement URL: 402");
            let required = serde_json::to_string(&agreement_required(&self.h)).map_err(FetchError::new)?;
            let header = b64_encode(required.as_bytes());
            return Ok(answer(402, vec![("PAYMENT-REQUIRED".into(), header)], vec![]));
        };
        let paid = b64_decode(header)
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .ok_or_else(|| FetchError::new("the payment is not base64 JSON"))?;
        let eip3009 = terms::pairing("x402/exact/eip155/eip3009").map_err(|d| FetchError::new(d.detail))?;
        if terms::check(&self.atr, &paid, eip3009).is_err() {
            println!("agreement URL: paid, 400");
            return Ok(answer(400, vec![], vec![]));
        }
        println!("agreement URL: paid, 200");
        self.receipts.fetch_add(1, Ordering::SeqCst);
        let receipt = json!({
            "atrHash": self.h,
            "agreed": true,
            "network": NETWORK,
            "transaction": format!("0x{}", "ab".repeat(32)),
        });
        Ok(answer(200, vec![], serde_json::to_vec(&receipt).map_err(FetchError::new)?))
    }
}

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url == link(&self.h) {
                return Ok(answer(200, vec![], self.atr.clone()));
            }
            if request.url == agreement_url(&self.h) {
                let payment = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("payment-signature"));
                return self.agreement(payment.map(|(_, v)| *v));
            }
            Ok(answer(404, vec![], vec![]))
        })
    }
}

/// The wallet: EIP-712 requests signed with the key; an ERC-7710 request answered with a root delegation from the
/// key's account to the payee, capped by MetaMask's ERC-20 transfer-amount enforcer at the request's amount of its
/// token, with the request's salt (H), signed for the reference DelegationManager. It prints each request kind it
/// signs, and keeps them (its clones share the list).
#[derive(Clone)]
pub(crate) struct Wallet {
    key: Arc<LocalSigner>,
    account: String,
    kinds: Arc<Mutex<Vec<&'static str>>>,
}

impl Wallet {
    pub(crate) fn new() -> Result<Self, SignerError> {
        let key = LocalSigner::from_hex(ANVIL_KEY_0, 84_532)?;
        let account = key.account().to_owned();
        Ok(Self { key: Arc::new(key), account, kinds: Arc::default() })
    }

    /// The kinds of the requests it was asked to sign, in order.
    pub(crate) fn kinds(&self) -> Vec<&'static str> {
        self.kinds.lock().map(|k| k.clone()).unwrap_or_default()
    }

    fn delegation(&self, fields: &serde_json::Map<String, Value>) -> Result<Value, SignerError> {
        let text = |k: &str| fields.get(k).and_then(Value::as_str).ok_or_else(|| SignerError::new(format!("no {k}")));
        let address = |k: &str| text(k)?.parse::<Address>().map_err(SignerError::new);
        let amount = U256::from_str_radix(text("amount")?, 10).map_err(SignerError::new)?;
        let salt = text("salt")?.parse::<alloy_primitives::B256>().map_err(SignerError::new)?;
        let chain_id = fields.get("chainId").and_then(Value::as_u64).ok_or_else(|| SignerError::new("no chainId"))?;
        let mut terms = address("token")?.to_vec();
        terms.extend_from_slice(&amount.to_be_bytes::<32>());
        let cap = abi::Caveat {
            enforcer: ERC20_TRANSFER_AMOUNT_ENFORCER.parse().map_err(SignerError::new)?,
            terms: Bytes::from(terms),
            args: Bytes::new(),
        };
        let manager: Address = delegation::DELEGATION_MANAGER.parse().map_err(SignerError::new)?;
        let mut d =
            delegation::root_delegation(address("payTo")?, self.key.address(), vec![cap], U256::from_be_bytes(salt.0));
        let signature = self.key.sign_digest(&delegation::signing_hash(&d, chain_id, manager).0)?;
        d.signature = signature.parse::<Bytes>().map_err(SignerError::new)?;
        Ok(json!({
            "delegationManager": delegation::DELEGATION_MANAGER,
            "permissionContext": delegation::encode_permission_context(&[d]),
            "delegator": self.key.address().to_checksum(None),
        }))
    }
}

impl Signer for Wallet {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            println!("signer: {}", request.kind());
            self.kinds.lock().map_err(|_| SignerError::new("the wallet's list is poisoned"))?.push(request.kind());
            match request {
                SigningRequest::Erc7710(fields) => self.delegation(fields).map(Answer::new),
                other => self.key.sign(other).await,
            }
        })
    }
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// The bytes of canonical padded standard base64; `None` for anything else.
fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text).ok()?;
    (b64_encode(&bytes) == text).then_some(bytes)
}
