//! The `terms` binary run as a process against the stand-in seller on loopback: `check` and `pay --dry-run` sign
//! nothing, `pay` pays and exits 0, `history`, `budget` and `receipt` read the journal back, exit codes follow the
//! recovery, and a signer command that fails, hangs or prints garbage, or a config that does not parse, is refused
//! clearly: a key named twice, an empty journal file; `history`, `budget` and `receipt` read a journal the user may
//! only read, and `pay` with no policy says so.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic, missing_docs)]

#[path = "../examples/support/seller.rs"]
mod seller;
#[macro_use]
#[path = "backends/mod.rs"]
mod backends;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

struct Run {
    seller: seller::Seller,
    dir: tempfile::TempDir,
}

impl Run {
    async fn new(config: &str) -> Self {
        let seller = seller::Seller::start().await;
        let dir = tempfile::tempdir().unwrap();
        let policy = format!(
            r#"resources = ["http://{}/"]
networks = ["{}"]

[[assets]]
network = "{}"
address = "{}"
symbol = "USDC"
decimals = 6
cap = "50000"

[[budgets]]
name = "usdc-day"
asset = "{}/{}"
window = "day"
limit = "1000000"
"#,
            seller.addr,
            seller::NETWORK,
            seller::NETWORK,
            seller::USDC,
            seller::NETWORK,
            seller::USDC
        );
        std::fs::write(dir.path().join("policy.toml"), policy).unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        Self { seller, dir }
    }

    /// A run in a folder an earlier run wrote (its configuration, policy and journal), with a seller of its own.
    async fn at(dir: tempfile::TempDir) -> Self {
        Self { seller: seller::Seller::start().await, dir }
    }

    async fn terms(&self, args: &[&str]) -> Output {
        self.terms_as(&[], args).await
    }

    /// `terms` run through `runner` (a command line that runs it as another user) where `runner` is not empty.
    async fn terms_as(&self, runner: &[String], args: &[&str]) -> Output {
        let mut command = match runner.split_first() {
            Some((program, runner_args)) => {
                let mut command = std::process::Command::new(program);
                command.args(runner_args).arg(env!("CARGO_BIN_EXE_terms"));
                command
            }
            None => std::process::Command::new(env!("CARGO_BIN_EXE_terms")),
        };
        command
            .arg("--config")
            .arg(self.dir.path().join("config.toml"))
            .args(args)
            .arg("--local-seller")
            .arg(self.local())
            .env("TERMS_KEY", seller::KEY)
            .env_remove("TERMS_CONFIG");
        tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
    }

    fn url(&self, path: &str) -> String {
        self.seller.url(path)
    }

    /// `--local-seller`'s value: the terms' host routed to the stand-in.
    fn local(&self) -> String {
        format!("{}={}", seller::HOST, self.seller.addr)
    }
}

const CONFIG: &str = "journal = \"journal.db\"\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n";
/// What `terms pay` says on stderr when no spend policy is configured.
const NO_POLICY: &str = "no spend policy limits this payment";

/// Everything a run wrote (with `--json` an error is on stdout).
fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_dry_run_pay_history_budget_and_receipt() {
    let dir = pays_and_reads_back(CONFIG).await;
    // `terms journal check`: a budget total something else changed is found (exit 6), refused by `terms budget`,
    // and recomputed from its reservations by `--repair`.
    let total = format!("X'{}07'", "00".repeat(39));
    rusqlite::Connection::open(dir.path().join("journal.db"))
        .unwrap()
        .execute_batch(&format!("UPDATE budget_totals SET reserved = {total} WHERE level = 4"))
        .unwrap();
    let run = Run::at(dir).await;
    let check = run.terms(&["journal", "check"]).await;
    assert_eq!(check.status.code(), Some(6), "{}", said(&check));
    assert!(said(&check).contains("refused until `terms journal check --repair`"), "{}", said(&check));
    let budget = run.terms(&["budget", "--json"]).await;
    assert_ne!(budget.status.code(), Some(0), "{}", said(&budget));
    assert!(said(&budget).contains("disagree with its reservations"), "{}", said(&budget));
    let repair = run.terms(&["journal", "check", "--repair", "--json"]).await;
    assert_eq!(repair.status.code(), Some(0), "{}", said(&repair));
    assert_eq!(json(&repair)["repaired"], true);
    let budget = json(&run.terms(&["budget", "--json"]).await);
    assert_eq!(budget[0]["spent"], seller::AMOUNT);
}

