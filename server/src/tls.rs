//! HTTPS served by invex itself (`INVEX_TLS_CERT` / `INVEX_TLS_KEY`): rustls with TLS 1.3
//! only, as the interface specification promises for transport; a client offering only
//! TLS 1.2 or older fails the handshake. The certificate is re-read when its files change,
//! so a renewed certificate takes effect without a restart; a pair that does not load is
//! logged and the one in force stays.
//!
//! Without these settings invex speaks plain HTTP: the sandbox default, and in production
//! the setup behind a TLS-terminating proxy (docs/deploy.md).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use serde::{Deserialize, Serialize};

/// `[tls]` in the configuration file, or `INVEX_TLS_CERT` and `INVEX_TLS_KEY`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM file with the certificate chain, the server's certificate first.
    pub cert: PathBuf,
    /// PEM file with the private key (PKCS #8, PKCS #1 or SEC 1).
    pub key: PathBuf,
    /// How often the files are checked for a renewed certificate.
    #[serde(default = "default_recheck_ms")]
    pub recheck_ms: u64,
}

fn default_recheck_ms() -> u64 {
    10_000
}

impl TlsConfig {
    pub fn new(cert: PathBuf, key: PathBuf) -> TlsConfig {
        TlsConfig {
            cert,
            key,
            recheck_ms: default_recheck_ms(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read the certificate chain {path}: {reason}")]
    Cert { path: String, reason: String },
    #[error("cannot read the private key {path}: {reason}")]
    Key { path: String, reason: String },
    #[error("{0}")]
    Rustls(#[from] rustls::Error),
}

/// The TLS side of the listener: the acceptor and the certificate it presents.
#[derive(Clone)]
pub struct Tls {
    pub acceptor: tokio_rustls::TlsAcceptor,
    certs: Arc<Certificates>,
}

impl Tls {
    /// Load the pair and build a TLS 1.3-only server configuration around it.
    pub fn new(config: &TlsConfig) -> Result<Tls, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = load(config, &provider)?;
        let certs = Arc::new(Certificates {
            config: config.clone(),
            provider: provider.clone(),
            current: ArcSwap::from_pointee(key),
            stamp: std::sync::Mutex::new(stamp(config)),
        });
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])?
            .with_no_client_auth()
            .with_cert_resolver(certs.clone());
        // The listener speaks HTTP/1.1 only.
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(server)),
            certs,
        })
    }

    /// Re-read the files every `recheck_ms` while the listener lives (it holds the `Tls`).
    pub fn watch(&self) {
        let every = Duration::from_millis(self.certs.config.recheck_ms.max(100));
        tokio::spawn(recheck(Arc::downgrade(&self.certs), every));
    }
}

async fn recheck(certs: Weak<Certificates>, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(certs) = certs.upgrade() else { return };
        // Reading and parsing two small files: quick, but file I/O all the same.
        let outcome = tokio::task::spawn_blocking(move || certs.reload_if_changed()).await;
        match outcome {
            Ok(Ok(true)) => tracing::info!("TLS certificate reloaded"),
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "the renewed TLS certificate does not load; the previous one stays in force")
            }
            Err(e) => tracing::error!(error = %e, "the TLS certificate check failed"),
        }
    }
}

/// The pair in force, and what the files looked like when it was read.
#[derive(Debug)]
struct Certificates {
    config: TlsConfig,
    provider: Arc<CryptoProvider>,
    current: ArcSwap<CertifiedKey>,
    stamp: std::sync::Mutex<Option<Stamp>>,
}

/// Modification time and length of both files: a renewal changes at least one.
type Stamp = [(SystemTime, u64); 2];

fn stamp(config: &TlsConfig) -> Option<Stamp> {
    let one = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())))
    };
    Some([one(&config.cert)?, one(&config.key)?])
}

impl Certificates {
    fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let now = stamp(&self.config);
        {
            let mut seen = self
                .stamp
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if now.is_none() || *seen == now {
                return Ok(false);
            }
            // Recorded before loading: a bad pair is reported once, not at every check,
            // and the next change to the files is tried again.
            *seen = now;
        }
        let key = load(&self.config, &self.provider)?;
        self.current.store(Arc::new(key));
        Ok(true)
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

/// Read the chain and the key, and check that they belong together.
fn load(config: &TlsConfig, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let cert_err = |reason: String| TlsError::Cert {
        path: config.cert.display().to_string(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&config.cert)
        .map_err(|e| cert_err(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| cert_err(e.to_string()))?;
    if chain.is_empty() {
        return Err(cert_err("no certificate in the file".into()));
    }
    let key = PrivateKeyDer::from_pem_file(&config.key).map_err(|e| TlsError::Key {
        path: config.key.display().to_string(),
        reason: e.to_string(),
    })?;
    // Also refuses a key that is not the certificate's.
    Ok(CertifiedKey::from_der(chain, key, provider)?)
}
