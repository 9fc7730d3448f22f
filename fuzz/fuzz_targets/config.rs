//! The host's configuration file (`terms::config::parse`), which the `terms` CLI and `terms-mcp` read to find the
//! journal, the spend policy and the key. Its text is the owner's, hand-edited: a file that reads as something other
//! than it says would open another journal or another policy.
//!
//! Input: the file's text (lossily), read as the file `/etc/terms/config.toml`.
//!
//! Asserts: a file that reads makes every path it names absolute under the file's folder (a relative path is the
//! folder's, never the working directory's); a file that does not read gives an error that starts with the file's
//! path and, where it names a line, names one the text has.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use terms::config::parse;
use terms::safety::journal::JournalTarget;

const FILE: &str = "/etc/terms/config.toml";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse(&text, Path::new(FILE)) {
        Ok(config) => {
            for path in [config.policy.as_deref(), config.key_file.as_deref()].into_iter().flatten() {
                assert!(path.is_absolute(), "a relative path left relative: {path:?}");
            }
            if let Some(JournalTarget::Sqlite(path)) = &config.journal {
                assert!(path.is_absolute(), "a relative journal left relative: {path:?}");
            }
        }
        Err(e) => {
            let message = e.to_string();
            let rest = message.strip_prefix(&format!("{FILE}: ")).unwrap_or_else(|| panic!("{message:?}"));
            if let Some(n) = rest.strip_prefix("line ").and_then(|r| r.split(':').next()) {
                let n: usize = n.parse().unwrap_or_else(|_| panic!("a line that is no number: {message:?}"));
                let lines = text.split('\n').count();
                assert!((1..=lines).contains(&n), "line {n} of a text of {lines} lines: {message:?}");
            }
        }
    }
});
