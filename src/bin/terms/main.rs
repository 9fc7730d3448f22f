//! `terms`: pay a 402 from the command line, with the gate's terms check, a spend policy and a journal.
#![forbid(unsafe_code)]

mod discovery;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use terms::client::{Client, Outcome, Outgoing, Plan, Verdict};
use terms::config;
use terms::safety::journal::{HistoryFilter, Journal, JournalConfig, JournalTarget};
use terms::safety::policy::Policy;
use terms::safety::recovery::Action;
use terms::safety::{Allowed, PolicyRefusal, Spend, SpendPolicy};
use terms::{Options, Reason, U256, Wallet};

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
    /// Probe URL: show the offer, fetch and compare the terms, show the policy's verdict and the seller's discovery
    /// document (LCP §2). Signs nothing.
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

/// What the configuration and the flags set.
struct Setup {
    config: config::Config,
    policy: Option<Arc<Policy>>,
    journal: JournalTarget,
}

fn setup(cli: &Cli) -> Result<Setup, Fail> {
    let path =
        cli.config.clone().or_else(config::default_path).ok_or_else(|| Fail(2, "no configuration path".into()))?;
    let config = config::load(&path).map_err(|e| Fail(2, e.0))?;
    let policy_path = cli.policy.clone().or_else(|| config.policy.clone());
    let policy = match policy_path {
        None => None,
        Some(p) => Some(Arc::new(Policy::load(&p).map_err(|e| Fail(2, e.to_string()))?)),
    };
    let journal = match &cli.journal {
        Some(flag) => JournalTarget::parse(flag).map_err(|e| Fail(2, format!("--journal: {e}")))?,
        None => config.journal.clone().unwrap_or_else(|| JournalTarget::Sqlite(path.with_file_name("journal.db"))),
    };
    Ok(Setup { config, policy, journal })
}

/// The wallet: the external signer command, else the key file, else the key's environment variable.
fn wallet(config: &config::Config) -> Result<Arc<dyn Wallet>, Fail> {
    config.wallet().map_err(|e| Fail(2, e.0))
}

/// A payment cap from `--max`, before the policy's own checks.
#[derive(Debug)]
struct Max {
    max: U256,
    inner: Option<Arc<Policy>>,
}

impl SpendPolicy for Max {
    fn check(&self, spend: &Spend<'_>) -> Result<Allowed, PolicyRefusal> {
        if spend.quote.amount > self.max {
            return Err(PolicyRefusal::new(
                Reason::AmountAboveCap,
                format!("{} is above --max {}", spend.quote.amount, self.max),
            ));
        }
        self.inner.as_ref().map_or_else(|| Ok(Allowed::new(Vec::new())), |p| p.check(spend))
    }
}

/// The journal the configuration or `--journal` names, either backend, to pay with (an empty file refused).
async fn journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::open_journal(&setup.journal, JournalConfig::default()).await.map_err(|e| Fail(2, format!("journal: {e}")))
}

/// The journal to read back and write nothing (`history`, `budget`, `receipt`): an existing file opened read-only.
async fn read_journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::read_journal(&setup.journal, JournalConfig::default()).await.map_err(|e| Fail(2, format!("journal: {e}")))
}

/// The client, with `--max` and the policy, and what the seller's discovery document says of signed acceptance.
async fn client(setup: &Setup, max: Option<&str>, acceptance: Option<bool>) -> Result<Client, Fail> {
    let journal = journal(setup).await?;
    let options = acceptance.map_or_else(Options::new, |a| Options::new().acceptance_required(a));
    let mut builder = Client::builder(WalletRef(wallet(&setup.config)?)).options(options).journal(journal);
    let policy: Option<Arc<dyn SpendPolicy>> = match max {
        Some(m) => {
            let max = m.parse::<U256>().map_err(|_| Fail(2, format!("--max {m} is not an amount in atomic units")))?;
            Some(Arc::new(Max { max, inner: setup.policy.clone() }))
        }
        None => setup.policy.clone().map(|p| p as Arc<dyn SpendPolicy>),
    };
    if let Some(p) = policy {
        builder = builder.policy(p);
    }
    builder = route(builder)?;
    builder.build().map_err(|e| Fail(1, e.to_string()))
}

/// The wallet behind an `Arc`.
#[derive(Debug)]
struct WalletRef(Arc<dyn Wallet>);

impl Wallet for WalletRef {
    fn on(&self, network: &str) -> Option<Arc<dyn terms::Signer>> {
        self.0.on(network)
    }
    fn any(&self) -> Option<Arc<dyn terms::Signer>> {
        self.0.any()
    }
}

