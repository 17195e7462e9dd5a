//! The Rules screens: the error catalogue searched by id or words, business term, owner,
//! severity and pack, and one rule's page with its message, remediation, fixtures, and the
//! pack versions carrying it with what changed. Every signed-in role may read them.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use invex_engine::catalogue::{Filter, RuleEntry};
use invex_engine::pack::{Severity, KNOWN_OWNERS};
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::Texts;
use super::{signed_in, PageQuery, Screen, Speech};
use crate::state::AppState;

/// Rules per page.
const PAGE: usize = 50;

#[derive(Debug, Default, Deserialize)]
pub struct RulesQuery {
    lang: Option<String>,
    q: Option<String>,
    business_term: Option<String>,
    owner: Option<String>,
    severity: Option<String>,
    pack: Option<String>,
    after: Option<String>,
}

/// An empty form field means "any".
fn given(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(200).collect())
}

fn severity(v: &Option<String>) -> Option<Severity> {
    match given(v).as_deref() {
        Some("fatal") => Some(Severity::Fatal),
        Some("warning") => Some(Severity::Warning),
        Some("information") => Some(Severity::Information),
        _ => None,
    }
}

pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<RulesQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(query.lang.as_deref(), &headers);
    let (signed, speech) = match signed_in(&state, &headers, speech, "/console/rules").await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, "/console/rules", &signed);
    let t = screen.speech.lang.t();
    let filter = Filter {
        text: given(&query.q),
        business_term: given(&query.business_term),
        owner: given(&query.owner),
        pack: given(&query.pack),
        severity: severity(&query.severity),
    };
    let catalogue = state.rule_catalogue.get(&state.registry.current());
    let packs: Vec<String> = state
        .registry
        .current()
        .packs
        .iter()
        .map(|p| p.reference())
        .collect();
    let found = catalogue.search(&filter, given(&query.after).as_deref(), PAGE);
    let next = found.next.as_ref().map(|after| {
        let mut q = url_query(&query);
        q.push(("after", after.clone()));
        encode(&q)
    });
    let content = html! {
        (search_form(t, &query, &packs))
        p role="status" { (found.total) " " (t.rules_found) }
        table {
            thead { tr {
                th scope="col" { "Id" }
                th scope="col" { (t.severity) }
                th scope="col" { (t.owner) }
                th scope="col" { (t.message) }
            } }
            tbody {
                @for hit in &found.hits {
                    tr {
                        td { a href={ "/console/rules/" (hit.entry.id) } { (hit.entry.id) } }
                        td { (t.severity(hit.version.rule.flag.as_str())) }
                        td { (hit.version.rule.owner.as_deref().unwrap_or("-")) }
                        td { (hit.version.rule.message) }
                    }
                }
            }
        }
        @if let Some(next) = next {
            p { a href={ "/console/rules?" (next) } rel="next" { (t.next_page) } }
        }
    };
    screen.render(StatusCode::OK, t.rules_title, content)
}

/// The query's filters as pairs, for the next page's link.
fn url_query(q: &RulesQuery) -> Vec<(&'static str, String)> {
    [
        ("q", &q.q),
        ("business_term", &q.business_term),
        ("owner", &q.owner),
        ("severity", &q.severity),
        ("pack", &q.pack),
    ]
    .into_iter()
    .filter_map(|(k, v)| given(v).map(|v| (k, v)))
    .collect()
}

pub(super) fn encode(pairs: &[(&str, String)]) -> String {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect::<Vec<_>>()
        .join("&")
}

fn search_form(t: &Texts, q: &RulesQuery, packs: &[String]) -> Markup {
    let value = |v: &Option<String>| given(v).unwrap_or_default();
    let severity = value(&q.severity);
    let owner = value(&q.owner);
    let pack = value(&q.pack);
    html! {
        form.stack method="get" action="/console/rules" role="search" {
            label for="q" { (t.search_text) }
            input id="q" name="q" type="search" value=(value(&q.q));
            label for="business_term" { (t.business_term) }
            input id="business_term" name="business_term" type="text" placeholder="BT-24" value=(value(&q.business_term));
            label for="owner" { (t.owner) }
            select id="owner" name="owner" {
                option value="" { (t.any) }
                @for o in KNOWN_OWNERS {
                    option value=(o) selected[owner == *o] { (o) }
                }
            }
            label for="severity" { (t.severity) }
            select id="severity" name="severity" {
                option value="" { (t.any) }
                @for (id, name) in &t.severity_names {
                    option value=(id) selected[severity == *id] { (name) }
                }
            }
            label for="pack" { (t.pack) }
            select id="pack" name="pack" {
                option value="" { (t.any) }
                @for p in packs {
                    option value=(p) selected[pack == *p] { (p) }
                }
            }
            button type="submit" { (t.search) }
        }
    }
}

pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&query, &headers);
    let path = format!("/console/rules/{id}");
    let (signed, speech) = match signed_in(&state, &headers, speech, &path).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let t = screen.speech.lang.t();
    let catalogue = state.rule_catalogue.get(&state.registry.current());
    match catalogue.get(&id) {
        Some(entry) => screen.render(StatusCode::OK, &entry.id, rule(t, entry)),
        None => screen.message(StatusCode::NOT_FOUND, &id, t.rule_not_found),
    }
}

fn rule(t: &Texts, entry: &RuleEntry) -> Markup {
    let r = entry.latest();
    html! {
        dl {
            dt { (t.severity) } dd { (t.severity(r.flag.as_str())) " (" (r.pack) ")" }
            dt { (t.message) } dd { (r.message) }
            @if !r.remediation.is_empty() {
                dt { (t.remediation) } dd { (r.remediation) }
            }
            dt { (t.owner) } dd { (r.owner.as_deref().unwrap_or("-")) }
            @if !r.business_terms.is_empty() {
                dt { (t.business_term) } dd { (r.business_terms.join(", ")) }
            }
            dt { (t.context) } dd { code { (r.context) } }
            @if !r.test.is_empty() {
                dt { (t.test) } dd { code { (r.test) } }
            }
            @if !r.fixtures_pass.is_empty() {
                dt { (t.fixtures_pass) } dd { (r.fixtures_pass.join(", ")) }
            }
            @if !r.fixtures_fail.is_empty() {
                dt { (t.fixtures_fail) } dd { (r.fixtures_fail.join(", ")) }
            }
        }
        h2 { (t.versions) }
        ul {
            @for v in &entry.versions {
                li {
                    strong { (v.rule.pack) } " — " (t.severity(v.rule.flag.as_str())) ". "
                    (t.run_by) ": "
                    @if v.profiles.is_empty() { (t.no_profile) }
                    @for (i, p) in v.profiles.iter().enumerate() {
                        @if i > 0 { ", " }
                        (p.profile) " (" (t.severity(p.flag.as_str())) ")"
                    }
                    @if let Some(prev) = &v.previous {
                        @if v.changes.is_empty() {
                            br; (t.unchanged_since) " " (prev)
                        } @else {
                            br; (t.changed_since) " " (prev) ":"
                            ul {
                                @for c in &v.changes {
                                    li { code { (c.field) } ": " del { (c.from) } " → " ins { (c.to) } }
                                }
                            }
                        }
                    }
                }
            }
            @for gone in &entry.removed_in {
                li { (t.removed_in) " " strong { (gone) } }
            }
        }
    }
}
