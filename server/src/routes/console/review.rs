//! The Review queue: conversions the gate held (low confidence, failed cross-checks, invalid
//! identifiers, fatal findings), each shown with every extracted value, its confidence (as a
//! word and a colour) and where it came from; the values are corrected in place, and the
//! conversion approved or rejected with a comment. The work is the review capability's
//! (`convert::review`), exactly as `PATCH /v1/conversions/{id}` and `/approve`, `/reject` do
//! it; the reviewer named in the trail (and in the evidence package) is the person's e-mail
//! address. Everyone of the tenant may read the queue; administrators and accountants act.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::i18n::Lang;
use super::page;
use super::{refused_form, see_other, signed_in_as, PageQuery, Screen, Speech};
use crate::auth::roles::allow;
use crate::convert::gate::describe;
use crate::convert::pdf::PlacedText;
use crate::convert::review::{self, ConversionStatus, ConversionView, Correction, ReviewError};
use crate::convert::source::{self, PageView, SourceView};
use crate::convert::tabular::column_letter;
use crate::state::AppState;
use crate::store::ConversionRecord;

const PATH: &str = "/console/review";
/// Conversions per page of the queue.
const PAGE: i64 = 50;

pub struct RTexts {
    pub nav: &'static str,
    title: &'static str,
    empty: &'static str,
    file: &'static str,
    document: &'static str,
    confidence: &'static str,
    reasons: &'static str,
    created: &'static str,
    next_page: &'static str,
    status: &'static str,
    statuses: [(&'static str, &'static str); 5],
    fields: &'static str,
    term: &'static str,
    field: &'static str,
    value: &'static str,
    source: &'static str,
    levels: [&'static str; 3],
    save: &'static str,
    approve_title: &'static str,
    note: &'static str,
    approve: &'static str,
    reject_title: &'static str,
    reason: &'static str,
    reject: &'static str,
    checks: &'static str,
    passed: &'static str,
    failed: &'static str,
    trail: &'static str,
    xml: &'static str,
    read_only: &'static str,
    done: [(&'static str, &'static str); 3],
    unchanged: &'static str,
    not_found: &'static str,
    changed_meanwhile: &'static str,
    reason_needed: &'static str,
    findings: &'static str,
    input: &'static str,
    row: &'static str,
    page: &'static str,
    page_text: &'static str,
    open_input: &'static str,
    input_unavailable: &'static str,
    send_title: &'static str,
    send: &'static str,
    sent_as: &'static str,
}

const SK: RTexts = RTexts {
    nav: "Kontrola",
    title: "Kontrola prevodov",
    empty: "Nič nečaká na kontrolu.",
    file: "Súbor",
    document: "Faktúra (BT-1)",
    confidence: "Istota",
    reasons: "Prečo čaká",
    created: "Prevedené",
    next_page: "Ďalšie",
    status: "Stav",
    statuses: [
        ("ready", "pripravený"),
        ("needs_review", "čaká na kontrolu"),
        ("approved", "schválený"),
        ("rejected", "zamietnutý"),
        ("sent", "odoslaný"),
    ],
    fields: "Vyťažené hodnoty",
    term: "Pojem",
    field: "Pole",
    value: "Hodnota",
    source: "Odkiaľ",
    levels: ["nízka", "stredná", "vysoká"],
    save: "Uložiť opravy",
    approve_title: "Schváliť",
    note: "Poznámka (nepovinná)",
    approve: "Schváliť prevod",
    reject_title: "Zamietnuť",
    reason: "Dôvod zamietnutia",
    reject: "Zamietnuť prevod",
    checks: "Kontroly súčtov",
    passed: "v poriadku",
    failed: "nesedí",
    trail: "História zmien",
    xml: "Vytvorené UBL",
    read_only: "Vaša rola môže prevody len čítať.",
    done: [
        (
            "corrected",
            "Opravy sú uložené; faktúra je znovu vytvorená a overená.",
        ),
        ("approved", "Prevod je schválený a môže sa odoslať."),
        ("rejected", "Prevod je zamietnutý; nikdy sa neodošle."),
    ],
    unchanged: "Žiadna hodnota sa nezmenila.",
    not_found: "Takýto prevod vaša organizácia nemá.",
    changed_meanwhile: "Prevod medzitým zmenil niekto iný; pozrite si ho znovu.",
    reason_needed: "Napíšte, prečo prevod zamietate.",
    findings: "Zistenia overenia",
    input: "Zdroj",
    row: "Riadok",
    page: "Strana",
    page_text: "Text strany",
    open_input: "Otvoriť pôvodný súbor",
    input_unavailable: "Pôvodný súbor sa nedá zobraziť",
    send_title: "Odoslať",
    send: "Odoslať faktúru odberateľovi",
    sent_as: "Odoslaná ako faktúra",
};

const EN: RTexts = RTexts {
    nav: "Review",
    title: "Review conversions",
    empty: "Nothing waits for review.",
    file: "File",
    document: "Invoice (BT-1)",
    confidence: "Confidence",
    reasons: "Why it is held",
    created: "Converted",
    next_page: "Next",
    status: "Status",
    statuses: [
        ("ready", "ready"),
        ("needs_review", "needs review"),
        ("approved", "approved"),
        ("rejected", "rejected"),
        ("sent", "sent"),
    ],
    fields: "Extracted values",
    term: "Term",
    field: "Field",
    value: "Value",
    source: "From",
    levels: ["low", "medium", "high"],
    save: "Save corrections",
    approve_title: "Approve",
    note: "Comment (optional)",
    approve: "Approve the conversion",
    reject_title: "Reject",
    reason: "Why it is rejected",
    reject: "Reject the conversion",
    checks: "Cross-checks",
    passed: "passed",
    failed: "failed",
    trail: "Changes",
    xml: "Generated UBL",
    read_only: "Your role may only read conversions.",
    done: [
        (
            "corrected",
            "The corrections are saved; the invoice was written and validated again.",
        ),
        ("approved", "The conversion is approved and may be sent."),
        (
            "rejected",
            "The conversion is rejected; it will never be sent.",
        ),
    ],
    unchanged: "No value changed.",
    not_found: "Your organisation has no such conversion.",
    changed_meanwhile: "Someone else changed this conversion meanwhile; look at it again.",
    reason_needed: "Say why the conversion is rejected.",
    findings: "Validation findings",
    input: "Source",
    row: "Row",
    page: "Page",
    page_text: "The page's text",
    open_input: "Open the original file",
    input_unavailable: "The original file cannot be shown",
    send_title: "Send",
    send: "Send the invoice to the buyer",
    sent_as: "Sent as invoice",
};

pub fn texts(lang: Lang) -> &'static RTexts {
    match lang {
        Lang::Sk => &SK,
        Lang::En => &EN,
    }
}

