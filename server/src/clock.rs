//! The time invex records: RFC 3339 UTC with microseconds, a form that sorts as text, so
//! that stored times compare in SQL the same on SQLite and PostgreSQL.

/// Now, e.g. `2027-01-15T08:00:00.123456Z`.
pub fn now() -> String {
    format(chrono::Utc::now())
}

/// A moment in the recorded form (as [`now`]).
pub fn format(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn now_sorts_as_text() {
        let a = crate::clock::now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = crate::clock::now();
        assert!(a < b && a.ends_with('Z') && a.len() == 27, "{a} {b}");
    }
}
