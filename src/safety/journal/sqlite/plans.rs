//! The query plans of the reads that must answer at once however many records the journal holds (issue 46): the
//! history (newest first, by time, payee or state), a purchase's attempts, a budget's window and the nonce lookup
//! each read their index, and none sorts the journal.

use rusqlite::Connection;

use super::SqliteJournal;
use super::totals::WINDOW;
use super::write::NONCE_USER;
use crate::safety::journal::rules::COLUMNS;
use crate::safety::journal::{HistoryFilter, PaymentState, history};

/// SQLite's plan of `sql`, its lines joined.
fn explain(conn: &Connection, sql: &str) -> String {
    let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let nulls = vec![rusqlite::types::Null; statement.parameter_count()];
    let lines = statement.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3)).unwrap();
    lines.collect::<Result<Vec<_>, _>>().unwrap().join("; ")
}

#[test]
fn the_history_the_budget_window_and_the_nonce_lookup_each_read_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let journal = SqliteJournal::open(dir.path().join("journal.db")).unwrap();
    let conn = journal.conn.lock().unwrap();
    let filters = [
        (HistoryFilter::new().limit(20), "SCAN attempts USING INDEX attempts_by_time"),
        (HistoryFilter::new().since(5).until(9).limit(20), "SEARCH attempts USING INDEX attempts_by_time"),
        (HistoryFilter::new().payee("0xP").limit(20), "SEARCH attempts USING INDEX attempts_by_payee (payee=?)"),
        (
            HistoryFilter::new().state(PaymentState::Unknown).limit(20),
            "SEARCH attempts USING INDEX attempts_by_state (payment_state=?)",
        ),
    ];
    for (filter, index) in filters {
        let (sql, _) = history::query(&filter, COLUMNS, "attempts", "rowid", |n| format!("?{n}")).unwrap();
        let plan = explain(&conn, &sql);
        assert!(plan.starts_with(index) && !plan.contains("TEMP B-TREE"), "{filter:?}: {plan}");
    }
    let plan = explain(&conn, NONCE_USER);
    assert!(
        plan.starts_with("SEARCH attempts USING INDEX attempts_by_nonce (h=? AND account=? AND pairing=?)"),
        "{plan}"
    );
    let plan = explain(&conn, WINDOW);
    assert_eq!(
        plan,
        "SEARCH budget_totals USING PRIMARY KEY (budget=? AND scope=? AND asset=? AND level=? AND bucket>? AND bucket<?)"
    );
    let plan = explain(&conn, &format!("SELECT {COLUMNS} FROM attempts WHERE key = ?1 ORDER BY rowid"));
    assert!(plan.starts_with("SEARCH attempts USING INDEX attempts_by_key (key=?)"), "{plan}");
}
