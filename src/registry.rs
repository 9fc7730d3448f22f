//! All 67 pairings the Legal Context Protocol defines, with the flags the gate needs, and the ones this build
//! implements.

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::{Map, Value};

use crate::decline::{DeclineCode, Declined};
use crate::pairing::{Advertised, ChooseContext, Offer, Pairing};
use crate::refusal::{Reason, Refusal};

/// The protocol a pairing belongs to: the namespace of its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// x402 v2.
    X402,
    /// The Machine Payments Protocol.
    Mpp,
    /// Card networks.
    Card,
    /// The Agentic Commerce Protocol.
    Acp,
    /// Agent Payments Protocol mandates.
    Ap2,
    /// The Universal Commerce Protocol.
    Ucp,
    /// The Agent Commerce Kit.
    Ack,
}

impl Protocol {
    /// The namespace, e.g. `x402`.
    pub const fn namespace(self) -> &'static str {
        match self {
            Self::X402 => "x402",
            Self::Mpp => "mpp",
            Self::Card => "card",
            Self::Acp => "acp",
            Self::Ap2 => "ap2",
            Self::Ucp => "ucp",
            Self::Ack => "ack",
        }
    }
}

/// One pairing of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The id.
    pub id: &'static str,
    /// Its protocol.
    pub protocol: Protocol,
    /// Whether its signed payment is itself a public proof of H (otherwise an agreement payment comes first).
    pub public_proof: bool,
    /// Whether it opens a channel the buyer holds (`open_channel`, `within`, `record_charge`).
    pub channel: bool,
}

impl Entry {
    /// The implementation, when this build has the pairing's family.
    pub fn pairing(&self) -> Option<&'static dyn Pairing> {
        implementation(self.id)
    }
}

const fn e(id: &'static str, protocol: Protocol, public_proof: bool, channel: bool) -> Entry {
    Entry { id, protocol, public_proof, channel }
}

use Protocol::{Ack, Acp, Ap2, Card, Mpp, Ucp, X402};

