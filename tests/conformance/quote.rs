//! Every built pairing's quote, driven from the x402 and MPP vector files' own documents: each document a built pairing
//! reads, advertising the file's ATR (its B6 rows' bytes), is chosen as the gate chooses with the row's account, time
//! and inputs, and the quote of the choice must say the chosen option's own `amount`, `asset`, `payTo`, `network` and
//! `scheme` (for batch settlement the deposit too), or the chosen MPP challenge's request (`currency`, `recipient`, its
//! network and intent; for a session the deposit, and the first voucher's 0), and what the build then hands the
//! signer, or completes, must carry the same. A hand-edited choice must give the quote the refusal the build gives,
//! never a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};

use libtest_mimic::{Failed, Trial};
use serde_json::{Map, Value, json};
use terms::pairing::{ChooseContext, Chosen, Completion, check_inputs};
use terms::{Answer, AtrHash, FixedClock, Options, Pairing, Quote, SigningRequest, atr_hash};

use crate::support::{hex, vectors};
use crate::{Outcome, eq};

/// One document of a vector file that a built pairing reads, with what its row gives beside it.
#[derive(Clone)]
pub(crate) struct Case {
    pub(crate) label: String,
    pub(crate) pairing: &'static dyn Pairing,
    pub(crate) doc: Value,
    pub(crate) account: String,
    pub(crate) now: u64,
    pub(crate) inputs: Map<String, Value>,
    /// The ATR the document advertises, from the file's own rows.
    pub(crate) atr: Vec<u8>,
}

impl Case {
    pub(crate) fn options(&self) -> Options {
        Options::new().clock(FixedClock(self.now)).inputs(self.inputs.clone())
    }

    /// The choice the gate makes for the document, as it makes it: the pairing's read, the inputs held to its specs,
    /// its choice, and the seller's document kept in the choice.
    pub(crate) fn chosen(&self) -> Result<Chosen, Failed> {
        let read = self.pairing.read(&self.doc).map_err(|r| r.code())?;
        check_inputs(self.pairing, &self.inputs).map_err(|r| r.code())?;
        let reference = "r".repeat(32);
        let ctx = ChooseContext {
            account: &self.account,
            inputs: &self.inputs,
            now: self.now,
            reference: &reference,
            doc: &self.doc,
        };
        let mut chosen = self.pairing.choose(&read, &ctx).map_err(|r| r.code())?;
        self.pairing.keep_document(&mut chosen, std::borrow::Cow::Borrowed(&self.doc));
        Ok(chosen)
    }

    pub(crate) fn h(&self) -> AtrHash {
        atr_hash(&self.atr)
    }
}

/// The x402 and MPP vector files, by name.
fn files() -> Vec<String> {
    let dir = format!("{}/tests/vectors", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| (n.starts_with("x402-") || n.starts_with("mpp-")) && n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// Whether the value is an MPP challenge list: a non-empty array of objects with a string `intent`, `method` and
/// `request`.
fn is_challenges(v: &Value) -> bool {
    v.as_array().is_some_and(|l| {
        !l.is_empty() && l.iter().all(|c| ["intent", "method", "request"].iter().all(|k| c[*k].is_string()))
    })
}

/// Every x402 document (an object with `x402Version` and `accepts`) and MPP challenge list, with the path to it and
/// the object that holds it.
fn docs<'a>(v: &'a Value, path: &str, out: &mut Vec<(String, &'a Value, &'a Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if (x.get("x402Version").is_some() && x.get("accepts").is_some_and(Value::is_array)) || is_challenges(x)
                {
                    out.push((format!("{path}/{k}"), x, v));
                }
                docs(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| docs(x, &format!("{path}/{i}"), out)),
        _ => {}
    }
}

/// The ATRs a file's rows check payments against: every `bytesHex`.
fn atrs(file: &Value) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for row in file["buyer"]["rows"].as_array().into_iter().flatten() {
        for case in row["input"]["check"].as_array().into_iter().flatten() {
            out.extend(case["bytesHex"].as_str().map(hex));
        }
    }
    out
}

