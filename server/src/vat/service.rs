//! One VAT check from start to end: local checks, the cache, the member state's circuit,
//! the register, and stale answers when the register is down.

use std::time::Duration;

use super::breaker::{Breakers, Permit};
use super::cache::{AnswerCache, Entry, Lookup, Verdict};
use super::config::VatConfig;
use super::sk_lists::{self, SkLists};
use super::vies::ViesClient;
use super::{local, sandbox, RegisterAnswer, VatResult};
use crate::company::fs::FsClient;
use crate::company::CompanyConfig;
use crate::settings::Mode;

/// The register behind the local checks.
pub enum Register {
    /// The built-in sandbox register (answers locally, marked sandbox).
    Sandbox,
    Vies(ViesClient),
}

impl Register {
    fn name(&self) -> &'static str {
        match self {
            Register::Sandbox => "sandbox",
            Register::Vies(_) => "VIES",
        }
    }

    async fn ask(&self, vat: &str) -> RegisterAnswer {
        match self {
            Register::Sandbox => sandbox::lookup(vat),
            Register::Vies(client) => client.check(vat).await,
        }
    }
}

/// The register could not answer and no earlier answer could stand in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    pub vat: String,
    pub reason: String,
    pub retry_after_secs: u64,
}

pub struct VatService {
    register: Register,
    sk: SkLists,
    cache: AnswerCache,
    breakers: Breakers,
    environment: &'static str,
    batch_concurrency: usize,
}

impl VatService {
    pub fn new(
        register: Register,
        sk: SkLists,
        config: &VatConfig,
        environment: &'static str,
    ) -> VatService {
        VatService {
            register,
            sk,
            cache: AnswerCache::new(config),
            breakers: Breakers::new(
                config.breaker_failures,
                Duration::from_secs(config.breaker_open_secs),
            ),
            environment,
            batch_concurrency: config.batch_concurrency.max(1),
        }
    }

    /// The service the configuration asks for: VIES (at `vies_url`) and, with an FS key in
    /// `company`, the FS lists in production; the sandbox register and sandbox lists
    /// otherwise. A register call may take `budget` (`register_timeout_ms`).
    pub fn from_config(
        config: &VatConfig,
        mode: Mode,
        budget: Duration,
        vies_url: &str,
        company: &CompanyConfig,
    ) -> Result<VatService, reqwest::Error> {
        let (register, sk) = match mode {
            Mode::Production => {
                let sk = match &company.fs_api_key {
                    Some(key) if !key.trim().is_empty() => SkLists::Fs(FsClient::new(
                        crate::company::http_client(budget)?,
                        &company.fs_url,
                        Some(key.clone()),
                    )),
                    _ => SkLists::Off,
                };
                (Register::Vies(ViesClient::new(vies_url, budget)?), sk)
            }
            Mode::Sandbox => (Register::Sandbox, SkLists::Sandbox),
        };
        Ok(VatService::new(register, sk, config, mode.as_str()))
    }

    pub fn batch_concurrency(&self) -> usize {
        self.batch_concurrency
    }

    /// Member states whose circuit is open now.
    pub fn open_circuits(&self) -> Vec<String> {
        self.breakers.open()
    }

    /// Check one number as a user typed it.
    pub async fn verify(&self, input: &str) -> Result<VatResult, Unavailable> {
        let checked = local::check(input);
        let vat = checked.normalized.clone();
        if let Register::Sandbox = self.register {
            // The VIES test numbers fail the local checks by design; the sandbox knows them.
            if let Some(answer) = sandbox::test_number(&vat) {
                return self.fresh_answer(vat, answer);
            }
        }
        if let Err(fault) = &checked.outcome {
            return Ok(VatResult {
                reason: Some(fault.reason()),
                ..self.result(&vat, false, "invalid_format", "local-checks")
            });
        }
        let stale = match self.cache.get(&vat).await {
            Lookup::Fresh(entry) => return Ok(self.cached_result(&vat, &entry, None)),
            Lookup::Stale(entry) => Some(entry),
            Lookup::Missing => None,
        };
        // Local checks passed, so the number starts with its two-letter prefix.
        let country = vat.get(..2).unwrap_or_default().to_string();
        if let Permit::Refused { retry_after } = self.breakers.permit(&country) {
            let reason = format!(
                "{} is not asked about {country} numbers for now: its last answers for \
                 {country} were outages",
                self.register.name()
            );
            return self
                .fallback(vat, stale, reason, retry_after.as_secs().max(1))
                .await;
        }
        // The SK cancellation-grounds list is asked beside the register, not after it.
        let (answer, grounds) =
            tokio::join!(self.register.ask(&vat), self.sk.cancellation_grounds(&vat));
        match answer {
            RegisterAnswer::Known {
                valid,
                name,
                address,
            } => {
                self.breakers.success(&country);
                let verdict = Verdict {
                    valid,
                    name,
                    address,
                    source: self.register.name(),
                    checked_at: crate::clock::now(),
                    cancellation_grounds: grounds,
                };
                let result = self.verdict_result(&vat, &verdict);
                self.cache.put(vat, verdict).await;
                Ok(result)
            }
            RegisterAnswer::Rejected { reason } => {
                self.breakers.success(&country);
                Ok(VatResult {
                    reason: Some(reason),
                    ..self.result(&vat, false, "invalid_format", self.register.name())
                })
            }
            RegisterAnswer::Unavailable {
                reason,
                retry_after_secs,
            } => {
                // "Busy" (retry in a second) is a concurrency limit, not an outage.
                if retry_after_secs > 1 {
                    self.breakers.failure(&country);
                }
                self.fallback(vat, stale, reason, retry_after_secs).await
            }
        }
    }