/// The 67 pairings, x402 first in the protocol package's order (the order the agreement exchange tries them in).
pub static REGISTRY: [Entry; 67] = [
    e("x402/exact/eip155/eip3009", X402, true, false),
    e("x402/auth-capture/eip155/eip3009", X402, true, false),
    e("x402/auth-capture/eip155/permit2", X402, true, false),
    e("x402/batch-settlement/cloudflare", X402, false, false),
    e("x402/batch-settlement/eip155", X402, true, true),
    e("x402/batch-settlement/solana", X402, true, true),
    e("x402/exact/algorand", X402, true, false),
    e("x402/exact/aptos", X402, false, false),
    e("x402/exact/cardano", X402, true, false),
    e("x402/exact/casper", X402, true, false),
    e("x402/exact/ccd", X402, true, false),
    e("x402/exact/eip155/erc7710", X402, false, false),
    e("x402/exact/eip155/erc7710-salt", X402, true, false),
    e("x402/exact/eip155/permit2", X402, true, false),
    e("x402/exact/hedera", X402, true, false),
    e("x402/exact/hedera/transfer-executor", X402, false, false),
    e("x402/exact/lnbtc", X402, false, false),
    e("x402/exact/lnbtc/invoice-named", X402, false, false),
    e("x402/exact/near", X402, true, false),
    e("x402/exact/polkadot/lcp-assets-remark", X402, true, false),
    e("x402/exact/solana", X402, true, false),
    e("x402/exact/starknet", X402, true, false),
    e("x402/exact/stellar", X402, true, false),
    e("x402/exact/sui", X402, true, false),
    e("x402/exact/tron/lcp-trc20-memo", X402, true, false),
    e("x402/exact/tvm", X402, true, false),
    e("x402/exact/xrpl", X402, true, false),
    e("x402/upto/eip155/permit2", X402, true, false),
    e("x402/upto/solana", X402, true, false),
    e("mpp/charge/card", Mpp, false, false),
    e("mpp/charge/evm/authorization", Mpp, true, false),
    e("mpp/charge/evm/hash", Mpp, false, false),
    e("mpp/charge/evm/permit2", Mpp, true, false),
    e("mpp/charge/evm/transaction", Mpp, false, false),
    e("mpp/charge/hedera", Mpp, true, false),
    e("mpp/charge/lightning", Mpp, false, false),
    e("mpp/charge/nearintents", Mpp, false, false),
    e("mpp/charge/solana", Mpp, true, false),
    e("mpp/charge/stellar", Mpp, true, false),
    e("mpp/charge/stripe", Mpp, false, false),
    e("mpp/charge/tempo/memo", Mpp, true, false),
    e("mpp/charge/tempo/push", Mpp, true, false),
    e("mpp/charge/usdc/evm", Mpp, true, false),
    e("mpp/charge/usdc/gateway", Mpp, true, false),
    e("mpp/charge/usdc/solana", Mpp, true, false),
    e("mpp/charge/usdc/stacks", Mpp, true, false),
    e("mpp/charge/xrpl", Mpp, true, false),
    e("mpp/session/evm", Mpp, true, true),
    e("mpp/session/hedera", Mpp, true, true),
    e("mpp/session/lightning", Mpp, false, false),
    e("mpp/session/solana", Mpp, true, true),
    e("mpp/session/tempo", Mpp, true, true),
    e("mpp/session/xrpl", Mpp, true, true),
    e("mpp/subscription/stripe", Mpp, false, false),
    e("mpp/subscription/tempo", Mpp, true, true),
    e("card/mastercard-vi/autonomous", Card, false, false),
    e("card/mastercard-vi/immediate", Card, false, false),
    e("card/seller-reference", Card, false, false),
    e("card/visa-tap", Card, false, false),
    e("acp/checkout/delegated", Acp, false, false),
    e("acp/checkout/undelegated", Acp, false, false),
    e("ap2/checkout-mandate", Ap2, false, false),
    e("ucp/booking/ap2-mandate", Ucp, false, false),
    e("ucp/booking/unsigned", Ucp, false, false),
    e("ucp/checkout/ap2-mandate", Ucp, false, false),
    e("ucp/checkout/unsigned", Ucp, false, false),
    e("ack/payment-request", Ack, false, false),
];

