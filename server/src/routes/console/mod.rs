//! The console for people: server-rendered pages in Slovak and English, signed in with a
//! session cookie. Handlers are thin: accounts and sessions are [`crate::people`]'s, the
//! checks every request passes are [`guard`]'s, the markup is [`page`]'s.
//!
//! Pages answer HTML (errors too, with their status); API keys are never taken here, and
//! the API routes never take the session cookie.

mod admin;
mod connections;
mod guard;
mod i18n;
mod invoices;
mod page;
mod review;
mod rules;
mod sso;
mod validate;
mod webhooks;

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Form, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{map_response_with_state, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use maud::Markup;
use serde::Deserialize;

use crate::people::{token, AccountsError, SignIn};
use crate::settings::Mode;
use crate::state::AppState;
use crate::store::{PersonRecord, SessionRecord};
use i18n::{Lang, LANG_COOKIE};
use page::Frame;

/// The console's routes, with the security headers on every answer.
pub fn routes(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/console") }))
        .route("/console", get(home))
        .route("/console/sign-in", get(sign_in_form).post(sign_in))
        .route("/console/sign-out", axum::routing::post(sign_out))
        .route(
            "/console/sign-out-everywhere",
            axum::routing::post(sign_out_everywhere),
        )
        .route("/console/links/{token}", get(link_form).post(link_submit))
        .route("/console/people", get(people).post(invite))
        .merge(admin::routes())
        .merge(sso::routes())
        .route(
            "/console/validate",
            get(validate::form).post(validate::submit),
        )
        .route(
            "/console/connections",
            get(connections::list).post(connections::create),
        )
        .route(
            "/console/connections/{id}/activate",
            axum::routing::post(connections::activate),
        )
        .route("/console/invoices", get(invoices::list))
        .route("/console/invoices/{id}", get(invoices::show))
        .route("/console/invoices/{id}/{file}", get(invoices::file))
        .route("/console/webhooks", get(webhooks::list))
        .route("/console/webhooks/{id}", get(webhooks::show))
        .route(
            "/console/webhooks/{id}/{action}",
            axum::routing::post(webhooks::act),
        )
        .route(
            "/console/webhooks/{id}/deliveries/{delivery}/{action}",
            axum::routing::post(webhooks::act),
        )
        .route("/console/review", get(review::queue))
        .route("/console/review/{id}", get(review::show))
        .route("/console/review/{id}/input", get(review::input))
        .route(
            "/console/review/{id}/{action}",
            axum::routing::post(review::act),
        )
        .route("/console/validations/{id}/{file}", get(validate::download))
        .route("/console/rules", get(rules::list))
        .route("/console/rules/{id}", get(rules::show))
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .route("/console/assets/favicon.svg", get(favicon))
        .route(
            "/favicon.ico",
            get(|| async { Redirect::permanent("/console/assets/favicon.svg") }),
        )
        .layer(axum::middleware::from_fn(no_api_keys))
        .layer(axum::middleware::from_fn(remember_query))
        .layer(map_response_with_state(state.clone(), secure))
}

async fn secure(State(state): State<AppState>, response: Response) -> Response {
    guard::secure(response, state.config.mode)
}

tokio::task_local! {
    /// The query of the page being answered, without `lang`: the language switch keeps it
    /// (a filtered list stays filtered in the other language).
    static PAGE_QUERY: String;
}

async fn remember_query(request: Request, next: Next) -> Response {
    let query = request
        .uri()
        .query()
        .filter(|q| q.len() <= 2000)
        .map(|q| {
            q.split('&')
                .filter(|p| !p.is_empty() && *p != "lang" && !p.starts_with("lang="))
                .collect::<Vec<_>>()
                .join("&")
        })
        .unwrap_or_default();
    PAGE_QUERY.scope(query, next.run(request)).await
}

/// The query the language switch keeps (empty outside a console request).
fn page_query() -> String {
    PAGE_QUERY.try_with(String::clone).unwrap_or_default()
}

/// The console never takes an API key: a request that brings one is refused, so a key
/// cannot be used, or leak, through a page.
async fn no_api_keys(request: Request, next: Next) -> Response {
    let h = request.headers();
    if h.contains_key(&crate::auth::X_API_KEY) || h.contains_key(header::AUTHORIZATION) {
        return (
            StatusCode::BAD_REQUEST,
            Html("The console takes no API keys; use the /v1 or /api routes."),
        )
            .into_response();
    }
    next.run(request).await
}

#[derive(Debug, Default, Deserialize)]
struct PageQuery {
    lang: Option<String>,
    signed_out: Option<String>,
}

/// The language of this request, and whether the query chose it (then it is remembered).
#[derive(Clone, Copy)]
struct Speech {
    lang: Lang,
    chosen: bool,
}

impl Speech {
    fn of(query: &PageQuery, headers: &HeaderMap) -> Speech {
        Speech::with_lang(query.lang.as_deref(), headers)
    }

    /// From a page's `?lang=` (remembered when given), else the cookie or the browser.
    fn with_lang(lang: Option<&str>, headers: &HeaderMap) -> Speech {
        Speech {
            lang: Lang::choose(lang, headers),
            chosen: lang.and_then(Lang::parse).is_some(),
        }
    }
}

fn html(speech: &Speech, status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, Html(markup.into_string())).into_response();
    if speech.chosen {
        let cookie = format!(
            "{LANG_COOKIE}={}; Path=/; SameSite=Lax; Max-Age=31536000",
            speech.lang.code()
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    response
}

/// A page of the console's frame.
struct Screen<'a> {
    state: &'a AppState,
    speech: Speech,
    path: &'a str,
    session: Option<&'a (SessionRecord, PersonRecord)>,
}

impl<'a> Screen<'a> {
    /// The frame of a page for a signed-in person.
    fn signed(
        state: &'a AppState,
        speech: Speech,
        path: &'a str,
        signed: &'a (SessionRecord, PersonRecord),
    ) -> Screen<'a> {
        Screen {
            state,
            speech,
            path,
            session: Some(signed),
        }
    }

    fn render(&self, status: StatusCode, title: &str, content: Markup) -> Response {
        let frame = Frame {
            lang: self.speech.lang,
            title,
            sandbox: self.state.config.mode == Mode::Sandbox,
            path: self.path,
            session: self.session.map(|(s, p)| (p, s.csrf.as_str())),
        };
        html(&self.speech, status, page::page(&frame, content))
    }

    fn message(&self, status: StatusCode, title: &str, text: &str) -> Response {
        self.render(status, title, page::message(text))
    }

    fn error(&self, e: &AccountsError) -> Response {
        let t = self.speech.lang.t();
        tracing::error!(error = %e, "console request failed");
        self.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            t.error_title,
            t.error_detail,
        )
    }
}

fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}

/// The live session of the request's cookie, if any.
async fn current(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<(SessionRecord, PersonRecord)>, AccountsError> {
    match guard::cookie(headers, guard::SESSION_COOKIE) {
        Some(t) => state.accounts.session(&t).await,
        None => Ok(None),
    }
}

/// The signed-in session of a request, or the answer for a request without one: the
/// sign-in page, or the error page when the session cannot be read.
async fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    speech: Speech,
    path: &str,
) -> Result<((SessionRecord, PersonRecord), Speech), Response> {
    match current(state, headers).await {
        Ok(Some(signed)) => Ok((signed, speech)),
        Ok(None) => Err(see_other("/console/sign-in")),
        Err(e) => Err(Screen {
            state,
            speech,
            path,
            session: None,
        }
        .error(&e)),
    }
}

/// A form that changes something on behalf of a signed-in person: from this site, with
/// the session's CSRF token.
fn refused_form(
    screen: &Screen<'_>,
    headers: &HeaderMap,
    session: &SessionRecord,
    csrf: &str,
) -> Option<Response> {
    let t = screen.speech.lang.t();
    if !guard::same_origin(headers) {
        return Some(screen.message(StatusCode::FORBIDDEN, t.refused_title, t.refused_cross_site));
    }
    if !token::same(csrf, &session.csrf) {
        return Some(screen.message(StatusCode::FORBIDDEN, t.refused_title, t.refused_csrf));
    }
    None
}

