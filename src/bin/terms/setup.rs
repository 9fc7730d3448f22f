//! What every subcommand stands on: the configuration and the flags, the journal, the wallet and the client.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use terms::client::{Client, ClientBuilder, ClientError, Outgoing};
use terms::config;
use terms::safety::journal::{Journal, JournalConfig, JournalTarget};
use terms::safety::policy::Policy;
use terms::safety::{Allowed, PolicyRefusal, Spend, SpendPolicy};
use terms::{Options, Reason, Wallet};

use crate::units::{Assets, Max};
use crate::{Cli, Fail, RequestArgs, exit};

/// What the configuration and the flags set.
pub(crate) struct Setup {
    pub(crate) config: config::Config,
    pub(crate) policy: Option<Arc<Policy>>,
    pub(crate) journal: JournalTarget,
    /// The assets whose symbol and decimals are known: the policy's, then the built-in table.
    pub(crate) assets: Assets,
    /// `--local-seller`: the host whose `https://` links go to a seller on this machine, and its address.
    pub(crate) local: Option<(String, std::net::SocketAddr)>,
}

/// The configuration file: `--config` or `$TERMS_CONFIG` must name one that exists (a typo is an error, never a
/// new empty file); only the default path is created, on first use, and that is said on stderr.
fn config_path(cli: &Cli) -> Result<PathBuf, Fail> {
    let named = cli
        .config
        .clone()
        .map(|p| (p, "--config"))
        .or_else(|| std::env::var_os("TERMS_CONFIG").map(|p| (PathBuf::from(p), "TERMS_CONFIG")));
    if let Some((path, by)) = named {
        if !path.is_file() {
            return Err(Fail(
                exit::USAGE,
                format!("{by} {}: no such file (`terms init --config {}` writes one)", path.display(), path.display()),
            ));
        }
        return Ok(path);
    }
    let path = config::default_path().ok_or_else(|| Fail(exit::USAGE, "no configuration path: set HOME".into()))?;
    if !path.exists() {
        config::load(&path).map_err(|e| Fail(exit::USAGE, e.0))?;
        eprintln!("terms: wrote a new configuration at {} (`terms init` writes a commented one)", path.display());
    }
    Ok(path)
}

pub(crate) fn setup(cli: &Cli) -> Result<Setup, Fail> {
    let path = config_path(cli)?;
    let config = config::read(&path).map_err(|e| Fail(exit::USAGE, e.0))?;
    if let Some(p) = &cli.policy
        && !p.is_file()
    {
        return Err(Fail(exit::USAGE, format!("--policy {}: no such file", p.display())));
    }
    let policy_path = cli.policy.clone().or_else(|| config.policy.clone());
    let policy = match policy_path {
        None => None,
        Some(p) => Some(Arc::new(Policy::load(&p).map_err(|e| Fail(exit::USAGE, e.to_string()))?)),
    };
    let journal = match &cli.journal {
        Some(flag) => JournalTarget::parse(flag).map_err(|e| Fail(exit::USAGE, format!("--journal: {e}")))?,
        None => config.journal.clone().unwrap_or_else(|| JournalTarget::Sqlite(path.with_file_name("journal.db"))),
    };
    let local = cli.local_seller.as_deref().map(local_seller).transpose()?;
    let assets = Assets::of(policy.as_deref());
    Ok(Setup { config, policy, journal, assets, local })
}

/// `--local-seller HOST=ADDRESS`: the address must be a loopback one (this machine); anything else is refused.
pub(crate) fn local_seller(spec: &str) -> Result<(String, std::net::SocketAddr), Fail> {
    terms::http::LoopbackFetch::route_spec(spec).map_err(|e| Fail(exit::USAGE, format!("--local-seller {e}")))
}

/// The wallet: the external signer command, else the key file, else the key's environment variable. A key file
/// other users may read is used, with a warning.
pub(crate) fn wallet(config: &config::Config) -> Result<Arc<dyn Wallet>, Fail> {
    if let Some(file) = &config.key_file {
        warn_if_loose(file);
    }
    config.wallet().map_err(|e| Fail(exit::USAGE, e.0))
}

/// Warns on stderr where the key file's mode lets the group or others read or write it.
fn warn_if_loose(file: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(file)
        && meta.permissions().mode() & 0o077 != 0
    {
        eprintln!(
            "terms: warning: the key file {} has mode {:o}: other users may read it (chmod 600 {})",
            file.display(),
            meta.permissions().mode() & 0o777,
            file.display()
        );
    }
}

/// A payment cap from `--max`, before the policy's own checks.
#[derive(Debug)]
struct Capped {
    max: Max,
    assets: Assets,
    inner: Option<Arc<Policy>>,
}

