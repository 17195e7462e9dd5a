//! A local OpenID Connect provider speaking the real wire format (OpenID Connect Core 1.0
//! and Discovery 1.0, the OAuth 2.0 code flow of RFC 6749 with PKCE of RFC 7636), so that
//! the relying party is tested against what an identity provider sends, not against a mock
//! of its own making. There is no login page: each authorization signs in as the user set
//! by [`Provider::sign_in_as`]. [`Misbehave`] makes it send what a relying party must refuse.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::rand_core::{OsRng, RngCore};
use reqwest::Url;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

/// Lifetime of ID and access tokens, in seconds (`expires_in`).
const TOKEN_LIFETIME: u64 = 300;
/// A code is for exchanging at once; RFC 6749 §4.1.2 recommends ten minutes at most.
const CODE_LIFETIME: Duration = Duration::from_secs(60);

/// The person an authorization signs in as.
#[derive(Clone, Debug)]
pub struct User {
    pub sub: String,
    pub email: Option<String>,
    pub email_verified: Option<bool>,
    /// Further claims, e.g. `{"groups": ["invex-accountants"]}`.
    pub extra: Map<String, Value>,
}

impl User {
    /// A user with a subject and nothing else.
    pub fn new(sub: &str) -> User {
        User {
            sub: sub.to_string(),
            email: None,
            email_verified: None,
            extra: Map::new(),
        }
    }

    /// The same user with `email` and its `email_verified`.
    pub fn with_email(mut self, email: &str, verified: bool) -> User {
        self.email = Some(email.to_string());
        self.email_verified = Some(verified);
        self
    }

    /// The same user with one more claim.
    pub fn with_claim(mut self, name: &str, value: Value) -> User {
        self.extra.insert(name.to_string(), value);
        self
    }

    /// Its claims as sent: the extra ones first, so that they cannot hide the standard ones.
    fn claims(&self) -> Map<String, Value> {
        let mut claims = self.extra.clone();
        if let Some(email) = &self.email {
            claims.insert("email".into(), json!(email));
        }
        if let Some(verified) = self.email_verified {
            claims.insert("email_verified".into(), json!(verified));
        }
        claims
    }
}

/// What the provider does wrong from the next token request on (until changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misbehave {
    Nothing,
    /// The ID token carries another nonce than the authorization request sent.
    WrongNonce,
    /// The ID token is for `aud: "someone-else"`.
    WrongAudience,
    /// The ID token's `iss` is the issuer with `/other` appended.
    WrongIssuer,
    /// The ID token expired ten minutes ago.
    Expired,
    /// Signed with a key not in the JWKS, under the published key's `kid`.
    OtherKey,
    /// An unsigned token: header `{"alg":"none"}`, empty signature part.
    AlgNone,
    /// The ID token has only iss/sub/aud/exp/iat/nonce; email and extra claims come only
    /// from the userinfo endpoint.
    ClaimsOnlyAtUserinfo,
    /// The userinfo endpoint answers for `sub: "someone-else"`.
    UserinfoOtherSubject,
}

/// One request to `/authorize`, as received (also the refused ones).
#[derive(Clone, Debug)]
pub struct Authorization {
    pub query: HashMap<String, String>,
}

impl Authorization {
    /// A parameter of the request.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }
}

/// The running provider; it stops serving when dropped.
pub struct Provider {
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
}

/// What the endpoints share: fixed at start, and the changing state behind a lock.
struct Shared {
    issuer: String,
    client_id: String,
    client_secret: String,
    kid: String,
    key: SigningKey,
    /// Signs [`Misbehave::OtherKey`] tokens; never published.
    other_key: SigningKey,
    jwk: Value,
    state: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    user: Option<User>,
    misbehave: Option<Misbehave>,
    authorizations: Vec<Authorization>,
    codes: HashMap<String, Grant>,
    tokens: HashMap<String, Issued>,
    tokens_issued: usize,
    userinfo_requests: usize,
}

/// What a code was issued for.
struct Grant {
    redirect_uri: String,
    code_challenge: String,
    nonce: String,
    scope: String,
    user: User,
    expires: Instant,
}

/// What an access token was issued for.
struct Issued {
    user: User,
    misbehave: Misbehave,
    expires: Instant,
}

