//! Never ask a wallet to sign a payment the pairing cannot read back: over every built pairing's plant row (`B2`) of
//! the vector files, with the bytes its document advertises served (`abc`, whose hash is H) and the payer's account
//! varied (another EIP-155 chain, another namespace, the address in another case), `transact` with an honest wallet
//! (the file's payer key) either declines before any signer call, or ends with a payment the pairing reads H back
//! from (`check`), or the wallet itself could not sign the kind asked (`signer-failed`: the local key signs EIP-712
//! alone). It never asks the wallet and then declines `signed-not-bound`.
//!
//! Which rows sign at all with the local key is printed by `every_built_plant_row_is_tried` (the rest decline
//! before signing: an agreement to pay first, a challenge the row's clock finds expired, a kind the key does not
//! sign); the property runs over every row. The Gateway burn, whose wallet is a Circle Gateway client the local key is
//! not, has its own property with an honest client, the source and destination on `eip155:`, `solana:` and a
//! namespace whose accounts no reader maps back.
//!
//! The gate itself has no way to run a pairing's bound over an unsigned build (the bound reads the signed answer), so
//! the rule is each pairing's: its choice and build refuse, before any request exists, what its bound would not read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

mod support;

use proptest::prelude::*;
use serde_json::Value;
use support::{CountingSigner, paused, vectors};
use terms::{Body, BoxFuture, DeclineCode, Fetch, FetchError, Pairing, Request, Response, TransactOutcome};

const ABC: &[u8] = b"abc";

/// Serves `abc` at every link: the bytes whose hash every row's document advertises.
struct Abc;

impl Fetch for Abc {
    fn get<'a>(&'a self, _request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async { Ok(Response::new(200, vec![], Body::from_bytes(ABC))) })
    }
}

/// A plant row of a built pairing: its file and the row.
struct Row {
    file: Value,
    row: Value,
    pairing: &'static dyn Pairing,
}

/// Every plant row of the vector files whose pairing this build has.
fn rows() -> Vec<Row> {
    let dir = format!("{}/tests/vectors", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let file = vectors(&name);
        let plants: Vec<Value> = file
            .pointer("/buyer/rows")
            .and_then(Value::as_array)
            .map(|rows| rows.iter().filter(|r| r["plant"] == true).cloned().collect())
            .unwrap_or_default();
        for row in plants {
            if let Ok(pairing) = terms::pairing(row["pairing"].as_str().unwrap()) {
                out.push(Row { file: file.clone(), row, pairing });
            }
        }
    }
    out
}

/// How one payment ended, and how many times the wallet was asked.
struct Tried {
    got: Result<TransactOutcome, terms::Declined>,
    calls: usize,
}

/// `transact` over the row's document for `account`, the honest wallet holding the file's payer key, at the row's
/// time (or the file's, or a minute before the files' `expires`).
fn pay(r: &Row, account: &str) -> Tried {
    let i = &r.row["input"];
    let stand_in = format!("0x{}", "11".repeat(32));
    let key = r.file["fixed"]["payerKey"].as_str().unwrap_or(&stand_in);
    let signer = CountingSigner::new(key, account);
    let now = i["now"].as_u64().or_else(|| r.file["fixed"]["now"].as_u64()).unwrap_or(1_790_000_000);
    let mut options = terms::Options::new().clock(terms::FixedClock(now));
    if let Some(inputs) = i["inputs"].as_object() {
        options = options.inputs(inputs.clone());
    }
    let got = paused().block_on(terms::transact(&i["doc"], r.pairing, &signer, &Abc, &options));
    Tried { got, calls: signer.count() }
}

/// The rule: declined before the wallet, or a payment the pairing reads H back from, or the wallet's own failure.
fn holds(r: &Row, account: &str, t: &Tried) -> Result<(), String> {
    let id = r.pairing.id();
    match &t.got {
        Ok(TransactOutcome::Signed(done)) => {
            let signed = done.signed.as_ref().ok_or_else(|| format!("{id} {account}: signed nothing"))?;
            let checked = terms::check(ABC, &signed.to_value(), r.pairing).map_err(|d| format!("{id}: {d:?}"))?;
            (checked.h == terms::atr_hash(ABC)).then_some(()).ok_or_else(|| format!("{id}: another H"))
        }
        Ok(_) => Ok(()),
        Err(_) if t.calls == 0 => Ok(()),
        Err(d) if d.code == DeclineCode::SignerFailed => Ok(()),
        Err(d) => {
            Err(format!("{id} {account}: the wallet was asked {} times, then {:?} {}", t.calls, d.code, d.detail))
        }
    }
}