/// The payer of a file's rows: `fixed.payer`, else `fixed.evm.payer`.
fn payer(file: &Value) -> Option<&str> {
    file["fixed"]["payer"].as_str().or_else(|| file["fixed"]["evm"]["payer"].as_str())
}

/// Every document of every x402 vector file that a built pairing reads and advertises one of the file's ATRs in:
/// a row's own account, time and inputs where the row gives them, else the file's fixed payer on the document's
/// first network and the file's fixed time.
pub(crate) fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for name in files() {
        let file = vectors(&name);
        let (atrs, mut found) = (atrs(&file), Vec::new());
        docs(&file, "", &mut found);
        for (path, doc, holder) in found {
            for id in terms::built_ids() {
                // Of MPP's pairings only the session is quoted here: the charges whose build is the payment in
                // `quote_mpp`, the EVM charges in tests/mpp_evm.
                if id.starts_with("mpp/") && (id != "mpp/session/evm" || name != "mpp-session-evm.json") {
                    continue;
                }
                let pairing = terms::pairing(id).unwrap();
                let Ok(read) = pairing.read(doc) else { continue };
                let Some(atr) = atrs.iter().find(|a| atr_hash(a) == read.h) else { continue };
                let network = match read.offer {
                    terms::pairing::Offer::Challenges(ref list) => {
                        list.first().and_then(|c| terms::mpp::network(c).ok()).unwrap_or_default()
                    }
                    _ => doc["accepts"][0]["network"].as_str().unwrap_or_default().to_owned(),
                };
                let account = match (holder["account"].as_str(), payer(&file)) {
                    (Some(a), _) => a.to_owned(),
                    (None, Some(p)) => format!("{network}:{p}"),
                    (None, None) => continue,
                };
                let now = holder["now"].as_u64().or_else(|| file["fixed"]["now"].as_u64()).unwrap_or(0);
                let inputs = holder["inputs"].as_object().cloned().unwrap_or_default();
                let label = format!("{name}:{path}::{id}");
                out.push(Case { label, pairing, doc: doc.clone(), account, now, inputs, atr: atr.clone() });
            }
        }
    }
    out
}

/// The batch-settlement row's document with its option varied as the pairing's own rows vary it: a Permit2 deposit,
/// and a deposit the option names.
fn batch_variants(cases: &[Case]) -> Vec<Case> {
    let Some(batch) = cases.iter().find(|c| c.pairing.id() == "x402/batch-settlement/eip155") else { return vec![] };
    let vary = |what: &str, member: &str, value: Value| {
        let mut case = batch.clone();
        case.doc["accepts"][0]["extra"][member] = value;
        case.label = format!("{} with extra.{member} ({what})", batch.label);
        case
    };
    let min = format!("{}0", batch.inputs["deposit"].as_str().unwrap());
    vec![vary("a Permit2 deposit", "assetTransferMethod", json!("permit2")), vary("named", "minDeposit", json!(min))]
}

