//! The input schemas the tools advertise, read by a JSON Schema validator (the `jsonschema` crate, draft 2020-12),
//! against the check the gate runs on the same specs (`terms::pairing::check_inputs`): for every built pairing, an
//! inputs object the schema accepts is one the gate takes, and one it rejects is one the gate declines
//! `<namespace>/input-missing`.

use std::sync::Arc;

use jsonschema::Validator;
use libtest_mimic::Trial;
use serde_json::{Map, Value, json};
use terms::mcp::{BuyerOptions, buyer_server};
use terms::pairing::{InputFormat, InputType, check_inputs};
use terms::{InputSpec, Pairing, REGISTRY};

use crate::common::*;

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("mcp::input_schemas_agree_with_the_gate_per_pairing", || Ok(run(agree_with_the_gate()))),
        Trial::test("mcp::input_schema_rejects_what_the_server_declines", || Ok(run(rejects_what_is_declined()))),
    ]
}

fn built() -> Vec<&'static dyn Pairing> {
    REGISTRY.iter().filter_map(|e| e.pairing()).collect()
}

/// A value of the spec's type and form.
fn valid(spec: &InputSpec) -> Value {
    match (spec.ty, spec.format) {
        (InputType::String, InputFormat::Hex(bytes)) => json!(format!("0x{}", "aB".repeat(bytes))),
        (InputType::String, InputFormat::Decimal) => json!("007"),
        (InputType::String, _) => json!("x"),
        (InputType::Integer, _) => json!(7),
        (InputType::Number, _) => json!(1.5),
        (InputType::Boolean, _) => json!(true),
        (InputType::Object, _) => json!({}),
        (InputType::Array, _) => json!([]),
        (other, _) => panic!("no sample for {other:?}"),
    }
}

/// Values near the spec's: `null`, another type, another form, and for an integer the edges of JSON's safe range
/// and an integral float (the gate reads `60.0` as 60).
fn others(spec: &InputSpec) -> Vec<Value> {
    let mut out = vec![Value::Null, if spec.ty == InputType::String { json!(1) } else { json!("x") }];
    match spec.format {
        InputFormat::Hex(bytes) => out.extend([json!("0x12"), json!(format!("0x{}", "zz".repeat(bytes)))]),
        InputFormat::Decimal => out.extend([json!("1.5"), json!(""), json!("9".repeat(79))]),
        InputFormat::NonEmpty => out.push(json!("")),
        _ => {}
    }
    if spec.ty == InputType::Integer {
        let safe = (1_i64 << 53) - 1;
        out.extend([json!(7.5), json!(safe), json!(safe + 1), json!(-safe - 1), json!(u64::MAX)]);
        out.push(serde_json::from_str("60.0").unwrap());
    }
    out
}

/// Every inputs object the test tries for one pairing: its required inputs alone, every input, each input left out,
/// and each input given as each of [`others`]; plus `{}` and a member no spec names.
fn variants(pairing: &dyn Pairing) -> Vec<Map<String, Value>> {
    let specs = pairing.inputs();
    let base: Map<String, Value> =
        specs.iter().filter(|s| s.required && s.offered.is_none()).map(|s| (s.name.to_owned(), valid(s))).collect();
    let full: Map<String, Value> = specs.iter().map(|s| (s.name.to_owned(), valid(s))).collect();
    let mut out = vec![Map::new(), base.clone(), full.clone()];
    for spec in specs {
        let mut without = full.clone();
        without.remove(spec.name);
        out.push(without);
        for other in others(spec) {
            let mut with = base.clone();
            with.insert(spec.name.to_owned(), other);
            out.push(with);
        }
    }
    let mut unknown = base;
    unknown.insert("noSpecNamesThis".into(), json!({"any": [1, null]}));
    out.push(unknown);
    out
}

/// The arguments of a call of `tool` that the schema holds to nothing but the inputs.
fn arguments(tool: &str, pairing: &str, inputs: Option<&Map<String, Value>>) -> Value {
    let mut args = match tool {
        "atr_confirm" => json!({"pairing": pairing, "document": {}, "account": "eip155:8453:0x01"}),
        "atr_transact" => json!({"pairing": pairing, "document": {}}),
        other => panic!("{other} is not a tool that chooses"),
    };
    if let Some(inputs) = inputs {
        args["inputs"] = Value::Object(inputs.clone());
    }
    args
}

/// The form every built pairing that takes the name agrees on, which the merged `inputs` properties give it; `None`
/// where they disagree (the merged property then names no form) or no pairing takes it.
fn merged_form(name: &str) -> Option<&'static InputSpec> {
    let takers: Vec<&InputSpec> = built().iter().flat_map(|p| p.inputs()).filter(|s| s.name == name).collect();
    let first = *takers.first()?;
    takers.iter().all(|s| (s.ty, s.format) == (first.ty, first.format)).then_some(first)
}

/// Where the schema is stricter than the gate: a member the pairing leaves to the option's own member
/// ([`InputSpec::offered`]) or does not take at all, given in another form than the merged properties name. The gate
/// passes such a member by; the schema refuses it.
fn stricter_than_the_gate(pairing: &dyn Pairing, inputs: &Map<String, Value>) -> bool {
    inputs.iter().any(|(name, value)| {
        let own = pairing.inputs().iter().find(|s| s.name == name);
        let own_form = own.is_some_and(|s| s.offered.is_none());
        let malformed = |s: &InputSpec| !s.accepts(value);
        !own_form && (own.is_some_and(malformed) || merged_form(name).is_some_and(malformed))
    })
}

