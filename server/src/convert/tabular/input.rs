//! From bytes to tables: the format by magic bytes (not the file name), the text encoding
//! of CSV, its delimiter, and the worksheets of a workbook.

use super::table::{Cell, Row, Table};
use super::TabularError;
use calamine::{Data, Reader, Sheets};
use encoding_rs::{Encoding, UTF_8, WINDOWS_1250};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Cursor;

/// Most rows one file may have; a month of invoice lines of a large company fits easily.
pub const MAX_ROWS: usize = 100_000;

/// The container format of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    Xlsx,
    Xls,
    Xlsb,
    Ods,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Xlsx => "xlsx",
            Format::Xls => "xls",
            Format::Xlsb => "xlsb",
            Format::Ods => "ods",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was read, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub format: Format,
    /// CSV only: the encoding the text was decoded from.
    pub encoding: Option<&'static str>,
    /// CSV only: the field delimiter.
    pub delimiter: Option<char>,
    pub tables: Vec<Table>,
}

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const OLE_MAGIC: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const WORKBOOK_EXTENSIONS: [&str; 4] = ["xlsx", "xlsm", "xls", "ods"];

/// Read the input: a workbook when the bytes say so, CSV text otherwise.
/// `delimiter` forces the CSV delimiter (from a mapping).
pub fn read(
    bytes: &[u8],
    filename: Option<&str>,
    delimiter: Option<char>,
) -> Result<Input, TabularError> {
    if bytes.is_empty() {
        return Err(TabularError::Empty);
    }
    if bytes.starts_with(ZIP_MAGIC) || bytes.starts_with(OLE_MAGIC) {
        return read_workbook(bytes);
    }
    if bytes.starts_with(b"%PDF") {
        return Err(TabularError::UnsupportedFormat(
            "it is a PDF; send it to the PDF converter".into(),
        ));
    }
    if let Some(name) = filename {
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        if ext.is_some_and(|e| WORKBOOK_EXTENSIONS.contains(&e.as_str())) {
            return Err(TabularError::NotAWorkbook { name: name.into() });
        }
    }
    let (text, encoding) = decode(bytes)?;
    if text.contains('\0') {
        return Err(TabularError::UnsupportedFormat(
            "it contains binary data, not text".into(),
        ));
    }
    let delimiter = delimiter.unwrap_or_else(|| detect_delimiter(&text));
    let table = read_csv(&text, delimiter)?;
    Ok(Input {
        format: Format::Csv,
        encoding: Some(encoding),
        delimiter: Some(delimiter),
        tables: vec![table],
    })
}

/// Decode CSV bytes: a byte order mark decides (UTF-8, UTF-16LE/BE); otherwise valid
/// UTF-8 is UTF-8 and anything else Windows-1250, what Slovak Windows software writes.
pub fn decode(bytes: &[u8]) -> Result<(String, &'static str), TabularError> {
    if let Some((encoding, bom)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom..]);
        if had_errors {
            return Err(TabularError::Encoding {
                encoding: encoding.name(),
            });
        }
        return Ok((text.into_owned(), encoding.name()));
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((text.to_string(), UTF_8.name())),
        Err(_) => {
            // Windows-1250 maps every byte but five unused ones, which decode to U+FFFD;
            // that is still the best reading of a non-UTF-8 file.
            let (text, _) = WINDOWS_1250.decode_without_bom_handling(bytes);
            Ok((text.into_owned(), WINDOWS_1250.name()))
        }
    }
}

