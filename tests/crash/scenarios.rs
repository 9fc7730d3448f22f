//! The purchases the harness kills, each a seller's offer, the terms it serves, the buyer's inputs, its wallet and
//! its policy. Every offer but the agreement's is a vector file's B2 document (`tests/vectors/`), served with the
//! bytes its H names ("abc", where the row plants other bytes), with the row's buyer inputs (the batch opening's
//! without its fixed salt); the agreement purchase is the examples' seller (`examples/support/mod.rs`), as the harness
//! has always killed it. A retry runs at a later clock, and where the build reads an input or the offer for what a
//! clock would give it, the retry's is a later one too (the Solana blockhash, the session challenge's expiry): a
//! payment built anew on a retry would differ from the first, so only a resumed one asks the wallet the same.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use terms::safety::policy::Policy;
use terms::{Answer, BoxFuture, LocalSigner, Signer, SignerError, SigningRequest};

use crate::rows::row;
use crate::seller;

/// The ATR every vector offer advertises the hash of: SHA-256("abc") is their H.
const ABC: &[u8] = b"abc";

/// The policy of the EVM purchases: Base Sepolia's USDC, capped at 10 USDC (the session locks a 5 USDC deposit),
/// and a day's budget.
const EVM_POLICY: &str = r#"
resources = ["https://api.seller.example/"]
networks = ["eip155:84532"]

[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "10000000"

[[budgets]]
name = "usdc-day"
asset = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"
window = "day"
limit = "100000000"
"#;

/// The policy of the Solana purchase: devnet USDC, capped, and a day's budget.
#[cfg(feature = "solana")]
const SOLANA_POLICY: &str = r#"
resources = ["https://api.seller.example/"]
networks = ["solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"]

[[assets]]
network = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
address = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
symbol = "USDC"
decimals = 6
cap = "10000000"

[[budgets]]
name = "usdc-day"
asset = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
window = "day"
limit = "100000000"
"#;

/// A day after the first run's clock (`seller::NOW`, 2026-09-21T14:13:20Z): the expiry of the challenges a retry
/// reads.
const LATER_EXPIRES: &str = "2026-09-22T14:13:20Z";

/// Another 32-byte base58 value, the "recent blockhash" a retry reads: a fresh build would sign another message.
const LATER_BLOCKHASH: &str = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU";

/// The purchases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scenario {
    /// One EIP-3009 payment (`x402-exact-eip155-eip3009.json`): its validity window is drawn from the clock.
    Eip3009,
    /// One Permit2 witness transfer (`x402-exact-eip155-permit2.json`): its nonce is H, its deadline drawn from
    /// the clock.
    Permit2,
    /// A batch-settlement channel's opening (`x402-batch-settlement.json`, its B2 inputs without `authSalt`): the
    /// deposit authorization's salt is drawn at random, and deposit and voucher are signed as one batch.
    Batch,
    /// One Solana transfer (`x402-exact-solana.json`): the recent blockhash is an input, another on each retry.
    #[cfg(feature = "solana")]
    Solana,
    /// An agreement payment (EIP-3009, nonce H), then the ERC-7710 delegation: two payments of one purchase.
    Agreement,
    /// An MPP session's opening (`mpp-session-evm.json`), one payment signed in two steps: the deposit's EIP-3009
    /// authorization (valid until the challenge's `expires`), then the first voucher. A retry reads the seller's
    /// challenge again, with a later `expires`, so a fresh build would sign another authorization.
    #[cfg(feature = "mpp")]
    Session,
}

