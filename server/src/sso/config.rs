//! `[sso]` configuration and its `INVEX_SSO_*` variables: where the server may reach
//! providers, and how long it waits and remembers.

use serde::{Deserialize, Serialize};

use crate::settings::{parse, parse_bool, parse_networks};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SsoConfig {
    /// Accept `http://` issuers (the scheme only: where they may point is
    /// `allowed_networks`' business). Without it only `https://`, plus `http://` to this
    /// machine in the sandbox.
    pub allow_http: bool,
    /// Special-purpose networks (loopback, private, ...) a provider may nevertheless be in,
    /// e.g. `["10.20.0.0/16"]` for an identity server inside the operator's network.
    pub allowed_networks: Option<Vec<ipnet::IpNet>>,
    /// The DNS server (`ip:port`) that resolves providers' host names; the system's when
    /// unset.
    pub dns_server: Option<std::net::SocketAddr>,
    /// Longest wait for one answer of a provider, in milliseconds.
    pub timeout_ms: u64,
    /// How long a provider's discovery document and keys are used before they are read
    /// again, in seconds (an unknown signing key reads them again at once).
    pub discovery_ttl_secs: u64,
    /// How long a sign-in may take at the provider, in seconds.
    pub attempt_ttl_secs: u64,
}

impl Default for SsoConfig {
    fn default() -> Self {
        SsoConfig {
            allow_http: false,
            allowed_networks: None,
            dns_server: None,
            timeout_ms: 10_000,
            discovery_ttl_secs: 3600,
            attempt_ttl_secs: 600,
        }
    }
}

impl SsoConfig {
    /// Apply one `INVEX_SSO_*` variable (`key` without the `INVEX_` prefix).
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "SSO_ALLOW_HTTP" => self.allow_http = parse_bool(&value)?,
            "SSO_ALLOWED_NETWORKS" => self.allowed_networks = Some(parse_networks(&value)?),
            "SSO_DNS_SERVER" => {
                self.dns_server = match value.trim() {
                    "" => None,
                    v => Some(parse(v)?),
                }
            }
            "SSO_TIMEOUT_MS" => self.timeout_ms = parse(&value)?,
            "SSO_DISCOVERY_TTL_SECS" => self.discovery_ttl_secs = parse(&value)?,
            "SSO_ATTEMPT_TTL_SECS" => self.attempt_ttl_secs = parse(&value)?,
            other => return Err(format!("unknown variable INVEX_{other}")),
        }
        Ok(())
    }
}
