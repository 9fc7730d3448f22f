//! The one SEP-41 `transfer(from, to, amount)` a Soroban payment invokes, read from an envelope: the operation's
//! call, the address-credential authorization entry of its `from` (CAP-46; CAP-71's address-bound V2 alike), the
//! payment that entry signs (its root invocation, which must be one transfer with no sub-invocations), and whether the
//! operation invokes exactly that. Then the entry's preimage with the expiration ledger the build sets, and the
//! envelope the payer's signature completes.

use sha2::{Digest, Sha256};
use stellar_xdr::{
    HostFunction, InvokeContractArgs, InvokeHostFunctionOp, Limits, MuxedAccount, OperationBody, ReadXdr, ScAddress,
    ScVal, SorobanAddressCredentials, SorobanAuthorizationEntry, SorobanAuthorizedFunction, SorobanCredentials,
    TransactionEnvelope, Uint256, WriteXdr,
};

use super::strkey::{self, Strkey};
use super::xdr::{decode_envelope, envelope_bytes};
use super::{MAX_XDR, Network, stellar};
use crate::refusal::{Reason, Refusal};

/// The address-credential entry's values a payment's reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    /// The entry's address (the transfer's `from`).
    pub address: String,
    /// The entry's nonce.
    pub nonce: i64,
    /// The entry's signature expiration ledger, as the envelope holds it.
    pub expiration: u32,
    /// Whether the credentials are CAP-71's address-bound V2.
    pub v2: bool,
    /// SHA-256 of the entry's preimage at that expiration.
    pub preimage_sha256: [u8; 32],
}

/// A transfer as a payment reads it: the token contract, `from` (the operation's), `to` with its base account and
/// muxed id, and the amount; with the payer's entry where one signs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    /// The token contract, a C strkey.
    pub asset: String,
    /// The transfer's `from`, as the operation names it.
    pub source: String,
    /// The transfer's `to`.
    pub to: String,
    /// `to`'s G account (a contract's own strkey).
    pub to_base: String,
    /// `to`'s muxed id, when it is an M account.
    pub to_id: Option<u64>,
    /// The amount.
    pub amount: i128,
    /// The payer's address-credential entry (none for a transfer the transaction's source account authorized).
    pub auth: Option<Auth>,
}

/// One `transfer` call's parts.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    asset: [u8; 32],
    source: Strkey,
    to: Strkey,
    amount: i128,
}

/// A Soroban address as a strkey: an account, a contract or a muxed account; `None` for the other kinds.
fn strkey_of(address: &ScAddress) -> Option<Strkey> {
    match address {
        ScAddress::Account(id) => {
            let stellar_xdr::PublicKey::PublicKeyTypeEd25519(Uint256(key)) = &id.0;
            Some(Strkey::Account(*key))
        }
        ScAddress::Contract(id) => Some(Strkey::Contract(id.0.0)),
        ScAddress::MuxedAccount(m) => Some(Strkey::Muxed { key: m.ed25519.0, id: m.id }),
        _ => None,
    }
}

/// A contract call's `transfer(from, to, amount)` on a contract: both addresses of a strkey kind, the amount an i128.
fn transfer_of(call: &InvokeContractArgs) -> Option<Transfer> {
    let ScAddress::Contract(asset) = &call.contract_address else { return None };
    if call.function_name.0.as_slice() != b"transfer" {
        return None;
    }
    let [ScVal::Address(from), ScVal::Address(to), ScVal::I128(amount)] = call.args.as_slice() else { return None };
    let amount = (i128::from(amount.hi) << 64) | i128::from(amount.lo);
    Some(Transfer { asset: asset.0.0, source: strkey_of(from)?, to: strkey_of(to)?, amount })
}

