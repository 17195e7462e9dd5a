//! A sheet of cells, the same for CSV and workbooks: what the rest of the extractor reads.

use chrono::NaiveDate;

/// One cell. CSV cells are always text; workbooks keep numbers and dates typed.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Text(String),
    Number(f64),
    Date(NaiveDate),
    Bool(bool),
}

impl Cell {
    pub fn is_empty(&self) -> bool {
        match self {
            Cell::Empty => true,
            Cell::Text(t) => t.trim().is_empty(),
            _ => false,
        }
    }

    /// The cell as text: numbers without a trailing `.0` (an IČO typed as a number stays
    /// `31322832`), dates in ISO form.
    pub fn text(&self) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::Text(t) => t.trim().to_string(),
            Cell::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{n:.0}"),
            Cell::Number(n) => n.to_string(),
            Cell::Date(d) => d.to_string(),
            Cell::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        }
    }
}

/// A non-empty row and its number as a spreadsheet shows it (1-based).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub number: u32,
    pub cells: Vec<Cell>,
}

impl Row {
    pub fn cell(&self, column: usize) -> &Cell {
        self.cells.get(column).unwrap_or(&Cell::Empty)
    }

    pub fn is_empty(&self) -> bool {
        self.cells.iter().all(Cell::is_empty)
    }
}

/// The non-empty rows of one CSV file or worksheet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Worksheet name; `None` for CSV.
    pub sheet: Option<String>,
    pub rows: Vec<Row>,
}

/// `A`, `B`, … `Z`, `AA`: the column letter of a 0-based index.
pub fn column_letter(index: usize) -> String {
    let mut n = index + 1;
    let mut out = Vec::new();
    while n > 0 {
        let rem = (n - 1) % 26;
        out.push(b'A' + rem as u8);
        n = (n - 1) / 26;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_as_text_and_column_letters() {
        assert_eq!(Cell::Number(31322832.0).text(), "31322832");
        assert_eq!(Cell::Number(12.5).text(), "12.5");
        assert_eq!(Cell::Text("  x ".into()).text(), "x");
        assert!(Cell::Text(" ".into()).is_empty());
        assert_eq!(
            [0, 25, 26, 27, 701, 702].map(column_letter),
            ["A", "Z", "AA", "AB", "ZZ", "AAA"]
        );
    }
}
