//! SQLite alone, where files meet other processes and the disk: eight processes creating one journal at once, a
//! file another application has stamped as its own, and a write the disk refuses (a file size limit).

use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::Value;
use terms::safety::SpendJournal;
use terms::safety::journal::{HistoryFilter, JournalConfig, SqliteJournal, Store};

use super::{day, dir, fx, intent, kind};

/// Eight journals opened at once on one new file (eight agents started together): each opens, whichever created
/// it; the others find it made under the write lock and take it as it is.
#[test]
fn eight_journals_opening_one_new_file_at_once_all_open_it() {
    for round in 0..5 {
        let d = dir();
        let path = d.path().join("j.db");
        let start = Arc::new(Barrier::new(8));
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    SqliteJournal::open(&path).map(drop)
                })
            })
            .collect();
        for open in opens {
            open.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        let conn = rusqlite::Connection::open(&path).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, 3, "round {round}");
    }
}

/// A new journal file another process is writing (a write lock held on it) is waited for, not refused at once:
/// the switch to WAL, which SQLite answers "busy" at once there, is tried again until the busy timeout; past it,
/// the open is refused as locked.
#[test]
fn a_new_file_another_process_is_writing_is_waited_for_until_the_busy_timeout() {
    let d = dir();
    for (hold, busy, opens) in [(150, 3000, true), (1500, 300, false)] {
        let path = d.path().join(format!("held-{hold}.db"));
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(hold));
            holder.execute_batch("COMMIT").unwrap();
        });
        let config = JournalConfig { busy_timeout: Duration::from_millis(busy), ..JournalConfig::default() };
        let started = Instant::now();
        let opened = SqliteJournal::open_with(&path, config);
        let took = started.elapsed();
        if opens {
            opened.unwrap_or_else(|e| panic!("held {hold} ms, busy timeout {busy} ms: {e}"));
            assert!(took >= Duration::from_millis(hold / 2), "opened after {took:?}, while the file was held");
        } else {
            let e = opened.unwrap_err();
            assert!(e.0.contains("is locked by another process"), "{e}");
            assert!(
                took >= Duration::from_millis(busy) && took < Duration::from_millis(hold),
                "refused after {took:?}"
            );
        }
        release.join().unwrap();
    }
}

/// A file whose header another application has stamped (its `user_version` or `application_id`) is that
/// application's even before it holds a table: refused, and left as it was.
#[test]
fn a_file_another_application_stamped_is_refused_even_with_no_table() {
    let d = dir();
    for pragma in ["user_version", "application_id"] {
        let path = d.path().join(format!("{pragma}.db"));
        rusqlite::Connection::open(&path).unwrap().pragma_update(None, pragma, 7).unwrap();
        let before = std::fs::read(&path).unwrap();
        let e = SqliteJournal::open(&path).unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "the journal file {} cannot be used: it is a SQLite database of something else, not a journal",
                path.display()
            ),
            "{pragma}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "{pragma}: the file was changed");
    }
}

const FSIZE_CHILD: &str = "TERMS_JOURNAL_FSIZE_CHILD";

/// The child of `a_write_the_disk_refuses_is_not_known_to_be_on_disk`, run under a file size limit: `write:DIR` opens
/// the journal in DIR and writes a large intent; `open:DIR` creates a new journal there. It prints the error.
#[test]
#[ignore = "a child of a_write_the_disk_refuses_is_not_known_to_be_on_disk, run by it"]
fn fsize_child() {
    let Ok(spec) = std::env::var(FSIZE_CHILD) else { return };
    let (what, dir) = spec.split_once(':').unwrap();
    let dir = std::path::Path::new(dir);
    let e = if what == "write" {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let journal = SqliteJournal::open(dir.join("j.db")).unwrap();
        let mut big = fx();
        big.chosen.build_input.insert("pad".into(), Value::String("x".repeat(512 * 1024)));
        let claims = day(10, 1);
        runtime.block_on(journal.begin(&intent(&big, "k-big", "a-big", &claims, 1000))).unwrap_err()
    } else {
        SqliteJournal::open(dir.join("new.db")).unwrap_err()
    };
    println!("child-error {}", e.0);
}

/// Runs `fsize_child` for `what` in `dir` with a file size limit of `kib` KiB and returns the error it printed.
fn under_limit(what: &str, dir: &std::path::Path, kib: u64) -> String {
    // SIGXFSZ ignored, a write past the limit fails with EFBIG (bash counts `ulimit -f` in KiB).
    let out = Command::new("bash")
        .args(["-c", r#"trap '' XFSZ; ulimit -f "$1"; shift; exec "$@""#, "bash", &kib.to_string()])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "sqlite::fsize_child", "--ignored", "--nocapture", "--test-threads", "1"])
        .env(FSIZE_CHILD, format!("{what}:{}", dir.display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the {what} child failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    let line = text.lines().find_map(|l| l.split_once("child-error ")).map(|(_, e)| e.to_owned());
    line.unwrap_or_else(|| panic!("the {what} child printed no error: {text}"))
}

/// A write the disk refuses (here the process's file size limit, `EFBIG`: SQLite's I/O error) is told as a write
/// whose place on disk is not known, never as one that recorded nothing; an open the disk refuses (creating the
/// schema of a new journal) is a failure, not a write of unknown fate. The journal then opens again without the
/// limit and holds what it held.
#[tokio::test]
async fn a_write_the_disk_refuses_is_not_known_to_be_on_disk() {
    let d = dir();
    let path = d.path().join("j.db");
    let f = fx();
    let claims = day(10, 1);
    {
        let journal = SqliteJournal::open(&path).unwrap();
        assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &claims, 1000)).await.unwrap()), "fresh");
    }
    // Room for the file and its shared memory (32 KiB), not for a write of half a MiB.
    let write = under_limit("write", d.path(), std::fs::metadata(&path).unwrap().len() / 1024 + 40);
    assert!(
        write.starts_with(&format!("the journal file {} failed to write (disk I/O error", path.display())),
        "{write}"
    );
    assert!(write.ends_with("): whether the write is on disk is not known"), "{write}");
    // Room for the shared memory, not for the new schema's pages.
    let open = under_limit("open", d.path(), 33);
    let new = d.path().join("new.db");
    assert!(open.starts_with(&format!("the journal file {} failed: disk I/O error", new.display())), "{open}");
    assert!(!open.contains("not known"), "{open}");
    let journal = SqliteJournal::open(&path).unwrap();
    assert_eq!(journal.history(&HistoryFilter::new()).await.unwrap().len(), 1);
    assert!(journal.record("k-big").await.unwrap().is_none());
}
