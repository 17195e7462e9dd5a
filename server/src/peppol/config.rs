//! Where Peppol discovery looks: the SML zone and DNS server for U-NAPTR, the Peppol
//! Directory for names, and how long answers are kept.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// The production SML zone (since 2026-03-19).
pub const DEFAULT_SML_ZONE: &str = "participant.sml.prod.tech.peppol.org";
/// The public Peppol Directory.
pub const DEFAULT_DIRECTORY_URL: &str = "https://directory.peppol.eu";

/// `[peppol]` in the configuration file; `INVEX_PEPPOL_*` in the environment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PeppolConfig {
    /// DNS zone of the SML (`participant.sml.prod.tech.peppol.org`; the test network has
    /// its own zone).
    pub sml_zone: String,
    /// DNS server to ask (UDP and TCP); unset = the system resolver configuration.
    pub dns_server: Option<SocketAddr>,
    /// Base URL of the Peppol Directory (names of participants).
    pub directory_url: String,
    /// How long a completed lookup (registered or not) is reused, in seconds. Outages are
    /// never cached.
    pub cache_ttl_secs: u64,
}

impl Default for PeppolConfig {
    fn default() -> Self {
        PeppolConfig {
            sml_zone: DEFAULT_SML_ZONE.to_string(),
            dns_server: None,
            directory_url: DEFAULT_DIRECTORY_URL.to_string(),
            cache_ttl_secs: 3600,
        }
    }
}
