//! `mpp/charge/evm/transaction` and `mpp/charge/evm/hash`: the ERC-20 transfer the signer signs or broadcasts.

use libtest_mimic::Trial;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use terms::rail::evm::request::Call;
use terms::rail::evm::transaction::{Fees, encode_signed, signing_hash, transaction};
use terms::{Answer, DeclineCode, LocalSigner, SigningRequest};

use crate::support::vectors;
use crate::{
    Outcome, b2_choice, bound_of, challenge, choose, code_of, decline_of, eq, fail, finished, h, request_of, row,
    trials_of, with_request,
};

const TRANSACTION: &str = "mpp/charge/evm/transaction";
const HASH: &str = "mpp/charge/evm/hash";
const T: &str = "mpp-charge-evm-transaction.json";
const HF: &str = "mpp-charge-evm-hash.json";

pub fn trials(all: &mut Vec<Trial>) {
    trials_of(all, T, transaction_file, &["MV11"], &[]);
    let seller = "seller side: the receipt and logs a verifier reads of the hash";
    trials_of(all, HF, |_| Ok(()), &[], &[("MV12", seller)]);
    all.push(Trial::test("ours::transaction: answers for another chain id, nonce or recipient", other_answers));
    all.push(Trial::test("ours::hash: the broadcast hash completes, bound refuses no-signed-place", hash_completes));
    all.push(Trial::test("ours::hash: a broadcast answer that is not a 32-byte hash is carried as moved", hash_not_32));
}

fn call_of(request: &SigningRequest) -> (u64, Call, bool) {
    match request {
        SigningRequest::EvmCall { chain_id, call, broadcast } => (*chain_id, call.clone(), *broadcast),
        other => panic!("not evm-call: {other:?}"),
    }
}

/// The payer key's signed EIP-1559 transaction of the call, with the file's fees, as `0x` hex.
fn signed_tx(file: &Value, chain: u64, call: &Call, nonce: u64) -> String {
    let t = &file["MV11"]["transaction"];
    let fees = Fees {
        nonce,
        gas_limit: t["gas"].as_u64().unwrap(),
        max_fee_per_gas: t["maxFeePerGas"].as_str().unwrap().parse().unwrap(),
        max_priority_fee_per_gas: t["maxPriorityFeePerGas"].as_str().unwrap().parse().unwrap(),
    };
    let tx = transaction(chain, call, &fees).unwrap();
    let key = LocalSigner::from_hex(file["fixed"]["payerKey"].as_str().unwrap(), chain).unwrap();
    let sig = key.sign_digest(&signing_hash(&tx).0).unwrap();
    let raw = encode_signed(&tx, &hex::decode(&sig[2..]).unwrap()).unwrap();
    format!("0x{}", hex::encode(raw))
}

