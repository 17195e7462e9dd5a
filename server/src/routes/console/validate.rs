//! The Validate screen: one or many invoices uploaded through a form (a file input takes
//! dropped files without any script), each answered with its verdict, the profile and rule
//! versions used and why, the findings grouped by severity (rule, business terms, message,
//! remediation, owner) and the XML beside them, every finding linked to its line. Results
//! are stored like the API's, and their reports are downloaded as JSON or SVRL. Every
//! role that works with invoices may validate (as on the API: auditors only read), every
//! role of the tenant may download a stored report.

use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use chrono::NaiveDate;
use invex_engine::report::{to_svrl, Finding, Report};
use maud::{html, Markup};

use super::i18n::Lang;
use super::{refused_form, signed_in_as, PageQuery, Screen, Speech};
use crate::auth::roles::allow;
use crate::problem::Problem;
use crate::routes::form::Form;
use crate::state::AppState;
use crate::validation::{self, Declared, ValidationResult};

const PATH: &str = "/console/validate";
/// Documents longer than this are not shown beside their findings (the findings still are):
/// a page of a hundred thousand lines helps nobody and costs the browser.
const MAX_SHOWN_LINES: usize = 5_000;
const MAX_SHOWN_BYTES: usize = 512 * 1024;

/// The screen's words.
pub struct VTexts {
    pub nav: &'static str,
    title: &'static str,
    intro: &'static str,
    files: &'static str,
    files_hint: &'static str,
    profile: &'static str,
    detect: &'static str,
    day: &'static str,
    day_hint: &'static str,
    submit: &'static str,
    valid: &'static str,
    invalid: &'static str,
    not_validated: &'static str,
    rules_used: &'static str,
    why: &'static str,
    download: &'static str,
    no_findings: &'static str,
    findings_of: [&'static str; 3],
    terms: &'static str,
    place: &'static str,
    source: &'static str,
    source_too_long: &'static str,
    summary: &'static str,
    another: &'static str,
    not_found: &'static str,
}

const SK: VTexts = VTexts {
    nav: "Overenie",
    title: "Overenie faktúr",
    intro: "Vyberte alebo sem pretiahnite jednu či viac faktúr UBL 2.1 (XML). Každá sa overí \
            podľa profilu a výsledok sa uloží medzi overenia vašej organizácie.",
    files: "Faktúry (XML alebo JSON)",
    files_hint: "Najviac toľko súborov naraz, koľko dovoľuje limit servera.",
    profile: "Profil",
    detect: "Rozpoznať z faktúry",
    day: "Deň, ku ktorému platia pravidlá",
    day_hint: "Prázdne: dnes.",
    submit: "Overiť",
    valid: "platná",
    invalid: "neplatná",
    not_validated: "neoverená",
    rules_used: "Profil a verzie pravidiel",
    why: "Prečo",
    download: "Stiahnuť správu",
    no_findings: "Bez zistení.",
    findings_of: ["Závažné chyby", "Upozornenia", "Informácie"],
    terms: "Obchodné pojmy",
    place: "Miesto",
    source: "XML faktúry",
    source_too_long: "Dokument je príliš dlhý na zobrazenie; zistenia uvádzajú riadok a stĺpec.",
    summary: "Súhrn",
    another: "Overiť ďalšie",
    not_found: "Takéto overenie vaša organizácia nemá.",
};

const EN: VTexts = VTexts {
    nav: "Validate",
    title: "Validate invoices",
    intro: "Choose or drop one or more UBL 2.1 invoices (XML). Each is validated against its \
            profile and the result is kept with your organisation's validations.",
    files: "Invoices (XML or JSON)",
    files_hint: "At most as many files at once as the server's limit allows.",
    profile: "Profile",
    detect: "Detect from the invoice",
    day: "Day whose rules apply",
    day_hint: "Empty: today.",
    submit: "Validate",
    valid: "valid",
    invalid: "invalid",
    not_validated: "not validated",
    rules_used: "Profile and rule versions",
    why: "Why",
    download: "Download the report",
    no_findings: "No findings.",
    findings_of: ["Fatal", "Warnings", "Information"],
    terms: "Business terms",
    place: "Where",
    source: "The invoice's XML",
    source_too_long: "The document is too long to show; the findings give line and column.",
    summary: "Summary",
    another: "Validate more",
    not_found: "Your organisation has no such validation.",
};

pub fn texts(lang: Lang) -> &'static VTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

/// `GET /console/validate`: the form.
pub async fn form(
    State(state): State<AppState>,
    axum::extract::Query(query): axum::extract::Query<PageQuery>,
    headers: HeaderMap,
) -> Response {
    let (signed, speech) = match signed_in_as(
        &state,
        &headers,
        Speech::of(&query, &headers),
        PATH,
        allow::INVOICE_WORK,
    )
    .await
    {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let v = texts(screen.speech.lang);
    let content = upload_form(&state, v, &signed.0.csrf, None, "");
    screen.render(StatusCode::OK, v.title, content)
}

fn upload_form(
    state: &AppState,
    v: &VTexts,
    csrf: &str,
    profile: Option<&str>,
    day: &str,
) -> Markup {
    let catalog = state.registry.current();
    let mut names: Vec<String> = Vec::new();
    for p in catalog.profiles() {
        if !names.contains(&p.def.id) {
            names.push(p.def.id.clone());
        }
        names.push(p.def.reference());
    }
    let max_files = state.config.limits.max_files;
    html! {
        p { (v.intro) }
        form.stack method="post" action=(PATH) enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(csrf);
            label for="files" { (v.files) }
            input id="files" name="files[]" type="file" multiple required
                accept=".xml,application/xml,text/xml,.json,application/json" aria-describedby="files-hint";
            p.hint id="files-hint" { (v.files_hint) " (" (max_files) ")" }
            label for="profile" { (v.profile) }
            select id="profile" name="profile" {
                option value="" { (v.detect) }
                @for n in &names {
                    option value=(n) selected[profile == Some(n.as_str())] { (n) }
                }
            }
            label for="at" { (v.day) }
            input id="at" name="at" type="date" value=(day) aria-describedby="at-hint";
            p.hint id="at-hint" { (v.day_hint) }
            button type="submit" { (v.submit) }
        }
    }
}

/// What the form sent.
#[derive(Default)]
struct Sent {
    csrf: String,
    profile: Option<String>,
    at: Option<String>,
    files: Vec<(Option<String>, Bytes, Declared)>,
}

async fn read_form(state: &AppState, request: Request) -> Result<Sent, Problem> {
    let limits = &state.config.limits;
    let multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| Problem::bad_request(e.body_text()))?;
    let mut form = Form::new(multipart, limits.max_body_bytes);
    let mut sent = Sent::default();
    while let Some(part) = form.next().await? {
        match part.name.as_str() {
            "csrf" => sent.csrf = part.text().await?.unwrap_or_default(),
            "profile" => sent.profile = part.text().await?,
            "at" => sent.at = part.text().await?,
            "files[]" | "files" => {
                if sent.files.len() == limits.max_files {
                    return Err(Problem::too_large(
                        "max_files",
                        limits.max_files,
                        format!("at most {} files at once", limits.max_files),
                    ));
                }
                let name = part.file_name.clone();
                let declared = Declared::of_part(part.content_type.as_deref(), name.as_deref());
                let bytes = part.bytes().await?;
                // A file input with nothing chosen still sends an empty part.
                if !bytes.is_empty() || name.as_deref().is_some_and(|n| !n.is_empty()) {
                    sent.files.push((name, bytes, declared));
                }
            }
            other => {
                return Err(Problem::bad_request(format!(
                    "unknown form field `{other}`"
                )));
            }
        }
    }
    Ok(sent)
}

