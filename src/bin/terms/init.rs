//! `terms init`: a commented configuration, a spend policy template and a new key file (mode 0600), or the signer
//! command of an existing wallet in place of the key. Nothing is overwritten: where any of the files exists, nothing
//! is written.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use clap::Args;
use terms::Wallet as _;

use crate::{Cli, Fail, exit};

/// The flags of `init`.
#[derive(Args, Debug)]
pub(crate) struct InitArgs {
    /// Sign with an existing wallet's command (it reads a SigningRequest as JSON on stdin and prints the signature)
    /// in place of a new key file.
    #[arg(long, requires = "signer_address")]
    signer_command: Option<String>,
    /// The address the signer command signs for (`0x…`).
    #[arg(long, requires = "signer_command")]
    signer_address: Option<String>,
}

const CONFIG_HEAD: &str = r#"# terms: the buyer's configuration, written by `terms init`. Relative paths are this folder's.
# The journal of every payment: a SQLite file, or a PostgreSQL server ("postgres://user@host/db", in a build with
# the postgres feature) shared by every agent that spends one budget.
journal = "journal.db"
# The spend policy checked before every payment (`terms budget` shows its budgets).
policy = "policy.toml"
# The one network terms-mcp's signer pays on (the CLI asks the key for each offer's network and ignores it).
# network = "eip155:8453"
"#;

const KEY_LINES: &str = r#"# The key: a file holding a hot key (keep it mode 0600), or key_env = "TERMS_KEY" (an environment variable), or an
# external signer command with signer_address.
key_file = "key.hex"
"#;

const POLICY: &str = r#"# The spend policy, written by `terms init`: anything it does not place is refused. Amounts are atomic units in
# quotes (USDC has 6 decimals: "1000000" is 1 USDC). See docs/policies.md.

# What may be bought: URL prefixes, or ["*"] for anything.
resources = ["*"]
# The networks payments may be on.
networks = ["eip155:8453", "eip155:84532"]
# A signed authorisation is valid for at most an hour.
max_validity_seconds = 3600

# USDC on Base: at most 1 USDC a payment.
[[assets]]
network = "eip155:8453"
address = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
symbol = "USDC"
decimals = 6
cap = "1000000"

# Test USDC on Base Sepolia: at most 0.1 USDC a payment.
[[assets]]
network = "eip155:84532"
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
cap = "100000"

# At most 5 USDC a rolling day on Base.
[[budgets]]
name = "base-usdc-day"
asset = "eip155:8453/0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
window = "day"
limit = "5000000"

# At most 1 test USDC a rolling day on Base Sepolia.
[[budgets]]
name = "sepolia-usdc-day"
asset = "eip155:84532/0x036CbD53842c5426634e7929541eC2318f3dCF7e"
window = "day"
limit = "1000000"
"#;

/// The configuration's path: `--config`, `$TERMS_CONFIG`, else the default.
fn target(cli: &Cli) -> Result<PathBuf, Fail> {
    cli.config
        .clone()
        .or_else(terms::config::default_path)
        .ok_or_else(|| Fail(exit::USAGE, "no configuration path: set HOME or pass --config".into()))
}

/// Writes the files; refuses where any exists.
pub(crate) fn run(cli: &Cli, args: &InitArgs) -> Result<u8, Fail> {
    let config = target(cli)?;
    let dir = config.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let policy = dir.join("policy.toml");
    let key = dir.join("key.hex");
    let signer = args.signer_command.as_deref().zip(args.signer_address.as_deref());
    let mut files = vec![&config, &policy];
    if signer.is_none() {
        files.push(&key);
    }
    if let Some(there) = files.iter().find(|f| f.exists()) {
        return Err(Fail(
            exit::USAGE,
            format!(
                "{} exists: `terms init` overwrites nothing (move it away, or --config elsewhere)",
                there.display()
            ),
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| Fail(exit::USAGE, format!("{}: {e}", dir.display())))?;
    let mut text = CONFIG_HEAD.to_owned();
    let payer = match signer {
        Some((command, address)) => {
            text.push_str(&format!(
                "# The external signer: it reads a SigningRequest as JSON on stdin and prints the signature.\n\
                 signer_command = {command:?}\nsigner_address = {address:?}\n"
            ));
            address.to_owned()
        }
        None => {
            text.push_str(KEY_LINES);
            new_key(&key)?
        }
    };
    write_new(&config, text.as_bytes(), 0o644)?;
    write_new(&policy, POLICY.as_bytes(), 0o644)?;
    if cli.json {
        let written = files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>();
        println!("{}", serde_json::json!({"written": written, "payer": payer}));
        return Ok(exit::OK);
    }
    println!("wrote {} (the configuration)", config.display());
    println!(
        "wrote {} (the spend policy: USDC on Base and Base Sepolia, small caps and daily budgets)",
        policy.display()
    );
    match signer {
        Some(_) => println!("the payer is {payer}, signed by the signer command"),
        None => println!("wrote {} (a new key, mode 0600): the payer is {payer}; fund it before paying", key.display()),
    }
    Ok(exit::OK)
}

/// A new secp256k1 key written to `path` (mode 0600, never over a file); the payer's address.
fn new_key(path: &Path) -> Result<String, Fail> {
    let mut bytes = [0u8; 32];
    let key = loop {
        getrandom::fill(&mut bytes).map_err(|e| Fail(exit::INTERNAL, format!("the system's random source: {e}")))?;
        // Below the curve's order with overwhelming probability; a draw that is not a key is drawn again.
        if let Ok(key) = terms::EvmKey::from_hex(&format!("0x{}", hex::encode(bytes))) {
            break key;
        }
    };
    let account = key.on("eip155:1").map(|s| s.account().to_owned()).unwrap_or_default();
    let address = account.rsplit(':').next().unwrap_or_default().to_owned();
    write_new(path, format!("0x{}\n", hex::encode(bytes)).as_bytes(), 0o600)?;
    bytes.fill(0);
    Ok(address)
}

/// Writes a new file of `mode`; an existing file is an error.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Fail> {
    let fail = |e: std::io::Error| Fail(exit::USAGE, format!("{}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path).map_err(fail)?;
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(fail)
}
