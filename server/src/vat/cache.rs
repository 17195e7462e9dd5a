//! The answer cache: register verdicts (valid and invalid) kept per number. An answer is
//! fresh for its verdict's age; after that it is asked again, but kept a while longer to
//! be served — marked stale — when the register cannot answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::future::Cache;

use super::config::VatConfig;

/// A register's verdict on one number, as it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub valid: bool,
    pub name: Option<String>,
    pub address: Option<String>,
    /// The register that gave it.
    pub source: &'static str,
    /// When it was given (RFC 3339 UTC).
    pub checked_at: String,
    /// SK numbers: whether the FS lists grounds for cancelling the registration (None:
    /// not consulted).
    pub cancellation_grounds: Option<bool>,
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub verdict: Arc<Verdict>,
    pub fetched: Instant,
}

impl Entry {
    pub fn age(&self) -> Duration {
        self.fetched.elapsed()
    }
}

/// A cached entry and whether it may be served without asking the register.
pub enum Lookup {
    Fresh(Entry),
    Stale(Entry),
    Missing,
}

#[derive(Clone)]
pub struct AnswerCache {
    entries: Cache<String, Entry>,
    valid_for: Duration,
    invalid_for: Duration,
}

impl AnswerCache {
    pub fn new(config: &VatConfig) -> AnswerCache {
        let valid_for = Duration::from_secs(config.cache_valid_secs);
        let invalid_for = Duration::from_secs(config.cache_invalid_secs);
        let keep = valid_for.max(invalid_for) + Duration::from_secs(config.stale_max_secs);
        AnswerCache {
            entries: Cache::builder()
                .max_capacity(config.cache_capacity)
                .time_to_live(keep.max(Duration::from_secs(1)))
                .build(),
            valid_for,
            invalid_for,
        }
    }

    pub async fn get(&self, vat: &str) -> Lookup {
        match self.entries.get(vat).await {
            None => Lookup::Missing,
            Some(entry) => {
                let max_age = if entry.verdict.valid {
                    self.valid_for
                } else {
                    self.invalid_for
                };
                if entry.age() < max_age {
                    Lookup::Fresh(entry)
                } else {
                    Lookup::Stale(entry)
                }
            }
        }
    }

    pub async fn put(&self, vat: String, verdict: Verdict) {
        self.entries
            .insert(
                vat,
                Entry {
                    verdict: Arc::new(verdict),
                    fetched: Instant::now(),
                },
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(valid: bool) -> Verdict {
        Verdict {
            valid,
            name: None,
            address: None,
            source: "VIES",
            checked_at: "2026-11-24T10:00:00Z".into(),
            cancellation_grounds: None,
        }
    }

    #[tokio::test]
    async fn valid_and_invalid_answers_age_separately() {
        let cache = AnswerCache::new(&VatConfig {
            cache_valid_secs: 3600,
            cache_invalid_secs: 0,
            ..VatConfig::default()
        });
        assert!(matches!(cache.get("SK2022749619").await, Lookup::Missing));
        cache.put("SK2022749619".into(), verdict(true)).await;
        cache.put("SK1020304758".into(), verdict(false)).await;
        assert!(matches!(cache.get("SK2022749619").await, Lookup::Fresh(_)));
        // An invalid answer with age 0 must be asked again, but is still there to serve
        // (stale) if the register is down.
        match cache.get("SK1020304758").await {
            Lookup::Stale(e) => assert!(!e.verdict.valid),
            _ => panic!("expected a stale entry"),
        }
    }
}
