//! First use: `terms init` in a temporary HOME, the default configuration created once and said, a `--config` or
//! `--policy` that does not exist refused, a loose key file warned, and the README's quick start run as written.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output};

use super::{Run, said, seller};

#[allow(dead_code, unreachable_pub, missing_docs)]
#[path = "../../examples/seller.rs"]
mod example_seller;

/// `terms` with HOME set to `home` and no configuration in the environment.
fn terms_at(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_terms"))
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TERMS_CONFIG")
        .env_remove("TERMS_KEY")
        .output()
        .unwrap()
}

#[test]
fn init_writes_a_config_a_policy_and_a_private_key_and_overwrites_nothing() {
    let home = tempfile::tempdir().unwrap();
    let out = terms_at(home.path(), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let dir = home.path().join(".config/terms");
    let text = said(&out);
    for file in ["config.toml", "policy.toml", "key.hex"] {
        assert!(dir.join(file).is_file(), "{file}");
        assert!(text.contains(&dir.join(file).display().to_string()), "names {file}: {text}");
    }
    let mode = std::fs::metadata(dir.join("key.hex")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let config = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(config.lines().any(|l| l.starts_with('#')) && config.contains("key_file = \"key.hex\""), "{config}");
    // The files read back: the policy loads and the key makes a payer, whose address init named.
    let budget = terms_at(home.path(), &["budget"]);
    assert_eq!(budget.status.code(), Some(0), "{}", said(&budget));
    assert!(said(&budget).contains("sepolia-usdc-day  limit 1 USDC (1000000)"), "{}", said(&budget));
    let key = std::fs::read(dir.join("key.hex")).unwrap();

    // A second init refuses, exit 2, and leaves every file as it was.
    let again = terms_at(home.path(), &["init"]);
    assert_eq!(again.status.code(), Some(2), "{}", said(&again));
    assert!(said(&again).contains("exists"), "{}", said(&again));
    assert_eq!(std::fs::read(dir.join("key.hex")).unwrap(), key);
    // Only the config left: still refused, and no new key or policy written beside it.
    std::fs::remove_file(dir.join("key.hex")).unwrap();
    std::fs::remove_file(dir.join("policy.toml")).unwrap();
    let again = terms_at(home.path(), &["init"]);
    assert_eq!(again.status.code(), Some(2), "{}", said(&again));
    assert!(!dir.join("key.hex").exists() && !dir.join("policy.toml").exists());
}

#[test]
fn init_with_a_signer_command_writes_no_key_and_a_folder_it_cannot_write_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("w/config.toml");
    let config = config.to_str().unwrap();
    let address = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
    let out = terms_at(
        home.path(),
        &["init", "--config", config, "--signer-command", "my-signer --sign", "--signer-address", address],
    );
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let text = std::fs::read_to_string(config).unwrap();
    assert!(text.contains("signer_command = \"my-signer --sign\"") && text.contains(address), "{text}");
    assert!(!home.path().join("w/key.hex").exists());
    // A folder that cannot be made (its parent is a file): refused, exit 2, nothing written.
    std::fs::write(home.path().join("file"), "").unwrap();
    let out =
        terms_at(home.path(), &["init", "--config", home.path().join("file/terms/config.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("file/terms"), "{}", said(&out));
}

#[test]
fn the_default_config_is_created_once_and_said_and_a_missing_config_or_policy_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let first = terms_at(home.path(), &["history"]);
    assert_eq!(first.status.code(), Some(0), "{}", said(&first));
    assert!(said(&first).contains("wrote a new configuration at"), "{}", said(&first));
    assert!(home.path().join(".config/terms/config.toml").is_file());
    let second = terms_at(home.path(), &["history"]);
    assert!(!said(&second).contains("wrote"), "said once: {}", said(&second));
    // A --config or --policy that does not exist: exit 2, and no file appears.
    let typo = home.path().join("confg.toml");
    let out = terms_at(home.path(), &["--config", typo.to_str().unwrap(), "history"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(!typo.exists());
    let out = terms_at(home.path(), &["--policy", "/nonexistent/policy.toml", "history"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert!(said(&out).contains("--policy /nonexistent/policy.toml: no such file"), "{}", said(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_file_others_may_read_is_warned() {
    let run = Run::new("journal = \"journal.db\"\nkey_file = \"key.hex\"\n").await;
    let key = run.dir.path().join("key.hex");
    std::fs::write(&key, seller::KEY).unwrap();
    for (mode, warned) in [(0o644, true), (0o600, false)] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = run.terms(&["pay", &run.url("/report"), "--dry-run"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", said(&out));
        assert_eq!(said(&out).contains("warning: the key file"), warned, "{mode:o}: {}", said(&out));
    }
}

/// The README's quick start, as written there: `terms init`, `terms check`, `terms pay` and `terms history` with
/// `--local-seller`, in a new HOME, against `examples/seller.rs` (the minimal seller of docs/sellers.md, one ATR per
/// transaction): a second `pay` re-sends the first payment, and `pay --new` buys again and settles, as its new
/// terms carry a new H (the EIP-3009 nonce).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_quick_start_runs_against_the_example_seller() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(example_seller::serve(listener));
    let home = tempfile::tempdir().unwrap();
    let local = format!("{}={addr}", example_seller::HOST);
    let url = format!("http://{addr}/report");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let steps: [&[&str]; 6] = [
        &["init"],
        &["check", &url, "--local-seller", &local],
        &["pay", &url, "--local-seller", &local],
        &["history"],
        &["pay", &url, "--local-seller", &local],
        &["pay", &url, "--new", "--local-seller", &local],
    ];
    let mut outs = Vec::new();
    for (i, args) in steps.into_iter().enumerate() {
        // The README shows the first four commands with the seller's address, 127.0.0.1:8402.
        let shown = args.join(" ").replace(&addr.to_string(), "127.0.0.1:8402");
        assert!(i >= 4 || readme.contains(&format!("terms {shown}")), "the README shows `terms {shown}`");
        let home = home.path().to_owned();
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let out = tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            terms_at(&home, &args)
        })
        .await
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", shown, said(&out));
        outs.push(out);
    }
    assert!(readme.contains("cargo run --example seller"), "the README starts the seller");
    assert!(said(&outs[1]).contains("pays      0.01 USDC (10000)"), "{}", said(&outs[1]));
    assert!(said(&outs[2]).contains("paid 0.01 USDC (10000)"), "{}", said(&outs[2]));
    assert!(said(&outs[3]).contains("settled"), "{}", said(&outs[3]));
    assert!(said(&outs[4]).contains("re-sent the payment made at"), "{}", said(&outs[4]));
    assert!(said(&outs[5]).contains("paid 0.01 USDC (10000)"), "a new purchase settles: {}", said(&outs[5]));
    let history = String::from_utf8_lossy(&terms_at(home.path(), &["history"]).stdout).into_owned();
    assert_eq!(history.lines().filter(|l| l.contains("settled")).count(), 2, "{history}");
}
