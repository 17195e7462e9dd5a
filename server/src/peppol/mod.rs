//! Peppol participant lookup: local identifier checks first (answered at once), then
//! discovery — DNS U-NAPTR in the SML zone, the participant's SMP, the Peppol Directory for
//! the name — in production, or the built-in sandbox directory.
//!
//! An outage (DNS failure, SMP unreachable, budget exceeded) is reported as an outage and
//! never as "not registered". Completed answers are cached for `peppol.cache_ttl_secs`.

pub mod answer;
pub mod config;
pub mod directory;
pub mod icd;
pub mod identifier;
pub mod naptr;
pub mod readiness;
pub mod sandbox;
pub mod smp;

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{self, StreamExt};

pub use config::PeppolConfig;
pub use identifier::{IdError, ParticipantId};

use crate::settings::Mode;
use directory::DirectoryClient;
use naptr::{Discovered, Discovery};
use smp::SmpClient;

/// Most document types read from one ServiceGroup (real participants have a handful).
const MAX_SERVICES: usize = 32;
/// Metadata requests in flight at once for one participant.
const PARALLEL_METADATA: usize = 4;

/// One document type of a participant, as its SMP describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Service {
    /// `{scheme}::{value}` document type identifier.
    pub document_type: String,
    /// False when the SMP answered 404 for the metadata (not supported).
    pub supported: bool,
    pub processes: Vec<smp::Process>,
}

/// A completed lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    pub id: ParticipantId,
    /// The SML knows the participant.
    pub registered: bool,
    /// The SMP base URL the SML points at.
    pub smp: Option<String>,
    pub services: Vec<Service>,
    /// Business name from the Peppol Directory.
    pub name: Option<String>,
    pub country: Option<String>,
    /// `SML/SMP` or `sandbox`.
    pub source: &'static str,
    /// When the answer was obtained (cached answers keep their time).
    pub checked_at: String,
    /// Things worth knowing that are not a verdict (e.g. the Directory did not answer).
    pub notes: Vec<String>,
}

impl Participant {
    pub fn not_registered(id: ParticipantId, source: &'static str) -> Participant {
        Participant {
            id,
            registered: false,
            smp: None,
            services: Vec::new(),
            name: None,
            country: None,
            source,
            checked_at: crate::clock::now(),
            notes: Vec::new(),
        }
    }
}

/// A lookup that could not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// Where it failed: `dns`, `smp` or `budget`.
    pub stage: &'static str,
    pub reason: String,
    pub retry_after_secs: u64,
}

/// A lookup answer and whether it came from the cache.
#[derive(Clone, Debug)]
pub struct Found {
    pub participant: Arc<Participant>,
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("Peppol DNS discovery: {0}")]
    Dns(#[from] naptr::DnsError),
    #[error("Peppol HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// The production clients (absent in the sandbox).
struct Network {
    discovery: Discovery,
    smp: SmpClient,
    directory: Option<DirectoryClient>,
}

/// Peppol participant lookups for the routes.
pub struct Lookup {
    network: Option<Network>,
    cache: moka::future::Cache<String, Arc<Participant>>,
    budget: Duration,
}

impl Lookup {
    /// The lookups `peppol` describes under `mode`: the network in production, the sandbox
    /// directory otherwise. One lookup may take `budget` (the server-wide register time
    /// budget, `register_timeout_ms`; at least 1 ms).
    pub fn new(peppol: &PeppolConfig, mode: Mode, budget: Duration) -> Result<Lookup, SetupError> {
        let budget = budget.max(Duration::from_millis(1));
        let network = match mode {
            Mode::Sandbox => None,
            Mode::Production => Some(Network {
                // DNS gets half the budget, so a silent DNS server is reported as a DNS
                // failure while the SMP still has time when DNS is quick.
                discovery: Discovery::new(&peppol.sml_zone, peppol.dns_server, budget / 2)?,
                smp: SmpClient::new(budget)?,
                directory: match peppol.directory_url.trim() {
                    "" => None,
                    url => Some(DirectoryClient::new(url, budget / 2)?),
                },
            }),
        };
        Ok(Lookup {
            network,
            cache: moka::future::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(peppol.cache_ttl_secs.max(1)))
                .build(),
            budget,
        })
    }

    /// Look `id` up: the sandbox directory, the cache, or the network.
    pub async fn find(&self, id: &ParticipantId) -> Result<Found, Unavailable> {
        let Some(network) = &self.network else {
            return Ok(Found {
                participant: Arc::new(sandbox::lookup(id, chrono::Utc::now())),
                cached: false,
            });
        };
        let key = id.key();
        if let Some(hit) = self.cache.get(&key).await {
            return Ok(Found {
                participant: hit,
                cached: true,
            });
        }
        let budget_ms = self.budget.as_millis();
        let participant = tokio::time::timeout(self.budget, network.lookup(id))
            .await
            .map_err(|_| Unavailable {
                stage: "budget",
                reason: format!("the Peppol lookup did not finish within {budget_ms} ms"),
                retry_after_secs: 30,
            })??;
        let participant = Arc::new(participant);
        self.cache.insert(key, participant.clone()).await;
        Ok(Found {
            participant,
            cached: false,
        })
    }
}

