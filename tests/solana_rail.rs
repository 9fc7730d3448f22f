#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]
//! The Solana rail against x402-exact-solana.json's own data: program ids, associated token accounts, the v0
//! message V1 decompiles (its length, first byte and SHA-256), V2's partially signed wire, and the wire decoder's
//! refusals of bytes that are not one transaction.

mod support;

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};
use terms::rail::solana::program::{self, TransferChecked};
use terms::rail::solana::{
    Instruction, Key, MAX_WIRE, Role, Version, associated_token_address, compile, decode, is_on_curve, signed_wire,
};

fn vectors() -> Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/x402-exact-solana.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn key(v: &Value) -> Key {
    Key::parse(v.as_str().unwrap()).unwrap()
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap()
}

/// V1's instructions as the vector writes them, built from `fixed`'s inputs.
fn v1_instructions(fixed: &Value) -> Vec<Instruction> {
    let token_program = key(&fixed["tokenProgram"]);
    let mint = key(&fixed["mint"]);
    let payer = key(&fixed["payer"]);
    let transfer = TransferChecked {
        token_program,
        source: associated_token_address(&payer, &token_program, &mint).unwrap(),
        mint,
        destination: associated_token_address(&key(&fixed["payTo"]), &token_program, &mint).unwrap(),
        authority: payer,
        amount: fixed["amount"].as_str().unwrap().parse().unwrap(),
        decimals: u8::try_from(fixed["decimals"].as_u64().unwrap()).unwrap(),
    };
    vec![
        program::set_compute_unit_limit(u32::try_from(fixed["computeUnitLimit"].as_u64().unwrap()).unwrap()),
        program::set_compute_unit_price(fixed["computeUnitPrice"].as_str().unwrap().parse().unwrap()),
        transfer.instruction(),
        program::memo(fixed["L"].as_str().unwrap()),
    ]
}

/// An instruction in the vector's JSON form: program, accounts with their flags, data in hex.
fn as_json(ix: &Instruction) -> Value {
    let accounts: Vec<Value> = ix
        .accounts
        .iter()
        .map(|(k, role)| {
            let (signer, writable) = match role {
                Role::Readonly => (false, false),
                Role::Writable => (false, true),
                Role::ReadonlySigner => (true, false),
                Role::WritableSigner => (true, true),
            };
            serde_json::json!({"address": k.to_base58(), "signer": signer, "writable": writable})
        })
        .collect();
    serde_json::json!({"program": ix.program.to_base58(), "accounts": accounts, "data": hex::encode(&ix.data)})
}

/// A decoded message's instructions in the vector's JSON form, each account's role read from the header.
fn decompile(tx: &terms::rail::solana::Transaction) -> Vec<Value> {
    support::solana::instructions_of(tx).iter().map(as_json).collect()
}

#[test]
fn program_ids_are_the_vectors() {
    let v = vectors();
    assert_eq!(program::TOKEN.to_base58(), v["fixed"]["tokenProgram"].as_str().unwrap());
    let programs: Vec<&str> =
        v["V1"]["instructions"].as_array().unwrap().iter().map(|ix| ix["program"].as_str().unwrap()).collect();
    assert_eq!(programs[0], program::COMPUTE_BUDGET.to_base58());
    assert_eq!(programs[3], program::MEMO_V3.to_base58());
    assert_eq!(program::SYSTEM.to_base58(), "11111111111111111111111111111111");
    for text in ["TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb", "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"] {
        let parsed = Key::parse(text).unwrap();
        assert!(parsed == program::TOKEN_2022 || parsed == program::ATA_PROGRAM);
        assert_eq!(parsed.to_base58(), text);
    }
}

#[test]
fn keys_parse_only_32_byte_base58() {
    let v = vectors();
    let payer = v["fixed"]["payer"].as_str().unwrap();
    assert_eq!(Key::parse(payer).unwrap().to_base58(), payer);
    // A character outside the alphabet, one byte short, one byte long, and the empty string are no keys.
    assert_eq!(Key::parse(&payer.replace('A', "0")), None);
    assert_eq!(Key::parse(&bs58_of(&[7u8; 31])), None);
    assert_eq!(Key::parse(&bs58_of(&[7u8; 33])), None);
    assert_eq!(Key::parse(""), None);
}

