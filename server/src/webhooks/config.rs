//! `[webhooks]` configuration and its `INVEX_WEBHOOKS_*` variables.

use serde::{Deserialize, Serialize};

use crate::settings::{parse, parse_bool, parse_networks};

/// The retry delays of the Standard Webhooks schedule: about 5 s, 5 min, 30 min, 2 h, 5 h,
/// 10 h, 10 h after the failed attempt before, so 8 attempts over about a day and a half.
pub const DEFAULT_RETRY_SCHEDULE_MS: [u64; 7] = [
    5_000,
    5 * 60_000,
    30 * 60_000,
    2 * 3_600_000,
    5 * 3_600_000,
    10 * 3_600_000,
    10 * 3_600_000,
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhooksConfig {
    /// Run the delivery worker in this instance (several instances may all run it: rows
    /// are claimed with a lease, so each delivery is attempted by one worker at a time).
    pub worker: bool,
    /// How often the worker looks for due deliveries, in milliseconds.
    pub poll_interval_ms: u64,
    /// Longest wait for a receiver's answer, in milliseconds.
    pub timeout_ms: u64,
    /// Delay before each retry, in milliseconds (jittered by ±20 %); after the last one
    /// fails the delivery is `failed`.
    pub retry_schedule_ms: Vec<u64>,
    /// Deliveries claimed per poll.
    pub batch_size: u32,
    /// Accept `http://` endpoint URLs (the scheme only: where they may point is
    /// `allowed_networks`' business). Without it only `https://` is accepted, plus
    /// `http://` to this machine in the sandbox (see [`TargetPolicy`]).
    ///
    /// [`TargetPolicy`]: super::target::TargetPolicy
    pub allow_http: bool,
    /// Special-purpose networks (loopback, private, ...) webhooks may nevertheless be sent
    /// to, e.g. `["10.20.0.0/16"]` for an ERP inside the operator's network. None by
    /// default. (The sandbox's local-development exception — the host `localhost` or a
    /// literal loopback address, named as such in the URL — needs no entry here.)
    pub allowed_networks: Option<Vec<ipnet::IpNet>>,
    /// The DNS server (`ip:port`) that resolves endpoint host names at delivery; the
    /// system's resolver configuration when unset.
    pub dns_server: Option<std::net::SocketAddr>,
    /// Most endpoints one tenant may register.
    pub max_endpoints_per_tenant: u32,
    /// Days the delivery log (attempts, finished deliveries, their events) is kept; 0 keeps
    /// it for ever.
    pub retention_days: u32,
}

impl Default for WebhooksConfig {
    fn default() -> Self {
        WebhooksConfig {
            worker: true,
            poll_interval_ms: 1000,
            timeout_ms: 10_000,
            retry_schedule_ms: DEFAULT_RETRY_SCHEDULE_MS.to_vec(),
            batch_size: 32,
            allow_http: false,
            allowed_networks: None,
            dns_server: None,
            max_endpoints_per_tenant: 25,
            retention_days: 30,
        }
    }
}

impl WebhooksConfig {
    /// The special-purpose networks endpoints may be in, under `mode`.
    pub fn allowed_networks(&self) -> Vec<ipnet::IpNet> {
        self.allowed_networks.clone().unwrap_or_default()
    }

    /// Apply one `INVEX_WEBHOOKS_*` variable (`key` without the `INVEX_` prefix).
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "WEBHOOKS_WORKER" => self.worker = parse_bool(&value)?,
            "WEBHOOKS_POLL_INTERVAL_MS" => self.poll_interval_ms = parse(&value)?,
            "WEBHOOKS_TIMEOUT_MS" => self.timeout_ms = parse(&value)?,
            "WEBHOOKS_BATCH_SIZE" => self.batch_size = parse(&value)?,
            "WEBHOOKS_ALLOW_HTTP" => self.allow_http = parse_bool(&value)?,
            "WEBHOOKS_RETENTION_DAYS" => self.retention_days = parse(&value)?,
            "WEBHOOKS_ALLOWED_NETWORKS" => self.allowed_networks = Some(parse_networks(&value)?),
            "WEBHOOKS_DNS_SERVER" => {
                self.dns_server = match value.trim() {
                    "" => None,
                    v => Some(parse(v)?),
                }
            }
            "WEBHOOKS_MAX_ENDPOINTS" => self.max_endpoints_per_tenant = parse(&value)?,
            "WEBHOOKS_RETRY_SCHEDULE_MS" => {
                self.retry_schedule_ms = value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(parse)
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown variable INVEX_{other}")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_is_a_comma_list() {
        let mut c = WebhooksConfig::default();
        assert_eq!(c.retry_schedule_ms.len(), 7);
        c.apply_env("WEBHOOKS_RETRY_SCHEDULE_MS", "10, 20,30".into())
            .expect("list");
        assert_eq!(c.retry_schedule_ms, vec![10, 20, 30]);
        assert!(c
            .apply_env("WEBHOOKS_RETRY_SCHEDULE_MS", "10,x".into())
            .is_err());
        assert!(c.apply_env("WEBHOOKS_NOPE", "1".into()).is_err());
    }

    #[test]
    fn allowed_networks_are_none_unless_listed() {
        let mut c = WebhooksConfig::default();
        assert!(c.allowed_networks().is_empty());
        c.apply_env("WEBHOOKS_ALLOWED_NETWORKS", "10.20.0.0/16, fd00::1".into())
            .expect("list");
        assert_eq!(c.allowed_networks().len(), 2);
        c.apply_env("WEBHOOKS_ALLOWED_NETWORKS", "".into())
            .expect("empty");
        assert!(c.allowed_networks().is_empty());
        assert!(c
            .apply_env("WEBHOOKS_ALLOWED_NETWORKS", "intranet".into())
            .is_err());
    }

    #[test]
    fn a_toml_section_sets_some_fields_and_refuses_unknown_ones() {
        let c: WebhooksConfig =
            toml::from_str("timeout_ms = 2500\nretry_schedule_ms = [1, 2]\n").expect("toml");
        assert_eq!(c.timeout_ms, 2500);
        assert_eq!(c.retry_schedule_ms, vec![1, 2]);
        assert!(c.worker);
        assert!(toml::from_str::<WebhooksConfig>("timeout = 1").is_err());
    }
}
