//! Identifiers of the things invex makes: a type prefix and a time-ordered UUID (v7), e.g.
//! `val_0192f…`. Time order is what lists page by (`?before=`): a newer id sorts after an
//! older one, within a process even in the same millisecond.

/// A new id with `prefix` (`val`, `inv`, `key`, …).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::now_v7().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_prefixed_and_time_ordered() {
        let a = new_id("val");
        let b = new_id("val");
        assert!(a.starts_with("val_") && a.len() == 36, "{a}");
        assert!(a < b);
    }
}