/// The Solana batch-settlement row's document with the option in the reference's form (`extra.receiverAuthorizer`,
/// which the file predates: NOTES.md), with its deposit the buyer's and the option's.
fn solana_batch_cases() -> Vec<Case> {
    let Ok(pairing) = terms::pairing("x402/batch-settlement/solana") else { return vec![] };
    let file = vectors("x402-batch-settlement.json");
    let rows = file["buyer"]["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["pairing"] == pairing.id() && r["name"] == "B2").unwrap();
    let mut doc = row["input"]["doc"].clone();
    doc["accepts"][0]["extra"]["receiverAuthorizer"] = file["fixed"]["svm"]["feePayer"].clone();
    let case = Case {
        label: format!("x402-batch-settlement.json:/buyer/B2 with extra.receiverAuthorizer::{}", pairing.id()),
        pairing,
        doc: doc.clone(),
        account: row["input"]["account"].as_str().unwrap().to_owned(),
        now: file["fixed"]["now"].as_u64().unwrap_or(1_790_000_000),
        inputs: row["input"]["inputs"].as_object().unwrap().clone(),
        atr: atrs(&file).into_iter().find(|a| atr_hash(a).to_hex() == row["advertised"].as_str().unwrap()).unwrap(),
    };
    let mut named = case.clone();
    let min = format!("{}0", case.inputs["deposit"].as_str().unwrap());
    named.doc["accepts"][0]["extra"]["minDeposit"] = json!(min);
    named.label = format!("{} with extra.minDeposit", case.label);
    vec![case, named]
}

pub fn trials() -> Vec<Trial> {
    let mut cases = cases();
    cases.extend(batch_variants(&cases));
    cases.extend(solana_batch_cases());
    cases.extend(super::quote_mpp::cases());
    let mut all = Vec::new();
    let quoted: Vec<&str> = cases.iter().map(|c| c.pairing.id()).collect();
    all.push(Trial::test("quote::every built pairing is quoted from a vector document", move || {
        // MPP's pairings quote a challenge, not an x402 option: tests/mpp_evm quotes each from its own file. The card
        // and checkout pairings quote a checkout: tests/card.rs, tests/checkout.rs and tests/checkout_mandate.rs.
        let elsewhere =
            |id: &str| ["mpp/", "card/", "acp/", "ack/", "ap2/", "ucp/"].iter().any(|ns| id.starts_with(ns));
        let missing: Vec<&str> =
            terms::built_ids().into_iter().filter(|id| !elsewhere(id) && !quoted.contains(id)).collect();
        eq("pairings no vector document quotes", missing, vec![])
    }));
    for case in cases {
        let again = case.clone();
        if case.doc.is_array() && case.pairing.id() != "mpp/session/evm" {
            // An MPP challenge list of a pairing whose build is the payment (the session's is checked below, its
            // quote against the challenge's request and deposit).
            all.push(Trial::test(format!("quote::{}", case.label), move || {
                super::quote_mpp::quote_says_the_challenge(&case)
            }));
            all.push(Trial::test(format!("quote::{}::malformed choices", again.label), move || {
                super::quote_mpp::malformed_choices_are_refused_alike(&again)
            }));
            continue;
        }
        all.push(Trial::test(format!("quote::{}", case.label), move || quote_says_the_option(&case)));
        all.push(Trial::test(format!("quote::{}::malformed choices", again.label), move || {
            super::quote_malformed::malformed_choices_are_refused_alike(&again)
        }));
    }
    all
}

/// The option the choice pays, found in the case's own document.
fn option_of<'a>(case: &'a Case, chosen: &Chosen) -> Result<&'a Value, Failed> {
    let accepted = &chosen.build_input["accepted"];
    case.doc["accepts"].as_array().unwrap().iter().find(|o| *o == accepted).ok_or_else(|| "no such option".into())
}

