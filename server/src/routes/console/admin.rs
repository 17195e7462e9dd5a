//! The console's administration screens, for administrators only: a person's page under
//! *People* (change the role, disable, enable) and the tenant's API keys (list, create —
//! the key is shown once, on the answer —, revoke).
//!
//! What may be done is decided elsewhere: people by [`crate::people::Accounts`] (own
//! account, last administrator, tenant), keys by the keys API's own functions and the store
//! (generation and hashing in [`crate::routes::keys::issue_key`], the last admin key in
//! [`crate::store::Store::revoke_key`]). This module answers forms and renders pages.

use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::{Lang, Texts};
use super::{refused_form, CsrfForm, PageQuery, Screen, Speech};
use crate::auth::roles::allow;
use crate::auth::Role;
use crate::people::AccountsError;
use crate::routes::keys::{issue_key, validate_name, CreatedKey};
use crate::state::AppState;
use crate::store::{KeyRecord, PersonRecord, RevokeOutcome};

/// Keys listed on one page of the keys screen.
const KEYS_PER_PAGE: i64 = 50;

/// The administration screens' routes (the console's layers wrap them).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console/people/{id}", get(person))
        .route("/console/people/{id}/role", post(change_role))
        .route("/console/people/{id}/disable", post(disable))
        .route("/console/people/{id}/enable", post(enable))
        .route("/console/people/{id}/link", post(renew_link))
        .route("/console/keys", get(keys).post(create_key))
        .route("/console/keys/{id}/revoke", post(revoke_key))
}

/// The words of the administration screens.
pub struct AdminTexts {
    pub keys: &'static str,
    pub keys_title: &'static str,
    pub keys_intro: &'static str,
    pub no_keys: &'static str,
    pub label: &'static str,
    pub label_hint: &'static str,
    pub prefix: &'static str,
    pub created: &'static str,
    pub action: &'static str,
    pub revoked: &'static str,
    pub revoke: &'static str,
    pub revoke_key: &'static str,
    pub older_keys: &'static str,
    pub create_title: &'static str,
    pub create_key: &'static str,
    pub new_key: &'static str,
    pub key_shown_once: &'static str,
    pub key_use: &'static str,
    pub key_revoked: &'static str,
    pub key_already_revoked: &'static str,
    pub key_not_found: &'static str,
    pub last_admin_key: &'static str,
    pub bad_label: &'static str,
    pub since: &'static str,
    pub role_title: &'static str,
    pub change_role: &'static str,
    pub access_title: &'static str,
    pub disable: &'static str,
    pub disable_hint: &'static str,
    pub enable: &'static str,
    pub enable_hint: &'static str,
    pub own_account: &'static str,
    pub role_changed: &'static str,
    pub disabled_done: &'static str,
    pub enabled_done: &'static str,
    pub last_admin: &'static str,
    pub not_found_title: &'static str,
    pub link_title: &'static str,
    pub link_hint: &'static str,
    pub new_link: &'static str,
    pub not_pending: &'static str,
    pub person_not_found: &'static str,
    pub back_to_people: &'static str,
}

