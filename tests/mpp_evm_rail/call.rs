//! `mpp/charge/evm/transaction` (MV11) and `mpp/charge/evm/hash` (MV12): the ERC-20 transfer as an EIP-1559
//! transaction, signed or broadcast.

use alloy_primitives::{Address, U256};
use serde_json::Value;
use sha2::{Digest, Sha256};
use terms::rail::evm::request::Call;
use terms::rail::evm::transaction::{self, Fees, Mismatch, SignedTransaction};
use terms::{Reason, SigningRequest};

use super::{b256, lower, peer, sign, text, vectors};

// mpp/charge/evm/transaction and mpp/charge/evm/hash

struct Mv11 {
    file: Value,
    chain_id: u64,
    call: Call,
    fees: Fees,
}

fn mv11() -> Mv11 {
    let file = vectors("mpp-charge-evm-transaction.json");
    let request: Value = serde_json::from_str(text(&file["fixed"]["R_ENoTypes"])).unwrap();
    let t = &file["MV11"]["transaction"];
    let call = transaction::erc20_transfer(
        text(&request["currency"]),
        text(&request["recipient"]),
        text(&request["amount"]).parse().unwrap(),
    )
    .unwrap();
    assert_eq!(call.to, text(&t["to"]));
    let fees = Fees {
        nonce: t["nonce"].as_u64().unwrap(),
        gas_limit: t["gas"].as_u64().unwrap(),
        max_fee_per_gas: text(&t["maxFeePerGas"]).parse().unwrap(),
        max_priority_fee_per_gas: text(&t["maxPriorityFeePerGas"]).parse().unwrap(),
    };
    let chain_id = t["chainId"].as_u64().unwrap();
    assert_eq!(request["methodDetails"]["chainId"].as_u64(), Some(chain_id));
    Mv11 { file, chain_id, call, fees }
}

/// The Anvil key's signed transaction of a call.
fn signed_raw(m: &Mv11, chain_id: u64, call: &Call, fees: &Fees) -> Vec<u8> {
    let tx = transaction::transaction(chain_id, call, fees).unwrap();
    let signature = sign(&m.file, &transaction::signing_hash(&tx));
    transaction::encode_signed(&tx, &::hex::decode(&signature[2..]).unwrap()).unwrap()
}

#[test]
fn mv11_the_transfer_calldata_and_the_signed_transaction() {
    let m = mv11();
    let mv11 = &m.file["MV11"];
    assert_eq!(m.call.data, text(&mv11["expectCalldata"]));
    let raw = signed_raw(&m, m.chain_id, &m.call, &m.fees);
    assert_eq!(raw.len() as u64, mv11["expectRawLength"].as_u64().unwrap());
    assert_eq!(format!("0x{}", ::hex::encode(Sha256::digest(&raw))), text(&mv11["expectRawSha256"]));
    let signed = SignedTransaction::decode(&raw).unwrap();
    assert_eq!(lower(&signed.hash()), text(&mv11["expectTxHash"]));
    assert_eq!(signed.check(m.chain_id, &m.call, Some(m.fees.nonce)), Ok(()));
    assert_eq!(signed.check(m.chain_id, &m.call, None), Ok(()));
    let payer: Address = text(&m.file["fixed"]["payer"]).parse().unwrap();
    assert_eq!(signed.signature().recover_address_from_prehash(&signed.signing_hash()).unwrap(), payer);
    // H is nowhere in what the payer signs (expectHOccurrences).
    let h = b256(&m.file["buyer"]["rows"][0]["advertised"]);
    let occurrences = raw.windows(32).filter(|w| *w == h.as_slice()).count();
    assert_eq!(occurrences as u64, mv11["expectHOccurrences"].as_u64().unwrap());
    // The signer's answer as hex reads the same.
    let answer = format!("0x{}", ::hex::encode(&raw));
    assert_eq!(SignedTransaction::decode_hex(&answer).unwrap(), signed);
    assert_eq!(SignedTransaction::decode_hex(&answer.to_uppercase().replacen("0X", "0x", 1)).unwrap(), signed);
}

#[test]
fn mv11_the_request_is_the_references_evm_call() {
    let m = mv11();
    let peer = peer();
    for (broadcast, which) in [(false, "transaction"), (true, "hash")] {
        let request = SigningRequest::EvmCall { chain_id: m.chain_id, call: m.call.clone(), broadcast };
        assert_eq!(request.to_json(), peer["MV11"][which], "{which}");
        assert_eq!(serde_json::to_string(&request).unwrap(), serde_json::to_string(&peer["MV11"][which]).unwrap());
        assert_eq!(request.broadcasts(), broadcast);
    }
}

