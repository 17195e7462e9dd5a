//! Single sign-on in the console: the sign-in page's second form (a work address leads to
//! its organisation's OpenID provider), the provider's callback, and the administrator's
//! settings screen. The protocol is [`crate::sso`]'s; which account a vouched-for person
//! opens is [`crate::people`]'s.
//!
//! The callback arrives from the provider's site: the `state` cookie is `SameSite=Lax` (a
//! top-level GET from another site carries it), and the session cookie, `SameSite=Strict`,
//! is set on a page that moves on to `/console` by itself — a redirect would still count as
//! the provider's navigation, and the browser would not send the new cookie.

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Form, Router};
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::Lang;
use super::{
    guard, see_other, signed_form, signed_in_as, with_cookie, CsrfForm, PageQuery, Screen, Speech,
};
use crate::auth::roles::allow;
use crate::people::sso::Refusal;
use crate::people::AccountsError;
use crate::settings::Mode;
use crate::sso::{Callback, ManageError, SsoError, SsoForm};
use crate::state::AppState;

const SETTINGS: &str = "/console/settings/sso";
const START: &str = "/console/sso";
const CALLBACK: &str = "/console/sso/callback";
/// The cookie that binds a sign-in under way to the browser that started it.
const STATE_COOKIE: &str = "invex_sso";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(START, get(start))
        .route(CALLBACK, get(callback))
        .route(SETTINGS, get(settings).post(save))
        .route("/console/settings/sso/remove", post(remove))
}

pub struct SsoTexts {
    pub nav: &'static str,
    title: &'static str,
    intro: &'static str,
    work_email: &'static str,
    continue_sso: &'static str,
    or: &'static str,
    unknown_domain: &'static str,
    redirect_uri: &'static str,
    redirect_hint: &'static str,
    no_public_url: &'static str,
    issuer: &'static str,
    issuer_hint: &'static str,
    client_id: &'static str,
    client_secret: &'static str,
    secret_hint: &'static str,
    domains: &'static str,
    domains_hint: &'static str,
    scopes: &'static str,
    role_claim: &'static str,
    role_map: &'static str,
    role_map_hint: &'static str,
    default_role: &'static str,
    no_default: &'static str,
    required: &'static str,
    required_hint: &'static str,
    save: &'static str,
    saved: &'static str,
    remove: &'static str,
    removed: &'static str,
    not_configured: &'static str,
    moving_on: &'static str,
    to_provider: &'static str,
    to_provider_link: &'static str,
    continue_link: &'static str,
    failed_title: &'static str,
    start_again: &'static str,
    state_lost: &'static str,
    provider_refused: &'static str,
    provider_failed: &'static str,
    refused_email_unverified: &'static str,
    refused_outside_domains: &'static str,
    refused_no_role: &'static str,
    refused_other_tenant: &'static str,
    refused_disabled: &'static str,
    pub sso_required: &'static str,
}