/// One uploaded file's outcome.
enum Outcome {
    Validated(Box<ValidationResult>, Bytes),
    Refused(Option<String>, Problem),
}

/// `POST /console/validate`: validate and store each file, then show the results.
pub async fn submit(
    State(state): State<AppState>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let (signed, speech) =
        match signed_in_as(&state, &headers, speech, PATH, allow::INVOICE_WORK).await {
            Ok(s) => s,
            Err(r) => return r,
        };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let v = texts(screen.speech.lang);
    let t = screen.speech.lang.t();
    // The request's share of the server's in-flight budget, as for the API's uploads.
    let limit = state.config.limits.max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(n) = declared.filter(|n| *n > limit) {
        let p = Problem::too_large(
            "max_body_bytes",
            limit,
            format!("the upload ({n} bytes) is larger than the limit of {limit} bytes"),
        );
        return problem_page(&screen, v, &p);
    }
    let mut ticket = match state.admission.admit(declared.unwrap_or(limit)).await {
        Ok(t) => t,
        Err(busy) => return problem_page(&screen, v, &Problem::from(busy)),
    };
    let sent = match read_form(&state, request).await {
        Ok(s) => s,
        Err(p) => return problem_page(&screen, v, &p),
    };
    if let Some(refused) = refused_form(&screen, &headers, &signed.0, &sent.csrf) {
        return refused;
    }
    let profile = sent.profile.filter(|p| !p.trim().is_empty());
    let day_text = sent.at.clone().unwrap_or_default();
    let at = match sent.at.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        None => invex_engine::registry::today(),
        Some(d) => match NaiveDate::parse_from_str(d, "%Y-%m-%d") {
            Ok(d) => d,
            Err(_) => {
                let p = Problem::bad_request(format!("`{d}` is not a day (YYYY-MM-DD)"));
                return problem_page(&screen, v, &p);
            }
        },
    };
    if sent.files.is_empty() {
        let p = Problem::bad_request("choose at least one file");
        return problem_page(&screen, v, &p);
    }
    if let Err(p) = state
        .admission
        .hold_documents(&mut ticket, sent.files.len())
        .await
    {
        return problem_page(&screen, v, &Problem::from(p));
    }
    let mut outcomes = Vec::with_capacity(sent.files.len());
    let mut records = Vec::new();
    for (name, bytes, declared) in sent.files {
        let validated = validation::validate(
            &state,
            profile.clone(),
            at,
            name.clone(),
            bytes.clone(),
            declared,
        )
        .await;
        match validated {
            Ok(validated) => {
                records.push(validation::record_for(
                    &signed.1.tenant_id,
                    None,
                    &validated.result,
                ));
                outcomes.push(Outcome::Validated(Box::new(validated.result), bytes));
            }
            Err(p) if p.status.is_client_error() => outcomes.push(Outcome::Refused(name, p)),
            Err(p) => return problem_page(&screen, v, &p),
        }
    }
    if !records.is_empty() {
        if let Err(e) = state.store.insert_validations(records).await {
            tracing::error!(error = %e, "console validations not stored");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    }
    let content = html! {
        (summary(v, &outcomes))
        @for (i, o) in outcomes.iter().enumerate() {
            @match o {
                Outcome::Validated(result, bytes) => (document(screen.speech.lang, i, result, bytes)),
                Outcome::Refused(name, p) => (refused(v, i, name.as_deref(), p)),
            }
        }
        h2 { (v.another) }
        (upload_form(&state, v, &signed.0.csrf, profile.as_deref(), &day_text))
    };
    screen.render(StatusCode::OK, v.title, content)
}

