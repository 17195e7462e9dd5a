//! Which sheet, which header row and which mapping: the combination whose headers cover
//! the required fields and match the most columns. Title rows above the header (a
//! report name, a period) are skipped.

use super::mapping::{Mapping, Resolved};
use super::table::{column_letter, Table};
use super::TabularError;

/// Rows looked at for the header, from the first non-empty one.
pub const HEADER_SCAN: usize = 10;

/// The chosen reading of the input.
#[derive(Clone, Debug)]
pub struct Layout {
    pub table: usize,
    /// Index of the header row in `tables[table].rows`.
    pub header: usize,
    pub mapping: Mapping,
    /// Header text per column (the column letter where the header cell is empty).
    pub headers: Vec<String>,
    pub resolved: Resolved,
}

/// Choose among `candidates` (one given mapping, or the shipped ones).
pub fn choose(
    tables: &[Table],
    candidates: &[Mapping],
    explicit: bool,
) -> Result<Layout, TabularError> {
    let mut best: Option<Layout> = None;
    for mapping in candidates {
        let wanted_sheet = mapping.sheet.as_deref();
        if let Some(sheet) = wanted_sheet {
            let is_workbook = tables.iter().any(|t| t.sheet.is_some());
            if is_workbook && !tables.iter().any(|t| t.sheet.as_deref() == Some(sheet)) {
                return Err(TabularError::NoSuchSheet(sheet.to_string()));
            }
        }
        for (t, table) in tables.iter().enumerate() {
            if wanted_sheet.is_some()
                && table.sheet.is_some()
                && table.sheet.as_deref() != wanted_sheet
            {
                continue;
            }
            for (h, row) in table.rows.iter().take(HEADER_SCAN).enumerate() {
                let headers: Vec<String> = row
                    .cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let text = c.text();
                        if text.is_empty() {
                            column_letter(i)
                        } else {
                            text
                        }
                    })
                    .collect();
                let resolved = mapping.resolve(&headers);
                let better = match &best {
                    None => true,
                    Some(b) => score(&resolved) > score(&b.resolved),
                };
                if better {
                    best = Some(Layout {
                        table: t,
                        header: h,
                        mapping: mapping.clone(),
                        headers,
                        resolved,
                    });
                }
            }
        }
    }
    let Some(best) = best else {
        return Err(TabularError::NoHeader);
    };
    if best.resolved.missing.is_empty() {
        return Ok(best);
    }
    let missing = best.resolved.missing.clone();
    let mapping = best.mapping.id.clone();
    Err(if explicit {
        TabularError::MissingColumns { mapping, missing }
    } else {
        TabularError::NoMatchingMapping {
            closest: mapping,
            missing,
        }
    })
}

/// Complete first, then fewer missing groups, then more matched columns.
fn score(r: &Resolved) -> (bool, std::cmp::Reverse<usize>, usize) {
    (
        r.missing.is_empty(),
        std::cmp::Reverse(r.missing.len()),
        r.matched(),
    )
}