/// The same commands with the configuration's journal on a PostgreSQL server (`journal = "postgres://…"`), the key
/// the MCP server reads too; the binary then has no SQLite file at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_on_postgres_from_the_config_file() {
    let Some(server) = backends::server(concat!(module_path!(), "::a_journal_on_postgres_from_the_config_file")) else {
        return;
    };
    let url = backends::fresh_schema(&server).await;
    let dir =
        pays_and_reads_back(&format!("journal = {url:?}\npolicy = \"policy.toml\"\nkey_env = \"TERMS_KEY\"\n")).await;
    assert!(!dir.path().join("journal.db").exists(), "no SQLite file beside the config");
    let rows = backends::client(&url).await.query("SELECT payment_state FROM terms_attempts", &[]).await.unwrap();
    let states: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(states, ["settled"], "the payment is on the server");
}

/// check, a dry run, a payment, then history, budget and receipt read it back; the run's folder is returned.
async fn pays_and_reads_back(config: &str) -> tempfile::TempDir {
    let run = Run::new(config).await;
    let check = run.terms(&["check", &run.url("/report"), "--json"]).await;
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stderr));
    let plan = json(&check);
    assert_eq!(plan["pairing"], "x402/exact/eip155/eip3009");
    assert_eq!(plan["h"], seller::h());
    assert_eq!(plan["policy"]["verdict"], "allowed");
    assert_eq!(plan["quote"]["amount"], seller::AMOUNT);

    let human = run.terms(&["pay", &run.url("/report"), "--dry-run"]).await;
    assert_eq!(human.status.code(), Some(0));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("policy    allowed") && text.contains("signed    nothing"), "{text}");
    assert_eq!(run.seller.paid("/report"), 0, "check and the dry run sign and send nothing");

    let pay = run.terms(&["pay", &run.url("/report"), "--json"]).await;
    assert_eq!(pay.status.code(), Some(0), "{}", String::from_utf8_lossy(&pay.stderr));
    if config.contains("policy") {
        let said = String::from_utf8_lossy(&pay.stderr);
        assert!(!said.contains(NO_POLICY), "a policy is configured: {said}");
    }
    let paid = json(&pay);
    assert_eq!(paid["outcome"], "answered");
    assert_eq!(paid["status"], 200);
    assert_eq!(paid["paid"]["settlement"]["success"], true);
    assert_eq!(run.seller.paid("/report"), 1);
    let key = paid["paid"]["key"].as_str().unwrap().to_owned();

    let history = json(&run.terms(&["history", "--json"]).await);
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["payment_state"], "settled");
    let budget = json(&run.terms(&["budget", "--json"]).await);
    assert_eq!(budget[0]["spent"], seller::AMOUNT);
    assert_eq!(budget[0]["remaining"], "990000");
    let receipt = json(&run.terms(&["receipt", &key, "--json"]).await);
    assert_eq!(receipt["answer"]["settlement"]["transaction"], "0x5e771e");
    let check = run.terms(&["journal", "check", "--json"]).await;
    assert_eq!(check.status.code(), Some(0), "{}", said(&check));
    assert_eq!(json(&check), serde_json::json!({"faults": [], "repaired": false}));
    run.dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_follow_the_recovery() {
    let run = Run::new(CONFIG).await;
    let over = run.terms(&["pay", &run.url("/report"), "--max", "9999"]).await;
    assert_eq!(over.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&over.stderr).contains("policy/amount-above-cap"));
    assert_eq!(run.seller.paid("/report"), 0);
    let job = run.terms(&["pay", &run.url("/job")]).await;
    assert_eq!(job.status.code(), Some(5), "202: query-first");
    assert!(String::from_utf8_lossy(&job.stderr).contains("job job-1"));
    // A journal of its own: this stand-in serves one ATR, whose nonce the /job purchase used.
    let run = Run::new(CONFIG).await;
    let refused = run.terms(&["pay", &run.url("/refuse")]).await;
    assert_eq!(refused.status.code(), Some(3));
    let swapped = run.terms(&["pay", &run.url("/swap"), "--json"]).await;
    assert_eq!(swapped.status.code(), Some(3));
    assert_eq!(json(&swapped)["declined"]["code"], "hash-mismatch");
    assert!(run.terms(&["--help"]).await.stdout.windows(10).any(|w| w == b"Exit codes"));
}

