//! The PostgreSQL journal alone, on a real server: connection strings that do not parse or reach nothing, the
//! schema (migrated once when eight processes start together; a newer one refused; a user without the right to
//! create it), a connection dropped between the reservation and its commit, and a server restarted while payments
//! are in flight.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ruint::aliases::U256;
use serde_json::json;
use terms::safety::journal::{JournalConfig, PaymentState, Stage, Store};
use terms::safety::postgres::{PostgresJournal, SCHEMA_VERSION};
use terms::safety::{Answered, Begun, Ended, SpendJournal};
use terms::{Reason, atr_hash};

use super::backends::{Journal, Proxy, client, fresh_schema, in_schema, server};
use super::{ATR, day, declined, fx, intent, kind, payment};

const ASSET: &str = "eip155:8453/0xAsset";

/// A login role `<schema>_<name>` that may use the schema, granted `tables` (e.g. `SELECT ON ALL TABLES IN SCHEMA s`,
/// none where empty) by the owner's client `c`; the URL that connects as it, in the schema.
async fn role_in(server: &str, c: &tokio_postgres::Client, schema: &str, name: &str, tables: &str) -> String {
    let user = format!("{schema}_{name}");
    c.batch_execute(&format!("CREATE ROLE {user} LOGIN; GRANT USAGE ON SCHEMA {schema} TO {user}")).await.unwrap();
    if !tables.is_empty() {
        c.batch_execute(&format!("GRANT {tables} TO {user}")).await.unwrap();
    }
    in_schema(&server.replacen("postgres@", &format!("{user}@"), 1), schema)
}