pub static EN: AdminTexts = AdminTexts {
    keys: "Keys",
    keys_title: "API keys",
    keys_intro: "Keys let your systems call the API, each with a role. Only the start of a key (its prefix) is kept readable; the key itself is shown once, when it is created.",
    no_keys: "This tenant has no keys.",
    label: "Label",
    label_hint: "What the key is for, e.g. ERP production (1 to 100 characters).",
    prefix: "Prefix",
    created: "Created",
    action: "Action",
    revoked: "revoked",
    revoke: "Revoke",
    revoke_key: "Revoke key",
    older_keys: "Older keys",
    create_title: "Create a key",
    create_key: "Create key",
    new_key: "The new key",
    key_shown_once: "Key created. Copy it now: it is shown only this once and cannot be shown again.",
    key_use: "Send it in the X-API-Key header (/v1 routes) or as Authorization: Bearer (/api routes).",
    key_revoked: "The key is revoked; the API refuses it from now on:",
    key_already_revoked: "This key was revoked already.",
    key_not_found: "This tenant has no such key.",
    last_admin_key: "This is the tenant's last active administrator key. Create another administrator key first.",
    bad_label: "The label must have 1 to 100 characters.",
    since: "Account created",
    role_title: "Change the role",
    change_role: "Change role",
    access_title: "Access",
    disable: "Disable account",
    disable_hint: "Disabling ends every session of this person at once; they cannot sign in until the account is enabled again.",
    enable: "Enable account",
    enable_hint: "The account is disabled. Enabled again, the person signs in with their password.",
    own_account: "This is your own account: you cannot disable it or give it another role. Another administrator can.",
    role_changed: "The role is changed. New role:",
    disabled_done: "The account is disabled and all its sessions have ended.",
    enabled_done: "The account is enabled; the person can sign in again.",
    last_admin: "Refused: the tenant must keep at least one active administrator. Make someone else an administrator first.",
    not_found_title: "Not found",
    link_title: "Invitation",
    link_hint: "The person has not signed in yet. A new link replaces the earlier ones (a lost mail, an expired link); it is mailed, or shown once.",
    new_link: "New invitation link",
    not_pending: "The person has signed in already; a new invitation link is only for people who have not.",
    person_not_found: "This tenant has no such person.",
    back_to_people: "Back to the list of people",
};

pub static SK: AdminTexts = AdminTexts {
    keys: "Kľúče",
    keys_title: "API kľúče",
    keys_intro: "Kľúčmi volajú API vaše systémy, každý s rolou. Čitateľný zostáva iba začiatok kľúča (prefix); samotný kľúč sa zobrazí raz, keď sa vytvorí.",
    no_keys: "Tento nájomca nemá žiadne kľúče.",
    label: "Označenie",
    label_hint: "Na čo kľúč slúži, napr. ERP produkcia (1 až 100 znakov).",
    prefix: "Prefix",
    created: "Vytvorený",
    action: "Akcia",
    revoked: "zrušený",
    revoke: "Zrušiť",
    revoke_key: "Zrušiť kľúč",
    older_keys: "Staršie kľúče",
    create_title: "Vytvoriť kľúč",
    create_key: "Vytvoriť kľúč",
    new_key: "Nový kľúč",
    key_shown_once: "Kľúč je vytvorený. Skopírujte si ho teraz: zobrazuje sa iba tento raz a znova sa zobraziť nedá.",
    key_use: "Posielajte ho v hlavičke X-API-Key (cesty /v1) alebo ako Authorization: Bearer (cesty /api).",
    key_revoked: "Kľúč je zrušený; API ho odteraz odmieta:",
    key_already_revoked: "Tento kľúč už bol zrušený.",
    key_not_found: "Tento nájomca taký kľúč nemá.",
    last_admin_key: "Toto je posledný aktívny administrátorský kľúč nájomcu. Najprv vytvorte iný administrátorský kľúč.",
    bad_label: "Označenie musí mať 1 až 100 znakov.",
    since: "Účet vytvorený",
    role_title: "Zmena roly",
    change_role: "Zmeniť rolu",
    access_title: "Prístup",
    disable: "Zablokovať účet",
    disable_hint: "Zablokovanie hneď ukončí všetky relácie tejto osoby; prihlásiť sa nemôže, kým sa účet znova neodblokuje.",
    enable: "Odblokovať účet",
    enable_hint: "Účet je zablokovaný. Po odblokovaní sa osoba prihlási svojím heslom.",
    own_account: "Toto je váš vlastný účet: nemôžete ho zablokovať ani mu zmeniť rolu. Môže to urobiť iný administrátor.",
    role_changed: "Rola je zmenená. Nová rola:",
    disabled_done: "Účet je zablokovaný a všetky jeho relácie sa skončili.",
    enabled_done: "Účet je odblokovaný; osoba sa môže znova prihlásiť.",
    last_admin: "Odmietnuté: nájomca musí mať aspoň jedného aktívneho administrátora. Najprv urobte administrátorom niekoho iného.",
    not_found_title: "Nenájdené",
    link_title: "Pozvánka",
    link_hint: "Osoba sa ešte neprihlásila. Nový odkaz nahradí predošlé (stratený e-mail, uplynutý odkaz); pošle sa e-mailom alebo sa zobrazí raz.",
    new_link: "Nový odkaz pozvánky",
    not_pending: "Osoba sa už prihlásila; nový odkaz pozvánky je len pre tých, čo sa ešte neprihlásili.",
    person_not_found: "Tento nájomca takú osobu nemá.",
    back_to_people: "Späť na zoznam ľudí",
};

