//! Delivery partners: the certified access points that transmit invoices over Peppol.
//! Each adapter implements [`DeliveryPartner`]; [`Partner`] selects one per connection.
//! Every submission carries a stable idempotency key (the invoice id), so a retry after a
//! crash or a timeout never creates a second transmission at the partner.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::timeline::Response;
use crate::store::InvoiceRecord;

/// What the partner reported for one submission: its transmission id, the response
/// events known so far, in order, and those it will report later (the sandbox's simulated
/// buyer; a real partner reports later events by callback).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub transmission_id: String,
    pub responses: Vec<(Response, Option<String>)>,
    pub later: Vec<(Response, Option<String>)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartnerError {
    /// Worth retrying later (partner down, timeout, throttled).
    #[error("the delivery partner cannot take the invoice now: {0}")]
    Retryable(String),
    /// The partner refused the invoice for good.
    #[error("the delivery partner refused the invoice: {0}")]
    Final(String),
}

pub trait DeliveryPartner {
    /// The partner's name, as timelines show it.
    fn name(&self) -> &'static str;
    /// Submit `invoice`; `idempotency_key` is the same on every attempt for one invoice.
    fn submit(
        &self,
        invoice: &InvoiceRecord,
        idempotency_key: &str,
    ) -> impl Future<Output = Result<Submitted, PartnerError>> + Send;
}

/// The scenarios of the sandbox partner, chosen per invoice with the
/// `Invex-Sandbox-Scenario` header of the send request.
pub const SCENARIOS: &[&str] = &[
    "accepted",
    "rejected",
    "under_query",
    "conditionally_accepted",
    "transport_rejection",
    "delivery_failure",
    "no_response",
];

/// Sandbox buyers whose electronic address chooses the scenario when the send request names
/// none (`Invex-Sandbox-Scenario` wins): integrators can exercise every outcome with
/// documents alone.
pub const SANDBOX_BUYERS: &[(&str, &str)] = &[
    ("0245:9999000001", "rejected"),
    ("0245:9999000002", "under_query"),
    ("0245:9999000003", "conditionally_accepted"),
    ("0245:9999000004", "transport_rejection"),
    ("0245:9999000005", "delivery_failure"),
    ("0245:9999000006", "no_response"),
];

/// The scenario a buyer address stands for in the sandbox.
pub fn scenario_for_buyer(endpoint: Option<&str>) -> Option<&'static str> {
    let endpoint = endpoint?.trim();
    SANDBOX_BUYERS
        .iter()
        .find(|(id, _)| *id == endpoint)
        .map(|(_, scenario)| *scenario)
}

/// Simulates transmission and the receiver's responses; answers locally and is marked as
/// sandbox in every timeline. Deterministic: the scenario alone decides the answers.
#[derive(Default)]
pub struct SandboxPartner {
    /// Transmission ids by idempotency key: a repeated submission gets the first id back.
    seen: Mutex<HashMap<String, String>>,
}

impl DeliveryPartner for SandboxPartner {
    fn name(&self) -> &'static str {
        "sandbox-partner"
    }

    async fn submit(
        &self,
        invoice: &InvoiceRecord,
        idempotency_key: &str,
    ) -> Result<Submitted, PartnerError> {
        let transmission_id = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.entry(idempotency_key.to_string())
                .or_insert_with(|| crate::ids::new_id("sbx_tx"))
                .clone()
        };
        let scenario = invoice
            .scenario
            .as_deref()
            .or_else(|| scenario_for_buyer(invoice.buyer_endpoint.as_deref()))
            .unwrap_or("accepted");
        // The network answers at once (MLS); the buyer's Invoice Response comes later.
        let ab = (Response::Mls("AB"), None);
        let (responses, later) = match scenario {
            "rejected" => (
                vec![ab],
                vec![(
                    Response::Invoice("RE"),
                    Some("sandbox: the buyer does not recognise the order reference".to_string()),
                )],
            ),
            "under_query" => (
                vec![ab],
                vec![(
                    Response::Invoice("UQ"),
                    Some("sandbox: please confirm the delivery date".to_string()),
                )],
            ),
            "conditionally_accepted" => (
                vec![ab],
                vec![(
                    Response::Invoice("CA"),
                    Some("sandbox: accepted if the discount is applied".to_string()),
                )],
            ),
            "transport_rejection" => (
                vec![(
                    Response::Mls("RE"),
                    Some(
                        "BV: sandbox business rule violation at the receiving access point"
                            .to_string(),
                    ),
                )],
                Vec::new(),
            ),
            "delivery_failure" => (
                vec![(
                    Response::Mls("RE"),
                    Some("FD: sandbox receiver endpoint unreachable".to_string()),
                )],
                Vec::new(),
            ),
            "no_response" => (vec![ab], Vec::new()),
            _ => (
                vec![ab, (Response::Mls("AP"), None)],
                vec![
                    (Response::Invoice("AB"), None),
                    (Response::Invoice("AP"), None),
                ],
            ),
        };
        Ok(Submitted {
            transmission_id,
            responses,
            later,
        })
    }
}

