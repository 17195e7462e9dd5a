//! The vocabulary every configuration section shares: the run mode, how a setting's text is
//! read, and how a configuration that cannot be used is reported.
//!
//! The sections themselves live with their capabilities (`vat::config`, `mail::config`,
//! ...); `config` composes them into the server's configuration. Everything here is neutral:
//! it depends on no section and no section's module.

use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Sandbox answers locally and marks every answer; production talks to real registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Sandbox,
    Production,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sandbox => "sandbox",
            Mode::Production => "production",
        }
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sandbox" => Ok(Mode::Sandbox),
            "production" => Ok(Mode::Production),
            other => Err(format!("unknown mode `{other}` (sandbox, production)")),
        }
    }
}

/// Why the configuration cannot be used: a file that cannot be read, a file that is not
/// TOML, a variable or a setting with a wrong value. Every message names the file, the
/// variable or the setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Toml {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("environment variable {name}: {message}")]
    Env { name: String, message: String },
    #[error("{setting}: {message}")]
    Invalid {
        setting: &'static str,
        message: String,
    },
}

/// A setting's value from its text (for every `apply_env` of the configuration).
pub(crate) fn parse<T: FromStr>(value: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    value.trim().parse().map_err(|e| format!("`{value}`: {e}"))
}

/// A comma-separated list of networks (`10.0.0.0/8`) or single addresses (`::1`).
pub fn parse_networks(value: &str) -> Result<Vec<ipnet::IpNet>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<ipnet::IpNet>()
                .or_else(|_| v.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| format!("`{v}` is neither an address nor a network (10.0.0.0/8)"))
        })
        .collect()
}

pub(crate) fn parse_bool(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!("`{other}` is not a boolean (true, false)")),
    }
}
