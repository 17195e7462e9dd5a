//! Request limits (`[limits]`; `INVEX_MAX_*`, `INVEX_RATE_*` and
//! `INVEX_AUTH_FAILURES_PER_MINUTE` in the environment).

use serde::{Deserialize, Serialize};

/// Request limits. Every one is published in the OpenAPI description and answered with
/// a problem naming the limit when exceeded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest request body in bytes (a 10,000-line invoice is about 15 MB).
    pub max_body_bytes: usize,
    /// Most files in one multipart validation request.
    pub max_files: usize,
    /// Deepest element nesting accepted in an XML document.
    pub max_xml_depth: usize,
    /// Findings listed in one validation result; beyond, they are counted (`omitted`).
    pub max_findings: usize,
    /// Sustained requests per second allowed per API key.
    pub rate_per_second: u32,
    /// Requests a key may send in a burst above the sustained rate.
    pub rate_burst: u32,
    /// Failed authentications (and lookups of keys this instance does not know) allowed per
    /// client address and per key prefix per minute, in bursts of as many; then 429.
    pub auth_failures_per_minute: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 20 * 1024 * 1024,
            max_files: 50,
            max_xml_depth: 128,
            max_findings: 10_000,
            rate_per_second: 200,
            rate_burst: 400,
            auth_failures_per_minute: 30,
        }
    }
}