/// Asks `count` (a `SELECT count(*)` of what the test waits for, e.g. a lock not granted) every 10 ms until it counts
/// one or more; `never` if that takes `within`.
async fn until_counted(
    c: &tokio_postgres::Client,
    count: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    within: Duration,
    never: &str,
) {
    let started = std::time::Instant::now();
    while c.query_one(count, params).await.unwrap().get::<_, i64>(0) == 0 {
        assert!(started.elapsed() < within, "{never}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_connection_string_that_does_not_parse_or_reaches_nothing_is_a_clear_error() {
    for bad in ["postgres://u:secret@host:notaport/db", "host=/tmp port=99999999 password=secret", "nonsense"] {
        let e = PostgresJournal::connect(bad).await.unwrap_err();
        assert!(e.0.starts_with("the journal's PostgreSQL connection string does not parse: "), "{bad}: {e}");
        assert!(!e.0.contains("secret"), "the password is in the error: {e}");
    }
    // Port 1 on loopback: nothing listens there.
    let config = JournalConfig { busy_timeout: Duration::from_millis(500), ..JournalConfig::default() };
    let e = PostgresJournal::connect_with("postgres://agent:secret@127.0.0.1:1/payments", config).await.unwrap_err();
    assert!(
        e.0.starts_with("the journal's PostgreSQL server postgres://agent@127.0.0.1:1/payments cannot be reached: "),
        "{e}"
    );
    assert!(!e.0.contains("secret"), "{e}");
}

/// A journal prints its server and database for a log line, never the password it connected with.
#[tokio::test]
async fn a_journal_prints_its_server_and_database_and_never_the_password() {
    let Some(server) =
        server(concat!(module_path!(), "::a_journal_prints_its_server_and_database_and_never_the_password"))
    else {
        return;
    };
    // The test server trusts local connections, so a password in the URL is accepted and never asked for.
    let Some(rest) = server.strip_prefix("postgres://").and_then(|r| r.split_once('@')) else {
        panic!("the test server's URL is postgres://USER@HOST:PORT/DB: {server}");
    };
    let url = fresh_schema(&format!("postgres://{}:pw-never-printed@{}", rest.0, rest.1)).await;
    let journal = PostgresJournal::connect(&url).await.unwrap();
    let printed = format!("{journal:?}");
    assert!(printed.starts_with("PostgresJournal { target: "), "{printed}");
    assert!(printed.contains(&format!("postgres://{}@{}", rest.0, rest.1)), "{printed}");
    assert!(printed.contains("config: JournalConfig"), "{printed}");
    assert!(!printed.contains("pw-never-printed"), "{printed}");
    assert_eq!(journal.target(), format!("postgres://{}@{}", rest.0, rest.1).split('?').next().unwrap());
}

#[tokio::test]
async fn eight_processes_starting_together_migrate_the_schema_once() {
    let Some(server) = server(concat!(module_path!(), "::eight_processes_starting_together_migrate_the_schema_once"))
    else {
        return;
    };
    let url = fresh_schema(&server).await;
    // Eight pools connecting at once stand for eight processes: each takes the migration lock in its own session.
    let starts = (0..8).map(|_| {
        let url = url.clone();
        tokio::spawn(async move { PostgresJournal::connect(&url).await.map(drop) })
    });
    for start in starts {
        start.await.unwrap().unwrap();
    }
    let c = client(&url).await;
    let rows = c.query("SELECT version FROM terms_schema ORDER BY version", &[]).await.unwrap();
    let versions: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(versions, (1..=SCHEMA_VERSION).collect::<Vec<_>>(), "each version applied once");
}

#[tokio::test]
async fn a_schema_of_a_newer_build_is_refused_and_never_migrated_down() {
    let Some(server) =
        server(concat!(module_path!(), "::a_schema_of_a_newer_build_is_refused_and_never_migrated_down"))
    else {
        return;
    };
    let url = fresh_schema(&server).await;
    drop(PostgresJournal::connect(&url).await.unwrap());
    let c = client(&url).await;
    let newer = SCHEMA_VERSION + 1;
    c.execute("INSERT INTO terms_schema VALUES ($1, '9.9.9', 0)", &[&newer]).await.unwrap();
    let e = PostgresJournal::connect(&url).await.unwrap_err();
    let target = server.split('?').next().unwrap();
    assert!(e.0.starts_with(&format!("the journal on {target} cannot be used: ")), "{e}");
    assert!(e.0.contains(&format!("schema version {newer}, and this build reads version {SCHEMA_VERSION}")), "{e}");
    assert!(e.0.contains("never migrated down"), "{e}");
    let rows = c.query("SELECT version FROM terms_schema ORDER BY version", &[]).await.unwrap();
    assert_eq!(rows.len(), usize::try_from(newer).unwrap(), "nothing was removed");
}

#[tokio::test]
async fn a_user_without_the_right_to_migrate_is_told_and_can_use_a_schema_made_for_it() {
    let test =
        concat!(module_path!(), "::a_user_without_the_right_to_migrate_is_told_and_can_use_a_schema_made_for_it");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let schema = owner.rsplit("%3D").next().unwrap().to_owned();
    let user = format!("{schema}_agent");
    let c = client(&owner).await;
    let as_agent = role_in(&server, &c, &schema, "agent", "").await;
    let e = PostgresJournal::connect(&as_agent).await.unwrap_err();
    assert!(e.0.contains("its user may not create the journal's tables (permission denied for schema"), "{e}");
    assert!(e.0.ends_with("nothing was changed"), "{e}");
    let tables: i64 =
        c.query_one("SELECT count(*) FROM pg_tables WHERE schemaname = $1", &[&schema]).await.unwrap().get(0);
    assert_eq!(tables, 0, "a refused migration leaves nothing behind");
    // The owner migrates once and grants the tables: the agent then pays.
    drop(PostgresJournal::connect(&owner).await.unwrap());
    c.batch_execute(&format!("GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {schema} TO {user}")).await.unwrap();
    let journal = PostgresJournal::connect(&as_agent).await.unwrap();
    let f = fx();
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &day(1, 1), 10)).await.unwrap()), "fresh");
}

