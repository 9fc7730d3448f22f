//! The tools' input schemas, and the check of arguments against them. rmcp validates nothing, so each schema is
//! written once as a table of fields; the JSON Schema a client sees and the check the server runs are both made
//! from that table and cannot drift apart. Every call is checked before anything is fetched or signed.

use serde_json::{Map, Value, json};

use crate::codec::b64_decode;
use crate::json::MAX_SAFE_INTEGER;
use crate::pairing::{InputFormat, InputSpec, InputType};
use crate::registry::REGISTRY;

use super::seal::is_mac_form;

/// Canonical padded standard base64 (RFC 4648 §3.5) as a regular expression: groups of four, then at most one
/// padded group whose unused bits are zero.
pub const BASE64_PATTERN: &str =
    "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=|[A-Za-z0-9+/][AQgw]==)?$";

/// A mac: `0x` and 64 lower-case hex digits.
pub const MAC_PATTERN: &str = "^0x[0-9a-f]{64}$";

/// What one argument may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One of the 67 pairing ids.
    Pairing,
    /// Any JSON value, `null` included.
    Json,
    /// A JSON object with any members.
    Object,
    /// The buyer's inputs: a JSON object whose members the built pairings' [`InputSpec`]s describe. Beside a
    /// [`Kind::Pairing`] field the tool's schema also holds them to that pairing's own specs ([`pairing_inputs`]).
    Inputs,
    /// The buyer's inputs to a later payment in a held channel: the same merged properties, and no pairing's
    /// requirements, as an in-channel payment holds them to none (its opening's `deposit` is not asked again).
    ChannelInputs,
    /// A string.
    Text,
    /// Canonical padded standard base64.
    Base64,
    /// A mac.
    Mac,
    /// `{ amount?: string }`.
    Refund,
    /// The agreement payment to approve: `{ url: string, option: object, required: object }`.
    Approved,
    /// A whole number from 1 to [`MAX_COUNT`].
    Count,
    /// An HTTP method, one of [`METHODS`].
    Method,
    /// HTTP headers: a JSON object whose every member is a string.
    Headers,
}

/// The methods a [`Kind::Method`] may be.
pub(crate) const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// The most a [`Kind::Count`] may be (the most records `atr_history` returns at once).
pub(crate) const MAX_COUNT: u64 = 1000;

/// One argument of a tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) required: bool,
    pub(crate) about: &'static str,
}

pub(crate) const fn field(name: &'static str, kind: Kind, about: &'static str) -> Field {
    Field { name, kind, required: true, about }
}

pub(crate) const fn optional(name: &'static str, kind: Kind, about: &'static str) -> Field {
    Field { name, kind, required: false, about }
}

fn pairing_ids() -> Vec<Value> {
    REGISTRY.iter().map(|e| Value::String(e.id.to_owned())).collect()
}

fn kind_schema(kind: Kind) -> Value {
    match kind {
        Kind::Pairing => json!({"type": "string", "enum": pairing_ids()}),
        Kind::Json => json!({}),
        Kind::Object => json!({"type": "object"}),
        Kind::Inputs | Kind::ChannelInputs => inputs_schema(),
        Kind::Text => json!({"type": "string"}),
        Kind::Base64 => json!({"type": "string", "contentEncoding": "base64", "pattern": BASE64_PATTERN}),
        Kind::Mac => json!({"type": "string", "pattern": MAC_PATTERN}),
        Kind::Count => json!({"type": "integer", "minimum": 1, "maximum": MAX_COUNT}),
        Kind::Method => json!({"type": "string", "enum": METHODS}),
        Kind::Headers => json!({"type": "object", "additionalProperties": {"type": "string"}}),
        Kind::Refund => json!({
            "type": "object",
            "properties": {"amount": {"type": "string"}},
            "additionalProperties": false
        }),
        Kind::Approved => json!({
            "type": "object",
            "properties": {
                "url": {"type": "string"},
                "option": {"type": "object"},
                "required": {"type": "object"}
            },
            "required": ["url", "option", "required"],
            "additionalProperties": false
        }),
    }
}