const SK: SsoTexts = SsoTexts {
    nav: "Jednotné prihlásenie",
    title: "Jednotné prihlásenie (OpenID Connect)",
    intro: "Ľudia s adresou v doménach vašej organizácie sa prihlasujú cez jej poskytovateľa identity; rolu im dáva hodnota nároku podľa tabuľky nižšie. Účet dostanú pri prvom prihlásení.",
    work_email: "Pracovný e-mail",
    continue_sso: "Pokračovať cez jednotné prihlásenie",
    or: "Alebo cez poskytovateľa identity vašej organizácie",
    unknown_domain: "Pre túto doménu nemá žiadna organizácia jednotné prihlásenie. Prihláste sa heslom.",
    redirect_uri: "Adresa presmerovania (zaregistrujte ju u poskytovateľa)",
    redirect_hint: "Klient typu „confidential“, tok „authorization code“ s PKCE (S256).",
    no_public_url: "Jednotné prihlásenie potrebuje nastavenú verejnú adresu servera (public_url, INVEX_PUBLIC_URL).",
    issuer: "Vydavateľ (issuer)",
    issuer_hint: "Presne tak, ako ho poskytovateľ uvádza v dokumente /.well-known/openid-configuration.",
    client_id: "Identifikátor klienta",
    client_secret: "Tajomstvo klienta",
    secret_hint: "Prázdne ponechá uložené tajomstvo; nikdy sa nezobrazuje.",
    domains: "E-mailové domény organizácie",
    domains_hint: "Oddelené medzerou, napr. firma.sk pobocka.firma.sk.",
    scopes: "Ďalšie rozsahy (scopes)",
    role_claim: "Nárok s rolami",
    role_map: "Hodnoty nároku a roly",
    role_map_hint: "Na každom riadku hodnota = rola (admin, accountant, developer, auditor). Pri viacerých zhodách platí najvyššia rola.",
    default_role: "Rola, keď sa žiadna hodnota nezhoduje",
    no_default: "žiadna: prihlásenie sa odmietne",
    required: "Prihlasovať len cez poskytovateľa (heslá sa odmietnu)",
    required_hint: "Zapnúť to môže správca, ktorý sa práve prihlásil cez poskytovateľa.",
    save: "Uložiť",
    saved: "Nastavenie je uložené a poskytovateľ odpovedá.",
    remove: "Zrušiť jednotné prihlásenie",
    removed: "Jednotné prihlásenie je zrušené; účty zostávajú.",
    not_configured: "Jednotné prihlásenie zatiaľ nie je nastavené.",
    moving_on: "Ste prihlásený. Pokračuje sa do konzoly…",
    to_provider: "Pokračuje sa na prihlásenie vašej organizácie…",
    to_provider_link: "Pokračovať na prihlásenie organizácie",
    continue_link: "Pokračovať do konzoly",
    failed_title: "Jednotné prihlásenie sa nepodarilo",
    start_again: "Začať znova",
    state_lost: "Prihlásenie vypršalo, už bolo použité alebo sa začalo v inom prehliadači.",
    provider_refused: "Poskytovateľ identity prihlásenie odmietol:",
    provider_failed: "Odpoveď poskytovateľa identity sa nedá použiť:",
    refused_email_unverified: "Poskytovateľ neposlal overenú e-mailovú adresu.",
    refused_outside_domains: "Vaša adresa nie je v doménach organizácie.",
    refused_no_role: "Vaše skupiny u poskytovateľa nezodpovedajú žiadnej role v invex; požiadajte správcu.",
    refused_other_tenant: "Adresa patrí účtu inej organizácie.",
    refused_disabled: "Váš účet je vypnutý.",
    sso_required: "Vaša organizácia sa prihlasuje len cez svojho poskytovateľa identity: použite jednotné prihlásenie.",
};

const EN: SsoTexts = SsoTexts {
    nav: "Single sign-on",
    title: "Single sign-on (OpenID Connect)",
    intro: "People with an address under your organisation's domains sign in through its identity provider; their role comes from a claim's values as the table below maps them. They get an account at their first sign-in.",
    work_email: "Work e-mail",
    continue_sso: "Continue with single sign-on",
    or: "Or through your organisation's identity provider",
    unknown_domain: "No organisation signs in with single sign-on at this domain. Sign in with your password.",
    redirect_uri: "Redirect URI (register it at the provider)",
    redirect_hint: "A confidential client, authorization code flow with PKCE (S256).",
    no_public_url: "Single sign-on needs the server's public address (public_url, INVEX_PUBLIC_URL).",
    issuer: "Issuer",
    issuer_hint: "Exactly as the provider states it in its /.well-known/openid-configuration document.",
    client_id: "Client ID",
    client_secret: "Client secret",
    secret_hint: "Blank keeps the saved secret; it is never shown.",
    domains: "The organisation's e-mail domains",
    domains_hint: "Separated by spaces, e.g. firma.sk branch.firma.sk.",
    scopes: "Further scopes",
    role_claim: "Claim with the roles",
    role_map: "Claim values and roles",
    role_map_hint: "One value = role per line (admin, accountant, developer, auditor). Where several match, the highest role counts.",
    default_role: "Role when no value matches",
    no_default: "none: the sign-in is refused",
    required: "Sign in through the provider only (passwords are refused)",
    required_hint: "An administrator who has just signed in through the provider can turn this on.",
    save: "Save",
    saved: "The settings are saved and the provider answers.",
    remove: "Remove single sign-on",
    removed: "Single sign-on is removed; accounts stay.",
    not_configured: "Single sign-on is not set up yet.",
    moving_on: "You are signed in. Moving on to the console…",
    to_provider: "Moving on to your organisation's sign-in…",
    to_provider_link: "Continue to your organisation's sign-in",
    continue_link: "Continue to the console",
    failed_title: "Single sign-on failed",
    start_again: "Start again",
    state_lost: "The sign-in expired, was used already, or was started in another browser.",
    provider_refused: "The identity provider refused the sign-in:",
    provider_failed: "The identity provider's answer cannot be used:",
    refused_email_unverified: "The provider sent no verified e-mail address.",
    refused_outside_domains: "Your address is not under the organisation's domains.",
    refused_no_role: "Your groups at the provider map to no role in invex; ask an administrator.",
    refused_other_tenant: "The address belongs to another organisation's account.",
    refused_disabled: "Your account is disabled.",
    sso_required: "Your organisation signs in through its identity provider only: use single sign-on.",
};