async fn validators() -> Vec<(String, Validator)> {
    let server = buyer_server(BuyerOptions::new(Arc::new(seller())).signer(Arc::new(signer())));
    let client = connect(server).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut out = Vec::new();
    for tool in tools {
        let schema = Value::Object((*tool.input_schema).clone());
        let validator = jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{}: {e}", tool.name));
        // The pairings the `if`s name: an entry's `const`, or each of its `enum` (pairings held alike share one).
        let per_pairing: usize = schema.get("allOf").and_then(Value::as_array).map_or(0, |each| {
            each.iter()
                .map(|e| {
                    let named = &e["if"]["properties"]["pairing"];
                    named.get("enum").and_then(Value::as_array).map_or(1, Vec::len)
                })
                .sum()
        });
        // A pairing has its own `if`/`then` where it requires an input, or takes one whose form the pairings that
        // take it disagree on; any other input's form the merged properties already hold it to.
        let takers = built()
            .iter()
            .filter(|p| p.inputs().iter().any(|s| (s.required && s.offered.is_none()) || merged_form(s.name).is_none()))
            .count();
        match tool.name.as_ref() {
            // The tools whose call chooses a payment: the gate holds the inputs to the chosen pairing's specs.
            "atr_confirm" | "atr_transact" => {
                assert_eq!(per_pairing, takers, "{}: an if/then per pairing it holds to more", tool.name);
                out.push((tool.name.to_string(), validator));
            }
            // An in-channel payment and the rest hold the inputs to no pairing.
            _ => assert_eq!(per_pairing, 0, "{}", tool.name),
        }
    }
    client.cancel().await.unwrap();
    assert_eq!(out.len(), 2);
    out
}

async fn agree_with_the_gate() {
    let validators = validators().await;
    let built = built();
    let free = built.iter().find(|p| p.inputs().is_empty()).expect("a built pairing that takes no input");
    let (mut compared, mut stricter) = (0, 0);
    for from in &built {
        // A required input left out: refused for this pairing, by the schema and by the gate, and taken by one that
        // needs no input.
        for spec in from.inputs().iter().filter(|s| s.required && s.offered.is_none()) {
            let mut missing: Map<String, Value> = from.inputs().iter().map(|s| (s.name.to_owned(), valid(s))).collect();
            missing.remove(spec.name);
            assert!(check_inputs(*from, &missing).is_err());
            for (tool, v) in &validators {
                assert!(!v.is_valid(&arguments(tool, from.id(), Some(&missing))), "{tool} {} {}", from.id(), spec.name);
                assert!(!v.is_valid(&arguments(tool, from.id(), None)), "{tool} {}: no inputs at all", from.id());
                assert!(v.is_valid(&arguments(tool, free.id(), Some(&missing))), "{tool} {}", free.id());
            }
        }
        // Every variant, for every pairing: the schema's verdict is the gate's.
        for inputs in variants(*from) {
            for to in &built {
                let gate = check_inputs(*to, &inputs);
                if let Err(refusal) = &gate {
                    assert!(refusal.code().ends_with("/input-missing"), "{}", refusal.code());
                }
                for (tool, v) in &validators {
                    let said = v.is_valid(&arguments(tool, to.id(), Some(&inputs)));
                    if stricter_than_the_gate(*to, &inputs) {
                        assert!(!said, "{tool} {}: {inputs:?}", to.id());
                        stricter += 1;
                        continue;
                    }
                    assert_eq!(said, gate.is_ok(), "{tool} {}: {inputs:?}", to.id());
                    compared += 1;
                }
            }
        }
    }
    for to in &built {
        for (tool, v) in &validators {
            let empty = Map::new();
            assert_eq!(v.is_valid(&arguments(tool, to.id(), None)), check_inputs(*to, &empty).is_ok(), "{tool}");
        }
    }
    assert!(compared > 1000 && stricter > 0, "{compared} compared, {stricter} stricter");
}

/// The server, called with the inputs the schema rejects for the pairing, declines them `<namespace>/input-missing`;
/// with the inputs the schema accepts, it gets past the inputs.
async fn rejects_what_is_declined() {
    let validators = validators().await;
    let (_, confirm) = validators.iter().find(|(name, _)| name == "atr_confirm").unwrap();
    let server = buyer_server(server_options(Arc::new(seller())));
    let client = connect(server).await;
    let mut args = json!({"pairing": BATCH, "document": channel_doc(None), "account": account()});
    assert!(!confirm.is_valid(&args), "{BATCH} requires payerAuthorizer");
    let r = call(&client, "atr_confirm", args.clone()).await;
    let (code, v) = declined(&r);
    assert_eq!((code.as_str(), &v["decline"]["detail"]), ("no-payable-option", &json!("x402/input-missing")));
    args["inputs"] = channel_inputs();
    assert!(confirm.is_valid(&args));
    let r = call(&client, "atr_confirm", args).await;
    assert!(ok(&r)["request"].is_object(), "{r:?}");
    client.cancel().await.unwrap();
}
