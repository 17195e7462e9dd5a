//! Peppol participant lookup: `GET /v1/peppol/lookup?icd=0245&id=2022749619` (interface
//! spec 2.2) and `GET /api/peppol-lookup/{participantId}` (2.3, with readiness and the
//! recommended channel). Identifier checks answer first; discovery follows.

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::Json;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::peppol::answer::{PeppolLookupResult, PeppolParticipant};
use crate::peppol::{IdError, ParticipantId};
use crate::problem::Problem;
use crate::state::AppState;

/// Both parameters are required; they are optional here only so that a missing one is
/// answered with the `invalid-participant-id` problem naming it.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LookupQuery {
    /// Four-digit ICD from the Peppol code list "Participant identifier schemes", e.g.
    /// `0245` (SK DIČ) or `9950` (SK VAT number).
    #[param(required = true)]
    pub icd: Option<String>,
    /// The identifier within the scheme, e.g. `2022749619`; case-insensitive.
    #[param(required = true)]
    pub id: Option<String>,
}

/// 400 naming what is wrong with the identifier.
fn invalid(e: &IdError, given: &str) -> Problem {
    let mut p = Problem::new(
        StatusCode::BAD_REQUEST,
        "invalid-participant-id",
        "The participant identifier is invalid",
        e.to_string(),
    )
    .with("field", e.part())
    .with("participant_id", given);
    if matches!(e, IdError::UnknownIcd(_) | IdError::IcdFormat(_)) {
        p = p.with(
            "code_list",
            "https://docs.peppol.eu/edelivery/codelists/ (Participant identifier schemes)",
        );
    }
    p
}

#[utoipa::path(get, path = "/v1/peppol/lookup", tag = "lookups", operation_id = "lookup_peppol_participant_v1",
    params(LookupQuery),
    responses(
        (status = 200, description = "Whether the participant is registered, its profiles, document types and access point", body = PeppolLookupResult),
        (status = 400, description = "`invalid-participant-id`: the ICD is not in the Peppol code list, or the identifier breaks its scheme's syntax or check digits; `field` names the part", body = crate::problem::ProblemBody),
        (status = 503, description = "`lookup-unavailable`: DNS or the SMP cannot answer now (never reported as not registered); `Retry-After` says when to retry", body = crate::problem::ProblemBody)))]
pub async fn lookup_v1(
    State(state): State<AppState>,
    Query(query): Query<LookupQuery>,
) -> Result<Json<PeppolLookupResult>, Problem> {
    let icd = query.icd.unwrap_or_default();
    let value = query.id.unwrap_or_default();
    let given = format!("{icd}:{value}");
    if icd.trim().is_empty() || value.trim().is_empty() {
        let missing = if icd.trim().is_empty() { "icd" } else { "id" };
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-participant-id",
            "The participant identifier is invalid",
            format!("the query parameter `{missing}` is missing: send ?icd=<four digits>&id=<identifier>, e.g. ?icd=0245&id=2022749619"),
        )
        .with("field", missing));
    }
    let id = ParticipantId::from_parts(&icd, &value).map_err(|e| invalid(&e, &given))?;
    let environment = state.environment();
    match state.peppol.find(&id).await {
        Ok(found) => Ok(Json(PeppolLookupResult::new(
            &found.participant,
            found.cached,
            environment,
        ))),
        Err(down) => Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "lookup-unavailable",
            "The Peppol lookup cannot complete now",
            format!(
                "{}; the participant is not known to be unregistered, retry later",
                down.reason
            ),
        )
        .with("participant_id", id.id())
        .with("stage", down.stage)
        .with("retry_after_seconds", down.retry_after_secs)
        .header(header::RETRY_AFTER, &down.retry_after_secs.to_string())),
    }
}

#[utoipa::path(get, path = "/api/peppol-lookup/{participantId}", tag = "lookups", operation_id = "lookup_peppol_participant_api",
    params(("participantId" = String, Path,
        description = "`{icd}:{identifier}` (e.g. `0245:2022749619`) or `iso6523-actorid-upis::0245:2022749619`")),
    responses(
        (status = 200, description = "Registration, name, supported documents, readiness (`ready`, `partial`, `not_registered`, or `unknown` when the lookup could not complete) and the recommended channel", body = PeppolParticipant),
        (status = 400, description = "`invalid-participant-id`: the identifier is malformed, its ICD is not in the Peppol code list, or its check digits do not match", body = crate::problem::ProblemBody)))]
pub async fn lookup_api(
    State(state): State<AppState>,
    Path(participant_id): Path<String>,
) -> Result<Json<PeppolParticipant>, Problem> {
    let id = ParticipantId::parse(&participant_id).map_err(|e| invalid(&e, &participant_id))?;
    let environment = state.environment();
    Ok(Json(match state.peppol.find(&id).await {
        Ok(found) => PeppolParticipant::new(&found.participant, found.cached, environment),
        Err(down) => PeppolParticipant::unavailable(&id, &down.reason, environment),
    }))
}
