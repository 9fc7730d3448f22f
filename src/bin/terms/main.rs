//! `terms`: pay a 402 from the command line, with the gate's terms check, a spend policy and a journal.
#![forbid(unsafe_code)]

mod approvals;
mod budget;
mod check;
mod console;
mod discovery;
mod gateway;
mod history;
mod init;
mod journal;
mod known_assets;
mod pay;
mod receipt;
mod setup;
mod units;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;

/// The exit codes, by what happened.
pub(crate) mod exit {
    /// Paid and answered, or nothing to pay.
    pub(crate) const OK: u8 = 0;
    /// An error of the program itself, or the journal failing in the middle of a command.
    pub(crate) const INTERNAL: u8 = 1;
    /// A usage, input or configuration error, found before anything was sent.
    pub(crate) const USAGE: u8 = 2;
    /// `do-not-retry`: refused or declined, nothing charged (or the seller refused the payment).
    pub(crate) const DO_NOT_RETRY: u8 = 3;
    /// `resend-same-payment`.
    pub(crate) const RESEND_SAME: u8 = 4;
    /// `query-first`.
    pub(crate) const QUERY_FIRST: u8 = 5;
    /// `operator-review`.
    pub(crate) const OPERATOR_REVIEW: u8 = 6;
    /// `retry-after-payment`, `retry-after-quota-reset` or `refresh-credential`.
    pub(crate) const RETRY_LATER: u8 = 7;
    /// A person approves the payment first.
    pub(crate) const APPROVE: u8 = 8;
    /// The seller could not be reached; nothing was paid.
    pub(crate) const UNREACHED: u8 = 9;
}

const EXIT_CODES: &str = "Exit codes (by what happened):
  0  success: paid and answered, or nothing to pay
  1  an error of the program itself, or the journal failed in the middle of a command
  2  usage, input or configuration error, found before anything was sent
  3  do-not-retry: refused or declined, nothing charged (or the seller refused the payment)
  4  resend-same-payment: the payment was sent and no answer came; re-send it (`terms pay` again), never sign anew
  5  query-first: ask the seller (the job, the receipt) before anything else
  6  operator-review: a person looks (e.g. a redirect answered the paid request; `terms journal check` found a
     budget whose running totals disagree with its reservations)
  7  retry-after-payment, retry-after-quota-reset or refresh-credential
  8  a person must approve the payment first (nothing signed): `terms approvals`, `terms approve ID`
  9  the seller could not be reached and nothing was paid: trying again is safe";