pub fn texts(lang: Lang) -> &'static SsoTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

/// The sign-in page's single sign-on form (GET: it changes nothing until the provider
/// answers).
pub fn sign_in_form(lang: Lang, email: &str, error: Option<&str>) -> Markup {
    let s = texts(lang);
    html! {
        h2 { (s.or) }
        @if let Some(e) = error { p.error role="alert" { (e) } }
        form.stack #sso method="get" action=(START) {
            label for="sso-email" { (s.work_email) }
            input id="sso-email" name="email" type="email" autocomplete="email" required value=(email);
            button type="submit" { (s.continue_sso) }
        }
    }
}

/// The address the provider sends people back to: under the configured public URL, else
/// (sandbox) the host the request names. Production without a public URL has none: a
/// redirect URI from a request's Host header could be steered by whoever sends it.
pub fn redirect_uri(state: &AppState, headers: &HeaderMap) -> Option<String> {
    super::public_base(state, headers).map(|base| format!("{base}{CALLBACK}"))
}

#[derive(Debug, Default, Deserialize)]
pub struct StartQuery {
    #[serde(default)]
    email: String,
    lang: Option<String>,
}

/// `GET /console/sso?email=`: to the provider of the address's organisation.
async fn start(
    State(state): State<AppState>,
    Query(q): Query<StartQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let screen = Screen {
        state: &state,
        speech,
        path: "/console/sign-in",
        session: None,
    };
    let (s, t) = (texts(speech.lang), speech.lang.t());
    let again = |status: StatusCode, error: &str| {
        screen.render(
            status,
            t.sign_in_title,
            super::page::sign_in(
                t,
                "",
                None,
                sign_in_form(speech.lang, &q.email, Some(error)),
            ),
        )
    };
    let Some(redirect) = redirect_uri(&state, &headers) else {
        return again(StatusCode::SERVICE_UNAVAILABLE, s.no_public_url);
    };
    let tenant = match state.sso.tenant_of(&q.email).await {
        Ok(Some(t)) => t,
        Ok(None) => return again(StatusCode::NOT_FOUND, s.unknown_domain),
        Err(e) => return failed(&screen, &e),
    };
    match state
        .sso
        .start(&tenant, &redirect, Some(q.email.trim()))
        .await
    {
        Ok(started) => {
            let cookie = format!(
                "{STATE_COOKIE}={}; Path={START}; HttpOnly; SameSite=Lax; Max-Age={}{}",
                started.state,
                started.ttl.as_secs(),
                secure(state.config.mode)
            );
            // A page that moves on, not a redirect: the sign-in form's `form-action 'self'`
            // covers the redirects of its submission too, so a redirect to the provider
            // would be blocked; a page of ours may navigate anywhere.
            let s = texts(speech.lang);
            let mut r = screen.render(
                StatusCode::OK,
                s.title,
                html! {
                    p role="status" { (s.to_provider) }
                    p { a href=(started.url) { (s.to_provider_link) } }
                },
            );
            match HeaderValue::from_str(&format!("0; url={}", started.url)) {
                Ok(v) => {
                    r.headers_mut().insert(header::REFRESH, v);
                }
                Err(_) => {
                    return failed(
                        &screen,
                        &SsoError::Unreachable("the authorization URL cannot be sent".into()),
                    )
                }
            }
            with_cookie(r, &cookie)
        }
        Err(e) => failed(&screen, &e),
    }
}

