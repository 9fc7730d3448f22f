//! `mpp/charge/usdc/evm` and `mpp/charge/usdc/gateway`, Circle's `usdc` method on its EVM and Gateway profiles. On
//! EVM the payer signs an EIP-3009 authorization whose nonce is the `usdc` derivation over the challenge id (which
//! carries H), its realm and the request's hash; on Gateway a burn intent whose TransferSpec salt is the `usdc`
//! derivation over the same values and the Gateway client's own.

use std::borrow::Cow;

use alloy_primitives::B256;
use serde_json::{Map, Value};

use super::authorization::TOKEN_DOMAIN;
use super::{Charge, eip3009_charge, is_signature, of_type, signed_nonce, text};
use crate::codec::{b64u_decode, to_hex};
use crate::hash::AtrHash;
use crate::json::Member;
use crate::mpp::challenge::{Checked, shape};
use crate::mpp::credential::{Credential, echoed_for};
use crate::mpp::methods::{USDC_CHARGE, usdc_profile};
use crate::mpp::pieces::{Payer, Piece};
use crate::mpp::values::{B64Json, decimal_of, positive_int};
use crate::pairing::{Chosen, Completion, Quote, Unsigned};
use crate::rail::evm::charge::{usdc_nonce, usdc_request_hash};
use crate::rail::evm::gateway::{FORMAT, SaltInput, account_of, amount_of, gateway_salt};
use crate::rail::evm::request::GatewayPreimage;
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, SigningRequest};

/// The EVM profile's id.
pub(crate) const EVM: &str = "mpp/charge/usdc/evm";
/// The Gateway profile's id.
pub(crate) const GATEWAY: &str = "mpp/charge/usdc/gateway";

/// The EVM profile's pairing.
pub(crate) static EVM_PAIRING: Charge =
    Charge::new(Piece::evm(EVM, &USDC_CHARGE, &[TOKEN_DOMAIN]), true, evm_build, evm_bound);

/// The Gateway profile's piece: the first challenge offering the pairing that accepts the account's network as a
/// Gateway source (any namespace, as the reference's), the choice `{challenge, from, now}`.
const GATEWAY_PIECE: Piece = Piece {
    pairing: GATEWAY,
    method: &USDC_CHARGE,
    payer: Payer::Account { namespace: None, address: any_address, field: Some("from"), on: accepts_source },
    inputs: &[],
    now: true,
};

/// The Gateway profile's pairing.
pub(crate) static GATEWAY_PAIRING: Charge =
    Charge::new(GATEWAY_PIECE, true, gateway_build, gateway_bound).with_quote(gateway_quote);

fn any_address(address: &str) -> bool {
    !address.is_empty()
}

/// Whether the challenge's `methodDetails.gateway.acceptedSources` lists the network, and this build reads back the
/// accounts of a burn from it to the challenge's `destinationNetwork` ([`reads_accounts_on`]): a wallet is never asked
/// to sign a burn intent the bound cannot read (the reference's choice takes the challenge and its bound then refuses
/// the signed burn where it cannot read an account).
fn accepts_source(challenge: &Value, network: &str) -> bool {
    let request = shape(challenge).and_then(|c| B64Json::new(crate::mpp::challenge::text(c, "request")).object());
    let gateway = request.as_ref().and_then(|r| r.member("methodDetails")).and_then(|d| d.member("gateway"));
    let listed = gateway
        .and_then(|g| g.member("acceptedSources"))
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|n| n.as_str() == Some(network)));
    let destination = gateway.and_then(|g| g.member("destinationNetwork")).and_then(Value::as_str);
    listed && reads_accounts_on(network) && destination.is_some_and(reads_accounts_on)
}

/// Whether this build reads a TransferSpec account word on `network` ([`gateway_account`]): on `eip155:`, and on
/// `solana:` where the crate is built with the `solana` feature.
fn reads_accounts_on(network: &str) -> bool {
    network.starts_with("eip155:") || (cfg!(feature = "solana") && network.starts_with("solana:"))
}

/// The CAIP-10 account of a TransferSpec word on `network`, as the reference reads it: on `eip155:` the EVM rail's
/// ([`account_of`]); on `solana:` the base58 of the word's 32 bytes (the Solana rail's address form, with the
/// `solana` feature); `None` elsewhere.
fn gateway_account(network: &str, word: &str) -> Option<String> {
    if network.starts_with("solana:") {
        return solana_account(network, word);
    }
    account_of(network, word)
}

#[cfg(feature = "solana")]
fn solana_account(network: &str, word: &str) -> Option<String> {
    let bytes: [u8; 32] = crate::codec::hex_bytes(word)?.try_into().ok()?;
    Some(format!("{network}:{}", crate::rail::solana::Key(bytes)))
}

#[cfg(not(feature = "solana"))]
fn solana_account(_network: &str, _word: &str) -> Option<String> {
    None
}

