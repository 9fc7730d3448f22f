//! `terms`: pay a 402 from the command line, with the gate's terms check, a spend policy and a journal.
#![forbid(unsafe_code)]

mod budget;
mod check;
mod history;
mod pay;
mod receipt;
mod setup;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

const EXIT_CODES: &str = "Exit codes (by the recovery of the outcome):
  0  success (paid and answered, or nothing to pay)
  1  an error of the program or its input (not a recovery)
  2  usage or configuration error
  3  do-not-retry: refused or declined, nothing charged (or the seller refused the payment)
  4  resend-same-payment: the payment was sent and no answer came; re-send it, never sign anew
  5  query-first: ask the seller (the job, the receipt) before anything else
  6  operator-review: a person looks
  7  retry-after-payment, retry-after-quota-reset or refresh-credential
  8  a person must approve the payment first (nothing signed)";

/// Pay HTTP 402 offers safely: the seller's terms are fetched once and their SHA-256 compared with what the offer
/// advertises before anything is signed; a spend policy and a journal stand around every payment.
#[derive(Parser, Debug)]
#[command(name = "terms", version, after_help = EXIT_CODES)]
struct Cli {
    /// The configuration file (default `$TERMS_CONFIG`, else `$XDG_CONFIG_HOME/terms/config.toml` or
    /// `~/.config/terms/config.toml`, created on first use).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The spend policy file, in place of the configuration's.
    #[arg(long, global = true)]
    policy: Option<PathBuf>,
    /// The journal, in place of the configuration's: a SQLite file (a path or `sqlite:` URL) or a PostgreSQL server
    /// (`postgres://…`, in a build with the `postgres` feature).
    #[arg(long, global = true)]
    journal: Option<String>,
    /// Output JSON (for scripts) in place of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Probe URL: show the offer, fetch and compare the terms, show the policy's verdict. Signs nothing.
    Check(RequestArgs),
    /// Request URL and pay the 402 it answers.
    Pay {
        #[command(flatten)]
        request: RequestArgs,
        /// Refuse a payment above this amount, in the asset's atomic units.
        #[arg(long)]
        max: Option<String>,
        /// Print the plan and sign nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// The journal's payments, newest first.
    History {
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// The policy's budgets: spent, reserved and remaining now.
    Budget,
    /// The journal's record of a purchase, by its idempotency key.
    Receipt {
        /// The purchase's key.
        key: String,
    },
}

#[derive(Args, Debug)]
struct RequestArgs {
    /// The URL.
    url: String,
    /// The method.
    #[arg(short = 'X', long = "request", default_value = "GET")]
    method: String,
    /// A header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// The body (`@file` reads a file).
    #[arg(short = 'd', long = "data")]
    data: Option<String>,
}

/// A failure with its exit code.
struct Fail(u8, String);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return fail(&Fail(1, e.to_string()), cli.json),
    };
    match runtime.block_on(run(&cli)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => fail(&f, cli.json),
    }
}

fn fail(f: &Fail, json: bool) -> ExitCode {
    if json {
        println!("{}", json!({"error": f.1}));
    } else {
        eprintln!("terms: {}", f.1);
    }
    ExitCode::from(f.0)
}

async fn run(cli: &Cli) -> Result<u8, Fail> {
    let setup = setup::setup(cli)?;
    match &cli.command {
        Command::Check(args) => check::run(&setup, args, cli.json).await,
        Command::Pay { request, max, dry_run } => pay::run(&setup, request, max.as_deref(), *dry_run, cli.json).await,
        Command::History { limit } => history::run(&setup, *limit, cli.json).await,
        Command::Budget => budget::run(&setup, cli.json).await,
        Command::Receipt { key } => receipt::run(&setup, key, cli.json).await,
    }
}