/// The administration words in `lang`.
pub fn texts(lang: Lang) -> &'static AdminTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

/// The answer to an action, shown at the top of the page it returns.
enum Outcome {
    Done(String),
    Refused(String),
}

fn outcome(o: Option<&Outcome>) -> Markup {
    html! {
        @match o {
            Some(Outcome::Done(text)) => p.notice role="status" { (text) },
            Some(Outcome::Refused(text)) => p.error role="alert" { (text) },
            None => {},
        }
    }
}

/// A recorded moment, readable: `2027-01-15 08:00 UTC`.
fn when(t: &str) -> Markup {
    let short = t.get(..16).unwrap_or(t).replacen('T', " ", 1);
    html! { time datetime=(t) { (short) " UTC" } }
}

/// A person's state, as the People list says it.
fn role_options(t: &Texts, chosen: &str) -> Markup {
    html! {
        @for (id, name) in &t.role_names {
            option value=(id) selected[*id == chosen] { (name) }
        }
    }
}

// ---------------------------------------------------------------------------------------
// People

async fn person(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&query, &headers);
    let (signed, speech) = match super::admin(&state, &headers, speech).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let path = format!("/console/people/{id}");
    let screen = Screen::signed(&state, speech, &path, &signed);
    match state.accounts.person_of(&signed.1, &id).await {
        Ok(p) => person_page(&screen, &p, StatusCode::OK, None, None).await,
        Err(e) => not_found_or_error(&screen, &e),
    }
}

fn not_found_or_error(screen: &Screen<'_>, e: &AccountsError) -> Response {
    let at = texts(screen.speech.lang);
    match e {
        AccountsError::NotFound => screen.message(
            StatusCode::NOT_FOUND,
            at.not_found_title,
            at.person_not_found,
        ),
        e => screen.error(e),
    }
}

async fn person_page(
    screen: &Screen<'_>,
    person: &PersonRecord,
    status: StatusCode,
    answer: Option<&Outcome>,
    invited: Option<&super::page::Invited<'_>>,
) -> Response {
    let t = screen.speech.lang.t();
    let at = texts(screen.speech.lang);
    let Some((session, me)) = screen.session else {
        return screen.error(&AccountsError::NotAdmin);
    };
    let own = person.id == me.id;
    let base = format!("/console/people/{}", person.id);
    let store = &screen.state.store;
    let through_provider = match store.sso_settings(&person.tenant_id).await {
        Ok(None) => false,
        Ok(Some(_)) => match store.has_identity(&person.id).await {
            Ok(b) => b,
            Err(e) => return screen.error(&AccountsError::Store(e)),
        },
        Err(e) => return screen.error(&AccountsError::Store(e)),
    };
    let status_word = super::page::person_status(t, person, through_provider);
    let pending = status_word == t.no_password_yet;
    let content = html! {
        (outcome(answer))
        @if let Some(i) = invited { (super::page::invitation(t, i)) }
        dl {
            dt { (t.email) } dd { (person.email) }
            dt { (t.role) } dd { (t.role(&person.role)) }
            dt { (t.status) } dd { (status_word) }
            dt { (at.since) } dd { (when(&person.created_at)) }
        }
        @if own {
            p.hint { (at.own_account) }
        } @else {
            h2 { (at.role_title) }
            form.stack method="post" action={ (base) "/role" } {
                input type="hidden" name="csrf" value=(session.csrf);
                label for="role" { (t.role) }
                select id="role" name="role" { (role_options(t, &person.role)) }
                button type="submit" { (at.change_role) }
            }
            @if pending {
                h2 { (at.link_title) }
                p.hint { (at.link_hint) }
                form method="post" action={ (base) "/link" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button type="submit" { (at.new_link) }
                }
            }
            h2 { (at.access_title) }
            @if person.disabled_at.is_some() {
                p.hint { (at.enable_hint) }
                form method="post" action={ (base) "/enable" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button type="submit" { (at.enable) }
                }
            } @else {
                p.hint { (at.disable_hint) }
                form method="post" action={ (base) "/disable" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button type="submit" { (at.disable) }
                }
            }
        }
        p { a href="/console/people" { (at.back_to_people) } }
    };
    screen.render(status, &person.email, content)
}

