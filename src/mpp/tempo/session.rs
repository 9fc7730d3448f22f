//! `mpp/session/tempo` (draft-tempo-session-00, MPP's `session` on `tempo`): a payment channel on a Tempo session
//! escrow whose salt is H. The opening is one Tempo 0x76 transaction the payer signs (a `tempo-call` request: the
//! escrow's `open` call with H as its salt word), which the seller's server broadcasts, then the first voucher, of
//! cumulative amount 0, over the channel id that commits to H. Two escrows: v1 (the EVM session escrow's contract,
//! "Tempo Stream Channel"), whose channel id is the EVM session's, and v2 (TIP-1034's TIP-20 channel reserve, "TIP20
//! Channel Reserve"), whose channel id commits to a descriptor carrying H and the opening transaction's expiring
//! nonce hash; a v2 credential carries that descriptor. Every later payment is a voucher built from the hold
//! ([`Channel`](crate::pairing::Channel), in `session_channel.rs`).
//!
//! The chains' facts are the rails' (`crate::rail::tempo` for the 0x76 transaction, its sender and the v2 escrow;
//! `crate::rail::evm::session` for the v1 channel id and the vouchers); this file reads the challenge and the buyer's
//! inputs, builds the two requests and the credential, and reads H back from an opening, as the reference's
//! `_tempo_build` and `_tempo_opened` do.
//!
//! Where the crate differs from the reference (integraledger-terms 0.4.0), by choice: the voucher request's `types`
//! list `EIP712Domain` and its integers are decimal strings, as for `mpp/session/evm` (the digests are the same); and
//! the buyer inputs `credentialType` and `tokenDomain`, which the reference's session piece checks and its Tempo build
//! never reads, are not inputs of this pairing.

use std::borrow::Cow;

use alloy_primitives::{Address, B256};
use ruint::aliases::{U256, U512};
use serde_json::{Map, Value};

use crate::codec::{hex_bytes, to_hex};
use crate::hash::AtrHash;
use crate::json::{Member, Object};
use crate::mpp::challenge::{Method, Parts, details_of};
use crate::mpp::credential::{Credential, Echoed, did_pkh, echoed_for};
use crate::mpp::evm::session::{
    AUTHORIZED_SIGNER, CREDENTIAL_TYPE, INTENT, TOKEN_DOMAIN, authorized_signer, deposit_form,
};
use crate::mpp::network::session_chain;
use crate::mpp::pieces::{Held, Piece};
use crate::mpp::session_within::{MAX_SIGNATURE, SHORTEST_SIGNATURE, is_hex_bytes, session_request};
use crate::mpp::values::{has, is_address};
use crate::pairing::{
    Advertised, Channel, ChooseContext, Chosen, Completion, InputFormat, InputSpec, InputType, Pairing, Quote, Unsigned,
};
use crate::rail::evm::session::{
    EvmAddress, OPEN_CALL_BYTES, OPEN_SELECTOR, SessionChannel, VoucherDomain, escrow_voucher_typed_data,
    session_channel_id,
};
use crate::rail::tempo::channel::{
    Descriptor, OPEN_V2_CALL_BYTES, OPEN_V2_SALT_WORD, OPEN_V2_SELECTOR, V1_VOUCHER_DOMAIN, V2_AMOUNT_LIMIT,
    V2_VOUCHER_DOMAIN, open_v2_call,
};
use crate::rail::tempo::transaction::{MAX_WIRE_BYTES, TempoTransaction, TxError};
use crate::refusal::{Reason, Refusal};
use crate::signer::{Answer, Fields, SigningRequest};

/// The pairing id.
pub(crate) const ID: &str = "mpp/session/tempo";
/// The pairing.
pub(crate) static PAIRING: SessionTempo = SessionTempo;
/// The Tempo session: `session` on `tempo`.
pub(crate) static TEMPO_SESSION: Method = Method { intent: "session", method: "tempo", offers: tempo_session };
const DEPOSIT: InputSpec = InputSpec::required(
    "deposit",
    InputType::String,
    "What the opening locks in the channel, in the token's atomic units (above 0, below 2^96 on v2, 2^128 on v1).",
)
.with_format(InputFormat::Decimal);

