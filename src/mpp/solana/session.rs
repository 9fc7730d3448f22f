//! `mpp/session/solana` (draft-solana-session-00, MPP's `session` on `solana`): a payment channel of the Solana
//! payment-channels program whose salt is H's first 8 bytes, read as a little-endian u64, so the salt's encoded bytes
//! in the `open` instruction the payer signs are exactly those 8 bytes; H itself is in the challenge the opening
//! answers (its id and opaque).
//!
//! The reference's build (integraledger-terms 0.4.0, `bindings/mpp_session_solana.py`) does not compose the opening:
//! it hands the buyer's channel client a `solana-session-open` request of the values the open is made from (the salt,
//! the program, the network, the request's blockhash and slot), and the client answers the open payload `{action:
//! "open", channelId, transaction, ...}`, which the build checks as bound does before it returns the credential. So
//! this crate's local signer does not answer that request: the wallet's channel client does. Under an operator voucher
//! signer (`methodDetails.voucherSigner` = `operator`) a second step follows: the payer signs the session proof, the
//! RFC 8785 JSON of `{channelId, domain: "mpp-session-auth-v1", payer, sessionChallengeId}`, as `ed25519-raw`,
//! answered in base58, and the open payload carries it as `authentication`.
//!
//! Where the crate differs from the reference, by choice: an opening whose message has address table lookups is
//! `svm/read-first` whatever it carries (the reference reads the tables a payment's own fetched member holds; the
//! crate's builds and the gate never write one); a `recentSlot` past 2^64 - 1, which the reference writes as a JSON
//! integer no u64 holds, is `svm/input-malformed` at the build.

use std::borrow::Cow;

use ruint::aliases::U256;
use serde_json::{Map, Value};

