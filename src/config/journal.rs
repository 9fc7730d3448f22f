//! Opening the journal a configuration file (or the CLI's `--journal`) names, as the `terms` CLI and `terms-mcp` do.
//! A SQLite path with no file yet is a new journal; a file of 0 bytes is not one (SQLite would take it for an empty
//! database and start a new journal over the one that was lost, without a word), and is refused. The commands that
//! only read open an existing file read-only, so a journal whose file or folder the user may only read is read.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::gate::JournalError;
use crate::safety::journal::{Journal, JournalConfig, JournalTarget};

/// How often an empty file another process may be creating is looked at again.
const LOOK_AGAIN: Duration = Duration::from_millis(20);

/// Opens the journal `target` names to pay with ([`JournalTarget::open`]). A SQLite path with no file yet is created
/// as a new journal; an existing file of 0 bytes is refused with a sentence naming it. A file that another process
/// has just created (and is writing the journal's first page to) is waited for, up to `config`'s busy timeout.
pub async fn open_journal(target: &JournalTarget, config: JournalConfig) -> Result<Arc<dyn Journal>, JournalError> {
    if let JournalTarget::Sqlite(path) = target {
        refuse_empty(path, config.busy_timeout).await?;
    }
    target.open(config).await
}

/// Opens the journal `target` names to read it back and write nothing (`history`, `budget`, `receipt`): an existing
/// SQLite file is opened read-only (`SqliteJournal::open_read_only`), so a file of mode 0444, or one in a folder the
/// user may only read, is read, and neither the file nor its time changes. An empty file is refused as
/// [`open_journal`] refuses it; a SQLite path with no file yet, and a PostgreSQL server, are opened as
/// [`open_journal`] opens them.
pub async fn read_journal(target: &JournalTarget, config: JournalConfig) -> Result<Arc<dyn Journal>, JournalError> {
    match target {
        #[cfg(feature = "sqlite")]
        JournalTarget::Sqlite(path) if !matches!(path.try_exists(), Ok(false)) => {
            refuse_empty(path, config.busy_timeout).await?;
            read_only(path)
        }
        _ => open_journal(target, config).await,
    }
}

/// Refuses an existing file of 0 bytes, after waiting (up to `grace` from its last change) for one another process
/// has just created to get its first page. No file, or one that cannot be looked at, is left to the open.
async fn refuse_empty(path: &Path, grace: Duration) -> Result<(), JournalError> {
    let started = Instant::now();
    loop {
        let Ok(meta) = std::fs::metadata(path) else { return Ok(()) };
        if !meta.is_file() || meta.len() > 0 {
            return Ok(());
        }
        let young = meta.modified().ok().and_then(|at| at.elapsed().ok()).is_some_and(|age| age < grace);
        if !young || started.elapsed() >= grace {
            return Err(JournalError(format!(
                "the journal file {} is empty (0 bytes), and an empty file is no journal: restore the journal from \
                 a copy, or remove the file to start a new one",
                path.display()
            )));
        }
        tokio::time::sleep(LOOK_AGAIN).await;
    }
}

/// The existing SQLite file, read-only.
#[cfg(feature = "sqlite")]
fn read_only(path: &Path) -> Result<Arc<dyn Journal>, JournalError> {
    use crate::safety::journal::SqliteJournal;
    let refused = match SqliteJournal::open_read_only(path) {
        Ok(journal) => return Ok(Arc::new(journal)),
        Err(e) => e,
    };
    // A reader of a WAL journal needs its `-shm` file, which SQLite cannot make in a folder the user may only read.
    // With neither the `-wal` nor the `-shm` file beside it, no connection has the journal open and every committed
    // write is in the file itself: it is read as an immutable file (no lock, no side file). Else the refusal stands.
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::path::PathBuf::from(name)
    };
    if !matches!(beside("-wal").try_exists(), Ok(false)) || !matches!(beside("-shm").try_exists(), Ok(false)) {
        return Err(refused);
    }
    let Some(uri) = immutable_uri(path) else { return Err(refused) };
    SqliteJournal::open_read_only(uri).map(|journal| Arc::new(journal) as Arc<dyn Journal>).map_err(|_| refused)
}

/// The file as a SQLite URI opened as immutable (`file:///…?immutable=1`, the path percent-encoded).
#[cfg(feature = "sqlite")]
fn immutable_uri(path: &Path) -> Option<String> {
    let url = url::Url::from_file_path(std::path::absolute(path).ok()?).ok()?;
    Some(format!("{url}?immutable=1"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn empty(dir: &Path, age: Duration) -> std::path::PathBuf {
        let path = dir.join("journal.db");
        let file = std::fs::File::create(&path).unwrap();
        file.set_modified(std::time::SystemTime::now() - age).unwrap();
        path
    }

    #[tokio::test]
    async fn an_empty_file_is_refused_unless_another_process_is_writing_its_first_page() {
        let dir = tempfile::tempdir().unwrap();
        // An old empty file: refused at once, naming it.
        let path = empty(dir.path(), Duration::from_secs(3600));
        let started = Instant::now();
        let e = refuse_empty(&path, Duration::from_secs(5)).await.err().unwrap().0;
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(e.starts_with(&format!("the journal file {} is empty (0 bytes)", path.display())), "{e}");
        // A new one that stays empty: refused once the grace is over.
        let path = empty(dir.path(), Duration::ZERO);
        let started = Instant::now();
        assert!(refuse_empty(&path, Duration::from_millis(200)).await.is_err());
        assert!(started.elapsed() >= Duration::from_millis(150));
        // A new one that gets its first page meanwhile: taken.
        let path = empty(dir.path(), Duration::ZERO);
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                std::fs::write(path, [0u8; 4096]).unwrap();
            })
        };
        assert!(refuse_empty(&path, Duration::from_secs(5)).await.is_ok());
        writer.join().unwrap();
        // No file: a new journal.
        assert!(refuse_empty(&dir.path().join("absent.db"), Duration::from_secs(5)).await.is_ok());
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn a_journal_reads_through_its_immutable_uri_whatever_its_folders_name() {
        use crate::safety::journal::{HistoryFilter, SqliteJournal, Store as _};
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("a b%20?c#d");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("journal.db");
        drop(SqliteJournal::open(&path).unwrap());
        let uri = immutable_uri(&path).unwrap();
        assert!(uri.starts_with("file:///") && uri.ends_with("/journal.db?immutable=1"), "{uri}");
        let journal = SqliteJournal::open_read_only(&uri).unwrap();
        assert!(journal.history(&HistoryFilter::new()).await.unwrap().is_empty());
        // Read, not created: the URI names that file and no other.
        let absent = immutable_uri(&folder.join("absent.db")).unwrap();
        assert!(SqliteJournal::open_read_only(absent).is_err());
    }
}