/// The buyer's inputs an opening takes: the deposit and the voucher signer, and (as the reference's session piece
/// keeps them in the choice, for every MPP session) `credentialType` and `tokenDomain`, which a Tempo opening, a
/// signed transaction, does not read.
pub(crate) const INPUTS: [InputSpec; 4] = [DEPOSIT, AUTHORIZED_SIGNER, CREDENTIAL_TYPE, TOKEN_DOMAIN];

static PIECE: Piece = Piece::evm(ID, &TEMPO_SESSION, &INPUTS);

/// A refusal in the `tempo` namespace.
pub(super) const fn tempo(reason: Reason) -> Refusal {
    Refusal::new("tempo", reason)
}

fn malformed() -> Refusal {
    Refusal::mpp(Reason::CredentialMalformed)
}

/// `session` on `tempo`, in the reference's order: no channel named yet (`mpp/channel-named`); `sessionProtocol`
/// absent, `v1` or `v2` (`mpp/session-protocol`); a v2 session names its chain and escrow, and a `chainId` is a
/// positive safe integer (`mpp/chain-id-required`); the escrow an address (`mpp/escrow-malformed`); an `operator`,
/// where present, and `currency` and `recipient` addresses (`mpp/request-malformed`).
fn tempo_session(p: &Parts<'_>) -> Result<Vec<&'static str>, Refusal> {
    let (r, d) = (p.request, p.details);
    if has(d, "channelId") || has(d, "sessionSnapshot") {
        return Err(Refusal::mpp(Reason::ChannelNamed));
    }
    session_chain("session", "tempo", d)?;
    if has(d, "operator") && !is_address(d.member("operator")) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    if !is_address(r.member("currency")) || !is_address(r.member("recipient")) {
        return Err(Refusal::mpp(Reason::RequestMalformed));
    }
    Ok(vec![ID])
}

/// What a Tempo session challenge names, read without the opening's checks (the reference's `params_of`): the
/// chain, the escrow and the escrow's version, and the members of `methodDetails` the channel reads.
#[derive(Debug, Clone)]
pub(super) struct Params {
    pub(super) chain_id: u64,
    /// The escrow, as written.
    pub(super) escrow: String,
    pub(super) v2: bool,
    /// `methodDetails.operator`, where present.
    pub(super) operator: Option<Value>,
    /// `methodDetails.channelId`, where present: the channel a later challenge names.
    pub(super) channel: Option<Value>,
}

impl Params {
    /// `eip155:<chainId>`.
    pub(super) fn network(&self) -> String {
        format!("eip155:{}", self.chain_id)
    }

    fn escrow(&self) -> Option<EvmAddress<'_>> {
        EvmAddress::parse(&self.escrow)
    }

    /// The escrow's voucher domain.
    pub(super) const fn voucher_domain(&self) -> VoucherDomain {
        if self.v2 {
            VoucherDomain { name: V2_VOUCHER_DOMAIN, amount_type: "uint96" }
        } else {
            VoucherDomain { name: V1_VOUCHER_DOMAIN, amount_type: "uint128" }
        }
    }

    /// The largest amount, exclusive, a deposit or a voucher of this escrow takes: 2^96 on v2, 2^128 on v1.
    pub(super) fn amount_limit(&self) -> U512 {
        if self.v2 { U512::from(V2_AMOUNT_LIMIT) } else { U512::from(1u8) << 128 }
    }
}

/// The [`Params`] of a challenge: an object with a string `request` (`mpp/credential-malformed`), of intent `session`
/// and method `tempo` (`mpp/not-this-pairing`), whose request decodes and whose `methodDetails`, where present, is an
/// object (`mpp/request-malformed`), then [`session_chain`]'s checks (4217 for a v1 session naming no chain).
pub(super) fn params_of(challenge: Option<&Value>) -> Result<Params, Refusal> {
    let request = session_request(challenge, "tempo")?;
    let details = details_of(&request);
    let chain_id = session_chain("session", "tempo", details)?;
    let escrow = details.member("escrowContract").and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(Params {
        chain_id,
        escrow,
        v2: details.member("sessionProtocol").and_then(Value::as_str) == Some("v2"),
        operator: details.member("operator").cloned(),
        channel: details.member("channelId").cloned(),
    })
}

