//! The bad input of issue 14 for `mpp/session/solana`: a signature of the wrong length (the voucher's, the session
//! proof's), a channel salt that is not H's first 8 bytes, and a voucher for another channel; and the opening's other
//! faults, in the order bound reads them. Each code is the one integraledger-terms 0.4.0 gives on the same input
//! (`bound`, `finish` and `build_within` run on it).

use serde_json::{Value, json};
use terms::pairing::ChannelHold;
use terms::rail::solana::{Instruction, Key, Version, compile, decode, signed_wire};
use terms::{Answer, BoxFuture, Declined, Options, Signer, SignerError, SigningRequest, open_channel, within};

use crate::support::solana::instructions_of;

use super::{
    ABC, b64, bound_of, credential, details_of, operator_challenge, pairing, paused, payer, placed, presented,
    seller_challenge, transact_doc,
};

/// `payload` (an open payload) with its transaction recompiled, its signatures empty, after `edit` of its
/// instructions (the channel program's `open` is at index 2).
pub(super) fn open_edited(payload: &Value, edit: impl FnOnce(&mut Vec<Instruction>)) -> Value {
    let tx = decode(&b64(&payload["transaction"])).unwrap();
    let mut instructions = instructions_of(&tx);
    edit(&mut instructions);
    let message = compile(Version::V0, &tx.keys[0], &tx.blockhash, &instructions).unwrap();
    let wire = signed_wire(&message, &tx.keys[0], &[0u8; 64]).unwrap();
    use base64::Engine as _;
    let mut out = payload.clone();
    out["transaction"] = json!(base64::engine::general_purpose::STANDARD.encode(wire));
    out
}

/// The open payload with the channel program's `open` instruction's accounts edited.
pub(super) fn open_with(payload: &Value, edit: impl FnOnce(&mut Vec<Key>)) -> Value {
    open_edited(payload, |ixs| {
        let open = ixs.iter_mut().find(|ix| ix.data.first() == Some(&1) && ix.accounts.len() >= 6).unwrap();
        let mut keys: Vec<Key> = open.accounts.iter().map(|(k, _)| *k).collect();
        edit(&mut keys);
        for ((k, _), new) in open.accounts.iter_mut().zip(keys) {
            *k = new;
        }
    })
}

fn open_index(ixs: &[Instruction]) -> usize {
    let program = Key::parse(details_of(&placed())["channelProgram"].as_str().unwrap()).unwrap();
    ixs.iter().position(|ix| ix.program == program).unwrap()
}

fn bound_with(payload: Value) -> Result<String, String> {
    bound_of(&credential(&placed(), payload))
}

/// A signer answering `ed25519-raw` with the payer's signature cut or padded to `len` bytes, in base58, and the
/// open request with `open`.
struct Cut {
    len: usize,
    open: Value,
    key: terms::SolanaSigner,
    calls: std::sync::Mutex<usize>,
}

impl Signer for Cut {
    fn account(&self) -> &str {
        self.key.account()
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        *self.calls.lock().unwrap() += 1;
        Box::pin(async move {
            if let SigningRequest::SolanaSessionOpen(_) = request {
                return Ok(Answer::new(self.open.clone()));
            }
            // A within voucher comes as a batch of one request, answered as a list.
            let (one, listed) = match request {
                SigningRequest::Batch { requests } => (&requests[0], true),
                other => (other, false),
            };
            let full = self.key.sign(one).await?;
            let mut bytes = bs58::decode(full.as_str().unwrap()).into_vec().unwrap();
            bytes.resize(self.len, 7);
            let answer = json!(bs58::encode(bytes).into_string());
            Ok(Answer::new(if listed { json!([answer]) } else { answer }))
        })
    }
}

fn cut(len: usize, open: Value) -> Cut {
    Cut { len, open, key: payer(), calls: std::sync::Mutex::new(0) }
}

fn hold() -> ChannelHold {
    open_channel(ABC, &presented(), pairing(), None).unwrap()
}

fn run_within(doc: &Value, hold: &ChannelHold, signer: &dyn Signer) -> Result<terms::Within, Declined> {
    paused().block_on(within(doc, hold, pairing(), signer, None, &Options::new()))
}

#[track_caller]
fn declined<T: std::fmt::Debug>(got: Result<T, Declined>, code: &str, detail: &str) {
    let d = got.unwrap_err();
    assert_eq!((d.code.as_str(), d.detail.as_str()), (code, detail));
}

