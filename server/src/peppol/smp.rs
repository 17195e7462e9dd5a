//! The SMP REST client (Peppol SMP 1.x, also OASIS BDXR SMP 1.0 documents):
//! `GET {smp}/{participant}` → ServiceGroup with ServiceMetadataReference hrefs,
//! `GET {href}` → SignedServiceMetadata (processes and endpoints) or a Redirect.
//!
//! Only HTTP 404 on a metadata URL means "document type not supported"; a connection
//! error, a timeout, a 5xx or any other answer means the SMP could not be asked, and the
//! lookup reports that instead of a verdict. The XML signature is not verified here: the
//! answer is used for routing advice, not for sending.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::StatusCode;

use super::identifier::ParticipantId;
use crate::xmltree::{self, Element};

/// Namespaces of SMP documents: Peppol (busdox) and OASIS BDXR SMP 1.0.
const SMP_NS: &[&str] = &[
    "http://busdox.org/serviceMetadata/publishing/1.0/",
    "http://docs.oasis-open.org/bdxr/ns/SMP/2016/05",
];
/// Identifier elements: the busdox identifier namespace, or the BDXR one.
const ID_NS: &[&str] = &[
    "http://busdox.org/transport/identifiers/1.0/",
    "http://docs.oasis-open.org/bdxr/ns/SMP/2016/05",
];
/// WS-Addressing, for `EndpointReference/Address` in Peppol SMP endpoints.
const WSA_NS: &[&str] = &["http://www.w3.org/2005/08/addressing"];

/// Deepest nesting accepted (a SignedServiceMetadata with its signature is about 8 deep).
const MAX_DEPTH: usize = 32;

/// Largest SMP answer read (real ones are a few KB).
const MAX_BODY: usize = 2 * 1024 * 1024;
/// Redirects between SMPs followed for one document type.
const MAX_SMP_REDIRECTS: usize = 3;

/// URL path segment encoding: everything but unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `{scheme}::{value}` identifier as SMPs write it.
fn identifier(element: &Element) -> Option<String> {
    let value = element.text()?;
    Some(match element.attribute("scheme") {
        Some(scheme) if !scheme.is_empty() => format!("{scheme}::{value}"),
        _ => value.to_string(),
    })
}

/// One endpoint of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub transport_profile: String,
    /// `EndpointReference/Address` (Peppol) or `EndpointURI` (BDXR).
    pub address: Option<String>,
    pub activation: Option<DateTime<Utc>>,
    pub expiration: Option<DateTime<Utc>>,
    pub certificate_present: bool,
    pub description: Option<String>,
    pub technical_contact: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    /// `{scheme}::{value}`, e.g. `cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0`.
    pub process_id: String,
    pub endpoints: Vec<Endpoint>,
}

/// The service metadata of one document type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceInformation {
    /// `{scheme}::{value}` document type identifier.
    pub document_type: String,
    pub processes: Vec<Process>,
}

/// What one metadata URL answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Metadata {
    Information(ServiceInformation),
    Redirect { href: String },
}

#[derive(Debug, thiserror::Error)]
pub enum SmpError {
    #[error("the SMP at {url} cannot be reached: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the SMP at {url} did not answer within the time budget")]
    Timeout { url: String },
    #[error("the SMP answered {url} with HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("the SMP answer from {url} is not a usable SMP document: {reason}")]
    Malformed { url: String, reason: String },
    #[error("the SMP redirected {url} more than {MAX_SMP_REDIRECTS} times")]
    TooManyRedirects { url: String },
}

/// An SMP document's element tree (no DTDs, bounded size and depth).
fn parse(bytes: &[u8]) -> Result<Element, String> {
    let limits = invex_engine::document::Limits {
        max_bytes: MAX_BODY,
        max_depth: MAX_DEPTH,
    };
    xmltree::parse(bytes, &limits).map_err(|e| format!("not well-formed XML: {e}"))
}

/// Parse a ServiceGroup: the metadata reference hrefs.
pub fn parse_service_group(bytes: &[u8]) -> Result<Vec<String>, String> {
    let root = parse(bytes)?;
    if root.name != "ServiceGroup" || !SMP_NS.contains(&root.ns.as_str()) {
        return Err(format!("expected a ServiceGroup, found `{}`", root.name));
    }
    let Some(collection) = root.child_in(SMP_NS, "ServiceMetadataReferenceCollection") else {
        return Ok(Vec::new());
    };
    Ok(collection
        .children_in(SMP_NS, "ServiceMetadataReference")
        .filter_map(|r| r.attribute("href"))
        .map(str::to_string)
        .collect())
}