/// The delimiter among `;`, tab, `,` and `|` that splits the first lines most
/// consistently (the same count on most lines), then into the most fields. Quoted text
/// is skipped; decimal commas and title lines do not fool it because their counts vary.
pub fn detect_delimiter(text: &str) -> char {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(20)
        .collect();
    let mut best = (',', 0usize, 0usize);
    for candidate in [';', '\t', ',', '|'] {
        let mut frequency: HashMap<usize, usize> = HashMap::new();
        for line in &lines {
            let count = count_outside_quotes(line, candidate);
            if count > 0 {
                *frequency.entry(count).or_default() += 1;
            }
        }
        // The most common count (the larger one on a tie) and on how many lines.
        let Some((count, lines_with_it)) =
            frequency.into_iter().max_by_key(|&(count, n)| (n, count))
        else {
            continue;
        };
        if (lines_with_it, count) > (best.1, best.2) {
            best = (candidate, lines_with_it, count);
        }
    }
    best.0
}

fn count_outside_quotes(line: &str, delimiter: char) -> usize {
    let mut quoted = false;
    let mut count = 0;
    for c in line.chars() {
        if c == '"' {
            quoted = !quoted;
        } else if c == delimiter && !quoted {
            count += 1;
        }
    }
    count
}

/// Parse CSV text into a table, numbering rows as a spreadsheet would show them (a
/// record spanning lines inside quotes is still one row; blank lines count).
pub fn read_csv(text: &str, delimiter: char) -> Result<Table, TabularError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter as u8)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    // Row numbers from byte offsets: count line breaks up to each record, minus those
    // inside quoted fields of earlier records (a spreadsheet shows no row for them).
    let mut counted_to = 0usize;
    let mut line_breaks = 0u64;
    let mut inner_newlines = 0u64;
    for record in reader.records() {
        let record = record.map_err(|e| TabularError::Csv {
            line: e.position().map_or(0, |p| p.line()),
            reason: e.to_string(),
        })?;
        let start = record
            .position()
            .map_or(counted_to, |p| {
                usize::try_from(p.byte()).unwrap_or(usize::MAX)
            })
            .clamp(counted_to, text.len());
        // The reported start can sit before the line break ending the previous record
        // and before blank lines the reader skipped; a record never starts with one.
        let start = start
            + text.as_bytes()[start..]
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
        line_breaks += text.as_bytes()[counted_to..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        counted_to = start;
        let number = u32::try_from(line_breaks + 1 - inner_newlines).unwrap_or(u32::MAX);
        inner_newlines += record
            .iter()
            .map(|f| f.matches('\n').count() as u64)
            .sum::<u64>();
        let row = Row {
            number,
            cells: record.iter().map(|f| Cell::Text(f.to_string())).collect(),
        };
        if !row.is_empty() {
            rows.push(row);
        }
        if rows.len() > MAX_ROWS {
            return Err(TabularError::TooManyRows {
                rows: rows.len(),
                limit: MAX_ROWS,
            });
        }
    }
    Ok(Table { sheet: None, rows })
}

