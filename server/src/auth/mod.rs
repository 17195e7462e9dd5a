//! Authentication (one header per route family), roles, and per-key rate limits.

pub mod client;
pub mod keys;
pub mod roles;
pub mod throttle;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

pub use roles::{Role, ALL_ROLES};
use throttle::{FailureThrottle, Throttled};

use crate::limits::Limits;
use crate::problem::Problem;
use crate::settings::Mode;
use crate::state::AppState;
use crate::store::{KeyRecord, Store, StoreError, TenantKind, OPERATOR_TENANT_ID};

pub static X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");

/// The placeholder key the sandbox's VAT route accepts (and production never does).
pub const SANDBOX_PLACEHOLDER_KEY: &str = "sandbox";

/// A route family and the header it takes the key in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `/api/*`: `Authorization: Bearer <key>`.
    Api,
    /// `/v1/*` and `/v2/*`: `X-API-Key: <key>`.
    Versioned,
}

impl Family {
    pub fn expects(self) -> &'static str {
        match self {
            Family::Api => "`Authorization: Bearer <key>`",
            Family::Versioned => "the `X-API-Key: <key>` header",
        }
    }
}

/// Who may call a route.
#[derive(Clone, Copy, Debug)]
pub enum Access {
    /// No key (health, metrics, the API description).
    Public,
    /// A key with one of these roles.
    Roles(&'static [Role]),
    /// In sandbox mode also without a key or with the placeholder key; otherwise `Roles`.
    SandboxOpen(&'static [Role]),
}

impl Access {
    pub fn roles(self) -> &'static [Role] {
        match self {
            Access::Public => &[],
            Access::Roles(r) | Access::SandboxOpen(r) => r,
        }
    }
}

/// The authenticated caller, in the request's extensions.
#[derive(Clone, Debug)]
pub struct Principal {
    pub tenant_id: String,
    pub tenant_kind: TenantKind,
    pub role: Role,
    /// None for the sandbox's anonymous caller.
    pub key_id: Option<String>,
}

impl Principal {
    /// The anonymous sandbox caller (open sandbox routes only).
    pub fn sandbox_anonymous() -> Principal {
        Principal {
            tenant_id: SANDBOX_TENANT_ID.to_string(),
            tenant_kind: TenantKind::Customer,
            role: Role::Developer,
            key_id: None,
        }
    }