/// The account with its network replaced, the address kept.
fn on(account: &str, network: &str) -> String {
    format!("{network}:{}", account.rsplit(':').next().unwrap())
}

#[test]
fn every_built_plant_row_is_tried_and_signs_only_what_it_reads_back() {
    let rows = rows();
    assert!(rows.len() >= 40, "{} plant rows of built pairings", rows.len());
    let mut signing = 0;
    for r in &rows {
        let account = r.row["input"]["account"].as_str().unwrap();
        let t = pay(r, account);
        holds(r, account, &t).unwrap();
        signing += usize::from(t.got.is_ok() && t.calls > 0);
        println!(
            "{} {account}: {} calls, {}",
            r.pairing.id(),
            t.calls,
            t.got.as_ref().map_or_else(|d| d.detail.clone(), |_| "paid".into())
        );
    }
    assert!(signing >= 8, "only {signing} rows reached the wallet and paid");
}

/// The network an account is moved to: another EIP-155 chain, or another namespace.
fn network() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u64..100_000_000).prop_map(|c| format!("eip155:{c}")),
        Just("eip155:84532".to_owned()),
        Just("eip155:5042002".to_owned()),
        Just("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1".to_owned()),
        Just("stellar:pubnet".to_owned()),
        Just("cosmos:cosmoshub-4".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Each row, its account moved to another network and its address written in either case.
    #[test]
    fn an_account_on_any_network_is_declined_unasked_or_paid_with_a_payment_read_back(
        pick in any::<prop::sample::Index>(),
        network in network(),
        case in 0u8..3,
    ) {
        let rows = rows();
        let r = &rows[pick.index(rows.len())];
        let account = on(r.row["input"]["account"].as_str().unwrap(), &network);
        let (head, address) = account.rsplit_once(':').unwrap();
        let address = match case {
            0 => address.to_owned(),
            1 => address.to_lowercase(),
            _ => address.strip_prefix("0x").map_or_else(|| address.to_uppercase(), |a| format!("0x{}", a.to_uppercase())),
        };
        let account = format!("{head}:{address}");
        let t = pay(r, &account);
        prop_assert!(holds(r, &account, &t).is_ok(), "{}", holds(r, &account, &t).unwrap_err());
    }
}

/// An honest Circle Gateway client on `account`: it burns from the account's network to the challenge's
/// `destinationNetwork`, writes its accounts as TransferSpec words (an EVM address left-padded, a Solana key's 32
/// bytes), and derives the salt over the CAIP-10 accounts as the reference writes them (`gateway_account`: lower-case
/// hex on `eip155:`, base58 on `solana:`), from the file's M5 burn intent. It counts what it is asked.
#[derive(Debug)]
struct GatewayClient {
    account: String,
    destination: String,
    recipient: String,
    m5: Value,
    calls: std::sync::atomic::AtomicUsize,
}

/// A CAIP-10 account's TransferSpec word and its account as the reference reads that word back.
fn word_of(account: &str) -> Option<(String, String)> {
    let (network, address) = account.rsplit_once(':')?;
    // On a network of another namespace the client still signs: its 32-byte form of the account (here its SHA-256),
    // which no reader can map back to the account.
    let bytes: [u8; 32] = if network.starts_with("eip155:") {
        terms::rail::evm::gateway::address_word(address)?.0
    } else if network.starts_with("solana:") {
        terms::rail::solana::Key::parse(address)?.0
    } else {
        *terms::atr_hash(address.as_bytes()).as_bytes()
    };
    let read = if network.starts_with("eip155:") { address.to_lowercase() } else { address.to_owned() };
    Some((format!("0x{}", hex::encode(bytes)), format!("{network}:{read}")))
}

impl terms::Signer for GatewayClient {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(
        &'a self,
        request: &'a terms::SigningRequest,
    ) -> BoxFuture<'a, Result<terms::Answer, terms::SignerError>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let answer = self.answer(request).ok_or_else(|| terms::SignerError::new("not a burn this client makes"));
        Box::pin(async move { answer })
    }
}