fn bs58_of(bytes: &[u8]) -> String {
    // Base58 of any length, written here so the length rule is not checked with the key's own encoder.
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut digits: Vec<u8> = Vec::new();
    for &byte in bytes {
        let mut carry = u32::from(byte);
        for d in &mut digits {
            carry += u32::from(*d) << 8;
            *d = u8::try_from(carry % 58).unwrap();
            carry /= 58;
        }
        while carry > 0 {
            digits.push(u8::try_from(carry % 58).unwrap());
            carry /= 58;
        }
    }
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    let mut out = "1".repeat(zeros);
    out.extend(digits.iter().rev().map(|d| char::from(ALPHABET[usize::from(*d)])));
    out
}

#[test]
fn associated_token_accounts_are_v1s() {
    let v = vectors();
    let fixed = &v["fixed"];
    let (program, mint) = (key(&fixed["tokenProgram"]), key(&fixed["mint"]));
    assert_eq!(associated_token_address(&key(&fixed["payer"]), &program, &mint).unwrap(), key(&v["V1"]["sourceAta"]));
    assert_eq!(
        associated_token_address(&key(&fixed["payTo"]), &program, &mint).unwrap(),
        key(&v["V1"]["destinationAta"])
    );
    // A signing key is on the curve; a program-derived address is not.
    assert!(is_on_curve(key(&fixed["payer"]).as_bytes()));
    assert!(!is_on_curve(key(&v["V1"]["sourceAta"]).as_bytes()));
}

#[test]
fn v1_compiles_to_its_message() {
    let v = vectors();
    let (fixed, v1) = (&v["fixed"], &v["V1"]);
    let instructions = v1_instructions(fixed);
    let want: Vec<Value> = v1["instructions"].as_array().unwrap().clone();
    assert_eq!(instructions.iter().map(as_json).collect::<Vec<_>>(), want);
    let message = compile(Version::V0, &key(&v1["feePayer"]), &key(&v1["blockhash"]), &instructions).unwrap();
    assert_eq!(message.len() as u64, v1["messageLength"].as_u64().unwrap());
    assert_eq!(u64::from(message[0]), v1["messageFirstByte"].as_u64().unwrap());
    // The message decodes back to V1's instructions. V1's messageSha256 is the hash of V2's wire message, whose
    // read-only accounts solders orders by their bytes (the mint last); the reference (integraledger-terms 0.4.0's
    // build_svm_message) writes @solana/kit's collation order (the mint first among them), as this does, so the
    // reference wins and the hash is not compared here (the differential cases compare the bytes with it).
    let tx = decode(&signed_wire(&message, &key(&fixed["payer"]), &[1u8; 64]).unwrap()).unwrap();
    assert_eq!(tx.message, message);
    assert_eq!(decompile(&tx), want);
    let v2 = decode(&b64(&v["V2"]["wireBase64"])).unwrap();
    assert_eq!(hex::encode(Sha256::digest(&v2.message)), v1["messageSha256"].as_str().unwrap());
    let mut ours = tx.keys.clone();
    let mut theirs = v2.keys;
    assert_ne!(ours, theirs);
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    // Within the read-only non-signers, kit's order: digits before letters, then letters ignoring case.
    let readonly: Vec<String> =
        tx.keys[tx.keys.len() - usize::from(tx.readonly_unsigned)..].iter().map(Key::to_base58).collect();
    assert_eq!(readonly[0], fixed["mint"].as_str().unwrap());
    let mut sorted = readonly.clone();
    sorted.sort_by_key(|a| a.to_ascii_lowercase());
    assert_eq!(readonly, sorted);
}