/// A JSON member as text: a string as it is, anything else as JSON.
fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn quote_says_the_option(case: &Case) -> Outcome {
    let chosen = case.chosen()?;
    if chosen.build_input.contains_key("challenge") {
        return quote_says_the_challenge(case, &chosen);
    }
    let quote = case.pairing.quote(&chosen).map_err(|r| r.code())?;
    let option = option_of(case, &chosen)?;
    eq("amount", quote.amount.to_string(), text(&option["amount"]))?;
    eq("asset", &quote.asset, &text(&option["asset"]))?;
    eq("payee", &quote.payee, &text(&option["payTo"]))?;
    eq("network", &quote.network, &text(&option["network"]))?;
    eq("scheme", &quote.scheme, &text(&option["scheme"]))?;
    let deposit = match case.pairing.id() {
        "x402/batch-settlement/eip155" => {
            Some(text(option["extra"].get("minDeposit").unwrap_or(&case.inputs["deposit"])))
        }
        "x402/batch-settlement/solana" => {
            Some(text(option["extra"].get("minDeposit").unwrap_or(&case.inputs["deposit"])))
        }
        // The one-request channel locks the whole amount, the most the seller may settle.
        "x402/upto/solana" => Some(text(&option["amount"])),
        _ => None,
    };
    eq("deposit", quote.deposit.map(|d| d.to_string()), deposit)?;
    if let Some(before) = quote.valid_before {
        eq("valid before", before, case.now + option["maxTimeoutSeconds"].as_u64().unwrap())?;
    }
    let json = serde_json::to_value(&quote).unwrap();
    eq("amount as JSON", json["amount"].clone(), option["amount"].clone())?;
    build_carries_the_quote(case, &chosen, &quote)
}

/// The MPP challenge the choice pays, its request decoded.
fn request_of(chosen: &Chosen) -> Result<Value, Failed> {
    use base64::Engine as _;
    let raw = chosen.build_input["challenge"]["request"].as_str().ok_or("no request")?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| Failed::from(e.to_string()))
}

/// An MPP choice's quote: the request's currency to its recipient on the challenge's network under its intent; a
/// session's first voucher claims 0 and the channel locks the buyer's deposit, its authorization valid from 0 until
/// the challenge's `expires`.
fn quote_says_the_challenge(case: &Case, chosen: &Chosen) -> Outcome {
    let quote = case.pairing.quote(chosen).map_err(|r| r.code())?;
    let challenge = &chosen.build_input["challenge"];
    let request = request_of(chosen)?;
    eq("asset", &quote.asset, &text(&request["currency"]))?;
    eq("payee", &quote.payee, &text(&request["recipient"]))?;
    eq("network", Ok(quote.network.clone()), terms::mpp::network(challenge).map_err(|r| r.code()))?;
    eq("scheme", &quote.scheme, &text(&challenge["intent"]))?;
    if case.pairing.id() == "mpp/session/evm" {
        eq("amount", quote.amount.to_string(), "0".to_owned())?;
        eq("deposit", quote.deposit.map(|d| d.to_string()), Some(text(&case.inputs["deposit"])))?;
    } else {
        eq("amount", quote.amount.to_string(), text(&request["amount"]))?;
    }
    build_carries_the_quote(case, chosen, &quote)
}

