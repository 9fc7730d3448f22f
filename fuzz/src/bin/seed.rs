//! Writes the seed corpora of the fuzz targets from the vector files: `cargo run --manifest-path fuzz/Cargo.toml
//! --bin seed [dir]` (default `fuzz/corpus`), one folder per target, one file per seed, each in its target's input
//! form. `scripts/fuzz` runs it before fuzzing; the corpora are not committed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use terms::json::to_js_string;
use terms::{Finish, Signer};
use terms_fuzz::{Reply, buyer, buyer_atr, confirmed, fixture, fixtures, join, paused, real_hold, vector_file};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let folder = dir.join(target);
    std::fs::create_dir_all(&folder).expect("corpus folder");
    std::fs::write(folder.join(format!("seed-{name}")), bytes).expect("seed written");
}

fn js(v: &Value) -> String {
    to_js_string(v).expect("a fixture is plain JSON")
}

fn main() {
    let dir =
        std::env::args().nth(1).map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"), PathBuf::from);
    let mut count = 0usize;
    let mut put = |target: &str, name: &str, bytes: &[u8]| {
        write(&dir, target, name, bytes);
        count += 1;
    };
    let fixed = buyer();
    let agreement = &fixed["agreement"];

    // payment_required: every fixture document and the agreement 402s, as headers and as JSON text.
    let mut docs: Vec<(String, Value)> = fixtures().iter().map(|f| (f.id.replace('/', "_"), f.doc.clone())).collect();
    docs.push(("buyer-D".into(), fixed["D"].clone()));
    docs.push(("agreement-required".into(), agreement["required"].clone()));
    docs.push(("agreement-requiredMixed".into(), agreement["requiredMixed"].clone()));
    for (name, doc) in &docs {
        put("payment_required", &format!("{name}-header"), b64_encode(js(doc).as_bytes()).as_bytes());
        put("payment_required", &format!("{name}-json"), js(doc).as_bytes());
    }
    let timeout_text = agreement["requiredTimeoutText"].as_str().expect("text");
    put("payment_required", "requiredTimeoutText-header", b64_encode(timeout_text.as_bytes()).as_bytes());

    // choose: each fixture's pairing byte, then its document, account, inputs and time.
    for (i, f) in fixtures().iter().enumerate() {
        let which = u8::try_from(i).expect("fewer than 256 built pairings");
        let seed = join(&[
            js(&f.doc).as_bytes(),
            f.account.as_bytes(),
            js(&Value::Object(f.inputs.clone())).as_bytes(),
            f.now.to_string().as_bytes(),
        ]);
        put("choose", &f.id.replace('/', "_"), &[&[which][..], &seed].concat());
    }

    // link: the core vectors' link rows, every fixture's link and the agreement URL.
    let core = vector_file("core-vectors.json");
    for row in core["links"]["rows"].as_array().expect("rows") {
        put("link", row["name"].as_str().expect("name"), row["link"].as_str().expect("link").as_bytes());
    }
    put("link", "fixture", fixture("x402/exact/eip155/eip3009").link().as_bytes());
    put("link", "agreement", agreement["url"].as_str().expect("url").as_bytes());

    // agreement: the BA rows' answers, unpaid (mode 0: 402, then the approval is paid) and paid (mode 1).
    let required = b64_encode(js(&agreement["required"]).as_bytes());
    let receipt = js(&agreement["receipt"]);
    let other = js(&agreement["receiptOtherHash"]);
    let r402 = Reply::to_fuzz("402", &[("PAYMENT-REQUIRED", &required)], b"");
    let r402_json = Reply::to_fuzz("402", &[("PAYMENT-REQUIRED-JSON", &js(&agreement["required"]))], b"");
    let r402_text = Reply::to_fuzz("402", &[("PAYMENT-REQUIRED", &b64_encode(timeout_text.as_bytes()))], b"");
    let r202 = Reply::to_fuzz("202", &[("Retry-After", "2")], b"");
    let r200 = Reply::to_fuzz("200", &[("Content-Type", "application/json")], receipt.as_bytes());
    let r200_other = Reply::to_fuzz("200", &[], other.as_bytes());
    let r503 = Reply::to_fuzz("503", &[], b"");
    let gz = Reply::to_fuzz("200", &[("Content-Encoding", "gzip")], receipt.as_bytes());
    let scripts: Vec<(&str, u8, Vec<&[u8]>)> = vec![
        ("ba1", 0, vec![&r402, &r202, &r200]),
        ("ba1-json", 0, vec![&r402_json, &r200]),
        ("timeout-text", 0, vec![&r402_text, b"N", &r200]),
        ("receipt-first", 0, vec![&r200]),
        ("pending-first", 0, vec![&r202]),
        ("other-hash", 0, vec![&r402, &r200_other]),
        ("paid", 1, vec![&r202, &r503, b"R", &r200]),
        ("paid-stall", 1, vec![b"S200\n\n{\"atrHash\"", &r200]),
        ("paid-gzip", 1, vec![&gz]),
        ("cancelled", 3, vec![&r200]),
    ];
    for (name, mode, parts) in scripts {
        let mut seed = vec![mode];
        seed.extend(join(&parts));
        put("agreement", name, &seed);
    }
    let _ = buyer_atr();

    // retry_after.
    for (i, v) in ["2", " 5\t", "0", "-1", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT", "1234567890", "999999999", ""]
        .iter()
        .enumerate()
    {
        put("retry_after", &i.to_string(), v.as_bytes());
    }

    // finish: each pairing's own signer's answer to its confirmed request (the ERC-7710 salt level's from its B6
    // payment), and the build-is-the-payment pairing with no answer.
    let rt = paused();
    for (i, (f, c)) in confirmed().iter().enumerate() {
        let i = u8::try_from(i).expect("few pairings");
        let name = f.id.replace('/', "_");
        let answer = match (&c.request, f.id) {
            (_, "x402/exact/eip155/erc7710-salt") => {
                let p = &f.presented.as_ref().expect("B6")["payload"];
                json!({"delegationManager": p["delegationManager"], "permissionContext": p["permissionContext"], "delegator": p["delegator"]})
            }
            (Some(request), _) => match rt.block_on(f.signer().sign(request)) {
                Ok(answer) => answer.into_json(),
                Err(_) => {
                    // A rail the fuzz signer does not sign (ed25519, a Lightning node, a Tempo transaction): the
                    // answer of the kind's form, which the fuzzer mutates from there.
                    let answer = request.placeholder().map_or(Value::Null, Value::String);
                    put("finish", &name, &[&[i, 0][..], js(&answer).as_bytes()].concat());
                    continue;
                }
            },
            (None, _) => {
                put("finish", &name, &[&[i, 0x40][..], b"null"].concat());
                continue;
            }
        };
        let got = terms::finish(&c.bytes, &c.chosen, &[terms::Answer::new(answer.clone())], f.pairing());
        // A channel's opening may ask for a next signature (a session's zero voucher) before it finishes.
        assert!(
            matches!(got, Ok(Finish::Finished(_) | Finish::Next(_))),
            "{}: the seed answer finishes or asks for the next: {got:?}",
            f.id
        );
        put("finish", &name, &[&[i, 0][..], js(&answer).as_bytes()].concat());
    }

    // hold: the fixture's hold and a few steps.
    let hold = js(&serde_json::to_value(real_hold()).expect("hold"));
    for (name, steps) in [
        ("record", vec!["r1000", "r2000"]),
        ("within", vec!["w", "r2000", "w500"]),
        ("refund", vec!["w", "p1000", "c"]),
        ("bare", vec![]),
    ] {
        let mut parts: Vec<&[u8]> = vec![hold.as_bytes()];
        parts.extend(steps.iter().map(|s| s.as_bytes()));
        put("hold", name, &join(&parts));
    }

    // mcp: arguments that pass each tool's schema.
    let f = fixture("x402/exact/eip155/eip3009");
    let (_, c) = confirmed().iter().find(|(x, _)| x.id == f.id).expect("confirmed");
    let atr = b64_encode(&f.atr);
    let mac = format!("0x{}", "0".repeat(64));
    let mut chosen = serde_json::to_value(&c.chosen).expect("chosen");
    chosen["mac"] = json!(mac);
    let channel = fixture(terms_fuzz::CHANNEL);
    let mut sealed_hold = serde_json::to_value(real_hold()).expect("hold");
    sealed_hold["mac"] = json!(mac);
    let approved = serde_json::to_value(terms_fuzz::approved_agreement()).expect("approved");
    let tools: Vec<(&str, Value)> = vec![
        ("atr_confirm", json!({"pairing": f.id, "document": f.doc, "account": f.account})),
        (
            "atr_finish",
            json!({"pairing": f.id, "atr": atr, "chosen": chosen, "signature": format!("0x{}", "11".repeat(65))}),
        ),
        ("atr_check", json!({"pairing": f.id, "atr": atr, "presented": f.presented})),
        ("atr_transact", json!({"pairing": f.id, "document": f.doc, "inputs": {}})),
        ("atr_agree", json!({"atr": atr, "chosen": chosen, "approved": approved})),
        ("atr_channel_open", json!({"pairing": channel.id, "atr": atr, "signed": real_hold().opening, "mac": mac})),
        ("atr_channel_record_charge", json!({"hold": sealed_hold, "charged": "2000"})),
        (
            "atr_channel_within",
            json!({"pairing": channel.id, "hold": sealed_hold, "document": channel.doc, "refund": {}}),
        ),
    ];
    for (name, args) in tools {
        let index = terms::mcp::TOOL_NAMES.iter().position(|n| *n == name).expect("a tool");
        let selector = u8::try_from(index).expect("eight tools");
        put("mcp", name, &[&[selector][..], js(&args).as_bytes()].concat());
    }
    put("mcp", "no-arguments", &[8u8]);

    // client: the seller's answers to one GET. First the 402 (the EIP-3009 fixture's offer as PAYMENT-REQUIRED, or
    // the MPP EVM charge fixture's challenge as WWW-Authenticate), then what the paid request meets: a settlement, a
    // 202 and its job, a 5xx and a reset before the settlement, a seller that asks again, silence.
    let offer = Reply::to_fuzz("402", &[("PAYMENT-REQUIRED-JSON", &js(&f.doc))], b"{}");
    let payer = f.account.rsplit(':').next().expect("an address");
    let settled = b64_encode(
        js(&json!({"success": true, "payer": payer, "transaction": format!("0x{}", "ab".repeat(32)),
            "network": "eip155:84532"}))
        .as_bytes(),
    );
    let ok = Reply::to_fuzz("200", &[("PAYMENT-RESPONSE", &settled)], b"paid content");
    let mpp_charge = fixture("mpp/charge/evm/authorization");
    let challenge = mpp_charge.doc.get(0).and_then(Value::as_object).expect("a challenge");
    let params: Vec<String> =
        challenge.iter().filter_map(|(k, v)| v.as_str().map(|v| format!("{k}=\"{v}\""))).collect();
    let mpp_offer = Reply::to_fuzz("402", &[("WWW-Authenticate", &format!("Payment {}", params.join(", ")))], b"");
    let receipt = b64url(
        js(&json!({"status": "success", "method": "evm", "timestamp": "2026-09-21T14:00:00Z",
            "reference": format!("0x{}", "cd".repeat(32))}))
        .as_bytes(),
    );
    let mpp_ok = Reply::to_fuzz("200", &[("Payment-Receipt", &receipt)], b"paid content");
    let job = Reply::to_fuzz("202", &[("Retry-After", "1")], br#"{"jobId":"job-1"}"#);
    let busy = Reply::to_fuzz("503", &[("Retry-After", "2")], b"");
    let scripts: [(&str, Vec<&[u8]>); 7] = [
        ("x402-settled", vec![&offer, &ok]),
        ("x402-job", vec![&offer, &job, &ok]),
        ("x402-busy-reset", vec![&offer, &busy, b"R", &ok]),
        ("x402-asked-again", vec![&offer, &offer, &offer]),
        ("x402-silent", vec![&offer, b"N"]),
        ("mpp-settled", vec![&mpp_offer, &mpp_ok]),
        ("unpaid", vec![b"200\n\nfree content"]),
    ];
    for (name, script) in scripts {
        put("client", name, &join(&script));
    }

    // mpp_header: MPP's two-challenge example as two values (one a line) and joined, and the header inputs of
    // mpp-challenge.json's agreed refusals.
    let mpp = vector_file("mpp-challenge.json");
    let values: Vec<&str> =
        mpp["MV9"]["fieldValues"].as_array().expect("values").iter().map(|v| v.as_str().expect("text")).collect();
    put("mpp_header", "MV9-values", values.join("\n").as_bytes());
    put("mpp_header", "MV9-joined", values.join(", ").as_bytes());
    for name in ["headerDuplicate", "headerEmptyId", "headerBroken"] {
        let text = mpp["agreedRefusals"]["inputs"][name].as_str().expect("text");
        put("mpp_header", name, text.as_bytes());
    }

    // stellar_xdr: every envelope of the Stellar vector files (simulated, signed, V4build's, V4's malformed bytes,
    // decoder-caps.json's) and decoder-caps.json's ScVals, as XDR bytes.
    let x = vector_file("x402-exact-stellar.json");
    let caps = vector_file("decoder-caps.json");
    let mut xdrs: Vec<(String, &Value)> = vec![
        ("V2-simulated".into(), &x["V2"]["simulatedXdr"]),
        ("V2-signed".into(), &x["V2"]["expectEnvelope"]),
        ("V3v2-simulated".into(), &x["V3v2"]["simulatedXdr"]),
        ("V3v2-signed".into(), &x["V3v2"]["envelope"]),
        ("plant".into(), &x["plant"]["envelope"]),
    ];
    for (i, row) in x["V4build"]["rows"].as_array().expect("rows").iter().enumerate() {
        xdrs.push((format!("V4build-{i}"), &row["simulatedXdr"]));
    }
    for (i, row) in x["V4"].as_array().expect("rows").iter().enumerate() {
        if let Some(e) = row.get("envelope") {
            xdrs.push((format!("V4-{i}"), e));
        }
    }
    for row in caps["scval"]["rows"].as_array().into_iter().chain(caps["scval"]["envelopes"].as_array()).flatten() {
        xdrs.push((row["name"].as_str().expect("name").to_owned(), &row["xdr"]));
    }
    for (name, text) in xdrs {
        // V4's malformed base64 is kept as its text's bytes.
        let text = text.as_str().expect("base64");
        let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text)
            .unwrap_or_else(|_| text.as_bytes().to_vec());
        put("stellar_xdr", &name, &bytes);
    }

    // policy: the example policy file, as TOML and as the JSON its rules write.
    let example = include_str!("../../../examples/policy.toml");
    put("policy", "example-toml", example.as_bytes());
    let rules = terms::safety::policy::Policy::from_toml_str(example).expect("the example policy reads");
    put("policy", "example-json", serde_json::to_string(rules.rules()).expect("JSON").as_bytes());

    // config: the forms the configuration file's keys take (a SQLite file or a server, a key variable, a key file,
    // a signer command).
    let configs = [
        ("file", "journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n"),
        (
            "server",
            "journal = \"postgres://agent:pw@db/payments\"\nkey_file = \"key.hex\"\n\
             network = \"eip155:8453\"\n",
        ),
        (
            "command",
            "journal = \"sqlite:///var/terms/j.db\"\nsigner_command = \"signer --sign\"\n\
             signer_address = \"0x857b06519E91e3A54538791bDbb0E22373e36b66\"\nsigner_timeout = 30\n",
        ),
    ];
    for (name, text) in configs {
        put("config", name, text.as_bytes());
    }

    // journal_record: the rows a journal writes for buyer.json's payment, at three stages (an intent reserving, a
    // payment signed and moving, an answered settlement with its reservation committed).
    let h = terms::atr_hash(&buyer_atr()).to_hex();
    let option = js(&agreement["option"]);
    let account = fixed["account"].as_str().expect("account");
    let rows: [(&str, u8, [&str; 4], &str, &str, &str); 3] = [
        ("intent", 0, ["intent", "not-paid", "not-started", "safe"], "", "", "reserved"),
        ("signed", 1, ["signed", "unknown", "running", "forbidden"], "", "{\"x402Version\":2}", "reserved"),
        (
            "answered",
            0,
            ["answered", "settled", "completed", "forbidden"],
            "received",
            "{\"x402Version\":2}",
            "committed",
        ),
    ];
    for (name, moving, states, response, payment, reservation) in rows {
        let mut columns: Vec<&[u8]> = vec![
            b"attempt-1",
            b"key-1",
            b"payment",
            b"x402/exact/eip155/eip3009",
            account.as_bytes(),
            h.as_bytes(),
            b"0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
            b"{\"url\":\"https://seller.example/resource\"}",
            option.as_bytes(),
            b"{\"amount\":\"10000\"}",
        ];
        columns.extend(states.iter().map(|s| s.as_bytes()));
        columns.extend([response.as_bytes(), payment.as_bytes(), b"", b"", b"", b"1767225600", b"1767225601"]);
        columns.extend([&b"usdc-day"[..], b"", b"eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"]);
        columns.extend([&b"86400"[..], b"10000", b"1767225600", reservation.as_bytes()]);
        put("journal_record", name, &[&[moving][..], &join(&columns)].concat());
    }

    // contract: every row of the contract vectors (a selector byte for its kind, then its exact text), and every
    // key list and key-list row as the selector 6.
    let contract = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/contract");
    let kinds = ["offer-card", "quote", "presentation", "challenge", "receipt", "attestation"];
    for entry in std::fs::read_dir(&contract).expect("tests/vectors/contract") {
        let path = entry.expect("an entry").path();
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("a file")).expect("JSON");
        for row in file["rows"].as_array().into_iter().flatten() {
            let kind = row["kind"].as_str().expect("a kind");
            let selector = kinds.iter().position(|k| *k == kind).expect("a known kind") as u8;
            let text = row["text"].as_str().expect("a text");
            put(
                "contract",
                &row["name"].as_str().expect("a name").replace('/', "_"),
                &[&[selector][..], text.as_bytes()].concat(),
            );
        }
        for row in file["list_rows"].as_array().into_iter().flatten() {
            let text = row["text"].as_str().expect("a text");
            put(
                "contract",
                &format!("keys-{}", row["name"].as_str().expect("a name").replace('/', "_")),
                &[&[6u8][..], text.as_bytes()].concat(),
            );
        }
        for (name, list) in file["lists"].as_object().into_iter().flatten() {
            put("contract", &format!("list-{name}"), &[&[6u8][..], js(list).as_bytes()].concat());
        }
    }

    // discovery_a2a: each discovery.json row's bytes (parse and emit), with the a2a file's tasks in turn.
    let discovery = vector_file("discovery.json");
    let a2a = vector_file("a2a-legal-context.json");
    let mut tasks = vec![a2a["A2"]["task"].clone(), a2a["A2"]["expectPlaced"].clone(), a2a["A3"]["task"].clone()];
    for row in a2a["agreedRefusals"]["rows"].as_array().into_iter().flatten() {
        if matches!(row["call"].as_str(), Some("place" | "read")) && !js(&row["args"][0]).contains("$repeat") {
            tasks.push(row["args"][0].clone());
        }
    }
    let rows =
        discovery["parse"].as_array().into_iter().flatten().chain(discovery["emit"].as_array().into_iter().flatten());
    for (i, row) in rows.enumerate() {
        let bytes = match (row["bytes"].as_str(), row["bytesHex"].as_str()) {
            (Some(text), _) => text.as_bytes().to_vec(),
            (None, Some(hex)) => terms_fuzz::hex(hex),
            (None, None) => continue,
        };
        let task = js(&tasks[i % tasks.len()]);
        put("discovery_a2a", &format!("row{i}"), &join(&[&bytes, task.as_bytes()]));
    }

    // xrpl_decode: every XRPL blob of the vector files, as bytes (the signed Payments, the plant, the multi-signed
    // rows, the strict-encoding rows, the session's openings and decoder-caps' xrpl rows).
    let x402 = vector_file("x402-exact-xrpl.json");
    let session = vector_file("mpp-session-hedera-solana-xrpl.json");
    let caps = vector_file("decoder-caps.json");
    let mut blobs: Vec<(String, &Value)> = vec![
        ("V2".into(), &x402["V2"]["blob"]),
        ("V3".into(), &x402["V3"]["blob"]),
        ("plant".into(), &x402["plant"]["blob"]),
        ("XS2".into(), &session["XS2"]["blob"]),
        ("XS5".into(), &session["XS5"]["blob"]),
    ];
    for (key, rows) in [("multisigned", &x402["multisigned"]["rows"]), ("strict", &x402["strictEncoding"]["rows"])] {
        for (i, r) in rows.as_array().expect("rows").iter().enumerate() {
            blobs.push((format!("{key}{i}"), &r["blob"]));
        }
    }
    for (i, r) in caps["xrpl"]["rows"].as_array().expect("rows").iter().enumerate() {
        blobs.push((format!("caps{i}"), &r["blob"]));
    }
    for (name, blob) in blobs {
        put("xrpl_decode", &name, &terms_fuzz::hex(blob.as_str().expect("a blob")));
    }

    println!("wrote {count} seeds under {}", dir.display());
}

/// Canonical padded standard base64, as the x402 headers carry it.
fn b64_encode(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)
}

/// Unpadded base64url, as MPP's headers carry JSON.
fn b64url(bytes: &[u8]) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, bytes)
}