/// A user without the right to create the tables who starts while another process migrates (a deploy's owner
/// migrating as the agents start) waits for the migration and uses its tables: under the migration lock it looks
/// again, and creates nothing (even `CREATE ... IF NOT EXISTS` needs the right it lacks). So does a second process
/// of the owner's.
#[tokio::test]
async fn a_user_without_the_right_to_migrate_who_meets_a_migration_under_way_waits_and_uses_it() {
    let test = concat!(
        module_path!(),
        "::a_user_without_the_right_to_migrate_who_meets_a_migration_under_way_waits_and_uses_it"
    );
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let schema = owner.rsplit("%3D").next().unwrap().to_owned();
    let c = client(&owner).await;
    let as_agent = role_in(&server, &c, &schema, "agent", "").await;
    let agent = format!("{schema}_agent");
    // The tables the owner's migration creates are the agent's to use.
    c.batch_execute(&format!(
        "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE ON TABLES TO {agent}"
    ))
    .await
    .unwrap();
    // Another session holds the migration lock (`termjnl1` in ASCII), as a process migrating another schema would.
    let holder = client(&server).await;
    holder.batch_execute("BEGIN; SELECT pg_advisory_xact_lock(x'7465726d6a6e6c31'::bigint)").await.unwrap();
    let waiting = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                   WHERE l.locktype = 'advisory' AND NOT l.granted AND (a.application_name = $1 OR a.usename = $1)";
    let watcher = client(&server).await;
    let wait_for = async |who: &str| {
        let never = format!("{who} never waited for the migration lock");
        until_counted(&watcher, waiting, &[&who], Duration::from_secs(10), &never).await;
    };
    // The owner queues for the lock first (it will migrate), then the agent (it will find the tables made).
    let named = format!("{owner}&application_name={schema}_owner");
    let owner_opens = tokio::spawn(async move { PostgresJournal::connect(&named).await.map(drop) });
    wait_for(&format!("{schema}_owner")).await;
    let agent_opens = tokio::spawn(async move { PostgresJournal::connect(&as_agent).await });
    wait_for(&agent).await;
    // And a second process of the owner's: it too finds the tables made (before, it migrated again and met
    // `terms_atr` already there).
    let named = format!("{owner}&application_name={schema}_second");
    let second_opens = tokio::spawn(async move { PostgresJournal::connect(&named).await.map(drop) });
    wait_for(&format!("{schema}_second")).await;
    holder.batch_execute("COMMIT").await.unwrap();
    owner_opens.await.unwrap().unwrap();
    second_opens.await.unwrap().unwrap_or_else(|e| panic!("the owner's second process: {e}"));
    let journal =
        agent_opens.await.unwrap().unwrap_or_else(|e| panic!("the agent did not wait for the migration: {e}"));
    let f = fx();
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &day(1, 1), 10)).await.unwrap()), "fresh");
    let rows = c.query("SELECT version FROM terms_schema", &[]).await.unwrap();
    assert_eq!(rows.len(), usize::try_from(SCHEMA_VERSION).unwrap(), "the schema was migrated once");
}

/// A write the server answers with a refusal (here: no right to insert) is that refusal at once; only a race the
/// server broke (a deadlock, a serialization failure) or a lost connection is tried again until the busy timeout.
#[tokio::test]
async fn a_write_the_server_refuses_is_told_at_once_and_not_tried_again() {
    let test = concat!(module_path!(), "::a_write_the_server_refuses_is_told_at_once_and_not_tried_again");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let schema = owner.rsplit("%3D").next().unwrap().to_owned();
    drop(PostgresJournal::connect(&owner).await.unwrap());
    let c = client(&owner).await;
    let as_reader = role_in(&server, &c, &schema, "reader", &format!("SELECT ON ALL TABLES IN SCHEMA {schema}")).await;
    let busy = Duration::from_secs(4);
    let journal =
        PostgresJournal::connect_with(&as_reader, JournalConfig { busy_timeout: busy, ..JournalConfig::default() })
            .await
            .unwrap();
    let f = fx();
    let started = std::time::Instant::now();
    let e = journal.begin(&intent(&f, "k", "a1", &day(1, 1), 10)).await.unwrap_err();
    // The server's own words and its SQLSTATE (42501, insufficient privilege), and that nothing was recorded.
    assert!(e.0.contains("permission denied") && e.0.contains("(42501)"), "{e}");
    assert!(e.0.ends_with(": nothing was recorded"), "{e}");
    // Tried again, it would have slept and asked until the busy timeout: the refusal comes back well before it.
    assert!(started.elapsed() < busy / 2, "the refusal took {:?}, as if tried again", started.elapsed());
}

