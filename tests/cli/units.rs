//! Human units: amounts as `0.01 USDC (10000)`, `--max` in the asset's units, times in RFC 3339, `--json` unchanged;
//! and the built-in table of well-known assets checked row by row against the upstream vectors.

use serde_json::Value;

use super::{CONFIG, Run, json, said, seller};

#[path = "../../src/bin/terms/known_assets.rs"]
mod known_assets;

/// Every object of a JSON tree.
fn objects(value: &Value, out: &mut Vec<serde_json::Map<String, Value>>) {
    match value {
        Value::Object(map) => {
            out.push(map.clone());
            map.values().for_each(|v| objects(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| objects(v, out)),
        _ => {}
    }
}

/// Each built-in asset: an offer in the vectors names its network and asset, with the symbol as its EIP-712 name
/// (`extra.name`) or the asset as a mint with its decimals; and a vector gives the symbol's (or the mint's) decimals.
#[test]
fn every_built_in_asset_is_in_the_vectors() {
    let mut all = Vec::new();
    for file in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors")).unwrap() {
        let path = file.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            objects(&serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap(), &mut all);
        }
    }
    let text = |o: &serde_json::Map<String, Value>, k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
    assert!(!known_assets::KNOWN_ASSETS.is_empty());
    for (network, asset, symbol, decimals) in known_assets::KNOWN_ASSETS {
        let offered = all
            .iter()
            .any(|o| text(o, "network").as_deref() == Some(*network) && text(o, "asset").as_deref() == Some(*asset));
        assert!(offered, "{network} {asset}: no offer in the vectors");
        let named = all.iter().any(|o| {
            text(o, "asset").as_deref() == Some(*asset)
                && o.get("extra").and_then(|e| e.get("name")).and_then(Value::as_str) == Some(*symbol)
        });
        let decimals_of = |o: &serde_json::Map<String, Value>| o.get("decimals").and_then(Value::as_u64);
        let mint = all
            .iter()
            .any(|o| text(o, "mint").as_deref() == Some(*asset) && decimals_of(o) == Some(u64::from(*decimals)));
        let by_symbol = all
            .iter()
            .any(|o| text(o, "currency").as_deref() == Some(*symbol) && decimals_of(o) == Some(u64::from(*decimals)));
        assert!(named || mint, "{network} {asset}: the vectors name it neither {symbol} nor as a mint");
        assert!(mint || by_symbol, "{network} {asset}: no vector gives {symbol} {decimals} decimals");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amounts_and_times_are_shown_for_people_and_max_reads_the_assets_units() {
    let run = Run::new(CONFIG).await;
    let url = run.url("/report");
    let check = run.terms(&["check", &url]).await;
    assert!(said(&check).contains("pays      0.01 USDC (10000) on eip155:84532"), "{}", said(&check));
    // --max in the asset's units: at the price it pays; below it, refused with both amounts; nothing else signed.
    let under = run.terms(&["pay", &url, "--max", "0.009USDC"]).await;
    assert_eq!(under.status.code(), Some(3), "{}", said(&under));
    assert!(said(&under).contains("0.01 USDC (10000) is above --max 0.009USDC"), "{}", said(&under));
    assert_eq!(run.seller.paid("/report"), 0);
    let pay = run.terms(&["pay", &url, "--max", "0.01 USDC"]).await;
    assert_eq!(pay.status.code(), Some(0), "{}", said(&pay));
    // An unknown symbol, or more decimals than USDC has: usage errors, nothing sent.
    for bad in ["1DOGE", "0.0000001USDC", "0.5", "ten"] {
        let out = run.terms(&["pay", &url, "--max", bad]).await;
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", said(&out));
    }
    assert_eq!(run.seller.hits("/report"), 4, "check, the refused one, and the paid one's two requests");
    let history = String::from_utf8_lossy(&run.terms(&["history"]).await.stdout).into_owned();
    let line = history.lines().next().unwrap();
    let stamp = line.split_whitespace().next().unwrap();
    assert!(stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T', "RFC 3339: {line}");
    assert!(line.contains("0.01 USDC (10000)"), "{line}");
    // --json keeps atomic units and Unix seconds, as scripts read them.
    let rows = json(&run.terms(&["history", "--json"]).await);
    assert_eq!(rows[0]["quote"]["amount"], seller::AMOUNT);
    assert!(rows[0]["created_at"].is_u64());
}