impl RTexts {
    fn status(&self, s: ConversionStatus) -> &'static str {
        self.statuses
            .iter()
            .find(|(k, _)| *k == s.as_str())
            .map_or("", |(_, v)| *v)
    }

    /// Confidence as a word and a class: under the gate's threshold is low.
    fn level(&self, confidence: f64, threshold: f64) -> (&'static str, &'static str) {
        if confidence < threshold {
            (self.levels[0], "low")
        } else if confidence < 0.95 {
            (self.levels[1], "mid")
        } else {
            (self.levels[2], "high")
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct QueueQuery {
    lang: Option<String>,
    before: Option<String>,
}

/// `GET /console/review`: the conversions waiting for review, newest first.
pub async fn queue(
    State(state): State<AppState>,
    Query(q): Query<QueueQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let (signed, speech) = match signed_in_as(&state, &headers, speech, PATH, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, PATH, &signed);
    let (r, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let rows = match state
        .store
        .conversions(
            &signed.1.tenant_id,
            Some(ConversionStatus::NeedsReview.as_str()),
            None,
            q.before.as_deref(),
            PAGE + 1,
        )
        .await
    {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!(error = %e, "review queue not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let (rows, next) = crate::routes::page::cut(rows, PAGE, |c| &c.id);
    let views: Vec<ConversionView> = rows
        .iter()
        .filter_map(|c| ConversionView::from_record(c, false).ok())
        .collect();
    let threshold = f64::from(state.config.convert.confidence_threshold);
    let content = html! {
        (page::listing(
            r.empty,
            &[r.file, r.document, r.confidence, r.reasons, r.created],
            (!views.is_empty()).then(|| html! {
                @for v in &views {
                    @let (word, class) = r.level(v.confidence, threshold);
                    tr {
                        td { a href={ (PATH) "/" (v.id) } { (v.file_name.as_deref().unwrap_or(&v.id)) } }
                        td { (v.document_id.as_deref().unwrap_or("-")) }
                        td { span class={ "confidence " (class) } { (percent(v.confidence)) " " (word) } }
                        td { (v.reasons.len()) }
                        td { (v.created_at) }
                    }
                }
            }),
        ))
        @if let Some(next) = next {
            p { a href={ (PATH) "?before=" (next) } rel="next" { (r.next_page) } }
        }
    };
    screen.render(StatusCode::OK, r.title, content)
}

fn percent(c: f64) -> String {
    format!("{:.0} %", (c * 100.0).clamp(0.0, 100.0))
}

#[derive(Debug, Default, Deserialize)]
pub struct ShowQuery {
    lang: Option<String>,
    done: Option<String>,
}

/// `GET /console/review/{id}`: one conversion.
pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ShowQuery>,
    headers: HeaderMap,
) -> Response {
    let speech = Speech::with_lang(q.lang.as_deref(), &headers);
    let path = format!("{PATH}/{id}");
    let (signed, speech) = match signed_in_as(&state, &headers, speech, &path, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let r = texts(screen.speech.lang);
    let record = match load(&screen, &signed.1.tenant_id, &id).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    let done = q
        .done
        .as_deref()
        .and_then(|d| r.done.iter().find(|(k, _)| *k == d))
        .map(|(_, text)| *text);
    detail(&screen, &signed, &record, StatusCode::OK, done, None).await
}

/// The conversion's input as the review page shows it; reading it again is CPU work, on
/// the admission pool like the extraction was.
async fn source_view(
    state: &AppState,
    record: &ConversionRecord,
    fields: &[crate::convert::model::FieldView],
) -> SourceView {
    let input = match state
        .store
        .conversion_input(&record.tenant_id, &record.input_sha256)
        .await
    {
        Ok(Some(i)) => i,
        Ok(None) => {
            return SourceView::Unavailable("not kept (converted before inputs were kept)".into())
        }
        Err(e) => {
            tracing::error!(error = %e, "conversion input not read");
            return SourceView::Unavailable("not readable now".into());
        }
    };
    let limits = state.config.convert.limits();
    let fields = fields.to_vec();
    state
        .admission
        .run(move || {
            source::view(
                &input.content,
                input.file_name.as_deref(),
                &input.format,
                &fields,
                &limits,
            )
        })
        .await
        .unwrap_or_else(|busy| SourceView::Unavailable(crate::problem::Problem::from(busy).detail))
}

/// A PDF page drawn from its text layer (an SVG of the runs of text where they stand, no
/// script, nothing fetched), each run that shows a value marked in the colour of the value's
/// confidence and linked from its row; its text below for reading and copying.
fn page_view(r: &RTexts, p: &PageView, levels: &dyn Fn(&str) -> &'static str) -> Markup {
    let l = &p.layout;
    let top = |t: &PlacedText| l.height - (t.baseline - l.y0);
    let label = format!("{} {}", r.page, l.number);
    let lines = {
        // The page's text by lines, top down (runs on one baseline joined).
        let mut runs: Vec<&PlacedText> = l.texts.iter().collect();
        runs.sort_by(|a, b| b.baseline.total_cmp(&a.baseline).then(a.x.total_cmp(&b.x)));
        let mut out = String::new();
        let mut last: Option<f32> = None;
        for t in runs {
            match last {
                Some(b) if (b - t.baseline).abs() < 0.5 => out.push_str("  "),
                Some(_) => out.push('\n'),
                None => {}
            }
            out.push_str(&t.text);
            last = Some(t.baseline);
        }
        out
    };
    html! {
        h3 { (label) }
        div.page-view {
            svg viewBox={ "0 0 " (l.width) " " (l.height) } role="img" aria-label=(label) {
                rect.paper x="0" y="0" width=(l.width) height=(l.height) {}
                @for (i, path) in &p.cited {
                    @if let Some(t) = l.texts.get(*i) {
                        rect id={ "src-" (anchor(path)) } class={ "cited " (levels(path)) }
                            x=(t.x - l.x0 - 1.0) y=(top(t) - t.size * 0.9) width=(t.width + 2.0) height=(t.size * 1.2) {
                            title { (path) }
                        }
                    }
                }
                @for t in &l.texts {
                    text x=(t.x - l.x0) y=(top(t)) font-size=(t.size)
                        textLength=[(t.width > 0.0).then_some(t.width)] lengthAdjust="spacingAndGlyphs" { (t.text) }
                }
            }
        }
        details {
            summary { (r.page_text) }
            pre.page tabindex="0" { (lines) }
        }
    }
}

/// The input beside the values: the cited spreadsheet cells marked and linked from the
/// values, or the pages values were read on, drawn.
fn source_markup(
    r: &RTexts,
    id: &str,
    view: &SourceView,
    levels: &dyn Fn(&str) -> &'static str,
) -> Markup {
    html! {
        h2 id="source" { (r.input) }
        p { a href={ (PATH) "/" (id) "/input" } { (r.open_input) } }
        @match view {
            SourceView::Sheets { tables, cited } => {
                @for table in tables {
                    @let width = table.rows.iter().map(|row| row.cells.len()).max().unwrap_or(0);
                    @if let Some(sheet) = &table.sheet { h3 { (sheet) } }
                    div.sheet tabindex="0" {
                        table.sheet {
                            thead { tr {
                                th scope="col" { (r.row) }
                                @for c in 0..width { th scope="col" { (column_letter(c)) } }
                            } }
                            tbody {
                                @for row in &table.rows {
                                    tr {
                                        th scope="row" { (row.number) }
                                        @for c in 0..width {
                                            @let hit = cited.iter().find(|x| x.sheet == table.sheet && x.row == row.number && x.column == c);
                                            @match hit {
                                                Some(hit) => td.cited id={ "src-" (anchor(&hit.path)) } title=(hit.path) {
                                                    (row.cell(c).text())
                                                },
                                                None => td { (row.cell(c).text()) },
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            SourceView::Pages(pages) => {
                @for p in pages {
                    (page_view(r, p, levels))
                }
            }
            SourceView::Unavailable(why) => p.hint { (r.input_unavailable) ": " (why) },
        }
    }
}

async fn load(
    screen: &Screen<'_>,
    tenant_id: &str,
    id: &str,
) -> Result<ConversionRecord, Response> {
    let r = texts(screen.speech.lang);
    let t = screen.speech.lang.t();
    match screen.state.store.conversion(tenant_id, id).await {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(screen.message(StatusCode::NOT_FOUND, r.title, r.not_found)),
        Err(e) => {
            tracing::error!(error = %e, "conversion not read");
            Err(screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            ))
        }
    }
}

fn may_review(role: &str) -> bool {
    allow::REVIEW.iter().any(|r| r.as_str() == role)
}

/// The page of one conversion, with the answer of the last action (`done`) or its error.
async fn detail(
    screen: &Screen<'_>,
    signed: &(crate::store::SessionRecord, crate::store::PersonRecord),
    record: &ConversionRecord,
    status: StatusCode,
    done: Option<&str>,
    error: Option<&str>,
) -> Response {
    let r = texts(screen.speech.lang);
    let t = screen.speech.lang.t();
    let view = match ConversionView::from_record(record, true) {
        Ok(v) => v,
        Err(e) => {
            tracing::error!(error = %e, "stored conversion unreadable");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let threshold = f64::from(screen.state.config.convert.confidence_threshold);
    let fields = view.fields.clone().unwrap_or_default();
    let source = source_view(screen.state, record, &fields).await;
    let cited: std::collections::HashSet<&str> = match &source {
        SourceView::Sheets { cited, .. } => cited.iter().map(|c| c.path.as_str()).collect(),
        SourceView::Pages(pages) => pages
            .iter()
            .flat_map(|p| p.cited.iter().map(|(_, path)| path.as_str()))
            .collect(),
        SourceView::Unavailable(_) => Default::default(),
    };
    // The confidence class of each value, for marking its source.
    let level_of: std::collections::HashMap<&str, &'static str> = fields
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                r.level(f64::from(f.confidence), threshold).1,
            )
        })
        .collect();
    let levels = |path: &str| level_of.get(path).copied().unwrap_or("mid");
    let acting = may_review(&signed.1.role)
        && !matches!(
            view.status,
            ConversionStatus::Rejected | ConversionStatus::Sent
        );
    let sendable = matches!(
        view.status,
        ConversionStatus::Ready | ConversionStatus::Approved
    ) && allow::INVOICE_WORK
        .iter()
        .any(|role| role.as_str() == signed.1.role);
    let csrf = signed.0.csrf.as_str();
    let action = format!("{PATH}/{}", view.id);
    let editable = acting && !view.fields.as_ref().is_some_and(|f| f.is_empty());
    let content = html! {
        @if let Some(d) = done { p.notice role="status" { (d) } }
        @if let Some(e) = error { p.error role="alert" { (e) } }
        dl {
            dt { (r.file) } dd { (view.file_name.as_deref().unwrap_or("-")) " (" (view.input_format) ")" }
            dt { (r.status) } dd { strong { (r.status(view.status)) } }
            dt { (r.document) } dd { (view.document_id.as_deref().unwrap_or("-")) }
            @if let Some(by) = &view.approved_by {
                dt { (r.approve_title) } dd { (by) " " (view.approved_at.as_deref().unwrap_or("")) }
            }
            @if let Some(n) = &view.review_note {
                dt { (r.note) } dd { (n) }
            }
        }
        @if !view.reasons.is_empty() {
            h2 { (r.reasons) }
            ul {
                @for reason in &view.reasons {
                    li {
                        @if let Some(f) = &reason.field {
                            a href={ "#f-" (anchor(f)) } { code { (f) } } ": "
                        }
                        (reason.message)
                        @if let Some(l) = &reason.location { " (" (l) ")" }
                    }
                }
            }
        }
        @if !acting && !may_review(&signed.1.role) { p.hint { (r.read_only) } }
        h2 { (r.fields) }
        form method="post" action={ (action) "/correct" } {
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="expected" value=(record.updated_at);
            table.fields {
                thead { tr {
                    th scope="col" { (r.term) }
                    th scope="col" { (r.field) }
                    th scope="col" { (r.value) }
                    th scope="col" { (r.confidence) }
                    th scope="col" { (r.source) }
                } }
                tbody {
                    @for f in view.fields.iter().flatten() {
                        @let (word, class) = r.level(f64::from(f.confidence), threshold);
                        @let id = format!("f-{}", anchor(&f.path));
                        tr class={ "field " (class) } id=(id) {
                            td { (f.business_term) }
                            td { label for={ (id) "-v" } { code { (f.path) } } }
                            td {
                                input id={ (id) "-v" } name={ "v:" (f.path) } value=(f.value)
                                    readonly[!editable] aria-describedby={ (id) "-c" };
                            }
                            td id={ (id) "-c" } { span class={ "confidence " (class) } { (percent(f64::from(f.confidence))) " " (word) } }
                            td {
                                @if cited.contains(f.path.as_str()) {
                                    a href={ "#src-" (anchor(&f.path)) } { (describe(&f.source)) }
                                } @else {
                                    (describe(&f.source))
                                }
                            }
                        }
                    }
                }
            }
            @if editable { button type="submit" { (r.save) } }
        }
        (source_markup(r, &view.id, &source, &levels))
        @if let Some(checks) = &view.cross_checks {
            @if !checks.is_empty() {
                h2 { (r.checks) }
                ul {
                    @for c in checks {
                        li { strong { (c.name) } ": " (if c.passed { r.passed } else { r.failed }) " — " (c.detail) }
                    }
                }
            }
        }
        @if let Some(report) = &view.validation {
            @if !report.findings.is_empty() {
                h2 { (r.findings) }
                ul {
                    @for f in &report.findings {
                        li {
                            strong { (t.severity(f.severity.as_str())) } " "
                            a href={ "/console/rules/" (f.rule_id) } { (f.rule_id) } ": " (f.message)
                        }
                    }
                }
            }
        }
        @if let Some(invoice) = &view.invoice_id {
            p { (r.sent_as) " " a href={ "/console/invoices/" (invoice) } { (invoice) } }
        } @else if sendable {
            form.stack method="post" action={ (action) "/send" } {
                h2 { (r.send_title) }
                input type="hidden" name="csrf" value=(csrf);
                input type="hidden" name="expected" value=(record.updated_at);
                button type="submit" { (r.send) }
            }
        }
        @if acting {
            div.actions {
                form.stack method="post" action={ (action) "/approve" } {
                    h2 { (r.approve_title) }
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="expected" value=(record.updated_at);
                    label for="note" { (r.note) }
                    textarea id="note" name="note" rows="2" maxlength="2000" {}
                    button type="submit" { (r.approve) }
                }
                form.stack method="post" action={ (action) "/reject" } {
                    h2 { (r.reject_title) }
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="expected" value=(record.updated_at);
                    label for="reason" { (r.reason) }
                    textarea id="reason" name="reason" rows="2" maxlength="2000" required {}
                    button.danger type="submit" { (r.reject) }
                }
            }
        }
        @if let Some(changes) = &view.changes {
            @if !changes.is_empty() {
                h2 { (r.trail) }
                ul {
                    @for c in changes {
                        li { (c.at) " " (c.by) ": " code { (c.path) } " "
                            (c.old.as_deref().unwrap_or("∅")) " → " (c.new.as_deref().unwrap_or("∅")) }
                    }
                }
            }
        }
        @if let Some(xml) = &view.xml {
            details {
                summary { (r.xml) }
                pre.xml tabindex="0" { code { (xml) } }
            }
        }
    };
    let title = format!(
        "{} · {}",
        r.title,
        view.file_name.as_deref().unwrap_or(&view.id)
    );
    screen.render(status, &title, content)
}

/// A field path as an id fragment (`lines[2].quantity` → `lines-2-quantity`).
fn anchor(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The fields of the corrections form: `v:<path>` → value, and the tokens.
pub type FieldsForm = Vec<(String, String)>;

/// `POST /console/review/{id}/{action}`: correct, approve or reject.
pub async fn act(
    State(state): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
    Form(form): Form<FieldsForm>,
) -> Response {
    let speech = Speech::of(&PageQuery::default(), &headers);
    let path = format!("{PATH}/{id}");
    // Sending is invoice work (as `POST /v1/invoice/send`); the rest is reviewing.
    let roles = if action == "send" {
        allow::INVOICE_WORK
    } else {
        allow::REVIEW
    };
    let (signed, speech) = match signed_in_as(&state, &headers, speech, &path, roles).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let r = texts(screen.speech.lang);
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    if let Some(refused) = refused_form(&screen, &headers, &signed.0, field("csrf")) {
        return refused;
    }
    let mut record = match load(&screen, &signed.1.tenant_id, &id).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    // The page the person acted on must still be the conversion's state.
    let expected = record.updated_at.clone();
    if field("expected") != expected {
        return detail(
            &screen,
            &signed,
            &record,
            StatusCode::CONFLICT,
            None,
            Some(r.changed_meanwhile),
        )
        .await;
    }
    if action == "send" {
        return send(&screen, &signed, record).await;
    }
    let by = signed.1.email.clone();
    let now = crate::clock::now();
    let outcome = match action.as_str() {
        "correct" => {
            let current: std::collections::HashMap<String, String> =
                match review::stored_draft(&record) {
                    Ok(d) => d
                        .draft
                        .fields()
                        .into_iter()
                        .map(|f| (f.path, f.value))
                        .collect(),
                    Err(e) => return failed(&screen, &signed, &record, &e).await,
                };
            let corrections: Vec<Correction> = form
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix("v:")?, v)))
                .filter(|(path, value)| {
                    current.get(*path).is_some_and(|c| c.trim() != value.trim())
                })
                .map(|(path, value)| Correction {
                    path: path.to_string(),
                    value: value.clone(),
                })
                .collect();
            if corrections.is_empty() {
                return detail(
                    &screen,
                    &signed,
                    &record,
                    StatusCode::OK,
                    Some(r.unchanged),
                    None,
                )
                .await;
            }
            let catalog = state.registry.current();
            let threshold = state.config.convert.confidence_threshold;
            let job = state
                .admission
                .run(move || {
                    review::correct(
                        &mut record,
                        &catalog,
                        &corrections,
                        &[],
                        &by,
                        &now,
                        threshold,
                    )
                    .map(|()| record)
                })
                .await;
            match job {
                Ok(Ok(updated)) => Ok((updated, "corrected")),
                Ok(Err(e)) => Err(e),
                Err(busy) => {
                    let p = crate::problem::Problem::from(busy);
                    let again = match load(&screen, &signed.1.tenant_id, &id).await {
                        Ok(c) => c,
                        Err(resp) => return resp,
                    };
                    return detail(&screen, &signed, &again, p.status, None, Some(&p.detail)).await;
                }
            }
        }
        "approve" => {
            let note = Some(field("note").trim().to_string()).filter(|n| !n.is_empty());
            review::approve(&mut record, &by, note, &now).map(|()| (record, "approved"))
        }
        "reject" => {
            let reason = field("reason").trim().to_string();
            if reason.is_empty() {
                return detail(
                    &screen,
                    &signed,
                    &record,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    None,
                    Some(r.reason_needed),
                )
                .await;
            }
            review::reject(&mut record, &by, reason, &now).map(|()| (record, "rejected"))
        }
        _ => return screen.message(StatusCode::NOT_FOUND, r.title, r.not_found),
    };
    let (updated, done) = match outcome {
        Ok(o) => o,
        Err(e) => {
            let again = match load(&screen, &signed.1.tenant_id, &id).await {
                Ok(c) => c,
                Err(resp) => return resp,
            };
            return failed(&screen, &signed, &again, &e).await;
        }
    };
    match state.store.update_conversion(&updated, &expected).await {
        Ok(true) => see_other(&format!("{PATH}/{id}?done={done}")),
        Ok(false) => {
            let again = match load(&screen, &signed.1.tenant_id, &id).await {
                Ok(c) => c,
                Err(resp) => return resp,
            };
            detail(
                &screen,
                &signed,
                &again,
                StatusCode::CONFLICT,
                None,
                Some(r.changed_meanwhile),
            )
            .await
        }
        Err(e) => {
            tracing::error!(error = %e, "conversion not saved");
            let t = screen.speech.lang.t();
            screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            )
        }
    }
}

/// The conversion again with why the action was refused (the review capability's words).
async fn failed(
    screen: &Screen<'_>,
    signed: &(crate::store::SessionRecord, crate::store::PersonRecord),
    record: &ConversionRecord,
    e: &ReviewError,
) -> Response {
    let status = match e {
        ReviewError::Field(_) => StatusCode::UNPROCESSABLE_ENTITY,
        ReviewError::Final(_) | ReviewError::Embedded | ReviewError::FatalFindings(_) => {
            StatusCode::CONFLICT
        }
        ReviewError::Validation(_) | ReviewError::Damaged(_) => {
            tracing::error!(error = %e, "review failed");
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    let text = e.to_string();
    detail(screen, signed, record, status, None, Some(&text)).await
}

/// `GET /console/review/{id}/input`: the file the conversion was read from, as uploaded (a
/// PDF opens in the browser, spreadsheets download).
pub async fn input(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    use axum::http::{header, HeaderValue};
    use axum::response::IntoResponse;
    let speech = Speech::of(&PageQuery::default(), &headers);
    let path = format!("{PATH}/{id}");
    let (signed, speech) = match signed_in_as(&state, &headers, speech, &path, allow::READ).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let screen = Screen::signed(&state, speech, &path, &signed);
    let (r, t) = (texts(screen.speech.lang), screen.speech.lang.t());
    let record = match load(&screen, &signed.1.tenant_id, &id).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    let input = match state
        .store
        .conversion_input(&record.tenant_id, &record.input_sha256)
        .await
    {
        Ok(Some(i)) => i,
        Ok(None) => return screen.message(StatusCode::NOT_FOUND, r.title, r.input_unavailable),
        Err(e) => {
            tracing::error!(error = %e, "conversion input not read");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let (media, disposition) = match input.format.as_str() {
        "pdf" => ("application/pdf", "inline"),
        "csv" => ("text/csv; charset=utf-8", "attachment"),
        "xlsx" => (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "attachment",
        ),
        "ods" => (
            "application/vnd.oasis.opendocument.spreadsheet",
            "attachment",
        ),
        "xls" => ("application/vnd.ms-excel", "attachment"),
        _ => ("application/octet-stream", "attachment"),
    };
    let name = format!("{}.{}", record.id, input.format);
    let mut response = (StatusCode::OK, input.content).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    if let Ok(v) = HeaderValue::from_str(&format!("{disposition}; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    response
}

/// Send an approved or ready conversion's document through the tenant's connection, as
/// `POST /v1/invoice/send?conversion_id=` does (same gate, same checks, same answer). The
/// Idempotency-Key is the conversion's: a second click, or a reload of the form, replays the
/// first answer and never sends twice.
async fn send(
    screen: &Screen<'_>,
    signed: &(crate::store::SessionRecord, crate::store::PersonRecord),
    record: ConversionRecord,
) -> Response {
    use crate::sending::{self, SendRequest};
    let state = screen.state;
    let t = screen.speech.lang.t();
    let person = &signed.1;
    let tenant = match state.store.tenant(&person.tenant_id).await {
        Ok(Some(tenant)) => tenant,
        Ok(None) | Err(_) => {
            tracing::error!(tenant = %person.tenant_id, "the person's tenant is not readable");
            return screen.message(
                StatusCode::INTERNAL_SERVER_ERROR,
                t.error_title,
                t.error_detail,
            );
        }
    };
    let Some(role) = crate::auth::Role::parse(&person.role) else {
        return screen.message(StatusCode::FORBIDDEN, t.forbidden_title, t.forbidden);
    };
    let principal = crate::auth::Principal {
        tenant_id: person.tenant_id.clone(),
        tenant_kind: tenant.kind,
        role,
        key_id: None,
    };
    let request = SendRequest {
        idempotency_key: Some(format!("console-send-{}", record.id)),
        profile: None,
        file_name: record.file_name.clone(),
        scenario: None,
        resubmission_of: None,
        allow_duplicate: false,
        family: crate::auth::Family::Versioned,
        bytes: bytes::Bytes::from(record.xml.clone().into_bytes()),
        declared: crate::validation::Declared::Xml,
    };
    let answer = sending::send(state, &principal, request).await;
    let status = answer.status();
    let body = axum::body::to_bytes(answer.into_body(), 1024 * 1024)
        .await
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .unwrap_or_default();
    if status == StatusCode::ACCEPTED || status == StatusCode::OK {
        if let Some(id) = body["id"].as_str() {
            return see_other(&format!("/console/invoices/{id}"));
        }
    }
    let detail_text = body["detail"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| status.to_string());
    let again = match load(screen, &person.tenant_id, &record.id).await {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    detail(screen, signed, &again, status, None, Some(&detail_text)).await
}
