//! The authorization code flow with PKCE (OpenID Connect Core §3.1, RFC 7636), as the
//! relying party runs it:
//!
//! 1. [`SingleSignOn::start`]: read the provider's discovery document (cached), keep a
//!    random `state`'s hash with a nonce and a PKCE verifier for a few minutes, and answer
//!    the provider's authorization URL. The browser carries `state` there and, in a cookie,
//!    back: a callback is taken only in the browser that started it.
//! 2. [`SingleSignOn::finish`]: the callback's `state` must equal the cookie's and name an
//!    unused, unexpired sign-in (used here, once); an `iss` parameter must be the tenant's
//!    issuer (RFC 9207, against mix-up); the code is exchanged with the verifier; the ID
//!    token must be signed by a key of the provider's key set with an asymmetric algorithm,
//!    issued by the issuer for this client, unexpired, and carry the nonce. Claims missing
//!    from the ID token are taken from the userinfo endpoint (whose `sub` must match).
//!
//! What the caller gets is an [`Identity`]: who the provider says the person is, with the
//! role the tenant's map gives them.

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::Utc;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreJwsSigningAlgorithm,
    CoreProviderMetadata,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClaimsVerificationError, ClientId, ClientSecret,
    CsrfToken, HttpRequest, IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::http::{FetchError, Fetcher};
use super::settings::SsoSettings;
use super::{roles, SsoConfig};
use crate::auth::Role;
use crate::clock;
use crate::people::token;
use crate::settings::Mode;
use crate::store::{SsoAttempt, SsoRecord, Store, StoreError};

/// The signature algorithms an ID token may use: asymmetric ones only. (`none` never; the
/// HMAC ones would make the client secret a signing key, which the tenant's administrator
/// and the server both hold.)
const ALGORITHMS: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// Why a sign-in could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("no tenant signs in through an OpenID provider with this e-mail domain")]
    UnknownDomain,
    #[error("the tenant has no OpenID provider configured")]
    NotConfigured,
    #[error("the sign-in was not started in this browser")]
    StateMismatch,
    #[error("the sign-in is unknown, used or expired; start again")]
    AttemptGone,
    #[error("the provider refused the sign-in: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Provider {
        error: String,
        description: Option<String>,
    },
    #[error("the answer names the issuer `{0}`, not the tenant's provider")]
    IssuerMismatch(String),
    #[error("the provider cannot be reached or read: {0}")]
    Unreachable(String),
    #[error("the provider did not exchange the code: {0}")]
    Exchange(String),
    #[error("the provider's ID token is not valid: {0}")]
    IdToken(String),
    #[error("the provider's userinfo answer is not valid: {0}")]
    Userinfo(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where to send the browser, and the `state` to set in its cookie.
#[derive(Debug, Clone)]
pub struct Started {
    pub url: String,
    pub state: String,
    /// How long the sign-in may take (the cookie's lifetime).
    pub ttl: Duration,
}

/// What the provider's callback brought (its query).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Callback {
    pub state: Option<String>,
    pub code: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
    /// RFC 9207: the issuer of the answer.
    pub iss: Option<String>,
}

/// Who the provider says the person is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub tenant_id: String,
    pub issuer: String,
    pub subject: String,
    /// Lowercase, when the provider sent one.
    pub email: Option<String>,
    pub email_verified: bool,
    /// The role the tenant's map gives the person's claims; None: no account for them.
    pub role: Option<Role>,
}

/// Every claim, for the role claim (which may be any name the provider uses).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AllClaims {
    #[serde(flatten)]
    claims: Map<String, Value>,
}

impl AdditionalClaims for AllClaims {}

/// Single sign-on over the store, with a cache of providers' discovery documents.
pub struct SingleSignOn {
    pub(super) store: Store,
    fetcher: Fetcher,
    providers: moka::future::Cache<String, Arc<CoreProviderMetadata>>,
    attempt_ttl: Duration,
}

impl SingleSignOn {
    pub fn new(store: Store, mode: Mode, config: &SsoConfig) -> Result<SingleSignOn, FetchError> {
        Ok(SingleSignOn {
            store,
            fetcher: Fetcher::new(mode, config)?,
            providers: moka::future::Cache::builder()
                .max_capacity(1000)
                .time_to_live(Duration::from_secs(config.discovery_ttl_secs.max(1)))
                .build(),
            attempt_ttl: Duration::from_secs(config.attempt_ttl_secs.max(60)),
        })
    }