async fn home(
    State(state): State<AppState>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&query, &headers);
    let (signed, speech) = match signed_in(&state, &headers, speech, "/console").await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, "/console", &signed);
    let t = screen.speech.lang.t();
    let content = page::home(t, &signed.1, &signed.0.csrf, None);
    screen.render(StatusCode::OK, t.home_title, content)
}

async fn sign_in_form(
    State(state): State<AppState>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    if let Ok(Some(_)) = current(&state, &headers).await {
        return see_other("/console");
    }
    let speech = Speech::of(&query, &headers);
    let screen = Screen {
        state: &state,
        speech,
        path: "/console/sign-in",
        session: None,
    };
    let t = screen.speech.lang.t();
    let notice =
        (query.signed_out.as_deref() == Some("everywhere")).then_some(t.signed_out_everywhere);
    let content = maud::html! {
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        (page::sign_in(t, "", None, sso::sign_in_form(screen.speech.lang, "", None)))
    };
    screen.render(StatusCode::OK, t.sign_in_title, content)
}

#[derive(Debug, Deserialize)]
struct SignInForm {
    email: String,
    password: String,
}

async fn sign_in(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let screen = Screen {
        state: &state,
        speech,
        path: "/console/sign-in",
        session: None,
    };
    let t = screen.speech.lang.t();
    // Signing in from another site's page would sign the browser in as someone else.
    if !guard::same_origin(&headers) {
        return screen.message(StatusCode::FORBIDDEN, t.refused_title, t.refused_cross_site);
    }
    let client = crate::auth::client::client_address(
        Some(peer.ip()),
        &headers,
        &state.config.trusted_proxies,
    );
    match state
        .accounts
        .sign_in(client, &form.email, &form.password)
        .await
    {
        Ok(SignIn::Ok(s)) => with_cookie(
            see_other("/console"),
            &guard::session_cookie(&s.token, state.config.mode),
        ),
        Ok(SignIn::Refused) => screen.render(
            StatusCode::UNAUTHORIZED,
            t.sign_in_title,
            page::sign_in(
                t,
                &form.email,
                Some(t.sign_in_refused),
                sso::sign_in_form(screen.speech.lang, "", None),
            ),
        ),
        Ok(SignIn::SsoRequired) => screen.render(
            StatusCode::FORBIDDEN,
            t.sign_in_title,
            page::sign_in(
                t,
                &form.email,
                Some(sso::texts(screen.speech.lang).sso_required),
                sso::sign_in_form(screen.speech.lang, &form.email, None),
            ),
        ),
        Err(AccountsError::Throttled(th)) => {
            let mut r = screen.render(
                StatusCode::TOO_MANY_REQUESTS,
                t.sign_in_title,
                page::sign_in(
                    t,
                    &form.email,
                    Some(t.too_many_attempts),
                    sso::sign_in_form(screen.speech.lang, "", None),
                ),
            );
            let secs = th.retry_after.as_secs().max(1).to_string();
            if let Ok(v) = HeaderValue::from_str(&secs) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
        Err(e) => screen.error(&e),
    }
}

/// A form without its token is refused like one with a wrong token (403), not as a
/// malformed form: `csrf` defaults to empty, which never matches.
#[derive(Debug, Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    signing_out(state, headers, form, false).await
}

async fn sign_out_everywhere(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    signing_out(state, headers, form, true).await
}

async fn signing_out(
    state: AppState,
    headers: HeaderMap,
    form: CsrfForm,
    everywhere: bool,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let (signed, speech) = match signed_in(&state, &headers, speech, "/console").await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, "/console", &signed);
    if let Some(refused) = refused_form(&screen, &headers, &signed.0, &form.csrf) {
        return refused;
    }
    let done = if everywhere {
        state
            .accounts
            .sign_out_everywhere(&signed.1.id)
            .await
            .map(|_| ())
    } else {
        match guard::cookie(&headers, guard::SESSION_COOKIE) {
            Some(t) => state.accounts.sign_out(&t).await,
            None => Ok(()),
        }
    };
    if let Err(e) = done {
        return screen.error(&e);
    }
    let to = if everywhere {
        "/console/sign-in?signed_out=everywhere"
    } else {
        "/console/sign-in"
    };
    with_cookie(
        see_other(to),
        &guard::cleared_session_cookie(state.config.mode),
    )
}

