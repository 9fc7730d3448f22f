//! A property of the `WWW-Authenticate` reader (`terms::mpp::decode_challenges`): any list of challenges drawn from
//! RFC 9110's grammar (section 11.6.1: schemes that are tokens, a token68 or auth-params, values as tokens or
//! quoted-strings with any character escaped), written with any legal whitespace, reads back as its `Payment`
//! challenges, each with MPP's parameters in the order written. The whitespace is spaces and tabs mixed in every
//! OWS and BWS position (around each list comma, around each `=`, before and after the value, in empty list
//! elements), and one space or more in the one place the grammar has `1*SP` (after a scheme that has a token68 or
//! parameters). The list is split over one to several field values at challenge boundaries.
//!
//! 512 cases, each of up to six challenges: well under a second in the debug build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

use proptest::prelude::*;
use serde_json::{Map, Value};
use terms::mpp::decode_challenges;

/// The parameters every `Payment` challenge carries, non-empty.
const REQUIRED: [&str; 5] = ["id", "realm", "method", "intent", "request"];
/// MPP's parameters, the required ones first.
const MPP: [&str; 10] =
    ["id", "realm", "method", "intent", "request", "expires", "digest", "description", "header", "opaque"];
/// Names MPP does not read: dropped from a `Payment` challenge.
const OTHERS: [&str; 5] = ["x-note", "charset", "foo", "ext", "error_description"];

/// One auth-param: the name as written (any case) and lower-cased, the text after the `=`, and the value it means.
#[derive(Debug, Clone)]
struct Param {
    name: String,
    lower: String,
    written: String,
    value: String,
}

/// One challenge as written, and, for a `Payment` one, what it reads as.
#[derive(Debug, Clone)]
struct Challenge {
    text: String,
    read: Option<Map<String, Value>>,
}

/// OWS and BWS: zero to three spaces and tabs, mixed.
fn ows() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec![" ", "\t"]), 0..4).prop_map(|w| w.concat())
}

/// The list separator: `OWS "," OWS`, sometimes with empty list elements between (`, ,` or `,\t,`).
fn separator() -> impl Strategy<Value = String> {
    (ows(), prop::collection::vec(ows(), 1..4), ows()).prop_map(|(before, commas, after)| {
        let mut s = before;
        for (i, w) in commas.iter().enumerate() {
            if i > 0 {
                s.push_str(w);
            }
            s.push(',');
        }
        s + &after
    })
}

/// `1*SP`.
fn spaces() -> impl Strategy<Value = String> {
    (1..4usize).prop_map(|n| " ".repeat(n))
}

fn token() -> impl Strategy<Value = String> {
    "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,8}"
}

/// A value as a token or as a quoted-string of HTAB, SP, VCHAR and obs-text, `"` and `\` always escaped and any
/// other character sometimes: the text written and the value meant.
fn value(non_empty: bool) -> impl Strategy<Value = (String, String)> {
    let min = usize::from(non_empty);
    let quoted = (
        "[\t -~\u{80}-\u{ff}]{0,12}".prop_filter("length", move |s| s.chars().count() >= min),
        prop::collection::vec(any::<bool>(), 12),
    )
        .prop_map(|(v, escape)| {
            let mut w = String::from('"');
            for (c, e) in v.chars().zip(escape.into_iter().chain(std::iter::repeat(false))) {
                if e || c == '"' || c == '\\' {
                    w.push('\\');
                }
                w.push(c);
            }
            w.push('"');
            (w, v)
        });
    prop_oneof![token().prop_map(|t| (t.clone(), t)), quoted]
}

/// A name in any case.
fn cased(name: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<bool>(), name.len())
        .prop_map(move |up| name.chars().zip(up).map(|(c, u)| if u { c.to_ascii_uppercase() } else { c }).collect())
}

/// One parameter of this name, its value non-empty when the name is one MPP requires.
fn param(name: &'static str) -> impl Strategy<Value = Param> {
    let required = REQUIRED.contains(&name);
    (cased(name), value(required), ows(), ows()).prop_map(move |(cased, (written, value), b1, b2)| Param {
        name: cased,
        lower: name.to_owned(),
        written: format!("{b1}={b2}{written}"),
        value,
    })
}