use super::is_solana_address;
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::mpp::challenge::{Method, Parts};
use crate::mpp::credential::{Credential, Echoed, echoed_for};
use crate::mpp::network::solana_network;
use crate::mpp::pieces::{Held, Payer, Piece, on_network};
use crate::mpp::values::{decimal_of, has};
use crate::pairing::{
    Advertised, Channel, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::solana::wire::{static_nonce, wire_of};
use crate::rail::solana::{Key, Transaction, decode};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/session/solana";
/// The pairing.
pub(crate) static PAIRING: SessionSolana = SessionSolana;
/// The Solana session: `session` on `solana`.
pub(crate) static SOLANA_SESSION: Method = Method { intent: "session", method: "solana", offers: solana_session };

/// The `open` instruction's discriminator, its least data (the discriminator, the salt and the rest of its
/// arguments) and account count, and the places of its authorized signer and channel among its accounts.
const OPEN_DISCRIMINATOR: u8 = 1;
const OPEN_MIN_DATA: usize = 33;
const OPEN_MIN_ACCOUNTS: usize = 6;
const OPEN_SIGNER_ACCOUNT: usize = 4;
const OPEN_CHANNEL_ACCOUNT: usize = 5;
/// The session proof's domain (draft-solana-session-00, Session Bearer Proof).
const PROOF_DOMAIN: &str = "mpp-session-auth-v1";

const DEPOSIT: InputSpec = InputSpec::optional(
    "deposit",
    InputType::String,
    "What the opening locks in the channel, in the token's atomic units; the channel client reads it.",
)
.with_format(InputFormat::Decimal);

/// The buyer's inputs an opening takes.
const INPUTS: [InputSpec; 1] = [DEPOSIT];

static PIECE: Piece = Piece {
    pairing: ID,
    method: &SOLANA_SESSION,
    payer: Payer::Account {
        namespace: Some("solana"),
        address: is_solana_address,
        field: Some("from"),
        on: on_network,
    },
    inputs: &INPUTS,
    now: true,
};

/// A refusal in the `svm` namespace.
pub(super) const fn svm(reason: Reason) -> Refusal {
    Refusal::new("svm", reason)
}

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// The key a value names: a base58 string of 32 bytes.
pub(super) fn key_of(value: Option<&Value>) -> Option<Key> {
    value.and_then(Value::as_str).and_then(Key::parse)
}

/// `session` on `solana`, in the reference's order: no channel named yet (`mpp/channel-named`); a `network` MPP
/// Solana names (`svm/network-malformed`; it is required here); then `svm/input-malformed` unless `channelProgram`,
/// `currency`, `recipient` and `recentBlockhash` are keys, `recentSlot` a decimal string, and `voucherSigner` absent,
/// `client`, or `operator` with a key `operator`.
fn solana_session(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    if has(d, "channelId") {
        return Err(Refusal::mpp(Reason::ChannelNamed));
    }
    if let Err(e) = solana_network(d, true)
        && e.reason() == Reason::NetworkMalformed
    {
        return Err(e);
    }
    let signer = d.member("voucherSigner").and_then(Value::as_str);
    let signer_ok = !has(d, "voucherSigner")
        || signer == Some("client")
        || (signer == Some("operator") && key_of(d.member("operator")).is_some());
    let keys = [d.member("channelProgram"), r.member("currency"), r.member("recipient"), d.member("recentBlockhash")];
    if !keys.into_iter().all(|k| key_of(k).is_some()) || decimal_of(d.member("recentSlot")).is_none() || !signer_ok {
        return Err(svm(Reason::InputMalformed));
    }
    Ok(vec![ID])
}

/// Whether a challenge's `methodDetails.voucherSigner` is `operator`.
pub(super) fn operator_mode(details: &Object) -> bool {
    details.member("voucherSigner").and_then(Value::as_str) == Some("operator")
}

/// H's first 8 bytes, as the channel's salt carries them.
fn salt_bytes(h: &AtrHash) -> [u8; 8] {
    let mut out = [0u8; 8];
    for (slot, byte) in out.iter_mut().zip(h.as_bytes()) {
        *slot = *byte;
    }
    out
}

/// The session proof the payer signs in operator mode: the UTF-8 of the RFC 8785 JSON of `{channelId, domain:
/// "mpp-session-auth-v1", payer, sessionChallengeId}`.
fn session_proof(channel: &str, payer: &str, challenge_id: &str) -> Result<Vec<u8>, Refusal> {
    let mut m = Map::with_capacity(4);
    m.insert("channelId".into(), channel.into());
    m.insert("domain".into(), PROOF_DOMAIN.into());
    m.insert("payer".into(), payer.into());
    m.insert("sessionChallengeId".into(), challenge_id.into());
    crate::json::canonical(&Value::Object(m)).map(String::into_bytes).ok_or_else(malformed)
}

/// Base58 text of 64 to 88 characters, the form of an Ed25519 signature's base58 the completion takes.
fn is_signature_text(text: &str) -> bool {
    (64..=88).contains(&text.len()) && text.bytes().all(is_solana_address_char)
}

const fn is_solana_address_char(b: u8) -> bool {
    matches!(b, b'1'..=b'9' | b'A'..=b'H' | b'J'..=b'N' | b'P'..=b'Z' | b'a'..=b'k' | b'm'..=b'z')
}

/// An opening read back: its echoed challenge, its signed transaction, the channel its `open` opens, and that open's
/// authorized signer (`None` where its index is past the keys).
#[derive(Debug, Clone)]
pub(super) struct Opening<'a> {
    pub(super) echoed: Echoed<'a>,
    pub(super) tx: Transaction,
    pub(super) channel: Key,
    pub(super) signer: Option<Key>,
}

/// The program's one `open` instruction: its data and its accounts. None, more than one, or one whose channel index
/// is past every key the message names (its static keys and each address its lookups load) is `svm/open-not-found`.
fn open_of<'t>(tx: &'t Transaction, program: &Key) -> Result<(&'t [u8], &'t [u8]), Refusal> {
    let not_found = || svm(Reason::OpenNotFound);
    let mut opens = tx.instructions.iter().filter(|ix| {
        tx.program_of(ix) == Some(program)
            && ix.data.len() >= OPEN_MIN_DATA
            && ix.data.first() == Some(&OPEN_DISCRIMINATOR)
            && ix.accounts.len() >= OPEN_MIN_ACCOUNTS
    });
    let ix = opens.next().ok_or_else(not_found)?;
    if opens.next().is_some() {
        return Err(not_found());
    }
    let loaded: usize = tx.lookups.iter().map(|l| l.writable.len() + l.readonly.len()).sum();
    let channel = ix.accounts.get(OPEN_CHANNEL_ACCOUNT).ok_or_else(not_found)?;
    if usize::from(*channel) >= tx.keys.len() + loaded {
        return Err(not_found());
    }
    Ok((&ix.data, &ix.accounts))
}