/// The name under `$defs` of an input's type and form: a string's form alone (`hex20`, `decimal`, `nonempty`), the
/// type alone where any value of it is taken (`string`, `integer`), else both (`integer-decimal`).
fn form_name(spec: &InputSpec) -> String {
    let form = match spec.format {
        InputFormat::Any => return spec.ty.as_str().to_owned(),
        InputFormat::Hex(bytes) => format!("hex{bytes}"),
        InputFormat::Decimal => "decimal".into(),
        InputFormat::NonEmpty => "nonempty".into(),
    };
    if spec.ty == InputType::String { form } else { format!("{}-{form}", spec.ty.as_str()) }
}

/// An input's type and form as a JSON Schema: its JSON type (an integer within JSON's safe range, as the gate reads
/// one) and its form as a `pattern`. Written once per form under `$defs` ([`defs`]) and referred to from each input.
fn form_schema(spec: &InputSpec) -> Value {
    let mut property = Map::new();
    property.insert("type".into(), json!(spec.ty.as_str()));
    if spec.ty == InputType::Integer {
        property.insert("minimum".into(), json!(-MAX_SAFE_INTEGER));
        property.insert("maximum".into(), json!(MAX_SAFE_INTEGER));
    }
    if let Some(pattern) = spec.format.pattern() {
        property.insert("pattern".into(), json!(pattern));
    }
    Value::Object(property)
}

/// A reference to the input's form under `$defs`.
fn form_ref(spec: &InputSpec) -> Value {
    json!({"$ref": format!("#/$defs/{}", form_name(spec))})
}

/// The built pairings' input specs, in registry order.
fn built_specs() -> impl Iterator<Item = (&'static str, &'static InputSpec)> {
    REGISTRY
        .iter()
        .filter_map(|e| e.pairing().map(|p| (e.id, p)))
        .flat_map(|(id, p)| p.inputs().iter().map(move |s| (id, s)))
}

/// The `$defs` of a tool that takes the buyer's inputs: every form a built pairing's input has, once.
pub(crate) fn defs() -> Map<String, Value> {
    let mut defs = Map::new();
    for (_, spec) in built_specs() {
        defs.entry(form_name(spec)).or_insert_with(|| form_schema(spec));
    }
    defs
}

