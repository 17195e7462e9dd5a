//! The SMTP server console invitations are mailed through: `[smtp]` in the configuration
//! file, `INVEX_SMTP_*` in the environment.

use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::settings::{parse, ConfigError, Mode};

/// How the connection to the SMTP server is protected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmtpSecurity {
    /// Plain connection upgraded with STARTTLS, which must succeed before anything else is
    /// said (no credentials or mail in the clear); port 587 by default.
    #[default]
    Starttls,
    /// TLS from the first byte (implicit TLS, "SMTPS"); port 465 by default.
    Tls,
    /// No encryption: only in the sandbox, or to a relay on this machine (`localhost`,
    /// `127.0.0.1`, `::1`); port 25 by default.
    None,
}

impl SmtpSecurity {
    pub fn as_str(self) -> &'static str {
        match self {
            SmtpSecurity::Starttls => "starttls",
            SmtpSecurity::Tls => "tls",
            SmtpSecurity::None => "none",
        }
    }

    /// The port used when none is configured.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpSecurity::Starttls => 587,
            SmtpSecurity::Tls => 465,
            SmtpSecurity::None => 25,
        }
    }
}

impl FromStr for SmtpSecurity {
    type Err = String;
    fn from_str(s: &str) -> Result<SmtpSecurity, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "starttls" => Ok(SmtpSecurity::Starttls),
            "tls" => Ok(SmtpSecurity::Tls),
            "none" => Ok(SmtpSecurity::None),
            other => Err(format!(
                "unknown SMTP security `{other}` (starttls, tls, none)"
            )),
        }
    }
}

/// The SMTP server that mails console invitations. SMTP is configured when `host` is set;
/// then `from` is required. The password comes from `password` (`INVEX_SMTP_PASSWORD`) or
/// from the file `password_file` names (a mounted secret; read at start, one trailing line
/// break dropped). It is never printed: `Debug` redacts it and it is never serialised.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SmtpConfig {
    /// Host name (or address) of the SMTP server; unset: invitations are not mailed.
    pub host: Option<String>,
    /// Port; 587 (`starttls`), 465 (`tls`) or 25 (`none`) when unset.
    pub port: Option<u16>,
    pub security: SmtpSecurity,
    /// User name for SMTP AUTH (PLAIN or LOGIN, over the encrypted connection); no AUTH
    /// when unset.
    pub username: Option<String>,
    #[serde(skip_serializing)]
    pub password: Option<String>,
    pub password_file: Option<PathBuf>,
    /// The sender, `noreply@firma.sk` or `invex <noreply@firma.sk>`.
    pub from: Option<String>,
    /// Longest a message may take to send (connect, TLS, AUTH, transfer), in milliseconds.
    pub timeout_ms: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        SmtpConfig {
            host: None,
            port: None,
            security: SmtpSecurity::default(),
            username: None,
            password: None,
            password_file: None,
            from: None,
            timeout_ms: 10_000,
        }
    }
}

/// The password is a credential: never printed.
impl std::fmt::Debug for SmtpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("security", &self.security)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("password_file", &self.password_file)
            .field("from", &self.from)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

impl SmtpConfig {
    /// Whether invitations are mailed (a host is set).
    pub fn enabled(&self) -> bool {
        self.host.as_deref().is_some_and(|h| !h.trim().is_empty())
    }

    /// The port in force.
    pub fn effective_port(&self) -> u16 {
        self.port.unwrap_or(self.security.default_port())
    }

