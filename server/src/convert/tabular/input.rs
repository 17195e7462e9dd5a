//! From bytes to tables: the format by magic bytes (not the file name), the text encoding
//! of CSV, its delimiter, and the worksheets of a workbook.

use super::inspect::{self, Container};
use super::table::{column_letter, Cell, Row, Table};
use super::{Limits, TabularError};
use calamine::{Data, Reader, Xlsx};
use encoding_rs::{Encoding, UTF_8, WINDOWS_1250};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Cursor;
use std::ops::ControlFlow;

/// The container format of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    Xlsx,
    Ods,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Xlsx => "xlsx",
            Format::Ods => "ods",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An opened input: what it is, and its tables to be read row by row.
pub struct Input<'a> {
    pub format: Format,
    /// CSV only: the encoding the text was decoded from.
    pub encoding: Option<&'static str>,
    /// CSV only: the field delimiter.
    pub delimiter: Option<char>,
    source: Source<'a>,
    limits: &'a Limits,
}

enum Source<'a> {
    Csv(String),
    /// Cells are streamed from the sheet XML; `sheets` are the names of the worksheets
    /// that could be opened, one per table.
    Xlsx {
        book: Box<Xlsx<Cursor<&'a [u8]>>>,
        sheets: Vec<String>,
    },
    /// Read whole, under the limits [`inspect::ods`] proved beforehand.
    Tables(Vec<Table>),
}

/// What a visitor says after a row: go on, or stop reading.
type Visit<'v> = dyn FnMut(Row) -> Result<ControlFlow<()>, TabularError> + 'v;

const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
const OLE_MAGIC: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const WORKBOOK_EXTENSIONS: [&str; 4] = ["xlsx", "xlsm", "xls", "ods"];

/// Open the input: a workbook when the bytes say so, CSV text otherwise. `delimiter`
/// forces the CSV delimiter (from a mapping). Nothing is read beyond what recognising
/// the format needs; a workbook's archive is inspected against `limits` first.
pub fn open<'a>(
    bytes: &'a [u8],
    filename: Option<&str>,
    delimiter: Option<char>,
    limits: &'a Limits,
) -> Result<Input<'a>, TabularError> {
    if bytes.is_empty() {
        return Err(TabularError::Empty);
    }
    if bytes.starts_with(OLE_MAGIC) {
        // calamine's .xls reader sizes its cell buffers from the sheet's declared
        // dimensions and its sparse cells' bounding box before any check of ours could
        // run, so a few bytes can ask for terabytes.
        return Err(TabularError::UnsupportedFormat(
            "legacy Excel 97-2003 workbooks (.xls) are not read; save the file as .xlsx \
             or CSV"
                .into(),
        ));
    }
    if bytes.starts_with(ZIP_MAGIC) {
        return open_workbook(bytes, limits);
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
    Ok(Input {
        format: Format::Csv,
        encoding: Some(encoding),
        delimiter: Some(delimiter),
        source: Source::Csv(text),
        limits,
    })
}