/// Whether two values are the same bytes written as `0x` hex in either case (the same length of text).
fn same_bytes(a: &str, b: &str) -> bool {
    a.len() == b.len() && crate::codec::is_hex(a) && crate::codec::is_hex(b) && a.eq_ignore_ascii_case(b)
}

/// The zero address, as a descriptor writes an operator the challenge does not name.
const ZERO: &str = "0x0000000000000000000000000000000000000000";

/// A v2 payment's `descriptor`, read against its payload's channel id and the challenge (the reference's
/// `_descriptor_salt`): an object whose seven members are strings, five addresses and two 32-byte hashes, giving the
/// payload's `channelId` with the challenge's escrow and chain, and naming the challenge's `operator` (zero where it
/// names none); `tempo/descriptor-mismatch` otherwise.
pub(super) fn descriptor_of(payload: &Object, p: &Params) -> Result<Descriptor, Refusal> {
    let mismatch = || tempo(Reason::DescriptorMismatch);
    let d = payload.member("descriptor").and_then(Value::as_object).ok_or_else(mismatch)?;
    let text = |k: &str| d.member(k).and_then(Value::as_str);
    let keys = ["payer", "payee", "operator", "token", "salt", "authorizedSigner", "expiringNonceHash"];
    if !keys.iter().all(|k| text(k).is_some()) {
        return Err(mismatch());
    }
    let address = |k: &str| text(k).and_then(EvmAddress::parse).map(|a| a.bytes()).ok_or_else(mismatch);
    let hash = |k: &str| text(k).and_then(AtrHash::parse).map(|h| B256::from(*h.as_bytes())).ok_or_else(mismatch);
    let descriptor = Descriptor {
        payer: address("payer")?,
        payee: address("payee")?,
        operator: address("operator")?,
        token: address("token")?,
        salt: hash("salt")?,
        authorized_signer: address("authorizedSigner")?,
        expiring_nonce_hash: hash("expiringNonceHash")?,
    };
    let escrow = p.escrow().ok_or_else(mismatch)?.bytes();
    let channel = payload.member("channelId").and_then(Value::as_str).and_then(AtrHash::parse).ok_or_else(mismatch)?;
    if descriptor.channel_id(escrow, p.chain_id).as_slice() != channel.as_bytes() {
        return Err(mismatch());
    }
    let operator = match &p.operator {
        None => ZERO,
        Some(o) => o.as_str().ok_or_else(mismatch)?,
    };
    if !same_bytes(text("operator").unwrap_or_default(), operator) {
        return Err(mismatch());
    }
    Ok(descriptor)
}

/// An opening whose transaction opens a channel salted with H: what the channel steps read of it.
#[derive(Debug, Clone)]
pub(super) struct Opened<'a> {
    pub(super) echoed: Echoed<'a>,
    pub(super) params: Params,
    /// The channel id the payload names (and the transaction opens).
    pub(super) channel: B256,
}

/// The 20 bytes of an ABI address word: 12 zero bytes, then the address.
fn address_word(word: &[u8]) -> Option<Address> {
    let (pad, address) = word.split_at_checked(12)?;
    (word.len() == 32 && pad.iter().all(|b| *b == 0)).then(|| Address::from_slice(address))
}

fn tx_error(e: TxError) -> Refusal {
    match e {
        TxError::Malformed => tempo(Reason::TxMalformed),
        TxError::TooLarge => tempo(Reason::TxTooLarge),
    }
}

