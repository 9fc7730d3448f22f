//! What the two MPP session examples share: an in-memory stand-in for the seller (its ATR at its link, and a
//! `WWW-Authenticate: Payment` session challenge per request, decoded by the crate) and the line each step prints.
//! Nothing here touches a network.

use base64::Engine as _;
use serde_json::{Value, json};
use terms::pairing::ChannelHold;
use terms::{AtrHash, BoxFuture, Options, Pairing, Refund, Signer, atr_hash, record_charge, within};
use terms::{Body, Fetch, FetchError, Request, Response};

/// The time the examples run at, and a minute later, when the opening's challenge expires.
pub(crate) const NOW: u64 = 1_790_000_000;
const EXPIRES: &str = "2026-09-21T14:14:20Z";

/// A JSON value as MPP carries it: base64url of its RFC 8785 form.
fn b64u_json(value: &Value) -> String {
    let text = terms::json::canonical(value).unwrap_or_default();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text.as_bytes())
}

/// The stand-in seller: its terms, and a session challenge per request on `method`, paying `currency` to
/// `recipient` under `details` (its `methodDetails`).
pub(crate) struct SessionSeller {
    pub(crate) atr: Vec<u8>,
    pub(crate) method: &'static str,
    pub(crate) currency: &'static str,
    pub(crate) recipient: &'static str,
    pub(crate) details: Value,
}

impl SessionSeller {
    pub(crate) fn h(&self) -> AtrHash {
        atr_hash(&self.atr)
    }

    fn link(&self) -> String {
        format!("https://atr.seller.example/{}", self.h())
    }

    /// The `WWW-Authenticate` value for one request at `price`. The first names no channel and carries H (in its id,
    /// `base64url(H).0`, and its opaque); a later one names the held channel.
    fn challenge(&self, price: &str, channel: Option<&str>) -> String {
        let mut details = self.details.clone();
        if let (Some(channel), Some(d)) = (channel, details.as_object_mut()) {
            d.insert("channelId".into(), json!(channel));
        }
        let request =
            json!({"amount": price, "currency": self.currency, "recipient": self.recipient, "methodDetails": details});
        let opaque = json!({"legalContext": format!("lcp:sha256:{}", self.h()), "legalContextUrl": self.link()});
        let id = match channel {
            None => terms::mpp::challenge_id(&self.h(), 0).unwrap_or_default(),
            Some(_) => format!("session-{price}"),
        };
        format!(
            r#"Payment id="{id}", realm="api.seller.example", method="{}", intent="session", request="{}", expires="{EXPIRES}", opaque="{}""#,
            self.method,
            b64u_json(&request),
            b64u_json(&opaque),
        )
    }

    /// The challenge list the buyer reads from the 402's `WWW-Authenticate` headers.
    pub(crate) fn offer(&self, price: &str, channel: Option<&str>) -> Result<Value, terms::mpp::ChallengeError> {
        terms::mpp::decode_challenges(&[self.challenge(price, channel).as_str()])
    }
}

impl Fetch for SessionSeller {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            if request.url != self.link() {
                return Ok(Response::new(404, vec![], Body::empty()));
            }
            Ok(Response::new(200, vec![], Body::from_bytes(self.atr.clone())))
        })
    }
}

/// One step's line: the payment's action and the cumulative amount its voucher signs, and the hold after it.
pub(crate) fn show(step: &str, payment: &Value, hold: &ChannelHold) {
    let action = payment.pointer("/payload/action").and_then(Value::as_str).unwrap_or("?");
    let cumulative = payment.pointer("/payload/cumulativeAmount").and_then(Value::as_str).unwrap_or("?");
    println!(
        "{step:<24} {action:<8} signed cumulative {cumulative:>4}   hold: charged {:>4}, signedMax {:>4}",
        hold.charged, hold.signed_max
    );
}

/// The requests after the opening, each `(number, price)`, then the close. Only the price comes from each challenge;
/// the ATR, H and the channel come from the hold, and after each voucher the seller charges what it signs. The final
/// voucher claims the recorded charge, and the rest of `deposit` goes back.
pub(crate) async fn pay_then_close(
    seller: &SessionSeller,
    pairing: &dyn Pairing,
    wallet: &dyn Signer,
    mut hold: ChannelHold,
    requests: &[(u32, &str)],
    deposit: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    for (request, price) in requests {
        let offer = seller.offer(price, Some(&hold.channel))?;
        let paid = within(&offer, &hold, pairing, wallet, None, &Options::new()).await?;
        if paid.signed.pointer("/payload/channelId") != Some(&json!(hold.channel)) {
            return Err("every voucher signs the channel salted with H".into());
        }
        show(&format!("voucher (request {request})"), &paid.signed, &paid.hold);
        let charged = paid.hold.signed_max.clone();
        hold = record_charge(&paid.hold, &charged)?;
        show(&format!("  seller charged {charged}"), &paid.signed, &hold);
    }
    let last = requests.last().map_or("0", |(_, price)| *price);
    let offer = seller.offer(last, Some(&hold.channel))?;
    let closed = within(&offer, &hold, pairing, wallet, Some(&Refund::close()), &Options::new()).await?;
    show("close", &closed.signed, &closed.hold);
    let claimed: u64 =
        closed.signed.pointer("/payload/cumulativeAmount").and_then(Value::as_str).unwrap_or("0").parse()?;
    println!("unclaimed:       {} of the {deposit} deposit goes back to the payer", deposit.saturating_sub(claimed));
    Ok(())
}