#[derive(Debug, Deserialize)]
struct RoleForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    role: String,
}

#[derive(Clone, Copy)]
enum Action<'a> {
    Role(&'a str),
    Disable,
    Enable,
}

impl Action<'_> {
    fn name(self) -> &'static str {
        match self {
            Action::Role(_) => "role",
            Action::Disable => "disable",
            Action::Enable => "enable",
        }
    }
}

async fn change_role(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<RoleForm>,
) -> Response {
    act(&state, &headers, &id, &form.csrf, Action::Role(&form.role)).await
}

async fn disable(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    act(&state, &headers, &id, &form.csrf, Action::Disable).await
}

async fn enable(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    act(&state, &headers, &id, &form.csrf, Action::Enable).await
}

/// An administrator's action on a person: from this site, with the session's CSRF token;
/// the person's page again with the answer.
async fn act(
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    csrf: &str,
    action: Action<'_>,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), headers);
    let (signed, speech) = match super::admin(state, headers, speech).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let path = format!("/console/people/{id}");
    let screen = Screen {
        state,
        speech,
        path: &path,
        session: Some(&signed),
    };
    if let Some(refused) = refused_form(&screen, headers, &signed.0, csrf) {
        return refused;
    }
    let t = screen.speech.lang.t();
    let at = texts(screen.speech.lang);
    let me = &signed.1;
    let done = match action {
        Action::Role(role) => state.accounts.change_role(me, id, role).await,
        Action::Disable => state.accounts.disable(me, id).await,
        Action::Enable => state.accounts.enable(me, id).await,
    };
    let (status, refusal) = match done {
        Ok(p) => {
            tracing::info!(person_id = %p.id, by = %me.id, action = action.name(), role = %p.role,
                "person changed by an administrator");
            let text = match action {
                Action::Role(_) => format!("{} {}.", at.role_changed, t.role(&p.role)),
                Action::Disable => at.disabled_done.to_string(),
                Action::Enable => at.enabled_done.to_string(),
            };
            return person_page(
                &screen,
                &p,
                StatusCode::OK,
                Some(&Outcome::Done(text)),
                None,
            )
            .await;
        }
        Err(AccountsError::OwnAccount) => (StatusCode::CONFLICT, at.own_account),
        Err(AccountsError::LastAdmin) => (StatusCode::CONFLICT, at.last_admin),
        Err(AccountsError::Role(_)) => (StatusCode::UNPROCESSABLE_ENTITY, t.not_a_role),
        Err(e) => return not_found_or_error(&screen, &e),
    };
    match state.accounts.person_of(me, id).await {
        Ok(p) => {
            person_page(
                &screen,
                &p,
                status,
                Some(&Outcome::Refused(refusal.to_string())),
                None,
            )
            .await
        }
        Err(e) => not_found_or_error(&screen, &e),
    }
}

