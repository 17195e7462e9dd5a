//! `GET /v1/sandbox`: the sandbox's test identities and scenarios (404 in production).

use axum::extract::State;
use axum::Json;

use crate::problem::Problem;
use crate::sandbox::{self, Catalogue};
use crate::settings::Mode;
use crate::state::AppState;

#[utoipa::path(get, path = "/v1/sandbox", tag = "account", operation_id = "get_sandbox_catalogue",
    responses(
        (status = 200, description = "Every test identity and scenario of the sandbox, and what each answers: delivery scenarios and the buyer addresses that choose them, Peppol participants with their readiness, VAT numbers and VIES test numbers, Slovak companies", body = Catalogue),
        (status = 404, description = "Not a sandbox instance", body = crate::problem::ProblemBody)))]
pub async fn catalogue(State(state): State<AppState>) -> Result<Json<Catalogue>, Problem> {
    if state.config.mode != Mode::Sandbox {
        return Err(Problem::not_found(
            "this is a production instance: it has no test identities",
        ));
    }
    Ok(Json(sandbox::catalogue(state.environment())))
}