async fn link_form(
    State(state): State<AppState>,
    Path(link): Path<String>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&query, &headers);
    let path = format!("/console/links/{link}");
    let screen = Screen {
        state: &state,
        speech,
        path: &path,
        session: None,
    };
    let t = screen.speech.lang.t();
    match state.accounts.open_link(&link).await {
        Ok(Some((l, _))) => screen.render(
            StatusCode::OK,
            t.link_title,
            page::link_form(
                t,
                l.purpose == crate::people::service::FIRST_ADMIN,
                None,
                "",
            ),
        ),
        Ok(None) => screen.message(StatusCode::NOT_FOUND, t.link_title, t.link_gone),
        Err(e) => screen.error(&e),
    }
}

#[derive(Debug, Deserialize)]
struct LinkForm {
    email: Option<String>,
    password: String,
}

async fn link_submit(
    State(state): State<AppState>,
    Path(link): Path<String>,
    headers: HeaderMap,
    Form(form): Form<LinkForm>,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let path = format!("/console/links/{link}");
    let screen = Screen {
        state: &state,
        speech,
        path: &path,
        session: None,
    };
    let t = screen.speech.lang.t();
    if !guard::same_origin(&headers) {
        return screen.message(StatusCode::FORBIDDEN, t.refused_title, t.refused_cross_site);
    }
    let first_admin = form.email.is_some();
    let again = |status: StatusCode, error: &str| {
        screen.render(
            status,
            t.link_title,
            page::link_form(
                t,
                first_admin,
                Some(error),
                form.email.as_deref().unwrap_or(""),
            ),
        )
    };
    match state
        .accounts
        .complete_link(&link, form.email.as_deref(), &form.password)
        .await
    {
        Ok(s) => with_cookie(
            see_other("/console"),
            &guard::session_cookie(&s.token, state.config.mode),
        ),
        Err(AccountsError::LinkGone) => screen.message(StatusCode::GONE, t.link_title, t.link_gone),
        Err(AccountsError::Password(crate::people::password::PasswordError::TooShort)) => {
            again(StatusCode::UNPROCESSABLE_ENTITY, t.password_too_short)
        }
        Err(AccountsError::Password(crate::people::password::PasswordError::TooLong)) => {
            again(StatusCode::UNPROCESSABLE_ENTITY, t.password_too_long)
        }
        Err(AccountsError::Email(_)) => again(StatusCode::UNPROCESSABLE_ENTITY, t.not_an_email),
        Err(AccountsError::EmailTaken(_)) => again(StatusCode::CONFLICT, t.email_taken),
        Err(AccountsError::SsoRequired) => screen.message(
            StatusCode::FORBIDDEN,
            t.link_title,
            sso::texts(screen.speech.lang).sso_required,
        ),
        Err(e) => screen.error(&e),
    }
}

/// The signed-in admin of a request, or the answer that refuses it.
async fn admin(
    state: &AppState,
    headers: &HeaderMap,
    speech: Speech,
) -> Result<((SessionRecord, PersonRecord), Speech), Response> {
    let (signed, speech) = signed_in(state, headers, speech, "/console").await?;
    if signed.1.role != crate::auth::Role::Admin.as_str() {
        let screen = Screen {
            state,
            speech,
            path: "/console",
            session: Some(&signed),
        };
        let t = screen.speech.lang.t();
        return Err(screen.message(StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden));
    }
    Ok((signed, speech))
}