/// Parse a SignedServiceMetadata (or a bare ServiceMetadata).
pub fn parse_metadata(bytes: &[u8]) -> Result<Metadata, String> {
    let root = parse(bytes)?;
    if !SMP_NS.contains(&root.ns.as_str()) {
        return Err(format!("`{}` is not in an SMP namespace", root.name));
    }
    let metadata = match root.name.as_str() {
        "SignedServiceMetadata" => root
            .child_in(SMP_NS, "ServiceMetadata")
            .ok_or("SignedServiceMetadata without ServiceMetadata")?,
        "ServiceMetadata" => &root,
        other => return Err(format!("expected SignedServiceMetadata, found `{other}`")),
    };
    if let Some(redirect) = metadata.child_in(SMP_NS, "Redirect") {
        let href = redirect.attribute("href").ok_or("Redirect without href")?;
        return Ok(Metadata::Redirect {
            href: href.to_string(),
        });
    }
    let info = metadata
        .child_in(SMP_NS, "ServiceInformation")
        .ok_or("ServiceMetadata without ServiceInformation or Redirect")?;
    let document_type = info
        .child_in(ID_NS, "DocumentIdentifier")
        .and_then(identifier)
        .ok_or("ServiceInformation without DocumentIdentifier")?;
    let processes = info
        .child_in(SMP_NS, "ProcessList")
        .map(|list| {
            list.children_in(SMP_NS, "Process")
                .map(parse_process)
                .collect()
        })
        .unwrap_or_default();
    Ok(Metadata::Information(ServiceInformation {
        document_type,
        processes,
    }))
}

fn parse_process(process: &Element) -> Process {
    let endpoints = process
        .child_in(SMP_NS, "ServiceEndpointList")
        .map(|list| {
            list.children_in(SMP_NS, "Endpoint")
                .map(parse_endpoint)
                .collect()
        })
        .unwrap_or_default();
    Process {
        process_id: process
            .child_in(ID_NS, "ProcessIdentifier")
            .and_then(identifier)
            .unwrap_or_default(),
        endpoints,
    }
}

fn parse_endpoint(endpoint: &Element) -> Endpoint {
    let text = |name: &str| {
        endpoint
            .child_in(SMP_NS, name)
            .and_then(Element::text)
            .map(str::to_string)
    };
    let address = endpoint
        .child_in(WSA_NS, "EndpointReference")
        .and_then(|r| r.child_in(WSA_NS, "Address"))
        .and_then(Element::text)
        .map(str::to_string)
        .or_else(|| text("EndpointURI"));
    Endpoint {
        transport_profile: endpoint
            .attribute("transportProfile")
            .unwrap_or_default()
            .to_string(),
        address,
        activation: text("ServiceActivationDate").and_then(|d| parse_date(&d)),
        expiration: text("ServiceExpirationDate").and_then(|d| parse_date(&d)),
        certificate_present: text("Certificate").is_some(),
        description: text("ServiceDescription"),
        technical_contact: text("TechnicalContactUrl"),
    }
}

/// xs:dateTime with or without a zone (no zone = UTC), or a bare xs:date.
pub fn parse_date(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(text) {
        return Some(d.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(d.and_utc());
    }
    let date = text.get(..10).unwrap_or(text);
    NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc())
}

/// The document type id of a metadata href (`.../services/{encoded doctype}`).
pub fn document_type_of(href: &str) -> Option<String> {
    let (_, encoded) = href.rsplit_once("/services/")?;
    percent_decode_str(encoded)
        .decode_utf8()
        .ok()
        .map(|s| s.into_owned())
}

/// `{smp}/{participant}/services/{doctype}`, for an SMP that lists no hrefs of its own.
pub fn metadata_url(smp: &str, id: &ParticipantId, document_type: &str) -> String {
    format!(
        "{}/services/{}",
        service_group_url(smp, id),
        utf8_percent_encode(document_type, SEGMENT)
    )
}

/// The URL to read a ServiceGroup reference from: the href itself when it points at the
/// SMP that listed it, else the standard path on that SMP. SMPs behind proxies sometimes
/// list internal host names, and a lookup must not be steered to arbitrary hosts.
pub fn reference_url(smp: &str, id: &ParticipantId, href: &str) -> Option<String> {
    let origin = |u: &str| {
        reqwest::Url::parse(u).ok().map(|u| {
            (
                u.scheme().to_string(),
                u.host_str().map(str::to_string),
                u.port_or_known_default(),
            )
        })
    };
    match (origin(smp), origin(href)) {
        (Some(a), Some(b)) if a == b => Some(href.to_string()),
        _ => document_type_of(href).map(|d| metadata_url(smp, id, &d)),
    }
}