/// Test builds (`loopback`): `TERMS_LOOPBACK=host=127.0.0.1:port` sends the terms' `https://host/` links to a
/// stand-in seller on loopback. Release builds have no such route.
#[cfg(feature = "loopback")]
fn route(builder: terms::client::ClientBuilder) -> Result<terms::client::ClientBuilder, Fail> {
    let Some((host, addr)) = loopback_route()? else { return Ok(builder) };
    let fetch =
        terms::http::LoopbackFetch::new().and_then(|f| f.route(host, addr)).map_err(|e| Fail(2, e.to_string()))?;
    Ok(builder.fetch(fetch))
}

/// `TERMS_LOOPBACK`'s host and address, where it is set.
#[cfg(feature = "loopback")]
fn loopback_route() -> Result<Option<(String, std::net::SocketAddr)>, Fail> {
    let Ok(spec) = std::env::var("TERMS_LOOPBACK") else { return Ok(None) };
    let (host, addr) = spec.split_once('=').ok_or_else(|| Fail(2, "TERMS_LOOPBACK is host=address".into()))?;
    let addr = addr.parse().map_err(|_| Fail(2, "TERMS_LOOPBACK's address".into()))?;
    Ok(Some((host.to_owned(), addr)))
}

#[cfg(not(feature = "loopback"))]
fn route(builder: terms::client::ClientBuilder) -> Result<terms::client::ClientBuilder, Fail> {
    Ok(builder)
}

fn outgoing(args: &RequestArgs) -> Result<Outgoing, Fail> {
    let mut request = Outgoing::new(args.method.to_ascii_uppercase(), args.url.clone());
    for header in &args.headers {
        let (name, value) = header.split_once(':').ok_or_else(|| Fail(2, format!("-H {header}: not `Name: value`")))?;
        request = request.header(name.trim(), value.trim());
    }
    if let Some(data) = &args.data {
        let body = match data.strip_prefix('@') {
            Some(file) => std::fs::read(file).map_err(|e| Fail(2, format!("-d @{file}: {e}")))?,
            None => data.as_bytes().to_vec(),
        };
        request = request.body(body);
    }
    Ok(request)
}

async fn run(cli: &Cli) -> Result<u8, Fail> {
    let setup = setup(cli)?;
    match &cli.command {
        Command::Check(args) => discovery::check(&setup, args, cli.json).await,
        Command::Pay { request, max, dry_run } => {
            let acceptance = discovery::for_pay(&setup, &request.url).await;
            let client = client(&setup, max.as_deref(), acceptance).await?;
            if *dry_run {
                let plan = client.probe(outgoing(request)?).await.map_err(|e| Fail(3, e.to_string()))?;
                return Ok(print_plan(&plan, cli.json));
            }
            if setup.policy.is_none() {
                let only = if max.is_some() { ", only --max" } else { "" };
                eprintln!(
                    "terms: no spend policy limits this payment{only} (name one with `policy` in the configuration, \
                     or --policy)"
                );
            }
            eprintln!("terms: {} {}", request.method.to_ascii_uppercase(), request.url);
            let outcome = client.send(outgoing(request)?).await.map_err(|e| Fail(3, e.to_string()))?;
            Ok(print_outcome(&outcome, cli.json))
        }
        Command::History { limit } => {
            let journal = read_journal(&setup).await?;
            let records =
                journal.history(&HistoryFilter::new().limit(*limit)).await.map_err(|e| Fail(1, e.to_string()))?;
            if cli.json {
                println!("{}", serde_json::to_string(&records).unwrap_or_default());
            } else if records.is_empty() {
                println!("no payments");
            }
            for r in records.iter().filter(|_| !cli.json) {
                let url = r.purchase.as_ref().and_then(|p| p.get("url")).and_then(Value::as_str).unwrap_or("-");
                let amount = r.quote.get("amount").and_then(Value::as_str).unwrap_or("?");
                println!("{}  {:<9} {:>12} {}  {}  {}", r.created_at, r.payment_state, amount, r.pairing, url, r.key);
            }
            Ok(0)
        }
        Command::Budget => budget(&setup, cli.json).await,
        Command::Receipt { key } => {
            let journal = read_journal(&setup).await?;
            let record = journal.record(key).await.map_err(|e| Fail(1, e.to_string()))?;
            let Some(r) = record else { return Err(Fail(3, format!("no purchase {key} in the journal"))) };
            if cli.json {
                println!("{}", serde_json::to_string(&r).unwrap_or_default());
            } else {
                println!(
                    "purchase  {}\npairing   {}\npayer     {}\nH         {}",
                    r.key,
                    r.pairing,
                    r.account,
                    r.h.to_hex()
                );
                println!("payment   {}\nexecution {}\nretry     {}", r.payment_state, r.execution, r.retry);
                println!("answer    {}", r.answer.map_or_else(|| "-".to_owned(), |a| a.to_string()));
            }
            Ok(0)
        }
    }
}

