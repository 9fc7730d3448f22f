//! The buyer's own inputs a pairing takes beside the offer: each pairing names them once, as [`InputSpec`]s, and one
//! validator, [`check_inputs`], holds the buyer's inputs to them before the pairing chooses. The MCP tools' schemas
//! are made from the same specs.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Advertised, ChooseContext, Chosen, Pairing, namespace};
use crate::decimal;
use crate::json::{Member, safe_int};
use crate::refusal::{Reason, Refusal};

/// The JSON type an input takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum InputType {
    /// A JSON string.
    String,
    /// A JSON number.
    Number,
    /// A JSON number holding a safe integer (`60.0` is 60).
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
}

impl InputType {
    /// The type as JSON Schema names it, e.g. `string`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
        }
    }

    /// Whether the value is of this type. `null` is of none.
    pub fn holds(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Number => value.is_number(),
            Self::Integer => safe_int(value).is_some(),
            Self::Boolean => value.is_boolean(),
            Self::Object => value.is_object(),
            Self::Array => value.is_array(),
        }
    }
}

/// The form a string input has beyond its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum InputFormat {
    /// Any value of the input's type.
    Any,
    /// `0x` and twice this many hex digits, in either case: so many bytes (20 for an EVM address, 32 for a salt).
    Hex(usize),
    /// 1 to 78 ASCII digits: an amount in atomic units, read by its value (`007` is 7).
    Decimal,
    /// A string of one character or more (the reference's `string` input), whose own form the pairing's build
    /// checks.
    NonEmpty,
}

impl InputFormat {
    /// Whether the value has this form (a string, for every form but [`InputFormat::Any`]).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            Self::Any => true,
            Self::Hex(bytes) => value
                .as_str()
                .and_then(|s| s.strip_prefix("0x"))
                .is_some_and(|digits| digits.len() == 2 * bytes && digits.bytes().all(|b| b.is_ascii_hexdigit())),
            Self::Decimal => value.as_str().is_some_and(decimal::is_decimal),
            Self::NonEmpty => value.as_str().is_some_and(|s| !s.is_empty()),
        }
    }

    /// The form in words, e.g. `0x and 40 hex digits`; `None` for [`InputFormat::Any`].
    pub fn hint(self) -> Option<String> {
        match self {
            Self::Any => None,
            Self::Hex(bytes) => Some(format!("0x and {} hex digits ({bytes} bytes)", 2 * bytes)),
            Self::Decimal => Some(format!("a decimal string of 1 to {} digits", decimal::MAX_DIGITS)),
            Self::NonEmpty => Some("a string of one character or more".to_owned()),
        }
    }

    /// The form as a JSON Schema `pattern`; `None` for [`InputFormat::Any`].
    pub fn pattern(self) -> Option<String> {
        match self {
            Self::Any => None,
            Self::Hex(bytes) => Some(format!("^0x[0-9a-fA-F]{{{}}}$", 2 * bytes)),
            Self::Decimal => Some(format!("^[0-9]{{1,{}}}$", decimal::MAX_DIGITS)),
            Self::NonEmpty => Some("^[\\s\\S]+$".to_owned()),
        }
    }
}

/// One input a pairing takes from the buyer (`Options::inputs`), beside the offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputSpec {
    /// The member of the inputs, e.g. `payerAuthorizer`.
    pub name: &'static str,
    /// Its JSON type.
    #[serde(rename = "type")]
    pub ty: InputType,
    /// Its form beyond the type.
    pub format: InputFormat,
    /// Whether the pairing takes no payment without it.
    pub required: bool,
    /// The member of the chosen option that stands in for the input, e.g. `extra.minDeposit`: where the option has
    /// it the input is ignored, and where it has not the input is required. Only the pairing's `choose` sees which
    /// option it chooses, so it checks such an input itself (with [`InputSpec::accepts`]); [`check_inputs`] passes
    /// it by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered: Option<&'static str>,
    /// What it is, in one line.
    pub meaning: &'static str,
}

