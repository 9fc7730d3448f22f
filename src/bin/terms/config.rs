//! The CLI's configuration file: where the journal and the policy are, and where the key comes from.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use terms::safety::journal::JournalTarget;

/// The file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// The journal: a SQLite file (relative paths from the config's folder) or a `postgres://` server, read by
    /// [`JournalTarget::parse`], as the MCP server reads the same key.
    #[serde(default, deserialize_with = "journal_target")]
    pub(crate) journal: Option<JournalTarget>,
    /// The spend policy (`.toml` or `.json`).
    pub(crate) policy: Option<PathBuf>,
    /// The environment variable holding a hot key (`0x` hex).
    pub(crate) key_env: Option<String>,
    /// A file holding a hot key.
    pub(crate) key_file: Option<PathBuf>,
    /// An external signer: a command reading a `SigningRequest` as JSON on stdin, answering on stdout.
    pub(crate) signer_command: Option<String>,
    /// The address the external signer signs for (EIP-155, every chain).
    pub(crate) signer_address: Option<String>,
    /// The external signer's deadline, in seconds (default 60).
    pub(crate) signer_timeout: Option<u64>,
}

/// `journal = "…"`: what [`JournalTarget::parse`] makes of it; a value it refuses fails the file, naming the line.
fn journal_target<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<JournalTarget>, D::Error> {
    let text = String::deserialize(d)?;
    JournalTarget::parse(&text).map(Some).map_err(|e| serde::de::Error::custom(e.to_string()))
}

/// What a new configuration file holds.
const DEFAULT: &str = r#"# terms: the buyer's configuration (https://docs.rs/terms-gate).
# The journal of every payment: a SQLite file, relative to this folder, or a PostgreSQL server
# ("postgres://user@host/db", in a build with the postgres feature), shared by every agent that spends one budget.
journal = "journal.db"
# The spend policy checked before every payment (uncomment to set one).
# policy = "policy.toml"
# Where the key comes from: an environment variable (hot wallet), a key file, or an external signer command that
# reads a SigningRequest as JSON on stdin and prints the signature on stdout.
key_env = "TERMS_KEY"
# key_file = "key.hex"
# signer_command = "my-hardware-signer --sign"
# signer_address = "0x..."
"#;

/// The default file: `$TERMS_CONFIG`, else `$XDG_CONFIG_HOME/terms/config.toml`, else
/// `$HOME/.config/terms/config.toml`.
pub(crate) fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TERMS_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("terms").join("config.toml"))
}

/// Reads the file, creating it with the defaults where it does not exist; relative paths are made absolute from
/// its folder. The error names the file and, for a file that does not parse, the line.
pub(crate) fn load(path: &Path) -> Result<Config, String> {
    if !path.exists() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, DEFAULT).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut config: Config = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| text.get(..s.start).unwrap_or_default().matches('\n').count() + 1);
        match line {
            Some(n) => format!("{}: line {n}: {}", path.display(), e.message()),
            None => format!("{}: {}", path.display(), e.message()),
        }
    })?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let absolute = |p: &mut Option<PathBuf>| {
        if let Some(inner) = p
            && inner.is_relative()
        {
            *inner = dir.join(&*inner);
        }
    };
    config.journal = config.journal.map(|j| j.relative_to(dir));
    absolute(&mut config.policy);
    absolute(&mut config.key_file);
    Ok(config)
}