    /// The address rules issuers are checked against.
    pub fn policy(&self) -> &crate::webhooks::target::TargetPolicy {
        self.fetcher.policy()
    }

    /// The tenant whose provider people with this address sign in through.
    pub async fn tenant_of(&self, email: &str) -> Result<Option<String>, SsoError> {
        let Some(domain) = email
            .trim()
            .rsplit_once('@')
            .and_then(|(_, d)| super::settings::domain(d))
        else {
            return Ok(None);
        };
        Ok(self.store.sso_tenant_of_domain(&domain).await?)
    }

    /// The provider's discovery document (with its key set), from the cache unless
    /// `fresh`.
    pub async fn discover(
        &self,
        issuer: &str,
        fresh: bool,
    ) -> Result<Arc<CoreProviderMetadata>, SsoError> {
        if !fresh {
            if let Some(m) = self.providers.get(issuer).await {
                return Ok(m);
            }
        }
        let url =
            IssuerUrl::new(issuer.to_string()).map_err(|e| SsoError::Unreachable(e.to_string()))?;
        let fetcher = self.fetcher.clone();
        let http = move |request: HttpRequest| {
            let fetcher = fetcher.clone();
            async move { fetcher.call(request).await }
        };
        let metadata = CoreProviderMetadata::discover_async(url, &http)
            .await
            .map_err(|e| SsoError::Unreachable(chain(&e)))?;
        let metadata = Arc::new(metadata);
        self.providers
            .insert(issuer.to_string(), metadata.clone())
            .await;
        Ok(metadata)
    }

    /// Start a sign-in through the tenant's provider; `login_hint` is the address the
    /// person typed (the provider may fill it in).
    pub async fn start(
        &self,
        tenant_id: &str,
        redirect_uri: &str,
        login_hint: Option<&str>,
    ) -> Result<Started, SsoError> {
        let settings = self
            .store
            .sso_settings(tenant_id)
            .await?
            .ok_or(SsoError::NotConfigured)?;
        let metadata = self.discover(&settings.issuer, false).await?;
        let client = CoreClient::from_provider_metadata(
            (*metadata).clone(),
            ClientId::new(settings.client_id.clone()),
            settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(
            RedirectUrl::new(redirect_uri.to_string())
                .map_err(|e| SsoError::Unreachable(e.to_string()))?,
        );
        let state = token::new_token();
        let nonce = token::new_token();
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let now = Utc::now();
        let ttl =
            chrono::Duration::from_std(self.attempt_ttl).unwrap_or(chrono::Duration::minutes(10));
        self.store
            .insert_sso_attempt(&SsoAttempt {
                hash: token::digest(&state),
                tenant_id: tenant_id.to_string(),
                nonce: nonce.clone(),
                verifier: verifier.secret().clone(),
                created_at: clock::format(now),
                expires_at: clock::format(now + ttl),
            })
            .await?;
        let (s, n) = (state.clone(), nonce);
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                move || CsrfToken::new(s),
                move || Nonce::new(n),
            )
            .set_pkce_challenge(challenge);
        for scope in settings.scopes.split_whitespace() {
            request = request.add_scope(Scope::new(scope.to_string()));
        }
        if let Some(hint) = login_hint
            .map(str::trim)
            .filter(|h| !h.is_empty() && h.len() <= 254)
        {
            request = request.add_extra_param("login_hint", hint.to_string());
        }
        let (url, _, _) = request.url();
        Ok(Started {
            url: url.to_string(),
            state,
            ttl: self.attempt_ttl,
        })
    }

    /// Finish a sign-in: `cookie_state` is the `state` the browser's cookie carries.
    pub async fn finish(
        &self,
        cookie_state: Option<&str>,
        callback: &Callback,
        redirect_uri: &str,
    ) -> Result<Identity, SsoError> {
        let state = callback.state.as_deref().unwrap_or_default();
        let bound =
            token::well_formed(state) && cookie_state.is_some_and(|c| token::same(c, state));
        if !bound {
            return Err(SsoError::StateMismatch);
        }
        // Used now, whatever follows: a state is good for one answer.
        let attempt = self
            .store
            .take_sso_attempt(&token::digest(state), &clock::now())
            .await?
            .ok_or(SsoError::AttemptGone)?;
        if let Some(error) = &callback.error {
            return Err(SsoError::Provider {
                error: printable(error),
                description: callback.error_description.as_deref().map(printable),
            });
        }
        let settings = self
            .store
            .sso_settings(&attempt.tenant_id)
            .await?
            .ok_or(SsoError::NotConfigured)?;
        if let Some(iss) = &callback.iss {
            if iss != &settings.issuer {
                return Err(SsoError::IssuerMismatch(printable(iss)));
            }
        }
        let code = callback
            .code
            .as_deref()
            .filter(|c| !c.is_empty() && c.len() <= 4096)
            .ok_or_else(|| SsoError::Exchange("the answer carries no code".into()))?;
        self.identity(&settings, &attempt, code, redirect_uri).await
    }