/// A read whose connection is lost before its commit's answer is tried again on a new connection and answers; a read
/// the server refuses (no right to select) is told at once.
#[tokio::test]
async fn a_read_on_a_lost_connection_is_tried_again_and_a_refused_one_is_told_at_once() {
    let test =
        concat!(module_path!(), "::a_read_on_a_lost_connection_is_tried_again_and_a_refused_one_is_told_at_once");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let schema = owner.rsplit("%3D").next().unwrap().to_owned();
    let cutter = Proxy::start(&server, false).await;
    let busy = Duration::from_secs(4);
    let config = JournalConfig { busy_timeout: busy, ..JournalConfig::default() };
    let journal = PostgresJournal::connect_with(&cutter.url(&owner), config).await.unwrap();
    let f = fx();
    assert_eq!(kind(&journal.begin(&intent(&f, "k", "a1", &day(1, 1), 10)).await.unwrap()), "fresh");
    // Each read is one read-only transaction: the proxy cuts the connection that sends its COMMIT.
    cutter.armed.store(true, Ordering::SeqCst);
    assert_eq!(journal.attempts("k").await.unwrap().len(), 1, "the read was not tried again on a new connection");
    assert_eq!(cutter.cuts.load(Ordering::SeqCst), 1, "the read's commit was not cut");
    let c = client(&server).await;

    // A reader that may read the schema's version but not the payments: refused at once, not tried again.
    let as_user = role_in(&server, &c, &schema, "version_only", &format!("SELECT ON {schema}.terms_schema")).await;
    let limited = PostgresJournal::connect_with(&as_user, config).await.unwrap();
    let started = std::time::Instant::now();
    let e = limited.attempts("k").await.unwrap_err();
    assert!(e.0.contains("permission denied"), "{e}");
    assert!(started.elapsed() < busy / 2, "the refusal took {:?}, as if tried again", started.elapsed());
}

