//! CSV and Excel invoices (issue 7): one row per invoice line, rows grouped into invoices
//! by invoice number, columns mapped to draft fields by a mapping profile (shipped, or
//! sent by the client), every value with its cell and a confidence.
//!
//! The template and its columns are documented in `docs/conversion-template.md`.

mod assemble;
mod codes;
mod error;
mod fields;
mod input;
mod inspect;
mod layout;
mod limits;
mod mapping;
mod table;
mod template;
mod values;

#[cfg(test)]
mod hostile;
#[cfg(test)]
mod tests;

pub use error::TabularError;
pub use input::Format;
pub use limits::Limits;
pub use mapping::{mapping, mappings, DefaultValue, Mapping};
pub use table::{column_letter, Cell, Row, Table};
pub use template::{template_csv, template_xlsx};
pub use values::DateOrder;

use crate::convert::model::Draft;
use serde::{Deserialize, Serialize};

/// How serious a cell issue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The value is missing, unreadable, contradicted or fails its check.
    Error,
    /// The value was read, but could have been read another way.
    Warning,
}

/// A problem with one cell, pointing where a spreadsheet user can find it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellIssue {
    /// 1-based row as spreadsheets show it (the header is row 1 when it is the first).
    pub row: u32,
    /// The column's header text.
    pub column: String,
    /// The draft path, e.g. `payment.iban` or `lines[2].quantity`.
    pub field: String,
    pub message: String,
    pub severity: Severity,
}

/// One invoice found in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExtractedInvoice {
    pub draft: Draft,
    /// The rows it was built from.
    pub rows: Vec<u32>,
    pub issues: Vec<CellIssue>,
}

/// Everything read from one file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub format: Format,
    /// CSV only: `UTF-8`, `UTF-16LE`, `UTF-16BE` or `windows-1250`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// CSV only: the field delimiter used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<char>,
    /// Workbooks only: the worksheet read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// The row holding the column headers.
    pub header_row: u32,
    pub mapping_id: String,
    /// Headers the mapping does not use (their cells are ignored).
    pub unmapped_columns: Vec<String>,
    /// Issues of rows that belong to no invoice.
    pub issues: Vec<CellIssue>,
    pub invoices: Vec<ExtractedInvoice>,
}

/// Read invoices from a CSV or Excel file. The format comes from the content (`PK` zip
/// → xlsx/ods, otherwise CSV text); `filename` only sharpens error messages. Without a
/// mapping, the shipped mapping whose headers fit best is used.
///
/// Rows are read one at a time after the header: reading stops as soon as a limit is
/// passed (`limits.max_invoices` invoices, rows, cells), so nothing past it is built.
pub fn extract(
    bytes: &[u8],
    filename: Option<&str>,
    mapping: Option<&Mapping>,
    limits: &Limits,
) -> Result<Extraction, TabularError> {
    // calamine is third-party code fed with untrusted bytes (fuzzing found an arithmetic
    // overflow in its cell-reference parser): a panic inside it must become an error for
    // this upload, not a failed request task.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        read(bytes, filename, mapping, limits)
    }))
    .unwrap_or_else(|_| {
        Err(TabularError::Workbook {
            format: "spreadsheet",
            reason: "the reader failed on malformed data".into(),
        })
    })
}

/// What a reviewer sees of an input beside the values read from it: every table's first
/// non-empty row (its header, as a rule) and the rows numbered in `wanted`, read under the
/// same limits (and the same guard against reader panics) as an extraction.
pub fn preview(
    bytes: &[u8],
    filename: Option<&str>,
    wanted: &std::collections::BTreeSet<u32>,
    limits: &Limits,
) -> Result<Vec<Table>, TabularError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut input = input::open(bytes, filename, None, limits)?;
        let heads = input.heads(1)?;
        let mut tables = Vec::with_capacity(heads.len());
        for (index, head) in heads.into_iter().enumerate() {
            let first = head.rows.first().map(|r| r.number);
            let mut rows = Vec::new();
            input.rows(index, &mut |row| {
                if Some(row.number) == first || wanted.contains(&row.number) {
                    rows.push(row);
                }
                Ok(())
            })?;
            tables.push(Table {
                sheet: head.sheet,
                rows,
            });
        }
        Ok(tables)
    }))
    .unwrap_or_else(|_| {
        Err(TabularError::Workbook {
            format: "spreadsheet",
            reason: "the reader failed on malformed data".into(),
        })
    })
}

fn read(
    bytes: &[u8],
    filename: Option<&str>,
    mapping: Option<&Mapping>,
    limits: &Limits,
) -> Result<Extraction, TabularError> {
    let mut input = input::open(bytes, filename, mapping.and_then(|m| m.delimiter), limits)?;
    let heads = input.heads(layout::HEADER_SCAN)?;
    let candidates = match mapping {
        Some(m) => vec![m.clone()],
        None => mappings(),
    };
    let layout = layout::choose(&heads, &candidates, mapping.is_some())?;
    let table = heads.get(layout.table).ok_or(TabularError::NoHeader)?;
    let ctx = assemble::Context {
        mapping: &layout.mapping,
        sheet: table.sheet.as_deref(),
        headers: &layout.headers,
        columns: &layout.resolved.columns,
    };
    let mut groups = assemble::Grouper::new(layout.header, &ctx, limits);
    input.rows(layout.table, &mut |row| groups.push(row))?;
    let (invoices, issues) = groups.finish();
    let header_row = table.rows.get(layout.header).map_or(1, |r| r.number);
    Ok(Extraction {
        format: input.format,
        encoding: input.encoding.map(str::to_string),
        delimiter: input.delimiter,
        sheet: table.sheet.clone(),
        header_row,
        mapping_id: layout.mapping.id.clone(),
        unmapped_columns: layout.resolved.unmapped.clone(),
        issues,
        invoices,
    })
}