/// A state-changing form of a signed-in person whose role is among `allowed`: from this
/// site, with the session's CSRF token; otherwise the answer that refuses it.
async fn signed_form(
    state: &AppState,
    headers: &HeaderMap,
    path: &str,
    allowed: &[crate::auth::Role],
    csrf: &str,
) -> Result<((SessionRecord, PersonRecord), Speech), Response> {
    let speech = Speech::of(&PageQuery::default(), headers);
    let (signed, speech) = signed_in_as(state, headers, speech, path, allowed).await?;
    let screen = Screen::signed(state, speech, path, &signed);
    if let Some(refused) = refused_form(&screen, headers, &signed.0, csrf) {
        return Err(refused);
    }
    Ok((signed, speech))
}

/// The signed-in person of a request whose role is among `allowed` (the same role sets as
/// the API's routes), or the answer that refuses it.
async fn signed_in_as(
    state: &AppState,
    headers: &HeaderMap,
    speech: Speech,
    path: &str,
    allowed: &[crate::auth::Role],
) -> Result<((SessionRecord, PersonRecord), Speech), Response> {
    let (signed, speech) = signed_in(state, headers, speech, path).await?;
    if !allowed.iter().any(|r| r.as_str() == signed.1.role) {
        let screen = Screen {
            state,
            speech,
            path,
            session: Some(&signed),
        };
        let t = screen.speech.lang.t();
        return Err(screen.message(StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden));
    }
    Ok((signed, speech))
}

async fn people_page(
    state: &AppState,
    signed: &(SessionRecord, PersonRecord),
    speech: Speech,
    status: StatusCode,
    error: Option<&str>,
    invited: Option<&page::Invited<'_>>,
) -> Response {
    let screen = Screen {
        state,
        speech,
        path: "/console/people",
        session: Some(signed),
    };
    let t = screen.speech.lang.t();
    let list = match state.store.people(&signed.1.tenant_id).await {
        Ok(l) => l,
        Err(e) => return screen.error(&AccountsError::Store(e)),
    };
    // Bound to an identity counts only while the tenant has a provider to sign in through.
    let tenant = &signed.1.tenant_id;
    let through_provider = match state.store.sso_settings(tenant).await {
        Ok(None) => Default::default(),
        Ok(Some(_)) => match state.store.people_with_identity(tenant).await {
            Ok(ids) => ids,
            Err(e) => return screen.error(&AccountsError::Store(e)),
        },
        Err(e) => return screen.error(&AccountsError::Store(e)),
    };
    let rows: Vec<page::PersonRow<'_>> = list
        .iter()
        .map(|p| page::PersonRow {
            id: &p.id,
            email: &p.email,
            role: &p.role,
            status: page::person_status(t, p, through_provider.contains(&p.id)),
        })
        .collect();
    let content = page::people(t, &rows, &signed.0.csrf, error, invited);
    screen.render(status, t.people_title, content)
}

async fn people(
    State(state): State<AppState>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&query, &headers);
    match admin(&state, &headers, speech).await {
        Ok((signed, speech)) => {
            people_page(&state, &signed, speech, StatusCode::OK, None, None).await
        }
        Err(r) => r,
    }
}

#[derive(Debug, Deserialize)]
struct InviteForm {
    #[serde(default)]
    csrf: String,
    email: String,
    role: String,
}

async fn invite(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<InviteForm>,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let (signed, speech) = match admin(&state, &headers, speech).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    {
        let screen = Screen {
            state: &state,
            speech: Speech {
                lang: speech.lang,
                chosen: false,
            },
            path: "/console/people",
            session: Some(&signed),
        };
        if let Some(refused) = refused_form(&screen, &headers, &signed.0, &form.csrf) {
            return refused;
        }
    }
    let t = speech.lang.t();
    match state
        .accounts
        .invite(&signed.1.tenant_id, &form.email, &form.role)
        .await
    {
        Ok(inv) => {
            let (link, delivery) =
                deliver_invitation(&state, &headers, &signed.1, &inv, speech.lang).await;
            let invited = page::Invited {
                email: &inv.person.email,
                link: &link,
                expires: &inv.expires_at,
                delivery,
            };
            people_page(
                &state,
                &signed,
                speech,
                StatusCode::CREATED,
                None,
                Some(&invited),
            )
            .await
        }
        Err(
            e @ (AccountsError::Email(_) | AccountsError::Role(_) | AccountsError::EmailTaken(_)),
        ) => {
            let (status, text) = match e {
                AccountsError::EmailTaken(_) => (StatusCode::CONFLICT, t.email_taken),
                AccountsError::Role(_) => (StatusCode::UNPROCESSABLE_ENTITY, t.not_a_role),
                _ => (StatusCode::UNPROCESSABLE_ENTITY, t.not_an_email),
            };
            people_page(&state, &signed, speech, status, Some(text), None).await
        }
        Err(e) => Screen {
            state: &state,
            speech,
            path: "/console/people",
            session: Some(&signed),
        }
        .error(&e),
    }
}