/// Reads an opening back to H, in the reference's order: the echoed challenge held for the session ([`echoed_for`]);
/// the payload's `action` `open` (`mpp/session-action`); `methodDetails.channelProgram` a key
/// (`svm/input-malformed`); the `transaction` (`svm/tx-too-large`, `svm/tx-malformed`); no durable nonce account
/// named through a lookup table (`svm/nonce-account-not-static`); the program's one `open` ([`open_of`]); its salt
/// H's first 8 bytes (`mpp/carrier-not-challenge`); the payload's `channelId` a key (`svm/channel-mismatch`);
/// `authentication` present exactly in operator mode (`mpp/credential-malformed`), naming the echoed challenge's id
/// (`svm/proof-not-challenge`); in operator mode the challenge's `operator` a key (`svm/signer-not-operator`); a
/// message with address table lookups `svm/read-first` (the crate reads no table); the open's channel the
/// payload's (`svm/channel-mismatch`), and in operator mode its authorized signer the operator
/// (`svm/signer-not-operator`). No signature is verified.
pub(super) fn opening(presented: &dyn Member) -> Result<Opening<'_>, Refusal> {
    let e = echoed_for(presented, ID, &SOLANA_SESSION)?;
    let payload = e.payload;
    if payload.member("action").and_then(Value::as_str) != Some("open") {
        return Err(Refusal::mpp(Reason::SessionAction));
    }
    let d = e.checked.details();
    let program = key_of(d.member("channelProgram")).ok_or(svm(Reason::InputMalformed))?;
    let wire = wire_of(payload.member("transaction"))?;
    let tx = decode(&wire)?;
    static_nonce(&tx)?;
    let (data, accounts) = open_of(&tx, &program)?;
    if data.get(1..9) != Some(&salt_bytes(&e.h)[..]) {
        return Err(Refusal::mpp(Reason::CarrierNotChallenge));
    }
    let declared = key_of(payload.member("channelId")).ok_or(svm(Reason::ChannelMismatch))?;
    let operator = operator_mode(d);
    let authentication = payload.member("authentication");
    if operator != authentication.is_some() {
        return Err(malformed());
    }
    if let Some(auth) = authentication {
        let id = presented.member("challenge").and_then(|c| c.member("id"));
        if !auth.is_object() || auth.member("challengeId") != id {
            return Err(svm(Reason::ProofNotChallenge));
        }
    }
    let operator_key =
        if operator { Some(key_of(d.member("operator")).ok_or(svm(Reason::SignerNotOperator))?) } else { None };
    if !tx.lookups.is_empty() {
        return Err(svm(Reason::ReadFirst));
    }
    let key_at = |place: usize| accounts.get(place).and_then(|i| tx.keys.get(usize::from(*i))).copied();
    let channel = key_at(OPEN_CHANNEL_ACCOUNT).ok_or(svm(Reason::OpenNotFound))?;
    let signer = key_at(OPEN_SIGNER_ACCOUNT);
    if channel != declared {
        return Err(svm(Reason::ChannelMismatch));
    }
    if operator_key.is_some() && signer != operator_key {
        return Err(svm(Reason::SignerNotOperator));
    }
    Ok(Opening { echoed: e, tx, channel, signer })
}

/// The pairing `mpp/session/solana`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionSolana;

/// What an opening's quote and build read of a held choice: the network (`svm/network-undeclared` for localnet,
/// which has no CAIP-2 id).
fn network_of(held: &Held<'_>) -> Result<String, Refusal> {
    solana_network(held.checked.details(), true)
}

