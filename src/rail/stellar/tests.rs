//! The rail's refusals of envelopes the vector files do not hold, each made from V2's simulated envelope
//! (`x402-exact-stellar.json`) changed in one way with `stellar-xdr`'s own types.

use serde_json::Value;
use stellar_xdr::{
    BumpSequenceOp, FeeBumpTransaction, FeeBumpTransactionEnvelope, FeeBumpTransactionExt, FeeBumpTransactionInnerTx,
    Limits, MuxedAccount, Operation, OperationBody, ReadXdr, ScSymbol, SequenceNumber, SorobanAddressCredentials,
    SorobanAddressCredentialsWithDelegates, SorobanAuthorizationEntry, SorobanCredentials, TransactionEnvelope,
    Uint256, WriteXdr,
};

use super::{read_signed_transfer, read_source_transfer, signing_for};
use crate::codec::{b64_decode, b64_encode};

fn vector() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/x402-exact-stellar.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// V2's simulated envelope, as `stellar-xdr` reads it.
fn simulated() -> TransactionEnvelope {
    let text = vector()["V2"]["simulatedXdr"].as_str().unwrap().to_owned();
    TransactionEnvelope::from_xdr(b64_decode(&text).unwrap(), Limits::none()).unwrap()
}

fn text(e: &TransactionEnvelope) -> Value {
    Value::String(b64_encode(&e.to_xdr(Limits::none()).unwrap()))
}

/// The envelope with its one operation's authorization entries changed.
fn with_auth(f: impl FnOnce(&mut Vec<SorobanAuthorizationEntry>)) -> TransactionEnvelope {
    with_ops(|ops| {
        let OperationBody::InvokeHostFunction(op) = &mut ops[0].body else { panic!("not an invoke") };
        let mut auth = op.auth.to_vec();
        f(&mut auth);
        op.auth = auth.try_into().unwrap();
    })
}

fn with_ops(f: impl FnOnce(&mut Vec<Operation>)) -> TransactionEnvelope {
    let mut e = simulated();
    let TransactionEnvelope::Tx(v1) = &mut e else { panic!("not v1") };
    let mut ops = v1.tx.operations.to_vec();
    f(&mut ops);
    v1.tx.operations = ops.try_into().unwrap();
    e
}

fn read(e: &TransactionEnvelope, landed: bool) -> Result<bool, String> {
    read_signed_transfer(Some(&text(e)), Some("stellar:testnet"), landed)
        .map(|(_, agrees)| agrees)
        .map_err(|r| r.code())
}

fn sign(e: &TransactionEnvelope) -> Result<(), String> {
    signing_for(Some(&text(e)), Some("stellar:testnet"), 1000, false).map(drop).map_err(|r| r.code())
}

fn address(entry: &SorobanAuthorizationEntry) -> SorobanAddressCredentials {
    match &entry.credentials {
        SorobanCredentials::Address(c) => c.clone(),
        _ => panic!("not an address entry"),
    }
}

#[test]
fn the_simulated_envelope_reads_and_signs() {
    assert_eq!(read(&simulated(), false), Ok(true));
    assert_eq!(sign(&simulated()), Ok(()));
}

#[test]
fn two_entries_of_the_payer_are_no_address_auth_unless_landed_and_one_carries_the_call() {
    let twice = with_auth(|a| a.push(a[0].clone()));
    assert_eq!(read(&twice, false), Err("stellar/no-address-auth".into()));
    assert_eq!(sign(&twice), Err("stellar/no-address-auth".into()));
    // Landed: the host uses the first of the payer's entries that carries the call.
    assert_eq!(read(&twice, true), Ok(true));
}

#[test]
fn an_entry_of_other_credentials_is_not_the_payers() {
    let source = with_auth(|a| a[0].credentials = SorobanCredentials::SourceAccount);
    assert_eq!(read(&source, false), Err("stellar/no-address-auth".into()));
    let delegated = with_auth(|a| {
        let c = address(&a[0]);
        a[0].credentials = SorobanCredentials::AddressWithDelegates(SorobanAddressCredentialsWithDelegates {
            address_credentials: c,
            delegates: Vec::new().try_into().unwrap(),
        });
    });
    assert_eq!(read(&delegated, false), Err("stellar/no-address-auth".into()));
    let none = with_auth(Vec::clear);
    assert_eq!(read(&none, false), Err("stellar/no-address-auth".into()));
}

#[test]
fn anything_but_one_transfer_is_refused() {
    let two = with_ops(|ops| ops.push(ops[0].clone()));
    assert_eq!(read(&two, false), Err("stellar/not-one-transfer".into()));
    let bump = with_ops(|ops| {
        ops[0].body = OperationBody::BumpSequence(BumpSequenceOp { bump_to: SequenceNumber(1) });
    });
    assert_eq!(read(&bump, false), Err("stellar/not-one-transfer".into()));
    // The entry signs `approve`, the operation `transfer`; then both `approve`.
    let approve: ScSymbol = "approve".try_into().unwrap();
    let signed_other = with_auth(|a| {
        let stellar_xdr::SorobanAuthorizedFunction::ContractFn(call) = &mut a[0].root_invocation.function else {
            panic!("not a call")
        };
        call.function_name = approve.clone();
    });
    assert_eq!(read(&signed_other, false), Err("stellar/not-one-transfer".into()));
    let both = with_ops(|ops| {
        let OperationBody::InvokeHostFunction(op) = &mut ops[0].body else { panic!() };
        let stellar_xdr::HostFunction::InvokeContract(call) = &mut op.host_function else { panic!() };
        call.function_name = approve.clone();
    });
    assert_eq!(read(&both, false), Err("stellar/not-one-transfer".into()));
}

