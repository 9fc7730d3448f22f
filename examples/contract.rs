//! A purchase under the signed agent contract, step by step: the seller's offer card and keys, a quote, a 402
//! challenge whose offer is paid through the gate, and the receipt checked against the body and the terms.
//!
//! The seller is an in-memory stand-in (its Ed25519 key a fixed test seed, its EVM side the published Anvil key
//! scheme of the other examples): it serves `/.well-known/agents.json`, `/.well-known/receipt-keys`, a quote, the
//! terms (the ATR) and a receipt, each document signed over its RFC 8785 form. The buyer verifies each signature
//! under the seller's published keys, checks the quote's expiry, pays the challenge's x402 offer with `transact`
//! (which fetches the terms once and compares their SHA-256 with H before signing), and then checks that the
//! receipt names the body it received and the same H the gate compared.
//!
//! Run: `cargo run --example contract`

use std::collections::HashMap;

use serde_json::{Value, json};
use terms::contract::{
    Challenge, Offer, OfferCard, Quote, Receipt, check_output, check_quote, check_terms, fetch_document, fetch_keys,
    public_key_of, read, sign_object, standing,
};
use terms::{
    Body, BoxFuture, Fetch, FetchError, FixedClock, LocalSigner, Options, Request, Response, Signer as _,
    TransactOutcome,
};

/// The seller's Ed25519 signing seed: a fixed test value, never a real key.
const SELLER_SEED: [u8; 32] = [0x5e; 32];
/// Anvil's published development key #0: the buyer's EVM wallet.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// The terms: bytes the gate hashes and never parses.
const ATR: &[u8] =
    br#"{"atrVersion":"1","terms":"Translations are licensed for internal use. A failed call is free."}"#;
/// The body the seller answers for the paid call.
const BODY: &[u8] = br#"{"translation":"Bonjour le monde"}"#;
/// Now, for every step: the fixed clock makes every run print the same lines.
const NOW: u64 = 1_790_000_000;
const HOST: &str = "api.seller.example";

/// A JSON object signed by the seller: its `signature` member added over the rest.
fn signed(value: Value) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let Value::Object(mut object) = value else { return Err("a document is an object".into()) };
    let signature = sign_object(&object, &SELLER_SEED)?;
    object.insert("signature".into(), Value::String(signature));
    Ok(serde_json::to_vec(&Value::Object(object))?)
}

/// The seller's x402 v2 offer for one call, with H and the terms' link beside it.
fn x402_offer(h: &str) -> Value {
    json!({
        "x402Version": 2,
        "resource": {"url": format!("https://{HOST}/v1/translate")},
        "accepts": [{
            "scheme": "exact",
            "network": "eip155:84532",
            "amount": "2000",
            "asset": "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            "payTo": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "maxTimeoutSeconds": 60,
            "extra": {"name": "USDC", "version": "2"}
        }],
        "extensions": {"legalContext": {"info": {
            "type": "sha256", "value": h, "legalContextUrl": format!("https://{HOST}/terms")
        }}}
    })
}

/// What the stand-in seller serves: bytes by URL.
type Served = HashMap<String, Vec<u8>>;

/// Every document the stand-in seller serves, by URL, plus the 402 challenge's body.
fn seller() -> Result<(Served, Vec<u8>), Box<dyn std::error::Error>> {
    let h = terms::atr_hash(ATR).to_hex();
    let terms = json!({"digest": h, "refund": "a failed call is not charged", "license": "internal use"});
    let mut docs = HashMap::new();
    docs.insert(
        format!("https://{HOST}/.well-known/receipt-keys"),
        serde_json::to_vec(&json!({"contract": "1.0", "keys": [{
            "kid": "s1", "alg": "ed25519", "key": public_key_of(&SELLER_SEED), "from": "2026-01-01T00:00:00Z"
        }]}))?,
    );
    docs.insert(
        format!("https://{HOST}/.well-known/agents.json"),
        signed(json!({
            "contract": "1.0",
            "seller": {"host": HOST, "verification": "domain"},
            "rates": [{"name": "translate", "price": "0.002", "currency": "USDC", "unit": "call", "miss": "free"}],
            "quote": format!("https://{HOST}/quote"),
            "terms": terms,
            "pay": [{"kind": "x402", "network": "eip155:84532"}],
            "keys": format!("https://{HOST}/.well-known/receipt-keys"),
            "issued": "2026-09-01T00:00:00Z",
            "kid": "s1"
        }))?,
    );
    docs.insert(
        format!("https://{HOST}/quote"),
        signed(json!({
            "contract": "1.0", "id": "q-1", "seller": HOST, "verb": "translate", "price": "0.002",
            "currency": "USDC", "input": terms::atr_hash(b"Hello world").to_hex(), "terms": h,
            "issued": "2026-09-21T14:13:00Z", "expires": "2026-09-21T14:18:20Z", "kid": "s1"
        }))?,
    );
    docs.insert(format!("https://{HOST}/terms"), ATR.to_vec());
    docs.insert(
        format!("https://{HOST}/receipts/r-1"),
        signed(json!({
            "contract": "1.0", "id": "r-1", "seller": HOST, "verb": "translate", "version": "1",
            "price": "0.002", "currency": "USDC", "paid": "0.002", "terms": h,
            "output": terms::atr_hash(BODY).to_hex(), "definition": terms::atr_hash(b"translate v1").to_hex(),
            "kind": "call", "time": "2026-09-21T14:13:21Z", "kid": "s1"
        }))?,
    );
    let challenge = signed(json!({
        "contract": "1.0", "type": "https://contract.example/problems/payment-required", "title": "Payment required",
        "status": 402,
        "offers": [{
            "kind": "challenge", "id": "c-1", "price": "0.002", "currency": "USDC", "terms": h,
            "pay": [x402_offer(&h)], "expires": "2026-09-21T14:18:20Z"
        }, {"kind": "checkout", "pack": "1,000 calls", "url": format!("https://{HOST}/checkout/pack-1000")}],
        "issued": "2026-09-21T14:13:20Z", "kid": "s1"
    }))?;
    Ok((docs, challenge))
}