/// The implementation of a pairing this build has. Each family adds its ids here, behind its features: a protocol's
/// pairing on a rail under `all(feature = "<protocol>", feature = "<rail>")`, one with no chain under the protocol's.
fn implementation(id: &str) -> Option<&'static dyn Pairing> {
    match id {
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::eip3009::ID => Some(&crate::x402::evm::eip3009::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::batch_settlement::ID => Some(&crate::x402::evm::batch_settlement::PAIRING),
        #[cfg(feature = "x402")]
        crate::x402::cloudflare::ID => Some(&crate::x402::cloudflare::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::auth_capture_eip3009::ID => Some(&crate::x402::evm::auth_capture_eip3009::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::auth_capture_permit2::ID => Some(&crate::x402::evm::auth_capture_permit2::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::erc7710::ID => Some(&crate::x402::evm::erc7710::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::erc7710_salt::ID => Some(&crate::x402::evm::erc7710_salt::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::exact_permit2::ID => Some(&crate::x402::evm::exact_permit2::PAIRING),
        #[cfg(all(feature = "x402", feature = "evm"))]
        crate::x402::evm::upto_permit2::ID => Some(&crate::x402::evm::upto_permit2::PAIRING),
        #[cfg(all(feature = "x402", feature = "solana"))]
        crate::x402::solana::exact::ID => Some(&crate::x402::solana::exact::PAIRING),
        #[cfg(all(feature = "x402", feature = "solana"))]
        crate::x402::solana::upto::ID => Some(&crate::x402::solana::upto::PAIRING),
        #[cfg(all(feature = "x402", feature = "solana"))]
        crate::x402::solana::batch::ID => Some(&crate::x402::solana::batch::PAIRING),
        #[cfg(all(feature = "x402", feature = "stellar"))]
        crate::x402::stellar::ID => Some(&crate::x402::stellar::PAIRING),
        #[cfg(all(feature = "mpp", feature = "stellar"))]
        crate::mpp::stellar::ID => Some(&crate::mpp::stellar::PAIRING),
        #[cfg(all(feature = "x402", feature = "xrpl"))]
        crate::x402::xrpl::ID => Some(&crate::x402::xrpl::PAIRING),
        #[cfg(all(feature = "x402", feature = "lightning"))]
        crate::x402::lightning::LNBTC => Some(&crate::x402::lightning::LNBTC_PAIRING),
        #[cfg(all(feature = "x402", feature = "lightning"))]
        crate::x402::lightning::NAMED => Some(&crate::x402::lightning::NAMED_PAIRING),
        #[cfg(all(feature = "mpp", feature = "lightning"))]
        crate::mpp::lightning::CHARGE => Some(&crate::mpp::lightning::CHARGE_PAIRING),
        #[cfg(all(feature = "mpp", feature = "lightning"))]
        crate::mpp::lightning::SESSION => Some(&crate::mpp::lightning::SESSION_PAIRING),
        #[cfg(feature = "mpp")]
        crate::mpp::card::ID => Some(&crate::mpp::card::PAIRING),
        #[cfg(feature = "mpp")]
        crate::mpp::nearintents::ID => Some(&crate::mpp::nearintents::PAIRING),
        #[cfg(feature = "mpp")]
        crate::mpp::stripe::CHARGE_ID => Some(&crate::mpp::stripe::CHARGE),
        #[cfg(feature = "mpp")]
        crate::mpp::stripe::SUBSCRIPTION_ID => Some(&crate::mpp::stripe::SUBSCRIPTION),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::authorization::ID => Some(&crate::mpp::evm::authorization::PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::permit2::ID => Some(&crate::mpp::evm::permit2::PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::call::TRANSACTION => Some(&crate::mpp::evm::call::TRANSACTION_PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::call::HASH => Some(&crate::mpp::evm::call::HASH_PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::usdc::EVM => Some(&crate::mpp::evm::usdc::EVM_PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::usdc::GATEWAY => Some(&crate::mpp::evm::usdc::GATEWAY_PAIRING),
        #[cfg(all(feature = "mpp", feature = "evm"))]
        crate::mpp::evm::session::ID => Some(&crate::mpp::evm::session::PAIRING),
        #[cfg(all(feature = "mpp", feature = "solana"))]
        crate::mpp::solana::SOLANA => Some(&crate::mpp::solana::SOLANA_PAIRING),
        #[cfg(all(feature = "mpp", feature = "solana"))]
        crate::mpp::solana::USDC_SOLANA => Some(&crate::mpp::solana::USDC_SOLANA_PAIRING),
        #[cfg(all(feature = "mpp", feature = "solana"))]
        crate::mpp::solana::session::ID => Some(&crate::mpp::solana::session::PAIRING),
        #[cfg(all(feature = "mpp", feature = "xrpl"))]
        crate::mpp::xrpl::CHARGE => Some(&crate::mpp::xrpl::CHARGE_PAIRING),
        #[cfg(all(feature = "mpp", feature = "xrpl"))]
        crate::mpp::xrpl::session::ID => Some(&crate::mpp::xrpl::session::PAIRING),
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        crate::mpp::tempo::memo::MEMO => Some(&crate::mpp::tempo::memo::PAIRING),
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        crate::mpp::tempo::push::PUSH => Some(&crate::mpp::tempo::push::PAIRING),
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        crate::mpp::tempo::subscription::ID => Some(&crate::mpp::tempo::subscription::PAIRING),
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        crate::mpp::tempo::session::ID => Some(&crate::mpp::tempo::session::PAIRING),
        #[cfg(feature = "card")]
        crate::card::VISA_TAP => Some(&crate::card::VISA_TAP_PAIRING),
        #[cfg(feature = "card")]
        crate::card::VI_IMMEDIATE => Some(&crate::card::VI_IMMEDIATE_PAIRING),
        #[cfg(feature = "card")]
        crate::card::VI_AUTONOMOUS => Some(&crate::card::VI_AUTONOMOUS_PAIRING),
        #[cfg(feature = "card")]
        crate::card::SELLER_REFERENCE => Some(&crate::card::SELLER_REFERENCE_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::ACP_DELEGATED => Some(&crate::checkout::ACP_DELEGATED_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::ACP_UNDELEGATED => Some(&crate::checkout::ACP_UNDELEGATED_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::AP2 => Some(&crate::checkout::AP2_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::BOOKING_AP2 => Some(&crate::checkout::BOOKING_AP2_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::BOOKING_UNSIGNED => Some(&crate::checkout::BOOKING_UNSIGNED_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::CHECKOUT_AP2 => Some(&crate::checkout::CHECKOUT_AP2_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::CHECKOUT_UNSIGNED => Some(&crate::checkout::CHECKOUT_UNSIGNED_PAIRING),
        #[cfg(feature = "checkout")]
        crate::checkout::ACK => Some(&crate::checkout::ACK_PAIRING),
        _ => None,
    }
}

/// The registry entry for an id.
pub fn entry(id: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.id == id)
}

/// The pairing for an id, or `pairing-not-supported` when the id is not one of the 67 or its family is not in this
/// build.
pub fn pairing(id: &str) -> Result<&'static dyn Pairing, Declined> {
    entry(id).and_then(Entry::pairing).ok_or_else(|| {
        Declined::new(DeclineCode::PairingNotSupported, format!("The gate has no buyer piece for the pairing {id}."))
    })
}

/// The ids this build implements, in registry order.
pub fn built_ids() -> Vec<&'static str> {
    REGISTRY.iter().filter(|e| e.pairing().is_some()).map(|e| e.id).collect()
}

/// The x402 pairings this build implements, in the order the agreement exchange tries them.
pub fn x402_pairings() -> impl Iterator<Item = &'static dyn Pairing> {
    REGISTRY.iter().filter(|e| e.protocol == Protocol::X402).filter_map(Entry::pairing)
}

/// The pairing that pays this offer from this account: the first built pairing, in registry order, whose read of the
/// seller's document serves an option on the account's network. An x402 `PAYMENT-REQUIRED` document names its
/// options by scheme, network and `extra`, and each option belongs to exactly one pairing, so this is the pairing
/// [`confirm`](crate::confirm) should be handed. Where two pairings serve the same option (ERC-7710's unsigned level
/// and its salt level read the same `erc7710` option), the first in registry order is named: a buyer whose wallet
/// signs salted delegations asks for `x402/exact/eip155/erc7710-salt` by id.
///
/// An MPP challenge list names its networks in each method's own way (and card and Stripe name none): there the
/// pairing is the first whose own choice takes a challenge of the list for the account, with no time (so no challenge
/// has expired). Card and Stripe challenges are paid from any account. A card offer (the seller's shown JSON, or a
/// Verifiable Intent `checkout_jwt`) names no network either: there the pairing is the first card pairing whose read
/// and choice take it, for any CAIP-10 account. A TAP offer and a plain card checkout are the same document, as are
/// the two Verifiable Intent modes' checkouts, so the first in registry order is named; a buyer whose agent signs TAP
/// fields, or who pays in the Immediate mode, asks for `card/visa-tap` or `card/mastercard-vi/immediate` by id. A
/// checkout offer is read the same way: an ACP, AP2 or UCP checkout is paid from any CAIP-10 account (the seller's
/// processor charges off chain), an ACK Payment Request by a payment option on the account's network; an ACP session
/// goes to `acp/checkout/undelegated` unless the buyer asks for `acp/checkout/delegated` by id (with its inputs).
///
/// A pairing whose choice is refused only for want of the buyer's inputs (a Stellar pairing's simulated envelope) is
/// named all the same: the gate checks the inputs the caller hands it.
///
/// Ours, not the reference's (it takes the pairing id from the caller): it declines `no-payable-option` with its own
/// detail, and the networks offered as the cause; except that an x402 document no pairing reads because its terms
/// link is not https declines as the gate's read of it does, `offer-unreadable` with `x402/link-not-https`.
pub fn pairing_for(doc: &Value, account: &str) -> Result<&'static dyn Pairing, Declined> {
    // The CAIP-2 part of the account, as written: a pairing's own namespace may be longer than CAIP-2 allows
    // (`cloudflare:402`), and the pairing's choose checks the rest.
    let mut parts = account.splitn(3, ':');
    let network = match (parts.next(), parts.next(), parts.next()) {
        (Some(ns), Some(reference), Some(_)) => Some(format!("{ns}:{reference}")),
        _ => None,
    };
    let mut offered: Vec<String> = Vec::new();
    // An x402 document whose terms link is not https is refused by every x402 pairing's read alike: kept, so the
    // decline is what the gate's own read says (`offer-unreadable`, `x402/link-not-https`), not "no network".
    let mut link_refused: Option<Refusal> = None;
    for pairing in REGISTRY.iter().filter_map(Entry::pairing) {
        // A pairing's read is guarded as the gate guards it: one family's panic never takes the caller down.
        let read = match catch_unwind(AssertUnwindSafe(|| pairing.read(doc))) {
            Ok(Ok(read)) => read,
            Ok(Err(refusal)) => {
                if refusal.reason() == Reason::LinkNotHttps && link_refused.is_none() {
                    link_refused = Some(refusal);
                }
                continue;
            }
            Err(_) => continue,
        };
        if let Offer::Challenges(challenges) = &read.offer {
            if chooses(pairing, &read, doc, account) {
                return Ok(pairing);
            }
            for n in challenges.iter().filter_map(|c| challenge_network(c)) {
                if !offered.contains(&n) {
                    offered.push(n);
                }
            }
            continue;
        }
        if let Offer::Json(_) = &read.offer {
            if chooses(pairing, &read, doc, account) {
                return Ok(pairing);
            }
            continue;
        }
        let networks = read.offer.networks();
        if network.as_deref().is_some_and(|n| networks.contains(&n)) {
            return Ok(pairing);
        }
        for n in networks {
            if !offered.iter().any(|o| o == n) {
                offered.push(n.to_owned());
            }
        }
    }
    if let (Some(refusal), true) = (link_refused, offered.is_empty()) {
        return Err(Declined::new(DeclineCode::OfferUnreadable, refusal.code())
            .with_cause("the offer's terms link is not an https link: the terms are fetched over https only"));
    }
    Err(Declined::new(
        DeclineCode::NoPayableOption,
        "No pairing of this build pays an option of the offer on the account's network.",
    )
    .with_cause(format!("the account {account} is not on any network offered: [{}]", offered.join(", "))))
}

/// Whether the pairing's own choice takes an option of its read for the account, with no inputs and no time
/// (guarded as the gate guards it).
fn chooses(pairing: &dyn Pairing, read: &Advertised<'_>, doc: &Value, account: &str) -> bool {
    let inputs = Map::new();
    let ctx = ChooseContext { account, inputs: &inputs, now: 0, reference: "", doc };
    // A choice refused only for the buyer's inputs (none are given here) is the pairing's all the same: the gate
    // checks the inputs the caller then hands it, and declines `input-missing` as the reference does.
    match catch_unwind(AssertUnwindSafe(|| pairing.choose(read, &ctx))) {
        Ok(Ok(_)) => true,
        Ok(Err(r)) => r.reason() == Reason::InputMissing,
        Err(_) => false,
    }
}

/// The CAIP-2 network an MPP challenge pays on, where its method names one.
fn challenge_network(challenge: &Value) -> Option<String> {
    #[cfg(feature = "mpp")]
    return crate::mpp::network(challenge).ok();
    #[cfg(not(feature = "mpp"))]
    {
        let _ = challenge;
        None
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn built() -> impl Iterator<Item = &'static dyn Pairing> {
        REGISTRY.iter().filter_map(Entry::pairing)
    }

    /// A built pairing has the channel members exactly when its entry says it opens a channel the buyer holds.
    #[test]
    fn every_built_pairings_channel_is_its_entrys() {
        for entry in REGISTRY.iter().filter(|e| e.pairing().is_some()) {
            let pairing = entry.pairing().map(|p| p.channel().is_some());
            assert_eq!(pairing, Some(entry.channel), "{}", entry.id);
        }
    }

    /// Each built pairing names an input once, with a one-line meaning; an input two pairings take is the same input
    /// (type and form), so the MCP schema's union of them is well defined.
    #[test]
    fn every_built_pairings_inputs_are_named_once_and_agree_across_pairings() {
        let mut seen = Vec::new();
        for pairing in built() {
            let names: HashSet<&str> = pairing.inputs().iter().map(|s| s.name).collect();
            assert_eq!(names.len(), pairing.inputs().len(), "{} names an input twice", pairing.id());
            for spec in pairing.inputs() {
                assert!(!spec.name.is_empty() && !spec.meaning.is_empty() && !spec.meaning.contains('\n'));
                if let Some(other) = seen.iter().find(|o: &&crate::pairing::InputSpec| o.name == spec.name) {
                    // The batch openings' payerAuthorizer is an address of each rail (EVM hex, Solana base58): the
                    // MCP schema's merged property names no form where the takers disagree.
                    let rail_form = spec.name == "payerAuthorizer";
                    assert!(rail_form || other.format == spec.format, "{}", spec.name);
                    assert_eq!(other.ty, spec.ty, "{}", spec.name);
                }
                seen.push(*spec);
            }
        }
        // The pairings that take inputs: the batch-settlement opening, MPP's EVM charges that need what the challenge
        // does not name (the token's domain, the Permit2 spender, the account nonce), and the MPP EVM session.
        let takers: Vec<&str> = built().filter(|p| !p.inputs().is_empty()).map(|p| p.id()).collect();
        let mut want: Vec<&str> = Vec::new();
        #[cfg(all(feature = "x402", feature = "evm"))]
        want.push("x402/batch-settlement/eip155");
        #[cfg(all(feature = "mpp", feature = "evm"))]
        want.extend([
            "mpp/charge/evm/authorization",
            "mpp/charge/evm/permit2",
            "mpp/charge/evm/transaction",
            "mpp/charge/usdc/evm",
            "mpp/session/evm",
        ]);
        #[cfg(all(feature = "x402", feature = "solana"))]
        want.extend(["x402/batch-settlement/solana", "x402/exact/solana", "x402/upto/solana"]);
        // MPP's Solana charges: the mint's decimals and token program, a blockhash, the compute budget; its Solana
        // session: the deposit.
        #[cfg(all(feature = "mpp", feature = "solana"))]
        want.extend(["mpp/charge/solana", "mpp/charge/usdc/solana", "mpp/session/solana"]);
        // The Tempo charges: the client id their attribution memo names.
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        want.extend(["mpp/charge/tempo/memo", "mpp/charge/tempo/push"]);
        // The Tempo session: its deposit and authorized signer.
        #[cfg(all(feature = "mpp", feature = "tempo"))]
        want.push("mpp/session/tempo");
        // x402's Lightning pairings: the buyer's own request, whose hash the invoice's description hash is; MPP's
        // Lightning session: the return invoice.
        #[cfg(all(feature = "x402", feature = "lightning"))]
        want.extend(["x402/exact/lnbtc", "x402/exact/lnbtc/invoice-named"]);
        #[cfg(all(feature = "mpp", feature = "lightning"))]
        want.push("mpp/session/lightning");
        // The Stellar pairings: the wallet's simulated envelope and the current ledger.
        #[cfg(all(feature = "x402", feature = "stellar"))]
        want.push("x402/exact/stellar");
        #[cfg(all(feature = "mpp", feature = "stellar"))]
        want.push("mpp/charge/stellar");
        // ACP's delegated checkout: the allowance's values (max_amount, currency, merchant_id, expires_at).
        #[cfg(feature = "checkout")]
        want.push("acp/checkout/delegated");
        // The XRPL pairings: the buyer's fee, sequence and last ledger.
        #[cfg(all(feature = "x402", feature = "xrpl"))]
        want.push("x402/exact/xrpl");
        #[cfg(all(feature = "mpp", feature = "xrpl"))]
        want.extend(["mpp/charge/xrpl", "mpp/session/xrpl"]);
        want.sort_by_key(|id| REGISTRY.iter().position(|e| e.id == *id));
        assert_eq!(takers, want);
    }
}
