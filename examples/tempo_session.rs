//! One ATR per session on Tempo: open an MPP Tempo session (`mpp/session/tempo`) on Tempo Moderato's TIP-20 channel
//! reserve (the v2 escrow), pay three requests in it, record the seller's charge after each, and close it.
//!
//! The seller is an in-memory stand-in: it serves the ATR and answers each request with a `WWW-Authenticate: Payment`
//! challenge, which the crate decodes (`terms::mpp::decode_challenges`). The opening's challenge carries H in its id
//! and its opaque; the gate fetches and compares the terms once. The payer signs one Tempo 0x76 transaction whose
//! `open` call to the escrow has H as its salt word (the seller's server would broadcast it), then the zero voucher
//! over the channel id, which commits to a descriptor carrying H. Every later challenge names the channel, and each
//! voucher, signed from the hold, signs that channel id and carries the descriptor. The wallet is a published Anvil
//! development key, never a real one.
//!
//! Run: `cargo run --example tempo_session`

#[path = "support/session_seller.rs"]
mod session_seller;

use alloy_primitives::{Bytes, U256, keccak256};
use serde_json::{Map, Value, json};
use session_seller::{NOW, SessionSeller, pay_then_close, show};
use terms::rail::tempo::transaction::{EMPTY_LIST, TempoCall, TempoTransaction};
use terms::{
    Answer, BoxFuture, FixedClock, LocalSigner, Options, Signer, SignerError, SigningRequest, TransactOutcome,
    open_channel, transact,
};

/// Anvil's published development key #0: the payer.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// Tempo Moderato.
const CHAIN: u64 = 42_431;
/// pathUSD, the TIP-20 the channel holds (and the fee token).
const PATH_USD: &str = "0x20c0000000000000000000000000000000000000";
/// The TIP-20 channel reserve (TIP-1034), Tempo's v2 session escrow.
const ESCROW: &str = "0x4D50500000000000000000000000000000000000";
const DEPOSIT: u64 = 10_000_000;

/// The payer's Tempo wallet: it signs a `tempo-call` as one 0x76 transaction (fees in pathUSD, an expiring nonce,
/// valid until the request's `validBefore`) and every EIP-712 voucher with the same key.
struct TempoWallet {
    key: LocalSigner,
}

impl TempoWallet {
    fn sign_call(&self, fields: &Map<String, Value>) -> Result<String, SignerError> {
        let bad = || SignerError::new("a tempo-call of another form");
        let call = fields.get("call").ok_or_else(bad)?;
        let to = call.get("to").and_then(Value::as_str).and_then(|t| t.parse().ok()).ok_or_else(bad)?;
        let data = call.get("data").and_then(Value::as_str).and_then(|d| d.strip_prefix("0x")).ok_or_else(bad)?;
        let mut tx = TempoTransaction {
            chain_id: fields.get("chainId").and_then(Value::as_u64).ok_or_else(bad)?,
            max_priority_fee_per_gas: 1,
            max_fee_per_gas: 2,
            gas_limit: 200_000,
            calls: vec![TempoCall {
                to: Some(to),
                value: U256::ZERO,
                input: alloy_primitives::hex::decode(data).map_err(|_| bad())?.into(),
            }],
            access_list: Bytes::from_static(&EMPTY_LIST),
            nonce_key: U256::MAX,
            nonce: 0,
            valid_before: fields.get("validBefore").and_then(Value::as_u64),
            valid_after: None,
            fee_token: PATH_USD.parse().ok(),
            fee_payer_signature: None,
            authorization_list: Bytes::from_static(&EMPTY_LIST),
            key_authorization: None,
            signature: Bytes::new(),
        };
        let signature = self.key.sign_digest(&keccak256(tx.sender_signed()).0)?;
        let signature = alloy_primitives::hex::decode(signature.trim_start_matches("0x")).map_err(|_| bad())?;
        tx.signature = signature.into();
        Ok(format!("0x{}", alloy_primitives::hex::encode(tx.encode())))
    }
}

impl Signer for TempoWallet {
    fn account(&self) -> &str {
        self.key.account()
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        match request {
            SigningRequest::TempoCall(fields) => {
                let signed = self.sign_call(fields).map(|s| Answer::new(json!(s)));
                Box::pin(async move { signed })
            }
            other => self.key.sign(other),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = SessionSeller {
        atr: br#"{"atrVersion":"1","seller":{"note":"Per-request quotes, billed in a Tempo session."}}"#.to_vec(),
        method: "tempo",
        currency: PATH_USD,
        recipient: "0x742d35Cc6634C0532925a3b844Bc9e7595f8fE00",
        details: json!({"chainId": CHAIN, "escrowContract": ESCROW, "sessionProtocol": "v2"}),
    };
    let wallet = TempoWallet { key: LocalSigner::from_hex(ANVIL_KEY_0, CHAIN)? };
    let pairing = terms::pairing("mpp/session/tempo")?;

    // The opening: the buyer names the deposit the channel locks.
    let mut inputs = Map::new();
    inputs.insert("deposit".into(), json!(DEPOSIT.to_string()));
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs);
    let offer = seller.offer("100", None)?;
    let TransactOutcome::Signed(opened) = transact(&offer, pairing, &wallet, &seller, &options).await? else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.as_ref().ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let hold = open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref())?;
    let salt = opening.pointer("/payload/descriptor/salt").and_then(Value::as_str).unwrap_or("?");
    println!("H:               {}", seller.h());
    println!("channel id:      {} on {}", hold.channel, hold.network);
    println!("salt:            {salt}");
    println!("salt == H:       {}", salt == hold.h);
    show("open", &opening, &hold);

    // Three requests in the channel, then the close.
    pay_then_close(&seller, pairing, &wallet, hold, &[(1, "100"), (2, "100"), (3, "250")], DEPOSIT).await
}
