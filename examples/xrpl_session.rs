//! One ATR per channel on the XRP Ledger: open an MPP session (`mpp/session/xrpl`) whose PaymentChannelCreate
//! carries the terms' hash in its one memo (the gate fetches and compares the terms once), pay two more requests with
//! claims built from the hold (each signs the channel id and a cumulative amount of drops, not H: the opening bound
//! the channel to H), record the seller's charge after each, and close the channel with a final claim.
//!
//! The seller is an in-memory stand-in serving the ATR and each request's `WWW-Authenticate: Payment` session
//! challenge. The wallet is one local ed25519 XRPL key from fixed test entropy (never a real one): it signs the
//! PaymentChannelCreate and, as the channel's key, every claim. Nothing is sent to a ledger.
//!
//! Run: `cargo run --example xrpl_session --features mpp,xrpl,local-signer`

use base64::Engine as _;
use serde_json::{Map, Value, json};
use terms::pairing::ChannelHold;
use terms::{
    AtrHash, Body, BoxFuture, Fetch, FetchError, FixedClock, Options, Refund, Request, Response, TransactOutcome,
    XrplKey, atr_hash, open_channel, record_charge, transact, within,
};

/// Fixed test entropy: the payer and the channel's claim key.
const ENTROPY: &str = "01010101010101010101010101010101";
const NETWORK: &str = "xrpl:1";
const RECIPIENT: &str = "rpjfAeE3DeeHPFnN2PgGFW5YxnZFAjrEyN";
const DEPOSIT: u64 = 1_000_000;
/// The time the example runs at, before the challenges expire.
const NOW: u64 = 1_790_000_000;

/// The stand-in seller: its terms at their link, and a session challenge per request.
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

    /// The challenge list for one request at `price` drops: the first names no channel and carries H (in its id and
    /// opaque); a later one names the held channel in the request's `channelId`.
    fn offer(&self, price: &str, channel: Option<&str>) -> Result<Value, terms::mpp::ChallengeError> {
        let request = json!({
            "amount": price,
            "channelId": channel.unwrap_or(""),
            "recipient": RECIPIENT,
            "methodDetails": {"network": "testnet"}
        });
        let opaque = json!({"legalContext": format!("lcp:sha256:{}", self.h()), "legalContextUrl": self.link()});
        let id = match channel {
            None => terms::mpp::challenge_id(&self.h(), 0).unwrap_or_default(),
            Some(_) => format!("session-{price}"),
        };
        let header = format!(
            r#"Payment id="{id}", realm="api.seller.example", method="xrpl", intent="session", request="{}", expires="2026-09-21T14:14:20Z", opaque="{}""#,
            b64u_json(&request),
            b64u_json(&opaque),
        );
        terms::mpp::decode_challenges(&[header.as_str()])
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

/// A JSON value as MPP carries it: base64url of its RFC 8785 form.
fn b64u_json(value: &Value) -> String {
    let text = terms::json::canonical(value).unwrap_or_default();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text.as_bytes())
}

/// One step's line: the payment's action and the drops its claim signs, and the hold after it.
fn show(step: &str, payment: &Value, hold: &ChannelHold) {
    let action = payment.pointer("/payload/action").and_then(Value::as_str).unwrap_or("?");
    let amount = payment.pointer("/payload/amount").and_then(Value::as_str).unwrap_or("?");
    println!(
        "{step:<24} {action:<8} claim {amount:>4} drops   hold: charged {:>4}, signedMax {:>4}",
        hold.charged, hold.signed_max
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = Seller { atr: b"Terms of the quote API: 100 drops a request, claims redeemed daily.".to_vec() };
    let key = XrplKey::ed25519_from_entropy_hex(ENTROPY)?;
    let wallet = key.on_network(NETWORK).ok_or("an XRPL network")?;
    let pairing = terms::pairing("mpp/session/xrpl")?;

    // The opening: the deposit and the channel's terms, with the buyer's reads of the ledger (the account's next
    // sequence, the fee, the last ledger the PaymentChannelCreate may land in).
    let mut inputs = Map::new();
    inputs.insert("deposit".into(), json!(DEPOSIT.to_string()));
    inputs.insert(
        "xrpl".into(),
        json!({
            "publicKey": format!("0x{}", hex::encode_upper(key.public_key())),
            "settleDelay": 3600,
            "fee": "12",
            "sequence": 7,
            "lastLedgerSequence": 1000
        }),
    );
    let options = Options::new().clock(FixedClock(NOW)).inputs(inputs);
    let TransactOutcome::Signed(opened) =
        transact(&seller.offer("100", None)?, pairing, &wallet, &seller, &options).await?
    else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let mut hold = open_channel(&opened.bytes, &opening, pairing, None)?;
    println!("H:            {}", seller.h());
    println!("held channel: {} on {}", hold.channel, hold.network);
    show("open (request 1)", &opening, &hold);
    hold = record_charge(&hold, "100")?;
    show("  seller charged 100", &opening, &hold);

    for (request, price) in [(2, "100"), (3, "250")] {
        let paid =
            within(&seller.offer(price, Some(&hold.channel))?, &hold, pairing, &wallet, None, &Options::new()).await?;
        if paid.signed.pointer("/payload/channelId") != Some(&json!(hold.channel)) {
            return Err("every claim signs the held channel".into());
        }
        show(&format!("claim (request {request})"), &paid.signed, &paid.hold);
        let charged = paid.hold.signed_max.clone();
        hold = record_charge(&paid.hold, &charged)?;
        show(&format!("  seller charged {charged}"), &paid.signed, &hold);
    }

    // Close: the final claim is the recorded charge; the rest of the deposit goes back when the channel closes.
    let offer = seller.offer("250", Some(&hold.channel))?;
    let closed = within(&offer, &hold, pairing, &wallet, Some(&Refund::close()), &Options::new()).await?;
    show("close", &closed.signed, &closed.hold);
    let claimed: u64 = closed.signed.pointer("/payload/amount").and_then(Value::as_str).unwrap_or("0").parse()?;
    println!("unclaimed:    {} of the {DEPOSIT} drops deposited go back to the payer", DEPOSIT - claimed);
    Ok(())
}
