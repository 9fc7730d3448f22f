//! Property tests of the contract's signatures, on every row of `tests/vectors/contract/` that verifies:
//!
//! 1. any signed member changed (a string's character replaced, inserted or removed; a number's value; a boolean;
//!    a null; a list's items removed, added or swapped; an object's members added, removed or renamed; a value of
//!    another type), the document written back, never verifies, and a link of a presentation changed never verifies
//!    either; an edit that leaves the RFC 8785 form as it was (two equal items swapped) still verifies;
//! 2. the members reordered at every depth, or the document written back unchanged (compact, indented, non-ASCII
//!    escaped), verifies, and each link keeps its verdict;
//! 3. any single byte of the text replaced by another fails to read or to verify, with one exception, asserted both
//!    ways: a JSON whitespace byte outside strings replaced by another JSON whitespace byte (space, tab, line feed,
//!    carriage return) still verifies, as the signature covers the value, not the text.
//!
//! Beside the random edits of every valid row, a deterministic test makes every edit at every member of the valid
//! row of each kind that has the most members (its unknown members signed in).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "contract_vectors/load.rs"]
mod load;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use load::{Keys, Row, keys, link_verdicts, rows, verify_bytes, verify_text};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;
use serde_json::{Map, Number, Value};
use terms::json::canonical;

/// The key lists, and every row that verifies with its object.
static VALID: LazyLock<(Keys, Vec<(Row, Value)>)> = LazyLock::new(|| {
    let valid: Vec<(Row, Value)> = rows()
        .into_iter()
        .filter(|r| r.expect == "ok")
        .map(|r| {
            let object = Value::Object(load::object(&r.text));
            (r, object)
        })
        .collect();
    assert!(valid.len() >= 6 * 8, "only {} valid rows", valid.len());
    (keys(), valid)
});

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// One step from a value to a member or an item.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Item(usize),
}

