//! The JSON answers of the two lookup routes, built from a [`Participant`].

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::identifier::{ParticipantId, SCHEME};
use super::readiness::{self, Assessment, Channel, EndpointStatus, Readiness};
use super::Participant;

/// `GET /v1/peppol/lookup` (interface spec 2.2, plus document types and provenance).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PeppolLookupResult {
    /// Whether the SML knows the participant.
    pub registered: bool,
    /// `{icd}:{identifier}`, e.g. `0245:2022749619`.
    pub participant_id: String,
    /// Process identifiers (URN form) the participant's SMP publishes, e.g.
    /// `urn:fdc:peppol.eu:2017:poacc:billing:01:1.0`.
    pub profiles: Vec<String>,
    /// The access point documents go to: endpoint host and transport profile, e.g.
    /// `ap.example.sk (peppol-transport-as4-v2_0)`; null when none is published.
    pub delivery_partner: Option<String>,
    /// Full document type identifiers the SMP supports (`busdox-docid-qns::...`).
    pub document_types: Vec<String>,
    /// `SML/SMP` (production) or `sandbox`.
    pub source: String,
    /// ISO 8601 UTC time of the lookup (of the original lookup when `cached`).
    pub checked_at: String,
    pub cached: bool,
    /// `sandbox` answers are never production results.
    pub environment: String,
    /// Readiness for Peppol BIS Billing 3.0, as `GET /api/peppol-lookup/{participantId}`
    /// answers it: `ready`, `partial` or `not_registered`.
    pub readiness: Readiness,
    /// What stands between the participant and `ready`.
    pub gaps: Vec<String>,
    /// How to deliver to this participant now: for a participant that is not registered or
    /// not ready, the channel to use instead of Peppol.
    pub recommended_channel: Channel,
    /// Other ways, best first.
    pub alternative_channels: Vec<Channel>,
}

impl PeppolLookupResult {
    pub fn new(p: &Participant, cached: bool, environment: &str) -> PeppolLookupResult {
        // The same assessment as the /api answer: one source for both families.
        let assessed = PeppolParticipant::new(p, cached, environment);
        let now = Utc::now();
        let supported = || p.services.iter().filter(|s| s.supported);
        let mut profiles: Vec<String> = Vec::new();
        for process in supported().flat_map(|s| s.processes.iter()) {
            let urn = urn(&process.process_id);
            if !urn.is_empty() && !profiles.contains(&urn) {
                profiles.push(urn);
            }
        }
        PeppolLookupResult {
            registered: p.registered,
            participant_id: p.id.id(),
            profiles,
            delivery_partner: readiness::access_point(&p.services, now),
            document_types: supported().map(|s| s.document_type.clone()).collect(),
            source: p.source.to_string(),
            checked_at: p.checked_at.clone(),
            cached,
            environment: environment.to_string(),
            readiness: assessed.readiness,
            gaps: assessed.gaps,
            recommended_channel: assessed.recommended_channel,
            alternative_channels: assessed.alternative_channels,
        }
    }
}

/// The value of a `{scheme}::{value}` identifier.
fn urn(identifier: &str) -> String {
    identifier
        .split_once("::")
        .map(|(_, v)| v)
        .unwrap_or(identifier)
        .to_string()
}

/// Whether a published document can be used now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentStatus {
    /// Published with an endpoint that is active now.
    Active,
    /// The endpoint's expiration date has passed.
    Expired,
    /// The endpoint's activation date is in the future.
    NotYetActive,
    /// Listed in the service group, but the SMP answers 404 for its metadata.
    NotSupported,
    /// Published without any endpoint.
    NoEndpoint,
}

/// One document type the participant publishes, with one of its endpoints.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct SupportedDocument {
    /// Friendly name, e.g. `Peppol BIS Billing 3.0 Invoice`.
    pub label: String,
    /// Full document type identifier, `busdox-docid-qns::...`.
    pub document_type_id: String,
    pub status: DocumentStatus,
    /// `{scheme}::{value}` process identifier.
    pub process_id: Option<String>,
    /// e.g. `peppol-transport-as4-v2_0`.
    pub transport_profile: Option<String>,
    /// The access point URL documents are delivered to.
    pub endpoint: Option<String>,
    /// ISO 8601 UTC.
    pub activation_date: Option<String>,
    /// ISO 8601 UTC.
    pub expiration_date: Option<String>,
    /// Whether the SMP publishes the access point's certificate.
    pub certificate_present: bool,
    pub technical_contact: Option<String>,
}

