//! Server configuration: defaults, then an optional TOML file, then `INVEX_*` variables.
//!
//! With nothing configured the server runs in sandbox mode on 127.0.0.1:8080 with an
//! embedded SQLite database under `./data` and the shipped rule packs.
//!
//! This is the composition root of the configuration: it puts together the sections each
//! capability owns (`[vat]`, `[smtp]`, `[peppol]`, ...) and reads the file and the
//! environment. The sections depend only on the shared vocabulary of [`crate::settings`],
//! never on this module.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::mail::SmtpConfig;
// The run mode is the shared vocabulary; `config::Mode` stays a public path to it.
pub use crate::settings::Mode;
use crate::settings::{parse, parse_bool, parse_networks, ConfigError};

/// Log line format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

impl FromStr for LogFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("unknown log format `{other}` (text, json)")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address and port to listen on.
    pub bind: SocketAddr,
    pub mode: Mode,
    /// `sqlite://path?mode=rwc` (embedded) or `postgres://...` (shared by several instances).
    pub database_url: String,
    /// A rule-pack directory to serve instead of the packs embedded in the binary.
    pub rulepacks: Option<PathBuf>,
    /// Reload rule packs when files under the `rulepacks` directory change (the embedded
    /// packs never change).
    pub watch_rulepacks: bool,
    /// How long the watcher waits without a file event before it reloads (a pack
    /// written in several steps is read once, complete).
    pub rulepacks_quiet_ms: u64,
    /// How often this instance reports itself and looks for another instance's rule-pack
    /// reload in the shared database (`fleet`).
    pub instance_poll_ms: u64,
    /// The admin key created on first start with an empty database; random when unset.
    pub bootstrap_key: Option<String>,
    /// Log format; JSON in production, text in the sandbox when unset.
    pub log_format: Option<LogFormat>,
    /// The VIES REST API (production mode).
    pub vies_url: String,
    /// Longest a register lookup may hold a request, in milliseconds.
    pub register_timeout_ms: u64,
    pub limits: Limits,
    /// VAT verification: cache ages, circuit breaker.
    pub vat: crate::vat::config::VatConfig,
    /// Sending: the delivery worker.
    pub sending: crate::sending::config::SendingConfig,
    /// Slovak company registers (`GET /v1/company/sk/{ico}`).
    #[serde(default)]
    pub company: crate::company::CompanyConfig,
    /// Peppol discovery (`[peppol]`).
    #[serde(default)]
    pub peppol: crate::peppol::PeppolConfig,
    /// Webhook delivery (`[webhooks]`): worker, timeout, retry schedule.
    #[serde(default)]
    pub webhooks: crate::webhooks::WebhooksConfig,
    /// Conversion (`[convert]`): review threshold, batch size.
    #[serde(default)]
    pub convert: crate::convert::config::ConvertConfig,
    /// Heavy work (`[admission]`): worker pool, in-flight budget.
    #[serde(default)]
    pub admission: crate::admission::AdmissionConfig,
    /// Connections (`[connections]`): cap and timeouts.
    #[serde(default)]
    pub connections: crate::listener::ConnectionConfig,
    /// Reverse proxies (addresses or networks) whose `X-Forwarded-For` names the client;
    /// from anyone else the header is ignored. Empty: the connection's peer is the client.
    #[serde(default)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The SMTP server console invitations are mailed through (`[smtp]`); without a host
    /// the invitation link is only shown to the administrator.
    #[serde(default)]
    pub smtp: SmtpConfig,
    /// Batches (`[batches]`): the worker, its leases, the limits of an upload.
    #[serde(default)]
    pub batches: crate::batches::BatchesConfig,
    /// SFTP drop folders (`[sftp]`): on or off, where, the host key, limits.
    #[serde(default)]
    pub sftp: crate::sftp::SftpConfig,
    /// Console single sign-on (`[sso]`): where providers may be, timeouts, caching.
    #[serde(default)]
    pub sso: crate::sso::SsoConfig,
    /// The address people reach this server at (`https://invex.firma.sk`), for links in
    /// mails and the single sign-on redirect URI. Unset: in the sandbox, the host the
    /// request names; in production, mailed links are relative and single sign-on is off.
    #[serde(default)]
    pub public_url: Option<String>,
    /// HTTPS served by invex itself (`[tls]`, or `INVEX_TLS_CERT` and `INVEX_TLS_KEY`):
    /// TLS 1.3 only. Unset: plain HTTP (the sandbox, or behind a terminating proxy).
    #[serde(default)]
    pub tls: Option<crate::tls::TlsConfig>,
}