/// The schema of the buyer's inputs, made from the input specs of every pairing this build implements: one property
/// per input name, referring to its type and form under `$defs` ([`defs`]), with what it is in words. A member no
/// pairing takes is allowed and ignored, as the gate ignores it. This merged list is for a client that reads no
/// `if`/`then`; [`pairing_inputs`] holds the members to one pairing's specs (which it takes, and which it requires).
/// It is stricter than the gate in one way only: a member given in another form than its takers' is refused here
/// even where the chosen pairing does not take it (and the gate ignores it).
pub(crate) fn inputs_schema() -> Value {
    let mut specs: Vec<(&'static str, Vec<(&'static str, &'static InputSpec)>)> = Vec::new();
    for (id, spec) in built_specs() {
        match specs.iter_mut().find(|(name, _)| *name == spec.name) {
            Some((_, takers)) => takers.push((id, spec)),
            None => specs.push((spec.name, vec![(id, spec)])),
        }
    }
    let mut properties = Map::new();
    for (name, takers) in &specs {
        let Some((_, first)) = takers.first() else { continue };
        let words = first.meaning.to_owned();
        // Where the pairings that take the name disagree on its type or form, the merged property names neither,
        // so that no pairing's own form fails it; each pairing's `then` holds it to its own.
        let agreed = takers.iter().all(|(_, spec)| (spec.ty, spec.format) == (first.ty, first.format));
        let mut property = if agreed { form_ref(first) } else { json!({}) };
        if let Value::Object(p) = &mut property {
            p.insert("description".into(), Value::String(words));
        }
        properties.insert((*name).to_owned(), property);
    }
    json!({"type": "object", "properties": properties, "additionalProperties": true})
}

/// The `inputs` one pairing takes, as the gate holds them before that pairing chooses ([`check_inputs`]): a
/// property per spec referring to its type and form, and `required` the specs that are required and that no member
/// of the option stands in for. An input the option may stand in for ([`InputSpec::offered`]) is never required
/// here, as only the pairing's choice sees whether the option has the member; given, it must still be of its form
/// (the gate asks the same where the option lacks the member, and ignores the input where the option has it).
/// Members no spec names are allowed (JSON Schema's default), as the gate ignores them; the merged property already
/// holds `inputs` to an object, and every input whose takers all read it in one form (`shared`) to that form, so
/// only the others are named here.
///
/// [`check_inputs`]: crate::pairing::check_inputs
pub(crate) fn pairing_inputs(specs: &[InputSpec], shared: &[&str]) -> Value {
    let properties: Map<String, Value> =
        specs.iter().filter(|s| !shared.contains(&s.name)).map(|s| (s.name.to_owned(), form_ref(s))).collect();
    let required: Vec<&str> = specs.iter().filter(|s| s.required && s.offered.is_none()).map(|s| s.name).collect();
    let mut out = Map::new();
    if !properties.is_empty() {
        out.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        out.insert("required".into(), json!(required));
    }
    Value::Object(out)
}

/// For a tool that names a pairing and takes the buyer's inputs: one `if`/`then` per built pairing that takes any
/// input, the inputs held to that pairing's specs ([`pairing_inputs`]) where the `pairing` member is its id, and
/// `inputs` itself required where the pairing requires one of them (the gate reads absent inputs as `{}`). Pairings
/// held to the same `then` share one entry, its `if` naming their ids (`enum`; `const` for one). A pairing that takes
/// no input has no entry: the merged properties are all it is held to, and it ignores every member.
fn per_pairing(pairing: &str, inputs: &str, pairing_required: bool) -> Vec<Value> {
    let shared = agreed_forms();
    let mut groups: Vec<(Map<String, Value>, Vec<&str>)> = Vec::new();
    for (id, pairing_specs) in REGISTRY.iter().filter_map(|e| e.pairing().map(|p| (e.id, p.inputs()))) {
        let needs_inputs = pairing_specs.iter().any(|s| s.required && s.offered.is_none());
        let held = pairing_inputs(pairing_specs, &shared);
        if held.as_object().is_none_or(Map::is_empty) {
            continue;
        }
        let mut then = Map::new();
        then.insert("properties".into(), json!({ inputs: held }));
        if needs_inputs {
            then.insert("required".into(), json!([inputs]));
        }
        match groups.iter_mut().find(|(t, _)| *t == then) {
            Some((_, ids)) => ids.push(id),
            None => groups.push((then, vec![id])),
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (then, ids) in groups {
        let named = match ids.as_slice() {
            [one] => json!({"const": one}),
            several => json!({"enum": several}),
        };
        // Where the tool requires the pairing, an `if` without it is never the one that decides.
        let mut when = json!({"properties": {pairing: named}});
        if !pairing_required && let Value::Object(w) = &mut when {
            w.insert("required".into(), json!([pairing]));
        }
        out.push(json!({"if": when, "then": then}));
    }
    out
}

/// The input names every taker reads in one type and form: the merged property holds them to it for any pairing.
fn agreed_forms() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    let mut split: Vec<&'static str> = Vec::new();
    let mut first: Vec<(&'static str, (InputType, InputFormat))> = Vec::new();
    for (_, spec) in built_specs() {
        match first.iter().find(|(n, _)| *n == spec.name) {
            Some((_, form)) if *form != (spec.ty, spec.format) => split.push(spec.name),
            Some(_) => {}
            None => {
                first.push((spec.name, (spec.ty, spec.format)));
                names.push(spec.name);
            }
        }
    }
    names.retain(|n| !split.contains(n));
    names
}

/// The JSON Schema of a tool's arguments: an object with exactly these members; where it names a pairing and takes
/// the buyer's inputs, an `allOf` holding the inputs to each pairing's own specs ([`per_pairing`]).
pub(crate) fn schema(fields: &[Field]) -> Map<String, Value> {
    let mut properties = Map::new();
    for f in fields {
        let mut s = kind_schema(f.kind);
        if let Value::Object(m) = &mut s {
            m.insert("description".to_owned(), Value::String(f.about.to_owned()));
        }
        properties.insert(f.name.to_owned(), s);
    }
    let required: Vec<Value> = fields.iter().filter(|f| f.required).map(|f| Value::String(f.name.into())).collect();
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(properties));
    out.insert("required".into(), Value::Array(required));
    out.insert("additionalProperties".into(), json!(false));
    if fields.iter().any(|f| matches!(f.kind, Kind::Inputs | Kind::ChannelInputs)) {
        out.insert("$defs".into(), Value::Object(defs()));
    }
    let named = |kind: Kind| fields.iter().find(|f| f.kind == kind).map(|f| f.name);
    if let (Some(pairing), Some(inputs)) = (named(Kind::Pairing), named(Kind::Inputs)) {
        let required = fields.iter().any(|f| f.kind == Kind::Pairing && f.required);
        let each = per_pairing(pairing, inputs, required);
        if !each.is_empty() {
            out.insert("allOf".into(), Value::Array(each));
        }
    }
    out
}

/// Why arguments fail their schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    /// The argument, or `""` for the arguments as a whole.
    pub(crate) argument: String,
    /// What is wrong with it.
    pub(crate) reason: String,
}

fn invalid(argument: &str, reason: impl Into<String>) -> Invalid {
    Invalid { argument: argument.to_owned(), reason: reason.into() }
}

fn only_members(value: &Map<String, Value>, allowed: &[&str], argument: &str) -> Result<(), Invalid> {
    match value.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(extra) => Err(invalid(argument, format!("has a member `{extra}` the schema does not name"))),
        None => Ok(()),
    }
}

