//! The HTTP client the OpenID library calls providers through. A tenant's administrator
//! names the provider, so its URLs are untrusted: the same address rules as webhooks apply
//! (no loopback, private or other special-purpose address unless the operator allows a
//! network; names resolved and checked by the resolver the client connects with), no
//! redirects, no proxy, a timeout, and answers read up to a bound.

use std::sync::Arc;
use std::time::Duration;

use openidconnect::{HttpRequest, HttpResponse};

use super::SsoConfig;
use crate::settings::Mode;
use crate::webhooks::target::{CheckedResolver, TargetPolicy};

/// Largest answer read from a provider (discovery documents and key sets are a few KiB).
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("the provider's address is refused: {0}")]
    Refused(String),
    #[error("{0}")]
    Http(String),
    #[error("the provider's answer is larger than {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
}

/// A checked client for providers.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    policy: Arc<TargetPolicy>,
}

impl Fetcher {
    pub fn new(mode: Mode, config: &SsoConfig) -> Result<Fetcher, FetchError> {
        let timeout = Duration::from_millis(config.timeout_ms.max(1));
        let policy = Arc::new(TargetPolicy::new(
            mode,
            config.allow_http,
            config.allowed_networks.clone().unwrap_or_default(),
        ));
        let resolver = CheckedResolver::new(config.dns_server, timeout, policy.clone())
            .map_err(|e| FetchError::Http(e.to_string()))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .user_agent(concat!("invex-sso/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FetchError::Http(e.to_string()))?;
        Ok(Fetcher { client, policy })
    }

    /// The address rules issuers are checked against when saved.
    pub fn policy(&self) -> &TargetPolicy {
        &self.policy
    }

    /// One request of the OpenID library.
    pub async fn call(&self, request: HttpRequest) -> Result<HttpResponse, FetchError> {
        let url = request.uri().to_string();
        // Literal addresses never reach the resolver: checked here.
        self.policy
            .check_delivery(&url)
            .map_err(|e| FetchError::Refused(e.to_string()))?;
        let (parts, body) = request.into_parts();
        let mut builder = self.client.request(parts.method, &url);
        for (name, value) in &parts.headers {
            builder = builder.header(name, value);
        }
        let mut answer =
            builder.body(body).send().await.map_err(
                |e| match crate::webhooks::target::refusal_in(&e) {
                    Some(r) => FetchError::Refused(r.to_string()),
                    None => FetchError::Http(chain(&e)),
                },
            )?;
        let mut response = http_response(answer.status(), answer.headers());
        let mut body = Vec::new();
        while let Some(chunk) = answer
            .chunk()
            .await
            .map_err(|e| FetchError::Http(chain(&e)))?
        {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        *response.body_mut() = body;
        Ok(response)
    }
}

fn http_response(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> HttpResponse {
    let mut response = HttpResponse::new(Vec::new());
    *response.status_mut() = status;
    *response.headers_mut() = headers.clone();
    response
}

/// An error with its causes, for the log and the page ("connection refused" is in a cause).
pub(super) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