/// Reads an opening back to H, in draft-tempo-session-00's order for the open verification (the reference's
/// `_tempo_opened`): the echoed challenge held for the session ([`echoed_for`]); the payload an `open` of type
/// `transaction` (`mpp/not-an-opening`); the challenge's [`Params`]; the `transaction` `0x` hex
/// (`mpp/credential-malformed`) of at most 64 KiB (`tempo/tx-too-large`), one 0x76 transaction for the challenge's
/// chain (`tempo/tx-malformed`) holding exactly one `open` call of the escrow's version to the escrow
/// (`tempo/open-not-found`, `tempo/open-ambiguous`) of that version's length (`tempo/tx-malformed`) whose salt word
/// is H (`tempo/salt-not-bound`), whose address words are addresses, whose signature gives its sender, and whose
/// authorization list's signatures are read (`tempo/tx-malformed`); then the payload's `channelId`, a 32-byte hash
/// (`mpp/credential-malformed`): on v1 the channel the sender opens with the call's payee, token and authorized signer,
/// H, the escrow and the chain (`mpp/channel-not-bound`); on v2 the descriptor's ([`descriptor_of`]), which carries H
/// as its salt, the call's payee, operator, token and authorized signer, the sender as its payer, and the
/// transaction's expiring nonce hash under the sender (`tempo/descriptor-mismatch`).
pub(super) fn opened(presented: &dyn Member) -> Result<Opened<'_>, Refusal> {
    let e = echoed_for(presented, ID, &TEMPO_SESSION)?;
    let text = |k: &str| e.payload.member(k).and_then(Value::as_str);
    if text("action") != Some("open") || text("type") != Some("transaction") {
        return Err(Refusal::mpp(Reason::NotAnOpening));
    }
    let p = params_of(presented.member("challenge"))?;
    let wire = text("transaction").filter(|w| crate::codec::is_hex(w)).ok_or_else(malformed)?;
    if (wire.len() - 2) / 2 > MAX_WIRE_BYTES {
        return Err(tempo(Reason::TxTooLarge));
    }
    let raw = hex_bytes(wire).ok_or_else(malformed)?;
    let tx = TempoTransaction::decode(&raw).map_err(tx_error)?;
    let escrow = p.escrow().ok_or(Refusal::mpp(Reason::EscrowMalformed))?;
    if tx.chain_id != p.chain_id {
        return Err(tempo(Reason::TxMalformed));
    }
    let selector: &[u8] = if p.v2 { &OPEN_V2_SELECTOR } else { &OPEN_SELECTOR };
    let mut opens = tx
        .calls
        .iter()
        .filter(|c| c.to == Some(escrow.bytes()) && c.input.get(..4) == Some(selector))
        .map(|c| &c.input);
    let data = opens.next().ok_or(tempo(Reason::OpenNotFound))?;
    if opens.next().is_some() {
        return Err(tempo(Reason::OpenAmbiguous));
    }
    if data.len() != (if p.v2 { OPEN_V2_CALL_BYTES } else { OPEN_CALL_BYTES }) {
        return Err(tempo(Reason::TxMalformed));
    }
    let word = |i: usize| data.get(4 + 32 * i..4 + 32 * (i + 1)).unwrap_or_default();
    if word(if p.v2 { OPEN_V2_SALT_WORD } else { 3 }) != e.h.as_bytes() {
        return Err(tempo(Reason::SaltNotBound));
    }
    let called: &[usize] = if p.v2 { &[0, 1, 2, 5] } else { &[0, 1, 4] };
    let called = called.iter().map(|i| address_word(word(*i))).collect::<Option<Vec<_>>>();
    let called = called.ok_or(tempo(Reason::TxMalformed))?;
    let sender = tx.sender().map_err(tx_error)?;
    tx.authorization_signatures().map_err(tx_error)?;
    let channel = text("channelId").and_then(AtrHash::parse).ok_or_else(malformed)?;
    let channel = B256::from(*channel.as_bytes());
    let salt = B256::from(*e.h.as_bytes());
    if p.v2 {
        let mismatch = || tempo(Reason::DescriptorMismatch);
        let d = descriptor_of(e.payload, &p).map_err(|_| mismatch())?;
        let named = [d.payee, d.operator, d.token, d.authorized_signer];
        if d.salt != salt || named.as_slice() != called.as_slice() || d.payer != sender {
            return Err(mismatch());
        }
        if d.expiring_nonce_hash != tx.expiring_nonce_hash(sender) {
            return Err(mismatch());
        }
    } else {
        let [payee, token, signer] = called.as_slice() else { return Err(tempo(Reason::TxMalformed)) };
        if session_channel_id(sender, *payee, *token, salt, *signer, escrow.bytes(), p.chain_id) != channel {
            return Err(Refusal::mpp(Reason::ChannelNotBound));
        }
    }
    Ok(Opened { echoed: e, params: p, channel })
}

/// The pairing `mpp/session/tempo`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionTempo;