    pub fn is_anonymous(&self) -> bool {
        self.key_id.is_none()
    }
}

/// The tenant anonymous sandbox calls are counted under.
pub const SANDBOX_TENANT_ID: &str = "ten_sandbox_anonymous";

/// Key records are cached briefly so a busy client costs no database round trip per
/// request. A revocation through this instance takes effect at once; through another
/// instance sharing the database, within this time.
const KEY_CACHE_TTL: Duration = Duration::from_secs(5);
/// After that, a prefix read from the database stays known (its record is read again
/// before use, without counting against the failure budgets) for this long.
pub const KNOWN_KEY_TTL: Duration = Duration::from_secs(24 * 3600);
const KEY_CACHE_MAX: usize = 10_000;

/// A key record as read from the database.
struct Cached {
    record: KeyRecord,
    read_at: Instant,
    /// Must be read again before use (revoked through this instance).
    stale: bool,
}

/// What this instance knows of a prefix.
enum Known {
    /// Read within [`KEY_CACHE_TTL`]: checked without the database.
    Fresh(KeyRecord),
    /// Read within [`KNOWN_KEY_TTL`]: the key exists (or existed); read it again.
    Existing,
    Unknown,
}

pub struct Authenticator {
    store: Store,
    cache: Mutex<HashMap<String, Cached>>,
    limiter: DefaultKeyedRateLimiter<String>,
    failures: FailureThrottle,
}

#[derive(Debug)]
pub enum AuthFailure {
    UnknownKey,
    Revoked,
    /// Too many failed attempts from the client's address or at the key's prefix.
    Throttled(Throttled),
    Store(StoreError),
}

impl Authenticator {
    pub fn new(store: Store, limits: &Limits) -> Authenticator {
        let rate = NonZeroU32::new(limits.rate_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(limits.rate_burst.max(limits.rate_per_second).max(1))
            .unwrap_or(NonZeroU32::MIN);
        Authenticator {
            store,
            cache: Mutex::new(HashMap::new()),
            limiter: DefaultKeyedRateLimiter::keyed(Quota::per_second(rate).allow_burst(burst)),
            failures: FailureThrottle::new(limits.auth_failures_per_minute),
        }
    }

    /// Failed authentications allowed per client address and per key prefix per minute.
    pub fn failures_per_minute(&self) -> u32 {
        self.failures.per_minute()
    }

    /// The caller holding `key`, presented from `client`. A database lookup of a prefix this
    /// instance does not know, and every refusal, count against the failure budgets of the
    /// client's address and of the prefix; once one is spent, such requests are refused
    /// before any lookup. A valid key already known is checked from memory and always
    /// accepted (see `throttle`).
    pub async fn verify(
        &self,
        key: &str,
        client: Option<IpAddr>,
    ) -> Result<Principal, AuthFailure> {
        let prefix = keys::lookup_prefix(key);
        let mut charged = false;
        let record = match self.known(&prefix) {
            Known::Fresh(r) => Some(r),
            Known::Existing => self.read(&prefix).await?,
            Known::Unknown => {
                self.failures
                    .charge(client, &prefix)
                    .map_err(AuthFailure::Throttled)?;
                charged = true;
                self.read(&prefix).await?
            }
        };
        let verdict = match record {
            None => Err(AuthFailure::UnknownKey),
            Some(r) if !keys::matches(key, &r.hash) => Err(AuthFailure::UnknownKey),
            Some(r) if r.revoked_at.is_some() => Err(AuthFailure::Revoked),
            Some(r) => principal(r),
        };
        match verdict {
            Err(refusal) if !charged => {
                self.failures
                    .charge(client, &prefix)
                    .map_err(AuthFailure::Throttled)?;
                Err(refusal)
            }
            other => other,
        }
    }

    /// The key record of `prefix` from the database, remembered when there is one.
    async fn read(&self, prefix: &str) -> Result<Option<KeyRecord>, AuthFailure> {
        let found = self
            .store
            .key_by_prefix(prefix)
            .await
            .map_err(AuthFailure::Store)?;
        if let Some(record) = &found {
            self.remember(record.clone());
        }
        Ok(found)
    }

    fn known(&self, prefix: &str) -> Known {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        match cache.get(prefix) {
            Some(c) if !c.stale && c.read_at.elapsed() < KEY_CACHE_TTL => {
                Known::Fresh(c.record.clone())
            }
            Some(c) if c.read_at.elapsed() < KNOWN_KEY_TTL => Known::Existing,
            _ => Known::Unknown,
        }
    }

    /// Keep a key record read from (or just written to) the database.
    pub fn remember(&self, record: KeyRecord) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= KEY_CACHE_MAX && !cache.contains_key(&record.prefix) {
            cache.retain(|_, c| c.read_at.elapsed() < KNOWN_KEY_TTL);
            if cache.len() >= KEY_CACHE_MAX {
                cache.retain(|_, c| c.read_at.elapsed() < KEY_CACHE_TTL);
            }
            if cache.len() >= KEY_CACHE_MAX {
                return;
            }
        }
        cache.insert(
            record.prefix.clone(),
            Cached {
                record,
                read_at: Instant::now(),
                stale: false,
            },
        );
    }

    /// Read a key again before its next use (after revoking it).
    pub fn forget(&self, key_id: &str) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for c in cache.values_mut().filter(|c| c.record.id == key_id) {
            c.stale = true;
        }
    }