impl Pairing for SessionSolana {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    /// The first challenge offering the session on the account's network (a `solana` account), with the deposit
    /// where the buyer gives one.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        PIECE.choose(read, ctx)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &INPUTS
    }

    /// What the opening pays: its vouchers start at 0 of the request's `currency` to its `recipient`, on the
    /// challenge's network; the deposit where the buyer gives one (a decimal below 2^256, else
    /// `mpp/choice-malformed`); valid until the challenge's `expires` where it names one.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let held = PIECE.held(chosen)?;
        let network = network_of(&held)?;
        let c = &held.checked;
        let text = |k: &str| c.request().member(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let valid_before = c.expires().and_then(|e| u64::try_from(e).ok());
        let quote = Quote::new(U256::ZERO, text("currency"), text("recipient"), network, c.text("intent"))
            .with_window(None, valid_before);
        match held.input(DEPOSIT.name) {
            None => Ok(quote),
            Some(d) => decimal_of(Some(d)).map(|d| quote.with_deposit(d)).ok_or(Refusal::mpp(Reason::ChoiceMalformed)),
        }
    }

    /// The `solana-session-open` request: `{salt, channelProgram, network, recentBlockhash, recentSlot}`, the salt
    /// H's first 8 bytes as a little-endian u64, the slot a number.
    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let held = PIECE.offer(chosen, h)?;
        let network = network_of(&held)?;
        let d = held.checked.details();
        let text = |k: &str| d.member(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let slot = text("recentSlot").parse::<u64>().map_err(|_| svm(Reason::InputMalformed))?;
        let mut fields = Fields::new();
        fields.insert("salt".into(), Value::from(u64::from_le_bytes(salt_bytes(h))));
        fields.insert("channelProgram".into(), text("channelProgram").into());
        fields.insert("network".into(), network.into());
        fields.insert("recentBlockhash".into(), text("recentBlockhash").into());
        fields.insert("recentSlot".into(), Value::from(slot));
        Ok(Box::new(Open { held, request: SigningRequest::SolanaSessionOpen(fields) }))
    }

    /// H, once the opening's `open` is salted with its first 8 bytes and opens the payload's channel ([`opening`]).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        opening(presented).map(|o| o.echoed.h)
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// The unsigned opening: the request for the channel client, and in operator mode the session proof after it.
struct Open<'a> {
    held: Held<'a>,
    request: SigningRequest,
}

impl Open<'_> {
    /// The credential `{challenge, payload}` for an open payload, once bound's checks ([`opening`]) take it.
    fn credential(&self, payload: Map<String, Value>) -> Result<Completion<'_>, Refusal> {
        let credential = Credential::new(Cow::Borrowed(&*self.held.echo), None, Value::Object(payload))?;
        opening(&credential)?;
        Ok(credential.completion())
    }

    /// The challenge id and the payer, where the challenge asks for the operator mode's session proof.
    fn operator(&self) -> Result<Option<(&str, &str)>, Refusal> {
        if !operator_mode(self.held.checked.details()) {
            return Ok(None);
        }
        let id = self.held.checked.value().member("id").and_then(Value::as_str);
        match (id, self.held.payer()) {
            (Some(id), Some(payer)) => Ok(Some((id, payer))),
            _ => Err(Refusal::mpp(Reason::ChoiceMalformed)),
        }
    }
}

fn payload_of(answer: &Answer) -> Result<Map<String, Value>, Refusal> {
    answer.as_json().as_object().cloned().ok_or_else(malformed)
}

impl Unsigned for Open<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// The open payload (an object) completes the credential, unless the challenge's voucher signer is `operator`:
    /// then the open payload, whose `channelId` must be of a key's form, asks for the session proof's `ed25519-raw`
    /// signature by the payer, and `[open payload, proof]` (the proof base58 of 64 to 88 characters) completes it with
    /// `authentication = {type: "proof", challengeId, payer, signature}`. Any other answer is
    /// `mpp/credential-malformed`.
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        let Some((id, payer)) = self.operator()? else {
            let [open] = answers else { return Err(malformed()) };
            return self.credential(payload_of(open)?);
        };
        match answers {
            [open] => {
                let open = payload_of(open)?;
                let channel = open.member("channelId").and_then(Value::as_str).filter(|c| is_solana_address(c));
                let message = session_proof(channel.ok_or_else(malformed)?, payer, id)?;
                let mut fields = Fields::new();
                fields.insert("message".into(), crate::codec::to_hex(&message).into());
                fields.insert("signer".into(), payer.into());
                Ok(Completion::Next(SigningRequest::Ed25519Raw(fields)))
            }
            [open, proof] => {
                let mut open = payload_of(open)?;
                let proof = proof.as_str().filter(|p| is_signature_text(p)).ok_or_else(malformed)?;
                let mut auth = Map::with_capacity(4);
                auth.insert("type".into(), "proof".into());
                auth.insert("challengeId".into(), id.into());
                auth.insert("payer".into(), payer.into());
                auth.insert("signature".into(), proof.into());
                open.insert("authentication".into(), Value::Object(auth));
                self.credential(open)
            }
            _ => Err(malformed()),
        }
    }
}