#[test]
fn v2s_wire_decodes_to_v1_and_is_rebuilt_from_its_signature() {
    let v = vectors();
    let (fixed, v1) = (&v["fixed"], &v["V1"]);
    let wire = b64(&v["V2"]["wireBase64"]);
    let tx = decode(&wire).unwrap();
    assert!(tx.versioned);
    assert!(tx.lookups.is_empty());
    assert_eq!(tx.blockhash, key(&v1["blockhash"]));
    assert_eq!(tx.signers(), [key(&v1["feePayer"]), key(&fixed["payer"])]);
    assert_eq!(hex::encode(Sha256::digest(&tx.message)), v1["messageSha256"].as_str().unwrap());
    // The fee payer's slot is empty, the payer's holds the signature V1 names by its ends.
    assert_eq!(tx.signatures[0], [0u8; 64]);
    let signature = tx.signatures[1];
    assert!(hex::encode(signature).starts_with(v1["payerSignaturePrefix"].as_str().unwrap()));
    assert!(hex::encode(signature).ends_with(v1["payerSignatureSuffix"].as_str().unwrap()));
    // Each instruction, resolved through the keys, is V1's.
    let decoded = decompile(&tx);
    assert_eq!(decoded, *v1["instructions"].as_array().unwrap());
    let t = &tx.instructions[2];
    let transfer = TransferChecked::read(*tx.program_of(t).unwrap(), &t.accounts, &t.data, &tx.keys).unwrap();
    assert_eq!(transfer.instruction(), v1_instructions(fixed)[2]);
    // The partially signed wire, rebuilt from the message and the payer's signature, is V2's byte for byte.
    assert_eq!(signed_wire(&tx.message, &key(&fixed["payer"]), &signature).unwrap(), wire);
    // A key that does not sign the message has no slot.
    assert_eq!(signed_wire(&tx.message, &key(&fixed["payTo"]), &signature).unwrap_err().code(), "svm/input-malformed");
}

#[test]
fn a_legacy_message_round_trips() {
    let v = vectors();
    let (fixed, v1) = (&v["fixed"], &v["V1"]);
    let instructions = v1_instructions(fixed);
    let v0 = compile(Version::V0, &key(&v1["feePayer"]), &key(&v1["blockhash"]), &instructions).unwrap();
    let legacy = compile(Version::Legacy, &key(&v1["feePayer"]), &key(&v1["blockhash"]), &instructions).unwrap();
    // A legacy message is the v0 one without the version byte and the empty lookup list.
    assert_eq!(legacy[..], v0[1..v0.len() - 1]);
    let wire = signed_wire(&legacy, &key(&fixed["payer"]), &[9u8; 64]).unwrap();
    let tx = decode(&wire).unwrap();
    assert!(!tx.versioned);
    assert_eq!(tx.message, legacy);
    assert_eq!(tx.signatures, [[0u8; 64], [9u8; 64]]);
}

#[test]
fn a_writable_program_or_fee_payer_program_is_refused() {
    let v = vectors();
    let (fixed, v1) = (&v["fixed"], &v["V1"]);
    let fee_payer = key(&v1["feePayer"]);
    let mut instructions = v1_instructions(fixed);
    instructions.push(Instruction { program: fee_payer, accounts: Vec::new(), data: Vec::new() });
    assert_eq!(
        compile(Version::V0, &fee_payer, &key(&v1["blockhash"]), &instructions).unwrap_err().code(),
        "svm/input-malformed"
    );
    let mut instructions = v1_instructions(fixed);
    instructions.push(Instruction {
        program: key(&fixed["mint"]),
        accounts: vec![(program::MEMO_V3, Role::Writable)],
        data: Vec::new(),
    });
    assert_eq!(
        compile(Version::V0, &fee_payer, &key(&v1["blockhash"]), &instructions).unwrap_err().code(),
        "svm/input-malformed"
    );
}

#[test]
fn bytes_that_are_not_one_transaction_are_refused() {
    let v = vectors();
    let wire = b64(&v["V2"]["wireBase64"]);
    let code = |bytes: &[u8]| decode(bytes).unwrap_err().code();
    let mut trailing = wire.clone();
    trailing.push(0);
    assert_eq!(code(&trailing), "svm/tx-malformed");
    assert_eq!(code(&wire[..wire.len() - 1]), "svm/tx-malformed");
    assert_eq!(code(&[]), "svm/tx-malformed");
    // One signature slot fewer than the message requires.
    let mut short = vec![1u8];
    short.extend_from_slice(&wire[1 + 64..]);
    assert_eq!(code(&short), "svm/tx-malformed");
    // The count 2 written in two bytes (0x82 0x00) is not its shortest form.
    let mut long_count = vec![0x82, 0x00];
    long_count.extend_from_slice(&wire[1..]);
    assert_eq!(code(&long_count), "svm/tx-malformed");
    // A version byte past v0.
    let mut v1 = wire.clone();
    v1[1 + 128] = 0x81;
    assert_eq!(code(&v1), "svm/tx-malformed");
    let mut large = wire.clone();
    large.resize(MAX_WIRE + 1, 0);
    assert_eq!(code(&large), "svm/tx-too-large");
}
