//! The reference's own answers (integraledger-terms 0.4.0) for option and payment variants of the six pairings,
//! written to `peer-cases.json` by `scripts/peer-x402-evm-cases.py`: build and bound here must give the same
//! result, case by case and pairing by pairing.

use libtest_mimic::Trial;
use serde_json::{Map, Value, json};
use terms::AtrHash;
use terms::pairing::Chosen;

use super::{File, fail};
use crate::Outcome;

const CASES: &str = "tests/conformance/x402_evm/peer-cases.json";

pub(super) fn trials(all: &mut Vec<Trial>) {
    all.push(Trial::test("x402-evm::reference cases::build", || run("build")));
    all.push(Trial::test("x402-evm::reference cases::bound", || run("bound")));
}

fn cases() -> Value {
    let path = format!("{}/{CASES}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A change's value: `{"$repeat": [s, n]}` is s repeated n times, and a list holding one is the concatenation.
fn expand(value: &Value) -> Value {
    let repeat = |v: &Value| {
        let r = v.as_object().filter(|o| o.len() == 1)?.get("$repeat")?;
        Some(r[0].as_str()?.repeat(usize::try_from(r[1].as_u64()?).ok()?))
    };
    if let Some(s) = repeat(value) {
        return json!(s);
    }
    if let Some(list) = value.as_array().filter(|l| l.iter().any(|v| repeat(v).is_some())) {
        return json!(
            list.iter().map(|v| repeat(v).unwrap_or_else(|| v.as_str().unwrap().to_owned())).collect::<String>()
        );
    }
    value.clone()
}

/// Applies `[pointer, value]` (set) and `[pointer]` (remove) changes.
fn apply(mut value: Value, changes: &Value) -> Value {
    for change in changes.as_array().unwrap() {
        let pointer = change[0].as_str().unwrap();
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        let at = value.pointer_mut(parent).unwrap();
        match change.get(1) {
            Some(v) => {
                at[last] = expand(v);
            }
            None => {
                at.as_object_mut().unwrap().remove(last);
            }
        }
    }
    value
}

fn base_option(name: &str) -> Value {
    match name {
        "exact-eip3009" => File::load("x402-exact-eip155-eip3009.json").fixed()["O"].clone(),
        other => File::load(&file_of(other)).fixed()["option"].clone(),
    }
}

fn file_of(key: &str) -> String {
    format!(
        "x402-{}.json",
        match key {
            "exact-permit2" => "exact-eip155-permit2",
            "upto-permit2" => "upto-eip155-permit2",
            "erc7710" => "exact-eip155-erc7710",
            "erc7710-salt" => "exact-eip155-erc7710-salt",
            "auth-capture-eip3009" => "auth-capture-eip155-eip3009",
            _ => "auth-capture-eip155-permit2",
        }
    )
}

fn run(section: &str) -> Outcome {
    let all = cases();
    let pairings: Vec<&str> = all["pairings"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    let doc = File::load("x402-exact-eip155-permit2.json").doc();
    let payer = File::load("x402-exact-eip155-permit2.json").fixed()["payer"].clone();
    let h = AtrHash::parse("0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad").unwrap();
    let mut wrong = Vec::new();
    let list = all[section].as_array().unwrap();
    for case in list {
        let results: Vec<String> = match section {
            "build" => {
                let option = apply(base_option(case["base"].as_str().unwrap()), &case["changes"]);
                let mut required = doc.clone();
                required["accepts"] = json!([option.clone()]);
                let choice = json!({"required": required, "accepted": option, "from": payer, "now": case["now"]});
                let choice: Map<String, Value> = choice.as_object().unwrap().clone();
                pairings
                    .iter()
                    .map(|id| {
                        let chosen = Chosen {
                            pairing: (*id).into(),
                            build_input: choice.clone(),
                            reference: "r".repeat(32),
                            agreement: None,
                        };
                        match terms::pairing(id).unwrap().build(&chosen, b"abc", &h) {
                            Ok(_) => "ok".to_owned(),
                            Err(r) => r.code(),
                        }
                    })
                    .collect()
            }
            _ => {
                let presented = File::load(case["file"].as_str().unwrap()).presented();
                let presented = apply(presented, &case["changes"]);
                pairings
                    .iter()
                    .map(|id| match terms::pairing(id).unwrap().bound(&presented, None) {
                        Ok(h) => h.to_hex(),
                        Err(r) => r.code(),
                    })
                    .collect()
            }
        };
        let want: Vec<String> =
            case["expect"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        for ((id, got), want) in pairings.iter().zip(&results).zip(&want) {
            if got != want {
                wrong.push(format!("{} [{id}]: got {got}, the reference {want}", case["case"].as_str().unwrap()));
            }
        }
    }
    if list.len() < 50 {
        return Err(fail(format!("only {} {section} cases", list.len())));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(format!("{} of {} differ:\n{}", wrong.len(), list.len(), wrong.join("\n"))))
    }
}
