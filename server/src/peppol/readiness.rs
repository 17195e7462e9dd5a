//! Is a participant ready for Peppol BIS Billing 3.0, and if not, how to reach it.
//!
//! Ready means: registered, and both the BIS 3.0 Invoice and CreditNote are published for
//! the billing process with an active AS4 endpoint. Anything less is `partial`. The answer
//! always carries a recommended channel, never only "not found".

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::smp::Endpoint;
use super::{Participant, Service};

pub const BIS_INVOICE: &str = "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
pub const BIS_CREDIT_NOTE: &str = "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1";
pub const BIS_PROCESS: &str = "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";
pub const AS4: &str = "peppol-transport-as4-v2_0";

/// Readiness for Peppol BIS Billing 3.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Readiness {
    /// Registered; BIS 3.0 Invoice and CreditNote with an active AS4 endpoint.
    Ready,
    /// Registered, but the Invoice or the CreditNote is missing, expired or not yet active.
    Partial,
    /// The SML does not know the participant.
    NotRegistered,
    /// The lookup could not complete (DNS failure, SMP unreachable); not a verdict.
    Unknown,
}

/// A way to deliver documents to the participant, with the reason in words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
pub struct Channel {
    /// `peppol` (send now through your access point), `peppol_after_registration` (once
    /// the participant's registration or endpoint is in order), `email_pdf_xml` (e-mail
    /// with the PDF and the UBL XML attached), `onboarding_invitation` (invite the partner
    /// to register with a Peppol access point) or `retry_later` (the lookup could not
    /// complete).
    pub channel: &'static str,
    pub reason: String,
}

fn channel(channel: &'static str, reason: impl Into<String>) -> Channel {
    Channel {
        channel,
        reason: reason.into(),
    }
}

/// The verdict on one participant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assessment {
    pub readiness: Readiness,
    /// What keeps the participant from `ready`, one sentence each.
    pub gaps: Vec<String>,
    pub recommended: Channel,
    pub alternatives: Vec<Channel>,
}

/// A friendly name for a document type identifier.
pub fn label(document_type: &str) -> String {
    let value = document_type
        .split_once("::")
        .map(|(_, v)| v)
        .unwrap_or(document_type);
    let (root, customization) = value.split_once("##").unwrap_or((value, ""));
    let root_name = root.rsplit("::").next().unwrap_or(root);
    // (customization URN, name, whether the document name completes it)
    let known = [
        (
            "urn:fdc:peppol.eu:2017:poacc:billing:3.0",
            "Peppol BIS Billing 3.0",
            true,
        ),
        ("urn:xeinkauf.de:kosit:xrechnung_3.0", "XRechnung 3.0", true),
        ("urn:peppol:pint:billing-1", "Peppol PINT Billing", true),
        (
            "urn:fdc:peppol.eu:poacc:trns:mlr:3",
            "Peppol Message Level Response 3.0",
            false,
        ),
        (
            "urn:fdc:peppol.eu:poacc:trns:invoice_response:3",
            "Peppol Invoice Response 3.0",
            false,
        ),
        (
            "urn:fdc:peppol.eu:poacc:trns:order:3",
            "Peppol Order 3.0",
            false,
        ),
        (
            "urn:fdc:peppol.eu:poacc:trns:order_response:3",
            "Peppol Order Response 3.0",
            false,
        ),
        (
            "urn:fdc:peppol.eu:poacc:trns:despatch_advice:3",
            "Peppol Despatch Advice 3.0",
            false,
        ),
        (
            "urn:fdc:peppol.eu:poacc:trns:catalogue:3",
            "Peppol Catalogue 3.0",
            false,
        ),
    ];
    let document = match root_name {
        "CreditNote" => "Credit Note",
        other => other,
    };
    let customization = customization.split("::").next().unwrap_or(customization);
    if let Some((_, name, with_document)) =
        known.iter().find(|(urn, _, _)| customization.contains(urn))
    {
        return if *with_document {
            format!("{name} {document}")
        } else {
            (*name).to_string()
        };
    }
    if customization.is_empty() {
        root_name.to_string()
    } else {
        format!("{root_name} ({customization})")
    }
}

/// Whether an endpoint is usable at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndpointStatus {
    Active,
    Expired,
    NotYetActive,
}

