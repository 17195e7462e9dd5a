//! Connections to delivery partners: which partners a mode offers, what an `http` partner
//! needs (an https API root, or loopback http in the sandbox, and a key), creating one
//! (`pending`) and activating it. One implementation for the API and the console.

use crate::settings::Mode;
use crate::store::{ConnectionRecord, Store, StoreError};

use super::partner::HttpSettings;

/// The partners a tenant may connect to in `mode`.
pub fn partners(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Sandbox => &["sandbox", "http"],
        Mode::Production => &["http"],
    }
}

/// Why a connection cannot be made; each names the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    #[error(
        "partner `{partner}` is not available in {environment} mode; available: [{available}]"
    )]
    UnknownPartner {
        partner: String,
        environment: &'static str,
        available: String,
    },
    #[error("an http partner needs its API root")]
    NoBaseUrl,
    #[error("an http partner needs an API key")]
    NoApiKey,
    #[error("not a URL: {0}")]
    BadUrl(String),
    #[error("the partner's API must be https (http only to loopback in the sandbox)")]
    InsecureUrl,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ConnectionError {
    /// The request field the error is about, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ConnectionError::UnknownPartner { .. } => Some("partner"),
            ConnectionError::NoBaseUrl
            | ConnectionError::BadUrl(_)
            | ConnectionError::InsecureUrl => Some("base_url"),
            ConnectionError::NoApiKey => Some("api_key"),
            ConnectionError::Store(_) => None,
        }
    }
}

/// What a new connection asks for.
pub struct NewConnection {
    pub partner: String,
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub api_key: Option<String>,
}

fn http_settings(
    mode: Mode,
    base_url: Option<String>,
    api_key: Option<String>,
) -> Result<HttpSettings, ConnectionError> {
    let base_url = base_url
        .filter(|u| !u.trim().is_empty())
        .ok_or(ConnectionError::NoBaseUrl)?;
    let api_key = api_key
        .filter(|k| !k.trim().is_empty())
        .ok_or(ConnectionError::NoApiKey)?;
    let url = reqwest::Url::parse(&base_url).map_err(|e| ConnectionError::BadUrl(e.to_string()))?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    let allowed =
        url.scheme() == "https" || (url.scheme() == "http" && loopback && mode == Mode::Sandbox);
    if !allowed {
        return Err(ConnectionError::InsecureUrl);
    }
    Ok(HttpSettings { base_url, api_key })
}

/// Store a new `pending` connection of `tenant_id`; for an `http` partner with a callback
/// secret (returned once, with the record).
pub async fn create(
    store: &Store,
    mode: Mode,
    environment: &'static str,
    tenant_id: &str,
    new: NewConnection,
) -> Result<ConnectionRecord, ConnectionError> {
    let available = partners(mode);
    if !available.contains(&new.partner.as_str()) {
        return Err(ConnectionError::UnknownPartner {
            partner: new.partner,
            environment,
            available: available.join(", "),
        });
    }
    let (settings, callback_secret) = if new.partner == "http" {
        let settings = http_settings(mode, new.base_url, new.api_key)?;
        (
            Some(serde_json::to_string(&settings).unwrap_or_default()),
            Some(crate::webhooks::signing::generate_secret()),
        )
    } else {
        (None, None)
    };
    let name = new
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("{} connection", new.partner));
    let record = ConnectionRecord {
        id: crate::ids::new_id("con"),
        tenant_id: tenant_id.to_string(),
        partner: new.partner,
        name,
        status: "pending".into(),
        created_at: crate::clock::now(),
        activated_at: None,
        settings,
        callback_secret,
    };
    store.insert_connection(&record).await?;
    Ok(record)
}

/// What activating a connection did.
#[derive(Debug)]
pub enum Activation {
    /// Active now.
    Activated(ConnectionRecord),
    /// It was active already.
    AlreadyActive(ConnectionRecord),
    /// No such connection in this tenant.
    NotFound,
}

/// Activate a connection of `tenant_id`: sends go through it from now on.
pub async fn activate(store: &Store, tenant_id: &str, id: &str) -> Result<Activation, StoreError> {
    let activated = store
        .activate_connection(tenant_id, id, &crate::clock::now())
        .await?;
    Ok(match store.connection(tenant_id, id).await? {
        None => Activation::NotFound,
        Some(c) if activated => Activation::Activated(c),
        Some(c) => Activation::AlreadyActive(c),
    })
}