impl GatewayClient {
    fn answer(&self, request: &terms::SigningRequest) -> Option<terms::Answer> {
        let terms::SigningRequest::GatewayBurnIntent { preimage } = request else { return None };
        let source_network = self.account.rsplit_once(':')?.0;
        let (signer_word, signer) = word_of(&self.account)?;
        let (recipient_word, recipient) = word_of(&format!("{}:{}", self.destination, self.recipient))?;
        let mut intent = self.m5["payload"]["authorization"]["transfer"]["burnIntent"].clone();
        let spec = &mut intent["spec"];
        spec["sourceSigner"] = signer_word.clone().into();
        spec["sourceDepositor"] = signer_word.into();
        spec["destinationRecipient"] = recipient_word.into();
        let request_hash: alloy_primitives::B256 = preimage.request_hash.parse().ok()?;
        let (amount, max_fee) = (spec["value"].as_str()?.to_owned(), intent["maxFee"].as_str()?.to_owned());
        let salt = terms::rail::evm::gateway::gateway_salt(&terms::rail::evm::gateway::SaltInput {
            id: &preimage.id,
            realm: &preimage.realm,
            request_hash: &request_hash,
            source_network,
            destination_network: &self.destination,
            source_depositor: &self.account,
            source_signer: &signer,
            recipient: &preimage.recipient,
            destination_recipient: &recipient,
            amount: &amount,
            max_fee: &max_fee,
        });
        intent["spec"]["salt"] = format!("0x{}", hex::encode(salt.0)).into();
        Some(terms::Answer::new(serde_json::json!({
            "source": self.account, "sourceNetwork": source_network, "destinationNetwork": self.destination,
            "maxFee": max_fee, "burnIntent": intent, "signature": format!("0x{}", "11".repeat(65)),
        })))
    }
}

/// A network of a Gateway burn's source or destination, with an account (or recipient) on it.
fn gateway_end() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        (1u64..100_000_000)
            .prop_map(|c| (format!("eip155:{c}"), "0x209693Bc6afc0C5328bA36FaF03C514EF312287C".to_owned())),
        Just((
            "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1".to_owned(),
            "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4".to_owned()
        )),
        Just(("stellar:pubnet".to_owned(), "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ".to_owned())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// `mpp/charge/usdc/gateway` over M5's challenge with its source and destination moved to any of `eip155:`,
    /// `solana:` and a network whose accounts the crate does not read: an honest Gateway client is asked only for a
    /// burn whose payment the pairing reads H back from.
    #[test]
    fn a_gateway_burn_between_any_networks_is_declined_unasked_or_read_back(
        (source, payer) in gateway_end(),
        (destination, recipient) in gateway_end(),
    ) {
        let f = vectors("mpp-charge-usdc-gateway.json");
        let b2 = f["buyer"]["rows"].as_array().unwrap().iter().find(|r| r["name"] == "B2").unwrap().clone();
        let mut request: Value = serde_json::from_str(f["M5"]["requestJson"].as_str().unwrap()).unwrap();
        request["recipient"] = recipient.clone().into();
        request["methodDetails"]["gateway"]["acceptedSources"] = serde_json::json!([source]);
        request["methodDetails"]["gateway"]["destinationNetwork"] = destination.clone().into();
        let mut doc = b2["input"]["doc"].clone();
        use base64::Engine as _;
        doc[0]["request"] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(request.to_string()).into();
        let account = format!("{source}:{payer}");
        let client = GatewayClient {
            account: account.clone(), destination, recipient, m5: f["M5"].clone(), calls: Default::default(),
        };
        let options = terms::Options::new().clock(terms::FixedClock(1_790_000_000));
        let pairing = terms::pairing("mpp/charge/usdc/gateway").unwrap();
        let got = paused().block_on(terms::transact(&doc, pairing, &client, &Abc, &options));
        let calls = client.calls.load(std::sync::atomic::Ordering::SeqCst);
        let r = Row { file: f, row: b2, pairing };
        let t = Tried { got, calls };
        prop_assert!(holds(&r, &account, &t).is_ok(), "{}", holds(&r, &account, &t).unwrap_err());
        let readable = |n: &str| n.starts_with("eip155:") || n.starts_with("solana:");
        let paid = matches!(t.got, Ok(TransactOutcome::Signed(_)));
        prop_assert_eq!(paid, readable(&source) && readable(&client.destination), "{:?}", t.got.as_ref().err());
    }
}
