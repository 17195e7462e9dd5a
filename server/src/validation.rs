//! Validating one document for a tenant: parse with the configured limits, choose the
//! profile (named or detected), run the rules, and build the stored result.

use std::sync::Arc;
use std::time::Instant;

use axum::http::StatusCode;
use chrono::NaiveDate;
use invex_engine::document::{Document, Limits as ParseLimits, ParseError};
use invex_engine::registry::{Catalog, ResolveError};
use invex_engine::report::Report;
use invex_engine::rules::RuleSet;
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::auth::Principal;
pub use crate::invoice::json::Declared;
use crate::problem::Problem;
use crate::state::AppState;
use crate::store::ValidationRecord;

/// What was validated.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DocumentInfo {
    pub file_name: Option<String>,
    /// SHA-256 of the bytes received, lowercase hex.
    pub sha256: String,
    pub size_bytes: usize,
}

/// A validation result as answered and stored: the engine's report plus its identity.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ValidationResult {
    /// `GET /v1/validations/{id}` returns this result again.
    pub id: String,
    /// `sandbox` results are never production results.
    pub environment: String,
    pub created_at: String,
    pub document: DocumentInfo,
    #[serde(flatten)]
    pub report: Report,
}

/// A validated document, with the rule set that produced it (for SVRL).
pub struct Validated {
    pub result: ValidationResult,
    pub rules: Arc<RuleSet>,
}

/// Validate `bytes` (without storing). Parsing and the rules run on a worker of the
/// admission pool, never on the async runtime.
pub async fn validate(
    state: &AppState,
    profile: Option<String>,
    at: NaiveDate,
    file_name: Option<String>,
    bytes: bytes::Bytes,
    declared: Declared,
) -> Result<Validated, Problem> {
    let catalog = state.registry.current();
    let limits = parse_limits(state);
    let max_findings = state.config.limits.max_findings;
    let checked = state
        .admission
        .run(move || {
            let start = Instant::now();
            let xml = to_xml(&bytes, declared)?;
            let doc = parse(&xml, &limits)?;
            check(
                &catalog,
                profile.as_deref(),
                at,
                &doc,
                &bytes,
                start,
                max_findings,
            )
        })
        .await??;
    Ok(finish(state, file_name, checked))
}

/// The parser limits of the configuration.
pub fn parse_limits(state: &AppState) -> ParseLimits {
    ParseLimits {
        max_bytes: state.config.limits.max_body_bytes,
        max_depth: state.config.limits.max_xml_depth,
    }
}

/// A document checked against its profile, before it gets an id.
pub struct Checked {
    pub report: Report,
    pub rules: Arc<RuleSet>,
    pub sha256: String,
    pub size_bytes: usize,
}

/// `bytes` as XML: a JSON invoice ([`crate::invoice::json`]) is written as UBL first, and
/// one that cannot be read is a 422 naming where and why.
pub fn to_xml(bytes: &[u8], declared: Declared) -> Result<std::borrow::Cow<'_, [u8]>, Problem> {
    crate::invoice::json::to_xml(bytes, declared).map_err(|e| e.problem())
}

/// Parse `bytes`; a document that cannot be parsed is a problem naming where and why.
pub fn parse(bytes: &[u8], limits: &ParseLimits) -> Result<Document, Problem> {
    Document::parse_with_limits(bytes, limits).map_err(parse_problem)
}

/// Run the rules of `profile` (or the detected one) on `doc` (parsed from `bytes`, whose
/// parse began at `start`). CPU-bound: call it on a worker.
pub fn check(
    catalog: &Catalog,
    profile: Option<&str>,
    at: NaiveDate,
    doc: &Document,
    bytes: &[u8],
    start: Instant,
    max_findings: usize,
) -> Result<Checked, Problem> {
    let (mut report, rules) = run(catalog, profile, at, doc, max_findings)?;
    report.duration_us = start.elapsed().as_micros() as u64;
    Ok(Checked {
        report,
        rules,
        sha256: hex::encode(Sha256::digest(bytes)),
        size_bytes: bytes.len(),
    })
}

/// Give a checked document its identity as a result (and count it).
pub fn finish(state: &AppState, file_name: Option<String>, checked: Checked) -> Validated {
    let report = checked.report;
    state.metrics.validation(
        report.profile.split('@').next().unwrap_or(""),
        report.verdict,
    );
    Validated {
        result: ValidationResult {
            id: crate::ids::new_id("val"),
            environment: state.environment().to_string(),
            created_at: crate::clock::now(),
            document: DocumentInfo {
                file_name,
                sha256: checked.sha256,
                size_bytes: checked.size_bytes,
            },
            report,
        },
        rules: checked.rules,
    }
}