fn check_kind(name: &str, kind: Kind, value: &Value) -> Result<(), Invalid> {
    match kind {
        Kind::Json => Ok(()),
        Kind::Object | Kind::Inputs | Kind::ChannelInputs if value.is_object() => Ok(()),
        Kind::Object | Kind::Inputs | Kind::ChannelInputs => Err(invalid(name, "must be a JSON object")),
        Kind::Text if value.is_string() => Ok(()),
        Kind::Text => Err(invalid(name, "must be a string")),
        Kind::Pairing => match value.as_str() {
            Some(id) if REGISTRY.iter().any(|e| e.id == id) => Ok(()),
            _ => Err(invalid(name, "must be one of the 67 pairing ids")),
        },
        Kind::Base64 => match value.as_str() {
            Some(text) if b64_decode(text).is_some() => Ok(()),
            _ => Err(invalid(name, "must be padded standard base64 in canonical form")),
        },
        Kind::Mac => match value.as_str() {
            Some(text) if is_mac_form(text) => Ok(()),
            _ => Err(invalid(name, "must be 0x and 64 lower-case hex digits")),
        },
        Kind::Count => match value.as_u64() {
            Some(n) if (1..=MAX_COUNT).contains(&n) => Ok(()),
            _ => Err(invalid(name, format!("must be a whole number from 1 to {MAX_COUNT}"))),
        },
        Kind::Method => match value.as_str() {
            Some(m) if METHODS.contains(&m) => Ok(()),
            _ => Err(invalid(name, format!("must be one of {}", METHODS.join(", ")))),
        },
        Kind::Headers => {
            let Some(map) = value.as_object() else { return Err(invalid(name, "must be a JSON object")) };
            match map.iter().find(|(_, v)| !v.is_string()) {
                Some((k, _)) => Err(invalid(&format!("{name}.{k}"), "must be a string")),
                None => Ok(()),
            }
        }
        Kind::Refund => {
            let Some(map) = value.as_object() else { return Err(invalid(name, "must be a JSON object")) };
            only_members(map, &["amount"], name)?;
            match map.get("amount") {
                Some(a) if !a.is_string() => Err(invalid(&format!("{name}.amount"), "must be a string")),
                _ => Ok(()),
            }
        }
        Kind::Approved => {
            let Some(map) = value.as_object() else { return Err(invalid(name, "must be a JSON object")) };
            only_members(map, &["url", "option", "required"], name)?;
            for (member, object) in [("url", false), ("option", true), ("required", true)] {
                let path = format!("{name}.{member}");
                match map.get(member) {
                    None => return Err(invalid(&path, "is required")),
                    Some(v) if object && !v.is_object() => return Err(invalid(&path, "must be a JSON object")),
                    Some(v) if !object && !v.is_string() => return Err(invalid(&path, "must be a string")),
                    Some(_) => {}
                }
            }
            Ok(())
        }
    }
}