/// The envelope's one operation, an `InvokeHostFunction` calling `transfer(from, to, amount)` on a contract, with
/// that call and transfer; `stellar/not-one-transfer` for anything else, a v0 envelope `stellar/tx-malformed`.
fn operation_of(
    envelope: &TransactionEnvelope,
) -> Result<(&InvokeHostFunctionOp, &InvokeContractArgs, Transfer), Refusal> {
    let tx = match envelope {
        TransactionEnvelope::Tx(e) => &e.tx,
        TransactionEnvelope::TxFeeBump(e) => {
            let stellar_xdr::FeeBumpTransactionInnerTx::Tx(inner) = &e.tx.inner_tx;
            &inner.tx
        }
        TransactionEnvelope::TxV0(_) => return Err(stellar(Reason::TxMalformed)),
    };
    let not_one = || stellar(Reason::NotOneTransfer);
    let [op] = tx.operations.as_slice() else { return Err(not_one()) };
    let OperationBody::InvokeHostFunction(invoke) = &op.body else { return Err(not_one()) };
    let HostFunction::InvokeContract(call) = &invoke.host_function else { return Err(not_one()) };
    let transfer = transfer_of(call).ok_or_else(not_one)?;
    Ok((invoke, call, transfer))
}

/// The address credentials of an entry of kind address or address V2 (with whether V2); `None` for others.
fn address_credentials(entry: &SorobanAuthorizationEntry) -> Option<(&SorobanAddressCredentials, bool)> {
    match &entry.credentials {
        SorobanCredentials::Address(c) => Some((c, false)),
        SorobanCredentials::AddressV2(c) => Some((c, true)),
        _ => None,
    }
}

/// Whether the entry's root invocation is the call, with no sub-invocations.
fn carries(call: &InvokeContractArgs, entry: &SorobanAuthorizationEntry) -> bool {
    let root = &entry.root_invocation;
    matches!(&root.function, SorobanAuthorizedFunction::ContractFn(c) if c == call) && root.sub_invocations.is_empty()
}

/// The preimage an address credential's signature commits to at `expiration`: `ENVELOPE_TYPE_SOROBAN_AUTHORIZATION`
/// (9), the network id, the nonce, the expiration ledger and the root invocation; for V2,
/// `ENVELOPE_TYPE_SOROBAN_AUTHORIZATION_WITH_ADDRESS` (10) with the address before the invocation.
fn preimage(network: Network, entry: &SorobanAuthorizationEntry, expiration: u32) -> Result<Vec<u8>, Refusal> {
    let (c, v2) = address_credentials(entry).ok_or(stellar(Reason::NoAddressAuth))?;
    let malformed = |_| stellar(Reason::TxMalformed);
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&(if v2 { 10u32 } else { 9 }).to_be_bytes());
    out.extend_from_slice(&network.id());
    out.extend_from_slice(&c.nonce.to_be_bytes());
    out.extend_from_slice(&expiration.to_be_bytes());
    if v2 {
        out.extend(c.address.to_xdr(Limits::none()).map_err(malformed)?);
    }
    out.extend(entry.root_invocation.to_xdr(Limits::none()).map_err(malformed)?);
    Ok(out)
}

/// The envelope's transfer as its payer's entry signs it.
#[derive(Debug, Clone)]
struct Parsed {
    envelope: TransactionEnvelope,
    entry: usize,
    payment: Payment,
    agrees: bool,
}