fn secure(mode: Mode) -> &'static str {
    if mode == Mode::Production {
        "; Secure"
    } else {
        ""
    }
}

/// `GET /console/sso/callback`: the provider's answer.
async fn callback(
    State(state): State<AppState>,
    Query(answer): Query<Callback>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let screen = Screen {
        state: &state,
        speech,
        path: "/console/sign-in",
        session: None,
    };
    let cleared = format!(
        "{STATE_COOKIE}=; Path={START}; HttpOnly; SameSite=Lax; Max-Age=0{}",
        secure(state.config.mode)
    );
    let Some(redirect) = redirect_uri(&state, &headers) else {
        return with_cookie(failed(&screen, &SsoError::NotConfigured), &cleared);
    };
    let cookie = guard::cookie(&headers, STATE_COOKIE);
    let identity = match state
        .sso
        .finish(cookie.as_deref(), &answer, &redirect)
        .await
    {
        Ok(i) => i,
        Err(e) => return with_cookie(failed(&screen, &e), &cleared),
    };
    let response = match state.accounts.sign_in_with(&identity).await {
        Ok(signed) => {
            tracing::info!(person = %signed.person.id, tenant = %signed.person.tenant_id, "signed in through the identity provider");
            let s = texts(speech.lang);
            let mut r = screen.render(
                StatusCode::OK,
                speech.lang.t().sign_in_title,
                html! {
                    p role="status" { (s.moving_on) }
                    p { a href="/console" { (s.continue_link) } }
                },
            );
            r.headers_mut()
                .insert(header::REFRESH, HeaderValue::from_static("0; url=/console"));
            with_cookie(r, &guard::session_cookie(&signed.token, state.config.mode))
        }
        Err(AccountsError::SsoRefused(why)) => {
            tracing::warn!(tenant = %identity.tenant_id, subject = %identity.subject, reason = %why, "single sign-on refused");
            refused(&screen, why)
        }
        Err(e) => screen.error(&e),
    };
    with_cookie(response, &cleared)
}

fn refused(screen: &Screen<'_>, why: Refusal) -> Response {
    let s = texts(screen.speech.lang);
    let text = match why {
        Refusal::EmailUnverified => s.refused_email_unverified,
        Refusal::OutsideDomains => s.refused_outside_domains,
        Refusal::NoRole => s.refused_no_role,
        Refusal::OtherTenant => s.refused_other_tenant,
        Refusal::Disabled => s.refused_disabled,
    };
    failure_page(screen, StatusCode::FORBIDDEN, text, None)
}