/// `POST /console/people/{id}/link`: a new invitation link for a person who has not signed
/// in yet, mailed or shown as at the invitation.
async fn renew_link(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let path = format!("/console/people/{id}");
    let (signed, speech) =
        match super::signed_form(&state, &headers, &path, allow::ADMIN, &form.csrf).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let at = texts(speech.lang);
    let refusal = match state.accounts.renew_invitation(&signed.1, &id).await {
        Ok(inv) => {
            let (link, delivery) =
                super::deliver_invitation(&state, &headers, &signed.1, &inv, speech.lang).await;
            let invited = super::page::Invited {
                email: &inv.person.email,
                link: &link,
                expires: &inv.expires_at,
                delivery,
            };
            tracing::info!(person_id = %inv.person.id, by = %signed.1.id, "invitation link renewed");
            return person_page(&screen, &inv.person, StatusCode::OK, None, Some(&invited)).await;
        }
        Err(AccountsError::NotPending) => at.not_pending,
        Err(AccountsError::SsoRequired) => super::sso::texts(speech.lang).sso_required,
        Err(e) => return not_found_or_error(&screen, &e),
    };
    match state.accounts.person_of(&signed.1, &id).await {
        Ok(p) => {
            let answer = Outcome::Refused(refusal.to_string());
            person_page(&screen, &p, StatusCode::CONFLICT, Some(&answer), None).await
        }
        Err(e) => not_found_or_error(&screen, &e),
    }
}

// ---------------------------------------------------------------------------------------
// API keys

#[derive(Debug, Default, Deserialize)]
struct KeysQuery {
    lang: Option<String>,
    before: Option<String>,
}

async fn keys(
    State(state): State<AppState>,
    Query(query): Query<KeysQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(
        &PageQuery {
            lang: query.lang.clone(),
            signed_out: None,
        },
        &headers,
    );
    let (signed, speech) = match super::admin(&state, &headers, speech).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, "/console/keys", &signed);
    keys_page(&screen, query.before.as_deref(), StatusCode::OK, None, None).await
}

/// The keys screen: the answer to an action or the key just created, the tenant's keys
/// (newest first, a page at a time), and the form that creates one.
async fn keys_page(
    screen: &Screen<'_>,
    before: Option<&str>,
    status: StatusCode,
    answer: Option<&Outcome>,
    created: Option<&CreatedKey>,
) -> Response {
    let t = screen.speech.lang.t();
    let at = texts(screen.speech.lang);
    let Some((session, me)) = screen.session else {
        return screen.error(&AccountsError::NotAdmin);
    };
    let rows = match screen
        .state
        .store
        .keys(&me.tenant_id, before, KEYS_PER_PAGE + 1)
        .await
    {
        Ok(rows) => rows,
        Err(e) => return screen.error(&AccountsError::Store(e)),
    };
    let (rows, next) = crate::routes::page::cut(rows, KEYS_PER_PAGE, |k| &k.id);
    let content = html! {
        @if let Some(c) = created {
            section.notice aria-labelledby="new-key" {
                h2 id="new-key" { (at.new_key) }
                p role="status" { (at.key_shown_once) }
                code.link data-copy { (c.key) }
                p.hint { (at.key_use) }
            }
        }
        (outcome(answer))
        p { (at.keys_intro) }
        @if rows.is_empty() {
            p { (at.no_keys) }
        } @else {
            (key_table(t, at, &rows, &session.csrf))
        }
        @if let Some(n) = next {
            p { a rel="next" href={ "/console/keys?before=" (n) } { (at.older_keys) } }
        }
        h2 { (at.create_title) }
        form.stack method="post" action="/console/keys" {
            input type="hidden" name="csrf" value=(session.csrf);
            label for="name" { (at.label) }
            input id="name" name="name" type="text" required maxlength="100"
                  aria-describedby="name-hint";
            p.hint id="name-hint" { (at.label_hint) }
            label for="role" { (t.role) }
            select id="role" name="role" { (role_options(t, Role::Developer.as_str())) }
            button type="submit" { (at.create_key) }
        }
    };
    screen.render(status, at.keys_title, content)
}