/// MV11: the pairings the challenge offers, the call, the signed transaction of it, its completion and bound.
fn transaction_file(key_name: &str) -> Outcome {
    assert_eq!(key_name, "MV11");
    let f = vectors(T);
    let mv11 = &f["MV11"];
    let b2 = &row(&f, "B2")["input"];
    let (account, now) = (b2["account"].as_str().unwrap(), crate::now_of(&f));
    let inputs = json!({"tokenDomain": {"name": "USDC", "version": "2"}, "spender": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"});
    let offered: Vec<&str> = ["mpp/charge/evm/authorization", "mpp/charge/evm/permit2", TRANSACTION, HASH]
        .into_iter()
        .filter(|id| choose(id, &b2["doc"], account, &inputs, now).is_ok())
        .collect();
    eq("pairings", json!(offered), mv11["expectPairings"].clone())?;
    let chosen = b2_choice(&f);
    let (chain, call, broadcast) = call_of(&request_of(TRANSACTION, &chosen));
    eq("chain", chain, mv11["transaction"]["chainId"].as_u64().unwrap())?;
    eq("to", call.to.as_str(), mv11["transaction"]["to"].as_str().unwrap())?;
    eq("calldata", call.data.as_str(), mv11["expectCalldata"].as_str().unwrap())?;
    eq("broadcast", broadcast, false)?;
    let raw = signed_tx(&f, chain, &call, mv11["transaction"]["nonce"].as_u64().unwrap());
    let bytes = hex::decode(&raw[2..]).unwrap();
    eq("raw length", bytes.len() as u64, mv11["expectRawLength"].as_u64().unwrap())?;
    eq(
        "raw sha256",
        format!("0x{}", hex::encode(Sha256::digest(&bytes))),
        mv11["expectRawSha256"].as_str().unwrap().to_owned(),
    )?;
    eq("tx hash", alloy_primitives::keccak256(&bytes).to_string(), mv11["expectTxHash"].as_str().unwrap().to_owned())?;
    eq("H occurrences", raw.matches(&h().to_hex()[2..]).count() as u64, mv11["expectHOccurrences"].as_u64().unwrap())?;
    let c = finished(TRANSACTION, &chosen, &[Answer::from(json!(raw))]).map_err(|d| fail(d.detail))?;
    eq("payload", c["payload"].clone(), json!({"type": "transaction", "signature": raw}))?;
    eq("bound", bound_of(TRANSACTION, &c), Err(code_of(&mv11["expectBound"])))?;
    eq("claims", crate::pairing(TRANSACTION).public_proof(), mv11["expectClaims"].as_bool().unwrap())?;
    let splits = with_request(&challenge(&f), f["fixed"]["R_ESplitsCallTypes"].as_str().unwrap());
    let mut echoed = c;
    echoed["challenge"] = splits;
    eq("splits call types", bound_of(TRANSACTION, &echoed), Err(code_of(&mv11["expectSplitsCallTypes"])))
}

/// A signed transaction for another chain, nonce (the buyer named one) or recipient is refused, in the rail's
/// namespace; an answer that is no EIP-1559 transaction is `mpp/credential-malformed`.
fn other_answers() -> Outcome {
    let f = vectors(T);
    let b2 = &row(&f, "B2")["input"];
    let chosen = choose(
        TRANSACTION,
        &b2["doc"],
        b2["account"].as_str().unwrap(),
        &json!({"accountNonce": 7}),
        crate::now_of(&f),
    )
    .unwrap();
    let (chain, call, _) = call_of(&request_of(TRANSACTION, &chosen));
    let mut other_recipient = call.clone();
    other_recipient.data =
        call.data.replace("209693bc6afc0c5328ba36faf03c514ef312287c", "8ba1f109551bd432803012645ac136ddd64dba72");
    assert_ne!(other_recipient.data, call.data);
    let cases = [
        (signed_tx(&f, chain, &call, 7), None),
        (signed_tx(&f, 1, &call, 7), Some("evm/chain-mismatch")),
        (signed_tx(&f, chain, &call, 8), Some("evm/nonce-mismatch")),
        (signed_tx(&f, chain, &other_recipient, 7), Some("evm/call-mismatch")),
        ("0x02c0".to_owned(), Some("mpp/credential-malformed")),
        ("not hex".to_owned(), Some("mpp/credential-malformed")),
    ];
    for (answer, want) in cases {
        let got = finished(TRANSACTION, &chosen, &[Answer::from(json!(answer))]);
        match want {
            None => drop(got.map_err(|d| fail(d.detail))?),
            Some(code) => {
                let d = decline_of(got, DeclineCode::SignedNotBound)?;
                eq("detail", d.detail.as_str(), code)?;
                eq("moved", d.moved.is_none(), true)?;
            }
        }
    }
    Ok(())
}

fn hash_chosen() -> terms::Chosen {
    b2_choice(&vectors(HF))
}

fn hash_completes() -> Outcome {
    let chosen = hash_chosen();
    let request = request_of(HASH, &chosen);
    let (_, _, broadcast) = call_of(&request);
    eq("broadcast", broadcast, true)?;
    eq("moves", crate::pairing(HASH).moves(&request), true)?;
    let hash = vectors(HF)["MV12"]["hash"].clone();
    let c = finished(HASH, &chosen, &[Answer::from(hash.clone())]).map_err(|d| fail(d.detail))?;
    eq("payload", c["payload"].clone(), json!({"type": "hash", "hash": hash}))?;
    eq("source", c["source"].clone(), json!("did:pkh:eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"))?;
    eq("bound", bound_of(HASH, &c), Err("mpp/no-signed-place".into()))
}

fn hash_not_32() -> Outcome {
    let chosen = hash_chosen();
    for answer in ["0x1234", "0xbd39ed4f289dde35adf490855f950b9ea337d5eeb4c1cf941c76c228e36ee29d00", "hash"] {
        let d = decline_of(finished(HASH, &chosen, &[Answer::from(json!(answer))]), DeclineCode::SignedNotBound)?;
        eq("detail", d.detail.as_str(), "mpp/credential-malformed")?;
        let moved = d.moved.ok_or_else(|| fail("nothing carried as moved"))?;
        eq("moved", moved.signed, json!(answer))?;
        eq("moved h", moved.h, h())?;
    }
    Ok(())
}
