//! The sandbox directory: participants answered locally, in every readiness state, so
//! integrations can be tried without the real network. Identifiers pass their schemes'
//! check digits; the companies and access points are fictitious (`.test` hosts).

use chrono::{DateTime, Duration, TimeZone, Utc};

use super::identifier::ParticipantId;
use super::readiness::{BIS_CREDIT_NOTE, BIS_INVOICE, BIS_PROCESS};
use super::smp::{Endpoint, Process};
use super::{Participant, Service};

/// How a document type is published for a sandbox participant.
#[derive(Clone, Copy)]
enum Publish {
    Active,
    /// Expired on 2025-12-31.
    Expired,
    /// Becomes active 30 days from now.
    Soon,
    /// Listed, but the SMP answers 404 for it.
    NotFound,
    /// Not listed at all.
    Absent,
}

struct Entry {
    id: &'static str,
    name: &'static str,
    country: &'static str,
    access_point: &'static str,
    invoice: Publish,
    credit_note: Publish,
    /// Further document types, published active.
    others: &'static [&'static str],
}

const ORDER: &str = "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1";
const XRECHNUNG: &str = "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0::2.1";
const MLR: &str = "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:mlr:3::2.1";

use Publish::{Absent, Active, Expired, NotFound, Soon};

const fn e(
    id: &'static str,
    name: &'static str,
    country: &'static str,
    access_point: &'static str,
    invoice: Publish,
    credit_note: Publish,
    others: &'static [&'static str],
) -> Entry {
    Entry {
        id,
        name,
        country,
        access_point,
        invoice,
        credit_note,
        others,
    }
}

const AP_SK: &str = "https://ap.sandbox-sk.test/as4";
const AP_SK2: &str = "https://peppol.ucto-sandbox.test/as4";

const PARTICIPANTS: &[Entry] = &[
    // The buyer of the README's example invoice (examples/invoice-sk.xml): ready, so that
    // the example checks out end to end.
    e(
        "9950:SK2120345678",
        "Horehronská stavebná a.s.",
        "SK",
        AP_SK2,
        Active,
        Active,
        &[],
    ),
    e(
        "0245:2120345678",
        "Horehronská stavebná a.s.",
        "SK",
        AP_SK2,
        Active,
        Active,
        &[],
    ),
    // Slovak parties: ready, by DIČ and by IČ DPH.
    e(
        "0245:2022749619",
        "Sandbox Dodávateľ s.r.o.",
        "SK",
        AP_SK,
        Active,
        Active,
        &[MLR],
    ),
    e(
        "9950:SK2022749619",
        "Sandbox Dodávateľ s.r.o.",
        "SK",
        AP_SK,
        Active,
        Active,
        &[MLR],
    ),
    e(
        "0245:2020317068",
        "Sandbox Odberateľ a.s.",
        "SK",
        AP_SK2,
        Active,
        Active,
        &[],
    ),
    // Partial: Invoice only.
    e(
        "0245:1020304758",
        "Sandbox Stavby s.r.o.",
        "SK",
        AP_SK,
        Active,
        Absent,
        &[],
    ),
    // Partial: both endpoints expired.
    e(
        "0245:2021234567",
        "Sandbox Expirovaný s.r.o.",
        "SK",
        AP_SK2,
        Expired,
        Expired,
        &[],
    ),
    // Partial: the Credit Note endpoint starts only in 30 days.
    e(
        "9950:SK2120456789",
        "Sandbox Nový Partner s.r.o.",
        "SK",
        AP_SK,
        Active,
        Soon,
        &[],
    ),
    // Partial: the SMP lists the Credit Note but answers 404 for it.
    e(
        "0245:1027654320",
        "Sandbox Obec Nová Ves",
        "SK",
        AP_SK2,
        Active,
        NotFound,
        &[],
    ),
    // Partial: registered for orders only.
    e(
        "0245:2023456787",
        "Sandbox Objednávky s.r.o.",
        "SK",
        AP_SK,
        Absent,
        Absent,
        &[ORDER],
    ),
    // Foreign parties.
    e(
        "0088:5790000435968",
        "Sandbox Grocery A/S",
        "DK",
        "https://ap.sandbox-dk.test/as4",
        Active,
        Active,
        &[],
    ),
    e(
        "0192:974760673",
        "Sandbox Leverandør AS",
        "NO",
        "https://ap.sandbox-no.test/as4",
        Active,
        Active,
        &[ORDER],
    ),
    e(
        "0208:0403170701",
        "Sandbox Leverancier NV",
        "BE",
        "https://ap.sandbox-be.test/as4",
        Active,
        Active,
        &[],
    ),
    e(
        "9925:BE0403170701",
        "Sandbox Leverancier NV",
        "BE",
        "https://ap.sandbox-be.test/as4",
        Active,
        Active,
        &[],
    ),
    e(
        "9930:DE129273398",
        "Sandbox Lieferant GmbH",
        "DE",
        "https://ap.sandbox-de.test/as4",
        Active,
        Active,
        &[XRECHNUNG],
    ),
    // German public sector: XRechnung only.
    e(
        "0204:991-12345-73",
        "Sandbox Bundesamt für Beispiele",
        "DE",
        "https://ap.sandbox-de.test/as4",
        Absent,
        Absent,
        &[XRECHNUNG],
    ),
    e(
        "0007:5560360793",
        "Sandbox Leverantör AB",
        "SE",
        "https://ap.sandbox-se.test/as4",
        Active,
        Active,
        &[],
    ),
    e(
        "0009:73282932000074",
        "Sandbox Fournisseur SAS",
        "FR",
        "https://ap.sandbox-fr.test/as4",
        Active,
        Active,
        &[],
    ),
    e(
        "0106:17024560",
        "Sandbox Leverancier B.V.",
        "NL",
        "https://ap.sandbox-nl.test/as4",
        Active,
        Active,
        &[],
    ),
];