/// The stand-in seller as the buyer's `Fetch`: each URL answers its bytes, anything else 404.
struct Seller(Served);

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        let found = self.0.get(request.url).cloned();
        Box::pin(async move {
            Ok(match found {
                Some(bytes) => Response::new(200, vec![], Body::from_bytes(bytes)),
                None => Response::new(404, vec![], Body::empty()),
            })
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (docs, challenge_body) = seller()?;
    let fetch = Seller(docs);

    // 1. The offer card, verified under the seller's published keys.
    let card = fetch_document::<OfferCard>(&fetch, &format!("https://{HOST}/.well-known/agents.json")).await?;
    let keys = fetch_keys(&fetch, &card.doc().seller.host).await?;
    card.verify(&keys)?;
    let rate = card.doc().rates.first().ok_or("the card names no rate")?;
    println!(
        "offer card: {} sells {} at {} {} a {}; signature verified",
        card.doc().seller.host,
        rate.name,
        rate.price,
        rate.currency,
        rate.unit
    );
    let proven = standing(&card, None).map_or_else(|why| format!("unproven ({why})"), |s| format!("{s:?}"));
    println!("standing:   {proven}");

    // 2. A quote for the call, verified and still holding.
    let quote = fetch_document::<Quote>(&fetch, &card.doc().quote).await?;
    quote.verify(&keys)?;
    check_quote(quote.doc(), NOW)?;
    println!(
        "quote:      {} {} for {}, until {}; signature verified",
        quote.doc().price,
        quote.doc().currency,
        quote.doc().verb,
        quote.doc().expires
    );

    // 3. The 402 challenge, verified; its offer's x402 request paid through the gate.
    let challenge = read::<Challenge>(&challenge_body)?;
    challenge.verify(&keys)?;
    let Some(Offer::Challenge(offer)) = challenge.doc().offers.first() else { return Err("no offer to pay".into()) };
    let document = offer.pay.first().ok_or("the offer names no way to pay")?;
    let wallet = LocalSigner::from_hex(ANVIL_KEY_0, 84_532)?;
    let pairing = terms::pairing_for(document, wallet.account())?;
    let options = Options::new().clock(FixedClock(NOW));
    let TransactOutcome::Signed(paid) = terms::transact(document, pairing, &wallet, &fetch, &options).await? else {
        return Err("this pairing needs no agreement payment".into());
    };
    println!("challenge:  offer {} paid with {}: terms fetched, H compared, payment signed", offer.id, pairing.id());
    check_terms(&offer.terms, &paid.h)?;
    check_terms(&card.doc().terms.digest, &paid.h)?;
    println!("terms:      the offer's and the card's digest are the H the gate compared ({})", paid.h);

    // 4. The receipt for the paid call, named by X-Receipt-Id: verified, then held against the body and the terms.
    let receipt = fetch_document::<Receipt>(&fetch, &format!("https://{HOST}/receipts/r-1")).await?;
    receipt.verify(&keys)?;
    check_output(receipt.doc(), BODY)?;
    check_terms(&receipt.doc().terms, &paid.h)?;
    println!(
        "receipt:    {} for {} {}: signature verified, output is the body received, terms are H",
        receipt.doc().id,
        receipt.doc().paid,
        receipt.doc().currency
    );

    // And what a tampered body would get.
    let Err(refused) = check_output(receipt.doc(), br#"{"translation":"Au revoir"}"#) else {
        return Err("a tampered body was accepted".into());
    };
    println!("tampered:   another body is refused: {}", refused.code());
    Ok(())
}