/// An invitation stored: its link logged (sandbox) and mailed when SMTP is configured. Stored
/// first, so a mail that cannot be sent loses nothing: the administrator gets the link.
async fn deliver_invitation(
    state: &AppState,
    headers: &HeaderMap,
    admin: &PersonRecord,
    inv: &crate::people::Invitation,
    lang: Lang,
) -> (String, page::Delivery) {
    let link = link_url(state, headers, &inv.token);
    if state.config.mode == Mode::Sandbox {
        tracing::info!(email = %inv.person.email, %link, "invitation link made (sandbox: the link is logged)");
    } else {
        tracing::info!(email = %inv.person.email, "invitation link made");
    }
    let delivery = mail_invitation(state, admin, inv, &link, lang).await;
    (link, delivery)
}

/// Mail the invitation when SMTP is configured. A failure is logged with its cause (the
/// page only says that the mail was not sent: the mail server is the operator's business).
async fn mail_invitation(
    state: &AppState,
    inviter: &PersonRecord,
    inv: &crate::people::Invitation,
    link: &str,
    lang: Lang,
) -> page::Delivery {
    let Some(mailer) = &state.mailer else {
        return page::Delivery::Shown;
    };
    let mail = crate::people::mail::invitation(&crate::people::mail::InvitationMail {
        to: &inv.person.email,
        link,
        expires_at: &inv.expires_at,
        inviter: &inviter.email,
        role_sk: i18n::SK.role(&inv.person.role),
        role_en: i18n::EN.role(&inv.person.role),
        first: match lang {
            Lang::Sk => crate::people::mail::Language::Slovak,
            Lang::En => crate::people::mail::Language::English,
        },
    });
    match mailer.send(&mail).await {
        Ok(()) => {
            tracing::info!(email = %inv.person.email, person = %inv.person.id, "invitation mailed");
            page::Delivery::Mailed
        }
        Err(e) => {
            tracing::warn!(email = %inv.person.email, person = %inv.person.id, error = %e, "invitation mail not sent; the link is shown to the administrator");
            page::Delivery::MailFailed
        }
    }
}

/// The address people reach this server at, without a trailing slash: the configured
/// public URL; else, in the sandbox, the host the request names (production does not trust
/// a request's Host header for addresses it hands out).
fn public_base(state: &AppState, headers: &HeaderMap) -> Option<String> {
    if let Some(base) = state.config.public_base() {
        return Some(base.to_string());
    }
    if state.config.mode != Mode::Sandbox {
        return None;
    }
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
        .map(|host| format!("http://{host}"))
}

/// The absolute address of a one-time link: under the public URL when configured, else on
/// the host the administrator reached (HTTPS in production; the invitation is the
/// administrator's own request).
fn link_url(state: &AppState, headers: &HeaderMap, link_token: &str) -> String {
    let path = format!("/console/links/{link_token}");
    if let Some(base) = public_base(state, headers) {
        return format!("{base}{path}");
    }
    match headers.get(header::HOST).and_then(|h| h.to_str().ok()) {
        Some(host) => format!("https://{host}{path}"),
        None => path,
    }
}

async fn script() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("assets/console.js"),
    )
}

async fn favicon() -> Response {
    asset("image/svg+xml", include_str!("assets/favicon.svg"))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

async fn stylesheet() -> Response {
    asset(
        "text/css; charset=utf-8",
        include_str!("assets/console.css"),
    )
}