/// Pay HTTP 402 offers safely: the seller's terms are fetched once and their SHA-256 compared with what the offer
/// advertises before anything is signed; a spend policy and a journal stand around every payment.
#[derive(Parser, Debug)]
#[command(name = "terms", version, after_help = EXIT_CODES)]
struct Cli {
    /// The configuration file. It must exist (`terms init --config FILE` writes one). Default `$TERMS_CONFIG`
    /// (which must exist too), else `$XDG_CONFIG_HOME/terms/config.toml` or `~/.config/terms/config.toml`, the one
    /// path created on first use.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The spend policy file, in place of the configuration's. It must exist.
    #[arg(long, global = true)]
    policy: Option<PathBuf>,
    /// The journal, in place of the configuration's: a SQLite file (a path or `sqlite:` URL) or a PostgreSQL server
    /// (`postgres://…`, in a build with the `postgres` feature).
    #[arg(long, global = true)]
    journal: Option<String>,
    /// Try a seller on this machine: `HOST=ADDRESS` (e.g. `seller.test=127.0.0.1:8402`) fetches the terms links
    /// `https://HOST/…` from `http://ADDRESS/…`. ADDRESS must be a loopback address; only links to HOST are
    /// fetched while it is set. Never taken from the configuration: name it on the command line.
    #[arg(long, global = true, value_name = "HOST=ADDRESS")]
    local_seller: Option<String>,
    /// Output JSON (for scripts) in place of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

/// How `terms pay` names a purchase.
const PURCHASE_KEY: &str = "The purchase key: a payment is recorded in the journal under a key made of the payer, \
the method, the URL and the body (or the `Idempotency-Key` header you send with -H). Paying the same request again \
re-sends the payment already made for it, the same bytes, and makes no new payment (\"re-sent the payment made at \
…; no new payment\"): a retry never pays twice. To buy again, pass --new: a fresh key, a new payment.";

#[derive(Subcommand, Debug)]
enum Command {
    /// Write a commented configuration, a policy template and a new key (or name an existing signer command).
    Init(init::InitArgs),
    /// Probe URL: show the offer, fetch and compare the terms, show the policy's verdict and the seller's discovery
    /// document (LCP §2). Signs nothing and needs no key: the payer is --account, else the configuration's signer.
    Check {
        #[command(flatten)]
        request: RequestArgs,
        /// The payer's address (`0x…`, on every EIP-155 network) to choose the option for; nothing is signed.
        #[arg(long)]
        account: Option<String>,
    },
    /// Request URL and pay the 402 it answers.
    #[command(after_help = PURCHASE_KEY)]
    Pay {
        #[command(flatten)]
        request: RequestArgs,
        /// Refuse a payment above this amount: atomic units (`10000`) or the asset's units (`0.01USDC`).
        #[arg(long)]
        max: Option<String>,
        /// Show what would be signed (payee, amount, validity, purchase key) and sign nothing.
        #[arg(long)]
        dry_run: bool,
        /// A new purchase, even where this request was paid before (a fresh purchase key); see below.
        #[arg(long)]
        new: bool,
    },
    /// The journal's payments, newest first.
    History {
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// The policy's budgets: spent, reserved and remaining now.
    Budget,
    /// The journal's record of a purchase, by its purchase key.
    Receipt {
        /// The purchase's key.
        key: String,
    },
    /// The payments waiting for a person's approval (the policy asked for one), oldest first, with their terms.
    Approvals,
    /// Approve a waiting payment by its id, once: the agent's next send of the same request pays it, once.
    Approve {
        /// The approval's id (`ap_…`, as `terms approvals` or the agent shows it).
        id: String,
    },
    /// Deny a waiting payment by its id, once: it is never paid, and the purchase is declined from then on.
    Deny {
        /// The approval's id.
        id: String,
    },
    /// Serve a local paying proxy: `http://127.0.0.1:8402/https://seller.example/path` forwards to the seller and
    /// pays a 402 as `pay` does (docs/operators.md).
    Gateway(gateway::GatewayArgs),
    /// Serve the operator's pages on 127.0.0.1: approvals, history, budgets, purchases (prints a link with a token).
    Console(console::ConsoleArgs),
    /// The journal itself.
    #[command(subcommand)]
    Journal(JournalCommand),
}

#[derive(Subcommand, Debug)]
enum JournalCommand {
    /// Compare every budget's running totals with the reservations they sum (reads every reservation). A budget
    /// that disagrees is listed and marked: no payment reserves from it and `terms budget` does not report it until
    /// `--repair`. Exit 6 (operator review) where one disagrees.
    Check {
        /// Recompute every budget's running totals from its reservations, and clear the marks.
        #[arg(long)]
        repair: bool,
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
        Err(e) => return fail(&Fail(exit::INTERNAL, e.to_string()), cli.json),
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
    if let Command::Init(args) = &cli.command {
        return init::run(cli, args);
    }
    let setup = setup::setup(cli)?;
    match &cli.command {
        Command::Init(_) => Ok(exit::OK),
        Command::Check { request, account } => check::run(&setup, request, account.as_deref(), cli.json).await,
        Command::Pay { request, max, dry_run, new } => {
            let how = pay::How { max: max.as_deref(), dry_run: *dry_run, new: *new };
            pay::run(&setup, request, how, cli.json).await
        }
        Command::History { limit } => history::run(&setup, *limit, cli.json).await,
        Command::Budget => budget::run(&setup, cli.json).await,
        Command::Receipt { key } => receipt::run(&setup, key, cli.json).await,
        Command::Approvals => approvals::list(&setup, cli.json).await,
        Command::Approve { id } => approvals::decide(&setup, id, true, cli.json).await,
        Command::Deny { id } => approvals::decide(&setup, id, false, cli.json).await,
        Command::Gateway(args) => gateway::run(setup, args).await,
        Command::Console(args) => console::run(&setup, args).await,
        Command::Journal(JournalCommand::Check { repair }) => journal::check(&setup, *repair, cli.json).await,
    }
}
