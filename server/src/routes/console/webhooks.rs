//! The Webhooks screens: the tenant's endpoints, and one endpoint with its delivery log (each
//! attempt's answer, the delivery's state and its next attempt), a test event, redelivery of
//! an event, and secret rotation (the new secret shown once). The roles are the API's for
//! webhooks: administrators and developers. Endpoints are registered and changed through the
//! API (`POST /v1/webhooks`, `PATCH /v1/webhooks/{id}`).

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::Lang;
use super::page;
use super::{see_other, signed_in_as, PageQuery, Screen, Speech};
use crate::auth::roles::allow;
use crate::state::AppState;
use crate::store::webhooks::EndpointRecord;
use crate::webhooks::manage;

const PATH: &str = "/console/webhooks";
const PAGE: i64 = 50;

pub struct WTexts {
    pub nav: &'static str,
    title: &'static str,
    empty: &'static str,
    url: &'static str,
    events: &'static str,
    state: &'static str,
    enabled: &'static str,
    disabled: &'static str,
    created: &'static str,
    deliveries: &'static str,
    no_deliveries: &'static str,
    at: &'static str,
    event: &'static str,
    attempt: &'static str,
    answer: &'static str,
    delivery: &'static str,
    next_attempt: &'static str,
    redeliver: &'static str,
    test: &'static str,
    rotate: &'static str,
    rotate_hint: &'static str,
    new_secret: &'static str,
    new_secret_hint: &'static str,
    tested: &'static str,
    redelivered: &'static str,
    is_disabled: &'static str,
    not_found: &'static str,
    older: &'static str,
    api_hint: &'static str,
}

const SK: WTexts = WTexts {
    nav: "Webhooky",
    title: "Webhooky",
    empty: "Žiadny koncový bod. Zaregistrujte ho cez API (POST /v1/webhooks).",
    url: "Adresa",
    events: "Udalosti",
    state: "Stav",
    enabled: "zapnutý",
    disabled: "vypnutý",
    created: "Vytvorený",
    deliveries: "Doručovanie",
    no_deliveries: "Zatiaľ žiadny pokus o doručenie.",
    at: "Kedy",
    event: "Udalosť",
    attempt: "Pokus",
    answer: "Odpoveď",
    delivery: "Doručenie",
    next_attempt: "Ďalší pokus",
    redeliver: "Doručiť znova",
    test: "Poslať skúšobnú udalosť",
    rotate: "Vymeniť tajomstvo",
    rotate_hint: "Staré tajomstvo podpisuje ešte 24 hodín spolu s novým.",
    new_secret: "Nové tajomstvo",
    new_secret_hint: "Zobrazí sa iba teraz; uložte ho do prijímača webhookov.",
    tested: "Skúšobná udalosť čaká na doručenie.",
    redelivered: "Udalosť čaká na nové doručenie.",
    is_disabled: "Koncový bod je vypnutý; zapnite ho cez API (PATCH).",
    not_found: "Takýto koncový bod vaša organizácia nemá.",
    older: "Staršie",
    api_hint: "Koncové body sa registrujú a menia cez API: POST a PATCH /v1/webhooks.",
};

const EN: WTexts = WTexts {
    nav: "Webhooks",
    title: "Webhooks",
    empty: "No endpoint. Register one through the API (POST /v1/webhooks).",
    url: "URL",
    events: "Events",
    state: "State",
    enabled: "enabled",
    disabled: "disabled",
    created: "Created",
    deliveries: "Deliveries",
    no_deliveries: "No delivery attempt yet.",
    at: "When",
    event: "Event",
    attempt: "Attempt",
    answer: "Answer",
    delivery: "Delivery",
    next_attempt: "Next attempt",
    redeliver: "Redeliver",
    test: "Send a test event",
    rotate: "Rotate the secret",
    rotate_hint: "The old secret signs beside the new one for 24 hours.",
    new_secret: "New secret",
    new_secret_hint: "Shown only now; store it in your webhook receiver.",
    tested: "The test event waits for delivery.",
    redelivered: "The event waits for a new delivery.",
    is_disabled: "The endpoint is disabled; enable it through the API (PATCH).",
    not_found: "Your organisation has no such endpoint.",
    older: "Older",
    api_hint: "Endpoints are registered and changed through the API: POST and PATCH /v1/webhooks.",
};

