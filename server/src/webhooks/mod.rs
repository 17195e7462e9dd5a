//! Webhooks (Standard Webhooks): tenants register endpoints for event types; the server
//! emits events into a durable queue in the database and a background worker delivers
//! them signed, retrying with backoff and logging every attempt.
//!
//! To emit from elsewhere in the server (inside the business transaction when there is
//! one): `webhooks::emit(&mut *tx, tenant_id, EventType::InvoiceDelivered, Some(corr), data)`,
//! or [`emit_now`] with the store outside a transaction. After committing a transaction
//! that emitted, call [`worker::wake`] so delivery starts at once rather than at the next
//! poll.

pub mod config;
pub mod events;
pub mod signing;
pub mod worker;

use std::net::IpAddr;

pub use config::WebhooksConfig;
pub use events::{emit, Emitted, EventType};
pub use worker::WorkerHandle;

use crate::config::Mode;
use crate::store::{Store, StoreError};

/// [`emit`] in a transaction of its own.
pub async fn emit_now(
    store: &Store,
    tenant_id: &str,
    event_type: EventType,
    correlation_id: Option<&str>,
    data: serde_json::Value,
) -> Result<Emitted, StoreError> {
    let mut tx = store.pool().begin().await?;
    let emitted = emit(&mut tx, tenant_id, event_type, correlation_id, data).await?;
    tx.commit().await?;
    worker::wake();
    Ok(emitted)
}

/// Longest endpoint URL accepted.
pub const MAX_URL_LEN: usize = 2000;

/// Why an endpoint URL is refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`url` is not an absolute URL: {0}")]
    Malformed(String),
    #[error("`url` is longer than {MAX_URL_LEN} characters")]
    TooLong,
    #[error("`url` must use https (http is accepted only for loopback hosts in the sandbox, or when `webhooks.allow_http` is set)")]
    NotHttps,
    #[error("`url` must not carry credentials or a fragment")]
    Credentials,
    #[error("`url` names a loopback, private or link-local address, which production does not call (set `webhooks.allow_http` for private networks)")]
    PrivateAddress,
}

/// Check an endpoint URL: `https://` always; `http://` only to loopback hosts in the
/// sandbox (local development) or anywhere when `allow_http` is configured. Signed payloads
/// in clear over the internet would expose invoice data, so production wants TLS.
///
/// In production (without `allow_http`) literal loopback, private and link-local addresses
/// are refused too, so that a tenant cannot point the server at its own network (cloud
/// metadata services and the like). Host names are not resolved here: names that resolve
/// to such addresses are not caught (no protection against DNS rebinding).
pub fn check_url(raw: &str, mode: Mode, allow_http: bool) -> Result<String, UrlError> {
    let raw = raw.trim();
    if raw.len() > MAX_URL_LEN {
        return Err(UrlError::TooLong);
    }
    let url = reqwest::Url::parse(raw).map_err(|e| UrlError::Malformed(e.to_string()))?;
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(UrlError::Credentials);
    }
    let host = url.host_str().unwrap_or_default();
    if host.is_empty() {
        return Err(UrlError::Malformed("no host".into()));
    }
    if mode == Mode::Production && !allow_http && is_internal(host) {
        return Err(UrlError::PrivateAddress);
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_http => {}
        "http" if mode == Mode::Sandbox && is_loopback(host) => {}
        _ => return Err(UrlError::NotHttps),
    }
    Ok(url.to_string())
}

/// A literal address that is not on the public internet.
fn is_internal(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => {
            ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
                || ip.is_multicast()
                // 100.64.0.0/10, carrier-grade NAT
                || (ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64)
        }
        Ok(IpAddr::V6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_multicast()
                // fc00::/7 unique local, fe80::/10 link-local
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || ip.to_ipv4_mapped().is_some_and(|v4| is_internal(&v4.to_string()))
        }
        Err(_) => false,
    }
}

fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<IpAddr>()
            .map(|ip| ip.is_loopback())
            .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_need_https_except_loopback_in_the_sandbox() {
        let ok = |u, m, a| check_url(u, m, a).is_ok();
        assert!(ok("https://erp.example.com/hooks", Mode::Production, false));
        assert!(!ok("http://erp.example.com/hooks", Mode::Production, false));
        assert!(!ok("http://127.0.0.1:9000/h", Mode::Production, false));
        assert!(ok("http://127.0.0.1:9000/h", Mode::Sandbox, false));
        assert!(ok("http://[::1]:9000/h", Mode::Sandbox, false));
        assert!(ok("http://localhost/h", Mode::Sandbox, false));
        assert!(!ok("http://10.0.0.1/h", Mode::Sandbox, false));
        assert!(ok("http://10.0.0.1/h", Mode::Production, true));
        assert!(!ok("ftp://x.example/h", Mode::Production, true));
        assert!(!ok("https://u:p@x.example/h", Mode::Production, false));
        assert!(!ok("not a url", Mode::Sandbox, false));
        for internal in [
            "https://127.0.0.1/h",
            "https://10.1.2.3/h",
            "https://169.254.169.254/latest",
            "https://192.168.0.1/h",
            "https://[::1]/h",
            "https://[fd00::1]/h",
            "https://[::ffff:10.0.0.1]/h",
            "https://localhost/h",
        ] {
            assert_eq!(
                check_url(internal, Mode::Production, false),
                Err(UrlError::PrivateAddress),
                "{internal}"
            );
            assert!(ok(internal, Mode::Production, true), "{internal}");
        }
        assert!(ok("https://93.184.215.14/h", Mode::Production, false));
    }
}