    /// Apply one `INVEX_SMTP_*` variable (`key` without the `INVEX_` prefix).
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        let text = |v: String| Some(v).filter(|v| !v.trim().is_empty());
        match key {
            "SMTP_HOST" => self.host = text(value),
            "SMTP_PORT" => {
                self.port = match value.trim() {
                    "" => None,
                    v => Some(parse(v)?),
                }
            }
            "SMTP_SECURITY" => self.security = value.parse()?,
            "SMTP_USERNAME" => self.username = text(value),
            "SMTP_PASSWORD" => self.password = text(value),
            "SMTP_PASSWORD_FILE" => self.password_file = text(value).map(PathBuf::from),
            "SMTP_FROM" => self.from = text(value),
            "SMTP_TIMEOUT_MS" => self.timeout_ms = parse(&value)?,
            other => return Err(format!("unknown variable INVEX_{other}")),
        }
        Ok(())
    }

    /// Check the settings that need no I/O: what is missing, contradictory or unsafe under
    /// `mode`. The error names the setting (`smtp.from`) and its variable.
    pub fn check(&self, mode: Mode) -> Result<(), ConfigError> {
        let invalid =
            |setting: &'static str, message: String| ConfigError::Invalid { setting, message };
        let Some(host) = self
            .host
            .as_deref()
            .map(str::trim)
            .filter(|h| !h.is_empty())
        else {
            return Ok(());
        };
        if host.chars().any(|c| c.is_whitespace() || c.is_control()) || host.contains('/') {
            return Err(invalid(
                "smtp.host (INVEX_SMTP_HOST)",
                format!("`{host}` is not a host name or address"),
            ));
        }
        let Some(from) = self.from.as_deref() else {
            return Err(invalid(
                "smtp.from (INVEX_SMTP_FROM)",
                "is required when smtp.host is set: the sender of invitation mails, \
                 e.g. `invex <noreply@firma.sk>`"
                    .into(),
            ));
        };
        super::sender(from).map_err(|e| invalid("smtp.from (INVEX_SMTP_FROM)", e.to_string()))?;
        if self.port == Some(0) {
            return Err(invalid(
                "smtp.port (INVEX_SMTP_PORT)",
                "must not be 0".into(),
            ));
        }
        if self.timeout_ms == 0 {
            return Err(invalid(
                "smtp.timeout_ms (INVEX_SMTP_TIMEOUT_MS)",
                "must be at least 1".into(),
            ));
        }
        if self.security == SmtpSecurity::None
            && mode == Mode::Production
            && !crate::special_ip::is_this_machine(host)
        {
            return Err(invalid(
                "smtp.security (INVEX_SMTP_SECURITY)",
                format!(
                    "`none` sends the password and the invitation links in the clear; in \
                     production it is allowed only to a relay on this machine (localhost, \
                     127.0.0.1, ::1), not to `{host}`: use `starttls` or `tls`"
                ),
            ));
        }
        match (&self.username, &self.password, &self.password_file) {
            (_, Some(_), Some(_)) => Err(invalid(
                "smtp.password (INVEX_SMTP_PASSWORD)",
                "give the password or smtp.password_file (INVEX_SMTP_PASSWORD_FILE), not both"
                    .into(),
            )),
            (Some(_), None, None) => Err(invalid(
                "smtp.password (INVEX_SMTP_PASSWORD)",
                "is required with smtp.username (or smtp.password_file, \
                 INVEX_SMTP_PASSWORD_FILE)"
                    .into(),
            )),
            (None, Some(_), _) | (None, _, Some(_)) => Err(invalid(
                "smtp.username (INVEX_SMTP_USERNAME)",
                "is required with a password".into(),
            )),
            _ => Ok(()),
        }
    }

    /// The password: configured, or read from `password_file` (one trailing line break
    /// dropped). Read at start.
    pub fn resolve_password(&self) -> Result<Option<String>, ConfigError> {
        match (&self.password, &self.password_file) {
            (Some(p), _) => Ok(Some(p.clone())),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                let p = text
                    .strip_suffix('\n')
                    .map(|p| p.strip_suffix('\r').unwrap_or(p))
                    .unwrap_or(&text);
                if p.is_empty() {
                    return Err(ConfigError::Invalid {
                        setting: "smtp.password_file (INVEX_SMTP_PASSWORD_FILE)",
                        message: format!("{} is empty", path.display()),
                    });
                }
                Ok(Some(p.to_string()))
            }
            (None, None) => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section after the `INVEX_SMTP_*` variables of `list` (names without `INVEX_`),
    /// checked under `mode`.
    fn smtp(list: &[(&str, &str)], mode: Mode) -> Result<SmtpConfig, String> {
        let mut c = SmtpConfig::default();
        for (key, value) in list {
            c.apply_env(key, value.to_string())?;
        }
        c.check(mode).map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn smtp_is_off_unless_a_host_is_set() {
        let c = smtp(&[], Mode::Production).expect("no smtp");
        assert!(!c.enabled());
        assert_eq!(c.security, SmtpSecurity::Starttls);
        let c = smtp(
            &[
                ("SMTP_HOST", "mail.firma.sk"),
                ("SMTP_FROM", "invex <noreply@firma.sk>"),
                ("SMTP_USERNAME", "invex"),
                ("SMTP_PASSWORD", "s3cret-password"),
                ("SMTP_TIMEOUT_MS", "2500"),
            ],
            Mode::Production,
        )
        .expect("starttls");
        assert!(c.enabled());
        assert_eq!(c.effective_port(), 587);
        assert_eq!(c.timeout_ms, 2500);
        let shown = format!("{c:?}");
        assert!(!shown.contains("s3cret"), "the password is never printed");
        assert!(shown.contains("<redacted>"), "{shown}");
        let c = smtp(
            &[
                ("SMTP_HOST", "mail.firma.sk"),
                ("SMTP_SECURITY", "TLS"),
                ("SMTP_FROM", "noreply@firma.sk"),
            ],
            Mode::Production,
        )
        .expect("implicit tls");
        assert_eq!(c.effective_port(), 465);
        let c: SmtpConfig = toml::from_str(
            "host = \"127.0.0.1\"\nport = 2525\nsecurity = \"none\"\nfrom = \"a@b.sk\"\n",
        )
        .expect("toml");
        assert_eq!((c.effective_port(), c.security), (2525, SmtpSecurity::None));
        assert!(toml::from_str::<SmtpConfig>("server = \"x\"\n").is_err());
    }

    #[test]
    fn smtp_settings_are_checked_naming_the_setting() {
        let host = ("SMTP_HOST", "mail.firma.sk");
        let from = ("SMTP_FROM", "noreply@firma.sk");
        let refused = |list: &[(&str, &str)], mode: Mode, needle: &str| {
            let err = smtp(list, mode).expect_err(needle);
            assert!(err.contains(needle), "{needle}: {err}");
            err
        };
        // A host without a sender.
        refused(
            &[host],
            Mode::Sandbox,
            "smtp.from (INVEX_SMTP_FROM): is required",
        );
        // A sender that is no address, or carries a line break.
        refused(
            &[host, ("SMTP_FROM", "noreply")],
            Mode::Sandbox,
            "smtp.from",
        );
        refused(
            &[host, ("SMTP_FROM", "a@b.sk\r\nBcc: spy@evil.example")],
            Mode::Sandbox,
            "smtp.from",
        );
        // No encryption to another machine in production; allowed to this one, and in the
        // sandbox.
        let err = refused(
            &[host, from, ("SMTP_SECURITY", "none")],
            Mode::Production,
            "smtp.security (INVEX_SMTP_SECURITY)",
        );
        assert!(err.contains("mail.firma.sk"), "{err}");
        for local in ["localhost", "127.0.0.1", "::1", "[::1]"] {
            smtp(
                &[("SMTP_HOST", local), from, ("SMTP_SECURITY", "none")],
                Mode::Production,
            )
            .expect(local);
        }
        smtp(&[host, from, ("SMTP_SECURITY", "none")], Mode::Sandbox).expect("sandbox");
        // Credentials come in pairs; one password source.
        refused(
            &[host, from, ("SMTP_USERNAME", "invex")],
            Mode::Production,
            "smtp.password",
        );
        refused(
            &[host, from, ("SMTP_PASSWORD", "pw")],
            Mode::Production,
            "smtp.username",
        );
        refused(
            &[
                host,
                from,
                ("SMTP_USERNAME", "invex"),
                ("SMTP_PASSWORD", "pw"),
                ("SMTP_PASSWORD_FILE", "/run/secrets/smtp"),
            ],
            Mode::Production,
            "not both",
        );
        refused(
            &[host, from, ("SMTP_TIMEOUT_MS", "0")],
            Mode::Production,
            "smtp.timeout_ms",
        );
        refused(
            &[("SMTP_HOST", "mail firma.sk"), from],
            Mode::Production,
            "smtp.host",
        );
        // Malformed values and unknown SMTP variables are refused (the configuration names
        // the variable: see `config`'s tests).
        refused(
            &[("SMTP_SECURITY", "ssl")],
            Mode::Sandbox,
            "unknown SMTP security `ssl`",
        );
        refused(&[("SMTP_PORT", "x")], Mode::Sandbox, "`x`");
        refused(
            &[("SMTP_SERVER", "x")],
            Mode::Sandbox,
            "unknown variable INVEX_SMTP_SERVER",
        );
    }

    #[test]
    fn the_smtp_password_may_come_from_a_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("smtp-password");
        std::fs::write(&path, "from-a-file\n").expect("write");
        let c = smtp(
            &[
                ("SMTP_HOST", "mail.firma.sk"),
                ("SMTP_FROM", "noreply@firma.sk"),
                ("SMTP_USERNAME", "invex"),
                ("SMTP_PASSWORD_FILE", path.to_str().expect("path")),
            ],
            Mode::Production,
        )
        .expect("password file");
        assert_eq!(
            c.resolve_password().expect("read").as_deref(),
            Some("from-a-file")
        );
        std::fs::write(&path, "").expect("write");
        assert!(c.resolve_password().is_err());
        let mut missing = c.clone();
        missing.password_file = Some(dir.path().join("none"));
        let err = super::super::Mailer::from_config(&missing, Mode::Production)
            .expect_err("no such file")
            .to_string();
        assert!(err.contains("cannot read"), "{err}");
    }
}