/// The page of a sign-in that could not start or finish.
fn failed(screen: &Screen<'_>, e: &SsoError) -> Response {
    let s = texts(screen.speech.lang);
    match e {
        SsoError::StateMismatch | SsoError::AttemptGone => {
            failure_page(screen, StatusCode::BAD_REQUEST, s.state_lost, None)
        }
        SsoError::UnknownDomain | SsoError::NotConfigured => {
            failure_page(screen, StatusCode::NOT_FOUND, s.not_configured, None)
        }
        SsoError::Provider { .. } => {
            let detail = e.to_string();
            failure_page(
                screen,
                StatusCode::UNAUTHORIZED,
                s.provider_refused,
                Some(&detail),
            )
        }
        SsoError::Store(_) => {
            tracing::error!(error = %e, "single sign-on failed");
            let t = screen.speech.lang.t();
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
        _ => {
            tracing::warn!(error = %e, "single sign-on failed at the provider");
            let detail = e.to_string();
            failure_page(
                screen,
                StatusCode::BAD_GATEWAY,
                s.provider_failed,
                Some(&detail),
            )
        }
    }
}

fn failure_page(
    screen: &Screen<'_>,
    status: StatusCode,
    text: &str,
    detail: Option<&str>,
) -> Response {
    let s = texts(screen.speech.lang);
    screen.render(
        status,
        s.failed_title,
        html! {
            p role="alert" { (text) }
            @if let Some(d) = detail { p { code { (d) } } }
            p { a href="/console/sign-in" { (s.start_again) } }
        },
    )
}

#[derive(Debug, Default, Deserialize)]
pub struct SettingsQuery {
    lang: Option<String>,
    done: Option<String>,
}

/// `GET /console/settings/sso` (administrators).
async fn settings(
    State(state): State<AppState>,
    Query(q): Query<SettingsQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let (signed, speech) =
        match signed_in_as(&state, &headers, speech, SETTINGS, allow::ADMIN).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, SETTINGS, &signed);
    let s = texts(speech.lang);
    let saved = match state.sso.settings_of(&signed.1).await {
        Ok(saved) => saved,
        Err(e) => return manage_failed(&screen, &e),
    };
    let form = saved
        .as_ref()
        .map(|(r, d)| SsoForm::of(r, d))
        .unwrap_or_else(|| SsoForm {
            scopes: "email profile".into(),
            role_claim: "groups".into(),
            ..SsoForm::default()
        });
    let notice = match q.done.as_deref() {
        Some("removed") => Some(s.removed),
        _ if saved.is_none() => Some(s.not_configured),
        _ => None,
    };
    let content = settings_page(&screen, &headers, &form, saved.is_some(), notice, None);
    screen.render(StatusCode::OK, s.title, content)
}

#[derive(Debug, Deserialize)]
pub struct SettingsForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    issuer: String,
    #[serde(default)]
    client_id: String,
    #[serde(default)]
    client_secret: String,
    #[serde(default)]
    domains: String,
    #[serde(default)]
    scopes: String,
    #[serde(default)]
    role_claim: String,
    #[serde(default)]
    role_map: String,
    #[serde(default)]
    default_role: String,
    required: Option<String>,
}

/// `POST /console/settings/sso`.
async fn save(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(f): Form<SettingsForm>,
) -> Response {
    let (signed, speech) =
        match signed_form(&state, &headers, SETTINGS, allow::ADMIN, &f.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, SETTINGS, &signed);
    let s = texts(speech.lang);
    let form = SsoForm {
        issuer: f.issuer,
        client_id: f.client_id,
        client_secret: f.client_secret,
        domains: f.domains,
        scopes: f.scopes,
        role_claim: f.role_claim,
        role_map: f.role_map,
        default_role: f.default_role,
        required: f.required.is_some(),
    };
    let saved = state.sso.save(&signed.1, &signed.0, &form).await;
    let shown = SsoForm {
        client_secret: String::new(),
        ..form
    };
    match saved {
        Ok(_) => {
            let content = settings_page(&screen, &headers, &shown, true, Some(s.saved), None);
            screen.render(StatusCode::OK, s.title, content)
        }
        Err(e @ (ManageError::Store(_) | ManageError::NotAdmin)) => manage_failed(&screen, &e),
        Err(e) => {
            let content = settings_page(&screen, &headers, &shown, false, None, Some(&e));
            screen.render(StatusCode::UNPROCESSABLE_ENTITY, s.title, content)
        }
    }
}

/// `POST /console/settings/sso/remove`.
async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(f): Form<CsrfForm>,
) -> Response {
    let (signed, speech) =
        match signed_form(&state, &headers, SETTINGS, allow::ADMIN, &f.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, SETTINGS, &signed);
    match state.sso.remove(&signed.1).await {
        Ok(()) => see_other(&format!("{SETTINGS}?done=removed")),
        Err(e) => manage_failed(&screen, &e),
    }
}