/// The record that stores `result` for `principal`.
pub fn record(principal: &Principal, result: &ValidationResult) -> ValidationRecord {
    record_for(&principal.tenant_id, principal.key_id.clone(), result)
}

/// The record that stores `result` for a tenant, made with a key or (console) without one.
pub fn record_for(
    tenant_id: &str,
    key_id: Option<String>,
    result: &ValidationResult,
) -> ValidationRecord {
    ValidationRecord {
        id: result.id.clone(),
        tenant_id: tenant_id.to_string(),
        key_id,
        created_at: result.created_at.clone(),
        file_name: result.document.file_name.clone(),
        sha256: result.document.sha256.clone(),
        size_bytes: result.document.size_bytes as i64,
        profile: result.report.profile.clone(),
        verdict: result.report.verdict.as_str().to_string(),
        rules_version: result.report.rules_version.join(","),
        environment: result.environment.clone(),
        result: serde_json::to_string(result).unwrap_or_default(),
    }
}

/// The rules of `profile` (a bare name: its newest version in force on `at`), or of the
/// profile detected among the versions in force on `at`.
fn run(
    catalog: &Catalog,
    profile: Option<&str>,
    at: NaiveDate,
    doc: &Document,
    max_findings: usize,
) -> Result<(Report, Arc<RuleSet>), Problem> {
    if catalog.profiles().is_empty() {
        return Err(Problem::unavailable(
            "no rule packs are loaded; see GET /v1/rulepacks for the last load error",
        ));
    }
    let (rules, detection, resolution) = match profile {
        Some(name) => match catalog.resolve(name, at) {
            Ok((p, why)) => (p.rules.clone(), None, why),
            Err(e) => return Err(profile_problem(catalog, name, &e)),
        },
        None => {
            let (rules, note) = catalog
                .detected_ruleset_at(doc, at)
                .map_err(|why| undetected_profile(catalog, &why))?;
            (rules, Some(note), None)
        }
    };
    let mut report = rules.validate_listing(doc, max_findings);
    report.detection = detection;
    report.resolution = resolution;
    Ok((report, rules))
}

/// The problem of a profile that cannot be resolved (400 `unknown-profile`).
pub fn profile_problem(catalog: &Catalog, name: &str, e: &ResolveError) -> Problem {
    match e {
        ResolveError::Unknown => unknown_profile(catalog, name),
        e => not_in_force(name, e),
    }
}

/// A bare profile name none of whose versions is in force on the day asked for.
fn not_in_force(name: &str, e: &ResolveError) -> Problem {
    Problem::new(
        StatusCode::BAD_REQUEST,
        "unknown-profile",
        "Unknown profile",
        format!("profile `{name}`: {e}; name a version as `{name}@VERSION` or choose another `at`"),
    )
}

fn unknown_profile(catalog: &Catalog, name: &str) -> Problem {
    let available: Vec<String> = catalog.profile_infos().into_iter().map(|p| p.id).collect();
    Problem::new(
        StatusCode::BAD_REQUEST,
        "unknown-profile",
        "Unknown profile",
        format!(
            "no profile `{name}` is installed; available: {}",
            available.join(", ")
        ),
    )
    .with("available_profiles", available)
}

/// Detection could not choose among the profiles that take the document.
fn undetected_profile(catalog: &Catalog, why: &str) -> Problem {
    let available: Vec<String> = catalog.profile_infos().into_iter().map(|p| p.id).collect();
    Problem::new(
        StatusCode::BAD_REQUEST,
        "unknown-profile",
        "Unknown profile",
        format!(
            "no profile could be detected for the document ({why}); name one with `profile`: {}",
            available.join(", ")
        ),
    )
    .with("available_profiles", available)
}

/// A document that cannot be parsed: 422 with line and column (413 when over the size).
pub fn parse_problem(e: ParseError) -> Problem {
    let detail = e.to_string();
    match e {
        ParseError::Malformed { line, column, .. } => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not-well-formed",
            "The document is not well-formed XML",
            detail,
        )
        .with("line", line)
        .with("column", column),
        ParseError::Doctype { line, column } => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "doctype-refused",
            "DOCTYPE declarations are refused",
            detail,
        )
        .with("line", line)
        .with("column", column),
        ParseError::TooDeep {
            line,
            column,
            limit,
        } => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "too-deep",
            "The document nests elements too deeply",
            detail,
        )
        .with("line", line)
        .with("column", column)
        .with("limit", "max_xml_depth")
        .with("limit_value", limit),
        ParseError::TooLarge { limit, .. } => Problem::too_large("max_body_bytes", limit, detail),
        ParseError::NoRootElement => Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not-well-formed",
            "The document is not well-formed XML",
            detail,
        )
        .with("line", 1)
        .with("column", 1),
    }
}
