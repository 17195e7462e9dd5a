//! The VIES REST client: `POST {base}/check-vat-number`, with a time budget, retries only
//! for retryable errors, and outages reported as outages (never as "invalid").

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::RegisterAnswer;

/// The public VIES REST API.
pub const DEFAULT_BASE_URL: &str = "https://ec.europa.eu/taxation_customs/vies/rest-api";

#[derive(Clone)]
pub struct ViesClient {
    http: reqwest::Client,
    base: String,
    /// Attempts for retryable errors (concurrency limits), within the time budget.
    attempts: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    country_code: &'a str,
    vat_number: &'a str,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Response {
    valid: Option<bool>,
    name: Option<String>,
    address: Option<String>,
    action_succeed: Option<bool>,
    error_wrappers: Vec<ErrorWrapper>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorWrapper {
    error: String,
    message: Option<String>,
}

/// VIES writes `---` where a member state does not disclose a field.
fn disclosed(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "---")
}

impl ViesClient {
    /// A client whose whole call never takes longer than `budget`.
    pub fn new(base: &str, budget: Duration) -> Result<ViesClient, reqwest::Error> {
        Ok(ViesClient {
            http: reqwest::Client::builder()
                .timeout(budget)
                .connect_timeout(budget.min(Duration::from_secs(2)))
                .build()?,
            base: base.trim_end_matches('/').to_string(),
            attempts: 2,
        })
    }

    /// Ask VIES about `vat` (prefix + national number, already locally valid).
    pub async fn check(&self, vat: &str) -> RegisterAnswer {
        let (country, number) = vat.split_at(2.min(vat.len()));
        let mut last = RegisterAnswer::Unavailable {
            reason: "VIES was not asked".into(),
            retry_after_secs: 60,
        };
        for attempt in 0..self.attempts {
            last = self.once(country, number).await;
            match &last {
                RegisterAnswer::Unavailable {
                    retry_after_secs, ..
                } if *retry_after_secs <= 1 && attempt + 1 < self.attempts => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                _ => break,
            }
        }
        last
    }

    async fn once(&self, country: &str, number: &str) -> RegisterAnswer {
        let sent = self
            .http
            .post(format!("{}/check-vat-number", self.base))
            .json(&Request {
                country_code: country,
                vat_number: number,
            })
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return unavailable("VIES did not answer within the time budget", 60)
            }
            Err(_) => return unavailable("VIES cannot be reached", 60),
        };
        let status = response.status();
        let body: Response = match response.json().await {
            Ok(b) => b,
            Err(_) => {
                return unavailable(&format!("VIES answered HTTP {status} without a result"), 60)
            }
        };
        if let Some(error) = body.error_wrappers.first() {
            return classify(&error.error, error.message.as_deref());
        }
        match (body.action_succeed, body.valid) {
            (Some(false), _) | (_, None) => unavailable(
                &format!("VIES answered HTTP {status} without a verdict"),
                60,
            ),
            (_, Some(valid)) => RegisterAnswer::Known {
                valid,
                name: disclosed(body.name),
                address: disclosed(body.address),
            },
        }
    }
}

fn unavailable(reason: &str, retry_after_secs: u64) -> RegisterAnswer {
    RegisterAnswer::Unavailable {
        reason: reason.to_string(),
        retry_after_secs,
    }
}

/// VIES error codes: input errors are final; the rest are outages or busy signals.
pub(super) fn classify(code: &str, message: Option<&str>) -> RegisterAnswer {
    let said = message.map(|m| format!(": {m}")).unwrap_or_default();
    match code {
        "INVALID_INPUT" | "INVALID_REQUESTER_INFO" => RegisterAnswer::Rejected {
            reason: format!("VIES refused the number as invalid input ({code}{said})"),
        },
        "GLOBAL_MAX_CONCURRENT_REQ"
        | "MS_MAX_CONCURRENT_REQ"
        | "GLOBAL_MAX_CONCURRENT_REQ_TIME"
        | "MS_MAX_CONCURRENT_REQ_TIME" => unavailable(&format!("VIES is busy ({code})"), 1),
        "MS_UNAVAILABLE" => unavailable(
            "the member state's register behind VIES is unavailable (MS_UNAVAILABLE)",
            300,
        ),
        "TIMEOUT" => unavailable("the member state's register timed out (TIMEOUT)", 60),
        other => unavailable(&format!("VIES is unavailable ({other}{said})"), 300),
    }
}