pub fn endpoint_status(endpoint: &Endpoint, now: DateTime<Utc>) -> EndpointStatus {
    match (endpoint.activation, endpoint.expiration) {
        (_, Some(end)) if end <= now => EndpointStatus::Expired,
        (Some(start), _) if start > now => EndpointStatus::NotYetActive,
        _ => EndpointStatus::Active,
    }
}

fn same_document(a: &str, b: &str) -> bool {
    let value = |s: &str| s.split_once("::").map(|(_, v)| v.to_string());
    a == b || (value(a).is_some() && value(a) == value(b))
}

/// The active AS4 endpoint for `document_type` in the billing process, or why there is none.
fn capability<'a>(
    services: &'a [Service],
    document_type: &str,
    now: DateTime<Utc>,
) -> Result<&'a Endpoint, String> {
    let name = label(document_type);
    let Some(service) = services
        .iter()
        .find(|s| same_document(&s.document_type, document_type))
    else {
        return Err(format!("{name} is not published in their SMP"));
    };
    if !service.supported {
        return Err(format!(
            "their SMP answers 404 for {name}: the document type is not supported"
        ));
    }
    let endpoints: Vec<&Endpoint> = service
        .processes
        .iter()
        .filter(|p| p.process_id.eq_ignore_ascii_case(BIS_PROCESS))
        .flat_map(|p| p.endpoints.iter())
        .filter(|e| e.transport_profile == AS4)
        .collect();
    if endpoints.is_empty() {
        return Err(format!(
            "{name} has no AS4 ({AS4}) endpoint for the BIS Billing process"
        ));
    }
    if let Some(active) = endpoints
        .iter()
        .find(|e| endpoint_status(e, now) == EndpointStatus::Active && e.address.is_some())
    {
        return Ok(active);
    }
    let day = |d: Option<DateTime<Utc>>| {
        d.map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    };
    let first = endpoints[0];
    Err(match endpoint_status(first, now) {
        EndpointStatus::Expired => format!(
            "the AS4 endpoint for {name} expired on {}",
            day(first.expiration)
        ),
        EndpointStatus::NotYetActive => format!(
            "the AS4 endpoint for {name} becomes active only on {}",
            day(first.activation)
        ),
        EndpointStatus::Active => format!("the AS4 endpoint for {name} has no address"),
    })
}

/// The host of an endpoint URL, for describing an access point.
pub fn host(address: &str) -> String {
    reqwest::Url::parse(address)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| address.to_string())
}

/// `{host} ({transport profile})` of the endpoint invoices would go to, else of any.
pub fn access_point(services: &[Service], now: DateTime<Utc>) -> Option<String> {
    let describe = |e: &Endpoint| {
        e.address
            .as_deref()
            .map(|a| format!("{} ({})", host(a), e.transport_profile))
    };
    if let Ok(e) = capability(services, BIS_INVOICE, now) {
        return describe(e);
    }
    services
        .iter()
        .flat_map(|s| s.processes.iter())
        .flat_map(|p| p.endpoints.iter())
        .find_map(describe)
}

