//! An agreement payment the spend policy sends to a person (above its approval threshold) has no queue of its own:
//! the agent's approval of the agreement (`approved`, what `atr_agree` and `atr_pay` take) does not stand in for a
//! person's, so it declines `policy-refused`, `policy/approval-required`, before anything is signed or sent; below
//! the threshold the same call pays it. Real HTTP/1.1 servers on loopback, on tokio's paused clock.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use std::sync::Arc;

use support::world::{World, challenge, receipt};
use support::{Buyer, paused};
use terms::safety::policy::Policy;
use terms::{Agreement, DeclineCode};

/// A policy over the agreement option (1 unit of USDC on Base Sepolia) that asks a person above `above`.
fn policy(above: &str) -> Arc<Policy> {
    let usdc = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    let text = format!(
        "resources = [\"*\"]\nnetworks = [\"eip155:84532\"]\napproval_above = {{ \"eip155:84532/{usdc}\" = \"{above}\" }}\n\n\
         [[assets]]\nnetwork = \"eip155:84532\"\naddress = \"{usdc}\"\nsymbol = \"USDC\"\ndecimals = 6\ncap = \"50000\"\n"
    );
    Arc::new(Policy::from_toml_str(&text).unwrap())
}

#[test]
fn an_agreement_payment_above_the_threshold_is_never_signed_on_the_agents_approval() {
    paused().block_on(async {
        let b = Buyer::load();
        let w = World::new(vec![challenge(&b), receipt(&b)], false).await;
        let t = w.to_approve().await;
        let options = b.options().approved(t.approve.clone()).policy(policy("0"));
        let got = terms::agree(&b.a(), &w.url, &w.signer, &w.fetch, &options).await;
        let Err(d) = got else { panic!("paid above the threshold: {got:?}") };
        assert_eq!((d.code, d.detail.as_str()), (DeclineCode::PolicyRefused, "policy/approval-required"));
        assert!(d.cause.as_deref().unwrap_or_default().contains("approval_above"), "{d:?}");
        assert_eq!((w.signer.count(), w.paid().len()), (0, 0), "nothing signed, nothing sent");
        // At the threshold (1 is not above 1): paid, once.
        let options = b.options().approved(t.approve).policy(policy("1"));
        let got = terms::agree(&b.a(), &w.url, &w.signer, &w.fetch, &options).await;
        assert!(matches!(got, Ok(Agreement::Agreed { .. })), "{got:?}");
        assert_eq!((w.signer.count(), w.paid().len()), (1, 1));
    });
}