fn manage_failed(screen: &Screen<'_>, e: &ManageError) -> Response {
    let t = screen.speech.lang.t();
    match e {
        ManageError::NotAdmin => {
            screen.message(StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden)
        }
        _ => {
            tracing::error!(error = %e, "single sign-on settings failed");
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
    }
}

/// The settings form; `error` marks its field.
fn settings_page(
    screen: &Screen<'_>,
    headers: &HeaderMap,
    form: &SsoForm,
    saved: bool,
    notice: Option<&str>,
    error: Option<&ManageError>,
) -> Markup {
    let lang = screen.speech.lang;
    let (s, t) = (texts(lang), lang.t());
    let csrf = screen
        .session
        .map(|(session, _)| session.csrf.as_str())
        .unwrap_or("");
    let redirect = redirect_uri(screen.state, headers);
    let field = error.and_then(ManageError::field);
    let invalid = |name: &str| {
        if field == Some(name) {
            Some("true")
        } else {
            None
        }
    };
    let described = |name: &str, hint: &'static str| {
        if field == Some(name) {
            format!("{hint} sso-error")
        } else {
            hint.to_string()
        }
    };
    html! {
        p { (s.intro) }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        @if let Some(e) = error { p.error #sso-error role="alert" { (e) } }
        h2 { (s.redirect_uri) }
        @match &redirect {
            Some(uri) => { p { code.link #sso-redirect-uri { (uri) } } p.hint { (s.redirect_hint) } }
            None => p.error { (s.no_public_url) },
        }
        form.stack method="post" action=(SETTINGS) {
            input type="hidden" name="csrf" value=(csrf);
            label for="issuer" { (s.issuer) }
            input id="issuer" name="issuer" type="url" required value=(form.issuer)
                aria-invalid=[invalid("issuer")] aria-describedby=(described("issuer", "issuer-hint"));
            p.hint #issuer-hint { (s.issuer_hint) }
            label for="client_id" { (s.client_id) }
            input id="client_id" name="client_id" required value=(form.client_id)
                aria-invalid=[invalid("client_id")];
            label for="client_secret" { (s.client_secret) }
            input id="client_secret" name="client_secret" type="password" autocomplete="off"
                aria-invalid=[invalid("client_secret")] aria-describedby=(described("client_secret", "secret-hint"));
            p.hint #secret-hint { (s.secret_hint) }
            label for="domains" { (s.domains) }
            input id="domains" name="domains" required value=(form.domains)
                aria-invalid=[invalid("domains")] aria-describedby=(described("domains", "domains-hint"));
            p.hint #domains-hint { (s.domains_hint) }
            label for="scopes" { (s.scopes) }
            input id="scopes" name="scopes" value=(form.scopes) aria-invalid=[invalid("scopes")];
            label for="role_claim" { (s.role_claim) }
            input id="role_claim" name="role_claim" required value=(form.role_claim)
                aria-invalid=[invalid("role_claim")];
            label for="role_map" { (s.role_map) }
            textarea id="role_map" name="role_map" rows="5"
                aria-invalid=[invalid("role_map")] aria-describedby=(described("role_map", "role-map-hint")) { (form.role_map) }
            p.hint #role-map-hint { (s.role_map_hint) }
            label for="default_role" { (s.default_role) }
            select id="default_role" name="default_role" aria-invalid=[invalid("default_role")] {
                option value="" selected[form.default_role.is_empty()] { (s.no_default) }
                @for (id, name) in &t.role_names {
                    option value=(id) selected[form.default_role == *id] { (name) }
                }
            }
            div.check {
                input id="required" name="required" type="checkbox" value="on" checked[form.required]
                    aria-invalid=[invalid("required")] aria-describedby=(described("required", "required-hint"));
                label for="required" { (s.required) }
            }
            p.hint #required-hint { (s.required_hint) }
            button type="submit" { (s.save) }
        }
        @if saved {
            form method="post" action="/console/settings/sso/remove" {
                input type="hidden" name="csrf" value=(csrf);
                button.quiet type="submit" { (s.remove) }
            }
        }
    }
}
