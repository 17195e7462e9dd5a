//! Slovak company data from four public registers: RPO (commercial register), RÚZ
//! (financial statements), RPVS (public-sector partners) and the Financial Administration's
//! open data (tax debtors). The registers are asked concurrently, each within one shared
//! time budget; one that fails or is slow leaves its group `unavailable` and the others
//! still answer. `ok` and `not_found` answers are cached per register, outages never are.
//! In the sandbox a built-in data set answers and every group says `source: "sandbox"`.

pub mod answer;
pub mod config;
pub mod fs;
pub mod ico;
pub mod rpo;
pub mod rpvs;
pub mod ruz;
pub mod sandbox;

use std::future::Future;
use std::time::Duration;

use serde::de::DeserializeOwned;
use tokio::time::Instant;

pub use answer::*;
pub use config::CompanyConfig;

use crate::settings::Mode;

/// What a register said about one IČO (outages are the `Err` side of a fetch).
#[derive(Clone, Debug, PartialEq)]
pub enum Found<T> {
    Data(T),
    /// The register has no record; the text says so in the register's terms.
    NotFound(String),
}

/// Why a register could not answer.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("{register} cannot be reached: {reason}")]
    Unreachable {
        register: &'static str,
        reason: String,
    },
    #[error("{register} did not answer within the time budget")]
    Timeout { register: &'static str },
    #[error("{register} answered HTTP {status} to {what}")]
    Status {
        register: &'static str,
        status: u16,
        what: &'static str,
    },
    #[error("{register} answered {what} in an unexpected shape: {reason}")]
    Shape {
        register: &'static str,
        what: &'static str,
        reason: String,
    },
}

/// GET `url` with `query` and read JSON; `Ok(None)` on 404 (the register's "no record").
pub(crate) async fn get_json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    register: &'static str,
    what: &'static str,
) -> Result<Option<T>, RegisterError> {
    let response = request.send().await.map_err(|e| {
        if e.is_timeout() {
            RegisterError::Timeout { register }
        } else {
            RegisterError::Unreachable {
                register,
                reason: root_cause(&e),
            }
        }
    })?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(RegisterError::Status {
            register,
            status: status.as_u16(),
            what,
        });
    }
    let bytes = response.bytes().await.map_err(|e| {
        if e.is_timeout() {
            RegisterError::Timeout { register }
        } else {
            RegisterError::Unreachable {
                register,
                reason: root_cause(&e),
            }
        }
    })?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| RegisterError::Shape {
            register,
            what,
            reason: e.to_string(),
        })
}

/// The innermost error text (reqwest's own message is only "error sending request").
pub(crate) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// An HTTP client whose every call ends within `budget`.
pub(crate) fn http_client(budget: Duration) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .timeout(budget)
        .connect_timeout(budget.min(Duration::from_secs(2)))
        .user_agent(concat!("invex/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// A JSON value the registers write as a number or a string, as text.
pub(crate) fn text_of(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A register's answer as kept in the cache.
#[derive(Clone)]
struct Fetched<T> {
    found: Found<T>,
    fetched_at: String,
}

/// Per-register cache of `ok` and `not_found` answers (None when the lifetime is 0).
struct RegisterCache<T: Clone + Send + Sync + 'static>(
    Option<moka::future::Cache<String, Fetched<T>>>,
);

impl<T: Clone + Send + Sync + 'static> RegisterCache<T> {
    fn new(ttl_secs: u64) -> Self {
        RegisterCache((ttl_secs > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(Duration::from_secs(ttl_secs))
                .build()
        }))
    }
}

/// Name and base URL of a register, as groups cite it.
#[derive(Clone)]
struct Source {
    name: &'static str,
    url: Option<String>,
}

impl Source {
    fn group<T>(&self, fetched: Fetched<T>, cached: bool) -> Group<T> {
        let (status, data, detail) = match fetched.found {
            Found::Data(d) => (GroupStatus::Ok, Some(d), None),
            Found::NotFound(why) => (GroupStatus::NotFound, None, Some(why)),
        };
        Group {
            source: self.name.to_string(),
            source_url: self.url.clone(),
            fetched_at: fetched.fetched_at,
            status,
            cached,
            data,
            detail,
        }
    }

    fn unavailable<T>(&self, detail: String) -> Group<T> {
        Group {
            source: self.name.to_string(),
            source_url: self.url.clone(),
            fetched_at: crate::clock::now(),
            status: GroupStatus::Unavailable,
            cached: false,
            data: None,
            detail: Some(detail),
        }
    }
}

