//! The input of a conversion as a reviewer sees it beside the values read from it: the
//! spreadsheet rows the values came from (with the header row), or the text of the PDF
//! pages they were read on. The input is read again under the extraction's limits, so a
//! hostile file costs a review page no more than it cost its upload.

use std::collections::BTreeSet;

use super::extract::Limits;
use super::model::{FieldView, Source};
use super::tabular::{self, Table};
use super::{pdf, tabular::column_letter};

/// What the review page shows of the input.
#[derive(Debug)]
pub enum SourceView {
    /// The tables (one per worksheet; one for CSV) with their first row and every row a
    /// value was read from; `cited` lists (sheet, row, 0-based column) of those values.
    Sheets {
        tables: Vec<Table>,
        cited: Vec<CitedCell>,
    },
    /// The text of every page a value was read on, in page order.
    Pages(Vec<(u32, String)>),
    /// Nothing to show beside the values (embedded XML, or the input cannot be read again).
    Unavailable(String),
}

/// A cell a value was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CitedCell {
    pub sheet: Option<String>,
    pub row: u32,
    pub column: usize,
    /// The draft path of the value, e.g. `payment.iban`.
    pub path: String,
}

/// Where in the input to look for each field, and what to show.
pub fn view(
    bytes: &[u8],
    file_name: Option<&str>,
    format: &str,
    fields: &[FieldView],
    limits: &Limits,
) -> SourceView {
    if format == "pdf" {
        return pages(bytes, fields, limits);
    }
    sheets(bytes, file_name, fields, limits)
}

fn sheets(
    bytes: &[u8],
    file_name: Option<&str>,
    fields: &[FieldView],
    limits: &Limits,
) -> SourceView {
    let wanted: BTreeSet<u32> = fields
        .iter()
        .filter_map(|f| match &f.source {
            Source::Cell { row, .. } => Some(*row),
            _ => None,
        })
        .collect();
    let tables = match tabular::preview(bytes, file_name, &wanted, &limits.tabular) {
        Ok(t) => t,
        Err(e) => return SourceView::Unavailable(e.to_string()),
    };
    let mut cited = Vec::new();
    for f in fields {
        let Source::Cell { sheet, row, column } = &f.source else {
            continue;
        };
        let Some(table) = tables.iter().find(|t| &t.sheet == sheet) else {
            continue;
        };
        if let Some(index) = column_index(table, column) {
            cited.push(CitedCell {
                sheet: sheet.clone(),
                row: *row,
                column: index,
                path: f.path.clone(),
            });
        }
    }
    SourceView::Sheets { tables, cited }
}

/// A column named by its header text (the first row's cell) or, without a header, by its
/// letter.
fn column_index(table: &Table, column: &str) -> Option<usize> {
    let header = table.rows.first()?;
    header
        .cells
        .iter()
        .position(|c| c.text() == column)
        .or_else(|| (0..header.cells.len().max(64)).find(|i| column_letter(*i) == column))
}

fn pages(bytes: &[u8], fields: &[FieldView], limits: &Limits) -> SourceView {
    let wanted: BTreeSet<u32> = fields
        .iter()
        .filter_map(|f| match &f.source {
            Source::Pdf { page, .. } => Some(*page),
            _ => None,
        })
        .collect();
    let extraction = match pdf::extract_with(bytes, &limits.pdf) {
        Ok(e) => e,
        Err(e) => return SourceView::Unavailable(e.to_string()),
    };
    // Pages are separated by a form feed in the extraction's text.
    let shown = extraction
        .text
        .split('\u{c}')
        .enumerate()
        .map(|(i, text)| (i as u32 + 1, text.trim_matches('\n').to_string()))
        .filter(|(n, _)| wanted.contains(n) || wanted.is_empty())
        .collect();
    SourceView::Pages(shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::model::FieldView;

    fn field(path: &str, source: Source) -> FieldView {
        FieldView {
            path: path.into(),
            business_term: "BT-1".into(),
            value: "x".into(),
            confidence: 0.5,
            source,
        }
    }

    #[test]
    fn csv_rows_come_with_their_header_and_cited_cells() {
        let csv = "Invoice number,IBAN,Note\r\nFV-1,SK31,first\r\nFV-2,SK99,second\r\nFV-3,SK00,third\r\n";
        let fields = [
            field(
                "number",
                Source::Cell {
                    sheet: None,
                    row: 3,
                    column: "Invoice number".into(),
                },
            ),
            field(
                "payment.iban",
                Source::Cell {
                    sheet: None,
                    row: 3,
                    column: "IBAN".into(),
                },
            ),
            field(
                "seller.name",
                Source::Computed {
                    from: "elsewhere".into(),
                },
            ),
        ];
        let SourceView::Sheets { tables, cited } = view(
            csv.as_bytes(),
            Some("a.csv"),
            "csv",
            &fields,
            &Limits::default(),
        ) else {
            panic!("a CSV shows as a sheet");
        };
        assert_eq!(tables.len(), 1);
        let rows: Vec<u32> = tables[0].rows.iter().map(|r| r.number).collect();
        assert_eq!(rows, [1, 3], "the header and the cited row only");
        assert_eq!(tables[0].rows[1].cell(1).text(), "SK99");
        assert_eq!(
            cited,
            [
                CitedCell {
                    sheet: None,
                    row: 3,
                    column: 0,
                    path: "number".into()
                },
                CitedCell {
                    sheet: None,
                    row: 3,
                    column: 1,
                    path: "payment.iban".into()
                },
            ]
        );
    }

    #[test]
    fn unreadable_input_says_why_instead_of_failing() {
        let fields = [field(
            "number",
            Source::Pdf {
                page: 1,
                method: "label".into(),
            },
        )];
        let SourceView::Unavailable(why) =
            view(b"%PDF-1.4 broken", None, "pdf", &fields, &Limits::default())
        else {
            panic!("a broken PDF cannot be shown");
        };
        assert!(why.contains("PDF"), "{why}");
    }
}