async fn with_signer(command: &str) -> (Run, Output) {
    let config = format!(
        "journal = \"journal.db\"\nsigner_command = {command:?}\nsigner_address = \"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\"\nsigner_timeout = 2\n"
    );
    let run = Run::new(&config).await;
    let out = run.terms(&["pay", &run.url("/report"), "--json"]).await;
    (run, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signer_command_that_fails_hangs_or_prints_garbage_signs_nothing() {
    for (command, said) in
        [("exit 3", "failed"), ("sleep 30", "no answer within 2 s"), ("echo not-a-signature", "65-byte")]
    {
        let started = std::time::Instant::now();
        let (run, out) = with_signer(command).await;
        assert_eq!(out.status.code(), Some(3), "{command}");
        let outcome = json(&out);
        assert_eq!(outcome["declined"]["code"], "signer-failed", "{command}: {outcome}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{command}: {stderr}");
        assert_eq!(run.seller.paid("/report"), 0, "{command}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{command}: {stderr} {:?}", started.elapsed());
    }
}

/// A signer command's well-formed answer is what goes out: here a signature of the right form that is not the
/// payer's, which the seller's check of the EIP-3009 signature refuses (402), and the client does not sign again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signer_commands_answer_is_sent_and_the_seller_checks_it() {
    let zero = format!("echo 0x{}", "11".repeat(65));
    let (run, out) = with_signer(&zero).await;
    let outcome = json(&out);
    assert_eq!(outcome["outcome"], "answered", "{outcome}");
    assert_eq!(outcome["status"], 402, "the seller's check of the signature refuses it");
    assert_eq!(run.seller.paid("/report"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_file_that_does_not_parse_names_its_line() {
    let run = Run::new("journal = \"journal.db\"\npolicy = [unclosed\n").await;
    let out = run.terms(&["history"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml: line 2"), "{err}");
    // A journal value that names no journal: refused with its line, nothing opened.
    let run = Run::new("policy = \"policy.toml\"\njournal = \"mysql://db/terms\"\n").await;
    let out = run.terms(&["history"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml: line 2") && err.contains("mysql"), "{err}");
    // A --config that does not exist is an error, and nothing is created in its place.
    let fresh = run.dir.path().join("new").join("config.toml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_terms"))
        .arg("--config")
        .arg(&fresh)
        .arg("history")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("no such file"), "{}", said(&out));
    assert!(!fresh.exists() && !fresh.parent().unwrap().exists());
}

/// The MCP server reads the CLI's own file: started from another folder with that `--config`, `terms-mcp` opens the
/// journal beside the file (where the CLI recorded its payment), not a new one in the folder it was started from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_opens_the_clis_journal_from_the_same_file() {
    let dir = pays_and_reads_back(CONFIG).await;
    let journal = dir.path().join("journal.db");
    let before = std::fs::metadata(&journal).unwrap().len();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"));
    command
        .arg("--config")
        .arg(dir.path().join("config.toml"))
        .current_dir(elsewhere.path())
        .env_remove("TERMS_KEY")
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // No client spoke: the server got past its configuration (the journal opened) and stopped at the handshake.
    assert!(stderr.contains("connection closed"), "{stderr}");
    assert!(!stderr.contains("journal"), "the journal opened: {stderr}");
    assert!(!elsewhere.path().join("journal.db").exists(), "no journal where the server was started");
    assert!(std::fs::metadata(&journal).unwrap().len() >= before, "the CLI's journal is still there");

    // A journal the file names but that cannot be opened: the server starts (a line on stderr names the file), and
    // with the file's signer it offers the tools that sign, each declining journal-failed with the reason.
    let bad = dir.path().join("bad.toml");
    let text =
        format!("journal = \"no-such-folder/journal.db\"\nkey_env = \"TERMS_KEY\"\nnetwork = {:?}\n", seller::NETWORK);
    std::fs::write(&bad, text).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"));
    command.arg("--config").arg(&bad).env("TERMS_KEY", seller::KEY);
    let (transport, stderr) =
        rmcp::transport::TokioChildProcess::builder(command).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.expect("the server starts");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"atr_transact") && names.contains(&"atr_channel_within"), "{names:?}");
    assert!(!names.contains(&"atr_history"), "no journal to read: {names:?}");
    let args = serde_json::json!({"pairing": "x402/exact/eip155/eip3009", "document": {}});
    let r = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("atr_transact").with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    let v = r.structured_content.unwrap();
    assert_eq!(
        (v["decline"]["code"].as_str(), v["decline"]["detail"].as_str()),
        (Some("journal-failed"), Some("journal/unavailable"))
    );
    let cause = v["decline"]["cause"].as_str().unwrap();
    assert!(cause.contains("bad.toml") && cause.contains("no-such-folder"), "{cause}");
    client.cancel().await.unwrap();
    let mut said = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.unwrap(), &mut said).await.unwrap();
    assert!(said.contains("bad.toml") && said.contains("no-such-folder"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_naming_both_key_env_and_key_file_is_refused() {
    let run = Run::new("journal = \"journal.db\"\nkey_env = \"TERMS_KEY\"\nkey_file = \"key.hex\"\n").await;
    std::fs::write(run.dir.path().join("key.hex"), seller::KEY).unwrap();
    let url = run.url("/report");
    for args in [vec!["pay", url.as_str()], vec!["history"]] {
        let out = run.terms(&args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("config.toml") && err.contains("key_env") && err.contains("key_file"), "{args:?}: {err}");
    }
    assert_eq!(run.seller.paid("/report"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pay_with_no_policy_says_so_once_on_stderr() {
    let run = Run::new("journal = \"journal.db\"\nkey_env = \"TERMS_KEY\"\n").await;
    let out = run.terms(&["pay", &run.url("/report")]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches(NO_POLICY).count(), 1, "{err}");
    // A policy from the command line is a policy.
    let policy = run.dir.path().join("policy.toml");
    let out = run.terms(&["pay", &run.url("/report"), "--policy", policy.to_str().unwrap()]).await;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(0) && !err.contains(NO_POLICY), "{err}");
    assert_eq!(run.seller.paid("/report"), 2);
}

/// Who runs the read commands on a journal only to be read: this user; or, where the tests run as root (whom file
/// modes do not stop), `nobody` through `setpriv`; or root itself where there is no `setpriv` (then only the file's
/// bytes and time show that nothing wrote it).
fn reader(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt as _;
    if std::fs::metadata(dir).unwrap().uid() != 0 {
        return Vec::new();
    }
    let setpriv = std::process::Command::new("setpriv").arg("--version").output();
    if setpriv.is_ok_and(|o| o.status.success()) {
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"].map(String::from).to_vec();
    }
    eprintln!("cli: running as root with no setpriv: the journal's bytes and time are checked, not its modes");
    Vec::new()
}

/// `history`, `budget` and `receipt` open the journal read-only: a file of mode 0444, in a folder the user may only
/// read and then in one they may write, is read, and neither its bytes nor its time change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_budget_and_receipt_read_a_journal_the_user_may_only_read() {
    use std::os::unix::fs::PermissionsExt as _;
    let run = Run::new(CONFIG).await;
    let pay = run.terms(&["pay", &run.url("/report"), "--json"]).await;
    assert_eq!(pay.status.code(), Some(0), "{}", String::from_utf8_lossy(&pay.stderr));
    let key = json(&pay)["paid"]["key"].as_str().unwrap().to_owned();
    let dir = run.dir.path();
    let journal = dir.join("journal.db");
    let state = || (std::fs::read(&journal).unwrap(), std::fs::metadata(&journal).unwrap().modified().unwrap());
    let before = state();
    let runner = reader(dir);
    let mode = |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    mode(&journal, 0o444);
    for writable in [false, true] {
        mode(dir, if writable { 0o755 } else { 0o555 });
        if writable && !runner.is_empty() {
            std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
        }
        let folder = if writable { "a folder the user may write" } else { "a read-only folder" };
        let history = run.terms_as(&runner, &["history", "--json"]).await;
        assert_eq!(history.status.code(), Some(0), "{folder}: {}", said(&history));
        let history = json(&history);
        assert_eq!(history.as_array().unwrap().len(), 1, "{folder}");
        assert_eq!(history[0]["payment_state"], "settled", "{folder}");
        let budget = run.terms_as(&runner, &["budget", "--json"]).await;
        assert_eq!(budget.status.code(), Some(0), "{folder}: {}", said(&budget));
        assert_eq!(json(&budget)[0]["spent"], seller::AMOUNT, "{folder}");
        let receipt = run.terms_as(&runner, &["receipt", &key, "--json"]).await;
        assert_eq!(receipt.status.code(), Some(0), "{folder}: {}", said(&receipt));
        assert_eq!(json(&receipt)["answer"]["settlement"]["transaction"], "0x5e771e", "{folder}");
        assert!(state() == before, "{folder}: the journal file is not written");
    }
    mode(dir, 0o755);
}

/// A journal file of 0 bytes is not a new journal (SQLite would take it for an empty database, and the payments
/// that were in it would be gone without a word): every command refuses it, naming it, and leaves it as it is.
/// Only a path with no file yet is a new journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_journal_file_is_refused_and_left_as_it_is() {
    let run = Run::new(CONFIG).await;
    let journal = run.dir.path().join("journal.db");
    let file = std::fs::File::create(&journal).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600)).unwrap();
    drop(file);
    let url = run.url("/report");
    for args in [vec!["history"], vec!["budget"], vec!["pay", url.as_str()]] {
        let out = run.terms(&args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&journal.display().to_string()) && err.contains("empty"), "{args:?}: {err}");
        assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0, "{args:?}");
    }
    assert_eq!(run.seller.paid("/report"), 0);
    // The MCP server reading the same file does not take it for a new journal either.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_terms-mcp"));
    command.arg("--config").arg(run.dir.path().join("config.toml")).stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("journal.db") && err.contains("empty"), "{err}");
    assert_eq!(std::fs::metadata(&journal).unwrap().len(), 0);
}

#[path = "cli/approvals.rs"]
mod approvals;
#[path = "cli/console.rs"]
mod console;
#[path = "cli/console_browser.rs"]
mod console_browser;
#[path = "cli/exits.rs"]
mod exits;
#[path = "cli/first_use.rs"]
mod first_use;
#[path = "cli/gateway.rs"]
mod gateway;
#[path = "cli/local_seller.rs"]
mod local_seller;
#[path = "cli/purchases.rs"]
mod purchases;
#[path = "cli/units.rs"]
mod units;
#[path = "cli/webdriver.rs"]
mod webdriver;