impl Input<'_> {
    /// Every table (one for CSV, one per readable worksheet) with at most its first `n`
    /// non-empty rows: enough to find the header and choose the mapping.
    pub fn heads(&mut self, n: usize) -> Result<Vec<Table>, TabularError> {
        let limits = self.limits;
        let delimiter = self.delimiter.unwrap_or(',');
        match &mut self.source {
            Source::Csv(text) => {
                let mut rows = Vec::new();
                csv_rows(text, delimiter, limits, &mut |row| {
                    rows.push(row);
                    Ok(stop_at(rows.len(), n))
                })?;
                Ok(vec![Table { sheet: None, rows }])
            }
            Source::Xlsx { book, sheets } => {
                let mut tables = Vec::new();
                let mut readable = Vec::new();
                let mut first_error = None;
                for name in book.sheet_names() {
                    let mut rows = Vec::new();
                    let read = xlsx_rows(book, &name, limits, &mut |row| {
                        rows.push(row);
                        Ok(stop_at(rows.len(), n))
                    });
                    match read {
                        Ok(()) => {
                            tables.push(Table {
                                sheet: Some(name.clone()),
                                rows,
                            });
                            readable.push(name);
                        }
                        Err(e @ TabularError::Limit { .. }) => return Err(e),
                        // Chart sheets and the like have no cells; one unreadable sheet
                        // should not hide the others.
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                if let (true, Some(e)) = (tables.is_empty(), first_error) {
                    return Err(e);
                }
                *sheets = readable;
                Ok(tables)
            }
            Source::Tables(tables) => Ok(tables
                .iter()
                .map(|t| Table {
                    sheet: t.sheet.clone(),
                    rows: t.rows.iter().take(n).cloned().collect(),
                })
                .collect()),
        }
    }

    /// Hand every non-empty row of table `index` (as [`Input::heads`] numbers the tables)
    /// to `visit`, in order; an error from `visit` stops the reading. At most
    /// `max_rows` rows are read.
    pub fn rows(
        &mut self,
        index: usize,
        visit: &mut dyn FnMut(Row) -> Result<(), TabularError>,
    ) -> Result<(), TabularError> {
        let limits = self.limits;
        let delimiter = self.delimiter.unwrap_or(',');
        let mut count = 0usize;
        let mut counted = |row: Row| {
            count += 1;
            if count > limits.max_rows {
                return Err(TabularError::limit(
                    "max_rows",
                    limits.max_rows,
                    format!("the file has more than {} rows", limits.max_rows),
                ));
            }
            visit(row).map(|()| ControlFlow::Continue(()))
        };
        match &mut self.source {
            Source::Csv(text) => csv_rows(text, delimiter, limits, &mut counted),
            Source::Xlsx { book, sheets } => match sheets.get(index) {
                Some(name) => {
                    let name = name.clone();
                    xlsx_rows(book, &name, limits, &mut counted)
                }
                None => Err(TabularError::NoHeader),
            },
            Source::Tables(tables) => {
                let rows = tables
                    .get_mut(index)
                    .map(|t| std::mem::take(&mut t.rows))
                    .unwrap_or_default();
                for row in rows {
                    if counted(row)?.is_break() {
                        break;
                    }
                }
                Ok(())
            }
        }
    }
}

fn stop_at(read: usize, n: usize) -> ControlFlow<()> {
    if read >= n {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
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

/// Hand the non-empty records of CSV text to `visit` as rows, numbered as a spreadsheet
/// would show them (a record spanning lines inside quotes is still one row; blank lines
/// count). One record is held at a time.
fn csv_rows(
    text: &str,
    delimiter: char,
    limits: &Limits,
    visit: &mut Visit,
) -> Result<(), TabularError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter as u8)
        .from_reader(text.as_bytes());
    // Row numbers from byte offsets: count line breaks up to each record, minus those
    // inside quoted fields of earlier records (a spreadsheet shows no row for them).
    let mut counted_to = 0usize;
    let mut line_breaks = 0u64;
    let mut inner_newlines = 0u64;
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => return Ok(()),
            Err(e) => {
                return Err(TabularError::Csv {
                    line: e.position().map_or(0, |p| p.line()),
                    reason: e.to_string(),
                })
            }
        }
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
        // Empty fields past the last value carry nothing; a value past the column
        // limit is refused rather than padded to.
        let width = record
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.trim().is_empty())
            .last()
            .map_or(0, |(last, _)| last + 1);
        if width > limits.max_columns {
            return Err(TabularError::limit(
                "max_columns",
                limits.max_columns,
                format!(
                    "row {number} has a value in column {width}, right of the last column \
                     read"
                ),
            ));
        }
        if width == 0 {
            continue;
        }
        let row = Row {
            number,
            cells: record
                .iter()
                .take(limits.max_columns.max(width))
                .map(|f| Cell::Text(f.to_string()))
                .collect(),
        };
        if visit(row)?.is_break() {
            return Ok(());
        }
    }
}

fn workbook_error(format: &'static str) -> impl Fn(calamine::Error) -> TabularError {
    move |e| TabularError::Workbook {
        format,
        reason: e.to_string(),
    }
}

fn open_workbook<'a>(bytes: &'a [u8], limits: &'a Limits) -> Result<Input<'a>, TabularError> {
    let (format, source) = match inspect::archive(bytes, limits)? {
        Container::Xlsx => {
            let book = Xlsx::new(Cursor::new(bytes))
                .map_err(|e| workbook_error("xlsx")(calamine::Error::Xlsx(e)))?;
            let count = book.sheet_names().len();
            if count > limits.max_sheets {
                return Err(too_many_sheets(count, limits));
            }
            (
                Format::Xlsx,
                Source::Xlsx {
                    book: Box::new(book),
                    sheets: Vec::new(),
                },
            )
        }
        Container::Ods => (Format::Ods, Source::Tables(ods_tables(bytes, limits)?)),
        Container::Xlsb => {
            // calamine's .xlsb reader allocates record buffers from lengths the file
            // declares, before reading them.
            return Err(TabularError::UnsupportedFormat(
                "binary Excel workbooks (.xlsb) are not read; save the file as .xlsx or CSV".into(),
            ));
        }
    };
    Ok(Input {
        format,
        encoding: None,
        delimiter: None,
        source,
        limits,
    })
}

fn too_many_sheets(count: usize, limits: &Limits) -> TabularError {
    TabularError::limit(
        "max_sheets",
        limits.max_sheets,
        format!("the workbook has {count} worksheets"),
    )
}

