//! The host's configuration file, read alike by the `terms` CLI and `terms-mcp`: where the journal and the spend
//! policy are, and where the key comes from (an environment variable or a file holding a hot key, or an external
//! signer command). Relative paths are the file's folder's, so both programs reading one file open one journal and
//! one policy.
//!
//! ```toml
//! journal = "journal.db"          # or "postgres://…"
//! policy = "policy.toml"
//! key_env = "TERMS_KEY"           # or key_file = "key.hex" (not both), or signer_command + signer_address
//! network = "eip155:8453"         # the one network terms-mcp's signer pays on
//! ```

mod command;
mod journal;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::safety::journal::JournalTarget;
use crate::safety::policy::Policy;
use crate::signer::{Signer, Wallet};

pub use journal::{open_journal, read_journal};

/// What is wrong with a configuration: a sentence naming the file, the line or the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The file, as written (after [`load`] or [`read`], its relative paths made absolute from its folder).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Config {
    /// The journal: a SQLite file (relative paths from the config's folder) or a `postgres://` server, read by
    /// [`JournalTarget::parse`], as the MCP server reads the same key.
    #[serde(default, deserialize_with = "journal_target")]
    pub journal: Option<JournalTarget>,
    /// The spend policy (`.toml` or `.json`).
    pub policy: Option<PathBuf>,
    /// The environment variable holding a hot key (`0x` hex).
    pub key_env: Option<String>,
    /// A file holding a hot key.
    pub key_file: Option<PathBuf>,
    /// An external signer: a command reading a `SigningRequest` as JSON on stdin, answering on stdout.
    pub signer_command: Option<String>,
    /// The address the external signer signs for (EIP-155, every chain).
    pub signer_address: Option<String>,
    /// The external signer's deadline, in seconds (default 60).
    pub signer_timeout: Option<u64>,
    /// The network (CAIP-2, e.g. `eip155:8453`) the MCP server's signer pays on: an MCP tool signs with one account.
    /// The CLI ignores it (it asks the wallet for each offer's network).
    pub network: Option<String>,
    /// The environment variable holding `terms gateway`'s operator token: set, every request to the gateway must
    /// carry it in `Terms-Gateway-Token`. The MCP server ignores it.
    pub gateway_token_env: Option<String>,
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
# Where the key comes from: an environment variable (hot wallet) or a key file (one of the two, never both), or an
# external signer command that reads a SigningRequest as JSON on stdin and prints the signature on stdout.
key_env = "TERMS_KEY"
# key_file = "key.hex"
# signer_command = "my-hardware-signer --sign"
# signer_address = "0x..."
"#;

/// The default file: `$TERMS_CONFIG`, else `$XDG_CONFIG_HOME/terms/config.toml`, else
/// `$HOME/.config/terms/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TERMS_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("terms").join("config.toml"))
}

/// Reads the file, creating it with the defaults where it does not exist (what the CLI does on first use); see
/// [`read`].
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    if !path.exists() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| ConfigError(format!("{}: {e}", dir.display())))?;
        }
        std::fs::write(path, DEFAULT).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
    }
    read(path)
}

/// Reads the file; relative paths are made absolute from its folder. The error names the file and, for a file
/// that does not parse, the line.
pub fn read(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
    parse(&text, path)
}

/// Reads `text` as the file at `path` holds it (no file is opened): relative paths are made absolute from `path`'s
/// folder, and an error names `path` and, for text that does not parse, the line. A file that names both `key_env`
/// and `key_file` is refused: neither is taken over the other.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let mut config: Config = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text.get(..s.start).unwrap_or_default().matches('\n').count() + 1);
        ConfigError(match line {
            Some(n) => format!("{}: line {n}: {}", path.display(), e.message()),
            None => format!("{}: {}", path.display(), e.message()),
        })
    })?;
    if config.key_env.is_some() && config.key_file.is_some() {
        return Err(ConfigError(format!(
            "{}: key_env and key_file both name the key: keep one of them",
            path.display()
        )));
    }
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

impl Config {
    /// Whether the file names a signer: a signer command, a key file, or a key variable that is set.
    pub fn names_a_signer(&self) -> bool {
        self.signer_command.is_some()
            || self.key_file.is_some()
            || self.key_env.as_deref().is_some_and(|v| std::env::var_os(v).is_some())
    }