/// keccak256 of the request bytes as received: the filter has refused a request not in its RFC 8785 form.
fn request_hash(c: &Checked<'_>) -> Result<B256, Refusal> {
    let bytes = b64u_decode(c.raw_request().raw()).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    Ok(usdc_request_hash(&bytes))
}

/// The chain of the EVM profile: its positive `chainId`.
fn evm_chain(c: &Checked<'_>) -> Result<u64, Refusal> {
    let (_, profile) = usdc_profile(c.details())?;
    positive_int(profile.member("chainId")).ok_or(Refusal::mpp(Reason::RequestMalformed))
}

/// The EIP-3009 authorization of the request's amount to its recipient, valid until `expires`, its nonce the
/// `usdc` derivation over the challenge id, realm and request hash.
fn evm_build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let chain = evm_chain(&held.checked)?;
    let rh = request_hash(&held.checked)?;
    let nonce = usdc_nonce(held.checked.text("id"), held.checked.text("realm"), &rh);
    eip3009_charge(held, chain, &nonce)
}

/// H from the echoed challenge, once the signed nonce is the `usdc` derivation over it
/// (`mpp/nonce-not-usdc-derivation`).
fn evm_bound(piece: &Piece, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let e = echoed_for(presented, piece.pairing, &USDC_CHARGE)?;
    let nonce = signed_nonce(&e, evm_chain(&e.checked)?)?;
    let rh = request_hash(&e.checked)?;
    if nonce != usdc_nonce(e.checked.text("id"), e.checked.text("realm"), &rh) {
        return Err(Refusal::mpp(Reason::NonceNotUsdcDerivation));
    }
    Ok(e.h)
}

/// The Gateway quote: the request's amount of its currency (`usdc`) to its recipient, on the destination network
/// (where the recipient is paid), valid before `expires`.
fn gateway_quote(held: &crate::mpp::pieces::Held<'_>) -> Result<Quote, Refusal> {
    let c = &held.checked;
    let r = c.request();
    let amount = decimal_of(r.member("amount")).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let (_, profile) = usdc_profile(c.details())?;
    let network = text(profile, "destinationNetwork");
    if network.is_empty() {
        return Err(Refusal::mpp(Reason::NetworkUnnamed));
    }
    let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
    Ok(Quote::new(amount, text(r, "currency"), text(r, "recipient"), network, c.text("intent"))
        .with_window(None, valid_before))
}

/// The `gateway-burn-intent` request: the charge's values of the salt's preimage. The Gateway client answers
/// `{source, sourceNetwork, destinationNetwork, maxFee, burnIntent, signature}`.
///
/// A `destinationNetwork` on which this build cannot read the recipient's account back ([`reads_accounts_on`]) is
/// `mpp/gateway-unread` here, before the wallet is asked, where the reference's bound refuses the signed burn (a
/// choice made elsewhere does not pass through this crate's choose).
fn gateway_build<'a>(piece: &Piece, chosen: &'a Chosen, h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
    let held = piece.offer(chosen, h)?;
    let c = &held.checked;
    let (_, profile) = usdc_profile(c.details())?;
    if !reads_accounts_on(text(profile, "destinationNetwork")) {
        return Err(Refusal::mpp(Reason::GatewayUnread));
    }
    let preimage = GatewayPreimage {
        id: c.text("id").to_owned(),
        realm: c.text("realm").to_owned(),
        request_hash: to_hex(request_hash(c)?.as_slice()),
        recipient: text(c.request(), "recipient").to_owned(),
    };
    Ok(Box::new(GatewayUnsigned { request: SigningRequest::GatewayBurnIntent { preimage }, echo: held.echo }))
}

/// The Gateway build: the request and the challenge the credential echoes.
struct GatewayUnsigned<'a> {
    request: SigningRequest,
    echo: Cow<'a, Value>,
}

impl Unsigned for GatewayUnsigned<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The credential from the client's answer: an object whose `burnIntent` is an object, `signature` 1 to 8192
    /// bytes of hex, and `source`, `sourceNetwork`, `destinationNetwork`, `maxFee` non-empty strings
    /// (`mpp/credential-malformed` otherwise); the payload `{type: "transfer", sourceNetwork, destinationNetwork,
    /// maxFee, authorization: {format, transfer: {burnIntent, signature}}}`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let malformed = || Refusal::mpp(Reason::CredentialMalformed);
        let a = answers.first().map(Answer::as_json).and_then(Value::as_object).ok_or_else(malformed)?;
        let intent = a.member("burnIntent").filter(|b| b.is_object()).ok_or_else(malformed)?;
        let signature = a.member("signature").and_then(Value::as_str).filter(|s| is_signature(s));
        let signature = signature.ok_or_else(malformed)?;
        let field = |k: &str| a.member(k).and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or_else(malformed);
        let (source, source_network) = (field("source")?, field("sourceNetwork")?);
        let (destination_network, max_fee) = (field("destinationNetwork")?, field("maxFee")?);
        let mut transfer = Map::with_capacity(2);
        transfer.insert("burnIntent".into(), intent.clone());
        transfer.insert("signature".into(), signature.into());
        let mut authorization = Map::with_capacity(2);
        authorization.insert("format".into(), FORMAT.into());
        authorization.insert("transfer".into(), Value::Object(transfer));
        let mut payload = Map::with_capacity(5);
        payload.insert("type".into(), "transfer".into());
        payload.insert("sourceNetwork".into(), source_network.into());
        payload.insert("destinationNetwork".into(), destination_network.into());
        payload.insert("maxFee".into(), max_fee.into());
        payload.insert("authorization".into(), Value::Object(authorization));
        let echo = Cow::Borrowed(&*self.echo);
        Ok(Credential::new(echo, Some(source.to_owned()), Value::Object(payload))?.completion())
    }
}

