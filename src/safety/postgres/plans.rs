//! The query plans of the reads that must answer at once however many records the journal holds (issue 46), on a
//! real server (`TERMS_TEST_POSTGRES`; skipped without it): the history (by time, payee or state), a budget's window
//! (`terms_window`, inlined) and the nonce lookup (`terms_nonce_user`, inlined) each read their index. Sequential
//! scans are turned off for the plans, so a read no index can serve shows its scan of the table.

use crate::safety::journal::history::{self, Param};
use crate::safety::journal::rules::COLUMNS;
use crate::safety::journal::{HistoryFilter, JournalConfig, PaymentState};

/// The server's plan of `sql`, its lines joined.
async fn explain(client: &tokio_postgres::Client, sql: &str) -> String {
    let rows = client.query(&format!("EXPLAIN {sql}"), &[]).await.unwrap();
    rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("; ")
}

#[tokio::test]
async fn the_history_the_budget_window_and_the_nonce_lookup_each_read_their_index() {
    let Some(server) = std::env::var("TERMS_TEST_POSTGRES").ok().filter(|s| !s.is_empty()) else {
        eprintln!("skipped: TERMS_TEST_POSTGRES is not set");
        return;
    };
    let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let schema = format!("plans{}", std::process::id());
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).await.unwrap();
    let joint = if server.contains('?') { '&' } else { '?' };
    let url = format!("{server}{joint}options=-c%20search_path%3D{schema}");
    drop(super::PostgresJournal::connect_with(&url, JournalConfig::default()).await.unwrap());
    client.batch_execute(&format!("SET search_path = {schema}; SET enable_seqscan = off")).await.unwrap();
    let filters = [
        (HistoryFilter::new().limit(20), "terms_attempts_by_time"),
        (HistoryFilter::new().since(5).until(9).limit(20), "terms_attempts_by_time"),
        (HistoryFilter::new().payee("0xP").limit(20), "terms_attempts_by_payee"),
        (HistoryFilter::new().state(PaymentState::Unknown).limit(20), "terms_attempts_by_state"),
    ];
    for (filter, index) in filters {
        // The parameters written in as literals, so the plan is the one of these values.
        let (_, params) = history::query(&filter, COLUMNS, "terms_attempts", "seq", |n| format!("${n}")).unwrap();
        let literal = |n: usize| match params.get(n - 1) {
            Some(Param::Int(i)) => i.to_string(),
            Some(Param::Text(t)) => format!("'{t}'"),
            None => "NULL".into(),
        };
        let (sql, _) = history::query(&filter, COLUMNS, "terms_attempts", "seq", literal).unwrap();
        let plan = explain(&client, &sql).await;
        assert!(plan.contains(&format!(" using {index} on terms_attempts")) && !plan.contains("Seq Scan"), "{plan}");
    }
    let plan =
        explain(&client, "SELECT * FROM terms_nonce_user('eip155:1:0xA', 'x402/exact/eip155/eip3009', '0x1', 'k')")
            .await;
    assert!(plan.contains("using terms_attempts_by_nonce on terms_attempts") && !plan.contains("Seq Scan"), "{plan}");
    let plan = explain(&client, "SELECT * FROM terms_window('day', '', 'eip155:8453/0xA', 1000)").await;
    assert!(plan.contains("using terms_budget_totals_pkey on terms_budget_totals"), "{plan}");
    assert!(!plan.contains("Function Scan on terms_window") && !plan.contains("Seq Scan"), "{plan}");
    client.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).await.unwrap();
}
