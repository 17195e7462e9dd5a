//! The ZIP `POST /api/convert` answers: one XML file per invoice, named by its number.

use std::collections::HashSet;
use std::io::Write;

use crate::store::ConversionRecord;

/// `raw` (an invoice number) as a file name stem safe on every system; `fallback` when
/// nothing is left.
pub fn file_stem(raw: &str, fallback: &str) -> String {
    let stem: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() {
        fallback.to_string()
    } else {
        stem
    }
}

/// A file name from the invoice number (or the conversion id), unique in the archive.
fn file_name(record: &ConversionRecord, taken: &mut HashSet<String>) -> String {
    let base = file_stem(
        record.document_id.as_deref().unwrap_or(&record.id),
        &record.id,
    );
    let mut name = format!("{base}.xml");
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}-{n}.xml");
        n += 1;
    }
    name
}

pub fn xml_zip(records: &[ConversionRecord]) -> Result<Vec<u8>, zip::result::ZipError> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut taken = HashSet::new();
    for record in records {
        out.start_file(file_name(record, &mut taken), options)?;
        out.write_all(record.xml.as_bytes())?;
    }
    Ok(out.finish()?.into_inner())
}