/// The envelope's one transfer and the one address-credential entry (V1 or V2) whose address is its `from`; the
/// payment's contract, `to` and amount are that entry's root invocation's, which must be one transfer with no
/// sub-invocations (`stellar/not-one-transfer`). With `landed` (a transaction the ledger recorded) the entry is the
/// first of `from` whose root invocation is the operation's call, as the host authenticates it; with no such entry,
/// or without `landed`, `from` must have exactly one (`stellar/no-address-auth`).
fn parse(envelope: TransactionEnvelope, network: Network, landed: bool) -> Result<Parsed, Refusal> {
    let (invoke, call, transfer) = operation_of(&envelope)?;
    let from = transfer.source;
    let of_from: Vec<(usize, &SorobanAuthorizationEntry)> = (invoke.auth.iter().enumerate())
        .filter(|(_, e)| address_credentials(e).and_then(|(c, _)| strkey_of(&c.address)) == Some(from))
        .collect();
    let used = landed.then(|| of_from.iter().copied().find(|(_, e)| carries(call, e))).flatten();
    let (index, entry) = match (used, of_from.as_slice()) {
        (Some(found), _) => found,
        (None, [one]) => *one,
        _ => return Err(stellar(Reason::NoAddressAuth)),
    };
    let not_one = || stellar(Reason::NotOneTransfer);
    let root = &entry.root_invocation;
    let SorobanAuthorizedFunction::ContractFn(signed_call) = &root.function else { return Err(not_one()) };
    if !root.sub_invocations.is_empty() {
        return Err(not_one());
    }
    let signed = transfer_of(signed_call).ok_or_else(not_one)?;
    let agrees = signed_call == call;
    let (c, v2) = address_credentials(entry).ok_or(stellar(Reason::NoAddressAuth))?;
    let digest: [u8; 32] = Sha256::digest(preimage(network, entry, c.signature_expiration_ledger)?).into();
    let auth = Auth {
        address: from.to_text(),
        nonce: c.nonce,
        expiration: c.signature_expiration_ledger,
        v2,
        preimage_sha256: digest,
    };
    let payment = Payment {
        asset: Strkey::Contract(signed.asset).to_text(),
        source: from.to_text(),
        to: signed.to.to_text(),
        to_base: signed.to.base().unwrap_or(signed.to).to_text(),
        to_id: signed.to.muxed_id(),
        amount: signed.amount,
        auth: Some(auth),
    };
    Ok(Parsed { envelope, entry: index, payment, agrees })
}

/// The payment the payer's entry of an envelope's text signs, and whether the operation invokes exactly that: the
/// text's checks ([`envelope_bytes`]), the envelope's ([`decode_envelope`]), then the transfer's. With `landed`, the
/// entry is the first of `from` that carries the operation's call; without it, `from` must have exactly one.
pub fn read_signed_transfer(
    text: Option<&serde_json::Value>,
    network: Option<&str>,
    landed: bool,
) -> Result<(Payment, bool), Refusal> {
    let bytes = envelope_bytes(text, network)?;
    let network = network.and_then(Network::parse).ok_or(stellar(Reason::NetworkMalformed))?;
    let parsed = parse(decode_envelope(&bytes)?, network, landed)?;
    Ok((parsed.payment, parsed.agrees))
}

/// The transfer of a landed transaction whose payer authorized it as the transaction's source account: `from`, a G
/// account, has no address-credential entry, is the source of the transaction (the inner one of a fee bump) and of
/// its operation where the operation names one, and an entry of source-account credentials has the operation's call
/// as its root invocation with no sub-invocations. The transaction's signatures cover it whole, `to` included.
/// Anything else is `stellar/no-address-auth`.
pub fn read_source_transfer(text: Option<&serde_json::Value>, network: Option<&str>) -> Result<Payment, Refusal> {
    let bytes = envelope_bytes(text, network)?;
    let envelope = decode_envelope(&bytes)?;
    let (invoke, call, t) = operation_of(&envelope)?;
    let no_auth = || stellar(Reason::NoAddressAuth);
    let Strkey::Account(key) = t.source else { return Err(no_auth()) };
    let tx = match &envelope {
        TransactionEnvelope::Tx(e) => &e.tx,
        TransactionEnvelope::TxFeeBump(e) => {
            let stellar_xdr::FeeBumpTransactionInnerTx::Tx(inner) = &e.tx.inner_tx;
            &inner.tx
        }
        TransactionEnvelope::TxV0(_) => return Err(stellar(Reason::TxMalformed)),
    };
    let op_source = tx.operations.first().and_then(|op| op.source_account.as_ref());
    if key_of(&tx.source_account) != key || op_source.is_some_and(|m| key_of(m) != key) {
        return Err(no_auth());
    }
    let address_entry =
        invoke.auth.iter().any(|e| address_credentials(e).and_then(|(c, _)| strkey_of(&c.address)) == Some(t.source));
    let source_entry =
        invoke.auth.iter().any(|e| matches!(e.credentials, SorobanCredentials::SourceAccount) && carries(call, e));
    if address_entry || !source_entry {
        return Err(no_auth());
    }
    Ok(Payment {
        asset: Strkey::Contract(t.asset).to_text(),
        source: t.source.to_text(),
        to: t.to.to_text(),
        to_base: t.to.base().unwrap_or(t.to).to_text(),
        to_id: t.to.muxed_id(),
        amount: t.amount,
        auth: None,
    })
}

