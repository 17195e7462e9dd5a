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
    pub auth: Arc<Authenticator>,
    pub metrics: Arc<Metrics>,
    /// Whether the rule-pack directory is watched for changes.
    pub watching: bool,
    /// VIES in production; None in the sandbox (the built-in register answers).
    pub vies: Option<crate::vat::vies::ViesClient>,
    /// Peppol participant lookups (SML/SMP in production, the sandbox directory otherwise).
    pub peppol: Arc<crate::peppol::Lookup>,
}

impl AppState {
    /// `"sandbox"` or `"production"`, as results say it.
    pub fn environment(&self) -> &'static str {
        self.config.mode.as_str()
    }
}
