//! Where a journal is, as a configuration file names it: `journal = "…"`, in the file the MCP server (and the CLI)
//! reads. A path or `sqlite:` URL is a SQLite file; a `postgres://` URL a PostgreSQL server.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{JournalConfig, Store};
use crate::gate::{ApprovalQueue, JournalError, SpendJournal};

/// A journal of either backend: what the gate writes to ([`SpendJournal`]), what reads it back ([`Store`]), and the
/// approval queue it keeps ([`ApprovalQueue`]). An `Arc<dyn Journal>` is also an `Arc<dyn SpendJournal>` for
/// [`Options::journal`](crate::Options::journal) and an `Arc<dyn ApprovalQueue>` for
/// [`Options::approvals`](crate::Options::approvals).
pub trait Journal: SpendJournal + Store + ApprovalQueue {}

impl<T: SpendJournal + Store + ApprovalQueue + ?Sized> Journal for T {}

/// Where a journal is.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalTarget {
    /// A SQLite file: `sqlite:///absolute/path`, `sqlite:relative/path`, or a bare path.
    Sqlite(PathBuf),
    /// A PostgreSQL server, as its connection string (`postgres://…` or `postgresql://…`) says.
    Postgres(String),
}

impl fmt::Debug for JournalTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            // Never the password.
            Self::Postgres(url) => f.debug_tuple("Postgres").field(&redacted(url)).finish(),
        }
    }
}

/// The connection string with its password (if any) replaced by `***`.
fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => "(a connection string that does not parse as a URL)".to_owned(),
    }
}

/// What a configuration file says about the journal; every other key is left to what reads the rest.
#[derive(Debug, serde::Deserialize)]
struct ConfigFile {
    journal: Option<String>,
}

impl JournalTarget {
    /// Reads `text`: `postgres://…` and `postgresql://…` are a server; `sqlite:///path`, `sqlite:path` and any
    /// other text without a scheme are a file. Empty text or another scheme is refused.
    pub fn parse(text: &str) -> Result<Self, JournalError> {
        let text = text.trim();
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Self::Postgres(text.to_owned()));
        }
        let sqlite = text.strip_prefix("sqlite://").or_else(|| text.strip_prefix("sqlite:"));
        let path = sqlite.unwrap_or(text);
        if path.is_empty() {
            return Err(JournalError(format!("the journal {text:?} names no file and no server")));
        }
        if let (None, Some((scheme, _))) = (sqlite, text.split_once("://")) {
            return Err(JournalError(format!(
                "the journal's scheme {scheme}:// is not known: a journal is a SQLite file (a path, or sqlite:///path) \
                 or a PostgreSQL server (postgres://…)"
            )));
        }
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// The journal a configuration file's TOML names in its top-level `journal` key; `None` where it names none.
    pub fn from_config_toml(text: &str) -> Result<Option<Self>, JournalError> {
        let file: ConfigFile = toml::from_str(text)
            .map_err(|e| JournalError(format!("the configuration file does not parse: {}", e.message())))?;
        file.journal.as_deref().map(Self::parse).transpose()
    }

    /// The target as a configuration file in `folder` means it: a relative SQLite path is relative to that folder
    /// (not to wherever the program was started), so the CLI and the MCP server reading one file open one journal.
    #[must_use]
    pub fn relative_to(self, folder: &Path) -> Self {
        match self {
            Self::Sqlite(path) if path.is_relative() => Self::Sqlite(folder.join(path)),
            other => other,
        }
    }

    /// Opens the journal: the SQLite file (created where it is missing), or a connection to the server (its schema
    /// created or migrated). A build without the backend's feature refuses with a sentence that names it.
    pub async fn open(&self, config: JournalConfig) -> Result<Arc<dyn Journal>, JournalError> {
        match self {
            #[cfg(feature = "sqlite")]
            Self::Sqlite(path) => Ok(Arc::new(super::SqliteJournal::open_with(path, config)?)),
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => {
                Ok(Arc::new(crate::safety::postgres::PostgresJournal::connect_with(url, config).await?))
            }
            #[allow(unreachable_patterns)]
            other => {
                let _ = config;
                let feature = if matches!(other, Self::Sqlite(_)) { "sqlite" } else { "postgres" };
                Err(JournalError(format!(
                    "this build has no {feature} journal: build terms with the `{feature}` feature"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_is_a_file_or_a_server_and_nothing_else() {
        let file = |p: &str| Some(JournalTarget::Sqlite(PathBuf::from(p)));
        assert_eq!(JournalTarget::parse("journal.db").ok(), file("journal.db"));
        assert_eq!(JournalTarget::parse("sqlite:///var/terms/j.db").ok(), file("/var/terms/j.db"));
        assert_eq!(JournalTarget::parse("sqlite:j.db").ok(), file("j.db"));
        let server = JournalTarget::parse("postgres://agent:pw@db/payments").ok();
        assert_eq!(server, Some(JournalTarget::Postgres("postgres://agent:pw@db/payments".into())));
        assert!(matches!(JournalTarget::parse("postgresql://db/x"), Ok(JournalTarget::Postgres(_))));
        assert!(JournalTarget::parse("").is_err() && JournalTarget::parse("sqlite:").is_err());
        let e = JournalTarget::parse("mysql://db/x").err().map(|e| e.0).unwrap_or_default();
        assert!(e.contains("mysql:// is not known"), "{e}");
        assert_eq!(format!("{server:?}"), r#"Some(Postgres("postgres://agent:***@db/payments"))"#);
    }

    #[test]
    fn a_relative_file_is_the_configuration_folders_and_nothing_else_moves() {
        let folder = Path::new("/etc/terms");
        let moved = |t: &str| JournalTarget::parse(t).ok().map(|t| t.relative_to(folder));
        assert_eq!(moved("journal.db"), Some(JournalTarget::Sqlite(PathBuf::from("/etc/terms/journal.db"))));
        assert_eq!(moved("sqlite:sub/j.db"), Some(JournalTarget::Sqlite(PathBuf::from("/etc/terms/sub/j.db"))));
        assert_eq!(moved("sqlite:///var/j.db"), Some(JournalTarget::Sqlite(PathBuf::from("/var/j.db"))));
        assert_eq!(moved("postgres://db/x"), Some(JournalTarget::Postgres("postgres://db/x".into())));
    }

    #[test]
    fn a_configuration_file_names_its_journal_beside_other_keys() {
        let text = "journal = \"postgres://db/payments\"\n[other]\nx = 1\n";
        let target = JournalTarget::from_config_toml(text).ok().flatten();
        assert_eq!(target, Some(JournalTarget::Postgres("postgres://db/payments".into())));
        assert_eq!(JournalTarget::from_config_toml("[other]\nx = 1\n").ok(), Some(None));
        let e = JournalTarget::from_config_toml("journal = 3").err().map(|e| e.0).unwrap_or_default();
        assert!(e.starts_with("the configuration file does not parse"), "{e}");
    }
}
