//! One ATR per session: open an MPP EVM session (`mpp/session/evm`) on Base Sepolia, pay two more requests in it,
//! record the seller's charge after each, and close it.
//!
//! The seller is an in-memory stand-in: it serves the ATR and answers each request with a `WWW-Authenticate: Payment`
//! challenge, which the crate decodes (`terms::mpp::decode_challenges`). The opening's challenge carries H in its id
//! and its opaque; the gate fetches and compares the terms once, and the escrow channel it opens is salted with their
//! hash, so the channel id commits to H. Every later challenge names the channel, and each voucher, signed from the
//! hold, signs that channel id. The wallet is a published Anvil development key, never a real one: it signs the
//! deposit's EIP-3009 authorization and every voucher.
//!
//! Run: `cargo run --example mpp_session`

use base64::Engine as _;
use serde_json::{Map, Value, json};
use terms::pairing::ChannelHold;
use terms::{
    AtrHash, BoxFuture, FixedClock, LocalSigner, Options, Payment, Refund, TransactOutcome, atr_hash, open_channel,
    record_charge, transact, within,
};
use terms::{Body, Fetch, FetchError, Request, Response};

/// Anvil's published development key #0: the payer.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const CHAIN: u64 = 84_532;
/// The time the example runs at, and a minute later, when the opening's challenge expires.
const NOW: u64 = 1_790_000_000;
const EXPIRES: &str = "2026-09-21T14:14:20Z";
const USDC: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const ESCROW: &str = "0x1234567890AbcdEF1234567890aBcdef12345678";

fn b64u(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A JSON value as MPP carries it: base64url of its RFC 8785 form.
fn b64u_json(value: &Value) -> String {
    b64u(terms::json::canonical(value).unwrap_or_default().as_bytes())
}

/// The stand-in seller: its terms, and a challenge per request.
struct Seller {
    atr: Vec<u8>,
}

impl Seller {
    fn h(&self) -> AtrHash {
        atr_hash(&self.atr)
    }

    fn link(&self) -> String {
        format!("https://atr.seller.example/{}", self.h())
    }

    /// The `WWW-Authenticate` value for one request: a session on the escrow at `price` per request. The first names
    /// no channel and carries H (in its id, `base64url(H).0`, and its opaque); a later one names the held channel.
    fn challenge(&self, price: &str, channel: Option<&str>) -> String {
        let mut details = json!({"chainId": CHAIN, "escrowContract": ESCROW, "credentialTypes": ["authorization"]});
        if let (Some(channel), Some(d)) = (channel, details.as_object_mut()) {
            d.insert("channelId".into(), json!(channel));
        }
        let request = json!({
            "amount": price,
            "currency": USDC,
            "recipient": "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            "methodDetails": details,
        });
        let opaque = json!({"legalContext": format!("lcp:sha256:{}", self.h()), "legalContextUrl": self.link()});
        let id = match channel {
            None => terms::mpp::challenge_id(&self.h(), 0).unwrap_or_default(),
            Some(_) => format!("session-{price}"),
        };
        format!(
            r#"Payment id="{id}", realm="api.seller.example", method="evm", intent="session", request="{}", expires="{EXPIRES}", opaque="{}""#,
            b64u_json(&request),
            b64u_json(&opaque),
        )
    }

    /// The challenge list the buyer reads from the 402's `WWW-Authenticate` headers.
    fn offer(&self, price: &str, channel: Option<&str>) -> Result<Value, terms::mpp::ChallengeError> {
        terms::mpp::decode_challenges(&[self.challenge(price, channel).as_str()])
    }
}

impl Fetch for Seller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != self.link() {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            Ok(Response::new(200, vec![], Body::from_bytes(self.atr.clone())))
        })
    }
}

fn show(step: &str, payment: &Value, hold: &ChannelHold) {
    let action = payment.pointer("/payload/action").and_then(Value::as_str).unwrap_or("?");
    let cumulative = payment.pointer("/payload/cumulativeAmount").and_then(Value::as_str).unwrap_or("?");
    println!(
        "{step:<24} {action:<8} signed cumulative {cumulative:>4}   hold: charged {:>4}, signedMax {:>4}",
        hold.charged, hold.signed_max
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller =
        Seller { atr: br#"{"atrVersion":"1","seller":{"note":"Per-request quotes, billed in a session."}}"#.to_vec() };
    let wallet = LocalSigner::from_hex(ANVIL_KEY_0, CHAIN)?;
    let pairing = terms::pairing("mpp/session/evm")?;

    // The opening: the buyer names the deposit the channel locks and the token's EIP-712 domain.
    let mut inputs = Map::new();
    inputs.insert("deposit".into(), json!("5000000"));
    inputs.insert("credentialType".into(), json!("authorization"));
    inputs.insert("tokenDomain".into(), json!({"name": "USDC", "version": "2"}));
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs);
    let offer = seller.offer("100", None)?;
    let TransactOutcome::Signed(opened) = transact(&offer, pairing, &wallet, &seller, &options).await? else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.as_ref().ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let mut hold = open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref())?;
    println!("H:               {}", seller.h());
    println!("challenge id:    {}", offer.pointer("/0/id").and_then(Value::as_str).unwrap_or("?"));
    println!("held channel:    {} on {}", hold.channel, hold.network);
    println!("salt == H:       {}", opening.pointer("/payload/salt") == Some(&json!(hold.h)));
    let header = opened.signed.as_ref().and_then(Payment::authorization).unwrap_or_default();
    println!("Authorization:   {}…", header.get(..48).unwrap_or(&header));
    show("open (request 1)", &opening, &hold);

    // Two more requests: only the price comes from each challenge; the ATR, H and the channel come from the hold.
    for (request, price) in [(2, "100"), (3, "250")] {
        let offer = seller.offer(price, Some(&hold.channel))?;
        let paid = within(&offer, &hold, pairing, &wallet, None, &Options::new()).await?;
        if paid.signed.pointer("/payload/channelId") != Some(&json!(hold.channel)) {
            return Err("every voucher signs the channel salted with H".into());
        }
        show(&format!("voucher (request {request})"), &paid.signed, &paid.hold);
        let charged = paid.hold.signed_max.clone();
        hold = record_charge(&paid.hold, &charged)?;
        show(&format!("  seller charged {charged}"), &paid.signed, &hold);
    }

    // The close: the final voucher claims the recorded charge, and the rest of the deposit goes back.
    let offer = seller.offer("250", Some(&hold.channel))?;
    let closed = within(&offer, &hold, pairing, &wallet, Some(&Refund::close()), &Options::new()).await?;
    show("close", &closed.signed, &closed.hold);
    let claimed: u64 =
        closed.signed.pointer("/payload/cumulativeAmount").and_then(Value::as_str).unwrap_or("0").parse()?;
    println!("unclaimed:       {} of the 5000000 deposit goes back to the payer", 5_000_000 - claimed);
    Ok(())
}