/// Checks the arguments against the fields: an object, every required member present, no member the schema does
/// not name, each of its kind. An optional member given as `null` is not absent: it fails unless its kind is
/// [`Kind::Json`].
pub(crate) fn check(fields: &[Field], arguments: &Map<String, Value>) -> Result<(), Invalid> {
    let names: Vec<&str> = fields.iter().map(|f| f.name).collect();
    only_members(arguments, &names, "")?;
    for f in fields {
        match arguments.get(f.name) {
            None if f.required => return Err(invalid(f.name, "is required")),
            None => {}
            Some(value) => check_kind(f.name, f.kind, value)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `inputs` schema is the built pairings' specs: a property per input, of its type and form, saying what
    /// it is and which pairings take it; other members allowed, as the gate ignores them.
    #[test]
    fn the_inputs_schema_is_made_from_the_pairings_specs() {
        let inputs = inputs_schema();
        assert_eq!((inputs["type"].as_str(), inputs["additionalProperties"].as_bool()), (Some("object"), Some(true)));
        let properties = inputs["properties"].as_object().unwrap();
        let mut named = 0;
        for entry in REGISTRY.iter() {
            let Some(pairing) = entry.pairing() else { continue };
            for spec in pairing.inputs() {
                named += 1;
                let p = &properties[spec.name];
                let takers = REGISTRY.iter().filter_map(|e| e.pairing()).flat_map(|p| p.inputs());
                let mut forms = takers.filter(|s| s.name == spec.name).map(|s| (s.ty, s.format));
                let defs = defs();
                let form = |p: &Value| {
                    let name = p["$ref"].as_str()?.strip_prefix("#/$defs/")?.to_owned();
                    defs.get(&name).cloned()
                };
                if forms.all(|form| form == (spec.ty, spec.format)) {
                    let def = form(p).unwrap_or_else(|| panic!("{}: no $defs form", spec.name));
                    assert_eq!(def["type"], spec.ty.as_str(), "{}", spec.name);
                    assert_eq!(def.get("pattern").and_then(Value::as_str), spec.format.pattern().as_deref());
                } else {
                    assert!(p.get("$ref").is_none() && p.get("type").is_none(), "{}: the takers disagree", spec.name);
                }
                let words = p["description"].as_str().unwrap();
                let meanings = REGISTRY.iter().filter_map(|e| e.pairing()).flat_map(|p| p.inputs());
                assert!(meanings.filter(|s| s.name == spec.name).any(|s| s.meaning == words), "{words}");
            }
        }
        assert!(properties.len() <= named && (named == 0) == properties.is_empty());
        let fields = [optional("inputs", Kind::Inputs, "The inputs.")];
        let tool = schema(&fields);
        assert_eq!(tool["properties"]["inputs"]["properties"], inputs["properties"]);
        assert_eq!(tool["properties"]["inputs"]["description"], "The inputs.");
        for (given, ok) in [(json!({}), true), (json!({"any": 1}), true), (json!([]), false), (Value::Null, false)] {
            let arguments = json!({"inputs": given});
            assert_eq!(check(&fields, arguments.as_object().unwrap()).is_ok(), ok, "{given}");
        }
    }

    /// A tool that names a pairing and takes inputs holds them, per built pairing that requires an input or reads
    /// one in a form other takers do not share, to that pairing's specs: the `if` on the pairing id (with the
    /// pairing required where the tool does not require it), the `then` its own forms and its required inputs (those
    /// no option member stands in for), and `inputs` itself required where any is. An in-channel payment's, none.
    #[test]
    fn a_tool_that_names_a_pairing_holds_the_inputs_to_its_specs() {
        let shared = agreed_forms();
        for pairing_required in [false, true] {
            let field_of = if pairing_required { field } else { optional };
            let tool = schema(&[field_of("pairing", Kind::Pairing, "p"), optional("inputs", Kind::Inputs, "i")]);
            let each = tool.get("allOf").and_then(Value::as_array).cloned().unwrap_or_default();
            let takers: Vec<_> = REGISTRY
                .iter()
                .filter_map(|e| e.pairing())
                .filter(|p| p.inputs().iter().any(|s| (s.required && s.offered.is_none()) || !shared.contains(&s.name)))
                .collect();
            assert!(!takers.is_empty());
            assert!(each.len() <= takers.len());
            // The ids each entry's `if` names: its `const`, or its `enum`.
            let names = |entry: &Value| -> Vec<String> {
                let named = &entry["if"]["properties"]["pairing"];
                let ids = named
                    .get("enum")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_else(|| vec![named["const"].clone()]);
                ids.iter().map(|i| i.as_str().unwrap().to_owned()).collect()
            };
            // Every taker is named, once, and nothing else is.
            let mut named: Vec<String> = each.iter().flat_map(names).collect();
            let mut ids: Vec<String> = takers.iter().map(|p| p.id().to_owned()).collect();
            named.sort();
            ids.sort();
            assert_eq!(named, ids);
            for pairing in &takers {
                let found: Vec<&Value> = each.iter().filter(|e| names(e).contains(&pairing.id().to_owned())).collect();
                assert_eq!(found.len(), 1, "{} named once", pairing.id());
                let entry = found[0];
                if !pairing_required {
                    assert_eq!(entry["if"]["required"], json!(["pairing"]));
                } else {
                    assert!(entry["if"].get("required").is_none());
                }
                let held = &entry["then"]["properties"]["inputs"];
                assert_eq!(held, &pairing_inputs(pairing.inputs(), &shared));
                let required: Vec<&str> =
                    pairing.inputs().iter().filter(|s| s.required && s.offered.is_none()).map(|s| s.name).collect();
                assert_eq!(held.get("required").cloned().unwrap_or(json!([])), json!(required), "{}", pairing.id());
                assert_eq!(entry["then"].get("required").is_some(), !required.is_empty(), "{}", pairing.id());
                for spec in pairing.inputs().iter().filter(|s| !shared.contains(&s.name)) {
                    let name =
                        held["properties"][spec.name]["$ref"].as_str().unwrap().strip_prefix("#/$defs/").unwrap();
                    assert_eq!(tool["$defs"][name]["type"], spec.ty.as_str());
                }
            }
        }
        let tool = schema(&[field("pairing", Kind::Pairing, "p"), optional("inputs", Kind::Inputs, "i")]);
        let within = schema(&[field("pairing", Kind::Pairing, "p"), optional("inputs", Kind::ChannelInputs, "i")]);
        assert!(within.get("allOf").is_none());
        assert_eq!(within["properties"]["inputs"]["properties"], tool["properties"]["inputs"]["properties"]);
        assert!(schema(&[optional("inputs", Kind::Inputs, "i")]).get("allOf").is_none(), "no pairing named");
    }
}