impl Provider {
    /// Binds 127.0.0.1:0; the issuer is "http://127.0.0.1:PORT". One registered client,
    /// which authenticates with `client_secret` (HTTP Basic or in the form).
    pub async fn start(client_id: &str, client_secret: &str) -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the OIDC provider");
        let addr = listener.local_addr().expect("provider address");
        let key = SigningKey::random(&mut OsRng);
        let point = key.verifying_key().to_encoded_point(false);
        let x = URL_SAFE_NO_PAD.encode(point.x().expect("uncompressed point has x"));
        let y = URL_SAFE_NO_PAD.encode(point.y().expect("uncompressed point has y"));
        // The RFC 7638 thumbprint: members in lexicographic order, no whitespace.
        let thumbprint = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(thumbprint.as_bytes()));
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "x": x, "y": y,
            "kid": kid, "use": "sig", "alg": "ES256",
        });
        let shared = Arc::new(Shared {
            issuer: format!("http://{addr}"),
            client_id: client_id.to_string(),
            client_secret: client_secret.to_string(),
            kid,
            key,
            other_key: SigningKey::random(&mut OsRng),
            jwk,
            state: Mutex::new(Inner::default()),
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/authorize", get(authorize))
            .route("/token", axum::routing::post(token))
            .route("/jwks", get(jwks))
            .route("/userinfo", get(userinfo).post(userinfo))
            .with_state(shared.clone());
        let (shutdown, stop) = oneshot::channel::<()>();
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stop.await;
                })
                .await
                .expect("OIDC provider serves")
        });
        Provider {
            shared,
            shutdown: Some(shutdown),
        }
    }

    pub fn issuer(&self) -> String {
        self.shared.issuer.clone()
    }

    pub fn client_id(&self) -> String {
        self.shared.client_id.clone()
    }

    /// A URL of the provider, e.g. `url("/authorize")`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.shared.issuer)
    }

    /// Who the next authorization signs in as (until changed).
    pub fn sign_in_as(&self, user: User) {
        self.shared.lock().user = Some(user);
    }

    /// From now on the user declines: authorizations redirect back with
    /// `error=access_denied` (also what happens before any [`Provider::sign_in_as`]).
    pub fn decline(&self) {
        self.shared.lock().user = None;
    }

    /// What the following token requests (and the userinfo answers for their access
    /// tokens) get wrong.
    pub fn misbehave(&self, m: Misbehave) {
        self.shared.lock().misbehave = Some(m);
    }

    /// Every request `/authorize` received, oldest first.
    pub fn authorizations(&self) -> Vec<Authorization> {
        self.shared.lock().authorizations.clone()
    }

    /// Token requests answered successfully.
    pub fn tokens_issued(&self) -> usize {
        self.shared.lock().tokens_issued
    }

    /// Userinfo requests answered successfully.
    pub fn userinfo_requests(&self) -> usize {
        self.shared.lock().userinfo_requests
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.state.lock().expect("OIDC provider state")
    }

    /// The compact JWS of the ID token for `grant`, spoilt as `m` says.
    fn id_token(&self, grant: &Grant, m: Misbehave) -> String {
        let now = unix_now();
        let mut claims = if m == Misbehave::ClaimsOnlyAtUserinfo {
            Map::new()
        } else {
            grant.user.claims()
        };
        let (iss, aud, nonce) = match m {
            Misbehave::WrongIssuer => (
                format!("{}/other", self.issuer),
                &*self.client_id,
                &*grant.nonce,
            ),
            Misbehave::WrongAudience => (self.issuer.clone(), "someone-else", &*grant.nonce),
            Misbehave::WrongNonce => (self.issuer.clone(), &*self.client_id, "not-the-nonce-sent"),
            _ => (self.issuer.clone(), &*self.client_id, &*grant.nonce),
        };
        let (iat, exp) = match m {
            Misbehave::Expired => (now - 900, now - 600),
            _ => (now, now + TOKEN_LIFETIME as i64),
        };
        for (name, value) in [
            ("iss", json!(iss)),
            ("sub", json!(grant.user.sub)),
            ("aud", json!(aud)),
            ("exp", json!(exp)),
            ("iat", json!(iat)),
            ("nonce", json!(nonce)),
        ] {
            claims.insert(name.into(), value);
        }
        let header = match m {
            Misbehave::AlgNone => json!({"alg": "none"}),
            _ => json!({"alg": "ES256", "kid": self.kid, "typ": "JWT"}),
        };
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(Value::Object(claims).to_string())
        );
        let signature = match m {
            Misbehave::AlgNone => String::new(),
            Misbehave::OtherKey => es256(&self.other_key, &input),
            _ => es256(&self.key, &input),
        };
        format!("{input}.{signature}")
    }
}

