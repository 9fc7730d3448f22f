//! Unit tests of the agreement exchange: a refused build never reaches the signer; the `Retry-After` read.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value};

use super::{build_agreement, retry_seconds};
use crate::decline::DeclineCode;
use crate::hash::{AtrHash, atr_hash};
use crate::json::Member;
use crate::pairing::{Advertised, ChooseContext, Chosen, InputSpec, Pairing, Quote, Unsigned};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest};

/// A public-proof pairing whose build refuses with its refusal: only `build` is ever called here.
#[derive(Debug)]
struct Refusing(Refusal);

static NOTHING_TO_SIGN: Refusing = Refusing(Refusal::x402(Reason::NothingToSign));
static MALFORMED: Refusing = Refusing(Refusal::x402(Reason::OptionMalformed));

impl Pairing for Refusing {
    fn id(&self) -> &'static str {
        "x402/exact/eip155/eip3009"
    }
    fn public_proof(&self) -> bool {
        true
    }
    fn read<'a>(&self, _: &'a Value) -> Result<Advertised<'a>, Refusal> {
        Err(self.0.clone())
    }
    fn choose(&self, _: &Advertised<'_>, _: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        Err(self.0.clone())
    }
    fn inputs(&self) -> &'static [InputSpec] {
        &[]
    }
    fn quote(&self, _: &Chosen) -> Result<Quote, Refusal> {
        Err(self.0.clone())
    }
    fn build<'a>(&'a self, _: &'a Chosen, _: &'a [u8], _: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        Err(self.0.clone())
    }
    fn bound(&self, _: &dyn Member, _: Option<&Value>) -> Result<AtrHash, Refusal> {
        Err(self.0.clone())
    }
}

/// Counts its calls and signs nothing.
#[derive(Default)]
struct Wallet(AtomicUsize);

impl Signer for Wallet {
    fn account(&self) -> &str {
        "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    }
    fn sign<'a>(&'a self, _: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(SignerError::new("never asked")) })
    }
}

/// The agreement must be a signed payment: a build with nothing to sign declines with the reference's sentence,
/// any other build refusal with its code, and the signer is never called.
#[tokio::test]
async fn an_agreement_build_refused_is_declined_before_the_signer() {
    let h = atr_hash(b"abc");
    let chosen = Chosen {
        pairing: "x402/exact/eip155/eip3009".into(),
        build_input: Map::new(),
        reference: "r".into(),
        agreement: None,
    };
    let cases: [(&'static Refusing, &str); 2] =
        [(&NOTHING_TO_SIGN, "The agreement payment gave nothing to sign."), (&MALFORMED, "x402/option-malformed")];
    for (pairing, detail) in cases {
        let wallet = Wallet::default();
        let declined = build_agreement(pairing, &chosen, b"abc", &h).err().unwrap();
        assert_eq!((declined.code, declined.detail.as_str()), (DeclineCode::OfferUnreadable, detail));
        assert!(declined.moved.is_none());
        assert_eq!(wallet.0.load(Ordering::SeqCst), 0, "nothing is signed");
    }
}

#[test]
fn retry_after_is_one_to_nine_digits() {
    assert_eq!(retry_seconds(Some("2")), 2);
    assert_eq!(retry_seconds(Some(" 5\t")), 5);
    assert_eq!(retry_seconds(Some("0")), 1);
    assert_eq!(retry_seconds(Some("-1")), 2);
    assert_eq!(retry_seconds(Some("1.5")), 2);
    assert_eq!(retry_seconds(Some("Wed, 21 Oct 2015 07:28:00 GMT")), 2);
    assert_eq!(retry_seconds(Some("1234567890")), 2);
    assert_eq!(retry_seconds(Some("999999999")), 999_999_999);
    assert_eq!(retry_seconds(None), 2);
}