    /// Take one request from `who`'s allowance; the wait when there is none left.
    pub fn rate_check(&self, who: &str) -> Result<(), Duration> {
        let who = who.to_string();
        self.limiter
            .check_key(&who)
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Drop rate-limit and failure-budget state of keys, addresses and prefixes idle long
    /// enough to have a full allowance again, and key records no longer known.
    pub fn prune(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
        self.failures.prune();
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.retain(|_, c| c.read_at.elapsed() < KNOWN_KEY_TTL);
    }
}

fn principal(record: KeyRecord) -> Result<Principal, AuthFailure> {
    let role = Role::parse(&record.role).ok_or(AuthFailure::UnknownKey)?;
    Ok(Principal {
        tenant_kind: if record.tenant_id == OPERATOR_TENANT_ID {
            TenantKind::Operator
        } else {
            TenantKind::Customer
        },
        tenant_id: record.tenant_id,
        role,
        key_id: Some(record.id),
    })
}

/// The state of one route's authentication layer.
#[derive(Clone)]
pub struct Gate {
    pub state: AppState,
    pub family: Family,
    pub access: Access,
    pub method: axum::http::Method,
    pub path: std::sync::Arc<str>,
}

fn unauthorized(slug: &'static str, family: Family, detail: String) -> Problem {
    let challenge = match family {
        Family::Api => "Bearer realm=\"invex\"",
        Family::Versioned => "ApiKey realm=\"invex\", header=\"X-API-Key\"",
    };
    Problem::new(StatusCode::UNAUTHORIZED, slug, "Unauthorized", detail)
        .with("expected_header", family.expects())
        .header(header::WWW_AUTHENTICATE, challenge)
}

/// 429 once a failure budget is spent: the key was not looked up.
fn throttled(t: Throttled, per_minute: u32) -> Problem {
    let seconds = t.retry_after.as_secs() + u64::from(t.retry_after.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let whose = match t.scope {
        throttle::Scope::Address => "from this address",
        throttle::Scope::KeyPrefix => "with this key prefix",
    };
    Problem::new(
        StatusCode::TOO_MANY_REQUESTS,
        "too-many-failed-authentications",
        "Too many failed authentications",
        format!(
            "more than {per_minute} requests a minute {whose} presented unknown or revoked keys; \
             retry in {seconds} s"
        ),
    )
    .with("scope", t.scope.as_str())
    .with("retry_after_seconds", seconds)
    .header(header::RETRY_AFTER, &seconds.to_string())
}

/// The key a request carries, in the header of its family; a key in the other family's
/// header is refused with a problem that says which header to use.
fn presented_key(family: Family, headers: &HeaderMap) -> Result<Option<String>, Problem> {
    let text = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    match family {
        Family::Api => match text(&header::AUTHORIZATION) {
            Some(value) => {
                let (scheme, key) = value.trim().split_once(' ').unwrap_or((value, ""));
                if !scheme.eq_ignore_ascii_case("bearer") || key.trim().is_empty() {
                    return Err(unauthorized(
                        "malformed-authorization",
                        family,
                        "/api routes take the key as `Authorization: Bearer <key>`".into(),
                    ));
                }
                Ok(Some(key.trim().to_string()))
            }
            None if headers.contains_key(&X_API_KEY) => Err(unauthorized(
                "wrong-auth-header",
                family,
                "/api routes take the key in `Authorization: Bearer <key>`, not in X-API-Key \
                 (X-API-Key is for /v1)"
                    .into(),
            )),
            None => Ok(None),
        },
        Family::Versioned => match text(&X_API_KEY) {
            Some(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
            Some(_) => Err(unauthorized(
                "missing-credentials",
                family,
                "the X-API-Key header is empty".into(),
            )),
            None if headers.contains_key(header::AUTHORIZATION) => Err(unauthorized(
                "wrong-auth-header",
                family,
                "versioned routes (/v1, /v2) take the key in the `X-API-Key` header, not in \
                 Authorization (Bearer is for /api)"
                    .into(),
            )),
            None => Ok(None),
        },
    }
}

/// Authenticate, authorise and rate-limit one request of a route.
pub async fn authenticate(
    State(gate): State<Gate>,
    mut request: Request,
    next: Next,
) -> Result<Response, Problem> {
    let state = &gate.state;
    let sandbox_open =
        matches!(gate.access, Access::SandboxOpen(_)) && state.config.mode == Mode::Sandbox;
    let key = presented_key(gate.family, request.headers())?;
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let client = client::client_address(peer, request.headers(), &state.config.trusted_proxies);
    let principal = match key.as_deref() {
        None if sandbox_open => Principal::sandbox_anonymous(),
        Some(SANDBOX_PLACEHOLDER_KEY) if sandbox_open => Principal::sandbox_anonymous(),
        None => {
            return Err(unauthorized(
                "missing-credentials",
                gate.family,
                format!(
                    "{} {} needs an API key in {}",
                    gate.method,
                    gate.path,
                    gate.family.expects()
                ),
            ))
        }
        Some(SANDBOX_PLACEHOLDER_KEY) => {
            return Err(unauthorized(
                "invalid-key",
                gate.family,
                match state.config.mode {
                    Mode::Production => {
                        "the placeholder key `sandbox` is never accepted in production".into()
                    }
                    Mode::Sandbox => {
                        "the placeholder key `sandbox` is accepted only by GET /v1/vat/verify"
                            .into()
                    }
                },
            ))
        }
        Some(key) => match state.auth.verify(key, client).await {
            Ok(p) => p,
            Err(AuthFailure::UnknownKey) => {
                return Err(unauthorized(
                    "invalid-key",
                    gate.family,
                    "the API key is not known".into(),
                ))
            }
            Err(AuthFailure::Revoked) => {
                return Err(unauthorized(
                    "revoked-key",
                    gate.family,
                    "the API key has been revoked".into(),
                ))
            }
            Err(AuthFailure::Throttled(t)) => {
                state.metrics.auth_throttled(t.scope.as_str());
                tracing::warn!(client = ?client, scope = t.scope.as_str(), "failed authentications throttled");
                return Err(throttled(t, state.auth.failures_per_minute()));
            }
            Err(AuthFailure::Store(e)) => return Err(e.into()),
        },
    };
    let allowed = gate.access.roles();
    if !principal.is_anonymous() && !allowed.contains(&principal.role) {
        let names: Vec<&str> = allowed.iter().map(|r| r.as_str()).collect();
        return Err(Problem::forbidden(format!(
            "the role `{}` may not call {} {}; allowed roles: {}",
            principal.role.as_str(),
            gate.method,
            gate.path,
            names.join(", ")
        ))
        .with("role", principal.role.as_str())
        .with("allowed_roles", names));
    }
    let who = match &principal.key_id {
        Some(id) => id.clone(),
        None => format!(
            "anonymous:{}",
            client.map(|ip| ip.to_string()).unwrap_or_default()
        ),
    };
    if let Err(wait) = state.auth.rate_check(&who) {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let seconds = seconds.max(1);
        return Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate-limited",
            "Too many requests",
            format!(
                "this key may send {} requests per second (bursts up to {}); retry in {seconds} s",
                state.config.limits.rate_per_second, state.config.limits.rate_burst
            ),
        )
        .with("retry_after_seconds", seconds)
        .header(header::RETRY_AFTER, &seconds.to_string()));
    }
    request.extensions_mut().insert(principal);
    Ok(next.run(request).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(list: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in list {
            h.insert(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    fn key_record(key: &str, tenant: &str) -> KeyRecord {
        KeyRecord {
            id: crate::ids::new_id("key"),
            tenant_id: tenant.to_string(),
            name: "test".into(),
            role: "developer".into(),
            prefix: keys::lookup_prefix(key),
            hash: keys::hash(key),
            created_at: crate::clock::now(),
            revoked_at: None,
        }
    }

    #[tokio::test]
    async fn throttled_attempts_make_no_lookup_and_known_keys_need_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("a.db").display());
        let store = Store::connect(&url).await.expect("store");
        let valid = keys::generate();
        store
            .bootstrap(&key_record(&valid, OPERATOR_TENANT_ID))
            .await
            .expect("bootstrap");
        let limits = Limits {
            auth_failures_per_minute: 3,
            ..Limits::default()
        };
        let auth = Authenticator::new(store.clone(), &limits);
        let client = Some(IpAddr::from([192, 0, 2, 1]));
        // The first use of a key this instance does not know yet costs a lookup, counted.
        assert!(auth.verify(&valid, client).await.is_ok());
        for _ in 0..2 {
            let failure = auth.verify(&keys::generate(), client).await;
            assert!(
                matches!(failure, Err(AuthFailure::UnknownKey)),
                "{failure:?}"
            );
        }
        // Without a database, a lookup would fail: the answers below come from memory.
        store.close().await;
        let failure = auth.verify(&keys::generate(), client).await;
        assert!(
            matches!(failure, Err(AuthFailure::Throttled(t)) if t.scope == throttle::Scope::Address),
            "{failure:?}"
        );
        assert!(auth.verify(&valid, client).await.is_ok());
        // A wrong key at the valid key's prefix is refused from memory, and counted.
        let wrong = format!("{}_{}", &valid[..16], "B".repeat(43));
        assert!(matches!(
            auth.verify(&wrong, client).await,
            Err(AuthFailure::Throttled(_))
        ));
    }

    #[test]
    fn each_family_reads_its_own_header() {
        let api = presented_key(Family::Api, &headers(&[("authorization", "Bearer abc")]));
        assert_eq!(api.expect("ok").as_deref(), Some("abc"));
        let v1 = presented_key(Family::Versioned, &headers(&[("x-api-key", "abc")]));
        assert_eq!(v1.expect("ok").as_deref(), Some("abc"));
        assert_eq!(
            presented_key(Family::Api, &HeaderMap::new()).expect("ok"),
            None
        );
    }

    #[test]
    fn the_other_familys_header_is_named_in_the_refusal() {
        let e = presented_key(Family::Api, &headers(&[("x-api-key", "abc")])).expect_err("wrong");
        assert_eq!(e.slug, "wrong-auth-header");
        assert!(e.detail.contains("Authorization: Bearer"), "{}", e.detail);
        let e = presented_key(
            Family::Versioned,
            &headers(&[("authorization", "Bearer abc")]),
        )
        .expect_err("wrong");
        assert_eq!(e.slug, "wrong-auth-header");
        assert!(e.detail.contains("X-API-Key"), "{}", e.detail);
        let e = presented_key(Family::Api, &headers(&[("authorization", "Basic abc")]))
            .expect_err("basic");
        assert_eq!(e.slug, "malformed-authorization");
    }
}