fn key_table(t: &Texts, at: &AdminTexts, rows: &[KeyRecord], csrf: &str) -> Markup {
    html! {
        table {
            thead {
                tr {
                    th scope="col" { (at.label) }
                    th scope="col" { (at.prefix) }
                    th scope="col" { (t.role) }
                    th scope="col" { (at.created) }
                    th scope="col" { (t.status) }
                    th scope="col" { (at.action) }
                }
            }
            tbody {
                @for k in rows {
                    tr {
                        td { (k.name) }
                        td { code { (k.prefix) } }
                        td { (t.role(&k.role)) }
                        td { (when(&k.created_at)) }
                        td {
                            @if let Some(r) = &k.revoked_at {
                                (at.revoked) " " (when(r))
                            } @else {
                                (t.active)
                            }
                        }
                        td {
                            @if k.revoked_at.is_none() {
                                form.inline method="post" action={ "/console/keys/" (k.id) "/revoke" } {
                                    input type="hidden" name="csrf" value=(csrf);
                                    button.quiet type="submit"
                                           aria-label={ (at.revoke_key) " " (k.prefix) " (" (k.name) ")" } {
                                        (at.revoke)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
struct KeyForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
}

/// Create a key as `POST /v1/keys` does (the same roles, the same label rule, the same
/// generation and hashing); the answer shows it, once.
async fn create_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<KeyForm>,
) -> Response {
    let (signed, speech) =
        match super::signed_form(&state, &headers, "/console/keys", allow::ADMIN, &form.csrf).await
        {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, "/console/keys", &signed);
    let t = screen.speech.lang.t();
    let at = texts(screen.speech.lang);
    let checked = match (Role::parse(&form.role), validate_name("name", &form.name)) {
        (None, _) => Err(t.not_a_role),
        (_, Err(_)) => Err(at.bad_label),
        (Some(role), Ok(name)) => Ok((role, name)),
    };
    let (role, name) = match checked {
        Ok(c) => c,
        Err(text) => {
            let answer = Outcome::Refused(text.to_string());
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            return keys_page(&screen, None, status, Some(&answer), None).await;
        }
    };
    match issue_key(&state, &signed.1.tenant_id, role, name).await {
        Ok(created) => {
            tracing::info!(key_id = %created.view.id, role = role.as_str(), by = %signed.1.id,
                "API key created in the console");
            keys_page(&screen, None, StatusCode::CREATED, None, Some(&created)).await
        }
        Err(problem) => {
            tracing::error!(detail = %problem.detail, "creating a key in the console failed");
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
    }
}

/// Revoke a key as `DELETE /v1/keys/{id}` does: of this tenant only, never its last admin
/// key; this instance stops accepting it at once.
async fn revoke_key(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let (signed, speech) =
        match super::signed_form(&state, &headers, "/console/keys", allow::ADMIN, &form.csrf).await
        {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, "/console/keys", &signed);
    let at = texts(screen.speech.lang);
    let tenant = &signed.1.tenant_id;
    let (status, answer) = match state.store.revoke_key(tenant, &id).await {
        Ok(RevokeOutcome::Now) => {
            state.auth.forget(&id);
            tracing::info!(key_id = %id, by = %signed.1.id, "API key revoked in the console");
            let named = match state.store.key(tenant, &id).await {
                Ok(Some(k)) => format!("{} {} ({})", at.key_revoked, k.prefix, k.name),
                _ => at.key_revoked.trim_end_matches(':').to_string(),
            };
            (StatusCode::OK, Outcome::Done(named))
        }
        Ok(RevokeOutcome::Already) => (
            StatusCode::CONFLICT,
            Outcome::Refused(at.key_already_revoked.to_string()),
        ),
        Ok(RevokeOutcome::NotFound) => (
            StatusCode::NOT_FOUND,
            Outcome::Refused(at.key_not_found.to_string()),
        ),
        Ok(RevokeOutcome::LastAdmin) => (
            StatusCode::CONFLICT,
            Outcome::Refused(at.last_admin_key.to_string()),
        ),
        Err(e) => return screen.error(&AccountsError::Store(e)),
    };
    keys_page(&screen, None, status, Some(&answer), None).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_languages_have_every_text() {
        for at in [&EN, &SK] {
            for text in [
                at.keys,
                at.keys_title,
                at.own_account,
                at.last_admin,
                at.revoke,
            ] {
                assert!(!text.is_empty());
            }
        }
        assert_ne!(texts(Lang::Sk).keys, texts(Lang::En).keys);
    }

    #[test]
    fn moments_are_shown_to_the_minute() {
        let m = when("2027-01-15T08:00:00.123456Z").into_string();
        assert_eq!(
            m,
            "<time datetime=\"2027-01-15T08:00:00.123456Z\">2027-01-15 08:00 UTC</time>"
        );
    }
}
