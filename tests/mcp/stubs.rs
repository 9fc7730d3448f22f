//! Stand-ins for pairing families this build does not have yet, injected through `BuyerOptions::pairings` (the
//! documented seam for tests): a pairing whose payment is no public proof (named `x402/exact/eip155/erc7710`), and
//! a channel pairing (named `x402/batch-settlement/eip155`). Both read, choose and build as EIP-3009 does, so the
//! gate's comparison, build and read-back run for real; only the id, the agreement URL and the channel members are
//! the stand-in's.

use std::sync::Arc;

use serde_json::{Value, json};
use terms::pairing::{
    Advertised, Batch, Channel, ChannelKind, ChannelRef, ChooseContext, Chosen, Unsigned, WithinArgs, WithinPlan,
};
use terms::signer::TypedData;
use terms::{AtrHash, DeclineCode, Declined, Pairing, Refusal, SigningRequest};

pub const AGREEMENT_ID: &str = "x402/exact/eip155/erc7710";
pub const CHANNEL_ID: &str = "x402/batch-settlement/eip155";

fn eip3009() -> &'static dyn Pairing {
    terms::pairing("x402/exact/eip155/eip3009").expect("built")
}

/// EIP-3009 under another id, with `public_proof` false and an agreement URL in its read.
#[derive(Debug)]
pub struct AgreementStub {
    pub url: String,
}

impl Pairing for AgreementStub {
    fn id(&self) -> &'static str {
        AGREEMENT_ID
    }
    fn public_proof(&self) -> bool {
        false
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        let mut read = eip3009().read(doc)?;
        read.agreement = Some(self.url.clone());
        Ok(read)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let mut chosen = eip3009().choose(read, ctx)?;
        chosen.pairing = AGREEMENT_ID.to_owned();
        Ok(chosen)
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        eip3009().build(chosen, atr, h)
    }
    fn bound(&self, presented: &Value, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        eip3009().bound(presented, landed)
    }
}

/// EIP-3009 under a channel id: the signed authorization is the opening (its channel: the network and the payee),
/// and each later payment is an EIP-712 voucher for a cumulative amount that carries H.
#[derive(Debug)]
pub struct ChannelStub;

impl Pairing for ChannelStub {
    fn id(&self) -> &'static str {
        CHANNEL_ID
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        eip3009().read(doc)
    }
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let mut chosen = eip3009().choose(read, ctx)?;
        chosen.pairing = CHANNEL_ID.to_owned();
        Ok(chosen)
    }
    fn build<'a>(&'a self, chosen: &'a Chosen, atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        eip3009().build(chosen, atr, h)
    }
    fn bound(&self, presented: &Value, landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        if presented.get("voucher").is_some() {
            return self.bound_within(presented);
        }
        eip3009().bound(presented, landed)
    }
    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

fn refuse(reason: &str) -> Refusal {
    Refusal::new(format!("x402/{reason}"))
}

impl Channel for ChannelStub {
    fn kind(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelKind, Refusal> {
        if payment.pointer("/payload/authorization").is_some() {
            Ok(ChannelKind::Open)
        } else if payment.get("voucher").is_some() {
            Ok(ChannelKind::Within)
        } else {
            Err(refuse("not-a-channel-payment"))
        }
    }
    fn channel_ref(&self, payment: &Value, _landed: Option<&Value>) -> Result<ChannelRef, Refusal> {
        let (network, channel) = match payment.get("voucher") {
            Some(v) => (v.get("network"), v.get("channel")),
            None => (payment.pointer("/accepted/network"), payment.pointer("/payload/authorization/to")),
        };
        match (network.and_then(Value::as_str), channel.and_then(Value::as_str)) {
            (Some(n), Some(c)) => Ok(ChannelRef { network: n.to_owned(), channel: c.to_owned() }),
            _ => Err(refuse("no-channel")),
        }
    }
    fn bound_within(&self, payment: &Value) -> Result<AtrHash, Refusal> {
        payment.pointer("/voucher/h").and_then(Value::as_str).and_then(AtrHash::parse).ok_or_else(|| refuse("unbound"))
    }
    fn plan_within(&self, args: &WithinArgs<'_>) -> Result<WithinPlan, Declined> {
        let amount = args
            .doc
            .get("amount")
            .and_then(Value::as_str)
            .and_then(|a| a.parse::<u128>().ok())
            .ok_or_else(|| Declined::new(DeclineCode::OfferUnreadable, "x402/amount-unreadable"))?;
        let held: u128 = args.hold.signed_max.parse().unwrap_or(0);
        let cumulative = match args.refund {
            Some(r) => r.amount.as_deref().and_then(|a| a.parse().ok()).unwrap_or(held),
            None => held + amount,
        };
        let voucher = json!({
            "network": args.hold.network,
            "channel": args.hold.channel,
            "cumulative": cumulative.to_string(),
            "h": args.h.to_hex(),
        });
        let typed_data: TypedData = serde_json::from_value(json!({
            "domain": {"name": "stand-in channel", "chainId": 84532},
            "types": {
                "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "chainId", "type": "uint256"}],
                "Voucher": [
                    {"name": "channel", "type": "string"},
                    {"name": "cumulative", "type": "uint256"},
                    {"name": "h", "type": "bytes32"}
                ]
            },
            "primaryType": "Voucher",
            "message": {"channel": args.hold.channel, "cumulative": cumulative.to_string(), "h": args.h.to_hex()}
        }))
        .expect("typed data");
        let request = SigningRequest::Eip712 { typed_data };
        Ok(WithinPlan {
            batch: Box::new(Vouchers {
                requests: vec![request],
                voucher,
                closing: args.refund.is_some_and(|r| r.amount.is_none()),
            }),
            cumulative: cumulative.to_string(),
            precheck: true,
        })
    }
}

struct Vouchers {
    requests: Vec<SigningRequest>,
    voucher: Value,
    closing: bool,
}

impl Batch for Vouchers {
    fn requests(&self) -> &[SigningRequest] {
        &self.requests
    }
    fn complete(&self, answers: &[String], reference: Option<&str>) -> Result<Value, Refusal> {
        let [signature] = answers else { return Err(refuse("answers")) };
        if self.closing {
            return Err(refuse("close-not-supported-by-stand-in"));
        }
        Ok(json!({"voucher": self.voucher, "signature": signature, "ref": reference}))
    }
}

/// The resolver the test servers use: the two stand-ins by id, this build's registry for every other id.
pub fn resolver(agreement_url: &str) -> terms::mcp::PairingResolver {
    let agreement: &'static AgreementStub = Box::leak(Box::new(AgreementStub { url: agreement_url.to_owned() }));
    Arc::new(move |id: &str| -> Result<&'static dyn Pairing, Declined> {
        match id {
            AGREEMENT_ID => Ok(agreement),
            CHANNEL_ID => Ok(&ChannelStub),
            other => terms::pairing(other),
        }
    })
}