async fn budget(setup: &Setup, json: bool) -> Result<u8, Fail> {
    let Some(policy) = &setup.policy else {
        return Err(Fail(2, "no policy: set one in the configuration or --policy".into()));
    };
    let journal = read_journal(setup).await?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut rows = Vec::new();
    for b in &policy.rules().budgets {
        let limit = b.limit.parse::<U256>().unwrap_or(U256::ZERO);
        let used = journal
            .budget(&b.name, "", &b.asset, b.window.seconds(), limit, now)
            .await
            .map_err(|e| Fail(1, e.to_string()))?;
        rows.push(json!({
            "budget": b.name, "asset": b.asset, "window": b.window.seconds(), "limit": b.limit,
            "spent": used.spent.to_string(), "reserved": used.reserved.to_string(), "remaining": used.remaining.to_string(),
        }));
        if !json {
            println!(
                "{}  {}  limit {}  spent {}  reserved {}  remaining {}",
                b.name, b.asset, b.limit, used.spent, used.reserved, used.remaining
            );
        }
    }
    if json {
        println!("{}", Value::Array(rows));
    }
    Ok(0)
}

/// The exit code of a plan: 3 where it is declined or refused, else 0.
fn plan_code(plan: &Plan) -> u8 {
    match (&plan.declined, &plan.policy) {
        (Some(_), _) | (_, Verdict::Refused { .. }) => 3,
        _ => 0,
    }
}

fn print_plan(plan: &Plan, json: bool) -> u8 {
    let code = plan_code(plan);
    if json {
        println!("{}", serde_json::to_string(plan).unwrap_or_default());
        return code;
    }
    println!("status    {}", plan.status);
    if let Some(p) = &plan.pairing {
        println!("pairing   {p}");
    }
    if let Some(a) = &plan.account {
        println!("payer     {a}");
    }
    if let Some(q) = &plan.quote {
        println!("pays      {} of {} on {} to {}", q.amount, q.asset, q.network, q.payee);
    }
    if let (Some(h), Some(n)) = (&plan.h, plan.atr_bytes) {
        println!("terms     {n} bytes, SHA-256 {} = the offer's H", h.to_hex());
    }
    match &plan.policy {
        Verdict::NoPolicy => println!("policy    none"),
        Verdict::Allowed { needs_approval } => {
            println!("policy    allowed{}", if *needs_approval { " (needs approval)" } else { "" });
        }
        Verdict::Refused { code, why } => println!("policy    refused: {code} ({why})"),
        _ => {}
    }
    if let Some(d) = &plan.declined {
        println!(
            "declined  {}: {}{}",
            d.code,
            d.detail,
            d.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        );
    }
    println!("signed    nothing");
    code
}

fn exit_code(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::ToApprove(_) | Outcome::ApproveSpend(_) => 8,
        _ => match outcome.recovery().map(|r| r.action()) {
            None => 0,
            Some(Action::DoNotRetry) => 3,
            Some(Action::ResendSamePayment) => 4,
            Some(Action::QueryFirst) => 5,
            Some(Action::RetryAfterPayment | Action::RetryAfterQuotaReset | Action::RefreshCredential) => 7,
            Some(_) => 6,
        },
    }
}

fn print_outcome(outcome: &Outcome, json: bool) -> u8 {
    let code = exit_code(outcome);
    if json {
        let mut value = serde_json::to_value(outcome).unwrap_or(Value::Null);
        if let (Some(reply), Some(map)) = (outcome.reply(), value.as_object_mut()) {
            map.insert("body".into(), Value::String(String::from_utf8_lossy(&reply.body).into_owned()));
        }
        println!("{value}");
        return code;
    }
    if let Some(paid) = outcome.paid() {
        eprintln!(
            "terms: paid with {} as {} ({} send{})",
            paid.pairing,
            paid.account,
            paid.sends,
            if paid.sends == 1 { "" } else { "s" }
        );
        eprintln!("terms: purchase {}", paid.key);
    }
    match outcome {
        Outcome::Answered(r) => {
            eprintln!("terms: HTTP {}", r.status);
            if let Some(job) = r.paid.as_ref().and_then(|p| p.job.as_deref()) {
                eprintln!("terms: job {job} (execution queued)");
            }
            print!("{}", String::from_utf8_lossy(&r.body));
        }
        Outcome::Lost(l) => eprintln!("terms: no answer: {}", l.cause),
        Outcome::Refused(r) => {
            let cause = r.declined.cause.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
            eprintln!("terms: declined {}: {}{cause}", r.declined.code, r.declined.detail);
        }
        Outcome::ToApprove(_) => eprintln!("terms: an agreement payment needs approval first; nothing signed"),
        Outcome::ApproveSpend(_) => eprintln!("terms: the payment is above the approval threshold; nothing signed"),
        _ => {}
    }
    if let Some(r) = outcome.recovery() {
        eprintln!("terms: recovery {r}");
    }
    code
}
