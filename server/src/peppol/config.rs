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

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn file_and_environment_set_the_peppol_section() {
        let mut c: Config = toml::from_str(
            "[peppol]\nsml_zone = \"participant.sml.test.tech.peppol.org\"\ncache_ttl_secs = 60\n",
        )
        .expect("toml");
        assert_eq!(c.peppol.sml_zone, "participant.sml.test.tech.peppol.org");
        assert_eq!(c.peppol.directory_url, super::DEFAULT_DIRECTORY_URL);
        assert_eq!(c.peppol.dns_server, None);
        c.apply_env(vars(&[
            ("INVEX_PEPPOL_DNS_SERVER", "127.0.0.1:5353"),
            ("INVEX_PEPPOL_DIRECTORY_URL", "http://127.0.0.1:9000"),
            ("INVEX_PEPPOL_CACHE_TTL_SECS", "5"),
        ]))
        .expect("env");
        assert_eq!(c.peppol.dns_server.map(|a| a.port()), Some(5353));
        assert_eq!(c.peppol.directory_url, "http://127.0.0.1:9000");
        assert_eq!(c.peppol.cache_ttl_secs, 5);
        c.apply_env(vars(&[("INVEX_PEPPOL_DNS_SERVER", "")]))
            .expect("env");
        assert_eq!(c.peppol.dns_server, None, "empty = system resolver");
        let err = c
            .apply_env(vars(&[("INVEX_PEPPOL_DNS_SERVER", "dns.example")]))
            .expect_err("not an address");
        assert!(err.to_string().contains("INVEX_PEPPOL_DNS_SERVER"), "{err}");
        assert!(toml::from_str::<Config>("[peppol]\nzone = \"x\"\n").is_err());
        assert_eq!(
            Config::default().peppol.sml_zone,
            "participant.sml.prod.tech.peppol.org"
        );
    }
}