/// `GET /api/peppol-lookup/{participantId}`: registration, name, documents, readiness and
/// the recommended channel (interface spec 2.3).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PeppolParticipant {
    /// `{icd}:{identifier}`, e.g. `0245:2022749619`.
    pub participant_id: String,
    /// Always `iso6523-actorid-upis`.
    pub scheme: String,
    /// The Peppol name of the ICD, e.g. `SK:DIC`.
    pub icd_scheme: String,
    /// Whether the SML knows the participant; null when the lookup could not complete.
    pub registered: Option<bool>,
    /// Business name from the Peppol Directory.
    pub name: Option<String>,
    /// Country of the business (Peppol Directory).
    pub country: Option<String>,
    /// The participant's SMP.
    pub smp_url: Option<String>,
    pub documents: Vec<SupportedDocument>,
    pub readiness: Readiness,
    /// What stands between the participant and `ready`.
    pub gaps: Vec<String>,
    /// How to deliver to this participant now.
    pub recommended_channel: Channel,
    /// Other ways, best first.
    pub alternative_channels: Vec<Channel>,
    /// Remarks that are not a verdict (e.g. the Directory did not answer).
    pub notes: Vec<String>,
    /// `SML/SMP`, `sandbox`, or `unavailable` when the lookup could not complete.
    pub source: String,
    /// ISO 8601 UTC.
    pub checked_at: String,
    pub cached: bool,
    pub environment: String,
}

fn iso(d: Option<DateTime<Utc>>) -> Option<String> {
    d.map(|d| d.to_rfc3339_opts(SecondsFormat::Secs, true))
}

fn documents(p: &Participant, now: DateTime<Utc>) -> Vec<SupportedDocument> {
    let mut out = Vec::new();
    for service in &p.services {
        let base = SupportedDocument {
            label: readiness::label(&service.document_type),
            document_type_id: service.document_type.clone(),
            status: DocumentStatus::NotSupported,
            process_id: None,
            transport_profile: None,
            endpoint: None,
            activation_date: None,
            expiration_date: None,
            certificate_present: false,
            technical_contact: None,
        };
        if !service.supported {
            out.push(base);
            continue;
        }
        let before = out.len();
        for process in &service.processes {
            for e in &process.endpoints {
                out.push(SupportedDocument {
                    status: match readiness::endpoint_status(e, now) {
                        EndpointStatus::Active => DocumentStatus::Active,
                        EndpointStatus::Expired => DocumentStatus::Expired,
                        EndpointStatus::NotYetActive => DocumentStatus::NotYetActive,
                    },
                    process_id: Some(process.process_id.clone()),
                    transport_profile: Some(e.transport_profile.clone()),
                    endpoint: e.address.clone(),
                    activation_date: iso(e.activation),
                    expiration_date: iso(e.expiration),
                    certificate_present: e.certificate_present,
                    technical_contact: e.technical_contact.clone(),
                    ..base.clone()
                });
            }
        }
        if out.len() == before {
            out.push(SupportedDocument {
                status: DocumentStatus::NoEndpoint,
                ..base
            });
        }
    }
    out
}

impl PeppolParticipant {
    pub fn new(p: &Participant, cached: bool, environment: &str) -> PeppolParticipant {
        let now = Utc::now();
        let assessment = readiness::assess(p, now);
        PeppolParticipant {
            registered: Some(p.registered),
            name: p.name.clone(),
            country: p.country.clone(),
            smp_url: p.smp.clone(),
            documents: documents(p, now),
            notes: p.notes.clone(),
            source: p.source.to_string(),
            checked_at: p.checked_at.clone(),
            cached,
            ..PeppolParticipant::shell(&p.id, assessment, environment)
        }
    }

    /// The answer when the lookup could not complete: readiness `unknown`.
    pub fn unavailable(id: &ParticipantId, reason: &str, environment: &str) -> PeppolParticipant {
        PeppolParticipant::shell(id, readiness::unknown(reason), environment)
    }

    fn shell(id: &ParticipantId, a: Assessment, environment: &str) -> PeppolParticipant {
        PeppolParticipant {
            participant_id: id.id(),
            scheme: SCHEME.to_string(),
            icd_scheme: id.scheme_id.to_string(),
            registered: None,
            name: None,
            country: None,
            smp_url: None,
            documents: Vec::new(),
            readiness: a.readiness,
            gaps: a.gaps,
            recommended_channel: a.recommended,
            alternative_channels: a.alternatives,
            notes: Vec::new(),
            source: "unavailable".to_string(),
            checked_at: crate::clock::now(),
            cached: false,
            environment: environment.to_string(),
        }
    }
}
