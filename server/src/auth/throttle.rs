//! Throttling of failed authentication, per client address and per key prefix.
//!
//! What is counted: every database lookup of a key prefix this instance does not know, and
//! every refused key. Each client address (IPv6 by its /64, the block one subscriber
//! usually holds) and each key prefix may spend `per_minute` of them per minute, in bursts
//! of as many; beyond that the answer is 429 before any lookup is made. A key known to this
//! instance (read from the database in the last [`super::KNOWN_KEY_TTL`]) is checked from
//! memory, by its hash, in constant time, and a valid one authenticates whatever these
//! budgets say: guessing from the same address, or at the same prefix (prefixes are shown
//! in key listings), never locks the key's holder out.
//!
//! Memory is bounded: each table holds at most [`MAX_ENTRIES`] entries. Idle entries are
//! dropped every minute (and at once when a table fills, at most once a second); when a
//! table is still full, attempts from new addresses or at new prefixes are refused as
//! throttled rather than let through uncounted.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

/// Most entries of each table (addresses, prefixes).
pub const MAX_ENTRIES: usize = 100_000;

/// Shortest pause between two prunes forced by a full table (a prune walks the table).
const FORCED_PRUNE_EVERY: Duration = Duration::from_secs(1);

/// Which budget was spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Address,
    KeyPrefix,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Address => "address",
            Scope::KeyPrefix => "key_prefix",
        }
    }
}

/// The budget of `scope` is spent; the next attempt is counted after `retry_after`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttled {
    pub scope: Scope,
    pub retry_after: Duration,
}

pub struct FailureThrottle {
    per_minute: u32,
    by_address: DefaultKeyedRateLimiter<IpAddr>,
    by_prefix: DefaultKeyedRateLimiter<String>,
    forced_prune: Mutex<Option<Instant>>,
}

impl FailureThrottle {
    pub fn new(per_minute: u32) -> FailureThrottle {
        let n = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::per_minute(n).allow_burst(n);
        FailureThrottle {
            per_minute: n.get(),
            by_address: DefaultKeyedRateLimiter::keyed(quota),
            by_prefix: DefaultKeyedRateLimiter::keyed(quota),
            forced_prune: Mutex::new(None),
        }
    }

    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Count one attempt against `client`'s and `prefix`'s budgets.
    pub fn charge(&self, client: Option<IpAddr>, prefix: &str) -> Result<(), Throttled> {
        if let Some(ip) = client.map(address_key) {
            self.take(&self.by_address, &ip, Scope::Address)?;
        }
        self.take(&self.by_prefix, &prefix.to_string(), Scope::KeyPrefix)
    }

    fn take<K>(
        &self,
        limiter: &DefaultKeyedRateLimiter<K>,
        key: &K,
        scope: Scope,
    ) -> Result<(), Throttled>
    where
        K: std::hash::Hash + Eq + Clone,
    {
        if limiter.len() >= MAX_ENTRIES {
            self.prune_when_full();
            if limiter.len() >= MAX_ENTRIES {
                // A new entry would exceed the bound; refuse without a lookup. (An entry
                // already there is not found without inserting, so this holds for all.)
                return Err(Throttled {
                    scope,
                    retry_after: self.refill(),
                });
            }
        }
        limiter.check_key(key).map_err(|not_until| Throttled {
            scope,
            retry_after: not_until.wait_time_from(DefaultClock::default().now()),
        })
    }

    /// The time one attempt's allowance takes to come back.
    fn refill(&self) -> Duration {
        Duration::from_secs(60) / self.per_minute
    }

    fn prune_when_full(&self) {
        let mut last = self.forced_prune.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|at| at.elapsed() < FORCED_PRUNE_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        self.prune();
    }

    /// Drop the entries whose budget is whole again.
    pub fn prune(&self) {
        self.by_address.retain_recent();
        self.by_address.shrink_to_fit();
        self.by_prefix.retain_recent();
        self.by_prefix.shrink_to_fit();
    }

    /// Entries held (addresses, prefixes).
    pub fn len(&self) -> (usize, usize) {
        (self.by_address.len(), self.by_prefix.len())
    }
}

/// The address an attempt is counted under: IPv4 as it is (IPv4-mapped IPv6 too), IPv6 by
/// its /64, since one subscriber holds a whole /64 and could otherwise take a fresh address
/// for every attempt.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().expect("ip"))
    }

    #[test]
    fn an_address_has_a_budget_of_failures() {
        let t = FailureThrottle::new(5);
        for n in 0..5 {
            assert_eq!(t.charge(ip("192.0.2.1"), &format!("h_{n}")), Ok(()));
        }
        let refused = t.charge(ip("192.0.2.1"), "h_x").expect_err("spent");
        assert_eq!(refused.scope, Scope::Address);
        assert!(
            refused.retry_after > Duration::ZERO && refused.retry_after <= Duration::from_secs(12)
        );
        // Another address has its own budget.
        assert_eq!(t.charge(ip("192.0.2.2"), "h_y"), Ok(()));
    }

    #[test]
    fn a_prefix_has_a_budget_across_addresses() {
        let t = FailureThrottle::new(3);
        for n in 0..3 {
            assert_eq!(
                t.charge(ip(&format!("198.51.100.{n}")), "inx_aaaaaaaaaaaa"),
                Ok(())
            );
        }
        let refused = t
            .charge(ip("198.51.100.9"), "inx_aaaaaaaaaaaa")
            .expect_err("spent");
        assert_eq!(refused.scope, Scope::KeyPrefix);
    }

    #[test]
    fn ipv6_addresses_count_by_their_64() {
        let t = FailureThrottle::new(2);
        assert_eq!(t.charge(ip("2001:db8:1:2::1"), "h_a"), Ok(()));
        assert_eq!(t.charge(ip("2001:db8:1:2:ffff::9"), "h_b"), Ok(()));
        let refused = t
            .charge(ip("2001:db8:1:2:abcd::1"), "h_c")
            .expect_err("same /64");
        assert_eq!(refused.scope, Scope::Address);
        assert_eq!(t.charge(ip("2001:db8:1:3::1"), "h_d"), Ok(()));
        assert_eq!(
            address_key("::ffff:192.0.2.7".parse().expect("ip")),
            "192.0.2.7".parse::<IpAddr>().expect("ip")
        );
    }

    #[test]
    fn the_tables_stay_bounded() {
        let t = FailureThrottle::new(1);
        let mut refused = 0;
        for n in 0..(MAX_ENTRIES as u32 + 500) {
            let client = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            if t.charge(Some(client), &format!("h_{n:016x}")).is_err() {
                refused += 1;
            }
        }
        let (addresses, prefixes) = t.len();
        assert!(
            addresses <= MAX_ENTRIES && prefixes <= MAX_ENTRIES,
            "{addresses} {prefixes}"
        );
        assert!(refused >= 500, "{refused}");
    }
}