    /// An answer given now and not cached (sandbox test numbers).
    fn fresh_answer(&self, vat: String, answer: RegisterAnswer) -> Result<VatResult, Unavailable> {
        match answer {
            RegisterAnswer::Known {
                valid,
                name,
                address,
            } => Ok(self.verdict_result(
                &vat,
                &Verdict {
                    valid,
                    name,
                    address,
                    source: self.register.name(),
                    checked_at: crate::clock::now(),
                    cancellation_grounds: None,
                },
            )),
            RegisterAnswer::Rejected { reason } => Ok(VatResult {
                reason: Some(reason),
                ..self.result(&vat, false, "invalid_format", self.register.name())
            }),
            RegisterAnswer::Unavailable {
                reason,
                retry_after_secs,
            } => Err(Unavailable {
                vat,
                reason,
                retry_after_secs,
            }),
        }
    }

    /// The register cannot answer: for SK numbers the FS VAT payer list answers instead
    /// (a register's answer of today beats a cached one); otherwise a cached answer, marked
    /// stale; otherwise unavailable.
    async fn fallback(
        &self,
        vat: String,
        stale: Option<Entry>,
        reason: String,
        retry_after_secs: u64,
    ) -> Result<VatResult, Unavailable> {
        match self.sk.vat_payer(&vat).await {
            Some(Ok(payer)) => {
                let grounds = self.sk.cancellation_grounds(&vat).await;
                let valid = payer.is_some();
                let (name, address) = payer.map(|p| (p.name, p.address)).unwrap_or_default();
                let mut result = self.verdict_result(
                    &vat,
                    &Verdict {
                        valid,
                        name,
                        address,
                        source: sk_lists::VAT_PAYERS_SOURCE,
                        checked_at: crate::clock::now(),
                        cancellation_grounds: grounds,
                    },
                );
                result.warnings.push(format!(
                    "{} cannot answer now ({reason}); this answer is from the Financial \
                     Administration's list of VAT payers",
                    self.register.name()
                ));
                Ok(result)
            }
            Some(Err(list_reason)) => {
                tracing::warn!(reason = %list_reason, "FS list ds_dphs did not answer");
                self.stale_or_unavailable(vat, stale, reason, retry_after_secs)
            }
            None => self.stale_or_unavailable(vat, stale, reason, retry_after_secs),
        }
    }

    fn stale_or_unavailable(
        &self,
        vat: String,
        stale: Option<Entry>,
        reason: String,
        retry_after_secs: u64,
    ) -> Result<VatResult, Unavailable> {
        match stale {
            Some(entry) => Ok(self.cached_result(&vat, &entry, Some(&reason))),
            None => Err(Unavailable {
                vat,
                reason,
                retry_after_secs,
            }),
        }
    }

    fn verdict_result(&self, vat: &str, verdict: &Verdict) -> VatResult {
        let status = if verdict.valid { "valid" } else { "invalid" };
        let warnings = match verdict.cancellation_grounds {
            Some(true) => vec![sk_lists::cancellation_warning()],
            _ => Vec::new(),
        };
        VatResult {
            sk_cancellation_grounds: verdict.cancellation_grounds,
            warnings,
            name: verdict.name.clone(),
            address: verdict.address.clone(),
            checked_at: verdict.checked_at.clone(),
            reason: (!verdict.valid).then(|| {
                format!(
                    "{} does not know this number as an active VAT registration",
                    verdict.source
                )
            }),
            ..self.result(vat, verdict.valid, status, verdict.source)
        }
    }

    /// A cached answer; `outage` says why the register was not (successfully) asked.
    fn cached_result(&self, vat: &str, entry: &Entry, outage: Option<&str>) -> VatResult {
        let mut result = self.verdict_result(vat, &entry.verdict);
        result.cached = true;
        result.cache_age_seconds = Some(entry.age().as_secs());
        if let Some(outage) = outage {
            result.stale = true;
            result.warnings.push(format!(
                "the register cannot answer now ({outage}); this is its answer of {}, \
                 which may be out of date",
                entry.verdict.checked_at
            ));
        }
        result
    }

    fn result(&self, vat: &str, valid: bool, status: &str, source: &str) -> VatResult {
        VatResult {
            vat: vat.to_string(),
            valid,
            status: status.to_string(),
            name: None,
            address: None,
            source: source.to_string(),
            checked_at: crate::clock::now(),
            reason: None,
            cached: false,
            cache_age_seconds: None,
            stale: false,
            warnings: Vec::new(),
            sk_cancellation_grounds: None,
            environment: self.environment.to_string(),
        }
    }
}