/// Settings of an HTTP partner connection.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct HttpSettings {
    /// The partner's API root, e.g. `https://ap.example.sk/api`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer`.
    pub api_key: String,
}

/// A certified access point with a REST API: `POST {base}/submissions` with the document,
/// `Idempotency-Key: {invoice id}` (a repeated submission returns the first transmission),
/// answered with `{"transmission_id", "events": [{"kind": "MLS"|"IR", "code", "reason"}]}`.
/// Later events arrive as signed callbacks (`POST /v1/partner/callbacks/{connection}`).
pub struct HttpPartner<'a> {
    pub client: &'a reqwest::Client,
    pub settings: HttpSettings,
}

#[derive(serde::Deserialize)]
struct SubmissionAnswer {
    transmission_id: String,
    #[serde(default)]
    events: Vec<PartnerEventBody>,
}

/// An event as an HTTP partner reports it (in a submission answer or a callback).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct PartnerEventBody {
    /// `MLS` (network) or `IR` (Invoice Response from the buyer).
    pub kind: String,
    /// The response code: MLS `AB`/`AP`/`RE`; IR `AB`/`IP`/`UQ`/`CA`/`RE`/`AP`/`PD`.
    pub code: String,
    /// Reason code or clarification.
    pub reason: Option<String>,
}

const MLS_CODES: [&str; 3] = ["AB", "AP", "RE"];
const IR_CODES: [&str; 7] = ["AB", "IP", "UQ", "CA", "RE", "AP", "PD"];

impl PartnerEventBody {
    /// The body that reports `response` (for storing events to apply later).
    pub fn of(response: Response, reason: Option<String>) -> PartnerEventBody {
        let (kind, code) = match response {
            Response::Mls(c) => ("MLS", c),
            Response::Invoice(c) => ("IR", c),
        };
        PartnerEventBody {
            kind: kind.to_string(),
            code: code.to_string(),
            reason,
        }
    }

    /// The response it reports; None for an unknown kind or code.
    pub fn response(&self) -> Option<Response> {
        let code = self.code.trim().to_ascii_uppercase();
        match self.kind.trim().to_ascii_uppercase().as_str() {
            "MLS" => MLS_CODES
                .iter()
                .find(|c| **c == code)
                .map(|c| Response::Mls(c)),
            "IR" => IR_CODES
                .iter()
                .find(|c| **c == code)
                .map(|c| Response::Invoice(c)),
            _ => None,
        }
    }
}

impl DeliveryPartner for HttpPartner<'_> {
    fn name(&self) -> &'static str {
        "http-partner"
    }

    async fn submit(
        &self,
        invoice: &InvoiceRecord,
        idempotency_key: &str,
    ) -> Result<Submitted, PartnerError> {
        let url = format!(
            "{}/submissions",
            self.settings.base_url.trim_end_matches('/')
        );
        let sent = self
            .client
            .post(&url)
            .bearer_auth(&self.settings.api_key)
            .header("Idempotency-Key", idempotency_key)
            .json(&serde_json::json!({
                "invoice_id": invoice.id,
                "document_id": invoice.document_id,
                "receiver": invoice.buyer_endpoint,
                "sha256": invoice.sha256,
                "document": invoice.payload,
            }))
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err(PartnerError::Retryable("no answer in time".into()))
            }
            Err(e) => return Err(PartnerError::Retryable(format!("cannot be reached: {e}"))),
        };
        let status = response.status();
        if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
            return Err(PartnerError::Retryable(format!("answered HTTP {status}")));
        }
        let body = response
            .text()
            .await
            .map_err(|e| PartnerError::Retryable(format!("the answer could not be read: {e}")))?;
        if !status.is_success() && status.as_u16() != 409 {
            let said: String = body.chars().take(300).collect();
            return Err(PartnerError::Final(format!("HTTP {status}: {said}")));
        }
        let answer: SubmissionAnswer = serde_json::from_str(&body).map_err(|e| {
            PartnerError::Retryable(format!(
                "answered HTTP {status} without a transmission id ({e})"
            ))
        })?;
        Ok(Submitted {
            transmission_id: answer.transmission_id,
            responses: answer
                .events
                .iter()
                .filter_map(|e| e.response().map(|r| (r, e.reason.clone())))
                .collect(),
            // Its later events arrive as callbacks.
            later: Vec::new(),
        })
    }
}

/// The partner behind a connection.
pub enum Partner<'a> {
    Sandbox(&'a SandboxPartner),
    Http(HttpPartner<'a>),
}

impl Partner<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            Partner::Sandbox(p) => p.name(),
            Partner::Http(p) => p.name(),
        }
    }

    pub async fn submit(
        &self,
        invoice: &InvoiceRecord,
        idempotency_key: &str,
    ) -> Result<Submitted, PartnerError> {
        match self {
            Partner::Sandbox(p) => p.submit(invoice, idempotency_key).await,
            Partner::Http(p) => p.submit(invoice, idempotency_key).await,
        }
    }
}