/// What an opening signs, read once from the held choice: what the quote reports and the build builds.
struct OpeningChoice<'h> {
    params: Params,
    payer: EvmAddress<'h>,
    payee: EvmAddress<'h>,
    token: EvmAddress<'h>,
    signer: EvmAddress<'h>,
    /// The challenge's `operator` where it names one, else zero.
    operator: String,
    deposit: u128,
    /// The challenge's `expires`, Unix seconds: the transaction's `validBefore`.
    valid_before: u64,
}

/// The opening a held choice asks for, checked in the reference's order: the challenge's `expires`
/// (`mpp/expires-required`); its [`Params`]; the deposit, above 0 and below 2^96 on v2, 2^128 on v1
/// (`mpp/input-malformed`); the authorized signer, absent or `null` for the payer's own key, else an address
/// (`mpp/input-malformed`). The payer's address, the `currency` and the `recipient` are of their form: the piece and
/// the filter have read them.
fn opening_choice<'h>(held: &'h Held<'_>, deposit: Option<U512>) -> Result<OpeningChoice<'h>, Refusal> {
    let input_malformed = || Refusal::mpp(Reason::InputMalformed);
    let valid_before = u64::try_from(held.checked.expires_required()?).map_err(|_| input_malformed())?;
    let params = params_of(Some(held.checked.value()))?;
    let deposit = deposit.filter(|d| !d.is_zero() && *d < params.amount_limit()).ok_or_else(input_malformed)?;
    let deposit = u128::try_from(deposit).map_err(|_| input_malformed())?;
    let signer = authorized_signer(held)?;
    let payer = held.payer().and_then(EvmAddress::parse).ok_or_else(input_malformed)?;
    let address = |k: &str| held.checked.request().member(k).and_then(EvmAddress::of);
    let request_malformed = || Refusal::mpp(Reason::RequestMalformed);
    let (payee, token) = (address("recipient").ok_or_else(request_malformed)?, address("currency"));
    let token = token.ok_or_else(request_malformed)?;
    let operator = params.operator.as_ref().and_then(Value::as_str).unwrap_or(ZERO).to_owned();
    Ok(OpeningChoice { params, payer, payee, token, signer, operator, deposit, valid_before })
}