/// Every value of the document (the document itself too), but the top-level `signature`, which is not signed.
fn sites(v: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(path.clone());
    match v {
        Value::Object(o) => {
            for (name, child) in o {
                if path.is_empty() && name == "signature" {
                    continue;
                }
                path.push(Step::Member(name.clone()));
                sites(child, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push(Step::Item(i));
                sites(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Step::Member(name) => &mut v[name.as_str()],
        Step::Item(i) => &mut v[*i],
    })
}

/// How many edits [`edit`] knows for a value of this type.
const EDITS: usize = 4;

/// Edit `which` (of [`EDITS`]) of the value: `at` and `other` pick characters, members or items, `c` is a character
/// to write.
fn edit(v: &mut Value, which: usize, at: usize, other: usize, c: char) {
    match v {
        Value::String(s) => {
            let mut chars: Vec<char> = s.chars().collect();
            let n = chars.len();
            match which {
                0 if n > 0 => chars[at % n] = c,
                1 => chars.insert(at % (n + 1), c),
                2 if n > 0 => {
                    chars.remove(at % n);
                }
                3 => {
                    *v = Value::from(n);
                    return;
                }
                _ => chars.push(c),
            }
            *s = chars.into_iter().collect();
        }
        Value::Number(n) => {
            *v = match which {
                0 => match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => Value::from(if u == u64::MAX { u - 1 } else { u + 1 }),
                    (None, Some(i)) => Value::from(i + 1),
                    _ => Number::from_f64(n.as_f64().unwrap() * 2.0 + 1.0).map_or(Value::from(0.5), Value::Number),
                },
                1 => Value::from(n.as_f64().unwrap() + 0.5),
                2 => Value::from(n.to_string()),
                _ => Value::Null,
            }
        }
        Value::Bool(b) => *v = if which.is_multiple_of(2) { Value::Bool(!*b) } else { Value::from(b.to_string()) },
        Value::Null => *v = if which.is_multiple_of(2) { Value::Bool(false) } else { Value::from("null") },
        Value::Array(items) => {
            let n = items.len();
            match which {
                0 if n > 0 => {
                    items.remove(at % n);
                }
                1 => items.insert(at % (n + 1), items.get(other % n.max(1)).cloned().unwrap_or(Value::Null)),
                2 if n > 1 => items.swap(at % n, other % n),
                _ => *v = Value::Object(Map::new()),
            }
        }
        Value::Object(members) => {
            let names: Vec<String> = members.keys().cloned().collect();
            let n = names.len();
            match which {
                0 if n > 0 => {
                    members.remove(&names[at % n]);
                }
                1 if n > 0 => {
                    let old = &names[at % n];
                    let mut renamed: Vec<char> = old.chars().collect();
                    renamed.insert(other % (renamed.len() + 1), c);
                    let value = members.remove(old).unwrap();
                    members.insert(renamed.into_iter().collect(), value);
                }
                2 => *v = Value::Array(Vec::new()),
                _ => {
                    members.insert(format!("added{c}"), Value::from(c.to_string()));
                }
            }
        }
    }
}

/// `Ok` or the refusal, of reading the text as the row's kind and verifying it under the row's key list.
fn verdict_of(row: &Row, text: &str) -> Result<(), String> {
    verify_text(&row.kind, text, VALID.0.list(&row.keys)).map_err(|e| e.code().to_owned())
}

/// Whether the link `i` of the presentation text fails to read or to verify under the key list the row names.
fn link_fails(row: &Row, text: &str, i: usize) -> bool {
    match link_verdicts(text, &row.links.as_ref().unwrap()[..], &VALID.0) {
        Ok(verdicts) => verdicts[i] != "ok",
        Err(_) => true,
    }
}

/// The edited document must fail to verify (and, inside a presentation's link, that link too) unless its RFC 8785
/// form is the original's; a description of the failure otherwise.
fn check_edit(
    row: &Row,
    original: &Value,
    path: &[Step],
    which: usize,
    at: usize,
    other: usize,
    c: char,
) -> Result<bool, String> {
    let mut edited = original.clone();
    edit(at_mut(&mut edited, path), which, at, other, c);
    let text = serde_json::to_string(&edited).unwrap();
    let unchanged = canonical(&edited).is_some() && canonical(&edited) == canonical(original);
    let got = verdict_of(row, &text);
    if unchanged {
        return if got.is_ok() { Ok(false) } else { Err(format!("{}: unchanged at {path:?} but {got:?}", row.name)) };
    }
    if got.is_ok() {
        return Err(format!("{}: edit {which} at {path:?} still verifies: {text}", row.name));
    }
    if let (Some(links), [Step::Member(chain), Step::Item(i), ..]) = (&row.links, path)
        && chain == "chain"
        && links[*i].expect == "ok"
    {
        // The presentation may still read (its own signature fails); the link must fail on its own.
        let readable = load::links_of(&text).is_ok_and(|read| read.len() > *i);
        if readable && !link_fails(row, &text, *i) {
            return Err(format!("{}: link {i} edited at {path:?} still verifies: {text}", row.name));
        }
    }
    Ok(true)
}

#[test]
fn every_member_of_the_largest_valid_row_of_each_kind_edited_fails_to_verify() {
    let (_, valid) = &*VALID;
    let mut largest: BTreeMap<&str, (&Row, &Value, Vec<Vec<Step>>)> = BTreeMap::new();
    for (row, original) in valid {
        let mut all = Vec::new();
        sites(original, &mut Vec::new(), &mut all);
        if largest.get(row.kind.as_str()).is_none_or(|(_, _, most)| most.len() < all.len()) {
            largest.insert(&row.kind, (row, original, all));
        }
    }
    assert_eq!(largest.len(), 6);
    let (mut failing, mut failures) = (0, Vec::new());
    for (row, original, all) in largest.values() {
        for path in all {
            for which in 0..EDITS {
                match check_edit(row, original, path, which, 1, 0, 'Z') {
                    Ok(true) => failing += 1,
                    Ok(false) => {}
                    Err(e) => failures.push(e),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} edits:\n{}", failures.len(), failures.join("\n"));
    assert!(failing >= 6 * 25 * EDITS, "only {failing} edits made");
    println!("{failing} edits refused");
}

fn shuffled(v: &Value, state: &mut u64) -> Value {
    let mut next = || {
        // xorshift64*
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    match v {
        Value::Object(o) => {
            let mut members: Vec<(String, Value)> = o.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            for i in (1..members.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                members.swap(i, j);
            }
            Value::Object(members.into_iter().map(|(k, v)| (k, shuffled(&v, state))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| shuffled(v, state)).collect()),
        other => other.clone(),
    }
}

/// The text with every non-ASCII character written as `\u` escapes (outside strings JSON text is ASCII).
fn ascii_escaped(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04X}"));
            }
        }
    }
    out
}

fn links_as_the_row_says(row: &Row, text: &str) -> Result<(), String> {
    let Some(links) = &row.links else { return Ok(()) };
    let got = link_verdicts(text, links, &VALID.0).map_err(|e| format!("{}: links do not read: {e}", row.name))?;
    let want: Vec<&str> = links.iter().map(|l| l.expect.as_str()).collect();
    if got != want { Err(format!("{}: links {got:?}, the row says {want:?}", row.name)) } else { Ok(()) }
}

#[test]
fn every_valid_row_written_back_unchanged_verifies() {
    let (_, valid) = &*VALID;
    let mut escaped = 0;
    for (row, original) in valid {
        let compact = serde_json::to_string(original).unwrap();
        for text in [compact.clone(), serde_json::to_string_pretty(original).unwrap(), ascii_escaped(&compact)] {
            assert_eq!(verdict_of(row, &text), Ok(()), "{}: {text}", row.name);
            links_as_the_row_says(row, &text).unwrap();
        }
        escaped += usize::from(ascii_escaped(&compact) != compact);
    }
    assert!(escaped >= 6, "only {escaped} rows with a non-ASCII character");
}

/// Whether each byte of the text is inside a string literal (its quotes included).
fn in_strings(text: &[u8]) -> Vec<bool> {
    let (mut inside, mut escaped) = (false, false);
    text.iter()
        .map(|&b| {
            if inside {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    inside = false;
                }
                true
            } else {
                inside = b == b'"';
                inside
            }
        })
        .collect()
}

const WHITESPACE: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];

/// The next whitespace byte after `b`, round the four.
fn other_whitespace(b: u8) -> u8 {
    let i = WHITESPACE.iter().position(|w| *w == b).unwrap();
    WHITESPACE[(i + 1) % WHITESPACE.len()]
}

#[test]
fn whitespace_outside_strings_is_not_signed_and_inside_strings_it_is() {
    let (keys, valid) = &*VALID;
    let (mut outside, mut inside) = (0, 0);
    for (row, _) in valid {
        let text = row.text.as_bytes();
        let strings = in_strings(text);
        let spaces: Vec<usize> = (0..text.len()).filter(|&i| WHITESPACE.contains(&text[i])).collect();
        let (out, ins): (Vec<usize>, Vec<usize>) = spaces.into_iter().partition(|&i| !strings[i]);
        if !out.is_empty() {
            // Every whitespace byte outside strings replaced at once.
            let mut all = text.to_vec();
            for &i in &out {
                all[i] = other_whitespace(all[i]);
            }
            assert_eq!(verify_bytes(&row.kind, &all, keys.list(&row.keys)), Ok(()), "{}", row.name);
            outside += 1;
        }
        if let Some(&i) = ins.first() {
            // Inside a string the other whitespace bytes are control characters, which JSON refuses unescaped.
            let mut one = text.to_vec();
            one[i] = other_whitespace(one[i]);
            assert_eq!(
                verify_bytes(&row.kind, &one, keys.list(&row.keys)).map_err(|e| e.code()),
                Err("contract/not-json"),
                "{}",
                row.name
            );
            // And a space written escaped is the same string: the value is signed, not its spelling.
            let escaped = [&text[..i], b"\\u0020", &text[i + 1..]].concat();
            assert_eq!(verify_bytes(&row.kind, &escaped, keys.list(&row.keys)), Ok(()), "{}", row.name);
            inside += 1;
        }
    }
    assert!(outside >= 6 && inside >= 6, "{outside} rows with whitespace outside strings, {inside} inside");
}

proptest! {
    #![proptest_config(config(384))]

    #[test]
    fn any_signed_member_edited_fails_to_verify(
        row in any::<Index>(),
        site in any::<Index>(),
        which in 0..EDITS,
        at in any::<usize>(),
        other in any::<usize>(),
        c in any::<char>(),
    ) {
        let (row, original) = row.get(&VALID.1);
        let mut all = Vec::new();
        sites(original, &mut Vec::new(), &mut all);
        let path = site.get(&all);
        check_edit(row, original, path, which, at, other, c).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    // Each case verifies the whole document (and a presentation's two links): fewer cases.
    #![proptest_config(config(128))]

    #[test]
    fn members_reordered_at_every_depth_still_verify(row in any::<Index>(), seed in 1..u64::MAX, pretty in any::<bool>()) {
        let (row, original) = row.get(&VALID.1);
        let mut state = seed;
        let reordered = shuffled(original, &mut state);
        let text = if pretty { serde_json::to_string_pretty(&reordered) } else { serde_json::to_string(&reordered) }.unwrap();
        prop_assert_eq!(verdict_of(row, &text), Ok(()), "{}", text);
        links_as_the_row_says(row, &text).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    // Most replaced bytes fail to read, which is cheap: more cases.
    #![proptest_config(config(768))]

    #[test]
    fn any_byte_replaced_fails_unless_whitespace_for_whitespace_outside_strings(
        row in any::<Index>(),
        at in any::<Index>(),
        byte in prop_oneof![any::<u8>(), proptest::sample::select(WHITESPACE.to_vec())],
    ) {
        let (row, _) = row.get(&VALID.1);
        let mut text = row.text.clone().into_bytes();
        let i = at.index(text.len());
        prop_assume!(text[i] != byte);
        let whitespace_for_whitespace =
            !in_strings(&text)[i] && WHITESPACE.contains(&text[i]) && WHITESPACE.contains(&byte);
        text[i] = byte;
        let got = verify_bytes(&row.kind, &text, VALID.0.list(&row.keys)).map_err(|e| e.code().to_owned());
        if whitespace_for_whitespace {
            prop_assert_eq!(got, Ok(()), "{}: byte {} to {:?}", row.name, i, byte as char);
        } else {
            prop_assert!(got.is_err(), "{}: byte {} to {:?} still verifies", row.name, i, byte as char);
        }
    }
}