/// A write the server breaks off with its word to try again (a serialization failure, a deadlock) or with a
/// connection it is closing (a shutdown, a connection exception) on a connection that still answers is run again on
/// a new try, and lands once. The faults come from a trigger: each insert of an attempt takes the next number of a
/// sequence (which a rollback does not give back), and the numbers listed in `faults` fail with their SQLSTATE.
#[tokio::test]
async fn a_write_the_server_breaks_off_to_be_tried_again_is_run_again_and_lands_once() {
    let test = concat!(module_path!(), "::a_write_the_server_breaks_off_to_be_tried_again_is_run_again_and_lands_once");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let journal = PostgresJournal::connect(&owner).await.unwrap();
    let c = client(&owner).await;
    c.batch_execute(
        "CREATE SEQUENCE tries; CREATE TABLE faults (try BIGINT PRIMARY KEY, code TEXT NOT NULL); \
         CREATE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS $$ \
         DECLARE n BIGINT := nextval('tries'); failing TEXT; \
         BEGIN SELECT code INTO failing FROM faults WHERE try = n; \
         IF failing IS NOT NULL THEN RAISE EXCEPTION 'fault % on try %', failing, n USING ERRCODE = failing; END IF; \
         RETURN NEW; END $$; \
         CREATE TRIGGER fault BEFORE INSERT ON terms_attempts FOR EACH ROW EXECUTE FUNCTION fault()",
    )
    .await
    .unwrap();
    // Serialization failure, deadlock; admin shutdown, crash shutdown, cannot connect now; connection failure.
    let codes = ["40001", "40P01", "57P01", "57P02", "57P03", "08006"];
    for (i, code) in codes.iter().enumerate() {
        let first = i64::try_from(2 * i + 1).unwrap();
        c.execute("INSERT INTO faults VALUES ($1, $2)", &[&first, code]).await.unwrap();
    }
    let f = fx();
    let claims = day(100, 1);
    for (i, code) in codes.iter().enumerate() {
        let (key, attempt) = (format!("k{i}"), format!("a{i}"));
        let begun = journal.begin(&intent(&f, &key, &attempt, &claims, 100)).await;
        assert_eq!(kind(&begun.unwrap_or_else(|e| panic!("{code}: {e}"))), "fresh", "{code}");
        assert_eq!(journal.attempts(&key).await.unwrap().len(), 1, "{code}");
    }
    // Each begin was tried twice: the fault, then the write that landed.
    let tries: i64 = c.query_one("SELECT last_value FROM tries", &[]).await.unwrap().get(0);
    assert_eq!(tries, i64::try_from(2 * codes.len()).unwrap());
    let used = journal.budget("day", "", ASSET, 86_400, U256::from(100), 100).await.unwrap();
    assert_eq!(used.reserved, U256::from(codes.len()), "one reservation each");
    // Any other SQLSTATE is the server's answer: told at once, nothing recorded.
    c.execute("INSERT INTO faults VALUES ($1, '23514')", &[&(tries + 1)]).await.unwrap();
    let e = journal.begin(&intent(&f, "k-last", "a-last", &claims, 100)).await.unwrap_err();
    assert!(e.0.contains(&format!("fault 23514 on try {}", tries + 1)) && e.0.contains("(23514)"), "{e}");
    assert!(e.0.ends_with(": nothing was recorded"), "{e}");
    let after: i64 = c.query_one("SELECT last_value FROM tries", &[]).await.unwrap().get(0);
    assert_eq!(after, tries + 1, "a refusal is not tried again");
}

/// Two purchases never wait for each other: a begin held up inside one purchase (its attempt's row locked by
/// another session) holds that purchase's lock, and a begin of another purchase on the same budget goes through.
#[tokio::test]
async fn a_begin_held_up_in_one_purchase_does_not_hold_up_another() {
    let test = concat!(module_path!(), "::a_begin_held_up_in_one_purchase_does_not_hold_up_another");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let busy = Duration::from_secs(3);
    let config = JournalConfig { busy_timeout: busy, ..JournalConfig::default() };
    let journal = Arc::new(PostgresJournal::connect_with(&owner, config).await.unwrap());
    let f = Arc::new(fx());
    let claims = Arc::new(day(100, 1));
    assert_eq!(kind(&journal.begin(&intent(&f, "k1", "a1", &claims, 100)).await.unwrap()), "fresh");
    let holder = client(&owner).await;
    holder.batch_execute("BEGIN; SELECT 1 FROM terms_attempts WHERE attempt = 'a1' FOR UPDATE").await.unwrap();
    let held_up = {
        let (journal, f, claims) = (journal.clone(), f.clone(), claims.clone());
        tokio::spawn(async move { journal.begin(&intent(&f, "k1", "a2", &claims, 101)).await })
    };
    // Until the second begin of k1 holds its purchase's lock and waits for a1's row.
    let watcher = client(&server).await;
    let waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted";
    until_counted(&watcher, waiting, &[], busy, "the second begin of k1 never waited for a1's row").await;
    let other = std::time::Instant::now();
    let begun = journal.begin(&intent(&f, "k2", "b1", &claims, 101)).await.unwrap();
    assert_eq!(kind(&begun), "fresh");
    assert!(other.elapsed() < busy / 2, "k2 waited {:?} for k1", other.elapsed());
    holder.batch_execute("COMMIT").await.unwrap();
    // a1 is still in flight: the held-up begin answers so once the row is free.
    let Begun::Blocked(reason, _) = held_up.await.unwrap().unwrap() else { panic!("a2 was not blocked by a1") };
    assert_eq!(reason, Reason::InFlight);
}