impl Network {
    async fn lookup(&self, id: &ParticipantId) -> Result<Participant, Unavailable> {
        let (registration, directory) = tokio::join!(self.registration(id), self.name(id));
        let mut participant = registration?;
        match directory {
            Ok(Some(entry)) => {
                participant.name = entry.name;
                participant.country = entry.country;
            }
            Ok(None) => {}
            Err(note) => participant.notes.push(note),
        }
        Ok(participant)
    }

    /// What the SML and the SMP say: registered or not, and the published services.
    async fn registration(&self, id: &ParticipantId) -> Result<Participant, Unavailable> {
        let unregistered = Participant::not_registered(id.clone(), "SML/SMP");
        let smp_url = match self.discovery.smp_of(id).await {
            Ok(Discovered::Smp(url)) => url,
            Ok(Discovered::NotRegistered) => return Ok(unregistered),
            Err(e) => {
                tracing::warn!(participant = %id.uri(), error = %e, "Peppol DNS discovery failed");
                return Err(Unavailable {
                    stage: "dns",
                    reason: e.to_string(),
                    retry_after_secs: 30,
                });
            }
        };
        let mut participant = Participant {
            registered: true,
            smp: Some(smp_url.clone()),
            ..unregistered
        };
        let smp_down = |e: smp::SmpError| {
            tracing::warn!(participant = %id.uri(), error = %e, "Peppol SMP lookup failed");
            Unavailable {
                stage: "smp",
                reason: e.to_string(),
                retry_after_secs: 60,
            }
        };
        let Some(hrefs) = self
            .smp
            .service_group(&smp_url, id)
            .await
            .map_err(smp_down)?
        else {
            // Registered in the SML, but nothing to deliver to: readiness says `partial`.
            participant.notes.push(format!(
                "the SML points at {smp_url}, but that SMP does not know the participant (HTTP 404)"
            ));
            return Ok(participant);
        };
        if hrefs.len() > MAX_SERVICES {
            participant.notes.push(format!(
                "the SMP lists {} document types; the first {MAX_SERVICES} were read",
                hrefs.len()
            ));
        }
        let smp_url = smp_url.as_str();
        let answers: Vec<_> = stream::iter(hrefs.into_iter().take(MAX_SERVICES))
            .map(|href| async move {
                let answer = match smp::reference_url(smp_url, id, &href) {
                    Some(url) => self.smp.metadata(&url).await,
                    None => Err(smp::SmpError::Malformed {
                        url: href.clone(),
                        reason:
                            "a service metadata reference on another host without a document type"
                                .into(),
                    }),
                };
                (href, answer)
            })
            .buffered(PARALLEL_METADATA)
            .collect()
            .await;
        for (href, answer) in answers {
            participant.services.push(match answer.map_err(smp_down)? {
                Some(info) => Service {
                    document_type: info.document_type,
                    supported: true,
                    processes: info.processes,
                },
                // Only a 404 means "not supported".
                None => Service {
                    document_type: smp::document_type_of(&href).unwrap_or(href),
                    supported: false,
                    processes: Vec::new(),
                },
            });
        }
        Ok(participant)
    }

    /// The Directory entry; an Err is a note (the Directory is informative only).
    async fn name(&self, id: &ParticipantId) -> Result<Option<directory::DirectoryEntry>, String> {
        let Some(directory) = &self.directory else {
            return Ok(None);
        };
        directory.find(id).await.map_err(|e| {
            tracing::info!(participant = %id.uri(), error = %e, "Peppol Directory lookup failed");
            format!("{e}; the name is unknown")
        })
    }
}