fn default_instance_poll_ms() -> u64 {
    1000
}

/// The embedded database used when nothing is configured.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/invex.db?mode=rwc";

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            mode: Mode::Sandbox,
            database_url: DEFAULT_DATABASE_URL.to_string(),
            rulepacks: None,
            watch_rulepacks: true,
            rulepacks_quiet_ms: 500,
            instance_poll_ms: default_instance_poll_ms(),
            bootstrap_key: None,
            log_format: None,
            vies_url: crate::vat::vies::DEFAULT_BASE_URL.to_string(),
            register_timeout_ms: 3000,
            limits: Limits::default(),
            vat: crate::vat::config::VatConfig::default(),
            sending: crate::sending::config::SendingConfig::default(),
            company: crate::company::CompanyConfig::default(),
            peppol: crate::peppol::PeppolConfig::default(),
            webhooks: crate::webhooks::WebhooksConfig::default(),
            convert: crate::convert::config::ConvertConfig::default(),
            admission: crate::admission::AdmissionConfig::default(),
            connections: crate::listener::ConnectionConfig::default(),
            trusted_proxies: Vec::new(),
            smtp: SmtpConfig::default(),
            sso: crate::sso::SsoConfig::default(),
            batches: crate::batches::BatchesConfig::default(),
            sftp: crate::sftp::SftpConfig::default(),
            public_url: None,
            tls: None,
        }
    }
}

impl Config {
    /// Defaults, then `file` when given, then the process environment.
    pub fn load(file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut config = match file {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        };
        config.apply_env(std::env::vars())?;
        config.validate()?;
        Ok(config)
    }