impl Scenario {
    /// Every purchase this build can pay.
    pub(crate) fn all() -> Vec<Self> {
        let mut all = vec![Self::Eip3009, Self::Permit2, Self::Batch];
        #[cfg(feature = "solana")]
        all.push(Self::Solana);
        all.push(Self::Agreement);
        #[cfg(feature = "mpp")]
        all.push(Self::Session);
        all
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Eip3009 => "eip3009",
            Self::Permit2 => "permit2",
            Self::Batch => "batch",
            #[cfg(feature = "solana")]
            Self::Solana => "solana",
            Self::Agreement => "agreement",
            #[cfg(feature = "mpp")]
            Self::Session => "session",
        }
    }

    pub(crate) fn parse(text: &str) -> Self {
        Self::all().into_iter().find(|s| s.name() == text).unwrap()
    }

    pub(crate) fn pairing(self) -> &'static str {
        match self {
            Self::Eip3009 => "x402/exact/eip155/eip3009",
            Self::Permit2 => "x402/exact/eip155/permit2",
            Self::Batch => "x402/batch-settlement/eip155",
            #[cfg(feature = "solana")]
            Self::Solana => "x402/exact/solana",
            Self::Agreement => "x402/exact/eip155/erc7710",
            #[cfg(feature = "mpp")]
            Self::Session => "mpp/session/evm",
        }
    }

    /// The vector file the offer comes from; `None` for the examples' seller.
    fn file(self) -> Option<&'static str> {
        match self {
            Self::Eip3009 => Some("x402-exact-eip155-eip3009.json"),
            Self::Permit2 => Some("x402-exact-eip155-permit2.json"),
            Self::Batch => Some("x402-batch-settlement.json"),
            #[cfg(feature = "solana")]
            Self::Solana => Some("x402-exact-solana.json"),
            Self::Agreement => None,
            #[cfg(feature = "mpp")]
            Self::Session => Some("mpp-session-evm.json"),
        }
    }

    /// The file's B2 row for this pairing: the offer, the payer's account and the buyer's inputs.
    fn b2(self) -> Option<Value> {
        let file = vectors(self.file()?);
        let rows = file["buyer"]["rows"].as_array().unwrap();
        let b2 = rows.iter().find(|r| r["name"] == "B2" && r["pairing"] == self.pairing()).cloned();
        Some(b2.unwrap_or_else(|| row(&file, "B2").clone()))
    }

    /// The seller's offer; on a retry the session's challenges as the seller issues them later (`expires` a day
    /// after the first run's clock: the vector's has passed by the retry's).
    pub(crate) fn offer(self, retry: bool) -> Value {
        let mut offer = self.b2().map_or_else(seller::offer, |r| r["input"]["doc"].clone());
        if let (true, Some(challenges)) = (retry, offer.as_array_mut()) {
            for c in challenges {
                c["expires"] = json!(LATER_EXPIRES);
            }
        }
        offer
    }

    /// The terms the seller serves at the offer's link: the bytes whose hash the offer advertises.
    pub(crate) fn atr(self) -> Vec<u8> {
        match self {
            Self::Agreement => hex::decode(seller::ATR).unwrap(),
            _ => ABC.to_vec(),
        }
    }

    /// The buyer's inputs, from the B2 row: the batch opening's without `authSalt` (so its salt is drawn), the Solana
    /// transfer's with another recent blockhash on a retry (so a fresh build would sign another message).
    pub(crate) fn inputs(self, retry: bool) -> Map<String, Value> {
        let Some(b2) = self.b2() else { return Map::new() };
        let mut inputs = b2["input"]["inputs"].as_object().cloned().unwrap_or_default();
        inputs.remove("authSalt");
        if retry && inputs.contains_key("recentBlockhash") {
            inputs.insert("recentBlockhash".into(), json!(LATER_BLOCKHASH));
        }
        inputs
    }

    pub(crate) fn policy(self) -> Arc<Policy> {
        let text = match self {
            #[cfg(feature = "solana")]
            Self::Solana => SOLANA_POLICY,
            _ => EVM_POLICY,
        };
        Arc::new(Policy::from_toml_str(text).unwrap())
    }

    /// The wallet: the examples' (Anvil key #0, which is also the vector files' EVM payer) for EIP-3009, Permit2
    /// and the agreement purchase; the payer and its payer authorizer for the batch opening; the payer's ed25519
    /// seed for Solana.
    pub(crate) fn signer(self) -> Box<dyn Signer> {
        match self {
            Self::Eip3009 | Self::Permit2 | Self::Agreement => Box::new(seller::Wallet::new().unwrap()),
            #[cfg(feature = "mpp")]
            Self::Session => Box::new(seller::Wallet::new().unwrap()),
            Self::Batch => {
                let evm = &vectors("x402-batch-settlement.json")["fixed"]["evm"];
                let account = self.b2().unwrap()["input"]["account"].as_str().unwrap().to_owned();
                let key = |k: &str| Arc::new(LocalSigner::from_hex(evm[k].as_str().unwrap(), 84_532).unwrap());
                Box::new(Keys { payer: key("payerKey"), voucher: key("payerAuthorizerKey"), account })
            }
            #[cfg(feature = "solana")]
            Self::Solana => {
                let fixed = &vectors("x402-exact-solana.json")["fixed"];
                let key = terms::SolanaKey::from_seed_hex(fixed["payerSeed"].as_str().unwrap()).unwrap();
                Box::new(key.on_network(fixed["option"]["network"].as_str().unwrap()).unwrap())
            }
        }
    }

    /// Which payment of the purchase (and which step of it) a request is for, read from the request alone: in the
    /// agreement purchase the ERC-7710 request is the main payment and any other the agreement payment; in the
    /// session's opening the voucher is the payment's second step; elsewhere every request is the main payment's.
    pub(crate) fn role_of(self, request: &SigningRequest) -> &'static str {
        match (self, request) {
            (Self::Agreement, SigningRequest::Erc7710(_)) => "payment",
            (Self::Agreement, _) => "agreement",
            #[cfg(feature = "mpp")]
            (Self::Session, SigningRequest::Eip712 { typed_data }) if typed_data.primary_type == "Voucher" => {
                "payment.voucher"
            }
            _ => "payment",
        }
    }

    /// What the wallet is asked for one purchase, as [`Self::role_of`] names it: one request for each.
    pub(crate) fn asks(self) -> &'static [&'static str] {
        match self {
            Self::Agreement => &["agreement", "payment"],
            #[cfg(feature = "mpp")]
            Self::Session => &["payment", "payment.voucher"],
            _ => &["payment"],
        }
    }

    /// The payments of one purchase, as the seller's log names them.
    pub(crate) fn payments(self) -> &'static [&'static str] {
        if self == Self::Agreement { &["agreement", "payment"] } else { &["payment"] }
    }
}

/// A vector file from `tests/vectors/`.
fn vectors(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The batch opening's wallet: EIP-712 `Voucher` requests signed by the payer authorizer's key, everything else by
/// the payer's; a batch answered in order.
struct Keys {
    payer: Arc<LocalSigner>,
    voucher: Arc<LocalSigner>,
    account: String,
}

impl Keys {
    fn key_of(&self, request: &SigningRequest) -> &LocalSigner {
        match request {
            SigningRequest::Eip712 { typed_data } if typed_data.primary_type == "Voucher" => &self.voucher,
            _ => &self.payer,
        }
    }
}

impl Signer for Keys {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let SigningRequest::Batch { requests } = request else { return self.key_of(request).sign(request).await };
            let mut out = Vec::with_capacity(requests.len());
            for r in requests {
                out.push(self.key_of(r).sign(r).await?.into_json());
            }
            Ok(Answer::new(Value::Array(out)))
        })
    }
}
