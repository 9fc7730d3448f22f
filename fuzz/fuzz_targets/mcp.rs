//! The MCP tools' arguments: `BuyerServer::call(name, arguments, cancel)` with fuzzed JSON arguments for each of the
//! eight tools, on a server with a counting fetch (serving "abc", whose hash every fixture document advertises) and
//! a counting signer (the EIP-3009 fixture's key).
//!
//! Input: one selector byte (bits 0–2: the tool; bit 3: no arguments at all), then the arguments as JSON text. Only
//! an object (or, with bit 3, nothing) is passed: the transport hands the server nothing else.
//!
//! The arguments are checked here, on their own, against the JSON Schema the server publishes for the tool
//! (`tools/list`): type, enum, pattern, properties, required and additionalProperties, the keywords the schemas
//! use. Asserts: arguments that fail the published schema are answered `invalid`, with `isError`, and neither the
//! fetch nor the signer is called; arguments that pass it are never answered `invalid`; and the one content block
//! is the JSON text of the structured result.
#![no_main]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use regex::Regex;
use serde_json::{Map, Value};
use terms::CancellationToken;
use terms::mcp::{BuyerOptions, BuyerServer, TOOL_NAMES, buyer_server};
use terms_fuzz::{CountingSigner, Fixture, FuzzFetch, fixture, paused};

/// Whether the value satisfies the schema, for the keywords the tools' schemas use.
fn valid(schema: &Map<String, Value>, value: &Value) -> bool {
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => value.is_object(),
            "string" => value.is_string(),
            "array" => value.is_array(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "number" => value.is_number(),
            other => panic!("a schema type the validator does not know: {other}"),
        };
        if !ok {
            return false;
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return false;
    }
    if let (Some(pattern), Some(s)) = (schema.get("pattern").and_then(Value::as_str), value.as_str())
        && !regex(pattern).is_match(s)
    {
        return false;
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(required) = schema.get("required").and_then(Value::as_array)
            && !required.iter().filter_map(Value::as_str).all(|k| object.contains_key(k))
        {
            return false;
        }
        for (k, v) in object {
            let allowed = match properties.and_then(|p| p.get(k)).and_then(Value::as_object) {
                Some(sub) => valid(sub, v),
                None => schema.get("additionalProperties") != Some(&Value::Bool(false)),
            };
            if !allowed {
                return false;
            }
        }
    }
    true
}

fn regex(pattern: &str) -> Regex {
    static CACHE: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Mutex::default).lock().unwrap();
    cache
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(pattern).expect("a published pattern compiles"))
        .clone()
}

/// The fixture whose key signs and whose ATR the fetch serves.
const FIXTURE: &str = "x402/exact/eip155/eip3009";

/// A server with this fetch and signer, on the fixture's clock.
fn server(f: &Fixture, fetch: FuzzFetch, signer: CountingSigner) -> BuyerServer {
    buyer_server(
        BuyerOptions::new(Arc::new(fetch))
            .signer(Arc::new(signer))
            .gate_options(terms::Options::new().clock(terms::FixedClock(f.now))),
    )
}

/// The input schema the server publishes for the tool (`tools/list`). The list is the same for every server this
/// target builds (the tools and their schemas do not depend on the fetch, the signer or the clock), so it is read
/// once per run from such a server: building it is most of an execution's time otherwise.
fn input_schema(name: &str) -> &'static Map<String, Value> {
    static TOOLS: OnceLock<Vec<(String, Map<String, Value>)>> = OnceLock::new();
    let tools = TOOLS.get_or_init(|| {
        let f = fixture(FIXTURE);
        server(f, FuzzFetch::serving(&f.atr), f.signer())
            .tools()
            .into_iter()
            .map(|t| (t.name.to_string(), (*t.input_schema).clone()))
            .collect()
    });
    tools.iter().find(|(n, _)| n == name).map(|(_, schema)| schema).expect("the server offers every tool")
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let name = TOOL_NAMES[usize::from(selector & 7)];
    let arguments = if selector & 8 != 0 {
        None
    } else {
        match serde_json::from_slice::<Value>(rest) {
            Ok(Value::Object(m)) => Some(m),
            _ => return,
        }
    };
    let f = fixture(FIXTURE);
    let fetch = FuzzFetch::serving(&f.atr);
    let signer = f.signer();
    let server = server(f, fetch.clone(), signer.clone());
    let schema_ok = valid(input_schema(name), &Value::Object(arguments.clone().unwrap_or_default()));
    let result = paused()
        .block_on(server.call(name, arguments.clone(), CancellationToken::new()))
        .expect("an offered tool answers");
    let structured = result.structured_content.clone().expect("structured content");
    let invalid = structured.get("invalid").is_some();
    if schema_ok {
        assert!(!invalid, "{name}: arguments the published schema accepts were answered invalid: {structured}");
    } else {
        assert!(invalid, "{name}: arguments the published schema refuses were not answered invalid: {arguments:?}");
        assert_eq!(result.is_error, Some(true));
        assert_eq!(fetch.count(), 0, "{name}: fetched for arguments that fail the schema");
        assert_eq!(signer.count(), 0, "{name}: signed for arguments that fail the schema");
    }
    let text = serde_json::to_value(&result.content).expect("content");
    assert_eq!(text[0]["text"], Value::String(serde_json::to_string(&structured).expect("text")), "{name}");
    assert_eq!(result.content.len(), 1);
});