/// Parameters of distinct names (no name twice in one challenge, whatever its case), in any order; `required` ones
/// always among them.
fn params(required: &'static [&'static str], optional: Vec<&'static str>) -> impl Strategy<Value = Vec<Param>> {
    let n = optional.len();
    prop::sample::subsequence(optional, 0..=n)
        .prop_map(move |mut names| {
            names.extend_from_slice(required);
            names
        })
        .prop_shuffle()
        .prop_flat_map(|names| names.into_iter().map(param).collect::<Vec<_>>())
}

/// The parameters written as a list after the scheme's `1*SP`.
fn written(params: &[Param], seps: &[String]) -> String {
    let mut s = String::new();
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            s.push_str(&seps[i % seps.len()]);
        }
        s.push_str(&p.name);
        s.push_str(&p.written);
    }
    s
}

/// A `Payment` challenge (the scheme in any case), with MPP's five required parameters and any others.
fn payment() -> impl Strategy<Value = Challenge> {
    let optional: Vec<&'static str> = MPP[5..].iter().chain(OTHERS.iter()).copied().collect();
    (cased("payment"), spaces(), params(&REQUIRED, optional), prop::collection::vec(separator(), 1..4)).prop_map(
        |(scheme, sp, params, seps)| {
            let read = params
                .iter()
                .filter(|p| MPP.contains(&p.lower.as_str()))
                .map(|p| (p.lower.clone(), Value::String(p.value.clone())))
                .collect();
            Challenge { text: format!("{scheme}{sp}{}", written(&params, &seps)), read: Some(read) }
        },
    )
}

/// Another scheme: bare, with a token68, or with parameters of any names (MPP's too), none of it read.
fn other() -> impl Strategy<Value = Challenge> {
    let scheme = token().prop_filter("another scheme", |s| !s.eq_ignore_ascii_case("payment"));
    let names: Vec<&'static str> = MPP.iter().chain(OTHERS.iter()).copied().collect();
    let body = prop_oneof![
        Just(String::new()),
        (spaces(), "[A-Za-z0-9._~+/-]{1,10}={0,2}").prop_map(|(sp, t)| sp + &t),
        (spaces(), params(&[], names), prop::collection::vec(separator(), 1..3))
            .prop_filter("parameters", |(_, p, _)| !p.is_empty())
            .prop_map(|(sp, p, seps)| sp + &written(&p, &seps)),
    ];
    (scheme, body).prop_map(|(scheme, body)| Challenge { text: scheme + &body, read: None })
}

/// One to six challenges over one value or more: the values and the list they read as.
fn values() -> impl Strategy<Value = (Vec<String>, Value)> {
    let challenge = prop_oneof![3 => payment(), 2 => other()];
    (
        prop::collection::vec(challenge, 1..7),
        prop::collection::vec((separator(), any::<bool>()), 6),
        ows(),
        prop::sample::select(vec!["", ",", ", ,"]),
        ows(),
    )
        .prop_map(|(challenges, joins, lead, lead_commas, trail)| {
            let mut values = vec![format!("{lead}{lead_commas}")];
            for (i, c) in challenges.iter().enumerate() {
                if i > 0 {
                    let (sep, split) = &joins[i - 1];
                    if *split {
                        values.push(String::new());
                    } else {
                        values.last_mut().unwrap().push_str(sep);
                    }
                }
                values.last_mut().unwrap().push_str(&c.text);
            }
            values.last_mut().unwrap().push_str(&trail);
            let read = challenges.into_iter().filter_map(|c| c.read.map(Value::Object)).collect();
            (values, Value::Array(read))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every list written with legal whitespace reads back as the `Payment` challenges it holds.
    #[test]
    fn any_legal_whitespace_reads_the_same_challenges((values, want) in values()) {
        let given: Vec<&str> = values.iter().map(String::as_str).collect();
        prop_assert_eq!(decode_challenges(&given), Ok(want), "{:?}", values);
    }
}