impl SpendPolicy for Capped {
    fn check(&self, spend: &Spend<'_>) -> Result<Allowed, PolicyRefusal> {
        let q = spend.quote;
        let cap = self
            .max
            .atomic(&self.assets, &q.network, &q.asset)
            .map_err(|why| PolicyRefusal::new(Reason::AmountAboveCap, format!("--max {}: {why}", self.max.text)))?;
        if q.amount > cap {
            let shown = self.assets.show(&q.network, &q.asset, q.amount);
            return Err(PolicyRefusal::new(
                Reason::AmountAboveCap,
                format!("{shown} is above --max {}", self.max.text),
            ));
        }
        self.inner.as_ref().map_or_else(|| Ok(Allowed::new(Vec::new())), |p| p.check(spend))
    }
}

/// The journal the configuration or `--journal` names, either backend, to pay with (an empty file refused). A new
/// purchase whose nonce the payer already used (a seller's static ATR) is refused before it is signed.
pub(crate) async fn journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::open_journal(&setup.journal, JournalConfig { one_nonce_per_payer: true, ..JournalConfig::default() })
        .await
        .map_err(|e| Fail(exit::USAGE, format!("journal: {e}")))
}

/// The journal to read back and write nothing (`history`, `budget`, `receipt`): an existing file opened read-only.
pub(crate) async fn read_journal(setup: &Setup) -> Result<Arc<dyn Journal>, Fail> {
    config::read_journal(&setup.journal, JournalConfig::default())
        .await
        .map_err(|e| Fail(exit::USAGE, format!("journal: {e}")))
}

/// The client paying from `wallet`, with the policy (and `--max`), the journal where given, the local seller's
/// route, and what the seller's discovery document says of signed acceptance (`acceptance`, for the policy).
pub(crate) async fn client(
    setup: &Setup,
    wallet: Arc<dyn Wallet>,
    max: Option<&Max>,
    journal: Option<Arc<dyn Journal>>,
    acceptance: Option<bool>,
) -> Result<Client, Fail> {
    let mut builder = builder(setup, wallet, max, journal, acceptance);
    if let Some((host, addr)) = &setup.local {
        let fetch = terms::http::LoopbackFetch::new()
            .and_then(|f| f.route(host.clone(), *addr))
            .map_err(|e| Fail(exit::USAGE, e.to_string()))?;
        builder = builder.fetch(fetch);
    }
    builder.build().map_err(|e| Fail(exit::INTERNAL, e.to_string()))
}

/// The client's builder with the wallet, the policy (and `--max`), the journal and its approval queue where given,
/// and the acceptance the seller states; the fetch and the transport are the caller's to set.
pub(crate) fn builder(
    setup: &Setup,
    wallet: Arc<dyn Wallet>,
    max: Option<&Max>,
    journal: Option<Arc<dyn Journal>>,
    acceptance: Option<bool>,
) -> ClientBuilder {
    let options = acceptance.map_or_else(Options::new, |a| Options::new().acceptance_required(a));
    let mut builder = Client::builder(WalletRef(wallet)).options(options);
    if let Some(journal) = journal {
        builder = builder.journal(journal.clone()).approvals(journal);
    }
    let policy: Option<Arc<dyn SpendPolicy>> = match max {
        Some(m) => Some(Arc::new(Capped { max: m.clone(), assets: setup.assets.clone(), inner: setup.policy.clone() })),
        None => setup.policy.clone().map(|p| p as Arc<dyn SpendPolicy>),
    };
    if let Some(p) = policy {
        builder = builder.policy(p);
    }
    builder
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

/// The request of `args`; a URL that is not an absolute `http`/`https` URL is a usage error (nothing is sent).
pub(crate) fn outgoing(args: &RequestArgs) -> Result<Outgoing, Fail> {
    match url::Url::parse(&args.url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
        Ok(u) => return Err(Fail(exit::USAGE, format!("{}: not an http or https URL ({})", args.url, u.scheme()))),
        Err(e) => return Err(Fail(exit::USAGE, format!("{}: not a URL ({e}); nothing was sent", args.url))),
    }
    let mut request = Outgoing::new(args.method.to_ascii_uppercase(), args.url.clone());
    for header in &args.headers {
        let (name, value) =
            header.split_once(':').ok_or_else(|| Fail(exit::USAGE, format!("-H {header}: not `Name: value`")))?;
        request = request.header(name.trim(), value.trim());
    }
    if let Some(data) = &args.data {
        let body = match data.strip_prefix('@') {
            Some(file) => std::fs::read(file).map_err(|e| Fail(exit::USAGE, format!("-d @{file}: {e}")))?,
            None => data.as_bytes().to_vec(),
        };
        request = request.body(body);
    }
    Ok(request)
}

/// A client error (nothing was paid) as a failure: a request that cannot be sent is a usage error; a seller that
/// did not answer the unpaid request may be asked again.
pub(crate) fn not_sent(e: &ClientError) -> Fail {
    match e {
        ClientError::Transport(_) => Fail(exit::UNREACHED, format!("{e}; nothing was paid, so trying again is safe")),
        _ => Fail(exit::USAGE, e.to_string()),
    }
}