#[test]
fn a_fee_bump_is_read_but_never_signed() {
    let TransactionEnvelope::Tx(inner) = simulated() else { panic!() };
    let bump = TransactionEnvelope::TxFeeBump(FeeBumpTransactionEnvelope {
        tx: FeeBumpTransaction {
            fee_source: MuxedAccount::Ed25519(Uint256([9; 32])),
            fee: 1000,
            inner_tx: FeeBumpTransactionInnerTx::Tx(inner),
            ext: FeeBumpTransactionExt::V0,
        },
        signatures: Vec::new().try_into().unwrap(),
    });
    assert_eq!(read(&bump, false), Ok(true));
    assert_eq!(sign(&bump), Err("stellar/tx-malformed".into()));
}

#[test]
fn a_signature_of_another_length_is_refused_and_the_sponsored_source_is_zeroed() {
    let e = simulated();
    let s = signing_for(Some(&text(&e)), Some("stellar:testnet"), 1000, true).unwrap();
    for n in [0, 32, 63, 65, 128] {
        assert_eq!(s.written(&vec![1; n]).unwrap_err().code(), "stellar/tx-malformed", "{n} bytes");
    }
    // V2's source is already the all-zeros account; a simulated envelope with another source is zeroed.
    let mut other = e;
    let TransactionEnvelope::Tx(v1) = &mut other else { panic!() };
    v1.tx.source_account = MuxedAccount::Ed25519(Uint256([5; 32]));
    let s = signing_for(Some(&text(&other)), Some("stellar:testnet"), 1000, true).unwrap();
    let signed = b64_decode(&s.written(&[1; 64]).unwrap()).unwrap();
    let TransactionEnvelope::Tx(v1) = TransactionEnvelope::from_xdr(signed, Limits::none()).unwrap() else { panic!() };
    assert_eq!(v1.tx.source_account, MuxedAccount::Ed25519(Uint256([0; 32])));
    let kept = signing_for(Some(&text(&other)), Some("stellar:testnet"), 1000, false).unwrap();
    let signed = b64_decode(&kept.written(&[1; 64]).unwrap()).unwrap();
    let TransactionEnvelope::Tx(v1) = TransactionEnvelope::from_xdr(signed, Limits::none()).unwrap() else { panic!() };
    assert_eq!(v1.tx.source_account, MuxedAccount::Ed25519(Uint256([5; 32])));
}

#[test]
fn an_expiration_past_a_ledger_sequence_is_refused() {
    let t = text(&simulated());
    for bad in [-1, i128::from(u32::MAX) + 1] {
        let got = signing_for(Some(&t), Some("stellar:testnet"), bad, false).map(drop).map_err(|r| r.code());
        assert_eq!(got, Err("stellar/tx-malformed".into()), "{bad}");
    }
}

/// A landed transfer the payer authorized as the transaction's source account: no address entry, a source-account
/// entry carrying the call, the payer the source. Anything else is no-address-auth.
#[test]
fn a_source_account_transfer_is_read_only_when_the_payer_is_the_source() {
    let payer = {
        let TransactionEnvelope::Tx(v1) = simulated() else { panic!() };
        let OperationBody::InvokeHostFunction(op) = &v1.tx.operations[0].body else { panic!() };
        let stellar_xdr::ScAddress::Account(id) = address(&op.auth[0]).address else { panic!() };
        let stellar_xdr::PublicKey::PublicKeyTypeEd25519(Uint256(k)) = id.0;
        k
    };
    let mut e = with_auth(|a| a[0].credentials = SorobanCredentials::SourceAccount);
    let read = |e: &TransactionEnvelope| read_source_transfer(Some(&text(e)), Some("stellar:testnet")).map(drop);
    assert_eq!(read(&e).map_err(|r| r.code()), Err("stellar/no-address-auth".into()));
    let TransactionEnvelope::Tx(v1) = &mut e else { panic!() };
    v1.tx.source_account = MuxedAccount::Ed25519(Uint256(payer));
    assert_eq!(read(&e).map_err(|r| r.code()), Ok(()));
    // With the payer's address entry beside it: not a source-account transfer.
    let mut both = with_auth(|a| {
        a.push(SorobanAuthorizationEntry {
            credentials: SorobanCredentials::SourceAccount,
            root_invocation: a[0].root_invocation.clone(),
        })
    });
    let TransactionEnvelope::Tx(v1) = &mut both else { panic!() };
    v1.tx.source_account = MuxedAccount::Ed25519(Uint256(payer));
    assert_eq!(read(&both).map_err(|r| r.code()), Err("stellar/no-address-auth".into()));
}