/// Stream the cells of one xlsx worksheet into rows. calamine's cell reader neither
/// trusts nor allocates the declared dimension; cells come in sheet order, and only
/// non-empty ones are kept, each row as wide as its last value.
fn xlsx_rows(
    book: &mut Xlsx<Cursor<&[u8]>>,
    sheet: &str,
    limits: &Limits,
    visit: &mut Visit,
) -> Result<(), TabularError> {
    let error = |e| workbook_error("xlsx")(calamine::Error::Xlsx(e));
    let mut cells = book.worksheet_cells_reader(sheet).map_err(error)?;
    let mut current: Option<Row> = None;
    while let Some(found) = cells.next_cell().map_err(error)? {
        let value = cell(&Data::from(found.get_value().clone()));
        if value.is_empty() {
            continue;
        }
        let (r, c) = found.get_position();
        let (number, column) = (r.saturating_add(1), c as usize);
        if column >= limits.max_columns {
            return Err(TabularError::limit(
                "max_columns",
                limits.max_columns,
                format!(
                    "sheet `{sheet}` has a value in cell {}{number}, right of the last \
                     column read",
                    column_letter(column)
                ),
            ));
        }
        if current.as_ref().is_some_and(|row| row.number != number) {
            if let Some(done) = current.take() {
                if visit(done)?.is_break() {
                    return Ok(());
                }
            }
        }
        let row = current.get_or_insert_with(|| Row {
            number,
            cells: Vec::new(),
        });
        if row.cells.len() <= column {
            row.cells.resize(column + 1, Cell::Empty);
        }
        row.cells[column] = value;
    }
    if let Some(done) = current {
        // The last row: there is nothing left to stop reading.
        let _ = visit(done)?;
    }
    Ok(())
}

/// The worksheets of an ODS workbook, read whole by calamine once [`inspect::archive`]
/// has bounded what its repeated rows and columns expand to.
fn ods_tables(bytes: &[u8], limits: &Limits) -> Result<Vec<Table>, TabularError> {
    let mut book = calamine::Ods::new(Cursor::new(bytes))
        .map_err(|e| workbook_error("ods")(calamine::Error::Ods(e)))?;
    let names = book.sheet_names();
    if names.len() > limits.max_sheets {
        return Err(too_many_sheets(names.len(), limits));
    }
    let mut tables = Vec::new();
    let mut first_error = None;
    for name in names {
        match book.worksheet_range(&name) {
            Ok(range) => tables.push(sheet_table(&name, &range)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let (true, Some(e)) = (tables.is_empty(), first_error) {
        return Err(workbook_error("ods")(calamine::Error::Ods(e)));
    }
    Ok(tables)
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

    static LIMITS: std::sync::LazyLock<Limits> = std::sync::LazyLock::new(Limits::default);

    fn read(
        bytes: &'static [u8],
        filename: Option<&str>,
        delimiter: Option<char>,
    ) -> Result<Input<'static>, TabularError> {
        open(bytes, filename, delimiter, &LIMITS)
    }

    fn all_rows(input: &mut Input) -> Result<Vec<Row>, TabularError> {
        input.heads(0)?;
        let mut rows = Vec::new();
        input.rows(0, &mut |row| {
            rows.push(row);
            Ok(())
        })?;
        Ok(rows)
    }

    #[test]
    fn csv_rows_are_numbered_as_spreadsheets_show_them() {
        let mut input = read(b"h1,h2\n\n\"multi\nline\",x\nlast,y\n", None, Some(',')).unwrap();
        let numbers: Vec<u32> = all_rows(&mut input)
            .unwrap()
            .iter()
            .map(|r| r.number)
            .collect();
        assert_eq!(numbers, [1, 3, 4]);
        // The heads stop after the rows asked for.
        let heads = input.heads(2).unwrap();
        assert_eq!(heads[0].rows.len(), 2);
    }

    #[test]
    fn rows_and_columns_are_limited_while_reading() {
        let limits = Limits {
            max_rows: 3,
            max_columns: 2,
            ..Limits::default()
        };
        let text = b"a,b\n1,2\n3,4\n5,6\n";
        let mut input = open(text, None, None, &limits).unwrap();
        assert!(matches!(
            all_rows(&mut input),
            Err(TabularError::Limit {
                limit: "max_rows",
                value: 3,
                ..
            })
        ));
        // Empty fields right of the limit carry nothing; a value there is refused.
        let mut input = open(b"a,b,,\n1,2,,\n", None, None, &limits).unwrap();
        assert_eq!(all_rows(&mut input).unwrap().len(), 2);
        let mut input = open(b"a,b,c\n", None, None, &limits).unwrap();
        assert!(matches!(
            all_rows(&mut input),
            Err(TabularError::Limit {
                limit: "max_columns",
                value: 2,
                ..
            })
        ));
    }

    #[test]
    fn legacy_binary_workbooks_are_refused_unread() {
        let mut ole = OLE_MAGIC.to_vec();
        ole.extend([0u8; 504]);
        assert!(matches!(
            open(&ole, Some("x.xls"), None, &LIMITS),
            Err(TabularError::UnsupportedFormat(_))
        ));
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
