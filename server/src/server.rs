//! Starting and stopping the server: storage, the bootstrap key, rule packs, the watcher,
//! the listener, and a graceful shutdown that lets in-flight requests finish.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use invex_engine::registry::{Registry, WatchGuard};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::auth::{keys, Authenticator, Role};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::state::AppState;
use crate::store::{KeyRecord, Store, StoreError, OPERATOR_TENANT_ID};
use crate::usage::Meter;
use crate::vat::service::VatService;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("storage: {0}")]
    Store(#[from] StoreError),
    #[error(
        "rule packs in {dir} did not load or did not pass the gate (locks, fixtures):\n{errors}"
    )]
    Rulepacks { dir: String, errors: String },
    #[error("INVEX_BOOTSTRAP_KEY must be at least {min} characters long")]
    ShortBootstrapKey { min: usize },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("configuration: {0}")]
    Config(#[from] crate::settings::ConfigError),
    #[error("{0}")]
    Task(String),
    #[error(transparent)]
    Sftp(#[from] crate::sftp::listener::SftpError),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
}

/// A running server.
pub struct Running {
    pub addr: SocketAddr,
    /// The bootstrap admin key when this start created it (empty database).
    pub bootstrap_key: Option<String>,
    /// Whether that key was generated here (and must be shown once) rather than taken from
    /// the configuration (whose owner knows it: it is never shown).
    pub bootstrap_key_generated: bool,
    /// The path of the bootstrap tenant's first admin's one-time sign-in link
    /// (`/console/links/...`), when this start created it (empty database).
    pub first_admin_link: Option<String>,
    pub state: AppState,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    _watch: Option<WatchGuard>,
    /// The webhook delivery worker, when this instance runs one.
    webhooks: Option<crate::webhooks::WorkerHandle>,
    /// The batch worker, when this instance runs one.
    batches: Option<crate::batches::worker::BatchWorker>,
    /// The SFTP server, when on.
    pub sftp: Option<crate::sftp::SftpServer>,
    /// The instance's report and rule-pack synchronisation (`fleet`), and its stop.
    fleet: Option<(
        tokio::sync::watch::Sender<bool>,
        tokio::task::JoinHandle<()>,
    )>,
}

impl Running {
    /// Stop accepting connections, let in-flight requests finish, then return.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let result = (&mut self.task)
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        self.finish().await;
        result
    }

    /// Wait until the server stops (after a shutdown signal).
    pub async fn wait(&mut self) -> std::io::Result<()> {
        let result = (&mut self.task)
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        self.finish().await;
        result
    }

    /// After the last request: write the pending usage counts, close the database.
    async fn finish(&mut self) {
        if let Some(sftp) = &self.sftp {
            sftp.stop();
        }
        if let Some(worker) = &self.batches {
            worker.stop().await;
        }
        if let Some(worker) = &self.webhooks {
            worker.stop().await;
        }
        if let Some((stop, task)) = self.fleet.take() {
            let _ = stop.send(true);
            let _ = task.await;
        }
        if let Err(e) = self.state.meter.flush().await {
            tracing::error!(error = %e, "usage counts of the last second could not be written");
        }
        self.state.store.close().await;
    }
}

