//! The error catalogue (`GET /v1/rules`, `GET /v1/rules/{id}`) and the profile families with
//! their windows (`GET /v1/rules/profiles`): what a finding's rule means, who fixes it, and
//! which rules apply on a day.

use axum::extract::{Path, Query, State};
use axum::Json;
use chrono::NaiveDate;
use invex_engine::catalogue::{Filter, RuleEntry, RuleKind};
use invex_engine::pack::Severity;
use invex_engine::registry::{today, ProfileInfo};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::problem::Problem;
use crate::routes::page;
use crate::state::AppState;

/// Filters and the page of the catalogue.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RuleQuery {
    /// Part of the rule id or its message, any case (`BR-CO`, `billing reference`).
    pub q: Option<String>,
    /// Only rules guarding this business term (`BT-24`, `BG-7`), any case.
    pub business_term: Option<String>,
    /// Only rules with this owner: who fixes what the rule reports (`sender-mapping`,
    /// `seller-master-data`, `buyer-master-data`, `tax-settings`, `payment-settings`,
    /// `line-items`, `amounts`, `document-settings`).
    pub owner: Option<String>,
    /// Only rules of this pack (`peppol-bis3`) or pack version (`peppol-bis3@2026.11`).
    pub pack: Option<String>,
    /// Only rules with this flag, in their pack or in a profile that runs them.
    pub severity: Option<Severity>,
    /// Only rules whose id sorts after this one: the `next` of the previous page.
    pub after: Option<String>,
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
}

/// A rule as a list shows it: the newest pack version that matched the filters.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleSummary {
    pub id: String,
    pub kind: RuleKind,
    /// Its flag in `pack`.
    pub flag: Severity,
    pub message: String,
    /// How to fix what it reports (empty when the pack gives no hint).
    pub remediation: String,
    /// Who fixes what it reports.
    pub owner: Option<String>,
    pub business_terms: Vec<String>,
    /// The XPath of the nodes it is checked on.
    pub context: String,
    /// The pack version shown (`id@version`).
    pub pack: String,
    /// Every pack version carrying the rule.
    pub versions: Vec<String>,
    /// Pack versions that dropped it.
    pub removed_in: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RuleList {
    /// By id.
    pub rules: Vec<RuleSummary>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next: Option<String>,
    /// How many rules match the filters in all.
    pub total: usize,
}

#[utoipa::path(get, path = "/v1/rules", tag = "rulepacks", operation_id = "list_rules",
    params(RuleQuery),
    responses(
        (status = 200, description = "The error catalogue: the rules of every installed pack version matching the filters, by id", body = RuleList),
        (status = 400, description = "A severity that is not `fatal`, `warning` or `information`", body = crate::problem::ProblemBody),
        (status = 422, description = "A page size out of range (`field`: `limit`)", body = crate::problem::ProblemBody)))]
pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<RuleQuery>,
) -> Result<Json<RuleList>, Problem> {
    let limit = usize::try_from(page::size(query.limit)?).unwrap_or(1);
    let catalogue = state.rule_catalogue.get(&state.registry.current());
    let filter = Filter {
        text: query.q,
        business_term: query.business_term,
        owner: query.owner,
        pack: query.pack,
        severity: query.severity,
    };
    let found = catalogue.search(&filter, query.after.as_deref(), limit);
    let rules = found
        .hits
        .iter()
        .map(|h| {
            let r = &h.version.rule;
            RuleSummary {
                id: h.entry.id.clone(),
                kind: r.kind,
                flag: r.flag,
                message: r.message.clone(),
                remediation: r.remediation.clone(),
                owner: r.owner.clone(),
                business_terms: r.business_terms.clone(),
                context: r.context.clone(),
                pack: r.pack.clone(),
                versions: h
                    .entry
                    .versions
                    .iter()
                    .map(|v| v.rule.pack.clone())
                    .collect(),
                removed_in: h.entry.removed_in.clone(),
            }
        })
        .collect();
    Ok(Json(RuleList {
        rules,
        next: found.next,
        total: found.total,
    }))
}

#[utoipa::path(get, path = "/v1/rules/{id}", tag = "rulepacks", operation_id = "get_rule",
    params(("id" = String, Path, description = "Rule id, as findings name it (`BR-CO-10`, `PEPPOL-EN16931-P0112`)")),
    responses(
        (status = 200, description = "The rule in every installed pack version carrying it: message, remediation, owner, business terms, context, test, the profiles running it with their flags, and what changed from the previous version of the same pack", body = RuleEntry),
        (status = 404, description = "No installed pack carries a rule of this id", body = crate::problem::ProblemBody)))]
pub async fn get_one(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RuleEntry>, Problem> {
    let catalogue = state.rule_catalogue.get(&state.registry.current());
    catalogue
        .get(&id)
        .cloned()
        .map(Json)
        .ok_or_else(|| Problem::not_found(format!("no installed rule pack carries a rule `{id}`")))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProfilesQuery {
    /// The day to resolve each family on (`YYYY-MM-DD`, default today).
    #[param(value_type = Option<String>, format = Date, example = "2027-01-15")]
    pub at: Option<NaiveDate>,
}

/// A profile and all its versions.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileFamily {
    /// The bare name (`peppol-bis3-sk`), which resolves by date.
    pub id: String,
    /// The newest version's title.
    pub title: Option<String>,
    /// The version a bare name resolves to on `at`; absent when none is in force then.
    pub in_force: Option<String>,
    /// Why: the version chosen, its window and the other versions' windows.
    pub reason: Option<String>,
    /// Every installed version, oldest first, with its window (`valid_from`,
    /// `valid_until`) and packs.
    pub versions: Vec<ProfileInfo>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileFamilies {
    /// The day the families were resolved on.
    pub at: String,
    pub families: Vec<ProfileFamily>,
}

#[utoipa::path(get, path = "/v1/rules/profiles", tag = "rulepacks", operation_id = "list_profile_families",
    params(ProfilesQuery),
    responses(
        (status = 200, description = "Profile families, their versions and windows, and the version in force on `at`", body = ProfileFamilies),
        (status = 400, description = "`at` is not a date", body = crate::problem::ProblemBody)))]
pub async fn profiles(
    State(state): State<AppState>,
    Query(query): Query<ProfilesQuery>,
) -> Json<ProfileFamilies> {
    let day = query.at.unwrap_or_else(today);
    let catalog = state.registry.current();
    let mut families: Vec<ProfileFamily> = Vec::new();
    // Infos are sorted by id then version: one family per run of ids.
    for info in catalog.profile_infos() {
        match families.last_mut() {
            Some(f) if f.id == info.id => {
                f.title = info.title.clone().or(f.title.take());
                f.versions.push(info);
            }
            _ => families.push(ProfileFamily {
                id: info.id.clone(),
                title: info.title.clone(),
                in_force: None,
                reason: None,
                versions: vec![info],
            }),
        }
    }
    for f in &mut families {
        match catalog.resolve(&f.id, day) {
            Ok((p, reason)) => {
                f.in_force = Some(p.def.version.clone());
                f.reason = reason;
            }
            Err(e) => f.reason = Some(e.to_string()),
        }
    }
    Json(ProfileFamilies {
        at: day.to_string(),
        families,
    })
}