    async fn identity(
        &self,
        settings: &SsoRecord,
        attempt: &SsoAttempt,
        code: &str,
        redirect_uri: &str,
    ) -> Result<Identity, SsoError> {
        let fetcher = self.fetcher.clone();
        let http = move |request: HttpRequest| {
            let fetcher = fetcher.clone();
            async move { fetcher.call(request).await }
        };
        let client_of = |metadata: &CoreProviderMetadata| -> Result<_, SsoError> {
            Ok(CoreClient::from_provider_metadata(
                metadata.clone(),
                ClientId::new(settings.client_id.clone()),
                settings.client_secret.clone().map(ClientSecret::new),
            )
            .set_redirect_uri(
                RedirectUrl::new(redirect_uri.to_string())
                    .map_err(|e| SsoError::Exchange(e.to_string()))?,
            ))
        };
        let mut metadata = self.discover(&settings.issuer, false).await?;
        let client = client_of(&metadata)?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| SsoError::Exchange(e.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(attempt.verifier.clone()))
            .request_async(&http)
            .await
            .map_err(|e| SsoError::Exchange(chain(&e)))?;
        let id_token = answer
            .extra_fields()
            .id_token()
            .ok_or_else(|| SsoError::IdToken("the answer carries no ID token".into()))?;
        let nonce = Nonce::new(attempt.nonce.clone());
        let verified = {
            let client = client_of(&metadata)?;
            let verifier = client.id_token_verifier().set_allowed_algs(ALGORITHMS);
            id_token.claims(&verifier, &nonce).cloned()
        };
        let claims = match verified {
            Ok(c) => c,
            // A key the cached set lacks: the provider may have rotated its keys.
            Err(ClaimsVerificationError::SignatureVerification(_)) => {
                metadata = self.discover(&settings.issuer, true).await?;
                let client = client_of(&metadata)?;
                let verifier = client.id_token_verifier().set_allowed_algs(ALGORITHMS);
                id_token
                    .claims(&verifier, &nonce)
                    .map_err(|e| SsoError::IdToken(chain(&e)))?
                    .clone()
            }
            Err(e) => return Err(SsoError::IdToken(chain(&e))),
        };
        let subject = claims.subject().to_string();
        // The token's whole payload, for claims of any name (its signature is checked).
        let mut all = payload(&id_token.to_string()).unwrap_or_default();
        let mut email = claims.email().map(|e| e.to_string());
        let mut email_verified = claims.email_verified();
        let missing_role = roles::values(&all, &settings.role_claim).is_empty();
        if email.is_none() || email_verified.is_none() || missing_role {
            let client = client_of(&metadata)?;
            if let Ok(request) = client.user_info(
                answer.access_token().clone(),
                Some(claims.subject().clone()),
            ) {
                let info = request
                    .request_async::<AllClaims, _, CoreGenderClaim>(&http)
                    .await
                    .map_err(|e| SsoError::Userinfo(chain(&e)))?;
                email = email.or_else(|| info.email().map(|e| e.to_string()));
                email_verified = email_verified.or(info.email_verified());
                for (k, v) in &info.additional_claims().claims {
                    all.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
        let role_map = SsoSettings::role_map_of(settings);
        let default_role = settings.default_role.as_deref().and_then(Role::parse);
        Ok(Identity {
            tenant_id: settings.tenant_id.clone(),
            issuer: settings.issuer.clone(),
            subject,
            email: email.map(|e| e.trim().to_lowercase()),
            email_verified: email_verified == Some(true),
            role: roles::role_of(&all, &settings.role_claim, &role_map, default_role),
        })
    }
}

/// The claims of a compact JWS, unverified (the caller has verified it).
fn payload(jwt: &str) -> Option<Map<String, Value>> {
    let part = jwt.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Text from a provider, made safe to show and log: printable, bounded.
fn printable(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(300).collect()
}

/// An error with its causes, printable.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    printable(&super::http::chain(e))
}
