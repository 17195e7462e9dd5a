//! The console's page frame and its pages, as HTML built with maud (escaped by
//! construction; compiled into the binary, so there is no template to ship or to load).

use maud::{html, Markup, DOCTYPE};

use super::i18n::{Lang, Texts};
use crate::store::PersonRecord;

/// What every page shows around its content.
pub struct Frame<'a> {
    pub lang: Lang,
    pub title: &'a str,
    pub sandbox: bool,
    /// The path the language switch returns to.
    pub path: &'a str,
    /// The person signed in and the session's CSRF token.
    pub session: Option<(&'a PersonRecord, &'a str)>,
}

pub fn page(f: &Frame<'_>, content: Markup) -> Markup {
    let t = f.lang.t();
    let kept = match super::page_query() {
        q if q.is_empty() => q,
        q => q + "&",
    };
    html! {
        (DOCTYPE)
        html lang=(f.lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (f.title) " · invex" }
                link rel="stylesheet" href="/console/assets/console.css";
                link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml";
                script src="/console/assets/console.js" defer {}
            }
            body {
                a.skip href="#content" { (t.skip_to_content) }
                // The sandbox banner is part of the page's header (banner landmark), so
                // that no content stands outside a landmark.
                header {
                    @if f.sandbox {
                        p.sandbox role="note" { (t.sandbox_banner) }
                    }
                    div.top {
                        a.brand href="/console" { "invex" }
                        nav aria-label="invex" {
                            ul {
                                @if let Some((person, _)) = f.session {
                                    @if person.role != "auditor" {
                                        li { a href="/console/validate" { (super::validate::texts(f.lang).nav) } }
                                    }
                                    li { a href="/console/invoices" { (super::invoices::texts(f.lang).nav) } }
                                    li { a href="/console/review" { (super::review::texts(f.lang).nav) } }
                                    @if person.role == "admin" || person.role == "developer" {
                                        li { a href="/console/webhooks" { (super::webhooks::texts(f.lang).nav) } }
                                    }
                                    li { a href="/console/rules" { (t.rules) } }
                                }
                                @if let Some((person, _)) = f.session {
                                    @if person.role == "admin" {
                                        li { a href="/console/people" { (t.people) } }
                                        li { a href="/console/keys" { (super::admin::texts(f.lang).keys) } }
                                        li { a href="/console/connections" { (super::connections::texts(f.lang).nav) } }
                                        li { a href="/console/settings/sso" { (super::sso::texts(f.lang).nav) } }
                                    }
                                }
                                li {
                                    a href={ (f.path) "?" (kept) "lang=" (f.lang.other().code()) }
                                      lang=(f.lang.other().code()) hreflang=(f.lang.other().code()) {
                                        (t.switch_to)
                                    }
                                }
                                @if let Some((_, csrf)) = f.session {
                                    li {
                                        form.inline method="post" action="/console/sign-out" {
                                            input type="hidden" name="csrf" value=(csrf);
                                            button.quiet type="submit" { (t.sign_out) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                main id="content" tabindex="-1" {
                    h1 { (f.title) }
                    (content)
                }
            }
        }
    }
}

/// The sign-in page: address and password, then `sso`, the single sign-on form.
pub fn sign_in(t: &Texts, email: &str, error: Option<&str>, sso: Markup) -> Markup {
    html! {
        @if let Some(e) = error {
            p.error role="alert" { (e) }
        }
        form.stack method="post" action="/console/sign-in" {
            label for="email" { (t.email) }
            input id="email" name="email" type="email" autocomplete="username" required value=(email);
            label for="password" { (t.password) }
            input id="password" name="password" type="password" autocomplete="current-password" required;
            button type="submit" { (t.sign_in) }
        }
        (sso)
    }
}

pub fn home(t: &Texts, person: &PersonRecord, csrf: &str, notice: Option<&str>) -> Markup {
    html! {
        @if let Some(n) = notice {
            p.notice role="status" { (n) }
        }
        dl {
            dt { (t.signed_in_as) } dd { (person.email) }
            dt { (t.role) } dd { (t.role(&person.role)) }
            dt { (t.tenant) } dd { code { (person.tenant_id) } }
        }
        form method="post" action="/console/sign-out-everywhere" {
            input type="hidden" name="csrf" value=(csrf);
            button.quiet type="submit" { (t.sign_out_everywhere) }
        }
    }
}

pub fn link_form(t: &Texts, first_admin: bool, error: Option<&str>, email: &str) -> Markup {
    html! {
        p { (if first_admin { t.link_first_admin } else { t.link_invitation }) }
        @if let Some(e) = error {
            p.error role="alert" { (e) }
        }
        form.stack method="post" {
            @if first_admin {
                label for="email" { (t.email) }
                input id="email" name="email" type="email" autocomplete="username" required value=(email);
            }
            label for="password" { (t.new_password) }
            input id="password" name="password" type="password" autocomplete="new-password"
                  minlength="12" required aria-describedby="password-hint";
            p.hint id="password-hint" { (t.password_hint) }
            button type="submit" { (t.set_password) }
        }
    }
}

pub fn message(text: &str) -> Markup {
    html! { p role="alert" { (text) } }
}

pub struct PersonRow<'a> {
    /// Links the row to the person's administration page.
    pub id: &'a str,
    pub email: &'a str,
    pub role: &'a str,
    pub status: &'a str,
}

/// How an invitation's link goes to the invited person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// No SMTP configured: the admin passes the link on.
    Shown,
    /// Mailed to the person; the link is not shown.
    Mailed,
    /// Mailing failed: the admin is told so and passes the link on.
    MailFailed,
}

/// An invitation just created.
pub struct Invited<'a> {
    pub email: &'a str,
    pub link: &'a str,
    pub expires: &'a str,
    pub delivery: Delivery,
}

/// An invitation just created (or renewed): mailed, or its link shown once.
pub fn invitation(t: &Texts, i: &Invited<'_>) -> Markup {
    html! {
        section.notice aria-labelledby="invited" {
            @match i.delivery {
                Delivery::Mailed => {
                    h2 id="invited" { (t.invitation_sent) }
                    p role="status" { (t.invitation_mailed) " " strong { (i.email) } "." }
                }
                Delivery::Shown => {
                    h2 id="invited" { (t.invitation_link) }
                    p role="status" { (t.invited) }
                    code.link data-copy { (i.link) }
                }
                Delivery::MailFailed => {
                    h2 id="invited" { (t.invitation_link) }
                    p.error role="alert" {
                        (t.mail_not_sent) " " strong { (i.email) } ". " (t.mail_pass_on)
                    }
                    code.link data-copy { (i.link) }
                }
            }
            p.hint { (t.invitation_expires) " " (i.expires) }
        }
    }
}

/// A person's state as the console says it.
pub fn person_status(t: &Texts, p: &PersonRecord, signs_in_through_provider: bool) -> &'static str {
    if p.disabled_at.is_some() {
        t.disabled
    } else if signs_in_through_provider {
        t.signs_in_sso
    } else if p.password_hash.is_none() {
        t.no_password_yet
    } else {
        t.active
    }
}

pub fn people(
    t: &Texts,
    rows: &[PersonRow<'_>],
    csrf: &str,
    error: Option<&str>,
    invited: Option<&Invited<'_>>,
) -> Markup {
    html! {
        @if let Some(i) = invited { (invitation(t, i)) }
        table {
            thead { tr { th scope="col" { (t.email) } th scope="col" { (t.role) } th scope="col" { (t.status) } } }
            tbody {
                @for r in rows {
                    tr {
                        td { a href={ "/console/people/" (r.id) } { (r.email) } }
                        td { (t.role(r.role)) }
                        td { (r.status) }
                    }
                }
            }
        }
        h2 { (t.invite_title) }
        @if let Some(e) = error {
            p.error role="alert" { (e) }
        }
        form.stack method="post" action="/console/people" {
            input type="hidden" name="csrf" value=(csrf);
            label for="email" { (t.email) }
            input id="email" name="email" type="email" required;
            label for="role" { (t.role) }
            select id="role" name="role" {
                @for (id, name) in &t.role_names {
                    option value=(id) { (name) }
                }
            }
            button type="submit" { (t.invite) }
        }
    }
}

/// A list: a table under `headers` with `rows`, or the sentence for an empty one (as a
/// status, so that it is announced).
pub fn listing(empty: &str, headers: &[&str], rows: Option<Markup>) -> Markup {
    html! {
        @match rows {
            None => p role="status" { (empty) },
            Some(rows) => table {
                thead { tr { @for h in headers { th scope="col" { (h) } } } }
                tbody { (rows) }
            },
        }
    }
}
