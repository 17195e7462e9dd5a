//! The Invoices screens: the tenant's sent invoices (newest first, by status or document
//! number), and one invoice with its whole timeline — our events and the partner's response
//! codes with their meaning, the hash chain's head — the document as sent, and for
//! administrators and auditors the evidence package (the ZIP `invex evidence verify` checks).
//! Reading is for every role, as on the API; the evidence for the API's audit roles.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::html;
use serde::Deserialize;

use super::i18n::Lang;
use super::page;
use super::{signed_in_as, PageQuery, Screen, Speech};
use crate::auth::roles::allow;
use crate::sending::states::{Status, ALL};
use crate::sending::{evidence, timeline};
use crate::state::AppState;
use crate::store::InvoiceFilter;

const PATH: &str = "/console/invoices";
const PAGE: i64 = 50;

pub struct ITexts {
    pub nav: &'static str,
    title: &'static str,
    empty: &'static str,
    status: &'static str,
    any: &'static str,
    document: &'static str,
    buyer: &'static str,
    issued: &'static str,
    sent: &'static str,
    filter: &'static str,
    next_page: &'static str,
    profile: &'static str,
    transmission: &'static str,
    resubmission_of: &'static str,
    timeline: &'static str,
    at: &'static str,
    source: &'static str,
    code: &'static str,
    meaning: &'static str,
    chain_head: &'static str,
    document_xml: &'static str,
    evidence: &'static str,
    not_found: &'static str,
    resubmitted_as: &'static str,
    findings: &'static str,
    document_pdf: &'static str,
    statuses: [&'static str; 15],
}

const SK: ITexts = ITexts {
    nav: "Faktúry",
    title: "Odoslané faktúry",
    empty: "Žiadna faktúra.",
    status: "Stav",
    any: "ktorýkoľvek",
    document: "Číslo faktúry (BT-1)",
    buyer: "Adresa odberateľa",
    issued: "Vystavená",
    sent: "Prijatá na odoslanie",
    filter: "Filtrovať",
    next_page: "Staršie",
    profile: "Profil a pravidlá",
    transmission: "Prenos",
    resubmission_of: "Oprava faktúry",
    timeline: "Priebeh",
    at: "Kedy",
    source: "Kto",
    code: "Kód",
    meaning: "Význam",
    chain_head: "Posledný odtlačok reťazca",
    document_xml: "Odoslaný dokument (XML)",
    evidence: "Balík dôkazov (ZIP)",
    not_found: "Takúto faktúru vaša organizácia nemá.",
    resubmitted_as: "Opravená faktúrou",
    findings: "Zistenia overenia",
    document_pdf: "Zobrazenie faktúry (PDF)",
    statuses: [
        "prijatá",
        "overená",
        "treba opraviť",
        "vo fronte",
        "odosiela sa",
        "odoslaná",
        "doručená",
        "spracúva sa",
        "s otázkou",
        "prijatá s podmienkou",
        "akceptovaná",
        "odmietnutá",
        "zaplatená",
        "zlyhala",
        "archivovaná",
    ],
};

const EN: ITexts = ITexts {
    nav: "Invoices",
    title: "Sent invoices",
    empty: "No invoice.",
    status: "Status",
    any: "any",
    document: "Invoice number (BT-1)",
    buyer: "Buyer's address",
    issued: "Issued",
    sent: "Taken for sending",
    filter: "Filter",
    next_page: "Older",
    profile: "Profile and rules",
    transmission: "Transmission",
    resubmission_of: "Corrects invoice",
    timeline: "Timeline",
    at: "When",
    source: "Who",
    code: "Code",
    meaning: "Meaning",
    chain_head: "Chain head",
    document_xml: "The document as sent (XML)",
    evidence: "Evidence package (ZIP)",
    not_found: "Your organisation has no such invoice.",
    resubmitted_as: "Corrected by invoice",
    findings: "Validation findings",
    document_pdf: "The invoice rendered (PDF)",
    statuses: [
        "received",
        "validated",
        "remediation required",
        "queued",
        "sending",
        "transmitted",
        "delivered",
        "in process",
        "under query",
        "conditionally accepted",
        "accepted",
        "rejected",
        "paid",
        "failed",
        "archived",
    ],
};

pub fn texts(lang: Lang) -> &'static ITexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

impl ITexts {
    /// A status in words; an unknown one as stored.
    fn status<'a>(&self, s: &'a str) -> &'a str {
        match ALL.iter().position(|x| x.as_str() == s) {
            Some(i) => self.statuses[i],
            None => s,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    lang: Option<String>,
    status: Option<String>,
    document_id: Option<String>,
    before: Option<String>,
}

fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// `GET /console/invoices`.
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
    let (v, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    // An unknown status filters nothing rather than failing the page.
    let status = given(&q.status).filter(|s| Status::parse(s).is_some());
    let document_id = given(&q.document_id);
    let filter = InvoiceFilter {
        tenant_id: &signed.1.tenant_id,
        before: given(&q.before),
        limit: PAGE + 1,
        status,
        document_id,
        counterparty: None,
        issued_from: None,
        issued_to: None,
        updated_since: None,
    };
    let rows = match state.store.invoices(&filter).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "invoices not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let (rows, next) = crate::routes::page::cut(rows, PAGE, |r| &r.id);
    let next = next.map(|before| {
        let mut pairs = vec![("before", before)];
        if let Some(s) = status {
            pairs.push(("status", s.to_string()));
        }
        if let Some(d) = document_id {
            pairs.push(("document_id", d.to_string()));
        }
        super::rules::encode(&pairs)
    });
    let content = html! {
        form.filters method="get" action=(PATH) role="search" {
            label for="status" { (v.status) }
            select id="status" name="status" {
                option value="" { (v.any) }
                @for s in ALL {
                    option value=(s.as_str()) selected[status == Some(s.as_str())] { (v.status(s.as_str())) }
                }
            }
            label for="document_id" { (v.document) }
            input id="document_id" name="document_id" type="search" value=(document_id.unwrap_or(""));
            button type="submit" { (v.filter) }
        }
        (page::listing(
            v.empty,
            &[v.document, v.buyer, v.issued, v.status, v.sent],
            (!rows.is_empty()).then(|| html! {
                @for r in &rows {
                    tr {
                        td { a href={ (PATH) "/" (r.id) } { (r.document_id.as_deref().unwrap_or(&r.id)) } }
                        td { (r.buyer_endpoint.as_deref().unwrap_or("-")) }
                        td { (r.issue_date.as_deref().unwrap_or("-")) }
                        td { (v.status(&r.status)) }
                        td { (r.created_at) }
                    }
                }
            }),
        ))
        @if let Some(next) = next {
            p { a href={ (PATH) "?" (next) } rel="next" { (v.next_page) } }
        }
    };
    screen.render(StatusCode::OK, v.title, content)
}

/// `GET /console/invoices/{id}`.
pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let path = format!("{PATH}/{id}");
    let speech = Speech::of(&q, &headers);
    let (signed, speech) = match signed_in_as(&state, &headers, speech, &path, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let (v, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let tl = match timeline::of(&state.store, &signed.1.tenant_id, &id).await {
        Ok(Some(tl)) => tl,
        Ok(None) => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
        Err(e) => {
            tracing::error!(error = %e, "invoice not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let inv = &tl.invoice;
    let audits = allow::AUDIT.iter().any(|r| r.as_str() == signed.1.role);
    let resubmitted_as = match state
        .store
        .resubmissions(&signed.1.tenant_id, &inv.id)
        .await
    {
        Ok(ids) => ids,
        Err(e) => {
            tracing::error!(error = %e, "resubmissions not read");
            Vec::new()
        }
    };
    // Stored as the engine wrote them; an unreadable list shows as none rather than failing
    // the page (the evidence package carries them verbatim).
    let findings: Vec<invex_engine::report::Finding> =
        serde_json::from_str(&inv.findings).unwrap_or_default();
    let content = html! {
        dl {
            dt { (v.status) } dd { strong { (v.status(&tl.status)) } }
            dt { (v.document) } dd { (inv.document_id.as_deref().unwrap_or("-")) }
            dt { (v.buyer) } dd { (inv.buyer_endpoint.as_deref().unwrap_or("-")) }
            dt { (v.issued) } dd { (inv.issue_date.as_deref().unwrap_or("-")) }
            dt { (v.profile) } dd { code { (inv.profile) } " — " (inv.rules_version.replace(',', ", ")) }
            @if let Some(tr) = &inv.transmission_id { dt { (v.transmission) } dd { code { (tr) } } }
            @if let Some(of) = &inv.resubmission_of {
                dt { (v.resubmission_of) } dd { a href={ (PATH) "/" (of) } { (of) } }
            }
            @if !resubmitted_as.is_empty() {
                dt { (v.resubmitted_as) }
                dd {
                    @for (i, id) in resubmitted_as.iter().enumerate() {
                        @if i > 0 { ", " }
                        a href={ (PATH) "/" (id) } { (id) }
                    }
                }
            }
        }
        p {
            a href={ (PATH) "/" (inv.id) "/invoice.xml" } { (v.document_xml) }
            " · " a href={ (PATH) "/" (inv.id) "/invoice.pdf" } { (v.document_pdf) }
            @if audits {
                " · " a href={ (PATH) "/" (inv.id) "/evidence.zip" } { (v.evidence) }
            }
        }
        @if !findings.is_empty() {
            h2 { (v.findings) }
            ul {
                @for f in &findings {
                    li {
                        strong { (t.severity(f.severity.as_str())) } " "
                        a href={ "/console/rules/" (f.rule_id) } { (f.rule_id) } ": " (f.message)
                    }
                }
            }
        }
        h2 { (v.timeline) }
        table.timeline {
            thead { tr {
                th scope="col" { "#" }
                th scope="col" { (v.at) }
                th scope="col" { (v.source) }
                th scope="col" { (v.code) }
                th scope="col" { (v.status) }
                th scope="col" { (v.meaning) }
            } }
            tbody {
                @for e in &tl.entries {
                    tr {
                        td { (e.seq) }
                        td { (e.at) }
                        td { (e.source) }
                        td { code { (e.code) } }
                        td { (e.status.as_deref().map(|s| v.status(s)).unwrap_or("")) }
                        td { (e.meaning) @if let Some(d) = &e.detail { " (" (d) ")" } }
                    }
                }
            }
        }
        p.hint { (v.chain_head) ": " code.hash { (tl.chain_head) } }
    };
    let title = format!(
        "{} · {}",
        v.title,
        inv.document_id.as_deref().unwrap_or(&inv.id)
    );
    screen.render(StatusCode::OK, &title, content)
}

/// `GET /console/invoices/{id}/invoice.xml`, `/invoice.pdf` (every role) and
/// `/evidence.zip` (audit roles): the document as sent, its rendition, and the evidence
/// package.
pub async fn file(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let path = format!("{PATH}/{id}");
    let speech = Speech::of(&PageQuery::default(), &headers);
    let roles = if file == "evidence.zip" {
        allow::AUDIT
    } else {
        allow::READ
    };
    let (signed, speech) = match signed_in_as(&state, &headers, speech, &path, roles).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let (v, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let failed = |e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "invoice file not built");
        screen.message(
            StatusCode::INTERNAL_SERVER_ERROR,
            t.error_title,
            t.error_detail,
        )
    };
    let tenant = &signed.1.tenant_id;
    let (body, media, name) = match file.as_str() {
        "invoice.xml" => match state.store.invoice(tenant, &id).await {
            Ok(Some(inv)) => (
                inv.payload.into_bytes(),
                "application/xml",
                format!("{id}.xml"),
            ),
            Ok(None) => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
            Err(e) => return failed(&e),
        },
        "invoice.pdf" => match state.store.invoice(tenant, &id).await {
            Ok(Some(inv)) => {
                let rendered = state
                    .admission
                    .run(move || crate::sending::artifacts::render(&inv, "pdf"))
                    .await;
                match rendered {
                    Ok(Ok((bytes, _, _))) => (bytes, "application/pdf", format!("{id}.pdf")),
                    Ok(Err(e)) => return failed(&e),
                    Err(busy) => return failed(&crate::problem::Problem::from(busy).detail),
                }
            }
            Ok(None) => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
            Err(e) => return failed(&e),
        },
        "evidence.zip" => {
            match evidence::assemble(&state.store, tenant, &id, crate::clock::now()).await {
                Ok(Some(p)) => match evidence::to_zip(&p) {
                    Ok(bytes) => (bytes, "application/zip", format!("evidence-{id}.zip")),
                    Err(e) => return failed(&e),
                },
                Ok(None) => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
                Err(e) => return failed(&e),
            }
        }
        _ => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
    };
    let mut response = (StatusCode::OK, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    if let Ok(d) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, d);
    }
    response
}
