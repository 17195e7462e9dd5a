//! `[sftp]` configuration and its `INVEX_SFTP_*` variables.

use serde::{Deserialize, Serialize};

use crate::settings::{parse, parse_bool, Mode};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SftpConfig {
    /// Serve SFTP drop folders. Unset: on in the sandbox, off in production.
    pub enabled: Option<bool>,
    /// Where to listen (its own port, apart from HTTP).
    pub bind: String,
    /// The host key (OpenSSH private key file). Unset: one made on first start and kept in
    /// the database, shared by every instance on it.
    pub host_key_file: Option<String>,
    /// Sessions at once (further connections are refused until one ends).
    pub max_sessions: usize,
    /// A session idle this long is closed, in seconds.
    pub idle_timeout_secs: u64,
    /// Files listed per folder (the newest).
    pub max_listed: i64,
}

impl Default for SftpConfig {
    fn default() -> Self {
        SftpConfig {
            enabled: None,
            bind: "127.0.0.1:2222".into(),
            host_key_file: None,
            max_sessions: 64,
            idle_timeout_secs: 600,
            max_listed: 1000,
        }
    }
}

impl SftpConfig {
    /// Whether the SFTP server runs in `mode`.
    pub fn on(&self, mode: Mode) -> bool {
        self.enabled.unwrap_or(mode == Mode::Sandbox)
    }

    /// Apply one `INVEX_SFTP_*` variable (`key` without the `INVEX_` prefix).
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "SFTP_ENABLED" => self.enabled = Some(parse_bool(&value)?),
            "SFTP_BIND" => self.bind = value,
            "SFTP_HOST_KEY_FILE" => self.host_key_file = Some(value),
            "SFTP_MAX_SESSIONS" => self.max_sessions = parse(&value)?,
            "SFTP_IDLE_TIMEOUT_SECS" => self.idle_timeout_secs = parse(&value)?,
            "SFTP_MAX_LISTED" => self.max_listed = parse(&value)?,
            other => return Err(format!("unknown variable INVEX_{other}")),
        }
        Ok(())
    }
}