/// The JWS ES256 signature (RFC 7518 §3.4): raw r||s, base64url.
fn es256(key: &SigningKey, input: &str) -> String {
    let signature: Signature = key.sign(input.as_bytes());
    URL_SAFE_NO_PAD.encode(signature.to_bytes())
}

fn unix_now() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(since.as_secs()).expect("seconds fit i64")
}

/// 32 random bytes, base64url: codes and access tokens.
fn random_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `application/x-www-form-urlencoded` decoding of one name or value; `None` if malformed.
fn form_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The pairs of a query string or form body, in order; `None` if malformed.
fn form_pairs(s: &str) -> Option<Vec<(String, String)>> {
    s.split('&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            Some((form_decode(name)?, form_decode(value)?))
        })
        .collect()
}

/// The pairs as a map; the first repeated name, if any (RFC 6749 §3.1 forbids repeats).
fn form_map(pairs: Vec<(String, String)>) -> (HashMap<String, String>, Option<String>) {
    let mut map = HashMap::new();
    let mut repeated = None;
    for (name, value) in pairs {
        if map.insert(name.clone(), value).is_some() && repeated.is_none() {
            repeated = Some(name);
        }
    }
    (map, repeated)
}

/// A parameter; sent empty counts as not sent (RFC 6749 §3.1).
fn param<'a>(map: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    map.get(name).map(String::as_str).filter(|v| !v.is_empty())
}

/// RFC 7636 §4.1: 43 to 128 unreserved characters.
fn valid_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

fn bad_request(why: impl Into<String>) -> Response {
    (StatusCode::BAD_REQUEST, why.into()).into_response()
}

/// An RFC 6749 §5.2 error answer of the token endpoint.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = (
        status,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        // §5.2: a client that tried HTTP Basic is told the scheme to use.
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(r#"Basic realm="oidc-provider""#),
        );
    }
    response
}

async fn discovery(State(s): State<Arc<Shared>>) -> Json<Value> {
    let issuer = &s.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "userinfo_endpoint": format!("{issuer}/userinfo"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "scopes_supported": ["openid", "email", "profile"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nonce", "email", "email_verified", "groups"],
    }))
}

async fn jwks(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({"keys": [s.jwk]}))
}

async fn authorize(State(s): State<Arc<Shared>>, RawQuery(query): RawQuery) -> Response {
    let Some(pairs) = form_pairs(query.as_deref().unwrap_or("")) else {
        return bad_request("malformed query");
    };
    let (q, repeated) = form_map(pairs);
    s.lock()
        .authorizations
        .push(Authorization { query: q.clone() });
    if let Some(name) = repeated {
        return bad_request(format!("{name} sent more than once"));
    }
    if param(&q, "client_id") != Some(s.client_id.as_str()) {
        return bad_request("unknown client_id");
    }
    let Some(redirect_uri) = param(&q, "redirect_uri") else {
        return bad_request("redirect_uri missing");
    };
    let mut location = match Url::parse(redirect_uri) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.fragment().is_none() => url,
        _ => return bad_request("redirect_uri is not an absolute http(s) URL without fragment"),
    };
    if param(&q, "response_type") != Some("code") {
        return bad_request("response_type must be code");
    }
    let scope = param(&q, "scope").unwrap_or("");
    if !scope.split(' ').any(|s| s == "openid") {
        return bad_request("scope must contain openid");
    }
    let Some(state) = param(&q, "state") else {
        return bad_request("state missing");
    };
    let Some(nonce) = param(&q, "nonce") else {
        return bad_request("nonce missing");
    };
    if param(&q, "code_challenge_method") != Some("S256") {
        return bad_request("code_challenge_method must be S256");
    }
    // BASE64URL(SHA256(verifier)): 32 bytes, so 43 characters.
    let Some(code_challenge) = param(&q, "code_challenge").filter(|c| {
        URL_SAFE_NO_PAD
            .decode(c)
            .is_ok_and(|bytes| bytes.len() == 32)
    }) else {
        return bad_request("code_challenge missing or not an S256 challenge");
    };
    let user = s.lock().user.clone();
    match user {
        Some(user) => {
            let code = random_token();
            s.lock().codes.insert(
                code.clone(),
                Grant {
                    redirect_uri: redirect_uri.to_string(),
                    code_challenge: code_challenge.to_string(),
                    nonce: nonce.to_string(),
                    scope: scope.to_string(),
                    user,
                    expires: Instant::now() + CODE_LIFETIME,
                },
            );
            location
                .query_pairs_mut()
                .append_pair("code", &code)
                .append_pair("state", state);
        }
        None => {
            location
                .query_pairs_mut()
                .append_pair("error", "access_denied")
                .append_pair("state", state);
        }
    }
    (
        StatusCode::FOUND,
        [
            (header::LOCATION, location.to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
    )
        .into_response()
}

/// The client credentials of HTTP Basic (RFC 6749 §2.3.1: each part form-urlencoded);
/// `Err` if the header is there but is not readable Basic.
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, ()> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| ())?;
    let (scheme, encoded) = value.split_once(' ').ok_or(())?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(());
    }
    let decoded = STANDARD.decode(encoded.trim()).map_err(|_| ())?;
    let decoded = String::from_utf8(decoded).map_err(|_| ())?;
    let (id, secret) = decoded.split_once(':').ok_or(())?;
    Ok(Some((
        form_decode(id).ok_or(())?,
        form_decode(secret).ok_or(())?,
    )))
}