/// A schema where a table of the journal's name is not the journal's (another application's `terms_atr`): the
/// server's own words, not a missing right, and nothing changed.
#[tokio::test]
async fn a_table_of_the_journals_name_that_is_not_the_journal_is_the_servers_error() {
    let test = concat!(module_path!(), "::a_table_of_the_journals_name_that_is_not_the_journal_is_the_servers_error");
    let Some(server) = server(test) else { return };
    let owner = fresh_schema(&server).await;
    let c = client(&owner).await;
    c.batch_execute("CREATE TABLE terms_atr (id INTEGER)").await.unwrap();
    let e = PostgresJournal::connect(&owner).await.unwrap_err();
    assert!(e.0.contains("\"terms_atr\" already exists") && e.0.contains("(42P07)"), "{e}");
    assert!(!e.0.contains("may not create"), "{e}");
    let schema: bool = c.query_one("SELECT to_regclass('terms_schema') IS NOT NULL", &[]).await.unwrap().get(0);
    assert!(!schema, "the failed migration left its version table behind");
}

#[tokio::test]
async fn a_connection_dropped_between_reserve_and_commit_leaves_one_reservation_or_none_never_two() {
    let test = concat!(
        module_path!(),
        "::a_connection_dropped_between_reserve_and_commit_leaves_one_reservation_or_none_never_two"
    );
    let Some(server) = server(test) else { return };
    for reaches in [false, true] {
        let cutter = Proxy::start(&server, reaches).await;
        let proxied = cutter.url(&fresh_schema(&server).await);
        let journal = PostgresJournal::connect(&proxied).await.unwrap();
        let f = fx();
        let claims = day(2, 1);
        cutter.armed.store(true, Ordering::SeqCst);
        // The begin's commit is cut; the journal reconnects, looks, and answers once.
        let begun = journal.begin(&intent(&f, "k", "a1", &claims, 100)).await.unwrap();
        assert_eq!(cutter.cuts.load(Ordering::SeqCst), 1, "the commit was not cut (commit reached server: {reaches})");
        assert_eq!(kind(&begun), "fresh", "commit reached server: {reaches}");
        let used = journal.budget("day", "", ASSET, 86_400, U256::from(2), 100).await.unwrap();
        assert_eq!(used.reserved, U256::from(1), "commit reached server: {reaches}: one reservation, not two");
        assert_eq!(journal.attempts("k").await.unwrap().len(), 1);
        // The same for a signed payment: recorded once, and the purchase re-sends it.
        cutter.armed.store(true, Ordering::SeqCst);
        journal.signed("a1", ATR, &payment()).await.unwrap();
        assert_eq!(cutter.cuts.load(Ordering::SeqCst), 2);
        assert_eq!(kind(&journal.begin(&intent(&f, "k", "a2", &claims, 100)).await.unwrap()), "resend a1");
        let r = journal.record("k").await.unwrap().unwrap();
        assert_eq!((r.payment_state, r.payment), (PaymentState::Unknown, Some(payment())));
        // Queued, then settled with the settlement's cut commit: the queued answer is not taken for it.
        let (queued, settled) = (json!({"success": true, "job": "j1"}), json!({"success": true, "tx": "0x1"}));
        journal.answered("a1", Answered::Queued(&queued)).await.unwrap();
        cutter.armed.store(true, Ordering::SeqCst);
        journal.answered("a1", Answered::Settled(&settled)).await.unwrap();
        let r = journal.record("k").await.unwrap().unwrap();
        assert_eq!((r.answer, r.payment_state), (Some(settled), PaymentState::Settled), "reaches: {reaches}");
        // An answer of no charge, and the two ends (one with a decline, one without), each with its commit cut:
        // each is recorded once, and looked for, not written twice (a second is refused).
        let claims = day(10, 1);
        journal.begin(&intent(&f, "k3", "a3", &claims, 100)).await.unwrap();
        journal.signed("a3", ATR, &payment()).await.unwrap();
        cutter.armed.store(true, Ordering::SeqCst);
        journal.answered("a3", Answered::NotPaid(&json!({"success": false}))).await.unwrap();
        journal.begin(&intent(&f, "k4", "a4", &claims, 100)).await.unwrap();
        cutter.armed.store(true, Ordering::SeqCst);
        journal.ended("a4", Ended::NotPaid(&declined())).await.unwrap();
        journal.begin(&intent(&f, "k5", "a5", &claims, 100)).await.unwrap();
        cutter.armed.store(true, Ordering::SeqCst);
        journal.ended("a5", Ended::HandedBack).await.unwrap();
        assert_eq!(cutter.cuts.load(Ordering::SeqCst), 6, "reaches: {reaches}");
        for (key, stage) in [("k3", Stage::Answered), ("k4", Stage::Ended), ("k5", Stage::Ended)] {
            let r = journal.record(key).await.unwrap().unwrap();
            assert_eq!((r.stage, r.payment_state), (stage, PaymentState::NotPaid), "{key}, reaches: {reaches}");
        }
        let r = journal.record("k4").await.unwrap().unwrap();
        assert_eq!(r.decline, Some(serde_json::to_value(declined()).unwrap()), "reaches: {reaches}");
    }
}

