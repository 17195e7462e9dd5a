//! When a session ends: after `idle` without a request, or `absolute` after sign-in,
//! whichever comes first, or when it is revoked (sign-out, sign-out everywhere).

use chrono::{DateTime, Duration, Utc};

use crate::store::SessionRecord;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionPolicy {
    pub idle: Duration,
    pub absolute: Duration,
}

impl Default for SessionPolicy {
    /// 30 minutes idle, 12 hours in all: a working day with a break, not a week.
    fn default() -> Self {
        SessionPolicy {
            idle: Duration::minutes(30),
            absolute: Duration::hours(12),
        }
    }
}

/// A session's state at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    Active,
    /// No request for longer than the idle limit.
    Idle,
    /// Past its absolute end.
    Expired,
    Revoked,
}

fn parse(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl SessionPolicy {
    /// The absolute end of a session started at `start`.
    pub fn ends(&self, start: DateTime<Utc>) -> DateTime<Utc> {
        start + self.absolute
    }

    /// The state of `s` at `now`. A record whose times do not parse is expired.
    pub fn state(&self, s: &SessionRecord, now: DateTime<Utc>) -> SessionState {
        if s.revoked_at.is_some() {
            return SessionState::Revoked;
        }
        let (Some(expires), Some(seen)) = (parse(&s.expires_at), parse(&s.last_seen_at)) else {
            return SessionState::Expired;
        };
        if now >= expires {
            SessionState::Expired
        } else if now - seen >= self.idle {
            SessionState::Idle
        } else {
            SessionState::Active
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2027-01-15T08:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
            + Duration::minutes(minutes)
    }

    fn session(start: i64, seen: i64, policy: &SessionPolicy) -> SessionRecord {
        let t = |m: i64| crate::clock::format(at(m));
        SessionRecord {
            hash: "h".into(),
            person_id: "p".into(),
            tenant_id: "t".into(),
            csrf: "c".into(),
            created_at: t(start),
            last_seen_at: t(seen),
            expires_at: crate::clock::format(policy.ends(at(start))),
            revoked_at: None,
            method: crate::store::SESSION_PASSWORD.into(),
        }
    }

    #[test]
    fn idle_and_absolute_limits_end_a_session() {
        let p = SessionPolicy::default();
        let s = session(0, 0, &p);
        assert_eq!(p.state(&s, at(29)), SessionState::Active);
        assert_eq!(p.state(&s, at(30)), SessionState::Idle);
        // Busy all day: still ends after twelve hours.
        let busy = session(0, 719, &p);
        assert_eq!(p.state(&busy, at(719)), SessionState::Active);
        assert_eq!(p.state(&busy, at(720)), SessionState::Expired);
        let mut revoked = session(0, 0, &p);
        revoked.revoked_at = Some(crate::clock::format(at(1)));
        assert_eq!(p.state(&revoked, at(2)), SessionState::Revoked);
        let mut broken = session(0, 0, &p);
        broken.expires_at = "soon".into();
        assert_eq!(p.state(&broken, at(1)), SessionState::Expired);
    }
}