/// A muxed account's Ed25519 key, its id left out.
fn key_of(account: &MuxedAccount) -> [u8; 32] {
    match account {
        MuxedAccount::Ed25519(Uint256(key)) => *key,
        MuxedAccount::MuxedEd25519(m) => m.ed25519.0,
    }
}

/// The bytes of a simulated envelope's text, checked before the envelope is parsed: [`envelope_bytes`]'s checks, a
/// v1 transaction envelope (not a fee bump, not v0), and an expiration that is a ledger sequence (0 to 2^32 - 1),
/// each else `stellar/tx-malformed`.
pub fn signing_input(
    text: Option<&serde_json::Value>,
    network: Option<&str>,
    expiration: i128,
) -> Result<(Vec<u8>, u32), Refusal> {
    let bytes = envelope_bytes(text, network)?;
    if !bytes.starts_with(&[0, 0, 0, 2]) {
        return Err(stellar(Reason::TxMalformed));
    }
    let expiration = u32::try_from(expiration).map_err(|_| stellar(Reason::TxMalformed))?;
    Ok((bytes, expiration))
}

/// What the payer signs, from the buyer's simulated envelope: the payment the `from` entry signs, whether the
/// operation invokes exactly that, and that entry's preimage with its expiration ledger set; and the envelope the
/// signature completes.
#[derive(Debug, Clone)]
pub struct Signing {
    /// The payment the entry signs.
    pub payment: Payment,
    /// Whether the operation invokes exactly the signed invocation.
    pub agrees: bool,
    /// The preimage the payer signs (its SHA-256, with the payer's ed25519 key).
    pub preimage: Vec<u8>,
    parsed: Parsed,
    expiration: u32,
    zero_source: bool,
    key: [u8; 32],
}

/// The signing of a simulated envelope's text at `expiration` ([`signing_input`]'s checks first); with
/// `zero_source`, the completed envelope's source account is the all-zeros account (MPP's sponsored fee). A `from`
/// that is not a G account is `stellar/no-address-auth`.
pub fn signing_for(
    text: Option<&serde_json::Value>,
    network: Option<&str>,
    expiration: i128,
    zero_source: bool,
) -> Result<Signing, Refusal> {
    let (bytes, expiration) = signing_input(text, network, expiration)?;
    let network = network.and_then(Network::parse).ok_or(stellar(Reason::NetworkMalformed))?;
    let parsed = parse(decode_envelope(&bytes)?, network, false)?;
    let key = strkey::account(&parsed.payment.source).ok_or(stellar(Reason::NoAddressAuth))?;
    let entry = entry_of(&parsed.envelope, parsed.entry).ok_or(stellar(Reason::NoAddressAuth))?;
    let preimage = preimage(network, entry, expiration)?;
    Ok(Signing {
        payment: parsed.payment.clone(),
        agrees: parsed.agrees,
        preimage,
        parsed,
        expiration,
        zero_source,
        key,
    })
}

fn entry_of(envelope: &TransactionEnvelope, index: usize) -> Option<&SorobanAuthorizationEntry> {
    let TransactionEnvelope::Tx(e) = envelope else { return None };
    let OperationBody::InvokeHostFunction(op) = &e.tx.operations.first()?.body else { return None };
    op.auth.get(index)
}