pub fn texts(lang: Lang) -> &'static WTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

/// `GET /console/webhooks`.
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&q, &headers);
    let (signed, speech) =
        match signed_in_as(&state, &headers, speech, PATH, allow::INTEGRATION).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let (w, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let endpoints = match state
        .store
        .webhook_endpoints(&signed.1.tenant_id, None, 200)
        .await
    {
        Ok(e) => e,
        Err(e) => {
            tracing::error!(error = %e, "webhook endpoints not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let content = html! {
        (page::listing(
            w.empty,
            &[w.url, w.events, w.state, w.created],
            (!endpoints.is_empty()).then(|| html! {
                @for e in &endpoints {
                    tr {
                        td { a href={ (PATH) "/" (e.id) } { (e.url) } }
                        td { (e.event_types.join(", ")) }
                        td { (state_of(w, e)) }
                        td { (e.created_at) }
                    }
                }
            }),
        ))
        p.hint { (w.api_hint) }
    };
    screen.render(StatusCode::OK, w.title, content)
}

fn state_of(w: &WTexts, e: &EndpointRecord) -> String {
    match (e.enabled, &e.disabled_reason) {
        (true, _) => w.enabled.to_string(),
        (false, Some(why)) => format!("{} ({why})", w.disabled),
        (false, None) => w.disabled.to_string(),
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ShowQuery {
    lang: Option<String>,
    before: Option<String>,
    done: Option<String>,
}

/// `GET /console/webhooks/{id}`.
pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ShowQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let path = format!("{PATH}/{id}");
    let (signed, speech) =
        match signed_in_as(&state, &headers, speech, &path, allow::INTEGRATION).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let w = texts(screen.speech.lang);
    let done = match q.done.as_deref() {
        Some("tested") => Some(w.tested),
        Some("redelivered") => Some(w.redelivered),
        _ => None,
    };
    endpoint_page(&screen, &signed, &id, q.before.as_deref(), done, None).await
}

/// One endpoint with its deliveries; `secret` is a secret just made (shown once).
async fn endpoint_page(
    screen: &Screen<'_>,
    signed: &(crate::store::SessionRecord, crate::store::PersonRecord),
    id: &str,
    before: Option<&str>,
    done: Option<&str>,
    secret: Option<&str>,
) -> Response {
    let state = screen.state;
    let (w, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let failed = |e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "webhook endpoint not read");
        screen.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            t.error_title,
            t.error_detail,
        )
    };
    let tenant = &signed.1.tenant_id;
    let endpoint = match state.store.webhook_endpoint(tenant, id).await {
        Ok(Some(e)) => e,
        Ok(None) => return screen.message(StatusCode::NOT_FOUND, w.title, w.not_found),
        Err(e) => return failed(&e),
    };
    let attempts = match state
        .store
        .webhook_attempts(tenant, id, before, PAGE + 1)
        .await
    {
        Ok(a) => a,
        Err(e) => return failed(&e),
    };
    let (attempts, next) = crate::routes::page::cut(attempts, PAGE, |a| &a.id);
    let csrf = signed.0.csrf.as_str();
    let action = format!("{PATH}/{id}");
    let content = html! {
        @if let Some(d) = done { p.notice role="status" { (d) } }
        @if let Some(secret) = secret {
            div.notice role="status" {
                h2 { (w.new_secret) }
                code.link data-copy { (secret) }
                p.hint { (w.new_secret_hint) }
            }
        }
        dl {
            dt { (w.url) } dd { code { (endpoint.url) } }
            dt { (w.events) } dd { (endpoint.event_types.join(", ")) }
            dt { (w.state) } dd { (state_of(w, &endpoint)) }
            dt { (w.created) } dd { (endpoint.created_at) }
        }
        div.actions {
            @if endpoint.enabled {
                (post_form(&action, "test", csrf, w.test, None))
            } @else {
                p.hint { (w.is_disabled) }
            }
            (post_form(&action, "rotate-secret", csrf, w.rotate, Some(w.rotate_hint)))
        }
        h2 { (w.deliveries) }
        @if attempts.is_empty() {
            p { (w.no_deliveries) }
        } @else {
            table.deliveries {
                thead { tr {
                    th scope="col" { (w.at) }
                    th scope="col" { (w.event) }
                    th scope="col" { (w.attempt) }
                    th scope="col" { (w.answer) }
                    th scope="col" { (w.delivery) }
                    th scope="col" { (w.next_attempt) }
                    th scope="col" { span.visually-hidden { (w.redeliver) } }
                } }
                tbody {
                    @for a in &attempts {
                        tr {
                            td { (a.attempted_at) }
                            td { code { (a.event_type) } }
                            td { (a.attempt) }
                            td {
                                @if let Some(s) = a.http_status { "HTTP " (s) }
                                @if let Some(e) = &a.error { " " (e) }
                                " (" (a.duration_ms) " ms)"
                            }
                            td { (a.delivery_status) }
                            td { (a.next_attempt_at.as_deref().unwrap_or("")) }
                            td {
                                @if endpoint.enabled && a.delivery_status != "pending" {
                                    form.inline method="post" action={ (action) "/deliveries/" (a.delivery_id) "/redeliver" } {
                                        input type="hidden" name="csrf" value=(csrf);
                                        button.quiet type="submit" aria-label={ (w.redeliver) " " (a.event_type) " " (a.attempted_at) } { (w.redeliver) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if let Some(next) = next {
            p { a href={ (action) "?before=" (next) } rel="next" { (w.older) } }
        }
    };
    screen.render(
        StatusCode::OK,
        &format!("{} · {}", w.title, endpoint.url),
        content,
    )
}

fn post_form(action: &str, what: &str, csrf: &str, label: &str, hint: Option<&str>) -> Markup {
    html! {
        form.stack method="post" action={ (action) "/" (what) } {
            input type="hidden" name="csrf" value=(csrf);
            button type="submit" { (label) }
            @if let Some(h) = hint { p.hint { (h) } }
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/webhooks/{id}/test|rotate-secret` and
/// `/deliveries/{delivery}/redeliver`.
pub async fn act(
    State(state): State<AppState>,
    Path(params): Path<Vec<(String, String)>>,
    headers: HeaderMap,
    Form(form): Form<CsrfOnly>,
) -> Response {
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let (id, action, delivery) = (param("id"), param("action"), param("delivery"));
    let path = format!("{PATH}/{id}");
    let (signed, speech) =
        match super::signed_form(&state, &headers, &path, allow::INTEGRATION, &form.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let (w, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let tenant = signed.1.tenant_id.clone();
    let failed = |e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "webhook action failed");
        screen.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            t.error_title,
            t.error_detail,
        )
    };
    let endpoint = match state.store.webhook_endpoint(&tenant, &id).await {
        Ok(Some(e)) => e,
        Ok(None) => return screen.message(StatusCode::NOT_FOUND, w.title, w.not_found),
        Err(e) => return failed(&e),
    };
    let refused_disabled = || screen.message(StatusCode::CONFLICT, w.title, w.is_disabled);
    match (action.as_str(), delivery.is_empty()) {
        ("test", true) => {
            if !endpoint.enabled {
                return refused_disabled();
            }
            match manage::send_test(&state.store, &tenant, &id, state.environment(), None).await {
                Ok(Some(_)) => see_other(&format!("{path}?done=tested")),
                Ok(None) => refused_disabled(),
                Err(e) => failed(&e),
            }
        }
        ("rotate-secret", true) => match manage::rotate_secret(&state.store, endpoint).await {
            // The answer page itself shows the secret: a redirect would have to carry it.
            Ok(rotated) => {
                endpoint_page(&screen, &signed, &id, None, None, Some(&rotated.secret)).await
            }
            Err(e) => failed(&e),
        },
        ("redeliver", false) => {
            if !endpoint.enabled {
                return refused_disabled();
            }
            match manage::redeliver(&state.store, &tenant, &id, &delivery).await {
                Ok(Some(_)) => see_other(&format!("{path}?done=redelivered")),
                Ok(None) => screen.message(StatusCode::NOT_FOUND, w.title, w.not_found),
                Err(e) => failed(&e),
            }
        }
        _ => screen.message(StatusCode::NOT_FOUND, w.title, w.not_found),
    }
}