/// The verdict for a completed lookup.
pub fn assess(p: &Participant, now: DateTime<Utc>) -> Assessment {
    let who = match &p.name {
        Some(name) => format!("{name} ({})", p.id.id()),
        None => format!("the partner {}", p.id.id()),
    };
    let email = |what: &str| {
        channel(
            "email_pdf_xml",
            format!("Send {what} by e-mail as a PDF with the Peppol BIS Billing 3.0 UBL XML attached, so they can be booked without retyping."),
        )
    };
    if !p.registered {
        return not_registered(p, &who, email("the invoice"));
    }
    // e.g. "their access point ap.example.sk, peppol-transport-as4-v2_0"
    let ap = access_point(&p.services, now)
        .map(|a| {
            format!(
                "their access point {}",
                a.replace(" (", ", ").trim_end_matches(')')
            )
        })
        .unwrap_or_else(|| "their access point".to_string());
    let invoice = capability(&p.services, BIS_INVOICE, now);
    let credit_note = capability(&p.services, BIS_CREDIT_NOTE, now);
    let gaps: Vec<String> = [&invoice, &credit_note]
        .into_iter()
        .filter_map(|c| c.as_ref().err().cloned())
        .collect();
    match (invoice.is_ok(), credit_note.is_ok()) {
        (true, true) => Assessment {
            readiness: Readiness::Ready,
            gaps,
            recommended: channel(
                "peppol",
                format!("{} receives Peppol BIS Billing 3.0 invoices and credit notes: send through your Peppol access point to {}, delivered to {ap}.", capitalized(&who), p.id.uri()),
            ),
            alternatives: Vec::new(),
        },
        (true, false) => Assessment {
            readiness: Readiness::Partial,
            recommended: channel(
                "peppol",
                format!("Send invoices over Peppol to {}, delivered to {ap}. Credit notes cannot go over Peppol yet: {}.", p.id.uri(), gaps.join("; ")),
            ),
            alternatives: vec![
                email("credit notes"),
                channel("peppol_after_registration", format!("Ask {who} to have {ap} publish the BIS Billing 3.0 Credit Note; then send credit notes over Peppol too.")),
            ],
            gaps,
        },
        _ => Assessment {
            readiness: Readiness::Partial,
            recommended: channel(
                "email_pdf_xml",
                format!("{} is registered on Peppol but cannot receive BIS Billing 3.0 invoices now ({}). Send by e-mail as a PDF with the UBL XML attached.", capitalized(&who), gaps.join("; ")),
            ),
            alternatives: vec![channel(
                "peppol_after_registration",
                format!("Ask {who} to have {ap} publish (or renew) the BIS Billing 3.0 Invoice and Credit Note with an active AS4 endpoint; then send over Peppol."),
            )],
            gaps,
        },
    }
}

/// `s` with its first letter in upper case, to start a sentence.
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn not_registered(p: &Participant, who: &str, email: Channel) -> Assessment {
    let mut reason = format!(
        "{} is not registered on Peppol; send the invoice by e-mail as a PDF with the Peppol BIS Billing 3.0 UBL XML attached.",
        capitalized(who)
    );
    match p.id.icd {
        // Slovak parties register by DIČ; a VAT-number miss may still be a DIČ hit.
        "9950" => reason.push_str(&format!(
            " Slovak parties usually register by DIČ: look up 0245:{} too.",
            p.id.value.trim_start_matches("SK")
        )),
        "0245" => reason.push_str(
            " Slovak businesses must be able to receive e-invoices over Peppol from 1 January 2027.",
        ),
        _ => {}
    }
    Assessment {
        readiness: Readiness::NotRegistered,
        gaps: vec![format!("the SML does not know {}", p.id.uri())],
        recommended: channel("email_pdf_xml", reason),
        alternatives: vec![
            channel(
                "onboarding_invitation",
                format!("Invite {who} to register with a Peppol access point (service provider) of their choice, under {} or another identifier they publish on their invoices.", p.id.id()),
            ),
            channel(
                "peppol_after_registration",
                format!("Once {} is registered with BIS Billing 3.0 Invoice and Credit Note, send over Peppol through your access point.", p.id.id()),
            ),
            email,
        ],
    }
}

/// The verdict when the lookup could not complete.
pub fn unknown(reason: &str) -> Assessment {
    Assessment {
        readiness: Readiness::Unknown,
        gaps: vec![reason.to_string()],
        recommended: channel(
            "retry_later",
            format!("The Peppol lookup could not complete ({reason}); this says nothing about the registration. Retry in a minute."),
        ),
        alternatives: vec![channel(
            "email_pdf_xml",
            "If the invoice cannot wait, send it by e-mail as a PDF with the Peppol BIS Billing 3.0 UBL XML attached.",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_friendly() {
        assert_eq!(label(BIS_INVOICE), "Peppol BIS Billing 3.0 Invoice");
        assert_eq!(label(BIS_CREDIT_NOTE), "Peppol BIS Billing 3.0 Credit Note");
        assert_eq!(
            label("busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:mlr:3::2.1"),
            "Peppol Message Level Response 3.0"
        );
        assert_eq!(
            label("busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1"),
            "Peppol Order 3.0"
        );
        assert_eq!(
            label("busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1"),
            "XRechnung 3.0 Invoice"
        );
        assert_eq!(
            label("busdox-docid-qns::urn:x::Thing##urn:y::1"),
            "Thing (urn:y)"
        );
    }
}
