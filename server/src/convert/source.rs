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
    /// Every page a value was read on, in page order, laid out as in the PDF, with the runs
    /// of text that show a value.
    Pages(Vec<PageView>),
    /// Nothing to show beside the values (embedded XML, or the input cannot be read again).
    Unavailable(String),
}

/// A PDF page beside the values.
#[derive(Debug)]
pub struct PageView {
    pub layout: pdf::PageLayout,
    /// Runs of `layout.texts` (by index) that show a value, with the value's draft path.
    pub cited: Vec<(usize, String)>,
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
    if format == "json" {
        return SourceView::Unavailable(
            "a JSON invoice is taken as it is: the UBL written from it is the document".into(),
        );
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
    let shown = extraction
        .layout
        .into_iter()
        .filter(|p| wanted.contains(&p.number) || wanted.is_empty())
        .map(|layout| {
            let mut cited = Vec::new();
            for f in fields {
                if !matches!(&f.source, Source::Pdf { page, .. } if *page == layout.number) {
                    continue;
                }
                if let Some(i) = layout.texts.iter().position(|t| shows(&t.text, &f.value)) {
                    cited.push((i, f.path.clone()));
                }
            }
            PageView { layout, cited }
        })
        .collect();
    SourceView::Pages(shown)
}

/// Whether a run of a page's text shows `value`: it contains the value (ignoring case and
/// spaces, as an IBAN in groups), or, for a number, the same digits (`1 230,00` for
/// `1230.00`). Dates written otherwise on the page are not found; the field still names
/// its page.
fn shows(text: &str, value: &str) -> bool {
    let squeeze = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (text_s, value_s) = (squeeze(text), squeeze(value));
    if value_s.chars().count() >= 3 && text_s.contains(&value_s) {
        return true;
    }
    let digits = |s: &str| -> String { s.chars().filter(char::is_ascii_digit).collect() };
    let looks_numeric = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | ' '));
    let value_d = digits(value);
    if !looks_numeric || value_d.len() < 3 {
        return false;
    }
    // The numbers of the run: stretches of digits and separators, split at column-wide
    // gaps, whole (`1 230,00`) and by their words (`1  100,00` is two numbers).
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | ',' | '\'' | ' ' | '\u{a0}');
    text.split(|c: char| !numeric(c))
        .flat_map(|stretch| stretch.split("  "))
        .flat_map(|part| std::iter::once(part).chain(part.split_whitespace()))
        .any(|candidate| digits(candidate) == value_d)
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

    #[test]
    fn a_run_shows_a_value_with_other_spacing_case_or_number_format() {
        assert!(shows(
            "SK31 1200 0000 1987 4263 7541",
            "SK3112000000198742637541"
        ));
        assert!(shows("Číslo: fv-2027-1", "FV-2027-1"));
        assert!(shows("1 230,00", "1230.00"));
        assert!(shows(
            "Zaklad 23 %: 100,00  DPH: 23,00  Spolu: 123,00 EUR",
            "123.00"
        ));
        assert!(shows("Tovar  1  100,00  100,00", "100.00"));
        assert!(!shows("Zaklad 23 %: 100,00  DPH: 23,00", "123.00"));
        assert!(!shows("1 230,01", "1230.00"));
        assert!(!shows("Faktúra 2027", "1230.00"));
        // A date's digits in another order are not taken for it, nor is a short number.
        assert!(!shows("15.01.2027", "2027-01-15"));
        assert!(!shows("x 12", "12"));
        assert!(!shows("anything", ""));
    }
}
