//! What every handler gets: configuration, storage, rule packs, authentication, metrics.

use std::sync::Arc;

use invex_engine::registry::Registry;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::store::Store;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    pub registry: Arc<Registry>,
    /// The error catalogue of the packs in force, rebuilt after a reload on first use.
    pub rule_catalogue: Arc<invex_engine::catalogue::CatalogueCache>,
    pub auth: Arc<Authenticator>,
    /// Console accounts and sessions.
    pub accounts: Arc<crate::people::Accounts>,
    /// Console single sign-on through tenants' OpenID providers.
    pub sso: Arc<crate::sso::SingleSignOn>,
    /// The SMTP sender of console invitations, when `[smtp]` is configured.
    pub mailer: Option<Arc<crate::mail::Mailer>>,
    pub metrics: Arc<Metrics>,
    /// Whether the rule-pack directory is watched for changes.
    pub watching: bool,
    /// VAT verification: local checks, cache, circuit breakers, the register.
    pub vat: Arc<crate::vat::service::VatService>,
    /// Wakes the delivery worker when an invoice is queued.
    pub outbox_wake: Arc<tokio::sync::Notify>,
    /// The delivery worker (the background task holds only a weak reference).
    pub delivery: Arc<crate::sending::worker::Worker>,
    /// Metered calls per tenant and month.
    pub meter: Arc<crate::usage::Meter>,
    /// Slovak company registers (clients and caches in production, built-in data in the sandbox).
    pub company: Arc<crate::company::Registers>,
    /// Peppol participant lookups (SML/SMP in production, the sandbox directory otherwise).
    pub peppol: Arc<crate::peppol::Lookup>,
    /// The worker pool and in-flight budget every heavy request goes through.
    pub admission: Arc<crate::admission::Admission>,
    /// Open, evicted and refused connections (the listener counts them).
    pub connections: Arc<crate::listener::ConnectionStats>,
    /// The SFTP server's address and host key fingerprint, once it listens.
    pub sftp: Arc<std::sync::OnceLock<(std::net::SocketAddr, String)>>,
    /// This process among the instances sharing the database.
    pub instance: Arc<crate::fleet::Instance>,
}

impl AppState {
    /// `"sandbox"` or `"production"`, as results say it.
    pub fn environment(&self) -> &'static str {
        self.config.mode.as_str()
    }
}