/// A voucher signature of 63, 65 or 32 bytes, and a session proof of 31 or 32 bytes (under 64 base58 characters),
/// are `mpp/credential-malformed`: the gate drops the voucher (`signed-not-bound`), and the opening never completes.
#[test]
fn a_signature_of_the_wrong_length() {
    let doc = json!([seller_challenge("100", &hold().channel)]);
    for len in [63, 65, 32] {
        let signer = cut(len, Value::Null);
        declined(run_within(&doc, &hold(), &signer), "signed-not-bound", "mpp/credential-malformed");
        assert_eq!(*signer.calls.lock().unwrap(), 1);
    }
    let operator = Key::parse(details_of(&operator_challenge())["operator"].as_str().unwrap()).unwrap();
    let open = open_with(&presented()["payload"], |a| a[4] = operator);
    let doc = json!([operator_challenge()]);
    let link = pairing().read(&doc).unwrap().link;
    let proof = |len: usize| {
        let signer = cut(len, open.clone());
        let fetch = super::ScriptedFetch::new().script(&link, vec![super::Reply::ok(ABC)]);
        paused().block_on(terms::transact(&doc, pairing(), &signer, &fetch, &super::options()))
    };
    for len in [31, 32] {
        declined(proof(len), "signed-not-bound", "mpp/credential-malformed");
    }
    // The reference takes a proof of 64 to 88 base58 characters whatever they decode to (its piece's
    // SIGNATURE_BASE58): 47 bytes are 64 characters, and the credential completes there as here (the seller's server
    // verifies the proof).
    assert!(proof(47).is_ok());
}

/// The open's salt one bit away from H's first 8 bytes, or H's last 8 bytes, is `mpp/carrier-not-challenge`, at bound
/// and at the build's completion (the payment is never returned).
#[test]
fn a_channel_salt_that_is_not_hs_first_8_bytes() {
    for edit in [|d: &mut Vec<u8>| d[1] ^= 1, |d: &mut Vec<u8>| d[8] ^= 0x80, |d: &mut Vec<u8>| d[1..9].fill(0)] {
        let payload = open_edited(&presented()["payload"], |ixs| {
            let i = open_index(ixs);
            edit(&mut ixs[i].data);
        });
        assert_eq!(bound_with(payload.clone()), Err("mpp/carrier-not-challenge".into()));
        let wallet = super::Wallet::new(payload);
        let got = transact_doc(&json!([placed()]), &wallet);
        declined(got, "signed-not-bound", "mpp/carrier-not-challenge");
    }
    // The message recompiled without an edit is bound to H: each edit above changes the salt alone.
    let same = open_edited(&presented()["payload"], |_| {});
    assert_eq!(bound_with(same), Ok(super::file()["fixed"]["H"].as_str().unwrap().to_owned()));
}

/// A within challenge naming another channel is declined before the signer is asked; a voucher the gate would send
/// must name the held channel.
#[test]
fn a_voucher_for_another_channel() {
    let other = super::file()["plants"]["solana"]["channel"].as_str().unwrap().to_owned();
    assert_ne!(other, hold().channel);
    let doc = json!([seller_challenge("100", &other)]);
    let signer = cut(64, Value::Null);
    declined(
        run_within(&doc, &hold(), &signer),
        "no-payable-option",
        "The challenge names a channel this hold did not open.",
    );
    assert_eq!(*signer.calls.lock().unwrap(), 0);
    // A hold naming another channel than its opening opened is declined by the gate before anything is built.
    let mut h = hold();
    h.channel = other;
    let got = run_within(&json!([seller_challenge("100", &hold().channel)]), &h, &signer);
    declined(got, "signed-not-bound", "The held opening does not name the held channel.");
    assert_eq!(*signer.calls.lock().unwrap(), 0);
}

