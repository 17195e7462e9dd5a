//! Delivery partners: the certified access points that transmit invoices over Peppol.
//! Each adapter implements [`DeliveryPartner`]; [`Partner`] selects one per connection.
//! Every submission carries a stable idempotency key (the invoice id), so a retry after a
//! crash or a timeout never creates a second transmission at the partner.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use super::timeline::Response;
use crate::store::{self, InvoiceRecord};

/// What the partner reported for one submission: its transmission id and the response
/// events known so far, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub transmission_id: String,
    pub responses: Vec<(Response, Option<String>)>,
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
                .or_insert_with(|| store::new_id("sbx_tx"))
                .clone()
        };
        let scenario = invoice.scenario.as_deref().unwrap_or("accepted");
        let ab = (Response::Mls("AB"), None);
        let responses = match scenario {
            "rejected" => vec![
                ab,
                (
                    Response::Invoice("RE"),
                    Some("sandbox: the buyer does not recognise the order reference".to_string()),
                ),
            ],
            "under_query" => vec![
                ab,
                (
                    Response::Invoice("UQ"),
                    Some("sandbox: please confirm the delivery date".to_string()),
                ),
            ],
            "conditionally_accepted" => vec![
                ab,
                (
                    Response::Invoice("CA"),
                    Some("sandbox: accepted if the discount is applied".to_string()),
                ),
            ],
            "transport_rejection" => vec![(
                Response::Mls("RE"),
                Some(
                    "BV: sandbox business rule violation at the receiving access point".to_string(),
                ),
            )],
            "delivery_failure" => vec![(
                Response::Mls("RE"),
                Some("FD: sandbox receiver endpoint unreachable".to_string()),
            )],
            "no_response" => vec![ab],
            _ => vec![
                ab,
                (Response::Mls("AP"), None),
                (Response::Invoice("AB"), None),
                (Response::Invoice("AP"), None),
            ],
        };
        Ok(Submitted {
            transmission_id,
            responses,
        })
    }
}

/// The partner behind a connection.
pub enum Partner {
    Sandbox(SandboxPartner),
}

impl Partner {
    pub fn for_name(name: &str) -> Option<Partner> {
        match name {
            "sandbox" => Some(Partner::Sandbox(SandboxPartner::default())),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Partner::Sandbox(p) => p.name(),
        }
    }

    pub async fn submit(
        &self,
        invoice: &InvoiceRecord,
        idempotency_key: &str,
    ) -> Result<Submitted, PartnerError> {
        match self {
            Partner::Sandbox(p) => p.submit(invoice, idempotency_key).await,
        }
    }
}
