//! A workbook's ZIP archive, inspected before any workbook reader sees it. calamine
//! trusts what a workbook declares: it reserves room for the shared-string count the
//! file states, and its ODS reader expands repeated rows and columns into a dense grid.
//! So every member is decompressed here once, through a meter that stops at the byte and
//! ratio limits (declared sizes are never trusted), the shared strings are counted and
//! an ODS sheet's expanded extent is measured while that happens.
//!
//! The same `zip` version as calamine's reads the archive, so both see the same members.

use super::{Limits, TabularError};
use quick_xml::events::{BytesStart, Event};
use std::io::{self, BufRead, BufReader, Cursor, Read};

/// What the archive holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Xlsx,
    Xlsb,
    Ods,
}

/// Members that decompress to less than this are not held to the ratio limit: they
/// cannot hurt, and small XML parts compress very well.
const RATIO_FREE: u64 = 1024 * 1024;

fn damaged(e: impl std::fmt::Display) -> TabularError {
    TabularError::Workbook {
        format: "spreadsheet",
        reason: e.to_string(),
    }
}

/// Check the archive against `limits`; say what kind of workbook it is.
pub fn archive(bytes: &[u8], limits: &Limits) -> Result<Container, TabularError> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(damaged)?;
    if zip.len() > limits.max_zip_entries {
        return Err(TabularError::limit(
            "max_zip_entries",
            limits.max_zip_entries,
            format!("the workbook's archive has {} members", zip.len()),
        ));
    }
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| normalized(&n)))
        .collect::<Result<_, _>>()
        .map_err(damaged)?;
    let container = if names.iter().any(|n| n == "mimetype") {
        Container::Ods
    } else if names.iter().any(|n| n == "xl/workbook.bin") {
        Container::Xlsb
    } else {
        Container::Xlsx
    };
    let mut unpacked = 0u64;
    for (i, name) in names.iter().enumerate() {
        let entry = zip.by_index(i).map_err(damaged)?;
        let left = limits.max_unpacked_bytes.saturating_sub(unpacked);
        let by_ratio = entry
            .compressed_size()
            .saturating_mul(limits.max_compression_ratio)
            .max(RATIO_FREE);
        let allowed = left.min(by_ratio);
        let ratio_binds = by_ratio < left;
        let refusal = || {
            if ratio_binds {
                ratio_limit(limits, name)
            } else {
                unpacked_limit(limits, name)
            }
        };
        // The declared size can refuse early; what is read is metered all the same.
        if entry.size() > allowed {
            return Err(refusal());
        }
        let mut meter = Meter {
            inner: entry,
            read: 0,
            allowed,
        };
        let checked = if name.ends_with("sharedstrings.xml") && container == Container::Xlsx {
            shared_strings(BufReader::new(&mut meter), limits, name)
        } else if name == "content.xml" && container == Container::Ods {
            ods_content(BufReader::new(&mut meter), limits)
        } else {
            Ok(())
        };
        // What the parse left unread still counts.
        let drained = checked.and_then(|()| {
            io::copy(&mut meter, &mut io::sink())
                .map(drop)
                .map_err(damaged)
        });
        if meter.read > meter.allowed {
            return Err(refusal());
        }
        drained?;
        unpacked += meter.read;
    }
    Ok(container)
}

/// calamine looks members up by lowercase name with `/` separators.
fn normalized(name: &str) -> String {
    name.replace('\\', "/").to_ascii_lowercase()
}

fn unpacked_limit(limits: &Limits, name: &str) -> TabularError {
    TabularError::limit(
        "max_unpacked_bytes",
        limits.max_unpacked_bytes,
        format!("the workbook decompresses to more bytes than allowed (at member `{name}`)"),
    )
}

fn ratio_limit(limits: &Limits, name: &str) -> TabularError {
    TabularError::limit(
        "max_compression_ratio",
        limits.max_compression_ratio,
        format!(
            "member `{name}` of the workbook expands more than its compressed size times \
             the ratio allowed; refused as a decompression bomb"
        ),
    )
}

/// Counts what is read through it and fails once more than `allowed` bytes came. The
/// zip reader already fails a member that outgrows its declared size; the meter keeps
/// the limits whatever a reader does.
struct Meter<R> {
    inner: R,
    read: u64,
    allowed: u64,
}

impl<R: Read> Read for Meter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read > self.allowed {
            return Err(io::Error::other("decompression limit reached"));
        }
        // Never ask for more than one byte past the limit: enough to know it was passed.
        let room =
            usize::try_from((self.allowed - self.read).saturating_add(1)).unwrap_or(usize::MAX);
        let want = buf.len().min(room);
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        if self.read > self.allowed {
            return Err(io::Error::other("decompression limit reached"));
        }
        Ok(n)
    }
}

fn xml_error(e: quick_xml::Error) -> TabularError {
    match e {
        // The meter's refusal surfaces as an I/O error; the caller names the limit.
        quick_xml::Error::Io(io) => damaged(io),
        other => damaged(format!("malformed XML: {other}")),
    }
}