    /// Settings that are each well-formed but wrong together, or unsafe in the mode.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.smtp.check(self.mode)?;
        if let Some(url) = &self.public_url {
            check_public_url(url, self.mode)?;
        }
        Ok(())
    }

    /// The public address without a trailing slash, when configured.
    pub fn public_base(&self) -> Option<&str> {
        self.public_url
            .as_deref()
            .map(|u| u.trim().trim_end_matches('/'))
    }

    pub fn from_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        toml::from_str(&text).map_err(|source| ConfigError::Toml {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Apply `INVEX_*` variables from `vars` (the environment, or a test's list).
    pub fn apply_env(
        &mut self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(), ConfigError> {
        // The pair is taken together, after the loop.
        let (mut tls_cert, mut tls_key) = (None, None);
        for (name, value) in vars {
            let Some(key) = name.strip_prefix("INVEX_") else {
                continue;
            };
            let bad = |message: String| ConfigError::Env {
                name: name.clone(),
                message,
            };
            match key {
                "BIND" => self.bind = parse(&value).map_err(bad)?,
                "MODE" => self.mode = value.parse().map_err(bad)?,
                "DATABASE_URL" => self.database_url = value,
                "RULEPACKS" => self.rulepacks = (!value.is_empty()).then(|| PathBuf::from(value)),
                "WATCH_RULEPACKS" => self.watch_rulepacks = parse_bool(&value).map_err(bad)?,
                "RULEPACKS_QUIET_MS" => self.rulepacks_quiet_ms = parse(&value).map_err(bad)?,
                "INSTANCE_POLL_MS" => self.instance_poll_ms = parse(&value).map_err(bad)?,
                "BOOTSTRAP_KEY" => self.bootstrap_key = Some(value).filter(|v| !v.is_empty()),
                "VIES_URL" => self.vies_url = value,
                "REGISTER_TIMEOUT_MS" => self.register_timeout_ms = parse(&value).map_err(bad)?,
                "LOG_FORMAT" => self.log_format = Some(value.parse().map_err(bad)?),
                "MAX_BODY_BYTES" => self.limits.max_body_bytes = parse(&value).map_err(bad)?,
                "MAX_FILES" => self.limits.max_files = parse(&value).map_err(bad)?,
                "MAX_XML_DEPTH" => self.limits.max_xml_depth = parse(&value).map_err(bad)?,
                "MAX_FINDINGS" => self.limits.max_findings = parse(&value).map_err(bad)?,
                "RATE_PER_SECOND" => self.limits.rate_per_second = parse(&value).map_err(bad)?,
                "RATE_BURST" => self.limits.rate_burst = parse(&value).map_err(bad)?,
                "AUTH_FAILURES_PER_MINUTE" => {
                    self.limits.auth_failures_per_minute = parse(&value).map_err(bad)?;
                    if self.limits.auth_failures_per_minute == 0 {
                        return Err(bad("must be at least 1".into()));
                    }
                }
                "TRUSTED_PROXIES" => self.trusted_proxies = parse_networks(&value).map_err(bad)?,
                "VAT_CACHE_VALID_SECS" => self.vat.cache_valid_secs = parse(&value).map_err(bad)?,
                "VAT_CACHE_INVALID_SECS" => {
                    self.vat.cache_invalid_secs = parse(&value).map_err(bad)?
                }
                "VAT_STALE_MAX_SECS" => self.vat.stale_max_secs = parse(&value).map_err(bad)?,
                "VAT_BREAKER_FAILURES" => self.vat.breaker_failures = parse(&value).map_err(bad)?,
                "CONVERT_CONFIDENCE_THRESHOLD" => {
                    let t: f32 = parse(&value).map_err(bad)?;
                    if !(0.0..=1.0).contains(&t) {
                        return Err(bad(format!("{t} is not between 0.0 and 1.0")));
                    }
                    self.convert.confidence_threshold = t;
                }
                "CONVERT_MAX_INVOICES" => self.convert.max_invoices = parse(&value).map_err(bad)?,
                k if k.starts_with("CONVERT_") => self.convert.apply_env(k, &value).map_err(bad)?,
                "SENDING_WORKER" => self.sending.worker = parse_bool(&value).map_err(bad)?,
                "SENDING_POLL_MS" => self.sending.poll_ms = parse(&value).map_err(bad)?,
                "SENDING_SANDBOX_RESPONSE_DELAY_MS" => {
                    self.sending.sandbox_response_delay_ms = parse(&value).map_err(bad)?
                }
                "SENDING_ABANDONED_AFTER_SECS" => {
                    self.sending.abandoned_after_secs = parse(&value).map_err(bad)?
                }
                "SENDING_RESPONSE_TIMEOUT_SECS" => {
                    self.sending.response_timeout_secs = parse(&value).map_err(bad)?
                }
                "VAT_BREAKER_OPEN_SECS" => {
                    self.vat.breaker_open_secs = parse(&value).map_err(bad)?
                }
                k if k.starts_with("COMPANY_") || k == "FS_API_KEY" => {
                    self.company.apply_env(k, value).map_err(bad)?
                }
                "PEPPOL_SML_ZONE" => self.peppol.sml_zone = value,
                "PEPPOL_DNS_SERVER" => {
                    self.peppol.dns_server = match value.trim() {
                        "" => None,
                        v => Some(parse(v).map_err(bad)?),
                    }
                }
                "PEPPOL_DIRECTORY_URL" => self.peppol.directory_url = value,
                "PEPPOL_CACHE_TTL_SECS" => {
                    self.peppol.cache_ttl_secs = parse(&value).map_err(bad)?
                }
                "WORKERS" => self.admission.workers = parse(&value).map_err(bad)?,
                "QUEUE_WAIT_MS" => self.admission.queue_wait_ms = parse(&value).map_err(bad)?,
                "MAX_WAITING" => self.admission.max_waiting = parse(&value).map_err(bad)?,
                "INFLIGHT_BYTES" => self.admission.inflight_bytes = parse(&value).map_err(bad)?,
                "INFLIGHT_DOCUMENTS" => {
                    self.admission.inflight_documents = parse(&value).map_err(bad)?
                }
                "MAX_CONNECTIONS" => {
                    self.connections.max_connections = parse(&value).map_err(bad)?
                }
                "HEADER_TIMEOUT_MS" => {
                    self.connections.header_timeout_ms = parse(&value).map_err(bad)?
                }
                "BODY_TIMEOUT_MS" => {
                    self.connections.body_timeout_ms = parse(&value).map_err(bad)?
                }
                "BODY_IDLE_TIMEOUT_MS" => {
                    self.connections.body_idle_timeout_ms = parse(&value).map_err(bad)?
                }
                k if k.starts_with("WEBHOOKS_") => {
                    self.webhooks.apply_env(k, value).map_err(bad)?
                }
                k if k.starts_with("SMTP_") => self.smtp.apply_env(k, value).map_err(bad)?,
                k if k.starts_with("SSO_") => self.sso.apply_env(k, value).map_err(bad)?,
                k if k.starts_with("BATCHES_") => self.batches.apply_env(k, value).map_err(bad)?,
                k if k.starts_with("SFTP_") => self.sftp.apply_env(k, value).map_err(bad)?,
                "PUBLIC_URL" => self.public_url = Some(value).filter(|v| !v.trim().is_empty()),
                "TLS_CERT" => tls_cert = Some(PathBuf::from(value)),
                "TLS_KEY" => tls_key = Some(PathBuf::from(value)),
                // Other INVEX_ variables belong to other tools (tests, benches).
                _ => {}
            }
        }
        let given = tls_cert.is_some() || tls_key.is_some();
        let named = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
        match (named(tls_cert), named(tls_key)) {
            (Some(cert), Some(key)) => match &mut self.tls {
                Some(tls) => (tls.cert, tls.key) = (cert, key),
                None => self.tls = Some(crate::tls::TlsConfig::new(cert, key)),
            },
            // Both set empty: plain HTTP whatever the file says.
            (None, None) if given => self.tls = None,
            (None, None) => {}
            _ => {
                return Err(ConfigError::Env {
                    name: "INVEX_TLS_CERT".into(),
                    message: "INVEX_TLS_CERT and INVEX_TLS_KEY are set together (the \
                              certificate chain and its private key) or not at all"
                        .into(),
                })
            }
        }
        Ok(())
    }

    /// Where the rule packs come from: the configured directory, else the embedded packs.
    pub fn rulepack_source(&self) -> invex_tools::Rulepacks {
        match &self.rulepacks {
            Some(dir) => invex_tools::Rulepacks::Dir(dir.clone()),
            None => invex_tools::Rulepacks::Embedded,
        }
    }

    /// The log format in force: the configured one, else JSON in production.
    pub fn effective_log_format(&self) -> LogFormat {
        self.log_format.unwrap_or(match self.mode {
            Mode::Production => LogFormat::Json,
            Mode::Sandbox => LogFormat::Text,
        })
    }
}

/// `public_url`: an absolute http(s) URL with no query or fragment (a path prefix is kept, for
/// a server behind a proxy under a path); https in production.
fn check_public_url(url: &str, mode: Mode) -> Result<(), ConfigError> {
    let setting = "public_url (INVEX_PUBLIC_URL)";
    let parsed = reqwest::Url::parse(url.trim()).map_err(|e| ConfigError::Invalid {
        setting,
        message: format!("`{url}`: {e}"),
    })?;
    let scheme_ok = match mode {
        Mode::Production => parsed.scheme() == "https",
        Mode::Sandbox => matches!(parsed.scheme(), "http" | "https"),
    };
    if !scheme_ok
        || parsed.host_str().is_none()
        || parsed.query().is_some()
        || parsed.fragment().is_some()
    {
        return Err(ConfigError::Invalid {
            setting,
            message: format!(
                "`{url}` must be an https URL (http in the sandbox) without query or fragment"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_a_local_sandbox_with_embedded_sqlite() {
        let c = Config::default();
        assert_eq!(c.bind.to_string(), "127.0.0.1:8080");
        assert_eq!(c.mode, Mode::Sandbox);
        assert!(c.database_url.starts_with("sqlite://data/"));
        assert_eq!(c.effective_log_format(), LogFormat::Text);
    }

    #[test]
    fn environment_overrides_file_values() {
        let mut c: Config = toml::from_str(
            "bind = \"0.0.0.0:9000\"\nmode = \"production\"\n[limits]\nmax_files = 3\n",
        )
        .expect("toml");
        assert_eq!(c.limits.max_files, 3);
        c.apply_env(vars(&[
            ("INVEX_BIND", "127.0.0.1:7000"),
            ("INVEX_MAX_FILES", "9"),
            ("INVEX_DATABASE_URL", "postgres://db/x"),
            ("PATH", "/bin"),
        ]))
        .expect("env");
        assert_eq!(c.bind.to_string(), "127.0.0.1:7000");
        assert_eq!(c.mode, Mode::Production);
        assert_eq!(c.limits.max_files, 9);
        assert_eq!(c.database_url, "postgres://db/x");
        assert_eq!(c.effective_log_format(), LogFormat::Json);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let mut c = Config::default();
        let err = c
            .apply_env(vars(&[("INVEX_MODE", "staging")]))
            .expect_err("bad mode");
        assert!(err.to_string().contains("INVEX_MODE"), "{err}");
        let err = c
            .apply_env(vars(&[("INVEX_MAX_BODY_BYTES", "lots")]))
            .expect_err("bad number");
        assert!(err.to_string().contains("INVEX_MAX_BODY_BYTES"), "{err}");
    }

    #[test]
    fn trusted_proxies_are_networks_or_addresses() {
        let mut c = Config::default();
        assert!(c.trusted_proxies.is_empty());
        c.apply_env(vars(&[("INVEX_TRUSTED_PROXIES", "10.0.0.0/8, ::1")]))
            .expect("list");
        assert_eq!(c.trusted_proxies.len(), 2);
        assert!(c.trusted_proxies[1].contains(&"::1".parse::<std::net::IpAddr>().expect("ip")));
        let err = c
            .apply_env(vars(&[("INVEX_TRUSTED_PROXIES", "proxy.local")]))
            .expect_err("a name");
        assert!(err.to_string().contains("INVEX_TRUSTED_PROXIES"), "{err}");
        let err = c
            .apply_env(vars(&[("INVEX_AUTH_FAILURES_PER_MINUTE", "0")]))
            .expect_err("zero");
        assert!(err.to_string().contains("at least 1"), "{err}");
        let c: Config = toml::from_str(
            "trusted_proxies = [\"10.1.0.0/16\"]\n[limits]\nauth_failures_per_minute = 5\n",
        )
        .expect("toml");
        assert_eq!(c.limits.auth_failures_per_minute, 5);
        assert_eq!(c.trusted_proxies.len(), 1);
    }

    #[test]
    fn unknown_file_keys_are_refused() {
        assert!(toml::from_str::<Config>("bnd = \"x\"").is_err());
    }

    #[test]
    fn the_smtp_section_is_read_and_checked_naming_its_variables() {
        let smtp = |list: &[(&str, &str)], mode: Mode| -> Result<Config, ConfigError> {
            let mut c = Config {
                mode,
                ..Config::default()
            };
            c.apply_env(vars(list))?;
            c.validate()?;
            Ok(c)
        };
        let c = smtp(&[], Mode::Production).expect("no smtp");
        assert!(!c.smtp.enabled());
        let c = smtp(
            &[
                ("INVEX_SMTP_HOST", "mail.firma.sk"),
                ("INVEX_SMTP_FROM", "invex <noreply@firma.sk>"),
                ("INVEX_SMTP_USERNAME", "invex"),
                ("INVEX_SMTP_PASSWORD", "s3cret-password"),
                ("INVEX_SMTP_TIMEOUT_MS", "2500"),
            ],
            Mode::Production,
        )
        .expect("starttls");
        assert!(c.smtp.enabled());
        assert_eq!(c.smtp.effective_port(), 587);
        assert_eq!(c.smtp.timeout_ms, 2500);
        let shown = format!("{c:?}");
        assert!(!shown.contains("s3cret"), "the password is never printed");
        assert!(shown.contains("<redacted>"), "{shown}");
        let c: Config = toml::from_str(
            "[smtp]\nhost = \"127.0.0.1\"\nport = 2525\nsecurity = \"none\"\nfrom = \"a@b.sk\"\n",
        )
        .expect("toml");
        assert_eq!(
            (c.smtp.effective_port(), c.smtp.security),
            (2525, crate::mail::SmtpSecurity::None)
        );
        assert!(toml::from_str::<Config>("[smtp]\nserver = \"x\"\n").is_err());
        // The section's check runs at validation, naming the setting.
        let refused = |list: &[(&str, &str)], mode: Mode, needle: &str| {
            let err = smtp(list, mode).expect_err(needle).to_string();
            assert!(err.contains(needle), "{needle}: {err}");
        };
        refused(
            &[("INVEX_SMTP_HOST", "mail.firma.sk")],
            Mode::Sandbox,
            "smtp.from (INVEX_SMTP_FROM): is required",
        );
        // Malformed values name their variable; unknown SMTP variables are refused.
        refused(
            &[("INVEX_SMTP_SECURITY", "ssl")],
            Mode::Sandbox,
            "INVEX_SMTP_SECURITY",
        );
        refused(
            &[("INVEX_SMTP_PORT", "x")],
            Mode::Sandbox,
            "INVEX_SMTP_PORT",
        );
        refused(
            &[("INVEX_SMTP_SERVER", "x")],
            Mode::Sandbox,
            "INVEX_SMTP_SERVER",
        );
    }

    #[test]
    fn file_and_environment_set_the_peppol_section() {
        let mut c: Config = toml::from_str(
            "[peppol]\nsml_zone = \"participant.sml.test.tech.peppol.org\"\ncache_ttl_secs = 60\n",
        )
        .expect("toml");
        assert_eq!(c.peppol.sml_zone, "participant.sml.test.tech.peppol.org");
        assert_eq!(
            c.peppol.directory_url,
            crate::peppol::config::DEFAULT_DIRECTORY_URL
        );
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

    #[test]
    fn the_company_table_of_the_config_file_is_read() {
        let c: Config = toml::from_str(
            "[company]\nrpo_url = \"http://rpo.local/v1\"\ncache_ttl_secs = 10\nrpvs_cache_ttl_secs = 0\n",
        )
        .expect("toml");
        assert_eq!(c.company.rpo_url, "http://rpo.local/v1");
        assert_eq!(c.company.ruz_url, crate::company::config::DEFAULT_RUZ_URL);
        assert_eq!((c.company.ruz_ttl(), c.company.rpvs_ttl()), (10, 0));
        assert!(toml::from_str::<Config>("[company]\nrpo = 1\n").is_err());
        let mut c = Config::default();
        c.apply_env([("INVEX_FS_API_KEY".to_string(), "k".to_string())])
            .expect("env");
        assert_eq!(c.company.fs_api_key.as_deref(), Some("k"));
    }
}