async fn token(State(s): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let form_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            v.trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !form_type {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "expected a form body",
        );
    }
    let Some(pairs) = std::str::from_utf8(&body).ok().and_then(form_pairs) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "malformed form body",
        );
    };
    let (form, repeated) = form_map(pairs);
    if let Some(name) = repeated {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("{name} sent more than once"),
        );
    }

    let Ok(basic) = basic_credentials(&headers) else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "unreadable Authorization header",
        );
    };
    let (client_id, client_secret) = match (basic, param(&form, "client_secret")) {
        (Some(_), Some(_)) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "more than one client authentication method",
            )
        }
        (Some((id, secret)), None) => {
            if param(&form, "client_id").is_some_and(|form_id| form_id != id) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "client_id differs from the authenticated one",
                );
            }
            (id, secret)
        }
        (None, Some(secret)) => (
            param(&form, "client_id").unwrap_or("").to_string(),
            secret.to_string(),
        ),
        (None, None) => {
            return oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication missing",
            )
        }
    };
    if client_id != s.client_id || client_secret != s.client_secret {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "client authentication failed",
        );
    }

    match param(&form, "grant_type") {
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type missing",
            )
        }
        Some("authorization_code") => {}
        Some(_) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "only authorization_code",
            )
        }
    }
    let (Some(code), Some(redirect_uri), Some(verifier)) = (
        param(&form, "code"),
        param(&form, "redirect_uri"),
        param(&form, "code_verifier"),
    ) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "code, redirect_uri and code_verifier are required",
        );
    };

    let mut state = s.lock();
    // Any attempt uses the code up, a failed one too: no second try at guessing the verifier.
    let Some(grant) = state.codes.remove(code) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "unknown or used code",
        );
    };
    if grant.expires < Instant::now() {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", "code expired");
    }
    if grant.redirect_uri != redirect_uri {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "redirect_uri differs from the authorization request",
        );
    }
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if !valid_verifier(verifier) || challenge != grant.code_challenge {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        );
    }
    let misbehave = state.misbehave.unwrap_or(Misbehave::Nothing);
    let access_token = random_token();
    state.tokens.insert(
        access_token.clone(),
        Issued {
            user: grant.user.clone(),
            misbehave,
            expires: Instant::now() + Duration::from_secs(TOKEN_LIFETIME),
        },
    );
    state.tokens_issued += 1;
    drop(state);
    let id_token = s.id_token(&grant, misbehave);
    (
        StatusCode::OK,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::PRAGMA, "no-cache"),
        ],
        Json(json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME,
            "id_token": id_token,
            "scope": grant.scope,
        })),
    )
        .into_response()
}

async fn userinfo(State(s): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let Some(token) = token else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response();
    };
    let mut state = s.lock();
    let issued = state
        .tokens
        .get(token)
        .filter(|issued| issued.expires > Instant::now())
        .map(|issued| (issued.user.clone(), issued.misbehave));
    let Some((user, misbehave)) = issued else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, r#"Bearer error="invalid_token""#)],
        )
            .into_response();
    };
    state.userinfo_requests += 1;
    drop(state);
    let mut claims = user.claims();
    let sub = match misbehave {
        Misbehave::UserinfoOtherSubject => "someone-else".to_string(),
        _ => user.sub,
    };
    claims.insert("sub".into(), json!(sub));
    Json(Value::Object(claims)).into_response()
}