/// A page for a request that could not be taken at all, with the problem's own words.
fn problem_page(screen: &Screen<'_>, v: &VTexts, p: &Problem) -> Response {
    let content = html! {
        p.error role="alert" { (p.title) ": " (p.detail) }
        p { a href=(PATH) { (v.another) } }
    };
    screen.render(p.status, v.title, content)
}

fn summary(v: &VTexts, outcomes: &[Outcome]) -> Markup {
    html! {
        h2 id="summary" { (v.summary) }
        div role="status" { ul {
            @for (i, o) in outcomes.iter().enumerate() {
                @match o {
                    Outcome::Validated(r, _) => li {
                        a href={ "#doc-" (i) } { (name_of(r.document.file_name.as_deref(), i)) }
                        ": " (verdict(v, r.report.verdict.as_str()))
                        " (" (r.report.counts.fatal) " / " (r.report.counts.warning) " / " (r.report.counts.information) ")"
                    },
                    Outcome::Refused(name, _) => li {
                        a href={ "#doc-" (i) } { (name_of(name.as_deref(), i)) } ": " (v.not_validated)
                    },
                }
            }
        } }
    }
}

fn name_of(name: Option<&str>, i: usize) -> String {
    name.filter(|n| !n.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("#{}", i + 1))
}

fn verdict(v: &VTexts, verdict: &str) -> Markup {
    let (class, word) = match verdict {
        "valid" => ("verdict ok", v.valid),
        _ => ("verdict bad", v.invalid),
    };
    html! { strong class=(class) { (word) } }
}