/// The sandbox SMP named in answers.
pub const SMP_URL: &str = "https://smp.sandbox.invex.test";

fn endpoint(access_point: &str, publish: Publish, now: DateTime<Utc>) -> Endpoint {
    let day = |y, m, d| Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).single();
    let (activation, expiration) = match publish {
        Expired => (day(2023, 1, 1), day(2025, 12, 31)),
        Soon => (Some(now + Duration::days(30)), None),
        _ => (day(2025, 1, 1), None),
    };
    Endpoint {
        transport_profile: super::readiness::AS4.to_string(),
        address: Some(access_point.to_string()),
        activation,
        expiration,
        certificate_present: true,
        description: Some("invex sandbox access point".to_string()),
        technical_contact: Some("mailto:support@sandbox.invex.test".to_string()),
    }
}

fn service(
    document_type: &str,
    access_point: &str,
    publish: Publish,
    now: DateTime<Utc>,
) -> Option<Service> {
    let process = |id: &str| Process {
        process_id: id.to_string(),
        endpoints: vec![endpoint(access_point, publish, now)],
    };
    match publish {
        Absent => None,
        NotFound => Some(Service {
            document_type: document_type.to_string(),
            supported: false,
            processes: Vec::new(),
        }),
        _ => Some(Service {
            document_type: document_type.to_string(),
            supported: true,
            processes: vec![process(if document_type == ORDER {
                "cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:ordering:3"
            } else {
                BIS_PROCESS
            })],
        }),
    }
}

/// The sandbox answer for `id`: a known participant, or not registered.
/// Every sandbox participant: identifier and name.
pub fn participants() -> impl Iterator<Item = (&'static str, &'static str)> {
    PARTICIPANTS.iter().map(|p| (p.id, p.name))
}

pub fn lookup(id: &ParticipantId, now: DateTime<Utc>) -> Participant {
    let key = id.key();
    let Some(entry) = PARTICIPANTS
        .iter()
        .find(|p| p.id.eq_ignore_ascii_case(&key))
    else {
        return Participant::not_registered(id.clone(), "sandbox");
    };
    let services = [
        service(BIS_INVOICE, entry.access_point, entry.invoice, now),
        service(BIS_CREDIT_NOTE, entry.access_point, entry.credit_note, now),
    ]
    .into_iter()
    .flatten()
    .chain(
        entry
            .others
            .iter()
            .filter_map(|d| service(d, entry.access_point, Active, now)),
    )
    .collect();
    Participant {
        id: id.clone(),
        registered: true,
        smp: Some(SMP_URL.to_string()),
        services,
        name: Some(entry.name.to_string()),
        country: Some(entry.country.to_string()),
        source: "sandbox",
        checked_at: crate::clock::now(),
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peppol::readiness::{assess, Readiness};

    #[test]
    fn every_sandbox_identifier_passes_the_local_checks() {
        for p in PARTICIPANTS {
            let id = ParticipantId::parse(p.id).unwrap_or_else(|e| panic!("{}: {e}", p.id));
            assert_eq!(id.id(), p.id);
        }
    }

    #[test]
    fn the_sandbox_covers_every_readiness() {
        let now = Utc::now();
        let readiness = |id: &str| {
            let id = ParticipantId::parse(id).expect("id");
            assess(&lookup(&id, now), now).readiness
        };
        assert_eq!(readiness("0245:2022749619"), Readiness::Ready);
        assert_eq!(readiness("9950:sk2022749619"), Readiness::Ready);
        assert_eq!(readiness("0245:1020304758"), Readiness::Partial);
        assert_eq!(readiness("0245:2021234567"), Readiness::Partial);
        assert_eq!(readiness("9950:SK2120456789"), Readiness::Partial);
        assert_eq!(readiness("0245:1027654320"), Readiness::Partial);
        assert_eq!(readiness("0245:2023456787"), Readiness::Partial);
        assert_eq!(readiness("0204:991-12345-73"), Readiness::Partial);
        assert_eq!(readiness("0088:5790000435968"), Readiness::Ready);
        assert_eq!(readiness("0245:2027000008"), Readiness::NotRegistered);
    }
}
