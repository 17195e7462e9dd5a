//! Everything the sandbox answers on purpose, in one list: the delivery scenarios and the
//! buyer addresses that choose them, the Peppol participants (with their readiness), the
//! VAT register's companies and the VIES test numbers, and the Slovak companies. Read from
//! the same tables the sandbox answers from, so the list cannot drift from behaviour.

use chrono::Utc;
use serde::Serialize;
use utoipa::ToSchema;

use crate::peppol::answer::PeppolParticipant;
use crate::peppol::readiness::Readiness;
use crate::peppol::ParticipantId;
use crate::sending::partner;

#[derive(Debug, Serialize, ToSchema)]
pub struct Catalogue {
    /// Values of the `Invex-Sandbox-Scenario` header of a send, and what each ends in.
    pub scenarios: Vec<Scenario>,
    /// Buyer electronic addresses (BT-49) that choose a scenario when no header does.
    pub scenario_buyers: Vec<ScenarioBuyer>,
    /// Participants `GET /v1/peppol/lookup` knows; any other valid identifier is not registered.
    pub peppol_participants: Vec<TestParticipant>,
    /// VAT numbers the sandbox register knows as valid; any other well-formed number is not.
    pub vat_numbers: Vec<TestVat>,
    /// `{country}{code}`, e.g. `SK100`: the VIES test numbers, outages included.
    pub vies_test_numbers: Vec<TestVat>,
    /// IČOs `GET /v1/company/sk/{ico}` knows.
    pub companies: Vec<TestCompany>,
    pub environment: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Scenario {
    pub name: String,
    pub outcome: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ScenarioBuyer {
    pub endpoint: String,
    pub scenario: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestParticipant {
    pub participant_id: String,
    pub name: String,
    pub readiness: Readiness,
    /// The channel the lookup recommends, e.g. `peppol` or `email_pdf_xml`.
    pub recommended_channel: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestVat {
    pub vat: String,
    pub answer: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestCompany {
    pub ico: String,
    pub name: String,
    pub terminated: bool,
}

/// What each scenario ends in (the last timeline entry and the status).
fn outcome(scenario: &str) -> &'static str {
    match scenario {
        "accepted" => "delivered (MLS AB), then accepted by the buyer (IR AP): status accepted",
        "rejected" => "delivered, then rejected by the buyer (IR RE): status rejected",
        "under_query" => "delivered, then queried by the buyer (IR UQ): status under_query",
        "conditionally_accepted" => {
            "delivered, then conditionally accepted (IR CA): status conditionally_accepted"
        }
        "transport_rejection" => "refused by the receiving access point (MLS RE): status rejected",
        "delivery_failure" => "could not be delivered (MLS RE, FD): status failed",
        "no_response" => "delivered (MLS AB), then no answer: a response timeout is recorded",
        _ => "",
    }
}

pub fn catalogue(environment: &str) -> Catalogue {
    let now = Utc::now();
    let peppol_participants = crate::peppol::sandbox::participants()
        .filter_map(|(id, name)| {
            let parsed = ParticipantId::parse(id).ok()?;
            let found = crate::peppol::sandbox::lookup(&parsed, now);
            let assessed = PeppolParticipant::new(&found, false, environment);
            Some(TestParticipant {
                participant_id: id.to_string(),
                name: name.to_string(),
                readiness: assessed.readiness,
                recommended_channel: assessed.recommended_channel.channel.to_string(),
            })
        })
        .collect();
    Catalogue {
        scenarios: partner::SCENARIOS
            .iter()
            .map(|s| Scenario {
                name: s.to_string(),
                outcome: outcome(s).to_string(),
            })
            .collect(),
        scenario_buyers: partner::SANDBOX_BUYERS
            .iter()
            .map(|(endpoint, scenario)| ScenarioBuyer {
                endpoint: endpoint.to_string(),
                scenario: scenario.to_string(),
            })
            .collect(),
        peppol_participants,
        vat_numbers: crate::vat::sandbox::COMPANIES
            .iter()
            .map(|(vat, name, _)| TestVat {
                vat: vat.to_string(),
                answer: format!("valid: {name}"),
            })
            .collect(),
        vies_test_numbers: crate::vat::sandbox::TEST_CODES
            .iter()
            .map(|(code, answer)| TestVat {
                vat: format!("SK{code}"),
                answer: answer.to_string(),
            })
            .collect(),
        companies: crate::company::sandbox::companies()
            .map(|(ico, name, terminated)| TestCompany {
                ico: ico.to_string(),
                name: name.to_string(),
                terminated,
            })
            .collect(),
        environment: environment.to_string(),
    }
}

#[cfg(test)]
mod tests {
    /// Every scenario is described, and every listed identity answers as listed.
    #[test]
    fn the_catalogue_is_complete_and_true() {
        let c = super::catalogue("sandbox");
        assert!(c.scenarios.iter().all(|s| !s.outcome.is_empty()));
        assert_eq!(c.scenarios.len(), crate::sending::partner::SCENARIOS.len());
        for s in &c.scenario_buyers {
            assert_eq!(
                crate::sending::partner::scenario_for_buyer(Some(&s.endpoint)),
                Some(s.scenario.as_str())
            );
        }
        assert!(c
            .peppol_participants
            .iter()
            .any(|p| p.readiness == crate::peppol::readiness::Readiness::Partial));
        for v in &c.vies_test_numbers {
            assert!(
                crate::vat::sandbox::test_number(&v.vat).is_some(),
                "{}",
                v.vat
            );
        }
        assert!(!c.companies.is_empty());
    }
}