impl InputSpec {
    /// A required input of any form of its type.
    pub const fn required(name: &'static str, ty: InputType, meaning: &'static str) -> Self {
        Self { name, ty, format: InputFormat::Any, required: true, offered: None, meaning }
    }

    /// An optional input of any form of its type.
    pub const fn optional(name: &'static str, ty: InputType, meaning: &'static str) -> Self {
        Self { name, ty, format: InputFormat::Any, required: false, offered: None, meaning }
    }

    /// The spec with its form.
    #[must_use]
    pub const fn with_format(mut self, format: InputFormat) -> Self {
        self.format = format;
        self
    }

    /// The spec of an input that the chosen option's member stands in for ([`InputSpec::offered`]): required
    /// unless the option has that member.
    #[must_use]
    pub const fn unless_offered(mut self, member: &'static str) -> Self {
        self.required = true;
        self.offered = Some(member);
        self
    }

    /// Whether a value given for the input is of its type and form.
    pub fn accepts(&self, value: &Value) -> bool {
        self.ty.holds(value) && self.format.accepts(value)
    }
}

/// Holds the buyer's inputs to the pairing's [`Pairing::inputs`]: every input given is of its type and form (`null`
/// counts as given), and every required one is given; `<namespace>/input-missing` otherwise, the namespace the
/// pairing id's. An input the option stands in for ([`InputSpec::offered`]) is the pairing's own to check, and a
/// member no spec names is ignored. The gate calls this before the pairing's `choose`.
pub fn check_inputs(pairing: &dyn Pairing, inputs: &Map<String, Value>) -> Result<(), Refusal> {
    check_specs(namespace(pairing.id()), pairing.inputs(), inputs)
}

/// [`check_inputs`] over the specs, refusing in `namespace`.
pub(crate) fn check_specs(
    namespace: &'static str,
    specs: &[InputSpec],
    inputs: &Map<String, Value>,
) -> Result<(), Refusal> {
    let held = |spec: &InputSpec| match inputs.member(spec.name) {
        _ if spec.offered.is_some() => true,
        Some(value) => spec.accepts(value),
        None => !spec.required,
    };
    if specs.iter().all(held) { Ok(()) } else { Err(Refusal::new(namespace, Reason::InputMissing)) }
}

