//! Peppol participant lookup: the sandbox directory, and production discovery against a
//! local DNS server (hickory, serving U-NAPTR records), a local SMP speaking the SMP REST
//! wire format (ServiceGroup, SignedServiceMetadata, Redirect) and a local Peppol Directory.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use hickory_proto::rr::rdata::{NAPTR, SOA};
use hickory_proto::rr::{LowerName, Name, RData, Record};
use hickory_server::authority::{Catalog, ZoneType};
use hickory_server::store::in_memory::InMemoryAuthority;
use hickory_server::ServerFuture;
use invex_server::peppol::identifier::ParticipantId;
use invex_server::peppol::naptr::dns_name;
use invex_server::peppol::readiness::{BIS_CREDIT_NOTE, BIS_INVOICE};
use reqwest::Method;
use serde_json::{json, Value};

const ZONE: &str = "sml.invex.test";

// ---------------------------------------------------------------------------
// sandbox
// ---------------------------------------------------------------------------

#[tokio::test]
async fn the_sandbox_answers_v1_lookups_without_a_key() {
    let s = TestServer::start().await;
    let r = s
        .client
        .get(s.url("/v1/peppol/lookup?icd=0245&id=2022749619"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-environment"], "sandbox");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["registered"], true);
    assert_eq!(body["participant_id"], "0245:2022749619");
    assert_eq!(
        body["profiles"],
        json!(["urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"])
    );
    let documents = body["document_types"].as_array().unwrap();
    assert!(documents.contains(&json!(BIS_INVOICE)), "{body}");
    assert!(documents.contains(&json!(BIS_CREDIT_NOTE)), "{body}");
    assert_eq!(
        body["delivery_partner"],
        "ap.sandbox-sk.test (peppol-transport-as4-v2_0)"
    );
    assert_eq!(body["source"], "sandbox");
    assert_eq!(body["environment"], "sandbox");
    assert_eq!(body["cached"], false);
    assert!(body["checked_at"].as_str().unwrap().ends_with('Z'));

    // The VAT-number scheme, case-insensitive.
    let body: Value = s
        .client
        .get(s.url("/v1/peppol/lookup?icd=9950&id=sk2022749619"))
        .header("X-API-Key", "sandbox")
        .value()
        .await;
    assert_eq!(body["registered"], true);
    assert_eq!(body["participant_id"], "9950:SK2022749619");

    // A valid identifier nobody registered.
    let body: Value = s
        .client
        .get(s.url("/v1/peppol/lookup?icd=0245&id=2027000008"))
        .value()
        .await;
    assert_eq!(body["registered"], false);
    assert_eq!(body["profiles"], json!([]));
    assert!(body["delivery_partner"].is_null());
    // Not only "not found": readiness and the channel to use instead, as /api answers.
    assert_eq!(body["readiness"], "not_registered");
    assert_eq!(body["recommended_channel"]["channel"], "email_pdf_xml");
    assert!(body["recommended_channel"]["reason"].is_string(), "{body}");
    let api: Value = s
        .api(Method::GET, "/api/peppol-lookup/0245:2027000008", BOOTSTRAP)
        .value()
        .await;
    assert_eq!(body["recommended_channel"], api["recommended_channel"]);
    assert_eq!(body["alternative_channels"], api["alternative_channels"]);
}

#[tokio::test]
async fn identifiers_are_checked_before_any_lookup() {
    let s = TestServer::start().await;
    let v1 = |query: &str| {
        s.client
            .get(s.url(&format!("/v1/peppol/lookup?{query}")))
            .send()
    };
    let cases = [
        ("icd=0245&id=202274961", "id", "10 digits"),
        ("icd=0001&id=2022749619", "icd", "Peppol code list"),
        ("icd=245&id=2022749619", "icd", "four digits"),
        ("icd=9950&id=SK2020123456", "id", "check digit"),
        ("icd=0088&id=5790000435969", "id", "GS1"),
        ("icd=0192&id=974760674", "id", "mod 11"),
        ("icd=0208&id=0403170702", "id", "mod 97"),
        ("icd=0007&id=5560360794", "id", "Luhn"),
        ("icd=0204&id=991-12345-74", "id", "MOD 97-10"),
        ("icd=9958&id=991-12345-73", "icd", "removed"),
        ("icd=0245", "id", "missing"),
        ("id=2022749619", "icd", "missing"),
    ];
    for (query, field, says) in cases {
        let p = problem(v1(query).await.unwrap(), 400).await;
        assert!(
            p["type"]
                .as_str()
                .unwrap()
                .ends_with("#invalid-participant-id"),
            "{query}: {p}"
        );
        assert_eq!(p["field"], field, "{query}: {p}");
        assert!(p["detail"].as_str().unwrap().contains(says), "{query}: {p}");
    }
    let p = problem(
        s.api(
            Method::GET,
            "/api/peppol-lookup/busdox-actorid-upis::0245:2022749619",
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap(),
        400,
    )
    .await;
    assert_eq!(p["field"], "scheme");
    let p = problem(
        s.api(Method::GET, "/api/peppol-lookup/2022749619", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    assert!(p["detail"].as_str().unwrap().contains("<icd>:<identifier>"));
}

async fn api(s: &TestServer, participant: &str) -> Value {
    let r = s
        .api(
            Method::GET,
            &format!("/api/peppol-lookup/{participant}"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{participant}");
    r.json().await.unwrap()
}

fn channels(body: &Value) -> Vec<String> {
    body["alternative_channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["channel"].as_str().unwrap().to_string())
        .collect()
}

fn document<'a>(body: &'a Value, document_type: &str) -> &'a Value {
    body["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["document_type_id"] == document_type)
        .unwrap_or_else(|| panic!("no {document_type} in {body}"))
}

#[tokio::test]
async fn the_sandbox_explains_readiness_and_channels() {
    let s = TestServer::start().await;
    // Ready, in both identifier forms.
    for participant in ["0245:2022749619", "iso6523-actorid-upis::0245:2022749619"] {
        let body = api(&s, participant).await;
        assert_eq!(body["participant_id"], "0245:2022749619");
        assert_eq!(body["icd_scheme"], "SK:DIC");
        assert_eq!(body["registered"], true);
        assert_eq!(body["name"], "Sandbox Dodávateľ s.r.o.");
        assert_eq!(body["readiness"], "ready");
        assert_eq!(body["recommended_channel"]["channel"], "peppol");
        assert_eq!(body["environment"], "sandbox");
        let invoice = document(&body, BIS_INVOICE);
        assert_eq!(invoice["label"], "Peppol BIS Billing 3.0 Invoice");
        assert_eq!(invoice["status"], "active");
        assert_eq!(invoice["transport_profile"], "peppol-transport-as4-v2_0");
        assert_eq!(invoice["endpoint"], "https://ap.sandbox-sk.test/as4");
        assert_eq!(invoice["certificate_present"], true);
        assert_eq!(invoice["activation_date"], "2025-01-01T00:00:00Z");
        assert_eq!(
            document(&body, BIS_CREDIT_NOTE)["label"],
            "Peppol BIS Billing 3.0 Credit Note"
        );
    }
    // Invoice only: Peppol for invoices, e-mail for credit notes.
    let body = api(&s, "0245:1020304758").await;
    assert_eq!(body["readiness"], "partial");
    assert_eq!(body["recommended_channel"]["channel"], "peppol");
    assert!(channels(&body).contains(&"email_pdf_xml".to_string()));
    assert!(body["gaps"][0].as_str().unwrap().contains("Credit Note"));
    // Expired endpoints: e-mail now, Peppol once renewed.
    let body = api(&s, "0245:2021234567").await;
    assert_eq!(body["readiness"], "partial");
    assert_eq!(body["recommended_channel"]["channel"], "email_pdf_xml");
    assert_eq!(channels(&body), vec!["peppol_after_registration"]);
    assert_eq!(document(&body, BIS_INVOICE)["status"], "expired");
    assert_eq!(
        document(&body, BIS_INVOICE)["expiration_date"],
        "2025-12-31T00:00:00Z"
    );
    assert!(body["gaps"][0]
        .as_str()
        .unwrap()
        .contains("expired on 2025-12-31"));
    // Listed but 404: not supported.
    let body = api(&s, "0245:1027654320").await;
    assert_eq!(body["readiness"], "partial");
    assert_eq!(document(&body, BIS_CREDIT_NOTE)["status"], "not_supported");
    // Not registered: never only "not found".
    let body = api(&s, "9950:SK2027000008").await;
    assert_eq!(body["registered"], false);
    assert_eq!(body["readiness"], "not_registered");
    assert_eq!(body["recommended_channel"]["channel"], "email_pdf_xml");
    let reason = body["recommended_channel"]["reason"].as_str().unwrap();
    assert!(reason.contains("0245:2027000008"), "{reason}");
    assert_eq!(
        channels(&body),
        vec![
            "onboarding_invitation",
            "peppol_after_registration",
            "email_pdf_xml"
        ]
    );
    // The /api family needs a key, even in the sandbox.
    problem(
        s.client
            .get(s.url("/api/peppol-lookup/0245:2022749619"))
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    // Both routes and their answers are described in the OpenAPI document.
    let doc: Value = s.client.get(s.url("/openapi.json")).value().await;
    let v1_params = doc["paths"]["/v1/peppol/lookup"]["get"]["parameters"]
        .as_array()
        .unwrap();
    assert!(
        v1_params.iter().all(|p| p["required"] == true),
        "{v1_params:?}"
    );
    let api_op = &doc["paths"]["/api/peppol-lookup/{participantId}"]["get"];
    assert_eq!(api_op["parameters"][0]["name"], "participantId");
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "PeppolLookupResult",
        "PeppolParticipant",
        "SupportedDocument",
        "Channel",
        "Readiness",
    ] {
        assert!(schemas[schema].is_object(), "{schema} not described");
    }
    assert!(schemas["PeppolParticipant"]["properties"]["recommended_channel"].is_object());
    // The sandbox mirrors /v1 under /v2 (beta).
    let r = s
        .client
        .get(s.url("/v2/peppol/lookup?icd=0245&id=2022749619"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-api-stability"], "beta");
}

// ---------------------------------------------------------------------------
// production: local DNS, SMP and Directory
// ---------------------------------------------------------------------------

/// A DNS server for `zone` with `Meta:SMP` U-NAPTR records (name → SMP URL); other names in
/// the zone answer NXDOMAIN, names outside it REFUSED.
async fn dns_server(zone: &str, records: &[(String, String)]) -> SocketAddr {
    let origin = Name::from_str(&format!("{zone}.")).unwrap();
    let mut authority = InMemoryAuthority::empty(origin.clone(), ZoneType::Primary, false);
    let soa = SOA::new(
        Name::from_str(&format!("ns.{zone}.")).unwrap(),
        Name::from_str(&format!("hostmaster.{zone}.")).unwrap(),
        1,
        3600,
        600,
        86400,
        60,
    );
    assert!(authority.upsert_mut(Record::from_rdata(origin.clone(), 60, RData::SOA(soa)), 1));
    for (name, smp) in records {
        let naptr = NAPTR::new(
            100,
            10,
            b"U".to_vec().into_boxed_slice(),
            b"Meta:SMP".to_vec().into_boxed_slice(),
            format!("!.*!{smp}!").into_bytes().into_boxed_slice(),
            Name::root(),
        );
        let name = Name::from_str(&format!("{name}.")).unwrap();
        assert!(authority.upsert_mut(Record::from_rdata(name, 60, RData::NAPTR(naptr)), 1));
    }
    let mut catalog = Catalog::new();
    catalog.upsert(LowerName::new(&origin), vec![Arc::new(authority)]);
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = udp.local_addr().unwrap();
    let tcp = tokio::net::TcpListener::bind(addr).await.unwrap();
    let mut server = ServerFuture::new(catalog);
    server.register_socket(udp);
    server.register_listener(tcp, Duration::from_secs(5));
    tokio::spawn(async move {
        let _ = server.block_until_done().await;
    });
    addr
}

/// How the stub SMP publishes a document type.
#[derive(Clone)]
enum Publish {
    /// SignedServiceMetadata with one AS4 endpoint: (activation, expiration).
    Endpoint(&'static str, Option<&'static str>),
    /// HTTP 404 for the metadata.
    NotFound,
    /// A Redirect to another URL of the same SMP, which answers with an active endpoint.
    Redirect,
}

#[derive(Clone)]
enum Group {
    Documents(Vec<(&'static str, Publish)>),
    /// The SMP fails with HTTP 500.
    Broken,
    /// The SMP answers only after 5 s.
    Slow,
    /// Like `Documents`, but the hrefs name an internal host (an SMP behind a proxy).
    InternalHrefs(Vec<(&'static str, Publish)>),
}

#[derive(Clone)]
struct Smp {
    base: String,
    participants: Arc<HashMap<String, Group>>,
    group_requests: Arc<AtomicUsize>,
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn xml(body: String) -> Response {
    ([("content-type", "text/xml")], body).into_response()
}

fn service_group(base: &str, participant: &str, documents: &[(&str, Publish)]) -> String {
    let refs: String = documents
        .iter()
        .map(|(doc, _)| {
            format!(
                "<smp:ServiceMetadataReference href=\"{}/{}/services/{}\"/>",
                base,
                encode(participant),
                encode(doc)
            )
        })
        .collect();
    let (scheme, value) = participant.split_once("::").unwrap();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<smp:ServiceGroup xmlns:smp="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:id="http://busdox.org/transport/identifiers/1.0/" xmlns:wsa="http://www.w3.org/2005/08/addressing">
  <id:ParticipantIdentifier scheme="{scheme}">{value}</id:ParticipantIdentifier>
  <smp:ServiceMetadataReferenceCollection>{refs}</smp:ServiceMetadataReferenceCollection>
</smp:ServiceGroup>"#
    )
}

fn signed_metadata(
    participant: &str,
    document: &str,
    activation: &str,
    expiration: Option<&str>,
) -> String {
    let (pscheme, pvalue) = participant.split_once("::").unwrap();
    let (dscheme, dvalue) = document.split_once("::").unwrap();
    let expiration = expiration
        .map(|e| format!("<ServiceExpirationDate>{e}</ServiceExpirationDate>"))
        .unwrap_or_default();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/" xmlns:ids="http://busdox.org/transport/identifiers/1.0/" xmlns:wsa="http://www.w3.org/2005/08/addressing">
  <ServiceMetadata>
    <ServiceInformation>
      <ids:ParticipantIdentifier scheme="{pscheme}">{pvalue}</ids:ParticipantIdentifier>
      <ids:DocumentIdentifier scheme="{dscheme}">{dvalue}</ids:DocumentIdentifier>
      <ProcessList>
        <Process>
          <ids:ProcessIdentifier scheme="cenbii-procid-ubl">urn:fdc:peppol.eu:2017:poacc:billing:01:1.0</ids:ProcessIdentifier>
          <ServiceEndpointList>
            <Endpoint transportProfile="peppol-transport-as4-v2_0">
              <wsa:EndpointReference><wsa:Address>https://ap.local-test.sk/as4</wsa:Address></wsa:EndpointReference>
              <RequireBusinessLevelSignature>false</RequireBusinessLevelSignature>
              <ServiceActivationDate>{activation}</ServiceActivationDate>
              {expiration}
              <Certificate>MIIDTESTCERTIFICATE</Certificate>
              <ServiceDescription>Local test AP</ServiceDescription>
              <TechnicalContactUrl>https://ap.local-test.sk/support</TechnicalContactUrl>
            </Endpoint>
          </ServiceEndpointList>
        </Process>
      </ProcessList>
    </ServiceInformation>
  </ServiceMetadata>
  <Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo/><SignatureValue>AA==</SignatureValue></Signature>
</SignedServiceMetadata>"#
    )
}

async fn smp_group(State(smp): State<Smp>, Path(participant): Path<String>) -> Response {
    smp.group_requests.fetch_add(1, Ordering::SeqCst);
    match smp.participants.get(&participant.to_ascii_lowercase()) {
        Some(Group::Documents(docs)) => xml(service_group(&smp.base, &participant, docs)),
        Some(Group::InternalHrefs(docs)) => xml(service_group(
            "http://smp-internal.invalid:8080/smp",
            &participant,
            docs,
        )),
        Some(Group::Slow) => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            StatusCode::NOT_FOUND.into_response()
        }
        Some(Group::Broken) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "SMP database down").into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn smp_metadata(
    State(smp): State<Smp>,
    Path((participant, document)): Path<(String, String)>,
) -> Response {
    let docs = match smp.participants.get(&participant.to_ascii_lowercase()) {
        Some(Group::Documents(docs) | Group::InternalHrefs(docs)) => docs,
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    match docs.iter().find(|(d, _)| *d == document).map(|(_, p)| p) {
        Some(Publish::Endpoint(activation, expiration)) => xml(signed_metadata(
            &participant,
            &document,
            activation,
            *expiration,
        )),
        Some(Publish::Redirect) => xml(format!(
            r#"<SignedServiceMetadata xmlns="http://busdox.org/serviceMetadata/publishing/1.0/"><ServiceMetadata><Redirect href="{}/moved/{}/services/{}"><CertificateUID>CN=SMP moved</CertificateUID></Redirect></ServiceMetadata></SignedServiceMetadata>"#,
            smp.base,
            encode(&participant),
            encode(&document)
        )),
        Some(Publish::NotFound) | None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn smp_moved(Path((participant, document)): Path<(String, String)>) -> Response {
    xml(signed_metadata(
        &participant,
        &document,
        "2025-06-01T00:00:00Z",
        None,
    ))
}

async fn start_smp(participants: HashMap<String, Group>) -> Smp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let smp = Smp {
        base: format!("http://{}", listener.local_addr().unwrap()),
        participants: Arc::new(participants),
        group_requests: Arc::new(AtomicUsize::new(0)),
    };
    let app = Router::new()
        .route("/{participant}", get(smp_group))
        .route("/{participant}/services/{document}", get(smp_metadata))
        .route("/moved/{participant}/services/{document}", get(smp_moved))
        .with_state(smp.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    smp
}

/// A Peppol Directory knowing the names of `names` (participant value → name).
async fn start_directory(names: HashMap<String, String>) -> String {
    let names = Arc::new(names);
    let app = Router::new().route(
        "/search/1.0/json",
        get(move |Query(q): Query<HashMap<String, String>>| {
            let names = names.clone();
            async move {
                let participant = q.get("participant").cloned().unwrap_or_default();
                let value = participant
                    .split_once("::")
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_default();
                let matches: Vec<Value> = names
                    .get(&value)
                    .map(|name| {
                        vec![json!({
                            "participantID": {"scheme": "iso6523-actorid-upis", "value": value},
                            "docTypes": [{"scheme": "busdox-docid-qns", "value": BIS_INVOICE}],
                            "entities": [{"name": [{"name": name, "language": "sk"}], "countryCode": "SK",
                                          "identifiers": [], "regDate": "2026-01-05"}]
                        })]
                    })
                    .unwrap_or_default();
                Json(json!({"version": "1.0", "total-result-count": matches.len(),
                            "used-result-count": matches.len(), "matches": matches}))
            }
        }),
    );
    crate::support::serve_stub(app).await
}

/// A UDP address where no DNS server answers (bound, then released).
async fn closed_port() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

fn uri(id: &str) -> String {
    format!("iso6523-actorid-upis::{id}")
}

const READY: &str = "0245:2022749619";
const INVOICE_ONLY: &str = "0245:1020304758";
const CREDIT_NOTE_404: &str = "0245:2020317068";
const REDIRECTED: &str = "9950:SK2022749619";
const EXPIRED: &str = "0245:2021234567";
const SMP_DOWN: &str = "0245:2023456787";
const SMP_BROKEN: &str = "0088:5790000435968";
const SMP_SLOW: &str = "0192:974760673";
const BEHIND_PROXY: &str = "0208:0403170701";
const UNKNOWN: &str = "0245:2027000008";

struct Network {
    dns: SocketAddr,
    smp: Smp,
    directory: String,
}

async fn network() -> Network {
    let active = || Publish::Endpoint("2025-01-01T00:00:00Z", Some("2099-12-31T23:59:59Z"));
    let mut participants = HashMap::new();
    participants.insert(
        uri(READY),
        Group::Documents(vec![(BIS_INVOICE, active()), (BIS_CREDIT_NOTE, active())]),
    );
    participants.insert(
        uri(INVOICE_ONLY),
        Group::Documents(vec![(BIS_INVOICE, active())]),
    );
    participants.insert(
        uri(CREDIT_NOTE_404),
        Group::Documents(vec![
            (BIS_INVOICE, active()),
            (BIS_CREDIT_NOTE, Publish::NotFound),
        ]),
    );
    participants.insert(
        uri(REDIRECTED).to_ascii_lowercase(),
        Group::Documents(vec![
            (BIS_INVOICE, Publish::Redirect),
            (BIS_CREDIT_NOTE, active()),
        ]),
    );
    participants.insert(
        uri(EXPIRED),
        Group::Documents(vec![
            (
                BIS_INVOICE,
                Publish::Endpoint("2023-01-01", Some("2025-12-31")),
            ),
            (
                BIS_CREDIT_NOTE,
                Publish::Endpoint("2023-01-01", Some("2025-12-31")),
            ),
        ]),
    );
    participants.insert(uri(SMP_BROKEN), Group::Broken);
    participants.insert(uri(SMP_SLOW), Group::Slow);
    participants.insert(
        uri(BEHIND_PROXY),
        Group::InternalHrefs(vec![(BIS_INVOICE, active()), (BIS_CREDIT_NOTE, active())]),
    );
    let smp = start_smp(participants).await;
    let down = crate::support::dead_endpoint().await;
    let name = |id: &str| dns_name(&ParticipantId::parse(id).unwrap(), ZONE);
    let mut records: Vec<(String, String)> = [
        READY,
        INVOICE_ONLY,
        CREDIT_NOTE_404,
        REDIRECTED,
        EXPIRED,
        SMP_BROKEN,
        SMP_SLOW,
        BEHIND_PROXY,
    ]
    .iter()
    .map(|id| (name(id), format!("{}/", smp.base)))
    .collect();
    records.push((name(SMP_DOWN), down));
    let dns = dns_server(ZONE, &records).await;
    let directory = start_directory(HashMap::from([(
        READY.to_string(),
        "Firma Pripravená s.r.o.".to_string(),
    )]))
    .await;
    Network {
        dns,
        smp,
        directory,
    }
}

async fn production(zone: &str, dns: SocketAddr, directory: &str) -> TestServer {
    let zone = zone.to_string();
    let directory = directory.to_string();
    TestServer::with(move |c| {
        c.mode = invex_server::Mode::Production;
        c.register_timeout_ms = 1500;
        c.peppol.sml_zone = zone;
        c.peppol.dns_server = Some(dns);
        c.peppol.directory_url = directory;
        c.peppol.cache_ttl_secs = 300;
    })
    .await
}

async fn v1(s: &TestServer, id: &str) -> reqwest::Response {
    let (icd, value) = id.split_once(':').unwrap();
    s.v1(
        Method::GET,
        &format!("/v1/peppol/lookup?icd={icd}&id={value}"),
        BOOTSTRAP,
    )
    .send()
    .await
    .unwrap()
}

#[tokio::test]
async fn production_v1_lookups_discover_through_dns_and_the_smp() {
    let net = network().await;
    let s = production(ZONE, net.dns, &net.directory).await;

    let r = v1(&s, READY).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["registered"], true);
    assert_eq!(body["participant_id"], READY);
    assert_eq!(
        body["profiles"],
        json!(["urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"])
    );
    assert_eq!(
        body["document_types"],
        json!([BIS_INVOICE, BIS_CREDIT_NOTE])
    );
    assert_eq!(
        body["delivery_partner"],
        "ap.local-test.sk (peppol-transport-as4-v2_0)"
    );
    assert_eq!(body["source"], "SML/SMP");
    assert_eq!(body["environment"], "production");
    assert_eq!(body["cached"], false);
    // The second answer comes from the cache, without asking the SMP again.
    let asked = net.smp.group_requests.load(Ordering::SeqCst);
    let again: Value = v1(&s, READY).await.json().await.unwrap();
    assert_eq!(again["cached"], true);
    assert_eq!(again["checked_at"], body["checked_at"]);
    assert_eq!(net.smp.group_requests.load(Ordering::SeqCst), asked);

    // NXDOMAIN: not registered (a verdict, 200).
    let body: Value = v1(&s, UNKNOWN).await.json().await.unwrap();
    assert_eq!(body["registered"], false);
    assert_eq!(body["document_types"], json!([]));

    // A 404 for the CreditNote metadata: registered, CreditNote not among the documents.
    let body: Value = v1(&s, CREDIT_NOTE_404).await.json().await.unwrap();
    assert_eq!(body["registered"], true);
    assert_eq!(body["document_types"], json!([BIS_INVOICE]));

    // The SMP is down, or failing: 503, never "not registered".
    for id in [SMP_DOWN, SMP_BROKEN] {
        let r = v1(&s, id).await;
        assert_eq!(r.headers()["retry-after"], "60", "{id}");
        let p = problem(r, 503).await;
        assert!(
            p["type"].as_str().unwrap().ends_with("#lookup-unavailable"),
            "{p}"
        );
        assert_eq!(p["stage"], "smp", "{p}");
        assert_eq!(p["participant_id"], id);
    }
    let p = problem(v1(&s, SMP_BROKEN).await, 503).await;
    assert!(p["detail"].as_str().unwrap().contains("HTTP 500"), "{p}");
    // An SMP slower than the register budget (1.5 s): an outage, and not held for 5 s.
    let started = std::time::Instant::now();
    let p = problem(v1(&s, SMP_SLOW).await, 503).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(p["detail"].as_str().unwrap().contains("1500 ms"), "{p}");
    // Outages are not cached: the SMP is asked again.
    let asked = net.smp.group_requests.load(Ordering::SeqCst);
    problem(v1(&s, SMP_BROKEN).await, 503).await;
    assert_eq!(net.smp.group_requests.load(Ordering::SeqCst), asked + 1);

    // Production needs a real key on /v1 too.
    problem(
        s.client
            .get(s.url("/v1/peppol/lookup?icd=0245&id=2022749619"))
            .header("X-API-Key", "sandbox")
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
}

#[tokio::test]
async fn production_api_lookups_assess_readiness() {
    let net = network().await;
    let s = production(ZONE, net.dns, &net.directory).await;

    let body = api(&s, READY).await;
    assert_eq!(body["readiness"], "ready");
    assert_eq!(body["registered"], true);
    assert_eq!(body["name"], "Firma Pripravená s.r.o.");
    assert_eq!(body["country"], "SK");
    assert_eq!(body["smp_url"], net.smp.base);
    assert_eq!(body["recommended_channel"]["channel"], "peppol");
    assert_eq!(body["environment"], "production");
    let invoice = document(&body, BIS_INVOICE);
    assert_eq!(invoice["label"], "Peppol BIS Billing 3.0 Invoice");
    assert_eq!(invoice["status"], "active");
    assert_eq!(invoice["endpoint"], "https://ap.local-test.sk/as4");
    assert_eq!(
        invoice["process_id"],
        "cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"
    );
    assert_eq!(invoice["activation_date"], "2025-01-01T00:00:00Z");
    assert_eq!(invoice["expiration_date"], "2099-12-31T23:59:59Z");
    assert_eq!(invoice["certificate_present"], true);

    // Invoice only.
    let body = api(&s, INVOICE_ONLY).await;
    assert_eq!(body["readiness"], "partial");
    assert!(body["name"].is_null());
    assert_eq!(body["recommended_channel"]["channel"], "peppol");
    assert!(channels(&body).contains(&"email_pdf_xml".to_string()));
    assert!(body["gaps"][0].as_str().unwrap().contains("not published"));

    // CreditNote answers 404: not supported, partial.
    let body = api(&s, CREDIT_NOTE_404).await;
    assert_eq!(body["readiness"], "partial");
    assert_eq!(document(&body, BIS_CREDIT_NOTE)["status"], "not_supported");
    assert!(body["gaps"][0].as_str().unwrap().contains("404"), "{body}");

    // A Redirect to another SMP location is followed.
    let body = api(&s, &uri(REDIRECTED)).await;
    assert_eq!(body["readiness"], "ready", "{body}");
    assert_eq!(
        document(&body, BIS_INVOICE)["activation_date"],
        "2025-06-01T00:00:00Z"
    );

    // Hrefs naming an internal host are read from the SMP the SML named instead.
    let body = api(&s, BEHIND_PROXY).await;
    assert_eq!(body["readiness"], "ready", "{body}");

    // Expired endpoints.
    let body = api(&s, EXPIRED).await;
    assert_eq!(body["readiness"], "partial");
    assert_eq!(document(&body, BIS_INVOICE)["status"], "expired");
    assert_eq!(body["recommended_channel"]["channel"], "email_pdf_xml");
    assert_eq!(channels(&body), vec!["peppol_after_registration"]);

    // Not registered: how to reach them instead.
    let body = api(&s, UNKNOWN).await;
    assert_eq!(body["readiness"], "not_registered");
    assert_eq!(body["registered"], false);
    assert_eq!(body["recommended_channel"]["channel"], "email_pdf_xml");
    assert!(channels(&body).contains(&"onboarding_invitation".to_string()));

    // SMP down: unknown, retry later; registration not claimed either way.
    for id in [SMP_DOWN, SMP_BROKEN] {
        let body = api(&s, id).await;
        assert_eq!(body["readiness"], "unknown", "{body}");
        assert!(body["registered"].is_null());
        assert_eq!(body["recommended_channel"]["channel"], "retry_later");
        assert_eq!(body["source"], "unavailable");
        assert_eq!(body["cached"], false);
    }
}

#[tokio::test]
async fn dns_failures_are_outages_not_verdicts() {
    let net = network().await;
    // The DNS server refuses names outside its zone.
    let refused = production("elsewhere.invex.test", net.dns, &net.directory).await;
    // Nothing answers DNS at all.
    let silent = production(ZONE, closed_port().await, &net.directory).await;
    for s in [&refused, &silent] {
        let r = v1(s, READY).await;
        assert_eq!(r.headers()["retry-after"], "30");
        let p = problem(r, 503).await;
        assert!(
            p["type"].as_str().unwrap().ends_with("#lookup-unavailable"),
            "{p}"
        );
        assert_eq!(p["stage"], "dns", "{p}");
        let body = api(s, READY).await;
        assert_eq!(body["readiness"], "unknown");
        assert_eq!(body["recommended_channel"]["channel"], "retry_later");
    }
}

/// The sandbox's test identities were documented only in source code, and the README
/// example's buyer was `invalid` in the sandbox VAT register and `not_registered` in the
/// sandbox Peppol lookup although its delivery succeeded. `GET /v1/sandbox` lists them,
/// and the example's parties check out.
#[tokio::test]
async fn the_sandbox_lists_its_test_identities_and_the_example_checks_out() {
    let s = TestServer::start().await;
    let c: Value = s
        .client
        .get(s.url("/v1/sandbox"))
        .header("X-API-Key", "sandbox")
        .value()
        .await;
    assert_eq!(c["environment"], "sandbox");
    let buyers = c["scenario_buyers"].as_array().unwrap();
    assert!(buyers
        .iter()
        .any(|b| b["endpoint"] == "0245:9999000001" && b["scenario"] == "rejected"));
    let partial = c["peppol_participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["readiness"] == "partial")
        .expect("a partial participant")
        .clone();
    // What the catalogue says is what the lookup answers.
    let id = partial["participant_id"].as_str().unwrap();
    let looked: Value = s
        .api(Method::GET, &format!("/api/peppol-lookup/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(looked["readiness"], "partial");
    assert!(c["vies_test_numbers"].as_array().unwrap().len() >= 10);
    assert!(!c["companies"].as_array().unwrap().is_empty());

    // The README example: its buyer is registered and ready, and its VAT number valid.
    let xml = String::from_utf8(crate::support::example("invoice-sk.xml")).unwrap();
    assert!(xml.contains(r#"<cbc:EndpointID schemeID="9950">SK2120345678</cbc:EndpointID>"#));
    let buyer: Value = s
        .client
        .get(s.url("/v1/peppol/lookup?icd=9950&id=SK2120345678"))
        .value()
        .await;
    assert_eq!(buyer["registered"], true, "{buyer}");
    assert_eq!(buyer["readiness"], "ready", "{buyer}");
    let vat: Value = s
        .client
        .get(s.url("/v1/vat/verify?vat=SK2120345678"))
        .value()
        .await;
    assert_eq!(vat["valid"], true, "{vat}");
}