#[test]
fn an_answer_for_another_chain_nonce_token_recipient_or_amount_is_caught() {
    let m = mv11();
    let signed =
        |chain_id, call: &Call, fees: &Fees| SignedTransaction::decode(&signed_raw(&m, chain_id, call, fees)).unwrap();
    let check = |s: &SignedTransaction| s.check(m.chain_id, &m.call, Some(m.fees.nonce));
    assert_eq!(check(&signed(m.chain_id + 1, &m.call, &m.fees)), Err(Mismatch::ChainId));
    assert_eq!(check(&signed(m.chain_id, &m.call, &Fees { nonce: 1, ..m.fees })), Err(Mismatch::Nonce));
    // Without a nonce the buyer named, any nonce is the signer's.
    assert_eq!(signed(m.chain_id, &m.call, &Fees { nonce: 7, ..m.fees }).check(m.chain_id, &m.call, None), Ok(()));
    let amount = U256::from(10_000u64);
    let recipient = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
    let other_recipient =
        transaction::erc20_transfer(&m.call.to, "0x8Ba1f109551bD432803012645Ac136ddd64DBA72", amount).unwrap();
    let other_amount = transaction::erc20_transfer(&m.call.to, recipient, amount + U256::from(1u8)).unwrap();
    let other_token = Call { to: "0x0000000000000000000000000000000000000001".into(), data: m.call.data.clone() };
    for call in [other_recipient, other_amount, other_token] {
        assert_eq!(check(&signed(m.chain_id, &call, &m.fees)), Err(Mismatch::Call), "{call:?}");
    }
    // The destination compares as an address, in any case.
    let lower_case = Call { to: m.call.to.to_lowercase(), data: m.call.data.clone() };
    assert_eq!(signed(m.chain_id, &lower_case, &m.fees).check(m.chain_id, &m.call, None), Ok(()));
    // Each mismatch has its reason in the rail's namespace.
    let codes: Vec<String> = [Mismatch::ChainId, Mismatch::Nonce, Mismatch::Call]
        .into_iter()
        .map(|x| terms::Refusal::evm(x.reason()).code())
        .collect();
    assert_eq!(codes, ["evm/chain-mismatch", "evm/nonce-mismatch", "evm/call-mismatch"]);
    assert_eq!(Mismatch::Call.reason(), Reason::CallMismatch);
}

#[test]
fn a_signed_transaction_that_is_not_one_eip1559_transaction_is_unreadable() {
    let m = mv11();
    let raw = signed_raw(&m, m.chain_id, &m.call, &m.fees);
    let mut trailing = raw.clone();
    trailing.push(0);
    let mut legacy_type = raw.clone();
    legacy_type[0] = 0x01;
    let mut cut = raw.clone();
    cut.truncate(raw.len() - 1);
    let oversized = vec![0x02; transaction::MAX_SIGNED_TRANSACTION_BYTES + 1];
    for bad in [&trailing[..], &legacy_type, &cut, &raw[1..], &[], &[0x02], &oversized] {
        assert_eq!(
            SignedTransaction::decode(bad),
            Err(transaction::Unreadable),
            "{}",
            ::hex::encode(&bad[..bad.len().min(8)])
        );
    }
    for bad in
        ["", "0x", "02f8", "0x0", "0xzz", &format!("0x{}", "00".repeat(transaction::MAX_SIGNED_TRANSACTION_BYTES + 1))]
    {
        assert!(SignedTransaction::decode_hex(bad).is_err(), "{}", &bad[..bad.len().min(8)]);
    }
    // Every truncation is refused, and every one-byte change is refused or reads as another transaction, never
    // panicking.
    let original = SignedTransaction::decode(&raw).unwrap();
    for n in 0..raw.len() {
        assert!(SignedTransaction::decode(&raw[..n]).is_err(), "cut at {n}");
        for x in [0x01, 0x7f, 0x80, 0xff] {
            let mut changed = raw.clone();
            changed[n] ^= x;
            if let Ok(other) = SignedTransaction::decode(&changed) {
                assert_ne!(other, original, "byte {n} ^ {x:#x}");
            }
        }
    }
    // A call that is not an address and hex data builds no transaction; a signature that is not 65 bytes signs none.
    assert!(transaction::transaction(1, &Call { to: "0x12".into(), data: "0x".into() }, &m.fees).is_none());
    assert!(transaction::transaction(1, &Call { to: m.call.to.clone(), data: "0xabc".into() }, &m.fees).is_none());
    let tx = transaction::transaction(m.chain_id, &m.call, &m.fees).unwrap();
    assert!(transaction::encode_signed(&tx, &[0u8; 64]).is_none());
    assert!(transaction::erc20_transfer("0x12", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", U256::ZERO).is_none());
    assert!(transaction::erc20_transfer(&m.call.to, "209693Bc6afc0C5328bA36FaF03C514EF312287C", U256::ZERO).is_none());
}

#[test]
fn mv12_the_broadcast_answer_is_a_32_byte_hash_and_nothing_else() {
    let file = vectors("mpp-charge-evm-hash.json");
    let hash = text(&file["MV12"]["hash"]);
    assert_eq!(transaction::transaction_hash(hash).map(|h| lower(&h)), Some(hash.to_owned()));
    // MV12's hash is MV11's transaction: what the signer broadcast.
    assert_eq!(hash, text(&vectors("mpp-charge-evm-transaction.json")["MV11"]["expectTxHash"]));
    assert!(transaction::transaction_hash(&hash.to_uppercase().replacen("0X", "0x", 1)).is_some());
    let raw = signed_raw(&mv11(), 84532, &mv11().call, &mv11().fees);
    let not_hashes = [
        String::new(),
        hash[2..].to_owned(),
        format!("{hash}00"),
        hash[..65].to_owned(),
        format!("0X{}", &hash[2..]),
        format!("{}g", &hash[..65]),
        format!(" {hash}"),
        format!("0x{}", ::hex::encode(&raw)),
    ];
    for bad in &not_hashes {
        assert_eq!(transaction::transaction_hash(bad), None, "{bad}");
    }
}