pub fn service_group_url(smp: &str, id: &ParticipantId) -> String {
    format!(
        "{}/{}",
        smp.trim_end_matches('/'),
        utf8_percent_encode(&id.uri(), SEGMENT)
    )
}

#[derive(Clone)]
pub struct SmpClient {
    http: reqwest::Client,
}

impl SmpClient {
    pub fn new(budget: Duration) -> Result<SmpClient, reqwest::Error> {
        Ok(SmpClient {
            http: reqwest::Client::builder()
                .timeout(budget)
                .connect_timeout(budget.min(Duration::from_secs(2)))
                .redirect(reqwest::redirect::Policy::limited(3))
                .build()?,
        })
    }

    /// GET `url`: Ok(None) on 404, the body on 200, an error otherwise.
    async fn get(&self, url: &str) -> Result<Option<Vec<u8>>, SmpError> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/xml, text/xml")
            .send()
            .await
            .map_err(|e| classify(url, &e))?;
        match response.status() {
            StatusCode::OK => {}
            StatusCode::NOT_FOUND => return Ok(None),
            status => {
                return Err(SmpError::Status {
                    url: url.to_string(),
                    status: status.as_u16(),
                })
            }
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(url, &e))? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_BODY {
                return Err(SmpError::Malformed {
                    url: url.to_string(),
                    reason: format!("larger than {MAX_BODY} bytes"),
                });
            }
        }
        Ok(Some(body))
    }

    /// The ServiceGroup's metadata hrefs; None when the SMP does not know the participant.
    pub async fn service_group(
        &self,
        smp: &str,
        id: &ParticipantId,
    ) -> Result<Option<Vec<String>>, SmpError> {
        let url = service_group_url(smp, id);
        let Some(body) = self.get(&url).await? else {
            return Ok(None);
        };
        parse_service_group(&body)
            .map(Some)
            .map_err(|reason| SmpError::Malformed { url, reason })
    }

    /// The service information at `href`, following SMP Redirects; None on HTTP 404 (the
    /// document type is not supported).
    pub async fn metadata(&self, href: &str) -> Result<Option<ServiceInformation>, SmpError> {
        let mut url = href.to_string();
        for _ in 0..=MAX_SMP_REDIRECTS {
            let Some(body) = self.get(&url).await? else {
                return Ok(None);
            };
            match parse_metadata(&body) {
                Ok(Metadata::Information(info)) => return Ok(Some(info)),
                Ok(Metadata::Redirect { href }) => {
                    if !(href.starts_with("https://") || href.starts_with("http://")) {
                        return Err(SmpError::Malformed {
                            url,
                            reason: format!("Redirect to `{href}`, not an http(s) URL"),
                        });
                    }
                    url = href;
                }
                Err(reason) => return Err(SmpError::Malformed { url, reason }),
            }
        }
        Err(SmpError::TooManyRedirects {
            url: href.to_string(),
        })
    }
}

