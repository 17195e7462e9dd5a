//! The Connections screen (administration): the tenant's connections to delivery partners,
//! a new one (the sandbox partner, or an `http` partner with its API root and key; its
//! callback URL and secret shown once), and activation. Reading is for every role, as on the
//! API; creating and activating for administrators.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::Lang;
use super::page;
use super::{see_other, signed_in_as, Screen, Speech};
use crate::auth::roles::allow;
use crate::sending::connections::{self, Activation, NewConnection};
use crate::state::AppState;
use crate::store::ConnectionRecord;

const PATH: &str = "/console/connections";

pub struct CTexts {
    pub nav: &'static str,
    title: &'static str,
    empty: &'static str,
    name: &'static str,
    partner: &'static str,
    state: &'static str,
    created: &'static str,
    activated: &'static str,
    activate: &'static str,
    new_title: &'static str,
    base_url: &'static str,
    api_key: &'static str,
    http_hint: &'static str,
    create: &'static str,
    created_message: &'static str,
    callback: &'static str,
    callback_hint: &'static str,
    activated_message: &'static str,
    already_active: &'static str,
    not_found: &'static str,
    pending: &'static str,
    active: &'static str,
}

const SK: CTexts = CTexts {
    nav: "Prepojenia",
    title: "Prepojenia na doručovateľov",
    empty: "Žiadne prepojenie: bez aktívneho prepojenia sa faktúry neodosielajú.",
    name: "Názov",
    partner: "Doručovateľ",
    state: "Stav",
    created: "Vytvorené",
    activated: "Aktivované",
    activate: "Aktivovať",
    new_title: "Nové prepojenie",
    base_url: "Adresa API doručovateľa (https)",
    api_key: "Kľúč API doručovateľa",
    http_hint: "Len pre doručovateľa „http“; kľúč sa nikdy nezobrazí znova.",
    create: "Vytvoriť prepojenie",
    created_message: "Prepojenie je vytvorené; aktivujte ho, aby sa cez neho odosielalo.",
    callback: "Adresa a tajomstvo pre odpovede doručovateľa",
    callback_hint: "Zobrazí sa iba teraz; zadajte ich u doručovateľa.",
    activated_message: "Prepojenie je aktívne: faktúry sa odosielajú cez neho.",
    already_active: "Prepojenie už je aktívne.",
    not_found: "Takéto prepojenie vaša organizácia nemá.",
    pending: "čaká na aktiváciu",
    active: "aktívne",
};

const EN: CTexts = CTexts {
    nav: "Connections",
    title: "Delivery partner connections",
    empty: "No connection: without an active one, invoices are not sent.",
    name: "Name",
    partner: "Partner",
    state: "State",
    created: "Created",
    activated: "Activated",
    activate: "Activate",
    new_title: "New connection",
    base_url: "The partner's API root (https)",
    api_key: "The partner's API key",
    http_hint: "For the \"http\" partner only; the key is never shown again.",
    create: "Create the connection",
    created_message: "The connection is created; activate it to send through it.",
    callback: "URL and secret for the partner's responses",
    callback_hint: "Shown only now; enter them at the partner.",
    activated_message: "The connection is active: invoices are sent through it.",
    already_active: "The connection is active already.",
    not_found: "Your organisation has no such connection.",
    pending: "pending activation",
    active: "active",
};

pub fn texts(lang: Lang) -> &'static CTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    lang: Option<String>,
    done: Option<String>,
}

/// `GET /console/connections`.
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let (signed, speech) = match signed_in_as(&state, &headers, speech, PATH, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let c = texts(screen.speech.lang);
    let done = (q.done.as_deref() == Some("activated")).then_some(c.activated_message);
    connections_page(&screen, StatusCode::OK, done, None, None).await
}