/// A decimal attribute value as calamine would read it; `None` when it is not one
/// (calamine then ignores it). Beyond `u64` counts as `u64::MAX`.
fn declared_count(value: &[u8]) -> Option<u64> {
    let digits = value.trim_ascii();
    let digits = digits.strip_prefix(b"+").unwrap_or(digits);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .try_fold(0u64, |n, d| {
                n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            })
            .unwrap_or(u64::MAX),
    )
}

fn shared_strings_limit(limits: &Limits, name: &str, what: &str) -> TabularError {
    TabularError::limit(
        "max_shared_strings",
        limits.max_shared_strings,
        format!("the shared-strings table `{name}` {what}"),
    )
}

/// The strings an xlsx shared-strings table declares (`uniqueCount`, which calamine
/// reserves room for) and holds (`<si>` elements).
fn shared_strings(reader: impl BufRead, limits: &Limits, name: &str) -> Result<(), TabularError> {
    let mut xml = quick_xml::Reader::from_reader(reader);
    // As lenient as calamine's reader, so that nothing it reads goes unchecked.
    xml.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut strings = 0u64;
    loop {
        buf.clear();
        match xml.read_event_into(&mut buf).map_err(xml_error)? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"sst" => {
                for attr in e.attributes().flatten() {
                    if attr.key.local_name().as_ref() != b"uniqueCount" {
                        continue;
                    }
                    if declared_count(&attr.value).is_some_and(|n| n > limits.max_shared_strings) {
                        return Err(shared_strings_limit(
                            limits,
                            name,
                            &format!("declares {} strings", String::from_utf8_lossy(&attr.value)),
                        ));
                    }
                }
            }
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"si" => {
                strings += 1;
                if strings > limits.max_shared_strings {
                    return Err(shared_strings_limit(
                        limits,
                        name,
                        "holds more strings than allowed",
                    ));
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// One ODS table's extent as calamine would expand it: rows and columns repeated
/// (`number-rows-repeated`, `number-columns-repeated`) become real cells over the
/// bounding box of the non-empty ones, and a repeated value is copied each time.
#[derive(Default)]
struct OdsTable {
    /// Expanded index of the next row.
    row: u64,
    first: Option<u64>,
    last: u64,
    width: u64,
    rows: u64,
    /// Bytes of cell content once every repetition is copied.
    bytes: u64,
}

impl OdsTable {
    fn check(&self, limits: &Limits) -> Result<(), TabularError> {
        let limit = |name: &'static str, value: u64, what: &str| {
            Err(TabularError::limit(name, value, what.to_string()))
        };
        if self.width > limits.max_columns as u64 {
            return limit(
                "max_columns",
                limits.max_columns as u64,
                "an ODS sheet has values (repeated columns counted) right of the last column read",
            );
        }
        if self.rows > limits.max_rows as u64 {
            return limit(
                "max_rows",
                limits.max_rows as u64,
                "an ODS sheet has more rows (repeated rows counted) than allowed",
            );
        }
        let height = self
            .first
            .map_or(0, |first| self.last.saturating_sub(first).saturating_add(1));
        if height.saturating_mul(self.width) > limits.max_cells as u64 {
            return limit(
                "max_cells",
                limits.max_cells as u64,
                "an ODS sheet's used range (repeated rows and columns counted) has more cells than allowed",
            );
        }
        if self.bytes > limits.max_unpacked_bytes {
            return limit(
                "max_unpacked_bytes",
                limits.max_unpacked_bytes,
                "an ODS sheet's repeated values expand to more bytes than allowed",
            );
        }
        Ok(())
    }
}

fn repeats(e: &BytesStart, key: &[u8]) -> u64 {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| declared_count(&a.value))
        .unwrap_or(1)
}

/// Whether calamine could read a value or formula from the cell's attributes.
fn has_value(e: &BytesStart) -> bool {
    e.attributes().flatten().any(|a| {
        matches!(
            a.key.as_ref(),
            b"office:value"
                | b"office:string-value"
                | b"office:date-value"
                | b"office:time-value"
                | b"office:boolean-value"
                | b"office:value-type"
                | b"table:formula"
        )
    })
}

fn ods_content(reader: impl BufRead, limits: &Limits) -> Result<(), TabularError> {
    let mut xml = quick_xml::Reader::from_reader(reader);
    xml.config_mut().check_end_names = false;
    let mut buf = Vec::new();
    let mut skip = Vec::new();
    let mut table = OdsTable::default();
    // Within a row: its repeat count, expanded column, last non-empty column, bytes.
    let mut row_repeat = 1u64;
    let mut column = 0u64;
    let mut row_width = 0u64;
    let mut row_bytes = 0u64;
    loop {
        buf.clear();
        let before = xml.buffer_position();
        let event = xml.read_event_into(&mut buf).map_err(xml_error)?;
        let has_content = matches!(event, Event::Start(_));
        match event {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"table:table" => {
                table = OdsTable::default();
            }
            Event::Start(e) if e.name().as_ref() == b"table:table-row" => {
                row_repeat = repeats(&e, b"table:number-rows-repeated").max(1);
                (column, row_width, row_bytes) = (0, 0, 0);
            }
            Event::Empty(e) if e.name().as_ref() == b"table:table-row" => {
                let n = repeats(&e, b"table:number-rows-repeated");
                table.row = table.row.saturating_add(n);
            }
            Event::End(e) if e.name().as_ref() == b"table:table-row" => {
                if row_width > 0 {
                    table.first.get_or_insert(table.row);
                    table.last = table.row.saturating_add(row_repeat - 1);
                    table.width = table.width.max(row_width);
                    table.rows = table.rows.saturating_add(row_repeat);
                    table.bytes = table
                        .bytes
                        .saturating_add(row_bytes.saturating_mul(row_repeat));
                    table.check(limits)?;
                }
                table.row = table.row.saturating_add(row_repeat);
            }
            Event::Start(e) | Event::Empty(e)
                if matches!(
                    e.name().as_ref(),
                    b"table:table-cell" | b"table:covered-table-cell"
                ) =>
            {
                let n = repeats(&e, b"table:number-columns-repeated").max(1);
                let mut value = has_value(&e);
                if has_content {
                    // The cell's paragraphs are its text; a nested table is skipped
                    // with them.
                    let name = e.name().as_ref().to_vec();
                    skip.clear();
                    xml.read_to_end_into(quick_xml::name::QName(&name), &mut skip)
                        .map_err(xml_error)?;
                    value = true;
                }
                let size = xml.buffer_position().saturating_sub(before);
                column = column.saturating_add(n);
                if value {
                    row_width = column;
                    row_bytes = row_bytes.saturating_add(size.saturating_mul(n));
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ods(content: &str) -> Vec<u8> {
        use std::io::Write;
        let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        out.start_file("mimetype", stored).unwrap();
        out.write_all(b"application/vnd.oasis.opendocument.spreadsheet")
            .unwrap();
        out.start_file("content.xml", stored).unwrap();
        out.write_all(content.as_bytes()).unwrap();
        out.finish().unwrap().into_inner()
    }

    fn content(rows: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet><table:table table:name="S">{rows}</table:table></office:spreadsheet></office:body></office:document-content>"#
        )
    }

    #[test]
    fn ods_repeats_are_counted_as_calamine_expands_them() {
        let limits = Limits::default();
        // LibreOffice ends every sheet with empty repeated rows and columns: free.
        let normal = content(
            r#"<table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p></table:table-cell><table:table-cell table:number-columns-repeated="16383"/></table:table-row><table:table-row table:number-rows-repeated="1048575"><table:table-cell table:number-columns-repeated="16384"/></table:table-row>"#,
        );
        assert_eq!(archive(&ods(&normal), &limits).unwrap(), Container::Ods);
        // A value repeated over the whole grid is a 17-billion-cell range.
        let bomb = content(
            r#"<table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="1000" office:value-type="float" office:value="1"/></table:table-row>"#,
        );
        assert!(matches!(
            archive(&ods(&bomb), &limits),
            Err(TabularError::Limit {
                limit: "max_rows",
                ..
            })
        ));
        let wide = content(
            r#"<table:table-row><table:table-cell table:number-columns-repeated="16384" office:value-type="float" office:value="1"/></table:table-row>"#,
        );
        assert!(matches!(
            archive(&ods(&wide), &limits),
            Err(TabularError::Limit {
                limit: "max_columns",
                ..
            })
        ));
        // Two values far apart span every row between them.
        let tall = content(
            r#"<table:table-row><table:table-cell table:number-columns-repeated="999"/><table:table-cell office:value-type="float" office:value="1"/></table:table-row><table:table-row table:number-rows-repeated="5000"><table:table-cell/></table:table-row><table:table-row><table:table-cell office:value-type="float" office:value="1"/></table:table-row>"#,
        );
        assert!(matches!(
            archive(&ods(&tall), &limits),
            Err(TabularError::Limit {
                limit: "max_cells",
                ..
            })
        ));
    }

    #[test]
    fn the_meter_stops_one_byte_past_its_allowance() {
        let data = [7u8; 100];
        let mut meter = Meter {
            inner: &data[..],
            read: 0,
            allowed: 10,
        };
        assert!(io::copy(&mut meter, &mut io::sink()).is_err());
        assert_eq!(meter.read, 11);
        let mut meter = Meter {
            inner: &data[..],
            read: 0,
            allowed: 100,
        };
        assert_eq!(io::copy(&mut meter, &mut io::sink()).unwrap(), 100);
    }

    #[test]
    fn declared_counts_read_like_calamine() {
        assert_eq!(declared_count(b"12"), Some(12));
        assert_eq!(declared_count(b"+007"), Some(7));
        assert_eq!(declared_count(b"99999999999999999999999"), Some(u64::MAX));
        assert_eq!(declared_count(b"-1"), None);
        assert_eq!(declared_count(b""), None);
    }
}
