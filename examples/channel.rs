//! One ATR per channel: open an x402 batch-settlement channel on Base Sepolia (the gate fetches and compares the
//! terms once, and the channel's configuration is salted with their hash), pay two more requests in it with vouchers
//! built from the hold, record the seller's charge after each, and close it with a refund.
//!
//! The seller is an in-memory stand-in serving the ATR and each request's x402 offer. The wallet holds two published
//! Anvil development keys, never real ones: #0 is the payer (it signs the deposit), #1 the payer authorizer (it signs
//! every voucher).
//!
//! Run: `cargo run --example channel`

#[path = "support/channel.rs"]
mod channel_seller;

use channel_seller::{Terms, cumulative, show};
use serde_json::{Map, Value, json};
use terms::BoxFuture;
use terms::LocalSigner;
use terms::{
    Answer, FixedClock, Options, Refund, Signer, SignerError, SigningRequest, TransactOutcome, open_channel,
    record_charge, transact, within,
};

/// Anvil's published development key #0: the payer.
const ANVIL_KEY_0: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/// Anvil's published development key #1: the payer authorizer.
const ANVIL_KEY_1: &str = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const CHAIN: u64 = 84_532;

/// The x402 v2 offer for one request: its price in a batch-settlement channel, H and the link beside it.
fn offer(seller: &Terms, price: &str) -> Value {
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
        "extensions": {"legalContext": {"info": {
            "type": "sha256",
            "value": seller.h().to_hex(),
            "legalContextUrl": seller.link()
        }}}
    })
}

/// A wallet with the payer's key and the payer authorizer's: in a batch, each EIP-712 `Voucher` is signed by the
/// authorizer and everything else by the payer, in order.
struct Wallet {
    payer: LocalSigner,
    authorizer: LocalSigner,
}

impl Wallet {
    async fn answer(&self, request: &SigningRequest) -> Result<Value, SignerError> {
        match request {
            SigningRequest::Batch { requests } => {
                let mut answers = Vec::with_capacity(requests.len());
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

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move { self.answer(request).await.map(Answer::new) })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seller = Terms::per_request();
    let wallet = Wallet {
        payer: LocalSigner::from_hex(ANVIL_KEY_0, CHAIN)?,
        authorizer: LocalSigner::from_hex(ANVIL_KEY_1, CHAIN)?,
    };
    let pairing = terms::pairing("x402/batch-settlement/eip155")?;
    let channel = pairing.channel().ok_or("a channel pairing")?;

    // The opening: the buyer names its payer authorizer and the deposit the channel holds.
    let mut inputs = Map::new();
    inputs.insert("payerAuthorizer".into(), json!(wallet.authorizer.address().to_checksum(None)));
    inputs.insert("deposit".into(), json!("100000"));
    let options = Options::new().clock(FixedClock(1_790_000_000)).inputs(inputs);
    let TransactOutcome::Signed(opened) =
        transact(&offer(&seller, "1000"), pairing, &wallet, &seller, &options).await?
    else {
        return Err("this pairing needs no agreement payment".into());
    };
    let opening = opened.signed.ok_or("the opening")?.to_value();
    // Keep the hold (plain serde JSON) and always pass the latest one back.
    let mut hold = open_channel(&opened.bytes, &opening, pairing, opened.landed.as_ref())?;
    println!("H:            {}", seller.h());
    println!("held channel: {} on {}", hold.channel, hold.network);
    println!("salt == H:    {}", opening.pointer("/payload/channelConfig/salt") == Some(&json!(hold.h)));
    show("open (request 1)", &opening, &hold);
    hold = record_charge(&hold, "1000")?;
    show("  seller charged 1000", &opening, &hold);

    // Two more requests: only the price comes from each offer; the ATR, H and the channel come from the hold.
    for (request, price) in [(2, "1000"), (3, "250")] {
        let paid = within(&offer(&seller, price), &hold, pairing, &wallet, None, &Options::new()).await?;
        if channel.bound_within(&paid.signed).ok() != Some(seller.h()) {
            return Err("every voucher signs the channel salted with H".into());
        }
        show(&format!("voucher (request {request})"), &paid.signed, &paid.hold);
        let charged = cumulative(&paid.signed).to_owned();
        hold = record_charge(&paid.hold, &charged)?;
        show(&format!("  seller charged {charged}"), &paid.signed, &hold);
    }

    // Close with a refund: the final voucher claims the recorded charge, and the rest of the deposit goes back.
    let closed =
        within(&offer(&seller, "250"), &hold, pairing, &wallet, Some(&Refund::close()), &Options::new()).await?;
    show("close (refund)", &closed.signed, &closed.hold);
    println!("held channel: {}", closed.hold.channel);
    println!(
        "unclaimed:    {} of the 100000 deposit goes back to the payer",
        100_000 - cumulative(&closed.signed).parse::<u64>()?
    );
    Ok(())
}