/// Where each pairing's first signing request (`/request`) or its payment completed with placeholder answers
/// (`/payment`) carries what its quote says (`/amount`, `/payee`, … of the quote as JSON).
const CARRIED: &[(&str, &[(&str, &str)])] = &[
    ("x402/exact/eip155/eip3009", EIP3009),
    ("x402/exact/eip155/permit2", PERMIT2_WITNESS),
    ("x402/upto/eip155/permit2", PERMIT2_WITNESS),
    ("x402/exact/eip155/erc7710", ERC7710),
    // The node pays the invoice (bytes: tests/lightning.rs reads its fields back): the payment echoes what it pays.
    ("x402/exact/lnbtc", LNBTC),
    ("x402/exact/lnbtc/invoice-named", LNBTC),
    ("x402/exact/eip155/erc7710-salt", ERC7710),
    (
        "x402/auth-capture/eip155/eip3009",
        &[
            ("/amount", "/request/typedData/message/value"),
            ("/asset", "/request/typedData/domain/verifyingContract"),
            ("/validAfter", "/request/typedData/message/validAfter"),
            ("/validBefore", "/request/typedData/message/validBefore"),
            ("/amount", "/payment/payload/authorization/value"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    (
        "x402/auth-capture/eip155/permit2",
        &[
            ("/amount", "/request/typedData/message/permitted/amount"),
            ("/asset", "/request/typedData/message/permitted/token"),
            ("/validBefore", "/request/typedData/message/deadline"),
            ("/amount", "/payment/payload/permit2Authorization/permitted/amount"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    (
        "x402/batch-settlement/eip155",
        &[
            ("/amount", "/request/requests/1/typedData/message/maxClaimableAmount"),
            ("/amount", "/payment/payload/voucher/maxClaimableAmount"),
            ("/deposit", "/payment/payload/deposit/amount"),
            ("/payee", "/payment/payload/channelConfig/receiver"),
            ("/asset", "/payment/payload/channelConfig/token"),
        ],
    ),
    (
        "x402/batch-settlement/cloudflare",
        &[
            ("/amount", "/payment/payload/amount"),
            ("/asset", "/payment/payload/asset"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    // The message is bytes (x402_solana.rs reads its transfer back): the payment echoes what it pays.
    (
        "x402/exact/solana",
        &[
            ("/amount", "/payment/accepted/amount"),
            ("/asset", "/payment/accepted/asset"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    // The envelope is XDR (x402_stellar.rs reads its transfer back, and the build refuses any other): the payment
    // echoes what it pays.
    (
        "x402/exact/stellar",
        &[
            ("/amount", "/payment/accepted/amount"),
            ("/asset", "/payment/accepted/asset"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    // The wallet signs the Payment's fields as xrpl.js names them (the build refuses a blob that is not exactly it).
    (
        "x402/exact/xrpl",
        &[
            ("/amount", "/request/txJson/Amount"),
            ("/payee", "/request/txJson/Destination"),
            ("/asset", "/payment/accepted/asset"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    // The opening transaction is bytes (batch_settlement_solana.rs reads it back): the payload names its terms.
    (
        "x402/batch-settlement/solana",
        &[
            ("/amount", "/payment/payload/voucher/maxClaimableAmount"),
            ("/deposit", "/payment/payload/deposit/amount"),
            ("/payee", "/payment/payload/channelConfig/receiver"),
            ("/asset", "/payment/payload/channelConfig/token"),
        ],
    ),
    // The opening is bytes (x402_upto_solana.rs reads its open instruction back): the payload names what it locks.
    (
        "x402/upto/solana",
        &[
            ("/amount", "/payment/payload/maxAmount"),
            ("/deposit", "/payment/payload/deposit"),
            ("/validAfter", "/payment/payload/validAfter"),
            ("/validBefore", "/payment/payload/expiresAt"),
            ("/asset", "/payment/accepted/asset"),
            ("/payee", "/payment/accepted/payTo"),
        ],
    ),
    // The row's opening is an authorization: the deposit's EIP-3009 transfer to the escrow, then the voucher of 0.
    (
        "mpp/session/evm",
        &[
            ("/deposit", "/request/typedData/message/value"),
            ("/asset", "/request/typedData/domain/verifyingContract"),
            ("/validAfter", "/request/typedData/message/validAfter"),
            ("/validBefore", "/request/typedData/message/validBefore"),
            ("/amount", "/payment/payload/cumulativeAmount"),
            ("/deposit", "/payment/payload/authorization/value"),
        ],
    ),
];

const EIP3009: &[(&str, &str)] = &[
    ("/amount", "/request/typedData/message/value"),
    ("/payee", "/request/typedData/message/to"),
    ("/asset", "/request/typedData/domain/verifyingContract"),
    ("/validAfter", "/request/typedData/message/validAfter"),
    ("/validBefore", "/request/typedData/message/validBefore"),
    ("/amount", "/payment/payload/authorization/value"),
];

const PERMIT2_WITNESS: &[(&str, &str)] = &[
    ("/amount", "/request/typedData/message/permitted/amount"),
    ("/asset", "/request/typedData/message/permitted/token"),
    ("/payee", "/request/typedData/message/witness/to"),
    ("/validAfter", "/request/typedData/message/witness/validAfter"),
    ("/validBefore", "/request/typedData/message/deadline"),
    ("/payee", "/payment/payload/permit2Authorization/witness/to"),
];

const LNBTC: &[(&str, &str)] = &[
    ("/amount", "/payment/accepted/amount"),
    ("/asset", "/payment/accepted/asset"),
    ("/payee", "/payment/accepted/payTo"),
];

const ERC7710: &[(&str, &str)] =
    &[("/amount", "/request/amount"), ("/asset", "/request/token"), ("/payee", "/request/payTo")];

/// The batch opening's deposit authorization, by its method: where the deposit and the window are signed.
fn deposit_carried(chosen: &Chosen) -> &'static [(&'static str, &'static str)] {
    if chosen.build_input["accepted"]["extra"]["assetTransferMethod"] == "permit2" {
        &[
            ("/deposit", "/request/requests/0/typedData/message/permitted/amount"),
            ("/validBefore", "/request/requests/0/typedData/message/deadline"),
        ]
    } else {
        &[
            ("/deposit", "/request/requests/0/typedData/message/value"),
            ("/validAfter", "/request/requests/0/typedData/message/validAfter"),
            ("/validBefore", "/request/requests/0/typedData/message/validBefore"),
        ]
    }
}

/// An answer of the request's form, to complete the payment without a key.
fn placeholder(request: &SigningRequest) -> Value {
    let address = format!("0x{}", "11".repeat(20));
    match request {
        // Inside a batch (a Solana batch-settlement opening) a solana-message is answered in base58, as the
        // ed25519-raw beside it.
        SigningRequest::Batch { requests } => Value::Array(
            requests
                .iter()
                .map(|r| match r {
                    SigningRequest::SolanaMessage(_) => json!("1".repeat(64)),
                    other => placeholder(other),
                })
                .collect(),
        ),
        SigningRequest::Erc7710(_) => {
            json!({"delegationManager": address, "permissionContext": "0x", "delegator": address})
        }
        other => json!(other.placeholder().expect("a placeholder answer")),
    }
}

fn build_carries_the_quote(case: &Case, chosen: &Chosen, quote: &Quote) -> Outcome {
    let unsigned = case.pairing.build(chosen, &case.atr, &case.h()).map_err(|r| r.code())?;
    let request = unsigned.request().map_err(|r| r.code())?;
    let mut answers: Vec<Answer> = request.iter().map(|r| Answer::new(placeholder(r))).collect();
    // A payment signed in steps (an MPP session's opening) is completed step by step.
    let payment = loop {
        match unsigned.complete(&answers, chosen).map_err(|r| r.code())? {
            Completion::Next(next) if answers.len() < 4 => answers.push(Answer::new(placeholder(&next))),
            done => break done.payment_value().ok_or("no payment")?,
        }
    };
    let carried = json!({"request": request, "payment": payment});
    let quoted = serde_json::to_value(quote).unwrap();
    let (_, places) = CARRIED.iter().find(|(id, _)| *id == case.pairing.id()).ok_or("a pairing CARRIED omits")?;
    let extra = if case.pairing.id() == "x402/batch-settlement/eip155" { deposit_carried(chosen) } else { &[] };
    for (member, place) in places.iter().chain(extra) {
        let said = quoted.pointer(member).ok_or_else(|| format!("the quote says no {member}"))?;
        let at = carried.pointer(place).ok_or_else(|| format!("nothing at {place}"))?;
        eq(&format!("{member} at {place}"), text(at), text(said))?;
    }
    // What the quote leaves out, the build signs nowhere CARRIED names.
    for member in ["/deposit", "/validAfter", "/validBefore"] {
        let named = places.iter().chain(extra).any(|(m, _)| *m == member);
        eq(&format!("{member} quoted where the build signs it"), quoted.pointer(member).is_some(), named)?;
    }
    Ok(())
}

/// `f`, its panic caught as a failure.
pub(crate) fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, Failed> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Failed::from(format!("{what} panicked")))
}