/// `vec [map {public_key: bytes key, signature: bytes signature}]`, an account's signature as an ScVal.
fn signature_val(key: &[u8; 32], signature: &[u8; 64]) -> Result<ScVal, Refusal> {
    fn word(out: &mut Vec<u8>, n: u32) {
        out.extend_from_slice(&n.to_be_bytes());
    }
    fn padded(out: &mut Vec<u8>, kind: u32, data: &[u8]) {
        word(out, kind);
        word(out, u32::try_from(data.len()).unwrap_or(u32::MAX));
        out.extend_from_slice(data);
        out.resize(out.len() + (4 - data.len() % 4) % 4, 0);
    }
    let mut out = Vec::with_capacity(160);
    for n in [16, 1, 1, 17, 1, 2] {
        word(&mut out, n);
    }
    padded(&mut out, 15, b"public_key");
    padded(&mut out, 13, key);
    padded(&mut out, 15, b"signature");
    padded(&mut out, 13, signature);
    ScVal::from_xdr(out, Limits::none()).map_err(|_| stellar(Reason::TxMalformed))
}

impl Signing {
    /// The `stellar-auth` request: `{preimage}`, `0x` hex of the entry's preimage, whose SHA-256 the payer signs.
    pub fn request(&self) -> crate::signer::SigningRequest {
        let mut fields = serde_json::Map::with_capacity(1);
        fields.insert("preimage".into(), serde_json::Value::String(crate::codec::to_hex(&self.preimage)));
        crate::signer::SigningRequest::StellarAuth(fields)
    }

    /// The base64 envelope with the entry's expiration set and the 64-byte signature written as an account's
    /// (`stellar/tx-malformed` for a signature of another length), without the envelope's size bound.
    pub fn written(&self, signature: &[u8]) -> Result<String, Refusal> {
        let malformed = || stellar(Reason::TxMalformed);
        let signature: &[u8; 64] = signature.try_into().map_err(|_| malformed())?;
        let value = signature_val(&self.key, signature)?;
        let mut envelope = self.parsed.envelope.clone();
        let TransactionEnvelope::Tx(e) = &mut envelope else { return Err(malformed()) };
        let mut operations = e.tx.operations.to_vec();
        let OperationBody::InvokeHostFunction(op) = &mut operations.first_mut().ok_or_else(malformed)?.body else {
            return Err(malformed());
        };
        let mut auth = op.auth.to_vec();
        let entry = auth.get_mut(self.parsed.entry).ok_or_else(malformed)?;
        match &mut entry.credentials {
            SorobanCredentials::Address(c) | SorobanCredentials::AddressV2(c) => {
                c.signature_expiration_ledger = self.expiration;
                c.signature = value;
            }
            _ => return Err(malformed()),
        }
        op.auth = auth.try_into().map_err(|_| malformed())?;
        e.tx.operations = operations.try_into().map_err(|_| malformed())?;
        if self.zero_source {
            e.tx.source_account = MuxedAccount::Ed25519(Uint256([0; 32]));
        }
        let bytes = envelope.to_xdr(Limits::none()).map_err(|_| malformed())?;
        Ok(crate::codec::b64_encode(&bytes))
    }

    /// Whether the signed transfer pays what the offer asks, in the reference's order: the signed `to` is `to`
    /// (`stellar/carrier-mismatch`), the operation invokes exactly the signed invocation (`stellar/not-one-transfer`),
    /// then its contract is `asset` (`stellar/asset-mismatch`), its amount `amount` (`stellar/amount-mismatch`) and
    /// its `from` the payer (`stellar/payer-mismatch`).
    pub fn pays(&self, to: &str, asset: &str, amount: Option<i128>, payer: &str) -> Result<(), Refusal> {
        let p = &self.payment;
        let reason = if p.to != to {
            Reason::CarrierMismatch
        } else if !self.agrees {
            Reason::NotOneTransfer
        } else if p.asset != asset {
            Reason::AssetMismatch
        } else if Some(p.amount) != amount {
            Reason::AmountMismatch
        } else if p.source != payer {
            Reason::PayerMismatch
        } else {
            return Ok(());
        };
        Err(stellar(reason))
    }

    /// [`Signing::written`], refused `stellar/tx-too-large` past 8,192 characters, as the read refuses it.
    pub fn complete(&self, signature: &[u8]) -> Result<String, Refusal> {
        let text = self.written(signature)?;
        if text.len() > MAX_XDR { Err(stellar(Reason::TxTooLarge)) } else { Ok(text) }
    }
}
