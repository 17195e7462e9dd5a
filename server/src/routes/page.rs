//! Cursor pagination, one shape for every list the API returns: `?limit=` (1–200, default
//! 50) and `?before=` (the `next` of the previous page). Lists are newest first; ids are
//! time-ordered (UUID v7), so "older than this id" is a stable cursor that rows inserted
//! meanwhile cannot shift. The store reads one row more than the page, so `next` appears
//! only when there is a next page. (The rule catalogue, sorted by rule id rather than by
//! time, takes `?after=` the same way.)

use serde::Deserialize;
use utoipa::IntoParams;

use crate::problem::Problem;

pub const DEFAULT_LIMIT: i64 = 50;
pub const MAX_LIMIT: i64 = 200;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Only items older than this id: the `next` of the previous page.
    pub before: Option<String>,
    /// Page size, 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
}

impl PageQuery {
    /// The page size asked for, checked.
    pub fn size(&self) -> Result<i64, Problem> {
        size(self.limit)
    }
}

/// A page size, checked: 1–200, 50 when not given.
pub fn size(limit: Option<i64>) -> Result<i64, Problem> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(Problem::invalid_field(
            "limit",
            format!("`limit` must be between 1 and {MAX_LIMIT}"),
        ))
    }
}

/// Cuts the rows read (the page size plus one) to the page, and names the cursor of the next
/// page when the extra row showed there is one.
pub fn cut<T>(mut rows: Vec<T>, size: i64, id: impl Fn(&T) -> &str) -> (Vec<T>, Option<String>) {
    let size = usize::try_from(size).unwrap_or(0);
    let more = rows.len() > size;
    rows.truncate(size);
    let next = if more {
        rows.last().map(|r| id(r).to_string())
    } else {
        None
    };
    (rows, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_checked() {
        assert_eq!(size(None).expect("default"), 50);
        assert_eq!(size(Some(200)).expect("max"), 200);
        assert!(size(Some(0)).is_err());
        assert!(size(Some(201)).is_err());
        assert!(size(Some(-1)).is_err());
    }

    #[test]
    fn next_only_when_a_row_is_left() {
        let ids = |n: usize| (0..n).map(|i| format!("id{i}")).collect::<Vec<_>>();
        let (page, next) = cut(ids(3), 2, |s| s.as_str());
        assert_eq!(page, ["id0", "id1"]);
        assert_eq!(next.as_deref(), Some("id1"));
        let (page, next) = cut(ids(2), 2, |s| s.as_str());
        assert_eq!(page.len(), 2);
        assert_eq!(next, None);
        let (page, next) = cut(ids(0), 2, |s| s.as_str());
        assert!(page.is_empty() && next.is_none());
    }
}