fn read_workbook(bytes: &[u8]) -> Result<Input, TabularError> {
    let workbook_error = |format: &'static str, e: calamine::Error| TabularError::Workbook {
        format,
        reason: e.to_string(),
    };
    let sheets = calamine::open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| workbook_error("spreadsheet", e))?;
    let format = match &sheets {
        Sheets::Xls(_) => Format::Xls,
        Sheets::Xlsx(_) => Format::Xlsx,
        Sheets::Xlsb(_) => Format::Xlsb,
        Sheets::Ods(_) => Format::Ods,
    };
    let mut sheets = sheets;
    let mut tables = Vec::new();
    let mut first_error = None;
    let mut total = 0usize;
    for name in sheets.sheet_names() {
        match sheets.worksheet_range(&name) {
            Ok(range) => {
                let table = sheet_table(&name, &range);
                total += table.rows.len();
                if total > MAX_ROWS {
                    return Err(TabularError::TooManyRows {
                        rows: total,
                        limit: MAX_ROWS,
                    });
                }
                tables.push(table);
            }
            // Chart sheets and the like have no cells; one unreadable sheet should not
            // hide the others.
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if tables.is_empty() {
        if let Some(e) = first_error {
            return Err(workbook_error(format.as_str(), e));
        }
    }
    Ok(Input {
        format,
        encoding: None,
        delimiter: None,
        tables,
    })
}

fn sheet_table(name: &str, range: &calamine::Range<Data>) -> Table {
    // A range starts at its first used cell; offsets keep row numbers and column
    // letters as the spreadsheet shows them.
    let (top, left) = range.start().unwrap_or((0, 0));
    let rows = range
        .rows()
        .enumerate()
        .map(|(i, cells)| Row {
            number: top + i as u32 + 1,
            cells: std::iter::repeat_n(Cell::Empty, left as usize)
                .chain(cells.iter().map(cell))
                .collect(),
        })
        .filter(|row| !row.is_empty())
        .collect();
    Table {
        sheet: Some(name.to_string()),
        rows,
    }
}

fn cell(data: &Data) -> Cell {
    match data {
        Data::Empty => Cell::Empty,
        Data::String(s) => Cell::Text(s.clone()),
        Data::Int(i) => Cell::Number(*i as f64),
        Data::Float(f) => Cell::Number(*f),
        Data::Bool(b) => Cell::Bool(*b),
        Data::DateTime(dt) if dt.is_datetime() => match dt.as_datetime() {
            Some(d) => Cell::Date(d.date()),
            None => Cell::Number(dt.as_f64()),
        },
        Data::DateTime(dt) => Cell::Number(dt.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => Cell::Text(s.clone()),
        Data::Error(e) => Cell::Text(format!("#{e:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_detected() {
        let text = "Číslo;Odberateľ\nA1;Ťažba ďalšia ôsma päť ň\n";
        assert_eq!(
            decode(text.as_bytes()).unwrap(),
            (text.to_string(), "UTF-8")
        );
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend(text.as_bytes());
        assert_eq!(decode(&bom).unwrap(), (text.to_string(), "UTF-8"));
        let (cp1250, _, lossy) = WINDOWS_1250.encode(text);
        assert!(!lossy);
        assert_eq!(decode(&cp1250).unwrap(), (text.to_string(), "windows-1250"));
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&utf16).unwrap(), (text.to_string(), "UTF-16LE"));
    }

    #[test]
    fn delimiters_are_detected() {
        assert_eq!(detect_delimiter("a;b;c\n1,5;2,25;3\n"), ';');
        assert_eq!(detect_delimiter("a,b,c\n1.5,2.25,3\n"), ',');
        assert_eq!(detect_delimiter("a\tb\tc\n1,5\t2\t3\n"), '\t');
        assert_eq!(detect_delimiter("\"x;y\",b,c\n1,2,3\n"), ',');
        assert_eq!(
            detect_delimiter("Title, January\n\na;b;c\n1,5;2;3\n4;5;6,25\n"),
            ';'
        );
    }

    #[test]
    fn csv_rows_are_numbered_as_spreadsheets_show_them() {
        let t = read_csv("h1,h2\n\n\"multi\nline\",x\nlast,y\n", ',').unwrap();
        let numbers: Vec<u32> = t.rows.iter().map(|r| r.number).collect();
        assert_eq!(numbers, [1, 3, 4]);
    }

    #[test]
    fn formats_by_magic_bytes_not_names() {
        assert!(matches!(
            read(b"%PDF-1.7", Some("x.csv"), None),
            Err(TabularError::UnsupportedFormat(_))
        ));
        assert!(matches!(
            read(b"a,b\n", Some("x.xlsx"), None),
            Err(TabularError::NotAWorkbook { .. })
        ));
        assert!(matches!(read(b"", None, None), Err(TabularError::Empty)));
        let csv = read(b"a,b\n1,2\n", Some("export.xlsx.txt"), None).unwrap();
        assert_eq!((csv.format, csv.delimiter), (Format::Csv, Some(',')));
        assert!(matches!(
            read(b"PK\x03\x04garbage", None, None),
            Err(TabularError::Workbook { .. })
        ));
    }
}