/// The production side: one client and one cache per register.
struct Live {
    rpo: rpo::RpoClient,
    ruz: ruz::RuzClient,
    rpvs: rpvs::RpvsClient,
    fs: fs::FsClient,
    rpo_cache: RegisterCache<CommercialRegister>,
    ruz_cache: RegisterCache<FinancialResults>,
    rpvs_cache: RegisterCache<PublicSectorPartner>,
    debtors_cache: RegisterCache<Vec<TaxDebt>>,
    rpo_source: Source,
    ruz_source: Source,
    rpvs_source: Source,
    fs_source: Source,
}

/// The registers behind `GET /v1/company/sk/{ico}`.
pub struct Registers {
    budget: Duration,
    /// None in the sandbox: the built-in data set answers.
    live: Option<Live>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client for the company registers: {0}")]
pub struct BuildError(#[from] reqwest::Error);

/// Debtor lists with no open source modelled here, named in every debtors answer.
pub const NOT_COVERED: &[&str] = &[
    "Sociálna poisťovňa (social insurance) debtors: published only as a downloadable list, not queryable by IČO",
    "health insurers (VšZP, Dôvera, Union) debtors: published by each insurer on its own site, not queryable by IČO",
];

impl Registers {
    /// Clients for production, or the built-in data set for the sandbox. `budget` is the
    /// longest a lookup may hold a request.
    pub fn new(
        config: &CompanyConfig,
        mode: Mode,
        budget: Duration,
    ) -> Result<Registers, BuildError> {
        let live = match mode {
            Mode::Sandbox => None,
            Mode::Production => {
                let http = http_client(budget)?;
                Some(Live {
                    rpo: rpo::RpoClient::new(http.clone(), &config.rpo_url),
                    ruz: ruz::RuzClient::new(http.clone(), &config.ruz_url),
                    rpvs: rpvs::RpvsClient::new(http.clone(), &config.rpvs_url),
                    fs: fs::FsClient::new(http, &config.fs_url, config.fs_api_key.clone()),
                    rpo_cache: RegisterCache::new(config.rpo_ttl()),
                    ruz_cache: RegisterCache::new(config.ruz_ttl()),
                    rpvs_cache: RegisterCache::new(config.rpvs_ttl()),
                    debtors_cache: RegisterCache::new(config.fs_ttl()),
                    rpo_source: Source {
                        name: rpo::SOURCE,
                        url: Some(config.rpo_url.clone()),
                    },
                    ruz_source: Source {
                        name: ruz::SOURCE,
                        url: Some(config.ruz_url.clone()),
                    },
                    rpvs_source: Source {
                        name: rpvs::SOURCE,
                        url: Some(config.rpvs_url.clone()),
                    },
                    fs_source: Source {
                        name: fs::DEBTORS_SOURCE,
                        url: Some(config.fs_url.clone()),
                    },
                })
            }
        };
        Ok(Registers { budget, live })
    }

    /// Everything the registers say about `ico` (already a valid 8-digit IČO).
    pub async fn lookup(&self, ico: &str) -> CompanyAnswer {
        let Some(live) = &self.live else {
            return sandbox::lookup(ico);
        };
        let deadline = Instant::now() + self.budget;
        let budget_ms = self.budget.as_millis();
        let rpo = self.group(&live.rpo_cache, ico, &live.rpo_source, deadline, || {
            live.rpo.lookup(ico)
        });
        let ruz = self.group(&live.ruz_cache, ico, &live.ruz_source, deadline, || {
            live.ruz.lookup(ico)
        });
        let rpvs = self.group(&live.rpvs_cache, ico, &live.rpvs_source, deadline, || {
            live.rpvs.lookup(ico)
        });
        // The tax-debtor list has no IČO column: it is searched by the registered name,
        // so this group starts when RPO (or else RÚZ) has given the name.
        let rpo = futures_util::FutureExt::shared(Box::pin(rpo));
        let ruz = futures_util::FutureExt::shared(Box::pin(ruz));
        let (rpo_name, ruz_name) = (rpo.clone(), ruz.clone());
        let debtors = async move {
            if !live.fs.has_key() {
                return live.fs_source.unavailable(fs::FsError::NoKey.to_string());
            }
            let register = rpo_name.await;
            let name = match register.data.as_ref().and_then(|d| d.current_name.clone()) {
                Some(name) => Some(name),
                None => ruz_name.clone().await.data.and_then(|d| d.name),
            };
            match name {
                Some(name) => self.debtors(live, &name, deadline).await,
                None => {
                    let accounts = ruz_name.await;
                    if register.status == GroupStatus::NotFound
                        && accounts.status == GroupStatus::NotFound
                    {
                        let found = Fetched {
                            found: Found::NotFound(
                                "neither RPO nor RÚZ knows this IČO, so there is no name to look up in the tax-debtor list"
                                    .to_string(),
                            ),
                            fetched_at: crate::clock::now(),
                        };
                        live.fs_source.group(found, false)
                    } else {
                        live.fs_source.unavailable(format!(
                            "the tax-debtor list is searchable only by name and no register gave the name within the time budget of {budget_ms} ms"
                        ))
                    }
                }
            }
        };
        let (commercial_register, financial_results, public_sector_partners, debtors) =
            tokio::join!(rpo, ruz, rpvs, debtors);
        assemble(
            ico,
            "production",
            commercial_register,
            debtors,
            financial_results,
            public_sector_partners,
        )
    }

    /// One register's group: the cache, else the register within the deadline.
    async fn group<T, E, F, Fut>(
        &self,
        cache: &RegisterCache<T>,
        key: &str,
        source: &Source,
        deadline: Instant,
        fetch: F,
    ) -> Group<T>
    where
        T: Clone + Send + Sync + 'static,
        E: std::fmt::Display,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Found<T>, E>>,
    {
        if let Some(cache) = &cache.0 {
            if let Some(hit) = cache.get(key).await {
                return source.group(hit, true);
            }
        }
        match tokio::time::timeout_at(deadline, fetch()).await {
            Err(_) => source.unavailable(format!(
                "{} did not answer within the time budget of {} ms",
                source.name,
                self.budget.as_millis()
            )),
            Ok(Err(e)) => source.unavailable(e.to_string()),
            Ok(Ok(found)) => {
                let fetched = Fetched {
                    found,
                    fetched_at: crate::clock::now(),
                };
                if let Some(cache) = &cache.0 {
                    cache.insert(key.to_string(), fetched.clone()).await;
                }
                source.group(fetched, false)
            }
        }
    }

    async fn debtors(&self, live: &Live, name: &str, deadline: Instant) -> Group<Debtors> {
        let key = fs::normalized_name(name);
        let group = self
            .group(
                &live.debtors_cache,
                &key,
                &live.fs_source,
                deadline,
                || async {
                    live.fs
                        .tax_debtors_named(name)
                        .await
                        .map(|records| Found::Data(records.into_iter().map(tax_debt).collect()))
                },
            )
            .await;
        let searched = name.to_string();
        let mut group = group.map(|debts| debtors_data(searched, debts));
        if group.status == GroupStatus::Ok {
            group.detail = Some(
                "the tax-debtor list carries no IČO; records were matched by the registered name"
                    .to_string(),
            );
        }
        group
    }
}

fn tax_debt(d: fs::TaxDebtor) -> TaxDebt {
    TaxDebt {
        name: d.name,
        street: d.street,
        postal_code: d.postal_code,
        municipality: d.municipality,
        amount: d.amount,
    }
}

/// The debtors group's data from the tax-debtor records matched to the company.
pub(crate) fn debtors_data(searched_name: String, tax_debts: Vec<TaxDebt>) -> Debtors {
    Debtors {
        tax_debtor: !tax_debts.is_empty(),
        tax_debts,
        searched_name,
        matched_by: "name".to_string(),
        not_covered: NOT_COVERED.iter().map(|s| s.to_string()).collect(),
    }
}

/// The answer from its groups: the best known name and whether it is partial.
pub(crate) fn assemble(
    ico: &str,
    environment: &str,
    commercial_register: Group<CommercialRegister>,
    debtors: Group<Debtors>,
    financial_results: Group<FinancialResults>,
    public_sector_partners: Group<PublicSectorPartner>,
) -> CompanyAnswer {
    let name = commercial_register
        .data
        .as_ref()
        .and_then(|d| d.current_name.clone())
        .or_else(|| financial_results.data.as_ref().and_then(|d| d.name.clone()))
        .or_else(|| {
            public_sector_partners
                .data
                .as_ref()
                .and_then(|d| d.name.clone())
        });
    let partial = [
        commercial_register.status,
        debtors.status,
        financial_results.status,
        public_sector_partners.status,
    ]
    .contains(&GroupStatus::Unavailable);
    CompanyAnswer {
        ico: ico.to_string(),
        name,
        environment: environment.to_string(),
        partial,
        commercial_register,
        debtors,
        financial_results,
        public_sector_partners,
    }
}