    /// The spend policy the file names, loaded; `None` where it names none.
    pub fn load_policy(&self) -> Result<Option<Policy>, ConfigError> {
        self.policy.as_deref().map(|p| Policy::load(p).map_err(|e| ConfigError(e.to_string()))).transpose()
    }

    /// The wallet: the external signer command, else the key file, else the key's environment variable
    /// (`TERMS_KEY` where the file names none).
    pub fn wallet(&self) -> Result<Arc<dyn Wallet>, ConfigError> {
        if let Some(command) = &self.signer_command {
            let address = self.signer_address.clone().ok_or_else(|| {
                ConfigError("signer_command needs signer_address (the 0x address it signs for)".into())
            })?;
            let timeout = Duration::from_secs(self.signer_timeout.unwrap_or(60));
            return Ok(Arc::new(command::Command { command: command.clone(), address, timeout }));
        }
        let key = if let Some(file) = &self.key_file {
            std::fs::read_to_string(file).map_err(|e| ConfigError(format!("key file {}: {e}", file.display())))?
        } else {
            let var = self.key_env.clone().unwrap_or_else(|| "TERMS_KEY".into());
            std::env::var(&var).map_err(|_| ConfigError(format!("no key: set {var}, key_file or signer_command")))?
        };
        let key = crate::EvmKey::from_hex(key.trim()).map_err(|e| ConfigError(format!("the key: {e}")))?;
        Ok(Arc::new(key))
    }

    /// The one signer of [`network`](Config::network): what an MCP server signs with.
    pub fn signer(&self) -> Result<Arc<dyn Signer>, ConfigError> {
        let network = self.network.as_deref().ok_or_else(|| {
            ConfigError("a signer needs network = \"eip155:…\" (the one network the server's signer pays on)".into())
        })?;
        self.wallet()?.on(network).ok_or_else(|| ConfigError(format!("the signer does not pay on network {network:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_file_names_its_keys_relative_to_its_folder_and_its_signer_on_one_network() {
        let (dir, path) =
            file("journal = \"j.db\"\npolicy = \"p.toml\"\nkey_file = \"k.hex\"\nnetwork = \"eip155:8453\"\n");
        std::fs::write(dir.path().join("k.hex"), KEY).unwrap();
        let c = read(&path).unwrap();
        assert_eq!(c.journal, Some(JournalTarget::Sqlite(dir.path().join("j.db"))));
        assert_eq!(c.policy, Some(dir.path().join("p.toml")));
        assert!(c.names_a_signer());
        assert_eq!(c.signer().unwrap().account(), "eip155:8453:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
        // A policy file that is missing is an error naming it, never no policy.
        assert!(c.load_policy().is_err());
        let wrong = Config { network: Some("solana:x".into()), ..c.clone() };
        assert_eq!(wrong.signer().err().unwrap().0, "the signer does not pay on network \"solana:x\"");
        let none = Config { network: None, ..c };
        assert!(none.signer().err().unwrap().0.starts_with("a signer needs network"));
    }

    #[test]
    fn a_file_that_does_not_parse_names_its_line_and_an_unknown_key_is_refused() {
        let (_dir, path) = file("journal = \"j.db\"\nnot_a_key = 1\n");
        let e = read(&path).err().unwrap().0;
        assert!(e.contains("line 2") && e.contains("not_a_key"), "{e}");
        let (_dir, path) = file("signer_command = \"true\"\n");
        let c = read(&path).unwrap();
        assert!(c.wallet().err().unwrap().0.contains("signer_address"));
        assert!(read(Path::new("/nonexistent/terms/config.toml")).is_err());
    }

    #[test]
    fn a_file_naming_both_key_env_and_key_file_is_refused() {
        let (_dir, path) = file("key_env = \"TERMS_KEY\"\nkey_file = \"k.hex\"\n");
        let e = read(&path).err().unwrap().0;
        assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
        assert!(e.contains("key_env and key_file both name the key"), "{e}");
        let (_dir, path) = file("key_file = \"k.hex\"\nsigner_command = \"true\"\nsigner_address = \"0x1\"\n");
        assert!(read(&path).is_ok(), "a signer command beside a key is taken first, as documented");
    }
}
