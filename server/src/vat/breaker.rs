//! A circuit breaker per member state. VIES forwards each request to the member state's
//! own system; when one state's system is down, every request for it waits for a timeout.
//! After a run of outages the circuit opens and requests for that state are answered at
//! once (from the stale cache or as "unavailable") until a single trial request succeeds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed {
        failures: u32,
    },
    Open {
        until: Instant,
    },
    /// One trial request is on its way; others wait for its outcome.
    Trial {
        since: Instant,
    },
}

/// Whether a request may go to the register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permit {
    Go,
    Refused { retry_after: Duration },
}

pub struct Breakers {
    failures_to_open: u32,
    open_for: Duration,
    states: Mutex<HashMap<String, State>>,
}

impl Breakers {
    pub fn new(failures_to_open: u32, open_for: Duration) -> Breakers {
        Breakers {
            failures_to_open: failures_to_open.max(1),
            open_for,
            states: Mutex::new(HashMap::new()),
        }
    }

    pub fn permit(&self, country: &str) -> Permit {
        self.permit_at(country, Instant::now())
    }

    fn permit_at(&self, country: &str, now: Instant) -> Permit {
        let mut states = self.lock();
        let Some(state) = states.get_mut(country) else {
            return Permit::Go;
        };
        match *state {
            State::Closed { .. } => Permit::Go,
            State::Open { until } if now >= until => {
                *state = State::Trial { since: now };
                Permit::Go
            }
            State::Open { until } => Permit::Refused {
                retry_after: until - now,
            },
            // A trial whose caller went away never reports back: after a while, try again.
            State::Trial { since } if now.duration_since(since) >= self.open_for => {
                *state = State::Trial { since: now };
                Permit::Go
            }
            State::Trial { .. } => Permit::Refused {
                retry_after: Duration::from_secs(1),
            },
        }
    }

    pub fn success(&self, country: &str) {
        self.lock().remove(country);
    }

    pub fn failure(&self, country: &str) {
        self.failure_at(country, Instant::now());
    }

    fn failure_at(&self, country: &str, now: Instant) {
        let mut states = self.lock();
        let state = states
            .entry(country.to_string())
            .or_insert(State::Closed { failures: 0 });
        *state = match *state {
            State::Closed { failures } if failures + 1 < self.failures_to_open => State::Closed {
                failures: failures + 1,
            },
            _ => State::Open {
                until: now + self.open_for,
            },
        };
    }

    /// Member states whose circuit is open or on trial now (for /ready and metrics).
    pub fn open(&self) -> Vec<String> {
        let mut open: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, s)| !matches!(s, State::Closed { .. }))
            .map(|(c, _)| c.clone())
            .collect();
        open.sort();
        open
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, State>> {
        // The map holds plain values; a panic elsewhere cannot leave it half-written.
        self.states.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_a_run_of_failures_and_closes_after_a_good_trial() {
        let b = Breakers::new(3, Duration::from_secs(30));
        let t0 = Instant::now();
        b.failure_at("SK", t0);
        b.failure_at("SK", t0);
        assert_eq!(
            b.permit_at("SK", t0),
            Permit::Go,
            "two failures: still closed"
        );
        b.failure_at("SK", t0);
        assert_eq!(
            b.permit_at("SK", t0 + Duration::from_secs(10)),
            Permit::Refused {
                retry_after: Duration::from_secs(20)
            }
        );
        assert_eq!(b.permit_at("DE", t0), Permit::Go, "per member state");
        assert_eq!(b.open(), vec!["SK".to_string()]);
        // After the open period one trial goes through; the others wait for it.
        let later = t0 + Duration::from_secs(31);
        assert_eq!(b.permit_at("SK", later), Permit::Go);
        assert!(matches!(b.permit_at("SK", later), Permit::Refused { .. }));
        b.success("SK");
        assert_eq!(b.permit_at("SK", later), Permit::Go);
        assert!(b.open().is_empty());
    }

    #[test]
    fn a_failed_trial_opens_the_circuit_again() {
        let b = Breakers::new(1, Duration::from_secs(5));
        let t0 = Instant::now();
        b.failure_at("AT", t0);
        let later = t0 + Duration::from_secs(6);
        assert_eq!(b.permit_at("AT", later), Permit::Go);
        b.failure_at("AT", later);
        assert!(matches!(
            b.permit_at("AT", later + Duration::from_secs(1)),
            Permit::Refused { .. }
        ));
        // A success in between resets the count.
        let b = Breakers::new(2, Duration::from_secs(5));
        b.failure_at("FR", t0);
        b.success("FR");
        b.failure_at("FR", t0);
        assert_eq!(b.permit_at("FR", t0), Permit::Go);
    }

    #[test]
    fn an_abandoned_trial_is_retried_after_the_open_period() {
        let b = Breakers::new(1, Duration::from_secs(5));
        let t0 = Instant::now();
        b.failure_at("IT", t0);
        let t1 = t0 + Duration::from_secs(5);
        assert_eq!(b.permit_at("IT", t1), Permit::Go);
        assert!(matches!(b.permit_at("IT", t1), Permit::Refused { .. }));
        assert_eq!(b.permit_at("IT", t1 + Duration::from_secs(5)), Permit::Go);
    }
}