fn refused(v: &VTexts, i: usize, name: Option<&str>, p: &Problem) -> Markup {
    html! {
        section.document id={ "doc-" (i) } aria-labelledby={ "doc-" (i) "-title" } {
            h2 id={ "doc-" (i) "-title" } { (name_of(name, i)) ": " (v.not_validated) }
            p.error role="alert" { (p.title) ": " (p.detail) }
        }
    }
}

const SEVERITIES: [&str; 3] = ["fatal", "warning", "information"];

fn document(lang: Lang, i: usize, r: &ValidationResult, bytes: &[u8]) -> Markup {
    let v = texts(lang);
    let t = lang.t();
    let report: &Report = &r.report;
    let doc = format!("doc-{i}");
    let source = shown_source(bytes);
    html! {
        section.document id=(doc) aria-labelledby={ (doc) "-title" } {
            h2 id={ (doc) "-title" } {
                (name_of(r.document.file_name.as_deref(), i)) ": " (verdict(v, report.verdict.as_str()))
            }
            dl {
                dt { (v.rules_used) }
                dd { code { (report.profile) } " — " (report.rules_version.join(", ")) }
                @if let Some(why) = report.resolution.as_deref().or(report.detection.as_deref()) {
                    dt { (v.why) }
                    dd { (why) }
                }
                dt { (v.download) }
                dd {
                    a href={ "/console/validations/" (r.id) "/report.json" } download { "JSON" }
                    " · "
                    a href={ "/console/validations/" (r.id) "/report.svrl" } download { "SVRL" }
                }
            }
            div.side-by-side {
                div.findings {
                    @if report.findings.is_empty() {
                        p { (v.no_findings) }
                    }
                    @for (s, heading) in SEVERITIES.iter().zip(v.findings_of) {
                        @let group: Vec<&Finding> = report.findings.iter().filter(|f| f.severity.as_str() == *s).collect();
                        @if !group.is_empty() {
                            h3 { (heading) " (" (group.len()) ")" }
                            ol.findings {
                                @for f in group {
                                    li class={ "finding " (s) } {
                                        p {
                                            strong { (t.severity(s)) } " "
                                            a href={ "/console/rules/" (f.rule_id) } { (f.rule_id) }
                                            ": " (f.message)
                                        }
                                        @if !f.remediation.is_empty() {
                                            p.hint { (t.remediation) ": " (f.remediation) }
                                        }
                                        dl.facts {
                                            @if !f.business_terms.is_empty() {
                                                dt { (v.terms) } dd { (f.business_terms.join(", ")) }
                                            }
                                            @if let Some(o) = &f.owner {
                                                dt { (t.owner) } dd { (o) }
                                            }
                                            dt { (v.place) }
                                            dd {
                                                @if f.location.line > 0 && source.is_some() {
                                                    a href={ "#" (doc) "-L" (f.location.line) } {
                                                        (f.location.line) ":" (f.location.column)
                                                    }
                                                } @else {
                                                    (f.location.line) ":" (f.location.column)
                                                }
                                                " " code { (f.location.path) }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                div.source {
                    h3 { (v.source) }
                    @match &source {
                        Some(text) => (numbered(&doc, text, report)),
                        None => p.hint { (v.source_too_long) },
                    }
                }
            }
        }
    }
}

/// The document as text, when it is short enough to show.
fn shown_source(bytes: &[u8]) -> Option<String> {
    if bytes.len() > MAX_SHOWN_BYTES {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    (text.lines().count() <= MAX_SHOWN_LINES).then(|| text.into_owned())
}

/// The source with a numbered, addressable line each; lines with findings are marked with
/// the most severe of them.
fn numbered(doc: &str, text: &str, report: &Report) -> Markup {
    use std::collections::{BTreeMap, HashMap};
    // Per line: the most severe finding (the line's mark), and each finding's column with
    // the most severe finding there (the node's mark).
    let mut worst: HashMap<u32, usize> = HashMap::new();
    let mut nodes: HashMap<u32, BTreeMap<usize, usize>> = HashMap::new();
    for f in &report.findings {
        let rank = SEVERITIES
            .iter()
            .position(|s| *s == f.severity.as_str())
            .unwrap_or(2);
        let e = worst.entry(f.location.line).or_insert(rank);
        *e = (*e).min(rank);
        if f.location.column > 0 {
            let column = f.location.column as usize;
            let e = nodes
                .entry(f.location.line)
                .or_default()
                .entry(column)
                .or_insert(rank);
            *e = (*e).min(rank);
        }
    }
    html! {
        pre.xml tabindex="0" {
            code {
                @for (n, line) in text.lines().enumerate() {
                    @let n = n as u32 + 1;
                    @let mark = worst.get(&n).map(|r| SEVERITIES[*r]);
                    span id={ (doc) "-L" (n) } class={ "line" @if let Some(m) = mark { " hit " (m) } } {
                        span.no aria-hidden="true" { (n) }
                        @match nodes.get(&n) {
                            Some(columns) => (marked(line, columns)),
                            None => (line),
                        }
                        "\n"
                    }
                }
            }
        }
    }
}

/// A line with the node each finding points at marked: from the finding's column (1-based,
/// in characters) to the end of that start tag (or of the line), each mark once; a column
/// inside an earlier mark adds none.
fn marked(line: &str, columns: &std::collections::BTreeMap<usize, usize>) -> Markup {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let byte_at = |column: usize| chars.get(column - 1).map(|(b, _)| *b);
    let mut pieces: Vec<(&str, Option<&str>)> = Vec::new();
    let mut done = 0usize;
    for (&column, &rank) in columns {
        let Some(start) = byte_at(column) else {
            continue;
        };
        if start < done {
            continue;
        }
        let end = line[start..]
            .find('>')
            .map_or(line.len(), |i| start + i + 1);
        pieces.push((&line[done..start], None));
        pieces.push((&line[start..end], Some(SEVERITIES[rank])));
        done = end;
    }
    pieces.push((&line[done..], None));
    html! {
        @for (text, severity) in pieces {
            @match severity {
                Some(s) => mark class={ "node " (s) } { (text) },
                None => (text),
            }
        }
    }
}

/// `GET /console/validations/{id}/report.json|report.svrl`: a stored report of the
/// person's tenant, as a download.
pub async fn download(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let (signed, speech) = match signed_in_as(&state, &headers, speech, PATH, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let v = texts(screen.speech.lang);
    let t = screen.speech.lang.t();
    let record = match state.store.validation(&signed.1.tenant_id, &id).await {
        Ok(Some(r)) => r,
        Ok(None) => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
        Err(e) => {
            tracing::error!(error = %e, "console validation not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let (body, media, ext) = match file.as_str() {
        "report.json" => (record.result, "application/json", "json"),
        "report.svrl" => match serde_json::from_str::<Report>(&record.result) {
            Ok(report) => (
                to_svrl(&report, None),
                crate::routes::validate::SVRL,
                "svrl",
            ),
            Err(e) => {
                tracing::error!(error = %e, "stored validation unreadable");
                return screen.message(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    t.error_title,
                    t.error_detail,
                );
            }
        },
        _ => return screen.message(StatusCode::NOT_FOUND, v.title, v.not_found),
    };
    let mut response = (StatusCode::OK, body).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    if let Ok(d) = HeaderValue::from_str(&format!("attachment; filename=\"{id}.{ext}\"")) {
        h.insert(header::CONTENT_DISPOSITION, d);
    }
    response
}