/// Start with `config`; `registry` reuses already compiled rule packs (tests share them).
pub async fn start(config: Config, registry: Option<Arc<Registry>>) -> Result<Running, StartError> {
    // Checked before anything is opened: a wrong [smtp] stops the start with its setting named.
    let mailer = crate::mail::Mailer::from_config(&config.smtp, config.mode)?.map(Arc::new);
    // A certificate that does not load stops the start, naming the file.
    let tls = config.tls.as_ref().map(crate::tls::Tls::new).transpose()?;
    let store = Store::connect(&config.database_url).await?;
    let bootstrap_key = bootstrap(&store, &config).await?;
    let generated = config.bootstrap_key.is_none();
    let registry = match registry {
        Some(r) => r,
        None => {
            let source = config.rulepack_source();
            let described = source.describe();
            let loaded = tokio::task::spawn_blocking(move || {
                let dir = source.dir().map_err(|e| e.to_string())?;
                Registry::open(dir).map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| StartError::Task(e.to_string()))?;
            Arc::new(loaded.map_err(|errors| StartError::Rulepacks {
                dir: described,
                errors,
            })?)
        }
    };
    // The embedded packs cannot change under a running binary: only a directory is watched.
    let watch = if config.watch_rulepacks && config.rulepacks.is_some() {
        match registry
            .watch_with_debounce(std::time::Duration::from_millis(config.rulepacks_quiet_ms))
        {
            Ok(guard) => Some(guard),
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch the rule-pack directory; reload through the API");
                None
            }
        }
    } else {
        None
    };
    let listener = TcpListener::bind(config.bind)
        .await
        .map_err(|source| StartError::Bind {
            addr: config.bind,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: config.bind,
        source,
    })?;
    let auth = Arc::new(Authenticator::new(store.clone(), &config.limits));
    let vat = Arc::new(
        VatService::from_config(
            &config.vat,
            config.mode,
            Duration::from_millis(config.register_timeout_ms),
            &config.vies_url,
            &config.company,
        )
        .map_err(|e| StartError::Task(format!("VAT register clients: {e}")))?,
    );
    let meter = Arc::new(Meter::new(store.clone()));
    let delivery = Arc::new(crate::sending::worker::Worker::new(
        store.clone(),
        &config.sending,
    ));
    let outbox_wake = Arc::new(tokio::sync::Notify::new());
    let company = crate::company::Registers::new(
        &config.company,
        config.mode,
        Duration::from_millis(config.register_timeout_ms),
    )
    .map_err(|e| StartError::Task(e.to_string()))?;
    let peppol = Arc::new(
        crate::peppol::Lookup::new(
            &config.peppol,
            config.mode,
            Duration::from_millis(config.register_timeout_ms),
        )
        .map_err(|e| StartError::Task(e.to_string()))?,
    );
    let config_admission = config.admission.clone();
    let accounts = Arc::new(crate::people::Accounts::new(
        store.clone(),
        crate::people::SessionPolicy::default(),
    ));
    // On the first start, the bootstrap tenant's first admin gets a one-time sign-in link,
    // as the bootstrap key is created then.
    let first_admin_link = if bootstrap_key.is_some() {
        accounts
            .first_admin(OPERATOR_TENANT_ID)
            .await
            .map_err(|e| StartError::Task(e.to_string()))?
            .map(|i| format!("/console/links/{}", i.token))
    } else {
        None
    };
    let sso = Arc::new(
        crate::sso::SingleSignOn::new(store.clone(), config.mode, &config.sso)
            .map_err(|e| StartError::Task(e.to_string()))?,
    );
    let state = AppState {
        sso,
        config: Arc::new(config),
        store,
        registry,
        rule_catalogue: Arc::default(),
        accounts: accounts.clone(),
        mailer,
        auth: auth.clone(),
        metrics: Arc::new(Metrics::new()?),
        watching: watch.is_some(),
        vat,
        meter: meter.clone(),
        outbox_wake: outbox_wake.clone(),
        delivery: delivery.clone(),
        company: Arc::new(company),
        peppol,
        admission: Arc::new(
            crate::admission::Admission::new(&config_admission)
                .map_err(|e| StartError::Task(e.to_string()))?,
        ),
        connections: Arc::default(),
        sftp: Arc::default(),
        instance: Arc::new(crate::fleet::Instance::new()),
    };
    let app = crate::routes::router(state.clone());
    let (tx, rx) = oneshot::channel::<()>();
    let connections = state.config.connections.clone();
    let stats = state.connections.clone();
    // Before HTTP answers: once /ready says yes, SFTP takes connections too.
    let sftp = crate::sftp::start(&state).await?;
    if let Some(s) = &sftp {
        let _ = state.sftp.set((s.addr, s.host_key_fingerprint.clone()));
    }
    let task = tokio::spawn(crate::listener::serve(
        listener,
        app,
        connections,
        stats,
        tls,
        async move {
            let _ = rx.await;
        },
    ));
    tokio::spawn(prune_rate_limits(Arc::downgrade(&auth)));
    if state.config.sending.worker {
        tokio::spawn(crate::sending::worker::run(
            Arc::downgrade(&delivery),
            Duration::from_millis(state.config.sending.poll_ms.max(10)),
            outbox_wake,
        ));
    }
    tokio::spawn(crate::usage::flush_periodically(
        Arc::downgrade(&meter),
        Duration::from_secs(1),
    ));
    let webhooks = crate::webhooks::worker::spawn(
        state.store.clone(),
        state.config.mode,
        &state.config.webhooks,
        state.metrics.clone(),
    )
    .map_err(|e| StartError::Task(e.to_string()))?;
    let batches = state
        .config
        .batches
        .worker
        .then(|| crate::batches::worker::spawn(&state));
    let (fleet_stop, stop) = tokio::sync::watch::channel(false);
    let fleet = crate::fleet::spawn(
        (*state.instance).clone(),
        state.store.clone(),
        state.registry.clone(),
        Duration::from_millis(state.config.instance_poll_ms.max(50)),
        stop,
    );
    tracing::info!(%addr, mode = state.config.mode.as_str(), instance = %state.instance.id, "invex listening");
    if let Some(mailer) = &state.mailer {
        tracing::info!(smtp = mailer.server(), from = %mailer.from(), "console invitations are mailed");
    }
    Ok(Running {
        addr,
        bootstrap_key_generated: bootstrap_key.is_some() && generated,
        bootstrap_key,
        first_admin_link,
        state,
        shutdown: Some(tx),
        task,
        _watch: watch,
        webhooks,
        batches,
        sftp,
        fleet: Some((fleet_stop, fleet)),
    })
}

/// On an empty database: the operator tenant and its first admin key.
async fn bootstrap(store: &Store, config: &Config) -> Result<Option<String>, StartError> {
    let key = match &config.bootstrap_key {
        Some(k) if k.len() < keys::MIN_CONFIGURED_KEY_LEN => {
            return Err(StartError::ShortBootstrapKey {
                min: keys::MIN_CONFIGURED_KEY_LEN,
            })
        }
        Some(k) => k.clone(),
        None => keys::generate(),
    };
    let record = KeyRecord {
        id: crate::ids::new_id("key"),
        tenant_id: OPERATOR_TENANT_ID.to_string(),
        name: "bootstrap admin key".into(),
        role: Role::Admin.as_str().to_string(),
        prefix: keys::lookup_prefix(&key),
        hash: keys::hash(&key),
        created_at: crate::clock::now(),
        revoked_at: None,
    };
    Ok(store.bootstrap(&record).await?.then_some(key))
}

async fn prune_rate_limits(auth: std::sync::Weak<Authenticator>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        match auth.upgrade() {
            Some(a) => a.prune(),
            None => return,
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