impl OpeningChoice<'_> {
    fn escrow(&self) -> Result<EvmAddress<'_>, Refusal> {
        self.params.escrow().ok_or(Refusal::mpp(Reason::EscrowMalformed))
    }

    /// The v1 channel this payer opens under `h`.
    fn v1_channel(&self, h: AtrHash) -> Result<SessionChannel<'_>, Refusal> {
        Ok(SessionChannel {
            payer: self.payer,
            payee: self.payee,
            token: self.token,
            salt: h,
            authorized_signer: self.signer,
            escrow: self.escrow()?,
            chain_id: self.params.chain_id,
        })
    }

    /// The escrow's `open` call salted with `h`: v2's `open(payee, operator, token, deposit, salt, authorizedSigner)`,
    /// v1's `open(payee, token, deposit, salt, authorizedSigner)`.
    fn open_call(&self, h: AtrHash) -> Result<Vec<u8>, Refusal> {
        if !self.params.v2 {
            return Ok(self.v1_channel(h)?.open_call(self.deposit));
        }
        let operator = EvmAddress::parse(&self.operator).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
        let salt = B256::from(*h.as_bytes());
        let (payee, token, signer) = (self.payee.bytes(), self.token.bytes(), self.signer.bytes());
        open_v2_call(payee, operator.bytes(), token, self.deposit, salt, signer)
            .ok_or(Refusal::mpp(Reason::InputMalformed))
    }

    /// The `tempo-call` request: `{chainId, call: {to: escrow, data}, validBefore, broadcast: false}`.
    fn request(&self, h: AtrHash) -> Result<SigningRequest, Refusal> {
        let mut call = Map::with_capacity(2);
        call.insert("to".into(), self.params.escrow.clone().into());
        call.insert("data".into(), to_hex(&self.open_call(h)?).into());
        let mut fields = Fields::new();
        fields.insert("chainId".into(), Value::from(self.params.chain_id));
        fields.insert("call".into(), Value::Object(call));
        fields.insert("validBefore".into(), Value::from(self.valid_before));
        fields.insert("broadcast".into(), Value::Bool(false));
        Ok(SigningRequest::TempoCall(fields))
    }

    /// The channel id, and on v2 the descriptor, the credential writes for `signed_tx`: on v1 the channel the payer
    /// opens with the call's values; on v2 the descriptor of those values whose expiring nonce hash is the
    /// transaction's under the payer, and its id. On v2 a transaction that is not `0x` hex of at most 64 KiB is
    /// `mpp/credential-malformed`, and one that does not read gives the rail's refusal.
    fn channel_for(&self, h: AtrHash, signed_tx: &str) -> Result<(B256, Option<Value>), Refusal> {
        if !self.params.v2 {
            return Ok((self.v1_channel(h)?.id(), None));
        }
        if !is_hex_bytes(signed_tx, 0, MAX_WIRE_BYTES) {
            return Err(malformed());
        }
        let tx = TempoTransaction::decode(&hex_bytes(signed_tx).ok_or_else(malformed)?).map_err(tx_error)?;
        let nonce_hash = tx.expiring_nonce_hash(self.payer.bytes());
        let operator = EvmAddress::parse(&self.operator).ok_or(Refusal::mpp(Reason::RequestMalformed))?;
        let d = Descriptor {
            payer: self.payer.bytes(),
            payee: self.payee.bytes(),
            operator: operator.bytes(),
            token: self.token.bytes(),
            salt: B256::from(*h.as_bytes()),
            authorized_signer: self.signer.bytes(),
            expiring_nonce_hash: nonce_hash,
        };
        let mut written = Map::with_capacity(7);
        written.insert("payer".into(), self.payer.text().into());
        written.insert("payee".into(), self.payee.text().into());
        written.insert("operator".into(), self.operator.clone().into());
        written.insert("token".into(), self.token.text().into());
        written.insert("salt".into(), h.to_hex().into());
        written.insert("authorizedSigner".into(), self.signer.text().into());
        written.insert("expiringNonceHash".into(), nonce_hash.to_string().into());
        Ok((d.channel_id(self.escrow()?.bytes(), self.params.chain_id), Some(Value::Object(written))))
    }
}

impl Pairing for SessionTempo {
    fn id(&self) -> &'static str {
        ID
    }

    fn public_proof(&self) -> bool {
        true
    }

    fn read<'a>(&self, doc: &'a Value) -> Result<Advertised<'a>, Refusal> {
        crate::mpp::read(doc)
    }

    /// The first challenge offering the session on the account's chain, with the buyer's deposit. The reference's
    /// session piece reads the EVM session's optional `credentialType` (`authorization`, `permit2` or `hash`) and
    /// `tokenDomain` (an object) for this session too, though its Tempo build takes neither: one given in another
    /// form is `mpp/input-missing`, as there.
    fn choose(&self, read: &Advertised<'_>, ctx: &ChooseContext<'_>) -> Result<Chosen, Refusal> {
        let chosen = PIECE.choose(read, ctx)?;
        let malformed = |name: &str, ok: fn(&Value) -> bool| ctx.inputs.get(name).is_some_and(|v| !ok(v));
        if malformed("credentialType", |v| matches!(v.as_str(), Some("authorization" | "permit2" | "hash")))
            || malformed("tokenDomain", Value::is_object)
        {
            return Err(Refusal::mpp(Reason::InputMissing));
        }
        Ok(chosen)
    }

    fn inputs(&self) -> &'static [InputSpec] {
        &INPUTS
    }

    /// What the opening pays: its first voucher claims 0 of the request's `currency` to its `recipient`, on the
    /// challenge's chain, and the channel locks the deposit; the transaction is valid until the challenge's `expires`.
    fn quote(&self, chosen: &Chosen) -> Result<Quote, Refusal> {
        let deposit = deposit_form(chosen)?;
        let held = PIECE.held(chosen)?;
        let c = opening_choice(&held, deposit)?;
        let quote = Quote::new(U256::ZERO, c.token.text(), c.payee.text(), c.params.network(), INTENT);
        Ok(quote.with_deposit(U256::from(c.deposit)).with_window(None, Some(c.valid_before)))
    }

    fn build<'a>(&'a self, chosen: &'a Chosen, _atr: &'a [u8], h: &AtrHash) -> Result<Box<dyn Unsigned + 'a>, Refusal> {
        let deposit = deposit_form(chosen)?;
        let held = PIECE.offer(chosen, h)?;
        let request = opening_choice(&held, deposit)?.request(*h)?;
        Ok(Box::new(Opening { held, deposit, request }))
    }

    /// H, once the opening's transaction opens a channel salted with it ([`opened`]).
    fn bound(&self, presented: &dyn Member, _landed: Option<&Value>) -> Result<AtrHash, Refusal> {
        opened(presented).map(|o| o.echoed.h)
    }

    fn channel(&self) -> Option<&dyn Channel> {
        Some(self)
    }
}