/// H from the echoed challenge, once the signed burn intent's salt is the `usdc` Gateway derivation over the
/// challenge and the credential's own values (`mpp/salt-not-usdc-derivation`); a burn intent it cannot read is
/// `mpp/gateway-unread`. No signature is verified and no value compared, as in the reference.
fn gateway_bound(piece: &Piece, presented: &dyn Member) -> Result<AtrHash, Refusal> {
    let e = echoed_for(presented, piece.pairing, &USDC_CHARGE)?;
    of_type(&e, "transfer")?;
    let p = e.payload;
    let string = |k: &str| p.member(k).and_then(Value::as_str);
    let (Some(source), Some(source_network), Some(destination_network)) =
        (e.source, string("sourceNetwork"), string("destinationNetwork"))
    else {
        return Err(Refusal::mpp(Reason::CredentialMalformed));
    };
    let unread = || Refusal::mpp(Reason::GatewayUnread);
    let a = p.member("authorization").and_then(Value::as_object).ok_or_else(unread)?;
    if a.member("format").is_some_and(|f| f.as_str() != Some(FORMAT)) {
        return Err(unread());
    }
    let transfer = a.member("transfer").and_then(Value::as_object).ok_or_else(unread)?;
    if transfer.member("burnIntentSet").is_some() || !transfer.member("signature").is_some_and(Value::is_string) {
        return Err(unread());
    }
    let intent = transfer.member("burnIntent").and_then(Value::as_object).ok_or_else(unread)?;
    let spec = intent.member("spec").and_then(Value::as_object).ok_or_else(unread)?;
    let salt = spec.member("salt").and_then(Value::as_str).and_then(|s| super::hash_in(Some(&Value::from(s))));
    let word = |k: &str| spec.member(k).and_then(Value::as_str).unwrap_or_default();
    let (Some(salt), Some(amount), Some(max_fee), Some(source_signer), Some(destination_recipient)) = (
        salt,
        spec.member("value").and_then(amount_of),
        intent.member("maxFee").and_then(amount_of),
        gateway_account(source_network, word("sourceSigner")),
        gateway_account(destination_network, word("destinationRecipient")),
    ) else {
        return Err(unread());
    };
    let rh = request_hash(&e.checked)?;
    let recipient = e.checked.request().member("recipient").and_then(Value::as_str);
    let recipient = recipient.ok_or(Refusal::mpp(Reason::RequestMalformed))?;
    let expected = gateway_salt(&SaltInput {
        id: e.checked.text("id"),
        realm: e.checked.text("realm"),
        request_hash: &rh,
        source_network,
        destination_network,
        source_depositor: source,
        source_signer: &source_signer,
        recipient,
        destination_recipient: &destination_recipient,
        amount: &amount,
        max_fee: &max_fee,
    });
    if salt != expected {
        return Err(Refusal::mpp(Reason::SaltNotUsdcDerivation));
    }
    Ok(e.h)
}

#[cfg(test)]
mod tests {
    use super::{gateway_account, reads_accounts_on};

    /// A `solana:` word is the base58 of its 32 bytes where the Solana rail is built (32 zero bytes: the System
    /// Program's id), and unread (and so refused before signing) where it is not; other namespaces are never read.
    #[test]
    fn solana_words_read_only_where_the_solana_rail_is_built() {
        let zero = format!("0x{}", "00".repeat(32));
        let solana = gateway_account("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", &zero);
        let expected =
            cfg!(feature = "solana").then(|| format!("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1:{}", "1".repeat(32)));
        assert_eq!(solana, expected);
        assert_eq!(gateway_account("solana:x", &zero[..65]), None);
        assert_eq!(reads_accounts_on("solana:x"), cfg!(feature = "solana"));
        assert!(reads_accounts_on("eip155:1") && !reads_accounts_on("stellar:pubnet") && !reads_accounts_on("solanax"));
        assert_eq!(gateway_account("stellar:pubnet", &zero), None);
        assert_eq!(
            gateway_account("eip155:1", &zero).as_deref(),
            Some("eip155:1:0x0000000000000000000000000000000000000000")
        );
    }
}
