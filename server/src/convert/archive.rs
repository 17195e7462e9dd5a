//! The ZIP `POST /api/convert` answers: one XML file per invoice, named by its number.

use std::collections::HashSet;
use std::io::Write;

use crate::store::ConversionRecord;

/// A file name safe on every system, from the invoice number (or the conversion id).
fn file_name(record: &ConversionRecord, taken: &mut HashSet<String>) -> String {
    let base: String = record
        .document_id
        .as_deref()
        .unwrap_or(&record.id)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let base = if base.is_empty() {
        record.id.clone()
    } else {
        base
    };
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