/// The unsigned opening: the transaction, then the first voucher, and the credential from both answers.
struct Opening<'a> {
    held: Held<'a>,
    deposit: Option<U512>,
    request: SigningRequest,
}

impl Opening<'_> {
    /// The credential for the signed transaction and the voucher's signature, once bound's checks ([`opened`]) take
    /// it (their refusal otherwise, then the channel's): `{challenge, source, payload: {action: "open", type:
    /// "transaction", channelId, transaction, authorizedSigner, descriptor (v2), cumulativeAmount: "0", signature}}`.
    fn credential(&self, signed_tx: &str, signature: &str) -> Result<Credential<'_>, Refusal> {
        let c = opening_choice(&self.held, self.deposit)?;
        let h = self.held.h;
        let channel = c.channel_for(h, signed_tx);
        let mut p = Map::with_capacity(8);
        p.insert("action".into(), "open".into());
        p.insert("type".into(), "transaction".into());
        if let Ok((id, _)) = &channel {
            p.insert("channelId".into(), id.to_string().into());
        }
        p.insert("transaction".into(), signed_tx.into());
        p.insert("authorizedSigner".into(), c.signer.text().into());
        if let Ok((_, Some(descriptor))) = &channel {
            p.insert("descriptor".into(), descriptor.clone());
        }
        p.insert("cumulativeAmount".into(), "0".into());
        p.insert("signature".into(), signature.into());
        let source = did_pkh(c.params.chain_id, c.payer.text());
        let credential = Credential::new(Cow::Borrowed(&*self.held.echo), Some(source), Value::Object(p))?;
        opened(&credential)?;
        channel?;
        Ok(credential)
    }
}

impl Unsigned for Opening<'_> {
    fn request(&self) -> Result<Option<SigningRequest>, Refusal> {
        Ok(Some(self.request.clone()))
    }

    /// With the signed transaction alone, the voucher of cumulative amount 0 over the channel it opens, once the
    /// transaction completes a credential with the shortest voucher signature; with both answers, the credential,
    /// its voucher signature 1 to 8192 bytes of `0x` hex (`mpp/credential-malformed` otherwise).
    fn complete(&self, answers: &[Answer], _chosen: &Chosen) -> Result<Completion<'_>, Refusal> {
        match answers {
            [signed] => {
                let signed = signed.as_str().ok_or_else(malformed)?;
                let credential = self.credential(signed, SHORTEST_SIGNATURE)?;
                let channel = credential.member("payload").and_then(|p| p.member("channelId"));
                let channel = channel.and_then(Value::as_str).and_then(AtrHash::parse).ok_or_else(malformed)?;
                let params = params_of(Some(self.held.checked.value()))?;
                let escrow = params.escrow().ok_or(Refusal::mpp(Reason::EscrowMalformed))?;
                let id = B256::from(*channel.as_bytes());
                let typed = escrow_voucher_typed_data(params.voucher_domain(), params.chain_id, &escrow, &id, 0);
                Ok(Completion::Next(SigningRequest::Eip712 { typed_data: typed }))
            }
            [signed, voucher] => {
                let (Some(signed), Some(voucher)) = (signed.as_str(), voucher.as_str()) else {
                    return Err(malformed());
                };
                let credential = self.credential(signed, voucher)?;
                if !is_hex_bytes(voucher, 1, MAX_SIGNATURE) {
                    return Err(malformed());
                }
                Ok(credential.completion())
            }
            _ => Err(malformed()),
        }
    }
}
