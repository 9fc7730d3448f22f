//! What every subcommand stands on: the configuration and the flags, the journal, the wallet and the client.

use std::sync::Arc;

use terms::client::{Client, Outgoing};
use terms::config;
use terms::safety::journal::{Journal, JournalConfig, JournalTarget};
use terms::safety::policy::Policy;
use terms::safety::{Allowed, PolicyRefusal, Spend, SpendPolicy};
use terms::{Reason, U256, Wallet};

use crate::{Cli, Fail, RequestArgs};

/// What the configuration and the flags set.
pub(crate) struct Setup {
    pub(crate) config: config::Config,
    pub(crate) policy: Option<Arc<Policy>>,
    pub(crate) journal: JournalTarget,
}

pub(crate) fn setup(cli: &Cli) -> Result<Setup, Fail> {
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
pub(crate) fn wallet(config: &config::Config) -> Result<Arc<dyn Wallet>, Fail> {
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
pub(crate) async fn journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::open_journal(&setup.journal, JournalConfig::default()).await.map_err(|e| Fail(2, format!("journal: {e}")))
}

/// The journal to read back and write nothing (`history`, `budget`, `receipt`): an existing file opened read-only.
pub(crate) async fn read_journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::read_journal(&setup.journal, JournalConfig::default()).await.map_err(|e| Fail(2, format!("journal: {e}")))
}

pub(crate) async fn client(setup: &Setup, max: Option<&str>) -> Result<Client, Fail> {
    let journal = journal(setup).await?;
    let mut builder = Client::builder(WalletRef(wallet(&setup.config)?)).journal(journal);
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
    let Ok(spec) = std::env::var("TERMS_LOOPBACK") else { return Ok(builder) };
    let (host, addr) = spec.split_once('=').ok_or_else(|| Fail(2, "TERMS_LOOPBACK is host=address".into()))?;
    let addr = addr.parse().map_err(|_| Fail(2, "TERMS_LOOPBACK's address".into()))?;
    let fetch =
        terms::http::LoopbackFetch::new().and_then(|f| f.route(host, addr)).map_err(|e| Fail(2, e.to_string()))?;
    Ok(builder.fetch(fetch))
}

#[cfg(not(feature = "loopback"))]
fn route(builder: terms::client::ClientBuilder) -> Result<terms::client::ClientBuilder, Fail> {
    Ok(builder)
}

pub(crate) fn outgoing(args: &RequestArgs) -> Result<Outgoing, Fail> {
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