fn classify(url: &str, e: &reqwest::Error) -> SmpError {
    if e.is_timeout() {
        SmpError::Timeout {
            url: url.to_string(),
        }
    } else {
        let reason = if e.is_connect() {
            "connection refused or no route".to_string()
        } else {
            e.to_string()
        };
        SmpError::Unreachable {
            url: url.to_string(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<smp:ServiceGroup xmlns:smp="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/">
  <id:ParticipantIdentifier scheme="iso6523-actorid-upis">0245:2022749619</id:ParticipantIdentifier>
  <smp:ServiceMetadataReferenceCollection>
    <smp:ServiceMetadataReference href="https://smp.example/iso6523-actorid-upis%3A%3A0245%3A2022749619/services/busdox-docid-qns%3A%3Aurn%3Aoasis%3Anames%3Aspecification%3Aubl%3Aschema%3Axsd%3AInvoice-2%3A%3AInvoice%23%23urn%3Acen.eu%3Aen16931%3A2017%23compliant%23urn%3Afdc%3Apeppol.eu%3A2017%3Apoacc%3Abilling%3A3.0%3A%3A2.1"/>
  </smp:ServiceMetadataReferenceCollection>
</smp:ServiceGroup>"#;

    const SIGNED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:ids="http://busdox.org/transport/identifiers/1.0/" xmlns:wsa="http://www.w3.org/2005/08/addressing">
  <ServiceMetadata>
    <ServiceInformation>
      <ids:ParticipantIdentifier scheme="iso6523-actorid-upis">0245:2022749619</ids:ParticipantIdentifier>
      <ids:DocumentIdentifier scheme="busdox-docid-qns">urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1</ids:DocumentIdentifier>
      <ProcessList>
        <Process>
          <ids:ProcessIdentifier scheme="cenbii-procid-ubl">urn:fdc:peppol.eu:2017:poacc:billing:01:1.0</ids:ProcessIdentifier>
          <ServiceEndpointList>
            <Endpoint transportProfile="peppol-transport-as4-v2_0">
              <wsa:EndpointReference><wsa:Address>https://ap.example.sk/as4</wsa:Address></wsa:EndpointReference>
              <RequireBusinessLevelSignature>false</RequireBusinessLevelSignature>
              <ServiceActivationDate>2025-01-01T00:00:00Z</ServiceActivationDate>
              <ServiceExpirationDate>2030-01-01</ServiceExpirationDate>
              <Certificate>MIIBszCCAVmgAwIBAgIUQ</Certificate>
              <ServiceDescription>Sandbox AP</ServiceDescription>
              <TechnicalContactUrl>mailto:ap@example.sk</TechnicalContactUrl>
            </Endpoint>
          </ServiceEndpointList>
        </Process>
      </ProcessList>
    </ServiceInformation>
  </ServiceMetadata>
  <Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo/></Signature>
</SignedServiceMetadata>"#;

    #[test]
    fn service_groups_list_their_references() {
        let hrefs = parse_service_group(GROUP.as_bytes()).expect("group");
        assert_eq!(hrefs.len(), 1);
        assert_eq!(
            document_type_of(&hrefs[0]).as_deref(),
            Some(super::super::readiness::BIS_INVOICE)
        );
        assert!(parse_service_group(SIGNED.as_bytes()).is_err());
    }

    #[test]
    fn signed_metadata_gives_processes_and_endpoints() {
        let Ok(Metadata::Information(info)) = parse_metadata(SIGNED.as_bytes()) else {
            panic!("not parsed");
        };
        assert_eq!(info.document_type, super::super::readiness::BIS_INVOICE);
        assert_eq!(
            info.processes[0].process_id,
            "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
        );
        let e = &info.processes[0].endpoints[0];
        assert_eq!(e.transport_profile, "peppol-transport-as4-v2_0");
        assert_eq!(e.address.as_deref(), Some("https://ap.example.sk/as4"));
        assert!(e.certificate_present);
        assert_eq!(e.activation, parse_date("2025-01-01T00:00:00+00:00"));
        assert_eq!(
            e.expiration.map(|d| d.to_rfc3339()),
            Some("2030-01-01T00:00:00+00:00".to_string())
        );
        assert_eq!(e.technical_contact.as_deref(), Some("mailto:ap@example.sk"));
    }

    #[test]
    fn redirects_and_foreign_documents() {
        let redirect = r#"<SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/"><ServiceMetadata><Redirect href="https://other.example/x"><CertificateUID>CN=x</CertificateUID></Redirect></ServiceMetadata></SignedServiceMetadata>"#;
        assert_eq!(
            parse_metadata(redirect.as_bytes()),
            Ok(Metadata::Redirect {
                href: "https://other.example/x".into()
            })
        );
        assert!(parse_metadata(b"<html><body>Bad gateway</body></html>").is_err());
    }

    #[test]
    fn references_to_other_hosts_are_read_from_the_smp_itself() {
        let id = ParticipantId::parse("0245:2022749619").expect("id");
        let smp = "https://smp.example";
        let own = "https://smp.example:443/iso6523-actorid-upis%3A%3A0245%3A2022749619/services/busdox-docid-qns%3A%3Ax";
        assert_eq!(reference_url(smp, &id, own).as_deref(), Some(own));
        assert_eq!(
            reference_url(smp, &id, "http://10.0.0.7:8080/smp/iso6523-actorid-upis%3A%3A0245%3A2022749619/services/busdox-docid-qns%3A%3Ax").as_deref(),
            Some("https://smp.example/iso6523-actorid-upis%3A%3A0245%3A2022749619/services/busdox-docid-qns%3A%3Ax")
        );
        assert_eq!(reference_url(smp, &id, "http://10.0.0.7/nothing"), None);
    }

    #[test]
    fn urls_encode_the_identifiers() {
        let id = ParticipantId::parse("0245:2022749619").expect("id");
        assert_eq!(
            service_group_url("https://smp.example/", &id),
            "https://smp.example/iso6523-actorid-upis%3A%3A0245%3A2022749619"
        );
        assert!(
            metadata_url("https://smp.example", &id, "busdox-docid-qns::a#b")
                .ends_with("/services/busdox-docid-qns%3A%3Aa%23b")
        );
    }
}