/// The list, the answer of the last action, and (for administrators) the form for a new one.
/// `created` is a connection just made, with its callback secret shown once.
async fn connections_page(
    screen: &Screen<'_>,
    status: StatusCode,
    done: Option<&str>,
    error: Option<&str>,
    created: Option<&ConnectionRecord>,
) -> Response {
    let state = screen.state;
    let (c, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let Some((session, person)) = screen.session else {
        return screen.message(StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden);
    };
    let rows = match state.store.connections(&person.tenant_id, None, 200).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "connections not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let admin = allow::ADMIN.iter().any(|r| r.as_str() == person.role);
    let csrf = session.csrf.as_str();
    let content = html! {
        @if let Some(d) = done { p.notice role="status" { (d) } }
        @if let Some(e) = error { p.error role="alert" { (e) } }
        @if let Some(made) = created {
            div.notice role="status" {
                p { (c.created_message) }
                @if let Some(secret) = &made.callback_secret {
                    h2 { (c.callback) }
                    code.link { "/v1/partner/callbacks/" (made.id) }
                    code.link data-copy { (secret) }
                    p.hint { (c.callback_hint) }
                }
            }
        }
        (page::listing(
            c.empty,
            &[c.name, c.partner, c.state, c.created, c.activated],
            (!rows.is_empty()).then(|| html! {
                @for r in &rows {
                    tr {
                        td { (r.name) }
                        td { code { (r.partner) } }
                        td {
                            @if r.status == "active" { (c.active) } @else { (c.pending) }
                        }
                        td { (r.created_at) }
                        td {
                            @match &r.activated_at {
                                Some(at) => (at),
                                None => @if admin {
                                    form.inline method="post" action={ (PATH) "/" (r.id) "/activate" } {
                                        input type="hidden" name="csrf" value=(csrf);
                                        button.quiet type="submit" aria-label={ (c.activate) " " (r.name) } { (c.activate) }
                                    }
                                },
                            }
                        }
                    }
                }
            }),
        ))
        @if admin { (new_form(c, csrf, state.config.mode)) }
    };
    screen.render(status, c.title, content)
}

fn new_form(c: &CTexts, csrf: &str, mode: crate::settings::Mode) -> Markup {
    html! {
        h2 { (c.new_title) }
        form.stack method="post" action=(PATH) {
            input type="hidden" name="csrf" value=(csrf);
            label for="name" { (c.name) }
            input id="name" name="name" maxlength="100";
            label for="partner" { (c.partner) }
            select id="partner" name="partner" {
                @for p in connections::partners(mode) { option value=(p) { (p) } }
            }
            label for="base_url" { (c.base_url) }
            input id="base_url" name="base_url" type="url" aria-describedby="http-hint";
            label for="api_key" { (c.api_key) }
            input id="api_key" name="api_key" type="password" autocomplete="off" aria-describedby="http-hint";
            p.hint id="http-hint" { (c.http_hint) }
            button type="submit" { (c.create) }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ConnectionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    partner: String,
    name: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
}

/// `POST /console/connections`: a new connection, as `POST /v1/connections`.
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<ConnectionForm>,
) -> Response {
    let (signed, speech) =
        match super::signed_form(&state, &headers, PATH, allow::ADMIN, &form.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let new = NewConnection {
        partner: form.partner,
        name: form.name,
        base_url: form.base_url,
        api_key: form.api_key,
    };
    let made = connections::create(
        &state.store,
        state.config.mode,
        state.environment(),
        &signed.1.tenant_id,
        new,
    )
    .await;
    match made {
        Ok(record) => {
            tracing::info!(connection_id = %record.id, by = %signed.1.id, "connection created in the console");
            connections_page(&screen, StatusCode::CREATED, None, None, Some(&record)).await
        }
        Err(connections::ConnectionError::Store(e)) => {
            tracing::error!(error = %e, "connection not stored");
            let t = screen.speech.lang.t();
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
        // The capability's own words name the field at fault (they are the API's too).
        Err(e) => {
            let text = e.to_string();
            connections_page(
                &screen,
                StatusCode::UNPROCESSABLE_ENTITY,
                None,
                Some(&text),
                None,
            )
            .await
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/connections/{id}/activate`.
pub async fn activate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfOnly>,
) -> Response {
    let (signed, speech) =
        match super::signed_form(&state, &headers, PATH, allow::ADMIN, &form.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let c = texts(screen.speech.lang);
    match connections::activate(&state.store, &signed.1.tenant_id, &id).await {
        Ok(Activation::Activated(_)) => see_other(&format!("{PATH}?done=activated")),
        Ok(Activation::AlreadyActive(_)) => {
            connections_page(
                &screen,
                StatusCode::CONFLICT,
                None,
                Some(c.already_active),
                None,
            )
            .await
        }
        Ok(Activation::NotFound) => screen.message(StatusCode::NOT_FOUND, c.title, c.not_found),
        Err(e) => {
            tracing::error!(error = %e, "connection not activated");
            let t = screen.speech.lang.t();
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
    }
}