/// The pairing's choice with the buyer's inputs checked against its specs first. An offer the account cannot pay is
/// still declined `no-payable-option` before a malformed input is, as the reference's choose finds the option before
/// it reads the inputs.
pub(crate) fn choose_with_inputs(
    pairing: &dyn Pairing,
    read: &Advertised<'_>,
    ctx: &ChooseContext<'_>,
) -> Result<Chosen, Refusal> {
    let inputs = check_inputs(pairing, ctx.inputs);
    match (inputs, pairing.choose(read, ctx)) {
        (_, Err(r)) if r.reason() == Reason::NoPayableOption => Err(r),
        (Err(r), _) => Err(r),
        (Ok(()), chosen) => chosen,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SPECS: [InputSpec; 5] = [
        InputSpec::required("who", InputType::String, "an address").with_format(InputFormat::Hex(20)),
        InputSpec::optional("salt", InputType::String, "a salt").with_format(InputFormat::Hex(32)),
        InputSpec::optional("cap", InputType::String, "a cap").with_format(InputFormat::Decimal),
        InputSpec::optional("count", InputType::Integer, "a count"),
        InputSpec::required("deposit", InputType::String, "a deposit")
            .with_format(InputFormat::Decimal)
            .unless_offered("extra.minDeposit"),
    ];

    fn check(inputs: Value) -> Result<(), String> {
        check_specs("mpp", &SPECS, inputs.as_object().unwrap()).map_err(|r| r.code())
    }

    fn given(member: &str, value: Value) -> Value {
        let mut inputs = json!({"who": format!("0x{}", "aB".repeat(20))});
        inputs[member] = value;
        inputs
    }

    #[test]
    fn the_inputs_that_hold_pass_and_unknown_members_are_ignored() {
        assert_eq!(check(given("who", json!(format!("0x{}", "00".repeat(20))))), Ok(()));
        assert_eq!(check(given("salt", json!(format!("0x{}", "Ff".repeat(32))))), Ok(()));
        assert_eq!(check(given("cap", json!("007"))), Ok(()));
        assert_eq!(check(given("cap", json!("9".repeat(78)))), Ok(()));
        assert_eq!(check(given("count", json!(60.0))), Ok(()));
        assert_eq!(check(given("unknown", json!({"any": "thing"}))), Ok(()));
        assert_eq!(check(given("sAlt", json!(1))), Ok(()), "names are exact");
    }

    #[test]
    fn a_required_input_absent_is_input_missing() {
        assert_eq!(check(json!({})), Err("mpp/input-missing".into()));
    }

    #[test]
    fn an_input_of_another_type_is_input_missing() {
        for (member, value) in [
            ("who", Value::Null),
            ("who", json!(1)),
            ("salt", Value::Null),
            ("salt", json!([])),
            ("cap", json!(5000)),
            ("cap", Value::Null),
            ("count", json!("60")),
            ("count", json!(1.5)),
        ] {
            assert_eq!(check(given(member, value.clone())), Err("mpp/input-missing".into()), "{member}: {value}");
        }
    }

    #[test]
    fn an_input_of_another_form_is_input_missing() {
        let hex = |n: usize| format!("0x{}", "a".repeat(n));
        for (member, value) in [
            ("who", hex(39)),
            ("who", hex(41)),
            ("who", "a".repeat(42)),
            ("who", format!("0X{}", "a".repeat(40))),
            ("who", format!("0x{}g", "a".repeat(39))),
            ("salt", "0x01".to_owned()),
            ("salt", hex(63)),
            ("cap", String::new()),
            ("cap", "1.5".to_owned()),
            ("cap", "-1".to_owned()),
            ("cap", " 1".to_owned()),
            ("cap", "9".repeat(79)),
        ] {
            assert_eq!(check(given(member, json!(value))), Err("mpp/input-missing".into()), "{member}: {value}");
        }
    }

    #[test]
    fn an_input_the_option_stands_in_for_is_left_to_the_pairing() {
        // Required, yet absent or malformed it passes here: the pairing's choose, which sees the option, checks it.
        assert_eq!(check(given("deposit", json!("1.5"))), Ok(()));
        assert_eq!(check(given("deposit", json!(100))), Ok(()));
        assert_eq!(check(given("who", json!(format!("0x{}", "00".repeat(20))))), Ok(()), "absent");
        let deposit = SPECS[4];
        assert!(deposit.required && deposit.accepts(&json!("100")) && !deposit.accepts(&json!(100)));
    }

    #[test]
    fn every_pattern_says_what_its_form_accepts() {
        let samples = [
            json!(format!("0x{}", "aB".repeat(20))),
            json!(format!("0x{}", "0".repeat(64))),
            json!(format!("0x{}", "0".repeat(63))),
            json!("007"),
            json!("9".repeat(78)),
            json!("9".repeat(79)),
            json!(""),
            json!("0x"),
            json!("1.5"),
            json!("0X00"),
            json!("007\n"),
        ];
        for format in [InputFormat::Hex(20), InputFormat::Hex(32), InputFormat::Decimal, InputFormat::NonEmpty] {
            let pattern = regex::Regex::new(&format.pattern().unwrap()).unwrap();
            for s in &samples {
                assert_eq!(pattern.is_match(s.as_str().unwrap()), format.accepts(s), "{format:?} {s}");
            }
            assert!(format.hint().is_some());
        }
        assert_eq!((InputFormat::Any.pattern(), InputFormat::Any.hint()), (None, None));
    }
}