/// The opening's other faults, in bound's order, each the reference's code.
#[test]
fn the_openings_faults() {
    let p = presented()["payload"].clone();
    let with = |k: &str, v: Value| {
        let mut q = p.clone();
        if v.is_null() {
            q.as_object_mut().unwrap().remove(k);
        } else {
            q[k] = v;
        }
        q
    };
    assert_eq!(bound_with(with("transaction", json!("AAAA"))), Err("svm/tx-malformed".into()));
    assert_eq!(bound_with(with("transaction", json!("A".repeat(2000)))), Err("svm/tx-too-large".into()));
    assert_eq!(bound_with(with("transaction", Value::Null)), Err("svm/tx-malformed".into()));
    assert_eq!(bound_with(with("channelId", json!("x"))), Err("svm/channel-mismatch".into()));
    assert_eq!(
        bound_with(with("channelId", json!(details_of(&placed())["recentBlockhash"]))),
        Err("svm/channel-mismatch".into())
    );
    assert_eq!(bound_with(with("authentication", json!({}))), Err("mpp/credential-malformed".into()));
    // No open of the program, or two.
    let none = open_edited(&p, |ixs| {
        let i = open_index(ixs);
        ixs.remove(i);
    });
    assert_eq!(bound_with(none), Err("svm/open-not-found".into()));
    let two = open_edited(&p, |ixs| {
        let i = open_index(ixs);
        let again = ixs[i].clone();
        ixs.push(again);
    });
    assert_eq!(bound_with(two), Err("svm/open-not-found".into()));
    let short = open_edited(&p, |ixs| {
        let i = open_index(ixs);
        ixs[i].data.truncate(32);
    });
    assert_eq!(bound_with(short), Err("svm/open-not-found".into()));
    // The program named by the challenge must be a key.
    let c = super::with_details(&placed(), &json!({"channelProgram": "x"}));
    assert_eq!(bound_of(&credential(&c, p.clone())), Err("svm/input-malformed".into()));

    // Operator mode: authentication required, naming this challenge; the open's signer the operator.
    let op = operator_challenge();
    let id = op["id"].clone();
    let auth = |id: &Value| json!({"type": "proof", "challengeId": id, "payer": "x", "signature": "y"});
    assert_eq!(bound_of(&credential(&op, p.clone())), Err("mpp/credential-malformed".into()));
    let mut q = p.clone();
    q["authentication"] = auth(&json!("another"));
    assert_eq!(bound_of(&credential(&op, q.clone())), Err("svm/proof-not-challenge".into()));
    q["authentication"] = json!("proof");
    assert_eq!(bound_of(&credential(&op, q.clone())), Err("svm/proof-not-challenge".into()));
    q["authentication"] = auth(&id);
    assert_eq!(bound_of(&credential(&op, q.clone())), Err("svm/signer-not-operator".into()));
    let operator = Key::parse(details_of(&op)["operator"].as_str().unwrap()).unwrap();
    let mut signed_by_operator = open_with(&p, |a| a[4] = operator);
    signed_by_operator["authentication"] = auth(&id);
    assert!(bound_of(&credential(&op, signed_by_operator)).is_ok());
    // The filter: a voucher signer of another name, or operator without an operator key.
    for set in [json!({"voucherSigner": "server"}), json!({"voucherSigner": "operator", "operator": null})] {
        let c = super::with_details(&placed(), &set);
        assert_eq!(bound_of(&credential(&c, p.clone())), Err("svm/input-malformed".into()), "{set}");
    }
}

/// A within challenge over the client hold that names an operator voucher signer gives the code of the payment it
/// would build (a voucher `mpp/session-action`, the close `mpp/credential-malformed`); a cumulative amount past
/// 2^64 - 1 is `mpp/input-malformed`; each declined `offer-unreadable` before the signer is asked, as the reference's
/// `build_within` refuses them.
#[test]
fn the_within_challenges_faults() {
    let h = hold();
    let operator = super::with_details(
        &seller_challenge("100", &h.channel),
        &json!({"voucherSigner": "operator", "operator": details_of(&placed())["feePayerKey"]}),
    );
    let signer = cut(64, Value::Null);
    declined(run_within(&json!([operator]), &h, &signer), "offer-unreadable", "mpp/session-action");
    let closed = paused().block_on(within(
        &json!([operator]),
        &h,
        pairing(),
        &signer,
        Some(&terms::Refund::close()),
        &Options::new(),
    ));
    declined(closed, "offer-unreadable", "mpp/credential-malformed");
    let past = (u128::from(u64::MAX) + 1).to_string();
    declined(
        run_within(&json!([seller_challenge(&past, &h.channel)]), &h, &signer),
        "offer-unreadable",
        "mpp/input-malformed",
    );
    assert_eq!(*signer.calls.lock().unwrap(), 0);
    // 2^64 - 1 itself is signed.
    let most = u64::MAX.to_string();
    assert!(run_within(&json!([seller_challenge(&most, &h.channel)]), &h, &signer).is_ok());
}