/// The lease of the restart test's journals, in seconds of its agents' clock.
const LEASE: u64 = 5;

/// One agent of the restart test: pays `count` purchases of its own, each until it is settled, trying again after
/// every failure as an agent would (an in-flight attempt of a dead process is waited out on its clock). Every
/// payment it sends is logged in `sent` by purchase.
async fn agent(
    journal: Arc<dyn Journal>,
    id: usize,
    count: usize,
    sent: Arc<Mutex<BTreeMap<String, BTreeSet<String>>>>,
    failures: Arc<AtomicUsize>,
    settled: Arc<AtomicUsize>,
) {
    let f = fx();
    let claims = day(1_000, 1);
    let mut at = 1_000;
    for n in 0..count {
        let key = format!("agent{id}-p{n}");
        for tries in 0.. {
            assert!(tries < 2_000, "{key}: never paid");
            at += 1;
            let attempt = format!("{key}-a{tries}");
            let (paid_by, payment) = match journal.begin(&intent(&f, &key, &attempt, &claims, at)).await {
                Err(_) => {
                    failures.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Ok(Begun::Fresh) => {
                    let signed = json!({"payment": attempt});
                    if journal.signed(&attempt, ATR, &signed).await.is_err() {
                        // Not recorded (or not known to be): it is not sent; the next begin finds out which.
                        failures.fetch_add(1, Ordering::SeqCst);
                        continue;
                    }
                    (attempt.clone(), signed)
                }
                Ok(Begun::Resend { attempt, payment }) => (attempt, *payment),
                Ok(Begun::Blocked(Reason::InFlight, _)) => {
                    at += LEASE;
                    continue;
                }
                Ok(other) => panic!("{key}: {other:?}"),
            };
            sent.lock().unwrap().entry(key.clone()).or_default().insert(payment.to_string());
            while journal.answered(&paid_by, Answered::Settled(&json!({"success": true}))).await.is_err() {
                failures.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            settled.fetch_add(1, Ordering::SeqCst);
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_while_payments_are_in_flight_loses_none_and_the_agents_go_on() {
    let test =
        concat!(module_path!(), "::a_server_restarted_while_payments_are_in_flight_loses_none_and_the_agents_go_on");
    let Some(shared) = server(test) else { return };
    // A server of its own (the next port), so the restart stops no other test's. The script's ports sit below the
    // ephemeral range: there an outgoing connection of another test may hold the port and the server cannot bind it.
    let port: u16 = shared.rsplit(':').next().unwrap().split('/').next().unwrap().parse().unwrap();
    let port = (port + 1).to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/pg-test-server");
    let run = |what: &str| {
        let mut args: Vec<&str> = what.split(' ').collect();
        args.insert(1, &port);
        let out = std::process::Command::new(script).args(args).output().unwrap();
        assert!(out.status.success(), "pg-test-server {what}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let url = tokio::task::block_in_place(|| run("start"));
    // Stopped however the test ends.
    struct Stop<F: Fn(&str) -> String>(F);
    impl<F: Fn(&str) -> String> Drop for Stop<F> {
        fn drop(&mut self) {
            (self.0)("stop");
        }
    }
    let _stop = Stop(run);
    let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let pid = || std::fs::read_to_string(format!("{tmp}/terms-pg-{port}/data/postmaster.pid")).unwrap_or_default();
    let first_pid = pid();
    let url = fresh_schema(&url).await;
    let (agents, each) = (4, 60);
    // A short busy timeout: the journal gives up during the restart and the agents see it, and try again.
    let config =
        JournalConfig { lease_seconds: LEASE, busy_timeout: Duration::from_millis(300), ..JournalConfig::default() };
    let sent = Arc::new(Mutex::new(BTreeMap::new()));
    let (failures, settled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut tasks = Vec::new();
    for id in 0..agents {
        let journal: Arc<dyn Journal> = Arc::new(PostgresJournal::connect_with(&url, config).await.unwrap());
        tasks.push(tokio::spawn(agent(journal, id, each, sent.clone(), failures.clone(), settled.clone())));
    }
    while settled.load(Ordering::SeqCst) < 40 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let before = settled.load(Ordering::SeqCst);
    // Down a whole second, longer than the busy timeout: a journal write in that window cannot be saved by the
    // journal's own retry, so the agents must see failures (a restart quicker than the timeout may hide it).
    tokio::task::block_in_place(|| (_stop.0)("restart 1"));
    assert_ne!(pid(), first_pid, "the server did not restart");
    let back = settled.load(Ordering::SeqCst);
    for task in tasks {
        task.await.unwrap();
    }
    let failed = failures.load(Ordering::SeqCst);
    eprintln!("restart: {before} settled before, {back} when the server was back, {failed} failed writes tried again");
    assert!(failed > 0, "the restart hit no payment in flight: the test proved nothing");
    assert!(back < agents * each, "the agents had finished before the restart");
    let journal = PostgresJournal::connect(&url).await.unwrap();
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent.len(), agents * each);
    for (key, payments) in &sent {
        assert_eq!(payments.len(), 1, "{key}: {} different payments sent", payments.len());
        let attempts = journal.attempts(key).await.unwrap();
        for a in &attempts {
            let ok = [PaymentState::Settled, PaymentState::NotPaid, PaymentState::Unknown].contains(&a.payment_state);
            assert!(ok, "{key}: {a:?}");
            // Every signed payment is in the journal, and only the one that was sent.
            if let Some(p) = &a.payment {
                assert!(payments.contains(&p.to_string()), "{key}: {} signed and recorded but never sent", a.attempt);
            }
        }
        let r = journal.record(key).await.unwrap().unwrap();
        assert_eq!(r.payment_state, PaymentState::Settled, "{key}");
        assert!(payments.contains(&r.payment.unwrap().to_string()), "{key}: the settled payment is not the one sent");
    }
    let used = journal.budget("day", "", ASSET, 86_400, U256::from(1_000), 1_000).await.unwrap();
    assert_eq!((used.spent, used.reserved), (U256::from(agents * each), U256::ZERO), "one payment per purchase");
    assert_eq!(journal.atr(&atr_hash(ATR)).await.unwrap().as_deref(), Some(ATR));
    drop(journal);
}
